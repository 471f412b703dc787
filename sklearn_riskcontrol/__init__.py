"""sklearn-riskcontrol: finite-sample risk control for evaluating, selecting and deploying models."""

__version__ = "0.1.0.dev0"

from . import evalues, risks  # noqa: E402
from ._validation import RiskControlWarning  # noqa: E402
from .risks import make_risk  # noqa: E402

__all__ = ["evalues", "risks", "make_risk", "RiskControlWarning", "__version__"]
