"""SCoRE section of the demo (``python -m sklearn_riskcontrol demo``).

Deploys a diamond-price regressor (gradient boosting on the bundled diamonds data) only where
it is safe: SCoRE-MDR and SCoRE-SDR against the Hoeffding / Rademacher concentration baselines,
each with its deployment share, realized risk and guarantee.
"""

import warnings

import numpy as np
from sklearn.compose import make_column_transformer
from sklearn.ensemble import HistGradientBoostingRegressor
from sklearn.model_selection import cross_val_predict, train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OrdinalEncoder

from ..datasets import load_diamonds
from ..selective import deployment_rate, realized_mdr, realized_sdr
from ..risks import make_risk
from ..selective import ConcentrationMDR, ConcentrationSDR, SCoREMDR, SCoRESDR

__all__ = ["selective_section"]

_CATEGORIES = ["cut", "color", "clarity"]


def _gradient_boosting(seed, max_iter):
    prep = make_column_transformer((OrdinalEncoder(), _CATEGORIES), remainder="passthrough")
    return make_pipeline(prep, HistGradientBoostingRegressor(max_iter=max_iter, random_state=seed))


def selective_section(seed=0, quick=False):
    """Print the SCoRE part of the demo (diamond prices); return its summary lines."""
    X, y = load_diamonds(return_X_y=True)
    y = np.log(y)
    if quick:  # a random subsample: the rows are in blocks sorted by price (the first 8000 cost
        # $326-$4327), so a head of the file is not a sample of the diamonds
        X, _, y, _ = train_test_split(X, y, train_size=8000, random_state=seed)
    X_fit, X_rest, y_fit, y_rest = train_test_split(X, y, train_size=0.4, random_state=seed)
    X_cal, X_test, y_cal, y_test = train_test_split(
        X_rest, y_rest, train_size=0.5, test_size=2000, random_state=seed
    )
    model = _gradient_boosting(seed, 100).fit(X_fit, y_fit)
    # Risk: squared error of log-price, scaled so that an error of 0.3 (~35% in price) counts 1.
    risk = make_risk("squared", scale=0.09)
    # The score predicts that risk. It is trained on the fitting split only, on out-of-fold risks
    # (in-sample errors of the model would be optimistic).
    oof = cross_val_predict(_gradient_boosting(seed, 100), X_fit, y_fit, cv=3)
    risk_model = _gradient_boosting(seed, 50).fit(X_fit, risk(y_fit, oof))
    L_test = risk(y_test, model.predict(X_test))
    alpha = 0.05
    print("SCoRE: deploy a diamond-price regressor only where it is safe")
    print(f"  calibration n = {len(y_cal)}, test m = {len(y_test)}, alpha = {alpha}, "
          f"risk = min((log-price error)^2 / 0.09, 1)")
    print(f"  risk if deployed everywhere (realized on this test set): {L_test.mean():.4f}")
    print("  SCoRE guarantees hold in finite samples, in expectation over calibration and test "
          "draws,\n  for exchangeable data (or a known covariate shift, via shift_weights); the "
          "shares and\n  realized risks below are one draw (measured with the test labels, "
          "which no method sees)")
    # MDR and SDR are different quantities: name each realized number for what it measures.
    mdr = ("MDR = mean(L x deploy) over all test points", realized_mdr)
    sdr = ("SDR = mean L among deployed points", realized_sdr)
    rows = [
        ("SCoRE-MDR", SCoREMDR, {}, mdr, "E[L * deploy] <= alpha at each test point"),
        ("SCoRE-SDR (homo boosting)", SCoRESDR, {"boosting": "homo", "random_state": seed},
         sdr, "E[risk among deployed] <= alpha"),
        ("Hoeffding MDR baseline", ConcentrationMDR,
         {"grid": np.linspace(0, 1, 101), "bound": "hoeffding", "procedure": "union"},
         mdr, "MDR <= alpha w.p. >= 0.9 over the calibration draw (PAC)"),
        ("Rademacher SDR baseline", ConcentrationSDR, {"bound": "rademacher", "random_state": seed},
         sdr, "SDR <= alpha w.p. >= 0.9 over the calibration draw (PAC)"),
    ]
    summary = []
    for name, cls, params, (what, realized), guarantee in rows:
        est = cls(model, risk=risk, risk_score=risk_model, alpha=alpha, **params)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "nothing deployed" is reported in the table
            deployed = est.fit(X_cal, y_cal).decide(X_test)
        pad = " " * 30
        print(f"  {name:<27s} deployed on {deployment_rate(deployed):.1%} of the test points")
        if deployed.any():
            value = realized(L_test, deployed)
            side = "above" if value > alpha else "at or below"
            print(f"{pad}{what}: {value:.4f}\n{pad}  ({side} alpha = {alpha} in this one draw; "
                  "a single draw may exceed alpha)")
        else:
            print(f"{pad}{what}: none (nothing deployed)")
        print(f"{pad}guarantee: {guarantee}")
        if name.startswith("SCoRE"):
            summary.append(
                f"deployed    {name}: on {deployment_rate(deployed):.1%} of the test diamonds "
                f"(one draw); guarantee {guarantee.replace('alpha', str(alpha))}, in expectation "
                "over calibration and test draws (exchangeable or known shift)"
            )
    return summary
