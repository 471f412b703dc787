"""Property-based checks (hypothesis) of the array layer, on continuous data at many scales.

Complements the small integer-grid properties of ``selective/test_score_evalues.py``, ``evalues/test_testing.py``
(e-BH monotone in alpha and in the e-values, permutation equivariance), ``evalues/test_betting.py`` and
``online/test_sps.py``. Covered here:

* SCoRE: e-values (weighted or not) non-negative and finite on continuous scores of any magnitude;
  *decisions* (MDR decisions, e-BH on SDR e-values) invariant to permuting the calibration rows
  and to any strictly increasing transform of the pooled scores (both methods see the scores
  only through their order); MDR decisions are per-point (a sub-batch gets the same decisions),
  nested in alpha, monotone in the test score and in the calibration risks.
* Betting: for the universal portfolio and fixed bets, mapping observations, ``alpha`` and the
  bounds by the same increasing affine map ``x -> a x + c`` leaves the wealth unchanged (bets
  scale by ``1/a``). WSR is *not* invariant (its ``1/2`` and ``1/4`` priors live on the [0, 1]
  scale), so it is not claimed. Wealth is finite and nonincreasing in every observation (UP,
  fixed bets); rows are independent e-processes.
* SPS: thresholds non-decreasing on any stream (ties, -inf, huge magnitudes), nested in alpha,
  nondecreasing in the scores, and equal to the running maximum of order statistics.
"""

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sklearn_riskcontrol.evalues.testing import ebh
from sklearn_riskcontrol.selective import mdr_decisions, mdr_evalues, sdr_evalues
from sklearn_riskcontrol.evalues.betting import (
    WSR,
    FixedBet,
    UniversalPortfolio,
    betting_eprocess,
)
from sklearn_riskcontrol.online import SPSLearner, make_learner, simulate_thresholds

SETTINGS = settings(max_examples=60, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

# Scores from a small pool (ties) or continuous at very different magnitudes.
score_values = st.one_of(
    st.sampled_from([-3.0, 0.0, 0.5, 1.0, 2.0]),
    st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False),
    st.floats(-1e-6, 1e-6, allow_nan=False),
)
risk_values = st.one_of(st.sampled_from([0.0, 1.0, 0.5]), st.floats(0.0, 1.0))
levels = st.sampled_from([0.05, 0.1, 0.2, 0.3, 0.5]) | st.floats(0.01, 0.95)


@st.composite
def score_problems(draw, weighted=False):
    n = draw(st.integers(1, 40))
    m = draw(st.integers(1, 25))
    L = np.array(draw(st.lists(risk_values, min_size=n, max_size=n)))
    S = np.array(draw(st.lists(score_values, min_size=n, max_size=n)))
    T = np.array(draw(st.lists(score_values, min_size=m, max_size=m)))
    w = v = None
    if weighted:
        w = np.array(draw(st.lists(st.floats(0.05, 20.0), min_size=n, max_size=n)))
        v = np.array(draw(st.lists(st.floats(0.05, 20.0), min_size=m, max_size=m)))
    return L, S, T, w, v, draw(levels)


def increasing_map(data, *arrays):
    """A random strictly increasing transform applied to the pooled values (exact in floats:
    each distinct value goes to a cumulative sum of positive integer gaps times a scale)."""
    pooled = np.concatenate(arrays)
    uniq, inv = np.unique(pooled, return_inverse=True)
    gaps = np.array(data.draw(st.lists(st.integers(1, 1000), min_size=uniq.size,
                                       max_size=uniq.size)), dtype=float)
    scale = data.draw(st.sampled_from([2.0**-30, 1.0, 2.0**40]))
    shift = data.draw(st.sampled_from([-1e6, 0.0, 3.0]))
    new = shift + scale * np.cumsum(gaps)
    assert np.all(np.diff(new) > 0)
    out = new[inv]
    return np.split(out, np.cumsum([a.size for a in arrays])[:-1])


def sdr_decisions(L, S, T, alpha, w=None, v=None):
    return ebh(sdr_evalues(L, S, T, alpha, w, v), alpha)


# ------------------------------------------------------------------------------------ SCoRE
@pytest.mark.parametrize("weighted", [False, True])
@SETTINGS
@given(data=st.data())
def test_score_evalues_nonnegative_finite_on_continuous_scores(weighted, data):
    L, S, T, w, v, gamma = data.draw(score_problems(weighted))
    for fn in (mdr_evalues, sdr_evalues):
        e = fn(L, S, T, gamma, w, v)
        assert e.shape == T.shape and np.all(np.isfinite(e)) and np.all(e >= 0)
        assert np.all((e == 0) | (e >= (1 - 1e-12) / gamma))


@pytest.mark.parametrize("weighted", [False, True])
@SETTINGS
@given(data=st.data())
def test_decisions_invariant_to_calibration_order(weighted, data):
    L, S, T, w, v, alpha = data.draw(score_problems(weighted))
    perm = np.asarray(data.draw(st.permutations(range(L.size))), dtype=int)
    wp = None if w is None else w[perm]
    np.testing.assert_array_equal(mdr_decisions(L[perm], S[perm], T, alpha, None, wp, v),
                                  mdr_decisions(L, S, T, alpha, None, w, v))
    np.testing.assert_array_equal(sdr_decisions(L[perm], S[perm], T, alpha, wp, v),
                                  sdr_decisions(L, S, T, alpha, w, v))


@pytest.mark.parametrize("weighted", [False, True])
@SETTINGS
@given(data=st.data())
def test_decisions_and_evalues_invariant_to_increasing_score_transforms(weighted, data):
    # Both methods use the scores only through the order of the pooled (S, T) sample.
    L, S, T, w, v, alpha = data.draw(score_problems(weighted))
    S2, T2 = increasing_map(data, S, T)
    np.testing.assert_array_equal(mdr_decisions(L, S2, T2, alpha, None, w, v),
                                  mdr_decisions(L, S, T, alpha, None, w, v))
    np.testing.assert_array_equal(sdr_decisions(L, S2, T2, alpha, w, v),
                                  sdr_decisions(L, S, T, alpha, w, v))
    np.testing.assert_array_equal(sdr_evalues(L, S2, T2, alpha, w, v),
                                  sdr_evalues(L, S, T, alpha, w, v))


@SETTINGS
@given(data=st.data())
def test_sdr_decisions_equivariant_to_test_order(data):
    L, S, T, _, _, alpha = data.draw(score_problems(False))
    perm = np.asarray(data.draw(st.permutations(range(T.size))), dtype=int)
    np.testing.assert_array_equal(sdr_decisions(L, S, T[perm], alpha),
                                  sdr_decisions(L, S, T, alpha)[perm])


@pytest.mark.parametrize("weighted", [False, True])
@SETTINGS
@given(data=st.data())
def test_mdr_decisions_are_per_point_and_nested_in_alpha(weighted, data):
    L, S, T, w, v, alpha = data.draw(score_problems(weighted))
    d = mdr_decisions(L, S, T, alpha, None, w, v)
    keep = np.asarray(data.draw(st.lists(st.booleans(), min_size=T.size, max_size=T.size)))
    sub = mdr_decisions(L, S, T[keep], alpha, None, w, None if v is None else v[keep])
    np.testing.assert_array_equal(sub, d[keep])  # no batch effect
    bigger = data.draw(st.floats(alpha, 0.99))
    assert np.all(~d | mdr_decisions(L, S, T, bigger, None, w, v))


@SETTINGS
@given(data=st.data())
def test_mdr_decisions_monotone_in_test_score_and_calibration_risks(data):
    L, S, T, _, _, alpha = data.draw(score_problems(False))
    d = mdr_decisions(L, S, T, alpha)
    # a test point at most as risky-looking as a deployed one is deployed too
    order = np.argsort(T, kind="stable")
    d_sorted, t_sorted = d[order], T[order]
    last = np.flatnonzero(d_sorted)
    if last.size:
        assert np.all(d_sorted[t_sorted <= t_sorted[last[-1]]])
    # lowering calibration risks never withdraws a deployment
    factor = np.array(data.draw(st.lists(st.floats(0.0, 1.0), min_size=L.size,
                                         max_size=L.size)))
    assert np.all(~d | mdr_decisions(L * factor, S, T, alpha))


# ---------------------------------------------------------------------------------- betting
SCALE_STRATEGIES = {
    "up-arcsine": UniversalPortfolio(),
    "up-nodes": UniversalPortfolio(n_nodes=5),
    "up-reference": UniversalPortfolio(prior="reference", n_grid=300),
    "up-custom": UniversalPortfolio(prior=([0.1, 0.5, 0.9], [1.0, 2.0, 1.0])),
    "fixed": FixedBet(0.6),
}


@st.composite
def bounded_streams(draw, max_n=60):
    n = draw(st.integers(1, max_n))
    kind = draw(st.sampled_from(["binary", "continuous", "extreme"]))
    if kind == "binary":
        u = np.array(draw(st.lists(st.sampled_from([0.0, 1.0]), min_size=n, max_size=n)))
    elif kind == "continuous":
        u = np.array(draw(st.lists(st.floats(0, 1), min_size=n, max_size=n)))
    else:  # long runs at the bound: wealth collapses or explodes
        u = np.full(n, float(draw(st.sampled_from([0.0, 1.0]))))
    return u


@pytest.mark.parametrize("name", sorted(SCALE_STRATEGIES))
@pytest.mark.parametrize("monotone", [False, True])
@SETTINGS
@given(u=bounded_streams(), alpha=st.floats(0.02, 0.95),
       a=st.sampled_from([0.5, 3.0, 1e-3, 250.0]), c=st.sampled_from([0.0, -1.0, 7.5, -400.0]))
def test_wealth_invariant_to_affine_rescaling(name, monotone, u, alpha, a, c):
    """(q, alpha, lower, upper) -> a * (.) + c with a > 0: same wealth, bets divided by a.

    The factors ``1 - lambda (q - alpha)`` use ``q - alpha`` and ``M - alpha`` (``M - m`` if
    monotone) only, which all scale by ``a``."""
    strategy = SCALE_STRATEGIES[name]
    base = betting_eprocess(u, alpha, betting=strategy, monotone=monotone)
    mapped = betting_eprocess(a * u + c, a * alpha + c, lower=c, upper=a + c, betting=strategy,
                              monotone=monotone)
    # rounding of a * q + c is relative to |c|, i.e. (1 + |c| / a) ulps of q - alpha per round
    tol = 50 * u.size * np.finfo(float).eps * (1 + abs(c) / a)
    np.testing.assert_allclose(mapped.log_wealth, base.log_wealth, rtol=tol, atol=tol)
    np.testing.assert_allclose(mapped.bets * a, base.bets, rtol=tol, atol=tol)


@pytest.mark.parametrize("name", ["up-arcsine", "up-nodes", "fixed", "wsr"])
@SETTINGS
@given(u=bounded_streams(max_n=120), alpha=st.floats(0.02, 0.95))
def test_log_wealth_finite_at_the_bounds(name, u, alpha):
    strategy = SCALE_STRATEGIES.get(name, WSR())
    res = betting_eprocess(u, alpha, betting=strategy, delta=0.1)
    assert np.all(np.isfinite(res.log_wealth)) and np.all(np.isfinite(res.bets))
    assert np.all(res.bets >= 0)


@pytest.mark.parametrize("name", ["up-arcsine", "up-custom", "fixed"])
@SETTINGS
@given(data=st.data(), alpha=st.floats(0.05, 0.9))
def test_wealth_nonincreasing_in_every_observation(name, data, alpha):
    # A mixture of constant-bet wealths, each a product of factors decreasing in q_j.
    u = data.draw(bounded_streams())
    lower = np.array(data.draw(st.lists(st.floats(0, 1), min_size=u.size, max_size=u.size)))
    res = betting_eprocess(u, alpha, betting=SCALE_STRATEGIES[name])
    res_low = betting_eprocess(u * lower, alpha, betting=SCALE_STRATEGIES[name])
    assert np.all(res_low.log_wealth >= res.log_wealth - 1e-9)


@pytest.mark.parametrize("strategy", [UniversalPortfolio(n_nodes=6), WSR(), FixedBet(0.3)],
                         ids=["up", "wsr", "fixed"])
@SETTINGS
@given(data=st.data(), alpha=st.floats(0.05, 0.6))
def test_rows_are_independent_eprocesses(strategy, data, alpha):
    rows = [data.draw(bounded_streams(max_n=40)) for _ in range(3)]
    n = min(r.size for r in rows)
    rho = np.array([0.0, 0.5, 2.0])
    q = np.stack([r[:n] * (1 + 2 * k) - k for r, k in zip(rows, rho)])  # rows on [-rho, 1+rho]
    joint = betting_eprocess(q, alpha, lower=-rho, upper=1 + rho, betting=strategy, delta=0.1)
    for s in range(3):
        alone = betting_eprocess(q[s], alpha, lower=-rho[s], upper=1 + rho[s], betting=strategy,
                                 delta=0.1)
        np.testing.assert_allclose(joint.log_wealth[s], alone.log_wealth, rtol=1e-10,
                                   atol=1e-10)


# -------------------------------------------------------------------------------------- SPS
stream_values = st.one_of(
    st.sampled_from([0.0, 1.0, 2.0, -math.inf]),
    st.floats(-1e300, 1e300, allow_nan=False, allow_infinity=False),
    st.floats(-1.0, 1.0),
)
streams = st.lists(stream_values, min_size=1, max_size=300)


def running_order_statistic(s, ranks):
    """tau_{t+1} = max(tau_t, k_t-th smallest of s_1..s_t) (full information, brute force)."""
    tau, out = -math.inf, []
    for t in range(1, len(s) + 1):
        out.append(tau)
        k = ranks[t - 1]
        if k > 0:
            tau = max(tau, float(np.sort(s[:t])[k - 1]))
    return np.array(out)


@pytest.mark.parametrize("kind", ["anytime", "horizon", "greedy"])
@SETTINGS
@given(s=streams, alpha=levels)
def test_sps_thresholds_nondecreasing_and_equal_running_order_statistic(kind, s, alpha):
    s = np.array(s)
    kw = {"horizon": len(s) + 3} if kind == "horizon" else {}
    strategy = "greedy" if kind == "greedy" else "sps"
    tau = simulate_thresholds(np.where(np.isinf(s), -1e308, s), alpha, strategy=strategy, **kw)
    learner = make_learner(strategy, alpha, **kw)
    assert tau[0] == -np.inf and np.all(tau[1:] >= tau[:-1])
    ranks = [learner.rank(t) for t in range(1, len(s) + 1)]
    np.testing.assert_array_equal(tau, running_order_statistic(np.where(np.isinf(s), -1e308, s),
                                                               ranks))
    # -inf = label not among the candidates: a miss, fed through the streaming learner
    tau_inf = learner.replay(s)
    assert tau_inf[0] == -np.inf and np.all(tau_inf[1:] >= tau_inf[:-1])


@SETTINGS
@given(s=streams, a1=levels, a2=levels, data=st.data())
def test_sps_nested_in_alpha_and_monotone_in_scores(s, a1, a2, data):
    s = np.array([x for x in s if x != -math.inf] or [0.0])
    lo, hi = sorted((a1, a2))
    tau_lo, tau_hi = simulate_thresholds(s, lo), simulate_thresholds(s, hi)
    assert np.all(tau_lo <= tau_hi)  # larger miscoverage: smaller sets at every round
    # raising any true-label scores never lowers a threshold
    bump = np.array(data.draw(st.lists(st.floats(0, 10), min_size=s.size, max_size=s.size)))
    assert np.all(simulate_thresholds(s + bump, lo) >= tau_lo)
    # SPS never exceeds greedy, and a longer horizon (wider DKW band) never raises it
    assert np.all(tau_lo <= simulate_thresholds(s, lo, strategy="greedy"))
    n = s.size
    assert np.all(simulate_thresholds(s, lo, horizon=4 * n) <= simulate_thresholds(s, lo,
                                                                                  horizon=n))


@SETTINGS
@given(s=streams, alpha=levels, data=st.data())
def test_sps_chunked_replay_and_updates_equal_one_replay(s, alpha, data):
    s = np.array(s)
    full = SPSLearner(alpha).replay(s)
    cuts = sorted(data.draw(st.lists(st.integers(0, s.size), max_size=4)))
    learner = SPSLearner(alpha)
    parts = [learner.replay(chunk) for chunk in np.split(s, cuts)]
    np.testing.assert_array_equal(np.concatenate(parts), full)
    stepper, got = SPSLearner(alpha), []
    for x in s.tolist():
        tau = stepper.threshold
        got.append(tau)
        stepper.update(x if (x >= tau and x != -math.inf) else None)
    np.testing.assert_array_equal(got, full)


@pytest.mark.parametrize("strategy", ["sps", "greedy"])
@SETTINGS
@given(s=streams, alpha=levels, chunk=st.integers(1, 17), data=st.data())
def test_chunked_long_replay_equals_reference(strategy, s, alpha, chunk, data):
    """Long replays run in chunks (bounded memory); the thresholds must not change."""
    from sklearn_riskcontrol.online import _learners

    s = np.array(s)
    horizon = data.draw(st.sampled_from([None, s.size]))
    learner = make_learner(strategy, alpha, horizon=horizon)
    ranks = [learner.rank(t) for t in range(1, s.size + 1)]
    old = _learners._REPLAY_CHUNK
    _learners._REPLAY_CHUNK = chunk
    try:
        got = learner.replay(np.where(np.isinf(s), -1e308, s))
        if horizon is not None:  # a replay past the horizon fails before changing the state
            with pytest.raises(ValueError, match="horizon"):
                learner.replay(np.zeros(chunk + 1))
            assert learner.n_rounds == s.size
    finally:
        _learners._REPLAY_CHUNK = old
    np.testing.assert_array_equal(got, running_order_statistic(np.where(np.isinf(s), -1e308, s),
                                                               ranks))
