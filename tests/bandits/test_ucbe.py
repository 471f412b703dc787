"""UCB-E, UCB-E-LRF and the uniform baseline: the selection rules against their definitions."""

import numpy as np
import pytest
from _reference_runs import RTOL_ALS_MEANS, assert_same_run, ucbelrf_refit_every_1

from sklearn_riskcontrol.bandits import (
    UCBE,
    UCBELRF,
    UniformSampling,
    make_score_matrix,
)
from sklearn_riskcontrol.evaluation import CallableOracle, MatrixOracle
from sklearn_riskcontrol.bandits._base import _RunState


class Recorder:
    def __init__(self, S):
        self.S = S
        self.log = []

    def __call__(self, i, J):
        self.log.append((i, np.array(J)))
        return self.S[i, J]


@pytest.mark.parametrize("exploration", [0.0, 0.3, 1.0, 4.0])
def test_ucbe_pulls_the_arm_with_the_largest_index(exploration):
    data = make_score_matrix(15, 120, gap=0.03, random_state=1)
    S = data.scores
    rec = Recorder(S)
    est = UCBE(budget=900, batch_size=7, exploration=exploration, random_state=0)
    est.fit(CallableOracle(rec, *S.shape))
    m, n = S.shape
    seen = np.zeros(S.shape, dtype=bool)
    for i, J in rec.log:
        cnt = seen.sum(1)
        with np.errstate(divide="ignore", invalid="ignore"):
            mean = np.where(seen, S, 0).sum(1) / cnt
            index = np.where(cnt == 0, np.inf, mean + np.sqrt(exploration / cnt))
        index[cnt == n] = -np.inf
        assert index[i] == index.max()
        assert not seen[i, J].any() and len(set(J)) == len(J)
        seen[i, J] = True
    assert seen.sum() == 900 == est.n_evaluations_
    obs_means = np.where(seen, S, 0).sum(1) / np.maximum(seen.sum(1), 1)
    np.testing.assert_allclose(est.means_[seen.any(1)], obs_means[seen.any(1)])
    best = est.means_ == np.nanmax(est.means_)
    assert best[est.best_index_]


def test_uniform_draws_are_uniform_without_replacement():
    st = _RunState(MatrixOracle(np.zeros((1, 20))), 20, np.random.RandomState(0))
    freq = np.zeros(20)
    for k in range(3000):
        st.perm[0], st.ptr[0] = None, 0
        st.counts[0] = 0
        J = st.draw_uniform(0, 5)
        assert len(set(J)) == 5
        freq[J] += 1
    np.testing.assert_allclose(freq / 3000, 0.25, atol=0.04)


def test_uniform_sampling_spreads_the_budget():
    data = make_score_matrix(10, 200, random_state=0)
    rec = Recorder(data.scores)
    est = UniformSampling(budget=0.5, batch_size=50, random_state=0)
    est.fit(CallableOracle(rec, *data.scores.shape))
    assert est.n_evaluations_ == 1000 and est.oracle_.n_evaluations_ == 1000
    counts = est.n_evaluations_per_model_
    assert counts.sum() == 1000 and counts.min() > 60
    mask = est.oracle_.revealed_
    np.testing.assert_allclose(est.means_, np.where(mask, data.scores, 0).sum(1) / counts)
    # warm start with a larger budget keeps sampling new cells only
    est.set_params(budget=0.8, warm_start=True).fit(est.oracle_)
    assert est.n_evaluations_ == 1600 == est.oracle_.n_evaluations_


def test_ucbe_finds_the_best_model_and_beats_uniform():
    data = make_score_matrix(30, 500, gap=0.05, random_state=2)
    wins = {"ucbe": 0, "uniform": 0}
    for seed in range(6):
        wins["ucbe"] += UCBE(budget=0.15, batch_size=16, random_state=seed).fit(
            data.scores).best_index_ == data.best_index
        wins["uniform"] += UniformSampling(budget=0.15, random_state=seed).fit(
            data.scores).best_index_ == data.best_index
    assert wins["ucbe"] >= 5 and wins["ucbe"] > wins["uniform"]


def _near_rank_one(m=40, n=300, seed=0):
    rng = np.random.default_rng(seed)
    skill, ease = rng.beta(5, 3, m), rng.beta(4, 2, n)
    return (rng.uniform(size=(m, n)) < np.outer(skill, ease)).astype(float)


def test_ucbelrf_scores_the_most_uncertain_examples_of_the_best_index():
    S = _near_rank_one()
    params = dict(budget=0.2, batch_size=8, n_members=8, n_sweeps=5, random_state=0)
    calls = {"k": 0}
    warmup = int(np.ceil(0.05 * S.size))

    def score(i, J):
        if calls["k"] >= warmup + 5 * 8:  # pause at the 6th step after the warm-up
            raise RuntimeError("paused")
        calls["k"] += len(J)
        return S[i, J]

    est = UCBELRF(**params)
    oracle = CallableOracle(score, *S.shape)
    with pytest.raises(RuntimeError):
        est.fit(oracle)
    st = est._state
    i, J, _ = st.queue[0]
    assert st.index[i] == st.index.max()
    free = np.flatnonzero(~st.obs[i])
    top = free[np.argsort(-st.R[i, free])[: J.size]]
    np.testing.assert_array_equal(np.sort(J), np.sort(top))
    # the index and the estimate are the definitions of Zhou et al. (Alg. 2)
    U = ~st.obs
    obs_sum = np.where(st.obs, S, 0).sum(1)
    np.testing.assert_allclose(st.index, (obs_sum + (U * (st.E + 5.0 * st.R)).sum(1)) / S.shape[1])
    np.testing.assert_allclose(est.means_, (obs_sum + (U * st.E).sum(1)) / S.shape[1])
    calls["k"] = -10**6
    est.resume()
    ref = UCBELRF(**params).fit(S)
    assert est.completed_ and est.best_index_ == ref.best_index_
    np.testing.assert_allclose(est.means_, ref.means_)


def test_ucbelrf_warmup_side_scores_and_errors():
    S = _near_rank_one(seed=1)
    est = UCBELRF(budget=0.15, n_members=8, n_sweeps=4, random_state=0).fit(S)
    assert est.history_["n_evaluations"][0] == int(np.ceil(0.05 * S.size))
    assert est.n_evaluations_ == int(np.ceil(0.15 * S.size))
    assert est.predictions_.shape == S.shape
    side = _near_rank_one(m=20, seed=2)
    est2 = UCBELRF(budget=0.15, n_members=8, n_sweeps=4, random_state=0).fit(S, side_scores=side)
    assert est2.n_evaluations_ == est.n_evaluations_
    with pytest.raises(ValueError, match="warm-up"):
        UCBELRF(budget=10).fit(S)
    with pytest.raises(ValueError, match="n_members"):
        UCBELRF(n_members=0).fit(S)
    frac = np.clip(S * 0.7 + 0.1, 0, 1)
    UCBELRF(budget=0.1, n_members=4, n_sweeps=2, random_state=0).fit(frac)


def test_ucbelrf_finds_best_on_near_low_rank_matrix():
    S = _near_rank_one(m=60, n=300, seed=3)
    best = int(np.argmax(S.mean(1)))
    hits = sum(
        UCBELRF(budget=0.15, n_members=16, n_sweeps=5, random_state=s).fit(S).best_index_ == best
        for s in range(3)
    )
    assert hits >= 2


def test_ucbelrf_warm_refits_stay_converged():
    """Two warm-started sweeps per refit track the ALS solution: 50 more sweeps at the end of
    a run barely move the per-model estimates (top-2 gaps here are ~0.01) nor the choice."""
    S = _near_rank_one(m=40, n=300, seed=4)
    est = UCBELRF(budget=0.2, n_members=16, random_state=0).fit(S)
    st = est._state
    before = est.means_.copy()
    st.ens.fit(50)
    est._refresh(st)
    assert np.max(np.abs(st.est - before)) < 1e-3
    assert int(np.argmax(st.est)) == est.best_index_


@pytest.mark.slow
def test_ucbelrf_vs_ucbe_on_150_x_800_near_low_rank():
    S = _near_rank_one(m=150, n=800, seed=11)
    best = int(np.argmax(S.mean(1)))
    acc = {"lrf": [], "ucbe": []}
    for s in range(3):
        acc["lrf"].append(UCBELRF(budget=0.15, random_state=s).fit(S).best_index_ == best)
        acc["ucbe"].append(UCBE(budget=0.15, batch_size=32, random_state=s).fit(S).best_index_ == best)
    assert np.mean(acc["lrf"]) >= 2 / 3


def test_ucbelrf_refit_every_one_is_the_former_default():
    # the run made by the code before `refit_every` existed, a refit after every batch (recorded
    # in reference_runs.npz): same steps, means to rtol (see _reference_runs.py)
    est = ucbelrf_refit_every_1()
    assert est.refit_every == 1 and est.n_steps_ == 95
    assert_same_run(est, "ucbelrf_refit_every_1", means_rtol=RTOL_ALS_MEANS)


def test_ucbelrf_auto_refits_a_fixed_number_of_times(monkeypatch):
    from sklearn_riskcontrol.bandits.lowrank import ALSEnsemble

    fits = []
    real_fit = ALSEnsemble.fit
    monkeypatch.setattr(ALSEnsemble, "fit", lambda self, n: fits.append(n) or real_fit(self, n))
    rec = Recorder(make_score_matrix(20, 1500, random_state=2).scores)
    est = UCBELRF(budget=0.15, batch_size=16, n_members=4, random_state=0)
    est.fit(CallableOracle(rec, 20, 1500))
    st = est._state
    steps = est.n_steps_
    warmup = int(np.ceil(0.05 * 20 * 1500))
    assert steps == -(-(est.n_evaluations_ - warmup) // 16) == 188
    tau = -(-steps // 64)  # 3 steps between refits
    assert fits == [est.n_sweeps] + [est.refit_sweeps] * (-(-steps // tau))  # + the last step
    # between refits the index is kept up to date: it equals its definition on the final E, R
    m, n = rec.S.shape
    U = ~st.obs
    obs_sum = np.where(st.obs, rec.S, 0).sum(1)
    np.testing.assert_allclose(st.index, (obs_sum + (U * (st.E + 5.0 * st.R)).sum(1)) / n,
                               rtol=0, atol=1e-12)
    np.testing.assert_allclose(est.means_, np.clip((obs_sum + (U * st.E).sum(1)) / n, 0, 1),
                               rtol=0, atol=1e-12)
    # no cell is scored twice although E, R stay fixed for several steps
    cells = np.concatenate([i * n + np.atleast_1d(J) for i, J in rec.log])
    assert np.unique(cells).size == cells.size == est.n_evaluations_


def test_ucbelrf_refit_every_validation():
    S = make_score_matrix(10, 100, random_state=0).scores
    with pytest.raises(ValueError, match="refit_every"):
        UCBELRF(refit_every="often").fit(S)
    with pytest.raises(ValueError, match="refit_every"):
        UCBELRF(refit_every=0).fit(S)
