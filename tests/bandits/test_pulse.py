"""PULSE: exact unbiasedness of the one-step estimate (also across refits), CI validity, errors."""

import itertools
import pickle
import warnings

import numpy as np
import pytest
from _lowrank_reference import plain_fit_dense_alternating
from _reference_runs import RTOL_LOGISTIC_FIT, assert_same_run, side_run
from sklearn.base import clone

from sklearn_riskcontrol import RiskControlWarning
from sklearn_riskcontrol.bandits import (
    PULSE,
    UCBE,
    NaivePooling,
    freedman_radius,
    make_score_matrix,
)
from sklearn_riskcontrol.evaluation import CallableOracle
import sklearn_riskcontrol.bandits.lowrank as lowrank
from sklearn_riskcontrol.bandits.lowrank import fit_logistic_factors


def _tiny(seed=0, m=5, n=12, n_side=10):
    data = make_score_matrix(m, n, n_side_models=n_side, gap=0.0, random_state=seed)
    return data


def _paused(est, S, side, n_calls):
    """Run ``est`` on S until the oracle has answered ``n_calls`` queries (then it raises)."""
    calls = {"k": 0}

    def score(i, J):
        if calls["k"] >= n_calls:
            raise RuntimeError("paused")
        calls["k"] += 1
        return S[i, J]

    oracle = CallableOracle(score, *S.shape)
    try:
        est.fit(oracle, side_scores=side)
    except RuntimeError as exc:
        assert "paused" in str(exc)
    return est, calls


def _step_context(est, i):
    st = est._state
    N = int(st.n_avail[i] - st.counts[i])
    F = st.tot[i] - st.op[i]
    Phi = st.tot2[i] - st.op2[i]
    lam = est._lambda(st, i, F, Phi, N)
    U = np.setdiff1d(np.arange(st.n), st.observed(i))
    return st, N, F, Phi, lam, U


def _enumerated_mean(est, S, i, b, F=None):
    """Exact mean of PULSE's one-step estimate over all batches J of size b from U_i."""
    st, N, F0, _, lam, U = _step_context(est, i)
    F = F0 if F is None else F
    thetas = []
    for J in itertools.combinations(U, b):
        J = np.array(J)
        Sh = est._predict_row(st, i, J)
        theta, _, _ = est._one_step(st, i, S[i, J], Sh, lam, F, N)
        thetas.append(theta)
    return np.mean(thetas), lam


@pytest.mark.parametrize("n_calls", [5, 6, 8, 9, 12, 15])
def test_one_step_estimate_is_exactly_unbiased_across_refits(n_calls):
    # m=5 models, warm-up = 5 calls, refit every 3 steps: pauses right after the first fit (5),
    # between refits (6, 8), right after refits (9, 12) and later (15).
    data = _tiny()
    S = data.scores
    est = PULSE(budget=50, batch_size=3, refit_every=3, rank=2, random_state=1)
    est, _ = _paused(est, S, data.side_scores, n_calls)
    st = est._state
    assert st.warmup_done and not est.completed_
    checked = 0
    for i in range(S.shape[0]):
        st, N, F, Phi, lam, U = _step_context(est, i)
        if N < 3:
            continue
        # the bookkeeping equals a direct recomputation with the *current* predictions
        np.testing.assert_allclose(F, est._predict_row(st, i, U).sum(), rtol=1e-12)
        np.testing.assert_allclose(Phi, (est._predict_row(st, i, U) ** 2).sum(), rtol=1e-12)
        mean, lam = _enumerated_mean(est, S, i, 3)
        assert abs(mean - S[i].mean()) < 1e-12
        checked += 1
    assert checked >= 3
    if n_calls >= 9:
        assert st.n_refits >= 2


def test_stale_running_sum_would_be_biased():
    # The regression the spec warns about: sum_{U_i} S_hat computed as "total minus a running sum
    # over O_i accumulated with older predictions" is biased after a refit. Emulate older
    # predictions with perturbed model factors and check that the enumeration detects it.
    data = _tiny()
    S = data.scores
    est, _ = _paused(PULSE(budget=50, batch_size=3, refit_every=3, rank=2, random_state=1), S,
                     data.side_scores, 12)
    st = est._state
    i = int(np.argmax(st.n_avail - st.counts))
    W_old = st.W.copy()
    W_old[i] += 0.5
    O = st.observed(i)
    saved = st.W
    st.W = W_old
    stale_obs = est._predict_row(st, i, O).sum()
    st.W = saved
    F_stale = st.tot[i] - stale_obs
    mean_ok, lam = _enumerated_mean(est, S, i, 3)
    mean_bad, _ = _enumerated_mean(est, S, i, 3, F=F_stale)
    assert abs(mean_ok - S[i].mean()) < 1e-12
    if lam > 0:
        assert abs(mean_bad - S[i].mean()) > 1e-3


def test_one_step_unbiased_monte_carlo_larger_matrix():
    data = make_score_matrix(30, 400, n_side_models=40, gap=0.03, random_state=3)
    S = data.scores
    est, _ = _paused(PULSE(budget=0.5, batch_size=16, refit_every=7, rank=3, random_state=0), S,
                     data.side_scores, 30 + 25)
    rng = np.random.default_rng(0)
    for i in [0, 7, 19]:
        st, N, F, Phi, lam, U = _step_context(est, i)
        thetas = np.empty(4000)
        for k in range(thetas.size):
            J = rng.choice(U, 16, replace=False)
            Sh = est._predict_row(st, i, J)
            thetas[k] = est._one_step(st, i, S[i, J], Sh, lam, F, N)[0]
        se = thetas.std() / np.sqrt(thetas.size)
        assert abs(thetas.mean() - S[i].mean()) < 4.5 * se + 1e-12


def _run_many(Strategy, data, side, n_rep, **params):
    out = []
    for seed in range(n_rep):
        est = Strategy(random_state=seed, **params).fit(data.scores, side_scores=side)
        out.append(est)
    return out


def test_martingale_sum_is_centred_and_naive_pooling_is_biased():
    # PULSE: sum over an arm's pulls of (theta - mu) is a martingale, so its mean is 0 for every
    # arm (whatever the adaptive number of pulls). Naive pooling's estimate is biased.
    data = make_score_matrix(20, 300, n_side_models=30, gap=0.03, random_state=5)
    fact = fit_logistic_factors(data.side_scores, rank=2, random_state=0)
    params = dict(budget=0.2, batch_size=8, refit_every=5, rank=2)
    n_rep = 40
    dev = []
    for est in _run_many(PULSE, data, fact, n_rep, **params):
        st = est._state
        dev.append(st.theta_sum - st.n_theta * data.means)
    dev = np.array(dev)
    se = dev.std(0, ddof=1) / np.sqrt(n_rep)
    z_pulse = dev.mean(0) / np.maximum(se, 1e-12)
    assert np.abs(z_pulse).max() < 4.5
    assert np.abs(dev.mean(0)).sum() / np.abs(dev).mean(0).sum() < 0.5

    # pooled over arms: PULSE's martingale statistic is centred ...
    pooled = dev.sum(1)
    assert abs(pooled.mean()) < 4 * pooled.std(ddof=1) / np.sqrt(n_rep)
    # ... while naive pooling's error, on the same data and budget, has a systematic part
    err = np.array(
        [e.means_ - data.means for e in _run_many(NaivePooling, data, fact, 10, **params)]
    ).mean(1)
    assert abs(err.mean()) > 4 * err.std(ddof=1) / np.sqrt(err.size)


@pytest.mark.filterwarnings("ignore::sklearn_riskcontrol.RiskControlWarning")
def test_confidence_intervals_cover():
    data = make_score_matrix(15, 250, n_side_models=30, gap=0.03, random_state=2)
    fact = fit_logistic_factors(data.side_scores, rank=2, random_state=0)
    n_rep = 30
    sim, marg = [], []
    for est in _run_many(PULSE, data, fact, n_rep, budget=0.3, batch_size=8, refit_every=5, rank=2):
        ci = est.confidence_intervals(0.2)
        cov = (ci[:, 0] <= data.means) & (data.means <= ci[:, 1])
        sim.append(cov.all())
        ci1 = est.confidence_intervals(0.2, simultaneous=False)
        marg.append(((ci1[:, 0] <= data.means) & (data.means <= ci1[:, 1])).mean())
        assert (ci[:, 1] - ci[:, 0] >= ci1[:, 1] - ci1[:, 0] - 1e-12).all()
    assert np.mean(sim) >= 0.8 - 0.1
    assert np.mean(marg) >= 0.8 - 0.05


def test_freedman_radius_solves_the_bound():
    K, v, d = np.array([1, 10, 1000]), np.array([0.5, 0.1, 0.01]), 0.05
    eps = freedman_radius(K, v, d)
    np.testing.assert_allclose(2 * np.exp(-K * eps**2 / (2 * (v + 2 * eps / 3))), d)
    assert np.isinf(freedman_radius(0, 0.1, 0.05))


def test_fully_scored_model_has_exact_mean_and_zero_width():
    data = make_score_matrix(4, 40, n_side_models=10, gap=0.1, random_state=0)
    est = PULSE(budget=1.0, batch_size=8, refit_every=2, rank=1, random_state=0)
    est.fit(data.scores, side_scores=data.side_scores)
    np.testing.assert_allclose(est.means_, data.means)
    ci = est.confidence_intervals(0.05)
    np.testing.assert_allclose(ci[:, 0], data.means)
    np.testing.assert_allclose(ci[:, 1], data.means)
    assert est.best_index_ == data.best_index


def test_without_side_information_runs_and_is_unbiased():
    data = make_score_matrix(5, 12, gap=0.0, random_state=4)
    est, _ = _paused(PULSE(budget=50, batch_size=3, refit_every=2, rank=1, random_state=0),
                     data.scores, None, 9)
    for i in range(5):
        st, N, *_ = _step_context(est, i)
        if N >= 3:
            mean, _ = _enumerated_mean(est, data.scores, i, 3)
            assert abs(mean - data.scores[i].mean()) < 1e-12
    full = PULSE(budget=0.5, batch_size=4, refit_every=3, rank=1, random_state=0)
    full.fit(make_score_matrix(10, 60, random_state=0).scores)
    assert full.n_refits_ >= 2


def test_errors():
    data = make_score_matrix(5, 30, n_side_models=5, random_state=0)
    S = data.scores.copy()
    S[0, 0] = 0.5
    with pytest.raises(ValueError, match=r"binary.*fractional_scores=True"):
        PULSE(budget=100, batch_size=4).fit(S, side_scores=data.side_scores)
    est = PULSE(budget=100, batch_size=4, fractional_scores=True, rank=1, random_state=0)
    est.fit(S, side_scores=data.side_scores)
    side = data.side_scores.copy()
    side[1, 2] = 0.3
    with pytest.raises(ValueError, match="side_scores.*binary"):
        PULSE(budget=100, batch_size=4).fit(data.scores, side_scores=side)
    with pytest.raises(ValueError, match="warm-up"):
        PULSE(budget=10, batch_size=4).fit(data.scores)
    with pytest.raises(ValueError, match="Mismatched shapes"):
        PULSE(budget=100, batch_size=4).fit(data.scores, side_scores=np.ones((3, 7)))
    with pytest.raises(ValueError, match="exceeds"):
        PULSE(budget=151).fit(data.scores)
    with pytest.raises(ValueError, match="batch_size"):
        PULSE(batch_size=0).fit(data.scores)
    with pytest.raises(ValueError, match="delta"):
        est.confidence_intervals(1.5)


def test_sklearn_conventions_and_history():
    data = make_score_matrix(8, 100, n_side_models=10, random_state=0)
    est = PULSE(budget=300, batch_size=8, refit_every=4, rank=2, random_state=0)
    assert clone(est).get_params() == est.get_params()
    est.fit(data.scores, side_scores=data.side_scores)
    h = est.history_
    assert h["n_evaluations"][0] == 64 and h["n_evaluations"][-1] == 300
    assert np.all(np.diff(h["n_evaluations"]) > 0)
    assert len(h["best_index"]) == est.n_steps_ + 1
    est2 = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(est2.confidence_intervals(0.1), est.confidence_intervals(0.1))
    # same seed, same run
    again = PULSE(budget=300, batch_size=8, refit_every=4, rank=2, random_state=0)
    again.fit(data.scores, side_scores=data.side_scores)
    np.testing.assert_array_equal(again.means_, est.means_)


def test_resume_after_failure_matches_uninterrupted_run():
    data = make_score_matrix(6, 80, n_side_models=10, random_state=1)
    params = dict(budget=250, batch_size=5, refit_every=3, rank=2, random_state=2)
    ref = PULSE(**params).fit(data.scores, side_scores=data.side_scores)
    calls = np.zeros(data.scores.shape, dtype=int)
    state = {"fail": True, "k": 0}

    def score(i, J):
        state["k"] += 1
        if state["fail"] and state["k"] in (4, 15, 16):
            raise ConnectionError("timeout")
        calls[i, J] += 1
        return data.scores[i, J]

    est = PULSE(**params)
    oracle = CallableOracle(score, *data.scores.shape)
    with pytest.raises(ConnectionError):
        est.fit(oracle, side_scores=data.side_scores)
    for _ in range(5):
        try:
            est.resume()
            break
        except ConnectionError:
            continue
    assert est.completed_ and calls.max() == 1 and calls.sum() == 250
    np.testing.assert_allclose(est.means_, ref.means_)
    assert est.best_index_ == ref.best_index_


def test_pulse_beats_naive_and_matches_ucbe_on_easy_problem():
    data = make_score_matrix(20, 400, n_side_models=40, gap=0.08, random_state=0)
    fact = fit_logistic_factors(data.side_scores, rank=3, random_state=0)
    hits = {"PULSE": 0, "UCBE": 0}
    for seed in range(5):
        p = PULSE(budget=0.3, batch_size=16, refit_every=10, rank=3, random_state=seed)
        hits["PULSE"] += p.fit(data.scores, side_scores=fact).best_index_ == data.best_index
        u = UCBE(budget=0.3, batch_size=16, random_state=seed).fit(data.scores)
        hits["UCBE"] += u.best_index_ == data.best_index
    assert hits["PULSE"] >= 4


@pytest.mark.slow
@pytest.mark.parametrize("batch_size", [8, 1])
def test_confidence_interval_validity_study(batch_size):
    # Monte Carlo over 300 runs: simultaneous intervals cover all means at >= 1 - delta, and
    # each per-model interval covers its mean at >= 1 - delta (2 standard errors of slack).
    data = make_score_matrix(20, 300, n_side_models=40, gap=0.03, random_state=7)
    fact = fit_logistic_factors(data.side_scores, rank=3, random_state=0)
    delta, n_rep = 0.1, 300
    sim, marg = [], []
    for seed in range(n_rep):
        est = PULSE(budget=0.25, batch_size=batch_size, refit_every=5, rank=3, random_state=seed)
        est.fit(data.scores, side_scores=fact)
        ci = est.confidence_intervals(delta)
        sim.append(((ci[:, 0] <= data.means) & (data.means <= ci[:, 1])).all())
        ci1 = est.confidence_intervals(delta, simultaneous=False)
        marg.append(((ci1[:, 0] <= data.means) & (data.means <= ci1[:, 1])).mean())
    slack = 2 * np.sqrt(delta * (1 - delta) / n_rep)
    assert np.mean(sim) >= 1 - delta - slack
    assert np.mean(marg) >= 1 - delta - slack


@pytest.mark.slow
def test_martingale_study():
    data = make_score_matrix(25, 400, n_side_models=40, gap=0.03, random_state=8)
    fact = fit_logistic_factors(data.side_scores, rank=3, random_state=0)
    n_rep = 300
    dev = np.array([
        (lambda st: st.theta_sum - st.n_theta * data.means)(
            PULSE(budget=0.2, batch_size=8, refit_every=4, rank=3, random_state=s)
            .fit(data.scores, side_scores=fact)._state)
        for s in range(n_rep)
    ])
    z = dev.mean(0) / (dev.std(0, ddof=1) / np.sqrt(n_rep))
    # 25 arms: max |z| of 25 standard normals stays below 4 with overwhelming probability
    assert np.abs(z).max() < 4


def test_dataframe_and_completer_as_side_information():
    pd = pytest.importorskip("pandas")
    from sklearn_riskcontrol.bandits import LowRankScoreCompleter

    data = make_score_matrix(8, 120, n_side_models=20, random_state=3)
    comp = LowRankScoreCompleter(rank=2, random_state=0).fit(data.side_scores)
    params = dict(budget=400, batch_size=8, refit_every=4, rank=2, random_state=0)
    a = PULSE(**params).fit(pd.DataFrame(data.scores), side_scores=comp)
    b = PULSE(**params).fit(data.scores, side_scores=comp.factorization_)
    np.testing.assert_array_equal(a.means_, b.means_)
    assert a.factorization_.example_factors.shape == (120, 2)
    with pytest.raises(ValueError, match="examples"):
        PULSE(**params).fit(data.scores[:, :100], side_scores=comp)


def test_results_do_not_depend_on_the_blocked_side_fit(monkeypatch):
    # issue 13 made the side-information fit blocked and buffer-reusing: a PULSE run must stay
    # identical, bit for bit, to a run whose side fit is the plain whole-matrix implementation
    data = make_score_matrix(40, 601, n_side_models=60, gap=0.02, random_state=3)
    runs = []
    for fit in (lowrank._fit_dense_alternating, plain_fit_dense_alternating):
        monkeypatch.setattr(lowrank, "_fit_dense_alternating", fit)
        monkeypatch.setattr(lowrank, "_BLOCK_CELLS", 1000)
        est = PULSE(budget=0.2, batch_size=16, refit_every=10, rank=4, random_state=0)
        runs.append(est.fit(data.scores, side_scores=data.side_scores))
    ours, plain = runs
    assert ours.n_refits_ > 2 and ours.factorization_.n_iter == plain.factorization_.n_iter
    assert np.array_equal(ours.means_, plain.means_)
    assert ours.best_index_ == plain.best_index_
    for key in ("n_evaluations", "best_index", "arm"):
        assert np.array_equal(ours.history_[key], plain.history_[key])
    assert np.array_equal(ours.lambdas_, plain.lambdas_, equal_nan=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RiskControlWarning)  # some intervals are vacuous here
        assert np.array_equal(ours.confidence_intervals(0.1), plain.confidence_intervals(0.1))
    assert np.array_equal(ours.factorization_.example_factors, plain.factorization_.example_factors)


@pytest.mark.parametrize(
    "cls, refit_every, n_refits, name",
    [
        (PULSE, 1000, 1, "pulse_refit_1000"),  # 1000 was the default before "auto"
        (PULSE, 30, 14, "pulse_refit_30"),
        (NaivePooling, 1000, 1, "naive_pooling_refit_1000"),
        (NaivePooling, 30, 14, "naive_pooling_refit_30"),
    ],
)
def test_explicit_refit_every_gives_the_former_runs(cls, refit_every, n_refits, name):
    # the runs made by the code before refit_every="auto" existed (recorded in
    # reference_runs.npz): same steps and refits; means to rtol, as the logistic factor fit's
    # stopping point moves with the BLAS kernel (see _reference_runs.py)
    est = side_run(cls.__name__, refit_every)
    assert type(est) is cls and est.refit_every == refit_every
    assert (est.n_steps_, est.n_refits_) == (420, n_refits)
    assert_same_run(est, name, means_rtol=RTOL_LOGISTIC_FIT)


@pytest.mark.parametrize("side", [True, False])
def test_auto_refit_count_does_not_grow_with_the_matrix(side):
    # tau = ceil(steps after the warm-up / 20): about 20 refits (+ the one ending the warm-up)
    # whatever the number of examples, so the refit cost grows linearly with it
    for n in (300, 1200):
        data = make_score_matrix(8, n, n_side_models=8 if side else 0, random_state=0)
        est = PULSE(budget=0.3, batch_size=8, rank=2, random_state=0)
        est.fit(data.scores, side_scores=data.side_scores if side else None)
        planned = -(-(est.n_evaluations_ - 8 * 8) // 8)  # steps if no model gets full
        tau = -(-planned // 20)
        assert est.n_refits_ == 1 + (est.n_steps_ - 1) // tau  # a refit is due before a step
        assert 10 <= est.n_refits_ <= 21  # ceil rounding: between 20 / 2 and 20, plus one


def test_a_single_model_is_not_silently_the_best():
    from sklearn.dummy import DummyClassifier

    from sklearn_riskcontrol.bandits import UCBELRF, BestModelSelector, UniformSampling

    S = (np.random.default_rng(0).random((1, 200)) < 0.6).astype(float)
    message = ("was given a single model: there is nothing to choose, so that model is returned "
               "as the best by default")
    for est in (PULSE(budget=0.5, batch_size=8), UCBE(budget=0.5), UCBELRF(budget=0.5),
                UniformSampling(budget=0.5), NaivePooling(budget=0.5, batch_size=8)):
        with pytest.warns(RiskControlWarning, match=f"{type(est).__name__} {message}"):
            assert est.set_params(random_state=0).fit(S).best_index_ == 0
    X, y = np.zeros((100, 1)), np.arange(100) % 2
    with pytest.warns(RiskControlWarning, match=message):
        BestModelSelector([DummyClassifier().fit(X, y)], random_state=0).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RiskControlWarning)  # two models: nothing to say
        PULSE(budget=0.5, batch_size=8, random_state=0).fit(np.vstack([S, 1 - S]))
