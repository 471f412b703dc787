"""Certify a fitted model's risk with few labels and an auto-evaluator (R-AutoEval+).

Estimator layer of R-Eval / R-AutoEval / R-AutoEval+ (Park, Zecchin & Simeone, *Adaptive
Prediction-Powered AutoEval with Reliability and Efficiency Guarantees*):

* :class:`RAutoEvalPlus` wraps a fitted model and an auto-evaluator (an LLM judge, or any fitted
  model or callable that labels ``X``). ``fit(X, y)`` takes labeled and unlabeled rows together
  (scikit-learn's semi-supervised convention: ``y == -1`` for classes, NaN for regression), turns
  them into losses and tests ``H0: risk > alpha`` at level ``delta`` with
  :func:`~sklearn_riskcontrol.autoeval.rautoeval_test`. ``decide()`` says whether the risk is
  certified to be at most ``alpha``.
* :class:`RiskControlledModelSelector` runs one such test per candidate model and selects the
  cheapest certified one, with fixed-sequence testing or Bonferroni (family-wise error at most
  ``delta``).

The guarantee holds whatever the quality of the auto-evaluator, as long as the labeled rows (and,
separately, the unlabeled rows) are exchangeable draws from the deployment distribution. The
wrapped models are never refitted.

Layout: :mod:`._arrays` is the array layer (:func:`rautoeval_test`,
:func:`rautoeval_confidence_interval`, :func:`rautoeval_select`: the tests, confidence intervals
and selection of the paper on loss arrays), :mod:`._estimators` the estimators above,
:mod:`._sessions` the label-until-certified sessions (:class:`LabelingSession`,
:class:`SelectionSession`), :mod:`._active` active labeling of a pool
(:class:`ActiveLabelingSession`), :mod:`._monitor` the monitoring of a deployed model
(:class:`RiskMonitor`). The selector's parallel workers send fitted testers back with
:mod:`sklearn_riskcontrol._parcel`.
"""

from ._active import ActiveLabelingSession, ActiveLabelingStatus, ActiveSelectionStatus
from ._arrays import (
    ModelSelectionResult,
    RAutoEvalResult,
    RiskConfidenceInterval,
    effective_observations,
    rautoeval_confidence_interval,
    rautoeval_select,
    rautoeval_test,
)
from ._compare import (
    ComparisonResult,
    DifferenceTestResult,
    RiskDifferenceInterval,
    rautoeval_compare,
    rautoeval_difference_interval,
    rautoeval_difference_test,
)
from ._comparing import ModelComparison
from ._estimators import RAutoEvalPlus, RiskControlledModelSelector
from ._monitor import RiskMonitor
from ._planning import LabelPlan, plan_labels
from ._sessions import (
    ComparisonSession,
    ComparisonStatus,
    LabelingSession,
    LabelingStatus,
    SelectionSession,
    SelectionStatus,
)

__all__ = [
    "RAutoEvalPlus",
    "RiskControlledModelSelector",
    "ModelComparison",
    "LabelingSession",
    "SelectionSession",
    "LabelingStatus",
    "SelectionStatus",
    "ComparisonSession",
    "ComparisonStatus",
    "RiskMonitor",
    "ActiveLabelingSession",
    "ActiveLabelingStatus",
    "ActiveSelectionStatus",
    "plan_labels",
    "LabelPlan",
    "rautoeval_test",
    "RAutoEvalResult",
    "rautoeval_confidence_interval",
    "RiskConfidenceInterval",
    "rautoeval_select",
    "ModelSelectionResult",
    "effective_observations",
    "rautoeval_difference_interval",
    "RiskDifferenceInterval",
    "rautoeval_difference_test",
    "DifferenceTestResult",
    "rautoeval_compare",
    "ComparisonResult",
]
