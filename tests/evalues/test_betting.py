"""Betting strategies and log-space e-processes (sklearn_riskcontrol.evalues.betting)."""

import numpy as np
import pytest
from scipy import integrate, stats

from sklearn_riskcontrol.evalues import betting as B
from sklearn_riskcontrol.evalues.betting import (
    WSR,
    FixedBet,
    UniversalPortfolio,
    betting_eprocess,
    mixture_log_eprocess,
    mixture_weights,
)


def _rows(rng, n, kind):
    """Observations (3, n) for rho = 0, 0.5, 1 with bounds [-rho, 1 + rho]."""
    rho = np.array([0.0, 0.5, 1.0])
    if kind == "binary":
        h = rng.binomial(1, 0.1, n).astype(float)
        g = np.where(rng.random(n) < 0.9, h, 1 - h)
        ubar = rng.binomial(5, 0.12, n) / 5
    else:
        h = rng.beta(1, 6, n)
        g = np.clip(h + 0.1 * rng.standard_normal(n), 0, 1)
        ubar = rng.beta(1, 6, (n, 4)).mean(axis=1)
    q = h + rho[:, None] * (ubar - g)[None, :]
    return np.clip(q, -rho[:, None], 1 + rho[:, None]), -rho, 1 + rho


def _up_loop(q, alpha, lower, upper, nodes, weights, monotone=False):
    """Plain per-round universal portfolio on a discrete prior (linear-space wealth per node,
    renormalised every round). Returns bets (rows, n)."""
    rows, n = q.shape
    bets = np.empty((rows, n))
    for s in range(rows):
        unit = 1.0 / (upper[s] - (lower[s] if monotone else alpha))
        wealth = weights.astype(float).copy()
        for i in range(n):
            bets[s, i] = unit * np.sum(nodes * wealth) / np.sum(wealth)
            wealth = wealth * (1.0 - nodes * unit * (q[s, i] - alpha))
            wealth /= wealth.max()
    return bets


def _wsr_loop(q, alpha, upper, delta, c=0.75):
    rows, n = q.shape
    bets = np.empty((rows, n))
    for s in range(rows):
        total, sq = 0.0, 0.0
        for i in range(1, n + 1):
            sigma2 = (0.25 + sq) / i  # uses q_1..q_{i-1}
            bets[s, i - 1] = min(c / (upper[s] - alpha),
                                 np.sqrt(2 * np.log(1 / delta) / (n * sigma2)))
            total += q[s, i - 1]
            mu = (0.5 + total) / (i + 1)
            sq += (q[s, i - 1] - mu) ** 2
    return bets


# ----------------------------------------------------------------------------- exact UP
@pytest.mark.parametrize("kind", ["binary", "continuous"])
def test_exact_up_equals_fine_quadrature_of_arcsine_prior(kind):
    rng = np.random.default_rng(0)
    n, alpha = 60, 0.12
    q, lo, hi = _rows(rng, n, kind)
    got = betting_eprocess(q, alpha, lower=lo, upper=hi, betting="up").bets
    # 2 * 10**5 Gauss-Chebyshev nodes, plain per-round loop in log space.
    kf = 200_000
    k = np.arange(1, kf + 1)
    b = 0.5 * (1 + np.cos((2 * k - 1) * np.pi / (2 * kf)))
    for s in range(q.shape[0]):
        unit = 1 / (hi[s] - alpha)
        logw = np.zeros(kf)
        for i in range(n):
            e = np.exp(logw - logw.max())
            ref = unit * (b @ e) / e.sum()
            assert abs(got[s, i] - ref) <= 1e-12, (s, i)
            logw += np.log1p(-b * unit * (q[s, i] - alpha))


def test_exact_up_equals_scipy_integral():
    """Bets of the continuous Beta(1/2, 1/2) prior by adaptive quadrature (scipy.quad with the
    algebraic weight b**-1/2 (1-b)**-1/2)."""
    q = np.array([0.0, 1.0, 0.3, 0.0, 0.0, 0.7, 0.1, 0.0])
    alpha = 0.2
    got = betting_eprocess(q, alpha, betting="up").bets
    unit = 1 / (1 - alpha)
    for i in range(q.size):
        def wealth(b, i=i):
            return np.prod(1 - b * unit * (q[:i] - alpha))
        num = integrate.quad(lambda b: b * wealth(b), 0, 1, weight="alg", wvar=(-0.5, -0.5),
                             epsabs=0, epsrel=1e-13)[0]
        den = integrate.quad(wealth, 0, 1, weight="alg", wvar=(-0.5, -0.5), epsabs=0,
                             epsrel=1e-13)[0]
        assert got[i] == pytest.approx(unit * num / den, abs=1e-12)


def test_gauss_chebyshev_rule_is_exact_for_arcsine_moments():
    up = UniversalPortfolio()
    b, w = up.quadrature(40)  # K = 22 nodes: exact up to degree 2K - 1 = 43
    assert b.size == 22
    for p in range(44):
        exact = stats.beta(0.5, 0.5).moment(p) if p else 1.0
        assert np.sum(w * b**p) == pytest.approx(exact, rel=1e-12, abs=1e-15)


# ----------------------------------------------------------------------- reference grid
@pytest.mark.parametrize("compress", [True, False])
def test_up_reference_grid_matches_loop(compress):
    rng = np.random.default_rng(1)
    n, alpha = 300, 0.1
    q, lo, hi = _rows(rng, n, "binary")
    q, lo, hi = q[1:], lo[1:], hi[1:]  # rho = 0.5, 1 (keeps the loop short)
    grid, weights = B._reference_grid(10_000)
    assert weights[0] + weights[-1] == pytest.approx(0.391, abs=1e-3)  # endpoint mass
    up = UniversalPortfolio(prior="reference", compress=compress)
    got = betting_eprocess(q, alpha, lower=lo, upper=hi, betting=up).bets
    ref = _up_loop(q, alpha, lo, hi, grid, weights)
    np.testing.assert_allclose(got, ref, rtol=0, atol=1e-12)
    # and it really differs from the exact continuous-prior bets (spec: ~0.05)
    exact = betting_eprocess(q, alpha, lower=lo, upper=hi, betting="up").bets
    assert 0.02 < np.max(np.abs(exact - got) / (1 / (hi[:, None] - alpha))) < 0.2


def test_custom_prior_compressed_equals_uncompressed():
    rng = np.random.default_rng(2)
    q, lo, hi = _rows(rng, 80, "continuous")
    grid = np.linspace(0, 0.99, 500)
    w = rng.random(500) + 0.1
    a = betting_eprocess(q, 0.15, lower=lo, upper=hi,
                         betting=UniversalPortfolio(prior=(grid, w))).bets
    b = betting_eprocess(q, 0.15, lower=lo, upper=hi,
                         betting=UniversalPortfolio(prior=(grid, w), compress=False)).bets
    np.testing.assert_allclose(a, b, rtol=0, atol=1e-12)
    np.testing.assert_allclose(b, _up_loop(q, 0.15, lo, hi, grid, w / w.sum()), atol=1e-12)


def test_counts_path_equals_cumsum_path(monkeypatch):
    rng = np.random.default_rng(3)
    q, lo, hi = _rows(rng, 400, "binary")
    fast = betting_eprocess(q, 0.1, lower=lo, upper=hi, betting="up")
    monkeypatch.setattr(B, "_MAX_DISTINCT", 0)
    dense = betting_eprocess(q, 0.1, lower=lo, upper=hi, betting="up")
    np.testing.assert_allclose(fast.bets, dense.bets, rtol=0, atol=1e-13)
    np.testing.assert_allclose(fast.log_wealth, dense.log_wealth, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("kind", ["binary", "continuous", "mixed"])
def test_chunking_over_rounds_is_exact(monkeypatch, kind):
    rng = np.random.default_rng(4)
    if kind == "mixed":  # row 0 binary (counts path), rows 1-2 continuous (cumsum path)
        q, lo, hi = _rows(rng, 121, "continuous")
        q[0] = rng.binomial(1, 0.2, 121)
    else:
        q, lo, hi = _rows(rng, 121, kind)
    full = betting_eprocess(q, 0.1, lower=lo, upper=hi, betting="up")
    monkeypatch.setattr(B, "_CHUNK_ELEMENTS", 500)  # chunks of 500 // (3 * 62) = 2 rounds
    small = betting_eprocess(q, 0.1, lower=lo, upper=hi, betting="up")
    np.testing.assert_allclose(full.bets, small.bets, rtol=0, atol=1e-13)
    np.testing.assert_allclose(full.log_wealth, small.log_wealth, rtol=0, atol=1e-12)
    monkeypatch.setattr(B, "_MAX_DISTINCT", 0)
    dense = betting_eprocess(q, 0.1, lower=lo, upper=hi, betting="up")
    np.testing.assert_allclose(full.bets, dense.bets, rtol=0, atol=1e-13)


def test_up_wealth_is_prior_mixture_of_constant_bets():
    rng = np.random.default_rng(5)
    q, lo, hi = _rows(rng, 200, "continuous")
    alpha = 0.1
    res = betting_eprocess(q, alpha, lower=lo, upper=hi, betting="up")
    b, w = UniversalPortfolio().quadrature(200)
    for s in range(3):
        unit = 1 / (hi[s] - alpha)
        node_lw = np.cumsum(np.log1p(-np.outer(b, unit * (q[s] - alpha))), axis=1)
        mix = B._logsumexp(np.log(w)[:, None] + node_lw, axis=0)
        np.testing.assert_allclose(res.log_wealth[s], mix, rtol=0, atol=1e-10)


# ------------------------------------------------------------------------------------ WSR
def test_wsr_bets_follow_spec_formulas():
    rng = np.random.default_rng(6)
    q, lo, hi = _rows(rng, 150, "continuous")
    res = betting_eprocess(q, 0.1, lower=lo, upper=hi, betting="wsr", delta=0.05)
    np.testing.assert_allclose(res.bets, _wsr_loop(q, 0.1, hi, 0.05), rtol=1e-12, atol=0)
    # first bet: min(c / (M - alpha), sqrt(8 log(1/delta) / n))
    assert res.bets[0, 0] == pytest.approx(min(0.75 / 0.9, np.sqrt(8 * np.log(20) / 150)))
    wealth = np.cumsum(np.log1p(-res.bets * (q - 0.1)), axis=1)
    np.testing.assert_allclose(res.log_wealth, wealth, rtol=1e-13, atol=1e-13)


def test_wsr_n_total_and_monotone_cap():
    q = np.zeros(10)
    a = betting_eprocess(q, 0.3, betting="wsr", delta=0.1, n_total=1000).bets
    assert a[0] == pytest.approx(np.sqrt(8 * np.log(10) / 1000))
    m = betting_eprocess(q, 0.3, lower=-0.5, upper=1.5, betting=WSR(), delta=0.9,
                         monotone=True, n_total=1).bets
    assert np.all(m <= 1 / 2.0 + 1e-15) and m[0] == pytest.approx(0.5)


# --------------------------------------------------------------------- generic properties
STRATEGIES = [UniversalPortfolio(), UniversalPortfolio(prior="reference"),
              UniversalPortfolio(n_nodes=7), WSR(), FixedBet(0.3)]


@pytest.mark.parametrize("strategy", STRATEGIES, ids=lambda s: repr(s)[:40])
@pytest.mark.parametrize("monotone", [False, True])
def test_bets_are_predictable_and_in_range(strategy, monotone):
    rng = np.random.default_rng(7)
    q, lo, hi = _rows(rng, 90, "continuous")
    alpha = 0.2
    res = betting_eprocess(q, alpha, lower=lo, upper=hi, betting=strategy, delta=0.1,
                           monotone=monotone)
    cap = 1 / (hi - (lo if monotone else alpha))
    assert np.all(res.bets >= 0)
    assert np.all(res.bets < cap[:, None]) if not monotone else np.all(
        res.bets <= cap[:, None] * (1 + 1e-12))
    for t in (1, 30, 89):
        q2 = q.copy()
        q2[:, t:] = rng.uniform(lo[:, None], hi[:, None], q2[:, t:].shape)
        res2 = betting_eprocess(q2, alpha, lower=lo, upper=hi, betting=strategy, delta=0.1,
                                monotone=monotone, n_total=90)
        np.testing.assert_array_equal(res.bets[:, : t + 1], res2.bets[:, : t + 1])


@pytest.mark.parametrize("strategy", ["up", "wsr", FixedBet(0.5)], ids=str)
def test_monotone_eprocess_is_nondecreasing_in_alpha(strategy):
    rng = np.random.default_rng(8)
    q, lo, hi = _rows(rng, 100, "binary")
    prev = None
    for alpha in np.linspace(0.0, 0.6, 13):
        lw = betting_eprocess(q, alpha, lower=lo, upper=hi, betting=strategy, delta=0.1,
                              monotone=True).log_wealth
        if prev is not None:
            assert np.all(lw >= prev - 1e-9)
        prev = lw


def test_no_overflow_or_underflow_over_a_million_rounds():
    n = 1_000_000
    rng = np.random.default_rng(9)
    good = rng.binomial(1, 0.02, n).astype(float)  # wealth grows exponentially
    bad = np.ones(n)  # wealth collapses
    q = np.stack([good, bad])
    for strategy in [WSR(), FixedBet(0.5), UniversalPortfolio(n_nodes=12)]:
        res = betting_eprocess(q, 0.3, betting=strategy, delta=0.1)
        assert np.all(np.isfinite(res.log_wealth)) and np.all(np.isfinite(res.bets))
        assert res.log_wealth[0, -1] > 1e3  # exp(1e3) overflows a float64
        assert res.log_wealth[1, -1] < -1e3  # exp(-1e3) underflows
    # mixtures of such processes stay finite as well
    assert np.all(np.isfinite(mixture_log_eprocess(res.log_wealth)))
    assert np.all(np.isfinite(mixture_weights(res.log_wealth)))


# ----------------------------------------------------------------------------- mixtures
def test_mixture_telescopes_to_prior_mixture():
    rng = np.random.default_rng(10)
    q, lo, hi = _rows(rng, 50, "continuous")
    alpha = 0.2
    res = betting_eprocess(q, alpha, lower=lo, upper=hi, betting="up")
    prior = np.array([0.2, 0.3, 0.5])
    w = mixture_weights(res.log_wealth, prior)
    np.testing.assert_allclose(w.sum(axis=0), 1.0)
    np.testing.assert_allclose(w[:, 0], prior)
    factors = 1 - res.bets * (q - alpha)
    eq11 = np.cumsum(np.log(np.sum(w * factors, axis=0)))  # paper eq. 11
    direct = np.log(np.sum(prior[:, None] * np.exp(res.log_wealth), axis=0))
    mix = mixture_log_eprocess(res.log_wealth, prior)
    np.testing.assert_allclose(mix, direct, rtol=0, atol=1e-10)
    np.testing.assert_allclose(mix, eq11, rtol=0, atol=1e-10)


# ------------------------------------------------------------------------------- errors
@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        (dict(observations=[0.1, np.nan], alpha=0.5), ValueError, "NaN"),
        (dict(observations=[0.1, 1.5], alpha=0.5), ValueError, r"\[lower, upper\]"),
        (dict(observations=[0.1], alpha=1.0), ValueError, "alpha"),
        (dict(observations=[0.1], alpha="a"), TypeError, "alpha"),
        (dict(observations=[0.1], alpha=0.5, betting="wsr"), ValueError, "delta"),
        (dict(observations=[0.1], alpha=0.5, betting="kelly"), ValueError, "betting"),
        (dict(observations=[0.1], alpha=0.5, betting=3), TypeError, "betting"),
        (dict(observations=np.zeros((2, 2, 2)), alpha=0.5), ValueError, "1-d"),
        (dict(observations=[0.1], alpha=0.5, lower=[0, 0]), ValueError, "lower"),
        (dict(observations=[0.1], alpha=0.5, n_total=0), ValueError, "n_total"),
    ],
)
def test_betting_eprocess_errors(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        betting_eprocess(**kwargs)


def test_strategy_parameter_errors():
    with pytest.raises(ValueError, match="prior"):
        UniversalPortfolio(prior="uniform")
    with pytest.raises(ValueError, match=r"\[0, 1\)"):
        UniversalPortfolio(prior=([0.5, 1.0], [1, 1]))
    with pytest.raises(ValueError, match="positive"):
        UniversalPortfolio(prior=([0.5, 0.2], [1, 0]))
    with pytest.raises(ValueError, match="n_nodes"):
        UniversalPortfolio(n_nodes=0)
    with pytest.raises(ValueError, match="fraction"):
        FixedBet(1.0)
    with pytest.raises(ValueError, match="c"):
        WSR(c=1.5)
    with pytest.raises(ValueError, match="prior"):
        mixture_log_eprocess(np.zeros((2, 3)), prior=[1, -1])


def test_empty_and_one_dimensional_shapes():
    res = betting_eprocess([], 0.5)
    assert res.log_wealth.shape == (0,) and res.bets.shape == (0,)
    res = betting_eprocess([0.0, 1.0], 0.5, betting="wsr", delta=0.1)
    assert res.log_wealth.shape == (2,)


# ------------------------------------------------------- adaptive vs exact arcsine UP
EXACT_UP = UniversalPortfolio(integration="exact")


@pytest.mark.parametrize("kind", ["binary", "continuous"])
@pytest.mark.parametrize("alpha, monotone", [(0.1, False), (0.13, False), (0.03, False),
                                             (0.3, True)])
def test_adaptive_up_equals_exact_up(kind, alpha, monotone):
    """The default (adaptive window) bets equal the exact Gauss-Chebyshev ones (n/2 + 2 nodes)
    to rounding, for posteriors inside (0, 1) and at both ends, with new rules on the way."""
    rng = np.random.default_rng(11)
    q, lo, hi = _rows(rng, 1500, kind)
    kw = dict(lower=lo, upper=hi, monotone=monotone)
    new = betting_eprocess(q, alpha, betting="up", **kw)
    old = betting_eprocess(q, alpha, betting=EXACT_UP, **kw)
    np.testing.assert_allclose(new.bets, old.bets, rtol=0, atol=1e-12)
    np.testing.assert_allclose(new.log_wealth, old.log_wealth, rtol=0, atol=1e-10)


@pytest.mark.parametrize("kind", ["binary", "continuous"])
def test_adaptive_up_with_many_new_windows_is_still_exact(monkeypatch, kind):
    """Force new rules often (few first nodes, strict tolerance): the bets stay exact."""
    rng = np.random.default_rng(12)
    q, lo, hi = _rows(rng, 600, kind)
    monkeypatch.setattr(B, "_UP_FIRST_NODES", 5)
    monkeypatch.setattr(B, "_UP_MIN_NODES", 5)
    monkeypatch.setattr(B, "_UP_TOL", 1e-9)
    new = betting_eprocess(q, 0.12, lower=lo, upper=hi, betting="up")
    old = betting_eprocess(q, 0.12, lower=lo, upper=hi, betting=EXACT_UP)
    np.testing.assert_allclose(new.bets, old.bets, rtol=0, atol=1e-12)
    np.testing.assert_allclose(new.log_wealth, old.log_wealth, rtol=0, atol=1e-10)
    rows = [B._AdaptiveUPRow(np.minimum((q[s] - 0.12) / (hi[s] - 0.12), 1.0)) for s in range(3)]
    for row in rows:
        row.fractions(0, 600)
    assert min(row.n_anchors for row in rows) >= 2  # the windows really moved


@pytest.mark.slow
def test_adaptive_up_equals_exact_up_long_run():
    rng = np.random.default_rng(13)
    q, lo, hi = _rows(rng, 20_000, "binary")
    new = betting_eprocess(q, 0.1, lower=lo, upper=hi, betting="up")
    old = betting_eprocess(q, 0.1, lower=lo, upper=hi, betting=EXACT_UP)
    np.testing.assert_allclose(new.bets, old.bets, rtol=0, atol=1e-12)
    np.testing.assert_allclose(new.log_wealth, old.log_wealth, rtol=0, atol=1e-9)


def test_adaptive_up_long_run_is_finite_and_fast():
    """10**5 rounds of the default UP (exact: ~5 * 10**9 node updates) in about a second."""
    rng = np.random.default_rng(14)
    q = np.stack([rng.binomial(1, 0.05, 100_000), rng.beta(1, 9, 100_000)])
    res = betting_eprocess(q, 0.15, betting="up")
    assert np.all(np.isfinite(res.log_wealth)) and res.log_wealth[:, -1].min() > 1e3
    assert np.all((res.bets >= 0) & (res.bets < 1 / 0.85))


def test_integration_parameter_error():
    with pytest.raises(ValueError, match="`integration` must be 'adaptive'"):
        UniversalPortfolio(integration="fast")
