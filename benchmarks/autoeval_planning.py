"""How many labels, before labeling: does ``plan_labels``'s 80% range cover the labels a session
then needs?

Usage::

    python benchmarks/autoeval_planning.py [--quick] [--reps 60] [--simulations 100]
                                           [--data PATH] [--seed 0]

One run, one table. Each repetition draws a pilot (a few rows labeled by a human, with the
judge's losses), calls ``plan_labels`` on it and the judge's losses on the pool, then runs the
session for real on fresh rows (``rautoeval_test`` with ``early_stopping=True``, WSR bets: what
``LabelingSession`` computes) and records the labels it needed (``stopping_index + 1``;
infinite when it never certified within the budget). Reported per setting: the share of
repetitions whose realized need fell inside the plan's 80% range ``[low, high]`` (target: at
least 70%, issue 28), the share of plans that were informative (``plan.informative``), and the
medians of the range's ends (inf: the plan's 90% quantile is "not certified within the
budget"). alpha = delta = 0.1.

(a) Simulated: losses Bernoulli(risk), a judge that agrees with the truth with probability
    ``agree``, a pool of 5,000 judged rows, budget 1,000.
(b) quantization_triviaqa (``../shared/data``; skipped when absent, never copied): three
    candidates with risk below alpha, the BF16 judge; the pilot is 60 random questions; the
    session labels a random order of the other questions, its pool being their judge losses;
    budget 2,000.

A forecast, not a guarantee: the session's own guarantee does not depend on it.
"""

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
from _common import SHARED_DATA, met  # benchmarks/ is on sys.path

from sklearn_riskcontrol import RiskControlWarning
from sklearn_riskcontrol.autoeval import plan_labels, rautoeval_test

ALPHA = DELTA = 0.1
SIMULATED = [(40, 0.05, 0.9), (100, 0.05, 0.9), (100, 0.07, 0.8), (40, 0.02, 0.95)]
DEFAULT_DATA = SHARED_DATA / "quantization_triviaqa"


def realized_need(h, g, u):
    res = rautoeval_test(h, g, u, alpha=ALPHA, delta=DELTA, betting="wsr", early_stopping=True)
    return np.inf if res.stopping_index is None else res.stopping_index + 1


def one_rep(pilot_h, pilot_g, pool_g, run, budget, sims, seed):
    plan = plan_labels(pilot_h, pilot_g, pool_g, alpha=ALPHA, delta=DELTA, max_labels=budget,
                       betting="wsr", n_simulations=sims, random_state=seed)
    need = realized_need(*run)
    return plan.low <= need <= plan.high, plan.informative, plan.low, plan.high


def row(label, results):
    r = np.array(results, dtype=float)
    cover, informative = r[:, 0].mean(), r[:, 1].mean()
    low, high = np.median(r[:, 2]), np.median(r[:, 3])
    print(f"{label:<34} {len(r):>5} {cover:>9.2f} {informative:>12.2f} {low:>7.0f}-{high:<7.0f}")
    return cover


def draw(rng, m, risk, agree):
    h = (rng.random(m) < risk).astype(float)
    return h, np.where(rng.random(m) < agree, h, 1 - h)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="10 repetitions, 40 simulations")
    parser.add_argument("--reps", type=int, default=60)
    parser.add_argument("--simulations", type=int, default=100)
    parser.add_argument("--data", default=str(DEFAULT_DATA))
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    reps, sims = (10, 40) if args.quick else (args.reps, args.simulations)
    warnings.simplefilter("ignore", RiskControlWarning)
    t0 = time.perf_counter()
    print(f"alpha = delta = {ALPHA}; {reps} repetitions per setting, {sims} simulated sessions "
          "per plan; coverage = share of repetitions whose realized need is inside the plan's "
          "80% range (target >= 0.70)")
    print(f"{'setting':<34} {'reps':>5} {'coverage':>9} {'informative':>12} {'median range':>15}")
    covers = []
    rng = np.random.default_rng(args.seed)
    for pilot, risk, agree in SIMULATED:
        results = []
        for r in range(reps):
            h, g = draw(rng, pilot, risk, agree)
            u = draw(rng, 5000, risk, agree)[1]
            run = (*draw(rng, 1000, risk, agree), draw(rng, 5000, risk, agree)[1])
            results.append(one_rep(h, g, u, run, 1000, sims, args.seed + r))
        covers.append(row(f"(a) pilot {pilot}, risk {risk}, agree {agree}", results))
    path = Path(args.data) / "triviaqa_losses.npz"
    if path.exists():
        z = np.load(path)
        H, G = z["loss_human"], z["loss_judge_bf16"]
        risks = H.mean(axis=1)
        cands = [int(np.argmin(np.abs(risks - t) + 10 * (risks >= ALPHA)))
                 for t in (0.03, 0.05, 0.07)]
        for k in cands:
            results = []
            for r in range(reps):
                perm = rng.permutation(H.shape[1])
                pilot, rest = perm[:60], perm[60:]
                run = (H[k, rest[:2000]], G[k, rest[:2000]], G[k, rest])
                results.append(one_rep(H[k, pilot], G[k, pilot], G[k, rest], run, 2000, sims,
                                       args.seed + r))
            covers.append(row(f"(b) triviaqa cand {k}, risk {risks[k]:.3f}", results))
    else:
        print(f"(b) skipped: quantization_triviaqa not found at {path}")
    worst = min(covers)
    print(f"smallest coverage {worst:.2f} (one run; {reps} repetitions per setting); target "
          f">= 0.70: {met(worst >= 0.7)}")
    print(f"({time.perf_counter() - t0:.0f} s)")


if __name__ == "__main__":
    main()
