"""Online prediction sets under semi-bandit feedback: SPS and its baselines.

Array layer (NumPy only): the streaming threshold learners (:func:`make_learner`,
:class:`SPSLearner`, ...), :func:`simulate_thresholds` to replay a stream of true-label scores, and
the realized coverage, set size and regret of published thresholds (:func:`coverage_rate`, ...), and the drift monitor
(:class:`MissRateMonitor`, :func:`simulate_monitored`). Estimator layer:
:class:`SemiBanditPredictionSet`, which wraps a fitted classifier (or takes candidate scores) and
calls the array layer; the array modules never import it.

``alpha`` is the tolerated miscoverage (coverage ``1 - alpha``), ``delta`` the probability that
SPS's guarantee ``tau_t <= tau*`` fails at some round. The paper (Ge, Bastani & Bastani,
"Stochastic Online Conformal Prediction with Semi-Bandit Feedback") writes alpha for the coverage.
"""

from ._estimator import SemiBanditPredictionSet
from ._learners import (
    STRATEGIES,
    ACILearner,
    DLRLearner,
    ETCLearner,
    GreedyLearner,
    SPSLearner,
    ThresholdLearner,
    make_learner,
)
from ._monitor import ON_DRIFT, MissRateMonitor, simulate_monitored
from ._simulate import simulate_thresholds
from ._metrics import (
    average_set_size,
    coverage_rate,
    cumulative_regret,
    oracle_threshold,
    set_sizes,
    undercoverage_count,
)

__all__ = [
    "STRATEGIES",
    "SemiBanditPredictionSet",
    "simulate_thresholds",
    "simulate_monitored",
    "MissRateMonitor",
    "ON_DRIFT",
    "make_learner",
    "ThresholdLearner",
    "SPSLearner",
    "GreedyLearner",
    "ACILearner",
    "DLRLearner",
    "ETCLearner",
    "oracle_threshold",
    "coverage_rate",
    "average_set_size",
    "set_sizes",
    "undercoverage_count",
    "cumulative_regret",
]
