"""UCB-E-LRF's ablations and baselines (Zhou et al. 2025, Algorithms 2 and 4-6).

Every selection rule is checked, at every step of a run, against a direct computation of the
paper's formula from the cells observed so far and the ensemble's current predictions.
"""

import pickle

import numpy as np
import pytest
from _reference_runs import (
    RTOL_ALS_MEANS,
    RTOL_ALS_UNCERTAINTIES,
    assert_same_run,
    ucbelrf_default,
    ucbelrf_side_cv,
)
from sklearn.utils.estimator_checks import (
    check_get_params_invariance,
    check_no_attributes_set_in_init,
    check_parameters_default_constructible,
    check_set_params,
)

from sklearn_riskcontrol.bandits import (
    UCBELRF,
    FilledSubset,
    UniformLRF,
    make_score_matrix,
)
from sklearn_riskcontrol.evaluation import (
    CallableOracle,
    MatrixOracle,
)


def _near_rank_one(m=20, n=120, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.uniform(size=(m, n)) < np.outer(rng.beta(5, 3, m), rng.beta(4, 2, n))).astype(float)


class _Checker:
    """Scoring back-end that, before every adaptive step is paid for, recomputes the step's
    choice from the paper's formula (observed cells + the ensemble's E_hat, R in force)."""

    def __init__(self, S, rule, eta, batch_size):
        self.S, self.rule, self.eta, self.b = S, rule, eta, batch_size
        self.est = None
        self.steps = 0
        self.percentiles = []  # rank of the chosen examples' R among the candidates, in [0, 1]

    def __call__(self, i, J):
        st = self.est._state
        J = np.asarray(J)
        if not st.warmup_done:
            return self.S[i, J]
        S, O, E, R = self.S, st.obs, st.E, st.R
        m, n = S.shape
        U = ~O
        cnt = O.sum(1)
        obs_sum = np.where(O, S, 0).sum(1)
        if self.rule == "score_only":  # Alg. 6
            with np.errstate(divide="ignore"):
                bonus = np.where(cnt > 0, np.sqrt(self.eta / np.maximum(cnt, 1)), np.inf)
            index = (obs_sum + (U * E).sum(1)) / n + bonus
        elif self.rule == "all":  # Alg. 2 as printed: eta * R summed over every cell
            index = (obs_sum + (U * E).sum(1) + self.eta * R.sum(1)) / n
        else:  # Alg. 2 with the uncertainty of the unscored cells only (the default)
            index = (obs_sum + (U * (E + self.eta * R)).sum(1)) / n
        index[cnt == n] = -np.inf
        np.testing.assert_allclose(st.index, index, rtol=0, atol=1e-12)
        assert index[i] == index.max()
        cand = np.flatnonzero(U[i])
        b = min(self.b, st.budget - st.n_used, cand.size)
        assert J.size == b == np.unique(J).size and U[i, J].all()
        order = np.argsort(np.argsort(R[i, cand]))  # 0 = smallest uncertainty
        pos = np.searchsorted(cand, J)
        self.percentiles.extend(order[pos] / max(cand.size - 1, 1))
        if self.rule != "score_only":  # Top-b of R among the unscored examples (ties: any)
            np.testing.assert_array_equal(np.sort(R[i, J]), np.sort(R[i, cand])[cand.size - b:])
        self.steps += 1
        return S[i, J]


@pytest.mark.parametrize("rule, eta, refit_every", [
    ("unscored", 5.0, "auto"), ("all", 5.0, "auto"), ("all", 2.0, 1),
    ("score_only", 1.0, "auto"), ("score_only", 0.0, 1),
])
def test_ucbelrf_steps_follow_the_papers_formulas(rule, eta, refit_every):
    S = _near_rank_one(seed=1)
    params = {"uncertainty_cells": "all"} if rule == "all" else {}
    if rule == "score_only":
        params = {"acquisition": "score_only"}
    chk = _Checker(S, rule, eta, 6)
    est = UCBELRF(budget=0.4, batch_size=6, eta=eta, n_members=6, refit_every=refit_every,
                  random_state=0, **params)
    chk.est = est
    est.fit(CallableOracle(chk, *S.shape))
    assert est.n_evaluations_ == int(np.ceil(0.4 * S.size))
    assert chk.steps == est.n_steps_ > 100
    # the estimate is the paper's (1/n)[sum_O S + sum_U E_hat] on the final refit
    st = est._state
    est_def = (np.where(st.obs, S, 0).sum(1) + (~st.obs * st.E).sum(1)) / S.shape[1]
    np.testing.assert_allclose(est.means_, np.clip(est_def, 0, 1), rtol=0, atol=1e-12)
    mean_pct = np.mean(chk.percentiles)
    if rule == "score_only":
        # uniform examples: their uncertainty ranks average 1/2 (SE here < 0.01); the other
        # rules' top-b choice is asserted exactly at every step
        assert abs(mean_pct - 0.5) < 0.05


@pytest.mark.parametrize("explicit", [False, True])
def test_ucbelrf_default_is_the_run_before_acquisition_options(explicit):
    # the runs made by the code before `acquisition` / `uncertainty_cells` existed (recorded in
    # reference_runs.npz): the defaults, and the defaults spelled out, still make them, step by
    # step; estimates to rtol (BLAS-dependent last bits, see _reference_runs.py)
    kw = {"acquisition": "uncertainty", "uncertainty_cells": "unscored"} if explicit else {}
    est = ucbelrf_default(**kw)
    assert est.n_steps_ == 95
    assert_same_run(est, "ucbelrf_default", means_rtol=RTOL_ALS_MEANS,
                    uncertainties_rtol=RTOL_ALS_UNCERTAINTIES)
    est = ucbelrf_side_cv(**kw)
    assert est.n_steps_ == 226
    assert_same_run(est, "ucbelrf_side_cv", means_rtol=RTOL_ALS_MEANS)


def test_uncertainty_cells_all_changes_the_index_by_eta_times_the_scored_cells_spread():
    S = _near_rank_one(seed=2)
    a = UCBELRF(budget=0.3, batch_size=6, n_members=6, random_state=0).fit(S)
    b = UCBELRF(budget=0.3, batch_size=6, n_members=6, uncertainty_cells="all", random_state=0).fit(S)
    assert a.history_["arm"].tolist() != b.history_["arm"].tolist()
    st = b._state
    diff = 5.0 * (st.obs * st.R).sum(1) / S.shape[1]  # eta * sum over the scored cells
    with np.errstate(invalid="ignore"):
        base = (np.where(st.obs, S, 0).sum(1) + (~st.obs * (st.E + 5.0 * st.R)).sum(1)) / S.shape[1]
    live = np.isfinite(st.index)
    np.testing.assert_allclose(st.index[live], (base + diff)[live], rtol=0, atol=1e-12)
    assert diff.max() > 0  # (a model whose members agree everywhere has R = 0)


def test_filled_subset_scores_whole_random_examples():
    S = make_score_matrix(7, 90, random_state=3).scores
    m, n = S.shape
    for batch_size in (1, 4):
        est = FilledSubset(budget=200, batch_size=batch_size, random_state=0).fit(S)
        rev = est.oracle_.revealed_
        cols = np.flatnonzero(rev.any(0))
        assert rev[:, cols].all() and cols.size == 200 // m == 28  # whole examples only
        assert est.n_evaluations_ == 28 * m and est.completed_
        np.testing.assert_array_equal(np.diff(est.history_["n_evaluations"])[:-1], batch_size * m)
        # Alg. 4's estimate: every model's mean on the same subset, argmax returned
        np.testing.assert_allclose(est.means_, S[:, cols].mean(1), rtol=0, atol=1e-15)
        assert est.means_[est.best_index_] == est.means_.max()
    # the subset is uniform: each example drawn with probability 28 / 90 (SE 0.012 per example
    # over 600 seeds; max over 90 examples within 0.08)
    freq = np.zeros(n)
    for seed in range(600):
        freq += FilledSubset(budget=200, batch_size=5, random_state=seed).fit(S).oracle_.revealed_[0]
    assert np.abs(freq / 600 - 28 / 90).max() < 0.08
    # warm start: more whole examples, none re-scored
    est = FilledSubset(budget=70, random_state=0).fit(S)
    est.set_params(budget=140, warm_start=True).fit(est.oracle_)
    assert est.n_evaluations_ == 140 == est.oracle_.n_evaluations_


def test_filled_subset_with_missing_cells_and_errors():
    S = make_score_matrix(5, 40, random_state=4).scores
    S[0, :10] = np.nan  # model 0 cannot be scored on the first 10 examples
    oracle = MatrixOracle(S, missing="exclude")
    est = FilledSubset(budget=1.0, batch_size=3, random_state=0).fit(oracle)
    assert est.n_evaluations_ == int((~np.isnan(S)).sum())
    np.testing.assert_allclose(est.means_, np.nanmean(S, axis=1))
    with pytest.raises(ValueError, match="budget.*whole examples"):
        FilledSubset(budget=4).fit(make_score_matrix(5, 40, random_state=4).scores)
    with pytest.raises(ValueError, match="batch_size"):
        FilledSubset(batch_size=0).fit(S[1:])


def test_uniform_lrf_draws_uniform_cells_and_returns_the_low_rank_estimate():
    S = _near_rank_one(m=12, n=80, seed=3)
    log = []
    est = UniformLRF(budget=0.5, batch_size=16, n_members=6, random_state=0)

    def score(i, J):
        log.append((est._state.warmup_done, i, np.asarray(J)))
        return S[i, J]

    est.fit(CallableOracle(score, *S.shape))
    m, n = S.shape
    cells = np.concatenate([i * n + J for _, i, J in log])
    assert np.unique(cells).size == cells.size == est.n_evaluations_ == S.size // 2
    assert est.history_["n_evaluations"][0] == int(np.ceil(0.05 * S.size))
    assert (est.history_["arm"][1:] == -1).all()  # steps span several models
    st = est._state
    E, _ = st.ens.mean_std(rows=slice(0, m))  # refitted after the last batch
    np.testing.assert_array_equal(st.E, E)
    est_def = (np.where(st.obs, S, 0).sum(1) + (~st.obs * E).sum(1)) / n
    np.testing.assert_allclose(est.means_, np.clip(est_def, 0, 1), rtol=0, atol=1e-12)
    assert est.best_index_ == int(np.argmax(est_def)) or est_def.max() == est_def[est.best_index_]
    # the cells of the active phase are uniform: per-model counts ~ Hypergeometric, and over
    # many seeds each cell is drawn with probability 1/2
    freq = np.zeros(S.size)
    for seed in range(150):
        e = UniformLRF(budget=0.5, batch_size=64, n_members=2, n_sweeps=1, refit_every=50,
                       random_state=seed).fit(S)
        freq += e.oracle_.revealed_.ravel()
    # SE of each frequency is 0.041; the max over 960 cells stays within 4.5 SE
    assert np.abs(freq / 150 - 0.5).max() < 0.19


def test_uniform_lrf_between_refits_keeps_the_estimate_exact():
    # refit_every=3: between refits the scored cells leave U_i (multi-model batches)
    S = _near_rank_one(m=10, n=60, seed=5)
    est = UniformLRF(budget=0.4, batch_size=5, n_members=4, refit_every=3, random_state=1)
    seen = []

    def score(i, J):
        st = est._state
        if st.warmup_done:
            O = st.obs
            est_def = (np.where(O, S, 0).sum(1) + (~O * st.E).sum(1)) / S.shape[1]
            seen.append(np.abs(st.est - est_def).max())
        return S[i, J]

    est.fit(CallableOracle(score, *S.shape))
    assert len(seen) > 20 and max(seen) < 1e-12


@pytest.mark.parametrize("bad, match", [
    ({"acquisition": "random"}, "acquisition"),
    ({"uncertainty_cells": "scored"}, "uncertainty_cells"),
    ({"eta": -1.0}, "eta"),
])
def test_ucbelrf_ablation_validation(bad, match):
    with pytest.raises(ValueError, match=match):
        UCBELRF(**bad).fit(_near_rank_one())


def test_uniform_lrf_validation():
    S = _near_rank_one()
    with pytest.raises(ValueError, match="warm-up"):
        UniformLRF(budget=10).fit(S)
    with pytest.raises(ValueError, match="n_members"):
        UniformLRF(n_members=0).fit(S)
    with pytest.raises(TypeError, match="UniformLRF needs `side_scores` as an array"):
        from sklearn_riskcontrol.bandits import LowRankScoreCompleter

        side = LowRankScoreCompleter(rank=1, random_state=0).fit(_near_rank_one(m=5))
        UniformLRF(budget=0.2, n_members=2).fit(S, side_scores=side)


STRATEGIES = [
    FilledSubset(budget=150, batch_size=2, random_state=0),
    UniformLRF(budget=150, batch_size=4, n_members=4, random_state=0),
    UCBELRF(budget=150, batch_size=4, n_members=4, acquisition="score_only", random_state=0),
]


@pytest.mark.parametrize("strategy", STRATEGIES, ids=lambda e: type(e).__name__)
@pytest.mark.parametrize("check", [check_no_attributes_set_in_init,
                                   check_parameters_default_constructible,
                                   check_get_params_invariance, check_set_params],
                         ids=lambda c: c.__name__)
def test_sklearn_parameter_checks(strategy, check):
    check(type(strategy).__name__, strategy)


class _Flaky:
    """A picklable back-end that fails once, at the given call."""

    def __init__(self, S, fail_at):
        self.S, self.fail_at, self.n_calls = S, fail_at, 0

    def __call__(self, i, J):
        self.n_calls += 1
        if self.n_calls == self.fail_at:
            raise ConnectionError("endpoint down")
        return self.S[i, J]


@pytest.mark.parametrize("strategy", STRATEGIES, ids=lambda e: type(e).__name__)
def test_pickle_round_trip_and_resume(strategy):
    S = make_score_matrix(12, 60, random_state=5).scores
    est = type(strategy)(**strategy.get_params())
    with pytest.raises(ConnectionError):
        est.fit(CallableOracle(_Flaky(S, 30), *S.shape))
    assert not est.completed_
    ref = type(strategy)(**strategy.get_params()).fit(S)
    again = pickle.loads(pickle.dumps(est))  # stopped mid-run, resumed in the copy
    again.resume()
    assert again.completed_ and again.n_evaluations_ == ref.n_evaluations_
    assert again.best_index_ == ref.best_index_
    np.testing.assert_allclose(again.means_, ref.means_)


class _LoggingOracle(MatrixOracle):
    def __init__(self, scores, **kw):
        super().__init__(scores, **kw)
        self.log = []

    def query_cells(self, rows, cols):
        self.log.append((np.array(rows), np.array(cols)))
        return super().query_cells(rows, cols)


def _filled_subset_reference(order, cost, ptr, left, batch_size):
    """Algorithm 4's step written as a plain loop (the planner is vectorised)."""
    cols = []
    while len(cols) < batch_size and ptr < order.size:
        j = int(order[ptr])
        if cost[j] > left:
            break
        ptr += 1
        if cost[j] == 0:
            continue
        cols.append(j)
        left -= cost[j]
    return cols, ptr


@pytest.mark.parametrize("batch_size, budget", [(1, 97), (3, 131), (4, 1.0), (50, 0.6)])
def test_filled_subset_vectorised_steps_match_the_plain_loop(batch_size, budget):
    # examples no model can be scored on (cost 0) are skipped; partial examples cost less
    S = make_score_matrix(6, 80, random_state=7).scores
    S[:, [3, 4, 5, 40, 41, 42, 43, 44, 45, 46, 47, 79]] = np.nan
    S[:4, 10:20] = np.nan
    est = FilledSubset(budget=budget, batch_size=batch_size, random_state=2)
    oracle = _LoggingOracle(S, missing="exclude")
    est.fit(oracle)
    steps = oracle.log
    st = est._state
    cost = (~np.isnan(S)).sum(0)
    ptr, left = 0, st.budget
    for rows, cols in steps:
        ref, ptr = _filled_subset_reference(st.col_order, cost, ptr, left, batch_size)
        # the query lists each example's available models in order, example after example
        exp_r = np.concatenate([np.flatnonzero(~np.isnan(S[:, j])) for j in ref])
        exp_c = np.repeat(ref, [cost[j] for j in ref])
        np.testing.assert_array_equal(rows, exp_r)
        np.testing.assert_array_equal(cols, exp_c)
        left -= cols.size
    assert _filled_subset_reference(st.col_order, cost, ptr, left, batch_size)[0] == []
    assert est.n_evaluations_ == st.budget - left


def test_uniform_lrf_warm_start_continues_without_rescoring():
    S = _near_rank_one(m=10, n=60, seed=6)
    est = UniformLRF(budget=0.2, batch_size=8, n_members=3, random_state=0).fit(S)
    est.set_params(budget=0.5, warm_start=True).fit(est.oracle_)
    assert est.n_evaluations_ == est.oracle_.n_evaluations_ == S.size // 2
    assert est.oracle_.revealed_.sum() == S.size // 2  # no cell bought twice
    est.set_params(budget=1.0).fit(est.oracle_)
    assert est.oracle_.revealed_.all() and est.completed_
    np.testing.assert_allclose(est.means_, S.mean(1), atol=1e-12)  # nothing left to predict
