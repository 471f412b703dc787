"""SCoRE: risk-adjusted conformal e-values for selective deployment (Bai & Jin).

Array layer of SCoRE-MDR and SCoRE-SDR. Inputs are calibration risks ``L_i`` in [0, 1],
calibration scores ``S_i`` and test scores ``T_j`` (smaller = safer), optionally covariate-shift
density ratios ``w_i`` (calibration) and ``v_j`` (test).

The paper defines each e-value as an infimum over the unknown test risk ``l in [0, 1]``
(eqs. 4.1, 5.1, 6.1, 6.2) and computes the SDR ones in O(m (n + m)) (Algorithms 3 and 4). Here the
infimum is solved in closed form (derivation in ``doc/user_guide/selective.rst``, "Closed forms
implemented", and ``specs/score.md``):

* MDR (one test point; thresholds over the calibration scores and ``T_j``):
  ``E_j = 0`` unless ``v_j + Aw(T_j) <= gamma (W + v_j)``; otherwise
  ``E_j = (W + v_j) / min(v_j + A*_j, gamma (W + v_j))`` with ``A*_j`` the largest value of
  ``Aw(t) = sum_i w_i L_i 1{S_i <= t}`` not above ``gamma (W + v_j)``.
* SDR (all test points; ``N(t) = #{k : T_k <= t}``, ``g_j(t) = gamma (W + v_j) N(t) / m - Aw(t)``):
  with ``t1_j = max{t : g_j(t) >= v_j}`` and ``t0_j = max{t : g_j(t) >= 0}``,
  ``E_j = 0`` if ``T_j > t1_j``, else ``(W + v_j) / min(v_j + Aw(t0_j), gamma (W + v_j) N(t0_j) / m)``.

Unweighted = all weights one (``W = n``, ``v_j = 1``). Both cost one sort plus prefix sums and
binary searches: O((n + m) log(n + m)), weighted or not. Ties between scores are handled exactly
(every ``<=`` counts all tied values).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from .._typing import BoolArray, FloatArray
from .._validation import (
    as_float_array,
    check_level,
    check_nonempty,
    check_number,
    check_risks,
    check_same_length,
    check_scores,
    check_weights,
    show,
)
from ..evalues.testing import TIE_RTOL, at_most

__all__ = [
    "mdr_evalues",
    "mdr_decisions",
    "sdr_evalues",
    "mdr_label_evalues",
    "mdr_label_decisions",
]


def _validate(cal_risks, cal_scores, test_scores, cal_weights, test_weights, fill=True):
    """Checked arrays; without weights, ``w`` and ``v`` are ones (``None`` if not ``fill``)."""
    L = check_risks(cal_risks, "cal_risks")
    S = check_scores(cal_scores, "cal_scores")
    T = check_scores(test_scores, "test_scores")
    check_same_length(cal_risks=L, cal_scores=S)
    check_nonempty(L, "cal_risks")
    if (cal_weights is None) != (test_weights is None):
        raise ValueError(
            "Give both `cal_weights` and `test_weights` (covariate-shift density ratios of the "
            "calibration and of the test points), or neither."
        )
    w = check_weights(cal_weights, "cal_weights", len(L))
    v = check_weights(test_weights, "test_weights", len(T))
    if w is None and fill:
        w = np.ones(len(L))
        v = np.ones(len(T))
    return L, S, T, w, v


def _unit_terms(L, w):
    """``w L`` (``L`` if unweighted) and the scores' mask of terms equal to 1 if every term is 0
    or 1 (e.g. unweighted 0/1 losses), else ``None``."""
    wl = L if w is None else w * L
    ones = wl == 1.0
    if np.count_nonzero(ones) + np.count_nonzero(wl == 0.0) == wl.size:
        return wl, ones
    return wl, None


def _calibration_steps(L, S, w):
    """Sorted distinct calibration scores and ``Aw`` at each (prefix sums over tie groups)."""
    return _steps(S, *_unit_terms(L, w))


def _steps(S, wl, ones):
    """:func:`_calibration_steps` from the terms ``wl`` and their 0/1 mask (see
    :func:`_unit_terms`)."""
    if ones is not None:
        # Aw counts the points with a term of 1, so sorts of all scores and of those points'
        # scores replace the argsort and its gathers (50 -> 31 ms at n = 10**6); integer
        # counts, hence the prefix sums' values exactly.
        s_sorted = np.sort(S)
        u = s_sorted[np.r_[s_sorted[1:] != s_sorted[:-1], True]]
        hits = np.searchsorted(u, np.sort(S[ones]))  # sorted keys: a forward scan
        return u, np.cumsum(np.bincount(hits, minlength=u.size), dtype=float)
    order = np.argsort(S)  # ties are summed over whole groups: stability is not needed
    s_sorted = S[order]
    cum = np.cumsum(wl[order])
    last = np.r_[s_sorted[1:] != s_sorted[:-1], True]
    return s_sorted[last], cum[last]


class _CalibrationSum:
    """``Aw(t) = sum_i w_i L_i 1{S_i <= t}`` of the calibration points, for queries at a few
    thousand test scores. With 0/1 terms it counts the sorted scores of the points with a term
    of 1 (no sort of all n scores, no prefix sums over them); otherwise it looks up the prefix
    sums of :func:`_calibration_steps`. Both give the same values."""

    def __init__(self, L, S, w):
        self.S = S
        wl, ones = _unit_terms(L, w)
        if ones is not None:
            self.ones = np.sort(S[ones])
        else:
            self.ones = None
            self.u, a = _steps(S, wl, None)
            self.a_ext = np.r_[0.0, a]

    def at(self, x):
        """``Aw`` at the scores ``x``."""
        if self.ones is not None:
            return np.searchsorted(self.ones, x, side="right").astype(float)
        return self.a_ext[np.searchsorted(self.u, x, side="right")]

    def between(self, lo, hi):
        """Sorted distinct calibration scores in the open interval ``(lo, hi)``."""
        if self.ones is not None:
            return np.unique(self.S[(self.S > lo) & (self.S < hi)])
        return self.u[np.searchsorted(self.u, lo, side="right"):
                      np.searchsorted(self.u, hi, side="left")]


def _mdr_parts(L, S, T, w, v, gamma):
    """Per test point: the deploy condition at ``gamma`` and the plug-in ``A*_j``."""
    u, a = _calibration_steps(L, S, w)
    total = w.sum() + v
    budget = gamma * total
    # Binary searches of sorted queries are cache-friendly (~10x faster for 10^6 random queries).
    t_order = np.argsort(T)
    k = np.empty(T.shape[0], dtype=np.intp)
    k[t_order] = np.searchsorted(u, T[t_order], side="right")
    a_at_t = np.where(k > 0, a[np.maximum(k - 1, 0)], 0.0)
    passes = at_most(v + a_at_t, budget)
    # A*_j: largest attained Aw(t) <= budget; Aw is non-decreasing, 0 is attained below all S_i.
    levels = np.r_[0.0, a]
    idx = np.searchsorted(levels, budget * (1 + TIE_RTOL), side="right") - 1
    a_star = levels[np.maximum(idx, 0)]
    return passes, a_star, total, budget


def _positive_attainable(attainable, L):
    """Sorted distinct positive values of ``attainable`` (paper Remark 4.1), or None.

    ``"binary"`` means {0, 1}. Every calibration risk must be one of the values (a risk outside
    the set would void the guarantee); 0 is dropped: a test point whose risk is 0 adds nothing
    to ``E[L E]``, so the infimum needs only the positive values.
    """
    if attainable is None:
        return None
    if isinstance(attainable, str):
        if attainable != "binary":
            raise ValueError(
                "`attainable` must be None, 'binary' or an array of the risk values the loss can "
                f"take (in [0, 1]); got {show(attainable)}."
            )
        values = np.array([0.0, 1.0])
    else:
        values = check_risks(attainable, "attainable")
        if values.size == 0:
            raise ValueError("`attainable` is empty: give the risk values the loss can take.")
    values = np.unique(values)
    pos = np.searchsorted(values, L)
    below = values[np.maximum(pos - 1, 0)]
    above = values[np.minimum(pos, values.size - 1)]
    bad = np.minimum(np.abs(L - below), np.abs(L - above)) > TIE_RTOL
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"`cal_risks` entry {i} is {float(L[i])!r}, which is not among the `attainable` values "
            f"{show(values.tolist()) if values.size <= 8 else f'({values.size} values)'}: the "
            "attainable set must hold every value the risk can take (for binary 0/1 risks use "
            "attainable='binary'), or pass attainable=None."
        )
    positive = values[values > 0]
    if positive.size == 0:
        raise ValueError(
            "`attainable` has no positive value: the risk would always be 0, so every point "
            "could be deployed without SCoRE. Give the values the risk can take, 1 included if "
            "it can be 1."
        )
    return positive


def _mdr_candidates(L, S, w, v, x, l, gamma):
    """Terms of eq. 4.3 (eq. 4.1 at fixed ``l``) for candidate pairs (test score ``x``, test risk
    ``l > 0``), arrays of shape (m, K).

    With ``B = gamma (W + v)``, the term is 0 unless ``v l + Aw(x) <= B`` (``passes``), else
    ``(W + v) / D`` with ``D = v l + A*``, ``A*`` the largest value of ``Aw`` not above
    ``B - v l`` (the threshold ``t(l)`` is the last score where ``Aw <= B - v l``). Returns
    ``passes``, ``D``, ``W + v``.
    """
    u, a = _calibration_steps(L, S, w)
    total = w.sum() + v
    budget = (gamma * total)[:, None]
    vl = v[:, None] * l
    k = np.searchsorted(u, x, side="right")
    a_at_x = np.where(k > 0, a[np.maximum(k - 1, 0)], 0.0)
    passes = at_most(vl + a_at_x, budget)
    levels = np.r_[0.0, a]
    idx = np.searchsorted(levels, budget - vl + TIE_RTOL * budget, side="right") - 1
    return passes, vl + levels[np.maximum(idx, 0)], total


def _min_over_candidates(passes, denom, total, positive):
    """``min_k`` of the candidate terms over the candidates with positive risk: 0 if one of them
    fails, else ``(W + v) / max_k D`` (``inf`` without any positive candidate). Returns the
    pass mask and ``max_k D`` as well (for decisions)."""
    passes_all = np.all(passes | ~positive, axis=1)
    d_max = np.max(np.where(positive, denom, 0.0), axis=1, initial=0.0)
    with np.errstate(divide="ignore"):
        e = np.where(passes_all, total / d_max, 0.0)
    return e, passes_all, d_max


def _mdr_attainable(L, S, T, w, v, gamma, values):
    """Eq. 4.1 with the infimum over the positive attainable ``values`` only (Remark 4.1)."""
    x = np.broadcast_to(T[:, None], (T.shape[0], values.size))
    l = np.broadcast_to(values[None, :], x.shape)
    passes, denom, total = _mdr_candidates(L, S, w, v, x, l, gamma)
    return _min_over_candidates(passes, denom, total, np.ones(x.shape, dtype=bool))


def _mdr_decide(passes, d_max, total, alpha, gamma):
    """``E_j >= 1/alpha`` from the pass mask and ``max_k D`` of :func:`_min_over_candidates`.

    Non-zero e-values are ``(W + v)/max_k D >= 1/gamma`` (every ``D <= gamma (W + v)``), so for
    ``gamma <= alpha`` passing decides; otherwise also ``max_k D <= alpha (W + v)``.
    """
    if gamma <= alpha:
        return passes
    return passes & at_most(d_max, alpha * total)


def mdr_evalues(
    cal_risks: ArrayLike,
    cal_scores: ArrayLike,
    test_scores: ArrayLike,
    gamma: float,
    cal_weights: ArrayLike | None = None,
    test_weights: ArrayLike | None = None,
    attainable: str | ArrayLike | None = None,
) -> FloatArray:
    """Exact SCoRE-MDR e-values (paper eq. 4.1; eq. 6.1 under covariate shift).

    Each test point is treated on its own: ``E_j`` uses the calibration data and ``T_j`` only.
    ``E[L_{n+j} E_j] <= 1`` under exchangeability (weighted exchangeability with weights).

    Parameters
    ----------
    cal_risks : array-like of shape (n,)
        Calibration risks ``L_i`` in [0, 1].
    cal_scores : array-like of shape (n,)
        Calibration scores ``S_i`` (smaller = safer).
    test_scores : array-like of shape (m,)
        Test scores ``T_j``.
    gamma : float in (0, 1)
        Level of the plug-in threshold (use ``gamma = alpha``).
    cal_weights, test_weights : array-like, optional
        Covariate-shift density ratios ``w(x) = dQ/dP(x) > 0`` of calibration and test points.
    attainable : None, "binary" or array-like of floats in [0, 1], default=None
        Risk values the loss can take (paper Remark 4.1): the infimum over the unknown test risk
        ``l`` runs over the positive ones only instead of over ``[0, 1]`` (a point whose risk is
        0 adds nothing to ``E[L E]``), which gives larger e-values. ``"binary"`` = {0, 1}: the
        e-value is eq. 4.1 at ``l = 1``. Every calibration risk must be one of the values, and
        the test risks must be too (not checkable: a wrong set voids the guarantee). ``None``:
        the paper's ``[0, 1]``. For attainable values that differ from point to point (e.g. per
        candidate label), see :func:`mdr_label_evalues`.

    Returns
    -------
    ndarray of shape (m,)
        Non-negative e-values; all non-zero ones are at least ``1 / gamma``.

    Examples
    --------
    >>> from sklearn_riskcontrol.selective import mdr_evalues
    >>> mdr_evalues([0.0, 0.5, 1.0, 0.2], [0.1, 0.2, 0.9, 0.4], [0.05, 0.95], gamma=0.4)
    array([2.5, 0. ])

    With a binary risk, the infimum over ``l`` in {0, 1} only needs ``l = 1`` (Remark 4.1):

    >>> L, S, T = [0.0, 1.0, 0.0, 0.0, 1.0], [0.1, 0.2, 0.3, 0.4, 0.9], [0.05, 0.35]
    >>> mdr_evalues(L, S, T, gamma=0.4)
    array([2.5, 2.5])
    >>> mdr_evalues(L, S, T, gamma=0.4, attainable="binary")
    array([3., 3.])
    """
    gamma = check_level(gamma, "gamma")
    L, S, T, w, v = _validate(cal_risks, cal_scores, test_scores, cal_weights, test_weights)
    values = _positive_attainable(attainable, L)
    if values is not None:
        return _mdr_attainable(L, S, T, w, v, gamma, values)[0]
    passes, a_star, total, budget = _mdr_parts(L, S, T, w, v, gamma)
    denom = np.minimum(v + a_star, budget)
    return np.where(passes, total / denom, 0.0)


def mdr_decisions(
    cal_risks: ArrayLike,
    cal_scores: ArrayLike,
    test_scores: ArrayLike,
    alpha: float,
    gamma: float | None = None,
    cal_weights: ArrayLike | None = None,
    test_weights: ArrayLike | None = None,
    attainable: str | ArrayLike | None = None,
) -> BoolArray:
    """SCoRE-MDR deploy decisions ``1{E_j >= 1/alpha}``, computed exactly.

    Paper Prop. 4.4 (unweighted) and Prop. A.1 (covariate shift): for ``gamma <= alpha``, deploy
    test point j iff ``(v_j + sum_i w_i L_i 1{S_i <= T_j}) / (v_j + sum_i w_i) <= gamma``. For
    ``gamma > alpha`` the extra condition of those propositions is applied as well (it almost
    never holds; ``gamma = alpha``, the default, is recommended). Controls
    ``MDR = E[L_{n+j} 1{deploy j}] <= alpha`` for each test point.

    Parameters
    ----------
    cal_risks, cal_scores, test_scores, cal_weights, test_weights
        See :func:`mdr_evalues`.
    alpha : float in (0, 1)
        Target marginal deployment risk.
    gamma : float in (0, 1), optional
        Plug-in level; defaults to ``alpha``.
    attainable : None, "binary" or array-like, default=None
        See :func:`mdr_evalues`. With ``gamma <= alpha`` it changes the decisions only when the
        largest attainable value ``l_max`` is below 1: deploy iff
        ``(v_j l_max + sum_i w_i L_i 1{S_i <= T_j}) / (v_j + sum_i w_i) <= gamma``
        (``"binary"`` gives the default decisions).

    Returns
    -------
    ndarray of bool, shape (m,)

    Examples
    --------
    >>> from sklearn_riskcontrol.selective import mdr_decisions
    >>> mdr_decisions([0.0, 0.5, 1.0, 0.2], [0.1, 0.2, 0.9, 0.4], [0.05, 0.3, 0.95], alpha=0.4)
    array([ True,  True, False])

    A loss that never exceeds 0.5 (e.g. a capped cost): telling SCoRE so deploys more.

    >>> L, S, T = [0.0, 0.5, 0.0, 0.5], [0.1, 0.2, 0.3, 0.4], [0.15, 0.25, 0.45]
    >>> mdr_decisions(L, S, T, alpha=0.25)
    array([ True, False, False])
    >>> mdr_decisions(L, S, T, alpha=0.25, attainable=[0.0, 0.5])
    array([ True,  True, False])
    """
    alpha = check_level(alpha, "alpha")
    gamma = alpha if gamma is None else check_level(gamma, "gamma")
    L, S, T, w, v = _validate(cal_risks, cal_scores, test_scores, cal_weights, test_weights)
    values = _positive_attainable(attainable, L)
    if values is not None:
        _, passes, d_max = _mdr_attainable(L, S, T, w, v, gamma, values)
        return _mdr_decide(passes, d_max, w.sum() + v, alpha, gamma)
    passes, a_star, total, _ = _mdr_parts(L, S, T, w, v, gamma)
    if gamma <= alpha:
        return passes
    # E_j >= 1/alpha  <=>  min(v + A*, gamma (W + v)) <= alpha (W + v)  <=>  v + A* <= alpha (W + v).
    return passes & at_most(v + a_star, alpha * total)


def _label_inputs(cal_risks, cal_scores, test_risks, test_scores, cal_weights, test_weights):
    """Checked arrays of the label-dependent e-values: ``R`` and ``X`` of shape (m, K)."""
    R = as_float_array(test_risks, "test_risks", "a 2-d array of risks (test points x labels)")
    if R.ndim == 1:
        R = R[:, None]
    if R.ndim != 2:
        raise ValueError(
            "`test_risks` must be 2-d, one row per test point and one column per candidate "
            f"label; got an array of shape {R.shape}."
        )
    check_risks(R.ravel(), "test_risks")
    X = as_float_array(test_scores, "test_scores", "an array of scores")
    if X.ndim == 1 or (X.ndim == 2 and X.shape[1] == 1):
        X = np.broadcast_to(X.reshape(-1, 1), (X.shape[0], R.shape[1]))
    if X.ndim != 2 or X.shape != R.shape:
        raise ValueError(
            f"`test_scores` must have shape (m,) or the shape of `test_risks` {R.shape} (one "
            f"score per test point and candidate label); got {X.shape}."
        )
    check_scores(X.ravel(), "test_scores")
    L, S, _, w, v = _validate(cal_risks, cal_scores, X[:, 0], cal_weights, test_weights)
    return L, S, R, X, w, v


def mdr_label_evalues(
    cal_risks: ArrayLike,
    cal_scores: ArrayLike,
    test_risks: ArrayLike,
    test_scores: ArrayLike,
    gamma: float,
    cal_weights: ArrayLike | None = None,
    test_weights: ArrayLike | None = None,
) -> FloatArray:
    """Label-dependent SCoRE-MDR e-values (paper Remark 4.3, eq. 4.3), for a finite label set.

    For each test point ``j`` and candidate label ``y`` (column ``k``) the user gives the risk
    ``L(X_{n+j}, y)`` the point would have if its label were ``y`` and a label-dependent score
    ``V(X_{n+j}, y)`` (smaller = safer); calibration points give ``L_i`` and
    ``V_i = V(X_i, Y_i)`` at their true labels. The e-value is the infimum over the candidate
    labels of eq. 4.1's term at ``l = L(X_{n+j}, y)`` and score ``V(X_{n+j}, y)``:

    ``E_j = min_y (W + v) 1{V_jy <= t(y)} / (Aw(t(y)) + v L_jy)``, ``t(y)`` the largest
    threshold among ``{V_i} + {V_jy}`` with ``(Aw(t) + v L_jy 1{V_jy <= t}) / (W + v) <= gamma``,
    ``Aw(t) = sum_i w_i L_i 1{V_i <= t}``.

    Labels with ``L_jy = 0`` are left out of the infimum (Remark 4.1: a point whose risk is 0
    adds nothing to ``E[L E]``); with every candidate risk 0, ``E_j = inf``. The true label must
    be among the candidates. ``E[L_{n+j} E_j] <= 1`` under exchangeability (weighted with
    weights). A label-independent score (``test_scores`` of shape (m,)) gives eq. 4.1 with the
    infimum over each point's attainable risks. Cost: O((n + m K) log n).

    Parameters
    ----------
    cal_risks : array-like of shape (n,)
        Calibration risks ``L_i`` in [0, 1].
    cal_scores : array-like of shape (n,)
        Calibration scores at the true labels, ``V(X_i, Y_i)``.
    test_risks : array-like of shape (m, K)
        ``L(X_{n+j}, y_k)`` in [0, 1] for every candidate label ``y_k``.
    test_scores : array-like of shape (m, K) or (m,)
        ``V(X_{n+j}, y_k)``; shape (m,) for a score that does not depend on the label.
    gamma : float in (0, 1)
        Level of the plug-in threshold (use ``gamma = alpha``).
    cal_weights, test_weights : array-like, optional
        Covariate-shift density ratios of calibration and test points.

    Returns
    -------
    ndarray of shape (m,)
        Non-negative e-values (``inf`` where every candidate risk is 0); the non-zero ones are
        at least ``1 / gamma``.

    See Also
    --------
    mdr_label_decisions : the deploy decisions ``E_j >= 1/alpha``.

    Examples
    --------
    Three classes; the model predicts class 0 for both test points (0/1 risk: candidate labels
    1 and 2 have risk 1). The score of a candidate label is its predicted probability: the
    first point puts little probability on the labels that would make it wrong.

    >>> from sklearn_riskcontrol.selective import mdr_label_evalues
    >>> cal_risks = [0, 1, 0, 1, 0, 0, 0, 0, 1, 0]
    >>> cal_scores = [0.9, 0.3, 0.8, 0.5, 0.7, 0.9, 0.6, 0.8, 0.05, 0.9]  # proba of true label
    >>> test_risks = [[0, 1, 1], [0, 1, 1]]
    >>> test_scores = [[0.9, 0.06, 0.04], [0.3, 0.6, 0.1]]
    >>> mdr_label_evalues(cal_risks, cal_scores, test_risks, test_scores, gamma=0.3)
    array([3.66666667, 0.        ])
    """
    gamma = check_level(gamma, "gamma")
    L, S, R, X, w, v = _label_inputs(cal_risks, cal_scores, test_risks, test_scores, cal_weights,
                                     test_weights)
    passes, denom, total = _mdr_candidates(L, S, w, v, X, R, gamma)
    return _min_over_candidates(passes, denom, total, R > 0)[0]


def mdr_label_decisions(
    cal_risks: ArrayLike,
    cal_scores: ArrayLike,
    test_risks: ArrayLike,
    test_scores: ArrayLike,
    alpha: float,
    gamma: float | None = None,
    cal_weights: ArrayLike | None = None,
    test_weights: ArrayLike | None = None,
) -> BoolArray:
    """Deploy decisions ``1{E_j >= 1/alpha}`` of the label-dependent e-values (paper eq. 4.3).

    Controls ``MDR = E[L_{n+j} 1{deploy j}] <= alpha`` under exchangeability. For
    ``gamma <= alpha`` (``gamma`` defaults to ``alpha``): deploy ``j`` iff every candidate label
    ``y`` with ``L_jy > 0`` has ``(v_j L_jy + sum_i w_i L_i 1{V_i <= V_jy}) / (v_j + sum_i w_i)
    <= gamma`` -- the label-dependent form of paper Prop. 4.4.

    Parameters
    ----------
    cal_risks, cal_scores, test_risks, test_scores, cal_weights, test_weights
        See :func:`mdr_label_evalues`.
    alpha : float in (0, 1)
        Target marginal deployment risk.
    gamma : float in (0, 1), optional
        Plug-in level; defaults to ``alpha``.

    Returns
    -------
    ndarray of bool, shape (m,)

    Examples
    --------
    >>> from sklearn_riskcontrol.selective import mdr_label_decisions
    >>> cal_risks = [0, 1, 0, 1, 0, 0, 0, 0, 1, 0]
    >>> cal_scores = [0.9, 0.3, 0.8, 0.5, 0.7, 0.9, 0.6, 0.8, 0.05, 0.9]
    >>> mdr_label_decisions(cal_risks, cal_scores, [[0, 1, 1], [0, 1, 1]],
    ...                     [[0.9, 0.06, 0.04], [0.3, 0.6, 0.1]], alpha=0.3)
    array([ True, False])
    """
    alpha = check_level(alpha, "alpha")
    gamma = alpha if gamma is None else check_level(gamma, "gamma")
    L, S, R, X, w, v = _label_inputs(cal_risks, cal_scores, test_risks, test_scores, cal_weights,
                                     test_weights)
    passes, denom, total = _mdr_candidates(L, S, w, v, X, R, gamma)
    _, passes_all, d_max = _min_over_candidates(passes, denom, total, R > 0)
    return _mdr_decide(passes_all, d_max, total, alpha, gamma)


def _merged_steps(u_c, a_c, t_sorted):
    """Distinct values of all n + m scores with ``Aw(t)`` and ``N(t)`` at each.

    ``u_c, a_c`` are the calibration steps (:func:`_calibration_steps`), ``t_sorted`` the sorted
    test scores: merging two sorted runs (a stable sort does it in one pass) is cheaper than
    sorting all n + m scores again.
    """
    vals = np.concatenate([u_c, t_sorted])
    merge = np.argsort(vals, kind="stable")
    sv = vals[merge]
    n_cal = np.cumsum(merge < len(u_c))  # calibration steps <= each merged value
    cum_n = np.arange(1, len(vals) + 1) - n_cal
    last = np.r_[sv[1:] != sv[:-1], True]
    return sv[last], np.r_[0.0, a_c][n_cal[last]], cum_n[last].astype(float)


def _sdr_equal_weights(aw, T, W, v0, gamma, values=None):
    """SDR e-values when every test weight is ``v0`` (always so without covariate shift).

    ``t1``, ``t0`` are then shared by all test points. Between two consecutive test scores ``N``
    is constant and ``Aw`` grows, so each condition ``g(t) >= v0`` / ``g(t) >= 0`` is easiest at
    a test score: the last test score passing gives ``{j : T_j <= t1}``, and only the calibration
    steps right after the last one passing for ``t0`` are left to scan. Same values as the
    conditions over all n + m scores, without merging them. With positive attainable ``values``
    (Remark 4.1) the infimum runs over ``l`` in ``values``: ``t(l) = max{t : g(t) >= v0 l}``.
    """
    m = T.shape[0]
    t_sorted = np.sort(T)
    last = np.r_[t_sorted[1:] != t_sorted[:-1], True]
    u_t = t_sorted[last]
    budget = gamma * (W + v0) * (np.flatnonzero(last) + 1).astype(float) / m
    top = 1.0 if values is None else values[-1]
    j1 = _last_passing(aw, u_t, budget, v0 * top)
    if j1 < 0:
        return np.zeros(m)
    if values is None:
        j0, a0 = _threshold_sum(aw, u_t, budget, 0.0)  # j0 >= j1: g >= v0 implies g >= 0
        value = (W + v0) / min(v0 + a0, budget[j0])
    else:
        denom = max(v0 * l + _threshold_sum(aw, u_t, budget, v0 * l)[1] for l in values)
        value = (W + v0) / denom
    return np.where(T <= u_t[j1], value, 0.0)


def _threshold_sum(aw, u_t, budget, offset):
    """``(j, Aw(t))`` for ``t = max{t : offset + Aw(t) <= budget(t)}`` over all n + m scores:
    ``j`` is the last test score passing, and ``t`` may move past it to calibration steps before
    the next test score (``N``, hence the budget, is the same there). ``j = -1`` if none."""
    j = _last_passing(aw, u_t, budget, offset)
    if j < 0:
        return j, 0.0
    after = aw.at(aw.between(u_t[j], np.inf if j + 1 == len(u_t) else u_t[j + 1]))
    n_pass = int(np.count_nonzero(at_most(after + offset, budget[j])))  # a prefix: Aw grows
    return j, (after[n_pass - 1] if n_pass else float(aw.at(u_t[j])))


def _last_passing(aw, u_t, budget, offset, block=256, max_blocks=8):
    """Last ``j`` with ``offset + Aw(u_t[j]) <= budget[j]`` (tie-tolerant), or -1.

    ``Aw(u_t[j])`` (``aw.at``, a :class:`_CalibrationSum`) would need a binary search per test
    score (as costly as the sorts). Both ``Aw`` and ``budget`` are non-decreasing in ``j``, so a
    block of test scores can hold a passing ``j`` only if its first ``Aw`` passes against its last
    budget: blocks are screened with one search each, and only the last candidate blocks are
    evaluated exactly (falling back to every score after ``max_blocks`` failed candidates).
    Same result as evaluating every test score.
    """
    starts = np.arange(0, len(u_t), block)
    ends = np.minimum(starts + block, len(u_t)) - 1
    a_first = aw.at(u_t[starts])
    candidates = np.flatnonzero(at_most(a_first + offset, budget[ends]))[::-1]
    if len(candidates) > max_blocks:
        candidates = candidates[:max_blocks]
        rest = slice(0, starts[candidates[-1]])  # scores before the last block examined
    else:
        rest = None
    for b in candidates:
        sl = slice(starts[b], ends[b] + 1)
        a_t = aw.at(u_t[sl])
        j = _last_true(at_most(a_t + offset, budget[sl]))
        if j >= 0:
            return int(starts[b] + j)
    if rest is None:
        return -1
    a_t = aw.at(u_t[rest])
    return _last_true(at_most(a_t + offset, budget[rest]))


def _last_true(mask):
    """Index of the last True entry, or -1."""
    idx = mask.size - 1 - np.argmax(mask[::-1])
    return int(idx) if mask.size and mask[idx] else -1


def _last_passing_weighted(a, N, W, v, gamma, m, c):
    """Per test weight ``v_j``: last index ``k`` of the merged scores with
    ``g_j(t_k) = gamma (W + v_j) N_k / m - Aw_k >= c v_j`` (tie-tolerant), or -1.

    With ``b = gamma N / m`` (non-decreasing in ``k``) the condition reads
    ``base_k + v_j (b_k - c) >= 0``, ``base = gamma W N / m - Aw``: an upper bound
    ``v_j <= base / (c - b)`` where ``b < c`` (a prefix of the scores) and a lower bound
    ``v_j >= -base / (b - c)`` where ``b > c`` (a suffix; ``b = c`` passes iff ``base >= 0``).
    The last passing index comes from the suffix part if any index passes there, else from the
    prefix part: one binary search on suffix minima / maxima of the bounds. ``b < c`` everywhere
    when ``gamma < c`` (e.g. ``c = 1``, ``gamma < 1``).
    """
    b = gamma * N / m
    base = gamma * W * N / m
    # Same tie tolerance as the equal-weight branch (at_most): a slack of TIE_RTOL times the
    # magnitude of the compared terms, in favour of equality.
    slack = TIE_RTOL * (base + a)
    k = np.full(v.shape, -1, dtype=np.intp)
    if gamma >= c:
        with np.errstate(divide="ignore", invalid="ignore"):
            lower = np.where(b > c, (a - base - slack) / (b - c),
                             np.where((b == c) & (base - a + slack >= 0), -np.inf, np.inf))
        suf_min = np.minimum.accumulate(lower[::-1])[::-1]  # non-decreasing
        k = np.searchsorted(suf_min, v, side="right") - 1
    if c > 0:
        with np.errstate(divide="ignore", invalid="ignore"):
            upper = np.where(b < c, (base - a + slack) / (c - b), -np.inf)
        suf_max = np.maximum.accumulate(upper[::-1])[::-1]  # non-increasing
        k = np.where(k >= 0, k, np.searchsorted(-suf_max, -v, side="right") - 1)
    return k


def sdr_evalues(
    cal_risks: ArrayLike,
    cal_scores: ArrayLike,
    test_scores: ArrayLike,
    gamma: float,
    cal_weights: ArrayLike | None = None,
    test_weights: ArrayLike | None = None,
    attainable: str | ArrayLike | None = None,
) -> FloatArray:
    """Exact SCoRE-SDR e-values (paper eq. 5.1; eq. 6.2 under covariate shift).

    e-BH at level ``alpha`` on these e-values (optionally boosted) controls the selective
    deployment risk ``SDR = E[sum_j L_{n+j} psi_j / max(1, sum_j psi_j)] <= alpha``.
    Cost O((n + m) log(n + m)) with or without weights, against O(m (n + m)) for the paper's
    Algorithms 3 and 4; the results are identical.

    Parameters
    ----------
    cal_risks : array-like of shape (n,)
        Calibration risks ``L_i`` in [0, 1].
    cal_scores : array-like of shape (n,)
        Calibration scores ``S_i`` (smaller = safer).
    test_scores : array-like of shape (m,)
        Test scores ``T_j`` of the whole test batch.
    gamma : float > 0
        Level of the plug-in SDR threshold (use ``gamma = alpha``). Any ``gamma > 0`` gives
        valid e-values (paper Thm. 5.1), ``gamma >= 1`` included; with e-BH (no boosting) a
        ``gamma`` above ``alpha`` has asymptotically zero power (Thm. 5.8). Every
        ``gamma >= 1`` gives the same e-values, ``E_j = (W + v_j) / (v_j l_max + sum_i w_i
        L_i)`` (``l_max`` = 1, or the largest ``attainable`` value): without covariate shift
        all are equal and e-BH deploys the whole batch or nothing (see :ref:`selective-variants`).
    cal_weights, test_weights : array-like, optional
        Covariate-shift density ratios of calibration and test points.
    attainable : None, "binary" or array-like of floats in [0, 1], default=None
        Risk values the loss can take (paper Remark 4.1 and Sec. 5.1): the infimum over the
        unknown test risk runs over the positive ones only. ``"binary"`` = {0, 1}: the e-value
        at ``l = 1``, whose e-BH selection with ``gamma = alpha`` is conformal selection with
        BH (paper Cor. 5.4). Every calibration risk must be one of the values (and the test
        risks too, which cannot be checked). ``None``: the paper's ``[0, 1]``.

    Returns
    -------
    ndarray of shape (m,)

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_riskcontrol.selective import sdr_evalues
    >>> from sklearn_riskcontrol.evalues.testing import ebh
    >>> rng = np.random.default_rng(0)
    >>> s_cal, s_test = rng.uniform(size=200), rng.uniform(size=20)
    >>> risks = (rng.uniform(size=200) < s_cal).astype(float)   # riskier when the score is high
    >>> e = sdr_evalues(risks, s_cal, s_test, gamma=0.2)
    >>> int(ebh(e, alpha=0.2).sum())
    13

    The risks are binary, so ``l = 1`` suffices (Cor. 5.4: conformal selection with BH); the
    number deployed here has the same guarantee, risk among deployed <= 0.2 in expectation:

    >>> e1 = sdr_evalues(risks, s_cal, s_test, gamma=0.2, attainable="binary")
    >>> int(ebh(e1, alpha=0.2).sum())
    13
    """
    gamma = check_number(gamma, "gamma", minimum=0, exclusive=True)
    L, S, T, w, v = _validate(cal_risks, cal_scores, test_scores, cal_weights, test_weights,
                              fill=False)
    values = _positive_attainable(attainable, L)
    m = T.shape[0]
    if m == 0:
        return np.zeros(0)
    W = float(L.shape[0]) if w is None else w.sum()
    if v is None or np.all(v == v[0]):
        return _sdr_equal_weights(_CalibrationSum(L, S, w), T, W, 1.0 if v is None else v[0],
                                  gamma, values)
    u_c, a_c = _calibration_steps(L, S, w)
    u, a, N = _merged_steps(u_c, a_c, np.sort(T))

    # g_j(t) >= c v_j is a bound on v_j at each t (see _last_passing_weighted); t_{c,j} is the
    # last t passing, found by binary search on suffix max / min records of the bounds.
    if values is None:
        k1 = _last_passing_weighted(a, N, W, v, gamma, m, 1.0)
        k0 = np.maximum(_last_passing_weighted(a, N, W, v, gamma, m, 0.0), k1)
        k1c, k0c = np.maximum(k1, 0), np.maximum(k0, 0)
        denom = np.minimum(v + a[k0c], gamma * (W + v) * N[k0c] / m)
    else:
        k1 = _last_passing_weighted(a, N, W, v, gamma, m, values[-1])
        k1c = np.maximum(k1, 0)
        denom = np.zeros(m)
        for l in values:  # t(l) >= t(l_max) when l <= l_max: same sign of k
            k_l = np.maximum(_last_passing_weighted(a, N, W, v, gamma, m, l), 0)
            denom = np.maximum(denom, v * l + a[k_l])
    ok = k1 >= 0
    with np.errstate(divide="ignore", invalid="ignore"):
        value = (W + v) / denom
    return np.where(ok & (T <= u[k1c]), value, 0.0)
