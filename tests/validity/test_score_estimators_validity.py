"""Monte-Carlo validity of the SCoRE *estimators* (end to end, incl. estimated covariate shift).

The array layer is checked exhaustively in ``validity/test_score_validity.py``; this reduced study checks
that the estimators wire risks, scores, boosting and the ``weight_estimator`` path correctly:
realized MDR / SDR averaged over repetitions stay below ``alpha`` + 4 Monte-Carlo standard errors
(+ 0.02 with estimated weights, whose control is only asymptotic).
"""

import warnings

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

from sklearn_riskcontrol import RiskControlWarning
from sklearn_riskcontrol.selective import SCoREMDR, SCoRESDR, realized_mdr, realized_sdr
from sklearn_riskcontrol.datasets import make_score_setting


class _SettingRisk:
    """The setting's risk ``L(f, x, y)`` as an estimator ``risk(y_true, y_pred)``.

    For the clipped-MSE settings the prediction is f(x); for the others L depends on y only.
    """

    def __init__(self, setting):
        self.setting = setting

    def __call__(self, y_true, y_pred):
        s = self.setting
        y = np.asarray(y_true, dtype=float)
        if s.risk_kind == "mse":
            return np.clip((y - y_pred) ** 2, 0, s.clip_c) / s.clip_c
        return s.risk(np.zeros((len(y), 20)), y)


class _Model:
    """The setting's fitted f (settings 3-4), or a constant predictor where L ignores f."""

    def __init__(self, setting):
        self.inner = setting.model

    def fit(self, X, y):  # pragma: no cover - never refitted
        raise AssertionError("the wrapped model must not be refitted")

    def predict(self, X):
        return self.inner.predict(X) if self.inner is not None else np.zeros(len(X))

    def __sklearn_is_fitted__(self):
        return True


def _study(setting_id, reps, alphas, shift):
    setting = make_score_setting(setting_id, n_estimators=25, random_state=setting_id)
    risk, model = _SettingRisk(setting), _Model(setting)
    results = {}
    for rep in range(reps):
        rng = np.random.RandomState(1000 * setting_id + rep)
        X_cal, y_cal = setting.sample(1000, random_state=rng)
        X_test, y_test = setting.sample(100, random_state=rng, shift=shift)
        L_test = setting.risk(X_test, y_test)
        kwargs, fit_kwargs = {}, {}
        if shift:
            X_target, _ = setting.sample(1000, random_state=rng, shift=True)
            X_source, y_source = setting.sample(1000, random_state=rng)
            # Unfitted weight model: fit() uses the first 1000 rows (calib_size) with X_target.
            X_cal, y_cal = np.vstack([X_source, X_cal]), np.r_[y_source, y_cal]
            kwargs = {"weight_estimator": LogisticRegression(), "calib_size": 0.5}
            fit_kwargs = {"X_target": X_target}
        for alpha in alphas:
            estimators = {
                "mdr": SCoREMDR(model, risk=risk, risk_score=setting.risk_model, alpha=alpha,
                                random_state=rep, **kwargs),
                "sdr-hete": SCoRESDR(model, risk=risk, risk_score=setting.risk_model, alpha=alpha,
                                     boosting="hete", random_state=rep, **kwargs),
                "sdr-homo": SCoRESDR(model, risk=risk, risk_score=setting.risk_model, alpha=alpha,
                                     boosting="homo", random_state=rep, **kwargs),
            }
            for name, est in estimators.items():
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", RiskControlWarning)
                    deployed = est.fit(X_cal, y_cal, **fit_kwargs).decide(X_test)
                value = (realized_mdr if name == "mdr" else realized_sdr)(L_test, deployed)
                results.setdefault((name, alpha), []).append((value, deployed.mean()))
    return results


@pytest.mark.parametrize("setting_id, shift", [(1, False), (3, False), (5, True)])
def test_estimators_control_mdr_and_sdr(setting_id, shift):
    # Reduced study (25 repetitions; 300 and four alphas in -m slow). Measured on these seeds
    # (issue 23), it still fails every estimator run at twice its alpha: in each setting each of
    # MDR, SDR-hete and SDR-homo at 2 alpha has a cell at >= 6.7 standard errors above alpha
    # (4 fail), while the valid estimators stay below 2 standard errors.
    results = _study(setting_id, reps=25, alphas=(0.1, 0.3), shift=shift)
    slack_const = 0.02 if shift else 0.0
    for (name, alpha), values in results.items():
        risk = np.array([v for v, _ in values])
        se = risk.std(ddof=1) / np.sqrt(len(risk))
        assert risk.mean() <= alpha + 4 * se + slack_const, (name, alpha, risk.mean(), se)
    # Not vacuous: MDR deploys a sizeable share at alpha = 0.3 and uses its budget.
    mdr = np.array(results[("mdr", 0.3)])
    assert mdr[:, 1].mean() > 0.3 and mdr[:, 0].mean() > 0.2


@pytest.mark.slow
@pytest.mark.parametrize("setting_id", [1, 2, 3, 4, 5, 6])
@pytest.mark.parametrize("shift", [False, True])
def test_estimators_control_mdr_and_sdr_full(setting_id, shift):
    results = _study(setting_id, reps=300, alphas=(0.05, 0.1, 0.2, 0.3), shift=shift)
    slack_const = 0.02 if shift else 0.0
    for (name, alpha), values in results.items():
        risk = np.array([v for v, _ in values])
        se = risk.std(ddof=1) / np.sqrt(len(risk))
        assert risk.mean() <= alpha + 4 * se + slack_const, (name, alpha, risk.mean(), se)


@pytest.mark.parametrize("boosting", ["hete", "homo"])
def test_one_fitted_sdr_object_controls_sdr_over_many_batches(boosting):
    """One fitted SCoRESDR (a fixed int seed) deciding batch after batch: realized SDR <= alpha.

    Each batch gets fresh boosting uniforms from the stream seeded in fit; re-using one draw
    would make the control conditional on it. The guarantee is marginal over calibration data,
    test data and uniforms, so the study averages 12 calibration draws (each one object
    deciding 30 batches of 50) and its standard error is taken over the 12 per-calibration means.
    """
    setting = make_score_setting(1, n_estimators=25, random_state=1)
    risk, model, alpha = _SettingRisk(setting), _Model(setting), 0.2
    per_calibration, rates = [], []
    for rep in range(12):
        rng = np.random.RandomState(500 + rep)
        est = SCoRESDR(model, risk=risk, risk_score=setting.risk_model, alpha=alpha,
                       boosting=boosting, random_state=0)
        est.fit(*setting.sample(500, random_state=rng))
        values = []
        for _ in range(30):
            X_test, y_test = setting.sample(50, random_state=rng)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RiskControlWarning)
                deployed = est.decide(X_test)
            values.append(realized_sdr(setting.risk(X_test, y_test), deployed))
            rates.append(deployed.mean())
        per_calibration.append(np.mean(values))
    sdr = np.array(per_calibration)
    se = sdr.std(ddof=1) / np.sqrt(len(sdr))
    assert sdr.mean() <= alpha + 4 * se, (sdr.mean(), se)
    assert np.mean(rates) > 0.05  # not vacuous
