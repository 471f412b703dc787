"""Confidence intervals for the risk with an auto-evaluator: the plug-in construction.

Agreement of the vectorised e-process with a plain loop over rounds written from the definition
(user guide, "Confidence intervals"; the loop is ``tests/_rautoeval_reference.py``), of the
returned bounds with a fine-grid inversion of that loop, Monte-Carlo coverage (reduced here,
>= 1000 repetitions per case under ``slow``), widths against the paper's construction, and the
empty-interval warning.
"""

import warnings

import numpy as np
import pytest

from _monte_carlo import three_se
from _rautoeval_reference import CAP, brute_rejects, brute_rounds
from sklearn_riskcontrol import RiskControlWarning
from sklearn_riskcontrol.autoeval import rautoeval_confidence_interval


def toy(rng, n, r=3, risk=0.3, noise=0.1):
    h = rng.beta(2, 2 / risk - 2, n)
    g = np.clip(h + rng.normal(0, noise, n), 0, 1)
    u = np.clip(rng.beta(2, 2 / risk - 2, n * r) + rng.normal(0, noise, n * r), 0, 1)
    return h, g, u


def test_rounds_match_the_loop_definition():
    from sklearn_riskcontrol.autoeval._arrays import _plugin_rounds

    rng = np.random.default_rng(0)
    h, g, u = toy(rng, 300)  # rounds >= 128 hold rho between checkpoints
    d = u.reshape(300, 3).mean(axis=1) - g
    grid = np.linspace(0, 1, 11)
    for side, level in (("upper", 0.05), ("lower", 0.02)):
        x, edge, s, rho_t = _plugin_rounds(h, d, (-1.0, 1.0), grid, side, level, h.size)
        rhos, sizes = brute_rounds(h, d, grid, side, level)
        np.testing.assert_array_equal(rho_t, rhos)
        np.testing.assert_allclose(s, sizes, rtol=1e-12)
        sign = 1 if side == "upper" else -1
        np.testing.assert_allclose(sign * x, h + rhos * d, atol=1e-15)
        np.testing.assert_allclose(edge, 1 + rhos if side == "upper" else rhos, atol=1e-15)
    assert rho_t[0] == 0  # the pseudo-observation favours labels only before any data


@pytest.mark.parametrize("method", ["plus", "eval", "autoeval"])
def test_bounds_match_a_fine_grid_inversion_of_the_loop(method):
    rng = np.random.default_rng(1)
    n = 30
    h, g, u = toy(rng, n)
    grid = {"plus": np.linspace(0, 1, 6), "eval": np.zeros(1), "autoeval": np.ones(1)}[method]
    d = u.reshape(n, 3).mean(axis=1) - g
    ci = rautoeval_confidence_interval(h, g, u, delta=0.1, method=method, rho_grid=(
        grid if method == "plus" else None), tol=1e-9)
    alphas = np.linspace(0, 1, 401)
    step = alphas[1] - alphas[0]
    up = np.array([brute_rejects(h, d, grid, "upper", 0.05, a) for a in alphas])
    lo = np.array([brute_rejects(h, d, grid, "lower", 0.05, a) for a in alphas])
    # rejection is monotone in alpha: the upper test rejects an upper set, the lower a lower set
    assert np.all(np.diff(up.astype(int)) >= 0) and np.all(np.diff(lo.astype(int)) <= 0)
    high_grid = alphas[np.argmax(up)]
    low_grid = alphas[np.flatnonzero(lo)[-1]] if lo.any() else 0.0
    assert high_grid - step <= ci.high <= high_grid + 1e-9
    assert low_grid - 1e-9 <= ci.low <= low_grid + step
    assert ci.construction == "plugin"


def test_factors_are_monotone_in_alpha():
    from sklearn_riskcontrol.autoeval._arrays import _plugin_log_wealth

    rng = np.random.default_rng(2)
    rho = rng.random(200)
    x = rng.random(200) * (1 + 2 * rho) - rho              # anywhere in [-rho, 1 + rho]
    s = rng.random(200) * 5
    walls = [_plugin_log_wealth(x, 1 + rho, s, a) for a in np.linspace(0, 1, 101)]
    assert np.all(np.diff(np.array(walls), axis=0) >= -1e-12)
    assert np.all(np.isfinite(walls))  # factors >= 1 - CAP > 0


# ------------------------------------------------------------------------ Monte Carlo
def draw(case, rng):
    """Benchmark cases (benchmarks/autoeval_ci_power.py): (h, g, u, risk)."""
    def flip(loss):
        return np.where(rng.random(loss.size) < 0.1, 1.0 - loss, loss)

    if case in ("binary-good", "binary-useless", "rare"):
        n, N, risk = (100, 1000, 0.03) if case == "rare" else (200, 2000, 0.2)
        h = rng.binomial(1, risk, n).astype(float)
        if case == "binary-useless":
            return h, rng.binomial(1, risk, n) * 1.0, rng.binomial(1, risk, N) * 1.0, risk
        return h, flip(h), flip(rng.binomial(1, risk, N) * 1.0), risk
    n, N, risk = 200, 2000, 2 / 7
    h = rng.beta(2, 5, n)
    if case == "beta-useless":
        return h, rng.beta(2, 5, n), rng.beta(2, 5, N), risk
    return (h, np.clip(h + rng.normal(0, 0.05, n), 0, 1),
            np.clip(rng.beta(2, 5, N) + rng.normal(0, 0.05, N), 0, 1), risk)


def study(case, reps, seed=0, delta=0.1):
    rng = np.random.default_rng(seed)
    miss, widths = 0, {"plugin": [], "paper": [], "eval": []}
    for _ in range(reps):
        h, g, u, risk = draw(case, rng)
        ci = rautoeval_confidence_interval(h, g, u, delta=delta)
        miss += not (ci.low <= risk <= ci.high)
        widths["plugin"].append(ci.high - ci.low)
        for name, kw in (("paper", {}), ("eval", {"method": "eval"})):
            ref = rautoeval_confidence_interval(h, g, u, delta=delta, construction="paper", **kw)
            widths[name].append(ref.high - ref.low)
    return miss / reps, {k: float(np.mean(v)) for k, v in widths.items()}


@pytest.mark.parametrize("case", ["binary-good", "rare"])
def test_coverage_and_width_reduced(case):
    miss, w = study(case, 60)
    assert miss <= 0.1 + three_se(0.1, 60)
    # Paired comparison on the same draws: narrower than the paper's construction.
    assert w["plugin"] < w["paper"]


@pytest.mark.slow
@pytest.mark.parametrize(
    "case", ["binary-good", "binary-useless", "beta-good", "beta-useless", "rare"]
)
def test_coverage_full(case):
    miss, w = study(case, 1000, seed=5)
    assert miss <= 0.1 + three_se(0.1, 1000), (case, miss)
    assert w["plugin"] <= 1.05 * w["eval"], (case, w)      # never worse than labels only
    assert w["plugin"] < w["paper"], (case, w)


# ------------------------------------------------------------------ options and warnings
def test_options_are_validated():
    h = np.zeros(20)
    with pytest.raises(ValueError, match="`construction` must be 'plugin'"):
        rautoeval_confidence_interval(h, delta=0.1, method="eval", construction="mixture")
    with pytest.raises(ValueError, match="construction='paper'"):
        rautoeval_confidence_interval(h, delta=0.1, method="eval", betting="up")
    paper = rautoeval_confidence_interval(h, delta=0.1, method="eval", betting="up",
                                          construction="paper")
    assert paper.construction == "paper" and 0 == paper.low < paper.high < 1


def test_empty_interval_warns():
    # Judge on the labeled rows = label flipped 10% of the time (mean 0.26), judge on the
    # unlabeled rows an independent Binomial(0.2): the correction is biased by -0.06, so the
    # rho = 1 part of the paper's mixture pulls the upper bound below its rho = 0 lower bound.
    rng = np.random.default_rng(0)
    n = 10_000
    h = rng.binomial(1, 0.2, n).astype(float)
    g = np.where(rng.random(n) < 0.9, h, 1 - h)
    u = rng.binomial(1, 0.2, 10 * n).astype(float)
    with pytest.warns(RiskControlWarning, match=r"interval is empty.*differ in distribution"
                      r".*probability at most delta=0.1"):
        ci = rautoeval_confidence_interval(h, g, u, delta=0.1, construction="paper")
    assert ci.low > ci.high
    with warnings.catch_warnings():
        warnings.simplefilter("error", RiskControlWarning)
        ok = rautoeval_confidence_interval(h, delta=0.1, method="eval")
    assert ok.low <= ok.high
