"""``autoeval compare``: the command line runs rautoeval_compare on the tables it reads."""

import numpy as np
import pandas as pd
import pytest

from sklearn_riskcontrol.autoeval import rautoeval_compare, rautoeval_difference_interval
from sklearn_riskcontrol.cli import main

NAMES = ["small", "large", "medium"]


@pytest.fixture
def files(tmp_path):
    rng = np.random.default_rng(0)

    def losses(m):
        a = rng.random(m) < 0.1
        b = np.where(rng.random(m) < 0.5, a, rng.random(m) < 0.3)
        return np.c_[a, b, rng.random(m) < 0.2].astype(float)

    def judged(L):
        flip = rng.random(L.shape[0]) < 0.1
        return np.where(flip[:, None], 1 - L, L)

    L, U = losses(300), losses(3000)
    tables = {"lab": L, "jl": judged(L), "unl": judged(U)}
    paths = {}
    for key, table in tables.items():
        paths[key] = tmp_path / f"{key}.csv"
        pd.DataFrame(table, columns=NAMES).to_csv(paths[key], index=False)
    return tables, paths


def test_compare_prints_the_pairs_of_rautoeval_compare(files, tmp_path, capsys):
    tables, paths = files
    out = tmp_path / "out.csv"
    assert main(["autoeval", "compare", "--labeled", str(paths["lab"]), "--judge-labeled",
                 str(paths["jl"]), "--unlabeled", str(paths["unl"]), "--output", str(out)]) == 0
    ref = rautoeval_compare(tables["lab"], tables["jl"], tables["unl"], delta=0.1)
    got = pd.read_csv(out)
    assert len(got) == 6  # every ordered pair
    for row in got.itertuples():
        i, j = NAMES.index(row.model_a), NAMES.index(row.model_b)
        assert row.pvalue == pytest.approx(ref.pvalues[i, j], rel=1e-12)
        assert row.certified == ref.better[i, j]
    err = capsys.readouterr().err
    assert "certified: risk(small) < risk(large)" in err
    assert "P(some certified pair is wrong) <= 0.1 (Holm over 6 ordered pairs)" in err


def test_compare_two_models_against_a_baseline_prints_the_interval(files, tmp_path, capsys):
    tables, paths = files
    two = tmp_path / "two.csv"
    pd.DataFrame(tables["lab"][:, :2], columns=NAMES[:2]).to_csv(two, index=False)
    out = tmp_path / "out.csv"
    assert main(["autoeval", "compare", "--labeled", str(two), "--method", "eval", "--baseline",
                 "large", "--margin", "-0.02", "--output", str(out)]) == 0
    got = pd.read_csv(out)
    ci = rautoeval_difference_interval(tables["lab"][:, :2], delta=0.1, method="eval")
    first = got[got.model_a == "small"].iloc[0]
    assert (first.diff_low, first.diff_high) == pytest.approx((ci.low, ci.high))
    err = capsys.readouterr().err
    assert "risk(small) - risk(large) in" in err and "risk(small) < risk(large) + 0.02" in err


def test_compare_errors_are_one_line(files, tmp_path, capsys):
    _, paths = files
    assert main(["autoeval", "compare", "--labeled", str(paths["lab"]), "--method", "eval",
                 "--baseline", "huge"]) == 2
    assert "--baseline 'huge' is not a model of --labeled" in capsys.readouterr().err
    one = tmp_path / "one.csv"
    pd.DataFrame({"small": [0.0, 1.0]}).to_csv(one, index=False)
    assert main(["autoeval", "compare", "--labeled", str(one), "--method", "eval"]) == 2
    assert "comparing needs at least 2" in capsys.readouterr().err
