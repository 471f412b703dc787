"""SCoRE estimators (Bai & Jin): :class:`SCoREMDR` (marginal deployment risk, paper Sec. 4) and
:class:`SCoRESDR` (selective deployment risk, Sec. 5), over the e-values of :mod:`._conformal`."""

from __future__ import annotations

from collections.abc import Callable
from numbers import Real
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from .._docstrings import fill_doc
from .._labels import class_index
from .._typing import BoolArray, Estimator, FloatArray, RandomStateLike
from .._validation import (
    check_random_state,
    check_scores,
    show,
    warn,
)
from .._wrapping import (
    chunked_call,
    n_rows,
)
from ..evalues.testing import boost_evalues, ebh
from ..risks import make_risk
from ._base import _SCORE_DOC_PARAMS, _DeploymentBase, _margin
from ._conformal import (
    _positive_attainable,
    mdr_decisions,
    mdr_evalues,
    mdr_label_decisions,
    mdr_label_evalues,
    sdr_evalues,
)
from ._groups import by_group, describe_groups, min_rows_for_budget

if TYPE_CHECKING:
    from typing_extensions import Self  # typing.Self: Python >= 3.11

__all__ = ["SCoREMDR", "SCoRESDR"]


def _check_attainable(est):
    """Raise in ``fit`` if a calibration risk is not among ``attainable`` (Remark 4.1)."""
    if est.attainable is not None:
        _positive_attainable(est.attainable, est.cal_risks_)


def _largest_risk(est):
    """Largest value the infimum of the e-values runs over: 1, or the largest ``attainable``."""
    values = _positive_attainable(est.attainable, est.cal_risks_)
    return 1.0 if values is None else float(values[-1])


def _warn_small_groups(est):
    """One warning in ``fit`` naming the groups with too few calibration rows to ever deploy."""
    need = est._min_calibration_rows()
    if est.groups is None or need is None:
        return
    small = est.group_n_calibration_ < need
    if small.any():
        named = describe_groups(est.groups_[small], est.group_n_calibration_[small])
        warn(
            f"{type(est).__name__}: {named} "
            f"{'has' if small.sum() == 1 else 'have'} fewer than the {need} calibration rows a "
            f"group needs to ever deploy at alpha={est.alpha} (with fewer, even a risk-free "
            "calibration set leaves the group's e-values short of what deploying needs), so "
            "their test rows abstain (never deployed). Pass more calibration rows of these "
            "groups, merge small groups (a callable `groups`), or use a larger alpha."
        )


def _grouped(est, X, shift_weights, method):
    """``method`` (decide, evalues, decision_function) with ``groups``: each group's rows by
    the one-group estimator on that group's calibration rows; unseen groups abstain."""
    check_is_fitted(est, "cal_risks_")
    if shift_weights is not None:
        raise ValueError(
            f"{type(est).__name__}(groups=...) does not support covariate shift: drop "
            "`shift_weights`, or use groups=None."
        )
    if method == "decide":
        out = by_group(est, X, method, False, bool)
        if out.size and not out.any():
            est._warn_nothing(
                "within no group is a test score low enough for the risk budget calibrated on "
                "that group's rows (groups with too few calibration rows, named by the warning "
                "of fit, never deploy)."
            )
        return out
    return by_group(est, X, method, 0.0 if method == "evalues" else -np.inf)


@fill_doc(score_params=_SCORE_DOC_PARAMS)
class SCoREMDR(_DeploymentBase):
    """SCoRE with marginal deployment risk (MDR) control.

    Deploys test point ``j`` iff its conformal risk-adjusted e-value is at least ``1/alpha``,
    which guarantees ``MDR = E[L_j 1{deploy j}] <= alpha`` for each test point, in finite
    samples, under exchangeability of calibration and test data (paper Thm. 4.2; weighted version
    Thm. 6.2 with covariate-shift weights). Decisions are computed exactly (paper Prop. 4.4 / A.1)
    in O((n + m) log n).

    Parameters
    ----------
{score_params}
    gamma : float in (0, 1), optional
        Plug-in level of the e-value; defaults to ``alpha`` (optimal, paper Thm. 4.6).
    attainable : None, "binary" or array-like of floats in [0, 1], default=None
        Risk values the loss can take (paper Remark 4.1): the e-values take their infimum over
        the positive ones only instead of over [0, 1], which makes them larger (with
        ``gamma <= alpha`` the decisions change only when the largest value is below 1).
        ``"binary"`` for 0/1 risks (``"zero_one"``, ``"absolute"``, ``"threshold"``). ``fit``
        checks that every calibration risk is one of the values; the test risks must be too (a
        wrong set voids the guarantee). See :ref:`selective-variants`.
    label_score : None, "proba" or callable, default=None
        Label-dependent e-values (paper Remark 4.3, eq. 4.3), for classifiers: the e-value is
        the infimum over the candidate labels ``y`` in ``estimator.classes_`` whose risk
        ``risk(y, f(x))`` is positive, each with its own score ``V(x, y)`` (smaller = safer) and
        threshold; calibration rows use ``V(X_i, Y_i)`` at their labels (which must be in
        ``classes_``). ``"proba"``: ``V(x, y) = predict_proba(x)[y]``, the probability the
        model gives to a label that would make it wrong; a callable ``X -> array (m,
        n_classes)`` gives ``V`` in ``classes_`` order. ``risk_score`` is not used then.
        ``None``: eq. 4.1 with ``risk_score``. See :ref:`selective-variants`.
    groups : None, "predicted_class" or callable, default=None
        Guarantee within each group (Mondrian calibration). ``None``: one group (the
        marginal guarantee above). ``"predicted_class"`` (classifiers): a row's group is the
        class the model predicts; a callable ``X -> array`` gives one group label per row
        (numbers or strings), for the rows of ``fit`` and of :meth:`decide` alike. A test row
        of group ``g`` is decided with the calibration rows of group ``g`` only, exactly as
        ``SCoREMDR`` fitted on those rows and deciding on the test rows of group ``g``. So for
        every group ``g``, ``E[L_j 1{deploy j}] <= alpha`` for each test row ``j`` of group
        ``g`` (expectation over the calibration and test rows of the group), when the
        calibration and test rows of the group are exchangeable (the rule must not be learned
        from the calibration rows). ``fit`` warns, once, about groups with too few calibration
        rows to ever deploy (about ``1 / alpha``); their rows abstain, and so do rows of groups
        not seen in ``fit`` (with a warning). Not combined with covariate shift
        (``shift_weights``, ``weight_estimator``). See :ref:`selective-groups`.
    weight_estimator : probabilistic classifier, optional
        Estimates covariate-shift density ratios by classifying calibration (0) vs test-domain
        (1) rows: ``w = p / (1 - p)``. Fitted ones are used as is; an unfitted one is fitted in
        ``fit`` on the training split vs ``X_target``. Estimated weights give asymptotic control.
    calib_size : float in (0, 1), default=0.5
        Fraction of ``fit``'s rows used for calibration when something must be fitted first.
    random_state : int, RandomState instance, numpy.random.Generator or None
        Seed of the split.
    n_jobs : int, optional
        joblib workers for predictions and per-test-point e-value work (threads unless a
        ``joblib.parallel_config`` backend says otherwise; see :doc:`/scale_out`).
    verbose : int, default=0

    Attributes
    ----------
    estimator_ : the wrapped (fitted) model
    cal_risks_, cal_scores_ : ndarray of shape (n_calibration,)
    cal_weights_ : ndarray or None
    n_calibration_ : int
    groups_ : ndarray of shape (n_groups,)
        With ``groups``: the sorted group labels seen in calibration.
    group_n_calibration_ : ndarray of int, shape (n_groups,)
        With ``groups``: the number of calibration rows of each group of ``groups_``.
    n_features_in_, feature_names_in_ : copied from the wrapped model

    Examples
    --------
    >>> from sklearn.datasets import load_digits
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.model_selection import train_test_split
    >>> from sklearn_riskcontrol.selective import SCoREMDR
    >>> X, y = load_digits(return_X_y=True)
    >>> X_fit, X_rest, y_fit, y_rest = train_test_split(X, y, train_size=600, random_state=0)
    >>> X_cal, X_test, y_cal, y_test = train_test_split(X_rest, y_rest, test_size=500, random_state=0)
    >>> model = LogisticRegression(max_iter=2000).fit(X_fit, y_fit)
    >>> mdr = SCoREMDR(model, risk="zero_one", risk_score="proba", alpha=0.01).fit(X_cal, y_cal)
    >>> deploy = mdr.decide(X_test)
    >>> errors = mdr.predict(X_test) != y_test
    >>> # realized on this split; the guarantee E[error * deploy] <= alpha is in expectation
    >>> # over calibration and test draws
    >>> print(f"error everywhere {errors.mean():.3f}; deployed on {deploy.mean():.3f}; "
    ...       f"realized MDR {(errors & deploy).mean():.3f}")
    error everywhere 0.040; deployed on 0.926; realized MDR 0.008
    """

    _parameter_constraints = {
        **_DeploymentBase._parameter_constraints,
        "gamma": [Interval(Real, 0, 1, closed="neither"), None],
        "attainable": [StrOptions({"binary"}), "array-like", None],
        "label_score": [StrOptions({"proba"}), callable, None],
        "weight_estimator": [HasMethods(["predict_proba"]), None],
    }

    def __init__(
        self,
        estimator: Estimator,
        *,
        risk: str | Callable[..., ArrayLike] = "zero_one",
        risk_score: str | Estimator | Callable[..., ArrayLike] = "proba",
        alpha: float = 0.1,
        gamma: float | None = None,
        attainable: str | ArrayLike | None = None,
        label_score: str | Callable[..., ArrayLike] | None = None,
        weight_estimator: Estimator = None,
        groups: str | Callable[..., ArrayLike] | None = None,
        calib_size: float = 0.5,
        random_state: RandomStateLike = None,
        n_jobs: int | None = None,
        verbose: int = 0,
    ) -> None:
        self.estimator = estimator
        self.risk = risk
        self.risk_score = risk_score
        self.alpha = alpha
        self.gamma = gamma
        self.attainable = attainable
        self.label_score = label_score
        self.weight_estimator = weight_estimator
        self.groups = groups
        self.calib_size = calib_size
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose

    _target = "mdr"  # the risk it controls (read by plotting.plot_group_deployment)

    @fill_doc(base=_DeploymentBase.fit.__doc__)
    def fit(
        self,
        X: ArrayLike,
        y: ArrayLike,
        *,
        shift_weights: ArrayLike | None = None,
        X_target: ArrayLike | None = None,
    ) -> Self:
        """{base}"""
        super().fit(X, y, shift_weights=shift_weights, X_target=X_target)
        _warn_small_groups(self)
        return self

    def _gamma(self):
        return self.alpha if self.gamma is None else self.gamma

    def _min_calibration_rows(self):
        """Fewest calibration rows with which a test point can be deployed (None: unknown)."""
        level = min(self.alpha, self._gamma())
        if self.label_score is None:
            return min_rows_for_budget(_largest_risk(self), level)
        # label-dependent e-values: each candidate label with positive risk must pass; with a
        # 0-1 risk and two classes or more every row has one of risk 1
        classes = getattr(self.estimator_, "classes_", ())
        if self.risk_ == make_risk("zero_one") and len(classes) >= 2:
            return min_rows_for_budget(1.0, level)
        return None

    def _per_test_point(self, func, X, shift_weights):
        """Run ``func(test_scores, test_weights)`` over chunks of test points (independent)."""
        scores, weights = self._test_inputs(X, shift_weights)
        if len(scores) == 0:
            return func(scores, weights)
        packed = np.column_stack([scores, np.ones_like(scores) if weights is None else weights])

        def run(chunk):
            return func(chunk[:, 0], None if weights is None else chunk[:, 1])

        return chunked_call(run, packed, self.n_jobs)

    def _cal_weights(self, test_weights):
        return None if test_weights is None else self.cal_weights_

    def _calibration_scores(self, X_cal, y_cal):
        _check_attainable(self)
        if self.label_score is None:
            return super()._calibration_scores(X_cal, y_cal)
        if self.attainable is not None:
            raise ValueError(
                "Give `label_score` or `attainable`, not both: the label-dependent e-values "
                "already take their infimum over the risks of the candidate labels only."
            )
        classes = getattr(self.estimator_, "classes_", None)
        if classes is None:
            raise ValueError(
                "label_score needs a classifier with `classes_` (the candidate labels of the "
                f"infimum); {type(self.estimator_).__name__} has none. Use label_score=None."
            )
        col, known = class_index(classes, y_cal)
        missing = sorted(set(np.asarray(y_cal)[~known].tolist()), key=str)
        if missing:
            raise ValueError(
                f"Calibration label(s) {show(missing[:5])} are not among the classifier's "
                "`classes_`: label-dependent e-values take their infimum over `classes_`, so "
                "every label a point can have must be one of them. Use label_score=None."
            )
        return self._label_scores(X_cal)[np.arange(col.size), col]

    def _label_scores(self, X):
        """``V(x, y)`` for every row and class, shape (n_rows, n_classes)."""
        k = len(self.estimator_.classes_)
        if isinstance(self.label_score, str):
            if not hasattr(self.estimator_, "predict_proba"):
                raise ValueError("label_score='proba' needs a classifier with predict_proba; "
                                 "pass a callable X -> array (n_samples, n_classes) instead.")
            V = chunked_call(self.estimator_.predict_proba, X, self.n_jobs)
        else:
            V = self.label_score(X)
        V = np.asarray(V, dtype=float)
        if V.shape != (n_rows(X), k):
            raise ValueError(f"label_score returned an array of shape {V.shape}; expected "
                             f"({n_rows(X)}, {k}): one score per row and class of `classes_`.")
        check_scores(V.ravel(), "label_score output")
        return V

    def _label_inputs(self, X, shift_weights):
        """Candidate risks and scores (m, n_classes) and test weights, for ``label_score``."""
        check_is_fitted(self, "cal_risks_")
        pred = np.asarray(self._predict(X))
        classes = np.asarray(self.estimator_.classes_)
        m = pred.shape[0]
        risks = np.zeros((m, classes.size))
        for k, c in enumerate(classes):  # a few classes: one vectorised risk call each
            if m:
                risks[:, k] = self.risk_(np.full(m, c, dtype=classes.dtype), pred)
        return risks, self._label_scores(X), self._test_weights(X, shift_weights, m)

    def decide(self, X: ArrayLike, *, shift_weights: ArrayLike | None = None) -> BoolArray:
        """Deploy decisions: True where the model may be used (``E[L 1{deploy}] <= alpha``).

        Parameters
        ----------
        X : array-like of shape (m, n_features)
        shift_weights : array-like of shape (m,), optional
            Density ratios of the test rows (required iff ``fit`` used them).

        Returns
        -------
        ndarray of bool, shape (m,)
        """
        if self.groups is not None:
            return _grouped(self, X, shift_weights, "decide")
        if self.label_score is not None:
            risks, V, v = self._label_inputs(X, shift_weights)
            decided = mdr_label_decisions(self.cal_risks_, self.cal_scores_, risks, V, self.alpha,
                                          self._gamma(), self._cal_weights(v), v)
        else:
            decided = self._per_test_point(
                lambda t, v: mdr_decisions(
                    self.cal_risks_, self.cal_scores_, t, self.alpha, self._gamma(),
                    self._cal_weights(v), v, self.attainable,
                ),
                X,
                shift_weights,
            ).astype(bool)
        if decided.size and not decided.any():
            n = self.n_calibration_
            if 1.0 / (n + 1) > self._gamma():
                reason = (
                    f"with n = {n} calibration points even a risk-free calibration set gives a "
                    f"plug-in risk of 1/(n+1) > {self._gamma()}; use at least "
                    f"{int(np.ceil(1 / self._gamma())) - 1} calibration points."
                )
            else:
                reason = "no test score is low enough for the calibrated risk budget."
            self._warn_nothing(reason)
        return decided

    def evalues(self, X: ArrayLike, *, shift_weights: ArrayLike | None = None) -> FloatArray:
        """Risk-adjusted conformal e-values (paper eq. 4.1 / 6.1; eq. 4.3 with
        ``label_score``): ``E[L_j E_j] <= 1``; with ``groups``, each group's e-values (0 for a
        group not seen in calibration)."""
        if self.groups is not None:
            return _grouped(self, X, shift_weights, "evalues")
        if self.label_score is not None:
            risks, V, v = self._label_inputs(X, shift_weights)
            return mdr_label_evalues(self.cal_risks_, self.cal_scores_, risks, V, self._gamma(),
                                     self._cal_weights(v), v)
        return self._per_test_point(
            lambda t, v: mdr_evalues(
                self.cal_risks_, self.cal_scores_, t, self._gamma(), self._cal_weights(v), v,
                self.attainable,
            ),
            X,
            shift_weights,
        )

    def decision_function(
        self, X: ArrayLike, *, shift_weights: ArrayLike | None = None
    ) -> FloatArray:
        """Certified margin ``log(alpha * E_j)``: ``decide(X) == (decision_function(X) >= 0)``.

        ``-inf`` marks test points whose e-value is zero (never deployable at any level).
        """
        if self.groups is not None:
            return _grouped(self, X, shift_weights, "decision_function")
        e = self.evalues(X, shift_weights=shift_weights)
        return _margin(e, 1.0 / self.alpha, self.decide(X, shift_weights=shift_weights))


@fill_doc(score_params=_SCORE_DOC_PARAMS)
class SCoRESDR(_DeploymentBase):
    """SCoRE with selective deployment risk (SDR) control over a test batch.

    Computes the risk-adjusted e-values of paper eq. 5.1 (6.2 under covariate shift) for the whole
    test batch, optionally boosts them, and deploys the e-BH selection at level ``alpha``. This
    guarantees ``SDR = E[sum_j L_j 1{deploy j} / max(1, #deployed)] <= alpha`` in finite
    samples under exchangeability (paper Thms. 5.1, 5.5, 6.4). Decisions depend on the whole
    batch passed to :meth:`decide` (like BH). Cost O((n + m) log(n + m)).

    Boosting draws fresh uniforms at every call of :meth:`decide`, :meth:`decision_function`
    and :meth:`score`, from a stream that :meth:`fit` seeds with ``random_state``: each batch
    gets its own draw (re-using one draw for every batch would make the control over many
    batches conditional on that draw), and with an int ``random_state`` every refit replays the
    same sequence of draws, hence of decisions. So ``decide(X) == (decision_function(X) >= 0)``
    holds when both are the k-th boosted call after a fit with the same int seed (e.g.
    ``fit(...).decide(X)`` and ``fit(...).decision_function(X)``), and always with
    ``boosting=None``; :meth:`evalues` (not boosted) draws nothing.

    Parameters
    ----------
{score_params}
    gamma : float > 0, optional
        Plug-in level of the e-values; defaults to ``alpha``. Any ``gamma > 0`` is valid (paper
        Thm. 5.1), ``gamma >= 1`` included. Without boosting, the power above ``alpha``
        vanishes asymptotically (Thm. 5.8); with ``gamma >= 1`` (and no covariate shift) every
        e-value is ``(n + 1) / (l_max + sum_i L_i)`` (``l_max`` = 1, or the largest
        ``attainable`` value), so the whole batch is deployed or none of it
        (``boosting="homo"``: all of it with probability
        ``min(1, alpha (n + 1) / (l_max + sum_i L_i))``). See :ref:`selective-variants`.
    attainable : None, "binary" or array-like of floats in [0, 1], default=None
        Risk values the loss can take (paper Remark 4.1): the e-values take their infimum over
        the positive ones only instead of over [0, 1], which makes them larger. ``"binary"``
        with ``gamma = alpha`` and no covariate shift is conformal selection with BH (paper
        Cor. 5.4), and boosting then changes no decision (e-BH already deploys every point
        with a non-zero e-value). ``"binary"`` for 0/1 risks (``"zero_one"``, ``"absolute"``,
        ``"threshold"``).
        ``fit`` checks that every calibration risk is one of the values; the test risks must be
        too (a wrong set voids the guarantee). See :ref:`selective-variants`.
    boosting : {None, "hete", "homo"}, default="homo"
        Divide the e-values by uniforms before e-BH (paper 5.2): ``"homo"`` by one shared
        ``U ~ Unif(0, 1)`` per batch, ``"hete"`` by one ``U_j`` per test point. Both keep SDR
        control (in expectation, over the data and the uniforms) and are far more powerful than
        ``None``: without boosting all non-zero e-values are equal and e-BH often selects
        nothing. ``"homo"`` deploys more on average and varies less from draw to draw (measured
        in ``benchmarks/selective_boosting.py``; see :ref:`selective-boosting-choice`), hence the
        default (earlier development versions used ``"hete"``).
    weight_estimator : probabilistic classifier, optional
        See :class:`SCoREMDR`.
    groups : None, "predicted_class" or callable, default=None
        Guarantee within each group (Mondrian calibration); values as in :class:`SCoREMDR`.
        The test rows of group ``g`` in a batch are decided by ``SCoRESDR`` fitted on the
        calibration rows of group ``g`` alone, with e-BH over those test rows only (and, with
        an int ``random_state``, the same boosting draws as that one-group estimator). So for
        every group ``g``, the expected risk among the deployed test rows of group ``g``,
        ``E[sum_{j in g} L_j 1{deploy j} / max(1, #deployed in g)]``, is at most ``alpha``,
        when the calibration and test rows of the group are exchangeable. ``fit`` warns, once,
        about groups with too few calibration rows to ever deploy (about ``1 / gamma``, or
        ``1 / alpha`` without boosting); their rows abstain, as do rows of groups not seen in
        ``fit`` (with a warning). Not combined with covariate shift. See :ref:`selective-groups`.
    calib_size : float in (0, 1), default=0.5
    random_state : int, RandomState instance, numpy.random.Generator or None
        Seed of the split and of the stream of boosting uniforms (fresh uniforms at every call;
        with an int, the same sequence after every refit).
    n_jobs : int, optional
        joblib workers for predictions (threads unless a
        ``joblib.parallel_config`` backend says otherwise; see :doc:`/scale_out`).
    verbose : int, default=0

    Attributes
    ----------
    estimator_, cal_risks_, cal_scores_, cal_weights_, n_calibration_ : see :class:`SCoREMDR`
    groups_, group_n_calibration_ : see :class:`SCoREMDR` (with ``groups`` only)

    Examples
    --------
    >>> from sklearn.datasets import load_digits
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.model_selection import train_test_split
    >>> from sklearn_riskcontrol.selective import SCoRESDR
    >>> X, y = load_digits(return_X_y=True)
    >>> X_fit, X_rest, y_fit, y_rest = train_test_split(X, y, train_size=600, random_state=0)
    >>> X_cal, X_test, y_cal, y_test = train_test_split(X_rest, y_rest, test_size=500, random_state=0)
    >>> model = LogisticRegression(max_iter=2000).fit(X_fit, y_fit)
    >>> sdr = SCoRESDR(model, alpha=0.01, random_state=0).fit(X_cal, y_cal)  # boosting="homo"
    >>> deploy = sdr.decide(X_test)
    >>> errors = sdr.predict(X_test) != y_test
    >>> # realized on this split and draw; the guarantee (risk among deployed <= alpha) is in
    >>> # expectation over calibration data, test data and boosting uniforms
    >>> print(f"deployed on {deploy.mean():.3f}; error among deployed {errors[deploy].mean():.4f}")
    deployed on 0.926; error among deployed 0.0086
    """

    _parameter_constraints = {
        **_DeploymentBase._parameter_constraints,
        "gamma": [Interval(Real, 0, None, closed="neither"), None],
        "attainable": [StrOptions({"binary"}), "array-like", None],
        "boosting": [StrOptions({"hete", "homo"}), None],
        "weight_estimator": [HasMethods(["predict_proba"]), None],
    }

    def __init__(
        self,
        estimator: Estimator,
        *,
        risk: str | Callable[..., ArrayLike] = "zero_one",
        risk_score: str | Estimator | Callable[..., ArrayLike] = "proba",
        alpha: float = 0.1,
        gamma: float | None = None,
        attainable: str | ArrayLike | None = None,
        boosting: str | None = "homo",
        weight_estimator: Estimator = None,
        groups: str | Callable[..., ArrayLike] | None = None,
        calib_size: float = 0.5,
        random_state: RandomStateLike = None,
        n_jobs: int | None = None,
        verbose: int = 0,
    ) -> None:
        self.estimator = estimator
        self.risk = risk
        self.risk_score = risk_score
        self.alpha = alpha
        self.gamma = gamma
        self.attainable = attainable
        self.boosting = boosting
        self.weight_estimator = weight_estimator
        self.groups = groups
        self.calib_size = calib_size
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose

    def fit(
        self,
        X: ArrayLike,
        y: ArrayLike,
        *,
        shift_weights: ArrayLike | None = None,
        X_target: ArrayLike | None = None,
    ) -> Self:
        """Calibrate on labeled data ``(X, y)`` and seed the stream of boosting uniforms.

        Parameters and return value: see :meth:`SCoREMDR.fit`.
        """
        super().fit(X, y, shift_weights=shift_weights, X_target=X_target)
        # Advanced at every boosted call: fresh uniforms per batch, replayed by a refit.
        self._boosting_rng = check_random_state(self.random_state)
        if self.groups is not None:
            # one stream per group, each seeded like a one-group fit's (with an int seed a
            # group's draws are exactly those of SCoRESDR fitted on its rows alone)
            self._group_rngs = [check_random_state(self.random_state) for _ in self.groups_]
            _warn_small_groups(self)
        return self

    _target = "sdr"  # the risk it controls (read by plotting.plot_group_deployment)

    def _min_calibration_rows(self):
        """Fewest calibration rows with which a test point can be deployed: a non-zero e-value
        (boosted), or one reaching ``1 / alpha`` (unboosted)."""
        gamma = self.alpha if self.gamma is None else self.gamma
        level = gamma if self.boosting is not None else min(self.alpha, gamma)
        return min_rows_for_budget(_largest_risk(self), level)

    def evalues(self, X: ArrayLike, *, shift_weights: ArrayLike | None = None) -> FloatArray:
        """Risk-adjusted conformal e-values of the batch (paper eq. 5.1 / 6.2), not boosted;
        with ``groups``, each group's over its rows of the batch (0 for unseen groups)."""
        if self.groups is not None:
            return _grouped(self, X, shift_weights, "evalues")
        scores, weights = self._test_inputs(X, shift_weights)
        gamma = self.alpha if self.gamma is None else self.gamma
        cal_w = None if weights is None else self.cal_weights_
        return sdr_evalues(self.cal_risks_, self.cal_scores_, scores, gamma, cal_w, weights,
                           self.attainable)

    def _calibration_scores(self, X_cal, y_cal):
        _check_attainable(self)
        return super()._calibration_scores(X_cal, y_cal)

    def _boosted(self, X, shift_weights):
        e = self.evalues(X, shift_weights=shift_weights)
        return boost_evalues(e, self.boosting, random_state=self._boosting_rng)

    @staticmethod
    def _ebh_threshold(boosted, alpha):
        m = len(boosted)
        selected = ebh(boosted, alpha)
        k = max(int(selected.sum()), 1)
        return selected, m / (alpha * k)

    def decide(self, X: ArrayLike, *, shift_weights: ArrayLike | None = None) -> BoolArray:
        """e-BH deploy decisions for the batch ``X`` (risk among deployed controlled at alpha).

        Returns
        -------
        ndarray of bool, shape (m,)
        """
        if self.groups is not None:
            return _grouped(self, X, shift_weights, "decide")
        boosted = self._boosted(X, shift_weights)
        selected, _ = self._ebh_threshold(boosted, self.alpha)
        if selected.size and not selected.any():
            reason = (
                "e-BH selected nothing"
                + (" (unboosted SDR e-values are conservative; try boosting='homo')" if self.boosting is None else "")
                + "; a larger calibration set, a better risk_score or a larger alpha helps."
            )
            self._warn_nothing(reason)
        return selected

    def decision_function(
        self, X: ArrayLike, *, shift_weights: ArrayLike | None = None
    ) -> FloatArray:
        """Certified margin ``log(E_j / (m / (alpha k*)))`` of the (boosted) e-values.

        Draws the next boosting uniforms, like :meth:`decide`: the two agree
        (``decide(X) == (decision_function(X) >= 0)``) when each is the same-numbered boosted call
        after a fit with the same int ``random_state`` (see the class description), and always
        with ``boosting=None``. ``-inf`` marks zero e-values. With ``groups``, each group's
        margin (its e-BH over its rows of the batch; ``-inf`` for unseen groups).
        """
        if self.groups is not None:
            return _grouped(self, X, shift_weights, "decision_function")
        boosted = self._boosted(X, shift_weights)
        selected, threshold = self._ebh_threshold(boosted, self.alpha)
        return _margin(boosted, threshold, selected)
