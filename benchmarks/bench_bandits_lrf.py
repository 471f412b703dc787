"""UCB-E-LRF vs UCB-E vs uniform sampling on small matrices (Zhou et al.'s setting).

Two kinds of 150 x 800 matrices, ``--matrices`` of each, ``--reps`` seeds per matrix:

- ``rank1``: near rank-one Bernoulli scores, ``S ~ Bernoulli(skill_i * ease_j)`` with
  ``skill ~ Beta(5, 3)``, ``ease ~ Beta(4, 2)`` (the "approximately low-rank" case);
- ``spec``: the spec's logistic generator (``make_score_matrix``, rank 8, guessing floor), top-2
  gap ``--gap``.

UCB-E-LRF uses the paper's defaults (5% warm-up, K = 64, rank 1, 5% drop, ridge 0.1, 10 sweeps,
b = 32, eta = 5); UCB-E and uniform use batches of 32. Prints the accuracy (P(best identified))
at 5%, 10%, 15%, 25% of all cells and the fraction of cells from which it stays >= 95%.

    python benchmarks/bench_bandits_lrf.py --matrices 2 --reps 5
"""

import argparse
import time

import numpy as np
from joblib import Parallel, delayed

from sklearn_riskcontrol.bandits import UCBE, UCBELRF, UniformSampling, make_score_matrix
from sklearn_riskcontrol.bandits.simulate import accuracy_curve, budget_to_reach


def near_rank_one(m, n, seed):
    rng = np.random.default_rng(seed)
    P = np.outer(rng.beta(5, 3, m), rng.beta(4, 2, n))
    S = (rng.uniform(size=(m, n)) < P).astype(float)
    return S, int(np.argmax(S.mean(1)))


def run(S, best, method, seed, budget):
    est = {
        "UCB-E-LRF": UCBELRF(budget=budget, random_state=seed),
        "UCB-E": UCBE(budget=budget, batch_size=32, random_state=seed),
        "uniform": UniformSampling(budget=budget, batch_size=32, random_state=seed),
    }[method]
    t0 = time.perf_counter()
    est.fit(S)
    h = est.history_
    return method, {"n_evaluations": h["n_evaluations"],
                    "best_index": (h["best_index"] == best).astype(int)}, time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--m", type=int, default=150)
    ap.add_argument("--n", type=int, default=800)
    ap.add_argument("--gap", type=float, default=0.02)
    ap.add_argument("--budget", type=float, default=0.25)
    ap.add_argument("--matrices", type=int, default=2)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--n-jobs", type=int, default=1)
    args = ap.parse_args()
    methods = ["UCB-E-LRF", "UCB-E", "uniform"]
    cells = args.m * args.n
    budget = int(args.budget * cells)
    fracs = [0.05, 0.10, 0.15, 0.25]
    grid = np.arange(32, budget + 1, 32)
    for kind in ("rank1", "spec"):
        res = {k: [] for k in methods}
        times = {k: [] for k in methods}
        for k in range(args.matrices):
            if kind == "rank1":
                S, best = near_rank_one(args.m, args.n, 100 + k)
            else:
                d = make_score_matrix(args.m, args.n, gap=args.gap, random_state=100 + k)
                S, best = d.scores, d.best_index
            out = Parallel(n_jobs=args.n_jobs)(
                delayed(run)(S, best, meth, seed, budget) for seed in range(args.reps) for meth in methods
            )
            for meth, h, t in out:
                res[meth].append(h)
                times[meth].append(t)
        print(f"\n{kind} matrices {args.m} x {args.n}: {args.matrices * args.reps} runs per method")
        print("method      mean time  " + "  ".join(f"acc@{f:.0%}".rjust(8) for f in fracs) + "   cells for 95%")
        for meth in methods:
            acc, _ = accuracy_curve(res[meth], 1, [int(f * cells) for f in fracs])
            b95 = budget_to_reach(res[meth], 1, level=0.95, budgets=grid)
            print(f"{meth:<11s} {np.mean(times[meth]):7.1f} s  " + "  ".join(f"{a:8.2f}" for a in acc)
                  + f"   {b95 / cells:.1%}")


if __name__ == "__main__":
    main()
