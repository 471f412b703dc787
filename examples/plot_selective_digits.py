"""
=====================================================================
Selective deployment of a digit classifier (SCoRE-MDR and SCoRE-SDR)
=====================================================================

A logistic-regression classifier reads handwritten digits. It is right about 96% of the time, but
some digits are ambiguous. We wrap the *fitted* classifier in :class:`~sklearn_riskcontrol.selective.SCoREMDR`
and :class:`~sklearn_riskcontrol.selective.SCoRESDR`, with the zero-one risk (a deployed prediction that is
wrong costs 1) and the score ``1 - max predict_proba`` (smaller = safer):

* SCoRE-MDR: ``P(deploy and wrong) <= alpha`` for each test digit;
* SCoRE-SDR: the expected error rate *among the deployed digits* is at most ``alpha``.

We compare with PAC-type alternatives (the risk is at most ``alpha`` *with probability*
``1 - delta`` over the calibration draw, a different guarantee): the paper's Hoeffding and
Rademacher baselines, and the library's default :class:`~sklearn_riskcontrol.selective.ConcentrationSDR`
(Learn-then-Test: exact binomial p-values per threshold, fallback procedure). We check the
guarantees on held-out labels over repeated random calibration/test splits.
"""

# %%
# Fit the model once; calibration and test data are drawn from the rest
# ----------------------------------------------------------------------
import warnings

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_digits
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split

from sklearn_riskcontrol.selective import (
    ConcentrationMDR,
    ConcentrationSDR,
    SCoREMDR,
    SCoRESDR,
    deployment_rate,
    realized_mdr,
    realized_sdr,
)
from sklearn_riskcontrol.plotting import plot_deployment_vs_alpha, plot_risk_vs_alpha

X, y = load_digits(return_X_y=True)
X_fit, X_pool, y_fit, y_pool = train_test_split(X, y, train_size=400, random_state=0)
model = LogisticRegression(max_iter=5000).fit(X_fit, y_fit)
errors_pool = model.predict(X_pool) != y_pool
print(f"error rate of the classifier on the pool: {errors_pool.mean():.3f}")

# %%
# One calibration/test split
# --------------------------
# The numbers printed here are one draw; the targets are bounds on their expectations over
# calibration and test draws, which the repeated splits below estimate.
X_cal, X_test, y_cal, y_test = train_test_split(X_pool, y_pool, test_size=300, random_state=1)
mdr = SCoREMDR(model, risk="zero_one", risk_score="proba", alpha=0.02).fit(X_cal, y_cal)
deploy = mdr.decide(X_test)
wrong = mdr.predict(X_test) != y_test
print(f"SCoRE-MDR deploys on {deployment_rate(deploy):.1%} of the test digits; "
      f"realized share deployed and wrong = {realized_mdr(wrong, deploy):.4f} (one draw; "
      "guarantee: P(deploy and wrong) <= 0.02)")

sdr = SCoRESDR(model, alpha=0.02, random_state=0).fit(X_cal, y_cal)  # boosting="homo"
deploy = sdr.decide(X_test)
print(f"SCoRE-SDR deploys on {deployment_rate(deploy):.1%}; realized error among deployed = "
      f"{realized_sdr(wrong, deploy):.4f} (one draw; guarantee: its expectation <= 0.02)")

# %%
# ``decision_function`` is the certified margin: ``decide == (decision_function >= 0)``.
margin = mdr.decision_function(X_test)
assert np.array_equal(margin >= 0, mdr.decide(X_test))

# %%
# Realized risk and deployment rate vs alpha, over repeated splits
# ----------------------------------------------------------------
# The guarantees are on expectations over calibration and test data, so we average the realized
# risks over 20 random splits (error bars: two standard errors of the average). SCoRE's realized
# risks stay under the diagonal while deploying the most. The Learn-then-Test default comes close
# from alpha = 0.02 on (about 0.89 vs 0.92 deployed there), with the stronger PAC guarantee; the
# paper's Hoeffding and Rademacher baselines deploy nothing at small alpha.
alphas = np.array([0.01, 0.02, 0.03, 0.05, 0.075, 0.1])
methods = {
    "SCoRE-MDR": (lambda a: SCoREMDR(model, alpha=a), realized_mdr),
    "Hoeffding MDR": (lambda a: ConcentrationMDR(model, alpha=a, bound="hoeffding",
                                                 procedure="union"), realized_mdr),
    "SCoRE-SDR (homo)": (lambda a: SCoRESDR(model, alpha=a, random_state=0), realized_sdr),
    "Rademacher SDR": (
        lambda a: ConcentrationSDR(model, alpha=a, bound="rademacher", random_state=0),
        realized_sdr,
    ),
    "Learn-then-Test SDR (PAC)": (lambda a: ConcentrationSDR(model, alpha=a), realized_sdr),
}
n_splits = 20
risk = {name: np.zeros((n_splits, len(alphas))) for name in methods}
rate = {name: np.zeros((n_splits, len(alphas))) for name in methods}
for split in range(n_splits):
    X_cal, X_test, y_cal, y_test = train_test_split(X_pool, y_pool, test_size=300, random_state=split)
    wrong = (model.predict(X_test) != y_test).astype(float)
    for name, (make, realized) in methods.items():
        for i, a in enumerate(alphas):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # baselines often deploy nothing at small alpha
                d = make(a).fit(X_cal, y_cal).decide(X_test)
            risk[name][split, i] = realized(wrong, d)
            rate[name][split, i] = deployment_rate(d)

fig, (ax_risk, ax_rate) = plt.subplots(1, 2, figsize=(10, 4))
plot_risk_vs_alpha(alphas, risk, target=None, ax=ax_risk)
ax_risk.set_title("Risk is controlled")
plot_deployment_vs_alpha(alphas, rate, ax=ax_rate)
ax_rate.set_title("SCoRE deploys the most; Learn-then-Test is close")
fig.tight_layout()
plt.show()
