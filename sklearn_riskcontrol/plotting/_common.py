"""Shared pieces of the plotting modules: lazy matplotlib import and axes handling.

matplotlib is an optional dependency (the ``plot`` extra). Nothing here imports it at module
import time, so ``import sklearn_riskcontrol.plotting`` works without it; the plotting functions
call :func:`import_pyplot` first and fail with an actionable message when it is missing.
"""

import numbers
from collections.abc import Mapping

import numpy as np

__all__ = ["MATPLOTLIB_MISSING", "import_pyplot", "get_ax", "as_curves"]

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


def as_curves(curves, name):
    """Normalise ``{label: 1-d array}`` (or one bare 1-d array) to a list of (label, array).

    A bare array gets the label ``None`` (no legend entry). Values are converted to float arrays;
    each must be 1-d and non-empty.
    """
    if isinstance(curves, Mapping):
        items = list(curves.items())
    elif isinstance(curves, (str, bytes, numbers.Number)):
        raise TypeError(
            f"`{name}` must be a dict {{label: 1-d array}} or one 1-d array; got {curves!r}."
        )
    else:
        items = [(None, curves)]
    if not items:
        raise ValueError(f"`{name}` is empty: pass at least one curve.")
    out = []
    for label, values in items:
        where = f"`{name}`" if label is None else f"`{name}[{label!r}]`"
        try:
            arr = np.asarray(values, dtype=float)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"{where} must be a 1-d array of numbers ({exc}).") from None
        if arr.ndim != 1 or arr.size == 0:
            raise ValueError(f"{where} must be a non-empty 1-d array; got shape {arr.shape}.")
        out.append((None if label is None else str(label), arr))
    return out
