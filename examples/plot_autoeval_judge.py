"""
=======================================================================
Certify a classifier's error rate with few labels and an auto-evaluator
=======================================================================

Checking that a model's error rate is at most ``alpha`` normally takes many human labels. An
*auto-evaluator* (an LLM judge for LLMs; here simply another, imperfect classifier) can label
as many extra examples as we like, but its labels are biased. R-AutoEval+ (Park, Zecchin &
Simeone) combines the two and gives a finite-sample guarantee that does not depend on the
judge's quality:

.. math:: P(\\text{certified and error} > \\alpha) \\le \\delta .

It bets on the prediction-powered observations ``h + rho (ubar - g)`` (true-label loss ``h``,
judge loss ``g`` on the same example, mean judge loss ``ubar`` on ``r`` unlabeled examples) for
several reliance factors ``rho`` at once, and shifts its weight to the ``rho`` that works. We
compare it with R-Eval (labels only, ``rho = 0``) and R-AutoEval (``rho = 1``), then use it to
pick the cheapest model whose error is certified.
"""

# %%
# A model, an auto-evaluator, and a pool of mostly unlabeled examples
# -------------------------------------------------------------------
# The model under test is a logistic regression fitted on 1,000 rows; the auto-evaluator a random
# forest trained on 6,000 (it is right about 95% of the time, not always). Every split is a
# shuffled one (``train_test_split`` or a random permutation): the guarantees need exchangeable
# (i.i.d.) evaluation rows. scikit-learn's semi-supervised convention marks rows without a human
# label with ``y = -1``: 500 rows keep their label and 5,000 are unlabeled (``r = 10`` per
# labeled row).
import warnings

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import make_classification
from sklearn.ensemble import RandomForestClassifier
from sklearn.feature_selection import SelectKBest
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline

from sklearn_riskcontrol import RiskControlWarning
from sklearn_riskcontrol.autoeval import (
    RAutoEvalPlus,
    RiskControlledModelSelector,
    rautoeval_confidence_interval,
    rautoeval_select,
    rautoeval_test,
)
from sklearn_riskcontrol.plotting import plot_eprocess, plot_rho_weights

X, y = make_classification(n_samples=26_000, n_features=20, n_informative=8, n_redundant=0,
                           class_sep=1.0, random_state=0)
X_fit, X_pool, y_fit, y_pool = train_test_split(X, y, train_size=6000, random_state=0)
X_small, _, y_small, _ = train_test_split(X_fit, y_fit, train_size=1000, random_state=0)
model = LogisticRegression().fit(X_small, y_small)
judge = RandomForestClassifier(n_estimators=50, min_samples_leaf=2, random_state=0)
judge.fit(X_fit, y_fit)
pred_model, pred_judge = model.predict(X_pool), judge.predict(X_pool)
print(f"error rate of the model on the pool: {np.mean(pred_model != y_pool):.3f}")
print(f"the judge's label is right on {np.mean(pred_judge == y_pool):.1%} of the pool")

n_labeled, n_unlabeled = 500, 5000
rng = np.random.default_rng(0)
idx = rng.permutation(len(y_pool))[: n_labeled + n_unlabeled]  # random rows, in random order
X_eval, y_semi = X_pool[idx], y_pool[idx].copy()
y_semi[n_labeled:] = -1  # so the 500 labeled rows are a random sample too

# %%
# Certify ``error <= 0.15`` at ``delta = 0.1`` with the three methods
# -------------------------------------------------------------------
# Each line is one draw of the labeled and unlabeled rows. The guarantees are about such draws:
# a model whose error exceeds ``alpha`` is certified with probability at most ``delta``, and the
# 90% interval contains the true error with probability at least ``1 - delta = 0.9``. How
# often each method certifies, over many draws, is the study further down.
alpha, delta = 0.15, 0.1
methods = {"R-Eval": "eval", "R-AutoEval": "autoeval", "R-AutoEval+": "plus"}
fitted = {}
for name, method in methods.items():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RiskControlWarning)  # "not certified" is printed below
        fitted[name] = RAutoEvalPlus(model, autoevaluator=judge, alpha=alpha, delta=delta,
                                     method=method, random_state=0).fit(X_eval, y_semi)
for name, cert in fitted.items():
    need = cert.result_.stopping_index
    ci = cert.confidence_interval()
    print(f"{name:<12s} certified: {cert.decide()!s:<5s} p-value {cert.pvalue_:.2g}  "
          f"labels needed: {'-' if need is None else need + 1:>3}  "
          f"90% CI for the error: [{ci.low:.3f}, {ci.high:.3f}]")

# %%
# The e-processes and the reliance weights
# ----------------------------------------
# Each method certifies when its e-process reaches ``1 / delta`` (dashed line; by Ville's
# inequality a model whose error exceeds ``alpha`` gets there with probability at most
# ``delta``). On the right, R-AutoEval+'s weight on each reliance factor ``rho`` over the
# rounds (the paper's Fig. 2): it moves towards the factors whose bets pay off.
fig, (ax_e, ax_w) = plt.subplots(1, 2, figsize=(11, 4))
plot_eprocess(fitted, ax=ax_e)
ax_e.set_title("log e-process vs labeled examples")
plot_rho_weights(fitted["R-AutoEval+"], ax=ax_w)
ax_w.set_title("R-AutoEval+ weights on rho")
fig.tight_layout()

# %%
# Labels needed, over 200 random draws of the labeled and unlabeled rows
# ----------------------------------------------------------------------
# For a study over many draws, compute the losses once and call the array layer
# (:func:`~sklearn_riskcontrol.autoeval.rautoeval_test`), which is what the estimator calls.
# With ``early_stopping=True`` each test stops at its first crossing of ``1 / delta`` (anytime
# validity): the stopping index is the number of labels the evaluation needed, the paper's
# sample complexity.
h = (pred_model != y_pool).astype(float)  # loss with the true label
g = (pred_model != pred_judge).astype(float)  # loss with the judge's label
needed = {name: [] for name in methods}
for draw in range(200):
    perm = rng.permutation(len(y_pool))
    lab, unl = perm[:n_labeled], perm[n_labeled : n_labeled + n_unlabeled]
    for name, method in methods.items():
        res = rautoeval_test(h[lab], g[lab], g[unl], alpha=alpha, delta=delta, method=method,
                             early_stopping=True)
        needed[name].append(np.inf if res.stopping_index is None else res.stopping_index + 1)
for name, values in needed.items():
    values = np.array(values)
    print(f"{name:<12s} certified within {n_labeled} labels in {np.isfinite(values).mean():.0%} "
          f"of the draws; median labels needed {np.median(values):.0f}")

fig, ax = plt.subplots(figsize=(6, 3.5))
grid = np.arange(1, n_labeled + 1)
for name, values in needed.items():
    ax.plot(grid, [np.mean(np.array(values) <= k) for k in grid], label=name)
ax.set(xlabel="human labels", ylabel="fraction of draws certified",
       title=f"Certifying error <= {alpha} at delta = {delta}")
ax.legend()
fig.tight_layout()

# %%
# Confidence intervals for the error, over 200 draws
# --------------------------------------------------
# ``confidence_interval`` inverts the test. Its default construction (``"plugin"``) runs one
# betting e-process per bound whose reliance factor is chosen from past rounds only; the paper's
# construction (``"paper"``) inverts the mixture over reliance factors. Both cover the error with
# probability at least 0.9 over the draw; the plug-in one is narrower, and never more than a few
# percent wider than the labels-only interval even with a useless judge (user guide,
# :ref:`autoeval-ci`). The "truth" here is the error on the whole pool the rows are drawn from.
truth = h.mean()
intervals = {"R-Eval (labels only)": dict(method="eval"),
             "R-AutoEval+, paper": dict(construction="paper"),
             "R-AutoEval+, plug-in (default)": dict()}
widths = {name: [] for name in intervals}
covered = {name: [] for name in intervals}
for draw in range(200):
    perm = rng.permutation(len(y_pool))
    lab, unl = perm[:n_labeled], perm[n_labeled : n_labeled + n_unlabeled]
    for name, kw in intervals.items():
        ci = rautoeval_confidence_interval(h[lab], g[lab], g[unl], delta=delta, **kw)
        widths[name].append(ci.high - ci.low)
        covered[name].append(ci.low <= truth <= ci.high)
for name in intervals:
    print(f"{name:<32s} covered the pool's error in {np.mean(covered[name]):.0%} of 200 draws "
          f"(guarantee: >= 90%); mean width {np.mean(widths[name]):.4f}")

# %%
# Choose the cheapest certified model (fixed-sequence testing)
# ------------------------------------------------------------
# Candidates: the same classifier on fewer and fewer features (cheaper, less accurate).
# :class:`~sklearn_riskcontrol.autoeval.RiskControlledModelSelector` tests them from the largest
# to the smallest at the full ``delta``, stops at the first failure and keeps the cheapest
# certified one: with probability at least ``1 - delta`` *every* certified candidate has error
# at most ``alpha``. If the first candidate fails, nothing is selected (never a silent fallback
# to an uncertified model).
n_features = [20, 6, 4, 2, 1]
candidates = [make_pipeline(SelectKBest(k=k), LogisticRegression()).fit(X_small, y_small)
              for k in n_features]
print("pool error of each candidate:",
      {k: round(float(np.mean(c.predict(X_pool) != y_pool)), 3)
       for k, c in zip(n_features, candidates)})

tester = RAutoEvalPlus(None, autoevaluator=judge, alpha=alpha, delta=delta, random_state=0)
selector = RiskControlledModelSelector(candidates, tester=tester, cost=n_features)
selector.fit(X_eval, y_semi)
print("certified (one draw):", selector.certified_, "selected:",
      n_features[selector.selected_index_], "features")
print("predictions of the selected model:", selector.predict(X_pool[:10]))

# %%
# The same selection over 100 draws, on loss tables with
# :func:`~sklearn_riskcontrol.autoeval.rautoeval_select` (the fast path for precomputed losses,
# e.g. from LLM evaluations):
preds = np.array([c.predict(X_pool) for c in candidates])
H = (preds != y_pool).astype(float)
G = (preds != pred_judge).astype(float)
size = {name: [] for name in methods}
for draw in range(100):
    perm = rng.permutation(len(y_pool))
    lab, unl = perm[:n_labeled], perm[n_labeled : n_labeled + n_unlabeled]
    for name, method in methods.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RiskControlWarning)
            sel = rautoeval_select(H[:, lab], G[:, lab], G[:, unl], alpha=alpha, delta=delta,
                                   cost=n_features, method=method, betting="wsr")
        size[name].append(np.nan if sel.selected is None else n_features[sel.selected])

fig, ax = plt.subplots(figsize=(6, 3.5))
width = 0.25
for i, (name, picks) in enumerate(size.items()):
    picks = np.array(picks)
    counts = [np.mean(picks == k) for k in n_features] + [np.mean(np.isnan(picks))]
    ax.bar(np.arange(len(n_features) + 1) + (i - 1) * width, counts, width, label=name)
    print(f"{name:<12s} mean number of features of the selected model: "
          f"{np.nanmean(picks):.2f} (nothing certified in {np.isnan(picks).mean():.0%})")
ax.set_xticks(np.arange(len(n_features) + 1), [str(k) for k in n_features] + ["none"])
ax.set(xlabel="features of the selected model (fewer = cheaper)",
       ylabel="fraction of draws", title="Fixed-sequence model selection")
ax.legend()
fig.tight_layout()
plt.show()
