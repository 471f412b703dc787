"""
==========================================================
Is the deployed model still within its risk? Monitor it
==========================================================

A digit classifier is deployed with the promise "error rate at most 10%". In production a judge
(another model) labels every image and a person labels one image in twenty, chosen at random.
Halfway through, the camera degrades and the error rate jumps.
:class:`~sklearn_riskcontrol.autoeval.RiskMonitor` raises an alarm when the evidence that the
error rate exceeds ``alpha`` reaches ``1 / delta``. Its guarantee: if the error rate of every
image (given the stream before it) stays at most ``alpha``, the alarm *ever* fires with
probability at most ``delta``, over a stream of any length, whatever the judge.
"""

# %%
# A model, a judge, and a production stream that degrades at image 3,000
# ----------------------------------------------------------------------
# The stream draws test images at random; from image 3,000 on they carry strong pixel noise.
import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_digits
from sklearn.ensemble import RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sklearn_riskcontrol.autoeval import RiskMonitor
from sklearn_riskcontrol.plotting import plot_risk_monitor

X, y = load_digits(return_X_y=True)
X_fit, X_test, y_fit, y_test = train_test_split(X, y, test_size=0.5, random_state=0)
model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000)).fit(X_fit, y_fit)
judge = RandomForestClassifier(n_estimators=200, random_state=0).fit(X_fit, y_fit)

rng = np.random.default_rng(0)
n_rows, change = 8000, 3000
rows = rng.integers(0, len(y_test), n_rows)
X_stream, y_stream = X_test[rows].astype(float), y_test[rows]
X_stream[change:] += rng.normal(0, 2.0, X_stream[change:].shape)  # the camera degrades

predicted = model.predict(X_stream)
loss = (predicted != y_stream).astype(float)                  # known only where labeled
loss_judge = (predicted != judge.predict(X_stream)).astype(float)  # known on every row
labeled = rng.random(n_rows) < 0.05                           # one image in twenty, at random
loss_labeled = np.where(labeled, loss, np.nan)
print(f"error rate before / after the change (this stream): {loss[:change].mean():.3f} / "
      f"{loss[change:].mean():.3f}")

# %%
# Monitor with the judge, and with the labels alone
# -------------------------------------------------
# Batches of 500 rows arrive; ``partial_fit`` takes them in order. The labels-only monitor sees
# the same labels and ignores the judge.
with_judge = RiskMonitor(alpha=0.1, delta=0.1, label_rate=0.05)
labels_only = RiskMonitor(alpha=0.1, delta=0.1)
for start in range(0, n_rows, 500):
    batch = slice(start, start + 500)
    with_judge.partial_fit(loss_judge[batch], loss_labeled[batch])
    labels_only.partial_fit(None, loss_labeled[batch])
for name, monitor in (("judge + labels", with_judge), ("labels only", labels_only)):
    where = ("no alarm" if not monitor.alarm_ else
             f"alarm at image {monitor.alarm_index_} ({monitor.alarm_index_ - change} images "
             "after the change)")
    print(f"{name:>15}: {where}; {monitor.n_labels_} labels")

# %%
# The evidence and the running bounds on the risk
# -----------------------------------------------
# The evidence stays near zero while the model is fine (the monitor bets only when the recent
# risk looks above ``alpha``) and climbs after the change. These are one stream's curves; the
# guarantee is about the probability of a false alarm over streams, and
# ``benchmarks/autoeval_monitor.py`` measures false-alarm rates and delays over many.
fig, axes = plt.subplots(1, 2, figsize=(11, 4))
plot_risk_monitor(with_judge, ax=axes[0])
plot_risk_monitor(labels_only, ax=axes[0])
axes[0].axvline(change, color="grey", linewidth=1)
axes[0].set_title("evidence that the risk exceeds alpha")
plot_risk_monitor(with_judge, kind="risk", ax=axes[1])
axes[1].axvline(change, color="grey", linewidth=1)
axes[1].set_title("running confidence bounds (judge + labels)")
fig.tight_layout()
plt.show()
