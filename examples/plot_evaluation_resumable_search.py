"""
======================================================================
A best-model search that survives crashes (durable store, retries)
======================================================================

Every evaluation of an LLM costs a call (and often a judge call). A search that runs for hours
must not lose what it paid for when the process is killed, the laptop sleeps or the API starts
failing. Here a simulated LLM back-end is slow (a few milliseconds per call) and flaky (10% of
the calls fail), and we search for the best of 12 prompts on 300 examples with
:class:`~sklearn_riskcontrol.bandits.PULSE`:

1. a first session stops cleanly when its cost budget is spent (``max_cost``);
2. a second session, a *fresh* oracle and strategy on the same store file (as a new process
   would build them), crashes halfway (a simulated kill);
3. a third session resumes and finishes.

Every score is committed to the store (:class:`~sklearn_riskcontrol.evaluation.SQLiteStore`, one
SQLite file) before the strategy uses it, so no example is paid for twice, and because the
strategy's random draws depend only on ``random_state`` and the scores, the resumed search makes
exactly the decisions of an uninterrupted one. See :doc:`/running_evaluations`.
"""

# %%
# A slow, flaky, paid back-end
# ----------------------------
# The "LLM" answers example ``j`` for prompt ``i`` correctly with a prompt-dependent
# probability; the answers are fixed in advance (a table ``truth``) so that we can compare runs.
# Each call scores one example (``chunk_size=1``), sleeps 2 ms and fails at random 10% of the
# time (never three times in a row for one example); a call costs $0.002.
import os
import tempfile
import threading
import time
import warnings

import matplotlib.pyplot as plt
import numpy as np

from sklearn_riskcontrol.bandits import PULSE
from sklearn_riskcontrol import RiskControlWarning
from sklearn_riskcontrol.evaluation import CallableOracle

n_prompts, n_examples = 12, 300
rng = np.random.default_rng(0)
accuracy = np.linspace(0.55, 0.75, n_prompts)
truth = (rng.uniform(size=(n_prompts, n_examples)) < accuracy[:, None]).astype(float)


class SimulatedLLM:
    """Scores one example per call; slow, flaky; counts what it is paid for."""

    def __init__(self, crash_after=None):
        self.failures = np.random.default_rng()  # unseeded: failures differ in every session
        self.lock = threading.Lock()
        self.paid = np.zeros(truth.shape, dtype=int)
        self.in_a_row = np.zeros(truth.shape, dtype=int)  # failures since the last success
        self.crash_after = crash_after

    def __call__(self, prompt, examples):
        time.sleep(0.002)
        with self.lock:
            # a flaky API, not a dead one: never three failures in a row for one call, so the
            # oracle's 5 retries always get through (a dead back-end would end the search)
            if self.in_a_row[prompt, examples].max() < 2 and self.failures.random() < 0.1:
                self.in_a_row[prompt, examples] += 1
                raise ConnectionError("503 Service Unavailable")
            self.in_a_row[prompt, examples] = 0
            if self.crash_after is not None and self.paid.sum() >= self.crash_after:
                raise SystemExit("simulated kill")  # not an Exception: never retried
            self.paid[prompt, examples] += 1
        return truth[prompt, examples], 0.002 * len(examples)


store = os.path.join(tempfile.mkdtemp(), "prompts.db")


def make_oracle(llm, max_cost=None):
    # What a new process would build: the same back-end, the same store file.
    return CallableOracle(
        llm, n_prompts, n_examples, store=store, run_config={"judge": "exact-match", "v": 1},
        cost="returned", max_cost=max_cost, max_concurrency=8, chunk_size=1,
        max_retries=5, retry_backoff=0.001,
    )


def make_search():
    return PULSE(budget=0.4, batch_size=16, rank=2, random_state=0)


# %%
# Session 1: stopped by the cost budget
# -------------------------------------
# ``max_cost=1.0`` allows about 500 calls of $0.002; then the oracle starts no new call and the
# strategy stops cleanly (``completed_`` is False, a warning says how to continue).
llm1 = SimulatedLLM()
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always", RiskControlWarning)
    search = make_search().fit(make_oracle(llm1, max_cost=1.0))
print(f"session 1: completed={search.completed_}, {search.n_evaluations_} evaluations used, "
      f"{llm1.paid.sum()} calls paid, cost ${search.oracle_.cost_:.3f}")
print("warning:", str(caught[-1].message)[:100], "...")

# %%
# Session 2: a fresh oracle and strategy on the same store, killed halfway
# ------------------------------------------------------------------------
# The stored scores are read back (not bought again) while the strategy replays its draws; then
# it buys new cells until the simulated kill.
llm2 = SimulatedLLM(crash_after=300)
oracle2 = make_oracle(llm2)
try:
    make_search().fit(oracle2)
except SystemExit as exc:
    print(f"session 2: {exc}; {oracle2.n_reused_} cells read back from the store, "
          f"{llm2.paid.sum()} new calls paid")

# %%
# Session 3: resume and finish
# ----------------------------
llm3 = SimulatedLLM()
oracle3 = make_oracle(llm3)
search = make_search().fit(oracle3)
paid = llm1.paid + llm2.paid + llm3.paid
print(f"session 3: completed={search.completed_}; {oracle3.n_reused_} cells read back, "
      f"{llm3.paid.sum()} new calls paid, {oracle3.n_retries_} failed calls retried")
print(f"over the three sessions: {paid.sum()} calls paid for {search.n_evaluations_} "
      f"evaluations; cells paid twice: {int((paid > 1).sum())}; total cost ${oracle3.cost_:.3f}")

# %%
# The same decisions as an uninterrupted search
# ---------------------------------------------
# The uninterrupted search runs on the table itself (no store, no failures, no threads).
reference = make_search().fit(truth)
same = (reference.best_index_ == search.best_index_
        and np.array_equal(reference.means_, search.means_)
        and np.array_equal(reference.history_["arm"], search.history_["arm"]))
print(f"best prompt: {search.best_index_} (true best: {int(np.argmax(truth.mean(1)))}); "
      f"identical to the uninterrupted search: {same}")

# %%
# PULSE's intervals hold for all 12 prompts at once with probability at least 95% (a
# realization of one run; the budget is 40% of the cells).
ci = search.confidence_intervals(0.05)
fig, ax = plt.subplots(figsize=(7, 3.5))
x = np.arange(n_prompts)
ax.errorbar(x, search.means_, yerr=[search.means_ - ci[:, 0], ci[:, 1] - search.means_],
            fmt="o", capsize=3, label="PULSE estimate, 95% simultaneous interval")
ax.plot(x, truth.mean(1), "x", color="k", label="mean over all 300 examples")
ax.set_xlabel("prompt")
ax.set_ylabel("accuracy")
ax.set_title("Resumed search: estimates after three sessions")
ax.legend(loc="lower right", fontsize=8)
fig.tight_layout()
plt.show()
