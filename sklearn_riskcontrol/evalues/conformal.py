"""SCoRE: risk-adjusted conformal e-values for selective deployment (Bai & Jin).

Array layer of SCoRE-MDR and SCoRE-SDR. Inputs are calibration risks ``L_i`` in [0, 1],
calibration scores ``S_i`` and test scores ``T_j`` (smaller = safer), optionally covariate-shift
density ratios ``w_i`` (calibration) and ``v_j`` (test).

The paper defines each e-value as an infimum over the unknown test risk ``l in [0, 1]``
(eqs. 4.1, 5.1, 6.1, 6.2) and computes the SDR ones in O(m (n + m)) (Algorithms 3 and 4). Here the
infimum is solved in closed form (derivation in ``doc/score.rst`` and ``specs/score.md``):

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

import numpy as np

from .._validation import (
    check_level,
    check_nonempty,
    check_risks,
    check_same_length,
    check_scores,
    check_weights,
)
from .testing import TIE_RTOL, at_most

__all__ = ["mdr_evalues", "mdr_decisions", "sdr_evalues"]


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


def mdr_evalues(cal_risks, cal_scores, test_scores, gamma, cal_weights=None, test_weights=None):
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

    Returns
    -------
    ndarray of shape (m,)
        Non-negative e-values; all non-zero ones are at least ``1 / gamma``.

    Examples
    --------
    >>> from sklearn_riskcontrol.evalues import mdr_evalues
    >>> mdr_evalues([0.0, 0.5, 1.0, 0.2], [0.1, 0.2, 0.9, 0.4], [0.05, 0.95], gamma=0.4)
    array([2.5, 0. ])
    """
    gamma = check_level(gamma, "gamma")
    L, S, T, w, v = _validate(cal_risks, cal_scores, test_scores, cal_weights, test_weights)
    passes, a_star, total, budget = _mdr_parts(L, S, T, w, v, gamma)
    denom = np.minimum(v + a_star, budget)
    return np.where(passes, total / denom, 0.0)


def mdr_decisions(
    cal_risks, cal_scores, test_scores, alpha, gamma=None, cal_weights=None, test_weights=None
):
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

    Returns
    -------
    ndarray of bool, shape (m,)

    Examples
    --------
    >>> from sklearn_riskcontrol.evalues import mdr_decisions
    >>> mdr_decisions([0.0, 0.5, 1.0, 0.2], [0.1, 0.2, 0.9, 0.4], [0.05, 0.3, 0.95], alpha=0.4)
    array([ True,  True, False])
    """
    alpha = check_level(alpha, "alpha")
    gamma = alpha if gamma is None else check_level(gamma, "gamma")
    L, S, T, w, v = _validate(cal_risks, cal_scores, test_scores, cal_weights, test_weights)
    passes, a_star, total, _ = _mdr_parts(L, S, T, w, v, gamma)
    if gamma <= alpha:
        return passes
    # E_j >= 1/alpha  <=>  min(v + A*, gamma (W + v)) <= alpha (W + v)  <=>  v + A* <= alpha (W + v).
    return passes & at_most(v + a_star, alpha * total)


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


def _sdr_equal_weights(aw, T, W, v0, gamma):
    """SDR e-values when every test weight is ``v0`` (always so without covariate shift).

    ``t1``, ``t0`` are then shared by all test points. Between two consecutive test scores ``N``
    is constant and ``Aw`` grows, so each condition ``g(t) >= v0`` / ``g(t) >= 0`` is easiest at
    a test score: the last test score passing gives ``{j : T_j <= t1}``, and only the calibration
    steps right after the last one passing for ``t0`` are left to scan. Same values as the
    conditions over all n + m scores, without merging them.
    """
    m = T.shape[0]
    t_sorted = np.sort(T)
    last = np.r_[t_sorted[1:] != t_sorted[:-1], True]
    u_t = t_sorted[last]
    budget = gamma * (W + v0) * (np.flatnonzero(last) + 1).astype(float) / m
    j1 = _last_passing(aw, u_t, budget, v0)
    if j1 < 0:
        return np.zeros(m)
    j0 = _last_passing(aw, u_t, budget, 0.0)  # >= j1: g >= v0 implies g >= 0
    # t0 may move past test score j0 to calibration steps before the next test score.
    after = aw.at(aw.between(u_t[j0], np.inf if j0 + 1 == len(u_t) else u_t[j0 + 1]))
    n_pass = int(np.count_nonzero(at_most(after, budget[j0])))  # a prefix: Aw grows
    a0 = after[n_pass - 1] if n_pass else float(aw.at(u_t[j0]))
    value = (W + v0) / min(v0 + a0, budget[j0])
    return np.where(T <= u_t[j1], value, 0.0)


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


def sdr_evalues(cal_risks, cal_scores, test_scores, gamma, cal_weights=None, test_weights=None):
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
    gamma : float in (0, 1)
        Level of the plug-in SDR threshold (use ``gamma = alpha``).
    cal_weights, test_weights : array-like, optional
        Covariate-shift density ratios of calibration and test points.

    Returns
    -------
    ndarray of shape (m,)

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_riskcontrol.evalues import sdr_evalues, ebh
    >>> rng = np.random.default_rng(0)
    >>> s_cal, s_test = rng.uniform(size=200), rng.uniform(size=20)
    >>> risks = (rng.uniform(size=200) < s_cal).astype(float)   # riskier when the score is high
    >>> e = sdr_evalues(risks, s_cal, s_test, gamma=0.2)
    >>> int(ebh(e, alpha=0.2).sum())
    13
    """
    gamma = check_level(gamma, "gamma")
    L, S, T, w, v = _validate(cal_risks, cal_scores, test_scores, cal_weights, test_weights,
                              fill=False)
    m = T.shape[0]
    if m == 0:
        return np.zeros(0)
    W = float(L.shape[0]) if w is None else w.sum()
    if v is None or np.all(v == v[0]):
        return _sdr_equal_weights(_CalibrationSum(L, S, w), T, W, 1.0 if v is None else v[0],
                                  gamma)
    u_c, a_c = _calibration_steps(L, S, w)
    u, a, N = _merged_steps(u_c, a_c, np.sort(T))

    # g_j(t) >= v_j  <=>  v_j <= r1(t) = (gamma W N/m - Aw) / (1 - gamma N/m)   (gamma N/m < 1);
    # g_j(t) >= 0    <=>  v_j >= r0(t) = (Aw - gamma W N/m) / (gamma N/m)        (N > 0).
    # t1_j / t0_j are the last t passing, found by binary search on suffix max / min records.
    b = gamma * N / m
    base = gamma * W * N / m
    # Same tie tolerance as the equal-weight branch (at_most): a slack of TIE_RTOL times the
    # magnitude of the compared terms, in favour of equality.
    slack = TIE_RTOL * (base + a)
    r1 = (base - a + slack) / (1.0 - b)
    with np.errstate(divide="ignore", invalid="ignore"):
        r0 = np.where(N > 0, (a - base - slack) / b, np.where(a > 0, np.inf, -np.inf))
    suf_max_r1 = np.maximum.accumulate(r1[::-1])[::-1]  # non-increasing
    suf_min_r0 = np.minimum.accumulate(r0[::-1])[::-1]  # non-decreasing
    k1 = np.searchsorted(-suf_max_r1, -v, side="right") - 1
    k0 = np.maximum(np.searchsorted(suf_min_r0, v, side="right") - 1, k1)
    ok = k1 >= 0
    k1c, k0c = np.maximum(k1, 0), np.maximum(k0, 0)
    denom = np.minimum(v + a[k0c], gamma * (W + v) * N[k0c] / m)
    with np.errstate(divide="ignore", invalid="ignore"):
        value = (W + v) / denom
    return np.where(ok & (T <= u[k1c]), value, 0.0)
