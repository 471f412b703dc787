"""Selective deployment of a fitted model with risk control (SCoRE) and concentration baselines.

Estimator layer of SCoRE (Bai & Jin): wrap any *fitted* regressor or classifier, calibrate on
labeled data, then ``decide(X)`` returns which test points the model may be deployed on.

* :class:`SCoREMDR` controls the marginal deployment risk ``E[L_j 1{deploy j}] <= alpha``.
* :class:`SCoRESDR` controls the selective deployment risk (risk among deployed points, FDR-like)
  ``E[sum_j L_j 1{deploy j} / max(1, #deployed)] <= alpha`` over a test batch.
* :class:`ConcentrationMDR` / :class:`ConcentrationSDR`: Hoeffding / Rademacher baselines of the
  paper's App. D.4 (PAC-type guarantees only), for power comparisons.

Guarantees hold in finite samples when calibration and test data are exchangeable (weighted
exchangeability with known covariate-shift density ratios; asymptotically with estimated ones),
whatever the quality of the model and of the score. The wrapped model is never refitted.

Array layer (plain NumPy arrays, for users with loss and score tables; what the estimators call):
SCoRE's e-values and decisions (:func:`mdr_decisions`, :func:`sdr_evalues`, ...; paper eqs. 4.1,
4.3, 5.1, 6.1, 6.2), the thresholds of the Learn-then-Test baselines
(:func:`concentration_threshold`) and their per-threshold p-values (:func:`threshold_pvalues`).
Realized quantities on held-out labels and scorers for ``GridSearchCV``: :func:`realized_mdr`,
:func:`realized_sdr`, :func:`deployment_rate`, :func:`make_deployment_scorer`, ...
"""
from ._base import pipeline_decide
from ._bounds import ConcentrationResult, concentration_threshold
from ._concentration import ConcentrationMDR, ConcentrationSDR
from ._conformal import (
    mdr_decisions,
    mdr_evalues,
    mdr_label_decisions,
    mdr_label_evalues,
    sdr_evalues,
)
from ._ltt import rautoeval_pvalues, threshold_pvalues, wsr_pvalues
from ._metrics import (
    DEPLOYMENT_SCORERS,
    deployment_rate,
    make_deployment_scorer,
    make_selective_scorer,
    realized_mdr,
    realized_reward,
    realized_sdr,
)
from ._reward import RewardAwareScore
from ._score import SCoREMDR, SCoRESDR

__all__ = [
    "SCoREMDR",
    "SCoRESDR",
    "ConcentrationMDR",
    "ConcentrationSDR",
    "RewardAwareScore",
    "pipeline_decide",
    "mdr_decisions",
    "mdr_evalues",
    "sdr_evalues",
    "mdr_label_evalues",
    "mdr_label_decisions",
    "concentration_threshold",
    "ConcentrationResult",
    "threshold_pvalues",
    "wsr_pvalues",
    "rautoeval_pvalues",
    "realized_mdr",
    "realized_sdr",
    "deployment_rate",
    "realized_reward",
    "make_deployment_scorer",
    "make_selective_scorer",
    "DEPLOYMENT_SCORERS",
]
