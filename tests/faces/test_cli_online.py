"""Command line `online`: the same thresholds as the array layer, candidate matrices, clear
errors."""

import io
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from sklearn_riskcontrol.cli import main
from sklearn_riskcontrol.online import make_learner, simulate_thresholds, average_set_size


def read_exact_csv(source):
    """``pd.read_csv`` that reads every float back bit for bit (pandas < 3 needs asking)."""
    return pd.read_csv(source, float_precision="round_trip")


@pytest.fixture()
def stream(tmp_path):
    rng = np.random.default_rng(0)
    s = rng.normal(size=1200)
    path = tmp_path / "rounds.csv"
    pd.DataFrame({"id": np.arange(1200), "score": s}).to_csv(path, index=False)
    return path, s


def _run(args, capsys):
    code = main(args)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.parametrize(
    "extra, options",
    [
        ([], {}),  # anytime schedule
        (["--horizon", "1200"], {"horizon": 1200}),  # the paper's algorithm, delta = 2 / T
        (["--horizon", "5000", "--delta", "0.05"], {"horizon": 5000, "delta": 0.05}),
        (["--strategy", "greedy"], {"strategy": "greedy"}),
        (["--strategy", "aci", "--learning-rate", "0.01"], {"strategy": "aci", "learning_rate": 0.01}),
        (
            ["--strategy", "dlr", "--initial-threshold", "-3"],
            {"strategy": "dlr", "initial_threshold": -3.0},
        ),
        (["--strategy", "etc", "--horizon", "1200"], {"strategy": "etc", "horizon": 1200}),
        (
            ["--strategy", "conservative_etc", "--n-explore", "300"],
            {"strategy": "conservative_etc", "n_explore": 300},
        ),
    ],
)
def test_thresholds_match_simulate_thresholds(stream, tmp_path, capsys, extra, options):
    path, s = stream
    out = tmp_path / "out.csv"
    code, _, err = _run(
        ["online", "--input", str(path), "--alpha", "0.1", "--output", str(out), *extra], capsys
    )
    assert code == 0
    got = read_exact_csv(out)
    expected = simulate_thresholds(s, 0.1, **options)
    np.testing.assert_array_equal(got["threshold"].to_numpy(), expected)  # exact, incl. -inf
    np.testing.assert_array_equal(got["covered"].to_numpy(), s >= expected)
    assert list(got["id"]) == list(range(1200))  # input columns are kept, in order
    first = err.splitlines()[0]
    assert f"realized coverage {np.mean(s >= expected):.4f} over 1200 rounds" in first
    assert "target 0.9," in first
    strategy = options.get("strategy", "sps")
    assert f"strategy {strategy}" in first
    assert ("guarantee (i.i.d. rounds)" in err) == (strategy == "sps")
    assert ("no guarantee claimed" in err) == (strategy != "sps")


def test_guarantee_line_states_the_overall_delta(stream, capsys):
    path, _ = stream
    code, out, err = _run(["online", "--input", str(path), "--alpha", "0.2", "--horizon", "2000"],
                          capsys)
    assert code == 0
    assert "with probability >= 0.999, at every round the published set has coverage >= 0.8" in err
    assert read_exact_csv(io.StringIO(out)).shape == (1200, 4)  # CSV on standard output
    code, _, err = _run(["online", "--input", str(path), "--alpha", "0.2"], capsys)
    assert "with probability >= 0.99," in err  # anytime schedule, default delta = 0.01


def test_score_column_option(tmp_path, capsys):
    s = np.random.default_rng(1).uniform(size=300)
    path, out = tmp_path / "in.csv", tmp_path / "out.csv"
    pd.DataFrame({"similarity": s}).to_csv(path, index=False)
    args = ["online", "--input", str(path), "--alpha", "0.1", "--score-column", "similarity",
            "--output", str(out)]
    assert main(args) == 0
    np.testing.assert_array_equal(read_exact_csv(out)["threshold"], simulate_thresholds(s, 0.1))


@pytest.fixture()
def candidates(tmp_path):
    """Retrieval-like stream: 8 candidate columns, the true one named in `relevant`."""
    rng = np.random.default_rng(2)
    n, k = 1500, 8
    S = rng.normal(size=(n, k))
    y = rng.integers(k, size=n)
    S[np.arange(n), y] += 1.5  # the relevant document tends to score higher
    names = [f"doc{j}" for j in range(k)]
    frame = pd.DataFrame(S, columns=names).assign(relevant=[names[j] for j in y])
    path = tmp_path / "candidates.csv"
    frame.to_csv(path, index=False)
    return path, S, y, names


def test_candidate_matrix_mode(candidates, tmp_path, capsys):
    path, S, y, names = candidates
    out = tmp_path / "out.csv"
    code, _, err = _run(["online", "--input", str(path), "--alpha", "0.1", "--label-column",
                         "relevant", "--horizon", "1500", "--output", str(out)], capsys)
    assert code == 0
    got = read_exact_csv(out)
    s = S[np.arange(len(y)), y]
    tau = simulate_thresholds(s, 0.1, horizon=1500)
    np.testing.assert_array_equal(got["threshold"], tau)
    np.testing.assert_array_equal(got["covered"], s >= tau)
    np.testing.assert_array_equal(got["set_size"], np.sum(S >= tau[:, None], axis=1))
    assert f"average set size {average_set_size(S, tau):.3f} of 8 candidates" in err
    assert list(got.columns) == [*names, "relevant", "threshold", "covered", "set_size"]


def test_candidate_columns_integer_labels_and_missing_truth(tmp_path, capsys):
    rng = np.random.default_rng(3)
    n, k = 400, 5
    S = rng.uniform(size=(n, k))
    y = rng.integers(k, size=n).astype(float)
    y[::10] = np.nan  # the true candidate was not retrieved at all on these rounds
    frame = pd.DataFrame(S, columns=[str(j) for j in range(k)]).assign(query=np.arange(n), y=y)
    path, out = tmp_path / "in.csv", tmp_path / "out.csv"
    frame.to_csv(path, index=False)
    args = ["online", "--input", str(path), "--alpha", "0.2", "--label-column", "y",
            "--candidate-columns", "0,1,2,3,4", "--output", str(out)]
    assert main(args) == 0
    got = read_exact_csv(out)
    missing = np.isnan(y)
    s = np.where(missing, -np.inf, S[np.arange(n), np.nan_to_num(y).astype(int)])
    tau = make_learner("sps", 0.2).replay(s)
    np.testing.assert_array_equal(got["threshold"], tau)
    assert not got["covered"][missing].any()  # never covered, even with the full set
    np.testing.assert_array_equal(got["covered"][~missing], (s >= tau)[~missing])
    assert got["set_size"].iloc[0] == k  # round 1: full set


def _one_line_error(args, capsys):
    code = main(args)
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2
    assert len(err) == 1 and err[0].startswith("error:"), err
    return err[0]


def test_bad_input_gives_one_line_error(stream, candidates, tmp_path, capsys):
    path, _ = stream
    base = ["online", "--input", str(path)]
    assert "alpha" in _one_line_error(base + ["--alpha", "1.5"], capsys)
    assert "alpha" in _one_line_error(base + ["--alpha", "0"], capsys)
    assert "no column 'loss'" in _one_line_error(
        base + ["--alpha", "0.1", "--score-column", "loss"], capsys
    )
    assert "horizon" in _one_line_error(base + ["--alpha", "0.1", "--horizon", "100"], capsys)
    assert "horizon" in _one_line_error(base + ["--alpha", "0.1", "--horizon", "0"], capsys)
    assert "delta" in _one_line_error(base + ["--alpha", "0.1", "--delta", "2"], capsys)
    assert "n_explore" in _one_line_error(base + ["--alpha", "0.1", "--strategy", "etc"], capsys)
    assert "learning_rate" in _one_line_error(
        base + ["--alpha", "0.1", "--strategy", "dlr", "--learning-rate", "-1"], capsys
    )
    missing = ["online", "--input", str(tmp_path / "missing.csv"), "--alpha", "0.1"]
    _one_line_error(missing, capsys)

    bad = tmp_path / "bad.csv"
    pd.DataFrame({"score": ["0.5", "abc", "0.1"]}).to_csv(bad, index=False)
    msg = _one_line_error(["online", "--input", str(bad), "--alpha", "0.1"], capsys)
    assert "'score'" in msg and "row 2 (line 3 of the file" in msg
    assert "'abc' is not a number" in msg
    pd.DataFrame({"score": [0.5, np.nan, 0.1]}).to_csv(bad, index=False)
    assert "row 2 (line 3 of the file, counting the header) is empty" in _one_line_error(
        ["online", "--input", str(bad), "--alpha", "0.1"], capsys)
    pd.DataFrame({"score": [0.5, np.inf]}).to_csv(bad, index=False)
    assert "finite" in _one_line_error(["online", "--input", str(bad), "--alpha", "0.1"], capsys)
    pd.DataFrame({"score": []}).to_csv(bad, index=False)
    assert "has a header but no data rows" in _one_line_error(
        ["online", "--input", str(bad), "--alpha", "0.1"], capsys)
    bad.write_text("")
    assert "bad.csv is empty (0 bytes)" in _one_line_error(
        ["online", "--input", str(bad), "--alpha", "0.1"], capsys)

    cpath, *_ = candidates
    frame = read_exact_csv(cpath)
    frame.loc[3, "relevant"] = "doc99"
    frame.to_csv(bad, index=False)
    msg = _one_line_error(
        ["online", "--input", str(bad), "--alpha", "0.1", "--label-column", "relevant"], capsys
    )
    assert "column 'relevant', row 4 (line 5 of the file" in msg
    assert "'doc99' is not a candidate column" in msg
    msg = _one_line_error(
        ["online", "--input", str(cpath), "--alpha", "0.1", "--label-column", "answer"], capsys
    )
    assert "no column 'answer'" in msg
    msg = _one_line_error(["online", "--input", str(cpath), "--alpha", "0.1", "--label-column",
                           "relevant", "--candidate-columns", "doc0,title"], capsys)
    assert "no column 'title'" in msg


def test_module_entry_point_runs_online(stream):
    path, s = stream
    result = subprocess.run(
        [sys.executable, "-m", "sklearn_riskcontrol", "online", "--input", str(path), "--alpha",
         "0.1", "--horizon", "1200"],
        capture_output=True, text=True,
    )
    assert result.returncode == 0
    got = read_exact_csv(io.StringIO(result.stdout))
    np.testing.assert_array_equal(got["threshold"], simulate_thresholds(s, 0.1, horizon=1200))
    assert "over 1200 rounds" in result.stderr


def test_demo_online_section_quick(capsys):
    from sklearn_riskcontrol.demo.online import online_section

    online_section(seed=0, quick=True)
    out = capsys.readouterr().out
    lines = out.splitlines()
    sps_row = next(line for line in lines if line.strip().startswith("SPS "))
    assert "rounds with tau > tau*: 0" in sps_row  # SPS never exceeds tau* (w.p. >= 1 - 2/T)
    assert "each set's coverage probability is >= 0.9" in out and "oracle tau*" in out
    assert any(line.strip().startswith("greedy baseline") for line in lines)
