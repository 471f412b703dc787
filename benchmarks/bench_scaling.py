"""Strong scaling of the parallel paths: the same work with n_jobs = 1 and n_jobs = 2.

Paths (each checked to give identical results for both n_jobs):

a. ``SCoREMDR.decide`` + ``evalues`` on a large test set (test rows split in n_jobs chunks:
   wrapped model's ``predict_proba`` and the per-test-point decisions).
b. ``RiskControlledModelSelector`` (Bonferroni, so every candidate is tested) over many
   candidates, one ``RAutoEvalPlus`` test per candidate.
c. ``studies.validity_study`` of SCoRE-MDR (Monte-Carlo repetitions in parallel).
d. ``studies.bandit_accuracy_study`` of UCB-E and uniform sampling (repetitions in parallel).
0. Reference: 8 equal pure-Python CPU-bound tasks through ``joblib.Parallel`` (perfectly
   parallel, negligible data): the best speed-up the machine allows at its current load.

n_jobs = 2 is timed three ways: with no backend chosen (the library's own choice: threads for
the row-chunked predictions and e-values, loky processes elsewhere), with loky forced and with
threading forced.

Speed-up = t(1) / t(2) (wall clock), efficiency = speed-up / 2. "CPU x" = CPU time of all
processes with n_jobs = 2 over CPU time with n_jobs = 1 (needs psutil): the parallel overhead,
which, unlike wall time, hardly depends on what else runs on the machine; on an idle machine the
speed-up of balanced work is about 2 / (CPU x). Runs of n_jobs = 1 and 2 are interleaved and
the best of ``--repeat`` is kept, so both see similar machine load; the loky worker pool is
started once before timing (pool start-up is not part of the steady-state cost), and BLAS /
OpenMP use one thread per process so that only the joblib parallelism is measured. The 1-minute
load average is printed before and after: other processes on the machine lower the speed-up.

    python benchmarks/bench_scaling.py            # default sizes (about 2 minutes)
    python benchmarks/bench_scaling.py --quick    # small sizes, a smoke test
"""

import argparse
import os
from contextlib import nullcontext
import time
import warnings

import numpy as np
from joblib import Parallel, delayed, parallel_config
from sklearn.datasets import make_classification
from sklearn.ensemble import RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.tree import DecisionTreeClassifier
from threadpoolctl import threadpool_limits

from sklearn_riskcontrol.autoeval import (
    RAutoEvalPlus,
    RiskControlledModelSelector,
)
from sklearn_riskcontrol import RiskControlWarning
from sklearn_riskcontrol.selective import SCoREMDR
from sklearn_riskcontrol.bandits import UCBE, UniformSampling, make_score_matrix
from sklearn_riskcontrol.studies import bandit_accuracy_study, validity_study


def _draw(rng, n):
    X = rng.normal(size=(n, 5))
    return X, (X[:, 0] + 0.5 * X[:, 1] + rng.normal(scale=0.7, size=n) > 0).astype(int)


_VALIDITY_MODEL = LogisticRegression().fit(*_draw(np.random.default_rng(0), 2000))


def _validity_sample(rng, n=2000):
    return (*_draw(rng, n), *_draw(rng, n))


def _burn(n):
    total = 0
    for i in range(n):
        total += i * i
    return total


def case_reference(n):
    def run(n_jobs):
        return np.array(Parallel(n_jobs=n_jobs)(delayed(_burn)(n) for _ in range(8)), dtype=float)

    return "reference: 8 CPU-bound pure-Python tasks", run


def case_score(size):
    X, y = make_classification(n_samples=6000 + size, n_features=20, n_informative=8,
                               random_state=0)
    model = RandomForestClassifier(n_estimators=20, max_depth=10, n_jobs=1,
                                   random_state=0).fit(X[:4000], y[:4000])
    X_cal, y_cal, X_test = X[4000:6000], y[4000:6000], X[6000:]

    def run(n_jobs):
        mdr = SCoREMDR(model, alpha=0.05, n_jobs=n_jobs).fit(X_cal, y_cal)
        return np.concatenate([mdr.decide(X_test), mdr.evalues(X_test)])

    return f"SCoREMDR decide+evalues, {size} test rows", run


def case_selector(n_candidates, n_rows):
    X, y = make_classification(n_samples=4000 + n_rows, n_features=20, n_informative=8,
                               random_state=1)
    depths = np.linspace(1, 14, n_candidates).round().astype(int)
    cands = [DecisionTreeClassifier(max_depth=int(d), random_state=0).fit(X[:2000], y[:2000])
             for d in depths[::-1]]
    judge = RandomForestClassifier(n_estimators=20, max_depth=10, n_jobs=1,
                                   random_state=0).fit(X[2000:4000], y[2000:4000])
    X_s, y_s = X[4000:], y[4000:].copy()
    y_s[n_rows // 10:] = -1  # 10% labeled

    def run(n_jobs):
        tester = RAutoEvalPlus(None, autoevaluator=judge, alpha=0.2, delta=0.1, random_state=0)
        sel = RiskControlledModelSelector(cands, tester=tester, procedure="bonferroni",
                                          n_jobs=n_jobs).fit(X_s, y_s)
        return sel.pvalues_

    return f"RiskControlledModelSelector, {n_candidates} candidates x {n_rows} rows", run


def case_validity(n_repetitions):
    def run(n_jobs):
        res = validity_study(SCoREMDR(_VALIDITY_MODEL, alpha=0.1), _validity_sample,
                             n_repetitions=n_repetitions, random_state=0, n_jobs=n_jobs)
        return np.concatenate([res.mdr, res.deployment_rate])

    return f"validity_study (SCoREMDR), {n_repetitions} repetitions", run


def case_bandits(n_repetitions, n_models, n_examples):
    data = make_score_matrix(n_models, n_examples, gap=0.02, random_state=0)
    strategies = {"UCB-E": UCBE(budget=0.1), "uniform": UniformSampling(budget=0.1)}

    def run(n_jobs):
        study = bandit_accuracy_study(strategies, data.scores, n_repetitions=n_repetitions,
                                      random_state=0, n_jobs=n_jobs)
        return np.concatenate([study.accuracy[k] for k in strategies])

    return (f"bandit_accuracy_study (UCB-E, uniform), {n_repetitions} repetitions on "
            f"{n_models} x {n_examples}"), run


def _cpu_seconds():
    """CPU time (user + system) of this process and of each of its child processes, by pid."""
    try:
        import psutil
    except ImportError:  # the CPU-time column needs psutil (installed with the dask extra)
        return None
    me = psutil.Process()
    out = {}
    for proc in [me, *me.children(recursive=True)]:
        try:
            t = proc.cpu_times()
        except psutil.Error:
            continue
        out[proc.pid] = t.user + t.system
    return out


def _cpu_delta(before, after):
    if before is None or after is None:
        return np.nan
    return sum(t - before.get(pid, 0.0) for pid, t in after.items())


def time_modes(run, modes, repeat):
    """Best wall time and CPU time of ``run(n_jobs)`` in each mode ``{name: (n_jobs, backend)}``.

    Modes are interleaved, best of ``repeat``; every mode must return the first mode's result.
    """
    best = dict.fromkeys(modes, np.inf)
    cpu = dict.fromkeys(modes, np.inf)
    out = {}
    for _ in range(repeat):
        for mode, (n_jobs, backend) in modes.items():
            with parallel_config(backend=backend) if backend else nullcontext():
                c0, t0 = _cpu_seconds(), time.perf_counter()
                out[mode] = run(n_jobs)
                best[mode] = min(best[mode], time.perf_counter() - t0)
                cpu[mode] = min(cpu[mode], _cpu_delta(c0, _cpu_seconds()))
    first = next(iter(modes))
    for mode in modes:
        np.testing.assert_array_equal(out[first], out[mode])  # identical results
    return best, cpu


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (smoke test)")
    parser.add_argument("--repeat", type=int, default=3, help="best of this many runs")
    args = parser.parse_args()
    if args.quick:
        cases = [case_reference(200_000), case_score(100_000), case_selector(4, 4000),
                 case_validity(20), case_bandits(4, 50, 1000)]
    else:
        cases = [case_reference(2_000_000), case_score(1_000_000), case_selector(16, 20_000),
                 case_validity(300), case_bandits(24, 200, 4000)]
    warnings.simplefilter("ignore", RiskControlWarning)
    threadpool_limits(1)  # one BLAS/OpenMP thread here; loky gives each worker 1 too (2 cores)
    Parallel(n_jobs=2)(delayed(abs)(i) for i in range(4))  # start the loky workers once
    print(f"cores: {os.cpu_count()}; 1-min load average before: {os.getloadavg()[0]:.2f}")
    # "default": n_jobs=2 with no backend chosen, i.e. what the library picks itself
    modes = {"1": (1, None), "default": (2, None), "loky": (2, "loky"),
             "threads": (2, "threading")}
    print(f"{'path':<70} {'t(1) s':>7}" + "".join(
        f" | {m + ': t(2) s':>15} {'speed-up':>8} {'CPU x':>6}" for m in list(modes)[1:]))
    for name, run in cases:
        best, cpu = time_modes(run, modes, args.repeat)
        cols = "".join(
            f" | {best[m]:15.2f} {best['1'] / best[m]:8.2f} {cpu[m] / cpu['1']:6.2f}"
            for m in list(modes)[1:]
        )
        print(f"{name:<70} {best['1']:7.2f}{cols}", flush=True)
    print(f"1-min load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
