"""Helpers for meta-estimators that wrap already fitted models (shared by every estimator)."""

import types

import numpy as np
import scipy.sparse as sp
from joblib import effective_n_jobs, wrap_non_picklable_objects
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.utils import _safe_indexing, get_tags
from sklearn.utils.parallel import Parallel, delayed  # propagate sklearn's config to workers
from sklearn.utils.validation import check_is_fitted

__all__ = [
    "is_fitted",
    "fit_clone",
    "chunked_call",
    "portable",
    "copy_feature_info",
    "n_rows",
    "indexable_rows",
    "tags_or_none",
]


def is_fitted(estimator):
    """True if ``estimator`` is a fitted scikit-learn estimator."""
    try:
        check_is_fitted(estimator)
    except (NotFittedError, TypeError):
        return False
    return True


def fit_clone(estimator, X, y, name):
    """Fit a clone of an unfitted ``estimator`` (the user's object is never modified)."""
    if not hasattr(estimator, "fit"):
        raise TypeError(f"`{name}` must be a scikit-learn estimator with `fit`; got {estimator!r}.")
    return clone(estimator).fit(X, y)


def indexable_rows(X):
    """``X`` in a form whose rows can be selected (sparse formats such as DIA/COO become CSR)."""
    if sp.issparse(X) and X.format not in ("csr", "csc"):
        return X.tocsr()
    return X


def n_rows(X):
    """Number of rows of array-like or DataFrame ``X``."""
    return X.shape[0] if hasattr(X, "shape") else len(X)


def portable(func):
    """``func``, made picklable by the standard pickle if it is a lambda or a local function.

    Such functions travel by cloudpickle so that every joblib backend (multiprocessing too) can
    run them; module-level functions, bound methods and other objects are returned unchanged
    (keeping joblib's memory-mapping / Dask's scattering of the arrays they hold).
    """
    qualname = getattr(func, "__qualname__", "")
    if isinstance(func, types.FunctionType) and ("<lambda>" in qualname or "<locals>" in qualname):
        return wrap_non_picklable_objects(func)
    return func


def _apply(func, X):
    return func(X)


def chunked_call(func, X, n_jobs=None):
    """``func(X)`` evaluated on row chunks of ``X`` in parallel with joblib, concatenated.

    Used for per-sample predictions and per-test-point e-value work, which are independent across
    rows; any joblib backend (loky, threading, dask, ray) can run it.
    """
    n = n_rows(X)
    # n_jobs=None follows joblib: 1 unless a parallel_config(n_jobs=...) context says otherwise.
    n_chunks = min(effective_n_jobs(n_jobs), n)
    if n_chunks < 2:
        return func(X)
    X = indexable_rows(X)
    bounds = np.linspace(0, n, n_chunks + 1).astype(int)
    task = portable(func)  # an argument of a module-level function, so it pickles as wrapped
    # Threads by default: the chunks are NumPy / scikit-learn work that releases the GIL, and
    # processes would copy every chunk (benchmarks/bench_scaling.py: 1.5x with threads vs 0.7x
    # with loky on 2 cores). A parallel_config(backend=...) context still chooses the backend.
    parts = Parallel(n_jobs=n_jobs, prefer="threads")(
        delayed(_apply)(task, _safe_indexing(X, np.arange(a, b)))
        for a, b in zip(bounds[:-1], bounds[1:])
    )
    return np.concatenate([np.asarray(p) for p in parts])


def copy_feature_info(target, model, X):
    """Set ``n_features_in_`` / ``feature_names_in_`` on ``target`` from the wrapped model or X."""
    for attr in ("n_features_in_", "feature_names_in_"):
        if hasattr(target, attr):
            delattr(target, attr)
    if hasattr(model, "n_features_in_"):
        target.n_features_in_ = model.n_features_in_
    elif hasattr(X, "shape") and len(X.shape) == 2:
        target.n_features_in_ = X.shape[1]
    if hasattr(model, "feature_names_in_"):
        target.feature_names_in_ = model.feature_names_in_


def tags_or_none(obj):
    """scikit-learn tags of ``obj``, or None for strings, callables and duck-typed models."""
    if not hasattr(obj, "__sklearn_tags__"):
        return None
    try:
        return get_tags(obj)
    except (AttributeError, TypeError):
        return None
