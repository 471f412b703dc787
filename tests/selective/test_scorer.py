"""``metrics.make_selective_scorer``: the mean payoff of deploying (gain minus the cost of the
point's risk) or abstaining, for every selective estimator, through a Pipeline and GridSearchCV."""

import pickle

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import load_digits
from sklearn.exceptions import NotFittedError
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.model_selection import GridSearchCV, KFold, train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sklearn_riskcontrol.selective import (
    ConcentrationMDR,
    ConcentrationSDR,
    SCoREMDR,
    SCoRESDR,
    make_selective_scorer,
    pipeline_decide,
)
from sklearn_riskcontrol.risks import make_risk

ESTIMATORS = [SCoREMDR, SCoRESDR, ConcentrationMDR, ConcentrationSDR]
COSTS = dict(gain=1.0, error_cost=3.0, abstain_cost=0.25)
SCALE = 4.0  # of the squared risk of the regression problem


@pytest.fixture(scope="module")
def digits():
    """A frozen classifier, then calibration, test and tuning rows (shuffled splits)."""
    X, y = load_digits(return_X_y=True)
    X_fit, X_rest, y_fit, y_rest = train_test_split(X, y, train_size=500, random_state=0)
    X_cal, X_rest, y_cal, y_rest = train_test_split(X_rest, y_rest, train_size=500, random_state=0)
    X_test, X_tune, y_test, y_tune = train_test_split(X_rest, y_rest, train_size=300,
                                                      random_state=0)
    model = FrozenEstimator(LogisticRegression(max_iter=2000).fit(X_fit, y_fit))
    return model, X_fit, y_fit, (X_cal, y_cal), (X_test, y_test), (X_tune, y_tune)


def _spread(X):
    """Risk score of the regression problem: the noise grows with |x_0|."""
    return np.tanh(np.abs(X[:, 0]))


@pytest.fixture(scope="module")
def regression():
    """A frozen linear regression with heteroscedastic noise: squared risks strictly in (0, 1)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(1500, 3))
    y = X @ [1.0, -1.0, 0.5] + rng.normal(size=1500) * (0.2 + np.abs(X[:, 0]))
    X_fit, X_rest, y_fit, y_rest = train_test_split(X, y, train_size=500, random_state=0)
    X_cal, X_test, y_cal, y_test = train_test_split(X_rest, y_rest, train_size=600, random_state=0)
    model = FrozenEstimator(LinearRegression().fit(X_fit, y_fit))
    return model, (X_cal, y_cal), (X_test, y_test)


def _by_hand(deployed, y, pred, loss, gain, error_cost, abstain_cost):
    """The definition, one point at a time."""
    total = 0.0
    for d, y_j, pred_j in zip(deployed, y, pred):
        total += gain - error_cost * loss(y_j, pred_j) if d else -abstain_cost
    return total / len(y)


def _zero_one(y_j, pred_j):
    return float(y_j != pred_j)


def _squared(y_j, pred_j):
    return min((y_j - pred_j) ** 2 / SCALE, 1.0)


def _calibrated(est, cal):
    # A fresh fit before each use: SCoRESDR's boosting uniforms then replay the same draw.
    return clone(est).fit(*cal)


@pytest.mark.parametrize("Est", ESTIMATORS)
def test_matches_definition_zero_one(Est, digits):
    model, _, _, cal, (X_test, y_test), _ = digits
    est = Est(model, alpha=0.03, random_state=0)
    score = make_selective_scorer(**COSTS)(_calibrated(est, cal), X_test, y_test)
    fitted = _calibrated(est, cal)
    deployed = fitted.decide(X_test)
    assert 0 < deployed.mean() < 1  # both branches of the payoff are exercised
    expected = _by_hand(deployed, y_test, fitted.predict(X_test), _zero_one, **COSTS)
    assert score == expected  # exact: every payoff is a multiple of 0.25


@pytest.mark.parametrize("Est", ESTIMATORS)
def test_matches_definition_bounded_regression_risk(Est, regression):
    model, cal, (X_test, y_test) = regression
    est = Est(model, risk=make_risk("squared", scale=SCALE), risk_score=_spread, alpha=0.15,
              random_state=0)
    score = make_selective_scorer(**COSTS)(_calibrated(est, cal), X_test, y_test)
    fitted = _calibrated(est, cal)
    deployed = fitted.decide(X_test)
    assert 0 < deployed.mean() < 1
    pred = fitted.predict(X_test)
    assert 0 < np.mean([0 < _squared(a, b) < 1 for a, b in zip(y_test, pred)])  # non-binary risks
    expected = _by_hand(deployed, y_test, pred, _squared, **COSTS)
    assert score == pytest.approx(expected, rel=1e-12, abs=1e-12)


def test_through_a_pipeline(digits):
    _, X_fit, y_fit, (X_cal, y_cal), (X_test, y_test), (X_tune, y_tune) = digits
    scaler = StandardScaler().fit(X_fit)
    model = FrozenEstimator(LogisticRegression(max_iter=2000).fit(scaler.transform(X_fit), y_fit))
    step = SCoRESDR(model, alpha=0.02, random_state=0)
    pipe = make_pipeline(FrozenEstimator(scaler), step)
    scorer = make_selective_scorer(**COSTS)

    score = scorer(_calibrated(pipe, (X_cal, y_cal)), X_test, y_test)
    fitted = _calibrated(pipe, (X_cal, y_cal))
    deployed = pipeline_decide(fitted, X_test)
    assert 0 < deployed.mean() < 1
    assert score == _by_hand(deployed, y_test, fitted.predict(X_test), _zero_one, **COSTS)
    # the same as scoring the last step on rows transformed by hand
    Z_cal, Z_test = scaler.transform(X_cal), scaler.transform(X_test)
    assert score == scorer(_calibrated(step, (Z_cal, y_cal)), Z_test, y_test)
    # a one-step pipeline is its step
    one = make_pipeline(step)
    assert scorer(_calibrated(one, (Z_cal, y_cal)), Z_test, y_test) == score

    # GridSearchCV over the last step's alpha: the same fold scores as without the pipeline
    grid, cv = [0.01, 0.02, 0.05], KFold(4, shuffle=True, random_state=0)
    through = GridSearchCV(pipe, {"scoresdr__alpha": grid}, scoring=scorer, cv=cv)
    direct = GridSearchCV(step, {"alpha": grid}, scoring=scorer, cv=cv)
    through.fit(X_tune, y_tune)
    direct.fit(scaler.transform(X_tune), y_tune)
    np.testing.assert_array_equal(through.cv_results_["mean_test_score"],
                                  direct.cv_results_["mean_test_score"])
    assert through.best_params_["scoresdr__alpha"] == direct.best_params_["alpha"]


@pytest.mark.filterwarnings("ignore::sklearn_riskcontrol.RiskControlWarning")
@pytest.mark.parametrize("Est", ESTIMATORS)
def test_gridsearch_picks_alpha_by_error_cost(Est, digits):
    """The default ``score`` (deployed share) picks the largest alpha whatever errors cost; the
    scorer picks a smaller one when a wrong deployment costs what 100 right ones earn."""
    model, *_, (X_tune, y_tune) = digits
    grid, cv = [0.01, 0.02, 0.05], KFold(4, shuffle=True, random_state=0)

    def search(scoring):
        est = Est(model, random_state=0)
        return GridSearchCV(est, {"alpha": grid}, scoring=scoring, cv=cv).fit(X_tune, y_tune)

    default = search(None)
    free = search(make_selective_scorer(error_cost=0))
    costly = search(make_selective_scorer(error_cost=100))
    assert default.best_params_["alpha"] == free.best_params_["alpha"] == max(grid)
    # with error_cost=0 the payoff of a deployed point is the gain 1: the deployed share
    np.testing.assert_array_equal(free.cv_results_["mean_test_score"],
                                  default.cv_results_["mean_test_score"])
    assert costly.best_params_["alpha"] < max(grid)


def test_refuses_estimators_that_do_not_decide(digits):
    model, X_fit, y_fit, _, (X_test, y_test), _ = digits
    scorer = make_selective_scorer(error_cost=1.0)
    clf = LogisticRegression(max_iter=2000).fit(X_fit, y_fit)
    with pytest.raises(TypeError, match="selective estimator .* got a LogisticRegression"):
        scorer(clf, X_test, y_test)
    pipe = make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000)).fit(X_fit, y_fit)
    with pytest.raises(TypeError, match="got a Pipeline ending in a LogisticRegression"):
        scorer(pipe, X_test, y_test)
    with pytest.raises(NotFittedError):
        scorer(SCoREMDR(model), X_test, y_test)


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        (dict(error_cost=-1.0), ValueError, "`error_cost` must be a non-negative finite number"),
        (dict(error_cost=np.inf), ValueError, "`error_cost` must be a non-negative finite"),
        (dict(error_cost=np.nan), ValueError, "`error_cost` must be a non-negative finite"),
        (dict(error_cost="5"), TypeError, "`error_cost` must be a non-negative finite"),
        (dict(error_cost=True), TypeError, "`error_cost` must be a non-negative finite"),
        (dict(error_cost=1.0, gain=-1.0), ValueError, "`gain` must be a non-negative finite"),
        (dict(error_cost=1.0, abstain_cost=np.inf), ValueError, "`abstain_cost` must be"),
        (dict(), TypeError, "error_cost"),
    ],
)
def test_argument_validation(kwargs, error, match):
    with pytest.raises(error, match=match):
        make_selective_scorer(**kwargs)


def test_arguments_are_keyword_only():
    with pytest.raises(TypeError):
        make_selective_scorer(1.0, 5.0)


def test_pickles_and_repr(digits):
    model, _, _, cal, (X_test, y_test), _ = digits
    scorer = make_selective_scorer(gain=2, error_cost=5, abstain_cost=0.5)
    assert repr(scorer) == "make_selective_scorer(gain=2.0, error_cost=5.0, abstain_cost=0.5)"
    copy = pickle.loads(pickle.dumps(scorer))  # GridSearchCV(n_jobs=...) sends it to workers
    fitted = SCoREMDR(model, alpha=0.02).fit(*cal)
    assert copy(fitted, X_test, y_test) == scorer(fitted, X_test, y_test)
