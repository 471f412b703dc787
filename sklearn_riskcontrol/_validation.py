"""Input checks shared by every public function and estimator.

One place for the checks and messages of DESIGN.md "Inputs and errors": every message names the
argument and says what a valid value looks like, so a user never sees a traceback from deep inside
NumPy.
"""

import functools
import numbers
import os
import sys
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
    "check_score_matrix",
    "check_binary",
    "check_returned_scores",
    "check_index",
    "check_indices",
    "as_float_array",
    "check_labels",
    "check_random_state",
    "RANDOM_STATE",
    "show",
]


class RiskControlWarning(UserWarning):
    """Warning raised when nothing can be certified or deployed, saying why.

    The library never raises an exception for a degenerate but legal outcome (too few
    calibration points for the level, nothing certified, nothing deployed): it returns an empty
    or False result and emits this warning, which users can filter or turn into an error with
    ``warnings.simplefilter("error", RiskControlWarning)``.
    """


@functools.lru_cache(maxsize=1)
def _internal_prefixes():
    """Paths of library internals (this package, scikit-learn, joblib, contextlib): a warning
    points past their frames at the user's line. Computed once."""
    import joblib
    import sklearn

    dirs = (os.path.dirname(os.path.abspath(__file__)),) + tuple(
        os.path.dirname(os.path.abspath(m.__file__)) for m in (sklearn, joblib)
    )
    contextlib_py = os.path.join(os.path.dirname(os.path.abspath(warnings.__file__)), "contextlib.py")
    return tuple(d + os.sep for d in dirs) + (contextlib_py, "<frozen ")


def _user_stacklevel():
    """Stack level of the first frame outside this package, scikit-learn and joblib.

    ``fit`` runs under scikit-learn's ``_fit_context`` and work may run through joblib, so a
    fixed ``stacklevel`` would point at ``sklearn/base.py``; walking the stack finds the caller.
    """
    internal = _internal_prefixes()
    frame, level = sys._getframe(2), 2  # level 1 is warn()'s caller, inside the package
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(internal):
        frame, level = frame.f_back, level + 1
    return level if frame is not None else 2


def warn(message, stacklevel=None, category=None):
    """Emit a :class:`RiskControlWarning` (or ``category``) pointing at the user's line.

    ``stacklevel=None`` (the default) finds the first frame outside the library, scikit-learn and
    joblib, so the warning names the user's call even through ``Pipeline`` or ``GridSearchCV``.
    """
    level = _user_stacklevel() if stacklevel is None else stacklevel
    warnings.warn(message, category or RiskControlWarning, stacklevel=level)


def add_note(exc, note):
    """Attach ``note`` to the exception ``exc`` (PEP 678), on every supported Python.

    Python >= 3.11 has ``BaseException.add_note`` (tracebacks print the note); on 3.10 the note
    is stored the same way, in ``exc.__notes__``, where handlers and test runners read it.
    """
    if hasattr(exc, "add_note"):
        exc.add_note(note)
    else:  # Python 3.10
        notes = getattr(exc, "__notes__", None)
        exc.__notes__ = [*(notes or []), note]


def show(value):
    """``repr`` of a user's value for a message, with NumPy scalars shown as plain Python ones.

    NumPy 2 prints ``np.float64(0.5)``; a message should say ``0.5``.
    """
    return repr(value.item() if isinstance(value, np.generic) else value)


#: ``_parameter_constraints`` entry for ``random_state``: scikit-learn's forms plus a Generator.
RANDOM_STATE = ["random_state", np.random.Generator]


def check_random_state(random_state):
    """Return a ``numpy.random.RandomState`` for every form users pass as ``random_state``.

    Accepts what :func:`sklearn.utils.check_random_state` accepts (None, an int, a
    ``RandomState``) and also a ``numpy.random.Generator``, which seeds a new ``RandomState``
    by drawing from it (so the Generator advances, and a seeded Generator stays reproducible).
    """
    from sklearn.utils import check_random_state as sk_check_random_state

    if isinstance(random_state, np.random.Generator):
        return np.random.RandomState(int(random_state.integers(0, 2**32 - 1, dtype=np.uint64)))
    if isinstance(random_state, np.random.SeedSequence):
        return np.random.RandomState(np.random.MT19937(random_state))
    try:
        return sk_check_random_state(random_state)
    except ValueError:
        raise ValueError(
            "`random_state` must be None, an int, a numpy.random.RandomState or a "
            f"numpy.random.Generator; got {show(random_state)}."
        ) from None


def check_level(value, name, *, low=0.0, high=1.0):
    """Return ``value`` as a float in the open interval ``(low, high)``.

    Used for ``alpha`` (tolerated risk / miscoverage), ``delta`` (failure probability) and
    ``gamma``.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"`{name}` must be a real number in ({low:g}, {high:g}); got {show(value)}.")
    value = float(value)
    if not (low < value < high):
        raise ValueError(
            f"`{name}` must lie in the open interval ({low:g}, {high:g}); got {show(value)}."
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
        raise TypeError(f"`{name}` must be {_kind(integer, minimum, exclusive, allow_none)}; got {show(value)}.")
    value = int(value) if integer else float(value)
    too_small = minimum is not None and (value <= minimum if exclusive else value < minimum)
    if too_small or not np.isfinite(value):
        raise ValueError(f"`{name}` must be {_kind(integer, minimum, exclusive, allow_none)}; got {show(value)}.")
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
    arr = as_float_array(values, name, "a 1-d array of numbers")
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


# ------------------------------------------------------------------ score matrices (bandits)
def _position(arr, k):
    """Readable position of the flat index ``k``: ``entry (model i, example j)`` or ``entry k``."""
    if arr.ndim == 2:
        i, j = divmod(int(k), arr.shape[1])
        return f"entry (model {i}, example {j})"
    return f"entry {int(k)}"


def _check_score_range(arr, name, lower=0.0, upper=1.0):
    """Raise if a non-NaN entry of ``arr`` lies outside ``[lower, upper]``."""
    with np.errstate(invalid="ignore"):
        out = (arr < lower) | (arr > upper)
    if out.any():
        k = int(np.flatnonzero(out.ravel())[0])
        raise ValueError(
            f"`{name}` must lie in [{lower:g}, {upper:g}]; {_position(arr, k)} is "
            f"{float(arr.ravel()[k])!r}. Rescale the scores (higher = better) to [0, 1]."
        )


def check_score_matrix(scores, name, *, allow_nan=False, nan_hint=None, lower=0.0, upper=1.0):
    """Return a models x examples score matrix as a 2-d float array with entries in ``[lower, upper]``.

    ``allow_nan=True`` keeps NaN (= missing); otherwise a NaN raises a ``ValueError`` naming the
    first bad cell and, if given, how to declare missing cells (``nan_hint``). ``lower=None``
    skips the range check.
    """
    arr = as_float_array(scores, name, "a 2-d array of numeric scores (models x examples)")
    if arr.ndim != 2:
        raise ValueError(
            f"`{name}` must be 2-d (rows = models, columns = examples); got an array of shape "
            f"{arr.shape}."
        )
    if arr.size == 0:
        raise ValueError(
            f"`{name}` is empty (shape {arr.shape}); at least one model and one example are required."
        )
    nan = np.isnan(arr)
    if nan.any() and not allow_nan:
        k = int(np.flatnonzero(nan.ravel())[0])
        msg = (
            f"`{name}` contains {int(nan.sum())} NaN value(s) (first at {_position(arr, k)}); "
            "a full score matrix must be complete."
        )
        raise ValueError(msg + (" " + nan_hint if nan_hint else ""))
    inf = np.isinf(arr)
    if inf.any():
        k = int(np.flatnonzero(inf.ravel())[0])
        raise ValueError(f"`{name}` must be finite; {_position(arr, k)} is {float(arr.ravel()[k])!r}.")
    if lower is not None:
        _check_score_range(arr, name, lower, upper)
    return arr


def check_binary(values, name, *, hint=None):
    """Raise a ``ValueError`` unless every non-NaN entry of ``values`` is 0 or 1."""
    arr = np.asarray(values, dtype=float)
    bad = ~np.isnan(arr) & (arr != 0.0) & (arr != 1.0)
    if bad.any():
        k = int(np.flatnonzero(bad.ravel())[0])
        msg = (
            f"`{name}` must be binary (0 = wrong, 1 = right) for the logistic low-rank model; "
            f"{_position(arr, k)} is {float(arr.ravel()[k])!r}."
        )
        raise ValueError(msg + (" " + hint if hint else ""))


def check_returned_scores(values, n_expected, model_index):
    """Check what a scoring back-end returned for ``n_expected`` examples of one model."""
    if values is None:
        raise TypeError(
            f"The scoring back-end returned None for model {model_index}; it must return one "
            "score per example."
        )
    name = f"scores returned for model {model_index}"
    arr = check_scores(values, name)
    if arr.shape[0] != n_expected:
        raise ValueError(
            f"The scoring back-end returned {arr.shape[0]} score(s) for model {model_index} but "
            f"{n_expected} example(s) were requested; it must return one score per example."
        )
    _check_score_range(arr, name)
    return arr


def check_index(value, name, upper):
    """Return ``value`` as an int in ``[0, upper)``."""
    value = check_number(value, name, integer=True)
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
        raise ValueError(
            f"`{name}` must lie in [0, {upper}); got values in [{arr.min()}, {arr.max()}]."
        )
    return arr


def as_float_array(values, name, what="an array of numbers"):
    """Return ``values`` as a float ndarray (any ndim), naming ``name`` in every error.

    Strings and non-numeric entries raise ``TypeError``; complex numbers (which NumPy would cast
    by silently dropping the imaginary part) raise ``ValueError`` with scikit-learn's wording.
    """
    if isinstance(values, (str, bytes)):
        raise TypeError(f"`{name}` must be {what}; got a string.")
    try:
        raw = np.asarray(values)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"`{name}` must be {what} ({exc}).") from None
    if raw.dtype.kind == "c":
        raise ValueError(f"`{name}` must be {what}; Complex data not supported (dtype {raw.dtype}).")
    if raw.dtype.kind in "US":
        raise TypeError(f"`{name}` must be {what}; got strings (dtype {raw.dtype}).")
    try:
        return raw.astype(float, copy=False)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"`{name}` must be {what} ({exc}).") from None


def check_labels(y, name="y"):
    """Return targets ``y`` as an array, raising (naming ``name``) on complex values, NaN or inf.

    Labels of any kind (ints, strings, floats) pass; only non-finite numbers and complex dtypes,
    which no classifier or bounded risk can use, are rejected.
    """
    arr = np.asarray(y)
    if arr.dtype.kind == "O":
        # None / pandas.NA / NaN in object labels are missing values, treated like NaN in floats.
        import pandas as pd

        missing = np.asarray(pd.isna(arr), dtype=bool)
        if missing.any():
            i = int(np.flatnonzero(missing.ravel())[0])
            raise ValueError(
                f"`{name}` has a missing label (None/NaN) at entry {i} ({int(missing.sum())} in "
                "total); drop those rows or fill them before calling."
            )
    if arr.dtype.kind == "c":
        raise ValueError(f"`{name}` must be real: Complex data not supported (dtype {arr.dtype}).")
    if arr.dtype.kind == "f" and not np.isfinite(arr).all():
        i = int(np.flatnonzero(~np.isfinite(arr.ravel()))[0])
        raise ValueError(f"`{name}` must be finite; entry {i} is {float(arr.ravel()[i])!r}.")
    return arr
