"""Shared pieces of the plotting modules: lazy matplotlib import and axes handling.

matplotlib is an optional dependency (the ``plot`` extra). Nothing here imports it at module
import time, so ``import sklearn_riskcontrol.plotting`` works without it; the plotting functions
validate their inputs, then call :func:`get_ax` (hence :func:`import_pyplot`), which fails with
an actionable message when matplotlib is missing.
"""

import numbers
from collections.abc import Mapping

from .._validation import as_float_array

__all__ = ["MATPLOTLIB_MISSING", "import_pyplot", "get_ax", "finish_axes", "as_curves"]

MATPLOTLIB_MISSING = "plotting needs matplotlib: pip install 'sklearn-riskcontrol[plot]'"


def import_pyplot():
    """Return ``matplotlib.pyplot``, imported on first use.

    Raises
    ------
    ImportError
        If matplotlib is not installed, with the command that installs it.
    """
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise ImportError(MATPLOTLIB_MISSING) from exc
    return plt


def get_ax(ax=None, **subplots_kw):
    """Return ``ax`` when given (checked to be a matplotlib ``Axes``), else a new figure's axes.

    Parameters
    ----------
    ax : matplotlib.axes.Axes, optional
        Axes to draw on.
    **subplots_kw
        Passed to ``plt.subplots`` when a new figure is created (e.g. ``figsize``).

    Returns
    -------
    matplotlib.axes.Axes
    """
    plt = import_pyplot()
    if ax is None:
        _, ax = plt.subplots(**subplots_kw)
        return ax
    from matplotlib.axes import Axes

    if not isinstance(ax, Axes):
        raise TypeError(f"`ax` must be a matplotlib Axes or None; got {type(ax).__name__}.")
    return ax


def finish_axes(ax, xlabel, ylabel, **legend_kw):
    """Set the axis labels and add a legend when some artist has a label; return ``ax``."""
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if ax.get_legend_handles_labels()[1]:
        ax.legend(**legend_kw)
    return ax


def as_curves(curves, name, *, max_ndim=1):
    """Normalise ``{label: array}`` (or one bare array) to a list of (label, float array).

    A bare array gets the label ``None`` (no legend entry). Each array must be non-empty and
    1-d, or up to ``max_ndim``-d (e.g. 2 for Monte-Carlo repetitions x grid points).
    """
    if isinstance(curves, Mapping):
        items = list(curves.items())
    elif isinstance(curves, (str, bytes, numbers.Number)):
        raise TypeError(f"`{name}` must be a dict {{label: array}} or one array; got {curves!r}.")
    else:
        items = [(None, curves)]
    if not items:
        raise ValueError(f"`{name}` is empty: pass at least one curve.")
    out = []
    for label, values in items:
        where = name if label is None else f"{name}[{label!r}]"
        arr = as_float_array(values, where, "an array of real numbers")
        if not 1 <= arr.ndim <= max_ndim or arr.size == 0:
            dims = "1-d" if max_ndim == 1 else f"1-d to {max_ndim}-d"
            raise ValueError(f"`{where}` must be a non-empty {dims} array; got shape {arr.shape}.")
        out.append((None if label is None else str(label), arr))
    return out
