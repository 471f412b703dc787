"""Bounded per-sample risks (losses in [0, 1]) shared by every method.

A risk maps ``(y_true, y_pred)`` to an array of losses in ``[0, 1]``. It is SCoRE's ``L``,
R-AutoEval+'s loss and the ``risk`` option of every estimator in the library. Build one with
:func:`make_risk` from a name or a callable; the result checks its own output range.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ._validation import as_float_array, check_risks, show
from ._typing import FloatArray

__all__ = ["Risk", "make_risk"]

#: Share of losses clipped at 1 from which the estimators warn that a clipping risk (the squared
#: error) has too small a scale: the guarantee then covers a loss that no longer tells a large
#: error from a moderate one.
SATURATION_WARN_SHARE = 0.25


def _zero_one(y_true, y_pred):
    return (np.asarray(y_true) != np.asarray(y_pred)).astype(float)


def _squared(y_true, y_pred, *, scale):
    diff = as_float_array(y_true, "y_true") - as_float_array(y_pred, "y_pred")
    return np.clip(diff * diff / scale, 0.0, 1.0)


def _absolute(y_true, y_pred, *, tolerance):
    diff = np.abs(as_float_array(y_true, "y_true") - as_float_array(y_pred, "y_pred"))
    return (diff > tolerance).astype(float)


def _threshold(y_true, y_pred, *, threshold):
    # Conformal selection's binary risk 1{y <= c}: deploying is "wrong" when the outcome is low.
    return (as_float_array(y_true, "y_true") <= threshold).astype(float)


_BUILTIN = {
    "zero_one": (_zero_one, {}),
    "squared": (_squared, {"scale": None}),
    "absolute": (_absolute, {"tolerance": None}),
    "threshold": (_threshold, {"threshold": None}),
}
RISK_NAMES = tuple(_BUILTIN)
_NUMERIC = (_squared, _absolute, _threshold)


def _check_target(values, name):
    """Labels/predictions: 1-d for ``y_true`` (rows first for ``y_pred``), no complex, no NaN/inf."""
    arr = np.asarray(values)
    if arr.ndim == 2 and arr.shape[1] == 1 and name == "y_true":
        arr = arr.ravel()
    if arr.ndim == 0 or (name == "y_true" and arr.ndim != 1):
        raise ValueError(f"`{name}` must be 1-d (one entry per sample); got shape {arr.shape}.")
    if arr.dtype.kind == "c":
        raise ValueError(f"`{name}` must be real: Complex data not supported (dtype {arr.dtype}).")
    if arr.dtype.kind == "f" and not np.isfinite(arr).all():
        raise ValueError(
            f"`{name}` must be finite (no NaN or inf); for unlabeled rows use the estimator's "
            "semi-supervised convention where it has one (y == -1 / NaN in RAutoEvalPlus)."
        )
    return arr


class Risk:
    """A bounded per-sample risk ``(y_true, y_pred) -> array in [0, 1]``.

    Instances are picklable (no lambdas) and compare equal when built from the same name and
    parameters, so they behave well as estimator parameters under ``clone``.

    Parameters
    ----------
    func : callable
        ``func(y_true, y_pred, **params)`` returning one loss per sample.
    name : str
        A short description, used in ``repr`` and error messages.
    **params
        Keyword arguments passed to ``func``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_riskcontrol.risks import Risk
    >>> def relative_error(y_true, y_pred, cap=0.5):
    ...     return np.minimum(np.abs(y_pred / y_true - 1) / cap, 1.0)
    >>> risk = Risk(relative_error, cap=0.5)
    >>> risk([100.0, 100.0], [110.0, 300.0])
    array([0.2, 1. ])
    """

    def __init__(
        self,
        func: Callable[..., ArrayLike],
        name: str | None = None,
        **params: Any,
    ) -> None:
        self.func = func
        self.name = name or getattr(func, "__name__", "risk")
        self.params = params

    def __call__(self, y_true: ArrayLike, y_pred: ArrayLike) -> FloatArray:
        y_true, y_pred = _check_target(y_true, "y_true"), _check_target(y_pred, "y_pred")
        if len(y_pred) != len(y_true):
            raise ValueError(
                f"Mismatched lengths: `y_true` has {len(y_true)} entries, `y_pred` has {len(y_pred)}."
            )
        if y_pred.ndim != 1 and self.func in _NUMERIC:
            raise ValueError(f"`y_pred` must be 1-d for risk '{self.name}'; got shape {y_pred.shape}.")
        values = self.func(y_true, y_pred, **self.params)
        values = check_risks(values, f"risk '{self.name}' output")
        if len(values) != len(y_true):
            raise ValueError(
                f"risk '{self.name}' returned {len(values)} values for {len(y_true)} samples; "
                "it must return one loss per sample."
            )
        return values

    @property
    def binary(self) -> bool:
        """True if every loss is 0 or 1 by construction (``"zero_one"``, ``"absolute"``,
        ``"threshold"``); a callable may return 0/1 on some data without being binary."""
        return self.func in (_zero_one, _absolute, _threshold)

    @property
    def clips(self) -> bool:
        """True if this risk clips an unbounded loss at 1 (``"squared"``): a 1 may hide a larger loss."""
        return self.func is _squared

    def saturates(self, values: ArrayLike) -> bool | np.bool_:
        """True if this risk clips and at least ``SATURATION_WARN_SHARE`` of ``values`` are 1."""
        values = np.asarray(values)
        return self.clips and np.count_nonzero(values >= 1.0) >= SATURATION_WARN_SHARE * values.size

    def __repr__(self):
        args = "".join(f", {k}={show(v)}" for k, v in self.params.items())
        return f"make_risk({self.name!r}{args})"

    def __eq__(self, other):
        return (
            isinstance(other, Risk)
            and self.func is other.func
            and self.name == other.name
            and self.params == other.params
        )

    def __hash__(self):
        return hash((self.name, tuple(sorted(self.params.items()))))


def make_risk(risk: str | Callable[..., ArrayLike], **params: Any) -> Risk:
    """Build a bounded risk from a name or a callable.

    Parameters
    ----------
    risk : {"zero_one", "squared", "absolute", "threshold"}, callable or Risk
        - ``"zero_one"``: ``1{y_pred != y_true}`` (classification error).
        - ``"squared"``: ``min((y_true - y_pred)^2 / scale, 1)``; ``scale`` is required (the
          squared error is unbounded, and the guarantee covers the clipped loss, so choose it
          on the scale of the errors that matter, e.g. a high quantile of squared residuals on
          the model's *training* data; a scale that clips most risks at 1 makes them useless).
        - ``"absolute"``: ``1{|y_true - y_pred| > tolerance}``; pass ``tolerance``.
        - ``"threshold"``: ``1{y_true <= threshold}`` (conformal selection's binary risk: deploying
          on a unit whose outcome is at most ``threshold`` counts as an error); pass ``threshold``.
        - a callable ``(y_true, y_pred) -> array``; its output is checked to lie in [0, 1] on
          every call.
        - an existing :class:`Risk` is returned unchanged.
    **params
        Parameters of the named risk.

    Returns
    -------
    Risk

    Examples
    --------
    >>> from sklearn_riskcontrol.risks import make_risk
    >>> make_risk("squared", scale=4.0)([0.0, 1.0, 5.0], [0.0, 0.0, 0.0])
    array([0.  , 0.25, 1.  ])
    >>> make_risk("zero_one")(["a", "b"], ["a", "c"])
    array([0., 1.])
    """
    if isinstance(risk, Risk):
        if params:
            raise TypeError("Parameters cannot be given together with an existing Risk.")
        return risk
    if callable(risk):
        return Risk(risk, **params)
    if not isinstance(risk, str) or risk not in _BUILTIN:
        raise ValueError(
            f"Unknown risk {show(risk)}; use one of {list(RISK_NAMES)} or a callable "
            "(y_true, y_pred) -> array of losses in [0, 1]."
        )
    func, defaults = _BUILTIN[risk]
    unknown = set(params) - set(defaults)
    if unknown:
        raise TypeError(f"Risk {risk!r} takes parameters {sorted(defaults)}; got {sorted(unknown)}.")
    merged = {**defaults, **params}
    if risk == "squared" and merged["scale"] is None:
        raise ValueError(
            "risk 'squared' is unbounded and needs an explicit `scale`: the risk is "
            "min((y_true - y_pred)^2 / scale, 1) and the guarantee covers that clipped loss. Pass "
            "risk=make_risk('squared', scale=s) (the `risk=` of any estimator takes it), with s on "
            "the scale of the errors that matter, e.g. a high quantile of squared residuals on the "
            "model's training data; or use make_risk('absolute', tolerance=t)."
        )
    missing = [k for k, v in merged.items() if v is None]
    if missing:
        raise TypeError(f"Risk {risk!r} needs the parameter(s) {missing}, e.g. make_risk({risk!r}, {missing[0]}=...).")
    scale = merged.get("scale")
    if risk == "squared" and not (
        isinstance(scale, numbers.Real) and not isinstance(scale, bool) and np.isfinite(scale) and scale > 0
    ):
        raise ValueError(
            f"`scale` of risk 'squared' must be a positive finite number; got {show(scale)}."
        )
    return Risk(func, name=risk, **merged)
