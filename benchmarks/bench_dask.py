"""Speed-up of every documented parallel path on a 2-worker Dask cluster, in one run.

Each path runs three ways, interleaved, best of ``--repeat``:

* ``n_jobs=1`` (sequential: the baseline);
* ``n_jobs=-1`` inside ``joblib.parallel_config(backend="dask")`` on a
  ``dask.distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True)``;
* ``n_jobs=2`` with the library's default backend choice (loky processes, or threads for the
  row chunks of the SCoRE estimators), loky workers started beforehand.

It checks that the three give identical results and prints the times, the speed-ups
t(sequential) / t(parallel), "CPU x" (CPU time of this process and all its children, Dask
workers included, over the sequential run's: the parallel overhead, which unlike wall time
hardly depends on what else runs on the machine; on an idle machine the speed-up of balanced
work is about 2 / CPU x) and the load average before and after (other processes on the machine
lower the speed-up). Sizes are chosen so that the sequential run takes >= 1 s on the
2-core development machine. Targets (default sizes, printed as met / NOT met): >= 1.4x on Dask
for every path whose sequential run takes >= 1 s, and never below 0.9x. The reference path is 8
equal CPU-bound pure-Python tasks through ``joblib.Parallel``: the best speed-up the machine and
the cluster allow at the current load.

    python benchmarks/bench_dask.py             # default sizes (a few minutes)
    python benchmarks/bench_dask.py --quick     # small sizes: the sequential fallback
    python benchmarks/bench_dask.py --top-pad   # workers with MALLOC_TOP_PAD_ = 32 MiB
    python benchmarks/bench_dask.py --only select   # the paths whose name contains "select"
    python benchmarks/bench_dask.py --only Selector --selector 64,128,256   # the selector by size

Dask's nanny starts workers with ``MALLOC_TRIM_THRESHOLD_=65536``, which turns off glibc's
adaptive thresholds: every NumPy temporary above 64-128 KiB then faults its pages in afresh,
and NumPy-heavy paths run up to 1.5x slower in the workers than in this process.
``--top-pad`` adds ``MALLOC_TOP_PAD_`` (the fix doc/scale_out.rst recommends) to the workers'
pre-spawn environment.
"""

import argparse
import os
import warnings

import numpy as np
from joblib import Parallel, delayed
from threadpoolctl import threadpool_limits

from sklearn_riskcontrol import RiskControlWarning
from sklearn_riskcontrol.autoeval import rautoeval_select

from _common import met, require  # benchmarks/ is on sys.path when run as a script

# The cases shared with the strong-scaling benchmark (same paths and sizes, one definition).
from bench_scaling import (  # noqa: E402  (benchmarks/ is on sys.path when run as a script)
    case_bandits,
    case_reference,
    case_score,
    case_selector,
    case_validity,
    time_modes,
)


def case_select(n_candidates, n_labeled, n_unlabeled):
    rng = np.random.default_rng(0)
    risks = np.linspace(0.02, 0.12, n_candidates)
    h = rng.binomial(1, risks[:, None], (n_candidates, n_labeled)).astype(float)
    g = np.where(rng.random(h.shape) < 0.9, h, 1 - h)
    hu = rng.binomial(1, risks[:, None], (n_candidates, n_unlabeled))
    u = np.where(rng.random(hu.shape) < 0.9, hu, 1 - hu).astype(float)

    def run(n_jobs):
        res = rautoeval_select(h, g, u, alpha=0.2, delta=0.1, procedure="bonferroni",
                               n_jobs=n_jobs)
        return res.pvalues

    return (f"rautoeval_select (bonferroni), {n_candidates} candidates x {n_labeled} labeled "
            f"+ {n_unlabeled} unlabeled"), run


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (smoke test)")
    parser.add_argument("--repeat", type=int, default=3, help="best of this many runs")
    parser.add_argument("--top-pad", action="store_true",
                        help="start the Dask workers with MALLOC_TOP_PAD_=32 MiB")
    parser.add_argument("--only", default="",
                        help="run only the paths whose name contains this text")
    parser.add_argument("--selector", default="64",
                        help="candidate counts of the RiskControlledModelSelector rows (comma-"
                             "separated; 20,000 rows each)")
    args = parser.parse_args()
    dask = require("dask", "dask")
    distributed = require("dask.distributed", "dask")

    if args.top_pad:
        dask.config.set({"distributed.nanny.pre-spawn-environ.MALLOC_TOP_PAD_": 32 * 2**20})

    if args.quick:
        cases = [case_reference(200_000), case_validity(20), case_select(4, 300, 1500),
                 case_selector(4, 4000), case_score(50_000), case_bandits(4, 50, 1000)]
    else:
        cases = [case_reference(3_000_000), case_validity(600), case_select(48, 5000, 20_000),
                 *(case_selector(int(k), 20_000) for k in args.selector.split(",")),
                 case_score(1_000_000), case_bandits(24, 200, 4000)]
    reference = cases[0][1]
    cases = [(name, run) for name, run in cases if args.only in name]
    warnings.simplefilter("ignore", RiskControlWarning)
    threadpool_limits(1)  # one BLAS/OpenMP thread per process: only joblib's parallelism counts
    Parallel(n_jobs=2)(delayed(abs)(i) for i in range(4))  # start the loky workers once
    speedups = []  # (sequential seconds, Dask speed-up) of the library's paths
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        client.run(_one_blas_thread)
        env = client.run(lambda: {k: v for k, v in os.environ.items() if k.startswith("MALLOC")})
        print(f"cores: {os.cpu_count()}; Dask workers: {len(client.ncores())} with "
              f"{next(iter(env.values()))}; load average before: {_load()}")
        modes = {"sequential": (1, None), "dask": (-1, "dask"), "n_jobs=2": (2, None)}
        print(f"{'path':<78} {'seq s':>6} | {'dask s':>6} {'x':>5} {'CPU x':>5} | "
              f"{'n_jobs=2 s':>10} {'x':>5} {'CPU x':>5}")
        for name, run in cases:
            best, cpu = time_modes(run, modes, args.repeat)
            seq, cseq = best["sequential"], cpu["sequential"]
            if run is not reference:
                speedups.append((seq, seq / best["dask"]))
            print(f"{name:<78} {seq:6.2f} | {best['dask']:6.2f} {seq / best['dask']:5.2f} "
                  f"{cpu['dask'] / cseq:5.2f} | {best['n_jobs=2']:10.2f} "
                  f"{seq / best['n_jobs=2']:5.2f} {cpu['n_jobs=2'] / cseq:5.2f}", flush=True)
    print(f"load average after: {_load()}")
    if args.quick:
        print("(targets are set at the default sizes: not checked with --quick)")
        return
    long_runs = [x for seq, x in speedups if seq >= 1]
    first = met(all(x >= 1.4 for x in long_runs)) if long_runs else "no such path"
    print(f"targets: >= 1.4x on Dask for paths of >= 1 s sequential: {first}; never below 0.9x: "
          f"{met(all(x >= 0.9 for _, x in speedups))}")


def _one_blas_thread():
    threadpool_limits(1)  # returns nothing: the limiter object cannot travel back


def _load():
    return "/".join(f"{x:.2f}" for x in os.getloadavg()) + " (1/5/15 min)"


if __name__ == "__main__":
    main()
