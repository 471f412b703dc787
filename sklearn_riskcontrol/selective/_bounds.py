"""Concentration-inequality baselines for selective deployment (SCoRE paper, Appendix D.4).

These baselines deploy a test point iff its score is at most a threshold ``t_hat`` chosen so that
a *high-probability* upper bound on the deployment risk at ``t_hat`` is at most ``alpha``:

* ``target="mdr"``: ``MDR(t) = E[L 1{s(X) <= t}]`` is bounded by its empirical mean plus a slack;
* ``target="sdr"``: ``SDR*(t) = E[L | s(X) <= t]`` is bounded by an upper bound on the numerator
  ``E[L 1{s(X) <= t}]`` divided by a lower bound on the denominator ``P(s(X) <= t)`` (``inf``
  where that lower bound is ``<= 0``).

Two uniform bounds are offered: Hoeffding's inequality with a union bound over a fixed,
data-independent grid of thresholds, and a Rademacher-complexity bound that holds for all
thresholds simultaneously (so the grid can be the calibration scores themselves).

Unlike SCoRE (:func:`~sklearn_riskcontrol.selective.mdr_decisions`,
:func:`~sklearn_riskcontrol.selective.sdr_evalues`), whose guarantees are exact in expectation,
these give only PAC-type guarantees: ``risk(t_hat) <= alpha`` *with probability at least
``1 - delta`` over the calibration data*. They are conservative and exist so that users can
compare their power with SCoRE's.
"""

from __future__ import annotations

import warnings
from contextlib import contextmanager
from dataclasses import dataclass, field, replace

import numpy as np
from numpy.typing import ArrayLike

from .._typing import BoolArray, RandomStateLike
from .._validation import (
    check_level,
    check_nonempty,
    check_number,
    check_random_state,
    check_risks,
    check_same_length,
    check_scores,
    show,
    warn,
)
from ..evalues.ltt import PVALUES_OF_SUMS
from .._results import ResultMixin
from ._ltt import PVALUE_BOUNDS, select, threshold_pvalues

__all__ = ["ConcentrationResult", "concentration_threshold"]

_TARGETS = ("mdr", "sdr")
_BOUNDS = ("hoeffding", "rademacher", "hoeffding_bentkus", "binomial", "wsr", "auto", "rautoeval",
           "rautoeval_or_binomial", "rautoeval_or_hoeffding_bentkus")
# Prediction-powered bounds: R-AutoEval+ alone, or the better of it and a labels-only p-value.
_JUDGE_BOUNDS = ("rautoeval", "rautoeval_or_binomial", "rautoeval_or_hoeffding_bentkus")
# Share of each threshold's level given to the labels-only test in the "rautoeval_or_" bounds:
# the exact binomial test loses little at 0.9 delta, while R-AutoEval+'s e-process, when the
# judge is good, grows fast enough that the 10x smaller level costs only log(10) of wealth.
_LABELS_SHARE = 0.9
_PROCEDURES = ("auto", "union", "fixed_sequence", "fallback")
# procedure="auto" for the p-value bounds: fixed-sequence testing for MDR (monotone risk, every
# threshold); for SDR the fallback procedure, on the calibration scores for the bounds below
# (_score_grid, _STARTS), chosen by measurement (benchmarks/selective_pac.py, issue 25).
_DEFAULT_PROCEDURE = {"mdr": "fixed_sequence", "sdr": "fallback"}
# p-values that are functions of (n_t, sum of the losses below t), valid for independent losses
# with the required *average* mean: the SDR default grid may be read off the scores (see
# concentration_threshold for when that is exact).
_SCORE_GRID_BOUNDS = tuple(PVALUES_OF_SUMS)
# Fallback on the score grid, weights fixed on ranks (_rank_weights): each start (share, floor)
# puts its share on the first threshold (the last rank of a tie block) not below rank floor * n
# whose deployed points could reject with no error at delta * (share + the coarse weight up to
# it), and, for scores in [0, 1], not below the rows scored <= _CONFIDENT (the predictions the
# model gives >= 99% confidence, MAPIE's first threshold): a run of rejections opened among a
# few of the safest rows breaks at the first error (label noise), one opened on the confident
# rows as a block does not. The rest is spread equally over the ranks round(k n / 50) (where a
# run opens when the safest scores hold the errors, e.g. a confident model on imbalanced data).
# Chosen by measurement in five rounds, each checked on cases added before its candidates ran
# (benchmarks/selective_pac.py and selective_pac_start.py, issue 25: RESULTS.md).
_STARTS = ((0.7, 0.05),)
_CONFIDENT = 0.01
_COARSE_RANKS = 50
# Fallback weights w_k proportional to _FALLBACK_DECAY**k along the ascending grid (fixed in
# advance): more level on the safer thresholds, where the search starts, without betting it all
# on the first one (measured against equal weights and decays .95-.99 in the same benchmark).
_FALLBACK_DECAY = 0.98
# Default Hoeffding grid sizes of the paper (App. D.4): 101 points for MDR, 100 for SDR.
_DEFAULT_GRID_SIZE = {"mdr": 101, "sdr": 100}
# Rademacher sign matrices are processed in blocks of at most this many entries (memory cap).
_BLOCK_ENTRIES = 1 << 22


@dataclass(frozen=True, eq=False)
class ConcentrationResult(ResultMixin):
    """Result of :func:`concentration_threshold`.

    Attributes
    ----------
    threshold : float
        ``t_hat = max{t in grid : upper_bound(t) <= alpha}`` (for the p-value bounds: the
        largest rejected grid point); ``-inf`` when no grid point qualifies (then
        :meth:`decide` deploys nothing). On the SDR score grid (the default), the right end of
        the certified interval instead: just below the next calibration score, which deploys
        the same calibration points, or ``+inf`` when the largest score is certified.
    grid : ndarray of shape (g,)
        Sorted distinct candidate thresholds.
    upper_bound : ndarray of shape (g,)
        The high-probability upper bound on the risk (MDR or SDR*) at each grid point
        (``inf`` for SDR where the lower bound on the denominator is ``<= 0``).
    slack : float
        Amount added to the empirical mean (of ``L 1{S <= t}``, the MDR or the SDR numerator).
    denominator_slack : float or None
        Amount subtracted from the empirical ``P(S <= t)`` (SDR only; ``None`` for MDR).
    target, bound : str
        The options used.
    alpha, delta : float
        Tolerated risk and failure probability.
    """

    _frame_columns = ("grid", "upper_bound", "pvalues", "rejected")

    threshold: float
    grid: np.ndarray = field(repr=False)
    upper_bound: np.ndarray = field(repr=False)
    slack: float
    denominator_slack: float | None = None
    target: str = "mdr"
    bound: str = "hoeffding"
    alpha: float = float("nan")
    delta: float = float("nan")
    procedure: str = "union"
    pvalues: np.ndarray = field(default=None, repr=False)
    rejected: np.ndarray = field(default=None, repr=False)

    def decide(self, test_scores: ArrayLike) -> BoolArray:
        """Deploy decisions ``test_scores <= threshold``.

        Parameters
        ----------
        test_scores : array-like of shape (m,)
            Finite scores of the test points (smaller = safer).

        Returns
        -------
        ndarray of bool, shape (m,)
        """
        return check_scores(test_scores, "test_scores") <= self.threshold


def _check_option(value, name, allowed):
    if not isinstance(value, str) or value.lower() not in allowed:
        choices = ", ".join(repr(a) for a in allowed)
        raise ValueError(f"`{name}` must be one of {choices}; got {show(value)}.")
    return value.lower()


def _rank_weights(s, alpha, delta, bound, procedure):
    """Fallback weights of the score grid on the ranks ``1..n`` (the ``k``-th smallest score),
    fixed by the sorted calibration scores ``s`` (never the labels), ``alpha``, ``delta`` and
    ``bound``:
    ``(m, cum)``, ``cum[k - 1] = w_1 + ... + w_k`` (normalised) and ``m`` the first rank at
    which ``delta * cum`` could reject with no error, where the grid starts (see ``_STARTS``).
    Fixed-sequence testing is the fallback with all the weight on the first rank that can
    reject at ``delta``."""
    n = s.shape[0]
    zero = PVALUES_OF_SUMS[bound](np.zeros(n), np.arange(1, n + 1), alpha)
    w = np.zeros(n)
    if procedure == "fixed_sequence":
        can = zero <= delta
        if can.any():
            w[np.argmax(can)] = 1.0
    else:
        ranks = np.unique(np.round(np.arange(1, _COARSE_RANKS + 1) * n / _COARSE_RANKS))
        ranks = ranks[ranks >= 1].astype(np.int64)  # n < 25: round(n / 50) is rank 0
        w[ranks - 1] = (1.0 - sum(share for share, _ in _STARTS)) / ranks.size
        # a start sits on the last rank of a tie block: its threshold deploys the whole block
        ends = np.r_[np.flatnonzero(s[1:] != s[:-1]), n - 1]
        coarse = np.cumsum(w)[ends]
        # scores in [0, 1] read as probabilities of error: not below the model's confident rows
        confident = (int(np.searchsorted(s, _CONFIDENT, side="right"))
                     if s[0] >= 0.0 and s[-1] <= 1.0 else 0)
        for share, floor in _STARTS:
            lowest = max(round(floor * n), confident)
            can = (zero[ends] <= delta * (share + coarse)) & (ends + 1 >= lowest)
            w[ends[np.argmax(can)] if can.any() else n - 1] += share
    cum = np.cumsum(w)
    if not cum[-1]:
        return n + 1, cum
    cum /= cum[-1]
    start = zero <= delta * cum
    return (int(np.argmax(start)) + 1 if start.any() else n + 1), cum


def _score_grid(s, m):
    """SDR default grid: the distinct sorted calibration scores ``s`` from the ``m``-th smallest
    on. Below ``s_(m)`` fewer than ``m`` points are deployed, so no ``H_t`` can be rejected
    there; between consecutive scores the p-value does not change, so these points test every
    threshold from ``s_(m)`` up. Read off the scores, never the labels."""
    # none can: the largest score alone (nothing is certified, and the warning says why)
    return np.unique(s[m - 1:]) if m <= s.shape[0] else s[-1:]


def _score_grid_weights(n_points, cum):
    """Weights of the score grid's thresholds: the rank weights each one adds to the deployed
    set (several ranks when scores tie; the first threshold also those below it, all 0)."""
    if not cum.any():
        return np.ones(n_points.shape[0])
    return np.diff(np.r_[0.0, cum[np.asarray(n_points, dtype=np.int64) - 1]])


def _uses_score_grid(target, bound, procedure):
    return target == "sdr" and bound in _SCORE_GRID_BOUNDS and procedure in (
        "fixed_sequence", "fallback")


def _check_grid(grid, target, bound, S, procedure="union"):
    """Sorted distinct grid; the default of ``(target, bound, procedure)`` when ``grid`` is None
    (the SDR score grid aside: :func:`_score_grid`)."""
    if grid is None:
        if bound == "rademacher":
            return np.unique(S)
        if target == "mdr" and procedure == "fixed_sequence" and bound not in _JUDGE_BOUNDS:
            # Every t below the smallest score tests like the first point, and the p-value at t
            # changes only at a score: this is fixed-sequence testing of every real t in
            # increasing order, a data-independent order. MDR(t) nondecreasing makes the true
            # nulls {t > t*}, so an error rejects the fixed thresholds just above t*: valid for
            # any p-value valid at each fixed t (monotone p-values, e.g. not WSR's, not needed).
            u = np.unique(S)
            return np.r_[np.nextafter(u[0], -np.inf), u]
        lo, hi = float(S.min()), float(S.max())
        size = _DEFAULT_GRID_SIZE[target]
        if lo < 0.0 or hi > 1.0:
            raise ValueError(
                f"`cal_scores` lie outside [0, 1] (min {lo!r}, max {hi!r}), but the default "
                f"grid np.linspace(0, 1, {size}) of bound={bound!r}, procedure={procedure!r} "
                "assumes scores in [0, 1]. Pass `grid=`, a set of thresholds fixed before seeing "
                f"the calibration data (e.g. np.linspace(low, high, {size}) from known bounds of "
                "the score); a grid built from the calibration scores voids the guarantee."
            )
        return np.linspace(0.0, 1.0, size)
    g = check_scores(grid, "grid")
    check_nonempty(g, "grid", what="candidate threshold")
    return np.unique(g)


def _empirical_means_on_grid(L, S, grid):
    """``(1/n) sum_i L_i 1{S_i <= t}`` and ``(1/n) sum_i 1{S_i <= t}`` for every t in ``grid``."""
    n = S.shape[0]
    order = np.argsort(S, kind="stable")
    s_sorted = S[order]
    cum_l = np.r_[0.0, np.cumsum(L[order])]
    k = np.searchsorted(s_sorted, grid, side="right")  # #{i : S_i <= t}
    return cum_l[k] / n, k / n


def _rademacher(L, S, n_draws, random_state, *, with_indicator):
    """Monte Carlo empirical Rademacher complexities over all thresholds t.

    Returns ``(rad_l, rad_1)``: the averages over ``n_draws`` sign vectors of
    ``sup_t (1/n) sum_i sigma_i L_i 1{S_i <= t}`` and of ``sup_t (1/n) sum_i sigma_i 1{S_i <= t}``
    (``rad_1`` is None unless ``with_indicator``). The supremum over all real t is a maximum of
    prefix sums in score order, taken at the ends of tie groups, and 0 (t below every score).
    Signs: ``sigma_ki = -1`` if ``U_ki < 0.5`` else ``+1``, with
    ``U = check_random_state(random_state).random_sample((n_draws, n))`` in the order of the
    calibration points as given; blocks of rows are drawn one after another, which yields the
    same ``U`` as one draw of the full matrix.
    """
    rng = check_random_state(random_state)
    n = S.shape[0]
    order = np.argsort(S, kind="stable")
    s_sorted = S[order]
    ends = np.flatnonzero(np.r_[s_sorted[1:] != s_sorted[:-1], True])  # last index of tie groups
    l_sorted = L[order]
    block = max(1, _BLOCK_ENTRIES // n)
    sup_l = np.empty(n_draws)
    sup_1 = np.empty(n_draws) if with_indicator else None
    for start in range(0, n_draws, block):
        rows = min(block, n_draws - start)
        signs = np.where(rng.random_sample((rows, n)) < 0.5, -1.0, 1.0)[:, order]
        prefix = np.cumsum(signs * l_sorted, axis=1)[:, ends]
        sup_l[start : start + rows] = np.maximum(prefix.max(axis=1), 0.0)
        if with_indicator:
            prefix = np.cumsum(signs, axis=1)[:, ends]
            sup_1[start : start + rows] = np.maximum(prefix.max(axis=1), 0.0)
    rad_l = float(sup_l.mean() / n)
    rad_1 = float(sup_1.mean() / n) if with_indicator else None
    return rad_l, rad_1


def concentration_threshold(
    cal_risks: ArrayLike,
    cal_scores: ArrayLike,
    alpha: float,
    *,
    target: str = "mdr",
    bound: str = "auto",
    procedure: str = "auto",
    delta: float = 0.1,
    grid: ArrayLike | None = None,
    n_draws: int = 100,
    random_state: RandomStateLike = None,
    cal_judge_risks: ArrayLike | None = None,
    unlabeled_judge_risks: ArrayLike | None = None,
    unlabeled_scores: ArrayLike | None = None,
) -> ConcentrationResult:
    """PAC deployment threshold: concentration bounds (SCoRE App. D.4) or Learn-then-Test.

    Deploy a test point iff ``s(X) <= t_hat``, where ``t_hat`` is chosen so that
    ``risk(t_hat) <= alpha`` **with probability at least 1 - delta over the calibration data**
    (a PAC-type guarantee; it is not the in-expectation control of SCoRE,
    :func:`~sklearn_riskcontrol.selective.mdr_decisions`,
    :func:`~sklearn_riskcontrol.selective.sdr_evalues`). Two risks:

    * ``target="mdr"``: ``MDR(t) = E[L 1{s(X) <= t}]``;
    * ``target="sdr"``: ``SDR*(t) = E[L | s(X) <= t]``, the risk among deployed points.

    **Uniform concentration bounds** (the SCoRE paper's baselines), ``t_hat = max{t in grid :
    upper_bound(t) <= alpha}``. With ``Lbar(t) = (1/n) sum_i L_i 1{S_i <= t}`` and
    ``Pbar(t) = (1/n) sum_i 1{S_i <= t}``, MDR is bounded by ``Lbar(t) + eps`` and SDR by
    ``(Lbar(t) + eps) / (Pbar(t) - eps')`` (``inf`` where the denominator is ``<= 0``):

    * ``bound="hoeffding"``, ``procedure="union"``: union bound over a grid ``G`` fixed before
      seeing the data, ``eps = sqrt(log(2|G|/delta) / (2n))`` for MDR and
      ``eps = eps' = sqrt(log(4|G|/delta) / (2n))`` for SDR. Default ``G = np.linspace(0, 1,
      101)`` (MDR) or ``np.linspace(0, 1, 100)`` (SDR), as in the paper (scores in [0, 1]).
    * ``bound="rademacher"``: uniform over all thresholds, ``eps = 2 Rad + 3 sqrt(log(2/delta) /
      (2n))`` for MDR, ``eps = 2 Rad + c``, ``eps' = 2 Rad~ + c``, ``c = 3 sqrt(log(4/delta) /
      (2n))`` for SDR, with ``Rad``, ``Rad~`` the empirical Rademacher complexities of
      ``{t -> L_i 1{S_i <= t}}`` and ``{t -> 1{S_i <= t}}`` (``n_draws`` sign vectors).
      Default grid: the calibration scores.

    **Learn-then-Test** (Angelopoulos et al. 2021; :mod:`sklearn_riskcontrol.evalues.ltt`): a
    p-value for ``H_t: risk(t) > alpha`` at every grid point, computed on ``L_i 1{S_i <= t}``
    of all ``n`` points (MDR) or on the losses of the ``n_t`` points with ``S_i <= t`` (SDR;
    valid conditionally on ``n_t``), then a multiple-testing ``procedure`` controlling the
    family-wise error at ``delta``; ``t_hat`` is the largest rejected threshold:

    * ``bound="binomial"``: exact binomial test ``P(Binom(n, alpha) <= #errors)``, binary losses
      only; ``"hoeffding_bentkus"``: ``min(exp(-n h(min(rhat, alpha), alpha)),
      e P(Binom(n, alpha) <= ceil(n rhat)))``, any losses in [0, 1]; ``"wsr"``: testing by
      betting with the WSR bets, ``p = 1 / max wealth`` (losses taken in the order given, which
      must be exchangeable); ``"hoeffding"`` with a procedure other than ``"union"``:
      ``exp(-2 n (alpha - rhat)_+**2)``.
    * ``procedure="fixed_sequence"``: thresholds tested from the safest (smallest) up at level
      ``delta``, stopping at the first non-rejection; ``"fallback"``: Wiens' fallback procedure
      (threshold ``k`` of the ascending grid gets the level ``delta w_k``, ``w_k`` proportional
      to ``0.98**k``, plus the level of threshold ``k - 1`` if that one was rejected; a
      non-rejection does not end the search); ``"union"``: Bonferroni, level ``delta / |G|``.

    Defaults (``bound="auto"``, ``procedure="auto"``): ``"binomial"`` when every calibration
    loss is 0 or 1 (e.g. ``risk="zero_one"``), else ``"hoeffding_bentkus"``; for MDR,
    fixed-sequence testing over *all* thresholds (grid = the calibration scores; valid because
    ``MDR(t)`` is nondecreasing in ``t``, for any p-value valid at each fixed ``t``: between
    two scores the p-value does not change, so this tests every real threshold in increasing
    order, and an error rejects the fixed thresholds just above the largest one with
    ``MDR <= alpha``; no monotonicity of the p-values in ``t`` is needed, so ``"wsr"``
    qualifies); for SDR with ``"binomial"``, ``"hoeffding_bentkus"`` or ``"hoeffding"``
    (``procedure="fixed_sequence"`` or ``"fallback"``), the **score grid**: the distinct
    calibration scores from the ``m``-th smallest on, ``m`` the fewest losses whose p-value
    can reach the first threshold's level when all are 0 (below it no threshold can be
    rejected, and such a first hypothesis would end fixed-sequence testing at once), tested in
    increasing order. The fallback weights are fixed on the *ranks* of the scores, from the
    calibration scores (never the labels), ``alpha``, ``delta`` and ``bound``: 0.3 spread
    equally over the ranks ``round(k n / 50)``, ``k = 1..50`` (where a run of rejections opens
    when the safest scores hold the errors, e.g. a confident model on imbalanced data), and 0.7
    on the first threshold (the last rank of a tie block) whose deployed points could reject
    with no error at ``delta`` (0.7 + the coarse weight up to it), but not below rank ``n / 20``
    and, when every score lies in [0, 1] (read as a probability of error), not below the rows
    scored ``<= 0.01``: the predictions the model gives at least 99% confidence, MAPIE's first
    threshold. A run opened on a few of the safest rows breaks at the first error among them
    (label noise) and loses that share; opened on the confident rows as one block it does not.
    The grid opens at the first rank where the weight of the ranks up to it could reject with
    no error, and a threshold gets the weights of the ranks it adds (several when scores tie).
    The threshold reported is the largest that deploys the same calibration points as the last
    certified grid point: just below the next calibration score, or ``+inf`` when the largest
    is certified (every ``t`` in between has the same p-value and, given the scores, the same
    hypothesis). Chosen by measurement (``benchmarks/selective_pac.py`` and
    ``benchmarks/selective_pac_start.py``, issue 25; see ``benchmarks/RESULTS.md``) in five
    rounds, each checked on ten cases added before its candidates ran on them. On all 55
    models x data sets measured, the default deployed at least as much as the best of MAPIE
    1.6's Bonferroni, Holm, fixed-sequence and split fixed-sequence controllers within two
    standard errors of the paired difference (100 splits; e.g. a label-noise simulation .852
    against .850, which the start at ``n / 20`` alone lost at .846; an MLP on two moons at
    alpha .02 .389 against .384, where it lost at .293); the scope is those 55 cases, and
    MAPIE's fixed sequence, all of ``delta`` on its first threshold, stays ahead on single
    splits decided at the edge of what ``n`` and ``alpha`` allow. The confident-rows floor
    costs on overconfident models whose confident rows hold the errors (Gaussian naive Bayes
    on digits, alpha .05: .054 with the start at ``n / 20``, .007 with it; MAPIE's best 0).
    The start at ``n / 20`` costs where the score orders the risk smoothly and ``n`` is small:
    with ``L ~ Bernoulli(S)``, ``S ~ U(0, 1)``, 500 points and alpha .2
    (``selective_pac_ppi.py``) the start at ``n / 5`` of the second round deployed .286 and
    this one .23-.24 (50 and 8 splits; the confident-rows floor and the right end change it by
    .001): the run of rejections opened at rank 25 breaks earlier (median first non-rejection
    at rank 136, against 146 from rank 100), and after the break only the coarse weights are
    left.

    **When a grid read off the scores keeps the SDR guarantee.** The grid, its order and the
    weights depend on the calibration *scores* (and on ``n``, ``alpha``, ``delta``, ``bound``),
    never on the labels; the p-value at a *fixed* ``t`` is valid given ``n_t``, but a threshold
    read off the scores is not fixed. The guarantee ``P(SDR*(t_hat) > alpha) <= delta`` for
    the population ``SDR*(t) = E[L | s(X) <= t]`` still holds exactly, in finite samples, when
    **the score orders the risk**: ``r(s) = E[L | s(X) = s]`` is nondecreasing in ``s``. Then
    ``SDR*`` is nondecreasing, the false thresholds are those above a fixed ``t*``, and the
    losses of the points the tests use beyond ``t*`` have means at least ``alpha``:

    * fixed-sequence testing (any score distribution, ties included): an error means either
      that the fixed point ``t*`` was rejected, with the p-value of the ``n_{t*}`` points below
      it (valid given ``n_{t*}``), or that the first grid point, the ``m``-th smallest score,
      lies above ``t*`` and was rejected, which given that score has probability at most
      ``delta``; the two cases are disjoint;
    * the fallback (scores with a continuous distribution, so no ties): given ``n_{t*}`` and
      the scores above ``t*``, the first false grid point and every later one are tested on
      losses with means at least ``alpha``, at levels that sum to at most ``delta`` because the
      weights are fixed given the scores (the closed-testing argument of Wiens 2003).

    Reporting the right end of the certified interval changes neither argument: the interval
    ``[S_(k), S_(k+1))`` that holds ``t*`` is tested on the ``n_{t*}`` points below ``t*``, so
    an error still needs ``t*``'s own hypothesis, or a grid point above it, to be rejected.

    When the score does not order the risk (or for the fallback with tied scores), the
    family-wise error is exactly at most ``delta`` *given the scores* for the calibration
    points' own expected loss ``(1/n_t) sum_{S_i <= t} r(S_i)`` (the binomial p-value for
    ``delta < 1/2``, Hoeffding 1956, and Hoeffding-Bentkus, Bentkus 2004, stay valid for
    independent losses whose average mean exceeds ``alpha``), which differs from ``SDR*(t)``
    by the sampling of the scores below ``t``; in Monte Carlo with known risk functions (one
    nondecreasing with continuous and with 25 tied scores, one whose ``SDR*`` dips below
    ``alpha`` right where the grid starts, one whose safest tenth holds the errors, one at the
    boundary; each also with a third of the scores at most 0.01, where the start then sits)
    ``P(SDR*(t_hat) > alpha)`` stayed within ``delta`` plus 3 standard errors
    (``tests/selective/test_concentration_grid.py``).
    Where exactness matters more than robustness to early errors and the score may tie, pass
    ``procedure="fixed_sequence"``. WSR's and R-AutoEval+'s p-values bet on the losses in
    order, which needs identically distributed losses: they keep the fixed grid.

    ``bound="auto"`` relies on the loss being binary *by construction*: pass
    ``"hoeffding_bentkus"`` for a loss that may take values strictly between 0 and 1.

    **Prediction-powered Learn-then-Test** (``bound="rautoeval"``): an auto-evaluator (judge, e.g. a second model or an LLM) labels ``N >= n``
    unlabeled points drawn from the same distribution as the labeled ones; the p-value at ``t``
    is R-AutoEval+'s (:func:`~sklearn_riskcontrol.autoeval.rautoeval_test`) on the
    labeled losses below ``t``, the judge's losses on them and the judge's losses on the
    unlabeled points below ``t`` (SDR; valid conditionally on both counts), or on
    ``L 1{S <= t}`` and its judge analogues over all points (MDR); see
    :func:`~sklearn_riskcontrol.selective.rautoeval_pvalues`. A good judge certifies larger
    thresholds with the same labels; a useless one keeps the guarantee and costs little (the
    mixture over reliance factors falls back on the labels). Default procedures as above, with
    the fixed grid ``np.linspace(0, 1, 101)`` for MDR too; with ``"fixed_sequence"`` and
    ``"union"`` (every threshold tested at a level known in advance) each e-process stops at
    its first crossing (``early_stopping``; same decisions, less work).

    R-AutoEval+ pays for the judge's range (its observations lie in ``[-rho, 1 + rho]``): on
    0/1 losses at small ``alpha`` the exact binomial test on the labels alone certifies more
    (measured in the user guide). So the default with judge arrays (``"auto"``) is
    ``"rautoeval_or_binomial"`` (``"rautoeval_or_hoeffding_bentkus"`` for non-binary losses):
    the larger of two certified thresholds, the labels-only default (its grid and procedure, as
    above) at ``0.9 delta`` and R-AutoEval+ at ``0.1 delta`` on its fixed grid. Each procedure
    errs with probability at most its share, and the larger threshold errs only if the
    procedure that gave it did, so the union bound keeps ``delta`` (the split is fixed in
    advance; running both at ``delta`` and taking the better would not be valid). The result's
    ``grid``, ``pvalues`` and ``rejected`` are those of the procedure that gave the threshold.

    **What a grid passed by the user may depend on.** For ``"union"``, ``"fixed_sequence"``
    and ``"fallback"`` on SDR, a grid passed as ``grid=``, its order (ascending) and the
    weights should be fixed before seeing the calibration data, *labels and scores*: the SDR
    p-value at ``t`` is valid given ``n_t`` only (exactly, for the population risk); the
    default score grid above is the exception, with the guarantee stated there. They may
    depend on anything independent of the calibration data: known bounds of the score (the
    default ``[0, 1]`` grid of ``risk_score="proba"``), the model's training data, or unlabeled
    data not used for calibration. MDR with fixed-sequence testing is the exception (monotone
    risk: testing every threshold in increasing order is valid, so the grid is the calibration
    scores).

    Parameters
    ----------
    cal_risks : array-like of shape (n,)
        Calibration risks ``L_i`` in [0, 1].
    cal_scores : array-like of shape (n,)
        Finite calibration scores ``S_i = s(X_i)`` (smaller = safer).
    alpha : float in (0, 1)
        Tolerated risk (MDR or SDR).
    target : {"mdr", "sdr"}, default="mdr"
        Which risk to control.
    bound : {"auto", "binomial", "hoeffding_bentkus", "wsr", "hoeffding", "rademacher", \
"rautoeval", "rautoeval_or_binomial", "rautoeval_or_hoeffding_bentkus"}, default="auto"
        Concentration bound or p-value (see above). Before the Learn-then-Test options the
        default was ``"hoeffding"``; pass ``bound="hoeffding", procedure="union"`` for the
        paper's baseline. ``"auto"`` is ``"rautoeval_or_binomial"`` (binary losses) or
        ``"rautoeval_or_hoeffding_bentkus"`` when the judge arrays are given (only the three
        ``rautoeval`` bounds use them: an explicit other bound with them is an error).
    procedure : {"auto", "fallback", "fixed_sequence", "union"}, default="auto"
        Multiple-testing procedure over the grid. ``"auto"``: ``"union"`` for ``"hoeffding"``
        (the paper's baseline), none for ``"rademacher"`` (only ``"auto"`` / ``"union"`` are
        accepted there: its bound is uniform), otherwise as described above.
    delta : float in (0, 1), default=0.1
        Failure probability.
    grid : array-like of shape (g,), optional
        Candidate thresholds (sorted and de-duplicated; ``|G|`` is the number of distinct
        points). It must not depend on the calibration data (see above). Default: the
        calibration scores for ``"rademacher"``, for MDR with ``"fixed_sequence"`` and for SDR
        with the score grid (see above); otherwise ``np.linspace(0, 1, 101)`` (MDR) or
        ``np.linspace(0, 1, 100)`` (SDR), and then ``grid`` is required for scores outside
        [0, 1].
    n_draws : int, default=100
        Number of Rademacher sign vectors used to estimate the complexities (``"rademacher"``
        only; the paper uses 100).
    random_state : int, RandomState instance, numpy.random.Generator or None, default=None
        Seed of the Rademacher signs (``"rademacher"`` only); an int makes the result
        reproducible.
    cal_judge_risks : array-like of shape (n,), optional
        ``bound="rautoeval"``: the judge's losses on the labeled calibration points (the loss
        of the prediction against the judge's label), in [0, 1], in the order of ``cal_risks``.
    unlabeled_judge_risks : array-like of shape (N,), optional
        ``bound="rautoeval"``: the judge's losses on ``N >= n`` unlabeled points, in [0, 1].
        Labeled and unlabeled points must be exchangeable draws from one distribution, each in
        an exchangeable order (nothing is shuffled), and the score and the judge must not
        depend on them.
    unlabeled_scores : array-like of shape (N,), optional
        ``bound="rautoeval"``: finite scores of the unlabeled points.

    Returns
    -------
    ConcentrationResult
        With fields ``threshold``, ``grid``, ``upper_bound``, ``slack`` (``eps``),
        ``denominator_slack`` (``eps'``, SDR only), ``procedure``, ``pvalues`` and ``rejected``
        (Learn-then-Test only; ``upper_bound`` is then NaN) and the method
        ``decide(test_scores)``. When nothing is certified, ``threshold = -inf`` (nothing is
        deployed) and a :class:`~sklearn_riskcontrol.RiskControlWarning` says why.

    Notes
    -----
    The Rademacher complexity is the conditional expectation over the signs; like the paper, the
    Monte Carlo average over ``n_draws`` sign vectors is used in its place, and its own Monte
    Carlo error is not added to the slack. The same sign vectors are used for ``Rad`` and
    ``Rad~``. Draw ``k`` uses ``sigma_ki = -1`` if ``U_ki < 0.5`` and ``+1`` otherwise, where
    ``U = check_random_state(random_state).random_sample((n_draws, n))`` follows the order of the
    calibration points as given. The supremum over thresholds is a running maximum of prefix
    sums in score order (including ``t`` below every score, where the sum is 0), so the cost is
    O(n log n + n_draws n).

    The paper's lower bound on the SDR denominator in the Rademacher case is printed as
    ``Pbar(t) - 2 Rad~ + 3 sqrt(...)``; a lower bound needs ``- 3 sqrt(...)``, which is used here.

    For MDR with fixed-sequence testing the grid starts just below the smallest calibration
    score (every ``t`` below it tests like that point), then every distinct score.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_riskcontrol.selective import concentration_threshold
    >>> rng = np.random.default_rng(0)
    >>> scores = rng.uniform(size=2000)
    >>> risks = (rng.uniform(size=2000) < scores).astype(float)  # riskier when the score is high
    >>> # The paper's Hoeffding baseline: MDR(t_hat) <= 0.2 with probability >= 0.9
    >>> res = concentration_threshold(risks, scores, alpha=0.2, target="mdr", delta=0.1,
    ...                               bound="hoeffding", procedure="union")
    >>> float(res.threshold)
    0.56
    >>> res.decide([0.1, 0.5, 0.9])
    array([ True,  True, False])
    >>> # Rademacher: uniform over all t, grid = the scores, but a larger slack
    >>> res = concentration_threshold(risks, scores, alpha=0.2, bound="rademacher",
    ...                               random_state=0)
    >>> round(res.threshold, 3), round(res.slack, 3)
    (0.43, 0.107)
    >>> res = concentration_threshold(risks, scores, alpha=0.4, target="sdr",
    ...                               bound="hoeffding", procedure="union")
    >>> round(res.threshold, 3)
    0.566
    >>> # Default: exact binomial p-values (0/1 losses); MDR by fixed-sequence testing over all
    >>> # thresholds, SDR by the fallback procedure over the calibration scores. Same guarantee
    >>> # (risk at t_hat <= alpha with probability >= 0.9), larger thresholds:
    >>> res = concentration_threshold(risks, scores, alpha=0.2, target="mdr")
    >>> res.bound, res.procedure, round(res.threshold, 3)
    ('binomial', 'fixed_sequence', 0.61)
    >>> res = concentration_threshold(risks, scores, alpha=0.4, target="sdr")
    >>> res.procedure, round(res.threshold, 3)
    ('fallback', 0.772)
    >>> # Prediction-powered (R-AutoEval+ p-values): 300 labels, 3000 points labeled by a
    >>> # judge that agrees with the truth 95% of the time. Same guarantee, SDR at t_hat <= 0.4
    >>> # with probability >= 0.9 over the labeled and unlabeled data.
    >>> u_scores = rng.uniform(size=3000)
    >>> u_truth = (rng.uniform(size=3000) < u_scores).astype(float)
    >>> flip = lambda x: np.where(rng.uniform(size=x.size) < 0.95, x, 1 - x)
    >>> ppi = concentration_threshold(risks[:300], scores[:300], alpha=0.4, target="sdr",
    ...                               cal_judge_risks=flip(risks[:300]),
    ...                               unlabeled_judge_risks=flip(u_truth),
    ...                               unlabeled_scores=u_scores)
    >>> lab = concentration_threshold(risks[:300], scores[:300], alpha=0.4, target="sdr")
    >>> ppi.bound, round(ppi.threshold, 3), round(lab.threshold, 3)
    ('rautoeval_or_binomial', 0.636, 0.62)
    """
    alpha = check_level(alpha, "alpha")
    delta = check_level(delta, "delta")
    target = _check_option(target, "target", _TARGETS)
    bound = _check_option(bound, "bound", _BOUNDS)
    n_draws = check_number(n_draws, "n_draws", integer=True, minimum=1)
    L = check_risks(cal_risks, "cal_risks")
    S = check_scores(cal_scores, "cal_scores")
    check_same_length(cal_risks=L, cal_scores=S)
    check_nonempty(L, "cal_risks")
    judge = _check_judge(bound, L, cal_judge_risks, unlabeled_judge_risks, unlabeled_scores)
    if judge is not None:
        bound = "rautoeval_or_" + _resolve_bound("auto", L) if bound == "auto" else bound
        if bound == "rautoeval_or_binomial":
            _resolve_bound("binomial", L)  # binary losses only
    else:
        bound = _resolve_bound(bound, L)
    if bound.startswith("rautoeval_or_"):
        return _labels_or_judge(L, S, alpha, delta, target, bound, procedure, grid, judge)
    procedure = _resolve_procedure(procedure, bound, target)
    n = L.shape[0]
    rank_weights = None
    if grid is None and _uses_score_grid(target, bound, procedure):
        s_sorted = np.sort(S)
        start, rank_weights = _rank_weights(s_sorted, alpha, delta, bound, procedure)
        G = _score_grid(s_sorted, start)
    else:
        G = _check_grid(grid, target, bound, S, procedure)
    if (bound in PVALUE_BOUNDS or bound in _JUDGE_BOUNDS) and not (
            bound == "hoeffding" and procedure == "union"):
        return _ltt_threshold(L, S, G, alpha, delta, target, bound, procedure, judge,
                              rank_weights)
    l_bar, p_bar = _empirical_means_on_grid(L, S, G)

    if bound == "hoeffding":
        k = 2.0 if target == "mdr" else 4.0
        slack = float(np.sqrt(np.log(k * G.shape[0] / delta) / (2.0 * n)))
        den_slack = slack if target == "sdr" else None
    else:
        rad_l, rad_1 = _rademacher(
            L, S, n_draws, random_state, with_indicator=(target == "sdr")
        )
        k = 2.0 if target == "mdr" else 4.0
        conc = 3.0 * float(np.sqrt(np.log(k / delta) / (2.0 * n)))
        slack = 2.0 * rad_l + conc
        den_slack = 2.0 * rad_1 + conc if target == "sdr" else None

    if target == "mdr":
        upper = l_bar + slack
    else:
        lower = p_bar - den_slack
        with np.errstate(divide="ignore", invalid="ignore"):
            upper = np.where(lower > 0, (l_bar + slack) / lower, np.inf)

    ok = upper <= alpha
    if ok.any():
        threshold = float(G[np.flatnonzero(ok)[-1]])
    else:
        threshold = -np.inf
        warn(
            f"No threshold is certified: the {bound} upper bound on the {target.upper()} exceeds "
            f"alpha={alpha:g} at every grid point (smallest bound {float(upper.min()):.4g}, slack "
            f"{slack:.4g} with n={n}), so nothing is deployed. A larger calibration set, a "
            "larger alpha or delta, or SCoRE (exact, non-PAC control) may help."
        )
    G.flags.writeable = False
    upper.flags.writeable = False
    return ConcentrationResult(
        threshold=threshold,
        grid=G,
        upper_bound=upper,
        slack=slack,
        denominator_slack=den_slack,
        target=target,
        bound=bound,
        alpha=alpha,
        delta=delta,
        procedure=procedure,
    )


_JUDGE_ARGS = ("cal_judge_risks", "unlabeled_judge_risks", "unlabeled_scores")


def _check_judge(bound, L, cal_judge_risks, unlabeled_judge_risks, unlabeled_scores):
    """Validated judge arrays ``(J, U, T)`` for the ``rautoeval`` bounds (None without them)."""
    given = [a is not None for a in (cal_judge_risks, unlabeled_judge_risks, unlabeled_scores)]
    if not any(given):
        if bound in _JUDGE_BOUNDS:
            raise ValueError(
                f"bound={bound!r} needs the auto-evaluator's losses: pass `cal_judge_risks`, "
                "`unlabeled_judge_risks` and `unlabeled_scores` (or use a labels-only bound)."
            )
        return None
    if not all(given):
        missing = ", ".join(f"`{a}`" for a, g in zip(_JUDGE_ARGS, given) if not g)
        raise ValueError(f"The prediction-powered bound needs all three judge arrays; {missing} "
                         "missing.")
    if bound != "auto" and bound not in _JUDGE_BOUNDS:
        raise ValueError(
            f"`cal_judge_risks`, `unlabeled_judge_risks` and `unlabeled_scores` are used only by "
            f"the prediction-powered bounds {_JUDGE_BOUNDS} ('auto' picks one), but "
            f"bound={bound!r}; drop them for a labels-only bound, or pass bound='auto'."
        )
    J = check_risks(cal_judge_risks, "cal_judge_risks")
    check_same_length(cal_risks=L, cal_judge_risks=J)
    U = check_risks(unlabeled_judge_risks, "unlabeled_judge_risks")
    T = check_scores(unlabeled_scores, "unlabeled_scores")
    check_same_length(unlabeled_judge_risks=U, unlabeled_scores=T)
    if U.shape[0] < L.shape[0]:
        raise ValueError(
            f"`unlabeled_judge_risks` has {U.shape[0]} entries, fewer than the {L.shape[0]} "
            "labeled calibration points: R-AutoEval+ averages the judge's losses in blocks of "
            "r = floor(N / n) >= 1 unlabeled points per labeled one. Pass more unlabeled "
            "points, or drop the judge arrays for a labels-only bound."
        )
    return J, U, T


def _resolve_bound(bound, L):
    binary = bool(np.all((L == 0.0) | (L == 1.0)))
    if bound == "auto":
        return "binomial" if binary else "hoeffding_bentkus"
    if bound == "binomial" and not binary:
        bad = int(np.flatnonzero((L != 0.0) & (L != 1.0))[0])
        raise ValueError(
            f"bound='binomial' needs binary losses (0 or 1, e.g. risk='zero_one'), but "
            f"cal_risks[{bad}] = {float(L[bad])!r}; use bound='hoeffding_bentkus' (or 'wsr') "
            "for losses anywhere in [0, 1]."
        )
    return bound


def _resolve_procedure(procedure, bound, target):
    procedure = _check_option(procedure, "procedure", _PROCEDURES)
    if bound == "rademacher":
        if procedure not in ("auto", "union"):
            raise ValueError(
                f"`procedure`={procedure!r} does not apply to bound='rademacher', whose bound "
                "holds for all thresholds at once; use procedure='auto' (or 'union'), or a "
                "p-value bound ('hoeffding_bentkus', 'wsr', 'hoeffding') for sequential testing."
            )
        return "union"
    if procedure == "auto":
        return "union" if bound == "hoeffding" else _DEFAULT_PROCEDURE[target]
    return procedure


@contextmanager
def nothing_certified_said_later():
    """Pass on the warnings of the :func:`concentration_threshold` calls inside, except "No
    threshold is certified": the caller says that once for all of them."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield
    for w in caught:
        if not str(w.message).startswith("No threshold is certified"):
            warn(str(w.message), category=w.category)


def _labels_or_judge(L, S, alpha, delta, target, bound, procedure, grid, judge):
    """``"rautoeval_or_*"``: the larger of two certified thresholds, the labels-only test at
    ``0.9 delta`` (its own default grid: the calibration scores) and R-AutoEval+ at
    ``0.1 delta`` (the fixed grid). Each errs with probability at most its share, and the
    larger threshold errs only if the procedure that gave it did: a union bound."""
    labels_bound = bound[len("rautoeval_or_"):]
    J, U, T = judge
    results = []
    with nothing_certified_said_later():
        for share, part in ((_LABELS_SHARE, {"bound": labels_bound}),
                            (1.0 - _LABELS_SHARE, {"bound": "rautoeval", "cal_judge_risks": J,
                                                   "unlabeled_judge_risks": U,
                                                   "unlabeled_scores": T})):
            results.append(concentration_threshold(L, S, alpha, target=target,
                                                   procedure=procedure, delta=delta * share,
                                                   grid=grid, **part))
    labels, judged = results
    best = judged if judged.threshold > labels.threshold else labels
    if best.threshold == -np.inf:
        warn(
            f"No threshold is certified: neither the labels-only {labels_bound} test at "
            f"{_LABELS_SHARE:g} delta nor R-AutoEval+ at {1 - _LABELS_SHARE:g} delta rejects "
            f"H_t: {target.upper()}(t) > alpha={alpha:g} at any grid point (delta={delta:g}, "
            f"{L.shape[0]} labeled calibration points), so nothing is deployed. More labels, a "
            "larger alpha or delta, or SCoRE (exact, non-PAC control) may help."
        )
    return replace(best, bound=bound, delta=delta)


def _ltt_threshold(L, S, G, alpha, delta, target, bound, procedure, judge=None,
                   rank_weights=None):
    """Learn-then-Test: p-values on the grid (ascending = safest first), then the procedure;
    ``rank_weights``: the cumulative rank weights of the score grid (:func:`_rank_weights`)."""
    J, U, T = (None, None, None) if judge is None else judge
    level = delta / G.shape[0] if procedure == "union" else delta
    pvals, n_points = threshold_pvalues(
        L, S, G, alpha, target=target, bound=bound, delta=level,
        cal_judge_risks=J, unlabeled_judge_risks=U, unlabeled_scores=T,
        # every threshold's level is known in advance (delta or delta / |G|): stopping each
        # e-process at its crossing leaves the decisions unchanged
        early_stopping=procedure != "fallback",
    )
    weights = None
    if procedure == "fallback":
        weights = (_FALLBACK_DECAY ** np.arange(G.shape[0]) if rank_weights is None
                   else _score_grid_weights(n_points, rank_weights))
    rejected = select(pvals, delta, procedure, weights)
    if rejected.any():
        last = int(np.flatnonzero(rejected)[-1])
        threshold = float(G[last])
        if rank_weights is not None:
            # On the score grid every t in [G[last], next score) deploys the same calibration
            # points, so it has the same p-value and hypothesis given the scores: report the
            # largest, which deploys the most test points (+inf after the largest score).
            threshold = (float(np.nextafter(G[last + 1], -np.inf)) if last + 1 < G.shape[0]
                         else np.inf)
    else:
        threshold = -np.inf
        best = int(np.argmin(pvals))
        warn(
            f"No threshold is certified: with bound={bound!r} and procedure={procedure!r} no "
            f"grid point rejects H_t: {target.upper()}(t) > alpha={alpha:g} at delta={delta:g} "
            f"(smallest p-value {float(pvals[best]):.4g}, from {int(n_points[best])} of "
            f"{L.shape[0]} calibration points), so nothing is deployed. A larger calibration "
            "set, a larger alpha or delta, or SCoRE (exact, non-PAC control) may help."
        )
    for arr in (G, pvals, rejected):
        arr.flags.writeable = False
    upper = np.full(G.shape[0], np.nan)
    upper.flags.writeable = False
    return ConcentrationResult(
        threshold=threshold, grid=G, upper_bound=upper, slack=float("nan"),
        denominator_slack=None, target=target, bound=bound, alpha=alpha, delta=delta,
        procedure=procedure, pvalues=pvals, rejected=rejected,
    )
