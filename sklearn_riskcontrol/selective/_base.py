"""What every selective-deployment estimator shares: calibration split, scores, covariate-shift
weights, ``decide`` plumbing, and :func:`pipeline_decide`."""

from __future__ import annotations

from collections.abc import Callable
from numbers import Integral, Real
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike
from sklearn.base import BaseEstimator, MetaEstimatorMixin, _fit_context
from sklearn.model_selection import train_test_split
from sklearn.utils import _safe_indexing
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from .._typing import BoolArray
from .._validation import (
    RANDOM_STATE,
    check_labels,
    check_random_state,
    check_scores,
    check_weights,
    show,
    warn,
)
from .._wrapping import (
    DelegatesPredictions,
    chunked_call,
    copy_feature_info,
    fit_clone,
    indexable_rows,
    n_rows,
    needs_fitting,
    tags_or_none,
    wrapped_estimator,
)
from ..risks import RISK_NAMES, make_risk
from ._groups import GROUPS_CONSTRAINT, check_groups_inputs, fit_groups, group_report

if TYPE_CHECKING:
    import pandas as pd
    from sklearn.pipeline import Pipeline
    from typing_extensions import Self  # typing.Self: Python >= 3.11

__all__ = ["pipeline_decide"]


class _DeploymentBase(DelegatesPredictions, MetaEstimatorMixin, BaseEstimator):
    """Shared calibration logic: risks, scores, covariate-shift weights of calibration rows."""

    _parameter_constraints = {
        "estimator": [HasMethods(["predict"])],
        "risk": [StrOptions(set(RISK_NAMES)), callable],
        "risk_score": [StrOptions({"proba"}), HasMethods(["predict"]), callable],
        "alpha": [Interval(Real, 0, 1, closed="neither")],
        "groups": GROUPS_CONSTRAINT,
        "calib_size": [Interval(Real, 0, 1, closed="neither")],
        "random_state": RANDOM_STATE,
        "n_jobs": [Integral, None],
        "verbose": ["verbose"],
    }
    _supports_shift = True

    # -- calibration -------------------------------------------------------------------------
    @_fit_context(prefer_skip_nested_validation=False)
    def fit(
        self,
        X: ArrayLike,
        y: ArrayLike,
        *,
        shift_weights: ArrayLike | None = None,
        X_target: ArrayLike | None = None,
    ) -> Self:
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
        X, y, shift_weights = self._check_fit_inputs(X, y, shift_weights)
        check_groups_inputs(self, shift_weights, X_target)
        X_cal, y_cal, idx_cal = self._calibration_rows_and_models(X, y, X_target)
        self.cal_risks_ = self._risks(X_cal, y_cal)
        self._warn_degenerate_risks()
        self.cal_scores_ = self._calibration_scores(X_cal, y_cal)
        self.cal_weights_ = self._calibration_weights(X_cal, idx_cal, shift_weights)
        self.n_calibration_ = n_rows(X_cal)
        # groups of the calibration rows, after the split (the same rows as without groups)
        fit_groups(self, X_cal)
        self._calibration_rows = idx_cal  # rows of X that calibrate (auto_evaluator's judge)
        copy_feature_info(self, self.estimator_, X)
        if self.verbose:
            print(
                f"[{type(self).__name__}] calibrated on {self.n_calibration_} rows; "
                f"mean calibration risk {self.cal_risks_.mean():.4f}"
                + (" (covariate-shift weighted)" if self.cal_weights_ is not None else "")
            )
        return self

    def _check_fit_inputs(self, X, y, shift_weights):
        """Checked ``X`` (indexable rows), ``y`` and ``shift_weights``; sets ``risk_``."""
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
        if shift_weights is not None and getattr(self, "weight_estimator", None) is not None:
            raise ValueError("Give either `shift_weights` or a `weight_estimator`, not both.")
        return X, y, check_weights(shift_weights, "shift_weights", n)

    def _calibration_rows_and_models(self, X, y, X_target):
        """Fit clones of unfitted models on a split of the rows (``calib_size`` calibrate);
        return the calibration rows ``X_cal``, ``y_cal`` and their index in ``X``."""
        weight_est = getattr(self, "weight_estimator", None)
        if not any(needs_fitting(o) for o in (self.estimator, self.risk_score, weight_est)):
            self._fit_missing(None, None, X_target)
            return X, y, slice(None)  # every row calibrates, in order: no copy of X
        n = n_rows(X)
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
        return _safe_indexing(X, idx_cal), y[idx_cal], idx_cal

    def _calibration_weights(self, X_cal, idx_cal, shift_weights):
        """Covariate-shift weights of the calibration rows: given, estimated, or None."""
        if shift_weights is not None:
            return np.array(shift_weights[idx_cal])  # never a view of the user's array
        if self.weight_estimator_ is not None:
            return self._estimated_weights(X_cal)
        return None

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
        if needs_fitting(model):
            model = fit_clone(model, X_train, y_train, "estimator")
        self.estimator_ = model
        score = self.risk_score
        if needs_fitting(score):
            # The risk predictor learns the wrapped model's risk on the training split.
            score = fit_clone(score, X_train, self.risk_(y_train, model.predict(X_train)), "risk_score")
        elif isinstance(score, str) and not hasattr(model, "predict_proba"):
            raise ValueError(
                "risk_score='proba' needs a classifier with predict_proba; for a regressor pass "
                "a fitted (or unfitted) risk predictor or a callable X -> scores (smaller = safer)."
            )
        self.risk_score_ = score
        weight_est = getattr(self, "weight_estimator", None)
        if needs_fitting(weight_est):
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

    def _risks(self, X, y):
        """Per-point risks ``risk_(y, f(X))`` of the wrapped model on labeled rows: what ``fit``
        calibrates on, and what ``metrics.make_selective_scorer`` charges deployed points."""
        return self.risk_(y, self._predict(X))

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
    def group_report(
        self,
        X: ArrayLike,
        y: ArrayLike | None = None,
        *,
        groups: str | Callable[..., ArrayLike] | None = None,
    ) -> pd.DataFrame:
        """Per-group deployment on rows ``X``: one row per group, as a pandas DataFrame.

        Columns: ``n_rows`` (rows of ``X`` in the group), ``deployed_share`` (of them,
        deployed by ``decide(X)``, one batch); for an estimator fitted with ``groups`` and no
        ``groups`` given here, ``n_calibration`` (0 for a group unseen in calibration, which
        abstains) and, for the PAC estimators, ``threshold`` (the group's certified threshold,
        -inf when it abstains); with ``y``, the realized risk of the group on these rows,
        ``risk_among_deployed`` (SDR; NaN when nothing is deployed) or ``mdr`` (the mean of
        ``L * deploy``). A realized risk is **one draw**: the guarantee bounds its expectation
        (SCoRE) or the population risk with probability ``1 - delta`` (PAC), so one value may
        exceed ``alpha`` by chance.

        Parameters
        ----------
        X : array-like of shape (m, n_features)
            Rows to decide on (one batch).
        y : array-like of shape (m,), optional
            Their labels, for the realized risk.
        groups : array-like of shape (m,) or callable, optional
            Group label of each row (or ``X -> labels``); default: the estimator's ``groups``
            rule (required when it was fitted without groups).

        Returns
        -------
        pandas.DataFrame
            Indexed by group label (sorted).
        """
        return group_report(self, X, y, groups)

    _always_forwarded = ("predict",)  # `estimator` must have it

    def _delegate(self):
        check_is_fitted(self, "estimator_")
        return self.estimator_

    def _delegation_targets(self):
        return wrapped_estimator(self)

    def score(self, X: ArrayLike, y: ArrayLike, **kwargs: Any) -> float:
        """Deployed share on ``X``: the fraction of rows :meth:`decide` deploys on.

        This is the paper's power with unit reward and ``GridSearchCV``'s default scoring. It
        ignores ``y`` (accepted for API compatibility), hence what a deployed error costs: a
        larger ``alpha`` deploys more, so ``GridSearchCV`` over ``alpha`` with this score always
        prefers the largest ``alpha`` of the grid (or the first listed of several that deploy the
        same share). To tune ``alpha``, pass ``scoring=make_selective_scorer(error_cost=...)``
        instead (:func:`sklearn_riskcontrol.selective.make_selective_scorer`): each deployed point
        earns a gain minus the cost of its risk, and the search picks the level whose deployments
        pay for themselves. Measure the realized risk on held-out labels with
        :func:`sklearn_riskcontrol.selective.realized_mdr` / ``realized_sdr``.
        """
        return float(np.mean(self.decide(X, **kwargs)))

    def _warn_nothing(self, reason):
        if getattr(self, "_silent", False):  # one group's view: the grouped caller warns once
            return
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


_SCORE_DOC_PARAMS = """\
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


def pipeline_decide(pipeline: Pipeline, X: ArrayLike, **decide_params: Any) -> BoolArray:
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
    >>> from sklearn_riskcontrol.selective import SCoREMDR, pipeline_decide
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
    return last.decide(_last_step_input(pipeline, X), **decide_params)


def _last_step_input(pipeline, X):
    """``X`` transformed by every step of ``pipeline`` but the last, as ``predict`` does."""
    return pipeline[:-1].transform(X) if len(pipeline) > 1 else X
