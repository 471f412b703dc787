"""Figures of best-model identification (PULSE, UCB-E, UCB-E-LRF and baselines).

:func:`plot_accuracy_vs_budget` draws the probability of having identified the best model
against the number of evaluations spent; :func:`plot_evaluations_per_model` shows where a fitted
strategy spent its budget.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike
from sklearn.utils.validation import check_is_fitted

from .._validation import check_nonempty, check_scores
from ..bandits import accuracy_curve
from ._common import finish_axes, get_ax
from .._typing import Estimator

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["plot_accuracy_vs_budget", "plot_evaluations_per_model"]


def plot_accuracy_vs_budget(
    runs: Mapping[str, Any],
    best_index: int,
    *,
    budgets: ArrayLike | None = None,
    ax: Axes | None = None,
    level: float | None = None,
) -> Axes:
    """Accuracy-vs-budget curves: P(best model identified) against the number of evaluations.

    One line per method with a band of +- one binomial standard error over its runs (see
    :func:`~sklearn_riskcontrol.bandits.accuracy_curve`).

    Parameters
    ----------
    runs : dict of {str: list}
        For each method (legend label), its independent runs: fitted strategies or their
        ``history_`` dicts.
    best_index : int
        Index of the truly best model.
    budgets : array-like of int, optional
        Budgets at which to draw the curves; default: 200 points up to the largest budget.
    ax : matplotlib.axes.Axes, optional
        Axes to draw on; default: a new figure.
    level : float, optional
        Draw a dotted horizontal reference line at this accuracy (e.g. 0.95).

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from sklearn_riskcontrol.bandits import UCBE, UniformSampling, make_score_matrix
    >>> from sklearn_riskcontrol.plotting import plot_accuracy_vs_budget
    >>> data = make_score_matrix(20, 300, gap=0.05, random_state=0)
    >>> runs = {"UCB-E": [UCBE(budget=0.3, batch_size=10, random_state=s).fit(data.scores)
    ...                   for s in range(3)],
    ...         "uniform": [UniformSampling(budget=0.3, random_state=s).fit(data.scores)
    ...                     for s in range(3)]}
    >>> ax = plot_accuracy_vs_budget(runs, data.best_index, level=0.95)
    >>> ax.get_xlabel(), len(ax.get_lines())  # two methods and the reference level
    ('evaluations', 3)
    >>> import matplotlib.pyplot as plt; plt.close(ax.figure)
    """
    if not runs:
        raise ValueError("`runs` is empty: pass {method: [fitted strategies or histories]}.")
    ax = get_ax(ax)
    hist = {str(k): [getattr(r, "history_", r) for r in v] for k, v in runs.items()}
    if budgets is None:
        top = max(int(np.max(h["n_evaluations"])) for v in hist.values() for h in v)
        budgets = np.unique(np.linspace(0, top, 200).astype(int))
    budgets = check_scores(budgets, "budgets")
    check_nonempty(budgets, "budgets", what="budget")
    for name, hs in hist.items():
        acc, se = accuracy_curve(hs, best_index, budgets)
        (line,) = ax.plot(budgets, acc, label=f"{name} ({len(hs)} runs)")
        ax.fill_between(budgets, acc - se, acc + se, color=line.get_color(), alpha=0.2)
    if level is not None:
        ax.axhline(level, color="grey", linestyle=":", linewidth=1)
    ax.set_ylim(-0.02, 1.02)
    return finish_axes(ax, "evaluations", "P(best model identified)", loc="lower right")


def plot_evaluations_per_model(
    strategy: Estimator,
    *,
    true_means: ArrayLike | None = None,
    ax: Axes | None = None,
    top: int | None = None,
) -> Axes:
    """Bar chart of the evaluations each model received, models sorted by mean (best first).

    The bar of the model the strategy selected (``best_index_``) is drawn in red.

    Parameters
    ----------
    strategy : fitted strategy
        Any fitted :class:`~sklearn_riskcontrol.bandits.UCBE`,
        :class:`~sklearn_riskcontrol.bandits.PULSE`, ... (uses ``n_evaluations_per_model_``).
    true_means : array-like of shape (n_models,), optional
        Sort the models by these means (e.g. from a simulation); default: the estimated
        ``means_``.
    ax : matplotlib.axes.Axes, optional
        Axes to draw on; default: a new figure.
    top : int, optional
        Show only the ``top`` best models.

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from sklearn_riskcontrol.bandits import UCBE, make_score_matrix
    >>> from sklearn_riskcontrol.plotting import plot_evaluations_per_model
    >>> data = make_score_matrix(20, 300, random_state=0)
    >>> ucbe = UCBE(budget=0.3, batch_size=10, random_state=0).fit(data.scores)
    >>> ax = plot_evaluations_per_model(ucbe, true_means=data.means, top=10)
    >>> len(ax.patches)
    10
    >>> import matplotlib.pyplot as plt; plt.close(ax.figure)
    """
    check_is_fitted(
        strategy, "n_evaluations_per_model_", msg="`strategy` is not fitted: call its fit first."
    )
    counts = np.asarray(strategy.n_evaluations_per_model_)
    means = np.asarray(strategy.means_ if true_means is None else true_means, dtype=float)
    if means.shape != counts.shape:
        raise ValueError(
            f"`true_means` has shape {means.shape} but the strategy evaluated {counts.size} "
            "models; pass one mean per model."
        )
    ax = get_ax(ax)
    order = np.argsort(-np.where(np.isnan(means), -np.inf, means), kind="stable")
    if top is not None:
        order = order[:top]
    bars = ax.bar(np.arange(order.size), counts[order], color="C0")
    best = getattr(strategy, "best_index_", None)
    if best is not None and best in order:
        bars[int(np.flatnonzero(order == best)[0])].set_color("C3")
    by = "true" if true_means is not None else "estimated"
    return finish_axes(ax, f"models, by {by} mean (best first)", "evaluations")
