"""
===========================================================
Which images to label? Certify a pool's error rate actively
===========================================================

A digit classifier must be certified to have an error rate below 10% on a pool of images before
release. Labels cost money. A judge (another model) gives, for every image, its probability
that the classifier is wrong: it is nearly sure on most images and unsure on a few.
:class:`~sklearn_riskcontrol.autoeval.ActiveLabelingSession` proposes which images to label,
stratum by stratum of the judge's probability, and certifies the error rate **over the pool**
as soon as the labels allow. Its guarantee: if the pool's error rate is at least ``alpha``,
the session is *ever* certified with probability at most ``delta``, whatever the judge and
whenever you stop.
"""

# %%
# A model, a judge, and the judge's probability of an error on every image
# -------------------------------------------------------------------------
import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_digits
from sklearn.ensemble import RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sklearn_riskcontrol.autoeval import ActiveLabelingSession

X, y = load_digits(return_X_y=True)
rng = np.random.default_rng(0)
X = X + rng.normal(0, 3.0, X.shape)  # noisy scans: the classifier errs now and then
X_fit, X_pool, y_fit, y_pool = train_test_split(X, y, test_size=0.6, random_state=0)
model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000)).fit(X_fit, y_fit)
judge = RandomForestClassifier(n_estimators=300, random_state=0).fit(X_fit, y_fit)

predicted = model.predict(X_pool)
# the judge's probability that the model's answer is wrong (known for every image)
p_wrong = 1 - judge.predict_proba(X_pool)[np.arange(len(predicted)), predicted]
truth = (predicted != y_pool).astype(float)  # revealed only for the images we label
print(f"pool of {len(truth)} images; its error rate (unknown to the session): "
      f"{truth.mean():.3f}")

# %%
# Label what the session proposes, 10 images at a time
# ----------------------------------------------------
# ``propose(k)`` returns pool rows never labeled; ``add`` takes their losses.
session = ActiveLabelingSession(p_wrong, alpha=0.15, delta=0.1, max_labels=len(truth),
                                random_state=0)
while not session.status_.done:
    rows = session.propose(10)
    status = session.add(rows, truth[rows])
print(status)
print("strata sizes:", session.stratum_sizes_, " labels per stratum:",
      status.labels_per_stratum)

# %%
# Active against uniform sampling, over 20 runs of the same pool
# --------------------------------------------------------------
# ``sampling="uniform"`` labels the pool in plain random order (the same without-replacement
# e-process with one stratum). Each run differs only in the random draws.
needed = {"active": [], "uniform": []}
for seed in range(20):
    for sampling in needed:
        s = ActiveLabelingSession(p_wrong, alpha=0.15, delta=0.1, max_labels=len(truth),
                                  sampling=sampling, random_state=seed)
        while not s.status_.done:
            r = s.propose(10)
            s.add(r, truth[r])
        needed[sampling].append(s.status_.stopping_index + 1 if s.status_.certified
                                else len(truth))
for sampling, v in needed.items():
    print(f"{sampling:>8}: labels to certify, median {np.median(v):.0f}, mean {np.mean(v):.0f}"
          " (20 runs)")

fig, ax = plt.subplots(figsize=(6, 3.5))
ax.boxplot([needed["active"], needed["uniform"]])
ax.set_xticks([1, 2], ["active", "uniform"])
ax.set_ylabel("labels until certified")
ax.set_title("Certifying error rate < 0.15 on the pool (delta = 0.1)")
fig.tight_layout()
plt.show()

# %%
# What is certified
# -----------------
# The mean loss over the images of the pool (a finite population, labels drawn without
# replacement): the session's e-process is a stratified union-intersection test of
# without-replacement betting e-processes (after Spertus & Stark, 2022). It stays valid with a
# judge that is sure and wrong: a misleading judge only costs labels.
