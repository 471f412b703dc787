"""scikit-learn's estimator checks over every public estimator (unfitted configurations)."""

import pickle

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.linear_model import LinearRegression, LogisticRegression, Ridge
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor
from sklearn.utils.estimator_checks import (
    check_get_params_invariance,
    check_no_attributes_set_in_init,
    check_parameters_default_constructible,
    check_set_params,
    parametrize_with_checks,
)

from _models import within_one
from sklearn_riskcontrol.bandits import (
    BestModelSelector,
    FilledSubset,
    LowRankScoreCompleter,
    NaivePooling,
    PULSE,
    UCBE,
    UCBELRF,
    UniformLRF,
    UniformSampling,
)
from sklearn_riskcontrol.selective import (
    ConcentrationMDR,
    ConcentrationSDR,
    SCoREMDR,
    SCoRESDR,
)
from sklearn_riskcontrol.online import SemiBanditPredictionSet
from sklearn_riskcontrol.evaluation import CallableOracle
from sklearn_riskcontrol.risks import make_risk


@parametrize_with_checks(
    [
        SCoREMDR(LogisticRegression(), random_state=0),
        SCoRESDR(LogisticRegression(), random_state=0),
        SCoREMDR(LinearRegression(), risk=make_risk("squared", scale=1.0), risk_score=LinearRegression(),
                 random_state=0),
        ConcentrationMDR(LogisticRegression(), grid=[0.0, 0.5, 1.0], random_state=0),
        ConcentrationSDR(LogisticRegression(), bound="rademacher", random_state=0),
        # per-group guarantees: groups computed from the wrapped model at fit and decide time
        SCoRESDR(LogisticRegression(), groups="predicted_class", random_state=0),
        ConcentrationSDR(LogisticRegression(), groups="predicted_class", random_state=0),
        SemiBanditPredictionSet(LogisticRegression(), random_state=0),
        # unfitted candidates: fitted on a split, then selected by the default strategy (PULSE)
        BestModelSelector(
            [LogisticRegression(), DecisionTreeClassifier(max_depth=2, random_state=0)],
            random_state=0,
        ),
        BestModelSelector(
            [Ridge(), DecisionTreeRegressor(max_depth=2, random_state=0)],
            scoring=within_one,
            random_state=0,
        ),
        # rows = models, columns = examples, NaN = missing cell
        LowRankScoreCompleter(rank=2, random_state=0),
    ],
)
def test_sklearn_compatible(estimator, check):
    check(estimator)


# -- best-model strategies ----------------------------------------------------------------------
# PULSE, UCBE, ... are fitted on a score matrix or a scoring back-end, not on (X, y), and predict
# nothing, so sklearn's (X, y) checks do not apply. They are still sklearn estimators: the
# parameter-level checks run as is, and the fitted-state conventions are tested below.

STRATEGIES = [
    PULSE(budget=150, batch_size=4, refit_every=3, rank=2, random_state=0),
    NaivePooling(budget=150, batch_size=4, refit_every=3, rank=2, random_state=0),
    UCBE(budget=150, batch_size=4, random_state=0),
    UCBELRF(budget=150, batch_size=4, n_members=4, random_state=0),
    UniformSampling(budget=150, batch_size=4, random_state=0),
    FilledSubset(budget=150, batch_size=1, random_state=0),
    UniformLRF(budget=150, batch_size=4, n_members=4, random_state=0),
]
_PARAM_CHECKS = [
    check_no_attributes_set_in_init,
    check_parameters_default_constructible,
    check_get_params_invariance,
    check_set_params,
]


def _ids(x):
    return type(x).__name__ if not callable(x) or hasattr(x, "get_params") else x.__name__


def _score_matrix(m=6, n=60, seed=0):
    rng = np.random.default_rng(seed)
    p = np.linspace(0.3, 0.7, m)
    return (rng.uniform(size=(m, n)) < p[rng.permutation(m)][:, None]).astype(float)


class _FlakyScorer:
    """A picklable back-end (think: LLM endpoint) that fails at the given call numbers."""

    def __init__(self, S, fail_at=()):
        self.S, self.fail_at, self.n_calls = S, set(fail_at), 0

    def __call__(self, i, J):
        self.n_calls += 1
        if self.n_calls in self.fail_at:
            raise ConnectionError("endpoint down")
        return self.S[i, J]


@pytest.mark.parametrize("strategy", STRATEGIES, ids=_ids)
@pytest.mark.parametrize("check", _PARAM_CHECKS, ids=_ids)
def test_strategy_parameter_checks(strategy, check):
    check(type(strategy).__name__, strategy)


@pytest.mark.parametrize("strategy", STRATEGIES, ids=_ids)
def test_strategy_fit_clone_pickle(strategy):
    S = _score_matrix()
    params = strategy.get_params()
    est = clone(strategy).fit(S)
    # fit leaves the parameters alone; clone of a fitted strategy is an unfitted twin
    assert est.get_params() == params
    twin = clone(est)
    assert twin.get_params() == params and not hasattr(twin, "best_index_")
    # same seed, same run
    again = twin.fit(S)
    np.testing.assert_array_equal(again.means_, est.means_)
    assert again.best_index_ == est.best_index_ and again.n_evaluations_ == 150
    # a pickled fitted strategy keeps its results
    loaded = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(loaded.means_, est.means_)
    for key, value in est.history_.items():
        np.testing.assert_array_equal(loaded.history_[key], value)
    if isinstance(est, PULSE):
        np.testing.assert_array_equal(
            loaded.confidence_intervals(0.1), est.confidence_intervals(0.1)
        )


@pytest.mark.parametrize("strategy", STRATEGIES, ids=_ids)
def test_interrupted_run_survives_pickling_and_resumes(strategy):
    # a run stopped by a failing back-end can be saved to disk and resumed in another process:
    # the result equals the uninterrupted run and no cell is bought twice
    S = _score_matrix(seed=1)
    ref = clone(strategy).fit(S)
    est = clone(strategy)
    with pytest.raises(ConnectionError):
        est.fit(CallableOracle(_FlakyScorer(S, fail_at=(9,)), *S.shape))
    assert not est.completed_ and 0 < est.n_evaluations_ < 150
    est = pickle.loads(pickle.dumps(est))
    est.resume()
    assert est.completed_ and est.n_evaluations_ == 150
    assert est.oracle_.n_evaluations_ == 150
    np.testing.assert_allclose(est.means_, ref.means_)
    assert est.best_index_ == ref.best_index_


# -- the risk monitor ---------------------------------------------------------------------------
# RiskMonitor is fitted on a stream of losses (judge, labels) and predicts nothing: the
# parameter-level checks apply; fit/partial_fit on losses are tested in tests/autoeval.
@pytest.mark.parametrize("check", _PARAM_CHECKS, ids=_ids)
def test_monitor_parameter_checks(check):
    from sklearn_riskcontrol.autoeval import RiskMonitor

    check("RiskMonitor", RiskMonitor(alpha=0.1, delta=0.1, label_rate=0.1))
