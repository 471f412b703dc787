"""
=================================================
Tuning the risk level alpha with GridSearchCV
=================================================

``alpha`` is the risk accepted on the deployed predictions, and a larger ``alpha`` deploys more.
Which level is right depends on what a wrong deployed prediction costs, which the estimators do
not know: their default ``score`` is the deployed share, so
:class:`~sklearn.model_selection.GridSearchCV` over ``alpha`` with it picks the largest level of
the grid. :func:`~sklearn_riskcontrol.selective.make_selective_scorer` prices the decisions
instead: on a held-out fold, each deployed point earns ``gain - error_cost * L`` (``L`` = the
model's risk on that point, here its 0/1 error) and each abstention costs ``abstain_cost``; the
score is the mean per point. The search then picks the level whose deployments pay for
themselves.

.. warning::
   Tuning on the calibration data voids the finite-sample guarantee: the choice then depends on
   the very data that calibrates the e-values. Tune on a separate *tuning* split, then calibrate
   the chosen level on fresh data, as below.

The fitted steps are wrapped in :class:`sklearn.frozen.FrozenEstimator` so that ``clone`` (used
by ``GridSearchCV``) keeps them fitted: ``fit`` of the pipeline then only calibrates.
"""

# %%
# A classifier of letters in a pipeline
# -------------------------------------
# A logistic regression on standardised features reads the bundled UCI letters (26 classes).
# The letters are split at random into rows that fit the model, rows that tune ``alpha``, rows
# that calibrate the chosen level and test rows.
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from sklearn.base import clone
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, KFold, train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sklearn_riskcontrol.selective import SCoRESDR, make_selective_scorer, realized_sdr, pipeline_decide
from sklearn_riskcontrol.datasets import load_letter

X, y = load_letter(return_X_y=True)
X_fit, X_rest, y_fit, y_rest = train_test_split(X, y, train_size=5000, random_state=0)
X_tune, X_rest, y_tune, y_rest = train_test_split(X_rest, y_rest, train_size=3000, random_state=0)
X_cal, X_test, y_cal, y_test = train_test_split(X_rest, y_rest, train_size=3000, random_state=0)
scaler = StandardScaler().fit(X_fit)
model = LogisticRegression(max_iter=1000).fit(scaler.transform(X_fit), y_fit)
pipe = make_pipeline(FrozenEstimator(scaler), SCoRESDR(FrozenEstimator(model), random_state=0))
print(f"error rate of the model on the {len(y_tune)} tuning letters: "
      f"{np.mean(model.predict(scaler.transform(X_tune)) != y_tune):.3f}")

# %%
# Search over alpha on the tuning split only
# ------------------------------------------
# SCoRE-SDR bounds the expected error rate among the deployed letters by ``alpha``. Every
# candidate is calibrated on four fifths of the tuning split and decides on the remaining fifth
# (as one batch); ``refit=False`` because the chosen level is calibrated on fresh rows below.
alphas = [0.02, 0.05, 0.1, 0.15, 0.2, 0.25]
error_costs = [0, 3, 10]
cv = KFold(5, shuffle=True, random_state=0)


def search(scoring):
    return GridSearchCV(pipe, {"scoresdr__alpha": alphas}, scoring=scoring, cv=cv,
                        refit=False).fit(X_tune, y_tune)


default = search(None)
picked = default.best_params_["scoresdr__alpha"]
print(f"default score (deployed share): picks alpha = {picked}, "
      f"{'the' if picked == max(alphas) else 'not the'} largest of the grid")

searches = {c: search(make_selective_scorer(error_cost=c)) for c in error_costs}
table = pd.DataFrame(
    {f"error_cost={c}": s.cv_results_["mean_test_score"] for c, s in searches.items()},
    index=pd.Index(alphas, name="alpha"),
)
table.insert(0, "deployed share", default.cv_results_["mean_test_score"])
print(table.round(3).to_string())
for c, s in searches.items():
    print(f"error_cost={c}: picks alpha = {s.best_params_['scoresdr__alpha']}")

# %%
# With ``error_cost=0`` a deployed letter earns the gain 1 whether it is right or wrong, so the
# score is the deployed share and the search picks the same level as the default score. As a
# wrong letter costs more, deploying the doubtful letters stops paying and the chosen level
# drops: deploying a letter pays off on average when its probability of being wrong is below
# ``(gain + abstain_cost) / error_cost`` (1/3 and 1/10 here).
fig, ax = plt.subplots(figsize=(6, 3.5))
for c, s in searches.items():
    scores = s.cv_results_["mean_test_score"]
    (line,) = ax.plot(alphas, scores, marker="o", label=f"error_cost = {c}")
    ax.plot(alphas[s.best_index_], scores[s.best_index_], marker="*", markersize=16,
            color=line.get_color())
ax.axhline(0, color="grey", linewidth=0.8)
ax.set(xlabel="alpha", ylabel="mean payoff per letter (tuning folds)",
       title="SCoRE-SDR on letters: the star is the chosen alpha")
ax.legend()
fig.tight_layout()
plt.show()

# %%
# Calibrate the chosen level on fresh data and deploy
# ---------------------------------------------------
# For ``error_cost=3``, every level of the grid is calibrated on the calibration split and
# decides on the test split: the realized numbers below are one draw of the calibration data,
# test data and boosting uniforms, so the best level on this draw need not be the one chosen.
cost = 3
scorer = make_selective_scorer(error_cost=cost)
chosen = searches[cost].best_params_["scoresdr__alpha"]
realized = []
for alpha in alphas:
    calibrated = clone(pipe).set_params(scoresdr__alpha=alpha).fit(X_cal, y_cal)
    deploy = pipeline_decide(calibrated, X_test)
    wrong = (calibrated.predict(X_test) != y_test).to_numpy(dtype=float)
    # a refit replays the boosting draw of `deploy`, so the scorer sees the same decisions
    payoff = scorer(clone(calibrated).fit(X_cal, y_cal), X_test, y_test)
    realized.append((alpha, deploy.mean(), realized_sdr(wrong, deploy), payoff))
realized = pd.DataFrame(realized, columns=["alpha", "deployed share", "realized SDR", "payoff"])
print(realized.round(3).to_string(index=False))
best_on_test = realized["alpha"][realized["payoff"].idxmax()]
row = realized.set_index("alpha").loc[chosen]
print(f"chosen on the tuning split: alpha = {chosen}; on the {len(y_test)} test letters it "
      f"deploys {row['deployed share']:.1%} with an error rate of {row['realized SDR']:.3f} "
      f"among them (one draw: the guarantee bounds its expectation by alpha) and earns "
      f"{row['payoff']:.3f} per letter; the best level on this test draw is "
      f"alpha = {best_on_test} ({realized['payoff'].max():.3f} per letter).")
