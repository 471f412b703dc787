"""SPS on drifting streams: the drift monitor, SPS + restart, ACI and DLR (alpha = 0.1).

Streams of T true-label scores (default T = 10,000), Gaussian with sd 2, so that the oracle
threshold of every round ``tau*_t = mu_t + 2 z_alpha`` and the miscoverage of any threshold are
exact:

* ``i.i.d.``: mu = 3 (and ``i.i.d. Beta(5, 2)``, probabilities in [0, 1], for the false alarms);
* ``downward drift``: mu falls linearly from 3 to -1.5 over the stream;
* ``abrupt shift``: mu = 3, then -0.5 from round T/2 + 1;
* ``AR(1) phi = 0.99``: s_t = 3 + 0.99 (s_{t-1} - 3) + sqrt(1 - 0.99^2) 2 e_t (marginal N(3, 2^2),
  tau* = the marginal's; the conditional law drifts slowly).

Per strategy (SPS = the paper's algorithm, anytime schedule, delta = 0.01; SPS + restart =
:func:`~sklearn_riskcontrol.online.simulate_monitored` with ``on_drift="restart"``, monitor_delta
= 0.01; ACI and DLR with their defaults, as in ``online_validity_regret.py``): coverage of the last
quarter (fraction of rounds T*3/4 < t <= T whose set held the true label; mean over runs and
runs' minimum), crossing rate (fraction of runs with some tau_t > tau*_t), regret at T (the paper's
asymmetric loss of ``metrics.cumulative_regret`` with the round's own G_t), and, for the monitor
(run on the unchanged SPS): the fraction of runs with a detection (on i.i.d. streams: the
false-alarm rate, at most monitor_delta + delta by construction), the median detection round and
the median delay after the first round with tau_t > tau*_t (the first undercovering set).
Targets, printed as met / NOT met: with restarts, last-quarter coverage >= 0.85 on every drifting
stream and regret on the i.i.d. streams <= 2x SPS's.

Usage: ``python benchmarks/online_drift.py [--runs 100] [--horizon 10000] [--quick]``
"""

import argparse
import time

import numpy as np
from scipy import stats

from sklearn_riskcontrol.online import simulate_monitored, simulate_thresholds, cumulative_regret

from _common import exceeds, fail_if, met  # benchmarks/ is on sys.path when run as a script

ALPHA = 0.1
MONITOR_DELTA = 0.01
SPS_DELTA = 0.01  # the anytime schedule's default failure probability
SD = 2.0
Z = float(stats.norm.ppf(ALPHA))
BETA = stats.beta(5, 2)


def make_stream(name, T, rng):
    """Scores of one run and the (mean, sd) of each round's score law, or a frozen law."""
    if name == "i.i.d. Beta(5, 2)":
        return BETA.rvs(size=T, random_state=rng), BETA
    if name == "i.i.d.":
        mu = np.full(T, 3.0)
    elif name == "downward drift":
        mu = 3.0 - 4.5 * np.arange(T) / (T - 1)
    elif name == "abrupt shift":
        mu = np.where(np.arange(T) < T // 2, 3.0, -0.5)
    elif name == "AR(1) phi = 0.99":
        phi = 0.99
        e = rng.normal(size=T) * SD * np.sqrt(1 - phi**2)
        x = np.empty(T)
        x[0] = rng.normal() * SD
        for t in range(1, T):
            x[t] = phi * x[t - 1] + e[t]
        return 3.0 + x, stats.norm(3.0, SD)
    else:  # pragma: no cover
        raise ValueError(name)
    return mu + SD * rng.normal(size=T), mu


def oracle(law, T):
    """Per-round tau*_t and the per-round miscoverage function G_t(tau) = P(s_t < tau)."""
    if isinstance(law, np.ndarray):  # Gaussian with per-round mean
        mu = law
        return mu + SD * Z, lambda tau: stats.norm.cdf((tau - mu[: len(tau)]) / SD)
    return np.full(T, float(law.ppf(ALPHA))), law.cdf


def strategies(scores, T):
    tau_sps = simulate_thresholds(scores, ALPHA, strategy="sps")
    _, warn_rounds = simulate_monitored(scores, ALPHA, on_drift="warn",
                                        monitor_delta=MONITOR_DELTA)
    tau_restart, restarts = simulate_monitored(scores, ALPHA, on_drift="restart",
                                               monitor_delta=MONITOR_DELTA)
    return {
        "SPS": tau_sps,
        "SPS + restart": tau_restart,
        "ACI": simulate_thresholds(scores, ALPHA, strategy="aci"),
        "DLR": simulate_thresholds(scores, ALPHA, strategy="dlr"),
    }, warn_rounds, restarts


def run(stream, runs, T, seed):
    rng = np.random.default_rng(seed)
    acc = {}
    mon = {"detected": 0, "round": [], "delay": [], "restarts": []}
    for _ in range(runs):
        scores, law = make_stream(stream, T, rng)
        tau_star, G = oracle(law, T)
        taus, warn_rounds, restarts = strategies(scores, T)
        for name, tau in taus.items():
            a = acc.setdefault(name, {"cov": [], "cross": 0, "regret": []})
            a["cov"].append(np.mean(scores[3 * T // 4:] >= tau[3 * T // 4:]))
            a["cross"] += bool(np.any(tau > tau_star))
            a["regret"].append(cumulative_regret(tau, G, ALPHA)[-1])
        mon["restarts"].append(len(restarts))
        if len(warn_rounds):
            mon["detected"] += 1
            mon["round"].append(warn_rounds[0])
            cross = np.flatnonzero(taus["SPS"] > tau_star)
            if cross.size:
                mon["delay"].append(warn_rounds[0] - (cross[0] + 1))
    return acc, mon


STREAMS = ["i.i.d.", "i.i.d. Beta(5, 2)", "downward drift", "abrupt shift", "AR(1) phi = 0.99"]
IID = STREAMS[:2]


def _sps_violations(stream, sps, mon, runs, T):
    """SPS's guarantees on an i.i.d. stream, each with a slack of 3 standard errors of its
    nominal rate at this number of runs (or rounds), so a correct method essentially never fails:

    * crossing: P(some tau_t > tau*) <= delta; runs are independent (slack 0.067 at 20 runs);
    * last-quarter coverage >= 1 - alpha - delta: given the past, round t misses with
      probability G(tau_t) <= alpha on the event tau_t <= tau* (probability >= 1 - delta), and
      the misses minus G(tau_t) are martingale differences of conditional variance <= b (1 - b),
      b = alpha + delta, so the pooled miss rate over runs x T/4 rounds has standard error
      <= sqrt(b (1 - b) / (runs T / 4)) (slack 0.004 at 20 runs of T = 10^4);
    * the monitor's false alarms (runs with a detection): at most monitor_delta + delta by
      construction; runs are independent (slack 0.094 at 20 runs).
    """
    wrong = []
    cross, cov = sps["cross"] / runs, float(np.mean(sps["cov"]))
    if exceeds(cross, SPS_DELTA, runs):
        wrong.append(f"{stream}: SPS crossing rate {cross:.3f} > delta {SPS_DELTA:g} + 3 s.e.")
    rounds = runs * (T - 3 * T // 4)
    if exceeds(1 - cov, ALPHA + SPS_DELTA, rounds):
        wrong.append(f"{stream}: SPS last-quarter coverage {cov:.4f} < 1 - alpha - delta by "
                     f"more than 3 s.e. over {rounds} rounds")
    alarms = mon["detected"] / runs
    if exceeds(alarms, MONITOR_DELTA + SPS_DELTA, runs):
        wrong.append(f"{stream}: false-alarm rate {alarms:.3f} > monitor_delta + delta "
                     f"{MONITOR_DELTA + SPS_DELTA:g} + 3 s.e.")
    return wrong


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100, help="repetitions per stream")
    parser.add_argument("--horizon", type=int, default=10_000, help="T (default 10,000)")
    parser.add_argument("--quick", action="store_true", help="20 runs per stream")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    runs = 20 if args.quick else args.runs
    T = args.horizon
    start = time.perf_counter()
    print(f"alpha = {ALPHA}, T = {T}, {runs} runs per stream, SPS delta = 0.01 (anytime), "
          f"monitor_delta = {MONITOR_DELTA}\n")
    print("| stream | strategy | last-quarter coverage mean (min) | runs with some tau_t > tau*_t "
          "| regret at T |")
    print("|---|---|---|---|---|")
    monitors, restart_cov, regret_ratio, wrong = [], {}, {}, []
    for k, stream in enumerate(STREAMS):
        acc, mon = run(stream, runs, T, args.seed + k)
        for name, a in acc.items():
            print(f"| {stream} | {name} | {np.mean(a['cov']):.3f} ({np.min(a['cov']):.3f}) | "
                  f"{a['cross'] / runs:.2f} | {np.mean(a['regret']):.1f} |")
        if stream in IID:  # SPS's guarantees hold on i.i.d. streams only (ACI, DLR carry none)
            wrong += _sps_violations(stream, acc["SPS"], mon, runs, T)
        monitors.append((stream, mon))
        restart = acc["SPS + restart"]
        restart_cov[stream] = np.mean(restart["cov"])
        regret_ratio[stream] = np.mean(restart["regret"]) / np.mean(acc["SPS"]["regret"])
    drifting = [s for s in STREAMS if s not in IID]
    print(f"\ntargets: SPS + restart, last-quarter coverage >= 0.85 on every drifting stream: "
          f"{met(all(restart_cov[s] >= 0.85 for s in drifting))}; regret on i.i.d. streams "
          f"<= 2x SPS's: {met(all(regret_ratio[s] <= 2 for s in IID))}")
    print("\nMonitor on the unchanged SPS (on_drift='warn'); restarts under on_drift='restart':\n")
    print("| stream | runs with a detection | median detection round | median delay after first "
          "tau_t > tau*_t | mean restarts |")
    print("|---|---|---|---|---|")
    for stream, mon in monitors:
        rnd = f"{np.median(mon['round']):.0f}" if mon["round"] else "-"
        dly = f"{np.median(mon['delay']):.0f}" if mon["delay"] else "-"
        print(f"| {stream} | {mon['detected'] / runs:.2f} | {rnd} | {dly} | "
              f"{np.mean(mon['restarts']):.1f} |")
    print(f"\n[{time.perf_counter() - start:.0f} s]")
    fail_if(wrong)


if __name__ == "__main__":
    main()
