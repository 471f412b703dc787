"""SCoRE on degenerate but legal inputs: warnings that name the cause and the fix, clear errors.

Covers calibration risks that are all 1 (``risk="zero_one"`` on a regressor, labels the model
never predicts), the squared risk's scale (required; warning when many risks are clipped at 1),
missing labels in object-dtype ``y``, and warnings pointing at the user's line.
"""

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_diabetes, load_digits
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer

from sklearn_riskcontrol.selective import (
    ConcentrationMDR,
    SCoREMDR,
    SCoRESDR,
)
from sklearn_riskcontrol.autoeval import RAutoEvalPlus
from sklearn_riskcontrol import RiskControlWarning
from sklearn_riskcontrol.risks import make_risk, SATURATION_WARN_SHARE


@pytest.fixture(scope="module")
def diabetes():
    X, y = load_diabetes(return_X_y=True)
    X_fit, X_rest, y_fit, y_rest = train_test_split(X, y, train_size=0.4, random_state=0)
    X_cal, X_test, y_cal, y_test = train_test_split(X_rest, y_rest, test_size=0.5, random_state=0)
    model = LinearRegression().fit(X_fit, y_fit)
    return model, X_fit, y_fit, X_cal, y_cal, X_test


@pytest.fixture(scope="module")
def digits_unseen_labels():
    """A classifier of digits 0-4, calibrated on digits 5-9: it is wrong on every point."""
    X, y = load_digits(return_X_y=True)
    low = y < 5
    model = LogisticRegression(max_iter=2000).fit(X[low][:500], y[low][:500])
    X_cal, X_test, y_cal, _ = train_test_split(X[~low], y[~low], test_size=300, random_state=0)
    return model, X_cal, y_cal, X_test


def _risk_warnings(record):
    return [w for w in record if issubclass(w.category, RiskControlWarning)]


def _score_bmi(X):
    return np.asarray(X)[:, 2]  # body-mass index: any score is valid, this one is informative


# -- every calibration risk equals 1 --------------------------------------------------------------
@pytest.mark.parametrize(
    "cls, params",
    [(SCoREMDR, {}), (SCoRESDR, {}), (ConcentrationMDR, {"grid": np.linspace(-0.2, 0.2, 41)})],
)
def test_zero_one_on_a_regressor_warns_with_cause_and_fix(diabetes, cls, params):
    model, _, _, X_cal, y_cal, X_test = diabetes
    est = cls(model, risk="zero_one", risk_score=_score_bmi, alpha=0.1, **params)
    with pytest.warns(RiskControlWarning) as record:
        est.fit(X_cal, y_cal)
    assert np.all(est.cal_risks_ == 1.0)
    messages = [str(w.message) for w in _risk_warnings(record)]
    # one warning for one cause, naming it (classification risk, regressor) and the fix
    ours = [m for m in messages if "risk='zero_one'" in m]
    assert len(ours) == 1
    n = len(y_cal)
    assert "is a regressor" in ours[0] and f"({n} of {n} calibration risks are 1)" in ours[0]
    assert "make_risk('absolute', tolerance=t)" in ours[0] and "make_risk('squared', scale=s)" in ours[0]


@pytest.mark.parametrize("wrap", [FrozenEstimator, lambda m: make_pipeline(FunctionTransformer(), m)],
                         ids=["frozen", "pipeline"])
def test_a_wrapped_regressor_is_detected(diabetes, wrap):
    model, _, _, X_cal, y_cal, _ = diabetes
    with pytest.warns(RiskControlWarning, match="the wrapped estimator is a regressor"):
        SCoREMDR(wrap(model), risk="zero_one", risk_score=_score_bmi).fit(X_cal, y_cal)


def test_all_ones_deploys_about_alpha_of_the_points_and_warns():
    """For the record: with every risk 1, MDR control only caps the deployment rate near alpha."""
    X, y = load_diabetes(return_X_y=True)
    rates = []
    for seed in range(5):
        X_fit, X_rest, y_fit, y_rest = train_test_split(X, y, train_size=0.4, random_state=seed)
        X_cal, X_test, y_cal, _ = train_test_split(X_rest, y_rest, test_size=0.5, random_state=seed)
        model = LinearRegression().fit(X_fit, y_fit)
        est = SCoREMDR(model, risk="zero_one", risk_score=_score_bmi, alpha=0.1)
        with pytest.warns(RiskControlWarning, match="is a regressor"):
            est.fit(X_cal, y_cal)
        rates.append(est.decide(X_test).mean())
    # It does deploy (points where the model is surely wrong): hence the warning in fit.
    assert 0.0 < np.mean(rates) <= 0.2


@pytest.mark.parametrize("cls", [SCoREMDR, SCoRESDR])
def test_labels_the_model_never_predicts_warn(digits_unseen_labels, cls):
    model, X_cal, y_cal, _ = digits_unseen_labels
    n = len(y_cal)
    with pytest.warns(RiskControlWarning) as record:
        cls(model, alpha=0.1).fit(X_cal, y_cal)
    (message,) = [str(w.message) for w in _risk_warnings(record)]
    assert message.startswith(f"All {n} calibration risks equal the maximum 1: the model is wrong on every")
    assert "labels the model never predicts" in message
    assert "check that y holds labels the model predicts" in message
    assert "is a regressor" not in message  # a classifier: the regressor warning stays silent


def test_a_useful_classifier_does_not_warn():
    X, y = load_digits(return_X_y=True)
    X_fit, X_cal, y_fit, y_cal = train_test_split(X, y, train_size=600, random_state=0)
    model = LogisticRegression(max_iter=2000).fit(X_fit, y_fit)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RiskControlWarning)
        SCoREMDR(model, alpha=0.1).fit(X_cal, y_cal)


# -- the squared risk's scale ------------------------------------------------------------------------
@pytest.mark.parametrize("cls", [SCoREMDR, SCoRESDR])
def test_squared_risk_without_scale_raises_in_fit(diabetes, cls):
    model, _, _, X_cal, y_cal, _ = diabetes
    with pytest.raises(ValueError, match=r"risk 'squared' is unbounded and needs an explicit `scale`.*"
                                         r"risk=make_risk\('squared', scale=s\)"):
        cls(model, risk="squared", risk_score=_score_bmi).fit(X_cal, y_cal)


def test_squared_risk_without_scale_raises_in_rautoeval(diabetes):
    model, _, _, X_cal, y_cal, _ = diabetes
    with pytest.raises(ValueError, match=r"needs an explicit `scale`.*risk=make_risk\('squared', scale=s\)"):
        RAutoEvalPlus(model, risk="squared", autoevaluator=model, random_state=0).fit(X_cal, y_cal)


def test_saturated_squared_risks_warn_and_a_residual_scale_does_not(diabetes):
    model, X_fit, y_fit, X_cal, y_cal, _ = diabetes
    with pytest.warns(RiskControlWarning) as record:
        est = SCoREMDR(model, risk=make_risk("squared", scale=1.0), risk_score=_score_bmi)
        est.fit(X_cal, y_cal)
    k = int(np.sum(est.cal_risks_ == 1.0))
    assert k >= SATURATION_WARN_SHARE * len(y_cal)  # 131 of 132 on this split
    (message,) = [str(w.message) for w in _risk_warnings(record)]
    assert message.startswith(
        f"{k} of {len(y_cal)} calibration risks ({k / len(y_cal):.0%}) are clipped at 1 by "
        "make_risk('squared', scale=1.0): the guarantee covers this clipped loss"
    )
    assert "Use a larger scale" in message

    # The recommended scale: a high quantile of squared residuals on the *training* data.
    scale = float(np.quantile((y_fit - model.predict(X_fit)) ** 2, 0.99))
    with warnings.catch_warnings():
        warnings.simplefilter("error", RiskControlWarning)
        est = SCoREMDR(model, risk=make_risk("squared", scale=scale), risk_score=_score_bmi)
        est.fit(X_cal, y_cal)
    assert np.mean(est.cal_risks_ == 1.0) < 0.05


def test_saturation_warning_threshold_is_the_documented_share():
    """Exactly at the documented share the warning fires; one clipped risk fewer it does not."""
    n = 40
    k = int(np.ceil(SATURATION_WARN_SHARE * n))
    X = np.arange(n, dtype=float).reshape(-1, 1)
    model = LinearRegression().fit(X, np.zeros(n))  # predicts 0
    y = np.r_[np.full(k, 3.0), np.full(n - k, 0.5)]  # squared errors 9 (clipped) and 0.25
    risk = make_risk("squared", scale=4.0)
    with pytest.warns(RiskControlWarning, match=rf"^{k} of {n} calibration risks \(25%\) are clipped"):
        SCoREMDR(model, risk=risk, risk_score=np.ravel).fit(X, y)
    y[k - 1] = 0.5
    with warnings.catch_warnings():
        warnings.simplefilter("error", RiskControlWarning)
        SCoREMDR(model, risk=risk, risk_score=np.ravel).fit(X, y)


def test_all_squared_risks_clipped_say_the_scale_is_too_small(diabetes):
    model, _, _, X_cal, y_cal, _ = diabetes
    with pytest.warns(RiskControlWarning) as record:
        SCoREMDR(model, risk=make_risk("squared", scale=np.float64(1e-6)),
                 risk_score=_score_bmi).fit(X_cal, y_cal)
    (message,) = [str(w.message) for w in _risk_warnings(record)]
    assert message.startswith(f"All {len(y_cal)} calibration risks equal the maximum 1")
    assert "every squared error exceeds scale=1e-06: use a larger scale" in message
    assert "np." not in message  # no NumPy repr such as np.float64(1e-06)


# -- missing labels ---------------------------------------------------------------------------------
@pytest.mark.parametrize("missing", [None, pd.NA, np.nan])
@pytest.mark.parametrize("cls", [SCoREMDR, SCoRESDR])
@pytest.mark.parametrize("fitted", [True, False], ids=["fitted", "split"])
def test_missing_object_label_is_rejected_like_nan(digits_unseen_labels, cls, fitted, missing):
    model, X_cal, y_cal, _ = digits_unseen_labels
    y = np.array([str(v) for v in y_cal], dtype=object)
    y[3] = missing
    est = cls(model if fitted else LogisticRegression(max_iter=200), alpha=0.1, random_state=0)
    with pytest.raises(ValueError, match=r"`y` has a missing label \(None/NaN\) at entry 3 \(1 in total\); "
                                         r"drop those rows or fill them"):
        est.fit(X_cal, y)


def test_nan_in_float_labels_is_rejected(diabetes):
    model, _, _, X_cal, y_cal, _ = diabetes
    y = y_cal.copy()
    y[5] = np.nan
    with pytest.raises(ValueError, match=r"`y` must be finite; entry 5 is nan"):
        SCoREMDR(model, risk=make_risk("squared", scale=1e4), risk_score=_score_bmi).fit(X_cal, y)


# -- warnings point at the user's line --------------------------------------------------------------
def test_warnings_point_at_the_callers_line(diabetes, digits_unseen_labels):
    model, _, _, X_cal, y_cal, X_test = diabetes
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        est = SCoREMDR(model, risk="zero_one", risk_score=_score_bmi, alpha=0.1)
        est.fit(X_cal, y_cal)  # fit warning: zero_one on a regressor
        SCoRESDR(model, risk="zero_one", risk_score=_score_bmi, alpha=0.1).fit(X_cal, y_cal)
        tiny = SCoREMDR(model, risk=make_risk("squared", scale=1e6), risk_score=_score_bmi,
                        alpha=0.05).fit(X_cal[:5], y_cal[:5])
        tiny.decide(X_test)  # decide warning: 5 calibration points cannot certify alpha = 0.05
    ours = _risk_warnings(record)
    assert len(ours) == 3
    assert "deploys on no test point" in str(ours[-1].message)
    for w in ours:
        assert w.filename == __file__, (w.filename, str(w.message))
