"""End-to-end demo on bundled real data (``python -m sklearn_riskcontrol demo``)."""

import time

import numpy as np
from sklearn.ensemble import HistGradientBoostingRegressor
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import OrdinalEncoder
from sklearn.pipeline import make_pipeline
from sklearn.compose import make_column_transformer

from .datasets import load_diamonds
from .evalues import boost_evalues, ebh, mdr_decisions, sdr_evalues
from .risks import make_risk


def _diamonds_model(X, y, seed):
    cats = ["cut", "color", "clarity"]
    prep = make_column_transformer((OrdinalEncoder(), cats), remainder="passthrough")
    model = make_pipeline(prep, HistGradientBoostingRegressor(max_iter=100, random_state=seed))
    return model.fit(X, np.log(y))


def _score_section(seed, quick):
    X, y = load_diamonds(return_X_y=True)
    if quick:
        X, y = X.iloc[:8000], y.iloc[:8000]
    X_fit, X_rest, y_fit, y_rest = train_test_split(X, y, train_size=0.4, random_state=seed)
    X_cal, X_test, y_cal, y_test = train_test_split(X_rest, y_rest, train_size=0.5, random_state=seed)
    model = _diamonds_model(X_fit, y_fit, seed)
    # Risk: squared error of log-price, scaled so that an error of 0.3 (~35% price error) is 1.
    risk = make_risk("squared", scale=0.09)
    residual_model = make_pipeline(
        make_column_transformer((OrdinalEncoder(), ["cut", "color", "clarity"]), remainder="passthrough"),
        HistGradientBoostingRegressor(max_iter=50, random_state=seed),
    ).fit(X_fit, risk(np.log(y_fit), model.predict(X_fit)))
    L_cal = risk(np.log(y_cal), model.predict(X_cal))
    L_test = risk(np.log(y_test), model.predict(X_test))
    s_cal, s_test = residual_model.predict(X_cal), residual_model.predict(X_test)
    alpha = 0.05
    print("SCoRE on diamonds (price regressor, scaled squared error of log-price)")
    print(f"  calibration n = {len(L_cal)}, test m = {len(L_test)}, alpha = {alpha}")
    print(f"  average risk if deployed everywhere: {L_test.mean():.4f}")
    mdr = mdr_decisions(L_cal, s_cal, s_test, alpha=alpha)
    print(
        f"  SCoRE-MDR : deployed on {mdr.mean():.1%} of test points; "
        f"realized MDR = {np.mean(L_test * mdr):.4f} (guarantee: E[L * deploy] <= {alpha})"
    )
    e = sdr_evalues(L_cal, s_cal, s_test, gamma=alpha)
    sdr = ebh(boost_evalues(e, "hete", random_state=seed), alpha)
    realized = (L_test * sdr).sum() / max(1, sdr.sum())
    print(
        f"  SCoRE-SDR (hete boosting): deployed on {sdr.mean():.1%} of test points; "
        f"realized SDR = {realized:.4f} (guarantee: E[risk among deployed] <= {alpha})"
    )


def run_demo(seed=0, quick=False):
    """Run every available method end to end and print a short report."""
    start = time.perf_counter()
    print(f"sklearn-riskcontrol demo (seed={seed})\n")
    _score_section(seed, quick)
    print(f"\ndone in {time.perf_counter() - start:.1f} s")
