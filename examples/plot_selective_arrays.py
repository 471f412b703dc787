"""
=================================================================
SCoRE on arrays: deploy a price model only where it is safe
=================================================================

A regression model predicts the (log) price of diamonds. It is accurate for many diamonds and
poor for others. We want to use its prediction only on the test diamonds where this is safe, and
abstain elsewhere, with a guarantee stated in terms of our own risk:

* **SCoRE-MDR** (marginal deployment risk): ``E[L * deploy] <= alpha`` for every test point;
* **SCoRE-SDR** (selective deployment risk): the expected average risk among the deployed test
  points is at most ``alpha``.

Everything here uses SCoRE's array layer (in :mod:`sklearn_riskcontrol.selective`) on plain NumPy
arrays: calibration risks, calibration scores and test scores. Realized risks are measured on the
test labels, which the methods never see. See :doc:`/user_guide/selective` for the theory.
"""

# %%
# Data and the model to deploy
# ----------------------------
# The bundled diamonds data (ggplot2, 53,940 diamonds). The target is the log-price; the three
# quality grades are categorical, which :class:`~sklearn.ensemble.HistGradientBoostingRegressor`
# handles natively once they have the ``category`` dtype.
#
# The model is deliberately small (40 trees of 6 leaves, fitted on 4,000 diamonds), so that its
# errors vary a lot from one diamond to the next and deciding where to trust it matters.
import matplotlib.pyplot as plt
import numpy as np
from sklearn.ensemble import HistGradientBoostingRegressor
from sklearn.model_selection import cross_val_predict, train_test_split

from sklearn_riskcontrol.datasets import load_diamonds
from sklearn_riskcontrol.evalues.testing import boost_evalues, ebh
from sklearn_riskcontrol.selective import mdr_decisions, sdr_evalues, deployment_rate, realized_mdr, realized_sdr
from sklearn_riskcontrol.plotting import plot_deployment_vs_alpha, plot_risk_vs_alpha
from sklearn_riskcontrol.risks import make_risk

X, price = load_diamonds(return_X_y=True)
X = X.astype({name: "category" for name in ["cut", "color", "clarity"]})
y = np.log(price)

# One split to fit the models; the rest is a pool for calibration and test data.
X_fit, X_pool, y_fit, y_pool = train_test_split(X, y, train_size=4000, random_state=0)
model = HistGradientBoostingRegressor(max_iter=40, max_leaf_nodes=6, random_state=0)
model.fit(X_fit, y_fit)

# %%
# The risk and the score
# ----------------------
# The risk of deploying the model on a diamond is its scaled squared error on the log-price,
# ``L = min((y - f(x))^2 / 0.09, 1)``: an error of 0.3 on the log scale (about 35% of the
# price) or more counts as a full failure. :func:`~sklearn_riskcontrol.risks.make_risk` builds
# it and checks that every value lies in [0, 1].
#
# The score must rank diamonds from safe to risky (smaller = safer). We fit a second regressor
# that predicts the risk from the features, on the same split. Its targets are *out-of-fold*
# risks of the model (from :func:`~sklearn.model_selection.cross_val_predict`): in-sample errors
# are too optimistic. The guarantees do not depend on how good the score is, only the number of
# deployed points does.
risk = make_risk("squared", scale=0.09)
oof_pred = cross_val_predict(
    HistGradientBoostingRegressor(max_iter=40, max_leaf_nodes=6, random_state=0),
    X_fit,
    y_fit,
    cv=5,
)
risk_model = HistGradientBoostingRegressor(max_iter=100, learning_rate=0.05, random_state=0)
risk_model.fit(X_fit, risk(y_fit, oof_pred))

# Risks and scores of every diamond in the pool (the model and the score stay fixed from now on).
risk_pool = risk(y_pool, model.predict(X_pool))
score_pool = risk_model.predict(X_pool)
print(f"average risk over the pool: {risk_pool.mean():.3f}")
print(f"correlation of score and risk: {np.corrcoef(score_pool, risk_pool)[0, 1]:.2f}")

# %%
# Calibration and test data
# -------------------------
# ``n = 2000`` labeled calibration diamonds give the risks ``L_i`` and scores ``S_i``; ``m = 500``
# test diamonds give the scores ``T_j``. Their risks are computed only to measure what happened.
rng = np.random.default_rng(0)
n, m = 2000, 500
idx = rng.permutation(len(risk_pool))
cal, test = idx[:n], idx[n : n + m]
L_cal, s_cal = risk_pool[cal], score_pool[cal]
s_test, L_test = score_pool[test], risk_pool[test]  # L_test: for evaluation only

# %%
# SCoRE-MDR: one decision per test point
# --------------------------------------
# :func:`~sklearn_riskcontrol.selective.mdr_decisions` deploys test point ``j`` iff
# ``(1 + sum_i L_i 1{S_i <= T_j}) / (n + 1) <= alpha`` (with the default ``gamma = alpha``).
# On a single calibration/test split the realized value fluctuates around ``alpha``: the
# guarantee is on its expectation (checked over many splits below).
alpha = 0.1
deploy = mdr_decisions(L_cal, s_cal, s_test, alpha=alpha)
print(f"MDR: deployed on {deploy.mean():.1%} of the test diamonds")
print(f"realized L * deploy, averaged over the test points: {realized_mdr(L_test, deploy):.3f} "
      f"(one draw; guarantee: its expectation over calibration and test draws <= {alpha})")
print(f"(deploying everywhere would give {L_test.mean():.3f})")

# %%
# SCoRE-SDR: e-values and e-BH
# ----------------------------
# :func:`~sklearn_riskcontrol.selective.sdr_evalues` returns one risk-adjusted e-value per test
# point, computed on the whole test batch. Without covariate shift all its non-zero e-values are
# equal, so e-BH either deploys all of them or nothing: it deploys them only if there are at least
# ``m / (alpha E)`` of them. Boosting (dividing by independent uniforms) breaks this tie and keeps
# the guarantee.
e = sdr_evalues(L_cal, s_cal, s_test, gamma=alpha)
nonzero = e[e > 0]
print(f"non-zero e-values: {nonzero.size} of {m}, distinct values: {np.unique(nonzero).round(3)}")
if nonzero.size:
    needed = m / (alpha * nonzero[0])
    print(f"e-BH deploys them all iff there are at least m / (alpha E) = {needed:.1f} of them")


for name, boosting in [("no boosting", None), ("homo", "homo"), ("hete", "hete")]:
    selected = ebh(boost_evalues(e, boosting, random_state=0), alpha)
    print(
        f"SDR, {name:>11}: deployed on {selected.sum():3d} test diamonds, "
        f"average risk among them {realized_sdr(L_test, selected):.3f} (one draw)"
    )

# %%
# Realized risk against alpha
# ---------------------------
# The guarantees are on expectations over the calibration and test data. To see them, repeat
# the whole procedure on 200 random calibration/test splits of the pool and average the realized
# MDR (``mean(L * deploy)``), the realized SDR (average risk among the deployed, homo boosting,
# the default of :class:`~sklearn_riskcontrol.selective.SCoRESDR`)
# and the deployment rates, for ``alpha`` from 0.02 to 0.2.
alphas = np.linspace(0.02, 0.2, 10)
n_rep = 200
mdr = np.zeros((n_rep, alphas.size))
sdr = np.zeros_like(mdr)
rate_mdr = np.zeros_like(mdr)
rate_sdr = np.zeros_like(mdr)
for r in range(n_rep):
    idx = rng.permutation(len(risk_pool))
    cal, test = idx[:n], idx[n : n + m]
    L_cal, s_cal = risk_pool[cal], score_pool[cal]
    s_test, L_test = score_pool[test], risk_pool[test]
    for k, a in enumerate(alphas):
        deploy = mdr_decisions(L_cal, s_cal, s_test, alpha=a)
        e = boost_evalues(sdr_evalues(L_cal, s_cal, s_test, gamma=a), "homo", random_state=r)
        selected = ebh(e, a)
        mdr[r, k], rate_mdr[r, k] = realized_mdr(L_test, deploy), deployment_rate(deploy)
        sdr[r, k], rate_sdr[r, k] = realized_sdr(L_test, selected), deployment_rate(selected)

# %%
# :func:`~sklearn_riskcontrol.plotting.plot_risk_vs_alpha` draws the average over the splits
# with error bars of two standard errors of that average, and the line ``y = alpha``;
# :func:`~sklearn_riskcontrol.plotting.plot_deployment_vs_alpha` the deployment rates.
fig, (ax_risk, ax_rate) = plt.subplots(1, 2, figsize=(10, 4))
plot_risk_vs_alpha(
    alphas, {"realized MDR": mdr, "realized SDR (homo)": sdr}, target=None, ax=ax_risk
)
ax_risk.set_title(f"Risk, average over {n_rep} splits (+/- 2 s.e.)")
plot_deployment_vs_alpha(
    alphas,
    {"SCoRE-MDR": rate_mdr, "SCoRE-SDR (homo)": rate_sdr},
    ylabel="fraction of test points deployed",
    ax=ax_rate,
)
ax_rate.set_title("Deployment rate")
fig.tight_layout()
plt.show()

# %%
# Reading the figure
# ------------------
# * The realized MDR follows the line ``y = alpha``: SCoRE-MDR is nearly exact, it spends the
#   whole risk budget on average, and no more. The average over the splits estimates the
#   expectation only up to Monte Carlo error (the error bars), so it may sit a hair above
#   ``alpha``.
# * The realized SDR stays at or below ``alpha``. SDR is the harder target (the *average* risk
#   among the deployed points must be small), so fewer points are deployed at the same ``alpha``,
#   and for very small ``alpha`` nothing can be certified with ``n = 2000``.
# * Both rates grow with ``alpha``; a better score (one that ranks diamonds by their true risk
#   more accurately) deploys more at the same ``alpha``, with the same guarantee.
#
# ``alpha`` and the score were fixed before looking at the calibration data. Choosing them by
# trying several values on the same calibration data would void the guarantee.
