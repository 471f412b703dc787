"""Command line: ``python -m sklearn_riskcontrol {demo, ...}`` (the parser and the subcommands
are in :mod:`sklearn_riskcontrol.cli`)."""

from .cli import main

if __name__ == "__main__":
    raise SystemExit(main())
