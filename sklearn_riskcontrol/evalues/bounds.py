"""Thresholds of SCoRE's concentration / Learn-then-Test baselines: re-exported from
:mod:`sklearn_riskcontrol.selective._bounds`, where SCoRE's array layer lives, so that this
public path keeps working."""

from ..selective._bounds import (  # noqa: F401
    ConcentrationResult,
    concentration_threshold,
)

__all__ = [
    "ConcentrationResult",
    "concentration_threshold",
]
