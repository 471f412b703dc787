"""Input checks for score matrices (2-d), shared by the oracles, the strategies and lowrank.

The 1-d checks and the message style come from :mod:`sklearn_riskcontrol._validation`; these add
the matrix-shaped cases (NaN position reported as (model, example), binary scores for the logistic
model).
"""

import numbers

import numpy as np

from .._validation import check_scores

__all__ = ["check_score_matrix", "check_binary", "check_returned_scores"]


def _first_bad(mask):
    i, j = np.unravel_index(int(np.flatnonzero(mask.ravel())[0]), mask.shape)
    return int(i), int(j)


def check_score_matrix(scores, name, *, allow_nan=False, nan_hint=None, lower=0.0, upper=1.0):
    """Return ``scores`` as a 2-d float array with entries in ``[lower, upper]``.

    ``allow_nan=True`` keeps NaN (= missing / not available); otherwise a NaN raises a
    ``ValueError`` that points at the first bad cell and, if given, says how to declare missing
    cells (``nan_hint``). ``lower=None`` skips the range check.
    """
    if isinstance(scores, (str, bytes)):
        raise TypeError(f"`{name}` must be a 2-d array of scores (models x examples); got a string.")
    try:
        arr = np.asarray(scores, dtype=float)
    except (TypeError, ValueError) as exc:
        raise TypeError(
            f"`{name}` must be a 2-d array of numeric scores (models x examples) ({exc})."
        ) from None
    if arr.ndim != 2:
        raise ValueError(
            f"`{name}` must be 2-d (rows = models, columns = examples); got an array of shape "
            f"{arr.shape}."
        )
    if arr.shape[0] == 0 or arr.shape[1] == 0:
        raise ValueError(f"`{name}` is empty (shape {arr.shape}); at least one model and one example are required.")
    nan = np.isnan(arr)
    if nan.any() and not allow_nan:
        i, j = _first_bad(nan)
        msg = (
            f"`{name}` contains {int(nan.sum())} NaN value(s) (first at model {i}, example {j}); "
            "a full score matrix must be complete."
        )
        if nan_hint:
            msg += " " + nan_hint
        raise ValueError(msg)
    inf = np.isinf(arr)
    if inf.any():
        i, j = _first_bad(inf)
        raise ValueError(f"`{name}` must be finite; entry (model {i}, example {j}) is {arr[i, j]!r}.")
    if lower is not None:
        with np.errstate(invalid="ignore"):
            out = (arr < lower) | (arr > upper)
        if out.any():
            i, j = _first_bad(out)
            raise ValueError(
                f"`{name}` must lie in [{lower:g}, {upper:g}]; entry (model {i}, example {j}) is "
                f"{arr[i, j]!r}. Rescale the scores (higher = better) to [0, 1]."
            )
    return arr


def check_binary(values, name, *, hint=None):
    """Raise a ``ValueError`` if the non-NaN entries of ``values`` are not all in {0, 1}."""
    arr = np.asarray(values, dtype=float)
    bad = ~np.isnan(arr) & (arr != 0.0) & (arr != 1.0)
    if bad.any():
        flat = int(np.flatnonzero(bad.ravel())[0])
        where = (
            f"entry (model {flat // arr.shape[1]}, example {flat % arr.shape[1]})"
            if arr.ndim == 2
            else f"entry {flat}"
        )
        msg = (
            f"`{name}` must be binary (0 = wrong, 1 = right) for the logistic low-rank model; "
            f"{where} is {arr.ravel()[flat]!r}."
        )
        if hint:
            msg += " " + hint
        raise ValueError(msg)


def check_returned_scores(values, n_expected, model_index):
    """Validate what a scoring back-end returned for ``n_expected`` examples of one model."""
    name = f"scores returned for model {model_index}"
    if values is None:
        raise TypeError(f"The scoring back-end returned None for model {model_index}; it must return one score per example.")
    arr = check_scores(values, name)
    if arr.shape[0] != n_expected:
        raise ValueError(
            f"The scoring back-end returned {arr.shape[0]} score(s) for model {model_index} but "
            f"{n_expected} example(s) were requested; it must return one score per example."
        )
    out = (arr < 0) | (arr > 1)
    if out.any():
        k = int(np.flatnonzero(out)[0])
        raise ValueError(
            f"`{name}` must lie in [0, 1] (higher = better); position {k} is {arr[k]!r}. "
            "Rescale the scores."
        )
    return arr


def check_index(value, name, upper):
    """Return ``value`` as an int in ``[0, upper)``."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (numbers.Integral, np.integer)):
        raise TypeError(f"`{name}` must be an integer in [0, {upper}); got {value!r}.")
    value = int(value)
    if not 0 <= value < upper:
        raise ValueError(f"`{name}` must lie in [0, {upper}); got {value}.")
    return value


def check_indices(values, name, upper):
    """Return ``values`` as a 1-d int64 array with entries in ``[0, upper)``."""
    arr = np.asarray(values)
    if arr.ndim == 0:
        arr = arr.reshape(1)
    if arr.ndim != 1:
        raise ValueError(f"`{name}` must be 1-d; got an array of shape {arr.shape}.")
    if arr.size and not np.issubdtype(arr.dtype, np.integer):
        raise TypeError(f"`{name}` must contain integer indices; got dtype {arr.dtype}.")
    arr = arr.astype(np.int64, copy=False)
    if arr.size and (arr.min() < 0 or arr.max() >= upper):
        raise ValueError(f"`{name}` must lie in [0, {upper}); got values in [{arr.min()}, {arr.max()}].")
    return arr
