"""
=========================================================
SCoRE-SDR boosting: how much is deployed, and how stably
=========================================================

:class:`~sklearn_riskcontrol.selective.SCoRESDR` divides its e-values by uniform random numbers before
e-BH (``boosting``, paper Sec. 5.2): ``"homo"`` (the default) by one shared ``U`` per test
batch, ``"hete"`` by one ``U_j`` per test point, ``None`` not at all. All three control the
expected risk among deployed points (SDR) at ``alpha``, where the expectation is over the
calibration data, the test batch **and the uniforms**. They differ in how much they deploy and
in how much that varies from one draw to the next.

A random forest reads letters (UCI Letter Recognition, bundled); the risk is its 0/1 error and
the score ``1 - max predict_proba``. We look at the deployed fraction

* on one calibration/test split, with the uniforms redrawn 200 times (variance due to boosting
  alone), and
* over 200 shuffled calibration/test splits, one boosting draw each (data and boosting),

and check the realized SDR against ``alpha``. See :ref:`selective-boosting-choice` for the full
benchmark (``benchmarks/selective_boosting.py``).
"""

# %%
# Fit the model once; score and error of every held-out letter
# ------------------------------------------------------------
import warnings

import matplotlib.pyplot as plt
import numpy as np
from sklearn.ensemble import RandomForestClassifier
from sklearn.model_selection import train_test_split

from sklearn_riskcontrol import RiskControlWarning
from sklearn_riskcontrol.selective import SCoRESDR, sdr_evalues, deployment_rate, realized_sdr
from sklearn_riskcontrol.datasets import load_letter
from sklearn_riskcontrol.evalues.testing import boost_evalues, ebh

X, y = load_letter(return_X_y=True)
X_fit, X_pool, y_fit, y_pool = train_test_split(X, y, train_size=0.5, random_state=0)
model = RandomForestClassifier(n_estimators=100, random_state=0).fit(X_fit, y_fit)
proba = model.predict_proba(X_pool)
score_pool = 1.0 - proba.max(axis=1)  # smaller = safer
error_pool = (model.classes_[proba.argmax(axis=1)] != y_pool.to_numpy()).astype(float)
alpha = 0.01
print(f"error rate of the forest on the {len(y_pool)} held-out letters: {error_pool.mean():.3f}")

# %%
# One split, each boosting option
# -------------------------------
# The estimators on one shuffled calibration/test split. These numbers are **one draw** of the
# data and of the uniforms; the guarantee is on their expectation.
X_cal, X_test, y_cal, y_test = train_test_split(X_pool, y_pool, test_size=0.5, random_state=1)
wrong = model.predict(X_test) != y_test.to_numpy()
for boosting in (None, "hete", "homo"):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RiskControlWarning)  # None may deploy nothing
        sdr = SCoRESDR(model, alpha=alpha, boosting=boosting, random_state=0).fit(X_cal, y_cal)
        deploy = sdr.decide(X_test)
    print(f"boosting={boosting!s:>4}: deployed on {deployment_rate(deploy):.1%} of "
          f"{len(y_test)} test letters, error among them {realized_sdr(wrong, deploy):.4f} "
          f"(one draw; guarantee: expected error among deployed <= {alpha})")

# %%
# The same computation on arrays, repeated
# ----------------------------------------
# ``SCoRESDR`` computes the e-values of the batch
# (:func:`~sklearn_riskcontrol.selective.sdr_evalues`), boosts them (:func:`~sklearn_riskcontrol.evalues.testing.boost_evalues`) and runs
# :func:`~sklearn_riskcontrol.evalues.testing.ebh`. With the scores and errors of the pool computed once,
# repeating this is cheap.
options = (None, "hete", "homo")
rng = np.random.default_rng(0)


def deploy_and_risk(cal, test, boosting):
    e = sdr_evalues(error_pool[cal], score_pool[cal], score_pool[test], gamma=alpha)
    selected = ebh(boost_evalues(e, boosting, random_state=rng), alpha)
    return deployment_rate(selected), realized_sdr(error_pool[test], selected)


half = len(score_pool) // 2
n_draws = 200
# One fixed split where boosting matters: on some splits the unboosted e-values already deploy
# every point they can and the uniforms change nothing; we take the first shuffled split on which
# unboosted e-BH deploys nothing (about a quarter of the splits at this alpha).
idx = rng.permutation(len(score_pool))
while deploy_and_risk(idx[:half], idx[half:], None)[0] > 0:
    idx = rng.permutation(len(score_pool))
fixed = {b: np.array([deploy_and_risk(idx[:half], idx[half:], b) for _ in range(n_draws)])
         for b in options}
splits = {b: [] for b in options}
for _ in range(n_draws):  # a fresh shuffled split each time, one boosting draw per option
    idx = rng.permutation(len(score_pool))
    for b in options:
        splits[b].append(deploy_and_risk(idx[:half], idx[half:], b))
splits = {b: np.array(v) for b, v in splits.items()}

print(f"Monte-Carlo over {n_draws} shuffled splits (mean ± standard error; 10% quantile):")
for b in options:
    dep, risk = splits[b][:, 0], splits[b][:, 1]
    se = risk.std(ddof=1) / np.sqrt(n_draws)
    print(f"  boosting={b!s:>4}: deployed {dep.mean():.3f} ± "
          f"{dep.std(ddof=1) / np.sqrt(n_draws):.3f} (10% quantile {np.quantile(dep, 0.1):.3f}); "
          f"realized SDR {risk.mean():.4f} ± {se:.4f} (guarantee: expectation <= {alpha})")
print(f"boosting draws on one fixed split: standard deviation of the deployed fraction "
      f"hete {fixed['hete'][:, 0].std():.3f}, homo {fixed['homo'][:, 0].std():.3f}")

# %%
# Distribution of the deployed fraction
# -------------------------------------
# Left: one split, the uniforms redrawn (``None`` is deterministic given the data and deploys
# nothing on this split). Middle: data
# and uniforms redrawn. Right: realized SDR averaged over the splits (± 2 standard errors)
# against ``alpha``: all three options are valid; ``"homo"`` deploys the most, with the
# smallest spread.
colors = {None: "tab:gray", "hete": "tab:orange", "homo": "tab:blue"}
bins = np.linspace(0, 1, 41)
fig, axes = plt.subplots(1, 3, figsize=(13, 3.8))
for ax, results, title in ((axes[0], fixed, f"one split, {n_draws} boosting draws"),
                           (axes[1], splits, f"{n_draws} shuffled splits")):
    for b in options:
        ax.hist(results[b][:, 0], bins=bins, alpha=0.6, color=colors[b], label=str(b))
    ax.set_xlabel("fraction of test letters deployed")
    ax.set_ylabel("count")
    ax.set_title(title)
    ax.legend(title="boosting")
means = [splits[b][:, 1].mean() for b in options]
errs = [2 * splits[b][:, 1].std(ddof=1) / np.sqrt(n_draws) for b in options]
axes[2].bar([str(b) for b in options], means, yerr=errs, color=[colors[b] for b in options])
axes[2].axhline(alpha, color="k", ls="--", label=f"alpha = {alpha}")
axes[2].set_ylabel("realized SDR (mean over splits)")
axes[2].set_title("risk among deployed")
axes[2].legend(loc="lower right")
fig.tight_layout()
plt.show()
