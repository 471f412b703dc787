"""Concentration-inequality baselines of SCoRE (paper App. D.4): ``evalues.bounds``."""

import dataclasses
import math
import warnings

import numpy as np
import pytest

from sklearn_riskcontrol import RiskControlWarning
from sklearn_riskcontrol.selective import _bounds as bounds_module  # home of the constant patched below
from sklearn_riskcontrol.selective import ConcentrationResult, concentration_threshold as _threshold


def concentration_threshold(*args, **kwargs):
    """The paper's baselines: Hoeffding + union bound unless a test passes another bound.

    The defaults became Learn-then-Test (``bound="auto"``, ``procedure="auto"``; tested in
    selective/test_concentration_ltt.py); the App. D.4 baselines tested here are the explicit options.
    """
    kwargs.setdefault("bound", "hoeffding")
    kwargs.setdefault("procedure", "union")
    return _threshold(*args, **kwargs)


TARGETS = ("mdr", "sdr")
BOUNDS = ("hoeffding", "rademacher")


def _quiet(*args, **kwargs):
    """concentration_threshold with the 'nothing certified' warning silenced."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RiskControlWarning)
        return concentration_threshold(*args, **kwargs)


# --------------------------------------------------------------------------------------------
# Plain-loop implementation of the App. D.4 formulas (the test oracle).
# --------------------------------------------------------------------------------------------
def _loop_reference(L, S, alpha, target, bound, delta, grid, n_draws, seed):
    L = [float(x) for x in L]
    S = [float(x) for x in S]
    n = len(L)
    if grid is None:
        if bound == "hoeffding":
            size = 101 if target == "mdr" else 100
            grid = np.linspace(0.0, 1.0, size).tolist()
        else:
            grid = sorted(set(S))
    else:
        grid = sorted(set(float(g) for g in grid))

    def mean_l(t):
        return sum(L[i] for i in range(n) if S[i] <= t) / n

    def mean_1(t):
        return sum(1 for i in range(n) if S[i] <= t) / n

    if bound == "hoeffding":
        k = 2 if target == "mdr" else 4
        eps = math.sqrt(math.log(k * len(grid) / delta) / (2 * n))
        eps_den = eps
    else:
        # Same signs as documented: sigma_ki = -1 iff U_ki < 0.5, U from RandomState(seed).
        U = np.random.RandomState(seed).random_sample((n_draws, n))
        # Every threshold t in R: below all scores (empty sum) or at one of the scores.
        thresholds = [-math.inf] + S
        sup_l, sup_1 = [], []
        for d in range(n_draws):
            sigma = [-1.0 if U[d, i] < 0.5 else 1.0 for i in range(n)]
            best_l = best_1 = -math.inf
            for t in thresholds:
                best_l = max(best_l, sum(sigma[i] * L[i] for i in range(n) if S[i] <= t) / n)
                best_1 = max(best_1, sum(sigma[i] for i in range(n) if S[i] <= t) / n)
            sup_l.append(best_l)
            sup_1.append(best_1)
        rad_l = sum(sup_l) / n_draws
        rad_1 = sum(sup_1) / n_draws
        k = 2 if target == "mdr" else 4
        conc = 3 * math.sqrt(math.log(k / delta) / (2 * n))
        eps = 2 * rad_l + conc
        eps_den = 2 * rad_1 + conc

    upper = []
    for t in grid:
        if target == "mdr":
            upper.append(mean_l(t) + eps)
        else:
            b = mean_1(t) - eps_den
            upper.append((mean_l(t) + eps) / b if b > 0 else math.inf)
    ok = [t for t, u in zip(grid, upper) if u <= alpha]
    t_hat = max(ok) if ok else -math.inf
    return t_hat, np.array(grid), np.array(upper), eps, (eps_den if target == "sdr" else None)


def _instance(seed, n, ties):
    rng = np.random.default_rng(seed)
    S = rng.uniform(size=n)
    if ties:
        S = np.round(S, 1)  # many tied scores, grid points equal to scores
    L = np.clip(rng.uniform(size=n) * (0.2 + S), 0, 1)
    L[rng.uniform(size=n) < 0.3] = 0.0
    return L, S


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("bound", BOUNDS)
@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("ties", [False, True])
def test_matches_loop_reference(target, bound, seed, ties):
    n = 25 + 5 * seed
    L, S = _instance(seed, n, ties)
    # alpha spread so that some instances certify something and some do not.
    for alpha in (0.35, 0.6, 0.95):
        ref = _loop_reference(L, S, alpha, target, bound, 0.2, None, 15, seed)
        res = _quiet(
            L, S, alpha, target=target, bound=bound, delta=0.2, n_draws=15, random_state=seed
        )
        assert res.threshold == ref[0]
        np.testing.assert_array_equal(res.grid, ref[1])
        np.testing.assert_allclose(res.upper_bound, ref[2], rtol=1e-12, atol=1e-14)
        assert res.slack == pytest.approx(ref[3], rel=1e-12)
        if target == "sdr":
            assert res.denominator_slack == pytest.approx(ref[4], rel=1e-12)
        else:
            assert res.denominator_slack is None


def test_matches_loop_reference_rademacher_sdr_with_finite_bounds():
    # The small instances above leave the Rademacher SDR denominator bound <= 0 everywhere;
    # here n is large enough for finite bounds and a certified threshold.
    rng = np.random.default_rng(8)
    n = 200
    S = np.round(rng.uniform(size=n), 2)
    L = 0.3 * S * (rng.uniform(size=n) < 0.5)
    ref = _loop_reference(L, S, 0.5, "sdr", "rademacher", 0.5, None, 5, 1)
    res = concentration_threshold(L, S, 0.5, target="sdr", bound="rademacher", delta=0.5,
                                  n_draws=5, random_state=1)
    assert np.isfinite(ref[2]).sum() > 20 and np.isfinite(ref[0])
    assert res.threshold == ref[0]
    np.testing.assert_allclose(res.upper_bound, ref[2], rtol=1e-12)
    assert res.slack == pytest.approx(ref[3], rel=1e-12)
    assert res.denominator_slack == pytest.approx(ref[4], rel=1e-12)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("bound", BOUNDS)
def test_matches_loop_reference_with_user_grid(target, bound):
    L, S = _instance(5, 30, ties=True)
    grid = [0.9, 0.1, 0.45, 0.1, -0.5, 0.3, 2.0]  # unsorted, duplicated, outside the scores
    ref = _loop_reference(L, S, 0.8, target, bound, 0.3, grid, 10, 3)
    res = _quiet(L, S, 0.8, target=target, bound=bound, delta=0.3, grid=grid, n_draws=10,
                 random_state=3)
    assert res.threshold == ref[0]
    np.testing.assert_array_equal(res.grid, ref[1])  # sorted distinct points
    np.testing.assert_allclose(res.upper_bound, ref[2], rtol=1e-12, atol=1e-14)
    assert res.slack == pytest.approx(ref[3], rel=1e-12)


def test_hoeffding_slack_and_default_grids():
    L, S = _instance(0, 200, ties=False)
    n = 200
    res = concentration_threshold(L, S, 0.5, target="mdr", delta=0.05)
    np.testing.assert_array_equal(res.grid, np.linspace(0, 1, 101))
    assert res.slack == pytest.approx(math.sqrt(math.log(2 * 101 / 0.05) / (2 * n)))
    res = _quiet(L, S, 0.5, target="sdr", delta=0.05)
    np.testing.assert_array_equal(res.grid, np.linspace(0, 1, 100))
    assert res.slack == res.denominator_slack
    assert res.slack == pytest.approx(math.sqrt(math.log(4 * 100 / 0.05) / (2 * n)))


def test_rademacher_default_grid_is_calibration_scores():
    L, S = _instance(1, 40, ties=True)
    res = _quiet(L, S, 0.5, bound="rademacher", random_state=0)
    np.testing.assert_array_equal(res.grid, np.unique(S))


def test_rademacher_zero_risk_and_all_tied_scores():
    n = 50
    # All risks zero: the L-weighted class is {0}, its complexity is 0, only 3 sqrt(...) remains.
    res = concentration_threshold(np.zeros(n), np.linspace(0, 1, n), 0.9, bound="rademacher",
                                  n_draws=7, random_state=0)
    assert res.slack == pytest.approx(3 * math.sqrt(math.log(2 / 0.1) / (2 * n)))
    assert res.threshold == 1.0
    # All scores tied: sup over t is max(0, sum_i sigma_i L_i) per draw.
    L = np.linspace(0, 1, n)
    res = _quiet(L, np.full(n, 0.3), 0.9, bound="rademacher", n_draws=7, random_state=4)
    U = np.random.RandomState(4).random_sample((7, n))
    sigma = np.where(U < 0.5, -1.0, 1.0)
    rad = np.maximum(sigma @ L, 0).mean() / n
    assert res.slack == pytest.approx(2 * rad + 3 * math.sqrt(math.log(20) / (2 * n)))


def test_rademacher_blocking_does_not_change_the_result(monkeypatch):
    L, S = _instance(2, 60, ties=True)
    full = _quiet(L, S, 0.9, target="sdr", bound="rademacher", n_draws=23, random_state=7)
    monkeypatch.setattr(bounds_module, "_BLOCK_ENTRIES", 3 * 60 + 1)  # blocks of 3 draws
    blocked = _quiet(L, S, 0.9, target="sdr", bound="rademacher", n_draws=23, random_state=7)
    assert blocked.slack == full.slack
    assert blocked.denominator_slack == full.denominator_slack
    np.testing.assert_array_equal(blocked.upper_bound, full.upper_bound)


# --------------------------------------------------------------------------------------------
# Definition of t_hat, monotonicity, reproducibility.
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("bound", BOUNDS)
def test_threshold_is_largest_grid_point_with_bound_below_alpha(target, bound):
    rng = np.random.default_rng(11)
    for rep in range(10):
        n = int(rng.integers(50, 400))
        S = rng.uniform(size=n)
        L = (rng.uniform(size=n) < S).astype(float)
        alpha = float(rng.uniform(0.05, 0.9))
        res = _quiet(L, S, alpha, target=target, bound=bound, random_state=rep)
        assert np.all(np.diff(res.grid) > 0)
        assert res.upper_bound.shape == res.grid.shape
        if np.isfinite(res.threshold):
            i = int(np.flatnonzero(res.grid == res.threshold)[0])
            assert res.upper_bound[i] <= alpha
            assert np.all(res.upper_bound[i + 1 :] > alpha)
        else:
            assert res.threshold == -np.inf
            assert np.all(res.upper_bound > alpha)
        test = rng.uniform(-0.2, 1.2, size=30)
        np.testing.assert_array_equal(res.decide(test), test <= res.threshold)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("bound", BOUNDS)
def test_monotone_in_alpha_and_delta(target, bound):
    rng = np.random.default_rng(3)
    n = 1500
    S = rng.uniform(size=n)
    L = (rng.uniform(size=n) < S).astype(float)
    kw = dict(target=target, bound=bound, random_state=0, n_draws=20)
    alphas = np.linspace(0.02, 0.98, 25)
    th = [_quiet(L, S, a, delta=0.1, **kw).threshold for a in alphas]
    th = np.array(th)
    assert np.all(th[1:] >= th[:-1])
    assert np.isfinite(th[-1]) and th[0] == -np.inf  # the sweep is not trivial
    deltas = np.linspace(0.01, 0.99, 15)
    alpha = {"mdr": 0.2, "sdr": 0.45 if bound == "hoeffding" else 0.7}[target]
    th = np.array([_quiet(L, S, alpha, delta=d, **kw).threshold for d in deltas])
    assert np.all(th[1:] >= th[:-1])
    assert np.isfinite(th[-1]) and th[0] < th[-1]
    ub = [_quiet(L, S, alpha, delta=d, **kw).upper_bound for d in deltas]
    assert all(np.all(b >= a) for a, b in zip(ub[1:], ub[:-1]))  # pointwise non-increasing


def test_reproducible_with_random_state():
    L, S = _instance(4, 300, ties=False)
    kw = dict(target="sdr", bound="rademacher", n_draws=30)
    a = _quiet(L, S, 0.6, random_state=12, **kw)
    b = _quiet(L, S, 0.6, random_state=12, **kw)
    c = _quiet(L, S, 0.6, random_state=np.random.RandomState(12), **kw)
    d = _quiet(L, S, 0.6, random_state=13, **kw)
    assert a.slack == b.slack == c.slack
    assert a.denominator_slack == b.denominator_slack == c.denominator_slack
    np.testing.assert_array_equal(a.upper_bound, b.upper_bound)
    assert d.slack != a.slack
    # A seeded numpy Generator works too, reproducibly.
    g1 = _quiet(L, S, 0.6, random_state=np.random.default_rng(5), **kw)
    g2 = _quiet(L, S, 0.6, random_state=np.random.default_rng(5), **kw)
    assert g1.slack == g2.slack and g1.denominator_slack == g2.denominator_slack
    with pytest.raises(ValueError, match=r"`random_state` must be None, an int"):
        concentration_threshold(L, S, 0.6, random_state="seed", **kw)
    # Hoeffding does not use randomness at all.
    h1 = concentration_threshold(L, S, 0.3, random_state=1)
    h2 = concentration_threshold(L, S, 0.3, random_state=2)
    assert h1.threshold == h2.threshold and h1.slack == h2.slack


# --------------------------------------------------------------------------------------------
# PAC validity: P(true risk(t_hat) > alpha) <= delta (+ Monte Carlo slack).
# Scores ~ Unif(0, 1), L | S ~ Bernoulli(p(S)); the true MDR(t) = int_0^t p(s) ds, the true
# SDR*(t) = MDR(t) / t. alpha is below sup_t of the true risk, so violations are possible.
# --------------------------------------------------------------------------------------------
def _p_lin(s):
    return s


def _mdr_lin(t):
    t = np.clip(t, 0.0, 1.0)
    return t**2 / 2


def _p_step(s):
    return np.where(s < 0.5, 0.02, 0.8)


def _mdr_step(t):
    t = np.clip(t, 0.0, 1.0)
    return 0.02 * np.minimum(t, 0.5) + 0.8 * np.maximum(t - 0.5, 0.0)


PAC_CASES = [
    # target, bound, n, alpha, p, MDR(t)
    ("mdr", "hoeffding", 500, 0.15, _p_lin, _mdr_lin),
    ("mdr", "rademacher", 500, 0.3, _p_lin, _mdr_lin),
    ("sdr", "hoeffding", 1000, 0.45, _p_lin, _mdr_lin),
    ("sdr", "hoeffding", 1000, 0.2, _p_step, _mdr_step),
    ("sdr", "rademacher", 2000, 0.35, _p_step, _mdr_step),
]


@pytest.mark.parametrize("target, bound, n, alpha, p, mdr", PAC_CASES)
def test_pac_validity_monte_carlo(target, bound, n, alpha, p, mdr):
    reps, delta = 200, 0.1
    rng = np.random.default_rng(2024)

    def true_risk(t):
        t = np.asarray(t, dtype=float)
        if target == "mdr":
            return mdr(t)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(t > 0, mdr(t) / np.clip(t, 1e-300, 1.0), 0.0)

    assert true_risk(1.0) > alpha  # deploying everything would violate: the test has teeth
    violations = uniform_failures = deployed = plugin_violations = 0
    for rep in range(reps):
        S = rng.uniform(size=n)
        L = (rng.uniform(size=n) < p(S)).astype(float)
        res = _quiet(L, S, alpha, target=target, bound=bound, delta=delta, random_state=rep)
        if np.isfinite(res.threshold):
            deployed += 1
            violations += bool(true_risk(res.threshold) > alpha)
        uniform_failures += bool(np.any(true_risk(res.grid) > res.upper_bound))
        if target == "mdr":  # same rule without the slack: the empirical MDR alone
            ok = np.flatnonzero(res.upper_bound - res.slack <= alpha)
            plugin_violations += bool(ok.size and true_risk(res.grid[ok[-1]]) > alpha)
    mc_slack = 3 * math.sqrt(delta * (1 - delta) / reps)  # 3 binomial standard errors
    assert violations / reps <= delta + mc_slack
    assert uniform_failures / reps <= delta + mc_slack  # the bound itself is uniform on the grid
    assert deployed >= reps // 2  # not vacuously valid by never deploying
    if target == "mdr":  # the study detects an invalid rule: the plug-in one fails often
        assert plugin_violations / reps > delta + mc_slack


# --------------------------------------------------------------------------------------------
# Result object, degenerate inputs, errors.
# --------------------------------------------------------------------------------------------
def test_result_object():
    L, S = _instance(0, 100, ties=False)
    res = concentration_threshold(L, S, 0.5)
    assert isinstance(res, ConcentrationResult)
    assert isinstance(res.threshold, float) and isinstance(res.slack, float)
    with pytest.raises(dataclasses.FrozenInstanceError):
        res.threshold = 2.0
    with pytest.raises(ValueError):
        res.grid[0] = 5.0  # read-only arrays
    assert res.decide([]).shape == (0,)
    assert res.decide([0.0, 2.0]).dtype == bool
    with pytest.raises(ValueError, match="test_scores"):
        res.decide([0.1, np.nan])
    assert "threshold=" in repr(res)


def test_nothing_certified_warns_and_deploys_nothing():
    with pytest.warns(RiskControlWarning, match="nothing is deployed"):
        res = concentration_threshold([0.5], [0.2], 0.1, target="sdr", bound="rademacher",
                                      random_state=0)
    assert res.threshold == -np.inf
    assert not res.decide([-1e300, 0.0, 0.2, 1.0]).any()
    assert np.all(res.upper_bound > 0.1)


def test_default_grid_requires_scores_in_unit_interval():
    L = np.zeros(20)
    S = np.linspace(-1, 3, 20)
    for target in TARGETS:
        with pytest.raises(ValueError, match=r"cal_scores.*outside \[0, 1\].*grid="):
            concentration_threshold(L, S, 0.5, target=target)
    # A user grid, or the Rademacher bound (uniform over all t), are fine.
    res = concentration_threshold(L, S, 0.5, grid=np.linspace(-1, 3, 41))
    assert res.threshold == 3.0
    res = concentration_threshold(L, S, 0.9, bound="rademacher", random_state=0)
    assert res.threshold == 3.0


@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        (dict(cal_risks=[0.1, 1.2]), ValueError, r"`cal_risks` must lie in \[0, 1\]"),
        (dict(cal_risks=[0.1, np.nan]), ValueError, "`cal_risks` contains NaN"),
        (dict(cal_scores=[0.1, np.inf]), ValueError, "`cal_scores` must be finite"),
        (dict(cal_scores=[0.1, 0.2, 0.3]), ValueError, "Mismatched lengths"),
        (dict(cal_risks=[], cal_scores=[]), ValueError, "`cal_risks` is empty"),
        (dict(alpha=0.0), ValueError, "`alpha` must lie in the open interval"),
        (dict(alpha=1.0), ValueError, "`alpha`"),
        (dict(alpha="0.1"), TypeError, "`alpha` must be a real number"),
        (dict(delta=1.5), ValueError, "`delta` must lie in the open interval"),
        (dict(delta=0), ValueError, "`delta`"),
        (dict(target="fdr"), ValueError, "`target` must be one of 'mdr', 'sdr'"),
        (dict(bound="bernstein"), ValueError, "`bound` must be one of 'hoeffding', 'rademacher'"),
        (dict(n_draws=0), ValueError, "`n_draws` must be a positive integer"),
        (dict(n_draws=2.5), TypeError, "`n_draws` must be a positive integer"),
        (dict(n_draws=True), TypeError, "`n_draws`"),
        (dict(grid=[]), ValueError, "`grid` is empty"),
        (dict(grid=[0.1, np.nan]), ValueError, "`grid` must be finite"),
        (dict(grid=[[0.1, 0.2], [0.3, 0.4]]), ValueError, "`grid` must be 1-d"),
    ],
)
def test_errors(kwargs, exc, match):
    args = dict(cal_risks=[0.1, 0.2], cal_scores=[0.3, 0.4], alpha=0.5)
    args.update(kwargs)
    with pytest.raises(exc, match=match):
        concentration_threshold(
            args.pop("cal_risks"), args.pop("cal_scores"), args.pop("alpha"), **args
        )


def test_options_are_case_insensitive_and_n_equals_one():
    res = _quiet([0.0], [0.5], 0.9, target="MDR", bound="Rademacher", random_state=0)
    assert res.target == "mdr" and res.bound == "rademacher"
    assert res.grid.tolist() == [0.5]
    res = _quiet([0.0], [0.5], 0.9, target="SDR", bound="Hoeffding")
    assert res.upper_bound.shape == (100,)
