"""Array layer: e-values, betting, multiple testing and bounds on plain NumPy arrays.

This is what users with precomputed loss/score tables call, what the estimators call, and what
the benchmarks time. No scikit-learn estimators and no I/O live here. The modules shared by the
e-value methods live in this package (``betting``: betting e-processes; ``testing``: e-BH, BH,
boosting, fixed-sequence, Bonferroni); SCoRE's and R-AutoEval+'s own array functions live in
their method packages (:mod:`sklearn_riskcontrol.selective`, :mod:`sklearn_riskcontrol.autoeval`)
and are re-exported here and by ``evalues.conformal``, ``ltt``, ``bounds`` and ``autoeval``.
"""

from .autoeval import (
    ModelSelectionResult,
    RAutoEvalResult,
    RiskConfidenceInterval,
    effective_observations,
    rautoeval_confidence_interval,
    rautoeval_select,
    rautoeval_test,
)
from .betting import (
    WSR,
    BettingEProcess,
    FixedBet,
    UniversalPortfolio,
    betting_eprocess,
    mixture_log_eprocess,
    mixture_weights,
)
from .bounds import ConcentrationResult, concentration_threshold
from .conformal import (
    mdr_decisions,
    mdr_evalues,
    mdr_label_decisions,
    mdr_label_evalues,
    sdr_evalues,
)
from .ltt import (
    binomial_pvalues,
    fallback,
    hb_pvalues,
    hoeffding_pvalues,
    threshold_pvalues,
    wsr_pvalues,
)
from .testing import bh, bonferroni, boost_evalues, ebh, fixed_sequence

__all__ = [
    "mdr_decisions",
    "mdr_evalues",
    "sdr_evalues",
    "mdr_label_evalues",
    "mdr_label_decisions",
    "ebh",
    "bh",
    "boost_evalues",
    "fixed_sequence",
    "bonferroni",
    "concentration_threshold",
    "ConcentrationResult",
    "fallback",
    "hb_pvalues",
    "binomial_pvalues",
    "hoeffding_pvalues",
    "wsr_pvalues",
    "threshold_pvalues",
    "WSR",
    "UniversalPortfolio",
    "FixedBet",
    "BettingEProcess",
    "betting_eprocess",
    "mixture_log_eprocess",
    "mixture_weights",
    "effective_observations",
    "rautoeval_test",
    "RAutoEvalResult",
    "rautoeval_confidence_interval",
    "RiskConfidenceInterval",
    "rautoeval_select",
    "ModelSelectionResult",
]
