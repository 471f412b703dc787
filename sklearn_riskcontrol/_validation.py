"""Input checks shared by every public function and estimator.

One place for the checks and messages of DESIGN.md "Inputs and errors": every message names the
argument and says what a valid value looks like, so a user never sees a traceback from deep inside
NumPy.
"""

import numbers
import warnings

import numpy as np

__all__ = [
    "RiskControlWarning",
    "check_level",
    "check_number",
    "check_risks",
    "check_scores",
    "check_weights",
    "check_same_length",
    "check_nonempty",
]


class RiskControlWarning(UserWarning):
    """Warning raised when nothing can be certified or deployed, saying why.

    The library never raises an exception for a degenerate but legal outcome (too few
    calibration points for the level, nothing certified, nothing deployed): it returns an empty
    or False result and emits this warning, which users can filter or turn into an error with
    ``warnings.simplefilter("error", RiskControlWarning)``.
    """


def warn(message, stacklevel=3):
    """Emit a :class:`RiskControlWarning`; ``stacklevel`` should point at the user's call."""
    warnings.warn(message, RiskControlWarning, stacklevel=stacklevel)


def check_level(value, name, *, low=0.0, high=1.0):
    """Return ``value`` as a float in the open interval ``(low, high)``.

    Used for ``alpha`` (tolerated risk / miscoverage), ``delta`` (failure probability) and
    ``gamma``.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"`{name}` must be a real number in ({low:g}, {high:g}); got {value!r}.")
    value = float(value)
    if not (low < value < high):
        raise ValueError(
            f"`{name}` must lie in the open interval ({low:g}, {high:g}); got {value!r}."
        )
    return value


def check_number(value, name, *, integer=False, minimum=None, exclusive=False, allow_none=False):
    """Return a scalar parameter checked to be a finite real (or integer) at/above ``minimum``.

    ``exclusive=True`` requires ``value > minimum``. Booleans are rejected (``True`` is not a
    count). The message names the argument and the expected kind of value.
    """
    if value is None and allow_none:
        return None
    expected = numbers.Integral if integer else numbers.Real
    if isinstance(value, bool) or not isinstance(value, expected):
        raise TypeError(f"`{name}` must be {_kind(integer, minimum, exclusive, allow_none)}; got {value!r}.")
    value = int(value) if integer else float(value)
    too_small = minimum is not None and (value <= minimum if exclusive else value < minimum)
    if too_small or not np.isfinite(value):
        raise ValueError(f"`{name}` must be {_kind(integer, minimum, exclusive, allow_none)}; got {value!r}.")
    return value


def _kind(integer, minimum, exclusive, allow_none):
    noun = "integer" if integer else "finite number"
    if minimum == 0:
        kind = f"a {'positive' if exclusive else 'non-negative'} {noun}"
    elif minimum == 1 and integer and not exclusive:
        kind = "a positive integer"
    elif minimum is not None:
        kind = f"{'an integer' if integer else 'a finite number'} {'>' if exclusive else '>='} {minimum:g}"
    else:
        kind = "an integer" if integer else "a finite real number"
    return kind + (" or None" if allow_none else "")


def _as_1d_float(values, name):
    if isinstance(values, (str, bytes)):
        raise TypeError(f"`{name}` must be a 1-d array of numbers; got a string.")
    try:
        arr = np.asarray(values, dtype=float)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"`{name}` must be a 1-d array of numbers ({exc}).") from None
    if arr.ndim == 0:
        arr = arr.reshape(1)
    if arr.ndim != 1:
        if arr.ndim == 2 and 1 in arr.shape:
            arr = arr.ravel()
        else:
            raise ValueError(f"`{name}` must be 1-d; got an array of shape {arr.shape}.")
    return arr


def check_scores(values, name):
    """Return finite scores as a 1-d float array."""
    arr = _as_1d_float(values, name)
    bad = ~np.isfinite(arr)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"`{name}` must be finite; entry {i} is {float(arr[i])!r} "
            f"({int(bad.sum())} non-finite value(s) in total)."
        )
    return arr


def check_risks(values, name):
    """Return per-sample risks/losses as a 1-d float array, checked to lie in [0, 1]."""
    arr = _as_1d_float(values, name)
    if np.isnan(arr).any():
        i = int(np.flatnonzero(np.isnan(arr))[0])
        raise ValueError(f"`{name}` contains NaN (first at entry {i}); risks must lie in [0, 1].")
    out = (arr < 0) | (arr > 1)
    if out.any():
        i = int(np.flatnonzero(out)[0])
        raise ValueError(
            f"`{name}` must lie in [0, 1]; entry {i} is {float(arr[i])!r}. Rescale or clip the loss "
            "(e.g. make_risk('squared', scale=...)) so that it is bounded by 1."
        )
    return arr


def check_weights(values, name, n):
    """Return strictly positive finite weights of length ``n`` (``None`` stays ``None``)."""
    if values is None:
        return None
    arr = _as_1d_float(values, name)
    if arr.shape[0] != n:
        raise ValueError(f"`{name}` has {arr.shape[0]} entries; expected {n}.")
    bad = ~np.isfinite(arr) | (arr <= 0)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"`{name}` must be strictly positive and finite (covariate-shift density ratios); "
            f"entry {i} is {float(arr[i])!r}."
        )
    return arr


def check_same_length(**arrays):
    """Raise if the named 1-d arrays do not all have the same length."""
    lengths = {name: len(a) for name, a in arrays.items()}
    if len(set(lengths.values())) > 1:
        desc = ", ".join(f"`{k}` has {v}" for k, v in lengths.items())
        raise ValueError(f"Mismatched lengths: {desc}; they must be equal.")


def check_nonempty(arr, name, what="calibration"):
    """Raise if ``arr`` has no entries."""
    if len(arr) == 0:
        raise ValueError(f"`{name}` is empty: at least one {what} point is required.")
