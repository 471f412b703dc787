"""The shared core beneath every method: testing by betting, multiple testing, Learn-then-Test.

Three public modules on plain NumPy arrays (no scikit-learn estimators, no I/O), used by the
method packages and by users who build their own procedures:

* :mod:`~sklearn_riskcontrol.evalues.betting`: betting e-processes (WSR, universal portfolio,
  fixed bets) and their mixtures;
* :mod:`~sklearn_riskcontrol.evalues.testing`: e-BH, BH, e-value boosting, fixed-sequence
  testing, Bonferroni and the fallback procedure;
* :mod:`~sklearn_riskcontrol.evalues.ltt`: Learn-then-Test p-values from loss sums
  (Hoeffding, Hoeffding-Bentkus, exact binomial).

The methods' own array functions live in their packages (SCoRE's e-values in
:mod:`sklearn_riskcontrol.selective`, R-AutoEval+'s tests in :mod:`sklearn_riskcontrol.autoeval`);
nothing here imports a method.
"""

__all__: list[str] = []
