"""Synthetic model x example score matrices with a controlled top-2 gap (specs/bandits.md).

The real leaderboard matrices of the PULSE paper are not available offline; this generator
produces matrices with the same structure: an item-response (logistic) model with a rank-``r``
interaction, a guessing floor, a chosen gap between the two best models, and optional side
information (other, weaker models on the same examples).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, DTypeLike
from sklearn.utils import Bunch

from .._validation import check_random_state
from .._typing import FloatArray, RandomStateLike

__all__ = ["make_score_matrix", "accuracy_curve", "budget_to_reach"]


def _draw_rows(rng, u, a, v, b, guess, n_chunk=256):
    """Bernoulli score rows for abilities ``a`` and model factors ``u`` (already scaled)."""
    m, n = u.shape[0], v.shape[0]
    out = np.empty((m, n), dtype=np.int8)
    for s in range(0, m, n_chunk):
        e = min(m, s + n_chunk)
        logit = u[s:e] @ v.T
        logit += a[s:e, None]
        logit += b[None, :]
        p = guess + (1.0 - guess) * (0.5 + 0.5 * np.tanh(0.5 * logit))
        out[s:e] = rng.random((e - s, n)) < p
    return out


def make_score_matrix(
    n_models: int = 1000,
    n_examples: int = 12000,
    *,
    n_side_models: int = 0,
    gap: float = 0.02,
    rank: int = 8,
    decay: float = 0.7,
    easiness_scale: float = 1.8,
    ability_mean: float = -1.3,
    ability_scale: float = 0.9,
    side_ability_mean: float = -1.8,
    guess: float = 0.1,
    dtype: DTypeLike = np.float64,
    random_state: RandomStateLike = None,
) -> Bunch:
    """Binary score matrix of ``n_models`` models on ``n_examples`` examples with a set top-2 gap.

    ``logit[i, j] = a_i + b_j + sum_k s_k u_ik v_jk`` with ``s_k = decay**k`` (k = 0..rank-1),
    ``u, v ~ N(0, 1)``, example easiness ``b_j ~ N(0, easiness_scale^2)``, ability
    ``a_i ~ N(ability_mean, ability_scale^2)`` (``side_ability_mean`` for the side models),
    ``p = guess + (1 - guess) sigmoid(logit)`` and ``S ~ Bernoulli(p)``. The tested models are
    chosen among ``3 n_models`` candidates: the best one is #1, the one whose mean is closest to
    ``mean_1 - gap`` is #2, the next best after #2 fill the rest; bits of #1 are then flipped until
    the gap is exact (up to ``1 / n_examples``), and the rows are shuffled so that the best model
    is never at index 0 (tie-breaking towards low indices would otherwise flatter every method).

    Parameters
    ----------
    n_models, n_examples : int
    n_side_models : int, default=0
        Number of side-information models (independent draws, same examples).
    gap : float, default=0.02
        Mean-score gap between the best and the second-best model.
    rank, decay, easiness_scale, ability_mean, ability_scale, side_ability_mean, guess :
        Generator parameters (see above).
    dtype : dtype, default=np.float64
        Dtype of the returned score matrices.
    random_state : int, RandomState, numpy.random.Generator or None, default=None

    Returns
    -------
    data : Bunch
        ``scores`` (n_models, n_examples), ``side_scores`` (n_side_models, n_examples) or None,
        ``means`` (exact mean of every model), ``best_index``, ``gap`` (realised top-2 gap).

    Examples
    --------
    >>> from sklearn_riskcontrol.bandits import make_score_matrix
    >>> data = make_score_matrix(50, 1000, n_side_models=20, gap=0.02, random_state=0)
    >>> data.scores.shape, data.side_scores.shape
    ((50, 1000), (20, 1000))
    >>> top2 = sorted(data.means)[-2:]
    >>> round(float(top2[1] - top2[0]), 3), int(data.best_index) != 0
    (0.02, True)
    """
    for name, val in (("n_models", n_models), ("n_examples", n_examples)):
        if not isinstance(val, (int, np.integer)) or val < 2:
            raise ValueError(f"`{name}` must be an integer >= 2; got {val!r}.")
    if not isinstance(n_side_models, (int, np.integer)) or n_side_models < 0:
        raise ValueError(f"`n_side_models` must be a non-negative integer; got {n_side_models!r}.")
    if isinstance(gap, bool) or not isinstance(gap, (int, float, np.integer, np.floating)) or not (0 <= gap < 1):
        raise ValueError(f"`gap` must lie in [0, 1); got {gap!r}.")
    if not (0 <= guess < 1):
        raise ValueError(f"`guess` must lie in [0, 1); got {guess!r}.")
    rs = check_random_state(random_state)
    rng = np.random.default_rng(rs.randint(0, 2**32 - 1, dtype=np.uint64))
    m, n = int(n_models), int(n_examples)
    scale = decay ** np.arange(rank)
    v = rng.standard_normal((n, rank))
    b = easiness_scale * rng.standard_normal(n)

    n_cand = 3 * m
    u = rng.standard_normal((n_cand, rank)) * scale
    a = ability_mean + ability_scale * rng.standard_normal(n_cand)
    cand = _draw_rows(rng, u, a, v, b, guess)
    counts = cand.sum(1, dtype=np.int64)
    order = np.argsort(-counts, kind="stable")
    first = order[0]
    target = counts[first] - gap * n
    others = order[1:]
    second = others[np.argmin(np.abs(counts[others] - target))]
    below = others[(counts[others] <= counts[second]) & (others != second)]
    if below.size < m - 2:
        raise ValueError("Not enough candidate models below the second best; lower `gap`.")
    chosen = np.concatenate([[first, second], below[: m - 2]])
    S = cand[chosen].copy()
    del cand
    # flip bits of the best row until the gap is exact
    want = counts[second] + int(round(gap * n))
    if want > n:
        raise ValueError(f"`gap`={gap} is too large for the second-best model's mean.")
    diff = int(S[0].sum()) - want
    if diff > 0:
        ones = np.flatnonzero(S[0] == 1)
        S[0, rng.choice(ones, diff, replace=False)] = 0
    elif diff < 0:
        zeros = np.flatnonzero(S[0] == 0)
        S[0, rng.choice(zeros, -diff, replace=False)] = 1
    perm = rng.permutation(m)
    S = S[perm]
    best = int(np.flatnonzero(perm == 0)[0])
    if best == 0:
        other = int(rng.integers(1, m))
        S[[0, other]] = S[[other, 0]]
        best = other
    means = S.mean(1, dtype=np.float64)
    side = None
    if n_side_models:
        us = rng.standard_normal((n_side_models, rank)) * scale
        as_ = side_ability_mean + ability_scale * rng.standard_normal(n_side_models)
        side = _draw_rows(rng, us, as_, v, b, guess).astype(dtype)
    top2 = np.sort(means)[-2:]
    return Bunch(
        scores=S.astype(dtype),
        side_scores=side,
        means=means,
        best_index=best,
        gap=float(top2[1] - top2[0]),
    )


def accuracy_curve(
    histories: Sequence[Any], best_index: int, budgets: ArrayLike
) -> tuple[FloatArray, FloatArray]:
    """Probability of having identified the best model, as a function of the budget.

    Parameters
    ----------
    histories : list of dict or fitted strategies
        ``history_`` of independent runs (or the fitted strategies themselves).
    best_index : int
        Index of the truly best model.
    budgets : array-like of int
        Numbers of evaluations at which to evaluate the curve.

    Returns
    -------
    accuracy : ndarray of shape (len(budgets),)
        Fraction of runs whose best model after at most ``budget`` evaluations is ``best_index``
        (a run counts as wrong before its first recorded step).
    stderr : ndarray of shape (len(budgets),)
        Binomial standard error of ``accuracy``.

    Examples
    --------
    >>> from sklearn_riskcontrol.bandits import accuracy_curve
    >>> h1 = {"n_evaluations": [10, 20, 30], "best_index": [0, 1, 1]}
    >>> h2 = {"n_evaluations": [10, 20, 30], "best_index": [1, 0, 1]}
    >>> accuracy_curve([h1, h2], 1, [5, 10, 20, 30])[0]
    array([0. , 0.5, 0.5, 1. ])
    """
    budgets = np.asarray(budgets)
    hits = np.zeros(budgets.shape, dtype=float)
    runs = list(histories)
    if not runs:
        raise ValueError("`histories` is empty.")
    for h in runs:
        h = getattr(h, "history_", h)
        ev = np.asarray(h["n_evaluations"])
        bi = np.asarray(h["best_index"])
        k = np.searchsorted(ev, budgets, side="right") - 1
        ok = (k >= 0) & (bi[np.maximum(k, 0)] == best_index)
        hits += ok
    acc = hits / len(runs)
    return acc, np.sqrt(acc * (1 - acc) / len(runs))


def budget_to_reach(
    histories: Sequence[Any], best_index: int, level: float = 0.95, budgets: ArrayLike | None = None
) -> float:
    """Smallest budget from which the accuracy curve stays at or above ``level``.

    Returns ``np.inf`` when the level is not reached within the recorded budgets.

    Examples
    --------
    >>> from sklearn_riskcontrol.bandits import budget_to_reach
    >>> h1 = {"n_evaluations": [10, 20, 30], "best_index": [0, 1, 1]}
    >>> h2 = {"n_evaluations": [10, 20, 30], "best_index": [1, 0, 1]}
    >>> int(budget_to_reach([h1, h2], 1, level=0.9))
    30
    """
    runs = [getattr(h, "history_", h) for h in histories]
    if budgets is None:
        budgets = np.unique(np.concatenate([np.asarray(h["n_evaluations"]) for h in runs]))
    budgets = np.asarray(budgets)
    acc, _ = accuracy_curve(runs, best_index, budgets)
    below = np.flatnonzero(acc < level)
    if below.size == 0:
        return float(budgets[0])
    if below[-1] + 1 >= budgets.size:
        return np.inf
    return float(budgets[below[-1] + 1])
