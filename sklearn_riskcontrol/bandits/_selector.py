"""BestModelSelector: pick the best of several candidate estimators within an evaluation budget."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from numbers import Real
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from sklearn.base import BaseEstimator, MetaEstimatorMixin, _fit_context, clone
from sklearn.utils import get_tags
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.validation import _num_samples, check_array, check_is_fitted, column_or_1d

from .._validation import RANDOM_STATE, check_labels, check_random_state
from .._wrapping import DelegatesToModel, copy_feature_info, fit_clone, is_fitted
from ._pulse import PULSE
from ..evaluation import EstimatorOracle
from ..evaluation import EvaluationStore
from .._typing import Estimator, RandomStateLike

if TYPE_CHECKING:
    from typing_extensions import Self  # typing.Self: Python >= 3.11

__all__ = ["BestModelSelector"]


def _is_fitted(est):
    # an object without `fit` (duck-typed predictor) is taken as ready to predict
    return is_fitted(est) or not hasattr(est, "fit")


class BestModelSelector(DelegatesToModel, MetaEstimatorMixin, BaseEstimator):
    """Find the best of several candidate models on a pool of examples, within a budget.

    Each candidate is a bandit arm; scoring candidate ``i`` on example ``j`` (one prediction and
    one per-example score) is one evaluation. ``fit(X, y)`` runs ``strategy`` (default
    :class:`PULSE`) on an :class:`EstimatorOracle` built from the candidates and the pool
    ``(X, y)``, and keeps the candidate it identifies as best; ``predict`` and the other
    prediction methods delegate to it, so the selector drops into a ``Pipeline``.

    Fitted candidates are used as they are and never refitted (wrap them in
    ``sklearn.frozen.FrozenEstimator`` to keep them fitted through ``clone``, e.g. in
    ``GridSearchCV``). If some candidates are not fitted, ``(X, y)`` is split: clones of the
    unfitted candidates are fitted on one part and every candidate is evaluated on the other
    (``calib_size``), like ``TunedThresholdClassifierCV``.

    Parameters
    ----------
    estimators : list of estimators
        The candidate models.
    strategy : estimator or None, default=None
        A best-model strategy (:class:`PULSE`, :class:`UCBE`, :class:`UCBELRF`, ...); it is
        cloned before fitting. ``None`` uses ``PULSE(budget=0.3, batch_size=b, rank=2,
        fractional_scores=True)`` with ``b = min(16, n_pool // 4)`` (at least 1) and PULSE's
        default ``refit_every="auto"`` (a fixed number of refits per run, so the cost grows
        linearly with the pool). The former default refitted every 10 steps, which
        made the cost quadratic in the pool size (16,000 examples: 7 s instead of about 1 s);
        pass ``strategy=PULSE(budget=0.3, batch_size=16, refit_every=10, rank=2,
        fractional_scores=True, random_state=...)`` for exactly the former runs (pools of at
        least 64 examples).
    scoring : callable, {"accuracy", "absolute_error"} or None, default=None
        Per-example score ``scoring(y_true, y_pred) -> array in [0, 1]`` (higher = better); a
        score outside [0, 1] raises a ``ValueError`` naming the candidate and the example.
        ``None`` picks by candidate type:

        - classifiers: ``"accuracy"``, ``1{y_pred == y_true}``;
        - regressors: ``"absolute_error"``, ``1 - min(1, |y_true - y_pred| / scale)`` with
          ``scale = max(y) - min(y)`` over the evaluation pool (:class:`~sklearn_riskcontrol.
          bandits.oracles.ScaledAbsoluteError`). The scale depends on the pool's labels only,
          so the scores are fixed before any evaluation and the guarantees are unaffected;
          models are ranked by mean absolute error, and a mean score ``s`` converts back to a
          (clipped) mean absolute error ``(1 - s) * scale``.

        Aggregate scikit-learn scorers (``"r2"``, ``"neg_mean_absolute_error"``, ...) have no
        bounded per-example version and are rejected.
    response_method : {"predict", "predict_proba", "decision_function"}, default="predict"
        Method whose output is given to ``scoring`` (the strings and the default need
        ``"predict"``).
    calib_size : float in (0, 1), default=0.5
        Fraction of ``(X, y)`` used as the evaluation pool when some candidate must be fitted.
    random_state : int, RandomState, numpy.random.Generator or None, default=None
        Seeds the split and the default strategy.
    store : str, path-like, EvaluationStore or None, default=None
        Durable store of every evaluation bought (a path opens a
        :class:`~sklearn_riskcontrol.evaluation.SQLiteStore`): a ``fit`` in a new process with
        the same store, candidates, pool and an integer ``random_state`` replays the stopped
        run, reads the stored scores back instead of recomputing them, and ends with the same
        selection. See :doc:`/running_evaluations`.

    Attributes
    ----------
    estimators_ : list of estimators
        The fitted candidates.
    best_index_ : int
    best_estimator_ : estimator
    strategy_ : estimator
        The fitted strategy (``means_``, ``history_``, ``n_evaluations_``, and for PULSE and
        UCBE ``confidence_intervals``).
    means_ : ndarray of shape (n_candidates,)
        Estimated mean score of each candidate on the pool, within [0, 1] (see the strategy's
        ``means_``).
    scoring_ : callable
        The per-example score used (``scoring`` resolved).
    n_evaluations_ : int
    oracle_ : EstimatorOracle
    n_features_in_ : int
    feature_names_in_ : ndarray of str
    classes_ : ndarray
        Copied from the best estimator when it has them.

    Examples
    --------
    Classifiers, scored by accuracy on a shuffled held-out pool:

    >>> from sklearn.datasets import make_classification
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.model_selection import train_test_split
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> from sklearn_riskcontrol.bandits import BestModelSelector, UCBE
    >>> X, y = make_classification(2000, n_informative=5, random_state=0)
    >>> X_fit, X_pool, y_fit, y_pool = train_test_split(X, y, test_size=0.5, random_state=0)
    >>> candidates = [DecisionTreeClassifier(max_depth=d, random_state=0).fit(X_fit, y_fit)
    ...               for d in (1, 2, 4, 8)] + [LogisticRegression().fit(X_fit, y_fit)]
    >>> sel = BestModelSelector(candidates, strategy=UCBE(budget=0.5, batch_size=20,
    ...                                                   random_state=0))
    >>> sel = sel.fit(X_pool, y_pool)
    >>> sel.best_estimator_ is candidates[sel.best_index_], sel.n_evaluations_
    (True, 2500)
    >>> sel.predict(X_pool[:3]).shape
    (3,)

    Regressors, scored by default by ``1 - min(1, |y - y_pred| / (max(y) - min(y)))``; the
    printed means are realized estimates of one run (each model's pool mean of that score),
    and PULSE's intervals hold for all models at once with probability >= 1 - delta:

    >>> from sklearn.datasets import load_diabetes
    >>> from sklearn.dummy import DummyRegressor
    >>> from sklearn.linear_model import LinearRegression
    >>> X, y = load_diabetes(return_X_y=True)
    >>> X_fit, X_pool, y_fit, y_pool = train_test_split(X, y, test_size=0.5, random_state=0)
    >>> regs = [DummyRegressor().fit(X_fit, y_fit), LinearRegression().fit(X_fit, y_fit)]
    >>> sel = BestModelSelector(regs, random_state=0).fit(X_pool, y_pool)
    >>> sel.scoring_
    ScaledAbsoluteError(scale=290)
    >>> int(sel.best_index_), sel.means_.round(2)    # realized, one run (exact: 0.78, 0.85)
    (1, array([0.81, 0.85]))
    >>> sel.strategy_.confidence_intervals(delta=0.1).round(2)   # both cover, w.p. >= 0.9
    array([[0.7 , 0.91],
           [0.79, 0.9 ]])
    """

    _parameter_constraints = {
        "estimators": [list],
        "strategy": [None, HasMethods(["fit"])],
        "scoring": [None, callable, str],
        "response_method": [StrOptions({"predict", "predict_proba", "decision_function"})],
        "calib_size": [Interval(Real, 0, 1, closed="neither")],
        "random_state": RANDOM_STATE,
        "store": [None, str, os.PathLike, EvaluationStore],
    }

    def __init__(
        self,
        estimators: Sequence[Estimator],
        *,
        strategy: Estimator = None,
        scoring: str | Callable[..., ArrayLike] | None = None,
        response_method: str = "predict",
        calib_size: float = 0.5,
        random_state: RandomStateLike = None,
        store: str | os.PathLike[str] | EvaluationStore | None = None,
    ) -> None:
        self.estimators = estimators
        self.strategy = strategy
        self.scoring = scoring
        self.response_method = response_method
        self.calib_size = calib_size
        self.random_state = random_state
        self.store = store

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X: ArrayLike, y: ArrayLike, *, side_scores: ArrayLike | None = None) -> Self:
        """Identify the best candidate on the pool ``(X, y)``.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        side_scores : array-like of shape (n_side_models, n_samples), default=None
            Scores of other models on the same examples (the rows of ``X``), passed to the
            strategy (side information for :class:`PULSE`). Requires fitted candidates.

        Returns
        -------
        self
        """
        X, y, rng = self._check_fit_inputs(X, y)
        estimators, X_pool, y_pool = self._candidates_and_pool(X, y, rng, side_scores)
        oracle = EstimatorOracle(
            estimators, X_pool, y_pool, scoring=self.scoring, response_method=self.response_method,
            store=self.store,
        )
        self.strategy_ = self._strategy(_num_samples(X_pool), rng).fit(
            oracle, side_scores=side_scores)
        self.estimators_ = estimators
        self.oracle_ = oracle
        self.scoring_ = oracle.scoring_
        self.best_index_ = int(self.strategy_.best_index_)
        self.best_estimator_ = estimators[self.best_index_]
        self.means_ = self.strategy_.means_
        self.n_evaluations_ = self.strategy_.n_evaluations_
        copy_feature_info(self, self.best_estimator_, X)
        if hasattr(self.best_estimator_, "classes_"):
            self.classes_ = self.best_estimator_.classes_
        elif hasattr(self, "classes_"):
            del self.classes_
        return self

    def _check_fit_inputs(self, X, y):
        """Checked ``X`` (validated, passed on untouched), 1-d ``y`` and the random state."""
        if len(self.estimators) == 0:
            raise ValueError("`estimators` is empty; pass at least one candidate model.")
        if y is None:
            raise ValueError(
                f"{type(self).__name__} requires y to be passed, but the target y is None: the "
                "candidates are scored against the labels."
            )
        if not all(get_tags(e).input_tags.allow_nan for e in self.estimators):
            # validate only (X is passed to the candidates untouched: DataFrames keep their names)
            check_array(X, accept_sparse=True, dtype=None, ensure_all_finite=True, ensure_2d=False,
                        input_name="X")
        n = _num_samples(X)
        if n < 2:
            raise ValueError(f"At least 2 samples are required to select a model; got n_samples = {n}.")
        y = column_or_1d(check_labels(y), warn=True)
        rng = self.random_state
        if isinstance(rng, np.random.Generator):  # train_test_split takes no Generator
            rng = check_random_state(rng)
        return X, y, rng

    def _candidates_and_pool(self, X, y, rng, side_scores):
        """Fitted candidates (clones of unfitted ones fitted on a random split) and the pool of
        examples they are scored on (all of ``(X, y)`` when every candidate is fitted)."""
        from sklearn.model_selection import train_test_split

        fitted = [_is_fitted(e) for e in self.estimators]
        if all(fitted):
            return list(self.estimators), X, y
        if side_scores is not None:
            raise ValueError(
                "`side_scores` must have one column per pool example, but some candidates "
                "are not fitted, so (X, y) is split at random and the pool is unknown in "
                "advance; fit the candidates first (or wrap them in FrozenEstimator)."
            )
        X_fit, X_pool, y_fit, y_pool = train_test_split(
            X, y, test_size=self.calib_size, random_state=rng
        )
        estimators = [
            e if ok else fit_clone(e, X_fit, y_fit, f"estimators[{k}]")
            for k, (e, ok) in enumerate(zip(self.estimators, fitted))
        ]
        return estimators, X_pool, y_pool

    def _strategy(self, n_pool, rng):
        """A fresh copy of ``strategy``, or the default PULSE sized to the pool."""
        if self.strategy is not None:
            return clone(self.strategy)
        b = max(1, min(16, n_pool // 4))
        return PULSE(budget=0.3, batch_size=b, rank=2, fractional_scores=True, random_state=rng)

    # -- delegation ----------------------------------------------------------------------------
    def _delegate(self):
        check_is_fitted(self)
        return self.best_estimator_

    def _delegation_targets(self):
        """The selected model once fitted, else every candidate."""
        if hasattr(self, "best_estimator_"):
            return (self.best_estimator_,)
        return self.estimators

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        if self.estimators:
            sub = get_tags(self.estimators[0])
            tags.estimator_type = sub.estimator_type
            tags.classifier_tags = sub.classifier_tags
            tags.regressor_tags = sub.regressor_tags
            tags.target_tags.required = True
            tags.input_tags = sub.input_tags
            tags.input_tags.allow_nan = all(get_tags(e).input_tags.allow_nan for e in self.estimators)
        return tags
