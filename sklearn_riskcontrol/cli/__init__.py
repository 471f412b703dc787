"""Command-line interface (``python -m sklearn_riskcontrol --help``).

Subcommands work on CSV tables so that users with precomputed losses and scores (for example
from LLM evaluations) need no Python code. Bad input gives a one-line error and exit status 2.

This package holds the parser and :func:`main` (here), one module per subcommand, each with
``add_parser(subparsers)`` and ``run(args)``:

============  ====================  ===========================================================
command       module                method
============  ====================  ===========================================================
selective     :mod:`.selective`     SCoRE deploy decisions
online        :mod:`.online`        SPS online prediction-set thresholds (and baselines)
autoeval      :mod:`.autoeval`      R-AutoEval+: certify a risk, select a model
bandits       :mod:`.bandits`       PULSE, UCB-E, UCB-E-LRF: identify the best model
demo          (here)                :func:`sklearn_riskcontrol.demo.run_demo`
============  ====================  ===========================================================

Each method command is named after its method package (CONTRIBUTING.md, *Names*).

and :mod:`._io`, the one place where tables are read and validated (and written), with the
messages that name the file, the column and the row.
"""

import argparse
import sys

from . import autoeval, bandits, online, selective
from ._io import one_line_warnings

# Command name -> module with add_parser(subparsers) and run(args), in the order of --help.
_COMMANDS = {
    "selective": selective, "online": online, "autoeval": autoeval, "bandits": bandits,
}


def _add_demo_parser(subparsers):
    demo = subparsers.add_parser(
        "demo", help="run every method on bundled real data and print what was certified/deployed"
    )
    demo.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    demo.add_argument("--quick", action="store_true", help="smaller data, for smoke tests")
    return demo


def _run_demo(args):
    from ..demo import run_demo

    run_demo(seed=args.seed, quick=args.quick)


def _build_parser():
    parser = argparse.ArgumentParser(
        prog="python -m sklearn_riskcontrol",
        description="Finite-sample risk control for evaluating, selecting and deploying models.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _add_demo_parser(sub)
    for module in _COMMANDS.values():
        module.add_parser(sub)
    return parser


def main(argv=None):
    """Entry point; returns the exit status."""
    parser = _build_parser()
    args = parser.parse_args(argv)
    try:
        with one_line_warnings():
            if args.command == "demo":
                _run_demo(args)
            else:
                _COMMANDS[args.command].run(args)
    except (ValueError, TypeError, OSError, ImportError) as exc:
        if isinstance(exc, ImportError) and exc.name != "pyarrow":  # a Parquet input only
            raise
        message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        print(f"error: {message}", file=sys.stderr)
        return 2
    return 0
