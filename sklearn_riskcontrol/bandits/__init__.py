"""Best-model identification under an evaluation budget: PULSE, UCB-E, UCB-E-LRF and baselines.

Array layer: :mod:`sklearn_riskcontrol.bandits.lowrank` (logistic factorization with frozen example
factors, ALS ensemble). Scoring back-ends: :mod:`sklearn_riskcontrol.bandits.oracles`. Estimators:
:class:`PULSE`, :class:`UCBE`, :class:`UCBELRF`, :class:`NaivePooling`, :class:`UniformSampling`,
:class:`FilledSubset`, :class:`UniformLRF`, :class:`BestModelSelector`, :class:`LowRankScoreCompleter`. Synthetic benchmark matrices:
:func:`make_score_matrix` (and :func:`accuracy_curve`, :func:`budget_to_reach` to summarise
runs). Plots: :mod:`sklearn_riskcontrol.plotting`. Durable evaluation stores (resume a killed
run): :mod:`sklearn_riskcontrol.bandits.store`.
"""

from ._baselines import FilledSubset, UniformLRF, UniformSampling
from ._completer import LowRankScoreCompleter
from ._pulse import PULSE, NaivePooling, freedman_radius
from ._selector import BestModelSelector
from ._ucbe import UCBE, UCBELRF
from .oracles import (
    CallableOracle,
    CostBudgetReached,
    EstimatorOracle,
    EvaluationError,
    MatrixOracle,
    ScoreOracle,
    as_oracle,
)
from .store import EvaluationStore, SQLiteStore
from .simulate import accuracy_curve, budget_to_reach, make_score_matrix

__all__ = [
    "PULSE",
    "UCBE",
    "UCBELRF",
    "NaivePooling",
    "UniformSampling",
    "FilledSubset",
    "UniformLRF",
    "LowRankScoreCompleter",
    "BestModelSelector",
    "ScoreOracle",
    "MatrixOracle",
    "EstimatorOracle",
    "CallableOracle",
    "as_oracle",
    "EvaluationStore",
    "SQLiteStore",
    "EvaluationError",
    "CostBudgetReached",
    "freedman_radius",
    "make_score_matrix",
    "accuracy_curve",
    "budget_to_reach",
]
