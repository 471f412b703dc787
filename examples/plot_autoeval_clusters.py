"""
=====================================================
Questions that come in documents: clustered intervals
=====================================================

An evaluation set often holds several questions per document (or turns per conversation).
Questions of one document share its difficulty, so they are not independent draws, and an
interval that treats them as such is too narrow: it misses the risk far more often than
``delta``. Passing the document of each row (``groups_labeled=`` / ``groups_unlabeled=``) makes
the documents the draws; the interval still bounds the risk of a question (the item-level risk
``E[loss sum of a document] / E[questions per document]``), with a finite-sample guarantee
whatever the judge, assuming i.i.d. documents (in a random order) of bounded size:

.. math:: P\\big(\\text{low} \\le R \\le \\text{high}\\big) \\ge 1 - \\delta .

See :ref:`autoeval-clusters` for the construction and a 1000-draw benchmark.
"""

# %%
# Simulated documents with a strong document effect
# -------------------------------------------------
# 40 labeled documents of 25 questions; a document's risk is Beta(0.5, 2) (mean 0.2, so the
# item risk is 0.2), and each question's 0/1 loss is drawn with its document's risk. The judge's
# label is wrong on 10% of the questions; 400 more documents carry only the judge's losses.
import matplotlib.pyplot as plt
import numpy as np

from sklearn_riskcontrol.autoeval import rautoeval_confidence_interval

RISK, DELTA = 0.2, 0.1


def documents(rng, n_docs, start=0, questions=25):
    ids = np.repeat(np.arange(start, start + n_docs), questions)
    p = rng.beta(0.5, 2.0, n_docs)[ids - start]
    loss = (rng.random(ids.size) < p).astype(float)
    judge = np.where(rng.random(ids.size) < 0.1, 1.0 - loss, loss)
    return loss, judge, ids


rng = np.random.default_rng(0)
L, G, docs = documents(rng, 40)
_, U, docs_u = documents(rng, 400, start=40)
clustered = rautoeval_confidence_interval(L, G, U, delta=DELTA, groups_labeled=docs,
                                          groups_unlabeled=docs_u)
perm, perm_u = rng.permutation(L.size), rng.permutation(U.size)
naive = rautoeval_confidence_interval(L[perm], G[perm], U[perm_u], delta=DELTA)
print("one draw (a realization; the true item risk is 0.2):")
print(f"  documents as the draws:   [{clustered.low:.3f}, {clustered.high:.3f}]")
print(f"  questions as i.i.d. rows: [{naive.low:.3f}, {naive.high:.3f}]")

# %%
# How often does each interval miss?
# ----------------------------------
# Repeating the experiment shows what one draw cannot: the interval built on questions as
# i.i.d. rows misses the risk far more often than ``delta = 0.1``.
draws = 100
bounds = {"documents as the draws": [], "questions as i.i.d. rows": []}
for _ in range(draws):
    L, G, docs = documents(rng, 40)
    _, U, docs_u = documents(rng, 400, start=40)
    ci = rautoeval_confidence_interval(L, G, U, delta=DELTA, groups_labeled=docs,
                                       groups_unlabeled=docs_u)
    bounds["documents as the draws"].append((ci.low, ci.high))
    perm, perm_u = rng.permutation(L.size), rng.permutation(U.size)
    ci = rautoeval_confidence_interval(L[perm], G[perm], U[perm_u], delta=DELTA)
    bounds["questions as i.i.d. rows"].append((ci.low, ci.high))

fig, axes = plt.subplots(1, 2, figsize=(9, 3.6), sharey=True)
for ax, (name, b) in zip(axes, bounds.items()):
    b = np.array(b)
    miss = (b[:, 0] > RISK) | (b[:, 1] < RISK)
    print(f"{name}: missed the risk in {miss.sum()} of {draws} simulated draws "
          f"(nominal: at most {DELTA:.0%} of draws)")
    x = np.arange(draws)
    ax.vlines(x[~miss], b[~miss, 0], b[~miss, 1], color="tab:blue", lw=1)
    ax.vlines(x[miss], b[miss, 0], b[miss, 1], color="tab:red", lw=1.5)
    ax.axhline(RISK, color="k", ls="--", lw=1)
    ax.set_title(f"{name}\n{miss.sum()} of {draws} miss (red)")
    ax.set_xlabel("simulated draw")
axes[0].set_ylabel("90% interval for the item risk")
fig.tight_layout()
plt.show()

# %%
# The clustered interval is wider: with 40 documents the evidence is 40 draws, not 1000. That
# is the honest width here; the narrow one is narrow because it counts correlated questions as
# independent evidence.
