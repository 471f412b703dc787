"""PAC-type baselines and Learn-then-Test selective control: :class:`ConcentrationMDR` and
:class:`ConcentrationSDR`, over the thresholds of :mod:`._bounds`."""

from __future__ import annotations

from collections.abc import Callable
from numbers import Integral, Real
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike
from sklearn.utils import _safe_indexing
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions

from .._docstrings import fill_doc
from .._labels import (
    is_classification,
    labeled_and_unlabeled,
    raw_judge_labels,
    unlabeled_mask,
)
from .._typing import BoolArray, Estimator, FloatArray, RandomStateLike
from .._validation import (
    show,
    warn,
)
from .._wrapping import (
    indexable_rows,
    n_rows,
)
from ._base import _SCORE_DOC_PARAMS, _DeploymentBase
from ._bounds import concentration_threshold, nothing_certified_said_later
from ._groups import (
    _MAX_NAMED,
    group_codes,
    group_labels,
    min_rows_for_pvalue,
    row_group_codes,
    sidak_level,
)

if TYPE_CHECKING:
    from typing_extensions import Self  # typing.Self: Python >= 3.11

__all__ = ["ConcentrationMDR", "ConcentrationSDR"]


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
        estimator: Estimator,
        *,
        risk: str | Callable[..., ArrayLike] = "zero_one",
        risk_score: str | Estimator | Callable[..., ArrayLike] = "proba",
        alpha: float = 0.1,
        delta: float = 0.1,
        bound: str = "auto",
        procedure: str = "auto",
        grid: ArrayLike | None = None,
        n_draws: int = 100,
        groups: str | Callable[..., ArrayLike] | None = None,
        calib_size: float = 0.5,
        random_state: RandomStateLike = None,
        n_jobs: int | None = None,
        verbose: int = 0,
        auto_evaluator: Estimator | Callable[..., ArrayLike] | None = None,
    ) -> None:
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
        self.groups = groups
        self.calib_size = calib_size
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose

    def fit(self, X: ArrayLike, y: ArrayLike, *, shift_weights: ArrayLike | None = None) -> Self:
        """Calibrate and compute the concentration threshold ``threshold_``.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Calibration inputs (labeled and, with an ``auto_evaluator``, unlabeled rows).
        y : array-like of shape (n_samples,)
            Labels. With an ``auto_evaluator``, unlabeled rows are marked like in
            :class:`~sklearn_riskcontrol.autoeval.RAutoEvalPlus`: ``-1`` for classes, NaN for
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
        if self.groups is not None:
            return self._fit_group_thresholds(judge)
        self.result_ = concentration_threshold(
            self.cal_risks_,
            self.cal_scores_,
            self.alpha,
            target=self._target,
            bound=self._resolved_bound(judge is not None),
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

    def _fit_group_thresholds(self, judge):
        """``groups``: one threshold per group, from its calibration rows alone, at the Šidák
        level; one warning naming the groups that certify nothing (they abstain)."""
        n_groups = len(self.groups_)
        self.group_delta_ = sidak_level(self.delta, n_groups)
        bound = self._resolved_bound(judge is not None)
        codes = self._cal_group_codes
        if judge is not None:
            unl_codes = self._unlabeled_group_codes
            n_unl = np.bincount(unl_codes[unl_codes >= 0], minlength=n_groups)
            short = np.flatnonzero(n_unl < self.group_n_calibration_)
            if short.size:
                named = ", ".join(f"{show(self.groups_[k])} ({n_unl[k]} unlabeled for "
                                  f"{self.group_n_calibration_[k]} labeled)" for k in short[:_MAX_NAMED])
                raise ValueError(
                    f"With groups, each group's threshold uses its own unlabeled rows, at least "
                    f"as many as its labeled calibration rows; group(s) {named} have fewer. Add "
                    "unlabeled rows of these groups, merge small groups (a callable `groups`), or "
                    "drop the auto_evaluator."
                )
        results, thresholds = {}, np.full(n_groups, -np.inf)
        for k, label in enumerate(self.groups_):
            rows = codes == k
            judge_k = {}
            if judge is not None:
                unl = unl_codes == k
                judge_k = {"cal_judge_risks": judge[0][rows],
                           "unlabeled_judge_risks": judge[1][unl],
                           "unlabeled_scores": judge[2][unl]}
            # "nothing certified" is said once for all groups, in _warn_abstaining_groups
            with nothing_certified_said_later():
                result = concentration_threshold(
                    self.cal_risks_[rows], self.cal_scores_[rows], self.alpha,
                    target=self._target, bound=bound, procedure=self.procedure,
                    delta=self.group_delta_, grid=self.grid, n_draws=self.n_draws,
                    random_state=self.random_state, **judge_k,
                )
            results[label.item() if isinstance(label, np.generic) else label] = result
            thresholds[k] = result.threshold
        self.group_results_ = results
        self.group_thresholds_ = thresholds
        self.result_ = None
        self.threshold_ = float("nan")
        self._warn_abstaining_groups()
        return self

    def _warn_abstaining_groups(self):
        abstain = np.flatnonzero(self.group_thresholds_ == -np.inf)
        if not abstain.size:
            return
        level, parts = self.group_delta_, []
        n_groups = len(self.groups_)

        def rows_of(n):
            return f"{n} calibration row{'' if n == 1 else 's'}"

        results = list(self.group_results_.values())  # in the order of groups_
        for k in abstain[:_MAX_NAMED]:
            label, n, result = self.groups_[k], int(self.group_n_calibration_[k]), results[k]
            need = min_rows_for_pvalue(result.bound, self._target, self.alpha, level)
            if need is not None and n < need:
                parts.append(f"group {show(label)} ({rows_of(n)}, fewer than the {need} the "
                             f"{result.bound} test needs to reach the group level even when "
                             "every loss is 0)")
            else:
                parts.append(f"group {show(label)} ({rows_of(n)}; with its calibration "
                             f"errors no threshold passes the {result.bound} test at the group "
                             "level)")
        more = (f"; and {abstain.size - _MAX_NAMED} more" if abstain.size > _MAX_NAMED
                else "")
        warn(
            f"{type(self).__name__}: {abstain.size} of {n_groups} "
            f"group{'' if n_groups == 1 else 's'} certif{'ies' if abstain.size == 1 else 'y'} "
            "no threshold at the per-group level delta_g = 1 - (1 - delta)^(1/G) = "
            f"{level:.4g} (delta={self.delta}, G={n_groups}), so their test rows abstain "
            f"(never deployed): {'; '.join(parts)}{more}. Pass more calibration rows of these "
            "groups, merge small groups (a callable `groups`), or use a larger alpha or delta."
        )

    def _resolved_bound(self, with_judge):
        """``bound``, with ``"auto"`` resolved where it depends on the judge or on the risk's
        construction (``concentration_threshold`` sees only the loss values)."""
        if self.bound != "auto":
            return self.bound
        if with_judge:
            # R-AutoEval+ or the labels alone, whichever rejects (union bound over the two)
            return "rautoeval_or_" + ("binomial" if self.risk_.binary else "hoeffding_bentkus")
        # The exact binomial p-values need losses that are 0/1 by construction; 0/1 values on
        # this calibration draw do not make a [0, 1] loss binary.
        return "auto" if self.risk_.binary else "hoeffding_bentkus"

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
        if self.groups is not None:  # unlabeled rows of groups without calibration rows: unused
            self._unlabeled_group_codes = group_codes(self.groups_, group_labels(self, X_unl))
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

    def _group_thresholds(self, X):
        """``groups``: the scores of the rows of ``X`` and their groups' thresholds."""
        X = indexable_rows(X)
        scores, _ = self._test_inputs(X, None)
        codes = row_group_codes(self, X)
        return scores, np.where(codes >= 0, self.group_thresholds_[np.maximum(codes, 0)], -np.inf)

    def decide(self, X: ArrayLike) -> BoolArray:
        """Deploy where the score is at most ``threshold_`` (with ``groups``: at most the
        threshold of the row's group)."""
        if self.groups is not None:
            scores, thresholds = self._group_thresholds(X)
            decided = scores <= thresholds
            if decided.size and not decided.any() and np.isfinite(thresholds).any():
                self._warn_nothing("every test score is above its group's certified threshold.")
            return decided
        scores, _ = self._test_inputs(X, None)
        decided = self.result_.decide(scores)
        # An infinite threshold was already reported by a warning in fit.
        if decided.size and not decided.any() and np.isfinite(self.threshold_):
            self._warn_nothing(
                f"every test score is above the certified threshold {self.threshold_:.4g}."
            )
        return decided

    def decision_function(self, X: ArrayLike) -> FloatArray:
        """Margin ``threshold_ - score``: ``decide(X) == (decision_function(X) >= 0)``.

        With ``groups``: the threshold of the row's group minus its score (``-inf`` for
        abstaining groups and groups not seen in calibration).
        """
        if self.groups is not None:
            scores, thresholds = self._group_thresholds(X)
            return thresholds - scores
        scores, _ = self._test_inputs(X, None)
        return self.threshold_ - scores


@fill_doc(score_params=_SCORE_DOC_PARAMS)
class ConcentrationMDR(_ConcentrationBase):
    """PAC control of MDR: deploy where ``s(x) <= t_hat`` (Learn-then-Test, or paper App. D.4).

    Guarantee: PAC-type (``MDR(t_hat) = E[L 1{s(X) <= t_hat}] <= alpha`` with probability
    >= 1 - delta over the calibration data), not SCoRE's control in expectation
    (:class:`SCoREMDR`). By default ``t_hat`` is the largest threshold reached by
    fixed-sequence testing of ``H_t: MDR(t) > alpha`` over all thresholds in increasing order
    (exact binomial p-values for 0/1 losses, Hoeffding-Bentkus otherwise; valid since ``MDR(t)``
    is nondecreasing). ``bound="hoeffding", procedure="union"`` (Hoeffding over a fixed grid)
    and ``bound="rademacher"`` are the SCoRE paper's baselines. See
    :func:`~sklearn_riskcontrol.selective.concentration_threshold` for every option.

    Parameters
    ----------
{score_params}
    delta : float in (0, 1), default=0.1
        Failure probability.
    bound : {"auto", "binomial", "hoeffding_bentkus", "wsr", "hoeffding", "rademacher", \
"rautoeval", "rautoeval_or_binomial", "rautoeval_or_hoeffding_bentkus"}, default="auto"
        Concentration bound or p-value; ``"auto"`` = ``"binomial"`` when the risk is 0/1 by
        construction (``"zero_one"``, ``"absolute"``, ``"threshold"``: ``Risk.binary``), else
        ``"hoeffding_bentkus"`` (the default was ``"hoeffding"`` before the Learn-then-Test
        options). With an ``auto_evaluator``, ``"auto"`` = ``"rautoeval_or_"`` + that bound:
        the larger threshold of the labels-only test at ``0.9 delta`` and R-AutoEval+ at
        ``0.1 delta`` (a union bound: valid; about the labels-only power, plus what a strong
        judge adds);
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
        :class:`~sklearn_riskcontrol.autoeval.RAutoEvalPlus`'s ``autoevaluator``), fixed independently
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
    groups : None, "predicted_class" or callable, default=None
        One threshold per group, with the PAC guarantee within every group at once.
        ``None``: one group. ``"predicted_class"`` (classifiers): a row's group is the class
        the model predicts; a callable ``X -> array`` gives one group label per row (numbers
        or strings), for the rows of ``fit`` and of :meth:`decide` alike (fixed before seeing
        the calibration data). Group ``g``'s threshold ``t_g`` is computed from its
        calibration rows alone (as by ``concentration_threshold``) at the Šidák level
        ``group_delta_ = 1 - (1 - delta) ** (1 / G)``, ``G`` the number of groups seen in
        calibration. Given the groups' calibration counts, the rows of different groups are
        independent, so the family-wise error over all groups and thresholds is at most
        ``delta``: with probability at least ``1 - delta`` over the calibration data, for
        *every* group ``g``, ``E[L 1{s(X) <= t_g} | group g] <= alpha`` (MDR) or
        ``E[L | s(X) <= t_g, group g] <= alpha`` (SDR), under the conditions of the
        one-group guarantee. A group that certifies no threshold
        (e.g. fewer calibration rows than its test needs to reach ``group_delta_`` even when
        every loss is 0) abstains, with one warning naming such groups; rows of groups not
        seen in ``fit`` abstain too (with a warning). With an ``auto_evaluator`` the
        unlabeled rows are grouped by the same rule, and each group needs at least as many
        unlabeled rows as labeled calibration rows. Fitted attributes: ``groups_`` (sorted
        labels), ``group_n_calibration_`` (counts), ``group_thresholds_`` (``-inf`` for
        abstaining groups), ``group_results_`` (label -> ``ConcentrationResult``),
        ``group_delta_``; ``threshold_`` is NaN and ``result_`` is None. Not combined with
        covariate shift. See :ref:`selective-groups`.

    Examples
    --------
    >>> from sklearn.datasets import load_digits
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.model_selection import train_test_split
    >>> from sklearn_riskcontrol.selective import ConcentrationMDR
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


@fill_doc(score_params=_SCORE_DOC_PARAMS)
class ConcentrationSDR(_ConcentrationBase):
    """PAC selective risk control: deploy where ``s(x) <= t_hat`` (Learn-then-Test, App. D.4).

    Guarantee: PAC-type: the risk among deployed points ``E[L | s(X) <= t_hat] <= alpha`` with
    probability >= 1 - delta over the calibration data (not SCoRE's control in expectation,
    :class:`SCoRESDR`). By default each threshold ``t`` among the calibration scores, from the
    smallest one below which enough points lie for the test to ever reject, gets a p-value for
    ``H_t: E[L | s(X) <= t] > alpha`` from the losses of the calibration points below it (exact
    binomial for 0/1 losses, Hoeffding-Bentkus otherwise), and the fallback procedure
    (ascending thresholds, weights fixed on the scores' ranks; family-wise error <= delta)
    picks ``t_hat``; any score range is accepted (e.g. a regressor's risk score). The grid is read
    off the scores, never the labels; the guarantee is then exact in finite samples when the
    score orders the risk (``E[L | s(X) = s]`` nondecreasing in ``s``; scores without ties for
    the default fallback, any scores with ``procedure="fixed_sequence"``), and was checked in
    Monte Carlo otherwise (see :func:`~sklearn_riskcontrol.selective.concentration_threshold`).
    Measured side by side with MAPIE 1.6's Learn-then-Test ``BinaryClassificationController``
    (``benchmarks/selective_pac.py``, 100 shuffled calibration/test splits, delta = .1;
    table in ``benchmarks/RESULTS.md``): on 55 models x data sets (logistic regression, LDA,
    QDA, SGD, calibrated and plain boosting, AdaBoost, random and extra forests, bagged trees,
    naive Bayes, k-NN, MLPs, SVCs, trees, regressors' risk scores; digits, letter, breast
    cancer, diamonds and simulations with label noise, imbalance, ties and overlapping
    classes) it deployed at least as much as the best of MAPIE's Bonferroni, Holm,
    fixed-sequence and split fixed-sequence procedures, within two standard errors of the
    paired difference, on every case (e.g. digits, logistic regression, alpha .02: .905
    against .875; a diamond-price risk score: .218 against .126; imbalanced data whose most
    confident scores hold the errors: .790 against .750 for MAPIE's Holm and .824, within two
    standard errors, for its split fixed sequence). The scope is those cases: MAPIE's fixed
    sequence, all of ``delta`` on its first threshold, can still win single calibration sets
    decided at the edge of what ``n`` and ``alpha`` allow.
    ``bound="hoeffding", procedure="union"`` is the SCoRE paper's baseline (an upper bound on
    ``E[L 1{s(X) <= t}]`` over a lower bound on ``P(s(X) <= t)``). See
    :func:`~sklearn_riskcontrol.selective.concentration_threshold`.

    Parameters
    ----------
{score_params}
    delta, bound, grid, n_draws, calib_size, random_state, n_jobs, verbose, auto_evaluator
        See :class:`ConcentrationMDR` (default grid: the calibration scores for the binomial
        and Hoeffding-Bentkus bounds, see above; 100 points on [0, 1], fixed in advance, for
        ``"wsr"`` and the ``rautoeval`` bounds). With an ``auto_evaluator`` the
        p-value at ``t`` uses the labeled calibration rows with score ``<= t`` and the
        unlabeled rows with score ``<= t`` (valid given both counts: the two are then i.i.d.
        draws of ``X`` given ``s(X) <= t``).
    procedure : {"auto", "fallback", "fixed_sequence", "union"}, default="auto"
        ``"auto"`` = ``"fallback"`` for the p-value bounds, ``"union"`` for ``"hoeffding"``.
    groups : None, "predicted_class" or callable, default=None
        A threshold per group: see :class:`ConcentrationMDR`. With probability at least
        ``1 - delta``, the risk among deployed rows of every group ``g``,
        ``E[L | s(X) <= t_g, group g]``, is at most ``alpha``.

    Examples
    --------
    >>> from sklearn.datasets import load_digits
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.model_selection import train_test_split
    >>> from sklearn_riskcontrol.selective import ConcentrationSDR
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
