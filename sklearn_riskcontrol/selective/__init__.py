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
"""
from ._base import pipeline_decide
from ._concentration import ConcentrationMDR, ConcentrationSDR
from ._reward import RewardAwareScore
from ._score import SCoREMDR, SCoRESDR

__all__ = [
    "SCoREMDR",
    "SCoRESDR",
    "ConcentrationMDR",
    "ConcentrationSDR",
    "RewardAwareScore",
    "pipeline_decide",
]
