"""sklearn-riskcontrol: finite-sample risk control for evaluating, selecting and deploying models."""

# The one place the version is written: setup.cfg reads it (`version = attr:`), the docs import it,
# and tests/test_release.py checks the installed metadata against it.
__version__ = "0.1.0"

# evalues first: it re-exports the methods' array layers, whose packages import its shared
# modules (betting, testing) while it is still being imported.
from . import evalues  # noqa: E402, I001
from . import autoeval, bandits, metrics, online, risks  # noqa: E402
from . import labeling, studies  # noqa: E402
from . import tables  # noqa: E402
from ._validation import RiskControlWarning  # noqa: E402
from .autoeval import RAutoEvalPlus, RiskControlledModelSelector  # noqa: E402
from .bandits import PULSE, UCBE, UCBELRF, BestModelSelector, LowRankScoreCompleter  # noqa: E402
from .labeling import LabelingSession, SelectionSession  # noqa: E402
from .online import SemiBanditPredictionSet  # noqa: E402
from .risks import make_risk  # noqa: E402
from .selective import (  # noqa: E402
    ConcentrationMDR,
    ConcentrationSDR,
    RewardAwareScore,
    SCoREMDR,
    SCoRESDR,
    pipeline_decide,
)

__all__ = [
    "SCoREMDR",
    "SCoRESDR",
    "ConcentrationMDR",
    "ConcentrationSDR",
    "RewardAwareScore",
    "pipeline_decide",
    "SemiBanditPredictionSet",
    "RAutoEvalPlus",
    "RiskControlledModelSelector",
    "LabelingSession",
    "SelectionSession",
    "PULSE",
    "UCBE",
    "UCBELRF",
    "BestModelSelector",
    "LowRankScoreCompleter",
    "autoeval",
    "bandits",
    "evalues",
    "labeling",
    "metrics",
    "online",
    "risks",
    "studies",
    "tables",
    "make_risk",
    "RiskControlWarning",
    "__version__",
]
