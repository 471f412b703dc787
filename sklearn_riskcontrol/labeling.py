"""Label-until-certified sessions (R-AutoEval+ online): re-exported from
:mod:`sklearn_riskcontrol.autoeval._sessions`, where they live, so that this public path keeps
working."""

from .autoeval._sessions import (  # noqa: F401
    LabelingSession,
    LabelingStatus,
    SelectionSession,
    SelectionStatus,
)

__all__ = [
    "LabelingSession",
    "LabelingStatus",
    "SelectionSession",
    "SelectionStatus",
]
