"""
=========================================================
Several judges: combine them without losing the guarantee
=========================================================

Two LLM judges, or a judge and a cheaper heuristic, grade the same items. Pass their losses as
columns, ``loss_judge_labeled`` of shape ``(n, k)`` and ``loss_judge_unlabeled`` of shape
``(N, k)``: R-AutoEval+ combines them with a *reliance vector* chosen from past rounds only, so
the interval keeps its finite-sample guarantee whatever the judges are,

.. math:: P\\big(\\text{low} \\le R \\le \\text{high}\\big) \\ge 1 - \\delta ,

while two judges whose errors are independent narrow it more than either alone, and a useless
extra judge costs almost nothing.
"""

# %%
# Two judges, each right on 75% of the items
# ------------------------------------------
# A model with risk 0.25 (0/1 losses) on 200 labeled and 2,000 unlabeled items; each judge's
# loss equals the true loss on 75% of the items, the two judges' mistakes independent. Each
# draw gives three intervals on the same data: both judges, and each judge alone.
import matplotlib.pyplot as plt
import numpy as np

from sklearn_riskcontrol.autoeval import rautoeval_confidence_interval

rng = np.random.default_rng(0)
n, N, risk, delta = 200, 2000, 0.25, 0.1


def judge(losses, accuracy):
    """Losses against a judge's label that is right with probability ``accuracy``."""
    if accuracy is None:  # a useless judge: an independent fair coin
        return (rng.random(losses.size) < 0.5).astype(float)
    return np.where(rng.random(losses.size) < accuracy, losses, 1 - losses)


def width(*tables):
    ci = rautoeval_confidence_interval(*tables, delta=delta)
    return ci.high - ci.low


def ratios(accuracies, draws=40):
    """Width with every judge / width with the first judge alone, one value per draw."""
    out = []
    for _ in range(draws):
        h = (rng.random(n) < risk).astype(float)
        h_u = (rng.random(N) < risk).astype(float)
        G = np.column_stack([judge(h, a) for a in accuracies])
        U = np.column_stack([judge(h_u, a) for a in accuracies])
        out.append(width(h, G, U) / width(h, G[:, 0], U[:, 0]))
    return np.array(out)


two_75 = ratios([0.75, 0.75])
good_useless = ratios([0.9, None])
print(f"two 75% judges: width with both / with judge 1 alone, mean over 40 draws: "
      f"{two_75.mean():.3f}")
print(f"90% judge + useless judge: width with both / good judge alone, mean over 40 draws: "
      f"{good_useless.mean():.3f}")

# %%
# The ratios, draw by draw
# ------------------------
# Below 1: the second judge narrowed the interval. Each point is one draw (black bar: the mean
# over the 40 draws); the guarantee is
# about the procedure (intervals built this way cover the risk in at least 90% of draws), and
# it holds for every combination because the reliance vector of round ``t`` is chosen from
# rounds ``< t`` only.
fig, ax = plt.subplots(figsize=(6, 3))
for row, values in enumerate([two_75, good_useless]):
    jitter = np.random.default_rng(row).uniform(-0.15, 0.15, values.size)
    ax.plot(values, row + jitter, "o", alpha=0.6, color=f"C{row}")
    ax.plot([values.mean()] * 2, [row - 0.3, row + 0.3], color="k", lw=2)
ax.set_yticks([0, 1], ["two 75% judges\n(vs one of them)", "90% + useless judge\n(vs the 90%)"])
ax.axvline(1.0, color="grey", ls="--", lw=1)
ax.set_xlabel("interval width with both judges / with one judge")
fig.tight_layout()

# %%
# With fitted judges
# ------------------
# :class:`~sklearn_riskcontrol.autoeval.RAutoEvalPlus` takes a list of auto-evaluators; each
# gives one column of judge losses.
from sklearn.datasets import make_classification
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.tree import DecisionTreeClassifier

from sklearn_riskcontrol.autoeval import RAutoEvalPlus

X, y = make_classification(n_samples=4000, n_features=10, random_state=0)
X_model, X_rest, y_model, y_rest = train_test_split(X, y, train_size=500, random_state=0)
X_judge, X_eval, y_judge, y_eval = train_test_split(X_rest, y_rest, train_size=1000,
                                                    random_state=0)
model = LogisticRegression().fit(X_model, y_model)
judges = [DecisionTreeClassifier(max_depth=d, random_state=0).fit(X_judge, y_judge)
          for d in (3, 6)]
y_semi = np.where(rng.permutation(y_eval.size) < 300, y_eval, -1)  # 300 labeled, 2,200 not
cert = RAutoEvalPlus(model, autoevaluator=judges, alpha=0.2, delta=0.1,
                     random_state=0).fit(X_eval, y_semi)
print(cert.loss_judge_labeled_.shape, cert.loss_judge_unlabeled_.shape)
print(cert.confidence_interval())
