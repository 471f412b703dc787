"""read_inspect_log on logs written by Inspect AI itself (tests/evaluation/data/inspect/).

The fixture logs are written by ``tools/make_inspect_fixtures.py`` (Inspect offline, a canned
model provider); variants (JSON format, unfinished runs, numeric scores, absent scorers, ...) are
written here by Inspect's own writer from them. Every test but the ImportError one needs
``inspect_ai`` and skips without it.
"""

import doctest
import io
import json
import os
import shutil
import subprocess
import sys
import warnings
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from sklearn_riskcontrol import RiskControlWarning
from sklearn_riskcontrol.evaluation import read_inspect_log, read_long_table

DATA = Path(__file__).resolve().parent / "data" / "inspect"
QA = DATA / "qa"
ROOT = Path(__file__).resolve().parents[2]
# Inspect's value -> loss rule, as the docstring states it.
RULE = {"C": 0.0, "I": 1.0, "P": 0.5, "N": 1.0}
# The warnings a test checks are recorded by _read; the others (the fixtures' failed and
# unscored samples, tiny certification runs) are not the point of the tests that raise.
pytestmark = pytest.mark.filterwarnings("ignore::sklearn_riskcontrol.RiskControlWarning")


@pytest.fixture()
def ilog():
    """``inspect_ai.log`` (skips without inspect_ai)."""
    return pytest.importorskip("inspect_ai.log")


def _read(path, **kwargs):
    """read_inspect_log and the messages of its warnings."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        table = read_inspect_log(path, **kwargs)
    assert all(issubclass(w.category, RiskControlWarning) for w in caught)
    return table, [str(w.message) for w in caught]


def _raw_samples(path):
    """The samples of a .eval log read as plain JSON from its zip archive (not through
    Inspect), with the log's model."""
    with zipfile.ZipFile(path) as z:
        header = json.loads(z.read("header.json"))
        names = [n for n in z.namelist() if n.startswith("samples/")]
        samples = [json.loads(z.read(n)) for n in names]
    return header["eval"]["model"], samples


def _rewrite(ilog, src, dst, edit):
    """Inspect reads ``src``, ``edit(log)`` changes it, Inspect writes it to ``dst``."""
    log = ilog.read_eval_log(str(src))
    edit(log)
    fmt = "json" if str(dst).endswith(".json") else "eval"
    ilog.write_eval_log(log, str(dst), format=fmt)
    return dst


def test_losses_match_the_raw_log(ilog):
    """Every (model, sample, epoch) of the log is one row whose losses are the rule applied to
    the values stored in the file (read without Inspect)."""
    table, _ = _read(QA)
    expected = []
    for path in sorted(QA.glob("*.eval")):
        model, samples = _raw_samples(path)
        for s in samples:
            row = {"model": model, "example": s["id"], "epoch": s["epoch"],
                   "error": (s.get("error") or {}).get("message")}
            for scorer in ("match", "model_graded_qa"):
                v = s.get("scores", {}).get(scorer, {}).get("value")
                row[scorer] = RULE[v] if isinstance(v, str) else np.nan
            expected.append(row)
    expected = pd.DataFrame(expected).sort_values(["model", "example", "epoch"])
    got = table.sort_values(["model", "example", "epoch"])
    assert len(got) == len(expected) == 20
    for col in ("model", "example", "epoch"):
        assert got[col].tolist() == expected[col].tolist()
    for col in ("match", "model_graded_qa"):
        np.testing.assert_array_equal(got[col].to_numpy(float), expected[col].to_numpy(float))
    assert got["error"].notna().tolist() == expected["error"].notna().tolist()
    assert table.columns.tolist()[:5] == ["model", "example", "epoch", "match",
                                          "model_graded_qa"]
    assert set(table["task"]) == {"capitals_qa"}
    assert table.attrs["loss_rules"]["match"].startswith("C -> 0, I -> 1, P -> 0.5, N -> 1")


def test_json_format_reads_the_same(ilog, tmp_path):
    dst = _rewrite(ilog, QA / "alpha.eval", tmp_path / "alpha.json", lambda log: None)
    a, _ = _read(QA / "alpha.eval")
    b, _ = _read(dst)
    pd.testing.assert_frame_equal(a.drop(columns="log"), b.drop(columns="log"))


def test_errors_are_kept_and_reported(ilog):
    table, messages = _read(QA / "beta.eval")
    failed = table[table["error"].notna()]
    assert failed[["example", "epoch"]].values.tolist() == [["q3", 2]]
    assert failed[["match", "model_graded_qa"]].isna().all(axis=None)
    (msg,) = [m for m in messages if "ended with an error" in m]
    assert msg.startswith("1 of 10 rows are samples that ended with an error and have no "
                          "score: model 'canned/beta' sample 'q3' epoch 2")
    assert "simulated provider failure" in msg and "table[table.error.isna()]" in msg


def test_unscored_and_absent_scores_are_reported(ilog, tmp_path):
    table, messages = _read(QA / "alpha.eval")
    assert table.loc[table["model_graded_qa"].isna(), "example"].tolist() == ["q4", "q4"]
    (msg,) = messages
    assert msg.startswith("scorer 'model_graded_qa' has no score for 2 of 10 rows")

    def drop_match_q1(log):
        for s in log.samples:
            if s.id == "q1":
                del s.scores["match"]

    table, messages = _read(_rewrite(ilog, QA / "alpha.eval", tmp_path / "a.eval",
                                     drop_match_q1))
    assert table.loc[table["match"].isna(), "example"].tolist() == ["q1", "q1"]
    assert any(m.startswith("scorer 'match' has no score for 2 of 10 rows") for m in messages)


def test_mixed_models_in_one_log_are_not_pooled(ilog):
    table, messages = _read(DATA / "routed.eval")
    assert any("answered by 2 models ('alpha', 'beta'" in m for m in messages)
    ok = table[table["error"].isna()]
    assert sorted(set(ok["model"])) == ["alpha", "beta"]
    assert set(ok.loc[ok["model"] == "alpha", "example"]) == {"q1", "q2"}
    assert set(ok.loc[ok["model"] == "beta", "example"]) == {"q3", "q4", "q5"}
    pooled, messages = _read(DATA / "routed.eval", model_from="eval")
    assert set(pooled["model"]) == {"canned/router"}
    assert not any("answered by" in m for m in messages)
    # one model per log: "auto" keeps the log's model (its outputs say "beta", one name)
    assert set(_read(QA / "beta.eval")[0]["model"]) == {"canned/beta"}
    assert set(_read(QA / "beta.eval", model_from="output")[0]["model"]) == {
        "beta", "canned/beta"}  # the failed sample has no output: the log's model


def test_epochs_mean_is_read_long_table_mean(ilog):
    rows, _ = _read(QA)
    means, _ = _read(QA, epochs="mean")
    assert "epoch" not in means and means["n_epochs"].tolist() == [2] * 10
    a = read_long_table(means, score="match", judge_score="model_graded_qa")
    b = read_long_table(rows, score="match", judge_score="model_graded_qa", duplicates="mean")
    np.testing.assert_array_equal(a.scores, b.scores)
    np.testing.assert_array_equal(a.judge_scores, b.judge_scores)
    # brute force: beta's q2 answered "4" then "5"; its q3 failed in epoch 2
    beta = means.set_index(["model", "example"]).loc["canned/beta"]
    assert beta.loc["q2", "match"] == 0.5 and beta.loc["q3", "match"] == 0.0
    assert "simulated provider failure" in beta.loc["q3", "error"]
    with pytest.raises(ValueError, match=r"appears twice.*duplicates"):
        read_long_table(rows, score="match")  # epochs as rows are repeated pairs


def _certify(table, tmp_path, capsys, *options):
    """``autoeval certify`` on ``table`` written to CSV, with ``match`` as the label and
    ``model_graded_qa`` as the judge (q1 and q2 labeled, the others not): its output table."""
    from sklearn_riskcontrol.cli import main

    table.loc[~table["example"].isin(["q1", "q2"]), "match"] = np.nan  # the others unlabeled
    path = tmp_path / "losses.csv"
    table.to_csv(path, index=False)
    code = main(["autoeval", "certify", "--labeled", str(path), "--loss-column", "match",
                 "--judge-column", "model_graded_qa", "--alpha", "0.6", "--delta", "0.2",
                 *options])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    out = pd.read_csv(io.StringIO(captured.out))
    assert out["model"].tolist() == ["canned/alpha", "canned/beta"]
    return out.set_index("model")


def test_flows_into_autoeval_certify(ilog, tmp_path, capsys):
    """The table, as a CSV, is what ``autoeval certify`` reads: the scorer ``match`` as the
    label, ``model_graded_qa`` as the judge, one certification per model."""
    from sklearn_riskcontrol.autoeval import rautoeval_test

    table, _ = _read(QA, epochs="mean")
    table = table[table["model_graded_qa"].notna()].copy()  # certify needs the judge loss
    out = _certify(table, tmp_path, capsys, "--model-column", "model")
    for name, row in out.iterrows():
        mine = table[table["model"] == name]
        lab = mine[mine["match"].notna()]
        ref = rautoeval_test(lab["match"].to_numpy(), lab["model_graded_qa"].to_numpy(),
                             mine.loc[mine["match"].isna(), "model_graded_qa"].to_numpy(),
                             alpha=0.6, delta=0.2)
        assert row["n_labeled"] == len(lab) and row["n_unlabeled"] == len(mine) - len(lab)
        assert row["pvalue"] == pytest.approx(float(ref.pvalue), rel=1e-12)
        assert bool(row["certified"]) == bool(ref.certified)


def test_epochs_as_rows_flow_into_certify_with_clusters(ilog, tmp_path, capsys):
    """Epochs kept as rows, with ``example`` as the cluster (``--groups example``): the CLI's
    clustered test equals the array function's on the same rows and cluster ids."""
    from sklearn_riskcontrol.autoeval import rautoeval_test

    table, _ = _read(QA)  # epochs="rows": two rows per sample
    table = table[table["error"].isna() & table["model_graded_qa"].notna()].copy()
    out = _certify(table, tmp_path, capsys, "--groups", "example")  # whole clusters labeled
    for name, mine in table.groupby("model", sort=False):
        lab, unl = mine[mine["match"].notna()], mine[mine["match"].isna()]
        ref = rautoeval_test(lab["match"].to_numpy(), lab["model_graded_qa"].to_numpy(),
                             unl["model_graded_qa"].to_numpy(), alpha=0.6, delta=0.2,
                             groups_labeled=lab["example"].to_numpy(),
                             groups_unlabeled=unl["example"].to_numpy())
        assert out.loc[name, "n_labeled"] == len(lab) == 4  # q1 and q2, two epochs each
        assert out.loc[name, "pvalue"] == pytest.approx(float(ref.pvalue), rel=1e-12)


def test_numeric_scores_need_a_range_or_a_mapping(ilog, tmp_path):
    values = {"q1": 0.8, "q2": 0.0, "q3": 1.0, "q4": 0.25, "q5": True}

    def numeric(log):
        for s in log.samples:
            s.scores["match"].value = values[s.id]

    path = _rewrite(ilog, QA / "alpha.eval", tmp_path / "num.eval", numeric)
    with pytest.raises(ValueError, match=r"sample 'q1' epoch 1 .*scorer 'match': the value 0.8 "
                                         r"is a number and scorer 'match' has no declared "
                                         r"range; pass score_range=\{'match': \(low, high\)\}"):
        read_inspect_log(path)
    table, _ = _read(path, score_range={"match": (0, 2)})
    got = dict(zip(table["example"], table["match"]))
    assert got == {"q1": 0.6, "q2": 1.0, "q3": 0.5, "q4": 0.875, "q5": 0.0}  # (2 - v) / 2
    with pytest.raises(ValueError, match=r"the value 0.8 is outside score_range \(0, 0.5\)"):
        read_inspect_log(path, score_range=(0, 0.5))
    table, _ = _read(path, mapping={"match": lambda v: 1 - float(v)})
    assert dict(zip(table["example"], table["match"]))["q4"] == 0.75
    with pytest.raises(ValueError, match=r"gives the loss 2.0, outside \[0, 1\]"):
        read_inspect_log(path, mapping={"match": lambda v: 2.0})


def test_partial_noanswer_and_text_mappings(ilog, tmp_path):
    values = {"q1": "P", "q2": "N", "q3": "C", "q4": "I", "q5": "maybe"}

    def text(log):
        for s in log.samples:
            s.scores["match"].value = values[s.id]

    path = _rewrite(ilog, QA / "alpha.eval", tmp_path / "text.eval", text)
    with pytest.raises(ValueError, match=r"the text value 'maybe' is not one of Inspect's C, I, "
                                         r"P, N; pass mapping=\{'match': \{'maybe': <loss>"):
        read_inspect_log(path)
    table, _ = _read(path, mapping={"match": {"P": 0.5, "N": 1, "C": 0, "I": 1, "maybe": 0.3}})
    assert dict(zip(table["example"], table["match"])) == {
        "q1": 0.5, "q2": 1.0, "q3": 0.0, "q4": 1.0, "q5": 0.3}
    # a dict mapping of the judge: its unscored (NaN) values stay missing, not a missing key
    table, _ = _read(path, mapping={"match": {"maybe": 0.3, "P": 0.5, "N": 1, "C": 0, "I": 1},
                                    "model_graded_qa": {"C": 0.25, "I": 0.75}})
    judge = table.groupby("example")["model_graded_qa"].first()
    assert judge["q1"] == 0.25 and np.isnan(judge["q4"])
    with pytest.raises(ValueError, match=r"the value 'N' is not a key of mapping\['match'\] \(its keys: \['P'\]\)"):
        read_inspect_log(path, mapping={"match": {"P": 0.5}})

    def drop_q5(log):
        log.samples = [s for s in log.samples if s.id != "q5"]

    table, _ = _read(_rewrite(ilog, path, tmp_path / "t2.eval", drop_q5))
    assert dict(zip(table["example"], table["match"])) == {
        "q1": 0.5, "q2": 1.0, "q3": 0.0, "q4": 1.0}  # Inspect's rule, stated in the docs


def test_dict_valued_scores_give_one_column_per_key(ilog, tmp_path):
    def several(log):
        for s in log.samples:
            s.scores["match"].value = {"exact": "C", "fuzzy": 0.5}

    path = _rewrite(ilog, QA / "alpha.eval", tmp_path / "d.eval", several)
    table, _ = _read(path, score_range={"match": (0, 1)})
    assert {"match/exact", "match/fuzzy"} <= set(table.columns)
    assert (table["match/exact"] == 0).all() and (table["match/fuzzy"] == 0.5).all()


def test_malformed_inputs_have_clear_messages(ilog, tmp_path):
    bad = tmp_path / "notalog.eval"
    bad.write_text("hello")
    with pytest.raises(ValueError, match=r"notalog.eval is not an Inspect AI log that "
                                         r"inspect_ai .* can read \(ValueError: "):
        read_inspect_log(bad)
    other = tmp_path / "results.json"
    other.write_text('{"accuracy": 0.9}')
    with pytest.raises(ValueError, match=r"results.json is not an Inspect AI log"):
        read_inspect_log(other)
    folder = tmp_path / "results"
    folder.mkdir()
    shutil.copy(other, folder / "results.json")  # a .json not named like a log: not read
    with pytest.raises(ValueError, match=r"no Inspect log in this folder \(or below\)"):
        read_inspect_log(folder)
    with pytest.raises(ValueError, match=r"notalog.eval is not an Inspect AI log"):
        read_inspect_log(tmp_path)  # a folder: every .eval file is read
    with pytest.raises(FileNotFoundError, match="no such file or directory"):
        read_inspect_log(tmp_path / "missing")
    with pytest.raises(TypeError, match="must be an Inspect log file"):
        read_inspect_log(3)
    with pytest.raises(ValueError, match="`epochs` must be 'rows'"):
        read_inspect_log(QA, epochs="median")
    with pytest.raises(ValueError, match="`model_from` must be"):
        read_inspect_log(QA, model_from="file")
    with pytest.raises(ValueError, match=r"`mapping` names the scorer 'matc', which no sample "
                                         r"of the logs has; their scorers are: 'match', "
                                         r"'model_graded_qa'\."):
        read_inspect_log(QA, mapping={"matc": {"C": 0}})
    with pytest.raises(ValueError, match=r"`score_range` names the scorer 'f1'"):
        read_inspect_log(QA, score_range={"f1": (0, 1)})


def test_folders_skip_and_report_other_json_files(ilog, tmp_path):
    shutil.copy(QA / "alpha.eval", tmp_path / "alpha.eval")
    (tmp_path / "notes.json").write_text("{}")
    (tmp_path / "logs.json").write_text("{}")  # Inspect's own listing: not reported
    table, messages = _read(tmp_path)
    assert len(table) == 10
    (msg,) = [m for m in messages if m.startswith("skipped")]
    assert "notes.json" in msg and "logs.json" not in msg


def test_the_same_sample_in_two_logs_is_an_error(ilog, tmp_path):
    for name in ("a.eval", "b.eval"):
        shutil.copy(QA / "alpha.eval", tmp_path / name)
    with pytest.raises(ValueError, match=r"model 'canned/alpha' sample 'q1' epoch 1 is in two "
                                         r"logs, .*a.eval and .*b.eval \(a run and its rerun\?\)"):
        read_inspect_log(tmp_path)


def test_several_tasks_prefix_the_example_ids(ilog, tmp_path):
    def rename(log):
        log.eval.task = "other_qa"

    _rewrite(ilog, QA / "alpha.eval", tmp_path / "b.eval", rename)
    shutil.copy(QA / "alpha.eval", tmp_path / "a.eval")
    table, _ = _read(tmp_path)
    assert table["example"].tolist()[:2] == ["capitals_qa/q1", "capitals_qa/q2"]
    assert table["example"].tolist()[10:12] == ["other_qa/q1", "other_qa/q2"]


def test_unfinished_runs_and_clashing_scorer_names(ilog, tmp_path):
    def unfinished(log):
        log.status = "error"
        log.samples = log.samples[:3]

    table, messages = _read(_rewrite(ilog, QA / "alpha.eval", tmp_path / "u.eval", unfinished))
    assert len(table) == 3
    assert any("the run has status 'error' (it did not finish), 3 sample(s) read" in m
               for m in messages)

    def clash(log):
        for s in log.samples:
            s.scores["model"] = s.scores.pop("match")

    with pytest.raises(ValueError, match="a scorer is named 'model', like a column"):
        read_inspect_log(_rewrite(ilog, QA / "alpha.eval", tmp_path / "c.eval", clash))


def test_without_inspect_ai_the_error_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "inspect_ai", None)
    monkeypatch.setitem(sys.modules, "inspect_ai.log", None)
    with pytest.raises(ImportError, match=r'pip install "sklearn-riskcontrol\[inspect\]"'):
        read_inspect_log(QA)


def test_docstring_example_runs(ilog, monkeypatch):
    """The Examples section (skipped by the doctest run, which need not have inspect_ai) runs
    and prints what it shows."""
    monkeypatch.chdir(ROOT)
    text = read_inspect_log.__doc__.replace("# doctest: +SKIP", "")
    test = doctest.DocTestParser().get_doctest(text, {}, "read_inspect_log", None, 0)
    flags = doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS
    runner = doctest.DocTestRunner(optionflags=flags)
    out = io.StringIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RiskControlWarning)  # the example shows the first two
        runner.run(test, out=out.write)
    assert runner.failures == 0, out.getvalue()
    assert runner.tries >= 6
    assert os.path.isdir(ROOT / "tests" / "evaluation" / "data" / "inspect" / "qa")


@pytest.mark.slow
def test_the_fixture_script_writes_the_same_logs(ilog, tmp_path):
    """tools/make_inspect_fixtures.py, run with the installed Inspect, writes logs that read to
    the same tables as the stored fixtures (ids, epochs, models, losses, failures)."""
    subprocess.run([sys.executable, str(ROOT / "tools" / "make_inspect_fixtures.py"),
                    str(tmp_path)], check=True, capture_output=True, timeout=600)
    for name in ("qa", "routed.eval"):
        new, _ = _read(tmp_path / name)
        old, _ = _read(DATA / name)
        pd.testing.assert_frame_equal(new.drop(columns=["log", "error"]),
                                      old.drop(columns=["log", "error"]))
        assert new["error"].tolist() == old["error"].tolist()
