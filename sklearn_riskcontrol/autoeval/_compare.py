"""Paired comparison of models on the same items with R-Eval / R-AutoEval / R-AutoEval+.

The quantity: ``Delta = R_A - R_B``, the difference of two models' risks on the same
distribution of items, from ``n`` labeled items (both models' losses with the true label), the
judge's losses of both models on the same items and on ``N >= n`` unlabeled items.

Reduction to one risk
    Each item gives the *paired loss* ``l = (L_A - L_B + 1) / 2`` in ``[0, 1]``, whose mean is
    ``(Delta + 1) / 2``; the judge's paired losses ``(G_A - G_B + 1) / 2`` likewise. So every
    single-risk procedure of :mod:`sklearn_riskcontrol.autoeval` applied to paired losses is the
    same procedure for ``Delta``, with the same guarantee: the prediction-powered observations
    ``l_i + rho (lbar_i - g_i)`` are unbiased for the mean of ``l`` whatever the judge, so the
    intervals cover ``Delta`` with probability at least ``1 - delta`` in finite samples and the
    tests keep their type-I error under optional stopping. The pairing is what buys power: the
    variance of ``L_A - L_B`` is small when the models err on the same items, and the judge's
    paired losses need only track the *difference*.

When B's losses are all zero
    Then ``R_A <= R_B - margin`` with ``margin = -alpha`` is ``R_A <= alpha``, and
    :func:`rautoeval_difference_test` is :func:`rautoeval_test` of A at ``alpha`` exactly for
    R-Eval with universal-portfolio bets (the default ``betting="up"``; its bets scale with the
    observations, tested). With WSR bets (variance priors that do not scale) or a judge (the
    paired observation's values fill only part of its a priori range ``[-rho, 1 + rho]``, which
    caps the bets) the paired test differs from the single-risk one, with the same guarantee.

Several judges
    Judge tables with a third axis, ``(n, K, k)`` and ``(N, K, k)``, hold ``k`` judges (axis 1:
    the models, axis 2: the judges). Each judge gives paired judge losses, and the single-risk
    procedures combine the ``k`` columns with reliance vectors (a mixture over a grid, or one
    chosen from past rounds only), so the guarantee holds whatever the judges.

Several models
    Each ordered pair ``(i, j)`` has the hypothesis ``H_ij: R_i - R_j >= -margin``; rejecting
    it certifies ``R_i < R_j - margin``. All the hypotheses of the family (every ordered pair, or
    each model against a baseline in both directions) are tested with Holm's procedure
    (:func:`~sklearn_riskcontrol.evalues.testing.holm`), whose family-wise error is at most
    ``delta`` whatever the dependence between the tests (they share the items); a closed
    procedure exploiting the logical relations between pairs (Shaffer's) could reject a little
    more, but Holm is simple to state and to check.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .._validation import as_float_array, check_level, check_number, check_risks
from ..evalues.testing import holm
from .._results import ResultMixin
from ._arrays import (
    _METHOD_NAMES,
    RAutoEvalResult,
    rautoeval_confidence_interval,
    rautoeval_test,
)

__all__ = [
    "RiskDifferenceInterval",
    "rautoeval_difference_interval",
    "DifferenceTestResult",
    "rautoeval_difference_test",
    "ComparisonResult",
    "rautoeval_compare",
]


def _columns(x, name, k=None, rows=None):
    """A 2-d float array (rows, models) of losses; ``None`` stays ``None``."""
    if x is None:
        return None
    arr = as_float_array(x, name, "a 2-d table of losses (n_items, n_models)")
    if arr.ndim != 2 or (k is not None and arr.shape[1] != k):
        want = f"(n_items, {k})" if k is not None else "(n_items, n_models)"
        raise ValueError(
            f"`{name}` must be a 2-d table of shape {want}: one column per model, the same "
            f"items on each row; got shape {arr.shape}."
        )
    flat = check_risks(arr.ravel(), name)  # NaN or a loss outside [0, 1]: named, refused
    if rows is not None and arr.shape[0] != rows:
        raise ValueError(
            f"`{name}` has {arr.shape[0]} rows but `loss_labeled` has {rows}: the judge's losses "
            "on the labeled items must be on the same items, in the same order."
        )
    return flat.reshape(arr.shape)


def _judge_columns(x, name, k, rows=None):
    """Judge losses as (rows, models) for one judge or (rows, models, judges) for several: a
    3-d table's last axis indexes the judges (``(n, K, 1)`` is the 2-d table)."""
    if x is None:
        return None
    arr = as_float_array(x, name, "a table of judge losses (n_items, n_models[, n_judges])")
    if arr.ndim == 3 and arr.shape[2] == 1:
        arr = arr[:, :, 0]
    if arr.ndim != 3:
        return _columns(arr, name, k, rows)
    if arr.shape[1] != k or arr.shape[2] == 0:
        raise ValueError(
            f"`{name}` must be a table of shape (n_items, {k}) for one judge or "
            f"(n_items, {k}, n_judges) for several (axis 1: the models, axis 2: the judges); "
            f"got shape {arr.shape}."
        )
    flat = _columns(arr.reshape(arr.shape[0], -1), name, None, rows)
    return flat.reshape(arr.shape)


def _paired(x, a, b):
    """Paired losses ``(x_a - x_b + 1) / 2`` in [0, 1] (``None`` stays ``None``); with several
    judges (a 3-d table) one column per judge."""
    return None if x is None else (x[:, a] - x[:, b] + 1.0) / 2.0


def _tables(loss_labeled, loss_judge_labeled, loss_judge_unlabeled, k=None):
    h = _columns(loss_labeled, "loss_labeled", k)
    g = _judge_columns(loss_judge_labeled, "loss_judge_labeled", h.shape[1], h.shape[0])
    u = _judge_columns(loss_judge_unlabeled, "loss_judge_unlabeled", h.shape[1])
    if g is not None and u is not None and g.ndim != u.ndim or (
            g is not None and u is not None and g.ndim == 3 and g.shape[2] != u.shape[2]):
        raise ValueError(
            f"`loss_judge_labeled` (shape {g.shape}) and `loss_judge_unlabeled` (shape "
            f"{u.shape}) must hold the same judges: the same number on axis 2 (none for one "
            "judge)."
        )
    return h, g, u


@dataclass(frozen=True)
class RiskDifferenceInterval(ResultMixin):
    """Result of :func:`rautoeval_difference_interval`: ``low <= R_A - R_B <= high``.

    The probability, at least ``1 - delta``, is over the random draw of the labeled (and
    unlabeled) items: the procedure covers the difference of the two models' risks in at least
    a ``1 - delta`` share of draws; one realized interval either covers it or not.

    Attributes
    ----------
    low, high : float
        Bounds on ``R_A - R_B`` (``low = -1`` for an upper bound, ``high = 1`` for a lower one).
    delta : float
    side : str
    method : str
    construction : str
    """

    low: float
    high: float
    delta: float
    side: str
    method: str
    construction: str = "plugin"

    @property
    def sign(self) -> int:
        """``-1`` if the interval certifies ``R_A < R_B``, ``1`` if ``R_A > R_B``, else ``0``."""
        return -1 if self.high < 0 else (1 if self.low > 0 else 0)

    def __str__(self):
        return (
            f"[{self.low:.4g}, {self.high:.4g}] for risk(A) - risk(B) ({self.side}, "
            f"{_METHOD_NAMES[self.method]}): intervals built this way cover the difference with "
            f"probability >= {1 - self.delta:g} over the draw of the labeled items"
        )


def rautoeval_difference_interval(
    loss_labeled: ArrayLike,
    loss_judge_labeled: ArrayLike | None = None,
    loss_judge_unlabeled: ArrayLike | None = None,
    *,
    delta: float,
    side: str = "two-sided",
    method: str = "plus",
    **options: Any,
) -> RiskDifferenceInterval:
    """Confidence interval for ``risk(A) - risk(B)`` of two models on the same items.

    The interval of :func:`rautoeval_confidence_interval` on the paired losses
    ``(L_A - L_B + 1) / 2`` (module docstring), mapped back by ``Delta = 2 m - 1``: valid in
    finite samples, with probability at least ``1 - delta`` over the draw of the items,
    whatever the judge. Assumed: the labeled items are exchangeable draws from the
    distribution the risks are about, in the order given, and so are the unlabeled items; each
    loss lies in ``[0, 1]``.

    Parameters
    ----------
    loss_labeled : array-like of shape (n, 2)
        Losses of model A (column 0) and model B (column 1) with the true labels, on the same
        ``n`` items.
    loss_judge_labeled : array-like of shape (n, 2) or (n, 2, k), default=None
        Both models' losses with the judge's labels on the same items (``None``: labels only,
        R-Eval). Several judges: a third axis, one entry per judge (``[:, 0, j]``: model A
        judged by judge ``j``); the judges' paired losses are combined with a reliance vector
        chosen from past rounds (see :func:`rautoeval_confidence_interval`).
    loss_judge_unlabeled : array-like of shape (N, 2) or (N, 2, k), default=None
        Both models' losses with the judge's (judges') labels on ``N >= n`` unlabeled items.
    delta : float in (0, 1)
        Miscoverage: ``P(low <= R_A - R_B <= high) >= 1 - delta``.
    side : {"two-sided", "upper", "lower"}, default="two-sided"
    method : {"plus", "autoeval", "eval"}, default="plus"
    **options
        Passed to :func:`rautoeval_confidence_interval` (``construction``, ``split``, ``tol``,
        ``rho_grid``, ...; clustered items: ``groups_labeled``, ``groups_unlabeled``,
        ``max_group_size``, the paired loss of each row, then cluster sums).

    Returns
    -------
    RiskDifferenceInterval

    Examples
    --------
    Two binary classifiers that err on overlapping items (A on 20% of them, B on 22.5%), and
    a judge whose label is wrong on 10% of the items, which flips both models' losses there:

    >>> import numpy as np
    >>> from sklearn_riskcontrol.autoeval import rautoeval_difference_interval
    >>> rng = np.random.default_rng(0)
    >>> def losses(m):
    ...     a = rng.random(m) < 0.2
    ...     b = np.where(rng.random(m) < 0.5, a, rng.random(m) < 0.25)
    ...     return np.c_[a, b].astype(float)
    >>> def judged(L):
    ...     flip = rng.random(L.shape[0]) < 0.1
    ...     return np.where(flip[:, None], 1 - L, L)
    >>> L, L_unl = losses(300), losses(3000)
    >>> ci = rautoeval_difference_interval(L, judged(L), judged(L_unl), delta=0.1)
    >>> labels_only = rautoeval_difference_interval(L, delta=0.1, method="eval")
    >>> round(ci.high - ci.low, 3), round(labels_only.high - labels_only.low, 3)
    (0.078, 0.109)
    >>> print(ci)                                      # one draw; the true difference is -0.025
    [-0.08402, -0.006341] for risk(A) - risk(B) (two-sided, R-AutoEval+): intervals built this
    way cover the difference with probability >= 0.9 over the draw of the labeled items
    >>> ci.sign                                         # this draw certifies A better than B
    -1
    """
    h, g, u = _tables(loss_labeled, loss_judge_labeled, loss_judge_unlabeled, k=2)
    ci = rautoeval_confidence_interval(
        _paired(h, 0, 1), _paired(g, 0, 1), _paired(u, 0, 1), delta=delta, side=side,
        method=method, **options,
    )
    return RiskDifferenceInterval(
        low=2.0 * ci.low - 1.0, high=2.0 * ci.high - 1.0, delta=ci.delta, side=ci.side,
        method=ci.method, construction=ci.construction,
    )


def _pair_test(tables, a, b, alpha, delta, method, options):
    """:func:`rautoeval_test` of ``H0: risk(a) - risk(b) >= 1 - 2 alpha`` on the paired losses
    of columns ``a`` and ``b`` of the checked ``tables`` ``(h, g, u)``."""
    return rautoeval_test(*(_paired(t, a, b) for t in tables), alpha=alpha, delta=delta,
                          method=method, **options)


def _paired_alpha(margin):
    margin = check_number(margin, "margin")
    if not -1.0 < margin < 1.0:
        raise ValueError(f"`margin` must lie in (-1, 1) (a difference of risks); got {margin!r}.")
    return (1.0 - margin) / 2.0


@dataclass(frozen=True)
class DifferenceTestResult(ResultMixin):
    """Result of :func:`rautoeval_difference_test`.

    Attributes
    ----------
    certified : bool
        ``risk(A) < risk(B) - margin`` is certified: ``P(certified and R_A >= R_B - margin)``
        is at most ``delta`` over the draw of the items.
    pvalue : float
    margin, delta : float
    method : str
    result : RAutoEvalResult
        The test on the paired losses ``(L_A - L_B + 1) / 2`` at ``alpha = (1 - margin) / 2``.
    """

    certified: bool
    pvalue: float
    margin: float
    delta: float
    method: str
    result: RAutoEvalResult

    def __str__(self):
        sign = "-" if self.margin > 0 else "+"
        claim = f"risk(A) < risk(B) {sign} {abs(self.margin):g}" if self.margin else \
            "risk(A) < risk(B)"
        verdict = "certified" if self.certified else "not certified"
        return (
            f"{claim}: {verdict} (p = {self.pvalue:.4g}, {_METHOD_NAMES[self.method]}); a "
            f"certification is wrong with probability <= {self.delta:g} over the draw of the "
            "labeled items"
        )


def rautoeval_difference_test(
    loss_labeled: ArrayLike,
    loss_judge_labeled: ArrayLike | None = None,
    loss_judge_unlabeled: ArrayLike | None = None,
    *,
    delta: float,
    margin: float = 0.0,
    method: str = "plus",
    **options: Any,
) -> DifferenceTestResult:
    """Certify ``risk(A) < risk(B) - margin`` for two models on the same items.

    Tests ``H0: R_A - R_B >= -margin`` by :func:`rautoeval_test` on the paired losses
    ``(L_A - L_B + 1) / 2`` at ``alpha = (1 - margin) / 2``: the type-I error is at most
    ``delta`` whatever the judge, also when labeling stops as soon as the test certifies
    (``early_stopping=True``). ``margin > 0`` asks that A be better by at least ``margin``
    (superiority); ``margin < 0`` that A be worse by less than ``-margin`` (non-inferiority);
    ``margin = 0`` that A be better.

    Parameters
    ----------
    loss_labeled, loss_judge_labeled, loss_judge_unlabeled : array-like of shape (n, 2), (n, 2), (N, 2)
        As in :func:`rautoeval_difference_interval` (column 0: model A, column 1: model B;
        several judges: judge tables of shape (n, 2, k) and (N, 2, k)).
    delta : float in (0, 1)
    margin : float in (-1, 1), default=0.0
    method : {"plus", "autoeval", "eval"}, default="plus"
    **options
        Passed to :func:`rautoeval_test` (``betting``, ``n_rho``, ``early_stopping``, ...;
        clustered items: ``groups_labeled``, ``groups_unlabeled``, ``max_group_size``).

    Returns
    -------
    DifferenceTestResult

    Examples
    --------
    Is a new model (A, errs on 12% of the items) worse than the current one (B, 10%) by less
    than 8 points, from 400 labeled items? And by less than 5?

    >>> import numpy as np
    >>> from sklearn_riskcontrol.autoeval import rautoeval_difference_test
    >>> rng = np.random.default_rng(1)
    >>> L = np.c_[rng.random(400) < 0.12, rng.random(400) < 0.10].astype(float)
    >>> print(rautoeval_difference_test(L, delta=0.05, margin=-0.08, method="eval"))
    risk(A) < risk(B) + 0.08: certified (p = 0.02773, R-Eval); a certification is wrong with
    probability <= 0.05 over the draw of the labeled items
    >>> rautoeval_difference_test(L, delta=0.05, margin=-0.05, method="eval").certified
    False
    """
    alpha = _paired_alpha(margin)
    h, g, u = _tables(loss_labeled, loss_judge_labeled, loss_judge_unlabeled, k=2)
    res = _pair_test((h, g, u), 0, 1, alpha, delta, method, options)
    return DifferenceTestResult(certified=bool(res.certified), pvalue=float(res.pvalue),
                                margin=float(margin), delta=float(res.delta),
                                method=res.method, result=res)


@dataclass(frozen=True, eq=False)
class ComparisonResult(ResultMixin):
    """Result of :func:`rautoeval_compare`.

    Attributes
    ----------
    better : ndarray of bool, shape (K, K)
        ``better[i, j]``: ``risk(i) < risk(j) - margin`` is certified. All the certified pairs
        hold together with probability at least ``1 - delta`` (family-wise error, Holm).
    pvalues : ndarray of shape (K, K)
        Per-pair p-value of ``H_ij: risk(i) - risk(j) >= -margin`` (NaN where not tested).
    ranking : ndarray of int, shape (K,)
        The models ordered by the number of models each is certified better than (more first),
        ties by the number certified better than it (fewer first), then by the labeled mean
        loss. Only the pairs in ``better`` are certified; the order within them is a
        summary, not a guarantee.
    mean_loss : ndarray of shape (K,)
        Realized mean loss of each model on the labeled items (one draw).
    baseline : int or None
    margin, delta : float
    procedure : str
    method : str
    """

    _frame_columns = ("better", "pvalues", "mean_loss")

    better: np.ndarray
    pvalues: np.ndarray
    ranking: np.ndarray
    mean_loss: np.ndarray
    baseline: object
    margin: float
    delta: float
    procedure: str
    method: str

    def certified_pairs(self) -> list[tuple[int, int]]:
        """``(i, j)`` pairs with ``risk(i) < risk(j) - margin`` certified, in row order."""
        return [(int(i), int(j)) for i, j in zip(*np.nonzero(self.better))]

    def __repr__(self):
        return (f"ComparisonResult(certified_pairs={self.certified_pairs()}, "
                f"ranking={self.ranking.tolist()}, procedure={self.procedure!r}, "
                f"delta={self.delta:g})")


def rautoeval_compare(
    loss_labeled: ArrayLike,
    loss_judge_labeled: ArrayLike | None = None,
    loss_judge_unlabeled: ArrayLike | None = None,
    *,
    delta: float,
    baseline: int | None = None,
    margin: float = 0.0,
    method: str = "plus",
    **options: Any,
) -> ComparisonResult:
    """Which models are certified better than which: every pair, or each against a baseline.

    For each ordered pair ``(i, j)`` of the family, :func:`rautoeval_difference_test` gives a
    p-value of ``H_ij: risk(i) - risk(j) >= -margin``; Holm's procedure at level ``delta``
    decides them together, so the probability that any certified pair is wrong is at most
    ``delta`` (whatever the judge and the dependence between the pairs, which share the items).
    The family is every ordered pair (``baseline=None``: ``K (K - 1)`` hypotheses) or each
    model against the baseline in both directions (``2 (K - 1)``: fewer hypotheses, more power
    for the comparisons asked).

    Parameters
    ----------
    loss_labeled : array-like of shape (n, K)
        Each model's losses with the true labels (one column per model, same items per row).
    loss_judge_labeled : array-like of shape (n, K) or (n, K, k), default=None
        Each model's losses with the judge's labels on the labeled items; with ``k`` judges a
        third axis indexes them (axis 1: the models, axis 2: the judges).
    loss_judge_unlabeled : array-like of shape (N, K) or (N, K, k), default=None
    delta : float in (0, 1)
        Family-wise error.
    baseline : int, default=None
        Column of the reference model.
    margin : float in (-1, 1), default=0.0
    method : {"plus", "autoeval", "eval"}, default="plus"
    **options
        Passed to :func:`rautoeval_test` (clustered items: ``groups_labeled``,
        ``groups_unlabeled``, ``max_group_size``).

    Returns
    -------
    ComparisonResult

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_riskcontrol.autoeval import rautoeval_compare
    >>> rng = np.random.default_rng(2)
    >>> L = (rng.random((600, 3)) < [0.10, 0.20, 0.21]).astype(float)
    >>> res = rautoeval_compare(L, delta=0.1, method="eval")
    >>> res.certified_pairs()            # model 0 (10%) beats both others; 1 vs 2 undecided
    [(0, 1), (0, 2)]
    """
    delta = check_level(delta, "delta")
    alpha = _paired_alpha(margin)
    h, g, u = _tables(loss_labeled, loss_judge_labeled, loss_judge_unlabeled)
    k = h.shape[1]
    if k < 2:
        raise ValueError(f"`loss_labeled` has {k} model column(s): comparing needs at least 2.")
    if baseline is not None:
        baseline = check_number(baseline, "baseline", integer=True, minimum=0)
        if baseline >= k:
            raise ValueError(f"`baseline` must be a model column in 0..{k - 1}; got {baseline}.")
        pairs = [(i, baseline) for i in range(k) if i != baseline]
        pairs += [(baseline, j) for j in range(k) if j != baseline]
    else:
        pairs = [(i, j) for i in range(k) for j in range(k) if i != j]
    pvalues = np.full((k, k), np.nan)
    run_method = method
    for i, j in pairs:  # the tables are checked once, above
        res = _pair_test((h, g, u), i, j, alpha, delta, method, options)
        pvalues[i, j], run_method = res.pvalue, res.method
    rows, cols = np.array(pairs).T
    better = np.zeros((k, k), dtype=bool)
    better[rows, cols] = holm(pvalues[rows, cols], delta)
    mean_loss = h.mean(axis=0)
    wins, losses = better.sum(axis=1), better.sum(axis=0)
    ranking = np.lexsort((mean_loss, losses, -wins))
    return ComparisonResult(better=better, pvalues=pvalues, ranking=ranking,
                            mean_loss=mean_loss, baseline=baseline, margin=float(margin),
                            delta=delta, procedure="holm", method=run_method)
