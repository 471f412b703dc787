"""Fault tests that really kill: a best-model search with a durable store is SIGKILLed at random
points (including in the middle of a batch of concurrent calls), then continued by a new process.

The back-end appends every cell it scores to a side log (fsync'd) before returning, so the log
counts the cells paid for. A kill can land after a call returned and before its scores were
committed (or while calls are in flight): those cells are paid for and lost, and the continued
run buys them again; nothing else may be. Asserted, for every kill:

- cells committed to the store are never bought again (a cell is bought at most once plus once
  per kill that caught it in flight), and a kill loses at most the cells of the query being
  bought: the calls still running and those that returned before the main thread committed them
  (on a loaded machine more than ``max_concurrency`` calls can return in that time; every call
  of a query is committed before the query returns);
- nothing is lost: in the end the store holds exactly the cells of an uninterrupted run;
- the final result (best model, estimates, evaluations per model, the whole history) equals the
  uninterrupted run with the same random_state.

The back-end also fails on a random 10% of calls (retried).
"""

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter

import numpy as np
import pytest

WORKER = r'''
import json, os, sys, threading, time
import numpy as np

M, N, CONCURRENCY, CHUNK = 8, 120, 3, 2


def make_scores():
    rng = np.random.default_rng(7)
    p = np.linspace(0.3, 0.7, M)
    return (rng.uniform(size=(M, N)) < p[:, None]).astype(float)


def make_strategy():
    from sklearn_riskcontrol.bandits import PULSE
    return PULSE(budget=0.4, batch_size=8, rank=2, random_state=3)


def summary(est):
    return {"best": int(est.best_index_), "means": est.means_.tolist(),
            "per_model": est.n_evaluations_per_model_.tolist(),
            "history": {k: v.tolist() for k, v in est.history_.items()},
            "completed": bool(est.completed_)}


def main(store, log, out):
    from sklearn_riskcontrol.evaluation import CallableOracle
    S = make_scores()
    lock = threading.Lock()
    flaky = np.random.default_rng()            # unseeded: failures differ in every process

    def score(i, J):
        time.sleep(0.002)                      # a slow back-end: kills land mid-batch
        with lock:
            fail = flaky.random() < 0.1
        if fail:
            raise ConnectionError("flaky back-end")
        with lock, open(log, "a") as f:        # the cells paid for, durably, before returning
            f.write("".join(f"{i} {j}\n" for j in J))
            f.flush()
            os.fsync(f.fileno())
        return S[i, J]

    oracle = CallableOracle(score, M, N, store=store, max_concurrency=CONCURRENCY,
                            chunk_size=CHUNK, max_retries=20, retry_backoff=0)
    est = make_strategy().fit(oracle)
    with open(out, "w") as f:
        json.dump(summary(est), f)


if __name__ == "__main__":
    main(*sys.argv[1:4])
'''


def _namespace(tmp_path):
    path = tmp_path / "worker.py"
    path.write_text(WORKER)
    ns = {"__name__": "worker"}
    exec(compile(WORKER, str(path), "exec"), ns)
    return path, ns


def _log_cells(log):
    if not log.exists():
        return []
    lines = log.read_text().split("\n")[:-1]  # a partial last line (impossible) would be dropped
    return [tuple(map(int, line.split())) for line in lines]


def _store_cells(store):
    con = sqlite3.connect(store)
    try:
        return {(int(m), int(e)) for m, e in con.execute("SELECT model, example FROM scores")}
    finally:
        con.close()


def _kill_and_resume(tmp_path, n_kills, seed):
    script, ns = _namespace(tmp_path)
    S = ns["make_scores"]()
    from sklearn_riskcontrol.evaluation import MatrixOracle

    # the uninterrupted run: no store, no concurrency, no failures; the largest query it makes
    # bounds the cells a kill can catch between payment and commit
    ref_oracle = MatrixOracle(S)
    buy, sizes = ref_oracle._buy_cells, []
    ref_oracle._buy_cells = lambda r, c: (sizes.append(r.size), buy(r, c))[1]
    ref = ns["summary"](ns["make_strategy"]().fit(ref_oracle))
    ref_cells = set(zip(*np.nonzero(ref_oracle.revealed_)))
    total = len(ref_cells)

    store, log, out = tmp_path / "run.db", tmp_path / "calls.log", tmp_path / "out.json"
    rng = np.random.default_rng(seed)
    targets = np.sort(rng.choice(np.arange(1, total - 10), size=n_kills, replace=False))
    cmd = [sys.executable, str(script), str(store), str(log), str(out)]
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    lost, kills = [], 0
    for target in targets:
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        while proc.poll() is None and len(_log_cells(log)) < target:
            time.sleep(0.0005)
        if proc.poll() is not None:  # finished before reaching the target (cannot happen)
            break
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        kills += 1
        paid = set(_log_cells(log))
        in_store = _store_cells(store) if store.exists() else set()
        assert in_store <= paid
        lost.append(paid - in_store)  # paid for, killed before the commit
    assert kills >= max(1, n_kills - 1)
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(out.read_text())

    # same decisions as the uninterrupted run
    assert result == ref
    # nothing lost: the store holds exactly the cells of the uninterrupted run
    final = _store_cells(store)
    assert final == ref_cells
    # nothing bought twice, except cells a kill caught between payment and commit
    bought = Counter(_log_cells(log))
    assert set(bought) == ref_cells
    for k, cells in enumerate(lost):
        assert len(cells) <= max(sizes), (k, cells, max(sizes))
    for cell, count in bought.items():
        assert count <= 1 + sum(cell in cells for cells in lost), (cell, count)
    return kills, sum(bought.values()) - total


def test_sigkill_at_random_points_then_resume_equals_uninterrupted(tmp_path):
    kills, rebought = _kill_and_resume(tmp_path, n_kills=4, seed=0)
    assert kills >= 3


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2])
def test_sigkill_at_many_random_points(tmp_path, seed):
    kills, rebought = _kill_and_resume(tmp_path, n_kills=22, seed=seed)
    assert kills >= 20
