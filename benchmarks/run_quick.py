"""Run the quick mode of every benchmark, one after another, each in a fresh interpreter.

    python benchmarks/run_quick.py                                # all of them (what CI runs)
    python benchmarks/run_quick.py evaluation_store online_drift  # only these

Every ``benchmarks/*.py`` except this runner and the helper modules (``_*.py``) is a benchmark
and must have a ``--quick`` mode: a script without one fails, so a new benchmark cannot be left
out. Each runs as ``python benchmarks/NAME.py --quick`` from the repository root, its output
shown as it runs, then its wall time and status:

* ``ok``;
* ``skipped``: it printed a line starting with ``skipped:`` and exited with status 0 (data or an
  optional package missing);
* ``FAILED``: a non-zero exit status (a crash or a wrong result), no ``--quick`` flag, or no
  end within ``--timeout`` seconds.

The ``NOT met`` column counts the targets a script reported missed: they are printed, not
failures (timings on shared machines are noisy). Exit status 1 if any script failed, else 0.
"""

import argparse
import contextlib
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
QUICK_FLAG = re.compile(r"""add_argument\(\s*["']--quick["']""")


def benchmarks():
    return sorted(p for p in HERE.glob("*.py")
                  if not p.name.startswith("_") and p.name != Path(__file__).name)


def run(path, timeout):
    """Run one benchmark's quick mode; returns (seconds, status, NOT met count)."""
    if QUICK_FLAG.search(path.read_text()):
        seconds, status, not_met = _run_quick(path, timeout)
    else:
        seconds, status, not_met = 0.0, "FAILED (no --quick flag)", 0
    print(f"--- {path.name}: {status}, {seconds:.1f} s\n", flush=True)
    return seconds, status, not_met


def _run_quick(path, timeout):
    cmd = [sys.executable, str(path.relative_to(ROOT)), "--quick"]
    print(f"=== {' '.join(cmd[1:])}", flush=True)
    t0 = time.perf_counter()
    # its own process group, so that a timeout also ends the workers it started
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, start_new_session=True)
    timed_out = threading.Event()

    def stop():
        timed_out.set()
        with contextlib.suppress(ProcessLookupError):  # it may have ended meanwhile
            os.killpg(proc.pid, signal.SIGKILL)

    timer = threading.Timer(timeout, stop)
    timer.start()
    skipped, not_met = False, 0
    for line in proc.stdout:
        print(line, end="", flush=True)
        skipped = skipped or line.startswith("skipped:")
        not_met += line.count("NOT met")
    rc = proc.wait()
    timer.cancel()
    seconds = time.perf_counter() - t0
    if rc and timed_out.is_set():
        status = f"FAILED (timeout, {timeout:g} s)"
    elif rc:
        status = f"FAILED (exit {rc})"
    else:
        status = "skipped" if skipped else "ok"
    return seconds, status, not_met


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*", help="only these benchmarks (file names, .py optional)")
    ap.add_argument("--timeout", type=float, default=600, help="seconds allowed per script")
    args = ap.parse_args(argv)
    paths = benchmarks()
    if args.names:
        wanted = {n.removesuffix(".py") for n in args.names}
        unknown = wanted - {p.stem for p in paths}
        if unknown:
            ap.error(f"no such benchmark: {', '.join(sorted(unknown))}")
        paths = [p for p in paths if p.stem in wanted]
    t0 = time.perf_counter()
    results = [(p.name, *run(p, args.timeout)) for p in paths]
    width = max(len(name) for name, *_ in results)
    print(f"{'script':<{width}} {'time (s)':>8}  {'NOT met':>7}  status")
    for name, seconds, status, not_met in results:
        print(f"{name:<{width}} {seconds:8.1f}  {not_met:7d}  {status}")
    print(f"{'total':<{width}} {time.perf_counter() - t0:8.1f}")
    failed = [name for name, _, status, _ in results if status.startswith("FAILED")]
    if failed:
        print(f"FAILED: {', '.join(failed)}")
        return 1
    skipped = sum(status == "skipped" for _, _, status, _ in results)
    print(f"no failure: {len(results) - skipped} ok, {skipped} skipped")
    return 0


if __name__ == "__main__":
    sys.exit(main())
