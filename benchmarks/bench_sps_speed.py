"""Speed of SPS: O(log t) per round versus re-sorting the clipped records every round.

Runs, in one process:

1. ``simulate_thresholds`` (SPS) on 10^6 rounds (paper schedule with ``horizon=T`` and the
   anytime schedule), and the streaming ``SPSLearner.update`` loop on 10^6 rounds;
2. SPS and the plain implementation of Algorithm 1 that re-sorts ``max(tau_t, s_j)`` every round
   (NumPy sort, O(t log t) per round) on the same 10^5-round stream, checks that both give the
   same thresholds, and prints the speed-up.

Usage::

    python benchmarks/bench_sps_speed.py                 # 10^6 rounds, baseline at 10^5
    python benchmarks/bench_sps_speed.py --naive-rounds 20000   # quicker baseline
"""

import argparse
import math
import time

import numpy as np

from sklearn_riskcontrol.online import SPSLearner, simulate_thresholds


def naive_sps(scores, alpha, horizon):
    """Algorithm 1 as written: substitute misses, clip, sort, take the k-th value."""
    learner = SPSLearner(alpha, horizon=horizon)  # only for eps_t / k_t (same formula)
    records = np.empty(len(scores))
    tau, out = -math.inf, np.empty(len(scores))
    for i, s in enumerate(scores.tolist()):
        t = i + 1
        out[i] = tau
        records[i] = s if s >= tau else tau
        k = learner.rank(t)
        if k:
            tau = max(tau, np.sort(np.maximum(tau, records[:t]))[k - 1])
    return out


def timed(fn, *args, **kwargs):
    start = time.perf_counter()
    result = fn(*args, **kwargs)
    return result, time.perf_counter() - start


def stream_updates(scores, alpha, horizon):
    """One round at a time: publish, then feed the score if covered, else a miss."""
    learner = SPSLearner(alpha, horizon=horizon)
    update, published = learner.update, []
    tau = learner.threshold
    for s in scores.tolist():
        published.append(tau)
        tau = update(s if s >= tau else None)
    return np.array(published)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=1_000_000)
    parser.add_argument("--naive-rounds", type=int, default=100_000)
    parser.add_argument("--alpha", type=float, default=0.1)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)

    T = args.rounds
    scores = rng.standard_t(df=3, size=T) * 5.0  # heavy-tailed logits of unknown range
    tau, t_fixed = timed(simulate_thresholds, scores, args.alpha, horizon=T)
    _, t_any = timed(simulate_thresholds, scores, args.alpha)
    streamed, t_stream = timed(stream_updates, scores, args.alpha, T)
    assert np.array_equal(streamed, tau), "streaming updates and replay disagree"
    print(f"SPS, {T:,} rounds:")
    for label, secs in [
        ("simulate_thresholds(horizon=T)", t_fixed),
        ("simulate_thresholds(horizon=None)", t_any),
        ("SPSLearner.update loop (streaming)", t_stream),
    ]:
        print(f"  {label:<36}{secs:8.3f} s  ({1e6 * secs / T:.2f} us/round)")
    n = args.naive_rounds
    sub = scores[:n]
    fast, t_fast = timed(simulate_thresholds, sub, args.alpha, horizon=n)
    naive, t_naive = timed(naive_sps, sub, args.alpha, n)
    assert np.array_equal(fast, naive), "SPS and the re-sorting implementation disagree"
    print(f"SPS versus re-sorting every round, {n:,} rounds (identical thresholds):")
    print(f"  SPS (heap, O(log t) per round)      {t_fast:8.3f} s")
    print(f"  re-sort every round (O(t log t))    {t_naive:8.3f} s")
    print(f"  speed-up                            {t_naive / t_fast:8.1f} x")


if __name__ == "__main__":
    main()
