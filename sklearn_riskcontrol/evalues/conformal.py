"""SCoRE's conformal e-values (paper eqs. 4.1, 4.3, 5.1, 6.1, 6.2): re-exported from
:mod:`sklearn_riskcontrol.selective._conformal`, where SCoRE's array layer lives, so that this
public path keeps working."""

from ..selective._conformal import (  # noqa: F401
    mdr_evalues,
    mdr_decisions,
    sdr_evalues,
    mdr_label_evalues,
    mdr_label_decisions,
)

__all__ = [
    "mdr_evalues",
    "mdr_decisions",
    "sdr_evalues",
    "mdr_label_evalues",
    "mdr_label_decisions",
]
