"""
==========================================================================
Find the best of 200 models with a fraction of the evaluations (PULSE)
==========================================================================

Scoring every model on every example of a benchmark is expensive when a "model" is an LLM (or a
prompt) and one evaluation is an API call plus a judge call. Best-model identification spends a
budget of evaluations adaptively: models that are clearly behind stop being scored early.

* :class:`~sklearn_riskcontrol.bandits.UCBE` scores the model with the highest upper confidence index on a
  batch of new examples, using the observed scores only.
* :class:`~sklearn_riskcontrol.bandits.PULSE` runs the same bandit but estimates every model's mean with
  an *unbiased* prediction-powered estimate: a low-rank model, learnt from the scores of *other*
  models on the same examples (side information), predicts the cells not yet scored, and an
  inverse-probability correction removes the predictions' bias. It also gives finite-sample
  confidence intervals.
* :class:`~sklearn_riskcontrol.bandits.NaivePooling` plugs the predictions in without the
  correction (biased); it is the baseline PULSE fixes.

The score matrix here is synthetic (:func:`~sklearn_riskcontrol.bandits.make_score_matrix`,
the generator of the benchmark): 200 models x 2000 examples, a top-2 gap of 0.01, and 200 older
models as side information. The last section selects the best of several fitted scikit-learn
classifiers with :class:`~sklearn_riskcontrol.bandits.BestModelSelector`.
"""

# %%
# A synthetic leaderboard with side information
# ---------------------------------------------
import matplotlib.pyplot as plt
import numpy as np

from sklearn_riskcontrol.bandits import (
    BestModelSelector,
    LowRankScoreCompleter,
    NaivePooling,
    PULSE,
    UCBE,
    budget_to_reach,
    make_score_matrix,
)
from sklearn_riskcontrol.plotting import plot_accuracy_vs_budget, plot_evaluations_per_model

data = make_score_matrix(200, 2000, n_side_models=200, gap=0.01, random_state=0)
n_cells = data.scores.size
print(f"best model: {data.best_index} (mean {data.means[data.best_index]:.3f}), "
      f"top-2 gap {data.gap:.3f}, {n_cells} cells")

# %%
# The example factors of the low-rank model are learnt once from the side information and
# reused by every run (a fitted completer can be passed as ``side_scores``).
side = LowRankScoreCompleter(rank=8, max_iter=20, random_state=0).fit(data.side_scores)

# %%
# Several runs of each strategy
# -----------------------------
# Each run has its own seed (the examples drawn differ); the matrix stays the same. The budget
# is 6% of the cells, batches of B = 16 examples, a refit of the model factors every 100 steps.
budget, B, seeds = 0.06, 16, range(6)
runs = {
    "PULSE": [
        PULSE(budget=budget, batch_size=B, refit_every=100, rank=8, random_state=s).fit(
            data.scores, side_scores=side
        )
        for s in seeds
    ],
    "UCB-E": [UCBE(budget=budget, batch_size=B, random_state=s).fit(data.scores) for s in seeds],
    "naive pooling": [
        NaivePooling(budget=budget, batch_size=B, refit_every=100, rank=8, random_state=s).fit(
            data.scores, side_scores=side
        )
        for s in seeds
    ],
}
for name, fitted in runs.items():
    found = np.mean([r.best_index_ == data.best_index for r in fitted])
    need = budget_to_reach([r.history_ for r in fitted], data.best_index, level=0.95)
    print(f"{name:>13}: best model found in {found:.0%} of the runs; accuracy stays >= 95% "
          f"from {int(need)} evaluations ({need / n_cells:.1%} of the cells)")

# %%
# Accuracy against budget
# -----------------------
# The probability of having identified the best model after a given number of evaluations
# (the first ``200 * 16`` are the warm-up batch of every model). With only six runs per method
# the curves are coarse; ``benchmarks/bandits_efficiency.py`` runs the full study.
fig, ax = plt.subplots(figsize=(7, 4), layout="constrained")
plot_accuracy_vs_budget(runs, data.best_index, ax=ax, level=0.95)
ax.set_title("200 models x 2000 examples, top-2 gap 0.01")
plt.show()

# %%
# Where the budget went
# ---------------------
# The adaptive strategies spend most evaluations on the few models that compete for the top;
# the red bar is the model PULSE selected.
fig, ax = plt.subplots(figsize=(7, 3.5), layout="constrained")
plot_evaluations_per_model(runs["PULSE"][0], true_means=data.means, top=40, ax=ax)
ax.set_title("PULSE, first run: evaluations of the 40 best models")
plt.show()

# %%
# Confidence intervals
# --------------------
# With a smaller budget (3% of the cells) no model is fully scored. Each model's examples are
# scored in a random order, so PULSE's intervals are betting confidence sequences for sampling
# without replacement, run on its AIPW residuals (the scores minus the low-rank predictions):
# uniform in time by Ville's inequality, they hold whatever the adaptive number of pulls and
# whenever the run stops (``method="subgaussian"`` gives the former, wider construction). With
# ``simultaneous=True`` (the default) all 200 intervals contain their model's mean at once with
# probability at least ``1 - delta`` (a union bound over the models); ``simultaneous=False`` is
# the guarantee for one model chosen before the run. The width shrinks like one over the square
# root of a model's pulls, so the models the bandit dropped early keep wide, often vacuous
# intervals (99% of ``[0, 1]`` or more), and the library warns about those. The printed
# fractions are one run.
# NaivePooling has no interval: its estimate is biased by the prediction errors.
short = PULSE(budget=0.03, batch_size=B, refit_every=100, rank=8, random_state=0)
short.fit(data.scores, side_scores=side)
top = np.argsort(-data.means)[:15]
x = np.arange(top.size)
fig, ax = plt.subplots(figsize=(7, 3.5), layout="constrained")
for sim, shift, color in [(True, -0.12, "C0"), (False, 0.12, "C1")]:
    ci = short.confidence_intervals(delta=0.05, simultaneous=sim)
    covered = (ci[:, 0] <= data.means) & (data.means <= ci[:, 1])
    print(f"simultaneous={sim}: true mean inside its interval for {covered.mean():.0%} of the "
          f"models; median width over the 15 best {np.median(ci[top, 1] - ci[top, 0]):.3f}")
    mu = short.means_[top]
    ax.errorbar(x + shift, mu, yerr=[mu - ci[top, 0], ci[top, 1] - mu], fmt="o", ms=3,
                color=color, capsize=2, label=f"95% interval, simultaneous={sim}")
ax.plot(x, data.means[top], "k_", ms=12, label="true mean")
ax.set_xlabel("models, by true mean (best first)")
ax.set_ylabel("mean score")
ax.set_ylim(0, 1.02)
ax.legend(loc="lower left", fontsize="small")
plt.show()
print("pulls of the 15 best models:", short.n_pulls_[top])

# %%
# Selecting among fitted scikit-learn models
# ------------------------------------------
# :class:`~sklearn_riskcontrol.bandits.BestModelSelector` treats each fitted candidate as an arm and
# one prediction on one labelled example as an evaluation. The candidates are used as they are
# (never refitted); ``predict`` delegates to the selected one. Its default strategy is PULSE
# without side information (the low-rank model is fitted on the observed cells).
from sklearn.datasets import load_digits
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.naive_bayes import GaussianNB
from sklearn.neighbors import KNeighborsClassifier
from sklearn.tree import DecisionTreeClassifier


X, y = load_digits(return_X_y=True)
X_fit, X_pool, y_fit, y_pool = train_test_split(X, y, test_size=0.5, random_state=0)
candidates = [
    LogisticRegression(C=1e-4, max_iter=2000),
    LogisticRegression(C=1.0, max_iter=2000),
    KNeighborsClassifier(n_neighbors=15),
    KNeighborsClassifier(n_neighbors=3),
    DecisionTreeClassifier(max_depth=4, random_state=0),
    GaussianNB(),
]
candidates = [c.fit(X_fit, y_fit) for c in candidates]
selector = BestModelSelector(candidates, random_state=0).fit(X_pool, y_pool)

# One run: the estimates and intervals below are realizations; with probability at least 0.9
# every candidate's accuracy on the pool lies in its interval.

ci = selector.strategy_.confidence_intervals(delta=0.1)
for k, model in enumerate(candidates):
    acc = model.score(X_pool, y_pool)
    mark = "  <- selected" if k == selector.best_index_ else ""
    print(f"{k} {type(model).__name__:>22}: accuracy {acc:.3f}, estimate "
          f"{selector.means_[k]:.3f}, 90% interval [{ci[k, 0]:.3f}, {ci[k, 1]:.3f}], "
          f"{selector.strategy_.n_evaluations_per_model_[k]:>4} evaluations{mark}")
print(f"{selector.n_evaluations_} evaluations instead of {len(candidates) * len(y_pool)}")
