"""Command line output that machines act on: --json (against the shipped schema), --gate exit
codes, --report; and the results' to_dict / to_frame / to_html."""

import importlib.util
import json
import shutil
from importlib import resources
from pathlib import Path

import jsonschema
import numpy as np
import pandas as pd
import pytest

from sklearn_riskcontrol import cli
from sklearn_riskcontrol.cli import main

SCHEMA = json.loads(resources.files("sklearn_riskcontrol.cli").joinpath("schema/v1.json")
                    .read_text())
HOSTILE = ['<script>alert(1)</script>', '"><img src=x onerror=alert(2)>']


def run_json(argv, capsys):
    """Exit status and the JSON object printed, validated against the schema."""
    code = main(argv + ["--json"])
    out = capsys.readouterr().out
    doc = json.loads(out)  # exactly one JSON object: anything else on stdout fails here
    jsonschema.validate(doc, SCHEMA)
    json.dumps(doc, allow_nan=False)
    return code, doc


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """Small tables for every subcommand; model names that try to inject HTML."""
    d = tmp_path_factory.mktemp("json")
    rng = np.random.default_rng(0)
    f = {}
    s_cal, s_test = rng.uniform(size=300), rng.uniform(size=40)
    pd.DataFrame({"risk": (rng.uniform(size=300) < s_cal).astype(float), "score": s_cal}
                 ).to_csv(d / "cal.csv", index=False)
    pd.DataFrame({"score": s_test}).to_csv(d / "test.csv", index=False)
    pd.DataFrame({"score": rng.uniform(size=200)}).to_csv(d / "stream.csv", index=False)
    # certify: a good model and a bad one (the bad one is never certified at alpha = 0.2)
    n = 200
    good = (rng.uniform(size=n) < 0.02).astype(float)
    bad = (rng.uniform(size=n) < 0.6).astype(float)
    lab = pd.DataFrame({"model": [HOSTILE[0]] * n + [HOSTILE[1]] * n,
                        "loss": np.r_[good, bad], "judge_loss": np.r_[good, bad]})
    lab.to_csv(d / "two.csv", index=False)
    lab[lab.model == HOSTILE[0]].drop(columns="model").to_csv(d / "good.csv", index=False)
    # select / compare: wide tables, one column per model
    wide = pd.DataFrame({HOSTILE[0]: good, "mid": (rng.uniform(size=n) < 0.5).astype(float)})
    wide.to_csv(d / "wide.csv", index=False)
    wide.assign(mid=good).to_csv(d / "same.csv", index=False)
    # monitor: a stream whose risk is 0, and one whose risk is 1
    pd.DataFrame({"loss": np.zeros(100)}).to_csv(d / "calm.csv", index=False)
    pd.DataFrame({"loss": np.ones(100)}).to_csv(d / "alarm.csv", index=False)
    # label: a pool of judge losses (nothing labeled yet: not certified)
    pd.DataFrame({"judge": np.zeros(100)}).to_csv(d / "pool.csv", index=False)
    pd.DataFrame({"a": np.zeros(100), "b": np.ones(100)}).to_csv(d / "pool2.csv", index=False)
    # bandits: one clearly best model, and two equal ones
    pd.DataFrame([[HOSTILE[1]] + [1.0] * 60, ["b"] + [0.0] * 60]).to_csv(
        d / "scores.csv", index=False, header=False)
    pd.DataFrame([["a"] + [0.5] * 60, ["b"] + [0.5] * 60]).to_csv(
        d / "tie.csv", index=False, header=False)
    return {k: str(d / k) for k in [p.name for p in d.iterdir()]}


def commands(f):
    """(argv, exit status with --gate) of every subcommand, passing and failing the gate."""
    cert = ["autoeval", "certify", "--method", "eval", "--alpha", "0.2"]
    band = ["bandits", "--budget", "1.0", "--no-header", "--random-state", "0"]
    return [
        (["selective", "--calibration", f["cal.csv"], "--test", f["test.csv"], "--alpha", "0.3"],
         0),
        (["selective", "--calibration", f["cal.csv"], "--test", f["test.csv"],
          "--alpha", "0.001"], 1),
        (["online", "--input", f["stream.csv"], "--alpha", "0.1"], None),
        (["online", "--input", f["stream.csv"], "--alpha", "0.1", "--strategy", "greedy"], 1),
        (cert + ["--labeled", f["good.csv"], "--ci"], 0),
        (cert + ["--labeled", f["two.csv"]], 1),
        (["autoeval", "select", "--method", "eval", "--alpha", "0.2", "--labeled",
          f["wide.csv"], "--procedure", "bonferroni"], 0),
        (["autoeval", "select", "--method", "eval", "--alpha", "0.01", "--labeled",
          f["wide.csv"]], 1),
        (["autoeval", "compare", "--method", "eval", "--labeled", f["wide.csv"]], 0),
        (["autoeval", "compare", "--method", "eval", "--labeled", f["same.csv"]], 1),
        (["autoeval", "monitor", "--alpha", "0.3", "--stream", f["calm.csv"]], 0),
        (["autoeval", "monitor", "--alpha", "0.3", "--stream", f["alarm.csv"]], 1),
        (["autoeval", "label", "--alpha", "0.3", "--pool", f["pool.csv"], "--judge-column",
          "judge", "--max-labels", "50", "--store", f["pool.csv"][:-4] + ".db"], 1),
        (["autoeval", "label", "--alpha", "0.3", "--pool", f["pool2.csv"], "--judge-column",
          "a,b", "--loss-column", "la,lb", "--max-labels", "50", "--store",
          f["pool2.csv"][:-4] + ".db"], 1),
        (band + ["--scores", f["scores.csv"]], 0),
        (band + ["--scores", f["tie.csv"]], 1),
        (["demo", "--quick"], 0),
    ]


@pytest.fixture()
def quick_demo(monkeypatch):
    """The demo's sections are tested in test_demo.py; here only its JSON wrapping."""
    import sklearn_riskcontrol.demo as demo

    monkeypatch.setattr(demo, "run_demo", lambda seed, quick: ["a line", "another"])


def test_every_subcommand_prints_schema_valid_json_and_gates(files, capsys, quick_demo):
    seen = set()
    for argv, gate in commands(files):
        code, doc = run_json(argv, capsys)
        assert code == 0  # without --gate: 0 whatever was decided
        seen.add(doc["command"])
        assert doc["gate"]["passed"] == (gate == 0) or gate is None
        if gate is not None:
            assert main(argv + ["--gate"]) == gate, argv
            capsys.readouterr()
        # every null stands for a non-finite number whose reason is given
        for null in doc["nulls"]:
            assert null["reason"]
    assert seen == set(SCHEMA["properties"]["command"]["enum"])
    capsys.readouterr()


def test_json_matches_the_csv_and_the_prose(files, tmp_path, capsys):
    out = tmp_path / "out.csv"
    argv = ["autoeval", "certify", "--method", "eval", "--alpha", "0.2", "--labeled",
            files["two.csv"], "--output", str(out)]
    code, doc = run_json(argv, capsys)
    table = pd.read_csv(out)
    assert [r["name"] for r in doc["rows"]] == HOSTILE
    np.testing.assert_allclose([r["pvalue"] for r in doc["rows"]], table["pvalue"])
    assert [r["certified"] for r in doc["rows"]] == [True, False]
    assert doc["labels_used"] == 400 and doc["alpha"] == 0.2 and doc["delta"] == 0.1
    # the guarantee sentence is the printed one
    assert any(line == f"guarantee: {doc['guarantee']}" for line in doc["messages"])
    # the model not certified carries a forecast of the labels it would need
    assert "labels_forecast" in doc["rows"][1] and "labels_forecast" not in doc["rows"][0]


def test_nonfinite_numbers_are_null_with_a_reason(files, capsys):
    # SPS publishes the full set (threshold -inf) in its first rounds
    code, doc = run_json(["online", "--input", files["stream.csv"], "--alpha", "0.1"], capsys)
    first = doc["rows"][0]
    assert first["threshold"] is None
    null = next(n for n in doc["nulls"] if n["path"] == "rows[0].threshold")
    assert null["value"] == "-inf" and "full set" in null["reason"]


def test_bad_input_exits_2_with_or_without_gate(files, capsys):
    argv = ["autoeval", "certify", "--alpha", "1.5", "--labeled", files["good.csv"]]
    for extra in ([], ["--gate"], ["--gate", "--json"]):
        assert main(argv + extra) == 2
        captured = capsys.readouterr()
        assert captured.out == "" and captured.err.startswith("error:")


def test_shuffle_without_unlabeled_rows(files, capsys):
    # R-Eval with --shuffle: no unlabeled rows to shuffle (this crashed with StopIteration)
    argv = ["autoeval", "certify", "--method", "eval", "--alpha", "0.2", "--labeled",
            files["good.csv"]]
    _, plain = run_json(argv, capsys)
    _, shuffled = run_json(argv + ["--shuffle", "1"], capsys)
    assert shuffled["rows"][0]["n_labeled"] == plain["rows"][0]["n_labeled"] == 200
    assert shuffled["rows"][0]["certified"] and plain["rows"][0]["certified"]


def test_report_escapes_hostile_names(files, tmp_path, capsys):
    report = tmp_path / "r.html"
    assert main(["autoeval", "certify", "--method", "eval", "--alpha", "0.2", "--ci",
                 "--labeled", files["two.csv"], "--report", str(report)]) == 0
    page = report.read_text()
    assert "<script" not in page and "<img" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "&quot;&gt;&lt;img src=x onerror=alert(2)&gt;" in page
    assert "<svg" in page and "http://" not in page.replace("http://www.w3.org/2000/svg", "")
    capsys.readouterr()


def _results():
    """One instance of every result class that has to_dict."""
    from sklearn_riskcontrol import autoeval as ae
    from sklearn_riskcontrol.selective import concentration_threshold

    rng = np.random.default_rng(1)
    h = (rng.uniform(size=60) < 0.1).astype(float)
    H = np.stack([h, 1 - h])
    test = ae.rautoeval_test(h, alpha=0.3, delta=0.1, method="eval")
    session = ae.LabelingSession(None, alpha=0.3, delta=0.1, method="eval", max_labels=100)
    sel_session = ae.SelectionSession(None, alpha=0.3, delta=0.1, method="eval", cost=[1, 2],
                                      max_labels=100)
    cmp_session = ae.ComparisonSession(None, delta=0.1, method="eval", max_labels=100)
    active = ae.ActiveLabelingSession(np.zeros(60), alpha=0.3, delta=0.1, max_labels=20,
                                      random_state=0)
    rows = active.propose(10)
    active_sel = ae.ActiveLabelingSession(np.c_[np.zeros(60), np.ones(60)], alpha=0.3,
                                          delta=0.1, max_labels=20, random_state=0)
    sel_rows = active_sel.propose(10)
    return [
        active.add(rows, h[rows]),
        active_sel.add(sel_rows, np.c_[h[sel_rows], 1 - h[sel_rows]]),
        test,
        ae.rautoeval_confidence_interval(h, delta=0.1, method="eval"),
        ae.rautoeval_select(H, alpha=0.3, delta=0.1, method="eval"),
        ae.rautoeval_difference_interval(H.T, delta=0.1, method="eval"),
        ae.rautoeval_difference_test(H.T, delta=0.1, method="eval"),
        ae.rautoeval_compare(H.T, delta=0.1, method="eval"),
        ae.plan_labels(h, alpha=0.3, delta=0.1, n_simulations=20, max_labels=100,
                       random_state=0, method="eval"),
        session.add(h),
        sel_session.add(H),
        cmp_session.add(H.T),
        concentration_threshold(h, rng.uniform(size=60), alpha=0.3, delta=0.1),
    ]


def test_results_to_dict_to_frame_to_html():
    from sklearn_riskcontrol._results import ResultMixin

    for res in _results():
        d = res.to_dict()
        assert d["type"] == type(res).__name__
        text = json.dumps(d, allow_nan=False)
        assert json.loads(text)["nulls"] == d["nulls"]
        page = res.to_html()
        assert page.startswith("<!DOCTYPE html>") and "<script" not in page
        if type(res)._frame_columns:
            frame = res.to_frame()
            assert len(frame) > 0
        else:
            with pytest.raises(TypeError, match="not tabular"):
                res.to_frame()
    # every public result class of autoeval and selective has them
    from sklearn_riskcontrol import autoeval, selective

    covered = {type(r) for r in _results()}
    for module in (autoeval, selective):
        for name in module.__all__:
            obj = getattr(module, name)
            if isinstance(obj, type) and issubclass(obj, ResultMixin):
                assert obj in covered, name


def test_to_frame_agrees_with_the_fields():
    from sklearn_riskcontrol.autoeval import rautoeval_compare, rautoeval_select

    rng = np.random.default_rng(2)
    H = (rng.uniform(size=(3, 80)) < [[0.05], [0.3], [0.6]]).astype(float)
    sel = rautoeval_select(H, alpha=0.2, delta=0.1, method="eval")
    frame = sel.to_frame()
    np.testing.assert_array_equal(frame["certified"], sel.certified)
    np.testing.assert_array_equal(frame["pvalues"], sel.pvalues)
    res = rautoeval_compare(H.T, delta=0.1, method="eval")
    pairs = res.to_frame()
    assert len(pairs) == 6
    for row in pairs.itertuples():
        assert row.better == res.better[row.a, row.b]
        assert row.mean_loss_a == res.mean_loss[row.a] and row.mean_loss_b == res.mean_loss[row.b]
        np.testing.assert_equal(row.pvalues, res.pvalues[row.a, row.b])


def test_warnings_go_into_the_json(files, capsys):
    # --method plus without unlabeled rows warns that it reduces to R-Eval
    code, doc = run_json(["autoeval", "certify", "--alpha", "0.2", "--labeled",
                          files["good.csv"]], capsys)
    assert any("reduces to R-Eval" in w for w in doc["warnings"])


def test_json_module_has_one_schema_version():
    assert SCHEMA["properties"]["schema_version"]["const"] == cli._io.SCHEMA_VERSION


CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


@pytest.mark.skipif(not Path(CHROMIUM).is_file(), reason="Chromium is not installed")
def test_report_renders_in_headless_chromium(files, tmp_path, capsys):
    tool = Path(__file__).resolve().parents[2] / "tools" / "check_docs_render.py"
    spec = importlib.util.spec_from_file_location("check_docs_render", tool)
    checker = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(checker)
    report = tmp_path / "r.html"
    assert main(["autoeval", "certify", "--method", "eval", "--alpha", "0.2", "--ci",
                 "--labeled", files["two.csv"], "--report", str(report)]) == 0
    capsys.readouterr()
    dom = checker.render(report, CHROMIUM, budget_ms=2000)
    assert checker.check_report(dom, "1 of 2 models certified") == []
    # the hostile names are text of the rendered page, not elements
    assert dom.count("<script") == 0 and dom.count("<img") == 0
    assert checker.check_report(dom, "3 of 2") != []  # the check can fail
