"""Example 1 of the R-AutoEval+ paper (Fig. 2 and Fig. 3): reliance weights and sample complexity.

Usage::

    python benchmarks/autoeval_example1.py [--reps 100] [--n-jobs 2] [--quick] [--figure PATH]

Setting (paper, Example 1): binary loss with mean R = 0.1; the auto-evaluator reports the
correct loss with probability gamma in {0.99, 0.9, 0.7} (otherwise the flipped one); alpha = 0.12;
r = 10 unlabeled examples per labeled one; universal-portfolio bets (exact arcsine prior).

Part 1 - where the weights go (Fig. 2). For S reliance factors rho_s = linspace(0, 1, S), the
weight of rho_s in round i is w_s,i ∝ E_s,i-1. Each rho_s has an optimal expected log-growth
g_s* = max_lambda E[log(1 - lambda (q(rho_s) - alpha))] (Fig. 3, bottom), computed here exactly
from the distribution of q (h, g binary; ubar a Binomial(r, .)/r); the weights concentrate where
g_s* peaks. We report its argmax, and the weighted mean and mode of rho under the final weights
of runs of ``--rounds`` rounds (S = 100 as in Fig. 2, and the default S = 10), averaged over a
few runs.

Part 2 - sample complexity (Fig. 3, top). The paper's definition (eq. 3):
n_min(delta) = E[min{n : T_n = 1}], the expected number of labeled examples needed to certify.
With universal-portfolio bets (which do not depend on the horizon) the test with n labels
rejects iff the e-process crossed 1/delta by round n, so min{n : T_n = 1} is the first crossing
of one long stream. We estimate n_min by the mean first crossing over ``--reps`` independent
streams (the same streams for the three methods), for delta in {0.1, 0.01, 0.001, 0.0001}.
Streams that have not crossed by 32,000 labels count as 32,000 (the number is reported).
"""

import argparse
import time

import numpy as np
from joblib import Parallel, delayed
from scipy import optimize, stats

from sklearn_riskcontrol.autoeval import rautoeval_test

R, ALPHA, RATIO = 0.1, 0.12, 10
GAMMAS = (0.99, 0.9, 0.7)
METHODS = {"R-Eval": "eval", "R-AutoEval": "autoeval", "R-AutoEval+": "plus"}
DELTAS = (0.1, 0.01, 0.001, 0.0001)
N_MAX = 32_000


def stream(gamma, n, rng):
    """n labeled examples (h, g) and r n unlabeled judge losses u of Example 1."""
    h = rng.binomial(1, R, n).astype(float)
    g = np.where(rng.random(n) < gamma, h, 1.0 - h)
    hu = rng.binomial(1, R, n * RATIO).astype(float)
    u = np.where(rng.random(n * RATIO) < gamma, hu, 1.0 - hu)
    return h, g, u


# ------------------------------------------------------------------- exact growth rates
def growth_rates(gamma, rhos):
    """g_s* = max over lambda in [0, 1/(1 + rho - alpha)) of E log(1 - lambda (q - alpha))."""
    p_u = R * gamma + (1 - R) * (1 - gamma)  # P(judge loss = 1)
    k = np.arange(RATIO + 1)
    p_k = stats.binom.pmf(k, RATIO, p_u)
    # (h, g) joint: (1,1) R gamma, (1,0) R (1-gamma), (0,1) (1-R)(1-gamma), (0,0) (1-R) gamma
    hg = [(1, 1, R * gamma), (1, 0, R * (1 - gamma)), (0, 1, (1 - R) * (1 - gamma)),
          (0, 0, (1 - R) * gamma)]
    out = []
    for rho in rhos:
        q = np.concatenate([h + rho * (k / RATIO - g) for h, g, _ in hg])
        w = np.concatenate([p * p_k for _, _, p in hg])
        cap = (1 - 1e-9) / (1 + rho - ALPHA)

        def neg(lam):
            return -np.sum(w * np.log1p(-lam * (q - ALPHA)))

        res = optimize.minimize_scalar(neg, bounds=(0.0, cap), method="bounded",
                                       options={"xatol": 1e-10})
        out.append(max(0.0, -res.fun))
    return np.array(out)


# ------------------------------------------------------------------------ part 1
def weights_run(gamma, n_rho, rounds, seed):
    rng = np.random.default_rng([seed, int(gamma * 1000), n_rho])
    h, g, u = stream(gamma, rounds, rng)
    res = rautoeval_test(h, g, u, alpha=ALPHA, delta=0.1, n_rho=n_rho)
    w = res.rho_weights[:, -1]
    return float(np.dot(w, res.rho_grid)), float(res.rho_grid[np.argmax(w)]), res


# ------------------------------------------------------------------------ part 2
def first_crossings(gamma, rep, seed):
    """First crossing (labels needed) of each method for each delta on one stream."""
    rng = np.random.default_rng([seed, int(gamma * 1000), rep])
    h, g, u = stream(gamma, N_MAX, rng)
    thresholds = np.log(1.0 / np.array(DELTAS))
    out = {}
    for name, method in METHODS.items():
        n_max = 2000
        while True:  # bets do not depend on the horizon: grow it only if needed
            res = rautoeval_test(h[:n_max], g[:n_max], u[: n_max * RATIO], alpha=ALPHA,
                                 delta=min(DELTAS), method=method, early_stopping=True)
            if res.stopping_index is not None or n_max >= N_MAX:
                break
            n_max = min(N_MAX, 2 * n_max)
        log_e = res.log_eprocess
        need = []
        for t in thresholds:
            hit = np.flatnonzero(log_e >= t)
            need.append(int(hit[0]) + 1 if hit.size else N_MAX)
        out[name] = need
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=100, help="streams for the sample complexity")
    ap.add_argument("--weight-runs", type=int, default=5, help="runs for the weights")
    ap.add_argument("--rounds", type=int, default=3000, help="rounds of the weight runs")
    ap.add_argument("--n-jobs", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--figure", default=None, help="save the Fig. 2 heatmaps to this PNG")
    ap.add_argument("--quick", action="store_true", help="10 streams, 1 weight run of 1000")
    args = ap.parse_args()
    if args.quick:
        args.reps, args.weight_runs, args.rounds = 10, 1, 1000
    t_start = time.perf_counter()

    print(f"Example 1: R = {R}, alpha = {ALPHA}, r = {RATIO}, universal-portfolio bets\n")
    print("Part 1 - reliance weights (Fig. 2): argmax of the exact growth rate g*(rho), and "
          f"the final weights after {args.rounds} rounds (mean over {args.weight_runs} runs)\n")
    print("| gamma | argmax g*(rho), fine grid | argmax g*, S = 10 | S = 100: weighted mean "
          "rho | S = 100: mode | S = 10: weighted mean rho | S = 10: mode |")
    print("|---|---|---|---|---|---|---|")
    fine = np.linspace(0, 1, 101)
    examples = {}
    for gamma in GAMMAS:
        gs = growth_rates(gamma, fine)
        g10 = growth_rates(gamma, np.linspace(0, 1, 10))
        cells = []
        for n_rho in (100, 10):
            runs = Parallel(n_jobs=args.n_jobs)(
                delayed(weights_run)(gamma, n_rho, args.rounds, args.seed + j)
                for j in range(args.weight_runs)
            )
            cells.append(np.mean([m for m, _, _ in runs]))
            cells.append(np.mean([mode for _, mode, _ in runs]))
            if n_rho == 100:
                examples[gamma] = runs[0][2]
        best10 = np.linspace(0, 1, 10)[np.argmax(g10)]
        print(f"| {gamma} | {fine[np.argmax(gs)]:.2f} | {best10:.2f}"
              f" | {cells[0]:.2f} | {cells[1]:.2f} | {cells[2]:.2f} | {cells[3]:.2f} |")

    print(f"\nPart 2 - sample complexity n_min(delta) = E[labels needed to certify] "
          f"(mean first crossing over {args.reps} streams, ± standard error)\n")
    header = " | ".join(f"delta = {d:g}" for d in DELTAS)
    print(f"| gamma | method | {header} |")
    print("|---|---|" + "---|" * len(DELTAS))
    censored = 0
    summary = {}
    for gamma in GAMMAS:
        reps = Parallel(n_jobs=args.n_jobs)(
            delayed(first_crossings)(gamma, rep, args.seed) for rep in range(args.reps)
        )
        for name in METHODS:
            need = np.array([r[name] for r in reps], dtype=float)  # (reps, deltas)
            censored += int(np.sum(need >= N_MAX))
            mean = need.mean(axis=0)
            se = need.std(axis=0, ddof=1) / np.sqrt(len(need)) if len(need) > 1 else 0 * mean
            summary[gamma, name] = mean
            cells = " | ".join(f"{m:.0f} ± {s:.0f}" for m, s in zip(mean, se))
            print(f"| {gamma} | {name} | {cells} |")
    print(f"\ncensored streams (not certified within {N_MAX} labels): {censored}")
    print("\nR-AutoEval+ vs the better of R-Eval and R-AutoEval (ratio of mean labels needed, "
          "< 1 = fewer labels):")
    for gamma in GAMMAS:
        best = np.minimum(summary[gamma, "R-Eval"], summary[gamma, "R-AutoEval"])
        ratio = summary[gamma, "R-AutoEval+"] / best
        print(f"  gamma = {gamma}: " + ", ".join(
            f"delta = {d:g}: {x:.3f}" for d, x in zip(DELTAS, ratio)))
    print(f"\ntotal time {time.perf_counter() - t_start:.0f} s (n_jobs={args.n_jobs})")

    if args.figure:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        from sklearn_riskcontrol.plotting import plot_rho_weights

        fig, axes = plt.subplots(3, 1, figsize=(7, 8), sharex=True)
        for ax, gamma in zip(axes, GAMMAS):
            plot_rho_weights(examples[gamma], ax=ax)
            ax.set_title(f"gamma = {gamma}")
        fig.tight_layout()
        fig.savefig(args.figure, dpi=120)
        print(f"figure saved to {args.figure}")


if __name__ == "__main__":
    main()
