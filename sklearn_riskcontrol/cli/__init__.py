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

Every subcommand also takes ``--json`` (one strict JSON object on standard output, described by
the versioned schema ``sklearn_riskcontrol/cli/schema/v1.json``), ``--gate`` (exit status 0 when
what was asked is certified, 1 when it is not, 2 on bad input) and ``--report FILE.html`` (a
self-contained HTML report); each command's ``run`` returns the result document they are made
from (:func:`._io.document`).

and :mod:`._io`, the one place where tables are read and validated (and written), with the
messages that name the file, the column and the row.
"""

import argparse
import contextlib
import sys

from . import autoeval, bandits, online, selective
from ._io import add_output_options, document, finish, one_line_warnings

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

    summary = run_demo(seed=args.seed, quick=args.quick)
    return document(
        "demo", decision=f"the demo ran every method on bundled data (seed {args.seed})",
        passed=True, rule="the demo certifies nothing by itself: --gate passes when it ran",
        guarantee="each summary line states the guarantee its number carries",
        alpha=None, delta=None, rows=[], messages=summary,
        reasons={"alpha": "the demo's sections use several levels"})


def _leaves(parser):
    """The parsers that run something: ``parser`` or, with subcommands, their leaves."""
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        return [parser]
    return [leaf for p in subs[0].choices.values() for leaf in _leaves(p)]


def _build_parser():
    parser = argparse.ArgumentParser(
        prog="python -m sklearn_riskcontrol",
        description="Finite-sample risk control for evaluating, selecting and deploying models.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _add_demo_parser(sub)
    for module in _COMMANDS.values():
        module.add_parser(sub)
    for leaf in _leaves(parser):
        add_output_options(leaf)
    return parser


def main(argv=None):
    """Entry point; returns the exit status.

    Without ``--gate``: 0 when the command ran, 2 on bad input. With ``--gate``: 0 when what
    was asked is certified, 1 when it is not, 2 on bad input.
    """
    parser = _build_parser()
    args = parser.parse_args(argv)
    # With --json, standard output holds the JSON object alone: the rest goes to standard error.
    quiet = contextlib.redirect_stdout(sys.stderr) if args.json else contextlib.nullcontext()
    try:
        with one_line_warnings():
            with quiet:
                if args.command == "demo":
                    doc = _run_demo(args)
                else:
                    doc = _COMMANDS[args.command].run(args)
            return 0 if doc is None else finish(doc, args)  # None: a command with no result
    except (ValueError, TypeError, OSError, ImportError) as exc:
        if isinstance(exc, ImportError) and exc.name != "pyarrow":  # a Parquet input only
            raise
        message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        print(f"error: {message}", file=sys.stderr)
        return 2
