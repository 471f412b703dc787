"""Array layer of online prediction sets (SPS and baselines): exactness, properties, validity.

* Exactness: the O(log t) SPS/greedy learners agree exactly with a direct implementation of
  ``specs/sps.md`` that re-sorts the clipped records every round; ACI, DLR and (conservative)
  ETC agree with direct implementations; streaming ``update`` agrees with ``replay``.
* Properties: tau_1 = -inf, non-decreasing thresholds, SPS <= greedy, equivariance under
  increasing transformations of the scores, semi-bandit thresholds = full-information thresholds.
* Monte Carlo (reduced here, T = 10,000 under ``slow``): SPS never exceeds tau* (the guarantee
  allows a fraction 2/T of runs), coverage >= 1 - alpha up to Monte-Carlo slack, greedy and ACI
  undercover, regret grows like sqrt(T log T) and is lowest among the strategies.
"""

import math
import pickle

import numpy as np
import pytest
from scipy import stats

from sklearn_riskcontrol.online import (
    ACILearner,
    DLRLearner,
    ETCLearner,
    GreedyLearner,
    SPSLearner,
    STRATEGIES,
    average_set_size,
    coverage_rate,
    cumulative_regret,
    make_learner,
    oracle_threshold,
    simulate_thresholds,
    undercoverage_count,
)
from sklearn_riskcontrol.online._learners import _SortedMultiset

# -- direct implementations of the spec (slow, for exactness checks) ----------------------------


def spec_eps(t, alpha, horizon=None, delta=None):
    """eps_t of specs/sps.md; ``delta`` = overall failure probability (see SPSLearner)."""
    if horizon is None:
        d = 0.01 if delta is None else delta
        return math.sqrt(math.log(2.0 * (t * (t + 1)) / d) / (2 * t))
    per_round = 2.0 / (horizon * horizon) if delta is None else delta / horizon
    return math.sqrt(math.log(2.0 / per_round) / (2 * t))


def spec_sps(scores, alpha, *, horizon=None, delta=None, greedy=False, full_information=False):
    """Algorithm 1 verbatim: sort the clipped records max(tau_t, s_j) every round."""
    tau, records, out = -math.inf, [], []
    for t, s in enumerate(scores, start=1):
        out.append(tau)
        if full_information or s >= tau:
            records.append(s)
        else:
            records.append(tau)  # a miss is substituted by the current threshold
        q = alpha if greedy else alpha - spec_eps(t, alpha, horizon, delta)
        if q < 0:
            tau_new = -math.inf
        else:
            k = math.floor(q * t) + 1
            tau_new = np.sort(np.maximum(tau, np.array(records)))[k - 1]
        tau = max(tau_new, tau)
    return np.array(out)


def spec_aci(scores, alpha, lr):
    level, observed, tau, out = alpha, [], -math.inf, []
    for s in scores:
        out.append(tau)
        covered = s >= tau
        if covered:
            observed.append(s)
        level += lr * (alpha - (0.0 if covered else 1.0))
        n = len(observed)
        if n == 0 or level <= 0:
            tau = -math.inf
        elif level >= 1:
            tau = math.inf
        else:
            k = math.floor(level * n) + 1
            tau = sorted(observed)[k - 1] if k <= n else math.inf
    return np.array(out)


def spec_dlr(scores, alpha, c, tau1):
    tau, out = tau1, []
    for t, s in enumerate(scores, start=1):
        out.append(tau)
        err = 0.0 if s >= tau else 1.0
        tau = tau + c * t ** (-0.6) * (alpha - err)
    return np.array(out)


def spec_etc(scores, alpha, m, eps=0.0):
    q = alpha - eps
    commit = -math.inf if q < 0 else np.sort(scores[:m])[math.floor(q * m)]
    return np.array([-math.inf] * m + [commit] * (len(scores) - m))[: len(scores)]


def random_stream(rng, n):
    kind = rng.integers(3)
    if kind == 0:
        return rng.normal(size=n)
    if kind == 1:
        return rng.integers(0, 6, size=n).astype(float)  # heavy ties
    return np.round(rng.standard_cauchy(size=n), 1)  # heavy tails and ties


# -- exactness ---------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(6))
def test_sps_equals_direct_implementation_of_spec(seed):
    rng = np.random.default_rng(seed)
    for _ in range(15):
        n = int(rng.integers(1, 250))
        s = random_stream(rng, n)
        alpha = float(rng.uniform(0.05, 0.7))
        for horizon, delta in [(None, None), (None, 0.2), (n, None), (n + 7, 0.3)]:
            fast = simulate_thresholds(s, alpha, horizon=horizon, delta=delta)
            np.testing.assert_array_equal(fast, spec_sps(s, alpha, horizon=horizon, delta=delta))
        fast = simulate_thresholds(s, alpha, strategy="greedy")
        np.testing.assert_array_equal(fast, spec_sps(s, alpha, greedy=True))


def test_sps_equals_paper_default_epsilon():
    """horizon=T, delta=None is the paper's eps_t = sqrt(log(2 / (2 / T^2)) / (2 t))."""
    T = 500
    learner = SPSLearner(0.1, horizon=T)
    for t in (1, 7, 100, T):
        assert learner.epsilon(t) == pytest.approx(math.sqrt(math.log(T**2) / (2 * t)), rel=1e-12)
    anytime = SPSLearner(0.1, delta=0.05)
    assert anytime.epsilon(10) == pytest.approx(math.sqrt(math.log(2 * 110 / 0.05) / 20))


def test_vectorised_ranks_equal_scalar_ranks():
    """Fixed horizon, greedy and the anytime schedule (np.log differs from math.log by ulps)."""
    rng = np.random.default_rng(0)
    for learner in (SPSLearner(0.1, horizon=10**6), SPSLearner(0.37, horizon=5000, delta=0.5),
                    GreedyLearner(0.1), GreedyLearner(0.3), SPSLearner(0.1),
                    SPSLearner(0.05, delta=1e-6), SPSLearner(0.2, delta=1e-300)):
        starts = [0] + rng.integers(0, 10**9, size=20).tolist()
        for t0 in starts:
            n = 20_000 if t0 == 0 else 500
            assert learner._compute_ranks(t0, n) == [learner.rank(t) for t in range(t0 + 1, t0 + n + 1)]


def test_anytime_ranks_recompute_the_rounds_where_numpy_log_differs():
    """Rounds where np.log != math.log exist; the vectorised ranks still equal `rank` there."""
    learner = SPSLearner(0.1)
    t = np.arange(1, 200_001, dtype=float)
    differs = np.flatnonzero(np.log(2.0 * (t * (t + 1.0)) / 0.01)
                             != [math.log(2.0 * (i * (i + 1)) / 0.01) for i in range(1, 200_001)])
    if differs.size == 0:
        pytest.skip("this NumPy's log agrees with math.log on these rounds")
    ranks = learner._compute_ranks(0, 200_000)
    assert all(ranks[i] == learner.rank(i + 1) for i in differs.tolist())


def test_rank_block_cache_serves_any_batch_sequence():
    learner = SPSLearner(0.1)
    t0, got = 0, []
    for n in [1, 7, 100, 4000, 5000, 3, 9000, 1, 64]:
        got += learner._ranks(t0, n)
        t0 += n
    assert got == [learner.rank(t) for t in range(1, t0 + 1)]


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_update_batch_equals_round_by_round_updates(strategy):
    """Batches served with one threshold, misses as NaN or None, same state as `update`."""
    rng = np.random.default_rng(3)
    kwargs = dict(horizon=20_000, n_explore=50) if "etc" in strategy else {}
    one, batched = make_learner(strategy, 0.1, **kwargs), make_learner(strategy, 0.1, **kwargs)
    for size in [1, 5, 300, 40, 2000, 7]:
        served = one.threshold
        true = rng.standard_t(3, size=size)
        covered = true >= served
        for s, c in zip(true.tolist(), covered.tolist()):
            one.update(s if c else None, served_threshold=served)
        feedback = np.where(covered, true, np.nan)
        if size == 40:
            feedback = [s if c else None for s, c in zip(true.tolist(), covered.tolist())]
        assert batched.update_batch(feedback) == one.threshold
        assert batched.n_rounds == one.n_rounds
    assert pickle.loads(pickle.dumps(batched)).update_batch([np.nan]) == one.update(None)


def test_update_batch_errors_name_the_row_and_the_fix():
    learner = GreedyLearner(0.5, horizon=10)
    learner.update_batch([1.0, 2.0, 3.0])
    tau = learner.threshold
    assert tau > -math.inf
    with pytest.raises(ValueError, match=r"row 1 \(0-based\).*Pass NaN \(or None\)"):
        learner.update_batch([tau, tau - 1.0])
    with pytest.raises(ValueError, match=r"finite where the label was observed.*row 0"):
        learner.update_batch([np.inf])
    with pytest.raises(ValueError, match="one-dimensional"):
        learner.update_batch([[1.0, 2.0]])
    with pytest.raises(ValueError, match="`horizon`=10 is smaller"):
        learner.update_batch([np.nan] * 8)
    with pytest.raises(ValueError, match="served_threshold.*above the current threshold"):
        learner.update_batch([5.0], served_threshold=tau + 1.0)
    assert learner.n_rounds == 3  # nothing recorded by the rejected batches


def test_semi_bandit_thresholds_equal_full_information_thresholds():
    """Clipping makes substituted misses indistinguishable from the true scores (paper Sec. 3)."""
    rng = np.random.default_rng(1)
    for _ in range(20):
        s = random_stream(rng, 200)
        np.testing.assert_array_equal(
            spec_sps(s, 0.2, horizon=200), spec_sps(s, 0.2, horizon=200, full_information=True)
        )


def test_baselines_equal_direct_implementations():
    rng = np.random.default_rng(2)
    for _ in range(10):
        n = int(rng.integers(5, 400))
        s = random_stream(rng, n)
        for lr in (0.005, 0.05, 0.5):
            np.testing.assert_array_equal(
                simulate_thresholds(s, 0.2, strategy="aci", learning_rate=lr), spec_aci(s, 0.2, lr)
            )
        np.testing.assert_allclose(
            simulate_thresholds(s, 0.1, strategy="dlr", learning_rate=0.3, initial_threshold=-2),
            spec_dlr(s, 0.1, 0.3, -2.0),
        )
        m = int(rng.integers(1, n + 1))
        np.testing.assert_array_equal(
            simulate_thresholds(s, 0.3, strategy="etc", n_explore=m), spec_etc(s, 0.3, m)
        )
        eps = math.sqrt(math.log(2 / 0.5) / (2 * m))
        np.testing.assert_array_equal(
            simulate_thresholds(s, 0.3, strategy="conservative_etc", n_explore=m, delta=0.5),
            spec_etc(s, 0.3, m, eps),
        )


def test_make_learner_builds_each_strategy():
    kinds = {"sps": SPSLearner, "greedy": GreedyLearner, "aci": ACILearner, "dlr": DLRLearner,
             "etc": ETCLearner, "conservative_etc": ETCLearner}
    for strategy, cls in kinds.items():
        learner = make_learner(strategy, 0.1, horizon=100)
        assert type(learner) is cls and learner.strategy == strategy
        assert learner.threshold == (0.0 if strategy == "dlr" else -np.inf)
    assert make_learner("dlr", 0.1, initial_threshold=-3.0).threshold == -3.0


def test_etc_default_exploration_and_delta():
    learner = ETCLearner(0.1, horizon=1000, conservative=True)
    assert learner.n_explore == 100 and learner._commit_delta == pytest.approx(2 / 1000)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_streaming_updates_equal_replay_and_resume_after_pickle(strategy):
    rng = np.random.default_rng(3)
    s = rng.normal(size=600)
    params = dict(horizon=600, n_explore=50, initial_threshold=-2.0, learning_rate=0.05)
    expected = make_learner(strategy, 0.2, **params).replay(s)
    learner = make_learner(strategy, 0.2, **params)
    got = []
    for i, score in enumerate(s):
        if i == 300:  # pickle mid-stream and resume from the copy
            learner = pickle.loads(pickle.dumps(learner))
        tau = learner.threshold
        got.append(tau)
        assert learner.update(score if score >= tau else None) == learner.threshold
    np.testing.assert_array_equal(got, expected)
    assert learner.n_rounds == 600
    # replay in two chunks equals one replay
    two = make_learner(strategy, 0.2, **params)
    np.testing.assert_array_equal(np.r_[two.replay(s[:123]), two.replay(s[123:])], expected)


def test_sorted_multiset_matches_sorted_list():
    rng = np.random.default_rng(4)
    ms, ref = _SortedMultiset(), []
    ms._LOAD = 4  # force many block splits
    for x in np.round(rng.normal(size=3000), 2).tolist():
        ms.add(x)
        ref.append(x)
        if rng.random() < 0.1:
            ref.sort()
            k = int(rng.integers(len(ref)))
            assert ms.kth(k) == ref[k]
    assert ms.to_list() == sorted(ref) and len(ms) == len(ref)


def test_stale_served_threshold_batch_feedback_is_exact_for_sps():
    """Feedback on sets served with an older threshold gives the same SPS thresholds."""
    rng = np.random.default_rng(5)
    s = rng.normal(size=2000)
    full = SPSLearner(0.1, horizon=2000)
    full.replay(s)
    learner = SPSLearner(0.1, horizon=2000)
    for batch in np.array_split(s, 37):
        served = learner.threshold
        for score in batch.tolist():
            learner.update(score if score >= served else None, served_threshold=served)
    assert learner.threshold == full.threshold
    assert learner.records() == full.records()


# -- properties ---------------------------------------------------------------------------------


def test_sps_starts_with_full_sets_and_never_decreases():
    rng = np.random.default_rng(6)
    for _ in range(10):
        s = random_stream(rng, 3000)
        for strategy in ("sps", "greedy"):
            tau = simulate_thresholds(s, 0.1, strategy=strategy, horizon=3000)
            assert tau[0] == -np.inf
            assert np.all(tau[1:] >= tau[:-1])


def test_sps_is_below_greedy_and_vacuous_early():
    rng = np.random.default_rng(7)
    s = rng.normal(size=5000)
    sps = simulate_thresholds(s, 0.1, horizon=5000)
    greedy = simulate_thresholds(s, 0.1, strategy="greedy")
    assert np.all(sps <= greedy)
    # while eps_t > alpha the DKW bound is vacuous: full sets
    t_first = int(np.argmax(sps > -np.inf)) + 1
    learner = SPSLearner(0.1, horizon=5000)
    assert learner.epsilon(t_first - 2) > 0.1 >= learner.epsilon(t_first - 1)


def test_sps_is_equivariant_under_increasing_transformations():
    rng = np.random.default_rng(8)
    s = rng.normal(size=3000)
    tau = simulate_thresholds(s, 0.1, horizon=3000)
    for g in (np.exp, np.arctan, lambda x: 40.0 + 15.0 * x, lambda x: x**3):
        expected = np.where(tau == -np.inf, -np.inf, g(tau))  # tau_1 = -inf stays -inf
        np.testing.assert_array_equal(simulate_thresholds(g(s), 0.1, horizon=3000), expected)


# -- errors ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("alpha", [0, 1, 1.5, -0.1, float("nan")])
def test_alpha_outside_unit_interval_is_rejected(alpha):
    with pytest.raises(ValueError, match="alpha"):
        simulate_thresholds([0.1, 0.2], alpha)
    with pytest.raises(ValueError, match="alpha"):
        SPSLearner(alpha)


def test_bad_inputs_raise_clear_errors():
    with pytest.raises(TypeError, match="alpha"):
        simulate_thresholds([0.1], True)
    with pytest.raises(ValueError, match="true_label_scores.*finite"):
        simulate_thresholds([0.1, float("nan")], 0.1)
    with pytest.raises(ValueError, match="finite"):
        simulate_thresholds([0.1, float("inf")], 0.1)
    with pytest.raises(ValueError, match="horizon"):
        simulate_thresholds(np.zeros(11), 0.1, horizon=10)
    with pytest.raises(ValueError, match="strategy"):
        simulate_thresholds([0.1], 0.1, strategy="ucb")
    with pytest.raises(ValueError, match="delta"):
        simulate_thresholds([0.1], 0.1, delta=1.0)
    with pytest.raises(ValueError, match="n_explore"):
        simulate_thresholds([0.1], 0.1, strategy="etc")
    with pytest.raises(ValueError, match="learning_rate"):
        simulate_thresholds([0.1], 0.1, strategy="aci", learning_rate=-1)
    with pytest.raises(ValueError, match="initial_threshold"):
        simulate_thresholds([0.1], 0.1, strategy="dlr", initial_threshold=float("-inf"))
    with pytest.raises(ValueError, match="horizon"):
        SPSLearner(0.1, horizon=0)


def test_learner_rejects_inconsistent_feedback():
    learner = GreedyLearner(0.5)
    learner.update(1.0)
    assert learner.threshold == 1.0
    with pytest.raises(ValueError, match="Inconsistent feedback"):
        learner.update(0.5)  # reported as observed, but 0.5 < 1.0 was not in the set
    with pytest.raises(ValueError, match="finite"):
        learner.update(float("nan"))
    with pytest.raises(ValueError, match="never decrease"):
        learner.update(None, served_threshold=2.0)
    learner.update(0.5, served_threshold=0.2)  # a set served earlier with a lower threshold
    assert learner.n_rounds == 2
    sps = SPSLearner(0.1, horizon=2)
    sps.update(0.3)
    sps.update(None)
    with pytest.raises(ValueError, match="horizon"):
        sps.update(0.3)
    assert sps.n_rounds == 2


def test_messages_show_plain_numbers_not_numpy_reprs():
    learner = GreedyLearner(0.5)
    with pytest.raises(TypeError, match=r"got 'a'\.$"):
        learner.update(np.str_("a"))
    learner.update(np.float64(1.0))
    with pytest.raises(ValueError, match=r"score 0\.5, but .* scores >= 1\.0\.") as err:
        learner.update(np.float64(0.5))
    assert "np." not in str(err.value)
    with pytest.raises(TypeError, match=r"got nan\.$"):
        undercoverage_count([0.1], tau_star=np.float64("nan"))


# -- metrics --------------------------------------------------------------------------------------


def test_oracle_threshold_is_the_sup_of_the_definition():
    rng = np.random.default_rng(9)
    for _ in range(50):
        s = rng.integers(0, 8, size=int(rng.integers(1, 40))).astype(float)
        alpha = float(rng.uniform(0.01, 0.99))
        tau_star = oracle_threshold(s, alpha)
        G = lambda tau: np.mean(s <= tau)  # noqa: E731
        # G <= alpha just below tau*, and above alpha at tau* (sup not attained)
        assert G(np.nextafter(tau_star, -np.inf)) <= alpha < G(tau_star)
        assert np.mean(s < tau_star) <= alpha  # the set {s >= tau*} covers


def test_coverage_size_undercoverage_and_regret_against_brute_force():
    rng = np.random.default_rng(10)
    S = rng.normal(size=(300, 7))
    y = rng.integers(0, 7, size=300)
    s = S[np.arange(300), y]
    tau = simulate_thresholds(s, 0.2, strategy="aci", learning_rate=0.05)
    assert coverage_rate(s, tau) == np.mean([si >= ti for si, ti in zip(s, tau)])
    assert average_set_size(S, tau) == np.mean([np.sum(row >= ti) for row, ti in zip(S, tau)])
    ts = oracle_threshold(s, 0.2)
    assert undercoverage_count(tau, ts) == sum(ti > ts for ti in tau)

    def phi(t):
        m = np.mean(s < t)
        return -(0.1 if m <= 0.2 else 10.0) * abs(m - 0.2)

    brute = np.cumsum([phi(ts) - phi(ti) for ti in tau])
    np.testing.assert_allclose(cumulative_regret(tau, s, 0.2), brute, atol=1e-12)
    assert cumulative_regret([ts] * 5, s, 0.2)[-1] == 0.0


def test_regret_with_known_distribution():
    tau_star = stats.norm.ppf(0.1)
    r = cumulative_regret([-np.inf, tau_star, tau_star + 1.0], stats.norm.cdf, 0.1)
    np.testing.assert_allclose(r, [0.01, 0.01, 0.01 + 10 * (stats.norm.cdf(tau_star + 1) - 0.1)])
    assert np.all(cumulative_regret(np.linspace(-5, 5, 50), stats.norm.cdf, 0.1) >= 0)


def test_metric_errors():
    with pytest.raises(ValueError, match="Mismatched"):
        coverage_rate([0.1, 0.2], [0.0])
    with pytest.raises(ValueError, match="NaN"):
        coverage_rate([0.1], [float("nan")])
    with pytest.raises(ValueError, match="2-d"):
        average_set_size([0.1, 0.2], [0.0, 0.0])
    with pytest.raises(ValueError, match="rows"):
        average_set_size([[0.1, 0.2]], [0.0, 0.0])
    with pytest.raises(ValueError, match="lambda2"):
        cumulative_regret([0.0], [0.0, 1.0], 0.1, lambda2=-1)
    with pytest.raises(ValueError, match="reference"):
        cumulative_regret([0.0], lambda t: np.full(np.shape(t), 2.0), 0.1)
    with pytest.raises(ValueError, match="alpha"):
        oracle_threshold([0.0, 1.0], 1.0)
    with pytest.raises(TypeError, match="tau_star"):
        undercoverage_count([0.0], float("nan"))


# -- Monte Carlo ----------------------------------------------------------------------------------


def _discrete_tau_star(dist, alpha):
    v = 0
    while dist.cdf(v) <= alpha:
        v += 1
    return float(v)


ALPHA = 0.1
# name -> (sampler(rng, T), tau*)
DISTRIBUTIONS = {
    "logits_unknown_range": (
        lambda rng, T: 40 + 15 * rng.normal(size=T),
        40 + 15 * stats.norm.ppf(ALPHA),
    ),
    "heavy_tails_cauchy": (lambda rng, T: rng.standard_cauchy(size=T), stats.cauchy.ppf(ALPHA)),
    "ties_poisson": (
        lambda rng, T: rng.poisson(3.0, size=T).astype(float),
        _discrete_tau_star(stats.poisson(3.0), ALPHA),
    ),
    "probabilities_beta": (lambda rng, T: rng.beta(5, 1.5, size=T), stats.beta(5, 1.5).ppf(ALPHA)),
}


def _sps_validity(name, T, reps, seed=0):
    sample, tau_star = DISTRIBUTIONS[name]
    rng = np.random.default_rng(seed)
    n_violations, coverages = 0, []
    for _ in range(reps):
        s = sample(rng, T)
        tau = simulate_thresholds(s, ALPHA, horizon=T)
        n_violations += undercoverage_count(tau, tau_star) > 0
        coverages.append(coverage_rate(s, tau))
    return n_violations, np.array(coverages)


def _assert_sps_valid(n_violations, coverages, T, reps):
    # tau_t <= tau* at all rounds in >= 1 - 2/T of the runs (binomial 99.9% allowance)
    assert n_violations <= stats.binom.ppf(0.999, reps, 2 / T)
    # every round covers w.p. >= 1 - alpha, so the mean coverage rate does up to MC error
    slack = 3 * math.sqrt(ALPHA * (1 - ALPHA) / (T * reps))
    assert coverages.mean() >= 1 - ALPHA - slack


@pytest.mark.parametrize("name", list(DISTRIBUTIONS))
def test_sps_validity_reduced(name):
    T, reps = 2000, 25
    n_violations, coverages = _sps_validity(name, T, reps)
    _assert_sps_valid(n_violations, coverages, T, reps)


@pytest.mark.slow
@pytest.mark.parametrize("name", list(DISTRIBUTIONS))
def test_sps_validity_T10000(name):
    T, reps = 10_000, 500
    n_violations, coverages = _sps_validity(name, T, reps, seed=1)
    _assert_sps_valid(n_violations, coverages, T, reps)


def _undercoverage_of_baselines(T, reps):
    sample, tau_star = DISTRIBUTIONS["logits_unknown_range"]
    rng = np.random.default_rng(11)
    out = {"greedy": ([], []), "aci": ([], [])}
    for _ in range(reps):
        s = sample(rng, T)
        for strategy, (under, cov) in out.items():
            tau = simulate_thresholds(s, ALPHA, strategy=strategy)
            under.append(undercoverage_count(tau, tau_star))
            cov.append(coverage_rate(s, tau))
    return {k: (np.array(u), np.array(c)) for k, (u, c) in out.items()}


def _assert_baselines_undercover(res, T):
    under, cov = res["greedy"]
    assert np.all(under > 0) and cov.mean() < 1 - ALPHA - 0.05  # far below the target
    under, cov = res["aci"]
    assert np.all(under > T / 10)  # oscillates around tau*: many rounds with tau_t > tau*
    assert cov.mean() < 1 - ALPHA


def test_greedy_and_aci_undercover_reduced():
    _assert_baselines_undercover(_undercoverage_of_baselines(2000, 10), 2000)


@pytest.mark.slow
def test_greedy_and_aci_undercover_T10000():
    _assert_baselines_undercover(_undercoverage_of_baselines(10_000, 100), 10_000)


def _mean_final_regret(strategy, T, reps, seed, **params):
    rng = np.random.default_rng(seed)
    cdf = stats.norm(40, 15).cdf
    total = 0.0
    for _ in range(reps):
        s = 40 + 15 * rng.normal(size=T)
        tau = simulate_thresholds(s, ALPHA, strategy=strategy, horizon=T, **params)
        total += cumulative_regret(tau, cdf, ALPHA)[-1]
    return total / reps


def _regret_slope(Ts, reps):
    regrets = [_mean_final_regret("sps", T, reps, seed=T) for T in Ts]
    return np.polyfit(np.log(Ts), np.log(regrets), 1)[0]


def test_sps_regret_slope_reduced():
    assert _regret_slope([1000, 3000, 10_000], reps=4) < 0.75


@pytest.mark.slow
def test_sps_regret_slope_1e3_to_1e5():
    assert _regret_slope([1000, 3000, 10_000, 30_000, 100_000], reps=20) < 0.75


# Baselines as configured in the paper (no knowledge of tau*): ACI's grid, DLR with c = 1 from a
# conservative start (the 0.1% quantile), ETC with the default m = T^(2/3).
BASELINES = [
    ("greedy", {}),
    ("aci", {"learning_rate": 0.005}),
    ("aci", {"learning_rate": 0.05}),
    ("dlr", {"learning_rate": 1.0, "initial_threshold": 40 + 15 * stats.norm.ppf(0.001)}),
    ("etc", {}),
    ("conservative_etc", {}),
]


def _assert_sps_regret_lowest(reps):
    T = 10_000
    sps = _mean_final_regret("sps", T, reps, seed=12)
    for strategy, params in BASELINES:
        assert sps < _mean_final_regret(strategy, T, reps, seed=12, **params), (strategy, params)


def test_sps_regret_lowest_reduced():
    _assert_sps_regret_lowest(reps=10)


@pytest.mark.slow
def test_sps_regret_lowest_T10000():
    _assert_sps_regret_lowest(reps=100)


# -- real-data stream ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def letter_scores():
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis

    from sklearn_riskcontrol.datasets import load_letter

    X, y = load_letter(return_X_y=True)
    X, y = X.to_numpy(float), y.to_numpy()
    clf = LinearDiscriminantAnalysis().fit(X[:6000], y[:6000])
    col = np.searchsorted(clf.classes_, y[6000:])
    rows = np.arange(len(col))
    return {
        "proba": clf.predict_proba(X[6000:])[rows, col],
        "logit": clf.decision_function(X[6000:])[rows, col],
    }


def _real_data_validity(scores, T, reps, seed):
    """Streams drawn i.i.d. from the held-out pool, whose empirical distribution is G*."""
    tau_star = oracle_threshold(scores, ALPHA)
    rng = np.random.default_rng(seed)
    n_violations, cov, cov_greedy = 0, [], []
    for _ in range(reps):
        s = scores[rng.integers(0, len(scores), size=T)]
        tau = simulate_thresholds(s, ALPHA, horizon=T)
        n_violations += undercoverage_count(tau, tau_star) > 0
        cov.append(coverage_rate(s, tau))
        cov_greedy.append(coverage_rate(s, simulate_thresholds(s, ALPHA, strategy="greedy")))
    return n_violations, np.array(cov), np.array(cov_greedy)


@pytest.mark.parametrize("kind", ["proba", "logit"])
def test_sps_validity_on_letter_stream_reduced(letter_scores, kind):
    T, reps = 2000, 20
    n_violations, cov, cov_greedy = _real_data_validity(letter_scores[kind], T, reps, seed=13)
    _assert_sps_valid(n_violations, cov, T, reps)
    assert cov_greedy.mean() < 1 - ALPHA - 0.05


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["proba", "logit"])
def test_sps_validity_on_letter_stream_T10000(letter_scores, kind):
    T, reps = 10_000, 200
    n_violations, cov, cov_greedy = _real_data_validity(letter_scores[kind], T, reps, seed=14)
    _assert_sps_valid(n_violations, cov, T, reps)
    assert cov_greedy.mean() < 1 - ALPHA - 0.05
