"""Command-line messages: every CSV error names the file, the column and the 1-based row
(row k = line k + 1 of the file, counting the header), is one ``error:`` line with exit status 2,
and every printed summary says what is a realization and what the guarantee is about."""

import ast
import inspect
import io
import re
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from sklearn_riskcontrol import cli
from sklearn_riskcontrol.cli import main

# One module per subcommand, each with add_parser(subparsers) and run(args).
SUBCOMMANDS = (cli.selective, cli.online, cli.autoeval, cli.bandits)

NUMPY_REPR = re.compile(r"np\.[a-z_]+[0-9]*\(")


def _run(argv, capsys):
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    for text in (captured.out, captured.err):  # no NumPy repr in any output, good or bad
        assert not NUMPY_REPR.search(text), text
        assert "Traceback" not in text
    return code, captured.out, captured.err


def _error(argv, capsys):
    code, _, err = _run(argv, capsys)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and lines[0].startswith("error: "), err
    return lines[0]


# Each subcommand with the table it reads; the cell {x} is data row 3 (line 4 of the file).
TABLES = {
    "selective": ("risk,score\n0,0.1\n1,0.9\n{x},0.3\n0,0.2\n", "risk",
                  ["selective", "--calibration", "{f}", "--test", "{test}", "--alpha", "0.2"]),
    "certify": ("loss,judge_loss\n0,0\n1,1\n{x},0\n0,0\n", "loss",
                ["autoeval", "certify", "--labeled", "{f}", "--alpha", "0.2", "--method", "eval"]),
    "select": ("m1,m2\n0,0\n1,1\n0,{x}\n0,0\n", "m2",
               ["autoeval", "select", "--labeled", "{f}", "--alpha", "0.2", "--method", "eval"]),
    "online": ("id,score\n0,0.1\n1,0.9\n2,{x}\n3,0.2\n", "score",
               ["online", "--input", "{f}", "--alpha", "0.1"]),
    "bandits": ("model,q1,q2\na,0,1\nb,1,1\nc,{x},0\nd,0,0\n", "q1",
                ["bandits", "--scores", "{f}"]),
}


def _argv(command, path, tmp_path):
    test = tmp_path / "test.csv"
    test.write_text("id,score\n0,0.5\n1,0.2\n")
    return [a.format(f=path, test=test) for a in TABLES[command][2]]


@pytest.mark.parametrize("command", list(TABLES))
@pytest.mark.parametrize("cell, problem", [
    ("abc", "'abc' is not a number"),  # not reported as NaN
    ("nan", "'nan' is not a finite number"),
    ("inf", "'inf' is not a finite number"),
    ("1.5", "'1.5' is out of range"),
    ("", "is empty"),
])
def test_bad_cell_names_file_column_and_row(command, cell, problem, tmp_path, capsys):
    text, column, _ = TABLES[command]
    if (command == "online" and cell == "1.5") or (command in ("bandits", "certify")
                                                 and cell == ""):
        pytest.skip("legal there: online scores are any finite number; an empty score = missing; "
                    "an empty loss = an unlabeled row (test_certify_one_file_with_unlabeled_rows)")
    path = tmp_path / "table.csv"
    path.write_text(text.format(x=cell))
    msg = _error(_argv(command, path, tmp_path), capsys)
    assert f"{path}, column {column!r}, row 3 (" in msg
    assert "line 4 of the file, counting the header)" in msg
    assert problem in msg
    if command != "online":
        assert "must lie in [0, 1]" in msg
    if command == "bandits":
        assert "(model 'c', line 4" in msg


@pytest.mark.parametrize("command", list(TABLES))
def test_empty_header_only_and_duplicate_columns(command, tmp_path, capsys):
    path = tmp_path / "t.csv"
    path.write_text("")
    assert f"error: {path} is empty (0 bytes)" in _error(_argv(command, path, tmp_path), capsys)
    path.write_text(TABLES[command][0].splitlines()[0] + "\n")
    assert f"error: {path} has a header but no data rows" in _error(
        _argv(command, path, tmp_path), capsys)
    path.write_text("x,y,x\n0,1,0\n")  # pandas would silently rename the second x to x.1
    msg = _error(_argv(command, path, tmp_path), capsys)
    assert f"{path}: the header names the column 'x' twice (columns 1 and 3)" in msg


@pytest.mark.parametrize("option", [
    ["selective", "--calibration", "{f}", "--test", "{f}", "--alpha", "0.2", "--risk-column", "nope"],
    ["autoeval", "certify", "--labeled", "{f}", "--alpha", "0.2", "--loss-column", "nope"],
    ["online", "--input", "{f}", "--alpha", "0.1", "--score-column", "nope"],
])
def test_missing_column_lists_the_columns_present(option, tmp_path, capsys):
    path = tmp_path / "t.csv"
    path.write_text("risk,score,loss,judge_loss\n0,0.5,0,0\n")
    msg = _error([a.format(f=path) for a in option], capsys)
    assert f"{path} has no column 'nope'; its columns are: 'risk', 'score', 'loss'" in msg


def test_duplicate_model_names_are_rejected(tmp_path, capsys):
    path = tmp_path / "models.csv"
    path.write_text("model,q1,q2\na,1,0\nb,0,1\na,1,1\n")
    msg = _error(["bandits", "--scores", path], capsys)
    assert (f"{path}: the model name 'a' appears twice, in row 1 (line 2 of the file, counting "
            "the header) and row 3 (line 4 of the file, counting the header)") in msg


def test_row_convention_without_header_and_with_blank_lines(tmp_path, capsys):
    path = tmp_path / "s.csv"
    path.write_text("1,0,1\n0,x,1\n")
    msg = _error(["bandits", "--scores", path, "--no-header"], capsys)
    assert f"{path}, column '2', row 2 (line 2 of the file): 'x' is not a number" in msg
    cal, test = tmp_path / "cal.csv", tmp_path / "test.csv"
    test.write_text("id,score\n007,0.10\n8,0.2\n")
    cal.write_text("risk,score\n0,0.1\n\n1,0.5\n")  # a blank line inside is a row: lines hold
    msg = _error(["selective", "--calibration", cal, "--test", test, "--alpha", "0.3"], capsys)
    assert f"{cal}, column 'risk', row 2 (line 3 of the file, counting the header) is empty" in msg
    cal.write_text("risk,score\n0,0.1\n1,0.5\n\n\n")  # blank lines at the end are not rows
    code, out, _ = _run(["selective", "--calibration", cal, "--test", test, "--alpha", "0.3"],
                        capsys)
    assert code == 0
    assert out.splitlines()[:2] == ["id,score,evalue,deploy", "007,0.10,0.0,False"]  # text kept


def test_tables_are_read_in_one_place():
    for module in (cli, *SUBCOMMANDS, cli._io):
        source = inspect.getsource(module)
        assert "read_csv" not in source and "to_numeric" not in source, module.__name__
    # Only cli/_io.py reaches the table readers; the parser and the subcommands go through it.
    for module in (cli, *SUBCOMMANDS):
        for node in ast.walk(ast.parse(inspect.getsource(module))):
            if isinstance(node, ast.ImportFrom):
                assert node.module not in ("_tables", "tables"), module.__name__
    for module in SUBCOMMANDS:
        assert callable(module.add_parser) and callable(module.run) and module.__doc__


# ------------------------------------------------------------------- warnings: one clean line
def test_warnings_are_one_line(monkeypatch, capsys):
    def warn_twice(args):
        import warnings

        for _ in range(2):  # the same warning is shown once
            warnings.warn("first line\n   second line", UserWarning)

    monkeypatch.setattr(cli.selective, "run", warn_twice)
    code, _, err = _run(["selective", "--calibration", "a", "--test", "b", "--alpha", "0.1"],
                        capsys)
    assert code == 0 and err == "warning: first line second line\n"


def test_real_warning_in_a_subprocess_has_no_source_context(tmp_path):
    path = tmp_path / "losses.csv"
    pd.DataFrame({"m1": np.tile([0.0, 1.0], 25), "m2": np.zeros(50)}).to_csv(path, index=False)
    result = subprocess.run(
        [sys.executable, "-m", "sklearn_riskcontrol", "autoeval", "select", "--labeled",
         str(path), "--alpha", "0.1", "--method", "eval"],
        capture_output=True, text=True, check=False,
    )
    assert result.returncode == 0
    warned = [ln for ln in result.stderr.splitlines() if ln.startswith("warning: ")]
    summary = [ln for ln in result.stderr.splitlines() if not ln.startswith("warning: ")]
    assert any("Nothing is certified" in ln for ln in warned)
    assert len(summary) == 1 and summary[0].startswith("nothing certified at alpha=0.1")
    assert ".py:" not in result.stderr and "warn(" not in result.stderr


# ------------------------------------------------------------- summaries that tell the truth
def test_selective_summary_states_realization_and_guarantee(tmp_path, capsys):
    rng = np.random.default_rng(0)
    cal, test = tmp_path / "cal.csv", tmp_path / "test.csv"
    s = rng.uniform(size=300)
    pd.DataFrame({"risk": (rng.uniform(size=300) < s) * 1.0, "score": s}).to_csv(cal, index=False)
    pd.DataFrame({"score": rng.uniform(size=40)}).to_csv(test, index=False)
    base = ["selective", "--calibration", cal, "--test", test, "--alpha", "0.3", "--output",
            tmp_path / "o.csv"]
    for target, guarantee in [
        ("sdr", "E[sum of the deployed rows' risks / max(1, number deployed)] <= 0.3"),
        ("mdr", "for every test row, E[risk x deploy] <= 0.3"),
    ]:
        _, _, err = _run(base + ["--target", target], capsys)
        deployed = int(pd.read_csv(tmp_path / "o.csv")["deploy"].sum())
        assert f"deployed on {deployed} of 40 test rows (a realization" in err
        assert guarantee + ", in expectation over the calibration and test draws" in err


def test_certify_and_select_summaries(tmp_path, capsys):
    rng = np.random.default_rng(1)
    path = tmp_path / "lab.csv"
    pd.DataFrame({"loss": (rng.random(400) < 0.02) * 1.0}).to_csv(path, index=False)
    certify = ["autoeval", "certify", "--labeled", path, "--method", "eval", "--ci"]
    _, _, err = _run(certify + ["--alpha", "0.2"], capsys)
    assert err.startswith("certified: risk <= 0.2 (p-value ")
    assert "guarantee: P(certified while the risk is > 0.2) <= 0.1, over the draw" in err
    assert re.search(r"interval \[0\.\d{4}, 0\.\d{4}\] \(a realization\): with probability "
                     r">= 0\.9", err)
    pd.DataFrame({"loss": (rng.random(400) < 0.3) * 1.0}).to_csv(path, index=False)
    _, _, err = _run(certify + ["--alpha", "0.2"], capsys)
    assert err.startswith("NOT certified: these rows do not show risk <= 0.2 at level delta = 0.1")
    assert "this is no evidence that the risk exceeds 0.2" in err
    wide = tmp_path / "wide.csv"
    pd.DataFrame({"a": (rng.random(400) < 0.02) * 1.0, "b": np.ones(400)}).to_csv(wide,
                                                                                  index=False)
    _, _, err = _run(["autoeval", "select", "--labeled", wide, "--alpha", "0.2", "--method",
                      "eval"], capsys)
    assert "selected 'a': 1 of 2 candidates certified with risk <= 0.2" in err
    assert "guarantee: P(some certified candidate has risk > 0.2) <= 0.1" in err


def _three_models(tmp_path, rng, risks=(0.02, 0.1, 0.4), n=200, N=1800):
    """Long certify tables: one row per (model, example), judge right 90%."""
    def rows(m, labeled):
        k = n if labeled else N
        h = (rng.random(k) < m[1]) * 1.0
        g = np.where(rng.random(k) < 0.9, h, 1 - h)
        return pd.DataFrame({"model": m[0], "loss": h if labeled else np.nan, "judge_loss": g})
    models = list(zip(["small", "medium", "large"], risks))
    lab = pd.concat([rows(m, True) for m in models])
    unl = pd.concat([rows(m, False) for m in models])
    return lab, unl


def test_certify_never_pools_models(tmp_path, capsys):
    """Three models in one long table: one test per model on its own rows (the old command
    pooled the 600 + 5400 rows into one test and printed the first model's p-value)."""
    from sklearn_riskcontrol.autoeval import rautoeval_test

    lab, unl = _three_models(tmp_path, np.random.default_rng(3))
    lab.to_csv(tmp_path / "lab.csv", index=False)
    unl.drop(columns="loss").to_csv(tmp_path / "unl.csv", index=False)
    base = ["autoeval", "certify", "--labeled", tmp_path / "lab.csv", "--alpha", "0.15"]
    code, out, err = _run(base + ["--unlabeled", tmp_path / "unl.csv"], capsys)
    got = pd.read_csv(io.StringIO(out))
    assert code == 0 and got["model"].tolist() == ["small", "medium", "large"]
    for name, row in got.set_index("model").iterrows():
        ref = rautoeval_test(lab.loc[lab.model == name, "loss"].to_numpy(),
                             lab.loc[lab.model == name, "judge_loss"].to_numpy(),
                             unl.loc[unl.model == name, "judge_loss"].to_numpy(), alpha=0.15,
                             delta=0.1)
        assert row["pvalue"] == pytest.approx(ref.pvalue, rel=1e-12)
        assert (row["n_labeled"], row["n_unlabeled"]) == (200, 1800)
        assert f"model {name!r}: " in err
    assert "for each model separately: with 3 models" in err
    # one file holding all rows (empty loss = unlabeled) gives the same tests
    pd.concat([lab, unl]).to_csv(tmp_path / "all.csv", index=False)
    code, out2, _ = _run(["autoeval", "certify", "--labeled", tmp_path / "all.csv", "--alpha",
                          "0.15"], capsys)
    assert code == 0 and out2 == out
    code, out3, err = _run(base + ["--unlabeled", tmp_path / "unl.csv", "--model", "medium"],
                           capsys)
    assert pd.read_csv(io.StringIO(out3)).to_dict("list") == \
        got[got.model == "medium"].reset_index(drop=True).to_dict("list")
    assert "models separately" not in err
    # an unlabeled file without the model column cannot be split: refused, naming the fix
    unl.drop(columns=["loss", "model"]).to_csv(tmp_path / "unl_nomodel.csv", index=False)
    msg = _error(base + ["--unlabeled", tmp_path / "unl_nomodel.csv"], capsys)
    assert "holds 3 models in its 'model' column" in msg and "--model NAME" in msg
    msg = _error(base + ["--model", "huge"], capsys)
    assert "no row of model 'huge'" in msg and "['small', 'medium', 'large']" in msg


def test_certify_one_file_with_unlabeled_rows(tmp_path, capsys):
    """Rows without a loss are unlabeled (as in read_long_table); the CLI used to refuse them."""
    from sklearn_riskcontrol.autoeval import rautoeval_test

    lab, unl = _three_models(tmp_path, np.random.default_rng(4))
    one = pd.concat([lab, unl]).query("model == 'small'").drop(columns="model")
    one.sample(frac=1, random_state=0).to_csv(tmp_path / "one.csv", index=False)
    code, out, err = _run(["autoeval", "certify", "--labeled", tmp_path / "one.csv",
                           "--alpha", "0.15"], capsys)
    got = pd.read_csv(io.StringIO(out)).iloc[0]
    shuffled = one.sample(frac=1, random_state=0)
    lab_rows = shuffled[shuffled.loss.notna()]
    ref = rautoeval_test(lab_rows.loss.to_numpy(), lab_rows.judge_loss.to_numpy(),
                         shuffled[shuffled.loss.isna()].judge_loss.to_numpy(), alpha=0.15,
                         delta=0.1)
    assert code == 0 and got["pvalue"] == pytest.approx(ref.pvalue, rel=1e-12)
    assert (got["n_labeled"], got["n_unlabeled"]) == (200, 1800)
    # a row with neither a loss nor a judge loss is an error naming the row
    (tmp_path / "bad.csv").write_text("loss,judge_loss\n0,0\n,\n1,1\n")
    msg = _error(["autoeval", "certify", "--labeled", tmp_path / "bad.csv", "--alpha", "0.2"],
                 capsys)
    assert "column 'judge_loss', row 2" in msg and "is empty" in msg
    assert "a row needs a loss (labeled) or a judge loss (unlabeled)" in msg


def test_select_one_long_file_with_unlabeled_rows(tmp_path, capsys):
    """autoeval select on one long file: examples without a loss are unlabeled."""
    from sklearn_riskcontrol.autoeval import rautoeval_select

    rng = np.random.default_rng(5)
    lab, unl = _three_models(tmp_path, rng)
    n, N = 200, 1800
    lab["example"] = np.tile(np.arange(n), 3)
    unl["example"] = np.tile(np.arange(n, n + N), 3)
    pd.concat([lab, unl]).to_csv(tmp_path / "all.csv", index=False)
    code, out, _ = _run(["autoeval", "select", "--labeled", tmp_path / "all.csv", "--alpha",
                         "0.15", "--cost", "1,2,3"], capsys)
    H = lab["loss"].to_numpy().reshape(3, n)
    G = lab["judge_loss"].to_numpy().reshape(3, n)
    U = unl["judge_loss"].to_numpy().reshape(3, N)
    ref = rautoeval_select(H, G, U, alpha=0.15, delta=0.1, cost=[1, 2, 3])
    got = pd.read_csv(io.StringIO(out))
    assert code == 0
    np.testing.assert_allclose(got["pvalue"], ref.pvalues, rtol=1e-12)
    # an example labeled for some candidates only is neither labeled nor unlabeled: refused
    mixed = pd.concat([lab, unl])
    mixed.loc[(mixed.model == "small") & (mixed.example == 3), "loss"] = np.nan
    mixed.to_csv(tmp_path / "mixed.csv", index=False)
    msg = _error(["autoeval", "select", "--labeled", tmp_path / "mixed.csv", "--alpha", "0.15"],
                 capsys)
    assert "no 'loss' value for candidate 'small' on example '3'" in msg
    assert "an example with no loss for any candidate is unlabeled" in msg


def test_cli_messages_use_cli_words(tmp_path, capsys):
    """No Python argument names (loss_judge_unlabeled, duplicates='mean') in CLI output."""
    path = tmp_path / "lab.csv"
    pd.DataFrame({"loss": np.zeros(40), "judge_loss": np.zeros(40)}).to_csv(path, index=False)
    code, _, err = _run(["autoeval", "certify", "--labeled", path, "--alpha", "0.2"], capsys)
    assert code == 0 and "--method plus reduces to R-Eval" in err
    assert "loss_judge_unlabeled" not in err and "method=" not in err


# bandits inputs whose messages once named Python arguments; the fragment each must contain.
BEST_MODEL_WORDS = [
    ("model,example,score\na,q1,1\na,q1,0\nb,q1,1\n", [],  # a repeated (model, example) row
     "remove the repeated row, or pass --duplicates mean (average the scores) or --duplicates last"),
    ("model,example,score\na,q1,1\nb,q1,0\n", ["--long", "--score-column", "correct"],
     "Pass the right column name (--score-column)"),
    ("model,q1,q2\na,1,0\nb,,\n", [],  # a model without any score
     "model 'b' has no score on any example; drop the models without scores, or score them"),
    ("model,q1,q2,q3\na,0,1,1\nb,1,1,0\n", ["--budget", "100"],  # the strategies' own messages
     "--budget=100 exceeds the 6 available cells"),
    ("model,q1,q2,q3\na,0,1,1\nb,1,1,0\n", ["--budget", "1"],
     "its warm-up batches x --batch-size = 64 examples of each of the 2 models (6 evaluations); "
     "raise the budget or lower --batch-size."),
    ("model,q1,q2,q3\na,0,1,1\nb,1,1,0\n", ["--batch-size", "0"],
     "--batch-size must be an int in the range [1, inf). Got 0 instead."),
]


@pytest.mark.parametrize("table, options, fragment", BEST_MODEL_WORDS)
def test_bandits_messages_use_cli_words(table, options, fragment, tmp_path, capsys):
    path = tmp_path / "t.csv"
    path.write_text(table)
    msg = _error(["bandits", "--scores", path, *options], capsys)
    assert fragment in msg
    assert "`" not in msg and "='" not in msg and "duplicates=" not in msg


@pytest.mark.parametrize("cells, options, fragment", [
    ("x,0", [], "'x' is not a number; loss must lie in [0, 1]"),
    ("0,y", [], "'y' is not a number; judge loss must lie in [0, 1]"),
    ("0,0", ["--loss-column", "nope"], "no column 'nope' (loss); its columns are: 'model', "
     "'example', 'loss', 'judge_loss'. Pass the right column name (--loss-column)"),
])
def test_long_loss_tables_use_cli_words(cells, options, fragment, tmp_path, capsys):
    path = tmp_path / "lab.csv"
    path.write_text(f"model,example,loss,judge_loss\na,1,0,0\na,2,{cells}\nb,1,0,0\nb,2,0,0\n")
    msg = _error(["autoeval", "select", "--labeled", path, "--long", "--alpha", "0.2", *options],
                 capsys)
    assert fragment in msg and "judge_score" not in msg and "`" not in msg


def test_bandits_duplicates_option(tmp_path, capsys):
    path = tmp_path / "t.csv"
    path.write_text("model,example,score\na,q1,1\na,q1,0\nb,q1,1\na,q2,1\nb,q2,1\n")
    code, out, _ = _run(["bandits", "--scores", path, "--budget", "1.0", "--duplicates",
                         "mean", "--strategy", "uniform"], capsys)
    assert code == 0 and out.startswith("best model: b ")  # a: (0.5 + 1) / 2, b: 1
    wide = tmp_path / "wide.csv"
    wide.write_text("model,q1,q2\na,1,0\nb,0,1\n")
    assert "--duplicates applies to long tables" in _error(
        ["bandits", "--scores", wide, "--duplicates", "last"], capsys)


def test_bandits_with_a_single_model_says_there_is_nothing_to_choose(tmp_path, capsys):
    path = tmp_path / "one.csv"
    path.write_text("model,q1,q2,q3,q4\na,1,0,1,1\n")
    code, out, err = _run(["bandits", "--scores", path, "--budget", "1.0", "--strategy",
                           "ucbe", "--batch-size", "2"], capsys)
    assert code == 0 and out.startswith("best model: a ")
    assert err == ("warning: UCBE was given a single model: there is nothing to choose, so that "
                   "model is returned as the best by default (the budget only estimates its mean "
                   "score). Pass two or more models to identify the best one.\n")


@pytest.fixture(scope="module")
def five_models(tmp_path_factory):
    rng = np.random.default_rng(0)
    means = np.array([0.6, 0.62, 0.65, 0.7, 0.72])
    S = (rng.random((5, 1297)) < means[:, None]).astype(int)
    path = tmp_path_factory.mktemp("five") / "five.csv"
    pd.DataFrame(S, index=[f"m{i}" for i in range(5)]).to_csv(path)
    return path


@pytest.mark.parametrize("options", [
    ["--budget", "10", "--batch-size", "2"],  # two scored examples per model: vacuous
    ["--budget", "0.2", "--batch-size", "4"],
])
def test_bandits_flags_vacuous_intervals(five_models, tmp_path, capsys, options):
    out = tmp_path / "est.csv"
    code, printed, err = _run(["bandits", "--scores", five_models, "--output", out, *options],
                              capsys)
    assert code == 0 and "warning" not in err  # the estimator's own warning is replaced
    got = pd.read_csv(out)
    vacuous = got["ci_high"] - got["ci_low"] >= 0.99  # the definition, from the bounds
    np.testing.assert_array_equal(got["ci_vacuous"], vacuous)
    best = int(np.flatnonzero(got["best"])[0])
    assert printed.splitlines()[0].endswith(", vacuous)" if vacuous[best] else "])")
    assert "every model's mean lies in its interval, simultaneously over all 5 models" in printed
    note = f"note: {int(vacuous.sum())} of 5 intervals are vacuous"
    assert (note in printed) == bool(vacuous.any())
    if options[1] == "10":
        assert vacuous.all()
        assert ("to tighten them, raise --budget (now 10 evaluations), lower --batch-size "
                "(now 2) or raise --delta (now 0.05)") in printed


def test_ragged_lines_and_excel_bom(tmp_path, capsys):
    path = tmp_path / "r.csv"
    path.write_text("score,id\n0.1,1\n0.2,2,3\n")
    msg = _error(["online", "--input", path, "--alpha", "0.1"], capsys)
    assert f"{path} is not a valid CSV table: line 3 has 3 fields but line 1 has 2" in msg
    path.write_bytes(b"\xef\xbb\xbfscore\n0.1\n0.2\n")  # Excel's UTF-8 byte-order mark
    assert _run(["online", "--input", path, "--alpha", "0.1", "--output", tmp_path / "o.csv"],
                capsys)[0] == 0
    path.write_bytes(b"score\n\xff\n")
    assert f"{path} is not UTF-8 text" in _error(["online", "--input", path, "--alpha", "0.1"],
                                                 capsys)


@pytest.mark.parametrize("share_missing", [0.05, 0.3])
def test_online_notes_rounds_that_no_set_can_cover(share_missing, tmp_path, capsys):
    rng = np.random.default_rng(4)
    n = 400
    label = np.where(rng.random(n) < share_missing, "", rng.choice(["a", "b", "c"], size=n))
    path = tmp_path / "c.csv"
    pd.DataFrame({"a": rng.random(n), "b": rng.random(n), "c": rng.random(n),
                  "y": label}).to_csv(path, index=False)
    _, _, err = _run(["online", "--input", path, "--alpha", "0.1", "--label-column", "y",
                      "--output", tmp_path / "o.csv"], capsys)
    missing = int(np.sum(label == ""))
    note = f"note: {missing} of {n} rounds have no true candidate"
    assert (note in err) == (missing > 0.1 * n)
    assert float(re.search(r"realized coverage (\S+)", err).group(1)) <= 1 - missing / n + 1e-4
