"""Evaluations needed to identify the best model: PULSE vs UCB-E vs Naive-Pooling (vs uniform).

Synthetic matrices from the spec's generator (``make_score_matrix``): by default 1000 models x
12,000 examples, top-2 gap 0.02, side information = 1100 other models, B = 64, one warm-up batch
per model, tau = 1000. Each repetition runs every method on the same matrix with its own seed;
``--matrices`` independent matrices with ``--reps`` seeds each. The side-information factors are
fitted once per matrix (rank ``--rank``; ``--rank cv`` chooses it among 1, 2, 4, 8, 16 by 5-fold
cross-validation with the one-standard-error rule on the side matrix, as PULSE's ``rank="cv"``
does) and shared by PULSE and Naive-Pooling; without side information (``--n-side 0``) the rank
is passed to the estimators (``cv``: chosen again at every refit).

Prints, per method, the accuracy (P(best identified)) at a few budgets and the budget from which
the accuracy stays >= 95%, both in total evaluations and in evaluations after the common warm-up
(m * B), and the ratios to UCB-E with 90% cluster-bootstrap CIs (matrices resampled, then seeds
within them; paired across methods); PULSE's target: <= 0.8 of UCB-E's evaluations after the
warm-up (printed as met / NOT met). ``--out`` saves the per-run histories (npz); ``--load FILE
--matrices K`` re-analyses one.

    python benchmarks/bandits_efficiency.py --matrices 5 --reps 10          # 50 runs
    python benchmarks/bandits_efficiency.py --matrices 10 --reps 10 --out eff.npz
    python benchmarks/bandits_efficiency.py --m 150 --n 800 --n-side 165 --B 16 --tau 50
    python benchmarks/bandits_efficiency.py --m 150 --n 800 --n-side 165 --B 16 --tau 50 --rank cv
    python benchmarks/bandits_efficiency.py --quick   # 100 x 600, 2 x 2 runs (smoke test)
"""

import argparse
import time

import numpy as np
from joblib import Parallel, delayed

from sklearn_riskcontrol.bandits import (
    NaivePooling,
    PULSE,
    UCBE,
    UniformSampling,
    accuracy_curve,
    budget_to_reach,
    make_score_matrix,
)
from sklearn_riskcontrol.bandits.lowrank import fit_logistic_factors, select_rank_cv

from _common import met  # benchmarks/ is on sys.path when run as a script


def run_one(scores, fact, method, seed, budget, B, tau, rank):
    if method == "UCB-E":
        est = UCBE(budget=budget, batch_size=B, random_state=seed)
    elif method == "uniform":
        est = UniformSampling(budget=budget, batch_size=B, random_state=seed)
    else:
        cls = PULSE if method.startswith("PULSE") else NaivePooling
        est = cls(budget=budget, batch_size=B, refit_every=tau, rank=rank, random_state=seed)
    t0 = time.perf_counter()
    est.fit(scores, side_scores=fact)
    h = est.history_
    return method, h["n_evaluations"], h["best_index"], time.perf_counter() - t0


def settle_budget(h, budget):
    """Evaluations after which this run's choice stays correct (``budget`` + 1 if never)."""
    ok = np.asarray(h["best_index"]) == 1
    ev = np.asarray(h["n_evaluations"])
    bad = np.flatnonzero(~ok)
    if bad.size == 0:
        return ev[0]
    return ev[bad[-1] + 1] if bad[-1] + 1 < ev.size else budget + 1


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--m", type=int, default=1000)
    ap.add_argument("--n", type=int, default=12_000)
    ap.add_argument("--n-side", type=int, default=1100)
    ap.add_argument("--gap", type=float, default=0.02)
    ap.add_argument("--B", type=int, default=64)
    ap.add_argument("--tau", type=int, default=1000)
    ap.add_argument("--rank", type=lambda v: v if v == "cv" else int(v), default=8,
                    help='rank of the low-rank model, or "cv" (5-fold CV, one-standard-error rule)')
    ap.add_argument("--after", type=int, default=136_000, help="budget after the warm-up")
    ap.add_argument("--matrices", type=int, default=5)
    ap.add_argument("--matrix-seed", type=int, default=1000, help="matrix k uses seed matrix_seed + k")
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--methods", default="UCB-E,PULSE,naive")
    ap.add_argument("--n-jobs", type=int, default=1)
    ap.add_argument("--out", default=None)
    ap.add_argument("--load", default=None,
                    help="analyse saved --out file(s) (comma-separated, pooled) instead of running")
    ap.add_argument("--bootstrap", type=int, default=1000, help="resamples for the ratio's 90%% CI")
    ap.add_argument("--quick", action="store_true",
                    help="100 x 600 (110 side models), B = 16, tau = 50, 20,000 evaluations after "
                         "the warm-up, 2 matrices x 2 seeds, 200 resamples (smoke test)")
    args = ap.parse_args()
    if args.quick:
        args.m, args.n, args.n_side, args.B, args.tau, args.after = 100, 600, 110, 16, 50, 20_000
        args.matrices, args.reps, args.bootstrap = 2, 2, 200
    methods = args.methods.split(",")
    warm = args.m * args.B
    budget = warm + args.after
    grid = np.arange(warm, budget + 1, max(args.B, (budget - warm) // 400))
    results = {k: [] for k in methods}
    times = {k: [] for k in methods}
    t_start = time.perf_counter()
    if args.load:
        for path in args.load.split(","):  # several files are pooled (same --reps each)
            saved = np.load(path)
            for meth in methods:
                r = 0
                while f"{meth}_{r}_n_evaluations" in saved:
                    results[meth].append({f: saved[f"{meth}_{r}_{f}"] for f in ("n_evaluations", "best_index")})
                    times[meth].append(np.nan)
                    r += 1
        args.reps = len(results[methods[0]]) // args.matrices  # pass --matrices of the saved run
    for k in range(0 if args.load else args.matrices):
        data = make_score_matrix(args.m, args.n, n_side_models=args.n_side, gap=args.gap,
                                 random_state=args.matrix_seed + k)
        t0 = time.perf_counter()
        fact, chosen = None, args.rank
        if args.n_side:
            if args.rank == "cv":
                chosen = select_rank_cv(data.side_scores, random_state=k).rank
            fact = fit_logistic_factors(data.side_scores, rank=chosen, random_state=k)
        t_fact = time.perf_counter() - t0
        out = Parallel(n_jobs=args.n_jobs)(
            delayed(run_one)(data.scores, fact, meth, seed, budget, args.B, args.tau, args.rank)
            for seed in range(args.reps) for meth in methods
        )
        for meth, ev, bi, t in out:
            results[meth].append({"n_evaluations": ev, "best_index": (bi == data.best_index).astype(int)})
            times[meth].append(t)
        print(f"matrix {k}: top-2 gap {data.gap:.4f}, side fit {t_fact:.1f} s (rank {chosen}), "
              f"elapsed {time.perf_counter() - t_start:.0f} s", flush=True)
    # runs store 1 where the best was identified: accuracy = curve of "best_index == 1"
    print(f"\n{args.matrices * args.reps} runs per method; m={args.m}, n={args.n}, side={args.n_side}, "
          f"gap={args.gap}, B={args.B}, tau={args.tau}, rank={args.rank}, budget={budget} "
          f"(warm-up {warm})")
    marks = [warm + int(f * args.after) for f in (0.05, 0.1, 0.2, 0.4, 1.0)]
    print("method    mean time   " + "  ".join(f"acc@{b:>7d}" for b in marks) + "   budget@95% (total / after warm-up)")
    need = {}
    for meth in methods:
        acc, _ = accuracy_curve(results[meth], 1, marks)
        b95 = budget_to_reach(results[meth], 1, level=0.95, budgets=grid)
        need[meth] = b95
        print(f"{meth:<9s} {np.mean(times[meth]):7.1f} s   " + "  ".join(f"{a:11.3f}" for a in acc)
              + f"   {b95:>9.0f} / {b95 - warm:>9.0f}")
    # per run: evaluations until its choice stays correct (paired by matrix and seed)
    settle = {m_: np.array([settle_budget(h, budget) for h in results[m_]]) for m_ in methods}
    print("\nevaluations after the warm-up until the choice stays correct (mean +- s.e. over runs):")
    for meth in methods:
        x = settle[meth] - warm
        print(f"  {meth:<9s} {x.mean():9.0f} +- {x.std(ddof=1) / np.sqrt(x.size):6.0f}")
        if meth != "UCB-E" and "UCB-E" in settle:
            d = x - (settle["UCB-E"] - warm)
            print(f"    paired difference to UCB-E {d.mean():+.0f} +- {d.std(ddof=1) / np.sqrt(d.size):.0f}; "
                  f"ratio of means {x.mean() / (settle['UCB-E'] - warm).mean():.3f}")
    if "UCB-E" in need and np.isfinite(need["UCB-E"]):
        rng = np.random.default_rng(0)
        for meth in methods:
            if meth == "UCB-E":
                continue
            r_tot = need[meth] / need["UCB-E"]
            r_after = (need[meth] - warm) / max(need["UCB-E"] - warm, 1)
            boot = []
            n_mat, reps = args.matrices, len(results[meth]) // args.matrices
            for _ in range(args.bootstrap):
                # cluster bootstrap: resample matrices, then seeds within each; the same runs
                # for both methods (they are paired by matrix and seed)
                mats = rng.integers(0, n_mat, n_mat)
                idx = (mats[:, None] * reps + rng.integers(0, reps, (n_mat, reps))).ravel()
                ba = budget_to_reach([results[meth][i] for i in idx], 1, level=0.95, budgets=grid)
                bu = budget_to_reach([results["UCB-E"][i] for i in idx], 1, level=0.95, budgets=grid)
                boot.append(((ba / bu), (ba - warm) / max(bu - warm, 1)))
            boot = np.sort(np.array(boot), axis=0)  # inf (never reached) sorts last
            lo, hi = boot[int(0.05 * len(boot))], boot[int(np.ceil(0.95 * len(boot))) - 1]
            target = (f"; target <= 0.8 after warm-up: {met(r_after <= 0.8)}"
                      if meth == "PULSE" else "")
            print(f"{meth} / UCB-E evaluations to reach 95%: total {r_tot:.3f} "
                  f"(90% cluster-bootstrap CI {lo[0]:.3f}-{hi[0]:.3f}), after warm-up {r_after:.3f} "
                  f"({lo[1]:.3f}-{hi[1]:.3f}){target}")
    if args.out:
        np.savez_compressed(
            args.out,
            **{f"{meth}_{r}_{f}": np.asarray(res[f]) for meth in methods
               for r, res in enumerate(results[meth]) for f in ("n_evaluations", "best_index")},
        )


if __name__ == "__main__":
    main()
