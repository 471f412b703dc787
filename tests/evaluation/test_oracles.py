"""Scoring back-ends: lazy reveal, caching, budget counted once, stop/resume, bad input."""

import pickle

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import make_classification
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import LogisticRegression
from sklearn.tree import DecisionTreeClassifier

from sklearn_riskcontrol.bandits import (
    UCBE,
    UniformSampling,
)
from sklearn_riskcontrol.evaluation import (
    CallableOracle,
    EstimatorOracle,
    MatrixOracle,
)


def _matrix(m=12, n=300, seed=0):
    rng = np.random.default_rng(seed)
    p = np.linspace(0.2, 0.8, m)
    return (rng.uniform(size=(m, n)) < p[:, None]).astype(float)


class CountingScorer:
    """A callable back-end that records every (model, example) it is asked for."""

    def __init__(self, S, fail_after=None, exc=RuntimeError):
        self.S = S
        self.calls = np.zeros(S.shape, dtype=int)
        self.n_calls = 0
        self.fail_after = fail_after
        self.exc = exc

    def __call__(self, i, J):
        if self.fail_after is not None and self.n_calls >= self.fail_after:
            raise self.exc("LLM endpoint down")
        self.n_calls += 1
        self.calls[i, J] += 1
        return self.S[i, J]


def test_matrix_oracle_reveals_lazily_and_caches():
    S = _matrix()
    o = MatrixOracle(S)
    assert np.isnan(o.cached_scores_).all()
    np.testing.assert_array_equal(o.query(3, [5, 1, 5]), S[3, [5, 1, 5]])
    assert o.n_evaluations_ == 2  # duplicate asked twice, bought once
    o.query(3, [1, 2])
    assert o.n_evaluations_ == 3
    vals = o.query_cells([0, 0, 3], [7, 8, 2])
    np.testing.assert_array_equal(vals, S[[0, 0, 3], [7, 8, 2]])
    assert o.n_evaluations_ == 5
    assert o.revealed_.sum() == 5
    assert np.isnan(o.cached_scores_[~o.revealed_]).all()


def test_callable_oracle_buys_each_cell_once():
    S = _matrix()
    f = CountingScorer(S)
    o = CallableOracle(f, *S.shape)
    o.query(2, [0, 1, 2])
    o.query(2, [1, 2, 3])
    o.query_cells([2, 4, 4], [3, 0, 9])
    assert f.calls.max() == 1
    assert o.n_evaluations_ == f.calls.sum() == 6


def test_callable_oracle_validates_output():
    o = CallableOracle(lambda i, J: np.full(len(J) + 1, 0.5), 3, 10)
    with pytest.raises(ValueError, match="returned 3 score"):
        o.query(0, [1, 2])
    o = CallableOracle(lambda i, J: np.full(len(J), 1.5), 3, 10)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        o.query(0, [1, 2])
    o = CallableOracle(lambda i, J: np.full(len(J), np.nan), 3, 10)
    with pytest.raises(ValueError, match="finite"):
        o.query(0, [1])
    assert o.n_evaluations_ == 0 and not o.revealed_.any()
    with pytest.raises(TypeError, match="callable"):
        CallableOracle(3, 2, 2)
    with pytest.raises(ValueError, match="positive"):
        CallableOracle(lambda i, J: J, 0, 2)


def test_bad_matrices_give_clear_errors():
    S = _matrix()
    S[2, 7] = np.nan
    with pytest.raises(ValueError, match=r"NaN.*model 2, example 7.*missing='exclude'"):
        UCBE(budget=10).fit(S)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        UCBE(budget=10).fit(_matrix() * 2)
    with pytest.raises(ValueError, match="2-d"):
        UCBE(budget=10).fit(np.ones(5))
    with pytest.raises(ValueError, match="exceeds"):
        UCBE(budget=_matrix().size + 1).fit(_matrix())
    with pytest.raises(ValueError, match="batch_size"):
        UCBE(budget=10, batch_size=0).fit(_matrix())
    with pytest.raises(ValueError, match="budget"):
        UCBE(budget=0).fit(_matrix())
    with pytest.raises(ValueError, match="budget"):
        UCBE(budget=1.5).fit(_matrix())
    with pytest.raises(ValueError, match="Mismatched shapes"):
        UCBE(budget=10).fit(_matrix(), side_scores=np.zeros((3, 5)))
    with pytest.raises(TypeError, match="CallableOracle"):
        UCBE(budget=10).fit(lambda i, J: J)


def test_missing_cells_are_excluded():
    S = _matrix(m=6, n=50)
    S[:, :20] = np.where(np.arange(6)[:, None] % 2 == 0, np.nan, S[:, :20])
    o = MatrixOracle(S, missing="exclude")
    est = UCBE(budget=1.0, batch_size=7, random_state=0).fit(o)
    assert est.n_evaluations_ == int((~np.isnan(S)).sum())
    np.testing.assert_allclose(est.means_, np.nanmean(S, axis=1))
    assert not o.revealed_[np.isnan(S)].any()
    with pytest.raises(ValueError, match="not available"):
        o.query(0, [0])
    uni = UniformSampling(budget=1.0, random_state=0).fit(MatrixOracle(S, missing="exclude"))
    np.testing.assert_allclose(uni.means_, np.nanmean(S, axis=1))


@pytest.mark.parametrize("Strategy", [UCBE, UniformSampling])
def test_failure_keeps_scores_and_resume_does_not_rebuy(Strategy):
    S = _matrix(m=10, n=200)
    budget = 1500
    ref = Strategy(budget=budget, batch_size=16, random_state=3).fit(S)

    f = CountingScorer(S, fail_after=20)
    oracle = CallableOracle(f, *S.shape)
    est = Strategy(budget=budget, batch_size=16, random_state=3)
    with pytest.raises(RuntimeError, match="endpoint down") as info:
        est.fit(oracle)
    assert "resume()" in "".join(getattr(info.value, "__notes__", []))
    assert not est.completed_
    assert 0 < est.n_evaluations_ < budget
    # a step spanning several models may be part-bought: those cells stay in the oracle's cache
    assert est.n_evaluations_ <= oracle.n_evaluations_ == f.calls.sum()
    paid = oracle.n_evaluations_
    # still down: nothing more is bought, nothing is lost
    with pytest.raises(RuntimeError):
        est.resume()
    assert oracle.n_evaluations_ == paid
    f.fail_after = None
    est.resume()
    assert est.completed_
    assert est.n_evaluations_ == budget == oracle.n_evaluations_
    assert f.calls.max() == 1  # every cell bought exactly once
    # the interrupted run is the same run as the uninterrupted one
    assert est.best_index_ == ref.best_index_
    np.testing.assert_array_equal(est.n_evaluations_per_model_, ref.n_evaluations_per_model_)
    np.testing.assert_array_equal(est.history_["best_index"], ref.history_["best_index"])


def test_keyboard_interrupt_is_resumable():
    S = _matrix(m=8, n=100)
    f = CountingScorer(S, fail_after=5, exc=KeyboardInterrupt)
    est = UCBE(budget=400, batch_size=10, random_state=0)
    with pytest.raises(KeyboardInterrupt):
        est.fit(CallableOracle(f, *S.shape))
    f.fail_after = None
    est.resume()
    assert est.n_evaluations_ == 400 and f.calls.max() == 1


def test_warm_start_continues_without_rebuying():
    S = _matrix(m=10, n=200)
    f = CountingScorer(S)
    oracle = CallableOracle(f, *S.shape)
    est = UCBE(budget=600, batch_size=16, random_state=1, warm_start=True).fit(oracle)
    assert est.n_evaluations_ == 600
    est.set_params(budget=1200).fit(oracle)
    assert est.n_evaluations_ == 1200 == oracle.n_evaluations_
    assert f.calls.max() == 1
    assert len(est.history_["n_evaluations"]) == est.n_steps_ + 1
    # a plain ndarray with the same content also continues
    est2 = UCBE(budget=600, batch_size=16, random_state=1, warm_start=True).fit(S)
    o2 = est2.oracle_
    est2.set_params(budget=900).fit(S.copy())
    assert est2.oracle_ is o2 and o2.n_evaluations_ == 900
    # without warm_start a second fit starts over
    est3 = UCBE(budget=600, batch_size=16, random_state=1).fit(oracle)
    assert est3.n_evaluations_ == 600


def test_two_strategies_share_an_oracle_cache():
    S = _matrix(m=10, n=200)
    f = CountingScorer(S)
    oracle = CallableOracle(f, *S.shape)
    UCBE(budget=800, random_state=0).fit(oracle)
    UniformSampling(budget=800, random_state=0).fit(oracle)
    assert f.calls.max() == 1
    assert oracle.n_evaluations_ == f.calls.sum() <= 1600


def test_estimator_oracle():
    X, y = make_classification(300, random_state=0)
    models = [
        LogisticRegression().fit(X[:150], y[:150]),
        DecisionTreeClassifier(max_depth=1, random_state=0).fit(X[:150], y[:150]),
    ]
    o = EstimatorOracle(models, X[150:], y[150:])
    vals = o.query(1, np.arange(150))
    np.testing.assert_array_equal(vals, models[1].predict(X[150:]) == y[150:])
    o2 = EstimatorOracle(
        models,
        X[150:],
        y[150:],
        scoring=lambda yt, proba: proba[np.arange(len(yt)), yt],
        response_method="predict_proba",
    )
    np.testing.assert_allclose(
        o2.query(0, [0, 1]), models[0].predict_proba(X[150:152])[[0, 1], y[150:152]]
    )
    with pytest.raises(NotFittedError, match=r"estimators\[1\]"):
        EstimatorOracle([models[0], LogisticRegression()], X, y)
    with pytest.raises(ValueError, match="Mismatched lengths"):
        EstimatorOracle(models, X, y[:10])
    with pytest.raises(ValueError, match="response_method='predict'"):
        EstimatorOracle(models, X, y, response_method="predict_proba")


def test_estimator_oracle_with_pandas():
    pd = pytest.importorskip("pandas")
    X, y = make_classification(200, random_state=1)
    Xdf = pd.DataFrame(X, columns=[f"f{k}" for k in range(X.shape[1])])
    models = [LogisticRegression().fit(Xdf, y), DecisionTreeClassifier(random_state=0).fit(Xdf, y)]
    o = EstimatorOracle(models, Xdf, pd.Series(y))
    est = UCBE(budget=1.0, random_state=0).fit(o)
    np.testing.assert_allclose(est.means_, [np.mean(m.predict(Xdf) == y) for m in models])


@pytest.mark.parametrize("Strategy", [UCBE, UniformSampling])
def test_sklearn_conventions(Strategy):
    S = _matrix()
    est = Strategy(budget=500, random_state=0)
    assert clone(est).get_params() == est.get_params()
    assert not hasattr(est, "best_index_")
    est.fit(S)
    est2 = pickle.loads(pickle.dumps(est))
    assert est2.best_index_ == est.best_index_
    np.testing.assert_array_equal(est2.means_, est.means_)
    with pytest.raises(NotFittedError):
        Strategy().resume()


def test_fit_with_warm_start_after_failure_continues():
    S = _matrix(m=8, n=120)
    f = CountingScorer(S, fail_after=10)
    oracle = CallableOracle(f, *S.shape)
    est = UCBE(budget=500, batch_size=12, random_state=0, warm_start=True)
    with pytest.raises(RuntimeError):
        est.fit(oracle)
    f.fail_after = None
    est.fit(oracle)
    assert est.completed_ and est.n_evaluations_ == 500 and f.calls.max() == 1
    ref = UCBE(budget=500, batch_size=12, random_state=0).fit(S)
    assert est.best_index_ == ref.best_index_


def test_verbose_progress(capsys):
    UCBE(budget=2000, batch_size=10, verbose=1, random_state=0).fit(_matrix(n=400))
    out = capsys.readouterr().out
    lines = [ln for ln in out.splitlines() if ln.startswith("[UCBE]")]
    assert 5 <= len(lines) <= 15 and "evaluations" in lines[-1]
    UCBE(budget=2000, batch_size=10, random_state=0).fit(_matrix(n=400))
    assert capsys.readouterr().out == ""
