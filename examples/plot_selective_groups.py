"""
=====================================================================
Risk control within every predicted class (``groups=``)
=====================================================================

A digit classifier is right 95% of the time, but not equally for every digit: when it says
"8" it is wrong about 15% of the time, when it says "2" almost never. Selective deployment
with :class:`~sklearn_riskcontrol.selective.SCoRESDR` or :class:`~sklearn_riskcontrol.selective.ConcentrationSDR`
controls the error rate *among the deployed predictions*, but over all of them together: the
safe digits can carry the risky one, so the deployed "8"s may be wrong more often than
``alpha``.

With ``groups="predicted_class"`` the guarantee holds **within every predicted class**:

* ``SCoRESDR(groups=...)`` calibrates each class on its own calibration rows (Mondrian
  calibration): the expected error rate among the deployed predictions of each class is at most
  ``alpha``;
* ``ConcentrationSDR(groups=...)`` certifies one threshold per class at the Šidák level
  ``1 - (1 - delta) ** (1 / 10)``: with probability at least ``1 - delta``, the error rate among
  deployed predictions is at most ``alpha`` in all ten classes at once.

We compare the four estimators over repeated calibration/test splits (see
:ref:`selective-groups` in the user guide).
"""

# %%
# Fit the model once; calibration and test rows are drawn from the rest
# ---------------------------------------------------------------------
import warnings

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_digits
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split

from sklearn_riskcontrol.selective import ConcentrationSDR, SCoRESDR
from sklearn_riskcontrol.plotting import plot_group_deployment

X, y = load_digits(return_X_y=True)
X_fit, X_pool, y_fit, y_pool = train_test_split(X, y, train_size=300, random_state=0)
model = LogisticRegression(max_iter=5000).fit(X_fit, y_fit)
predicted = model.predict(X_pool)
wrong = predicted != y_pool
print(f"error rate on the pool: {wrong.mean():.3f}")
print("error rate per predicted digit:",
      {int(k): round(float(wrong[predicted == k].mean()), 3) for k in range(10)})

# %%
# The four estimators
# -------------------
# The same model, the same level; only ``groups`` differs. A row's group is the digit the model
# predicts for it, known at decision time.
alpha = 0.1
methods = {
    "SCoRE-SDR": lambda: SCoRESDR(model, alpha=alpha, random_state=0),
    "SCoRE-SDR, groups": lambda: SCoRESDR(model, alpha=alpha, groups="predicted_class",
                                          random_state=0),
    "PAC SDR": lambda: ConcentrationSDR(model, alpha=alpha, delta=0.1),
    "PAC SDR, groups": lambda: ConcentrationSDR(model, alpha=alpha, delta=0.1,
                                                groups="predicted_class"),
}

# %%
# Error rate among deployed predictions, per predicted digit, over repeated splits
# ---------------------------------------------------------------------------------
# The SCoRE guarantee is on the expectation over calibration and test data, so we average the
# error rate among each class's deployed test predictions over 30 random splits (a class that
# deploys nothing in a split counts as 0, as in the definition of the selective risk).
n_splits = 30
risk = {name: np.zeros((n_splits, 10)) for name in methods}
share = {name: np.zeros((n_splits, 10)) for name in methods}
deployed = {name: np.zeros(n_splits) for name in methods}
for split in range(n_splits):
    X_cal, X_test, y_cal, y_test = train_test_split(X_pool, y_pool, test_size=500,
                                                    random_state=split)
    digit = model.predict(X_test)
    errors = digit != y_test
    for name, make in methods.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # classes too small to certify, on some splits
            deploy = make().fit(X_cal, y_cal).decide(X_test)
        deployed[name][split] = deploy.mean()
        for k in range(10):
            d = deploy & (digit == k)
            risk[name][split, k] = errors[d].sum() / max(1, d.sum())
            share[name][split, k] = d.sum() / max(1, (digit == k).sum())

for name in methods:
    mean, se = risk[name].mean(axis=0), risk[name].std(axis=0, ddof=1) / np.sqrt(n_splits)
    worst = int(np.argmax(mean))
    print(f"{name:18s} deploys {deployed[name].mean():.2f} of the rows, "
          f"{share[name][:, 8].mean():.2f} of the 8s; error among deployed 8s {mean[8]:.3f} +- {se[8]:.3f}; largest over "
          f"digits {mean[worst]:.3f} (digit {worst})")

# %%
# Without groups the predictions "8" are deployed with an error rate well above ``alpha``;
# with groups every class stays at or below it (up to Monte-Carlo error), at the price of
# deploying fewer of the risky digits.
fig, (ax_score, ax_pac) = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
width = 0.4
for ax, names in ((ax_score, ["SCoRE-SDR", "SCoRE-SDR, groups"]),
                  (ax_pac, ["PAC SDR", "PAC SDR, groups"])):
    for i, name in enumerate(names):
        mean = risk[name].mean(axis=0)
        se = risk[name].std(axis=0, ddof=1) / np.sqrt(n_splits)
        ax.bar(np.arange(10) + (i - 0.5) * width, mean, width, yerr=2 * se, capsize=2,
               label=name)
    ax.axhline(alpha, color="black", linestyle="--", linewidth=1, label=f"alpha = {alpha}")
    ax.set_xticks(range(10))
    ax.set_xlabel("predicted digit")
    ax.legend(fontsize="small")
ax_score.set_ylabel(f"error among deployed (mean of {n_splits} splits)")
ax_score.set_title("SCoRE: in expectation")
ax_pac.set_title("Learn-then-Test: w.p. 1 - delta")
fig.tight_layout()

# %%
# One split, per class
# --------------------
# :func:`~sklearn_riskcontrol.plotting.plot_group_deployment` shows, for one fitted estimator,
# the share of each group's test rows it deploys and the realized error among them (one draw:
# the guarantee bounds its expectation, so a marker may lie above the line by chance). Passing
# ``groups=`` shows the classes of an estimator fitted without groups.
X_cal, X_test, y_cal, y_test = train_test_split(X_pool, y_pool, test_size=500, random_state=0)
fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4))
plain = methods["SCoRE-SDR"]().fit(X_cal, y_cal)
plot_group_deployment(plain, X_test, y_test, groups=model.predict(X_test), ax=left)
left.set_title("SCoRE-SDR without groups")
grouped = methods["SCoRE-SDR, groups"]().fit(X_cal, y_cal)
plot_group_deployment(grouped, X_test, y_test, ax=right)
right.set_title('SCoRE-SDR, groups="predicted_class"')
fig.tight_layout()
plt.show()
