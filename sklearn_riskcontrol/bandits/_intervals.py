"""Anytime-valid betting confidence sequences for means of finite pools sampled without replacement.

Construction (Waudby-Smith & Ramdas, "Confidence sequences for sampling without replacement",
NeurIPS 2020, Sec. 3; bets of Waudby-Smith & Ramdas, "Estimating means of bounded random
variables by betting", JRSS-B 2024, eq. (26)). A pool of ``n`` examples has scores in [0, 1] and
mean ``mu``. Examples are drawn one at a time, uniformly without replacement from the ``N_k``
examples not drawn yet. Draw ``k`` yields a residual ``r_k = S_k - lambda_k Sh_k`` in a known
range ``[a_k, a_k + w_k]``, where the weight ``lambda_k`` and predictions ``Sh`` are fixed before
the draw (``lambda_k = 0`` for plain means). Given the past, ``r_k`` is uniform over the remaining
pool, whose mean of residuals, if the pool mean is ``m``, is

    rho_k(m) = (n m - off_k) / N_k,   off_k = sum_{O_k} S + lambda_k sum_{U_k} Sh

(``O_k``, ``U_k``: drawn / not drawn before draw ``k``). This is the WoR-adjusted mean
``(N m - sum_{i<k} X_i) / (N - k + 1)`` of the paper for ``lambda = 0``; for PULSE it is the
AIPW identity (Lemma 1 of PULSE) applied to one draw. On the normalised scale
``y_k = (r_k - a_k) / w_k``, ``nu_k(m) = (rho_k(m) - a_k) / w_k`` in [0, 1], the capital processes

    K_t^+(m) = prod_{k<=t} (1 + beta_k (y_k - nu_k(m))),
    K_t^-(m) = prod_{k<=t} (1 - beta_k (y_k - nu_k(m)))

with predictable bets ``beta_k in [0, c]``, ``c < 1``, are non-negative martingales at the true
mean (each factor has conditional mean 1), so by Ville's inequality, with probability at least
``1 - alpha``, ``K_t^+(mu) < 2 / alpha`` and ``K_t^-(mu) < 2 / alpha`` for all ``t`` at once (the
hedged capital process with ``theta = 1/2``). The confidence sequence is the running
intersection

    C_t = {m in D_t : max_{s<=t} K_s^+(m) < 2 / alpha  and  max_{s<=t} K_s^-(m) < 2 / alpha},

where ``D_t`` are the values of ``m`` for which every ``nu_k(m)``, ``k <= t``, lies in [0, 1] (and
the final observed sum is compatible with scores in [0, 1]); ``mu`` is in ``D_t`` surely. With
bets that do not depend on ``m``, ``K^+`` decreases and ``K^-`` increases in ``m`` on ``D_t``, so
``C_t`` is an interval whose ends are found by bisection, vectorised over models (O(draws) per
bisection step). The bets are the predictable plug-in
``beta_k = min(c, s sqrt(2 log(2 / alpha) / (sigma2_{k-1} k log(1 + k))))`` (``s = 2``, chosen by
measurement; WSR use ``s = 1``) with
``sigma2_k = (1/4 + sum_{i<=k} (y_i - ybar_i)^2) / (k + 1)``,
``ybar_i = (1/2 + sum_{j<=i} y_j) / (i + 1)``.

Validity does not depend on how many draws a model gets or when the run stops: the argument only
uses that each model's next example is uniform over its remaining pool given everything seen so
far, which holds for UCB-E's and PULSE's batches (uniformly random permutations, revealed in
order, whatever the adaptive choice of model), and the bets, predictions and ``lambda`` are fixed
before each draw.
"""

from __future__ import annotations

from numbers import Real

import numpy as np
from numpy.typing import ArrayLike
from sklearn.utils._param_validation import Interval

from .._typing import BoolArray
from .._validation import as_float_array, check_level, check_number, warn

__all__ = ["wor_betting_interval"]

_BET_CAP = 0.75  # c: the largest fraction of the capital bet (WSR 2024 use 1/2 or 3/4)
# Multiplier of WSR's anytime plug-in bet. Any predictable bets keep the sequence valid; at the
# spec's size (1000 x 12,000, 80,000 evaluations, level .05/1000 per model) twice WSR's bet
# gave 10-20% narrower final intervals for the best models and never wider ones
# (CHANGELOG.md and benchmarks/RESULTS.md, "bet scale").
_BET_SCALE = 2.0
_N_BISECT = 45  # bisection steps: the ends are exact to 2^-45 of the feasible range


def _segment_ids(lens):
    return np.repeat(np.arange(lens.size), lens)


def _segment_cumsum(x, starts, seg):
    cs = np.cumsum(x)
    base = np.concatenate([[0.0], cs])[starts]
    return cs - base[seg]


def _bets(y, starts, seg, pos, alpha):
    """Predictable plug-in bets (WSR 2024, eq. 26 with the anytime ``k log(1 + k)`` scaling),
    times ``_BET_SCALE``."""
    t = pos + 1.0  # 1-based index of the draw within its model
    ybar = (0.5 + _segment_cumsum(y, starts, seg)) / (t + 1.0)
    ss = _segment_cumsum((y - ybar) ** 2, starts, seg)
    prev = ss - (y - ybar) ** 2  # sum up to the previous draw
    sigma2 = (0.25 + prev) / t  # sigma2_{k-1} = (1/4 + sum_{i<k} ...) / k
    with np.errstate(divide="ignore"):
        beta = _BET_SCALE * np.sqrt(2.0 * np.log(2.0 / alpha) / (sigma2 * t * np.log1p(t)))
    return np.minimum(beta, _BET_CAP)


def _max_log_capital(sign, beta, y, A, B, m, starts, seg, nonempty_starts):
    """``max_{s<=t} log K_s^{sign}(m)`` per model (``t`` = all its draws; 0 for ``s = 0``).

    With several streams (rows of ``y``), ``K`` is their average (a mixture of martingales).
    """
    nu = A * m[seg] - B
    with np.errstate(divide="ignore", invalid="ignore"):
        lf = np.log1p(sign * beta * (y - nu))
    cs = np.vstack([_segment_cumsum(row, starts, seg) for row in lf])
    if cs.shape[0] > 1:
        top = cs.max(0)
        cs = top + np.log(np.exp(cs - top).mean(0))
    else:
        cs = cs[0]
    return np.maximum(np.maximum.reduceat(cs, nonempty_starts), 0.0)


def betting_intervals(r, a, w, off, N, pool, lens, alpha, det_lo=None, det_hi=None):
    """Ends of the betting confidence sequences of several models at their last draw.

    Parameters (draws of all models concatenated model by model, in the order drawn)
    ----------
    r, a, w, off : ndarray of shape (D,) or (n_streams, D)
        Residual, lower end and width of its range and offset ``off_k`` (see the module
        docstring). Several streams (e.g. plain scores and AIPW residuals of the same draws)
        are bet on separately and their capitals averaged: the average of martingales is one.
    N : ndarray of shape (D,)
        Remaining pool size ``N_k >= 1`` before the draw.
    pool : ndarray of shape (M,)
        Pool size ``n`` of each model.
    lens : ndarray of int of shape (M,)
        Number of draws of each model (``sum(lens) == D``).
    alpha : float or ndarray of shape (M,)
        Miscoverage of each confidence sequence (``alpha / 2`` per side).
    det_lo, det_hi : ndarray of shape (M,), default=None
        Further bounds that hold surely (intersected with the sequence).

    Returns
    -------
    lower, upper : ndarray of shape (M,)
        ``[0, 1]`` for a model without draws.
    """
    lens = np.asarray(lens, dtype=np.int64)
    M = lens.size
    alpha = np.broadcast_to(np.asarray(alpha, dtype=float), (M,))
    lower = np.zeros(M) if det_lo is None else np.array(det_lo, dtype=float)
    upper = np.ones(M) if det_hi is None else np.array(det_hi, dtype=float)
    keep = lens > 0
    if not keep.any():
        return lower, upper
    starts_all = np.concatenate([[0], np.cumsum(lens)[:-1]])
    seg = _segment_ids(lens)  # model of each draw
    pos = np.arange(seg.size) - starts_all[seg]
    idx = np.flatnonzero(keep)
    # empty models contribute no draw, so the reduceat starts of the others are their starts
    nz_starts = starts_all[idx]
    r, a, w, off = (np.atleast_2d(np.asarray(v, dtype=float)) for v in (r, a, w, off))
    y = np.clip((r - a) / w, 0.0, 1.0)
    beta = np.vstack([_bets(row, starts_all, seg, pos, alpha[seg]) for row in y])
    A = pool[seg] / (N * w)  # nu_k(m) = A m - B
    B = (off + N * a) / (N * w)
    # feasible set D_t: every nu_k(m) in [0, 1], for every stream
    lo = np.maximum(lower, np.zeros(M))
    hi = np.minimum(upper, np.ones(M))
    # (computed as (off + N a) / n, and widened by 1e-12 against rounding: the bounds given by
    # the caller, e.g. the exact mean of a fully scored model, are not rounded)
    feas_lo = ((off + N * a) / pool[seg]).max(0)
    feas_hi = ((off + N * (a + w)) / pool[seg]).min(0)
    lo[idx] = np.maximum(lo[idx], np.maximum.reduceat(feas_lo, nz_starts) - 1e-12)
    hi[idx] = np.minimum(hi[idx], np.minimum.reduceat(feas_hi, nz_starts) + 1e-12)
    hi = np.maximum(hi, lo)  # equal only if the data contradict the model (never at the truth)
    thr = np.log(2.0 / alpha)

    def g(sign, m):
        out = np.zeros(M)
        out[idx] = _max_log_capital(sign, beta, y, A, B, m, starts_all, seg, nz_starts)
        return out

    # lower end: K^+ decreases in m; reject m while max log K^+ >= thr
    L_lo, L_hi = lo.copy(), hi.copy()
    rej_lo = g(1.0, L_lo) >= thr
    rej_hi = g(1.0, L_hi) >= thr
    # upper end: K^- increases in m
    U_lo, U_hi = lo.copy(), hi.copy()
    rejU_hi = g(-1.0, U_hi) >= thr
    rejU_lo = g(-1.0, U_lo) >= thr
    for _ in range(_N_BISECT):
        mid = 0.5 * (L_lo + L_hi)
        r_mid = g(1.0, mid) >= thr
        L_lo = np.where(r_mid, mid, L_lo)
        L_hi = np.where(r_mid, L_hi, mid)
        mid = 0.5 * (U_lo + U_hi)
        r_mid = g(-1.0, mid) >= thr
        U_hi = np.where(r_mid, mid, U_hi)
        U_lo = np.where(r_mid, U_lo, mid)
    # conservative ends: the last rejected value below / above the accepted ones
    lower_end = np.where(~rej_lo, lo, np.where(rej_hi, hi, L_lo))
    upper_end = np.where(~rejU_hi, hi, np.where(rejU_lo, lo, U_hi))
    lower_end = np.where(keep, lower_end, lo)
    upper_end = np.where(keep, upper_end, hi)
    return lower_end, np.maximum(upper_end, lower_end)


def wor_betting_interval(x, population_size, delta=0.05):
    """Anytime-valid betting confidence interval for the mean of a finite population.

    ``x`` are the first draws, uniformly *without replacement*, from a population of
    ``population_size`` values in [0, 1]. With probability at least ``1 - delta`` the population
    mean lies in the returned interval after every prefix of the draws at once, so the interval
    stays valid when the number of draws was chosen by looking at the data. It is the running
    intersection of the hedged betting confidence sequence of Waudby-Smith & Ramdas (2020) with
    predictable plug-in bets; after all ``population_size`` draws it is the exact mean.

    Parameters
    ----------
    x : array-like of shape (t,)
        The values drawn, in the order drawn, in [0, 1].
    population_size : int
        Number of values in the population (``>= t``).
    delta : float in (0, 1), default=0.05
        Miscoverage.

    Returns
    -------
    lower, upper : float

    References
    ----------
    I. Waudby-Smith, A. Ramdas, "Confidence sequences for sampling without replacement",
    NeurIPS 2020.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_riskcontrol.bandits._intervals import wor_betting_interval
    >>> rng = np.random.default_rng(0)
    >>> pool = (rng.uniform(size=1000) < 0.7).astype(float)
    >>> x = rng.permutation(pool)[:400]            # 40% of the pool, drawn without replacement
    >>> lo, hi = wor_betting_interval(x, 1000, delta=0.05)
    >>> bool(lo <= pool.mean() <= hi), round(hi - lo, 3)   # covers w.p. >= 0.95; this draw
    (True, 0.126)
    """
    x = as_float_array(x, "x", "a 1-d array of values in [0, 1]")
    if x.ndim != 1:
        raise ValueError(f"`x` must be 1-d; got shape {x.shape}.")
    if not np.all((x >= 0) & (x <= 1)):
        raise ValueError("`x` must lie in [0, 1] (and contain no NaN).")
    n = check_number(population_size, "population_size", integer=True, minimum=1)
    if x.size > n:
        raise ValueError(
            f"`x` has {x.size} draws but `population_size`={n}: draws without replacement "
            "cannot outnumber the population."
        )
    delta = check_level(delta, "delta")
    t = x.size
    cs = np.cumsum(x)
    off = cs - x
    det_lo = np.array([cs[-1] / n if t else 0.0])
    det_hi = np.array([(cs[-1] + n - t) / n if t else 1.0])
    lo, hi = betting_intervals(
        x, np.zeros(t), np.ones(t), off, n - np.arange(t, dtype=float), np.array([float(n)]),
        np.array([t]), delta, det_lo, det_hi,
    )
    return float(lo[0]), float(hi[0])


class DrawLog:
    """What each model's draws need beyond their scores: per batch ``lambda``, ``F`` and range.

    Plain-mean strategies (UCB-E) need no log: their draws have ``lambda = 0``. PULSE logs every
    batch (``lambda = 0`` and no predictions for the warm-up).
    """

    def __init__(self, m):
        self.batch = [[] for _ in range(m)]  # per batch: (b, lam, F, sh_lo, sh_hi)
        self.sh = [[] for _ in range(m)]  # per batch: predictions of the drawn examples

    def add(self, i, b, lam, F, sh_lo, sh_hi, Sh):
        self.batch[i].append((b, lam, F, sh_lo, sh_hi))
        self.sh[i].append(np.asarray(Sh, dtype=float))


def draws_of(st, scores, rows, log=None, plain=True):
    """Concatenated per-draw arrays ``r, a, w, off, N`` and ``lens`` for models ``rows``.

    The draws of model ``i`` are its scored examples in the order drawn (``st.observed(i)``);
    ``scores`` holds the bought scores (``oracle.cached_scores_``). With a PULSE ``log`` the
    draws give AIPW residuals; with ``plain=True`` the plain scores are a second stream.
    """
    cols = [st.observed(i) for i in rows]
    lens = np.fromiter((c.size for c in cols), dtype=np.int64, count=len(cols))
    if lens.sum() == 0:
        z = np.zeros(0)
        return z, z, z, z, z, lens
    rr = np.repeat(np.asarray(rows, dtype=np.int64), lens)
    x = scores[rr, np.concatenate(cols)]
    starts = np.concatenate([[0], np.cumsum(lens)[:-1]])
    seg = _segment_ids(lens)
    pos = np.arange(x.size) - starts[seg]
    N = st.n_avail[rows][seg] - pos.astype(float)
    s_before = _segment_cumsum(x, starts, seg) - x  # sum over O_k of the scores
    if log is None:
        return x, np.zeros(x.size), np.ones(x.size), s_before, N, lens
    # per-batch quantities of the logged batches, repeated over their draws
    recs = [rec for i in rows for rec in log.batch[i]]
    tab = np.array(recs, dtype=float).reshape(-1, 5)
    bsz = tab[:, 0].astype(np.int64)
    Sh = np.concatenate([s for i in rows for s in log.sh[i]] or [np.zeros(0)])
    if bsz.sum() != x.size:  # pragma: no cover - bookkeeping guard
        raise RuntimeError("PULSE's draw log does not match its scored examples.")
    bseg = _segment_ids(bsz)
    bstarts = np.concatenate([[0], np.cumsum(bsz)[:-1]])
    lam, F, sh_lo, sh_hi = (tab[bseg, k] for k in (1, 2, 3, 4))
    sh_before = _segment_cumsum(Sh, bstarts, bseg) - Sh  # predictions drawn earlier in the batch
    r = x - lam * Sh
    a = -lam * sh_hi
    w = 1.0 + lam * (sh_hi - sh_lo)
    off = s_before + lam * (F - sh_before)
    if not plain:
        return r, a, w, off, N, lens
    # two streams on the same draws: plain scores (lambda = 0) and AIPW residuals
    one = np.ones(x.size)
    return (np.vstack([x, r]), np.vstack([0.0 * one, a]), np.vstack([one, w]),
            np.vstack([s_before, off]), N, lens)


# An interval is "vacuous" when it spans at least this share of the score range: a betting
# interval after two of 1297 draws is [0.0008, 0.9992], valid bookkeeping but no information.
VACUOUS_SHARE = 0.99


def vacuous_intervals(ci: ArrayLike, low: float = 0.0, high: float = 1.0) -> BoolArray:
    """Which confidence intervals span (nearly) the whole score range and so say next to nothing.

    An interval is vacuous when it covers at least 99% of ``[low, high]``: e.g. a model's
    interval after two of 1,297 draws is ``[0.0008, 0.9992]``, valid bookkeeping but no
    information. The command line and the demo flag such intervals instead of printing them
    as if they were estimates.

    Parameters
    ----------
    ci : array-like of shape (n_models, 2)
        Lower and upper ends, e.g. ``PULSE(...).fit(S).confidence_intervals(0.05)``.
    low, high : float, default=0.0, 1.0
        The range of the scores.

    Returns
    -------
    ndarray of bool, shape (n_models,)

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_riskcontrol.bandits import vacuous_intervals
    >>> vacuous_intervals(np.array([[0.0, 1.0], [0.2, 1.0], [0.0008, 0.9992]]))
    array([ True, False,  True])
    """
    ci = np.asarray(ci, dtype=float)
    return ci[:, 1] - ci[:, 0] >= VACUOUS_SHARE * (high - low)


def warn_vacuous(ci, counts, delta):
    """Warn (RiskControlWarning) when some intervals span (nearly) the whole range [0, 1]."""
    vacuous = vacuous_intervals(ci)
    if vacuous.any():
        lo, hi = int(counts[vacuous].min()), int(counts[vacuous].max())
        evals = f"{lo}" if lo == hi else f"{lo} to {hi}"
        warn(
            f"{int(vacuous.sum())} of {ci.shape[0]} confidence intervals at delta={delta:g} are "
            "vacuous: they span at least 99% of the score range [0, 1] (models with "
            f"{evals} evaluations each). The width "
            "shrinks like 1 / sqrt(evaluations of the model): raise `budget` (UCB-E spends it "
            "on the best contenders, so models that look weak stay wide by design), use a "
            "larger `delta`, or pass simultaneous=False if one model at a time is enough."
        )


_STOP_DOC = """\
    stop_when_certified : bool, default=False
        Stop before the budget is spent as soon as the best model is *certified*: its lower
        confidence bound exceeds every other model's upper bound, with the simultaneous betting
        intervals at level ``delta`` (``confidence_intervals(delta, method="betting")``). The
        intervals are anytime-valid, so stopping on them is valid: the certified model is the
        best with probability at least ``1 - delta``. Checked about every 0.5% of the budget
        (at most 200 times per run).
    delta : float in (0, 1), default=0.05
        Failure probability of the certificate (only used with ``stop_when_certified=True``)."""

_STOP_ATTRS_DOC = """\
    certified_best_ : int or None
        With ``stop_when_certified=True``: the certified best model (the best with probability
        at least ``1 - delta``), or -1 if the budget ran out first; None otherwise.
    n_evaluations_saved_ : int
        Evaluations of the budget left unspent because the best model was certified (0 if not
        certified or not requested)."""


class _CertifyMixin:
    """Betting confidence intervals and the certified-best stopping rule for uniform-WoR bandits.

    The strategy must draw every example through ``st.draw_uniform`` (uniform without replacement
    from the model's unscored examples) and may set ``st.draw_log`` (a :class:`DrawLog`) when its
    draws carry predictions (PULSE).
    """

    _stop_constraints = {
        "stop_when_certified": ["boolean"],
        "delta": [Interval(Real, 0, 1, closed="neither")],
    }
    _N_CHECKS = 200

    def _betting_ci(self, st, rows, alpha):
        r, a, w, off, N, lens = draws_of(st, self.oracle_.cached_scores_, rows,
                                          getattr(st, "draw_log", None))
        counts, n_av = st.counts[rows], st.n_avail[rows].astype(float)
        sums = st.sums[rows]
        with np.errstate(divide="ignore", invalid="ignore"):
            det_lo = np.where(n_av > 0, sums / n_av, 0.0)
            det_hi = np.where(n_av > 0, (sums + n_av - counts) / n_av, 1.0)
        lo, hi = betting_intervals(r, a, w, off, N, n_av, lens, alpha, det_lo, det_hi)
        return np.column_stack([lo, hi])

    def _betting_intervals_all(self, st, delta, simultaneous):
        rows = np.arange(st.m)
        return self._betting_ci(st, rows, delta / (st.m if simultaneous else 1))

    def _stop_now(self, st):
        if not self.stop_when_certified:
            return False
        nxt = getattr(st, "cert_next", 0)
        if st.n_used < nxt:
            return False
        st.cert_next = st.n_used + max(1, -(-st.budget // self._N_CHECKS))
        cache = getattr(st, "cert_cache", None)
        if cache is None or cache[0] != self.delta:
            cache = st.cert_cache = (self.delta, np.full(st.m, -1), np.tile([0.0, 1.0], (st.m, 1)))
        _, seen, ci = cache
        todo = np.flatnonzero(seen != st.counts)
        if todo.size:
            ci[todo] = self._betting_ci(st, todo, self.delta / st.m)
            seen[todo] = st.counts[todo]
        best = certified_best(ci, st.n_avail > 0)
        st.cert_best = best
        return best >= 0

    def _set_certificate(self, st):
        if not self.stop_when_certified:
            self.certified_best_ = None
            self.n_evaluations_saved_ = 0
            return
        best = int(getattr(st, "cert_best", -1))
        self.certified_best_ = best
        self.n_evaluations_saved_ = int(st.budget - st.n_used) if best >= 0 else 0


def certified_best(ci, valid=None):
    """Index of the model whose lower bound exceeds every other upper bound, else -1.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_riskcontrol.bandits._intervals import certified_best
    >>> certified_best(np.array([[0.2, 0.4], [0.5, 0.7], [0.1, 0.45]]))
    1
    >>> certified_best(np.array([[0.2, 0.55], [0.5, 0.7]]))
    -1
    """
    ci = np.asarray(ci, dtype=float)
    if valid is not None:
        ci = np.where(np.asarray(valid)[:, None], ci, -np.inf)
    if ci.shape[0] == 1:
        return 0
    i = int(np.argmax(ci[:, 0]))
    others = np.delete(ci[:, 1], i)
    return i if ci[i, 0] > others.max() else -1
