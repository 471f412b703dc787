"""R-Eval / R-AutoEval / R-AutoEval+ on loss arrays: re-exported from
:mod:`sklearn_riskcontrol.autoeval._arrays`, where R-AutoEval+'s array layer lives, so that this
public path keeps working."""

from ..autoeval._arrays import (  # noqa: F401
    effective_observations,
    rautoeval_test,
    RAutoEvalResult,
    rautoeval_confidence_interval,
    RiskConfidenceInterval,
    rautoeval_select,
    ModelSelectionResult,
)

__all__ = [
    "effective_observations",
    "rautoeval_test",
    "RAutoEvalResult",
    "rautoeval_confidence_interval",
    "RiskConfidenceInterval",
    "rautoeval_select",
    "ModelSelectionResult",
]
