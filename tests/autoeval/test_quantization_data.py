"""R-AutoEval+ on the LLM-quantization loss tables (paper Fig. 1), reduced version.

The tables live in the team's shared folder (``../shared/data/quantization_triviaqa`` next to
the repository); they have no clear licence and are not shipped. Every test here is skipped when
they are absent. The full 500-repetition study is ``benchmarks/autoeval_quantization.py``.
"""

import warnings
from pathlib import Path

import numpy as np
import pytest

from sklearn_riskcontrol import RiskControlWarning
from sklearn_riskcontrol.autoeval import rautoeval_select, rautoeval_test

DATA = Path(__file__).resolve().parents[3] / "shared" / "data" / "quantization_triviaqa"
if not (DATA / "triviaqa_losses.npz").exists():
    pytest.skip(f"quantization tables not found in {DATA}", allow_module_level=True)

N_TEST, N_LAB, N_UNL = 960, 150, 750  # reference protocol: n = 150, r = 5
JUDGES = ("bf16", "mx6", "mx4")


@pytest.fixture(scope="module")
def tables():
    z = np.load(DATA / "triviaqa_losses.npz")
    return {k: z[k] for k in ("loss_human", "loss_judge_bf16", "loss_judge_mx6",
                              "loss_judge_mx4", "model_size_gb", "avg_bitwidth")}


@pytest.fixture(scope="module")
def perms():
    """The reference's splits: np.random.seed(10) once, then the k-th permutation."""
    state = np.random.get_state()
    try:
        np.random.seed(10)
        return [np.random.permutation(9960) for _ in range(30)]
    finally:
        np.random.set_state(state)


def test_layout(tables):
    H = tables["loss_human"]
    assert H.shape == (48, 9960)
    for q in JUDGES:
        J = tables[f"loss_judge_{q}"]
        assert J.shape == H.shape and np.all((J >= 0) & (J <= 1))
    assert np.all((H >= 0) & (H <= 1))
    assert np.all(np.diff(tables["avg_bitwidth"]) < 0)  # FST order: decreasing bitwidth
    assert np.all(np.diff(tables["model_size_gb"]) < 0)


def select(tables, perm, judge, method, betting="wsr"):
    H, J = tables["loss_human"], tables[f"loss_judge_{judge}"]
    lab = perm[N_TEST : N_TEST + N_LAB]
    unl = perm[N_TEST + N_LAB : N_TEST + N_LAB + N_UNL]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RiskControlWarning)
        return rautoeval_select(H[:, lab], J[:, lab], None if method == "eval" else J[:, unl],
                                alpha=0.1, delta=0.1, cost=tables["model_size_gb"],
                                method=method, betting=betting)


def mean_size(tables, perms, judge, method):
    sizes = tables["model_size_gb"]
    sel = [select(tables, p, judge, method).selected for p in perms]
    assert all(s is not None for s in sel)  # the 12-bit model is always certifiable here
    return float(np.mean(sizes[sel]))


def test_good_judges_select_smaller_models_than_r_eval(tables, perms):
    """Paper Fig. 1 (30 of the 500 repetitions; the full study is in benchmarks/)."""
    r_eval = mean_size(tables, perms, "bf16", "eval")
    for judge in ("bf16", "mx6"):
        plus = mean_size(tables, perms, judge, "plus")
        assert plus < r_eval
        assert plus <= mean_size(tables, perms, judge, "autoeval") + 0.02


def test_useless_judge_falls_back_to_r_eval(tables, perms):
    """MX4 judge (losses ~ 0): R-AutoEval+ stays within 0.1 GB of R-Eval on average."""
    r_eval = mean_size(tables, perms, "mx4", "eval")
    assert abs(mean_size(tables, perms, "mx4", "plus") - r_eval) < 0.1


def test_selected_models_have_true_risk_below_alpha(tables, perms):
    true_risk = tables["loss_human"].mean(axis=1)
    for p in perms[:10]:
        for judge in JUDGES:
            for method in ("eval", "autoeval", "plus"):
                res = select(tables, p, judge, method)
                # FWER <= delta: rare violations allowed, none expected in 10 draws
                assert np.all(true_risk[res.certified] <= 0.1 + 0.01)


def test_fst_is_the_prefix_of_individual_tests(tables, perms):
    """FST certifies exactly the prefix of candidates whose own test rejects at delta."""
    H, J = tables["loss_human"], tables["loss_judge_bf16"]
    p = perms[0]
    lab, unl = p[N_TEST : N_TEST + N_LAB], p[N_TEST + N_LAB : N_TEST + N_LAB + N_UNL]
    res = select(tables, p, "bf16", "plus")
    single = []
    for k in range(48):
        single.append(rautoeval_test(H[k, lab], J[k, lab], J[k, unl], alpha=0.1, delta=0.1,
                                     betting="wsr").certified)
        if not single[-1]:
            break
    n_certified = next((i for i, ok in enumerate(single) if not ok), len(single))
    assert res.certified.sum() == n_certified
    assert res.tested.sum() == len(single)
