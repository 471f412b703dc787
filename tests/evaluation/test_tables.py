"""Long evaluation tables and LLM-harness sample files (sklearn_riskcontrol.evaluation).

Round trips wide <-> long in every format, agreement of the vectorised pivot with a plain
dict-based pivot, the error messages (file, column, 1-based row), the oracle built from a long
table, harness sample files and the command line on long tables.
"""

import json
import os
import sys

import numpy as np
import pandas as pd
import pytest

from sklearn_riskcontrol.bandits import PULSE, UCBE
from sklearn_riskcontrol.evaluation import MatrixOracle, as_oracle, LongTable, read_harness_samples, read_long_table
from sklearn_riskcontrol.cli import main


def _wide(rng, n_models=4, n_examples=9, p_missing=0.2):
    S = rng.integers(0, 2, size=(n_models, n_examples)).astype(float)
    S[rng.random(S.shape) < p_missing] = np.nan
    S[:, 0] = 1.0  # every model and example keeps a cell
    S[0, :] = 0.5
    return S


def _melt(S, models, examples, rng):
    i, j = np.nonzero(~np.isnan(S))
    df = pd.DataFrame({"model": np.asarray(models)[i], "example": np.asarray(examples)[j],
                       "score": S[i, j]})
    return df.iloc[rng.permutation(len(df))].reset_index(drop=True)


def _write(df, path):
    kind = path.suffix
    if kind == ".csv":
        df.to_csv(path, index=False)
    elif kind == ".jsonl":
        df.to_json(path, orient="records", lines=True)
    else:
        df.to_parquet(path, index=False)
    return path


def _reorder(table, models, examples):
    """The table's matrix with rows/columns in the order of ``models``/``examples``."""
    mi = {str(m): k for k, m in enumerate(table.model_ids)}
    ei = {str(e): k for k, e in enumerate(table.example_ids)}
    return table.scores[np.ix_([mi[str(m)] for m in models], [ei[str(e)] for e in examples])]


@pytest.mark.parametrize("fmt", ["frame", ".csv", ".jsonl", ".parquet"])
def test_round_trip_wide_long_wide(fmt, tmp_path):
    if fmt == ".parquet":
        pytest.importorskip("pyarrow")
    rng = np.random.default_rng(0)
    S = _wide(rng)
    models = [f"m{i}" for i in range(S.shape[0])]
    examples = [f"q{j}" for j in range(S.shape[1])]
    df = _melt(S, models, examples, rng)
    source = df if fmt == "frame" else _write(df, tmp_path / f"t{fmt}")
    t = read_long_table(source)
    assert isinstance(t, LongTable) and t.shape == S.shape
    # ids in the order of their first row
    assert t.model_ids.tolist() == list(dict.fromkeys(df["model"]))
    assert t.example_ids.tolist() == list(dict.fromkeys(df["example"]))
    np.testing.assert_array_equal(_reorder(t, models, examples), S)
    # long -> wide -> long gives the same rows
    back = t.to_frame().sort_values(["model", "example"]).reset_index(drop=True)
    ref = df.sort_values(["model", "example"]).reset_index(drop=True)
    pd.testing.assert_frame_equal(back.astype({"model": str, "example": str}),
                                  ref.astype({"model": str, "example": str}))


def test_numeric_ids_and_extra_columns_are_kept(tmp_path):
    df = pd.DataFrame({"run": ["x", "x", "y"], "model": [7, 7, 8], "example": [3, 1, 3],
                       "score": [1, 0, 1], "judge": [0.9, 0.1, 0.8], "usd": [0.01, 0.02, 0.03]})
    t = read_long_table(df, judge_score="judge", cost="usd")
    assert t.model_ids.tolist() == [7, 8] and t.example_ids.tolist() == [3, 1]
    np.testing.assert_array_equal(t.judge_scores, [[0.9, 0.1], [0.8, np.nan]])
    np.testing.assert_array_equal(t.cost, [[0.01, 0.02], [0.03, np.nan]])
    assert list(t.to_frame().columns) == ["model", "example", "score", "judge_score", "cost"]


def _brute_pivot(models, examples, values, duplicates):
    """The definition, with dicts: one cell per (model, example), rows in file order."""
    model_ids = list(dict.fromkeys(models))
    example_ids = list(dict.fromkeys(examples))
    cells = {}
    for m, e, v in zip(models, examples, values):
        cells.setdefault((m, e), []).append(v)
    S = np.full((len(model_ids), len(example_ids)), np.nan)
    for (m, e), vs in cells.items():
        vs = [v for v in vs if not np.isnan(v)] if duplicates == "mean" else vs
        if vs:
            S[model_ids.index(m), example_ids.index(e)] = (
                np.mean(vs) if duplicates == "mean" else vs[-1])
    return model_ids, example_ids, S


@pytest.mark.parametrize("duplicates", ["mean", "last"])
@pytest.mark.parametrize("seed", range(5))
def test_pivot_equals_brute_force(seed, duplicates):
    rng = np.random.default_rng(seed)
    n = 300
    models = rng.choice([f"m{k}" for k in range(7)], n).tolist()
    examples = rng.integers(0, 25, n).tolist()  # repeated pairs on purpose
    values = rng.random(n)
    values[rng.random(n) < 0.1] = np.nan
    df = pd.DataFrame({"model": models, "example": examples, "score": values,
                       "cost": np.ones(n)})
    t = read_long_table(df, duplicates=duplicates, cost="cost")
    ids_m, ids_e, S = _brute_pivot(models, examples, values, duplicates)
    assert t.model_ids.tolist() == ids_m and t.example_ids.tolist() == ids_e
    np.testing.assert_allclose(t.scores, S)
    # costs: added up over a pair's rows with "mean" (each row was paid), the last with "last"
    counts = pd.crosstab(pd.Categorical(models, ids_m), pd.Categorical(examples, ids_e),
                         dropna=False).to_numpy().astype(float)
    counts[counts == 0] = np.nan
    np.testing.assert_allclose(t.cost, counts if duplicates == "mean" else np.sign(counts))


# ------------------------------------------------------------------------------------ errors
def test_duplicate_pair_names_the_pair_and_rows(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("model,example,score\na,q1,1\nb,q1,0\na,q2,1\na,q1,0\n")
    with pytest.raises(ValueError, match=r"t\.csv: the \(model, example\) pair \('a', 'q1'\) "
                                         r"appears twice, in row 1 \(line 2 of the file, "
                                         r"counting the header\) and row 4 \(line 5.*"
                                         r"duplicates='mean'"):
        read_long_table(path)
    with pytest.raises(ValueError, match="`duplicates` must be 'error', 'mean' or 'last'"):
        read_long_table(path, duplicates="first")


@pytest.mark.parametrize("kind", [".csv", ".jsonl", "frame"])
def test_non_numeric_score_names_file_column_row(kind, tmp_path):
    df = pd.DataFrame({"model": ["a", "a", "b"], "example": ["q1", "q2", "q1"],
                       "score": ["1", "0.5", "oops"]})
    if kind == "frame":
        source, where = df, r"DataFrame, column 'score', row 3 \(index 2\)"
    elif kind == ".csv":
        source = _write(df, tmp_path / "t.csv")
        where = r"t\.csv, column 'score', row 3 \(line 4 of the file, counting the header\)"
    else:
        source = _write(df, tmp_path / "t.jsonl")
        where = r"t\.jsonl, column 'score', row 3 \(line 3 of the file\)"
    with pytest.raises(ValueError, match=where + ": 'oops' is not a number"):
        read_long_table(source)


def test_other_input_errors(tmp_path):
    df = pd.DataFrame({"model": ["a", None], "example": [1, 2], "score": [1.0, 0.0],
                       "cost": [1.0, -1.0]})
    with pytest.raises(ValueError, match="has no column 'correct' \\(score\\); its columns are: "
                                         "'model', 'example', 'score', 'cost'"):
        read_long_table(df, score="correct")
    with pytest.raises(ValueError, match="column 'model', row 2 \\(index 1\\) is empty"):
        read_long_table(df)
    df.loc[1, "model"] = "b"
    with pytest.raises(ValueError, match="column 'cost', row 2 \\(index 1\\): -1.0 is out of "
                                         "range; cost must be numbers >= 0"):
        read_long_table(df, cost="cost")
    with pytest.raises(ValueError, match="'inf' is not a finite number"):
        read_long_table(df.assign(score=["1", "inf"]))
    with pytest.raises(ValueError, match="cannot tell the format from the extension '.txt'"):
        read_long_table(tmp_path / "t.txt")
    with pytest.raises(ValueError, match="`format` must be 'csv', 'jsonl', 'parquet'"):
        read_long_table(tmp_path / "t.txt", format="xlsx")
    with pytest.raises(FileNotFoundError, match="no such file"):
        read_long_table(tmp_path / "absent.csv")
    with pytest.raises(TypeError, match="`source` must be a pandas DataFrame or a file path"):
        read_long_table([[1, 2]])
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"model": "a", "example": 1, "score": 1}\n\n[1, 2]\n')
    with pytest.raises(ValueError, match=r"bad\.jsonl, line 3: expected a JSON object"):
        read_long_table(bad)
    bad.write_text('{"model": "a", "example": 1, "score": 1}\n{"model": \n')
    with pytest.raises(ValueError, match=r"bad\.jsonl, line 2: not valid JSON"):
        read_long_table(bad)


def test_missing_values_are_nan_and_booleans_count(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text('{"model": "a", "example": 1, "score": true}\n'
                    '{"model": "a", "example": 2, "score": null}\n'
                    '{"model": "b", "example": 2}\n'
                    '{"model": "b", "example": 1, "score": false}\n')
    t = read_long_table(path)
    np.testing.assert_array_equal(t.scores, [[1.0, np.nan], [0.0, np.nan]])
    # pandas' nullable dtypes: <NA> is a missing cell (a missing id is an error)
    df = pd.DataFrame({"model": pd.array(["a", "a", "b", "b"], dtype="string"),
                       "example": pd.array([1, 2, 2, 1], dtype="Int64"),
                       "score": pd.array([1, None, None, 0], dtype="Int64")})
    np.testing.assert_array_equal(read_long_table(df).scores, t.scores)
    df["score"] = pd.array(["1", pd.NA, "", "0"], dtype="string")
    np.testing.assert_array_equal(read_long_table(df).scores, t.scores)
    df["model"] = pd.array(["a", pd.NA, "b", "b"], dtype="string")
    with pytest.raises(ValueError, match="column 'model', row 2 \\(index 1\\) is empty"):
        read_long_table(df)


def test_parquet_without_pyarrow_names_the_extra(tmp_path, monkeypatch):
    path = tmp_path / "t.parquet"
    path.write_bytes(b"PAR1")
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    with pytest.raises(ImportError, match=r'pip install "sklearn-riskcontrol\[parquet\]"'):
        read_long_table(path)


# ------------------------------------------------------------------------------------ oracles
def test_oracle_from_long_keeps_ids_and_missing_policy(tmp_path):
    rng = np.random.default_rng(1)
    S = _wide(rng, 5, 40, p_missing=0.0)
    S[S == 0.5] = 1.0
    models = [f"m{i}" for i in range(5)]
    examples = [f"q{j}" for j in range(40)]
    df = _melt(S, models, examples, rng)
    t = read_long_table(df)
    oracle = MatrixOracle.from_long(t)
    assert oracle.model_ids == [str(m) for m in t.model_ids]
    np.testing.assert_array_equal(oracle.scores, t.scores)
    # a strategy fits on the table directly (as_oracle) and agrees with the matrix run
    a = UCBE(budget=0.5, batch_size=4, random_state=0).fit(t)
    b = UCBE(budget=0.5, batch_size=4, random_state=0).fit(t.scores)
    np.testing.assert_array_equal(a.means_, b.means_)
    assert t.model_ids[a.best_index_] == t.model_ids[b.best_index_]
    # missing cells: the default names the first missing pair; "exclude" skips them
    t2 = read_long_table(df.drop(index=df.index[df["model"] == "m3"][:3]))
    with pytest.raises(ValueError, match="no score for model 'm3' on example .* pass "
                                         "missing='exclude'"):
        as_oracle(t2)
    o2 = MatrixOracle.from_long(t2, missing="exclude")
    assert (~o2.available_mask()).sum() == 3
    PULSE(budget=0.3, batch_size=8, rank=2, random_state=0).fit(o2)
    # the ids are the store's keys
    store = tmp_path / "run.db"
    o3 = MatrixOracle.from_long(t, store=str(store))
    o3.query(1, [0, 2])
    keys = {(r.model, r.example) for r in o3.store_.records()}
    o3.store_.close()
    assert keys == {(str(t.model_ids[1]), str(t.example_ids[0])),
                    (str(t.model_ids[1]), str(t.example_ids[2]))}
    with pytest.raises(TypeError, match="`table` must be a LongTable"):
        MatrixOracle.from_long(S)


# ---------------------------------------------------------------------------- harness samples
def _lm_eval_run(root, model, task, accs, filters=("none",)):
    d = root / model
    d.mkdir(parents=True, exist_ok=True)
    path = d / f"samples_{task}_2024-05-01T10-00-00.123456.jsonl"
    with open(path, "w") as f:
        for doc_id, acc in enumerate(accs):
            for flt in filters:
                line = {"doc_id": doc_id, "doc": {"question": "..."}, "target": "B",
                        "arguments": {}, "resps": [["B"]], "filtered_resps": ["B"],
                        "filter": flt, "metrics": ["acc", "exact_match"],
                        "acc": acc if flt != "strict" else 0.0, "exact_match": bool(acc)}
                print(json.dumps(line), file=f)
    return path


def test_harness_samples_two_models_two_tasks(tmp_path):
    acc = {("org__a", "arc_easy"): [1, 0, 1], ("org__a", "hellaswag"): [0, 0],
           ("org__b", "arc_easy"): [1, 1, 0], ("org__b", "hellaswag"): [1, 0]}
    for (model, task), accs in acc.items():
        _lm_eval_run(tmp_path, model, task, accs)
    t = read_harness_samples(tmp_path, metric="acc")
    assert t.model_ids.tolist() == ["org__a", "org__b"]
    assert t.example_ids.tolist() == ["arc_easy/0", "arc_easy/1", "arc_easy/2",
                                      "hellaswag/0", "hellaswag/1"]
    np.testing.assert_array_equal(t.scores, [[1, 0, 1, 0, 0], [1, 1, 0, 1, 0]])
    # a boolean metric counts as 1/0; a list of files works too
    files = sorted(tmp_path.rglob("*.jsonl"))
    t2 = read_harness_samples(files, metric="exact_match")
    np.testing.assert_array_equal(t2.scores, t.scores)
    # model from a callable
    t3 = read_harness_samples(files, metric="acc",
                              model_from=lambda p: os.path.basename(os.path.dirname(p))[-1])
    assert t3.model_ids.tolist() == ["a", "b"]
    # the strategies run on it
    UCBE(budget=1.0, batch_size=1, random_state=0).fit(t)


def test_harness_filters_mapping_and_errors(tmp_path):
    path = _lm_eval_run(tmp_path, "m", "gsm8k", [1, 0], filters=("flexible", "strict"))
    with pytest.raises(ValueError, match=r"pair \('m', 'gsm8k/0'\) appears twice, in .*line 1 "
                                         r"and .*line 2; .*pass filter="):
        read_harness_samples(path, metric="acc")
    t = read_harness_samples(path, metric="acc", filter="strict")
    np.testing.assert_array_equal(t.scores, [[0.0, 0.0]])
    t = read_harness_samples(path, metric="acc", filter="flexible")
    np.testing.assert_array_equal(t.scores, [[1.0, 0.0]])
    with pytest.raises(ValueError, match="no sample line kept"):
        read_harness_samples(path, metric="acc", filter="other")
    with pytest.raises(ValueError, match="no sample line has the field 'accuracy'.*'doc_id'"):
        read_harness_samples(path, metric="accuracy", filter="strict")
    # other harnesses: nested fields, model and task from fields, judge and cost
    other = tmp_path / "helm_like.jsonl"
    rows = [{"run": {"model": "x"}, "instance_id": "i1", "stats": {"em": 1, "judge": 0.8},
             "usd": 0.1},
            {"run": {"model": "y"}, "instance_id": "i1", "stats": {"em": 0, "judge": 0.4},
             "usd": 0.2},
            {"run": {"model": "x"}, "instance_id": "i2", "stats": {"em": "yes"}, "usd": 0.1}]
    other.write_text("\n".join(json.dumps(r) for r in rows[:2]) + "\n")
    mapping = {"model": "run.model", "example": "instance_id", "judge_score": "stats.judge",
               "cost": "usd"}
    t = read_harness_samples(other, metric="stats.em", mapping=mapping)
    assert t.model_ids.tolist() == ["x", "y"] and t.example_ids.tolist() == ["i1"]
    np.testing.assert_array_equal(t.judge_scores, [[0.8], [0.4]])
    np.testing.assert_array_equal(t.cost, [[0.1], [0.2]])
    other.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    with pytest.raises(ValueError, match=r"helm_like\.jsonl, field 'stats\.em', line 3: 'yes' "
                                         "is not a number"):
        read_harness_samples(other, metric="stats.em", mapping=mapping)
    with pytest.raises(ValueError, match="line 1: no field 'doc_id'"):
        read_harness_samples(other, metric="stats.em", model_from="filename")
    with pytest.raises(ValueError, match="`mapping` has unknown keys \\['id'\\]"):
        read_harness_samples(other, metric="x", mapping={"id": "x"})
    with pytest.raises(ValueError, match="`model_from` must be"):
        read_harness_samples(other, metric="x", model_from="field")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="no .jsonl sample file"):
        read_harness_samples(tmp_path / "empty", metric="x")


# -------------------------------------------------------------------------------- command line
@pytest.fixture()
def wide_and_long(tmp_path):
    rng = np.random.default_rng(2)
    S = (rng.random((6, 60)) < np.linspace(0.3, 0.7, 6)[:, None]).astype(float)
    S[rng.random(S.shape) < 0.1] = np.nan
    S[0], S[:, 0] = np.where(np.isnan(S[0]), 1.0, S[0]), 1.0  # first row, column complete
    models = [f"model-{i}" for i in range(6)]
    examples = [f"q{j}" for j in range(60)]
    wide = tmp_path / "wide.csv"
    pd.DataFrame(S, index=models, columns=examples).to_csv(wide)
    i, j = np.nonzero(~np.isnan(S))  # row-major: ids first appear in the wide table's order
    df = pd.DataFrame({"model": np.array(models)[i], "example": np.array(examples)[j],
                       "score": S[i, j]})
    return wide, df, tmp_path


@pytest.mark.parametrize("kind", [".csv", ".jsonl"])
def test_cli_bandits_long_equals_wide(wide_and_long, kind, capsys):
    wide, df, tmp = wide_and_long
    long = _write(df, tmp / f"long{kind}")
    args = ["bandits", "--budget", "0.5", "--batch-size", "4", "--rank", "2",
            "--random-state", "1"]
    assert main(args + ["--scores", str(wide), "--output", str(tmp / "a.csv")]) == 0
    out_wide = capsys.readouterr().out.splitlines()
    assert main(args + ["--scores", str(long), "--output", str(tmp / "b.csv")]) == 0
    out_long = capsys.readouterr().out.splitlines()
    pd.testing.assert_frame_equal(pd.read_csv(tmp / "a.csv"), pd.read_csv(tmp / "b.csv"))
    assert out_long[1:] == out_wide[1:]
    best = pd.read_csv(tmp / "b.csv")["best"].to_numpy().argmax()
    assert out_long[0] == out_wide[0].replace(f"(row {best + 1} of {wide})",
                                              f"(model {best + 1} of {long})")


def test_cli_bandits_long_flags_store_and_errors(tmp_path, capsys):
    path = tmp_path / "runs.csv"
    rows = ["llm,qid,correct"] + [f"m{i},q{j},{int((i + j) % 3 == 0)}"
                                  for i in range(3) for j in range(12)]
    path.write_text("\n".join(rows) + "\n")
    base = ["bandits", "--scores", str(path), "--strategy", "ucbe", "--budget", "1.0",
            "--batch-size", "2"]
    # not detected with other column names: read as a wide table, whose cells are not numbers
    assert main(base) == 2
    capsys.readouterr()
    flags = ["--long", "--model-column", "llm", "--example-column", "qid", "--score-column",
             "correct"]
    assert main(base + flags + ["--store", str(tmp_path / "run.db")]) == 0
    out = capsys.readouterr().out
    assert "best model: m" in out and " (model " in out and "36 newly revealed" in out
    assert main(base + flags + ["--store", str(tmp_path / "run.db")]) == 0
    assert "36 cells read back, 0 newly revealed" in capsys.readouterr().out
    path.write_text(path.read_text().replace("m1,q3,0", "m1,q3,maybe"))
    assert main(base + flags) == 2
    err = capsys.readouterr().err
    assert "runs.csv, column 'correct', row 16 (line 17 of the file, counting the header): " \
           "'maybe' is not a number; score must lie in [0, 1]" in err
    path.write_text(path.read_text().replace("maybe", "2"))
    assert main(base + flags) == 2
    assert "'2' is out of range" in capsys.readouterr().err
    path.write_text(path.read_text().replace("m1,q3,2", "m1,q2,1"))
    assert main(base + flags) == 2
    assert "pair ('m1', 'q2') appears twice" in capsys.readouterr().err
    pq = tmp_path / "t.parquet"
    pq.write_bytes(b"PAR1")
    import importlib.util
    if importlib.util.find_spec("pyarrow") is None:
        assert main(["bandits", "--scores", str(pq)]) == 2
        assert "sklearn-riskcontrol[parquet]" in capsys.readouterr().err


def test_cli_select_long_equals_wide(tmp_path, capsys):
    rng = np.random.default_rng(3)
    names = ["large", "medium", "small"]  # testing order: the likeliest to pass first
    risk = np.array([0.05, 0.15, 0.4])
    n, N = 150, 600
    H = (rng.random((3, n)) < risk[:, None]).astype(float)
    flip = rng.random((3, n)) < 0.1
    G = np.where(flip, 1 - H, H)
    U = (rng.random((3, N)) < risk[:, None] + 0.02).astype(float)
    ex_l = [f"l{j}" for j in range(n)]
    ex_u = [f"u{j}" for j in range(N)]
    for arr, ex, name in [(H, ex_l, "H"), (G, ex_l, "G"), (U, ex_u, "U")]:
        pd.DataFrame(arr.T, columns=names).to_csv(tmp_path / f"{name}.csv", index=False)
    # one long labeled file with the loss and the judge's loss; candidates in testing order
    lab = pd.DataFrame({"model": np.repeat(names, n), "example": np.tile(ex_l, 3),
                        "loss": H.ravel(), "judge_loss": G.ravel()})
    lab.to_csv(tmp_path / "lab.csv", index=False)
    unl = pd.DataFrame({"model": np.repeat(names, N), "example": np.tile(ex_u, 3),
                        "judge_loss": U.ravel()})
    unl.to_json(tmp_path / "unl.jsonl", orient="records",
                                               lines=True)
    common = ["--alpha", "0.25", "--delta", "0.1", "--n-rho", "4"]
    assert main(["autoeval", "select", "--labeled", str(tmp_path / "H.csv"), "--judge-labeled",
                 str(tmp_path / "G.csv"), "--unlabeled", str(tmp_path / "U.csv"),
                 "--output", str(tmp_path / "wide_out.csv")] + common) == 0
    assert main(["autoeval", "select", "--labeled", str(tmp_path / "lab.csv"), "--unlabeled",
                 str(tmp_path / "unl.jsonl"), "--output", str(tmp_path / "long_out.csv")]
                + common) == 0
    a, b = pd.read_csv(tmp_path / "wide_out.csv"), pd.read_csv(tmp_path / "long_out.csv")
    pd.testing.assert_frame_equal(a, b)
    assert b["certified"].any()
    capsys.readouterr()
    # a candidate missing from --unlabeled is named
    unl[unl["model"] != "large"].to_json(tmp_path / "unl2.jsonl", orient="records", lines=True)
    assert main(["autoeval", "select", "--labeled", str(tmp_path / "lab.csv"), "--unlabeled",
                 str(tmp_path / "unl2.jsonl")] + common) == 2
    assert "unl2.jsonl has no row for the candidate 'large' of --labeled" in \
        capsys.readouterr().err
    # a missing loss is named
    lab.iloc[:-1].to_csv(tmp_path / "lab2.csv", index=False)
    assert main(["autoeval", "select", "--labeled", str(tmp_path / "lab2.csv"),
                 "--method", "eval"] + common) == 2
    assert "no 'loss' value for candidate" in capsys.readouterr().err
