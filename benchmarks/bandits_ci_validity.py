"""Monte-Carlo coverage of PULSE's confidence intervals and centring of its estimates.

(For the coverage and width table over batch sizes, budgets and deltas, see
``bandits_pulse_ci_coverage.py``.)

For every repetition PULSE runs on the same matrix with a new seed; we record whether the
simultaneous intervals (union bound over models and pull counts) cover *all* true means, the
fraction of models whose marginal interval covers its mean, the median width for the five best
models, and, per model, the martingale statistic sum_k (theta_k - mu) over its one-step
estimates (Lemma 1: mean zero, whatever the adaptive number of pulls). The average of the
thetas is *not* mean-unbiased under adaptive sampling (an arm that looks bad early is pulled
less: the usual bandit selection bias, shared by UCB-E's sample means), so estimate errors are
reported separately, with Naive-Pooling's and UCB-E's on the same seeds for comparison.
A simultaneous coverage, or a mean marginal coverage, below 1 - delta by more than 3 Monte-Carlo
standard errors of a coverage of exactly 1 - delta is a wrong result: the script then exits with
status 1.

    python benchmarks/bandits_ci_validity.py                       # small: 20 x 300, 300 reps
    python benchmarks/bandits_ci_validity.py --quick               # 20 x 300, 20 reps
    python benchmarks/bandits_ci_validity.py --m 1000 --n 12000 --n-side 1100 --B 64 \
        --tau 1000 --rank 8 --budget 200000 --reps 50 --n-jobs 2   # the spec's size
"""

import argparse
import time

import numpy as np
from joblib import Parallel, delayed

from sklearn_riskcontrol.bandits import PULSE, UCBE, NaivePooling, make_score_matrix
from sklearn_riskcontrol.bandits.lowrank import fit_logistic_factors

from _common import exceeds, fail_if  # benchmarks/ is on sys.path when run as a script


def run_one(scores, fact, seed, args):
    params = dict(budget=args.budget, batch_size=args.B, refit_every=args.tau, rank=args.rank,
                  random_state=seed)
    pulse = PULSE(**params).fit(scores, side_scores=fact)
    naive = NaivePooling(**params).fit(scores, side_scores=fact)
    ucbe = UCBE(budget=args.budget, batch_size=args.B, random_state=seed).fit(scores)
    st = pulse._state  # the one-step estimates' running sums (a benchmark may look inside)
    return dict(sim=pulse.confidence_intervals(args.delta),
                marg=pulse.confidence_intervals(args.delta, simultaneous=False),
                theta_sum=st.theta_sum.copy(), n_theta=st.n_theta.copy(),
                PULSE=pulse.means_, naive=naive.means_, UCBE=ucbe.means_)


def _covers(ci, mu):
    return (ci[:, 0] <= mu) & (mu <= ci[:, 1])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--m", type=int, default=20)
    ap.add_argument("--n", type=int, default=300)
    ap.add_argument("--n-side", type=int, default=40)
    ap.add_argument("--gap", type=float, default=0.03)
    ap.add_argument("--B", type=int, default=8)
    ap.add_argument("--tau", type=int, default=5)
    ap.add_argument("--rank", type=int, default=3)
    ap.add_argument("--budget", type=float, default=0.25, help="int = evaluations, float = fraction")
    ap.add_argument("--delta", type=float, default=0.1)
    ap.add_argument("--reps", type=int, default=300)
    ap.add_argument("--matrix-seed", type=int, default=7)
    ap.add_argument("--n-jobs", type=int, default=1)
    ap.add_argument("--quick", action="store_true", help="20 repetitions (smoke test)")
    args = ap.parse_args()
    if args.quick:
        args.reps = min(args.reps, 20)
    if args.budget >= 1:
        args.budget = int(args.budget)
    data = make_score_matrix(args.m, args.n, n_side_models=args.n_side, gap=args.gap,
                             random_state=args.matrix_seed)
    fact = fit_logistic_factors(data.side_scores, rank=args.rank, random_state=0)
    t0 = time.perf_counter()
    out = Parallel(n_jobs=args.n_jobs)(
        delayed(run_one)(data.scores, fact, seed, args) for seed in range(args.reps))
    mu = data.means
    sim = np.array([_covers(r["sim"], mu).all() for r in out])
    marg = np.array([_covers(r["marg"], mu) for r in out])
    top = np.argsort(mu)[::-1][:5]
    width = {k: np.median([r[k][top, 1] - r[k][top, 0] for r in out], axis=0) for k in ("sim", "marg")}
    dev = np.array([r["theta_sum"] - r["n_theta"] * mu for r in out])
    z = dev.mean(0) / (dev.std(0, ddof=1) / np.sqrt(args.reps) + 1e-300)
    se = np.sqrt(args.delta * (1 - args.delta) / args.reps)
    print(f"{args.reps} runs; m={args.m}, n={args.n}, side={args.n_side}, B={args.B}, "
          f"tau={args.tau}, rank={args.rank}, budget={args.budget}, delta={args.delta} "
          f"({time.perf_counter() - t0:.0f} s)")
    print(f"simultaneous coverage (all {args.m} means): {sim.mean():.3f} (guarantee >= "
          f"{1 - args.delta:g}, MC s.e. {se:.3f})")
    print(f"marginal coverage per model: mean {marg.mean(0).mean():.3f}, min over models "
          f"{marg.mean(0).min():.3f}")
    for k, name in (("sim", "simultaneous"), ("marg", "marginal")):
        print(f"median {name} width, 5 best models: " + " ".join(f"{w:.3f}" for w in width[k]))
    print(f"martingale sum_k (theta_k - mu) per model: max |z| over the {args.m} models "
          f"{np.abs(z).max():.2f} (centred: ~N(0, 1) each)")
    for name in ("PULSE", "UCBE", "naive"):
        err = np.array([r[name] - mu for r in out])[:, top]
        print(f"{name:>6s} estimates of the 5 best models: bias " + " ".join(f"{b:+.4f}" for b in err.mean(0))
              + f", RMSE {np.sqrt((err ** 2).mean()):.4f}")
    fail_if([f"{name} coverage {c:.3f} is below {1 - args.delta:g} by more than 3 MC s.e."
             for name, c in (("simultaneous", sim.mean()), ("mean marginal", marg.mean()))
             if exceeds(1 - c, args.delta, args.reps)])


if __name__ == "__main__":
    main()
