"""``bandits`` subcommand: same result as the estimators, one-line errors, readable help."""

import re
import subprocess
import sys
import warnings

import numpy as np
import pandas as pd
import pytest

from sklearn_riskcontrol import RiskControlWarning, cli
from sklearn_riskcontrol.bandits import (
    PULSE,
    UCBE,
    UCBELRF,
    NaivePooling,
    make_score_matrix,
)
from sklearn_riskcontrol.evaluation import MatrixOracle, read_long_table
from sklearn_riskcontrol.cli import main


@pytest.fixture(scope="module")
def data():
    return make_score_matrix(n_models=30, n_examples=400, n_side_models=40, gap=0.05,
                             random_state=0)


@pytest.fixture()
def files(tmp_path, data):
    scores, side = tmp_path / "scores.csv", tmp_path / "side.csv"
    names = [f"model-{i}" for i in range(data.scores.shape[0])]
    pd.DataFrame(data.scores.astype(int), index=names).to_csv(scores)
    pd.DataFrame(data.side_scores.astype(int)).to_csv(side, index=False)
    return scores, side, names


def _one_line_error(capsys, *fragments):
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error:"), err
    for fragment in fragments:
        assert fragment in err[0], err[0]


def test_pulse_matches_the_estimator(files, data, tmp_path, capsys):
    scores, side, names = files
    out = tmp_path / "out.csv"
    args = ["bandits", "--scores", str(scores), "--side-scores", str(side), "--budget",
            "0.25", "--batch-size", "16", "--refit-every", "20", "--rank", "4", "--delta",
            "0.1", "--random-state", "3", "--output", str(out)]
    assert main(args) == 0
    ref = PULSE(budget=0.25, batch_size=16, refit_every=20, rank=4, random_state=3)
    ref.fit(data.scores, side_scores=data.side_scores)
    got = pd.read_csv(out)
    assert list(got["model"]) == names
    np.testing.assert_allclose(got["estimate"], ref.means_)
    np.testing.assert_array_equal(got["evaluations"], ref.n_evaluations_per_model_)
    np.testing.assert_allclose(got[["ci_low", "ci_high"]], ref.confidence_intervals(0.1))
    assert np.flatnonzero(got["best"]).tolist() == [ref.best_index_]
    printed = capsys.readouterr().out
    best = ref.best_index_
    assert f"best model: {names[best]} (row {best + 1} of {scores})" in printed  # 1-based row
    total = data.scores.size
    assert f"evaluations used: {ref.n_evaluations_} of {total} available cells" in printed
    assert "with probability >= 0.9" in printed


def test_ucbe_with_missing_cells_and_no_names(tmp_path, data, capsys):
    S = data.scores.copy()
    S[np.random.default_rng(1).random(S.shape) < 0.2] = np.nan  # empty cells: not available
    path, out = tmp_path / "holes.csv", tmp_path / "out.csv"
    pd.DataFrame(S).to_csv(path, index=False, header=False)
    assert main(["bandits", "--scores", str(path), "--no-header", "--strategy", "ucbe",
                 "--budget", "1500", "--output", str(out)]) == 0
    with pytest.warns(RiskControlWarning, match="scored on different examples"):
        ref = UCBE(budget=1500, random_state=0).fit(MatrixOracle(S, missing="exclude"))
    got = pd.read_csv(out)
    assert list(got["model"]) == list(range(1, S.shape[0] + 1))  # named by 1-based data row
    np.testing.assert_allclose(got["estimate"], ref.means_)
    np.testing.assert_array_equal(got["available"], np.sum(~np.isnan(S), axis=1))
    with pytest.warns(RiskControlWarning, match="vacuous"):  # 6 models never scored
        np.testing.assert_allclose(got[["ci_low", "ci_high"]], ref.confidence_intervals(0.05))
    # no example has all 30 models: nothing to restrict to, so no --common-examples offered
    err = capsys.readouterr().err
    assert "warning: The models were scored on different examples (from " in err
    assert "none is common to all" in err and "--common-examples" not in err


def test_ucbe_prints_its_intervals(files, capsys):
    scores, *_ = files
    assert main(["bandits", "--scores", str(scores), "--strategy", "ucbe", "--budget", "0.1",
                 "--delta", "0.1"]) == 0
    ref = UCBE(budget=0.1, random_state=0).fit(pd.read_csv(scores, index_col=0).to_numpy())
    with pytest.warns(RiskControlWarning, match="vacuous"):  # models never scored: said below
        lo, hi = ref.confidence_intervals(0.1)[ref.best_index_]
    printed = capsys.readouterr().out
    assert f"(a realization; 90% interval [{lo:.4f}, {hi:.4f}])" in printed.splitlines()[0]
    assert ("guarantee: with probability >= 0.9, every model's mean lies in its interval, "
            "simultaneously over all 30 models") in printed
    assert "only PULSE" not in printed and "no confidence interval" not in printed
    assert "note: 11 of 30 intervals are vacuous" in printed
    assert main(["bandits", "--scores", str(scores), "--strategy", "ucbe-lrf"]) == 0
    assert ("no confidence interval: --strategy ucbe-lrf gives none (pulse and ucbe do)"
            in capsys.readouterr().out)


def _long_csv(path, rows):
    pd.DataFrame(rows, columns=["model", "example", "score"]).to_csv(path, index=False)
    return str(path)


def test_models_scored_on_different_examples(tmp_path, capsys):
    # 'a' was run on one example only, where it scored 0.9; 'b' scored 1.0 there and 0 on another
    path = _long_csv(tmp_path / "runs.csv", [("a", "q1", 0.9), ("b", "q1", 1.0), ("b", "q2", 0.0)])
    argv = ["bandits", "--scores", path, "--budget", "1.0", "--strategy", "uniform"]
    assert main(argv) == 0
    out, err = capsys.readouterr()
    assert out.startswith("best model: a ")  # 0.9 on q1 against 0.5 on q1 and q2
    assert err == ("warning: The models were scored on different examples (model 'a' has 1, "
                   "model 'b' has 2; 1 is common to all): each model's mean is over its own "
                   "examples, so the means, and the best model, compare different sets of "
                   "examples. Pass --common-examples to compare them on the 1 example they all "
                   "have.\n")
    assert main(argv + ["--common-examples"]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("best model: b ") and err == ""  # 1.0 against 0.9, both on q1
    assert ("compared on the examples every model has: 1 of 2 (1 dropped by --common-examples)"
            in out)
    # no example in common: nothing to restrict to
    path = _long_csv(tmp_path / "apart.csv", [("a", "q1", 1), ("b", "q2", 0)])
    assert main(["bandits", "--scores", path, "--common-examples"]) == 2
    _one_line_error(capsys, "--common-examples", "no example of", "apart.csv")


def test_python_oracle_warns_about_different_example_sets():
    t = read_long_table(pd.DataFrame({"model": ["a", "b", "b"], "example": ["q1", "q1", "q2"],
                                      "score": [0.9, 1.0, 0.0]}))
    with pytest.warns(RiskControlWarning, match=r"\(model 'a' has 1, model 'b' has 2; 1 is "
                                                r"common to all\).*drop the columns with a NaN"):
        MatrixOracle.from_long(t, missing="exclude")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the same examples for every model: nothing to say
        MatrixOracle(np.array([[1.0, np.nan], [0.0, np.nan]]), missing="exclude")


def test_fractional_scores_and_ucbe_lrf(tmp_path, capsys):
    rng = np.random.default_rng(0)
    S = np.round(rng.beta(2, 3, size=(12, 150)), 3)
    path = tmp_path / "frac.csv"
    pd.DataFrame(S).to_csv(path, index=False)
    assert main(["bandits", "--scores", str(path), "--budget", "0.5", "--batch-size",
                 "8"]) == 0  # fractional scores: PULSE fits fractional targets
    ref = PULSE(budget=0.5, batch_size=8, fractional_scores=True, random_state=0).fit(S)
    assert f"(row {ref.best_index_ + 1} of {path})" in capsys.readouterr().out
    assert main(["bandits", "--scores", str(path), "--strategy", "ucbe-lrf", "--budget",
                 "0.3", "--rank", "2"]) == 0
    ref = UCBELRF(budget=0.3, rank=2, random_state=0).fit(S)
    assert f"(row {ref.best_index_ + 1} of {path})" in capsys.readouterr().out


def test_verbose_prints_progress(files, capsys):
    scores, *_ = files
    assert main(["bandits", "--scores", str(scores), "--strategy", "uniform", "-v"]) == 0
    progress = [ln for ln in capsys.readouterr().out.splitlines()
                if ln.startswith("[UniformSampling]")]
    assert 5 <= len(progress) <= 15


@pytest.mark.parametrize("extra, fragments", [
    (["--budget", "100000"], ["budget", "exceeds"]),
    (["--budget", "lots"], ["--budget"]),
    (["--strategy", "ucbe", "--refit-every", "5"], ["--refit-every", "ucbe"]),
    (["--strategy", "uniform", "--delta", "0.1"], ["--delta", "pulse"]),
    (["--delta", "2"], ["delta"]),
    (["--batch-size", "0"], ["--batch-size"]),
])
def test_bad_options(files, capsys, extra, fragments):
    scores, *_ = files
    assert main(["bandits", "--scores", str(scores)] + extra) == 2
    _one_line_error(capsys, *fragments)


def test_bad_files(files, tmp_path, capsys):
    scores, side, _ = files
    assert main(["bandits", "--scores", str(tmp_path / "missing.csv")]) == 2
    _one_line_error(capsys, "missing.csv")
    bad = tmp_path / "bad.csv"
    pd.DataFrame({"name": ["a", "b"], "q1": [1, "yes"], "q2": [0, 1]}).to_csv(bad, index=False)
    assert main(["bandits", "--scores", str(bad)]) == 2
    _one_line_error(capsys, "'b'", "'q1'", "'yes'")
    wide = tmp_path / "wide.csv"
    pd.DataFrame({"q1": [1.0, 3.0], "q2": [0.0, 1.0]}).to_csv(wide, index=False)
    assert main(["bandits", "--scores", str(wide)]) == 2
    _one_line_error(capsys, "wide.csv", "3.0")
    short_side = tmp_path / "short_side.csv"
    pd.read_csv(side).iloc[:, :10].to_csv(short_side, index=False)
    assert main(["bandits", "--scores", str(scores), "--side-scores", str(short_side)]) == 2
    _one_line_error(capsys, "--side-scores", "same example columns")
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    assert main(["bandits", "--scores", str(empty)]) == 2
    _one_line_error(capsys)


def test_help_states_the_defaults_the_code_runs():
    help_text = " ".join(cli._build_parser()._subparsers._group_actions[0]
                         .choices["bandits"].format_help().split())

    def default(flag):
        return re.search(rf"{flag} [A-Z_]+ .*?\(default: ([^;)]+)", help_text).group(1)

    assert default("--refit-every") == "auto"
    for cls in (PULSE, UCBELRF, NaivePooling):
        assert cls().refit_every == "auto"
    ranks = dict(pair.split(" for ")[::-1] for pair in default("--rank").split(", "))
    assert ranks == {"pulse": str(PULSE().rank), "ucbe-lrf": str(UCBELRF().rank),
                     "naive": str(NaivePooling().rank)}
    assert "1000" not in help_text
    # UCB-E's intervals are described, never denied
    assert "no confidence interval" not in help_text
    assert "PULSE (default) and UCB-E also give anytime-valid confidence intervals" in help_text
    assert "--delta DELTA pulse/ucbe: failure probability" in help_text
    assert "--common-examples compare the models on the examples every model has" in help_text


def test_help_reads_well():
    result = subprocess.run(
        [sys.executable, "-m", "sklearn_riskcontrol", "bandits", "--help"],
        capture_output=True, text=True, check=False,
    )
    assert result.returncode == 0
    out = result.stdout
    assert "Best-model identification under an evaluation budget" in out
    assert "examples:" in out and "--side-scores history.csv" in out
    for flag in ("--strategy", "--budget", "--batch-size", "--refit-every", "--rank", "--delta",
                 "--random-state", "--verbose", "--output"):
        assert flag in out
    top = subprocess.run([sys.executable, "-m", "sklearn_riskcontrol", "--help"],
                         capture_output=True, text=True, check=False).stdout
    assert "bandits" in top
