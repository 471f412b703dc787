"""Estimator layer of the paired comparison: :class:`ModelComparison` wraps fitted models."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from numbers import Integral, Real
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike
from sklearn.base import BaseEstimator, MetaEstimatorMixin, _fit_context
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from .._labels import raw_judge_labels
from .._typing import BoolArray, Estimator, RandomStateLike
from .._validation import RANDOM_STATE, check_random_state
from .._wrapping import needs_fitting
from ..risks import RISK_NAMES
from ._compare import rautoeval_compare, rautoeval_difference_interval
from ._estimators import RAutoEvalPlus

if TYPE_CHECKING:
    from typing_extensions import Self  # typing.Self: Python >= 3.11

__all__ = ["ModelComparison"]


class ModelComparison(MetaEstimatorMixin, BaseEstimator):
    """Which fitted models are certified better than which, from few labels and a judge.

    Each model's losses on the same rows (labeled rows: with the true label and with the
    auto-evaluator's; unlabeled rows: with the auto-evaluator's) are computed as
    :class:`RAutoEvalPlus` computes them, on one shared order of the rows; then
    :func:`~sklearn_riskcontrol.autoeval.rautoeval_compare` tests every ordered pair (or each
    model against ``baseline``) with Holm's procedure: with probability at least
    ``1 - delta`` over the draw of the rows, **every** certified pair ``(i, j)`` has
    ``risk(i) < risk(j) - margin``, whatever the auto-evaluator. With two models, ``interval_``
    also bounds ``risk(0) - risk(1)`` (:func:`rautoeval_difference_interval`).

    Assumed: the labeled rows are exchangeable draws from the distribution the risks are
    about, and so are the unlabeled rows (``shuffle=True`` randomises their order, once, for
    all models). The models are never refitted.

    Parameters
    ----------
    estimators : list of fitted estimators
        The models to compare (at least two).
    autoevaluator : fitted estimator, callable, or a list of them, default=None
        Labels the rows (an LLM judge, a larger model...); required unless ``method="eval"``.
        A list gives several judges: judge-loss tables of shape (n, K, k), combined as in
        :func:`~sklearn_riskcontrol.autoeval.rautoeval_difference_interval`.
    risk : str or callable, default="zero_one"
        Per-row loss in [0, 1] (see :func:`~sklearn_riskcontrol.risks.make_risk`).
    delta : float in (0, 1), default=0.1
        Family-wise error: probability that any certified pair is wrong.
    baseline : int, default=None
        Compare each model with ``estimators[baseline]`` only (both directions).
    margin : float in (-1, 1), default=0.0
        Certify ``risk(i) < risk(j) - margin``.
    method : {"plus", "autoeval", "eval"}, default="plus"
    shuffle : bool, default=True
    random_state : int, RandomState instance, numpy Generator or None, default=None
        Order of the rows (one order shared by every model).

    Attributes
    ----------
    better_ : ndarray of bool, shape (n_models, n_models)
        ``better_[i, j]``: ``risk(i) < risk(j) - margin`` certified (same as :meth:`decide`).
    pvalues_ : ndarray of shape (n_models, n_models)
        Per-pair p-values (NaN where not tested).
    ranking_ : ndarray of int
        Models ordered by certified wins (a summary; only ``better_`` is certified).
    certified_pairs_ : list of (int, int)
    mean_loss_ : ndarray of shape (n_models,)
        Realized mean loss of each model on the labeled rows (one draw).
    interval_ : RiskDifferenceInterval or None
        With two models, the interval for ``risk(0) - risk(1)``.
    result_ : ComparisonResult
    loss_labeled_, loss_judge_labeled_, loss_judge_unlabeled_ : ndarray
        The loss tables (rows in processing order, one column per model).
    n_labeled_, n_unlabeled_ : int
    method_ : str

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import make_classification
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> from sklearn_riskcontrol.autoeval import ModelComparison
    >>> X, y = make_classification(n_samples=9000, n_informative=6, random_state=0)
    >>> fit, judge_rows, rows = np.split(np.arange(9000), [2000, 4000])
    >>> models = [RandomForestClassifier(n_estimators=30, random_state=0).fit(X[fit], y[fit]),
    ...           DecisionTreeClassifier(max_depth=2).fit(X[fit], y[fit])]
    >>> judge = LogisticRegression().fit(X[judge_rows], y[judge_rows])
    >>> y_semi = y[rows].copy()
    >>> unlabeled = np.random.default_rng(0).permutation(5000)[300:]
    >>> y_semi[unlabeled] = -1                         # 300 labels, 4700 unlabeled rows
    >>> cmp = ModelComparison(models, autoevaluator=judge, random_state=0).fit(X[rows], y_semi)
    >>> cmp.certified_pairs_                           # the forest is certified better
    [(0, 1)]
    >>> print(cmp.interval_)
    [..., ...] for risk(A) - risk(B) (two-sided, R-AutoEval+): intervals built this way cover
    the difference with probability >= 0.9 over the draw of the labeled items
    """

    _parameter_constraints = {
        "estimators": [list, tuple],
        "autoevaluator": [HasMethods(["predict"]), callable, list, tuple, None],
        "risk": [StrOptions(set(RISK_NAMES)), callable],
        "delta": [Interval(Real, 0, 1, closed="neither")],
        "baseline": [Interval(Integral, 0, None, closed="left"), None],
        "margin": [Interval(Real, -1, 1, closed="neither")],
        "method": [StrOptions({"plus", "autoeval", "eval"})],
        "shuffle": ["boolean"],
        "random_state": RANDOM_STATE,
    }

    def __init__(
        self,
        estimators: Sequence[Estimator],
        *,
        autoevaluator: Estimator | Callable[..., ArrayLike] | None = None,
        risk: str | Callable[..., ArrayLike] = "zero_one",
        delta: float = 0.1,
        baseline: int | None = None,
        margin: float = 0.0,
        method: str = "plus",
        shuffle: bool = True,
        random_state: RandomStateLike = None,
    ) -> None:
        self.estimators = estimators
        self.autoevaluator = autoevaluator
        self.risk = risk
        self.delta = delta
        self.baseline = baseline
        self.margin = margin
        self.method = method
        self.shuffle = shuffle
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X: ArrayLike, y: ArrayLike, groups: ArrayLike | None = None) -> Self:
        """Compute every model's losses on the rows of ``X`` and compare them.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Labeled and unlabeled rows together.
        y : array-like of shape (n_samples,)
            True labels; ``-1`` (classification) or NaN (regression) marks an unlabeled row.
        groups : array-like of shape (n_samples,), default=None
            Cluster id of every row, labeled and unlabeled: the clusters are the draws and the
            comparison is of the item-level risks (paired losses per item, then cluster sums;
            see :ref:`autoeval-clusters`). ``shuffle`` shuffles the clusters.

        Returns
        -------
        self
        """
        models = list(self.estimators)
        if len(models) < 2:
            raise ValueError(f"`estimators` holds {len(models)} model(s): comparing needs at "
                             "least 2.")
        unfitted = [k for k, m in enumerate(models) if needs_fitting(m)]
        several = isinstance(self.autoevaluator, (list, tuple))
        judges = list(self.autoevaluator) if several else [self.autoevaluator]
        if unfitted or any(map(needs_fitting, judges)):
            what = f"estimators {unfitted}" if unfitted else "the autoevaluator"
            raise ValueError(
                f"ModelComparison compares fitted models: {what} is not fitted. Fit it first (on "
                "other rows than X), or wrap it in sklearn.frozen.FrozenEstimator."
            )
        # one seed for every model: the same order of the rows, so that row i of every column
        # is the same item (the pairing the comparison needs)
        seed = int(check_random_state(self.random_state).randint(np.iinfo(np.int32).max))
        template = RAutoEvalPlus(None, autoevaluator=self.autoevaluator, risk=self.risk,
                                 method=self.method, shuffle=self.shuffle, random_state=seed)
        judge_labels = (None if self.method == "eval" or self.autoevaluator is None or several
                        else raw_judge_labels(self.autoevaluator, X, None))
        losses = [_losses_of(template, m, X, y, judge_labels, groups) for m in models]
        self.groups_labeled_, self.groups_unlabeled_ = losses[0][3:]
        columns = list(zip(*losses))[:3]
        # (n, models), or (n, models, judges) for several judges
        self.loss_labeled_, self.loss_judge_labeled_, self.loss_judge_unlabeled_ = (
            None if parts[0] is None else np.stack(parts, axis=1) for parts in columns)
        clusters = {} if groups is None else dict(groups_labeled=self.groups_labeled_,
                                                  groups_unlabeled=self.groups_unlabeled_)
        u = self.loss_judge_unlabeled_
        self.n_labeled_ = self.loss_labeled_.shape[0]
        self.n_unlabeled_ = 0 if u is None else u.shape[0]
        tables = (self.loss_labeled_, self.loss_judge_labeled_, u)
        self.result_ = rautoeval_compare(*tables, delta=self.delta, baseline=self.baseline,
                                         margin=self.margin, method=self.method, **clusters)
        self.method_ = self.result_.method
        self.better_ = self.result_.better
        self.pvalues_ = self.result_.pvalues
        self.ranking_ = self.result_.ranking
        self.mean_loss_ = self.result_.mean_loss
        self.certified_pairs_ = self.result_.certified_pairs()
        self.interval_ = (rautoeval_difference_interval(*tables, delta=self.delta,
                                                        method=self.method_, **clusters)
                          if len(models) == 2 else None)
        return self

    def decide(self) -> BoolArray:
        """``better[i, j]``: ``risk(i) < risk(j) - margin`` is certified (family-wise)."""
        check_is_fitted(self, "better_")
        return self.better_


def _losses_of(template, model, X, y, judge_labels, groups=None):
    """``model``'s losses ``(labeled, judge on labeled, judge on unlabeled)`` as ``template``
    (with ``estimator=model``) computes them, the judge's labels given, without its test. Not
    ``clone``: it would unfit the fitted models and auto-evaluator."""
    tester = type(template)(**{**template.get_params(deep=False), "estimator": model})
    tester._fit_losses(X, y, judge_labels, groups)
    return (tester.loss_labeled_, tester.loss_judge_labeled_, tester.loss_judge_unlabeled_,
            tester.groups_labeled_, tester.groups_unlabeled_)
