"""Rank selection by 5-fold cross-validation with the one-standard-error rule (rank="cv")."""

import numpy as np
import pytest

from sklearn_riskcontrol.bandits import (
    LowRankScoreCompleter,
    NaivePooling,
    PULSE,
    UCBELRF,
    _pulse,
    make_score_matrix,
)
from sklearn_riskcontrol.bandits.lowrank import (
    fit_logistic_factors,
    one_se_choice,
    select_rank_cv,
)


def _binary_matrix(seed=0, m=12, n=30, rank=2, missing=0.3):
    rng = np.random.default_rng(seed)
    P = 1 / (1 + np.exp(-2 * rng.normal(size=(m, rank)) @ rng.normal(size=(rank, n))))
    S = (rng.uniform(size=P.shape) < P).astype(float)
    S[rng.uniform(size=S.shape) < missing] = np.nan
    return S


def test_cv_equals_brute_force_loop():
    S = _binary_matrix()
    cand = (0, 1, 2, 4, 16)  # 16 >= min(shape) = 12 is dropped
    res = select_rank_cv(S, candidates=cand, n_folds=5, max_iter=20, random_state=3)
    # brute force: the same folds (a permutation of the observed cells, in row-major order),
    # fits in the same order (fold outer, rank inner), held-out cross-entropy from predict()
    rng = np.random.RandomState(3)  # what check_random_state(3) returns
    r, c = np.nonzero(~np.isnan(S))
    perm = rng.permutation(r.size)
    sizes = [len(f) for f in np.array_split(np.arange(r.size), 5)]
    assert sizes == [r.size // 5 + (k < r.size % 5) for k in range(5)]
    starts = np.concatenate([[0], np.cumsum(sizes)])
    ranks = [0, 1, 2, 4]
    err = np.zeros((len(ranks), 5))
    for k in range(5):
        test = perm[starts[k]:starts[k + 1]]
        train = S.copy()
        train[r[test], c[test]] = np.nan
        for a, rank in enumerate(ranks):
            fit = fit_logistic_factors(train, rank=rank, max_iter=20, random_state=rng)
            p = fit.predict()[r[test], c[test]]
            y = S[r[test], c[test]]
            err[a, k] = np.mean(-y * np.log(p) - (1 - y) * np.log(1 - p))
    np.testing.assert_array_equal(res.candidates, ranks)
    np.testing.assert_allclose(res.fold_errors, err, rtol=1e-9, atol=1e-12)
    mean, se = err.mean(1), err.std(1, ddof=1) / np.sqrt(5)
    best = int(np.argmin(mean))
    chosen = next(rk for rk, e in zip(ranks, mean) if e <= mean[best] + se[best])
    assert res.rank == chosen
    np.testing.assert_allclose(res.cv_se, se)


def test_one_se_rule_constructed():
    # best is rank 4 (0.45 +- 0.06): rank 2 (0.50) is within one s.e., rank 1 (0.52) is not
    assert one_se_choice([1, 2, 4, 8], np.array([0.52, 0.50, 0.45, 0.46]),
                         np.array([0.01, 0.01, 0.06, 0.01])) == 2
    # zero standard error: the minimiser itself
    assert one_se_choice([1, 2, 4], np.array([0.3, 0.2, 0.25]), np.zeros(3)) == 2


def test_true_rank_two_is_chosen():
    rng = np.random.default_rng(1)
    u, v = rng.normal(size=(40, 2)), rng.normal(size=(60, 2))
    S = u @ v.T + 0.1 * rng.normal(size=(40, 60))
    S[rng.uniform(size=S.shape) < 0.3] = np.nan
    res = select_rank_cv(S, loss="squared", biases=False, ridge=0.1, random_state=0)
    assert res.rank == 2
    # rank 1 is far worse, larger ranks are no better than one s.e.
    i1, i2 = 0, 1
    assert res.cv_error[i1] > res.cv_error[i2] + 10 * res.cv_se[i2]


def test_select_rank_cv_validation():
    S = _binary_matrix()
    with pytest.raises(ValueError, match="`n_folds`"):
        select_rank_cv(S, n_folds=1)
    with pytest.raises(ValueError, match="`candidates`"):
        select_rank_cv(S, candidates=[])
    with pytest.raises(ValueError, match="`candidates`"):
        select_rank_cv(S, candidates=[-1, 2])
    tiny = np.full((3, 3), np.nan)
    tiny[0, :2] = 1.0
    with pytest.raises(ValueError, match="needs at least 5"):
        select_rank_cv(tiny)


def test_completer_cv_reproducible_and_int_unchanged():
    S = _binary_matrix(seed=2, m=20, n=40)
    a = LowRankScoreCompleter(rank="cv", max_iter=20, random_state=0).fit(S)
    b = LowRankScoreCompleter(rank="cv", max_iter=20, random_state=0).fit(S)
    assert a.rank_ == b.rank_ == a.factorization_.rank
    np.testing.assert_array_equal(a.transform(S), b.transform(S))
    c = LowRankScoreCompleter(rank=3, max_iter=20, random_state=0).fit(S)
    ref = fit_logistic_factors(S, rank=3, max_iter=20, random_state=0)
    assert c.rank_ == 3 and c.rank_cv_ is None
    np.testing.assert_array_equal(c.example_factors_, ref.example_factors)
    with pytest.raises(ValueError, match="rank"):
        LowRankScoreCompleter(rank="auto").fit(S)


@pytest.fixture(scope="module")
def data():
    return make_score_matrix(n_models=15, n_examples=200, n_side_models=25, random_state=0)


def _counting(monkeypatch):
    calls = []
    real = _pulse.select_rank_cv

    def wrapped(Y, **kw):
        calls.append(int((~np.isnan(Y)).sum()))
        return real(Y, **kw)

    monkeypatch.setattr(_pulse, "select_rank_cv", wrapped)
    return calls


@pytest.mark.parametrize("cls", [PULSE, NaivePooling])
def test_cv_only_at_refits(monkeypatch, data, cls):
    kw = dict(budget=0.2, batch_size=8, refit_every=10, max_iter=10, random_state=0)
    calls = _counting(monkeypatch)
    est = cls(rank="cv", **kw).fit(data.scores)  # no side information: CV at every refit
    assert len(calls) == est.n_refits_ == len(est.ranks_)
    assert calls == sorted(calls)  # each on the cells observed so far (more and more)
    assert est.rank_ == est.ranks_[-1] == est.factorization_.rank
    assert set(est.ranks_) <= {1, 2, 4, 8}  # 16 >= n_models is dropped
    calls.clear()
    est = cls(rank="cv", **kw).fit(data.scores, side_scores=data.side_scores)
    assert len(calls) == 1 and calls[0] == data.side_scores.size  # once, on the side matrix
    assert est.n_refits_ > 1 and est.ranks_ == [est.rank_]
    calls.clear()
    est = cls(rank=4, **kw).fit(data.scores, side_scores=data.side_scores)
    assert calls == [] and est.ranks_ == [] and est.rank_ == 4


def test_pulse_cv_reproducible_and_int_rank_unchanged(data):
    kw = dict(budget=0.2, batch_size=8, refit_every=10, max_iter=10, random_state=0)
    a = PULSE(rank="cv", **kw).fit(data.scores)
    b = PULSE(rank="cv", **kw).fit(data.scores)
    assert a.ranks_ == b.ranks_
    np.testing.assert_array_equal(a.means_, b.means_)
    np.testing.assert_array_equal(a.history_["best_index"], b.history_["best_index"])
    # an int rank takes the former code path: no CV, the side fit is the plain one
    c = PULSE(rank=4, **kw).fit(data.scores, side_scores=data.side_scores)
    d = PULSE(rank=np.int64(4), **kw).fit(data.scores, side_scores=data.side_scores)
    np.testing.assert_array_equal(c.means_, d.means_)
    assert c.factorization_.rank == 4
    with pytest.raises(ValueError, match="rank"):
        PULSE(rank="best", **kw).fit(data.scores)


def test_ucbelrf_cv_once_after_warmup(monkeypatch):
    from sklearn_riskcontrol.bandits import lowrank

    calls = []
    real = lowrank.select_rank_cv

    def wrapped(Y, **kw):
        calls.append(int((~np.isnan(Y)).sum()))
        return real(Y, **kw)

    monkeypatch.setattr(lowrank, "select_rank_cv", wrapped)
    rng = np.random.default_rng(0)
    S = (rng.uniform(size=(12, 120)) < np.outer(rng.beta(5, 3, 12), rng.beta(4, 2, 120))) * 1.0
    kw = dict(budget=0.15, n_members=4, random_state=0)
    a = UCBELRF(rank="cv", **kw).fit(S)
    # once, on the warm-up cells only (5% of the matrix), before any adaptive batch
    assert calls == [int(np.ceil(0.05 * S.size))]
    assert a.ranks_ == [a.rank_] and a.rank_ in (1, 2, 4, 8)
    b = UCBELRF(rank="cv", **kw).fit(S)
    np.testing.assert_array_equal(a.predictions_, b.predictions_)
    calls.clear()
    c = UCBELRF(rank=2, **kw).fit(S)
    assert calls == [] and c.rank_ == 2 and c.ranks_ == []
