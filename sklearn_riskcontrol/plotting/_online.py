"""Figures of online prediction sets (SPS and baselines): thresholds, coverage, set size, regret.

Every function takes the thresholds published by one or more strategies as a dict
``{label: thresholds}`` (e.g. ``{s: simulate_thresholds(scores, alpha, strategy=s) ...}``) and
returns the matplotlib axes it drew on, one line per strategy, against the round ``t = 1..T``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from .._validation import check_level, check_nonempty, check_scores
from ..online import cumulative_regret, set_sizes
from ._common import as_curves, finish_axes, get_ax

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["plot_thresholds", "plot_coverage", "plot_set_size", "plot_regret"]


def _threshold_curves(thresholds_by_strategy, n_rounds=None, what=None):
    curves = as_curves(thresholds_by_strategy, "thresholds_by_strategy")
    for label, tau in curves:
        if np.isnan(tau).any():
            i = int(np.flatnonzero(np.isnan(tau))[0])
            raise ValueError(
                f"The thresholds of {label or 'the strategy'!s} contain NaN (first at round "
                f"{i + 1}); thresholds may be +-inf but not NaN."
            )
        if n_rounds is not None and len(tau) != n_rounds:
            raise ValueError(
                f"The thresholds of {label or 'the strategy'!s} have {len(tau)} rounds but "
                f"{what} has {n_rounds}; they must be equal."
            )
    return curves


def _rounds(n):
    return np.arange(1, n + 1)


def _check_drift_rounds(drift_rounds):
    """Rounds of the drift monitor's detections (e.g. ``history_["round"]``), as floats."""
    if drift_rounds is None:
        return np.empty(0)
    rounds = np.atleast_1d(np.asarray(drift_rounds, dtype=float))
    if rounds.ndim != 1 or not np.all(np.isfinite(rounds)) or np.any(rounds < 1):
        raise ValueError(
            f"`drift_rounds` must be rounds t >= 1 (e.g. the estimator's history_['round']); "
            f"got {np.asarray(drift_rounds).tolist()!r}."
        )
    return rounds


def _mark_drift(ax, rounds):
    for i, r in enumerate(rounds):
        label = "drift detected" if i == 0 else None
        ax.axvline(r, color="tab:red", linestyle=":", linewidth=1.5, label=label)


def _check_tau_star(tau_star):
    if tau_star is None:
        return None
    value = check_scores([tau_star], "tau_star")
    return float(value[0])


def plot_thresholds(
    thresholds_by_strategy: Mapping[str, ArrayLike] | ArrayLike,
    tau_star: float | None = None,
    ax: Axes | None = None,
    *,
    drift_rounds: ArrayLike | None = None,
) -> Axes:
    """Published threshold ``tau_t`` against the round, one line per strategy.

    Parameters
    ----------
    thresholds_by_strategy : dict of {str: array-like of shape (n_rounds,)} or array-like
        Thresholds published at each round (e.g. by
        :func:`~sklearn_riskcontrol.online.simulate_thresholds`), keyed by the legend label.
        Rounds with an infinite threshold (``-inf`` = full set, ``+inf`` = empty set) are left
        out of the line.
    tau_star : float, optional
        Oracle threshold ``tau*``, drawn as a dashed horizontal line. A valid strategy stays
        below it (its sets then cover at least ``1 - alpha``).
    ax : matplotlib.axes.Axes, optional
        Axes to draw on; default: a new figure.
    drift_rounds : array-like of int, optional
        Rounds at which the drift monitor rejected (``SemiBanditPredictionSet.history_["round"]``
        or the detections of :func:`~sklearn_riskcontrol.online.simulate_monitored`), drawn as
        dotted vertical lines.

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import numpy as np
    >>> from sklearn_riskcontrol.online import simulate_thresholds
    >>> from sklearn_riskcontrol.plotting import plot_thresholds
    >>> scores = np.random.default_rng(0).normal(size=2000)
    >>> runs = {s: simulate_thresholds(scores, 0.1, strategy=s) for s in ["sps", "dlr"]}
    >>> ax = plot_thresholds(runs, tau_star=-1.2816)
    >>> len(ax.get_lines()), ax.get_ylabel()  # two strategies and tau*
    (3, 'threshold tau_t')
    >>> import matplotlib.pyplot as plt; plt.close(ax.figure)
    >>> ax = plot_thresholds(runs, drift_rounds=[1500])  # a detection of the drift monitor
    >>> ax.get_lines()[-1].get_label()
    'drift detected'
    >>> plt.close(ax.figure)
    """
    curves = _threshold_curves(thresholds_by_strategy)
    tau_star = _check_tau_star(tau_star)
    drift = _check_drift_rounds(drift_rounds)
    ax = get_ax(ax)
    for label, tau in curves:
        shown = np.where(np.isfinite(tau), tau, np.nan)
        ax.plot(_rounds(len(tau)), shown, label=label)
    if tau_star is not None:
        ax.axhline(tau_star, color="black", linestyle="--", linewidth=1, label="oracle tau*")
    _mark_drift(ax, drift)
    return finish_axes(ax, "round t", "threshold tau_t")


def plot_coverage(
    thresholds_by_strategy: Mapping[str, ArrayLike] | ArrayLike,
    true_label_scores: ArrayLike,
    alpha: float | None = None,
    ax: Axes | None = None,
    *,
    drift_rounds: ArrayLike | None = None,
) -> Axes:
    """Running coverage ``(1/t) sum_{u <= t} 1{s_u >= tau_u}`` against the round.

    Parameters
    ----------
    thresholds_by_strategy : dict of {str: array-like of shape (n_rounds,)} or array-like
        Thresholds published at each round, keyed by the legend label.
    true_label_scores : array-like of shape (n_rounds,)
        Score of the true label at each round (the same stream for every strategy).
    alpha : float in (0, 1), optional
        Tolerated miscoverage; the target ``1 - alpha`` is drawn as a dashed horizontal line.
    ax : matplotlib.axes.Axes, optional
        Axes to draw on; default: a new figure.
    drift_rounds : array-like of int, optional
        Rounds at which the drift monitor rejected, drawn as dotted vertical lines (see
        :func:`plot_thresholds`).

    Returns
    -------
    matplotlib.axes.Axes

    Notes
    -----
    The running coverage is a realized average. SPS's guarantee is stronger and of another kind:
    with probability ``>= 1 - delta`` *every* published set has coverage ``>= 1 - alpha``
    (``tau_t <= tau*`` for all ``t``), which :func:`plot_thresholds` shows directly.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import numpy as np
    >>> from sklearn_riskcontrol.online import simulate_thresholds
    >>> from sklearn_riskcontrol.plotting import plot_coverage
    >>> scores = np.random.default_rng(0).normal(size=2000)
    >>> runs = {s: simulate_thresholds(scores, 0.1, strategy=s) for s in ["sps", "greedy"]}
    >>> ax = plot_coverage(runs, scores, alpha=0.1)
    >>> len(ax.get_lines()), ax.get_ylabel()
    (3, 'running coverage')
    >>> import matplotlib.pyplot as plt; plt.close(ax.figure)
    """
    s = check_scores(true_label_scores, "true_label_scores")
    check_nonempty(s, "true_label_scores", what="round")
    curves = _threshold_curves(thresholds_by_strategy, len(s), "`true_label_scores`")
    if alpha is not None:
        alpha = check_level(alpha, "alpha")
    drift = _check_drift_rounds(drift_rounds)
    ax = get_ax(ax)
    t = _rounds(len(s))
    for label, tau in curves:
        ax.plot(t, np.cumsum(s >= tau) / t, label=label)
    if alpha is not None:
        target = f"target 1 - alpha = {1 - alpha:g}"
        ax.axhline(1 - alpha, color="black", linestyle="--", linewidth=1, label=target)
    _mark_drift(ax, drift)
    return finish_axes(ax, "round t", "running coverage")


def plot_set_size(
    thresholds_by_strategy: Mapping[str, ArrayLike] | ArrayLike,
    candidate_scores: ArrayLike,
    tau_star: float | None = None,
    ax: Axes | None = None,
) -> Axes:
    """Running average set size ``(1/t) sum_{u <= t} #{y : f(x_u, y) >= tau_u}``.

    Parameters
    ----------
    thresholds_by_strategy : dict of {str: array-like of shape (n_rounds,)} or array-like
        Thresholds published at each round, keyed by the legend label.
    candidate_scores : array-like of shape (n_rounds, n_candidates)
        Score of every candidate label (columns) at each round (rows), e.g. ``predict_proba``
        of the streamed rows.
    tau_star : float, optional
        Oracle threshold; the running average size of the oracle sets ``{y : f >= tau*}`` is
        drawn as a dashed black line (the smallest sets with coverage ``1 - alpha``).
    ax : matplotlib.axes.Axes, optional
        Axes to draw on; default: a new figure.

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import numpy as np
    >>> from sklearn_riskcontrol.online import simulate_thresholds
    >>> from sklearn_riskcontrol.plotting import plot_set_size
    >>> rng = np.random.default_rng(0)
    >>> S = rng.dirichlet(np.ones(5), size=1000)  # candidate scores, 5 labels
    >>> y = np.array([rng.choice(5, p=p) for p in S])
    >>> tau = simulate_thresholds(S[np.arange(1000), y], 0.2)
    >>> ax = plot_set_size({"sps": tau}, S, tau_star=0.1)
    >>> len(ax.get_lines()), ax.get_ylabel()
    (2, 'running average set size')
    >>> import matplotlib.pyplot as plt; plt.close(ax.figure)
    """
    n_rounds = np.shape(candidate_scores)[0] if np.ndim(candidate_scores) == 2 else None
    if n_rounds is not None and np.size(candidate_scores) == 0:
        raise ValueError(
            f"`candidate_scores` is empty (shape {np.shape(candidate_scores)}); at least one "
            "round and one candidate label are required."
        )
    curves = _threshold_curves(thresholds_by_strategy, n_rounds, "`candidate_scores`")
    tau_star = _check_tau_star(tau_star)
    sizes = [(label, set_sizes(candidate_scores, tau)) for label, tau in curves]
    ax = get_ax(ax)
    t = _rounds(n_rounds)
    for label, size in sizes:
        ax.plot(t, np.cumsum(size) / t, label=label)
    if tau_star is not None:
        oracle = np.cumsum(set_sizes(candidate_scores, tau_star)) / t
        ax.plot(t, oracle, color="black", linestyle="--", linewidth=1, label="oracle tau*")
    return finish_axes(ax, "round t", "running average set size")


def plot_regret(
    thresholds_by_strategy: Mapping[str, ArrayLike] | ArrayLike,
    reference: ArrayLike | Callable[..., ArrayLike],
    alpha: float,
    tau_star: float | None = None,
    *,
    lambda1: float = 0.1,
    lambda2: float = 10.0,
    yscale: str = "linear",
    ax: Axes | None = None,
) -> Axes:
    """Cumulative regret of each strategy against the oracle threshold (paper Sec. 5).

    The loss of a threshold is ``lambda1 |G(tau) - alpha|`` when it over-covers and
    ``lambda2 |G(tau) - alpha|`` when it under-covers, with ``G(tau) = P[s < tau]``; see
    :func:`~sklearn_riskcontrol.online.cumulative_regret`.

    Parameters
    ----------
    thresholds_by_strategy : dict of {str: array-like of shape (n_rounds,)} or array-like
        Thresholds published at each round, keyed by the legend label.
    reference : array-like of shape (n,) or callable
        The score distribution ``G*``: true-label scores of the full data, or a function
        returning ``P[s < tau]`` for an array of thresholds.
    alpha : float in (0, 1)
        Tolerated miscoverage.
    tau_star : float, optional
        Oracle threshold (default: derived from ``reference``).
    lambda1, lambda2 : float, default=0.1, 10.0
        Weights of over- and under-coverage (the paper's values).
    yscale : {"linear", "log", "symlog"}, default="linear"
        Scale of the regret axis; ``"symlog"`` shows strategies whose regret differs by orders
        of magnitude (the paper plots the regret on a log scale).
    ax : matplotlib.axes.Axes, optional
        Axes to draw on; default: a new figure.

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import numpy as np
    >>> from scipy.stats import norm
    >>> from sklearn_riskcontrol.online import simulate_thresholds
    >>> from sklearn_riskcontrol.plotting import plot_regret
    >>> scores = np.random.default_rng(0).normal(size=2000)
    >>> runs = {s: simulate_thresholds(scores, 0.1, strategy=s) for s in ["sps", "greedy"]}
    >>> ax = plot_regret(runs, norm.cdf, alpha=0.1, yscale="symlog")
    >>> len(ax.get_lines()), ax.get_ylabel()
    (2, 'cumulative regret')
    >>> import matplotlib.pyplot as plt; plt.close(ax.figure)
    """
    curves = _threshold_curves(thresholds_by_strategy)
    if yscale not in ("linear", "log", "symlog"):
        raise ValueError(f"`yscale` must be 'linear', 'log' or 'symlog'; got {yscale!r}.")
    regrets = [
        cumulative_regret(
            tau, reference, alpha, tau_star=tau_star, lambda1=lambda1, lambda2=lambda2
        )
        for _, tau in curves
    ]
    ax = get_ax(ax)
    for (label, _), regret in zip(curves, regrets):
        ax.plot(_rounds(len(regret)), regret, label=label)
    ax.set_yscale(yscale)
    return finish_axes(ax, "round t", "cumulative regret")
