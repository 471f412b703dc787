"""Figures for the methods of the library, as in their papers.

* SCoRE: :func:`plot_risk_vs_alpha`, :func:`plot_deployment_vs_alpha`,
  :func:`plot_group_deployment`;
* R-AutoEval(+): :func:`plot_eprocess`, :func:`plot_rho_weights`, :func:`plot_risk_monitor`;
* SPS (online prediction sets): :func:`plot_thresholds`, :func:`plot_coverage`,
  :func:`plot_set_size`, :func:`plot_regret`;
* best-model identification: :func:`plot_accuracy_vs_budget`, :func:`plot_evaluations_per_model`.

Optional dependency: ``pip install 'sklearn-riskcontrol[plot]'`` (matplotlib), imported only
when a function is called. Every function validates its inputs, draws on the matplotlib axes
given as ``ax=`` (default: a new figure), labels the axes, adds a legend when curves are labeled
(keys of a ``{label: values}`` dict) and returns the axes; titles are left to the caller.
"""

from ._autoeval import plot_eprocess, plot_rho_weights, plot_risk_monitor
from ._bandits import plot_accuracy_vs_budget, plot_evaluations_per_model
from ._online import plot_coverage, plot_regret, plot_set_size, plot_thresholds
from ._selective import plot_deployment_vs_alpha, plot_group_deployment, plot_risk_vs_alpha

__all__ = [
    "plot_thresholds",
    "plot_coverage",
    "plot_set_size",
    "plot_regret",
    "plot_eprocess",
    "plot_rho_weights",
    "plot_risk_monitor",
    "plot_accuracy_vs_budget",
    "plot_evaluations_per_model",
    "plot_risk_vs_alpha",
    "plot_deployment_vs_alpha",
    "plot_group_deployment",
]
