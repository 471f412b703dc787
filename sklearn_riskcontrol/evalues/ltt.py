"""Learn-then-Test p-values that depend on the losses through their sum: the shared core of the
PAC-type (Learn-then-Test) baselines.

Each function gives, for ``n`` independent losses in [0, 1] with sum ``loss_sums``, a p-value of
``H: E[L] > alpha`` (valid when the average mean of the losses exceeds ``alpha``). Learn-then-Test
(Angelopoulos, Bates, Candès, Jordan & Lei, 2021) turns one such p-value per candidate parameter
into a family of certified parameters with a family-wise error rate at most ``delta``
(:func:`~sklearn_riskcontrol.evalues.testing.fixed_sequence`,
:func:`~sklearn_riskcontrol.evalues.testing.fallback`,
:func:`~sklearn_riskcontrol.evalues.testing.bonferroni`); the thresholds of selective deployment
(:func:`sklearn_riskcontrol.selective.threshold_pvalues`) are one use.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import xlogy
from scipy.stats import binom

from .._typing import FloatArray
from .._validation import check_level
from .testing import TIE_RTOL

__all__ = ["hb_pvalues", "binomial_pvalues", "hoeffding_pvalues"]


def _kl_bernoulli(a, b):
    """``h(a, b) = a log(a / b) + (1 - a) log((1 - a) / (1 - b))`` (0 log 0 = 0)."""
    return xlogy(a, a) - xlogy(a, b) + xlogy(1.0 - a, 1.0 - a) - xlogy(1.0 - a, 1.0 - b)


def _counts(total, n):
    """``ceil(total)`` with a relative tie tolerance (sums of 0/1 losses stay integers)."""
    return np.ceil(total - TIE_RTOL * np.maximum(1.0, np.abs(total)))


def hb_pvalues(loss_sums: ArrayLike, n: ArrayLike, alpha: float) -> FloatArray:
    """Hoeffding-Bentkus p-values for ``H: E[L] > alpha`` from ``n`` i.i.d. losses in [0, 1].

    ``p = min(exp(-n h(min(rhat, alpha), alpha)), e P(Binom(n, alpha) <= ceil(n rhat)), 1)``
    with ``rhat = loss_sums / n`` (Bates et al. 2021, Prop. 3); ``p = 1`` when ``n = 0``.

    Parameters
    ----------
    loss_sums : array-like
        Sums of the losses (``n rhat``).
    n : array-like of int, broadcastable with ``loss_sums``
        Numbers of losses.
    alpha : float in (0, 1)

    Returns
    -------
    ndarray of p-values in (0, 1]

    Examples
    --------
    >>> from sklearn_riskcontrol.evalues.ltt import hb_pvalues
    >>> # 2 errors in 400 losses against alpha = 0.03: e * P(Binom(400, 0.03) <= 2) = 0.0012
    >>> hb_pvalues([2.0, 12.0], [400, 400], alpha=0.03).round(4)
    array([0.0012, 1.    ])
    """
    alpha = check_level(alpha, "alpha")
    s, n = np.broadcast_arrays(np.asarray(loss_sums, dtype=float), np.asarray(n, dtype=float))
    nn = np.maximum(n, 1.0)
    rhat = np.minimum(s / nn, alpha)
    hoeff = np.exp(-n * _kl_bernoulli(rhat, alpha))
    bentkus = np.e * binom.cdf(_counts(s, n), n, alpha)
    return np.where(n > 0, np.minimum(np.minimum(hoeff, bentkus), 1.0), 1.0)


def binomial_pvalues(loss_sums: ArrayLike, n: ArrayLike, alpha: float) -> FloatArray:
    """Exact binomial p-values ``P(Binom(n, alpha) <= k)`` for ``H: P(L = 1) > alpha``.

    For *binary* losses the number of errors ``k`` among ``n`` i.i.d. losses is exactly
    ``Binom(n, P(L = 1))``, stochastically smaller under ``H`` than ``Binom(n, alpha)``, so this
    is a valid p-value; it is the Bentkus term of :func:`hb_pvalues` without the factor ``e``
    (which is the price of losses anywhere in [0, 1]). ``p = 1`` when ``n = 0``.

    Examples
    --------
    >>> from sklearn_riskcontrol.evalues.ltt import binomial_pvalues, hb_pvalues
    >>> float(binomial_pvalues(2.0, 400, 0.03).round(5)), float(hb_pvalues(2.0, 400, 0.03).round(5))
    (0.00046, 0.00125)
    """
    alpha = check_level(alpha, "alpha")
    s, n = np.broadcast_arrays(np.asarray(loss_sums, dtype=float), np.asarray(n, dtype=float))
    return np.where(n > 0, binom.cdf(_counts(s, n), n, alpha), 1.0)


def hoeffding_pvalues(loss_sums: ArrayLike, n: ArrayLike, alpha: float) -> FloatArray:
    """Hoeffding p-values ``exp(-2 n (alpha - rhat)_+**2)`` (``1`` when ``n = 0``).

    Examples
    --------
    >>> from sklearn_riskcontrol.evalues.ltt import hoeffding_pvalues
    >>> hoeffding_pvalues([0.0], [100], alpha=0.1).round(4)    # exp(-2)
    array([0.1353])
    """
    alpha = check_level(alpha, "alpha")
    s, n = np.broadcast_arrays(np.asarray(loss_sums, dtype=float), np.asarray(n, dtype=float))
    gap = np.maximum(alpha - s / np.maximum(n, 1.0), 0.0)
    return np.where(n > 0, np.exp(-2.0 * n * gap**2), 1.0)


#: p-values that are functions of ``(loss sum, n)`` only: valid for independent losses whose
#: average mean exceeds ``alpha`` (used by the score grid of ``concentration_threshold``).
PVALUES_OF_SUMS = {"binomial": binomial_pvalues, "hoeffding_bentkus": hb_pvalues,
                   "hoeffding": hoeffding_pvalues}


def zero_loss_count(bound, alpha, level):
    """Fewest losses, all 0, whose ``bound`` p-value (a key of :data:`PVALUES_OF_SUMS`) is at
    most ``level``: fewer points can never reject ``H_t``."""
    # closed forms ((1 - alpha)^n for the binomial and Hoeffding-Bentkus p-values at 0 losses,
    # exp(-2 n alpha^2) for Hoeffding), then the exact first count around them
    if bound == "hoeffding":
        guess = np.log(1.0 / level) / (2.0 * alpha**2)
    else:
        guess = np.log(level) / np.log1p(-alpha)
    counts = np.arange(max(1, int(np.floor(guess)) - 2), int(np.ceil(guess)) + 3)
    ok = PVALUES_OF_SUMS[bound](np.zeros(counts.shape[0]), counts, alpha) <= level
    return int(counts[np.argmax(ok)]) if ok.any() else int(counts[-1])
