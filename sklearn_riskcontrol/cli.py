"""Command-line interface (``python -m sklearn_riskcontrol --help``)."""

import argparse
import sys


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
    return parser


def main(argv=None):
    parser = _build_parser()
    args = parser.parse_args(argv)
    try:
        if args.command == "demo":
            from .demo import run_demo

            run_demo(seed=args.seed, quick=args.quick)
    except (ValueError, TypeError, FileNotFoundError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0
