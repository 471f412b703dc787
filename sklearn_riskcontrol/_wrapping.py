"""Helpers for meta-estimators that wrap already fitted models (shared by every estimator)."""

from __future__ import annotations

import types
from contextlib import nullcontext
from typing import Any

import numpy as np
import scipy.sparse as sp
from joblib import effective_n_jobs, parallel_config, wrap_non_picklable_objects
from joblib._parallel_backends import (
    LokyBackend,
    MultiprocessingBackend,
    SequentialBackend,
    ThreadingBackend,
)
from joblib.parallel import get_active_backend
from numpy.typing import ArrayLike, NDArray
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.utils import _safe_indexing, get_tags
from sklearn.utils.metaestimators import available_if
from sklearn.utils.parallel import Parallel, delayed  # propagate sklearn's config to workers
from sklearn.utils.validation import check_is_fitted

from ._typing import FloatArray

__all__ = [
    "is_fitted",
    "needs_fitting",
    "fit_clone",
    "DelegatesPredictions",
    "DelegatesToModel",
    "wrapped_estimator",
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


def needs_fitting(obj):
    """True if ``obj`` is an unfitted scikit-learn estimator, which a meta-estimator fits a clone
    of; fitted estimators, duck-typed models (no ``get_params``), callables and None are used
    as they are."""
    return hasattr(obj, "fit") and hasattr(obj, "get_params") and not is_fitted(obj)


def fit_clone(estimator, X, y, name):
    """Fit a clone of an unfitted ``estimator`` (the user's object is never modified)."""
    if not hasattr(estimator, "fit"):
        raise TypeError(f"`{name}` must be a scikit-learn estimator with `fit`; got {estimator!r}.")
    return clone(estimator).fit(X, y)


def _forwarded(name):
    """``available_if`` check of the forwarded method ``name``: see
    :class:`DelegatesPredictions`."""

    def check(self):
        return name in self._always_forwarded or all(
            hasattr(target, name) for target in self._delegation_targets()
        )

    return check


class DelegatesPredictions:
    """Mixin: ``predict`` and ``predict_proba`` forwarded to the one model the estimator serves.

    The class defines ``_delegate()``, which runs its own fitted check and returns the fitted
    model to call, and ``_delegation_targets()``: what that model will be, read without calling
    anything (the fitted model(s), or before ``fit`` the parameter(s) they come from). A
    forwarded method exists when each target has it, as scikit-learn's meta-estimators do.
    """

    # Methods offered whatever the targets hold: a class whose `estimator` must have `predict`
    # offers it even before it holds one (e.g. an RAutoEvalPlus(None) tester template).
    _always_forwarded: tuple[str, ...] = ()

    @available_if(_forwarded("predict"))
    def predict(self, X: ArrayLike) -> NDArray[Any]:
        """Predictions of the model this estimator forwards to (the wrapped or selected one).

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,) or (n_samples, n_outputs)
            That model's predictions, unchanged: what the estimator certifies is reported by
            its other methods and fitted attributes.
        """
        return self._delegate().predict(X)

    @available_if(_forwarded("predict_proba"))
    def predict_proba(self, X: ArrayLike) -> FloatArray:
        """Class probabilities of the model this estimator forwards to (the wrapped or selected
        one).

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
        """
        return self._delegate().predict_proba(X)


class DelegatesToModel(DelegatesPredictions):
    """Mixin: :class:`DelegatesPredictions`, plus ``predict_log_proba``, ``decision_function``
    and ``score``."""

    @available_if(_forwarded("predict_log_proba"))
    def predict_log_proba(self, X: ArrayLike) -> FloatArray:
        """Log class probabilities of the model this estimator forwards to (the wrapped or
        selected one).

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
        """
        return self._delegate().predict_log_proba(X)

    @available_if(_forwarded("decision_function"))
    def decision_function(self, X: ArrayLike) -> FloatArray:
        """Decision function of the model this estimator forwards to (the wrapped or selected one).

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,) or (n_samples, n_classes)
        """
        return self._delegate().decision_function(X)

    @available_if(_forwarded("score"))
    def score(self, X: ArrayLike, y: ArrayLike, **kwargs: Any) -> float:
        """``score`` of the model this estimator forwards to (the wrapped or selected one).

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
        y : array-like of shape (n_samples,) or (n_samples, n_outputs)
        **kwargs
            Passed on to that model's ``score`` (e.g. ``sample_weight``).

        Returns
        -------
        float
            E.g. the accuracy of a classifier, the R^2 of a regressor.
        """
        return self._delegate().score(X, y, **kwargs)


def wrapped_estimator(meta):
    """The delegation targets (see :class:`DelegatesPredictions`) of a meta-estimator wrapping
    one model: its fitted ``estimator_``, before ``fit`` its ``estimator`` parameter."""
    return (getattr(meta, "estimator_", meta.estimator),)


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


# Below this many rows per chunk, a chunk's work (well under a millisecond for most models)
# does not pay for a thread task.
MIN_CHUNK_ROWS = 2048
# Backends that run here or on this machine's processes; any other (Dask, Ray) is a cluster.
_LOCAL_BACKENDS = (SequentialBackend, ThreadingBackend, LokyBackend, MultiprocessingBackend)


def _apply(func, X):
    return func(X)


def chunked_call(func, X, n_jobs=None):
    """``func(X)`` evaluated on row chunks of ``X`` in parallel with joblib, concatenated.

    Used for per-sample predictions and per-test-point e-value work, which are independent across
    rows. Chunks of fewer than ``MIN_CHUNK_ROWS`` rows are not worth a task: small inputs run
    in one call.
    """
    n = n_rows(X)
    backend = get_active_backend()[0]
    # The rows live in this process: a cluster backend (Dask, Ray) would first ship them to its
    # workers, which costs about as much as predicting them (benchmarks/bench_dask.py), so the
    # chunks run in threads here. An explicit loky/multiprocessing context still gets them
    # (e.g. for a model whose predict is pure Python); inside a parallel task it is sequential.
    cluster = not isinstance(backend, _LOCAL_BACKENDS)
    with parallel_config(backend="threading") if cluster else nullcontext():
        # n_jobs=None follows joblib: 1 unless a parallel_config(n_jobs=...) context says so.
        n_chunks = min(effective_n_jobs(n_jobs), n // MIN_CHUNK_ROWS)
        if n_chunks < 2:
            return func(X)
        X = indexable_rows(X)
        bounds = np.linspace(0, n, n_chunks + 1).astype(int)
        task = portable(func)  # an argument of a module-level function: pickles as wrapped
        # Threads by default: the chunks are NumPy / scikit-learn work that releases the GIL,
        # and processes would copy every chunk (benchmarks/bench_scaling.py: 1.5x with threads
        # vs 0.7x with loky on 2 cores). Slices are views: no copy of the rows.
        parts = Parallel(n_jobs=n_jobs, prefer="threads")(
            delayed(_apply)(task, _safe_indexing(X, slice(a, b)))
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
