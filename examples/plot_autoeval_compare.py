"""
==============================================================
Is model A better than model B? A paired, finite-sample answer
==============================================================

Two models answered the same items and a few hundred of them carry a human label. Is the new
model better? Comparing two separate confidence intervals wastes the pairing: when the models
err on the same items, the difference of their losses varies far less than either loss.
:func:`~sklearn_riskcontrol.autoeval.rautoeval_difference_interval` bounds
``risk(A) - risk(B)`` directly, from the labels and, optionally, an auto-evaluator (a judge) on
the labeled and the unlabeled items. Its guarantee holds in finite samples, whatever the judge:

.. math:: P\\big(\\text{low} \\le R_A - R_B \\le \\text{high}\\big) \\ge 1 - \\delta .

:class:`~sklearn_riskcontrol.autoeval.ModelComparison` does the same for several fitted models
at once: every certified pair ``risk(i) < risk(j)`` holds together with probability at least
``1 - delta`` (Holm's procedure over the pairs).
"""

# %%
# Three models, a judge, and a pool of mostly unlabeled items
# -----------------------------------------------------------
# Every split is shuffled: the guarantees need exchangeable evaluation rows. Rows without a human
# label carry ``y = -1`` (scikit-learn's semi-supervised convention).
import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import make_classification
from sklearn.ensemble import RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.tree import DecisionTreeClassifier

from sklearn_riskcontrol.autoeval import ModelComparison, rautoeval_difference_interval

X, y = make_classification(n_samples=16_000, n_features=20, n_informative=8, n_redundant=0,
                           class_sep=0.8, random_state=0)
X_fit, X_pool, y_fit, y_pool = train_test_split(X, y, train_size=6000, random_state=0)
X_models, X_judge, y_models, y_judge = train_test_split(X_fit, y_fit, train_size=2000,
                                                        random_state=0)
models = {
    "forest": RandomForestClassifier(n_estimators=50, random_state=0),
    "logistic": LogisticRegression(),
    "tree": DecisionTreeClassifier(max_depth=5, random_state=0),
}
for model in models.values():
    model.fit(X_models, y_models)
judge = RandomForestClassifier(n_estimators=50, random_state=1).fit(X_judge, y_judge)
for name, model in models.items():
    print(f"{name}: error rate {np.mean(model.predict(X_pool) != y_pool):.3f} on the pool")
print(f"the judge's label is right on {np.mean(judge.predict(X_pool) == y_pool):.1%} of the pool")

# %%
# Which model is better, with 600 labels?
# ---------------------------------------
# The comparison computes each model's losses on the same rows (true label and judge's label on
# the 600 labeled rows, judge's label on the 9,400 others) and tests every ordered pair.
order = np.random.default_rng(0).permutation(X_pool.shape[0])
y_semi = y_pool.copy()
y_semi[order[600:]] = -1
comparison = ModelComparison(list(models.values()), autoevaluator=judge, delta=0.1,
                             random_state=0).fit(X_pool, y_semi)
names = list(models)
for i, j in comparison.certified_pairs_:
    print(f"certified: {names[i]} has a lower error rate than {names[j]}")
print("(all certified pairs hold together with probability >= 0.9 over the draw of the rows)")

# %%
# How the interval for ``risk(forest) - risk(logistic)`` narrows with labels
# ---------------------------------------------------------------------------
# The same loss tables, more and more labels; labels only (R-Eval) against labels plus the judge
# (R-AutoEval+). Each interval is one draw: the guarantee is that intervals built this way cover
# the true difference in at least 90% of draws.
losses = np.column_stack([models[k].predict(X_pool) != y_pool for k in ("forest", "logistic")])
judged = np.column_stack([models[k].predict(X_pool) != judge.predict(X_pool)
                          for k in ("forest", "logistic")])
truth = losses.mean(axis=0) @ [1, -1]
sizes = [50, 100, 200, 400, 800]
fig, ax = plt.subplots(figsize=(6, 3.5))
for shift, method, label in ((-0.08, "eval", "labels only"), (0.08, "plus", "labels + judge")):
    lows, highs = [], []
    for n in sizes:
        lab, unl = order[:n], order[n:]
        ci = rautoeval_difference_interval(losses[lab], judged[lab], judged[unl], delta=0.1,
                                           method=method)
        lows.append(ci.low)
        highs.append(ci.high)
    x = np.log2(sizes) + shift
    ax.vlines(x, lows, highs, lw=3, label=label, color="C0" if method == "eval" else "C1")
ax.axhline(truth, color="k", ls="--", lw=1, label="true difference (whole pool)")
ax.axhline(0, color="grey", lw=0.5)
ax.set_xticks(np.log2(sizes), [str(n) for n in sizes])
ax.set_xlabel("labeled items")
ax.set_ylabel("risk(forest) - risk(logistic)")
ax.legend(fontsize=8)
fig.tight_layout()
