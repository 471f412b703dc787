"""sklearn-riskcontrol: finite-sample risk control for evaluating, selecting and deploying models.

Every public name has one home, a subpackage (see the API reference):

* :mod:`sklearn_riskcontrol.selective`: deploy a fitted model only where it is safe (SCoRE,
  Learn-then-Test baselines);
* :mod:`sklearn_riskcontrol.autoeval`: certify a model's risk from few labels and an
  auto-evaluator (R-Eval, R-AutoEval, R-AutoEval+; selection; label-until-certified sessions);
* :mod:`sklearn_riskcontrol.online`: online prediction sets under semi-bandit feedback (SPS);
* :mod:`sklearn_riskcontrol.bandits`: find the best of many models with few evaluations (PULSE,
  UCB-E, UCB-E-LRF);
* beneath them :mod:`sklearn_riskcontrol.evalues` (testing by betting, multiple testing),
  :mod:`sklearn_riskcontrol.risks` and :mod:`sklearn_riskcontrol.evaluation` (scoring back-ends,
  stores, tables); above them :mod:`sklearn_riskcontrol.plotting`,
  :mod:`sklearn_riskcontrol.studies`, :mod:`sklearn_riskcontrol.datasets` and the command line
  (``python -m sklearn_riskcontrol``).
"""

# The one place the version is written: setup.cfg reads it (`version = attr:`), the docs import it,
# and tests/package/test_release.py checks the installed metadata against it.
__version__ = "0.1.0"

from ._validation import RiskControlWarning  # noqa: E402

__all__ = ["RiskControlWarning", "__version__"]
