"""Brute-force oracles for the SCoRE e-values, written from the paper's definitions.

Nothing here is fast or clever on purpose: these functions restate the definitions of Bai & Jin
(``seeds/score.txt``) as plainly as possible so the closed forms in
``sklearn_riskcontrol.selective._conformal`` can be
checked against them.

* :func:`sdr_evalues_exact` / :func:`mdr_evalues_exact` -- eqs. 5.1 / 6.2 and 4.1 / 6.1. The
  infimum over the unknown test risk ``l in [0, 1]`` is taken over the finite set of *critical*
  values of ``l`` (0, 1 and every ``l`` at which the threshold ``t(l)`` changes). Between two
  consecutive critical values ``t(l)`` is constant and the quantity inside the infimum decreases in
  ``l``, and the critical value closing each piece belongs to it, so the minimum over the critical
  values *is* the infimum. Run with :class:`fractions.Fraction` inputs, the result is exact.
* :func:`sdr_evalues_grid` / :func:`mdr_evalues_grid` -- the same infimum over a grid of ``l``:
  an upper bound that converges to the exact value as the grid is refined.
* :func:`algorithm3` -- the paper's Algorithm 3 (Algorithm 4 when weights are given), written from
  the pseudocode of Algorithm 5 (Appendix B.5), O(m (n + m)) pure-Python loops.
  :func:`algorithm3_numpy` is the same algorithm with each test point's inner loop vectorised
  (the fair "published algorithm" baseline for timing).
* :func:`mdr_decisions_prop44` -- Proposition 4.4 / A.1, including the extra condition for
  ``gamma > alpha``.
* :func:`mdr_label_evalues_exact` -- the label-dependent e-value of Remark 4.3 (eq. 4.3, with
  weights as in eq. 6.1): an infimum over a finite set of candidate labels, each with its own
  test risk, test score and threshold ``t_gamma(y)``. Remark 4.1's restriction to attainable
  values is ``mdr_evalues_exact`` / ``sdr_evalues_exact`` with ``ls`` = the positive values.
* :func:`conformal_pvalues`, :func:`ebh_bruteforce`, :func:`bh_bruteforce` -- conformal selection
  (Jin & Candes) and the multiple-testing procedures, by definition.
* :func:`previous_sdr_evalues` -- not an oracle from the paper: ``sdr_evalues`` as it was before
  issue 13 (one argsort of all n + m scores), which the current one must equal bit for bit
  (``selective/test_score_evalues.py``; ``benchmarks/selective_speed.py`` times both).

All functions accept plain sequences. Numbers are used as given (floats stay floats, Fractions stay
Fractions), so passing :class:`~fractions.Fraction` everywhere gives exact rational arithmetic.
"""

import math
from fractions import Fraction

import numpy as np

INF = math.inf


def _weights(n, m, cal_weights, test_weights, one):
    """Weights in the number type of ``one`` (all ones when not given)."""
    if (cal_weights is None) != (test_weights is None):
        raise ValueError("give both weight vectors or neither")
    if cal_weights is None:
        return [one] * n, [one] * m
    return [one * x for x in cal_weights], [one * x for x in test_weights]


def _cal_sum(t, S, wL, zero):
    """``Aw(t) = sum_i w_i L_i 1{S_i <= t}``."""
    total = zero
    for s_i, x in zip(S, wL):
        if s_i <= t:
            total = total + x
    return total


# ----------------------------------------------------------------------------------------------
# SDR (eqs. 5.1 and 6.2)
# ----------------------------------------------------------------------------------------------


class _SDRProblem:
    """Everything eq. 6.2 needs for one test point ``j`` (eq. 5.1: all weights one)."""

    def __init__(self, L, S, T, gamma, w, v, j):
        self.m = len(T)
        self.gamma = gamma
        self.T_j = T[j]
        self.v_j = v[j]
        self.zero = gamma * 0
        self.W = sum(w, self.zero)
        wL = [w_i * L_i for w_i, L_i in zip(w, L)]
        # M = all n + m scores (a multiset; the max over it only needs the distinct values).
        self.M = sorted(set(S) | set(T))
        self.A = {t: _cal_sum(t, S, wL, self.zero) for t in self.M}
        # 1 + sum_{k != j} 1{T_k <= t}
        self.D = {t: 1 + sum(1 for k, T_k in enumerate(T) if k != j and T_k <= t) for t in self.M}

    def fr(self, t, l):
        """FR_{n+j}(t; l) of eq. 6.2."""
        num = self.v_j * l * (1 if self.T_j <= t else 0) + self.A[t]
        return num / self.D[t] * self.m / (self.W + self.v_j)

    def threshold(self, l):
        """t(l) = max{t in M : FR(t; l) <= gamma}; None stands for -inf."""
        best = None
        for t in self.M:
            if self.fr(t, l) <= self.gamma:
                best = t
        return best

    def value(self, l):
        """The quantity inside the infimum of eq. 6.2 at ``l`` (0 when T_j > t(l))."""
        t = self.threshold(l)
        if t is None or self.T_j > t:
            return self.zero
        den = self.v_j * l + self.A[t]
        if den == 0:
            return INF
        return (self.W + self.v_j) / den

    def critical_ls(self):
        """0, 1 and every l in [0, 1] with FR(t; l) = gamma for some t >= T_j."""
        out = {self.zero, self.zero + 1}
        for t in self.M:
            if self.T_j <= t:
                # (v l + A(t)) m / (D(t) (W + v)) = gamma
                budget = self.gamma * self.D[t] * (self.W + self.v_j) / self.m
                l_t = (budget - self.A[t]) / self.v_j
                if 0 <= l_t <= 1:
                    out.add(l_t)
        return sorted(out)


def sdr_evalues_exact(cal_risks, cal_scores, test_scores, gamma, cal_weights=None,
                      test_weights=None, ls=None):
    """SCoRE-SDR e-values by definition (eq. 5.1; eq. 6.2 with weights).

    The infimum over ``l in [0, 1]`` is a minimum over the critical values of ``l`` (exact), or
    over the given ``ls`` when passed (an upper bound). Use Fraction inputs for exact arithmetic.
    """
    L, S, T = list(cal_risks), list(cal_scores), list(test_scores)
    w, v = _weights(len(L), len(T), cal_weights, test_weights, gamma * 0 + 1)
    out = []
    for j in range(len(T)):
        prob = _SDRProblem(L, S, T, gamma, w, v, j)
        grid = prob.critical_ls() if ls is None else ls
        out.append(min(prob.value(l) for l in grid))
    return out


def sdr_evalues_at(cal_risks, cal_scores, test_scores, gamma, l, cal_weights=None,
                   test_weights=None):
    """``E_{gamma, n+j}(l)``: the quantity inside the infimum of eq. 5.1 at a fixed ``l``."""
    L, S, T = list(cal_risks), list(cal_scores), list(test_scores)
    w, v = _weights(len(L), len(T), cal_weights, test_weights, gamma * 0 + 1)
    l = gamma * 0 + l
    return [_SDRProblem(L, S, T, gamma, w, v, j).value(l) for j in range(len(T))]


# ----------------------------------------------------------------------------------------------
# MDR (eqs. 4.1 and 6.1)
# ----------------------------------------------------------------------------------------------


class _MDRProblem:
    """Eq. 6.1 for one test point (eq. 4.1: all weights one). M = calibration scores and T_j."""

    def __init__(self, L, S, T_j, gamma, w, v_j):
        self.gamma = gamma
        self.T_j = T_j
        self.v_j = v_j
        self.zero = gamma * 0
        self.W = sum(w, self.zero)
        wL = [w_i * L_i for w_i, L_i in zip(w, L)]
        self.M = sorted(set(S) | {T_j})
        self.A = {t: _cal_sum(t, S, wL, self.zero) for t in self.M}

    def f(self, t, l):
        """F(t; l) of eq. 6.1."""
        return (self.A[t] + self.v_j * l * (1 if self.T_j <= t else 0)) / (self.W + self.v_j)

    def threshold(self, l):
        best = None
        for t in self.M:
            if self.f(t, l) <= self.gamma:
                best = t
        return best

    def value(self, l):
        t = self.threshold(l)
        if t is None or self.T_j > t:
            return self.zero
        den = self.v_j * l + self.A[t]
        if den == 0:
            return INF
        return (self.W + self.v_j) / den

    def critical_ls(self):
        out = {self.zero, self.zero + 1}
        for t in self.M:
            if self.T_j <= t:
                l_t = (self.gamma * (self.W + self.v_j) - self.A[t]) / self.v_j
                if 0 <= l_t <= 1:
                    out.add(l_t)
        return sorted(out)


def mdr_evalues_exact(cal_risks, cal_scores, test_scores, gamma, cal_weights=None,
                      test_weights=None, ls=None):
    """SCoRE-MDR e-values by definition (eq. 4.1; eq. 6.1 with weights), one test point at a
    time."""
    L, S, T = list(cal_risks), list(cal_scores), list(test_scores)
    w, v = _weights(len(L), len(T), cal_weights, test_weights, gamma * 0 + 1)
    out = []
    for j in range(len(T)):
        prob = _MDRProblem(L, S, T[j], gamma, w, v[j])
        grid = prob.critical_ls() if ls is None else ls
        out.append(min(prob.value(l) for l in grid))
    return out


def mdr_label_evalues_exact(cal_risks, cal_scores, test_risks, test_scores, gamma,
                            cal_weights=None, test_weights=None, positive_only=True):
    """Eq. 4.3 by definition: ``E_j = inf_y (W + v) 1{V_jy <= t(y)} / (Aw(t(y)) + v L_jy 1{...})``.

    ``t(y) = max{t in M(y) : (Aw(t) + v L_jy 1{V_jy <= t}) / (W + v) <= gamma}`` with
    ``M(y) = {V_1, ..., V_n, V_jy}`` (the scores of the n + 1 points when the test label is y).
    ``test_risks[j][k]``, ``test_scores[j][k]``: risk and score of test point j at label k.
    ``positive_only`` drops the labels with zero risk from the infimum (Remark 4.1); the
    infimum over no label is ``inf``.
    """
    L, S = list(cal_risks), list(cal_scores)
    m = len(test_risks)
    zero = gamma * 0
    w, v = _weights(len(L), m, cal_weights, test_weights, zero + 1)
    W = sum(w, zero)
    wL = [w_i * L_i for w_i, L_i in zip(w, L)]
    out = []
    for j in range(m):
        terms = []
        for l, x in zip(test_risks[j], test_scores[j]):
            if positive_only and l == 0:
                continue
            l, x = zero + l, x
            best = None
            for t in sorted(set(S) | {x}):
                ind = 1 if x <= t else 0
                if (_cal_sum(t, S, wL, zero) + v[j] * l * ind) / (W + v[j]) <= gamma:
                    best = t
            if best is None or x > best:
                terms.append(zero)
                continue
            den = _cal_sum(best, S, wL, zero) + v[j] * l
            terms.append(INF if den == 0 else (W + v[j]) / den)
        out.append(min(terms) if terms else INF)
    return out


def mdr_decisions_prop44(cal_risks, cal_scores, test_scores, alpha, gamma=None, cal_weights=None,
                         test_weights=None):
    """Deploy decisions of Proposition 4.4 (Proposition A.1 with weights), read literally.

    Deploy j iff ``(v_j + Aw(T_j)) / (W + v_j) <= gamma`` and, when ``gamma > alpha``, no
    ``t in M = {S_1, ..., S_n, T_j}`` and ``l in [0, 1]`` put ``(l v_j + Aw(t)) / (W + v_j)`` in
    ``(alpha, gamma]``. Use Fraction inputs for exact comparisons.
    """
    gamma = alpha if gamma is None else gamma
    L, S, T = list(cal_risks), list(cal_scores), list(test_scores)
    zero = alpha * 0
    w, v = _weights(len(L), len(T), cal_weights, test_weights, zero + 1)
    W = sum(w, zero)
    wL = [w_i * L_i for w_i, L_i in zip(w, L)]
    out = []
    for T_j, v_j in zip(T, v):
        total = W + v_j
        ok = (v_j + _cal_sum(T_j, S, wL, zero)) / total <= gamma
        if ok and gamma > alpha:
            for t in list(S) + [T_j]:
                lo = _cal_sum(t, S, wL, zero) / total  # l = 0
                hi = (v_j + _cal_sum(t, S, wL, zero)) / total  # l = 1
                # {(l v + Aw(t)) / total : l in [0, 1]} = [lo, hi] meets (alpha, gamma]?
                if lo <= gamma and hi > alpha:
                    ok = False
                    break
        out.append(ok)
    return out


# ----------------------------------------------------------------------------------------------
# Grid versions (upper bounds converging to the infimum), vectorised over the grid of l only
# ----------------------------------------------------------------------------------------------


def sdr_evalues_grid(cal_risks, cal_scores, test_scores, gamma, n_grid, cal_weights=None,
                     test_weights=None):
    """Eq. 5.1 / 6.2 with the infimum over ``l in {0, 1/n_grid, ..., 1}`` (floats)."""
    L = np.asarray(cal_risks, float)
    S = np.asarray(cal_scores, float)
    T = np.asarray(test_scores, float)
    n, m = len(L), len(T)
    w = np.ones(n) if cal_weights is None else np.asarray(cal_weights, float)
    v = np.ones(m) if test_weights is None else np.asarray(test_weights, float)
    ls = np.arange(n_grid + 1) / n_grid
    M = np.unique(np.concatenate([S, T]))
    A = np.array([np.sum(w * L * (S <= t)) for t in M])
    out = np.empty(m)
    for j in range(m):
        D = np.array([1 + np.sum(np.delete(T, j) <= t) for t in M])
        ind = (T[j] <= M).astype(float)
        fr = (v[j] * ls[:, None] * ind[None, :] + A[None, :]) / D[None, :] * m / (w.sum() + v[j])
        ok = fr <= gamma  # shape (grid, |M|)
        has = ok.any(axis=1)
        k = M.size - 1 - np.argmax(ok[:, ::-1], axis=1)  # index of t(l)
        passes = has & (T[j] <= M[k])
        if not passes.all():
            out[j] = 0.0
            continue
        with np.errstate(divide="ignore"):
            vals = (w.sum() + v[j]) / (v[j] * ls + A[k])
        out[j] = vals.min()
    return out


def mdr_evalues_grid(cal_risks, cal_scores, test_scores, gamma, n_grid, cal_weights=None,
                     test_weights=None):
    """Eq. 4.1 / 6.1 with the infimum over ``l in {0, 1/n_grid, ..., 1}`` (floats)."""
    L = np.asarray(cal_risks, float)
    S = np.asarray(cal_scores, float)
    T = np.asarray(test_scores, float)
    n, m = len(L), len(T)
    w = np.ones(n) if cal_weights is None else np.asarray(cal_weights, float)
    v = np.ones(m) if test_weights is None else np.asarray(test_weights, float)
    ls = np.arange(n_grid + 1) / n_grid
    out = np.empty(m)
    for j in range(m):
        M = np.unique(np.r_[S, T[j]])
        A = np.array([np.sum(w * L * (S <= t)) for t in M])
        ind = (T[j] <= M).astype(float)
        f = (A[None, :] + v[j] * ls[:, None] * ind[None, :]) / (w.sum() + v[j])
        ok = f <= gamma
        has = ok.any(axis=1)
        k = M.size - 1 - np.argmax(ok[:, ::-1], axis=1)
        if not (has & (T[j] <= M[k])).all():
            out[j] = 0.0
            continue
        with np.errstate(divide="ignore"):
            out[j] = ((w.sum() + v[j]) / (v[j] * ls + A[k])).min()
    return out


# ----------------------------------------------------------------------------------------------
# The paper's Algorithm 3 / 4, from the pseudocode of Algorithm 5 (Appendix B.5)
# ----------------------------------------------------------------------------------------------


def algorithm3(cal_risks, cal_scores, test_scores, gamma, cal_weights=None, test_weights=None):
    """Algorithm 3 (unweighted) / Algorithm 4 (weighted) of the paper, O(m (n + m)) loops.

    Follows Algorithm 5 line by line (1-based there, 0-based here). The prefix sums ``A`` and ``B``
    count all tied scores (the backward pass the paper suggests for ties). Weighted quantities
    follow Algorithm 4: ``lbar(t) = gamma/m (W + v)/v (1 + N_{-j}(t)) - Aw(t)/v`` and the e-value
    ``(W + v) / (v lbar(t) + Aw(t))``.
    """
    L, S, T = list(cal_risks), list(cal_scores), list(test_scores)
    n, m = len(L), len(T)
    zero = gamma * 0
    w, v = _weights(n, m, cal_weights, test_weights, zero + 1)
    W = sum(w, zero)
    # Lines 2-3: pairs (score, risk-or-None), sorted by score.
    items = [(S[i], w[i] * L[i]) for i in range(n)] + [(T[j], None) for j in range(m)]
    items.sort(key=lambda it: it[0])
    size = n + m
    scores = [it[0] for it in items]
    # Line 4: A[i] = sum_k w_k L_k 1{S_k <= M[i]},  B[i] = 1 + sum_k 1{T_k <= M[i]}.
    A = [zero] * size
    B = [0] * size
    run_a, run_b = zero, 1
    for i, (_, wl) in enumerate(items):
        if wl is None:
            run_b += 1
        else:
            run_a = run_a + wl
        A[i], B[i] = run_a, run_b
    for i in range(size - 2, -1, -1):  # ties: every tied entry gets the group's final count
        if scores[i] == scores[i + 1]:
            A[i], B[i] = A[i + 1], B[i + 1]

    evalues = []
    for j in range(m):
        T_j, v_j = T[j], v[j]
        scale = m / (W + v_j)
        FR0 = [None] * size
        FR1 = [None] * size
        C = [None] * size
        # Lines 7-11.
        for i in range(size):
            ind = 1 if T_j <= scores[i] else 0
            den = B[i] - ind
            FR0[i] = A[i] / den * scale
            FR1[i] = (A[i] + v_j * ind) / den * scale
            C[i] = gamma / m * (W + v_j) / v_j * den - A[i] / v_j
        # Lines 12-13.
        i0 = max((i for i in range(size) if FR0[i] <= gamma), default=None)
        i1 = max((i for i in range(size) if FR1[i] <= gamma), default=None)
        # Line 14 = lines 6-9 of Algorithm 3.
        if i1 is None or T_j > scores[i1]:
            evalues.append(zero)
            continue
        t0, t1 = scores[i0], scores[i1]
        if t0 == t1:
            evalues.append((W + v_j) / (v_j + A[i1]))
            continue
        # Line 15: D[i] = max{C[k] : M[k] > M[i], FR0[k] <= gamma} (-inf if none).
        D = [-INF] * size
        best = -INF
        i = size - 1
        while i >= 0:
            k = i
            while k >= 0 and scores[k] == scores[i]:  # tie group [k+1, i]
                k -= 1
            for q in range(k + 1, i + 1):
                D[q] = best
            for q in range(k + 1, i + 1):
                if FR0[q] <= gamma and C[q] > best:
                    best = C[q]
            i = k
        # Lines 16-19.
        lower = max(T_j, t1)
        m_star = [
            i for i in range(size)
            if t0 >= scores[i] >= lower and FR0[i] <= gamma and C[i] >= D[i]
        ]
        # Line 20.
        evalues.append(min((W + v_j) / (v_j * C[i] + A[i]) for i in m_star))
    return evalues


def algorithm3_numpy(cal_risks, cal_scores, test_scores, gamma, cal_weights=None,
                     test_weights=None):
    """Algorithm 3 / 4 with the inner loop over M vectorised: still O(m (n + m)) work."""
    L = np.asarray(cal_risks, float)
    S = np.asarray(cal_scores, float)
    T = np.asarray(test_scores, float)
    n, m = len(L), len(T)
    w = np.ones(n) if cal_weights is None else np.asarray(cal_weights, float)
    v = np.ones(m) if test_weights is None else np.asarray(test_weights, float)
    W = w.sum()
    vals = np.concatenate([S, T])
    order = np.argsort(vals, kind="stable")
    M = vals[order]
    contrib = np.concatenate([w * L, np.zeros(m)])[order]
    is_test = order >= n
    A = np.cumsum(contrib)
    B = 1 + np.cumsum(is_test)
    # ties: take each tie group's last prefix value
    last = np.r_[M[1:] != M[:-1], True]
    grp_end = np.flatnonzero(last)
    idx = grp_end[np.searchsorted(grp_end, np.arange(n + m))]
    A, B = A[idx], B[idx].astype(float)
    out = np.zeros(m)
    for j in range(m):
        T_j, v_j = T[j], v[j]
        ind = (T_j <= M).astype(float)
        den = B - ind
        scale = m / (W + v_j)
        FR0 = A / den * scale
        FR1 = (A + v_j * ind) / den * scale
        C = gamma / m * (W + v_j) / v_j * den - A / v_j
        ok0, ok1 = FR0 <= gamma, FR1 <= gamma
        if not ok1.any():
            continue
        i1 = n + m - 1 - np.argmax(ok1[::-1])
        i0 = n + m - 1 - np.argmax(ok0[::-1])
        if T_j > M[i1]:
            continue
        if M[i0] == M[i1]:
            out[j] = (W + v_j) / (v_j + A[i1])
            continue
        # D[i] = max{C[k] : M[k] > M[i], FR0[k] <= gamma}
        Cm = np.where(ok0, C, -np.inf)
        suffix = np.maximum.accumulate(Cm[::-1])[::-1]
        nxt = np.searchsorted(M, M, side="right")  # first index with a strictly larger score
        D = np.where(nxt < n + m, suffix[np.minimum(nxt, n + m - 1)], -np.inf)
        sel = (M <= M[i0]) & (M >= max(T_j, M[i1])) & ok0 & (C >= D)
        out[j] = np.min((W + v_j) / (v_j * C[sel] + A[sel]))
    return out


# ----------------------------------------------------------------------------------------------
# Conformal selection and multiple testing, by definition
# ----------------------------------------------------------------------------------------------


def conformal_pvalues(cal_risks, cal_scores, test_scores):
    """Jin & Candes conformal p-values for binary risks ``L = 1{Y <= c}`` (paper eq. 4.5).

    ``p_j = (1 + #{i : V_i <= T_j}) / (n + 1)`` with ``V_i = S_i + inf * 1{L_i = 0}``.
    """
    n = len(cal_risks)
    V = [s if L_i == 1 else INF for s, L_i in zip(cal_scores, cal_risks)]
    return [Fraction(1 + sum(1 for V_i in V if V_i <= T_j), n + 1) for T_j in test_scores]


def ebh_bruteforce(evalues, alpha):
    """e-BH by definition: ``k* = max{k : #{j : E_j >= m/(alpha k)} >= k}``."""
    m = len(evalues)
    k_star = 0
    for k in range(1, m + 1):
        if sum(1 for e in evalues if e >= m / (alpha * k)) >= k:
            k_star = k
    if k_star == 0:
        return [False] * m
    return [e >= m / (alpha * k_star) for e in evalues]


def bh_bruteforce(pvalues, alpha):
    """BH by definition: ``k* = max{k : #{j : p_j <= alpha k / m} >= k}``; reject
    ``p_j <= alpha k* / m``."""
    m = len(pvalues)
    k_star = 0
    for k in range(1, m + 1):
        if sum(1 for p in pvalues if p <= alpha * k / m) >= k:
            k_star = k
    return [k_star > 0 and p <= alpha * k_star / m for p in pvalues]


# ----------------------------------------------------------------------------------------------
# The previous implementation of sdr_evalues
# ----------------------------------------------------------------------------------------------


def previous_sdr_evalues(L, S, T, gamma, w=None, v=None):
    """``sdr_evalues`` before issue 13: one argsort of all n + m scores (kept as the reference)."""
    from sklearn_riskcontrol.selective._conformal import _last_true, _validate
    from sklearn_riskcontrol.evalues.testing import TIE_RTOL, at_most

    L, S, T, w, v = _validate(L, S, T, w, v)
    n, m = len(S), len(T)
    if m == 0:
        return np.zeros(0)
    W = w.sum()
    vals = np.concatenate([S, T])
    order = np.argsort(vals)
    sv = vals[order]
    contrib = np.zeros(n + m)
    contrib[:n] = w * L
    last = np.r_[sv[1:] != sv[:-1], True]
    u, a, N = sv[last], np.cumsum(contrib[order])[last], np.cumsum(order >= n)[last].astype(float)
    if np.all(v == v[0]):
        v0 = v[0]
        budget = gamma * (W + v0) * N / m
        k1 = _last_true(at_most(a + v0, budget))
        if k1 < 0:
            return np.zeros(m)
        k0 = max(k1, _last_true(at_most(a, budget)))
        value = (W + v0) / min(v0 + a[k0], budget[k0])
        return np.where(T <= u[k1], value, 0.0)
    b = gamma * N / m
    base = gamma * W * N / m
    slack = TIE_RTOL * (base + a)
    r1 = (base - a + slack) / (1.0 - b)
    with np.errstate(divide="ignore", invalid="ignore"):
        r0 = np.where(N > 0, (a - base - slack) / b, np.where(a > 0, np.inf, -np.inf))
    suf_max_r1 = np.maximum.accumulate(r1[::-1])[::-1]
    suf_min_r0 = np.minimum.accumulate(r0[::-1])[::-1]
    k1 = np.searchsorted(-suf_max_r1, -v, side="right") - 1
    k0 = np.maximum(np.searchsorted(suf_min_r0, v, side="right") - 1, k1)
    k1c, k0c = np.maximum(k1, 0), np.maximum(k0, 0)
    denom = np.minimum(v + a[k0c], gamma * (W + v) * N[k0c] / m)
    with np.errstate(divide="ignore", invalid="ignore"):
        value = (W + v) / denom
    return np.where((k1 >= 0) & (T <= u[k1c]), value, 0.0)
