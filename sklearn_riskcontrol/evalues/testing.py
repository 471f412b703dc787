"""Multiple-testing helpers on e-values and p-values.

e-BH and BH for selective (SDR/FDR-type) control, the boosting of e-values of SCoRE (paper 5.2),
and the family-wise procedures used for model selection (fixed-sequence testing, Bonferroni).
All functions are vectorised and O(m log m).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from .._typing import BoolArray, FloatArray, RandomStateLike
from .._validation import _as_1d_float, check_level, check_random_state, show

__all__ = ["ebh", "bh", "boost_evalues", "fixed_sequence", "bonferroni", "holm", "fallback"]

# Budget comparisons ("sum of risks <= level * count") are made with this relative tolerance in
# favour of equality, so ties that are exact in decimal arithmetic (alpha = 0.1, binary risks)
# are resolved as exact ties instead of by the rounding of alpha's binary representation.
TIE_RTOL = 1e-12


def at_most(lhs: ArrayLike, rhs: ArrayLike) -> BoolArray:
    """``lhs <= rhs`` up to the relative tie tolerance (elementwise)."""
    return lhs <= rhs + TIE_RTOL * np.abs(rhs)


def _check_evalues(evalues):
    e = _as_1d_float(evalues, "evalues")
    if np.isnan(e).any() or (e < 0).any():
        raise ValueError("`evalues` must be non-negative (inf is allowed, NaN is not).")
    return e


def ebh(evalues: ArrayLike, alpha: float) -> BoolArray:
    """e-BH procedure (Wang & Ramdas, 2022): which hypotheses to reject.

    With ``m`` e-values, let ``k* = max{k : #{j : E_j >= m / (alpha k)} >= k}``; reject
    ``{j : E_j >= m / (alpha k*)}`` (nothing if no ``k >= 1`` qualifies). For SCoRE's
    risk-adjusted e-values this controls the selective deployment risk at ``alpha``.

    Parameters
    ----------
    evalues : array-like of shape (m,)
        Non-negative e-values (``inf`` allowed).
    alpha : float in (0, 1)
        Target level.

    Returns
    -------
    ndarray of bool, shape (m,)

    Examples
    --------
    >>> from sklearn_riskcontrol.evalues.testing import ebh
    >>> ebh([40.0, 25.0, 1.0, 0.0], alpha=0.1)
    array([ True,  True, False, False])
    """
    e = _check_evalues(evalues)
    alpha = check_level(alpha, "alpha")
    m = e.shape[0]
    if m == 0:
        return np.zeros(0, dtype=bool)
    e_desc = np.sort(e)[::-1]
    k = np.arange(1, m + 1)
    # #{E_j >= m/(alpha k)} >= k  <=>  the k-th largest e-value is >= m/(alpha k).
    ok = at_most(m, e_desc * (alpha * k))
    if not ok.any():
        return np.zeros(m, dtype=bool)
    k_star = int(k[ok][-1])
    return at_most(m, e * (alpha * k_star))


def _check_pvalues(pvalues):
    p = _as_1d_float(pvalues, "pvalues")
    if np.isnan(p).any() or (p < 0).any() or (p > 1).any():
        raise ValueError("`pvalues` must lie in [0, 1] (no NaN).")
    return p


def bh(pvalues: ArrayLike, alpha: float) -> BoolArray:
    """Benjamini-Hochberg procedure: reject ``{j : p_j <= alpha k* / m}``.

    Examples
    --------
    >>> from sklearn_riskcontrol.evalues.testing import bh
    >>> bh([0.001, 0.02, 0.5], alpha=0.1)
    array([ True,  True, False])
    """
    p = _check_pvalues(pvalues)
    alpha = check_level(alpha, "alpha")
    m = p.shape[0]
    if m == 0:
        return np.zeros(0, dtype=bool)
    k = np.arange(1, m + 1)
    ok = at_most(np.sort(p) * m, alpha * k)
    if not ok.any():
        return np.zeros(m, dtype=bool)
    k_star = int(k[ok][-1])
    return at_most(p * m, alpha * k_star)


def boost_evalues(
    evalues: ArrayLike, method: str, random_state: RandomStateLike = None
) -> FloatArray:
    """Boost e-values by independent uniforms before e-BH (SCoRE paper, Sec. 5.2).

    Parameters
    ----------
    evalues : array-like of shape (m,)
    method : {"hete", "homo"} or None
        ``"hete"`` divides each e-value by its own ``U_j ~ Unif(0, 1)``; ``"homo"`` divides all
        by one shared ``U``; ``None`` returns the e-values unchanged. Both keep SDR control.
    random_state : int, RandomState instance, numpy.random.Generator or None
        Source of the uniforms; pass the same ``RandomState`` / ``Generator`` on every call to
        draw fresh uniforms each time (an int gives the same uniforms at every call).

    Returns
    -------
    ndarray of shape (m,)

    Examples
    --------
    >>> from sklearn_riskcontrol.evalues.testing import boost_evalues
    >>> boost_evalues([2.0, 0.0], "homo", random_state=0).round(3)
    array([3.644, 0.   ])
    """
    e = _check_evalues(evalues)
    if method is None:
        return e.copy()
    rng = check_random_state(random_state)
    if method == "hete":
        u = rng.uniform(size=e.shape[0])
    elif method == "homo":
        u = np.full(e.shape[0], rng.uniform())
    else:
        raise ValueError(f"`method` (boosting) must be None, 'hete' or 'homo'; got {show(method)}.")
    # U = 0 has probability zero; guard against it so 0/0 never appears.
    u = np.maximum(u, np.finfo(float).tiny)
    return e / u


def fixed_sequence(pvalues: ArrayLike, delta: float) -> BoolArray:
    """Fixed-sequence testing: certify candidates in the given order until the first failure.

    Each hypothesis is tested at the full level ``delta`` in the user's order; testing stops at
    the first p-value above ``delta``. The family-wise error rate is at most ``delta``.

    Returns
    -------
    ndarray of bool
        ``certified[k]`` is True iff ``p_0, ..., p_k <= delta``.

    Examples
    --------
    >>> from sklearn_riskcontrol.evalues.testing import fixed_sequence
    >>> fixed_sequence([0.01, 0.05, 0.2, 0.01], delta=0.1)
    array([ True,  True, False, False])
    """
    p = _check_pvalues(pvalues)
    delta = check_level(delta, "delta")
    return np.logical_and.accumulate(at_most(p, delta)) if p.size else np.zeros(0, dtype=bool)


def bonferroni(pvalues: ArrayLike, delta: float) -> BoolArray:
    """Bonferroni: certify every hypothesis with ``p_k <= delta / K``.

    Examples
    --------
    >>> from sklearn_riskcontrol.evalues.testing import bonferroni
    >>> bonferroni([0.01, 0.05, 0.2], delta=0.1)
    array([ True, False, False])
    """
    p = _check_pvalues(pvalues)
    delta = check_level(delta, "delta")
    return at_most(p * p.shape[0], delta)


def holm(pvalues: ArrayLike, delta: float) -> BoolArray:
    """Holm's step-down procedure: family-wise error at most ``delta`` under any dependence.

    Sort the ``K`` p-values increasingly, ``p_(1) <= ... <= p_(K)``; reject ``H_(1), ...,
    H_(k)`` for the largest ``k`` with ``p_(j) <= delta / (K - j + 1)`` for every ``j <= k``
    (Holm 1979). It rejects everything :func:`bonferroni` rejects, and more: the closed testing
    of Bonferroni tests, valid without any assumption on how the p-values depend on each other.
    Ties are broken by the original order (a stable sort), which does not change the set
    rejected.

    Parameters
    ----------
    pvalues : array-like of shape (K,)
    delta : float in (0, 1)

    Returns
    -------
    ndarray of bool, shape (K,)

    Examples
    --------
    >>> from sklearn_riskcontrol.evalues.testing import bonferroni, holm
    >>> p = [0.01, 0.04, 0.03, 0.5]
    >>> holm(p, delta=0.1).tolist(), bonferroni(p, delta=0.1).tolist()
    ([True, True, True, False], [True, False, False, False])
    """
    p = _check_pvalues(pvalues)
    delta = check_level(delta, "delta")
    k = p.shape[0]
    order = np.argsort(p, kind="stable")
    ok = at_most(p[order], delta / (k - np.arange(k)))
    n_rejected = k if ok.all() else int(np.argmin(ok))
    out = np.zeros(k, dtype=bool)
    out[order[:n_rejected]] = True
    return out


def fallback(pvalues: ArrayLike, delta: float, weights: ArrayLike | None = None) -> BoolArray:
    """Fallback procedure (Wiens 2003): FWER-controlling tests of ordered hypotheses.

    Hypothesis ``k`` is tested at level ``delta_k = delta w_k + (delta_{k-1} if k - 1 was
    rejected else 0)``: the level of each rejected hypothesis passes to the next one. With
    ``weights = (1, 0, 0, ...)`` this is fixed-sequence testing, with equal weights it rejects
    everything Bonferroni rejects and more. The FWER is at most ``delta`` under any dependence
    (a shortcut of a Bonferroni-based closed test).

    Parameters
    ----------
    pvalues : array-like of shape (g,)
        In the testing order.
    delta : float in (0, 1)
    weights : array-like of shape (g,), optional
        Non-negative, normalised to sum 1; default equal weights.

    Returns
    -------
    ndarray of bool, shape (g,)

    Examples
    --------
    >>> from sklearn_riskcontrol.evalues.testing import fallback
    >>> # levels .025, .025, .05, .075: FST stops at once, Bonferroni (.025) rejects one
    >>> fallback([0.5, 0.02, 0.04, 0.2], delta=0.1).tolist()
    [False, True, True, False]
    """
    p = np.asarray(pvalues, dtype=float)
    g = p.shape[0]
    w = np.full(g, 1.0 / max(g, 1)) if weights is None else np.asarray(weights, dtype=float)
    if w.shape != p.shape or np.any(w < 0) or not np.isfinite(w).all() or w.sum() <= 0:
        raise ValueError("`weights` must hold one non-negative finite weight per p-value, "
                         "with a positive sum.")
    w = w / w.sum()
    # Inside a run of rejections opened at s the level at j is delta (C_j - C_{s-1}), C the
    # cumulative weights; a run opens where p_j <= delta w_j and lasts while p_j <= that level.
    # So the loop is over runs, not over thresholds (the score grid has one per calibration
    # point).
    cum = delta * np.cumsum(w)
    opens = at_most(p, delta * w)
    out = np.zeros(g, dtype=bool)
    start = int(np.argmax(opens)) if opens.any() else g
    while start < g:
        base = cum[start - 1] if start else 0.0
        stops = ~at_most(p[start:], cum[start:] - base)
        end = start + (int(np.argmax(stops)) if stops.any() else g - start)
        out[start:end] = True
        later = np.flatnonzero(opens[end + 1:])
        start = end + 1 + int(later[0]) if later.size else g
    return out
