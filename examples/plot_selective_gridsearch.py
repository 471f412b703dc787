"""
==========================================================
Choosing the score and the boosting with GridSearchCV
==========================================================

SCoRE controls the risk for *any* score, but the score and the e-value boosting decide how much
can be deployed. :class:`~sklearn.model_selection.GridSearchCV` can choose them with the
deployment scorers of :mod:`sklearn_riskcontrol.selective` (:data:`~sklearn_riskcontrol.selective.DEPLOYMENT_SCORERS`).

.. warning::
   Tuning on the calibration data voids the finite-sample guarantee: the choice then depends on
   the very data that calibrates the e-values. Tune on a separate *tuning* split, then calibrate
   the chosen configuration on fresh data, as below.

The wrapped model is wrapped in :class:`sklearn.frozen.FrozenEstimator` so that ``clone`` (used
by ``GridSearchCV``) keeps it fitted.
"""

# %%
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from sklearn.datasets import load_digits
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, KFold, train_test_split

from sklearn_riskcontrol.selective import SCoRESDR, DEPLOYMENT_SCORERS, realized_sdr

X, y = load_digits(return_X_y=True)
X_fit, X_rest, y_fit, y_rest = train_test_split(X, y, train_size=400, random_state=0)
X_tune, X_rest, y_tune, y_rest = train_test_split(X_rest, y_rest, train_size=500, random_state=0)
X_cal, X_test, y_cal, y_test = train_test_split(X_rest, y_rest, test_size=300, random_state=0)
model = FrozenEstimator(LogisticRegression(max_iter=5000).fit(X_fit, y_fit))


class MarginScore:
    """Score = minus the gap between the two largest class probabilities (smaller = safer)."""

    def __init__(self, classifier):
        self.classifier = classifier

    def __call__(self, X):
        top2 = np.sort(self.classifier.predict_proba(X), axis=1)[:, -2:]
        return top2[:, 0] - top2[:, 1]

    def __repr__(self):
        return "MarginScore"


# %%
# Search on the tuning split only
# -------------------------------
# ``refit`` picks the configuration with the largest deployment rate among those whose average
# realized SDR over the folds stays below the target. Unboosted SDR often deploys nothing on a
# fold (it warns each time); the search sees that as a deployment rate of 0.
import warnings

from sklearn_riskcontrol import RiskControlWarning

warnings.simplefilter("ignore", RiskControlWarning)
alpha = 0.02


def most_deployment_within_risk(cv_results):
    rate = cv_results["mean_test_deployment_rate"]
    ok = -cv_results["mean_test_neg_realized_sdr"] <= alpha
    return int(np.argmax(np.where(ok, rate, -1)))


search = GridSearchCV(
    SCoRESDR(model, alpha=alpha, random_state=0),
    {"risk_score": ["proba", MarginScore(model)], "boosting": [None, "hete", "homo"]},
    scoring=DEPLOYMENT_SCORERS,
    refit=most_deployment_within_risk,
    cv=KFold(4, shuffle=True, random_state=0),
).fit(X_tune, y_tune)

table = pd.DataFrame(search.cv_results_["params"])
table["deployment rate"] = search.cv_results_["mean_test_deployment_rate"]
table["realized SDR"] = -search.cv_results_["mean_test_neg_realized_sdr"]
print(table.to_string())
print("chosen:", search.best_params_)

# %%
# Calibrate the chosen configuration on fresh data and deploy
# ------------------------------------------------------------
chosen = SCoRESDR(model, alpha=alpha, random_state=0, **search.best_params_).fit(X_cal, y_cal)
deploy = chosen.decide(X_test)
wrong = chosen.predict(X_test) != y_test
print(f"deployed on {deploy.mean():.1%} of the test digits; "
      f"realized SDR {realized_sdr(wrong.astype(float), deploy):.4f} (one draw; guarantee: "
      f"expected SDR over calibration and test draws <= {alpha})")

# %%
# The search results at a glance
fig, ax = plt.subplots(figsize=(6, 3.5))
labels = [f"{p['risk_score']}, {p['boosting']}" for p in search.cv_results_["params"]]
ax.barh(labels, table["deployment rate"], color="tab:blue")
ax.set(xlabel="mean deployment rate on the tuning folds", title=f"SCoRE-SDR at alpha = {alpha}")
fig.tight_layout()
plt.show()
