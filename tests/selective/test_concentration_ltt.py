"""Learn-then-Test PAC control (``evalues.ltt`` and the new options of ``concentration_threshold``,
``ConcentrationMDR`` / ``ConcentrationSDR``)."""

import math
import warnings
from fractions import Fraction

import numpy as np
import pytest
from scipy.stats import binom
from sklearn.base import clone

from sklearn_riskcontrol.selective import (
    ConcentrationMDR,
    ConcentrationSDR,
    concentration_threshold,
    threshold_pvalues,
    wsr_pvalues,
)
from sklearn_riskcontrol import RiskControlWarning
from sklearn_riskcontrol.evalues.testing import bonferroni, fallback, fixed_sequence
from sklearn_riskcontrol.evalues.betting import betting_eprocess
from sklearn_riskcontrol.evalues.ltt import (
    binomial_pvalues,
    hb_pvalues,
    hoeffding_pvalues,
)

DELTA = 0.1


def _quiet(*args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RiskControlWarning)
        return concentration_threshold(*args, **kwargs)


# --------------------------------------------------------------------------------------------
# p-values against brute force
# --------------------------------------------------------------------------------------------
def _binom_cdf_exact(k, n, a):
    a = Fraction(a)
    return float(sum(math.comb(n, j) * a**j * (1 - a) ** (n - j) for j in range(0, k + 1)))


def _hb_brute(total, n, alpha):
    if n == 0:
        return 1.0
    r = min(total / n, alpha)
    h = (r * math.log(r / alpha) if r > 0 else 0.0) + (1 - r) * math.log((1 - r) / (1 - alpha))
    k = math.ceil(round(total, 9))
    return min(math.exp(-n * h), math.e * _binom_cdf_exact(k, n, alpha), 1.0)


@pytest.mark.parametrize("alpha", [0.01, 0.1, 0.35])
def test_hb_and_binomial_pvalues_match_brute_force(alpha):
    rng = np.random.default_rng(0)
    for n in [0, 1, 7, 40, 150]:
        for total in sorted({0.0, float(n), *rng.uniform(0, n, size=5).round(3)}):
            assert hb_pvalues(total, n, alpha) == pytest.approx(_hb_brute(total, n, alpha),
                                                                rel=1e-9, abs=1e-300)
        for k in range(0, n + 1, max(1, n // 6)):
            expect = 1.0 if n == 0 else _binom_cdf_exact(k, n, alpha)
            assert binomial_pvalues(float(k), n, alpha) == pytest.approx(expect, rel=1e-9)
    # Hoeffding: exp(-2 n gap^2)
    assert hoeffding_pvalues(2.0, 50, 0.2) == pytest.approx(math.exp(-2 * 50 * 0.16**2))


def test_binomial_and_hb_pvalues_are_valid_exactly():
    """P(p <= delta) <= delta at the boundary mean = alpha, by exact enumeration of Binom(n, a)."""
    for n, a in [(30, 0.2), (200, 0.03), (57, 0.5)]:
        k = np.arange(n + 1)
        pmf = binom.pmf(k, n, a)
        for fn in (binomial_pvalues, hb_pvalues):
            p = fn(k.astype(float), n, a)
            for d in (0.01, 0.1, 0.3):
                assert pmf[p <= d].sum() <= d + 1e-12
    # Bentkus' factor e makes HB larger than the exact binomial p-value
    k = np.arange(20.0)
    assert np.all(hb_pvalues(k, 100, 0.1) >= binomial_pvalues(k, 100, 0.1))


def _wsr_loop(L, S, grid, alpha, target, delta):
    out = []
    for t in grid:
        if target == "sdr":
            q = [float(l) for l, s in zip(L, S) if s <= t]
        else:
            q = [float(l) * (s <= t) for l, s in zip(L, S)]
        if not q:
            out.append(1.0)
            continue
        lw = betting_eprocess(np.array(q), alpha, betting="wsr", delta=delta, n_total=len(q))
        out.append(min(1.0, math.exp(-max(0.0, float(lw.log_wealth.max())))))
    return np.array(out)


@pytest.mark.parametrize("target", ["sdr", "mdr"])
def test_wsr_pvalues_match_a_loop_over_thresholds(target):
    rng = np.random.default_rng(1)
    n = 120
    S = rng.uniform(size=n)
    binary = rng.uniform(size=n) < 0.3 * S
    L = np.where(rng.uniform(size=n) < 0.5, binary, rng.uniform(size=n) * S)
    grid = np.r_[-0.5, np.linspace(0, 1, 13)]
    for alpha in (0.05, 0.2):
        got = wsr_pvalues(L, S, grid, alpha, target=target, delta=0.1)
        want = _wsr_loop(L, S, grid, alpha, target, 0.1)
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-15)
        p, n_t = threshold_pvalues(L, S, grid, alpha, target=target, bound="wsr", delta=0.1)
        np.testing.assert_allclose(p, want, rtol=1e-10, atol=1e-15)


# --------------------------------------------------------------------------------------------
# Procedures
# --------------------------------------------------------------------------------------------
def _fallback_loop(p, delta, w):
    w = np.asarray(w, float) / np.sum(w)
    out, level = [], 0.0
    for j, pj in enumerate(p):
        level = delta * w[j] + (level if j > 0 and out[-1] else 0.0)
        out.append(pj <= level * (1 + 1e-12))
    return np.array(out)


def test_fallback_definition_and_special_cases():
    rng = np.random.default_rng(2)
    for _ in range(50):
        g = int(rng.integers(1, 30))
        p = rng.uniform(0, 0.2, size=g) ** 2
        w = rng.uniform(size=g)
        np.testing.assert_array_equal(fallback(p, DELTA, w), _fallback_loop(p, DELTA, w))
        # weights (1, 0, ...) = fixed-sequence testing; equal weights reject what Bonferroni does
        np.testing.assert_array_equal(fallback(p, DELTA, np.r_[1.0, np.zeros(g - 1)]),
                                      fixed_sequence(p, DELTA))
        assert np.all(fallback(p, DELTA)[bonferroni(p, DELTA)])
    # many runs of rejections, zero weights (the score grid's) and p-values at the level itself
    for _ in range(50):
        g = int(rng.integers(1, 400))
        w = rng.uniform(size=g) * (rng.uniform(size=g) < 0.7)
        w[0] += 1e-3
        level = DELTA * np.cumsum(w / w.sum())
        p = np.where(rng.uniform(size=g) < 0.5, level * rng.uniform(0, 1.2, size=g), 1.0)
        np.testing.assert_array_equal(fallback(p, DELTA, w), _fallback_loop(p, DELTA, w))
    with pytest.raises(ValueError, match="`weights` must hold one non-negative"):
        fallback([0.1, 0.2], 0.1, [1.0, -1.0])


def test_fixed_sequence_stops_at_first_non_rejection():
    # Errors only in a middle band: FST from the safest threshold stops before it, even though
    # larger thresholds would be rejected again.
    S = np.linspace(0, 1, 3000)
    L = ((S > 0.4) & (S < 0.404)).astype(float)  # 12 errors, SDR(0.41) ~ alpha, SDR(1) = 0.004
    grid = np.linspace(0.2, 1, 81)  # fixed in advance; its first point holds 600 points
    res = _quiet(L, S, 0.01, target="sdr", bound="binomial", procedure="fixed_sequence",
                 grid=grid)
    first_fail = np.flatnonzero(res.pvalues > DELTA)[0]
    assert res.threshold == res.grid[first_fail - 1]
    assert np.all(res.rejected[:first_fail]) and not res.rejected[first_fail:].any()
    assert res.pvalues[-1] <= DELTA  # rejected by the p-value, not reached by FST
    # fallback continues after the non-rejections and reaches the top of the grid
    res_fb = _quiet(L, S, 0.01, target="sdr", bound="binomial", procedure="fallback", grid=grid)
    assert res_fb.threshold > res.threshold


def test_sdr_fallback_survives_early_errors_where_fst_stops():
    # Errors at rate .02 everywhere, alpha = .05: an error among the first ~45 calibration
    # points ends fixed-sequence testing from the first rejectable score; the default fallback
    # (half of delta on that start) keeps searching.
    rng = np.random.default_rng(3)
    S = rng.uniform(0.3, 1.0, size=2000)
    L = (rng.uniform(size=2000) < 0.02).astype(float)
    fst = _quiet(L, S, 0.05, target="sdr", procedure="fixed_sequence")
    fb = _quiet(L, S, 0.05, target="sdr")
    assert fst.threshold == -np.inf and fb.procedure == "fallback" and fb.threshold >= 0.99


def test_mdr_fixed_sequence_over_all_thresholds():
    rng = np.random.default_rng(4)
    S = rng.uniform(-3, 5, size=500)  # no [0, 1] assumption for the MDR continuum
    L = (rng.uniform(size=500) < 0.3).astype(float)
    res = concentration_threshold(L, S, 0.1, target="mdr")
    assert res.bound == "binomial" and res.procedure == "fixed_sequence"
    np.testing.assert_array_equal(res.grid[1:], np.unique(S))
    assert res.grid[0] < S.min()
    # brute force: binomial p-value of sum_{S_i <= t} L_i against n for each grid point
    p = [binomial_pvalues(float(L[S <= t].sum()), 500, 0.1) for t in res.grid]
    np.testing.assert_allclose(res.pvalues, p, rtol=1e-12)
    k = np.flatnonzero(np.asarray(p) > DELTA)[0]
    assert res.threshold == res.grid[k - 1]


def test_defaults_and_explicit_paper_baseline():
    rng = np.random.default_rng(5)
    S = rng.uniform(size=1000)
    L = (rng.uniform(size=1000) < S).astype(float)
    res = concentration_threshold(L, S, 0.3, target="sdr")
    assert (res.bound, res.procedure) == ("binomial", "fallback")
    # the distinct scores from the 21st smallest: the first rank r with 0.7**r <= delta times the
    # weight of the ranks up to r, here rank 20's 0.3 / 50 (0.7**20 > 0.1 * 0.006 >= 0.7**21; see
    # selective/test_concentration_grid.py for the weights)
    np.testing.assert_array_equal(res.grid, np.unique(S)[20:])
    assert np.isnan(res.upper_bound).all()
    res = concentration_threshold(L * 0.5, S, 0.3, target="sdr")
    assert res.bound == "hoeffding_bentkus"
    old = _quiet(L, S, 0.5, target="sdr", bound="hoeffding", procedure="union")
    auto = _quiet(L, S, 0.5, target="sdr", bound="hoeffding")
    assert old.procedure == auto.procedure == "union" and old.threshold == auto.threshold
    assert np.isfinite(old.slack) and old.pvalues is None
    # Learn-then-Test deploys more than the paper's baseline at the same (alpha, delta)
    assert concentration_threshold(L, S, 0.5, target="sdr").threshold > old.threshold


# --------------------------------------------------------------------------------------------
# Monte-Carlo validity on synthetic data with known risk functions
# --------------------------------------------------------------------------------------------
# S ~ U(0, 1), L | S ~ Bernoulli(m(S)); exact SDR(t) = int_0^t m / t, MDR(t) = int_0^t m.
def _m_increasing(s):
    return 0.12 * s


def _sdr_increasing(t):
    return 0.06 * t


def _m_bump(s):  # high risk on the safest scores: SDR is not monotone
    return np.where(s < 0.05, 0.3, 0.02)


def _sdr_bump(t):
    t = np.maximum(t, 1e-300)
    return (0.3 * np.minimum(t, 0.05) + 0.02 * np.maximum(t - 0.05, 0.0)) / t


def _mdr_increasing(t):
    return 0.06 * np.clip(t, 0, 1) ** 2


def _failure_rate(m, risk, target, alpha, bound, procedure, n, reps, seed):
    rng = np.random.default_rng(seed)
    fails = 0
    for _ in range(reps):
        S = rng.uniform(size=n)
        L = (rng.uniform(size=n) < m(S)).astype(float)
        res = _quiet(L, S, alpha, target=target, bound=bound, procedure=procedure)
        if res.threshold > -np.inf and risk(min(res.threshold, 1.0)) > alpha:
            fails += 1
    return fails / reps


@pytest.mark.parametrize(
    "m, risk, target, alpha",
    [
        (_m_increasing, _sdr_increasing, "sdr", 0.04),
        (_m_bump, _sdr_bump, "sdr", 0.05),
        (_m_increasing, _mdr_increasing, "mdr", 0.02),
    ],
)
def test_monte_carlo_validity_reduced(m, risk, target, alpha):
    # 250 repetitions: s.e. of a 0.1 rate is 0.019; slack 0.06 (3 s.e.)
    for bound, procedure in [("auto", "auto"), ("hoeffding_bentkus", "fixed_sequence")]:
        rate = _failure_rate(m, risk, target, alpha, bound, procedure, 400, 250, seed=11)
        assert rate <= DELTA + 0.06, (bound, procedure, rate)


@pytest.mark.slow
@pytest.mark.parametrize(
    "m, risk, target, alpha",
    [
        (_m_increasing, _sdr_increasing, "sdr", 0.04),
        (_m_increasing, _sdr_increasing, "sdr", 0.055),
        (_m_bump, _sdr_bump, "sdr", 0.05),
        (_m_increasing, _mdr_increasing, "mdr", 0.02),
        (_m_increasing, _mdr_increasing, "mdr", 0.04),
    ],
)
@pytest.mark.parametrize(
    "bound, procedure",
    [("binomial", "fallback"), ("binomial", "fixed_sequence"), ("binomial", "union"),
     ("hoeffding_bentkus", "fallback"), ("wsr", "fallback"), ("wsr", "fixed_sequence")],
)
def test_monte_carlo_validity_slow(m, risk, target, alpha, bound, procedure):
    # 2000 repetitions: s.e. of a 0.1 rate is 0.0067; slack 0.02 (3 s.e.)
    rate = _failure_rate(m, risk, target, alpha, bound, procedure, 600, 2000, seed=12)
    assert rate <= DELTA + 0.02


# --------------------------------------------------------------------------------------------
# Errors
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(bound="bentkus"), "`bound` must be one of 'hoeffding', 'rademacher', "
                                "'hoeffding_bentkus', 'binomial', 'wsr', 'auto'"),
        (dict(procedure="holm"), "`procedure` must be one of 'auto', 'union', 'fixed_sequence', "
                                 "'fallback'"),
        (dict(bound="rademacher", procedure="fixed_sequence"),
         "does not apply to bound='rademacher'"),
        (dict(bound="binomial", cal_risks=[0.0, 0.5]),
         r"needs binary losses.*cal_risks\[1\] = 0.5"),
        (dict(target="sdr", cal_scores=[0.3, 1.4], procedure="union"),
         r"outside \[0, 1\].*procedure='union'"),
    ],
)
def test_errors(kwargs, match):
    args = dict(cal_risks=[0.0, 1.0], cal_scores=[0.3, 0.4], alpha=0.5)
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        concentration_threshold(args.pop("cal_risks"), args.pop("cal_scores"), args.pop("alpha"),
                                **args)


# --------------------------------------------------------------------------------------------
# Estimators
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("cls", [ConcentrationMDR, ConcentrationSDR])
def test_estimators_new_options(cls, digits_600):
    model, _, _, X_cal, y_cal, X_test, _ = digits_600
    est = cls(model, alpha=0.05, bound="wsr", procedure="fixed_sequence")
    params = est.get_params()
    assert params["procedure"] == "fixed_sequence" and params["bound"] == "wsr"
    assert clone(est).get_params()["procedure"] == "fixed_sequence"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RiskControlWarning)
        est.fit(X_cal, y_cal)
        target = "mdr" if cls is ConcentrationMDR else "sdr"
        ref = concentration_threshold(est.cal_risks_, est.cal_scores_, 0.05, target=target,
                                      bound="wsr", procedure="fixed_sequence")
        assert est.threshold_ == ref.threshold
        default = cls(model, alpha=0.05).fit(X_cal, y_cal)
        paper = cls(model, alpha=0.05, bound="hoeffding", procedure="union").fit(X_cal, y_cal)
    assert default.result_.bound == "binomial"
    assert default.decide(X_test).mean() >= paper.decide(X_test).mean()
    with pytest.raises(ValueError, match="'procedure' parameter of .* must be a str among"):
        cls(model, procedure="holm").fit(X_cal, y_cal)


def zero_one_callable(y_true, y_pred):
    """A custom loss that happens to be 0/1 here but is not binary by construction."""
    return (np.asarray(y_true) != np.asarray(y_pred)).astype(float)


@pytest.mark.parametrize("cls", [ConcentrationMDR, ConcentrationSDR])
def test_auto_bound_uses_binomial_only_for_risks_binary_by_construction(cls, digits_600):
    model, _, _, X_cal, y_cal, _, _ = digits_600
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RiskControlWarning)
        custom = cls(model, alpha=0.05, risk=zero_one_callable).fit(X_cal, y_cal)
        named = cls(model, alpha=0.05).fit(X_cal, y_cal)
    assert set(np.unique(custom.cal_risks_)) <= {0.0, 1.0}  # 0/1 on this draw all the same
    assert custom.result_.bound == "hoeffding_bentkus"
    assert named.result_.bound == "binomial"
