"""Estimator layer of SCoRE: agreement with the array layer, sklearn integration, errors."""

import pickle
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.datasets import load_digits
from sklearn.ensemble import RandomForestRegressor
from sklearn.exceptions import NotFittedError
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.model_selection import GridSearchCV, KFold, train_test_split
from sklearn.naive_bayes import GaussianNB
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sklearn_riskcontrol.selective import (
    ConcentrationMDR,
    ConcentrationSDR,
    DEPLOYMENT_SCORERS,
    RewardAwareScore,
    SCoREMDR,
    SCoRESDR,
    mdr_decisions,
    mdr_evalues,
    pipeline_decide,
    realized_mdr,
    sdr_evalues,
)
from sklearn_riskcontrol import RiskControlWarning
from sklearn_riskcontrol.evalues.testing import boost_evalues, ebh
from sklearn_riskcontrol.risks import make_risk

SQUARED = make_risk("squared", scale=1.0)  # the regression fixture's errors are of order 1


@pytest.fixture(scope="module")
def regression():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(3000, 5))
    y = X[:, 0] + (0.2 + np.abs(X[:, 1])) * rng.normal(size=3000)
    model = LinearRegression().fit(X[:1000], y[:1000])
    risk = make_risk("squared", scale=1.0)
    risk_model = RandomForestRegressor(n_estimators=30, min_samples_leaf=20, random_state=0)
    risk_model.fit(X[:1000], risk(y[:1000], model.predict(X[:1000])))
    return model, risk_model, X[1000:2000], y[1000:2000], X[2000:], y[2000:]


def _proba_scores(model, X):
    return 1 - model.predict_proba(X).max(axis=1)


def test_mdr_estimator_matches_array_layer(digits):
    model, _, _, X_cal, y_cal, X_test, _ = digits
    est = SCoREMDR(model, alpha=0.02).fit(X_cal, y_cal)
    L = (model.predict(X_cal) != y_cal).astype(float)
    S, T = _proba_scores(model, X_cal), _proba_scores(model, X_test)
    np.testing.assert_array_equal(est.cal_risks_, L)
    np.testing.assert_array_equal(est.decide(X_test), mdr_decisions(L, S, T, alpha=0.02))
    np.testing.assert_allclose(est.evalues(X_test), mdr_evalues(L, S, T, gamma=0.02))
    np.testing.assert_array_equal(est.decision_function(X_test) >= 0, est.decide(X_test))
    np.testing.assert_array_equal(est.predict(X_test), model.predict(X_test))
    np.testing.assert_array_equal(est.predict_proba(X_test), model.predict_proba(X_test))


@pytest.mark.parametrize("boosting", [None, "hete", "homo"])
def test_sdr_estimator_matches_array_layer(digits, boosting):
    model, _, _, X_cal, y_cal, X_test, _ = digits
    est = SCoRESDR(model, alpha=0.02, boosting=boosting, random_state=3).fit(X_cal, y_cal)
    L = (model.predict(X_cal) != y_cal).astype(float)
    e = sdr_evalues(L, _proba_scores(model, X_cal), _proba_scores(model, X_test), gamma=0.02)
    np.testing.assert_allclose(est.evalues(X_test), e)
    expected = ebh(boost_evalues(e, boosting, random_state=np.random.RandomState(3)), 0.02)
    with pytest.warns(RiskControlWarning) if not expected.any() else _no_warning():
        decided = est.decide(X_test)
    np.testing.assert_array_equal(decided, expected)
    # decision_function draws the next uniforms: the first call after a refit replays decide's.
    margin = est.fit(X_cal, y_cal).decision_function(X_test)
    np.testing.assert_array_equal(margin >= 0, decided)


class _no_warning:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_regressor_with_risk_predictor(regression):
    model, risk_model, X_cal, y_cal, X_test, y_test = regression
    risk = make_risk("squared", scale=1.0)
    est = SCoREMDR(model, risk=risk, risk_score=risk_model, alpha=0.1).fit(X_cal, y_cal)
    L = risk(y_cal, model.predict(X_cal))
    expected = mdr_decisions(L, risk_model.predict(X_cal), risk_model.predict(X_test), alpha=0.1)
    np.testing.assert_array_equal(est.decide(X_test), expected)
    # A useful risk predictor deploys on a sizeable share while keeping the realized MDR low.
    assert 0.3 < expected.mean() < 1.0
    assert realized_mdr(risk(y_test, model.predict(X_test)), expected) < 0.12


def test_proba_score_requires_classifier(regression):
    model, _, X_cal, y_cal, _, _ = regression
    with pytest.raises(ValueError, match="risk_score='proba' needs a classifier"):
        SCoREMDR(model, risk=SQUARED).fit(X_cal, y_cal)


def test_unfitted_estimator_is_fitted_on_a_split():
    X, y = load_digits(return_X_y=True)
    est = SCoREMDR(LogisticRegression(max_iter=3000), alpha=0.05, calib_size=0.4, random_state=0)
    est.fit(X, y)
    assert est.n_calibration_ == int(np.ceil(0.4 * len(y)))
    assert est.estimator is not est.estimator_  # the user's object is never modified
    with pytest.raises(NotFittedError):
        est.estimator.predict(X)


def test_unfitted_risk_predictor_is_fitted_on_the_training_split(regression):
    model, _, X_cal, y_cal, X_test, _ = regression
    est = SCoREMDR(
        model, risk=SQUARED, risk_score=LinearRegression(), calib_size=0.5, random_state=0
    ).fit(X_cal, y_cal)
    assert est.estimator_ is model
    assert est.n_calibration_ == 500
    assert est.decide(X_test).shape == (len(X_test),)


def test_frozen_estimator_survives_clone_and_gridsearch(digits):
    model, _, _, X_cal, y_cal, X_test, y_test = digits
    est = SCoRESDR(FrozenEstimator(model), random_state=0)
    cloned = clone(est)
    cloned.fit(X_cal, y_cal)
    np.testing.assert_array_equal(cloned.predict(X_test), model.predict(X_test))

    search = GridSearchCV(
        est,
        {"alpha": [0.01, 0.05, 0.1], "boosting": ["hete", "homo"]},
        scoring=DEPLOYMENT_SCORERS,
        refit="deployment_rate",
        cv=KFold(3, shuffle=True, random_state=0),
    ).fit(X_cal, y_cal)
    rates = search.cv_results_["mean_test_deployment_rate"]
    assert np.all((0 <= rates) & (rates <= 1))
    # Deployment is monotone in alpha (same boosting draws).
    by_alpha = search.cv_results_["param_alpha"].data.astype(float)
    hete = search.cv_results_["param_boosting"].data == "hete"
    assert np.all(np.diff(rates[hete][np.argsort(by_alpha[hete])]) >= 0)
    assert search.best_estimator_.decide(X_test).dtype == bool


def test_pipeline_and_pandas_input(digits):
    model, _, _, X_cal, y_cal, X_test, _ = digits
    columns = [f"px{i}" for i in range(X_cal.shape[1])]
    X_cal_df, X_test_df = pd.DataFrame(X_cal, columns=columns), pd.DataFrame(X_test, columns=columns)
    pipe = make_pipeline(StandardScaler(), LogisticRegression(max_iter=3000))
    pipe.fit(X_cal_df, y_cal)
    est = SCoREMDR(pipe, alpha=0.05).fit(X_cal_df, y_cal)
    np.testing.assert_array_equal(est.feature_names_in_, columns)
    assert est.n_features_in_ == 64
    assert est.decide(X_test_df).shape == (len(X_test_df),)


def test_shift_weights_match_weighted_array_layer(regression):
    model, risk_model, X_cal, y_cal, X_test, _ = regression
    rng = np.random.default_rng(1)
    w_cal, w_test = rng.uniform(0.5, 2, len(y_cal)), rng.uniform(0.5, 2, len(X_test))
    risk = SQUARED
    L = risk(y_cal, model.predict(X_cal))
    S, T = risk_model.predict(X_cal), risk_model.predict(X_test)
    mdr = SCoREMDR(model, risk=risk, risk_score=risk_model, alpha=0.1)
    mdr.fit(X_cal, y_cal, shift_weights=w_cal)
    np.testing.assert_array_equal(
        mdr.decide(X_test, shift_weights=w_test), mdr_decisions(L, S, T, 0.1, None, w_cal, w_test)
    )
    sdr = SCoRESDR(model, risk=risk, risk_score=risk_model, alpha=0.1, boosting=None)
    sdr.fit(X_cal, y_cal, shift_weights=w_cal)
    np.testing.assert_allclose(
        sdr.evalues(X_test, shift_weights=w_test), sdr_evalues(L, S, T, 0.1, w_cal, w_test)
    )
    with pytest.raises(ValueError, match="pass `shift_weights`"):
        mdr.decide(X_test)
    unweighted = SCoREMDR(model, risk=risk, risk_score=risk_model).fit(X_cal, y_cal)
    with pytest.raises(ValueError, match="not for the calibration rows"):
        unweighted.decide(X_test, shift_weights=w_test)


def test_weight_estimator_classifies_source_vs_target(regression):
    model, risk_model, X_cal, y_cal, X_test, _ = regression
    X_target = X_test[:500] + np.array([0.3, 0, 0, 0, 0])
    est = SCoREMDR(
        model,
        risk=SQUARED,
        risk_score=risk_model,
        weight_estimator=LogisticRegression(),
        random_state=0,
    ).fit(X_cal, y_cal, X_target=X_target)
    # The weight model is fitted on the training half; the other half calibrates.
    assert est.n_calibration_ == 500 and len(est.cal_weights_) == 500
    # Shifted towards larger x0: estimated density ratios increase with x0.
    p = est.weight_estimator_.predict_proba(X_test[500:])[:, 1]
    assert np.corrcoef(p / (1 - p), X_test[500:, 0])[0, 1] > 0.9
    assert est.decide(X_test[500:]).shape == (len(X_test) - 500,)
    with pytest.raises(ValueError, match="X_target"):
        SCoREMDR(model, risk=SQUARED, risk_score=risk_model, weight_estimator=LogisticRegression()).fit(
            X_cal, y_cal
        )


def test_reward_aware_scores(regression):
    model, risk_model, X_cal, y_cal, X_test, _ = regression
    reward_model = LinearRegression().fit(X_cal, 1.5 + X_cal[:, 2])
    mdr_score = RewardAwareScore(risk_model, reward_model, target="mdr")
    sdr_score = RewardAwareScore(risk_model, reward_model, target="sdr", alpha=0.1)
    r = np.maximum(reward_model.predict(X_test), 1e-6)
    np.testing.assert_allclose(mdr_score(X_test), risk_model.predict(X_test) / r)
    np.testing.assert_allclose(sdr_score(X_test), (risk_model.predict(X_test) - 0.1) / r)
    est = SCoRESDR(model, risk=SQUARED, risk_score=sdr_score, alpha=0.1, random_state=0)
    assert est.fit(X_cal, y_cal).decide(X_test).any()
    with pytest.raises(ValueError, match="needs `alpha`"):
        RewardAwareScore(risk_model, reward_model, target="sdr")


def test_pickle_roundtrip_gives_identical_decisions(digits):
    model, _, _, X_cal, y_cal, X_test, _ = digits
    for est in (SCoREMDR(model, alpha=0.05), SCoRESDR(model, alpha=0.05, random_state=1)):
        est.fit(X_cal, y_cal)
        again = pickle.loads(pickle.dumps(est))
        np.testing.assert_array_equal(again.decide(X_test), est.decide(X_test))


def test_n_jobs_gives_identical_results(digits):
    model, _, _, X_cal, y_cal, X_test, _ = digits
    one = SCoREMDR(model, alpha=0.05).fit(X_cal, y_cal)
    two = SCoREMDR(model, alpha=0.05, n_jobs=2).fit(X_cal, y_cal)
    np.testing.assert_array_equal(one.decide(X_test), two.decide(X_test))
    np.testing.assert_allclose(one.evalues(X_test), two.evalues(X_test))


def test_verbose_reports_calibration(digits, capsys):
    model, _, _, X_cal, y_cal, _, _ = digits
    SCoREMDR(model, verbose=1).fit(X_cal, y_cal)
    assert "calibrated on 897 rows" in capsys.readouterr().out


def test_nothing_certifiable_warns_and_deploys_nothing(digits):
    model, _, _, X_cal, y_cal, X_test, _ = digits
    est = SCoREMDR(model, alpha=0.05).fit(X_cal[:10], y_cal[:10])
    with pytest.warns(RiskControlWarning, match="at least 19 calibration points"):
        decided = est.decide(X_test)
    assert not decided.any()


@pytest.mark.parametrize(
    "params, match",
    [
        ({"alpha": 1.5}, "alpha"),
        ({"alpha": 0.0}, "alpha"),
        ({"risk": "nope"}, "risk"),
        ({"risk_score": "nope"}, "risk_score"),
        ({"gamma": -0.1}, "gamma"),
    ],
)
def test_bad_parameters(digits, params, match):
    model, _, _, X_cal, y_cal, _, _ = digits
    with pytest.raises(ValueError, match=match):
        SCoREMDR(model, **params).fit(X_cal, y_cal)


def test_bad_inputs(digits, regression):
    model, _, _, X_cal, y_cal, X_test, _ = digits
    with pytest.raises(ValueError, match="rows but `y` has"):
        SCoREMDR(model).fit(X_cal, y_cal[:-1])
    with pytest.raises(ValueError, match="empty"):
        SCoREMDR(model).fit(X_cal[:0], y_cal[:0])
    with pytest.raises(ValueError, match="strictly positive"):
        SCoREMDR(model).fit(X_cal, y_cal, shift_weights=np.r_[0.0, np.ones(len(y_cal) - 1)])
    with pytest.raises(NotFittedError):
        SCoREMDR(model).decide(X_test)
    reg, _, Xr, yr, _, _ = regression
    with pytest.raises(ValueError, match=r"must lie in \[0, 1\]"):
        SCoREMDR(reg, risk=lambda yt, yp: (yt - yp) ** 2 * 100, risk_score=lambda X: X[:, 0]).fit(Xr, yr)
    with pytest.raises(ValueError, match="must be finite"):
        SCoREMDR(reg, risk=SQUARED, risk_score=lambda X: np.full(len(X), np.nan)).fit(Xr, yr)
    with pytest.raises(ValueError, match="does not support covariate-shift"):
        ConcentrationMDR(model).fit(X_cal, y_cal, shift_weights=np.ones(len(y_cal)))


def test_concentration_baselines_are_more_conservative(digits):
    model, _, _, X_cal, y_cal, X_test, _ = digits
    score = SCoREMDR(model, alpha=0.05).fit(X_cal, y_cal).decide(X_test)
    for bound in ("hoeffding", "rademacher"):
        base = ConcentrationMDR(model, alpha=0.05, bound=bound, random_state=0)
        with pytest.warns(RiskControlWarning, match="No threshold is certified"):
            base.fit(X_cal, y_cal)  # n = 897 is too small for a PAC bound at alpha = 0.05
        assert base.decide(X_test).sum() == 0 < score.sum()
    sdr = ConcentrationSDR(model, alpha=0.2, random_state=0).fit(X_cal, y_cal)
    np.testing.assert_array_equal(sdr.decide(X_test), sdr.decision_function(X_test) >= 0)


# -- boosting stream of SCoRESDR ----------------------------------------------------------------------
def test_sdr_draws_fresh_uniforms_at_every_call_and_a_refit_replays_them(digits):
    model, _, _, X_cal, y_cal, X_test, _ = digits
    X_a, X_b = X_test[:200], X_test[200:]
    est = SCoRESDR(model, alpha=0.01, boosting="hete", random_state=7).fit(X_cal, y_cal)
    e_a, e_b = est.evalues(X_a), est.evalues(X_b)  # not boosted: draws nothing
    # Brute force: one RandomState(7) stream, advanced by each boosted call in turn.
    stream = np.random.RandomState(7)
    u = [stream.uniform(size=len(X_a)) for _ in range(2)] + [stream.uniform(size=len(X_b))]
    assert not np.allclose(u[0], u[1])
    first, second, third = est.decide(X_a), est.decide(X_a), est.decide(X_b)
    np.testing.assert_array_equal(first, ebh(e_a / u[0], 0.01))
    np.testing.assert_array_equal(second, ebh(e_a / u[1], 0.01))
    np.testing.assert_array_equal(third, ebh(e_b / u[2], 0.01))
    assert not np.array_equal(first, second)  # same batch, new uniforms, other decisions
    # A refit with the same int seed replays the same sequence of decisions.
    est.fit(X_cal, y_cal)
    for X_batch, expected in [(X_a, first), (X_a, second), (X_b, third)]:
        np.testing.assert_array_equal(est.decide(X_batch), expected)
    # decision_function is a boosted call too: the k-th call after a fit agrees with decide's k-th.
    est.fit(X_cal, y_cal)
    np.testing.assert_array_equal(est.decision_function(X_a) >= 0, first)
    np.testing.assert_array_equal(est.decision_function(X_a) >= 0, second)


def test_sdr_without_boosting_draws_nothing(digits):
    model, _, _, X_cal, y_cal, X_test, _ = digits
    est = SCoRESDR(model, alpha=0.2, boosting=None, random_state=0).fit(X_cal, y_cal)
    decided = est.decide(X_test)
    np.testing.assert_array_equal(est.decide(X_test), decided)
    np.testing.assert_array_equal(est.decision_function(X_test) >= 0, decided)


@pytest.mark.parametrize("cls", [SCoREMDR, SCoRESDR, ConcentrationSDR])
def test_every_random_state_form_is_accepted(cls):
    """int, RandomState and numpy Generator, on the split path (unfitted model)."""
    X, y = load_digits(return_X_y=True)
    X_fit, X_test, y_fit, _ = train_test_split(X, y, test_size=300, random_state=0)
    params = {"bound": "rademacher", "alpha": 0.3} if cls is ConcentrationSDR else {"alpha": 0.05}

    def run(random_state):
        est = cls(GaussianNB(), random_state=random_state, **params)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RiskControlWarning)
            return est.fit(X_fit, y_fit), est.decide(X_test)

    est_int, d_int = run(3)
    _, d_rs = run(np.random.RandomState(3))
    np.testing.assert_array_equal(d_rs, d_int)  # a RandomState(3) is the int 3
    est_gen, d_gen = run(np.random.default_rng(5))
    _, d_gen_again = run(np.random.default_rng(5))
    np.testing.assert_array_equal(d_gen, d_gen_again)  # a seeded Generator is reproducible
    assert est_gen.n_calibration_ == est_int.n_calibration_
    with pytest.raises(ValueError, match="random_state"):
        cls(GaussianNB(), random_state="seed").fit(X_fit, y_fit)


# -- Pipeline whose last step is a SCoRE estimator --------------------------------------------------
@pytest.fixture(scope="module")
def scaled_digits():
    """A scaler and a classifier fitted on training rows; calibration and test rows apart."""
    X, y = load_digits(return_X_y=True)
    X_fit, X_rest, y_fit, y_rest = train_test_split(X, y, train_size=300, random_state=1)
    X_cal, X_test, y_cal, _ = train_test_split(X_rest, y_rest, test_size=400, random_state=1)
    scaler = StandardScaler().fit(X_fit)
    model = LogisticRegression(max_iter=3000).fit(scaler.transform(X_fit), y_fit)
    return scaler, model, X_cal, y_cal, X_test


def _frozen_pipeline(scaler, model):
    # Frozen steps: pipe.fit only calibrates, on rows no step was fitted on.
    return make_pipeline(FrozenEstimator(scaler), SCoREMDR(FrozenEstimator(model), alpha=0.05))


def test_pipeline_decide_equals_the_last_step_on_transformed_rows(scaled_digits):
    scaler, model, X_cal, y_cal, X_test = scaled_digits
    pipe = _frozen_pipeline(scaler, model).fit(X_cal, y_cal)
    direct = clone(pipe[-1]).fit(scaler.transform(X_cal), y_cal).decide(scaler.transform(X_test))
    decided = pipeline_decide(pipe, X_test)
    np.testing.assert_array_equal(decided, direct)
    np.testing.assert_array_equal(decided, pipe[-1].decide(pipe[:-1].transform(X_test)))
    assert 0 < decided.mean() < 1
    assert not hasattr(pipe, "decide")  # why the helper exists


def test_pipeline_decide_through_gridsearch_over_alpha(scaled_digits):
    scaler, model, X_cal, y_cal, X_test = scaled_digits
    pipe = _frozen_pipeline(scaler, model)
    search = GridSearchCV(
        pipe, {"scoremdr__alpha": [0.02, 0.05, 0.1]}, cv=KFold(3, shuffle=True, random_state=0)
    ).fit(X_cal, y_cal)
    best = search.best_estimator_
    assert best[-1].alpha == search.best_params_["scoremdr__alpha"]
    rates = search.cv_results_["mean_test_score"]  # SCoRE's score: the deployment rate
    assert np.all(np.diff(rates) >= 0)  # more tolerated risk, more deployment
    np.testing.assert_array_equal(
        pipeline_decide(best, X_test), best[-1].decide(best[:-1].transform(X_test))
    )


def test_pipeline_decide_needs_a_deciding_last_step(digits):
    model, _, _, X_cal, y_cal, X_test, _ = digits
    pipe = make_pipeline(StandardScaler(), LogisticRegression(max_iter=3000)).fit(X_cal, y_cal)
    with pytest.raises(TypeError, match="last step .* is a LogisticRegression, which has no `decide`"):
        pipeline_decide(pipe, X_test)


def test_fit_without_a_split_calibrates_on_every_row_and_keeps_its_own_weights(digits):
    """No split: all rows, in order, calibrate; the stored weights are not the caller's array."""
    model, _, _, X_cal, y_cal, X_test, _ = digits
    w_cal = np.linspace(0.5, 2.0, len(y_cal))
    w_test = np.linspace(0.5, 2.0, len(X_test))
    est = SCoRESDR(FrozenEstimator(model), alpha=0.1).fit(X_cal, y_cal, shift_weights=w_cal)
    L = (model.predict(X_cal) != y_cal).astype(float)
    S, T = _proba_scores(model, X_cal), _proba_scores(model, X_test)
    assert est.n_calibration_ == len(y_cal)
    np.testing.assert_array_equal(est.cal_risks_, L)
    np.testing.assert_array_equal(est.cal_scores_, S)
    expected = sdr_evalues(L, S, T, 0.1, w_cal, w_test)
    w_cal[:] = 1.0  # the caller reuses its buffer
    np.testing.assert_array_equal(est.cal_weights_, np.linspace(0.5, 2.0, len(y_cal)))
    np.testing.assert_array_equal(est.evalues(X_test, shift_weights=w_test), expected)


@pytest.mark.parametrize("n_classes", [1, 2, 3, 4, 5, 26])
def test_row_max_equals_numpy_max(n_classes):
    from sklearn_riskcontrol.selective._base import _row_max

    proba = np.random.default_rng(n_classes).random((500, n_classes))
    np.testing.assert_array_equal(_row_max(proba), proba.max(axis=1))
    np.testing.assert_array_equal(_row_max(np.asfortranarray(proba)), proba.max(axis=1))
