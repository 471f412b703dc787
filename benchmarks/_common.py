"""Helpers shared by the benchmark scripts (not a benchmark: ``run_quick.py`` runs no file whose
name starts with an underscore).

A benchmark that cannot run here (data or an optional package missing) says why in one line
starting with ``skipped:`` and exits with status 0; ``run_quick.py`` reports it as skipped. A
missed target is printed as ``NOT met`` and does not change the exit status; a wrong result
(disagreement with a reference, a violated guarantee: see ``exceeds``) exits non-zero.
"""

import importlib
import math
import sys
from pathlib import Path

# Data sets too large or not licensed for the repository: ../shared/data beside the clone.
SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def skip(reason):
    """End this benchmark: it cannot run here, for ``reason``."""
    print(f"skipped: {reason}")
    sys.exit(0)


def data_file(path):
    """``path`` as a Path if the file exists; else skip the benchmark."""
    path = Path(path)
    if not path.exists():
        skip(f"data not found: {path}")
    return path


def _not_installed(module, extra):
    return f'{module} cannot be imported (pip install -e ".[{extra}]")'


def require(module, extra):
    """Import ``module`` (from the optional ``extra``), or skip the benchmark without it."""
    try:
        return importlib.import_module(module)
    except ImportError:
        skip(_not_installed(module, extra))


def optional(module, extra, consequence):
    """Import ``module``, or say in one line that it is missing and the ``consequence``, and
    return None."""
    try:
        return importlib.import_module(module)
    except ImportError:
        print(f"{_not_installed(module, extra)}: {consequence}")
        return None


def met(ok):
    """How a target is reported: ``met`` or ``NOT met`` (never a failure by itself)."""
    return "met" if ok else "NOT met"


def exceeds(mean, bound, reps, z=3.0):
    """Does the mean of ``reps`` independent values in [0, 1] (a realized risk, a miscoverage)
    exceed its guarantee ``E <= bound`` (``bound <= 1/2``) by more than ``z`` times the largest
    standard error the guarantee allows, ``sqrt(bound (1 - bound) / reps)``? No variance is
    estimated, so the check stays sound with the few repetitions of a quick run."""
    return mean > bound + z * math.sqrt(bound * (1 - bound) / reps)


def fail_if(wrong):
    """Exit with status 1 naming each wrong result in ``wrong`` (called after the tables are
    printed, so that the whole output is there to read)."""
    if wrong:
        sys.exit("WRONG RESULT: " + "; ".join(wrong))


def case_arguments(parser, cases, quick_reps, argv=None):
    """Add ``--reps``, ``--cases`` and ``--seed`` to ``parser`` (which has ``--quick``: declared in
    the benchmark, where ``run_quick.py`` looks for it), parse; returns ``(args, repetitions per
    case: 1000, or quick_reps with --quick, chosen cases)``, an unknown case a usage error."""
    parser.add_argument("--reps", type=int, default=None)
    parser.add_argument("--cases", default=",".join(cases))
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    chosen = args.cases.split(",")
    unknown = set(chosen) - set(cases)
    if unknown:
        parser.error(f"unknown case(s): {', '.join(sorted(unknown))}; known: {', '.join(cases)}")
    return args, args.reps or (quick_reps if args.quick else 1000), chosen


def report_undercoverage(name, coverage, delta, reps):
    """Print the cases where method ``name`` covered less than ``1 - delta`` (``coverage``:
    ``{case: coverage}``), starring those below by more than 3 standard errors."""
    under = [f"{case} {c:.3f}" + ("*" if exceeds(1 - c, delta, reps) else "")
             for case, c in coverage.items() if c < 1 - delta]
    print(f"  (report) {name} covers less than {1 - delta:g} on: {', '.join(under) or 'none'}"
          f"{' (* below by more than 3 s.e.)' if any('*' in u for u in under) else ''}")
