"""Figures for the methods of the library.

Optional dependency: ``pip install 'sklearn-riskcontrol[plot]'`` (matplotlib). Every function
draws on a given matplotlib ``ax`` (or a new figure) and returns the axes.
matplotlib is imported only when a function is called.
"""

from ._autoeval import plot_eprocess, plot_rho_weights
from ._online import plot_coverage, plot_regret, plot_set_size, plot_thresholds

__all__ = [
    "plot_thresholds",
    "plot_coverage",
    "plot_set_size",
    "plot_regret",
    "plot_eprocess",
    "plot_rho_weights",
]
