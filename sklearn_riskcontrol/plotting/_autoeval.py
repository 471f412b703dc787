"""Figures of R-Eval / R-AutoEval / R-AutoEval+: the e-process, the reliance weights, a monitor.

:func:`plot_eprocess` and :func:`plot_rho_weights` take an
:class:`~sklearn_riskcontrol.autoeval.RAutoEvalResult` (from
:func:`~sklearn_riskcontrol.autoeval.rautoeval_test`) or a fitted
:class:`~sklearn_riskcontrol.autoeval.RAutoEvalPlus` (its ``result_``);
:func:`plot_risk_monitor` a :class:`~sklearn_riskcontrol.autoeval.RiskMonitor` that has seen
rows. Each returns the matplotlib axes it drew on.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from .._validation import check_level
from ..autoeval import RAutoEvalResult, RiskMonitor
from ._common import finish_axes, get_ax

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["plot_eprocess", "plot_rho_weights", "plot_risk_monitor"]

_NAMES = {"plus": "R-AutoEval+", "autoeval": "R-AutoEval", "eval": "R-Eval"}


def _as_result(obj, name):
    if isinstance(obj, RAutoEvalResult):
        return obj
    res = getattr(obj, "result_", None)
    if isinstance(res, RAutoEvalResult):
        return res
    raise TypeError(
        f"`{name}` must be an RAutoEvalResult (from rautoeval_test) or a fitted RAutoEvalPlus; "
        f"got {type(obj).__name__}."
    )


def plot_eprocess(result: Any, delta: float | None = None, ax: Axes | None = None) -> Axes:
    """Log e-process ``log E_i`` against the number of labeled examples, with ``log(1/delta)``.

    The risk is certified at level ``delta`` as soon as the curve reaches the dashed line (by
    Ville's inequality the probability that it ever does when the risk exceeds ``alpha`` is at
    most ``delta``); a dot marks the first crossing.

    Parameters
    ----------
    result : RAutoEvalResult, fitted RAutoEvalPlus, or dict of {str: either}
        One test, or several keyed by their legend label (e.g. R-Eval, R-AutoEval and
        R-AutoEval+ on the same data). A single result is labeled by its method.
    delta : float in (0, 1), optional
        Level of the threshold line; default: the results' ``delta`` (they must agree).
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
    >>> from sklearn_riskcontrol.autoeval import rautoeval_test
    >>> from sklearn_riskcontrol.plotting import plot_eprocess
    >>> rng = np.random.default_rng(0)
    >>> h = rng.binomial(1, 0.05, 300).astype(float)
    >>> g = np.where(rng.random(300) < 0.95, h, 1 - h)
    >>> hu = rng.binomial(1, 0.05, 3000)
    >>> u = np.where(rng.random(3000) < 0.95, hu, 1 - hu).astype(float)
    >>> runs = {m: rautoeval_test(h, g, u, alpha=0.12, delta=0.1, method=m)
    ...         for m in ["eval", "autoeval", "plus"]}
    >>> ax = plot_eprocess(runs)
    >>> len(ax.get_lines())      # three curves, three crossing dots, the threshold line
    7
    >>> import matplotlib.pyplot as plt; plt.close(ax.figure)
    """
    if isinstance(result, Mapping):
        if not result:
            raise ValueError("`result` is empty: pass at least one test result.")
        items = [(str(k), _as_result(v, f"result[{k!r}]")) for k, v in result.items()]
    else:
        res = _as_result(result, "result")
        items = [(_NAMES.get(res.method, res.method), res)]
    if delta is None:
        deltas = {float(r.delta) for _, r in items}
        if len(deltas) > 1:
            raise ValueError(
                f"The results were run at different deltas {sorted(deltas)}; pass `delta` for "
                "the threshold line."
            )
        delta = deltas.pop()
    delta = check_level(delta, "delta")
    ax = get_ax(ax)
    log_threshold = np.log(1.0 / delta)
    for label, res in items:
        log_e = res.log_eprocess
        rounds = np.arange(1, log_e.size + 1)
        (line,) = ax.plot(rounds, log_e, label=label)
        hit = np.flatnonzero(log_e >= log_threshold)
        if hit.size:
            i = int(hit[0])
            ax.plot([i + 1], [log_e[i]], "o", color=line.get_color())
    ax.axhline(log_threshold, color="k", linestyle="--", linewidth=1,
               label=f"log(1/delta), delta={delta:g}")
    return finish_axes(ax, "labeled examples i", "log e-process  log E_i")


def _edges(values):
    """Cell edges around sorted centres (midpoints; half a step beyond the ends)."""
    v = np.asarray(values, dtype=float)
    if v.size == 1:
        return np.array([v[0] - 0.5, v[0] + 0.5])
    mid = (v[1:] + v[:-1]) / 2
    return np.concatenate([[v[0] - (mid[0] - v[0])], mid, [v[-1] + (v[-1] - mid[-1])]])


def plot_rho_weights(result: Any, ax: Axes | None = None, colorbar: bool = True) -> Axes:
    """Heatmap of R-AutoEval+'s weights ``w_s,i`` over reliance factors and rounds (Fig. 2).

    Row ``s`` is the reliance factor ``rho_s`` (0 = labels only, as R-Eval; 1 = full trust in
    the auto-evaluator, as R-AutoEval); column ``i`` the round. The weights move to the factors
    whose e-processes grow fastest, i.e. to how much the auto-evaluator deserves to be trusted.

    Parameters
    ----------
    result : RAutoEvalResult or fitted RAutoEvalPlus
    ax : matplotlib.axes.Axes, optional
        Axes to draw on; default: a new figure.
    colorbar : bool, default=True
        Add a colour bar next to ``ax``.

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import numpy as np
    >>> from sklearn_riskcontrol.autoeval import rautoeval_test
    >>> from sklearn_riskcontrol.plotting import plot_rho_weights
    >>> rng = np.random.default_rng(0)
    >>> h = rng.binomial(1, 0.1, 500).astype(float)
    >>> g = np.where(rng.random(500) < 0.9, h, 1 - h)
    >>> hu = rng.binomial(1, 0.1, 5000)
    >>> u = np.where(rng.random(5000) < 0.9, hu, 1 - hu).astype(float)
    >>> ax = plot_rho_weights(rautoeval_test(h, g, u, alpha=0.12, delta=0.1))
    >>> ax.get_ylabel()
    'reliance factor rho'
    >>> import matplotlib.pyplot as plt; plt.close(ax.figure)
    """
    res = _as_result(result, "result")
    ax = get_ax(ax)
    w = res.rho_weights
    order = np.argsort(res.rho_grid, kind="stable")
    rho = res.rho_grid[order]
    x_edges = np.arange(w.shape[1] + 1) + 0.5
    mesh = ax.pcolormesh(x_edges, _edges(rho), w[order], shading="flat", cmap="viridis",
                         vmin=0.0)
    if colorbar:
        ax.figure.colorbar(mesh, ax=ax, label="weight w_s,i")
    return finish_axes(ax, "round i", "reliance factor rho")


def plot_risk_monitor(monitor: RiskMonitor, kind: str = "evidence", ax: Axes | None = None) -> Axes:
    """A :class:`~sklearn_riskcontrol.autoeval.RiskMonitor`'s stream: its evidence or its risk.

    ``kind="evidence"``: the log e-process after each row with the alarm threshold
    ``log(1 / delta)`` and a dot where the alarm fired. ``kind="risk"``: the running confidence
    sequence on the risk (:meth:`RiskMonitor.confidence_sequence`) with ``alpha`` and the alarm
    row.

    Parameters
    ----------
    monitor : RiskMonitor
        A monitor that has seen rows (``partial_fit`` or ``fit``).
    kind : {"evidence", "risk"}, default="evidence"
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
    >>> from sklearn_riskcontrol.autoeval import RiskMonitor
    >>> from sklearn_riskcontrol.plotting import plot_risk_monitor
    >>> rng = np.random.default_rng(0)
    >>> loss = (rng.random(8000) < np.where(np.arange(8000) < 3000, 0.05, 0.2)).astype(float)
    >>> judge = np.where(rng.random(8000) < 0.9, loss, 1 - loss)
    >>> labels = np.where(rng.random(8000) < 0.1, loss, np.nan)
    >>> monitor = RiskMonitor(alpha=0.1, delta=0.1, label_rate=0.1).fit(judge, labels)
    >>> ax = plot_risk_monitor(monitor)
    >>> ax.get_xlabel()
    'stream row t'
    >>> import matplotlib.pyplot as plt; plt.close(ax.figure)
    """
    if not isinstance(monitor, RiskMonitor):
        raise TypeError(f"`monitor` must be a RiskMonitor; got {type(monitor).__name__}.")
    if kind not in ("evidence", "risk"):
        raise ValueError(f"`kind` must be 'evidence' or 'risk'; got {kind!r}.")
    if not getattr(monitor, "n_rows_", 0):
        raise ValueError("This RiskMonitor has seen no rows yet: call partial_fit first.")
    ax = get_ax(ax)
    rows = np.arange(monitor.n_rows_)
    alarm = monitor.alarm_index_
    if kind == "evidence":
        log_e = monitor.log_eprocess_
        ax.plot(rows, log_e, label=f"{monitor.mode_} mode")
        ax.axhline(np.log(1.0 / monitor.delta), color="k", linestyle="--", linewidth=1,
                   label=f"alarm threshold log(1/delta), delta={monitor.delta:g}")
        if alarm is not None:
            ax.plot([alarm], [log_e[alarm]], "o", color="C3", label=f"alarm at row {alarm}")
        return finish_axes(ax, "stream row t", "log e-process")
    low, high = monitor.confidence_sequence()
    ax.fill_between(rows, low, high, alpha=0.3, label=f"confidence sequence ({monitor.mode_})")
    ax.axhline(monitor.alpha, color="k", linestyle="--", linewidth=1,
               label=f"alpha = {monitor.alpha:g}")
    if alarm is not None:
        ax.axvline(alarm, color="C3", linewidth=1, label=f"alarm at row {alarm}")
    return finish_axes(ax, "stream row t", "risk")
