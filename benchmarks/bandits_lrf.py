"""UCB-E-LRF vs UCB-E vs uniform sampling on small matrices (Zhou et al.'s setting).

Two kinds of 150 x 800 matrices, ``--matrices`` of each, ``--reps`` seeds per matrix:

- ``rank1``: near rank-one Bernoulli scores, ``S ~ Bernoulli(skill_i * ease_j)`` with
  ``skill ~ Beta(5, 3)``, ``ease ~ Beta(4, 2)`` (the "approximately low-rank" case);
- ``spec``: the spec's logistic generator (``make_score_matrix``, rank 8, guessing floor), top-2
  gap ``--gap``.

UCB-E-LRF uses the paper's defaults (5% warm-up, K = 64, rank 1, 5% drop, ridge 0.1, b = 32,
eta = 5; 10 ALS sweeps for the first fit, ``--refit-sweeps`` warm-started sweeps per refit, 2 by
default); UCB-E and uniform use batches of 32. Prints the accuracy (P(best identified)) at 5%,
10%, 15%, 25% of all cells and the fraction of cells from which it stays >= 95% (with a 90%
bootstrap CI resampling matrices, then seeds). ``--refit-sweeps 2,10`` runs UCB-E-LRF with both
(same seeds) and also prints, for each run, how much 50 further sweeps at the end of the run move
the per-model estimates (the ALS convergence gap of the warm-started refits).

    python benchmarks/bandits_lrf.py --matrices 2 --reps 5
    python benchmarks/bandits_lrf.py --matrices 10 --reps 3 --refit-sweeps 2,10
    python benchmarks/bandits_lrf.py --quick    # 40 x 200, 2 x 2 runs, sweeps 2 and 10
"""

import argparse
import time

import numpy as np
from joblib import Parallel, delayed

from sklearn_riskcontrol.bandits import (
    UCBE,
    UCBELRF,
    UniformSampling,
    make_score_matrix,
    accuracy_curve,
    budget_to_reach,
)


def near_rank_one(m, n, seed):
    rng = np.random.default_rng(seed)
    P = np.outer(rng.beta(5, 3, m), rng.beta(4, 2, n))
    S = (rng.uniform(size=(m, n)) < P).astype(float)
    return S, int(np.argmax(S.mean(1)))


def run(S, best, method, seed, budget):
    if method.startswith("UCB-E-LRF"):
        sweeps = int(method.split("/")[1]) if "/" in method else 2
        est = UCBELRF(budget=budget, refit_sweeps=sweeps, random_state=seed)
    elif method == "UCB-E":
        est = UCBE(budget=budget, batch_size=32, random_state=seed)
    else:
        est = UniformSampling(budget=budget, batch_size=32, random_state=seed)
    t0 = time.perf_counter()
    est.fit(S)
    t = time.perf_counter() - t0
    h = est.history_
    gap = np.nan
    if method.startswith("UCB-E-LRF"):
        # convergence gap: how far 50 more sweeps move the final per-model estimates
        st = est._state
        before = est.means_.copy()
        st.ens.fit(50)
        est._refresh(st)
        gap = float(np.max(np.abs(st.est - before)))
    return method, {"n_evaluations": h["n_evaluations"],
                    "best_index": (h["best_index"] == best).astype(int)}, t, gap


def cluster_bootstrap(res, n_mat, reps, grid, cells, n_boot=1000, seed=0):
    """90% CI of the fraction of cells to reach 95%: resample matrices, then seeds within."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n_boot):
        mats = rng.integers(0, n_mat, n_mat)
        idx = (mats[:, None] * reps + rng.integers(0, reps, (n_mat, reps))).ravel()
        out.append(budget_to_reach([res[i] for i in idx], 1, level=0.95, budgets=grid) / cells)
    out = np.sort(out)  # order statistics: inf (level never reached) sorts last
    return out[int(0.05 * n_boot)], out[int(np.ceil(0.95 * n_boot)) - 1]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--m", type=int, default=150)
    ap.add_argument("--n", type=int, default=800)
    ap.add_argument("--gap", type=float, default=0.02)
    ap.add_argument("--budget", type=float, default=0.25)
    ap.add_argument("--matrices", type=int, default=2)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--n-jobs", type=int, default=1)
    ap.add_argument("--refit-sweeps", default="2", help="comma list of UCB-E-LRF refit sweeps")
    ap.add_argument("--kinds", default="rank1,spec")
    ap.add_argument("--quick", action="store_true",
                    help="40 x 200 matrices, 2 matrices x 2 seeds, refit sweeps 2 and 10")
    args = ap.parse_args()
    if args.quick:
        args.m, args.n, args.matrices, args.reps, args.refit_sweeps = 40, 200, 2, 2, "2,10"
    sweeps = [int(x) for x in args.refit_sweeps.split(",")]
    lrf = ["UCB-E-LRF" if s_ == 2 else f"UCB-E-LRF/{s_}" for s_ in sweeps]
    methods = lrf + ["UCB-E", "uniform"]
    cells = args.m * args.n
    budget = int(args.budget * cells)
    fracs = [0.05, 0.10, 0.15, 0.25]
    grid = np.arange(32, budget + 1, 32)
    for kind in args.kinds.split(","):
        res = {k: [] for k in methods}
        times = {k: [] for k in methods}
        gaps = {k: [] for k in methods}
        for k in range(args.matrices):
            if kind == "rank1":
                S, best = near_rank_one(args.m, args.n, 100 + k)
            else:
                d = make_score_matrix(args.m, args.n, gap=args.gap, random_state=100 + k)
                S, best = d.scores, d.best_index
            out = Parallel(n_jobs=args.n_jobs)(
                delayed(run)(S, best, meth, seed, budget) for seed in range(args.reps) for meth in methods
            )
            for meth, h, t, g in out:
                res[meth].append(h)
                times[meth].append(t)
                gaps[meth].append(g)
        print(f"\n{kind} matrices {args.m} x {args.n}: {args.matrices * args.reps} runs per method")
        print("method        mean time  " + "  ".join(f"acc@{f:.0%}".rjust(8) for f in fracs)
              + "   cells for 95% (90% CI)")
        for meth in methods:
            acc, _ = accuracy_curve(res[meth], 1, [int(f * cells) for f in fracs])
            b95 = budget_to_reach(res[meth], 1, level=0.95, budgets=grid)
            lo, hi = cluster_bootstrap(res[meth], args.matrices, args.reps, grid, cells)
            print(f"{meth:<13s} {np.mean(times[meth]):7.1f} s  " + "  ".join(f"{a:8.2f}" for a in acc)
                  + f"   {b95 / cells:.1%} ({lo:.1%}-{hi:.1%})")
        for meth in lrf:
            g = np.array(gaps[meth])
            print(f"{meth}: max change of the per-model estimates after 50 more sweeps: "
                  f"median {np.median(g):.1e}, max {g.max():.1e}")


if __name__ == "__main__":
    main()
