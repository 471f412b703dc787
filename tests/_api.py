"""The names of the API reference, ``doc/api.rst``: what the tests of the public API read."""

import re
from pathlib import Path

API_RST = Path(__file__).resolve().parents[1] / "doc" / "api.rst"


def documented_names():
    """``(module, name)`` for every ``.. autosummary::`` entry, in the order of the page."""
    out, module, in_summary = [], None, False
    for line in API_RST.read_text().splitlines():
        m = re.match(r"\.\. currentmodule:: (\S+)", line)
        if m:
            module, in_summary = m.group(1), False
        elif line.startswith(".. autosummary::"):
            in_summary = True
        elif in_summary and re.match(r"   \w+$", line):
            out.append((module, line.strip()))
        elif in_summary and line and not line.startswith(" "):
            in_summary = False
    return out
