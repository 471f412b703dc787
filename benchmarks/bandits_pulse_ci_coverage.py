"""Monte-Carlo coverage and width of PULSE's confidence intervals.

PULSE runs many times (new seed each time) on one synthetic matrix from
``sklearn_riskcontrol.bandits.make_score_matrix`` (true means known), for every batch size and
budget; each run's intervals are evaluated at every ``delta``. Printed per configuration:

- ``sim cov``: fraction of runs in which the simultaneous intervals cover *all* true means at once
  (guarantee: >= 1 - delta);
- ``marg cov`` / ``min``: per-model coverage of the marginal intervals (``simultaneous=False``),
  averaged over models / for the worst model (guarantee: each >= 1 - delta);
- median widths over runs and models of the simultaneous and marginal intervals, of the
  simultaneous interval of the best model, and the share of vacuous ([0, 1]) simultaneous
  intervals;
- ``thm1 w``: for comparison, the median simultaneous width that the paper's Theorem 1
  (Freedman, increments bounded by 2) would give with the same range-based variance bound and a
  union over models and pull counts.

``MC s.e.`` is the Monte-Carlo standard error of a coverage of exactly 1 - delta. A ``sim cov``
or ``marg cov`` more than 3 of them below 1 - delta is a wrong result: the script then exits
with status 1 after the table.

    python benchmarks/bandits_pulse_ci_coverage.py                 # ~3 min on 2 cores
    python benchmarks/bandits_pulse_ci_coverage.py --reps 300 --n-jobs 2
    python benchmarks/bandits_pulse_ci_coverage.py --quick         # B 8, 64; budgets .1, .5; 10 reps
"""

import argparse
import time
import warnings

import numpy as np
from joblib import Parallel, delayed

from sklearn_riskcontrol import RiskControlWarning
from sklearn_riskcontrol.bandits import PULSE, freedman_radius, make_score_matrix
from sklearn_riskcontrol.bandits.lowrank import fit_logistic_factors

from _common import exceeds, fail_if  # benchmarks/ is on sys.path when run as a script


def run_one(scores, fact, seed, B, budget, deltas, args):
    est = PULSE(budget=budget, batch_size=B, refit_every=max(1, args.refit_evals // B),
                rank=args.rank, random_state=seed).fit(scores, side_scores=fact)
    st = est._state  # a benchmark may look inside: pull counts and variance proxies
    K = np.maximum(st.n_theta, 1)
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RiskControlWarning)  # vacuous intervals are counted below
        for d in deltas:
            thm1 = 2 * freedman_radius(K, st.v_sum / K, d / (st.m * (st.step + 1)))
            out[d] = (est.confidence_intervals(d), est.confidence_intervals(d, simultaneous=False),
                      np.where(st.counts >= st.n_avail, 0.0, np.minimum(thm1, 1.0)))
    return out


def _covers(ci, mu):
    return (ci[:, 0] <= mu) & (mu <= ci[:, 1])


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--m", type=int, default=10)
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--n-side", type=int, default=40)
    ap.add_argument("--gap", type=float, default=0.03)
    ap.add_argument("--rank", type=int, default=3)
    ap.add_argument("--batch-sizes", type=int, nargs="+", default=[1, 8, 64])
    ap.add_argument("--budgets", type=float, nargs="+", default=[0.1, 0.25, 0.5])
    ap.add_argument("--deltas", type=float, nargs="+", default=[0.1, 0.05])
    ap.add_argument("--refit-evals", type=int, default=200,
                    help="refit the model factors about every this many evaluations")
    ap.add_argument("--reps", type=int, default=100)
    ap.add_argument("--matrix-seed", type=int, default=7)
    ap.add_argument("--n-jobs", type=int, default=2)
    ap.add_argument("--quick", action="store_true",
                    help="batch sizes 8 and 64, budgets 0.1 and 0.5, 10 repetitions (smoke test)")
    args = ap.parse_args()
    if args.quick:
        args.batch_sizes, args.budgets, args.reps = [8, 64], [0.1, 0.5], min(args.reps, 10)
    data = make_score_matrix(args.m, args.n, n_side_models=args.n_side, gap=args.gap,
                             random_state=args.matrix_seed)
    fact = fit_logistic_factors(data.side_scores, rank=args.rank, random_state=0)
    mu, best = data.means, data.best_index
    print(f"PULSE intervals, {args.reps} runs per row; matrix {args.m} x {args.n} "
          f"(side information: {args.n_side} models), top-2 gap {args.gap}, rank {args.rank}")
    head = (f"{'B':>3} {'budget':>6} {'delta':>5} | {'sim cov':>7} {'marg cov':>8} {'min':>5} "
            f"{'MC s.e.':>7} | {'sim w':>5} {'marg w':>6} {'best w':>6} {'vacuous':>7} "
            f"{'thm1 w':>6}")
    print(head)
    print("-" * len(head))
    t0 = time.perf_counter()
    wrong = []
    for B in args.batch_sizes:
        for budget in args.budgets:
            runs = Parallel(n_jobs=args.n_jobs)(
                delayed(run_one)(data.scores, fact, seed, B, budget, args.deltas, args)
                for seed in range(args.reps))
            for d in args.deltas:
                sim = np.array([r[d][0] for r in runs])
                marg = np.array([r[d][1] for r in runs])
                thm1 = np.array([r[d][2] for r in runs])
                cov_sim = np.mean([_covers(c, mu).all() for c in sim])
                cov_marg = np.mean([_covers(c, mu) for c in marg], axis=0)
                w_sim, w_marg = sim[..., 1] - sim[..., 0], marg[..., 1] - marg[..., 0]
                vac = np.mean((sim[..., 0] <= 0) & (sim[..., 1] >= 1))
                se = np.sqrt(d * (1 - d) / args.reps)
                print(f"{B:>3} {budget:>6g} {d:>5g} | {cov_sim:>7.3f} {cov_marg.mean():>8.3f} "
                      f"{cov_marg.min():>5.2f} {se:>7.3f} | {np.median(w_sim):>5.3f} "
                      f"{np.median(w_marg):>6.3f} {np.median(w_sim[:, best]):>6.3f} "
                      f"{vac:>7.1%} {np.median(thm1):>6.3f}")
                wrong += [f"B {B}, budget {budget:g}, delta {d:g}: {name} {c:.3f} is below "
                          f"{1 - d:g} by more than 3 MC s.e."
                          for name, c in (("sim cov", cov_sim), ("marg cov", cov_marg.mean()))
                          if exceeds(1 - c, d, args.reps)]
    print(f"({time.perf_counter() - t0:.0f} s)")
    fail_if(wrong)


if __name__ == "__main__":
    main()
