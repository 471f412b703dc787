"""Best-model identification under an evaluation budget: PULSE, UCB-E, UCB-E-LRF and baselines.

Array layer: :mod:`sklearn_riskcontrol.bandits.lowrank` (logistic factorization with frozen example
factors, ALS ensemble). Estimators:
:class:`PULSE`, :class:`UCBE`, :class:`UCBELRF`, :class:`NaivePooling`, :class:`UniformSampling`,
:class:`FilledSubset`, :class:`UniformLRF`, :class:`BestModelSelector`, :class:`LowRankScoreCompleter`. Synthetic benchmark matrices:
:func:`make_score_matrix` (and :func:`accuracy_curve`, :func:`budget_to_reach` to summarise
runs), :func:`vacuous_intervals` to flag confidence intervals that say nothing. Plots:
:mod:`sklearn_riskcontrol.plotting`. Scoring back-ends and durable evaluation stores (resume a
killed run) are the evaluation layer's: :mod:`sklearn_riskcontrol.evaluation`.
"""

from ._baselines import FilledSubset, UniformLRF, UniformSampling
from ._completer import LowRankScoreCompleter
from ._intervals import vacuous_intervals
from ._pulse import PULSE, NaivePooling, freedman_radius
from ._selector import BestModelSelector
from ._ucbe import UCBE, UCBELRF
from ._simulate import accuracy_curve, budget_to_reach, make_score_matrix

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
    "freedman_radius",
    "vacuous_intervals",
    "make_score_matrix",
    "accuracy_curve",
    "budget_to_reach",
]
