"""Command-line interface (``python -m sklearn_riskcontrol --help``).

Subcommands work on CSV tables so that users with precomputed losses and scores (for example
from LLM evaluations) need no Python code. Bad input gives a one-line error and exit status 2.
"""

import argparse
import sys
import warnings

import numpy as np


def _add_score_parser(sub):
    p = sub.add_parser(
        "score",
        help="SCoRE deploy decisions from CSV tables of calibration risks/scores and test scores",
        description=(
            "Selective deployment with SCoRE. Reads a calibration CSV (one row per labeled point: "
            "its risk in [0, 1] and its score, smaller = safer) and a test CSV (one row per test "
            "point: its score), and writes the test table with a `deploy` column (and `evalue`)."
        ),
    )
    p.add_argument("--calibration", required=True, help="CSV with the calibration rows")
    p.add_argument("--test", required=True, help="CSV with the test rows")
    p.add_argument("--alpha", type=float, required=True, help="target risk level in (0, 1)")
    p.add_argument(
        "--target", choices=["mdr", "sdr"], default="sdr",
        help="mdr: E[risk * deploy] <= alpha per point; sdr: risk among deployed <= alpha (default)",
    )
    p.add_argument("--boosting", choices=["none", "hete", "homo"], default="hete",
                   help="e-value boosting for SDR (default: hete)")
    p.add_argument("--risk-column", default="risk", help="calibration risk column (default: risk)")
    p.add_argument("--score-column", default="score", help="score column in both files (default: score)")
    p.add_argument("--weight-column", default=None,
                   help="covariate-shift density ratio column in both files (optional)")
    p.add_argument("--seed", type=int, default=0, help="seed of the boosting draws (default: 0)")
    p.add_argument("--output", default="-", help="output CSV path (default: standard output)")


def _build_parser():
    parser = argparse.ArgumentParser(
        prog="python -m sklearn_riskcontrol",
        description="Finite-sample risk control for evaluating, selecting and deploying models.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    demo = sub.add_parser(
        "demo", help="run every method on bundled real data and print what was certified/deployed"
    )
    demo.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    demo.add_argument("--quick", action="store_true", help="smaller data, for smoke tests")
    _add_score_parser(sub)
    return parser


def _column(frame, name, path):
    if name not in frame.columns:
        raise ValueError(f"{path} has no column {name!r} (columns: {list(frame.columns)}).")
    return frame[name].to_numpy()


def _run_score(args):
    import pandas as pd

    from ._validation import check_level
    from .evalues import boost_evalues, ebh, mdr_decisions, mdr_evalues, sdr_evalues

    check_level(args.alpha, "alpha")
    cal, test = pd.read_csv(args.calibration), pd.read_csv(args.test)
    L = _column(cal, args.risk_column, args.calibration)
    S = _column(cal, args.score_column, args.calibration)
    T = _column(test, args.score_column, args.test)
    w = v = None
    if args.weight_column:
        w = _column(cal, args.weight_column, args.calibration)
        v = _column(test, args.weight_column, args.test)
    if args.target == "mdr":
        evalues = mdr_evalues(L, S, T, args.alpha, w, v)
        deploy = mdr_decisions(L, S, T, args.alpha, None, w, v)
    else:
        evalues = sdr_evalues(L, S, T, args.alpha, w, v)
        boosting = None if args.boosting == "none" else args.boosting
        deploy = ebh(boost_evalues(evalues, boosting, random_state=args.seed), args.alpha)
    out = test.assign(evalue=evalues, deploy=deploy)
    out.to_csv(sys.stdout if args.output == "-" else args.output, index=False)
    print(
        f"deployed on {int(deploy.sum())} of {len(deploy)} test rows "
        f"({args.target.upper()} <= {args.alpha})",
        file=sys.stderr,
    )


def main(argv=None):
    """Entry point; returns the exit status."""
    parser = _build_parser()
    args = parser.parse_args(argv)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            if args.command == "demo":
                from .demo import run_demo

                run_demo(seed=args.seed, quick=args.quick)
            elif args.command == "score":
                _run_score(args)
    except (ValueError, TypeError, OSError) as exc:
        message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        print(f"error: {message}", file=sys.stderr)
        return 2
    return 0
