"""Durable evaluation store: throughput of concurrent calls and the store's overhead.

Two measurements, in one process (absolute times are noisy on a shared machine; the ratios are
what to read):

a. Throughput of a best-model search (UCB-E, one example per call) against a simulated LLM that
   takes ``--latency`` seconds per call (a sleep: I/O-bound, like a network call), with
   ``max_concurrency`` 1 vs 8, with a SQLite store. The decisions of both runs are checked to be
   identical (and identical to the run on the plain matrix).
b. The store's overhead per evaluation: the same search against an instant back-end, with no
   store, with ``SQLiteStore(durable=False)`` (a commit survives a killed process) and with the
   default ``SQLiteStore(durable=True)`` (every commit fsync'd: it also survives a power loss);
   per-evaluation time differences against no store, and the overhead as a fraction of the
   simulated latency of one call.

    python benchmarks/evaluation_store.py             # 20 ms per call, 400 evaluations (~15 s)
    python benchmarks/evaluation_store.py --quick     # a few seconds
"""

import argparse
import os
import tempfile
import time

import numpy as np

from sklearn_riskcontrol.bandits import UCBE
from sklearn_riskcontrol.evaluation import CallableOracle, SQLiteStore


def _matrix(m, n, seed=0):
    rng = np.random.default_rng(seed)
    p = np.linspace(0.4, 0.7, m)
    return (rng.uniform(size=(m, n)) < p[:, None]).astype(float)


def _run(S, budget, *, latency=0.0, store=None, max_concurrency=1, chunk_size=1):
    def llm(i, J):
        if latency:
            time.sleep(latency * len(J))
        return S[i, J]

    oracle = CallableOracle(llm, *S.shape, store=store, max_concurrency=max_concurrency,
                            chunk_size=chunk_size)
    est = UCBE(budget=budget, batch_size=16, random_state=0)
    t0 = time.perf_counter()
    est.fit(oracle)
    elapsed = time.perf_counter() - t0
    if oracle.store_ is not None:
        oracle.store_.close()
    return elapsed, est


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.02, help="seconds per simulated call")
    parser.add_argument("--evaluations", type=int, default=400, help="budget of case a")
    parser.add_argument("--overhead-evaluations", type=int, default=3000, help="budget of case b")
    parser.add_argument("--repeats", type=int, default=3, help="best of, for case b")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    if args.quick:
        args.evaluations, args.overhead_evaluations, args.repeats = 160, 800, 1
    S = _matrix(20, 400)
    with tempfile.TemporaryDirectory() as tmp:
        _measure(args, S, tmp)


def _measure(args, S, tmp):
    reference = UCBE(budget=args.evaluations, batch_size=16, random_state=0).fit(S)

    print(f"a. throughput, {args.evaluations} evaluations, one call per evaluation, "
          f"simulated latency {1000 * args.latency:g} ms per call, SQLite store (durable)")
    times = {}
    for conc in (1, 8):
        path = os.path.join(tmp, f"a{conc}.db")
        t, est = _run(S, args.evaluations, latency=args.latency, store=path,
                      max_concurrency=conc)
        assert est.best_index_ == reference.best_index_
        np.testing.assert_array_equal(est.means_, reference.means_)
        np.testing.assert_array_equal(est.history_["arm"], reference.history_["arm"])
        times[conc] = t
        print(f"   max_concurrency={conc}: {t:6.2f} s  {args.evaluations / t:7.1f} evaluations/s")
    print(f"   speed-up 8 vs 1: {times[1] / times[8]:.2f}x (ideal with batches of 16 examples: "
          f"8x; identical decisions checked)")

    n = args.overhead_evaluations
    print(f"\nb. store overhead, {n} evaluations, instant back-end, one call per evaluation "
          f"(best of {args.repeats})")
    best = {}
    for rep in range(args.repeats):
        for name, make in [("no store", lambda r: None),
                           ("SQLite durable=False", lambda r: SQLiteStore(
                               os.path.join(tmp, f"b-fast-{r}.db"), durable=False)),
                           ("SQLite durable=True", lambda r: SQLiteStore(
                               os.path.join(tmp, f"b-full-{r}.db")))]:
            t, _ = _run(S, n, store=make(rep))
            best[name] = min(best.get(name, np.inf), t)
    base = best["no store"]
    for name, t in best.items():
        per = 1e6 * t / n
        line = f"   {name:22s} {t:6.2f} s  {per:8.1f} us/evaluation"
        if name != "no store":
            over = 1e6 * (t - base) / n
            line += (f"  overhead {over:7.1f} us/evaluation, ratio to no store {t / base:5.2f}x, "
                     f"{100 * over / (1e6 * args.latency):.2f}% of a {1000 * args.latency:g} ms call")
        print(line)


if __name__ == "__main__":
    main()
