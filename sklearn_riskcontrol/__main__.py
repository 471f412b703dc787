"""Command line: ``python -m sklearn_riskcontrol {demo, ...}``."""

from .cli import main

if __name__ == "__main__":
    raise SystemExit(main())
