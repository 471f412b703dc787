"""Plots for best-model identification (matplotlib is imported lazily, only when plotting)."""

import numpy as np

from .simulate import accuracy_curve

__all__ = ["plot_accuracy_vs_budget", "plot_evaluations_per_model"]


def _pyplot():
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(
            "Plotting needs matplotlib, which is an optional dependency: "
            "pip install 'sklearn-riskcontrol[plot]' (or pip install matplotlib)."
        ) from exc
    return plt


def plot_accuracy_vs_budget(runs, best_index, *, budgets=None, ax=None, level=None):
    """Accuracy-vs-budget curves: P(best model identified) against the number of evaluations.

    Parameters
    ----------
    runs : dict of str -> list
        For each method, its independent runs (fitted strategies or their ``history_``).
    best_index : int
        Index of the truly best model.
    budgets : array-like of int, default=None
        Budgets at which to draw the curves (default: 200 points up to the largest budget).
    ax : matplotlib Axes, default=None
    level : float, default=None
        Draw a horizontal reference line (e.g. 0.95).

    Returns
    -------
    ax : matplotlib Axes

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from sklearn_riskcontrol.bandits import UCBE, UniformSampling, make_score_matrix
    >>> from sklearn_riskcontrol.bandits.plotting import plot_accuracy_vs_budget
    >>> data = make_score_matrix(20, 300, gap=0.05, random_state=0)
    >>> runs = {"UCB-E": [UCBE(budget=0.3, batch_size=10, random_state=s).fit(data.scores)
    ...                   for s in range(3)],
    ...         "uniform": [UniformSampling(budget=0.3, random_state=s).fit(data.scores)
    ...                     for s in range(3)]}
    >>> ax = plot_accuracy_vs_budget(runs, data.best_index, level=0.95)
    >>> ax.get_xlabel()
    'evaluations'
    """
    plt = _pyplot()
    if ax is None:
        _, ax = plt.subplots()
    hist = {k: [getattr(r, "history_", r) for r in v] for k, v in runs.items()}
    if budgets is None:
        top = max(int(np.max(h["n_evaluations"])) for v in hist.values() for h in v)
        budgets = np.unique(np.linspace(0, top, 200).astype(int))
    budgets = np.asarray(budgets)
    for name, hs in hist.items():
        acc, se = accuracy_curve(hs, best_index, budgets)
        (line,) = ax.plot(budgets, acc, label=f"{name} ({len(hs)} runs)")
        ax.fill_between(budgets, acc - se, acc + se, color=line.get_color(), alpha=0.2)
    if level is not None:
        ax.axhline(level, color="grey", linestyle=":", linewidth=1)
    ax.set_xlabel("evaluations")
    ax.set_ylabel("P(best model identified)")
    ax.set_ylim(-0.02, 1.02)
    ax.legend(loc="lower right")
    return ax


def plot_evaluations_per_model(strategy, *, true_means=None, ax=None, top=None):
    """Bar chart of the evaluations each model received, models sorted by (true or estimated) mean.

    Parameters
    ----------
    strategy : fitted strategy
        Any fitted :class:`UCBE`, :class:`PULSE`, ... (uses ``n_evaluations_per_model_``).
    true_means : array-like of shape (n_models,), default=None
        Sort the models by these means (e.g. from a simulation); default: the estimates.
    ax : matplotlib Axes, default=None
    top : int, default=None
        Show only the ``top`` best models.

    Returns
    -------
    ax : matplotlib Axes

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from sklearn_riskcontrol.bandits import UCBE, make_score_matrix
    >>> from sklearn_riskcontrol.bandits.plotting import plot_evaluations_per_model
    >>> data = make_score_matrix(20, 300, random_state=0)
    >>> ucbe = UCBE(budget=0.3, batch_size=10, random_state=0).fit(data.scores)
    >>> ax = plot_evaluations_per_model(ucbe, true_means=data.means, top=10)
    >>> len(ax.patches)
    10
    """
    plt = _pyplot()
    if ax is None:
        _, ax = plt.subplots()
    counts = np.asarray(strategy.n_evaluations_per_model_)
    means = np.asarray(strategy.means_ if true_means is None else true_means, dtype=float)
    order = np.argsort(-np.where(np.isnan(means), -np.inf, means), kind="stable")
    if top is not None:
        order = order[:top]
    ax.bar(np.arange(order.size), counts[order], color="C0")
    best = getattr(strategy, "best_index_", None)
    if best is not None and best in order:
        k = int(np.flatnonzero(order == best)[0])
        ax.patches[k].set_color("C3")
    ax.set_xlabel("models, by " + ("true" if true_means is not None else "estimated") + " mean (best first)")
    ax.set_ylabel("evaluations")
    return ax
