"""Several judges on the command line: ``autoeval certify --judge-column a,b`` and ``autoeval
compare`` with one ``--judge-labeled`` / ``--unlabeled`` file per judge (or judge columns of a
long table) run the array functions on (n, k) / (n, 2, k) judge tables."""

import numpy as np
import pandas as pd
import pytest

from sklearn_riskcontrol.autoeval import (
    rautoeval_confidence_interval,
    rautoeval_difference_interval,
    rautoeval_test,
)
from sklearn_riskcontrol.cli import main


def _judged(rng, x, acc):
    wrong = rng.random(x.shape[0]) > acc
    return np.where(wrong if x.ndim == 1 else wrong[:, None], 1 - x, x)


def test_certify_with_several_judge_columns(tmp_path, capsys):
    rng = np.random.default_rng(0)
    h, hu = (rng.random(150) < 0.25).astype(float), (rng.random(1500) < 0.25).astype(float)
    G = np.c_[_judged(rng, h, 0.75), _judged(rng, h, 0.8)]
    U = np.c_[_judged(rng, hu, 0.75), _judged(rng, hu, 0.8)]
    lab, unl, out = tmp_path / "lab.csv", tmp_path / "unl.csv", tmp_path / "out.csv"
    pd.DataFrame({"loss": h, "ja": G[:, 0], "jb": G[:, 1]}).to_csv(lab, index=False)
    pd.DataFrame({"ja": U[:, 0], "jb": U[:, 1]}).to_csv(unl, index=False)
    res = rautoeval_test(h, G, U, alpha=0.4, delta=0.1)
    ci = rautoeval_confidence_interval(h, G, U, delta=0.1)
    for flags in (["--judge-column", "ja,jb"], ["--judge-column", "ja", "--judge-column", "jb"]):
        assert main(["autoeval", "certify", "--labeled", str(lab), "--unlabeled", str(unl),
                     "--alpha", "0.4", "--ci", "--output", str(out), *flags]) == 0
        row = pd.read_csv(out).iloc[0]
        assert row.pvalue == pytest.approx(res.pvalue, rel=1e-12)
        assert (row.ci_low, row.ci_high) == pytest.approx((ci.low, ci.high), rel=1e-12)
        assert row.n_unlabeled == 1500
    capsys.readouterr()
    assert main(["autoeval", "certify", "--labeled", str(lab), "--unlabeled", str(unl),
                 "--alpha", "0.4", "--judge-column", "ja,jc"]) == 2
    assert "jc" in capsys.readouterr().err


def test_compare_with_one_file_per_judge_and_long_judge_columns(tmp_path, capsys):
    rng = np.random.default_rng(1)
    L = (rng.random((150, 2)) < [0.2, 0.3]).astype(float)
    Lu = (rng.random((1500, 2)) < [0.2, 0.3]).astype(float)
    G = np.stack([_judged(rng, L, 0.8), _judged(rng, L, 0.75)], axis=2)
    U = np.stack([_judged(rng, Lu, 0.8), _judged(rng, Lu, 0.75)], axis=2)
    ci = rautoeval_difference_interval(L, G, U, delta=0.1)
    paths = {}
    for key, table in {"lab": L, "g0": G[:, :, 0], "g1": G[:, :, 1], "u0": U[:, :, 0],
                       "u1": U[:, :, 1]}.items():
        paths[key] = str(tmp_path / f"{key}.csv")
        pd.DataFrame(table, columns=["A", "B"]).to_csv(paths[key], index=False)
    out = tmp_path / "out.csv"
    assert main(["autoeval", "compare", "--labeled", paths["lab"], "--judge-labeled",
                 paths["g0"], "--judge-labeled", paths["g1"], "--unlabeled", paths["u0"],
                 "--unlabeled", paths["u1"], "--output", str(out)]) == 0
    wide = pd.read_csv(out)
    assert (wide.diff_low[0], wide.diff_high[0]) == pytest.approx((ci.low, ci.high), rel=1e-12)
    rows = []
    for m, name in enumerate("AB"):
        rows += [{"model": name, "example": f"l{i}", "loss": L[i, m], "ja": G[i, m, 0],
                  "jb": G[i, m, 1]}
                 for i in range(len(L))]
        rows += [{"model": name, "example": f"u{i}", "loss": np.nan, "ja": U[i, m, 0],
                  "jb": U[i, m, 1]}
                 for i in range(len(Lu))]
    long = tmp_path / "long.csv"
    pd.DataFrame(rows).to_csv(long, index=False)
    assert main(["autoeval", "compare", "--labeled", str(long), "--judge-column", "ja,jb",
                 "--output", str(out)]) == 0
    pd.testing.assert_frame_equal(pd.read_csv(out), wide)
    capsys.readouterr()
    assert main(["autoeval", "select", "--labeled", paths["lab"], "--judge-labeled",
                 paths["g0"], "--judge-labeled", paths["g1"], "--unlabeled", paths["u0"],
                 "--unlabeled", paths["u1"], "--alpha", "0.3"]) == 2
    assert "select takes one judge" in capsys.readouterr().err
    assert main(["autoeval", "compare", "--labeled", paths["lab"], "--judge-labeled",
                 paths["g0"], "--judge-labeled", paths["g1"], "--unlabeled", paths["u0"]]) == 2
    assert "one of each per judge" in capsys.readouterr().err
