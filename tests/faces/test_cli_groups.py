"""``autoeval certify/select/compare --groups COLUMN``: clusters as the draws on the CLI."""

import numpy as np
import pandas as pd
import pytest

from sklearn_riskcontrol.autoeval import (
    rautoeval_compare,
    rautoeval_confidence_interval,
    rautoeval_select,
    rautoeval_test,
)
from sklearn_riskcontrol.cli import main

NAMES = ["a", "b"]


@pytest.fixture
def files(tmp_path):
    rng = np.random.default_rng(0)

    def docs(n, start):
        sizes = rng.integers(3, 9, n)
        ids = np.repeat(np.arange(start, start + n), sizes)
        p = rng.beta(0.5, 3.0, n)[ids - start]
        a = (rng.random(ids.size) < p).astype(float)
        b = np.where(rng.random(ids.size) < 0.5, a, rng.random(ids.size) < 0.3).astype(float)
        L = np.c_[a, b]
        J = np.where((rng.random(ids.size) < 0.1)[:, None], 1 - L, L)
        return L, J, ids.astype(str)

    L, J, g = docs(60, 0)
    _, U, gu = docs(300, 1000)
    paths = {}
    for key, table, ids in (("lab", L, g), ("jl", J, g), ("unl", U, gu)):
        paths[key] = tmp_path / f"{key}.csv"
        frame = pd.DataFrame(table, columns=NAMES)
        frame["doc"] = ids
        frame.to_csv(paths[key], index=False)
    # certify's files: one model, loss and judge_loss columns
    paths["c_lab"] = tmp_path / "c_lab.csv"
    pd.DataFrame({"loss": L[:, 0], "judge_loss": J[:, 0], "doc": g}).to_csv(paths["c_lab"],
                                                                            index=False)
    paths["c_unl"] = tmp_path / "c_unl.csv"
    pd.DataFrame({"judge_loss": U[:, 0], "doc": gu}).to_csv(paths["c_unl"], index=False)
    return (L, J, U, g, gu), paths


def test_certify_groups_is_the_clustered_test_and_interval(files, tmp_path):
    (L, J, U, g, gu), paths = files
    out = tmp_path / "out.csv"
    assert main(["autoeval", "certify", "--labeled", str(paths["c_lab"]), "--unlabeled",
                 str(paths["c_unl"]), "--alpha", "0.3", "--groups", "doc", "--ci",
                 "--output", str(out)]) == 0
    row = pd.read_csv(out).iloc[0]
    kw = dict(groups_labeled=g, groups_unlabeled=gu)
    ref = rautoeval_test(L[:, 0], J[:, 0], U[:, 0], alpha=0.3, delta=0.1, **kw)
    ci = rautoeval_confidence_interval(L[:, 0], J[:, 0], U[:, 0], delta=0.1, **kw)
    assert row.pvalue == pytest.approx(ref.pvalue, rel=1e-12)
    assert (row.ci_low, row.ci_high) == pytest.approx((ci.low, ci.high), rel=1e-12)
    plain = tmp_path / "plain.csv"
    assert main(["autoeval", "certify", "--labeled", str(paths["c_lab"]), "--unlabeled",
                 str(paths["c_unl"]), "--alpha", "0.3", "--output", str(plain)]) == 0
    assert pd.read_csv(plain).iloc[0].pvalue != row.pvalue  # --groups changes the test


def test_select_and_compare_groups(files, tmp_path):
    (L, J, U, g, gu), paths = files
    common = ["--labeled", str(paths["lab"]), "--judge-labeled", str(paths["jl"]),
              "--unlabeled", str(paths["unl"]), "--groups", "doc"]
    out = tmp_path / "sel.csv"
    assert main(["autoeval", "select", *common, "--alpha", "0.3", "--output", str(out)]) == 0
    kw = dict(groups_labeled=g, groups_unlabeled=gu)
    ref = rautoeval_select(L.T, J.T, U.T, alpha=0.3, delta=0.1, **kw)
    got = pd.read_csv(out)
    assert list(got.candidate) == NAMES  # the --groups column is no candidate
    np.testing.assert_allclose(got.pvalue, ref.pvalues, rtol=1e-12)
    out = tmp_path / "cmp.csv"
    assert main(["autoeval", "compare", *common, "--shuffle", "3", "--output", str(out)]) == 0
    assert len(pd.read_csv(out)) == 2
    out2 = tmp_path / "cmp2.csv"
    assert main(["autoeval", "compare", *common, "--output", str(out2)]) == 0
    ref = rautoeval_compare(L, J, U, delta=0.1, **kw)
    np.testing.assert_allclose(pd.read_csv(out2).pvalue, [ref.pvalues[0, 1], ref.pvalues[1, 0]],
                               rtol=1e-12)


def test_groups_errors(files, tmp_path, capsys):
    _, paths = files
    assert main(["autoeval", "certify", "--labeled", str(paths["c_lab"]), "--alpha", "0.3",
                 "--method", "eval", "--groups", "nope"]) == 2
    assert "no column 'nope'" in capsys.readouterr().err
