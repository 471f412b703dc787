"""Estimators of R-Eval / R-AutoEval / R-AutoEval+: :class:`RAutoEvalPlus` and
:class:`RiskControlledModelSelector` (see the package docstring)."""

from __future__ import annotations

import numbers
import threading
import warnings
from collections.abc import Callable, Sequence
from contextlib import contextmanager
from numbers import Integral, Real
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike
from sklearn.base import BaseEstimator, MetaEstimatorMixin, _fit_context
from sklearn.model_selection import train_test_split
from sklearn.utils import _safe_indexing
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from .._parallel import run_units
from .._parcel import Parcel
from .._progress import Progress
from .._validation import (
    RANDOM_STATE,
    RiskControlWarning,
    check_level,
    check_random_state,
    show,
    warn,
)
from .._wrapping import (
    DelegatesToModel,
    chunked_call,
    copy_feature_info,
    fit_clone,
    indexable_rows,
    n_rows,
    needs_fitting,
    tags_or_none,
    wrapped_estimator,
)
from .._labels import (
    is_classification,
    labeled_and_unlabeled,
    raw_judge_labels,
    unlabeled_mask,
)
from ._arrays import _all_wrong_message, rautoeval_confidence_interval, rautoeval_test
from ..evalues.betting import WSR, FixedBet, UniversalPortfolio
from ..evalues.testing import at_most, bonferroni, fixed_sequence
from ..risks import RISK_NAMES, make_risk
from .._typing import BoolArray, Estimator, RandomStateLike
from ._arrays import RiskConfidenceInterval

if TYPE_CHECKING:
    from typing_extensions import Self  # typing.Self: Python >= 3.11

__all__ = ["RAutoEvalPlus", "RiskControlledModelSelector"]

_METHOD_NAMES = {"plus": "R-AutoEval+", "autoeval": "R-AutoEval", "eval": "R-Eval"}


# --------------------------------------------------------------------------------------------
# RAutoEvalPlus
# --------------------------------------------------------------------------------------------
def _several(judge):
    """Whether ``autoevaluator`` holds several judges (a list or tuple)."""
    return isinstance(judge, (list, tuple))


def _stack(columns):
    """One judge's losses as they are, several judges' as columns (n, k)."""
    return columns[0] if len(columns) == 1 else np.column_stack(columns)


class RAutoEvalPlus(DelegatesToModel, MetaEstimatorMixin, BaseEstimator):
    """Certify ``risk <= alpha`` of a fitted model with few labels plus an auto-evaluator.

    Tests ``H0: R > alpha``, ``R = E[risk(Y, f(X))]`` the risk of the wrapped model ``f``,
    with type-I error at most ``delta``: whatever the model and the auto-evaluator,
    ``P(certified_ and R > alpha) <= delta`` when the labeled rows are exchangeable draws from
    the deployment distribution, and so are the unlabeled rows. The test is R-AutoEval+ by
    default: a mixture of betting e-processes over reliance factors ``rho in [0, 1]`` on the
    prediction-powered observations ``h_i + rho (ubar_i - g_i)`` (true-label losses ``h``,
    judge losses ``g`` on the same rows, block means ``ubar`` of judge losses on ``r``
    unlabeled rows each). It adapts its reliance on the auto-evaluator to the evidence: with a
    good judge it needs far fewer labels than R-Eval (labels only); with a useless judge it
    falls back to R-Eval instead of losing power like R-AutoEval (``rho = 1``). See
    :func:`~sklearn_riskcontrol.autoeval.rautoeval_test` for the array-level test.

    Parameters
    ----------
    estimator : estimator with ``predict``
        The model whose risk is certified, already fitted (wrap it in
        :class:`sklearn.frozen.FrozenEstimator` to keep it fitted through ``clone``). An unfitted
        estimator is fitted on a ``1 - calib_size`` split of the *labeled* rows.
    autoevaluator : estimator with ``predict``, callable or None, default=None
        Labels ``X`` in place of a human: a fitted model (e.g. a bigger model, an LLM judge
        behind a ``predict`` method), a callable ``X -> labels``, or an unfitted estimator
        (fitted on the same training split as ``estimator``). Its labels go through ``risk`` in
        place of ``y``. Required unless ``method="eval"``. A list or tuple of such judges
        gives several judges: one loss column each, combined by the test with reliance vectors
        (see :ref:`autoeval-judges`); the guarantee holds whatever the judges.
    risk : {"zero_one", "squared", "absolute", "threshold"}, callable or Risk, default="zero_one"
        Per-sample loss ``risk(y_true, y_pred)`` in [0, 1]; see
        :func:`sklearn_riskcontrol.risks.make_risk`.
    alpha : float in (0, 1), default=0.1
        Tolerated risk.
    delta : float in (0, 1), default=0.1
        Probability of certifying a model whose risk exceeds ``alpha``.
    method : {"plus", "autoeval", "eval"}, default="plus"
        R-AutoEval+ (mixture over ``rho``), R-AutoEval (``rho = 1``) or R-Eval (labels only).
    betting : {"up", "wsr"} or strategy object, default="up"
        ``"up"``: universal portfolio with the continuous arcsine prior (adaptive integration,
        ``O(n)``; about 0.5 s at ``10**5`` labels); ``"wsr"``: Waudby-Smith & Ramdas bets; or a :class:`~sklearn_riskcontrol.evalues.betting.UniversalPortfolio` /
        :class:`~sklearn_riskcontrol.evalues.betting.WSR` / :class:`~sklearn_riskcontrol.evalues.betting.FixedBet`
        instance (e.g. ``UniversalPortfolio(prior="reference")`` for the paper's grid).
    n_rho : int, default=10
        Reliance factors ``linspace(0, 1, n_rho)`` of R-AutoEval+.
    rho_grid : array-like, default=None
        Explicit reliance factors in [0, 1] (overrides ``n_rho``).
    rho_prior : array-like, default=None
        Initial weights of the reliance factors (``None`` = uniform).
    shuffle : bool, default=True
        Process the labeled rows, and separately the unlabeled rows, in a random order (seeded by
        ``random_state``). The test consumes rows in order; shuffling makes each stream
        exchangeable even if ``X`` is sorted (by date, by source, ...). ``False`` keeps the given
        order (for rows that are already in random order).
    early_stopping : bool, default=False
        Stop at the first crossing of ``1 / delta`` (anytime validity) when only the decision
        is needed: the labels after the crossing are not processed (``result_.stopping_index``
        reports the stopping round), the e-process in ``result_`` ends there and ``pvalue_``
        uses the rounds processed.
    calib_size : float in (0, 1), default=0.5
        Fraction of the labeled rows kept for the test when a model must be fitted first.
    random_state : int, RandomState instance, numpy Generator or None, default=None
        Seeds the fitting split and the shuffling.
    n_jobs : int, default=None
        joblib workers for the models' predictions (threads unless a
        ``joblib.parallel_config`` backend says otherwise; see :doc:`/scale_out`).
    verbose : int, default=0

    Attributes
    ----------
    estimator_ : estimator
        The fitted model under test.
    autoevaluator_ : estimator, callable, list or None
        The auto-evaluator in use (a list for several judges).
    risk_ : Risk
    certified_ : bool
        ``True`` iff ``H0: R > alpha`` is rejected (same as :meth:`decide`).
    pvalue_ : float
        Anytime-valid p-value ``min(1, 1 / max_i E_i)``.
    result_ : RAutoEvalResult
        The array-level result: e-process, stopping index, ``rho`` weights, bets.
    n_labeled_, n_unlabeled_ : int
        Labeled / unlabeled rows used by the test (after any fitting split).
    block_size_ : int
        ``r = floor(n_unlabeled_ / n_labeled_)`` unlabeled rows per labeled one (0 for R-Eval).
    method_ : str
        Method actually run (``"eval"`` if there were no unlabeled rows).
    labeled_indices_, unlabeled_indices_ : ndarray of int
        Rows of ``X`` used by the test, in processing order.
    loss_labeled_, loss_judge_labeled_, loss_judge_unlabeled_ : ndarray
        The losses fed to the test, in processing order (the judge ones are ``None`` for R-Eval;
        one column per judge for several judges).
    n_features_in_, feature_names_in_ : copied from the wrapped model

    See Also
    --------
    RiskControlledModelSelector : one test per candidate, family-wise error control.
    sklearn_riskcontrol.autoeval.rautoeval_test : the same test on loss arrays.

    Notes
    -----
    An auto-evaluator whose losses are constant (it agrees with the model everywhere, e.g. it
    is the model itself, or nowhere) makes every observation ``h_i + rho (ubar_i - g_i)`` equal
    ``h_i``: the test then bets on the labels alone. That is still valid and about as
    powerful as R-Eval, so it is not warned about; the judge just adds nothing.

    Examples
    --------
    Shuffled splits (``train_test_split``) keep every part an exchangeable draw of the same
    distribution, which the guarantee needs:

    >>> import numpy as np
    >>> from sklearn.datasets import make_classification
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> from sklearn.model_selection import train_test_split
    >>> from sklearn_riskcontrol.autoeval import RAutoEvalPlus
    >>> X, y = make_classification(n_samples=6000, n_informative=6, random_state=0)
    >>> X_model, X_rest, y_model, y_rest = train_test_split(X, y, train_size=1000,
    ...                                                     random_state=0)
    >>> X_judge, X_eval, y_judge, y_eval = train_test_split(X_rest, y_rest, train_size=2000,
    ...                                                     random_state=0)
    >>> model = LogisticRegression().fit(X_model, y_model)
    >>> judge = RandomForestClassifier(random_state=0).fit(X_judge, y_judge)
    >>> _, unlabeled = train_test_split(np.arange(3000), train_size=300, random_state=0)
    >>> y_semi = y_eval.copy()
    >>> y_semi[unlabeled] = -1                  # 300 labeled rows, 2700 unlabeled
    >>> cert = RAutoEvalPlus(model, autoevaluator=judge, alpha=0.2, delta=0.1, random_state=0)
    >>> cert = cert.fit(X_eval, y_semi)

    ``decide()`` is the outcome of a test: over the draw of the labeled rows, a model whose
    risk exceeds ``alpha`` is certified with probability at most ``delta``.

    >>> cert.decide(), cert.n_labeled_, cert.block_size_   # r = 9 unlabeled rows per label
    (True, 300, 9)
    >>> cert.result_.stopping_index + 1     # labels until 1/delta was crossed, on this draw
    203

    The confidence interval is one realization; intervals built this way cover the risk with
    probability at least ``1 - delta`` (here the model's error on all 3000 rows is 0.164):

    >>> print(cert.confidence_interval())
    [0.135, 0.2094] (two-sided, R-AutoEval+): intervals built this way cover the risk with
    probability >= 0.9 over the draw of the labeled data
    """

    _parameter_constraints = {
        "estimator": [HasMethods(["predict"])],
        "autoevaluator": [HasMethods(["predict"]), callable, list, tuple, None],
        "risk": [StrOptions(set(RISK_NAMES)), callable],
        "alpha": [Interval(Real, 0, 1, closed="neither")],
        "delta": [Interval(Real, 0, 1, closed="neither")],
        "method": [StrOptions({"plus", "autoeval", "eval"})],
        "betting": [StrOptions({"up", "wsr"}), UniversalPortfolio, WSR, FixedBet],
        "n_rho": [Interval(Integral, 2, None, closed="left")],
        "rho_grid": ["array-like", None],
        "rho_prior": ["array-like", None],
        "shuffle": ["boolean"],
        "early_stopping": ["boolean"],
        "calib_size": [Interval(Real, 0, 1, closed="neither")],
        "random_state": RANDOM_STATE,
        "n_jobs": [Integral, None],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        estimator: Estimator,
        *,
        autoevaluator: Estimator | Callable[..., ArrayLike] | None = None,
        risk: str | Callable[..., ArrayLike] = "zero_one",
        alpha: float = 0.1,
        delta: float = 0.1,
        method: str = "plus",
        betting: str | Any = "up",
        n_rho: int = 10,
        rho_grid: ArrayLike | None = None,
        rho_prior: ArrayLike | None = None,
        shuffle: bool = True,
        early_stopping: bool = False,
        calib_size: float = 0.5,
        random_state: RandomStateLike = None,
        n_jobs: int | None = None,
        verbose: int = 0,
    ) -> None:
        self.estimator = estimator
        self.autoevaluator = autoevaluator
        self.risk = risk
        self.alpha = alpha
        self.delta = delta
        self.method = method
        self.betting = betting
        self.n_rho = n_rho
        self.rho_grid = rho_grid
        self.rho_prior = rho_prior
        self.shuffle = shuffle
        self.early_stopping = early_stopping
        self.calib_size = calib_size
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose

    # -- fitting -------------------------------------------------------------------------------
    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X: ArrayLike, y: ArrayLike, groups: ArrayLike | None = None) -> Self:
        """Compute the losses of labeled and unlabeled rows and run the test.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Labeled and unlabeled rows, passed untouched to the models.
        y : array-like of shape (n_samples,)
            True labels; unlabeled rows are marked with ``-1`` (classification, like
            :class:`sklearn.semi_supervised.SelfTrainingClassifier`) or NaN (regression). A
            missing value in an object ``y`` (None, NaN or ``pandas.NA``, e.g. from a pandas
            column with gaps) also marks an unlabeled row, for classes and regression alike.
        groups : array-like of shape (n_samples,), default=None
            Cluster id of every row, labeled and unlabeled (the document of a question): the
            clusters are then the independent draws and the test is on the item-level risk,
            as ``groups_labeled`` / ``groups_unlabeled`` of
            :func:`~sklearn_riskcontrol.autoeval.rautoeval_test` (see :ref:`autoeval-clusters`).
            A cluster must be wholly labeled or wholly unlabeled. ``shuffle`` then shuffles
            the clusters (not the rows), and a fitting split of the labeled rows keeps each
            cluster on one side.

        Returns
        -------
        self

        Warns
        -----
        RiskControlWarning
            Pointing at the caller's line, when:

            - nothing is certified (with the p-value, the peak of the e-process and what
              would help);
            - every labeled loss equals 1: the loss does not fit the task (``"zero_one"`` on a
              regressor) or ``y`` is encoded unlike the model's predictions; the message names
              which and the fix;
            - at least 25% of the labeled losses reach the cap 1 of a clipping risk such as
              ``make_risk("squared", scale=...)``: pass a larger ``scale``;
            - there is no unlabeled row (the method reduces to R-Eval), or too few labeled
              rows for any test at this ``delta``.
        """
        return self._fit(X, y, groups=groups)

    def _fit(self, X, y, judge_labels=None, groups=None):
        """``fit``, optionally with the auto-evaluator's raw labels of every row of ``X``
        (``judge_labels``, used only when the auto-evaluator is already fitted): the model
        selector computes them once for all candidates instead of once per candidate."""
        X, y, classification, pred_lab = self._fit_losses(X, y, judge_labels, groups)
        all_wrong = (_all_wrong_message(f"(all {self.loss_labeled_.size})")
                     if np.all(self.loss_labeled_ >= 1.0) else None)
        result, notes = self._test(all_wrong)
        self._store_result(result, X)
        self._warn_useless(all_wrong, y[self.labeled_indices_], pred_lab, classification, notes)
        if self.verbose:
            self._report()
        return self

    def _fit_losses(self, X, y, judge_labels=None, groups=None):
        """The first half of ``fit``: the fitted models, the rows in processing order and the
        losses ``loss_labeled_``, ``loss_judge_labeled_``, ``loss_judge_unlabeled_`` (no test;
        :class:`ModelComparison` stops here). Returns the checked ``X``, ``y``, whether the
        task is classification and the model's predictions on the labeled rows."""
        X, y = self._check_fit_inputs(X, y)
        rng = check_random_state(self.random_state)
        self.risk_ = make_risk(self.risk)
        classification = is_classification(self.estimator, y)
        if groups is not None:
            groups = np.asarray(groups)
            if groups.shape != (n_rows(X),):
                raise ValueError(f"`groups` must give one cluster id per row of X: {n_rows(X)} "
                                 f"rows, got shape {groups.shape}.")
        idx_lab, idx_unl = self._models_and_rows(X, y, classification, rng, groups)
        self.groups_labeled_ = None if groups is None else groups[self.labeled_indices_]
        self.groups_unlabeled_ = None if groups is None else groups[self.unlabeled_indices_]
        if judge_labels is not None and (needs_fitting(self.autoevaluator)
                                         or _several(self.autoevaluator)):
            judge_labels = None  # labels of the unfitted template: this fit's judge differs
        pred_lab = self._losses(X, y, idx_lab, idx_unl, classification, judge_labels)
        return X, y, classification, pred_lab

    def _check_fit_inputs(self, X, y):
        """``X`` as indexable rows and ``y`` as a 1-d array of the same length."""
        if y is None:
            raise ValueError(
                f"{type(self).__name__} requires y to be passed, but the target y is None: "
                "the test needs labeled rows (mark unlabeled ones with -1 or NaN)."
            )
        if self.method != "eval" and self.autoevaluator is None:
            raise ValueError(
                f"method={self.method!r} needs an `autoevaluator` (a fitted model with predict, "
                "or a callable X -> labels); pass one, or use method='eval' (labels only)."
            )
        if _several(self.autoevaluator):
            bad = [k for k, j in enumerate(self.autoevaluator)
                   if not (hasattr(j, "predict") or callable(j))]
            if not self.autoevaluator or bad:
                raise ValueError(
                    "`autoevaluator` given as a list must hold at least one judge, each a "
                    "model with predict or a callable X -> labels; "
                    + (f"entries {bad} are neither." if bad else "got an empty list.")
                )
        X = indexable_rows(X)
        y = np.asarray(y)
        if y.ndim == 2 and y.shape[1] == 1:
            y = y.ravel()
        if y.ndim != 1:
            raise ValueError(f"`y` must be 1-d; got an array of shape {y.shape}.")
        n = n_rows(X)
        if n != len(y):
            raise ValueError(f"`X` has {n} rows but `y` has {len(y)} entries; they must be equal.")
        if n == 0:
            raise ValueError("`X` is empty: at least one labeled row is required.")
        return X, y

    def _models_and_rows(self, X, y, classification, rng, groups=None):
        """Set ``estimator_``, ``autoevaluator_`` (fitting clones of unfitted ones on a split of
        the labeled rows), ``labeled_indices_`` and ``unlabeled_indices_`` (shuffled when
        ``shuffle``); return the labeled and unlabeled row indices."""
        uses_judge = self.method != "eval"
        idx_lab, idx_unl = labeled_and_unlabeled(y, classification,
                                                  "the test needs human-labeled rows")
        model, judge = self.estimator, self.autoevaluator if uses_judge else None
        judges = list(judge) if _several(judge) else [judge]
        if needs_fitting(model) or any(map(needs_fitting, judges)):
            idx_train, idx_lab = _split_rows(idx_lab, groups, self.calib_size, rng)
            if len(idx_train) == 0 or len(idx_lab) == 0:
                raise ValueError(
                    f"Cannot split {idx_lab.size + len(idx_train)} labeled rows into a fitting "
                    "part and a test part; pass fitted models (e.g. "
                    "sklearn.frozen.FrozenEstimator(model)) or more labeled rows."
                )
            X_train, y_train = _safe_indexing(X, idx_train), y[idx_train]
            if needs_fitting(model):
                model = fit_clone(model, X_train, y_train, "estimator")
            judges = [fit_clone(j, X_train, y_train, "autoevaluator") if needs_fitting(j)
                      else j for j in judges]
            judge = judges if _several(judge) else judges[0]
            idx_lab = np.sort(idx_lab)
        if classification and hasattr(model, "classes_") and idx_unl.size:
            if np.any(unlabeled_mask(np.asarray(model.classes_), True)):
                raise ValueError(
                    "-1 marks unlabeled rows in `y`, but -1 is also a class of the wrapped "
                    "estimator; encode the classes differently (e.g. with a LabelEncoder)."
                )
        self.estimator_ = model
        self.autoevaluator_ = judge
        if self.shuffle and groups is not None:  # clusters are the draws: shuffle them
            idx_lab, idx_unl = _shuffle_clusters(idx_lab, groups, rng), \
                _shuffle_clusters(idx_unl, groups, rng)
        elif self.shuffle:
            idx_lab = rng.permutation(idx_lab)
            idx_unl = rng.permutation(idx_unl)
        if uses_judge and 0 < idx_unl.size < idx_lab.size and groups is None:
            raise ValueError(
                f"{idx_unl.size} unlabeled rows for {idx_lab.size} labeled ones: the "
                "auto-evaluator's losses are averaged in blocks of r = floor(n_unlabeled / "
                "n_labeled) >= 1 unlabeled rows per labeled row, so at least as many unlabeled "
                "rows as labeled ones are needed (r = 0 otherwise). Add unlabeled rows, or use "
                "method='eval'."
            )
        self.labeled_indices_ = idx_lab
        self.unlabeled_indices_ = idx_unl if uses_judge else idx_unl[:0]
        return idx_lab, idx_unl

    def _losses(self, X, y, idx_lab, idx_unl, classification, judge_labels):
        """Set the losses ``loss_labeled_`` (h), ``loss_judge_labeled_`` (g) and
        ``loss_judge_unlabeled_`` (u); return the model's predictions on the labeled rows."""
        X_lab = _safe_indexing(X, idx_lab)
        pred_lab = self._predict_rows(X_lab)
        h = self.risk_(y[idx_lab], pred_lab)
        g = u = None
        if self.method != "eval":
            judges = self.autoevaluator_ if _several(self.autoevaluator_) else [None]
            g = _stack([self.risk_(self._judge(X_lab, classification, judge_labels, idx_lab, j),
                                   pred_lab) for j in judges])
            if idx_unl.size:
                X_unl = _safe_indexing(X, idx_unl)
                pred_unl = self._predict_rows(X_unl)
                u = _stack([self.risk_(self._judge(X_unl, classification, judge_labels, idx_unl,
                                                   j), pred_unl) for j in judges])
        self.loss_labeled_, self.loss_judge_labeled_, self.loss_judge_unlabeled_ = h, g, u
        return pred_lab

    def _test(self, all_wrong):
        """Run the test on the losses; return the result and the array layer's warnings (the
        all-losses-1 one, ``all_wrong``, is left out: ``fit`` emits it with the fix)."""
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", RiskControlWarning)
            result = rautoeval_test(
                self.loss_labeled_, self.loss_judge_labeled_, self.loss_judge_unlabeled_,
                alpha=self.alpha, delta=self.delta, method=self.method,
                betting=self.betting, n_rho=self.n_rho, rho_grid=self.rho_grid,
                rho_prior=self.rho_prior, early_stopping=self.early_stopping,
                **self._group_options(),
            )
        notes = []
        for w in caught:
            if issubclass(w.category, RiskControlWarning):
                if str(w.message) != all_wrong:
                    notes.append(str(w.message))
            else:  # pragma: no cover - pass other warnings on
                warn(str(w.message), category=w.category)
        return result, notes

    def _group_options(self):
        """``groups_labeled`` / ``groups_unlabeled`` for the array functions (none without
        ``groups``)."""
        if getattr(self, "groups_labeled_", None) is None:
            return {}
        return dict(groups_labeled=self.groups_labeled_,
                    groups_unlabeled=self.groups_unlabeled_)

    def _store_result(self, result, X):
        self.result_ = result
        self.certified_ = bool(result.certified)
        self.pvalue_ = float(result.pvalue)
        self.method_ = result.method
        self.block_size_ = int(result.block_size)
        self.n_labeled_ = int(self.loss_labeled_.size)
        u = self.loss_judge_unlabeled_
        self.n_unlabeled_ = 0 if u is None else int(u.shape[0])
        copy_feature_info(self, self.estimator_, X)

    def _warn_useless(self, all_wrong, y_lab, pred_lab, classification, notes):
        """Warn about valid but useless results, keyed by cause in ``_degenerate_`` (the
        selector summarises them by cause), and about a test that did not certify."""
        if all_wrong is not None:
            fix = self._all_wrong_fix(y_lab, pred_lab, classification)
            self._degenerate_ = {"all_wrong": all_wrong + fix}
        else:
            saturated = self._saturation_message()
            self._degenerate_ = {} if saturated is None else {"saturated": saturated}
        for msg in self._degenerate_.values():
            warn(msg)
        if self.certified_:
            if notes:
                warn(" ".join(notes))
        else:
            warn(self._not_certified_reason(notes))

    def _report(self):
        need = self.result_.stopping_index
        print(
            f"[{type(self).__name__}] {_METHOD_NAMES[self.method_]} on {self.n_labeled_} "
            f"labeled + {self.n_unlabeled_} unlabeled rows: certified={self.certified_} "
            f"for risk <= alpha={self.alpha:g} (a test whose type-I error is at most "
            f"delta={self.delta:g} over the draw of the labeled rows); realized on this "
            f"draw: p-value {self.pvalue_:.4g}"
            + ("" if need is None else f", e-process above 1/delta after {need + 1} labels")
        )

    def _all_wrong_fix(self, y_lab, pred_lab, classification):
        """The likely cause and fix when every labeled loss is 1 ("" if none is evident)."""
        if self.risk_.clips:
            return (f" Here risk {self.risk_!r} clips every loss at 1: pass a larger `scale` "
                    "to make_risk.")
        if self.risk_ != make_risk("zero_one") or pred_lab.ndim != 1:
            return ""
        labels = list(dict.fromkeys(y_lab.tolist()))
        predicted = list(dict.fromkeys(pred_lab.tolist()))
        if not set(labels).isdisjoint(predicted):
            return ""
        if not classification:
            return (
                " Here risk='zero_one' counts every prediction that is not exactly equal to "
                "its label as an error, and the wrapped model is a regressor (continuous "
                "predictions); pass a regression loss, e.g. "
                "risk=make_risk('absolute', tolerance=...) or make_risk('squared', scale=...)."
            )
        return (
            f" Here no label in `y` (e.g. {labels[:3]}) is ever predicted by the model (it "
            f"predicts e.g. {predicted[:3]}); encode `y` with the labels the model was trained "
            "on (its classes_), or pass a risk that compares them correctly."
        )

    def _saturation_message(self):
        """Warning text if a clipping risk clipped at least ``SATURATION_WARN_SHARE`` (25%) of the
        labeled losses at 1."""
        h = self.loss_labeled_
        if not self.risk_.saturates(h):
            return None
        share = float(np.mean(h >= 1.0))
        return (
            f"{share:.0%} of the labeled losses ({int(np.sum(h >= 1.0))} of {h.size}) reach 1, "
            f"the cap of risk {self.risk_!r}: every larger error counts as 1, so the test "
            "certifies the risk of the clipped loss, which cannot tell a large error from a "
            "huge one. Pass a larger `scale` (about the largest error that should still count "
            "as partly wrong), unless a loss capped at 1 is what you mean to certify."
        )

    def _predict_rows(self, X):
        return chunked_call(self.estimator_.predict, X, self.n_jobs)

    def _judge(self, X, classification, all_labels=None, rows=None, judge=None):
        """Auto-evaluator labels of ``X`` (``judge``: one of several judges), checked to be one
        usable label per row; taken as ``all_labels[rows]`` when the labels of every row were
        computed beforehand."""
        judge = self.autoevaluator_ if judge is None else judge
        labels = (raw_judge_labels(judge, X, self.n_jobs) if all_labels is None
                  else all_labels[rows])
        if labels.ndim == 2 and labels.shape[1] == 1:
            labels = labels.ravel()
        if labels.ndim != 1 or labels.shape[0] != n_rows(X):
            raise ValueError(
                f"The autoevaluator returned an array of shape {labels.shape} for {n_rows(X)} "
                "rows; it must return one label per row."
            )
        missing = unlabeled_mask(labels, classification)
        if missing.any():
            raise ValueError(
                f"The autoevaluator left {int(missing.sum())} of {labels.size} rows unlabeled "
                "(it returned the unlabeled marker -1 or NaN); it must label every row it is "
                "given."
            )
        return labels

    def _not_certified_reason(self, notes):
        res = self.result_
        peak = res.log_evalue
        with np.errstate(over="ignore"):
            peak_text = f"{np.exp(peak):.3g}" if peak < 700 else f"exp({peak:.1f})"
        groups = getattr(self, "groups_labeled_", None)
        rows, more = f"{self.n_labeled_} labeled rows", "labeled rows"
        if groups is not None:  # the clusters are the rounds of the test
            rows = f"{rows} in {np.unique(groups).size} clusters"
            more = "labeled clusters"
        msg = (
            f"{type(self).__name__} did not certify risk <= alpha={self.alpha:g} at "
            f"delta={self.delta:g} (certified_ = False): p-value {self.pvalue_:.3g} > delta; "
            f"the e-process peaked at {peak_text}, below 1/delta = {1 / self.delta:g} "
            f"({_METHOD_NAMES[self.method_]}, {rows})."
        )
        mean = float(self.loss_labeled_.mean())
        if mean > self.alpha:
            msg += (
                f" The mean loss on the labeled rows is {mean:.3g} > alpha (one draw's "
                "estimate): the risk may well exceed alpha."
            )
        else:
            msg += (
                f" The mean loss on the labeled rows is {mean:.3g} <= alpha (one draw's "
                f"estimate), so more {more} (or more unlabeled ones with a better "
                "autoevaluator) may suffice."
            )
        return " ".join([msg, *notes])

    # -- results -------------------------------------------------------------------------------
    def decide(self) -> bool:
        """Whether the risk is certified to be at most ``alpha`` (``H0: R > alpha`` rejected).

        Returns
        -------
        bool
        """
        check_is_fitted(self, "result_")
        return self.certified_

    def confidence_interval(
        self,
        delta: float | None = None,
        *,
        side: str = "two-sided",
        betting: str | Any = "wsr",
        tol: float = 1e-6,
        construction: str = "plugin",
    ) -> RiskConfidenceInterval:
        """Confidence bounds on the risk from the same losses (test inversion).

        Calls :func:`~sklearn_riskcontrol.autoeval.rautoeval_confidence_interval` with the fitted
        method and reliance factors.

        Parameters
        ----------
        delta : float in (0, 1), default=None
            Miscoverage; ``None`` uses the estimator's ``delta``.
        side : {"two-sided", "upper", "lower"}, default="two-sided"
        betting : {"wsr", "up"} or strategy object, default="wsr"
            Bets of the inverted tests (``"up"`` and strategy objects with
            ``construction="paper"`` only; costs as in
            :func:`~sklearn_riskcontrol.autoeval.rautoeval_confidence_interval`).
        tol : float, default=1e-6
            Tolerance of each bound (conservative side).
        construction : {"plugin", "paper"}, default="plugin"
            ``"plugin"``: one e-process per side with a predictable reliance factor (narrower;
            ``betting="wsr"`` only); ``"paper"``: the paper's mixture over the reliance
            factors. See :ref:`autoeval-ci`.

        Returns
        -------
        RiskConfidenceInterval
            ``low <= R <= high`` with probability at least ``1 - delta``.
        """
        check_is_fitted(self, "result_")
        delta = self.delta if delta is None else check_level(delta, "delta")
        return rautoeval_confidence_interval(
            self.loss_labeled_, self.loss_judge_labeled_, self.loss_judge_unlabeled_,
            delta=delta, side=side, method=self.method_, betting=betting, n_rho=self.n_rho,
            rho_grid=self.rho_grid, rho_prior=self.rho_prior, tol=tol, construction=construction,
            **self._group_options(),
        )

    # -- delegation ----------------------------------------------------------------------------
    _always_forwarded = ("predict",)  # `estimator` must have it

    def _delegate(self):
        check_is_fitted(self, "estimator_")
        return self.estimator_

    def _delegation_targets(self):
        return wrapped_estimator(self)

    def __sklearn_tags__(self):
        # X goes untouched to the wrapped models: accept what all of them accept.
        tags = super().__sklearn_tags__()
        # Duck-typed models without scikit-learn tags (e.g. an LLM wrapper) get the defaults.
        judges = list(self.autoevaluator) if _several(self.autoevaluator) else \
            [self.autoevaluator]
        inner = [t for t in map(tags_or_none, [self.estimator, *judges]) if t is not None]
        tags.input_tags.sparse = all(t.input_tags.sparse for t in inner)
        tags.input_tags.allow_nan = all(t.input_tags.allow_nan for t in inner)
        sub = tags_or_none(self.estimator)
        if sub is not None:
            tags.target_tags = sub.target_tags
            tags.classifier_tags = sub.classifier_tags
            tags.regressor_tags = sub.regressor_tags
        tags.target_tags.required = True
        return tags


# --------------------------------------------------------------------------------------------
# Model selection
# --------------------------------------------------------------------------------------------
@contextmanager
def _quiet_risk_warnings():
    """Ignore RiskControlWarning, in the main thread only: ``catch_warnings`` is not
    thread-safe, so worker threads (threading/dask backends) rely on the caller's filter."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RiskControlWarning)
        yield


def _shared_judge_labels(tester, X):
    """The auto-evaluator's labels of every row of ``X``, computed once for all candidates,
    when every candidate's test would compute the same ones (a fitted auto-evaluator in an
    :class:`RAutoEvalPlus` template that uses it); ``None`` otherwise. Invalid labels are
    reported later, by each candidate's checks."""
    if not isinstance(tester, RAutoEvalPlus) or tester.method == "eval":
        return None
    judge = tester.autoevaluator
    if judge is None or needs_fitting(judge) or _several(judge):
        return None
    labels = raw_judge_labels(judge, X, tester.n_jobs)
    if labels.ndim == 2 and labels.shape[1] == 1:
        labels = labels.ravel()
    if labels.ndim != 1 or labels.shape[0] != n_rows(X):
        return None  # let the candidate's own call raise its error
    return labels


def _split_rows(idx, groups, calib_size, rng):
    """``(fitting rows, test rows)`` of the labeled rows ``idx``; with ``groups``, whole
    clusters go to one side (a cluster split between them would tie the test to the fit)."""
    if groups is None:
        return train_test_split(idx, test_size=calib_size, random_state=rng)
    ids = np.unique(groups[idx])
    if ids.size < 2:
        return idx[:0], idx
    fit_ids, _ = train_test_split(ids, test_size=calib_size, random_state=rng)
    on_fit = np.isin(groups[idx], fit_ids)
    return idx[on_fit], idx[~on_fit]


def _shuffle_clusters(idx, groups, rng):
    """The rows ``idx`` ordered by a random order of their clusters (rows of a cluster kept in
    their order): clusters are the draws, and shuffling rows would put large clusters first."""
    _, codes = np.unique(groups[idx], return_inverse=True)
    rank = rng.permutation(int(codes.max()) + 1) if idx.size else np.zeros(0, dtype=int)
    return idx[np.argsort(rank[codes.ravel()], kind="stable")]


def _run_tester(candidate, tester, level, X, y, judge_labels=None, sent=None, groups=None):
    """One candidate's test: (fitted tester in a ``Parcel``, or None; p-value).
    Warnings are summarised later. ``sent``: the dict the parcels a worker sends share.

    The template is copied *shallowly* (a new instance from ``get_params(deep=False)``), not
    with ``clone``: ``clone`` would unfit a fitted auto-evaluator held by the template, which
    would then be refitted on part of the labeled rows.
    """
    with _quiet_risk_warnings():
        if hasattr(tester, "get_params"):
            params = {**tester.get_params(deep=False), "estimator": candidate, "delta": level}
            fitted = type(tester)(**params)
            if judge_labels is None:
                fitted.fit(X, y, groups=groups)
            else:
                fitted._validate_params()
                fitted._fit(X, y, judge_labels, groups)
            parcel = Parcel(fitted, {} if sent is None else sent, candidate=candidate,
                            autoevaluator=params.get("autoevaluator"))
            return parcel, float(fitted.pvalue_)
        p = (tester(candidate, X, y, delta=level) if groups is None
             else tester(candidate, X, y, delta=level, groups=groups))
    if isinstance(p, bool) or not isinstance(p, numbers.Real) or not (0.0 <= p <= 1.0):
        raise ValueError(f"A callable `tester` must return a p-value in [0, 1]; got {show(p)}.")
    return None, float(p)


def _warn_degenerate(testers):
    """One warning per cause of a useless test (every loss 1, clipped losses), naming the
    candidates it affects; the candidates' own warnings were silenced."""
    by_cause = {}
    for k, fitted in enumerate(testers):
        for cause, msg in getattr(fitted, "_degenerate_", {}).items():
            by_cause.setdefault(cause, []).append((k, msg))
    for found in by_cause.values():
        ks = [k for k, _ in found]
        shown = "" if len(ks) == 1 else f" (message of candidate {ks[0]})"
        warn(f"Candidate(s) {ks}{shown}: {found[0][1]}")


class RiskControlledModelSelector(DelegatesToModel, MetaEstimatorMixin, BaseEstimator):
    """Select the cheapest candidate model whose risk is certified (FWER at most ``delta``).

    Each candidate gets its own test of ``H0_k: R_k > alpha`` (by default an
    :class:`RAutoEvalPlus` on the same labeled and unlabeled rows). Then:

    * ``procedure="fst"`` (fixed-sequence testing): candidates are tested in the testing order
      (e.g. from the largest, safest model to the smallest) at the full level ``delta``; testing
      stops at the first failure and only the candidates before it are certified. If the first
      candidate fails, *nothing* is certified: the selector never falls back to an uncertified
      model.
    * ``procedure="bonferroni"``: every candidate is tested at ``delta / K``.

    Either way, with probability at least ``1 - delta`` *every* certified candidate has risk at
    most ``alpha`` (family-wise error rate <= delta), so the selected one does too. Among the
    certified candidates the one with the smallest ``cost`` is selected (by default the last
    certified one in the testing order). ``predict`` and the other prediction methods delegate
    to it.

    Parameters
    ----------
    estimators : list of estimators
        The candidates. Fitted ones are used as they are (never refitted); unfitted ones are
        fitted by the tester (for :class:`RAutoEvalPlus`: on a split of the labeled rows).
    tester : RAutoEvalPlus-like estimator or callable
        A template: for each candidate a new instance with the template's parameters and
        ``estimator=candidate, delta=level`` is fitted on ``(X, y)``; it must set ``pvalue_``
        (its ``alpha``, ``autoevaluator``, ``method``, ... apply to every candidate). A fitted
        auto-evaluator in the template is used as is (it is not cloned).
        A callable is called as ``tester(candidate, X, y, delta=level)`` and returns an
        anytime-valid p-value for ``H0: risk > alpha``.
    procedure : {"fst", "bonferroni"}, default="fst"
    order : None, "cost" or array-like of int, default=None
        Testing order: ``None`` = the order of ``estimators``; ``"cost"`` = by decreasing cost
        (largest model first, the natural order for FST); or a permutation of
        ``range(n_candidates)``.
    cost : None, array-like of shape (n_candidates,) or callable, default=None
        Cost of each candidate (e.g. model size, latency, price), or ``cost(candidate) -> float``
        called on each candidate as passed. ``None``: the selected candidate is the certified one
        that comes last in the testing order.
    delta : float in (0, 1), default=None
        Family-wise error level. ``None`` takes the tester's ``delta`` (required for a callable
        tester).
    n_jobs : int, default=None
        Candidates tested in parallel with joblib. The first candidates are tested here for
        about 50 ms to measure their cost; the others go out as tasks of several candidates
        (at least 0.1 s each), or are tested here when parallelism would not pay (see
        :doc:`/scale_out`). FST then runs one round of tasks per worker at a time in the
        testing order and stops after the round that holds the first failure; candidates after
        the first failure are reported as untested (their results are discarded), so the
        outcome is exactly sequential FST's and does not depend on ``n_jobs``. Each tester's
        own row chunks run sequentially inside a parallel task.
    verbose : int, default=0
        Report progress over the candidates (candidate tested, its p-value): a tqdm bar in a
        terminal or notebook, else a line at about every 10% of the candidates.

    Attributes
    ----------
    certified_ : ndarray of bool, shape (n_candidates,)
        Certified candidates (in the order of ``estimators``).
    pvalues_ : ndarray of shape (n_candidates,)
        p-values (NaN for candidates FST never reached).
    tested_ : ndarray of bool, shape (n_candidates,)
    order_ : ndarray of int
        Testing order (indices into ``estimators``).
    costs_ : ndarray of shape (n_candidates,) or None
    selected_index_ : int or None
        Index of the selected candidate; ``None`` if nothing is certified (then ``predict``
        raises).
    selected_estimator_ : estimator or None
        The selected (fitted) candidate.
    testers_ : list
        The fitted tester of each tested candidate (``None`` for untested ones and for callable
        testers).
    delta_ : float
        Family-wise error level used.
    test_level_ : float
        Level of each individual test (``delta_`` for FST, ``delta_ / K`` for Bonferroni).

    See Also
    --------
    sklearn_riskcontrol.autoeval.rautoeval_select : the same selection on loss tables (fast path
        for precomputed LLM losses).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import make_classification
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> from sklearn.model_selection import train_test_split
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> from sklearn_riskcontrol.autoeval import RAutoEvalPlus, RiskControlledModelSelector
    >>> X, y = make_classification(n_samples=8000, n_informative=6, random_state=0)
    >>> X_fit, X_rest, y_fit, y_rest = train_test_split(X, y, train_size=2000, random_state=0)
    >>> X_judge, X_eval, y_judge, y_eval = train_test_split(X_rest, y_rest, train_size=2000,
    ...                                                     random_state=0)
    >>> candidates = [DecisionTreeClassifier(max_depth=d, random_state=0).fit(X_fit, y_fit)
    ...               for d in (12, 6, 3, 1)]                  # from largest to smallest
    >>> judge = RandomForestClassifier(random_state=0).fit(X_judge, y_judge)
    >>> _, unlabeled = train_test_split(np.arange(4000), train_size=400, random_state=0)
    >>> y_semi = y_eval.copy()
    >>> y_semi[unlabeled] = -1                                 # 400 labels, 3600 unlabeled
    >>> tester = RAutoEvalPlus(None, autoevaluator=judge, alpha=0.2, delta=0.1, random_state=0)
    >>> sel = RiskControlledModelSelector(candidates, tester=tester, cost=[12, 6, 3, 1])
    >>> sel = sel.fit(X_eval, y_semi)

    Over the draw of the labeled rows, the probability that *some* certified candidate has
    risk above ``alpha = 0.2`` is at most ``delta = 0.1`` (the errors of the four trees on all
    4000 rows are 0.113, 0.118, 0.150 and 0.217):

    >>> sel.certified_.tolist(), sel.selected_index_
    ([True, True, True, False], 2)
    """

    _parameter_constraints = {
        "estimators": [list, tuple],
        "tester": [HasMethods(["fit", "get_params", "set_params"]), callable],
        "procedure": [StrOptions({"fst", "bonferroni"})],
        "order": [StrOptions({"cost"}), "array-like", None],
        "cost": ["array-like", callable, None],
        "delta": [Interval(Real, 0, 1, closed="neither"), None],
        "n_jobs": [Integral, None],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        estimators: Sequence[Estimator],
        *,
        tester: Estimator | Callable[..., Any],
        procedure: str = "fst",
        order: str | ArrayLike | None = None,
        cost: ArrayLike | Callable[..., ArrayLike] | None = None,
        delta: float | None = None,
        n_jobs: int | None = None,
        verbose: int = 0,
    ) -> None:
        self.estimators = estimators
        self.tester = tester
        self.procedure = procedure
        self.order = order
        self.cost = cost
        self.delta = delta
        self.n_jobs = n_jobs
        self.verbose = verbose

    def _costs(self, K):
        if self.cost is None:
            return None
        if callable(self.cost):
            costs = [self.cost(est) for est in self.estimators]
        else:
            costs = self.cost
        try:
            costs = np.asarray(costs, dtype=float).ravel()
        except (TypeError, ValueError):
            raise TypeError("`cost` must be numbers, one per candidate.") from None
        if costs.shape[0] != K or not np.all(np.isfinite(costs)):
            raise ValueError(f"`cost` must give {K} finite numbers (one per candidate).")
        return costs

    def _order(self, K, costs):
        if self.order is None:
            return np.arange(K)
        if isinstance(self.order, str):  # "cost"
            if costs is None:
                raise ValueError("order='cost' needs `cost` (an array or a callable).")
            return np.argsort(-costs, kind="stable")
        order = np.asarray(self.order)
        if order.shape != (K,) or order.dtype.kind not in "iu" or not np.array_equal(
            np.sort(order), np.arange(K)
        ):
            raise ValueError(
                f"`order` must be None, 'cost' or a permutation of range({K}); got "
                f"{order.tolist()!r}."
            )
        return order.astype(int)

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X: ArrayLike, y: ArrayLike, groups: ArrayLike | None = None) -> Self:
        """Test every candidate (FST: until the first failure) and select one.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Labels, with unlabeled rows marked ``-1`` (classes) or NaN (regression), as for
            :class:`RAutoEvalPlus`.
        groups : array-like of shape (n_samples,), default=None
            Cluster id of every row (labeled and unlabeled), passed to each candidate's test
            (``fit(X, y, groups=groups)`` of :class:`RAutoEvalPlus`; a callable ``tester``
            receives ``groups=groups``): clusters are the draws, the risk is per item.

        Returns
        -------
        self

        Warns
        -----
        RiskControlWarning
            When nothing is certified, and once per cause that makes candidates' tests
            useless (every labeled loss equals 1; a large share of losses clipped at 1),
            naming the candidates (the candidates' own warnings are not repeated).
        """
        if y is None:
            raise ValueError(
                f"{type(self).__name__} requires y to be passed, but the target y is None: "
                "the tests need labeled rows."
            )
        K = len(self.estimators)
        if K == 0:
            raise ValueError("`estimators` is empty: pass at least one candidate model.")
        delta = self._family_delta()
        costs = self._costs(K)
        order = self._order(K, costs)
        level = delta if self.procedure == "fst" else delta / K
        X = indexable_rows(X)
        testers, pvalues = self._run_tests(X, y, order, level, groups)
        certified = self._certify(testers, pvalues, order, delta)
        self.testers_ = testers
        self.pvalues_ = pvalues
        self.tested_ = ~np.isnan(pvalues)
        self.certified_ = certified
        self.order_ = order
        self.costs_ = costs
        self.delta_ = delta
        self.test_level_ = level
        _warn_degenerate(testers)
        self._select(X, certified, costs, order)
        return self

    def _family_delta(self):
        """The family-wise level: ``delta``, else the template tester's ``delta``."""
        if self.delta is not None:
            return float(self.delta)
        if hasattr(self.tester, "get_params") and "delta" in self.tester.get_params(deep=False):
            return check_level(self.tester.get_params(deep=False)["delta"], "tester.delta")
        raise ValueError("A callable `tester` needs the family-wise level `delta`.")

    def _run_tests(self, X, y, order, level, groups=None):
        """Each candidate's (fitted tester or None, p-value) at ``level``, in ``order`` (FST:
        until the first failure; untested ones keep ``None`` and NaN)."""
        K = len(self.estimators)
        tester = self.tester
        if hasattr(tester, "get_params") and isinstance(
                tester.get_params(deep=False).get("random_state"),
                (np.random.RandomState, np.random.Generator)):
            # One int seed drawn here: every candidate sees the same stream whatever n_jobs.
            params = tester.get_params(deep=False)
            rng = check_random_state(params["random_state"])
            params["random_state"] = int(rng.randint(np.iinfo(np.int32).max))
            tester = type(tester)(**params)
        testers = [None] * K
        pvalues = np.full(K, np.nan)
        bar = Progress(K, verbose=self.verbose, desc=type(self).__name__, unit="candidates")

        judge = tester.get_params(deep=False).get("autoevaluator") if hasattr(
            tester, "get_params") else None

        def record(i, out):  # True (FST: stop) when candidate order[i] is not certified
            k = order[i]
            parcel, pvalues[k] = out
            if parcel is not None:
                testers[k] = parcel.unpack(candidate=self.estimators[k], autoevaluator=judge)
            bar.update(i + 1, candidate=int(k), pvalue=float(pvalues[k]))
            return not at_most(pvalues[k], level)

        with bar, _quiet_risk_warnings():
            # X, y and the template go once per parallel task (to each Dask worker once); tasks are
            # sized from the first candidates' cost, or all run here when too small to pay.
            shared = (tester, level, X, y, _shared_judge_labels(tester, X), {}, groups)
            run_units(_run_tester, [(self.estimators[k],) for k in order], shared,
                      n_jobs=self.n_jobs, each=record, may_stop=self.procedure == "fst")
        return testers, pvalues

    def _certify(self, testers, pvalues, order, delta):
        """Certified candidates by the multiple-testing procedure; with FST, candidates past
        the first failure (a parallel batch may have run them) are dropped from ``testers``
        and ``pvalues``."""
        K = len(testers)
        if self.procedure != "fst":
            return bonferroni(pvalues, delta)
        in_order = fixed_sequence(np.nan_to_num(pvalues[order], nan=1.0), delta)
        first_fail = int(np.argmin(in_order)) if not in_order.all() else K
        for k in order[first_fail + 1 :]:
            testers[k], pvalues[k] = None, np.nan
        certified = np.zeros(K, dtype=bool)
        certified[order] = in_order
        return certified

    def _select(self, X, certified, costs, order):
        """Set ``selected_index_`` and ``selected_estimator_``: the cheapest certified candidate
        (the last certified in ``order`` without costs), or None with a warning."""
        if not certified.any():
            self.selected_index_ = None
            self.selected_estimator_ = None
            copy_feature_info(self, self.estimators[order[0]], X)
            warn(self._nothing_reason(order))
            return
        idx = np.flatnonzero(certified)
        if costs is None:
            rank = np.empty(len(certified), dtype=int)
            rank[order] = np.arange(len(certified))
            k = int(idx[np.argmax(rank[idx])])
        else:
            k = int(idx[np.argmin(costs[idx])])
        self.selected_index_ = k
        fitted = self.testers_[k]
        self.selected_estimator_ = (
            fitted.estimator_ if fitted is not None and hasattr(fitted, "estimator_")
            else self.estimators[k]
        )
        copy_feature_info(self, self.selected_estimator_, X)

    def _nothing_reason(self, order):
        p = self.pvalues_
        if self.procedure == "fst":
            first = int(order[0])
            return (
                f"Nothing is certified (selected_index_ = None): the first candidate in the "
                f"fixed sequence (index {first}) was not certified (p-value {p[first]:.3g} > "
                f"delta={self.delta_:g}), so testing stopped there and no later candidate may "
                "be selected. Put a safer model first, or use more labeled rows, a better "
                "autoevaluator or a larger alpha."
            )
        return (
            f"Nothing is certified (selected_index_ = None): no candidate reached p-value <= "
            f"delta/K = {self.test_level_:.3g} (smallest p-value {np.nanmin(p):.3g})."
        )

    def decide(self) -> BoolArray:
        """Which candidates are certified (risk <= alpha, family-wise error <= delta).

        Returns
        -------
        ndarray of bool, shape (n_candidates,)
        """
        check_is_fitted(self, "certified_")
        return self.certified_.copy()

    # -- delegation ----------------------------------------------------------------------------
    def _delegate(self):
        check_is_fitted(self, "certified_")
        if self.selected_estimator_ is None:
            raise ValueError(
                f"{type(self).__name__} certified no candidate (see the warning raised by fit "
                "and `pvalues_`), so there is no selected model to predict with. Use more "
                "labeled rows, a better autoevaluator, a larger alpha, or a safer first "
                "candidate for fixed-sequence testing."
            )
        return self.selected_estimator_

    def _delegation_targets(self):
        """The selected candidate once there is one, else every candidate."""
        selected = getattr(self, "selected_estimator_", None)
        return self.estimators if selected is None else (selected,)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        inner = [t for t in map(tags_or_none, self.estimators) if t is not None]
        if inner:
            tags.input_tags.sparse = all(t.input_tags.sparse for t in inner)
            tags.input_tags.allow_nan = all(t.input_tags.allow_nan for t in inner)
            tags.target_tags = inner[0].target_tags
            tags.classifier_tags = inner[0].classifier_tags
            tags.regressor_tags = inner[0].regressor_tags
        tags.target_tags.required = True
        return tags
