"""One command from Inspect AI logs to a gated decision: ``autoeval certify --inspect-log``.

The logs are the fixtures written by Inspect itself (``tools/make_inspect_fixtures.py``, in
tests/evaluation/data/inspect/) and variants Inspect's own writer makes from them here. Every
test but the ImportError one needs ``inspect_ai`` and skips without it.
"""

import html
import json
import sys
from importlib import resources
from pathlib import Path

import jsonschema
import numpy as np
import pytest

from sklearn_riskcontrol.cli import main

DATA = Path(__file__).resolve().parents[1] / "evaluation" / "data" / "inspect"
QA = DATA / "qa"
SCHEMA = json.loads(resources.files("sklearn_riskcontrol.cli").joinpath("schema/v1.json")
                    .read_text())
UNLABELED = ("q3", "q4", "q5")  # the samples whose label score the `partial` logs drop
BASE = ["autoeval", "certify", "--label-scorer", "match", "--judge-scorer", "model_graded_qa"]


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    """Folders of logs: ``partial`` (the qa logs with no `match` score on q3-q5: unlabeled
    samples) and ``clean`` (the same without beta's failed sample), written by Inspect."""
    ilog = pytest.importorskip("inspect_ai.log")
    root = tmp_path_factory.mktemp("inspect_cli")
    for name in ("alpha", "beta"):
        log = ilog.read_eval_log(str(QA / f"{name}.eval"))
        for s in log.samples:
            if s.id in UNLABELED and s.scores:
                del s.scores["match"]
        (root / "partial").mkdir(exist_ok=True)
        ilog.write_eval_log(log, str(root / "partial" / f"{name}.eval"), format="eval")
        log.samples = [s for s in log.samples if s.error is None]
        (root / "clean").mkdir(exist_ok=True)
        ilog.write_eval_log(log, str(root / "clean" / f"{name}.eval"), format="eval")
    return root


@pytest.fixture(autouse=True)
def no_forecast(monkeypatch):
    """The labels forecast of a model not certified is tested in test_cli_json.py; here it
    would only take time."""
    from sklearn_riskcontrol.cli import autoeval

    monkeypatch.setattr(autoeval, "_forecast", lambda *a: (None, "not forecast in this test"))


def run(argv, capsys):
    """Exit status with --gate, the JSON object (validated against the schema, None on exit
    status 2) and standard error."""
    code = main(argv + ["--json", "--gate"])
    out, err = capsys.readouterr()
    if code == 2:
        assert out == "" and err.splitlines()[-1].startswith("error:")
        return code, None, err
    doc = json.loads(out)
    jsonschema.validate(doc, SCHEMA)
    return code, doc, err


def test_exit_codes_0_1_2_and_schema(logs, capsys):
    common = BASE + ["--inspect-log", str(logs / "clean"), "--delta", "0.5"]
    # alpha's labeled losses are 0, 0: certified at alpha = 0.95; beta's are 1, 0.5
    code, doc, _ = run(common + ["--alpha", "0.95", "--model", "canned/alpha"], capsys)
    assert code == 0 and doc["gate"]["passed"] and doc["rows"][0]["certified"]
    code, doc, _ = run(common + ["--alpha", "0.3"], capsys)
    assert code == 1 and not doc["gate"]["passed"]
    assert [r["name"] for r in doc["rows"]] == ["canned/alpha", "canned/beta"]
    assert not all(r["certified"] for r in doc["rows"])
    code, _, err = run(common + ["--alpha", "1.5"], capsys)
    assert code == 2 and "alpha" in err


def test_labeled_and_unlabeled_samples_per_model(logs, capsys):
    _, doc, _ = run(BASE + ["--inspect-log", str(logs / "clean"), "--alpha", "0.5"], capsys)
    # epochs averaged: one row per sample; q3-q5 have no `match` score: unlabeled
    # (`clean` has no failed epoch: beta's q3 keeps its epoch 1)
    for r in doc["rows"]:
        assert r["n_unlabeled"] == len(UNLABELED)
        assert r["n_labeled"] == 5 - len(UNLABELED)
    assert doc["labels_used"] == sum(r["n_labeled"] for r in doc["rows"])
    facts = doc["facts"]
    assert facts["label_scorer"] == "match" and facts["judge_scorers"] == ["model_graded_qa"]
    assert facts["samples_read"] == 10 and facts["samples_dropped"] == 0
    # alpha's q4 has no judge grade: counted as judge loss 1, and said so
    (w,) = [w for w in doc["warnings"] if "gave no grade" in w]
    assert "model 'canned/alpha' sample 'q4' epoch 1" in w and "judge loss 1" in w


def test_one_command_equals_the_csv_path(logs, tmp_path, capsys):
    """The log read with read_inspect_log, written as the CSV the command line reads (rows
    sorted by model and sample), gives the same p-values with the same --shuffle seed."""
    from sklearn_riskcontrol.evaluation import read_inspect_log

    with pytest.warns(Warning):
        table = read_inspect_log(logs / "clean", epochs="mean")
    table["model_graded_qa"] = table["model_graded_qa"].fillna(1.0)
    table = table.sort_values(["model", "example"])
    csv = tmp_path / "losses.csv"
    table.to_csv(csv, index=False)
    opts = ["--alpha", "0.6", "--delta", "0.3", "--ci"]
    _, from_log, _ = run(BASE + ["--inspect-log", str(logs / "clean"), "--shuffle", "3"] + opts,
                         capsys)
    _, from_csv, _ = run(["autoeval", "certify", "--labeled", str(csv), "--loss-column",
                          "match", "--judge-column", "model_graded_qa", "--shuffle", "3"]
                         + opts, capsys)
    for a, b in zip(from_log["rows"], from_csv["rows"], strict=True):
        assert a["name"] == b["name"]
        assert (a["n_labeled"], a["n_unlabeled"]) == (b["n_labeled"], b["n_unlabeled"])
        np.testing.assert_allclose(a["pvalue"], b["pvalue"])
        assert a["interval"] == b["interval"]


def test_sample_errors_stop_or_are_dropped_and_reported(logs, capsys):
    argv = BASE + ["--inspect-log", str(logs / "partial"), "--alpha", "0.5"]
    code, _, err = run(argv, capsys)
    assert code == 2
    assert ("1 sample(s) of " in err and "model 'canned/beta' sample 'q3' epoch 2" in err
            and "beta.eval" in err and "simulated provider failure" in err
            and "--sample-errors drop" in err)
    assert "line" not in err
    code, doc, _ = run(argv + ["--sample-errors", "drop"], capsys)
    assert code in (0, 1) and doc["facts"]["samples_dropped"] == 1
    (w,) = [w for w in doc["warnings"] if w.startswith("--sample-errors drop")]
    assert "left out 1 of 10 samples" in w and "sample 'q3'" in w
    assert "do not end with an error" in doc["guarantee"]
    beta = next(r for r in doc["rows"] if r["name"] == "canned/beta")
    assert beta["n_labeled"] + beta["n_unlabeled"] == 4  # q3 is left out, not unlabeled
    # --model: another model's failed samples do not stop it
    code, doc, _ = run(argv + ["--model", "canned/alpha"], capsys)
    assert code in (0, 1) and [r["name"] for r in doc["rows"]] == ["canned/alpha"]
    code, _, err = run(argv + ["--model", "gamma"], capsys)
    assert code == 2 and "--model 'gamma': no sample of" in err and "'canned/beta'" in err


def test_missing_scorer_is_named(logs, capsys):
    for option in ("--label-scorer", "--judge-scorer"):
        argv = ["autoeval", "certify", "--inspect-log", str(QA), "--alpha", "0.5",
                "--label-scorer", "match", "--judge-scorer", "model_graded_qa"]
        argv[argv.index(option) + 1] = "exact"
        code, _, err = run(argv, capsys)
        assert code == 2
        assert (f"{option} 'exact': no sample of {QA} has a score of this scorer; the "
                "scorers of these logs are ['match', 'model_graded_qa']") in err
    code, _, err = run(["autoeval", "certify", "--inspect-log", str(QA), "--alpha", "0.5",
                        "--label-scorer", "match"], capsys)
    assert code == 2 and "--method plus needs --judge-scorer" in err


def test_mixed_models_are_certified_per_model(logs, capsys):
    # routed.eval: one log whose samples were answered by two models (output.model)
    _, doc, _ = run(BASE + ["--inspect-log", str(DATA / "routed.eval"), "--alpha", "0.5",
                               "--method", "eval", "--sample-errors", "drop",
                               "--epochs", "clusters"], capsys)
    assert [r["name"] for r in doc["rows"]] == ["alpha", "beta"]
    # clusters: one row per epoch; alpha answered q1-q2, beta q3-q5; q3's failed epoch 2 has
    # no output, so its model is the log's, canned/router, whose only sample it is (dropped)
    assert [r["n_labeled"] for r in doc["rows"]] == [4, 5]
    assert any("answered by 2 models" in w and "model_from='eval'" in w
               for w in doc["warnings"])
    assert not any("pass model_from" in w for w in doc["warnings"])


def test_labels_on_some_epochs_only_is_an_error(logs, tmp_path, capsys):
    ilog = pytest.importorskip("inspect_ai.log")
    log = ilog.read_eval_log(str(logs / "clean" / "alpha.eval"))
    for s in log.samples:
        if s.id == "q2" and s.epoch == 2:
            del s.scores["match"]
    ilog.write_eval_log(log, str(tmp_path / "a.eval"), format="eval")
    code, _, err = run(BASE + ["--inspect-log", str(tmp_path / "a.eval"), "--alpha", "0.5"],
                       capsys)
    assert code == 2
    assert "scores some epochs of a sample and not the others" in err
    assert "model 'canned/alpha' sample 'q2' epoch 2" in err


def test_malformed_logs_exit_2_with_the_file_named(logs, tmp_path, capsys):
    notlog = tmp_path / "notalog.eval"
    notlog.write_text("hello")
    truncated = tmp_path / "truncated.eval"
    raw = (QA / "alpha.eval").read_bytes()
    truncated.write_bytes(raw[: len(raw) // 2])
    for path in (notlog, truncated):
        code, _, err = run(BASE + ["--inspect-log", str(path), "--alpha", "0.5"], capsys)
        assert code == 2
        assert f"{path} is not an Inspect AI log that inspect_ai" in err
    code, _, err = run(BASE + ["--inspect-log", str(tmp_path / "nope"), "--alpha", "0.5"],
                       capsys)
    assert code == 2 and "no such file or directory" in err


def test_options_that_do_not_go_with_logs(logs, capsys):
    cases = [
        (["--labeled", "x.csv"], "drop --labeled"),
        (["--groups", "example"], "drop --groups (epochs as clusters: --epochs clusters)"),
        (["--judge-column", "j"],
         "drop --judge-column (name the judge's scorer with --judge-scorer)"),
    ]
    for extra, message in cases:
        code, _, err = run(BASE + ["--inspect-log", str(QA), "--alpha", "0.5"] + extra, capsys)
        assert code == 2 and message in err
    code, _, err = run(BASE + ["--inspect-log", str(QA), "--alpha", "0.5", "--score-range",
                               "0-1"], capsys)
    assert code == 2 and "--score-range must be LOW,HIGH (two numbers); got '0-1'" in err
    code, _, err = run(["autoeval", "certify", "--alpha", "0.5"], capsys)
    assert code == 2 and "--labeled FILE.csv, or --inspect-log PATH" in err
    code, _, err = run(["autoeval", "certify", "--alpha", "0.5", "--labeled", "x.csv",
                        "--label-scorer", "match"], capsys)
    assert code == 2 and "--label-scorer applies to --inspect-log" in err


def test_report_of_the_logs(logs, tmp_path, capsys):
    report = tmp_path / "r.html"
    _, doc, _ = run(BASE + ["--inspect-log", str(logs / "clean"), "--alpha", "0.5", "--ci",
                               "--report", str(report)], capsys)
    page = report.read_text()
    assert page.startswith("<!DOCTYPE html>") and "<script" not in page
    assert "canned/alpha" in page and "canned/beta" in page and "<svg" in page
    assert html.escape(doc["decision"]) in page


def test_without_inspect_ai_the_error_names_the_extra(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "inspect_ai", None)
    monkeypatch.setitem(sys.modules, "inspect_ai.log", None)
    code = main(BASE + ["--inspect-log", str(QA), "--alpha", "0.5", "--gate"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith('error: --inspect-log: reading Inspect AI logs needs inspect_ai: '
                          'pip install "sklearn-riskcontrol[inspect]"')


def test_help_explains_labeled_and_unlabeled_samples(capsys):
    with pytest.raises(SystemExit):
        main(["autoeval", "certify", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "A sample with a --label-scorer score is labeled; one without it is unlabeled" in text
