"""Metrics of online prediction sets (paper Sec. 5): coverage, set size, undercoverage, regret.

Conventions: the set of round ``t`` is ``{y : f(x_t, y) >= tau_t}``; ``alpha`` is the tolerated
miscoverage; the oracle threshold is ``tau* = sup{tau : G*(tau) <= alpha}`` with ``G*`` the CDF
of the true label's score. The miscoverage of a threshold is ``P[s < tau]`` (equal to the
paper's ``G*(tau)`` for continuous scores, and exact under ties). Thresholds may be infinite
(``-inf`` = full set, ``+inf`` = empty set), never NaN; an empty run of thresholds gives an
undercoverage count of 0 and an empty regret curve.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike

from .._validation import (
    _as_1d_float,
    as_float_array,
    check_level,
    check_nonempty,
    check_number,
    check_same_length,
    check_scores,
    show,
)
from .._typing import FloatArray, IntArray

__all__ = [
    "oracle_threshold",
    "coverage_rate",
    "average_set_size",
    "set_sizes",
    "undercoverage_count",
    "cumulative_regret",
]


def _thresholds(values, name="thresholds"):
    arr = _as_1d_float(values, name)
    if np.isnan(arr).any():
        i = int(np.flatnonzero(np.isnan(arr))[0])
        raise ValueError(f"`{name}` contains NaN (first at entry {i}); thresholds may be +-inf.")
    return arr


def oracle_threshold(true_label_scores: ArrayLike, alpha: float) -> float:
    """Oracle threshold ``tau* = sup{tau : G(tau) <= alpha}`` of an empirical score distribution.

    It is the ``k``-th smallest score with ``k = floor(alpha n) + 1``: the largest threshold whose
    set ``{f >= tau}`` misses at most a fraction ``alpha`` of the true labels.

    Parameters
    ----------
    true_label_scores : array-like of shape (n,)
        Scores of the true labels (e.g. of the whole data set, "G* from the full data").
    alpha : float in (0, 1)
        Tolerated miscoverage.

    Returns
    -------
    float

    Examples
    --------
    >>> from sklearn_riskcontrol.online import oracle_threshold
    >>> oracle_threshold([0.1, 0.4, 0.2, 0.9, 0.3], alpha=0.2)
    0.2
    """
    alpha = check_level(alpha, "alpha")
    s = check_scores(true_label_scores, "true_label_scores")
    check_nonempty(s, "true_label_scores", what="score")
    k = math.floor(alpha * len(s)) + 1
    return float(np.partition(s, k - 1)[k - 1])


def coverage_rate(true_label_scores: ArrayLike, thresholds: ArrayLike) -> float:
    """Fraction of rounds whose set contained the true label: ``mean(s_t >= tau_t)``.

    Parameters
    ----------
    true_label_scores : array-like of shape (n_rounds,)
        True label's score at each round.
    thresholds : array-like of shape (n_rounds,)
        Published thresholds (e.g. from :func:`simulate_thresholds`).

    Returns
    -------
    float

    Examples
    --------
    >>> from sklearn_riskcontrol.online import coverage_rate
    >>> coverage_rate([0.5, 0.1, 0.9, 0.3], [float("-inf"), 0.2, 0.2, 0.3])
    0.75
    """
    s = check_scores(true_label_scores, "true_label_scores")
    tau = _thresholds(thresholds)
    check_same_length(true_label_scores=s, thresholds=tau)
    check_nonempty(s, "true_label_scores", what="round")
    return float(np.mean(s >= tau))


def set_sizes(candidate_scores: ArrayLike, thresholds: ArrayLike | float) -> IntArray:
    """Size of each published set: ``#{y : f(x_t, y) >= tau_t}`` for every round ``t``.

    Parameters
    ----------
    candidate_scores : array-like of shape (n_rounds, n_candidates)
        Scores of every candidate label (columns) at each round (rows).
    thresholds : array-like of shape (n_rounds,) or float
        Published thresholds (a single float applies to every round, e.g. ``tau*``).

    Returns
    -------
    ndarray of int, shape (n_rounds,)

    Examples
    --------
    >>> from sklearn_riskcontrol.online import set_sizes
    >>> set_sizes([[0.7, 0.2, 0.1], [0.4, 0.35, 0.25]], [0.15, 0.3])
    array([2, 2])
    """
    S = as_float_array(candidate_scores, "candidate_scores", "a 2-d array of numbers")
    if S.ndim != 2:
        raise ValueError(
            "`candidate_scores` must be 2-d (rows = rounds, columns = candidates); got shape "
            f"{S.shape}."
        )
    if not np.isfinite(S).all():
        raise ValueError("`candidate_scores` must be finite (contains NaN or inf).")
    tau = _thresholds(np.broadcast_to(thresholds, (len(S),)) if np.ndim(thresholds) == 0 else thresholds)
    if S.shape[0] != len(tau):
        raise ValueError(
            f"`candidate_scores` has {S.shape[0]} rows but `thresholds` has {len(tau)} entries; "
            "they must be equal."
        )
    check_nonempty(tau, "thresholds", what="round")
    return np.sum(S >= tau[:, None], axis=1)


def average_set_size(candidate_scores: ArrayLike, thresholds: ArrayLike) -> float:
    """Average number of candidates in the published sets: ``mean_t #{y : f(x_t, y) >= tau_t}``.

    Parameters
    ----------
    candidate_scores : array-like of shape (n_rounds, n_candidates)
        Scores of every candidate label (columns) at each round (rows).
    thresholds : array-like of shape (n_rounds,)
        Published thresholds.

    Returns
    -------
    float

    Examples
    --------
    >>> from sklearn_riskcontrol.online import average_set_size
    >>> average_set_size([[0.7, 0.2, 0.1], [0.4, 0.35, 0.25]], [0.15, 0.3])
    2.0
    """
    return float(np.mean(set_sizes(candidate_scores, thresholds)))


def undercoverage_count(thresholds: ArrayLike, tau_star: float) -> int:
    """Number of rounds whose threshold exceeded the oracle: ``#{t : tau_t > tau*}``.

    Parameters
    ----------
    thresholds : array-like of shape (n_rounds,)
        Published thresholds.
    tau_star : float
        Oracle threshold (e.g. :func:`oracle_threshold` of the full data, or the exact quantile
        of a known distribution).

    Returns
    -------
    int

    Examples
    --------
    >>> from sklearn_riskcontrol.online import undercoverage_count
    >>> undercoverage_count([float("-inf"), 0.1, 0.3, 0.25], tau_star=0.25)
    1
    """
    tau = _thresholds(thresholds)
    if isinstance(tau_star, bool) or not isinstance(tau_star, numbers.Real) or not math.isfinite(tau_star):
        raise TypeError(f"`tau_star` must be a finite real number; got {show(tau_star)}.")
    return int(np.sum(tau > float(tau_star)))


def _miscoverage_function(reference):
    if callable(reference):

        def miscoverage(tau):
            m = np.asarray(reference(tau), dtype=float)
            if m.shape != np.shape(tau) or np.isnan(m).any() or (m < 0).any() or (m > 1).any():
                raise ValueError(
                    "`reference` must map an array of thresholds to miscoverage probabilities "
                    "P[s < tau] in [0, 1] of the same shape."
                )
            return m

        return miscoverage, None
    ref = np.sort(check_scores(reference, "reference"))
    check_nonempty(ref, "reference", what="score")
    n = len(ref)
    return (lambda tau: np.searchsorted(ref, tau, side="left") / n), ref


def cumulative_regret(
    thresholds: ArrayLike,
    reference: ArrayLike | Callable[..., ArrayLike],
    alpha: float,
    *,
    tau_star: float | None = None,
    lambda1: float = 0.1,
    lambda2: float = 10.0,
) -> FloatArray:
    """Cumulative regret of published thresholds under the paper's asymmetric loss.

    ``phi(tau) = -lambda1 |G(tau) - alpha|`` when ``G(tau) <= alpha`` (over-coverage, mild) and
    ``-lambda2 |G(tau) - alpha|`` otherwise (under-coverage, heavy), where ``G(tau) = P[s < tau]``
    is the miscoverage of the set at ``tau``. ``Regret_t = sum_{u <= t} phi(tau*) - phi(tau_u)``.

    Parameters
    ----------
    thresholds : array-like of shape (n_rounds,)
        Published thresholds.
    reference : array-like of shape (n,) or callable
        The score distribution ``G*``: true-label scores of the full data (empirical
        distribution), or a function mapping an array of thresholds to ``P[s < tau]`` (e.g.
        ``scipy.stats.norm.cdf`` for a known continuous distribution).
    alpha : float in (0, 1)
        Tolerated miscoverage.
    tau_star : float, optional
        Oracle threshold. Default: :func:`oracle_threshold` of an array ``reference``; for a
        callable ``reference``, ``phi(tau*) = 0`` (``G*(tau*) = alpha``, the paper's
        Assumption 2.3).
    lambda1, lambda2 : float, default=0.1, 10.0
        Weights of over- and under-coverage (the paper's values).

    Returns
    -------
    ndarray of shape (n_rounds,)
        Cumulative regret after each round.

    Examples
    --------
    >>> from scipy.stats import norm
    >>> from sklearn_riskcontrol.online import cumulative_regret
    >>> tau_star = norm.ppf(0.1)
    >>> regret = cumulative_regret([float("-inf"), tau_star, tau_star + 1], norm.cdf, alpha=0.1)
    >>> [round(float(r), 4) for r in regret]  # 0.1 * 0.1, then + 0, then + 10 * (0.3891 - 0.1)
    [0.01, 0.01, 2.9014]
    """
    alpha = check_level(alpha, "alpha")
    lambda1 = check_number(lambda1, "lambda1", minimum=0)
    lambda2 = check_number(lambda2, "lambda2", minimum=0)
    tau = _thresholds(thresholds)
    miscoverage, ref = _miscoverage_function(reference)

    def phi(m):
        gap = np.abs(m - alpha)
        return -np.where(m <= alpha, lambda1 * gap, lambda2 * gap)

    if tau_star is None and ref is not None:
        tau_star = oracle_threshold(ref, alpha)
    best = 0.0 if tau_star is None else float(phi(miscoverage(np.array([float(tau_star)])))[0])
    return np.cumsum(best - phi(miscoverage(tau)))
