"""Selective deployment of a fitted model with risk control (SCoRE) and concentration baselines.

Estimator layer of SCoRE (Bai & Jin): wrap any *fitted* regressor or classifier, calibrate on
labeled data, then ``decide(X)`` returns which test points the model may be deployed on.

* :class:`SCoREMDR` controls the marginal deployment risk ``E[L_j 1{deploy j}] <= alpha``.
* :class:`SCoRESDR` controls the selective deployment risk (risk among deployed points, FDR-like)
  ``E[sum_j L_j 1{deploy j} / max(1, #deployed)] <= alpha`` over a test batch.
* :class:`ConcentrationMDR` / :class:`ConcentrationSDR`: Hoeffding / Rademacher baselines of the
  paper's App. D.4 (PAC-type guarantees only), for power comparisons.

Guarantees hold in finite samples when calibration and test data are exchangeable (weighted
exchangeability with known covariate-shift density ratios; asymptotically with estimated ones),
whatever the quality of the model and of the score. The wrapped model is never refitted.
"""

from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, MetaEstimatorMixin, _fit_context
from sklearn.model_selection import train_test_split
from sklearn.utils import _safe_indexing
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted

from ._validation import (
    RANDOM_STATE,
    check_labels,
    check_level,
    check_random_state,
    check_scores,
    check_weights,
    show,
    warn,
)
from ._wrapping import (
    chunked_call,
    copy_feature_info,
    fit_clone,
    indexable_rows,
    is_fitted,
    n_rows,
    tags_or_none,
)
from ._labels import (
    is_classification,
    labeled_and_unlabeled,
    raw_judge_labels,
    unlabeled_mask,
)
from .evalues.bounds import concentration_threshold
from .evalues.conformal import (
    _positive_attainable,
    mdr_decisions,
    mdr_evalues,
    mdr_label_decisions,
    mdr_label_evalues,
    sdr_evalues,
)
from .evalues.testing import boost_evalues, ebh
from .risks import RISK_NAMES, make_risk

__all__ = [
    "SCoREMDR",
    "SCoRESDR",
    "ConcentrationMDR",
    "ConcentrationSDR",
    "RewardAwareScore",
    "pipeline_decide",
]


class RewardAwareScore:
    """Score recipe ranking test points by risk per unit of reward (paper Thms. 4.6 and 5.8).

    The asymptotically optimal score for MDR ranks by ``l(x) / r(x)``; for SDR by
    ``(l(x) - alpha) / r(x)``, where ``l`` predicts the risk and ``r`` the reward of deploying.
    Pass an instance as ``risk_score=`` (smaller = safer).

    Parameters
    ----------
    risk_predictor : fitted estimator with ``predict``
        Predicts the risk ``l(x)`` (in [0, 1]).
    reward_predictor : fitted estimator with ``predict``
        Predicts the reward ``r(x) > 0`` of deploying on ``x``.
    target : {"mdr", "sdr"}, default="mdr"
    alpha : float, optional
        Required for ``target="sdr"``: the level used by :class:`SCoRESDR`.
    min_reward : float, default=1e-6
        Rewards are clipped below at this value before dividing.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.dummy import DummyRegressor
    >>> from sklearn_riskcontrol.selective import RewardAwareScore
    >>> X = np.zeros((3, 1))
    >>> l_hat = DummyRegressor(strategy="constant", constant=0.2).fit(X, [0, 0, 0])
    >>> r_hat = DummyRegressor(strategy="constant", constant=0.5).fit(X, [0, 0, 0])
    >>> RewardAwareScore(l_hat, r_hat, target="sdr", alpha=0.1)(X)
    array([0.2, 0.2, 0.2])
    """

    def __init__(self, risk_predictor, reward_predictor, *, target="mdr", alpha=None, min_reward=1e-6):
        if target not in ("mdr", "sdr"):
            raise ValueError(f"`target` must be 'mdr' or 'sdr'; got {show(target)}.")
        if target == "sdr" and alpha is None:
            raise ValueError("The SDR recipe (l - alpha) / r needs `alpha` (the level of SCoRESDR).")
        if alpha is not None:
            alpha = check_level(alpha, "alpha")
        self.risk_predictor = risk_predictor
        self.reward_predictor = reward_predictor
        self.target = target
        self.alpha = alpha
        self.min_reward = min_reward

    def __call__(self, X):
        risk = np.asarray(self.risk_predictor.predict(X), dtype=float)
        reward = np.maximum(np.asarray(self.reward_predictor.predict(X), dtype=float), self.min_reward)
        if self.target == "sdr":
            risk = risk - self.alpha
        return risk / reward


def _estimator_has(attr):
    def check(self):
        model = getattr(self, "estimator_", self.estimator)
        return hasattr(model, attr)

    return check


class _DeploymentBase(MetaEstimatorMixin, BaseEstimator):
    """Shared calibration logic: risks, scores, covariate-shift weights of calibration rows."""

    _parameter_constraints = {
        "estimator": [HasMethods(["predict"])],
        "risk": [StrOptions(set(RISK_NAMES)), callable],
        "risk_score": [StrOptions({"proba"}), HasMethods(["predict"]), callable],
        "alpha": [Interval(Real, 0, 1, closed="neither")],
        "calib_size": [Interval(Real, 0, 1, closed="neither")],
        "random_state": RANDOM_STATE,
        "n_jobs": [Integral, None],
        "verbose": ["verbose"],
    }
    _supports_shift = True

    # -- calibration -------------------------------------------------------------------------
    def _needs_fitting(self, obj):
        return hasattr(obj, "fit") and hasattr(obj, "get_params") and not is_fitted(obj)

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y, *, shift_weights=None, X_target=None):
        """Calibrate on labeled data ``(X, y)``.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Calibration inputs, passed untouched to the wrapped model.
        y : array-like of shape (n_samples,)
            Calibration labels.
        shift_weights : array-like of shape (n_samples,), optional
            Covariate-shift density ratios ``w(x) = dQ/dP(x) > 0`` of these rows (test
            distribution Q over calibration distribution P). Only ratios matter: any common
            scale is fine. If given, ``decide`` needs the test rows' ratios too.
        X_target : array-like, optional
            Unlabeled rows from the test distribution, used to fit an unfitted
            ``weight_estimator`` (they must not be the rows you will decide on).

        Returns
        -------
        self
        """
        if y is None:
            raise ValueError(
                f"{type(self).__name__} requires y to be passed, but the target y is None: "
                "calibration needs labels to measure the model's risk."
            )
        y = check_labels(y)
        X = indexable_rows(X)
        n = n_rows(X)
        if n != len(y):
            raise ValueError(f"`X` has {n} rows but `y` has {len(y)} entries; they must be equal.")
        if n == 0:
            raise ValueError("`X` is empty: at least one calibration point is required.")
        if shift_weights is not None and not self._supports_shift:
            raise ValueError(f"{type(self).__name__} does not support covariate-shift weights.")
        self.risk_ = make_risk(self.risk)
        weight_est = getattr(self, "weight_estimator", None)
        if shift_weights is not None and weight_est is not None:
            raise ValueError("Give either `shift_weights` or a `weight_estimator`, not both.")
        shift_weights = check_weights(shift_weights, "shift_weights", n)

        to_fit = [o for o in (self.estimator, self.risk_score, weight_est) if self._needs_fitting(o)]
        if to_fit:
            idx_train, idx_cal = train_test_split(
                np.arange(n),
                test_size=self.calib_size,
                random_state=check_random_state(self.random_state),
            )
            if len(idx_train) == 0 or len(idx_cal) == 0:
                raise ValueError(
                    f"Cannot split {n} rows into a fitting part and a calibration part; pass "
                    "fitted models (e.g. sklearn.frozen.FrozenEstimator(model)) or more data."
                )
            self._fit_missing(_safe_indexing(X, idx_train), y[idx_train], X_target)
            X_cal, y_cal = _safe_indexing(X, idx_cal), y[idx_cal]
        else:  # every row calibrates, in order: no copy of X
            idx_cal = slice(None)
            self._fit_missing(None, None, X_target)
            X_cal, y_cal = X, y

        self.cal_risks_ = self.risk_(y_cal, self._predict(X_cal))
        self._warn_degenerate_risks()
        self.cal_scores_ = self._calibration_scores(X_cal, y_cal)
        if shift_weights is not None:
            self.cal_weights_ = np.array(shift_weights[idx_cal])  # never a view of the user's array
        elif self.weight_estimator_ is not None:
            self.cal_weights_ = self._estimated_weights(X_cal)
        else:
            self.cal_weights_ = None
        self.n_calibration_ = n_rows(X_cal)
        self._calibration_rows = idx_cal  # rows of X that calibrate (auto_evaluator's judge)
        copy_feature_info(self, self.estimator_, X)
        if self.verbose:
            print(
                f"[{type(self).__name__}] calibrated on {self.n_calibration_} rows; "
                f"mean calibration risk {self.cal_risks_.mean():.4f}"
                + (" (covariate-shift weighted)" if self.cal_weights_ is not None else "")
            )
        return self

    def _warn_degenerate_risks(self):
        """Warn when the calibration risks make deployment useless or measure a clipped loss."""
        L, name = self.cal_risks_, type(self).__name__
        n, n_max = len(L), int(np.sum(L == 1.0))
        tags = tags_or_none(self.estimator_)
        if self.risk_ == make_risk("zero_one") and tags is not None and tags.estimator_type == "regressor":
            warn(
                "risk='zero_one' is a classification risk (1 whenever the prediction differs from "
                "the label) but the wrapped estimator is a regressor: a prediction counts as wrong "
                f"unless it equals the label exactly ({n_max} of {n} calibration risks are 1), so "
                f"the risk that {name} controls says nothing about how close the predictions are. "
                "Choose a risk suited to a regressor, e.g. risk=make_risk('absolute', "
                "tolerance=t) or risk=make_risk('squared', scale=s)."
            )
        elif n_max == n:
            if self.risk_.clips:
                fix = (
                    f"every squared error exceeds scale={show(self.risk_.params['scale'])}: use "
                    "a larger scale in risk=make_risk('squared', scale=s), e.g. a high quantile "
                    "of squared residuals on the model's training data."
                )
            else:
                fix = (
                    "choose a risk suited to the model (for a regressor e.g. "
                    "risk=make_risk('absolute', tolerance=t) or make_risk('squared', scale=s)) "
                    "and check that y holds labels the model predicts (same classes, same "
                    "encoding)."
                )
            warn(
                f"All {n} calibration risks equal the maximum 1: the model is wrong on every "
                "calibration point (e.g. risk='zero_one' on a regressor, or labels the model "
                f"never predicts), so any point {name} deploys is expected to be wrong (risk "
                f"control then only caps how much is deployed). Fix: {fix}"
            )
        elif self.risk_.saturates(L):
            warn(
                f"{n_max} of {n} calibration risks ({n_max / n:.0%}) are clipped at 1 by "
                f"{self.risk_!r}: the guarantee covers this clipped loss, which cannot tell an "
                "error of sqrt(scale) from a larger one. Use a larger scale, e.g. a high quantile "
                "of squared residuals on the model's training data."
            )

    def _fit_missing(self, X_train, y_train, X_target):
        """Use fitted models as they are; fit clones of unfitted ones on the training split."""
        model = self.estimator
        if self._needs_fitting(model):
            model = fit_clone(model, X_train, y_train, "estimator")
        self.estimator_ = model
        score = self.risk_score
        if self._needs_fitting(score):
            # The risk predictor learns the wrapped model's risk on the training split.
            score = fit_clone(score, X_train, self.risk_(y_train, model.predict(X_train)), "risk_score")
        elif isinstance(score, str) and not hasattr(model, "predict_proba"):
            raise ValueError(
                "risk_score='proba' needs a classifier with predict_proba; for a regressor pass "
                "a fitted (or unfitted) risk predictor or a callable X -> scores (smaller = safer)."
            )
        self.risk_score_ = score
        weight_est = getattr(self, "weight_estimator", None)
        if self._needs_fitting(weight_est):
            if X_target is None:
                raise ValueError(
                    "An unfitted `weight_estimator` needs `X_target` (unlabeled rows from the test "
                    "distribution) in fit, or pass a fitted probabilistic classifier."
                )
            n_t = n_rows(X_target)
            X_both = _concat_rows(X_train, X_target)
            labels = np.r_[np.zeros(n_rows(X_train)), np.ones(n_t)]
            weight_est = fit_clone(weight_est, X_both, labels, "weight_estimator")
        if weight_est is not None and not hasattr(weight_est, "predict_proba"):
            raise TypeError("`weight_estimator` must be a probabilistic classifier (predict_proba).")
        self.weight_estimator_ = weight_est

    # -- per-sample quantities -------------------------------------------------------------------
    def _calibration_scores(self, X_cal, y_cal):
        """Scores of the calibration rows (``risk_score``); variants may use the labels too."""
        return self._scores(X_cal)

    def _predict(self, X):
        return chunked_call(self.estimator_.predict, X, self.n_jobs)

    def _scores(self, X):
        score = self.risk_score_
        if isinstance(score, str):  # "proba": 1 - max class probability
            proba = chunked_call(self.estimator_.predict_proba, X, self.n_jobs)
            values = 1.0 - _row_max(proba)
        elif hasattr(score, "predict"):
            values = chunked_call(score.predict, X, self.n_jobs)
        else:
            values = np.asarray(score(X), dtype=float)
        values = check_scores(values, "risk_score output")
        if len(values) != n_rows(X):
            raise ValueError(f"risk_score returned {len(values)} scores for {n_rows(X)} rows.")
        return values

    def _estimated_weights(self, X):
        est = self.weight_estimator_
        proba = chunked_call(est.predict_proba, X, self.n_jobs)
        col = list(est.classes_).index(1) if 1 in list(est.classes_) else proba.shape[1] - 1
        p = np.clip(proba[:, col], 1e-12, 1 - 1e-12)
        # Only ratios of weights matter in SCoRE, so the class-prior factor is dropped.
        return p / (1 - p)

    def _test_inputs(self, X, shift_weights):
        check_is_fitted(self, "cal_risks_")
        scores = self._scores(X)
        return scores, self._test_weights(X, shift_weights, len(scores))

    def _test_weights(self, X, shift_weights, m):
        """Covariate-shift density ratios of the ``m`` test rows (None without shift)."""
        if shift_weights is not None:
            if self.cal_weights_ is None:
                raise ValueError(
                    "`shift_weights` were given for the test rows but not for the calibration rows "
                    "in fit; pass them in both places (or in neither)."
                )
            return check_weights(shift_weights, "shift_weights", m)
        if self.weight_estimator_ is not None:
            return self._estimated_weights(X)
        if self.cal_weights_ is not None:
            raise ValueError(
                "fit used covariate-shift weights: pass `shift_weights` (density ratios of the test "
                "rows) to this method as well."
            )
        return None

    # -- delegation ----------------------------------------------------------------------------
    def predict(self, X):
        """Predictions of the wrapped model (guarantees live in :meth:`decide`)."""
        check_is_fitted(self, "estimator_")
        return self.estimator_.predict(X)

    @available_if(_estimator_has("predict_proba"))
    def predict_proba(self, X):
        """Class probabilities of the wrapped classifier."""
        check_is_fitted(self, "estimator_")
        return self.estimator_.predict_proba(X)

    def score(self, X, y, **kwargs):
        """Deployment rate on ``X`` (the paper's power with unit reward).

        The risk side is guaranteed by construction; measure it on held-out labels with
        :func:`sklearn_riskcontrol.metrics.realized_mdr` / ``realized_sdr`` or the scorers in
        :mod:`sklearn_riskcontrol.metrics`. ``y`` is accepted for API compatibility.
        """
        return float(np.mean(self.decide(X, **kwargs)))

    def _warn_nothing(self, reason):
        warn(f"{type(self).__name__} deploys on no test point at alpha={self.alpha}: {reason}")

    def __sklearn_tags__(self):
        # X goes untouched to the wrapped models: accept what all of them accept. Duck-typed
        # models without scikit-learn tags (e.g. an LLM wrapper with `predict`) get the defaults.
        tags = super().__sklearn_tags__()
        inner = [t for t in map(tags_or_none, (self.estimator, self.risk_score)) if t is not None]
        tags.input_tags.sparse = all(t.input_tags.sparse for t in inner)
        tags.input_tags.allow_nan = all(t.input_tags.allow_nan for t in inner)
        # predict/predict_proba delegate, so describe targets like the wrapped model does. The
        # estimator type is not copied: decision_function is a deployment margin, not a class score.
        model_tags = tags_or_none(self.estimator)
        if model_tags is not None:
            tags.target_tags = model_tags.target_tags
            tags.classifier_tags = model_tags.classifier_tags
            tags.regressor_tags = model_tags.regressor_tags
        return tags


def _row_max(proba):
    """Largest entry of each row. NumPy reduces a short last axis slowly (36 ms for 10^6 x 2):
    with few classes an elementwise maximum over the columns is 40x faster."""
    proba = np.asarray(proba)
    if proba.ndim == 2 and 1 <= proba.shape[1] <= 4:
        out = proba[:, 0].copy()
        for j in range(1, proba.shape[1]):
            np.maximum(out, proba[:, j], out=out)
        return out
    return np.max(proba, axis=1)


def _check_attainable(est):
    """Raise in ``fit`` if a calibration risk is not among ``attainable`` (Remark 4.1)."""
    if est.attainable is not None:
        _positive_attainable(est.attainable, est.cal_risks_)


def _concat_rows(a, b):
    if hasattr(a, "iloc") or hasattr(b, "iloc"):
        import pandas as pd

        return pd.concat([pd.DataFrame(a), pd.DataFrame(b)], ignore_index=True)
    return np.concatenate([np.asarray(a), np.asarray(b)])


def _margin(evalues, threshold, decided):
    """log(E / threshold) with its sign forced to agree with the exact decision."""
    with np.errstate(divide="ignore"):
        margin = np.log(evalues) - np.log(threshold)
    margin = np.where(decided, np.maximum(margin, 0.0), np.minimum(margin, np.nextafter(0.0, -1.0)))
    return margin


_SCORE_DOC_PARAMS = """
    estimator : estimator with ``predict``
        The model to deploy, already fitted (wrap it in
        :class:`sklearn.frozen.FrozenEstimator` to keep it fitted through ``clone`` /
        ``GridSearchCV``). An unfitted estimator is fitted on a ``1 - calib_size`` split of the
        data passed to ``fit``.
    risk : {"zero_one", "squared", "absolute", "threshold"}, callable or Risk, default="zero_one"
        Per-sample risk ``L = risk(y_true, y_pred)`` in [0, 1]; see
        :func:`sklearn_riskcontrol.risks.make_risk` for parameters. ``"zero_one"`` suits
        classifiers; for a regressor pass e.g. ``make_risk("squared", scale=s)`` (the squared
        error needs an explicit scale) or ``make_risk("absolute", tolerance=t)``. ``fit`` warns
        when every calibration risk is 1, when ``"zero_one"`` wraps a regressor, and when at least
        ``risks.SATURATION_WARN_SHARE`` (25%) of the squared risks are clipped at 1.
    risk_score : "proba", estimator with ``predict``, or callable, default="proba"
        Score ``s(x)``, smaller = safer: ``"proba"`` is ``1 - max predict_proba`` (classifiers);
        an estimator predicting the risk (fitted; an unfitted one is fitted on the training
        split to predict the wrapped model's risk); or a callable ``X -> scores`` such as
        :class:`RewardAwareScore`. The guarantee holds for any score; a good one gives power.
    alpha : float in (0, 1), default=0.1
        Target risk level."""


def _shared_params(cls):
    cls.__doc__ = cls.__doc__.replace("__SHARED_PARAMS__", _SCORE_DOC_PARAMS)
    return cls


@_shared_params
class SCoREMDR(_DeploymentBase):
    """SCoRE with marginal deployment risk (MDR) control.

    Deploys test point ``j`` iff its conformal risk-adjusted e-value is at least ``1/alpha``,
    which guarantees ``MDR = E[L_j 1{deploy j}] <= alpha`` for each test point, in finite
    samples, under exchangeability of calibration and test data (paper Thm. 4.2; weighted version
    Thm. 6.2 with covariate-shift weights). Decisions are computed exactly (paper Prop. 4.4 / A.1)
    in O((n + m) log n).

    Parameters
    ----------__SHARED_PARAMS__
    gamma : float in (0, 1), optional
        Plug-in level of the e-value; defaults to ``alpha`` (optimal, paper Thm. 4.6).
    attainable : None, "binary" or array-like of floats in [0, 1], default=None
        Risk values the loss can take (paper Remark 4.1): the e-values take their infimum over
        the positive ones only instead of over [0, 1], which makes them larger (with
        ``gamma <= alpha`` the decisions change only when the largest value is below 1).
        ``"binary"`` for 0/1 risks (``"zero_one"``, ``"absolute"``, ``"threshold"``). ``fit``
        checks that every calibration risk is one of the values; the test risks must be too (a
        wrong set voids the guarantee). See :ref:`score-variants`.
    label_score : None, "proba" or callable, default=None
        Label-dependent e-values (paper Remark 4.3, eq. 4.3), for classifiers: the e-value is
        the infimum over the candidate labels ``y`` in ``estimator.classes_`` whose risk
        ``risk(y, f(x))`` is positive, each with its own score ``V(x, y)`` (smaller = safer) and
        threshold; calibration rows use ``V(X_i, Y_i)`` at their labels (which must be in
        ``classes_``). ``"proba"``: ``V(x, y) = predict_proba(x)[y]``, the probability the
        model gives to a label that would make it wrong; a callable ``X -> array (m,
        n_classes)`` gives ``V`` in ``classes_`` order. ``risk_score`` is not used then.
        ``None``: eq. 4.1 with ``risk_score``. See :ref:`score-variants`.
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
    n_features_in_, feature_names_in_ : copied from the wrapped model

    Examples
    --------
    >>> from sklearn.datasets import load_digits
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.model_selection import train_test_split
    >>> from sklearn_riskcontrol import SCoREMDR
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
        estimator,
        *,
        risk="zero_one",
        risk_score="proba",
        alpha=0.1,
        gamma=None,
        attainable=None,
        label_score=None,
        weight_estimator=None,
        calib_size=0.5,
        random_state=None,
        n_jobs=None,
        verbose=0,
    ):
        self.estimator = estimator
        self.risk = risk
        self.risk_score = risk_score
        self.alpha = alpha
        self.gamma = gamma
        self.attainable = attainable
        self.label_score = label_score
        self.weight_estimator = weight_estimator
        self.calib_size = calib_size
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose

    def _gamma(self):
        return self.alpha if self.gamma is None else self.gamma

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
        lookup = {c: k for k, c in enumerate(np.asarray(classes).tolist())}
        labels = np.asarray(y_cal).tolist()
        missing = sorted({c for c in labels if c not in lookup}, key=str)
        if missing:
            raise ValueError(
                f"Calibration label(s) {show(missing[:5])} are not among the classifier's "
                "`classes_`: label-dependent e-values take their infimum over `classes_`, so "
                "every label a point can have must be one of them. Use label_score=None."
            )
        col = np.array([lookup[c] for c in labels], dtype=np.intp)
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

    def decide(self, X, *, shift_weights=None):
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

    def evalues(self, X, *, shift_weights=None):
        """Risk-adjusted conformal e-values (paper eq. 4.1 / 6.1; eq. 4.3 with
        ``label_score``): ``E[L_j E_j] <= 1``."""
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

    def decision_function(self, X, *, shift_weights=None):
        """Certified margin ``log(alpha * E_j)``: ``decide(X) == (decision_function(X) >= 0)``.

        ``-inf`` marks test points whose e-value is zero (never deployable at any level).
        """
        e = self.evalues(X, shift_weights=shift_weights)
        return _margin(e, 1.0 / self.alpha, self.decide(X, shift_weights=shift_weights))


@_shared_params
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
    ----------__SHARED_PARAMS__
    gamma : float > 0, optional
        Plug-in level of the e-values; defaults to ``alpha``. Any ``gamma > 0`` is valid (paper
        Thm. 5.1), ``gamma >= 1`` included. Without boosting, the power above ``alpha``
        vanishes asymptotically (Thm. 5.8); with ``gamma >= 1`` (and no covariate shift) every
        e-value is ``(n + 1) / (l_max + sum_i L_i)`` (``l_max`` = 1, or the largest
        ``attainable`` value), so the whole batch is deployed or none of it
        (``boosting="homo"``: all of it with probability
        ``min(1, alpha (n + 1) / (l_max + sum_i L_i))``). See :ref:`score-variants`.
    attainable : None, "binary" or array-like of floats in [0, 1], default=None
        Risk values the loss can take (paper Remark 4.1): the e-values take their infimum over
        the positive ones only instead of over [0, 1], which makes them larger. ``"binary"``
        with ``gamma = alpha`` and no covariate shift is conformal selection with BH (paper
        Cor. 5.4), and boosting then changes no decision (e-BH already deploys every point
        with a non-zero e-value). ``"binary"`` for 0/1 risks (``"zero_one"``, ``"absolute"``,
        ``"threshold"``).
        ``fit`` checks that every calibration risk is one of the values; the test risks must be
        too (a wrong set voids the guarantee). See :ref:`score-variants`.
    boosting : {None, "hete", "homo"}, default="homo"
        Divide the e-values by uniforms before e-BH (paper 5.2): ``"homo"`` by one shared
        ``U ~ Unif(0, 1)`` per batch, ``"hete"`` by one ``U_j`` per test point. Both keep SDR
        control (in expectation, over the data and the uniforms) and are far more powerful than
        ``None``: without boosting all non-zero e-values are equal and e-BH often selects
        nothing. ``"homo"`` deploys more on average and varies less from draw to draw (measured
        in ``benchmarks/bench_score_boosting.py``; see :ref:`score-boosting-choice`), hence the
        default (earlier development versions used ``"hete"``).
    weight_estimator : probabilistic classifier, optional
        See :class:`SCoREMDR`.
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

    Examples
    --------
    >>> from sklearn.datasets import load_digits
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.model_selection import train_test_split
    >>> from sklearn_riskcontrol import SCoRESDR
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
        estimator,
        *,
        risk="zero_one",
        risk_score="proba",
        alpha=0.1,
        gamma=None,
        attainable=None,
        boosting="homo",
        weight_estimator=None,
        calib_size=0.5,
        random_state=None,
        n_jobs=None,
        verbose=0,
    ):
        self.estimator = estimator
        self.risk = risk
        self.risk_score = risk_score
        self.alpha = alpha
        self.gamma = gamma
        self.attainable = attainable
        self.boosting = boosting
        self.weight_estimator = weight_estimator
        self.calib_size = calib_size
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose

    def fit(self, X, y, *, shift_weights=None, X_target=None):
        """Calibrate on labeled data ``(X, y)`` and seed the stream of boosting uniforms.

        Parameters and return value: see :meth:`SCoREMDR.fit`.
        """
        super().fit(X, y, shift_weights=shift_weights, X_target=X_target)
        # Advanced at every boosted call: fresh uniforms per batch, replayed by a refit.
        self._boosting_rng = check_random_state(self.random_state)
        return self

    def evalues(self, X, *, shift_weights=None):
        """Risk-adjusted conformal e-values of the batch (paper eq. 5.1 / 6.2), not boosted."""
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

    def decide(self, X, *, shift_weights=None):
        """e-BH deploy decisions for the batch ``X`` (risk among deployed controlled at alpha).

        Returns
        -------
        ndarray of bool, shape (m,)
        """
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

    def decision_function(self, X, *, shift_weights=None):
        """Certified margin ``log(E_j / (m / (alpha k*)))`` of the (boosted) e-values.

        Draws the next boosting uniforms, like :meth:`decide`: the two agree
        (``decide(X) == (decision_function(X) >= 0)``) when each is the same-numbered boosted call
        after a fit with the same int ``random_state`` (see the class description), and always
        with ``boosting=None``. ``-inf`` marks zero e-values.
        """
        boosted = self._boosted(X, shift_weights)
        selected, threshold = self._ebh_threshold(boosted, self.alpha)
        return _margin(boosted, threshold, selected)


class _ConcentrationBase(_DeploymentBase):
    _supports_shift = False
    _target = None
    _parameter_constraints = {
        **_DeploymentBase._parameter_constraints,
        "delta": [Interval(Real, 0, 1, closed="neither")],
        "bound": [StrOptions({"auto", "binomial", "hoeffding_bentkus", "wsr", "hoeffding",
                              "rademacher", "rautoeval", "rautoeval_or_binomial",
                              "rautoeval_or_hoeffding_bentkus"})],
        "procedure": [StrOptions({"auto", "fallback", "fixed_sequence", "union"})],
        "grid": ["array-like", None],
        "n_draws": [Interval(Integral, 1, None, closed="left")],
        "auto_evaluator": [HasMethods(["predict"]), callable, None],
    }

    def __init__(
        self,
        estimator,
        *,
        risk="zero_one",
        risk_score="proba",
        alpha=0.1,
        delta=0.1,
        bound="auto",
        procedure="auto",
        grid=None,
        n_draws=100,
        calib_size=0.5,
        random_state=None,
        n_jobs=None,
        verbose=0,
        auto_evaluator=None,
    ):
        self.estimator = estimator
        self.risk = risk
        self.risk_score = risk_score
        self.alpha = alpha
        self.delta = delta
        self.auto_evaluator = auto_evaluator
        self.bound = bound
        self.procedure = procedure
        self.grid = grid
        self.n_draws = n_draws
        self.calib_size = calib_size
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose

    def fit(self, X, y, *, shift_weights=None):
        """Calibrate and compute the concentration threshold ``threshold_``.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Calibration inputs (labeled and, with an ``auto_evaluator``, unlabeled rows).
        y : array-like of shape (n_samples,)
            Labels. With an ``auto_evaluator``, unlabeled rows are marked like in
            :class:`~sklearn_riskcontrol.RAutoEvalPlus`: ``-1`` for classes, NaN for
            regression (a missing value in an object ``y`` too); the auto-evaluator labels
            them and the labeled calibration rows. Without one, every row must be labeled.
        shift_weights : None
            Accepted only to raise a clear error: these baselines assume no covariate shift.

        Returns
        -------
        self
        """
        judge = None
        if self.auto_evaluator is not None:
            judge = self._split_unlabeled(X, y, shift_weights)
        else:
            if self.bound.startswith("rautoeval"):
                raise ValueError(
                    f"bound={self.bound!r} needs an `auto_evaluator` (a fitted model with predict, "
                    "or a callable X -> labels) and unlabeled rows in fit; pass one, or use a "
                    "labels-only bound ('auto')."
                )
            super().fit(X, y, shift_weights=shift_weights)
        self.n_unlabeled_ = 0 if judge is None else int(judge[1].shape[0])
        bound = self.bound
        if judge is not None and bound == "auto":
            # R-AutoEval+ or the labels alone, whichever rejects (union bound over the two)
            bound = "rautoeval_or_" + ("binomial" if self.risk_.binary else "hoeffding_bentkus")
        elif bound == "auto" and not self.risk_.binary:
            # The exact binomial p-values need losses that are 0/1 by construction; 0/1 values
            # on this calibration draw do not make a [0, 1] loss binary.
            bound = "hoeffding_bentkus"
        self.result_ = concentration_threshold(
            self.cal_risks_,
            self.cal_scores_,
            self.alpha,
            target=self._target,
            bound=bound,
            procedure=self.procedure,
            delta=self.delta,
            grid=self.grid,
            n_draws=self.n_draws,
            random_state=self.random_state,
            **({} if judge is None else dict(
                cal_judge_risks=judge[0], unlabeled_judge_risks=judge[1],
                unlabeled_scores=judge[2],
            )),
        )
        self.threshold_ = self.result_.threshold
        return self

    def _split_unlabeled(self, X, y, shift_weights):
        """Calibrate on the labeled rows; return the judge arrays ``(J, U, T)`` for
        ``bound="rautoeval"`` (None, with a warning, when ``y`` marks no unlabeled row)."""
        self._validate_params()
        if self.bound != "auto" and not self.bound.startswith("rautoeval"):
            raise ValueError(
                f"An `auto_evaluator` is used only by the prediction-powered bounds ('rautoeval', "
                f"'rautoeval_or_binomial', 'rautoeval_or_hoeffding_bentkus'; 'auto' picks one), "
                f"but bound={self.bound!r}; pass bound='auto', or auto_evaluator=None for a "
                "labels-only bound."
            )
        if y is None:
            return super().fit(X, y)  # raises the usual error
        X = indexable_rows(X)
        y = np.asarray(y)
        if y.ndim == 2 and y.shape[1] == 1:
            y = y.ravel()
        if y.ndim != 1 or n_rows(X) != len(y):
            raise ValueError(f"`X` has {n_rows(X)} rows but `y` has shape {y.shape}; `y` must "
                             "be 1-d with one entry per row.")
        classification = is_classification(self.estimator, y)
        idx_lab, idx_unl = labeled_and_unlabeled(y, classification,
                                                  "calibration needs labeled rows")
        y_lab = y[idx_lab]
        if y_lab.dtype.kind == "O":
            y_lab = np.array(y_lab.tolist())
        X_lab = _safe_indexing(X, idx_lab)
        super().fit(X_lab, y_lab, shift_weights=shift_weights)
        if idx_unl.size == 0:
            if self.bound.startswith("rautoeval"):
                raise ValueError(
                    f"bound={self.bound!r} needs unlabeled rows, marked in `y` with -1 (classes) or "
                    "NaN (regression), for the auto_evaluator to label; `y` marks none."
                )
            warn(
                f"{type(self).__name__} got an `auto_evaluator` but `y` marks no unlabeled row "
                "(-1 for classes, NaN for regression), so the threshold uses the labels alone "
                "(the default labels-only bound)."
            )
            return None
        X_cal = _safe_indexing(X_lab, self._calibration_rows)
        X_unl = _safe_indexing(X, idx_unl)
        n_cal = self.cal_risks_.shape[0]
        if idx_unl.size < n_cal:
            raise ValueError(
                f"{idx_unl.size} unlabeled rows for {n_cal} labeled calibration rows: the "
                "auto_evaluator's losses are averaged in blocks of r = floor(n_unlabeled / "
                "n_labeled) >= 1 unlabeled rows per labeled row, so at least as many unlabeled "
                "rows as labeled ones are needed. Add unlabeled rows, or drop the auto_evaluator."
            )
        J = self.risk_(self._judge_labels(X_cal, classification), self._predict(X_cal))
        U = self.risk_(self._judge_labels(X_unl, classification), self._predict(X_unl))
        self.cal_judge_risks_, self.unlabeled_judge_risks_ = J, U
        self.unlabeled_scores_ = self._scores(X_unl)
        return J, U, self.unlabeled_scores_

    def _judge_labels(self, X, classification):
        labels = raw_judge_labels(self.auto_evaluator, X, self.n_jobs)
        if labels.ndim == 2 and labels.shape[1] == 1:
            labels = labels.ravel()
        if labels.ndim != 1 or labels.shape[0] != n_rows(X):
            raise ValueError(f"The auto_evaluator returned an array of shape {labels.shape} for "
                             f"{n_rows(X)} rows; it must return one label per row.")
        if unlabeled_mask(labels, classification).any():
            raise ValueError("The auto_evaluator left rows unlabeled (it returned the unlabeled "
                             "marker -1 or NaN); it must label every row it is given.")
        return labels

    def decide(self, X):
        """Deploy where the score is at most ``threshold_``."""
        scores, _ = self._test_inputs(X, None)
        decided = self.result_.decide(scores)
        # An infinite threshold was already reported by a warning in fit.
        if decided.size and not decided.any() and np.isfinite(self.threshold_):
            self._warn_nothing(
                f"every test score is above the certified threshold {self.threshold_:.4g}."
            )
        return decided

    def decision_function(self, X):
        """Margin ``threshold_ - score``: ``decide(X) == (decision_function(X) >= 0)``."""
        scores, _ = self._test_inputs(X, None)
        return self.threshold_ - scores


@_shared_params
class ConcentrationMDR(_ConcentrationBase):
    """PAC control of MDR: deploy where ``s(x) <= t_hat`` (Learn-then-Test, or paper App. D.4).

    Guarantee: PAC-type (``MDR(t_hat) = E[L 1{s(X) <= t_hat}] <= alpha`` with probability
    >= 1 - delta over the calibration data), not SCoRE's control in expectation
    (:class:`SCoREMDR`). By default ``t_hat`` is the largest threshold reached by
    fixed-sequence testing of ``H_t: MDR(t) > alpha`` over all thresholds in increasing order
    (exact binomial p-values for 0/1 losses, Hoeffding-Bentkus otherwise; valid since ``MDR(t)``
    is nondecreasing). ``bound="hoeffding", procedure="union"`` (Hoeffding over a fixed grid)
    and ``bound="rademacher"`` are the SCoRE paper's baselines. See
    :func:`~sklearn_riskcontrol.evalues.concentration_threshold` for every option.

    Parameters
    ----------__SHARED_PARAMS__
    delta : float in (0, 1), default=0.1
        Failure probability.
    bound : {"auto", "binomial", "hoeffding_bentkus", "wsr", "hoeffding", "rademacher", \
"rautoeval", "rautoeval_or_binomial", "rautoeval_or_hoeffding_bentkus"}, default="auto"
        Concentration bound or p-value; ``"auto"`` = ``"binomial"`` when the risk is 0/1 by
        construction (``"zero_one"``, ``"absolute"``, ``"threshold"``: ``Risk.binary``), else
        ``"hoeffding_bentkus"`` (the default was ``"hoeffding"`` before the Learn-then-Test
        options). With an ``auto_evaluator``, ``"auto"`` = ``"rautoeval_or_"`` + that bound:
        at each threshold ``min(1, p_labels / 0.9, p_R-AutoEval+ / 0.1)`` (a weighted union
        bound: valid; about the labels-only power, plus what a strong judge adds);
        ``"rautoeval"`` uses R-AutoEval+ alone. The ``rautoeval`` bounds need an
        ``auto_evaluator``; any other explicit bound with one is an error.
    procedure : {"auto", "fallback", "fixed_sequence", "union"}, default="auto"
        Multiple testing over the thresholds; ``"auto"`` = ``"fixed_sequence"`` over all
        thresholds for the p-value bounds, ``"union"`` for ``"hoeffding"``.
    grid : array-like, optional
        Candidate thresholds, fixed before seeing the calibration data (labels and scores);
        default: all thresholds for ``"fixed_sequence"`` and ``"rademacher"``, else 101 points
        on [0, 1] (which assumes scores in [0, 1]).
    n_draws : int, default=100
        Rademacher sign vectors for the Rademacher complexity estimate.
    calib_size, random_state, n_jobs, verbose : see :class:`SCoREMDR`
    auto_evaluator : estimator with ``predict``, callable or None, default=None
        A judge that labels rows (a fitted model, or a callable ``X -> labels``, like
        :class:`~sklearn_riskcontrol.RAutoEvalPlus`'s ``autoevaluator``), fixed independently
        of the calibration data. With one, ``fit(X, y)`` takes unlabeled rows too (``-1`` in
        ``y`` for classes, NaN for regression, at least as many as the labeled calibration
        rows) and the p-value at each threshold uses R-AutoEval+'s on the labeled risks, the
        risks against the judge's labels on the same rows and on the unlabeled rows
        (prediction-powered Learn-then-Test; by default combined with the labels-only p-value,
        see ``bound``; default grid 101 points on [0, 1]). The guarantee is unchanged whatever
        the judge's quality (a useless judge costs 10% of the labels-only test's level; a
        strong one can certify larger thresholds with the same labels). Labeled
        and unlabeled rows must be exchangeable draws from the test distribution, each in an
        exchangeable order (nothing is shuffled). If ``y`` marks no unlabeled row, a warning
        says so and the labels-only default bound is used.

    Examples
    --------
    >>> from sklearn.datasets import load_digits
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.model_selection import train_test_split
    >>> from sklearn_riskcontrol import ConcentrationMDR
    >>> X, y = load_digits(return_X_y=True)
    >>> X_fit, X_rest, y_fit, y_rest = train_test_split(X, y, train_size=600, random_state=0)
    >>> X_cal, X_test, y_cal, y_test = train_test_split(X_rest, y_rest, test_size=500, random_state=0)
    >>> model = LogisticRegression(max_iter=2000).fit(X_fit, y_fit)
    >>> base = ConcentrationMDR(model, alpha=0.15).fit(X_cal, y_cal)
    >>> bool(base.decide(X_test).mean() > 0)
    True
    >>> base.result_.bound, base.result_.procedure
    ('binomial', 'fixed_sequence')
    """
    _target = "mdr"


@_shared_params
class ConcentrationSDR(_ConcentrationBase):
    """PAC selective risk control: deploy where ``s(x) <= t_hat`` (Learn-then-Test, App. D.4).

    Guarantee: PAC-type: the risk among deployed points ``E[L | s(X) <= t_hat] <= alpha`` with
    probability >= 1 - delta over the calibration data (not SCoRE's control in expectation,
    :class:`SCoRESDR`). By default each threshold of ``np.linspace(0, 1, 100)`` gets a p-value
    for ``H_t: E[L | s(X) <= t] > alpha`` from the losses of the calibration points below it
    (exact binomial for 0/1 losses, Hoeffding-Bentkus otherwise), and the fallback procedure
    (ascending thresholds, family-wise error <= delta) picks ``t_hat``. It deploys at least as
    much as MAPIE's Learn-then-Test ``BinaryClassificationController`` in
    ``benchmarks/bench_pac_selective.py``. ``bound="hoeffding", procedure="union"`` is the SCoRE
    paper's baseline (an upper bound on ``E[L 1{s(X) <= t}]`` over a lower bound on
    ``P(s(X) <= t)``). See :func:`~sklearn_riskcontrol.evalues.concentration_threshold`.

    Parameters
    ----------__SHARED_PARAMS__
    delta, bound, grid, n_draws, calib_size, random_state, n_jobs, verbose, auto_evaluator
        See :class:`ConcentrationMDR` (default grid: 100 points on [0, 1], fixed in advance:
        the SDR grid must not depend on the calibration data). With an ``auto_evaluator`` the
        p-value at ``t`` uses the labeled calibration rows with score ``<= t`` and the
        unlabeled rows with score ``<= t`` (valid given both counts: the two are then i.i.d.
        draws of ``X`` given ``s(X) <= t``).
    procedure : {"auto", "fallback", "fixed_sequence", "union"}, default="auto"
        ``"auto"`` = ``"fallback"`` for the p-value bounds, ``"union"`` for ``"hoeffding"``.

    Examples
    --------
    >>> from sklearn.datasets import load_digits
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.model_selection import train_test_split
    >>> from sklearn_riskcontrol import ConcentrationSDR
    >>> X, y = load_digits(return_X_y=True)
    >>> X_fit, X_rest, y_fit, y_rest = train_test_split(X, y, train_size=600, random_state=0)
    >>> X_cal, X_test, y_cal, y_test = train_test_split(X_rest, y_rest, test_size=500, random_state=0)
    >>> model = LogisticRegression(max_iter=2000).fit(X_fit, y_fit)
    >>> base = ConcentrationSDR(model, alpha=0.1).fit(X_cal, y_cal)
    >>> base.decide(X_test).dtype
    dtype('bool')
    >>> base.result_.bound, base.result_.procedure
    ('binomial', 'fallback')

    Few labels plus an auto-evaluator (here a second model; in practice e.g. an LLM judge):
    200 labeled and the rest unlabeled calibration rows (``-1`` in ``y``), shuffled split.

    >>> import numpy as np
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> judge = RandomForestClassifier(random_state=0).fit(X_fit, y_fit)
    >>> labeled, _ = train_test_split(np.arange(len(y_cal)), train_size=200, random_state=0)
    >>> y_semi = np.full_like(y_cal, -1)
    >>> y_semi[labeled] = y_cal[labeled]
    >>> ppi = ConcentrationSDR(model, alpha=0.1, auto_evaluator=judge).fit(X_cal, y_semi)
    >>> lab = ConcentrationSDR(model, alpha=0.1).fit(X_cal[labeled], y_cal[labeled])
    >>> ppi.result_.bound, ppi.n_unlabeled_
    ('rautoeval_or_binomial', 497)
    >>> # risk among deployed <= 0.1 with probability >= 0.9 for both; deployed share:
    >>> float(ppi.decide(X_test).mean()), float(lab.decide(X_test).mean())
    (1.0, 1.0)
    """
    _target = "sdr"


def pipeline_decide(pipeline, X, **decide_params):
    """``decide`` of a :class:`~sklearn.pipeline.Pipeline` whose last step is a SCoRE estimator.

    A ``Pipeline`` exposes only the methods scikit-learn knows (``predict``, ``score``, ...), so
    ``pipe.decide`` does not exist. This is the idiom
    ``pipe[-1].decide(pipe[:-1].transform(X), **decide_params)``: the earlier steps transform
    ``X`` as in ``predict``, then the last step decides on the transformed rows.

    The guarantee needs calibration and test rows to be exchangeable *after* the earlier steps,
    so these must not be fitted on the calibration rows: fit them on training data and wrap
    them in :class:`sklearn.frozen.FrozenEstimator` (as in the example), so that ``pipe.fit``
    only calibrates; ``GridSearchCV`` over the last step's ``alpha`` then works as usual.

    Parameters
    ----------
    pipeline : fitted Pipeline
        Its last step has a ``decide`` method (:class:`SCoREMDR`, :class:`SCoRESDR`,
        :class:`ConcentrationMDR`, :class:`ConcentrationSDR`); e.g. a ``GridSearchCV``'s
        ``best_estimator_``.
    X : array-like of shape (m, n_features)
        Test rows, in the pipeline's input space.
    **decide_params
        Passed to the last step's ``decide`` (e.g. ``shift_weights``).

    Returns
    -------
    ndarray of bool, shape (m,)

    Examples
    --------
    >>> from sklearn.datasets import load_digits
    >>> from sklearn.frozen import FrozenEstimator
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.model_selection import train_test_split
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import StandardScaler
    >>> from sklearn_riskcontrol import SCoREMDR
    >>> from sklearn_riskcontrol.selective import pipeline_decide
    >>> X, y = load_digits(return_X_y=True)
    >>> X_fit, X_rest, y_fit, y_rest = train_test_split(X, y, train_size=600, random_state=0)
    >>> X_cal, X_test, y_cal, y_test = train_test_split(X_rest, y_rest, test_size=500, random_state=0)
    >>> scaler = StandardScaler().fit(X_fit)
    >>> model = LogisticRegression().fit(scaler.transform(X_fit), y_fit)
    >>> # frozen steps: pipe.fit only calibrates, on rows no step was fitted on
    >>> pipe = make_pipeline(FrozenEstimator(scaler),
    ...                      SCoREMDR(FrozenEstimator(model), alpha=0.05)).fit(X_cal, y_cal)
    >>> deploy = pipeline_decide(pipe, X_test)
    >>> deploy.shape, deploy.dtype
    ((500,), dtype('bool'))
    """
    last = pipeline[-1]
    if not hasattr(last, "decide"):
        raise TypeError(
            f"The last step of the pipeline is a {type(last).__name__}, which has no `decide`; "
            "pipeline_decide needs a pipeline ending in a SCoRE estimator (e.g. SCoREMDR)."
        )
    Xt = pipeline[:-1].transform(X) if len(pipeline) > 1 else X
    return last.decide(Xt, **decide_params)
