"""Long-run stability and memory: e-processes, SPS, SCoRE and bandits at 10^5 .. 10^7 items.

Every (case, size) runs in a fresh subprocess so peaks do not mix (``--quick``, a smoke test at
small sizes, runs them all in this process). In the child the inputs are
built first (not measured); then the call is timed with the peak resident memory reset just
before it (``/proc/self/clear_refs``; ``rss`` = peak RSS minus RSS before the call), and run a
second time under ``tracemalloc`` (``traced`` = peak of the Python/NumPy allocations of the call).
Both are divided by the number of items (rounds, test points, evaluations) to show that memory
is linear: the bytes per item stay flat from 10^6 to 10^7.

Numerical checks on the result of the timed call, against references computed another way
(the cases and their checks are in ``tests/_long_run_cases.py``, shared with
``tests/validity/test_long_run.py``, which runs them at 10^5; bandits 10^4):

* ``fixed``: fixed bets on binary losses; the log-wealth after every round equals the closed form
  ``c0(i) log1p(lam alpha) + c1(i) log1p(-lam (1 - alpha))`` from exact integer counts.
* ``wsr``: WSR bets; the final log-wealth equals ``math.fsum`` of the per-round log-factors.
* ``up``: universal portfolio (16 Gauss-Chebyshev nodes) on binary losses; the log-wealth at
  1000 checkpoints equals the prior mixture of constant-bet wealths in closed form (counts).
* ``up-dense``: the same on continuous losses (cumulative-sum path); final log-wealth vs
  ``math.fsum`` of the log-factors of the returned bets.
* ``sps``: SPS thresholds (anytime schedule) are non-decreasing, and at 10 checkpoints equal
  ``max(tau_t, k_t-th smallest of s_1..s_t)`` computed with ``np.partition``; the last one is below
  the N(0, 1) quantile ``tau*``.
* ``sdr-n1e4`` / ``sdr-n1e6``: SCoRE-SDR e-values of ``size`` test points against ``n``
  calibration points, checked against an independent implementation of the closed form
  (binary searches in the sorted calibration and test scores instead of the merged sort).
* ``mdr-n1e4`` / ``mdr-n1e6``: MDR e-values and decisions equal those computed in chunks of
  10^6 test points, and the decisions equal Prop. 4.4 evaluated with binary searches.
* ``ucbe`` / ``pulse``: 500 models x (2 size / 500) examples, budget ``size`` evaluations; every
  cell is bought once (``n_evaluations_ == revealed cells == budget``), UCB-E's means equal
  ``math.fsum`` over the revealed cells, PULSE's estimates and intervals are finite.

    python benchmarks/bench_long_run.py                        # 10^5, 10^6, 10^7 (bandits 10^4..10^6)
    python benchmarks/bench_long_run.py --max-size 1e6         # quicker
    python benchmarks/bench_long_run.py --cases wsr,sps --no-trace
    python benchmarks/bench_long_run.py --quick    # 2 small sizes per case, in one process
"""

import argparse
import gc
import json
import os
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np

ARRAY_SIZES = (10**5, 10**6, 10**7)
BANDIT_SIZES = (10**4, 10**5, 10**6)
# --quick; a bandit budget must cover PULSE's warm-up (16 examples x 500 models)
QUICK_ARRAY_SIZES, QUICK_BANDIT_SIZES = (10**3, 10**4), (10**4, 3 * 10**4)

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from _long_run_cases import BANDIT_CASES, CASES  # noqa: E402


# ---------------------------------------------------------------------------- measurement
def _proc_kb(field):
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return -1


def _reset_peak():
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


def measure_here(name, size, trace=True):
    """Build, time (with the peak memory) and check one case in this process."""
    make, run, check, _ = CASES[name]
    inputs = make(size)
    run(**make(min(size, 10**4)))  # imports and caches outside the measurement
    gc.collect()
    reset = _reset_peak()
    rss0 = _proc_kb("VmRSS")
    t0 = time.perf_counter()
    result = run(**inputs)
    seconds = time.perf_counter() - t0
    rss_peak = (_proc_kb("VmHWM") - rss0) * 1024 if reset else -1
    traced = -1
    if trace:
        tracemalloc.start()  # a second call; the result of the first stays allocated
        run(**inputs)
        traced = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return {"case": name, "size": size, "seconds": seconds, "rss": rss_peak, "traced": traced,
            "checks": check(inputs, result)}


def child(name, size, trace):
    print(json.dumps(measure_here(name, size, trace), default=lambda o: o.item()))


def measure(name, size, trace=True):
    """Run one case in a fresh interpreter; returns time, peak memory and the checks."""
    cmd = [sys.executable, os.path.abspath(__file__), "--child", name, str(int(size))]
    if not trace:
        cmd.append("--no-trace")
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        lines = proc.stderr.strip().splitlines()
        raise RuntimeError(lines[-1] if lines else f"exit code {proc.returncode}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _measure_in_process(name, size, trace=True):
    try:
        return measure_here(name, size, trace)
    except Exception as exc:  # reported like a failed fresh interpreter
        raise RuntimeError(f"{type(exc).__name__}: {exc}") from exc


def _fmt_bytes(b):
    if b < 0:
        return "n/a"
    for unit in ("B", "kB", "MB", "GB"):
        if b < 1024 or unit == "GB":
            return f"{b:.0f} {unit}" if unit == "B" else f"{b:.1f} {unit}"
        b /= 1024


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--max-size", type=float, default=1e7)
    ap.add_argument("--no-trace", action="store_true", help="skip the tracemalloc run")
    ap.add_argument("--quick", action="store_true",
                    help="every case at 2 small sizes (10^3, 10^4; bandits 10^4, 3 x 10^4), all "
                         "in this process (smoke test)")
    ap.add_argument("--child", nargs=2, metavar=("CASE", "SIZE"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.child[0], int(args.child[1]), not args.no_trace)
        return
    load0 = os.getloadavg()
    print(f"load average at start: {load0[0]:.2f} {load0[1]:.2f} {load0[2]:.2f}; "
          f"{os.cpu_count()} cores; numpy {np.__version__}"
          + ("; --quick: every case in this process" if args.quick else ""))
    run_one = _measure_in_process if args.quick else measure
    print("| case | items | size | time (s) | peak RSS | RSS B/item | traced peak | "
          "traced B/item | checks |")
    print("|---|---|---|---|---|---|---|---|---|")
    failed, rows = [], {}
    t_all = time.perf_counter()
    for name in args.cases.split(","):
        bandit = name in BANDIT_CASES
        if args.quick:
            sizes = QUICK_BANDIT_SIZES if bandit else QUICK_ARRAY_SIZES
        else:
            sizes = BANDIT_SIZES if bandit else ARRAY_SIZES
        for size in [s for s in sizes if s <= args.max_size]:
            try:
                r = run_one(name, size, trace=not args.no_trace)
            except RuntimeError as exc:
                print(f"| {name} | | {size:.0e} | FAILED | | | | | {exc} |")
                failed.append((name, size))
                continue
            rows[name, size] = r
            c = r["checks"]
            detail = ", ".join(f"{k}={v:.2e}" if isinstance(v, float) else f"{k}={v}"
                               for k, v in c.items() if k != "ok")
            if not c["ok"]:
                failed.append((name, size))
            print(f"| {name} | {CASES[name][3]} | {size:.0e} | {r['seconds']:.2f} | "
                  f"{_fmt_bytes(r['rss'])} | {r['rss'] / size:.1f} | "
                  f"{_fmt_bytes(r['traced'])} | {r['traced'] / size:.1f} | "
                  f"{'OK' if c['ok'] else 'FAIL'}: {detail} |", flush=True)
    print()
    print("Memory growth (traced bytes per item, largest size / the size before it; 1.0 = linear):")
    for name in args.cases.split(","):
        sizes = sorted(s for (n, s) in rows if n == name)
        if len(sizes) >= 2:
            a, b = rows[name, sizes[-2]], rows[name, sizes[-1]]
            key = "traced" if a["traced"] > 0 else "rss"
            ratio = (b[key] / sizes[-1]) / max(a[key] / sizes[-2], 1e-9)
            print(f"  {name}: {ratio:.2f}  ({key}, {sizes[-2]:.0e} -> {sizes[-1]:.0e})")
    load1 = os.getloadavg()
    print(f"\ntotal {time.perf_counter() - t_all:.0f} s; load average at end: "
          f"{load1[0]:.2f} {load1[1]:.2f} {load1[2]:.2f}")
    if failed:
        print("FAILED:", failed)
        sys.exit(1)


if __name__ == "__main__":
    main()
