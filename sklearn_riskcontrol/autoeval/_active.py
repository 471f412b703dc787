"""Active labeling: choose which rows of a pool to label, certify the pool's risk sooner.

The target is the risk over a **finite pool**: the mean of the true losses of the ``N`` items
whose judge losses are given (``R = sum_i h_i / N``). Labels are drawn from the pool without
replacement; the null ``H0: R >= alpha`` is rejected ("certified", ``R < alpha``) when an
e-process crosses ``1 / delta``. Uniform sampling (one stratum, the plain random order) is the
special case ``K = 1``.

Stratified union-intersection e-process
    The pool is split into ``K`` strata with known sizes ``N_k`` (weights ``w_k = N_k / N``): the
    judge's verdict (0/1 judges), bins of the judge's loss (probability judges) or user strata.
    The idea is that of Spertus & Stark (2022), *Sweeter than SUITE: supermartingale stratified
    union-intersection tests of elections*: ``H0`` is the union over null allocations
    ``mu = (mu_1..mu_K)`` with ``sum_k w_k mu_k >= alpha`` of the intersections
    ``cap_k {mean of stratum k >= mu_k}``; each stratum runs its own without-replacement betting
    e-process for each ``mu_k`` and the test statistic is the smallest product over the null
    allocations. Each stratum bets in its own units (losses in [0, 1]), so a rarely sampled
    stratum of nearly-sure items costs no bet range: the weights ``1 / pi`` of an
    importance-weighted bet never appear.

    Stratum ``k``, null mean ``x``: after ``c`` labels of the stratum with sum ``S``, the next
    label ``h`` (an item drawn uniformly from the stratum's unlabeled items) has conditional mean
    at least ``m(x) = (N_k x - S) / (N_k - c)`` under ``mean_k >= x``. The wealth ``W_k(x)`` is
    the mean over 20 constant bets ``lam_j = max_bet (j + 1/2) / 20`` of
    ``prod (1 + lam_j (m(x) - h))`` (a mixture of test supermartingales, like a discretised
    universal portfolio), a factor being 1 while ``m(x) <= 0`` (the null then holds surely).
    Where a factor is used, ``m(x) > 0`` and ``h <= 1`` make it positive. Once
    ``x > (S + N_k - c) / N_k`` (the largest stratum mean the labels allow) the null
    ``mean_k >= x`` is false and its wealth is ``+inf``.

    Null grid: ``x_{k,i} = i alpha / (G w_k)``, ``i = 0..I_k`` (``G = grid_size``) up to
    ``min(1, alpha / w_k)``. The statistic is
    ``log E = min { sum_k log W_k(x_{k,i_k}) : sum_k i_k >= G - K + 1 }`` (a min-plus convolution
    of the suffix minima of the ``log W_k``, vectorised).

Validity (Ville)
    Under ``H0`` let ``mu*`` be the strata's true means and ``mu' = mu* alpha / R`` (so
    ``sum w mu' = alpha``, ``mu' <= mu*``, ``mu'_k <= min(1, alpha / w_k)``). With ``i*_k`` the
    grid cell of ``mu'_k`` (``x_{k,i*} <= mu'_k < x_{k,i*+1}``), ``alpha < sum_k (i*_k + 1)
    alpha / G``, so the tuple ``i*`` is in the minimum and ``E_t <= prod_k W_k(x_{k,i*_k})``.
    Each ``W_k(x_{k,i*_k})`` bets on a true null (``x_{k,i*} <= mu*_k``) with predictable bets,
    and whichever stratum is labeled next (chosen from the judge and the past labels only, then
    an item drawn uniformly within it) multiplies the product by a factor of conditional mean at
    most 1: the product is a test supermartingale, and by Ville's inequality
    ``P(exists t: E_t >= 1 / delta) <= delta``. This holds whatever the judge (adversarial
    judges included), the allocation rule and the stopping time; the judge only changes how fast
    a pool with ``R < alpha`` is certified. The grid costs at most ``(K - 1) alpha / G`` of risk.

Allocation (``sampling="active"``)
    Before each batch of proposals the shares ``p`` of the strata are fixed from the judge and
    the labels so far: ``p = (1 - floor) q + floor w``, where ``q`` maximises (exponentiated
    gradient ascent) the smallest, over the null allocations not yet ruled out, of
    ``sum_k q_k r_k(x_k)``, ``r_k(x)`` the expected log-growth of one label of stratum ``k``
    at null ``x`` (second-order, from the stratum's label mean and variance with the judge's
    mean loss in the stratum as a prior worth two labels). Each proposal goes to the stratum
    furthest behind its share (counting all proposals so far), then to a row drawn uniformly
    among the stratum's rows never proposed. The rule only changes efficiency: validity
    needs no property of it beyond predictability.
"""

from __future__ import annotations

import hashlib
import math
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from .._results import ResultMixin
from .._typing import FloatArray
from .._validation import check_indices, check_level, check_number, check_risks
from ..evaluation._store import EvaluationRecord, EvaluationStore, as_store
from ._sessions import LabelingStatus, _Session

if TYPE_CHECKING:
    import os

__all__ = ["ActiveLabelingSession", "ActiveLabelingStatus"]

_MIN_SHARE = 0.03  # judge strata smaller than this share of the pool are merged
_N_BETS = 20  # constant bets mixed (uniformly) in each stratum's wealth
_CELLS = 2_000_000  # floats per block of time steps in the min-plus combination


# --------------------------------------------------------------------------------------------
# Array layer: the stratified without-replacement e-process
# --------------------------------------------------------------------------------------------
def _null_grid(weights, alpha, grid_size):
    """Null means ``x_{k,i} = i alpha / (G w_k)`` per stratum, up to ``min(1, alpha / w_k)``."""
    step = alpha / (grid_size * np.asarray(weights, dtype=float))
    tops = np.minimum(1.0, alpha / np.asarray(weights, dtype=float))
    return [np.arange(math.ceil(top / s - 1e-9) + 1) * s for s, top in zip(step, tops)]


class _Stratum:
    """Without-replacement betting wealth of one stratum at every null mean of its grid."""

    def __init__(self, size, grid, max_bet, n_bets):
        self.N = int(size)
        self.x = grid
        self.max_bet = max_bet
        self.c = 0  # labels so far
        self.S = 0.0  # their sum
        self.Q = 0.0  # sum of squared deviations from the running mean estimate
        self.lams = max_bet * (np.arange(n_bets) + 0.5) / n_bets
        self.log_wl = np.where(grid[:, None] > 1.0, np.inf, np.zeros((grid.size, n_bets)))
        self.log_w = self._mix(self.log_wl)

    def _mix(self, log_wl):
        """log of the mean wealth over the bets (uniform mixture), on the last axis."""
        top = log_wl.max(axis=-1, keepdims=True)
        safe = np.where(np.isfinite(top), top, 0.0)
        with np.errstate(invalid="ignore"):
            out = safe[..., 0] + np.log(np.exp(log_wl - safe).mean(axis=-1))
        return np.where(np.isinf(top[..., 0]), np.inf, out)

    def extend(self, h):
        """Add labels ``h`` (in draw order); returns the log-wealth after each, shape
        ``(len(h), len(grid))``."""
        n = h.size
        c = self.c + np.arange(n)  # labels before each new one
        S_before = self.S + np.cumsum(h) - h
        mhat = (0.5 + S_before) / (c + 1)
        dev = (h - mhat) ** 2
        m = (self.N * self.x[None, :] - S_before[:, None]) / (self.N - c)[:, None]
        # bet only while the null's conditional mean m is positive (else the null holds surely)
        gain = np.where(m > 0, m - h[:, None], 0.0)
        steps = np.log1p(self.lams * gain[:, :, None])
        path_l = self.log_wl + np.cumsum(steps, axis=0)
        upper = (S_before + h + self.N - c - 1) / self.N  # largest stratum mean still possible
        path_l[self.x[None, :] > upper[:, None] + 1e-12] = np.inf
        self.c += n
        self.S += float(h.sum())
        self.Q += float(dev.sum())
        self.log_wl = path_l[-1].copy()
        path = self._mix(path_l)
        self.log_w = path[-1].copy()
        return path

    def bound(self, r, max_bet):
        """Largest log-wealth reachable with at most ``r`` more labels of this stratum."""
        r = min(r, self.N - self.c)
        reach = self.x > (self.S + self.N - self.c - r) / self.N + 1e-12
        return np.where(reach, np.inf, self.log_w + r * math.log1p(max_bet))


def _suffix_min(L):
    return np.minimum.accumulate(L[..., ::-1], axis=-1)[..., ::-1]


def _combine(logs, target):
    """``min { sum_k L_k[..., i_k] : sum_k i_k >= target }`` for arrays ``L_k`` of shape
    ``(T, I_k + 1)``; returns shape ``(T,)``."""
    M = [_suffix_min(L) for L in logs]
    F = M[0][:, : target + 1]
    if F.shape[1] < target + 1:  # indices beyond I_0: unreachable alone
        F = np.concatenate([F, np.full((F.shape[0], target + 1 - F.shape[1]), np.inf)], axis=1)
    s = np.arange(target + 1)
    for Mk in M[1:-1]:
        i = np.arange(Mk.shape[1])
        j = s[:, None] - i[None, :]  # F[s - i] + Mk[i] for s - i >= 0
        ok = j >= 0
        vals = np.where(ok[None], F[:, np.clip(j, 0, None)] + Mk[:, None, :], np.inf)
        F = vals.min(axis=2)
    if len(M) == 1:
        return F[:, target]
    Mk = M[-1]
    i = np.arange(min(Mk.shape[1], target + 1))
    return (F[:, target - i] + Mk[:, i]).min(axis=1)


def _minimizer(logs, target):
    """Grid indices ``(i_1..i_K)`` of a tuple attaining :func:`_combine` for 1-d ``L_k``."""
    idx = []
    for L in logs:  # suffix minimum and where it is attained
        rev = np.minimum.accumulate(L[::-1])[::-1]
        # where the suffix minimum is attained: the next j >= i with L[j] == rev[j]
        pos = np.where(L <= rev, np.arange(L.size), L.size)
        at = np.minimum.accumulate(pos[::-1])[::-1]
        idx.append((rev, at))
    # F_k[s]: best exact sum s over the first k strata; keep the choice of stratum k
    F = np.full(target + 1, np.inf)
    n0 = min(idx[0][0].size, target + 1)
    F[:n0] = idx[0][0][:n0]
    choices = []
    for rev, _ in idx[1:]:
        s = np.arange(target + 1)[:, None]
        i = np.arange(rev.size)[None, :]
        vals = np.where(s - i >= 0, F[np.clip(s - i, 0, None)] + rev[None, :], np.inf)
        choices.append(vals.argmin(axis=1))
        F = vals.min(axis=1)
    out, s = [], target
    for k in range(len(logs) - 1, 0, -1):
        i = int(choices[k - 1][s])
        out.append(i)
        s -= i
    out.append(s)
    out = out[::-1]
    return [int(idx[k][1][i]) for k, i in enumerate(out)]


def _growth_rate(m, mean, var, max_bet):
    """Expected log-growth of one label at null conditional mean ``m`` when the stratum's
    losses have ``mean`` and ``var`` (second-order approximation, bet clipped to max_bet)."""
    d = np.maximum(m - mean, 0.0)
    lam = np.minimum(d / (var + d * d + 1e-12), max_bet)
    return lam * d - lam ** 2 * (var + d * d) / 2


def _maxmin_shares(rates, target, start=None, n_iter=12, offsets=None, horizon=1.0):
    """Shares ``p`` (on the simplex) maximising ``min { sum_k o_k[i_k] + H p_k r_k[i_k] :
    sum i_k >= target }`` (a concave function of ``p``; ``o_k`` the current log-wealths,
    ``H`` the horizon in labels): exponentiated-gradient ascent with averaging, the gradient
    being the rates at the minimising tuple."""
    K = len(rates)
    if offsets is None:
        offsets = [np.zeros(r.size) for r in rates]
    p = np.full(K, 1.0 / K) if start is None else start.copy()
    avg = np.zeros(K)
    scale = max(float(np.nanmax([np.max(r[np.isfinite(r)], initial=0.0) for r in rates])),
                1e-12)
    for t in range(n_iter):  # loop over ascent steps (each vectorised over the grid)
        at = _minimizer([offsets[k] + horizon * p[k] * rates[k] for k in range(K)], target)
        grad = np.array([rates[k][at[k]] for k in range(K)])
        grad = np.where(np.isfinite(grad), grad, scale)
        p = p * np.exp(2.0 * grad / scale / math.sqrt(t + 1))
        p /= p.sum()
        avg += p
    return avg / n_iter


def _combine_chunked(logs, target):
    T = logs[0].shape[0]
    # the middle strata's min-plus steps hold (chunk, target + 1, I_k + 1) floats
    big = max([L.shape[1] for L in logs[1:-1]], default=1) * (target + 1)
    chunk = max(1, _CELLS // big)
    return np.concatenate([_combine([L[a : a + chunk] for L in logs], target)
                           for a in range(0, T, chunk)]) if T else np.empty(0)


class _StratifiedEProcess:
    """The combined e-process over ``K`` strata; ``extend`` takes labels in draw order."""

    def __init__(self, sizes, alpha, grid_size, max_bet, n_bets=_N_BETS):
        sizes = np.asarray(sizes, dtype=float)
        self.weights = sizes / sizes.sum()
        self.alpha = alpha
        self.max_bet = max_bet
        self.target = grid_size - sizes.size + 1
        self.strata = [_Stratum(n, g, max_bet, n_bets)
                       for n, g in zip(sizes, _null_grid(self.weights, alpha, grid_size))]

    def extend(self, h, k):
        """Labels ``h`` of strata ``k`` (arrays, draw order); returns ``log E`` after each."""
        T = h.size
        logs = []
        for j, st in enumerate(self.strata):
            mine = k == j
            before = st.log_w[None]
            path = st.extend(h[mine]) if mine.any() else np.empty((0, st.x.size))
            rows = np.concatenate([before, path])  # row r: after r labels of this stratum
            logs.append(rows[np.cumsum(mine)])
        return _combine_chunked(logs, self.target) if T else np.empty(0)

    def bound(self, r):
        """Upper bound on ``log E`` after at most ``r`` more labels, whatever they are."""
        return float(_combine([s.bound(r, self.max_bet)[None] for s in self.strata],
                              self.target)[0])


def _stratified_log_eprocess(h, strata, sizes, alpha, *, grid_size=200, max_bet=0.9):
    """``log E_t`` after each label of the stratified without-replacement e-process.

    ``h``: losses in the order drawn; ``strata``: the stratum (0..K-1) of each; ``sizes``: the
    strata's sizes in the pool. The draws must be uniform within their stratum among its
    unlabeled items, the stratum of each draw chosen from the past only.
    """
    proc = _StratifiedEProcess(sizes, alpha, grid_size, max_bet)
    return proc.extend(np.asarray(h, dtype=float), np.asarray(strata, dtype=int))


# --------------------------------------------------------------------------------------------
# Strata and allocation
# --------------------------------------------------------------------------------------------
def _judge_strata(g, n_strata, min_share=_MIN_SHARE):
    """Strata from the judge: its verdict for 0/1 judges, else ``n_strata`` quantile bins of
    its loss (fewer when the judge takes fewer values); a stratum holding less than
    ``min_share`` of the pool is merged into its neighbour (in judge order)."""
    values = np.unique(g)
    if values.size <= n_strata:
        ids = np.searchsorted(values, g)
    else:
        edges = np.unique(np.quantile(g, np.arange(1, n_strata) / n_strata))
        ids = np.searchsorted(edges, g, side="left")  # bin j: edges[j-1] < g <= edges[j]
    ids = np.unique(ids, return_inverse=True)[1]
    sizes = list(np.bincount(ids))
    groups = [[k] for k in range(len(sizes))]
    while len(sizes) > 1 and min(sizes) < min_share * g.size:  # loop over strata
        j = int(np.argmin(sizes))
        nb = j - 1 if j == len(sizes) - 1 or (j > 0 and sizes[j - 1] < sizes[j + 1]) else j + 1
        lo, hi = min(j, nb), max(j, nb)
        sizes[lo:hi + 1] = [sizes[lo] + sizes[hi]]
        groups[lo:hi + 1] = [groups[lo] + groups[hi]]
    relabel = np.empty(ids.max() + 1, dtype=int)
    for new, members in enumerate(groups):
        relabel[members] = new
    return relabel[ids]


def _user_strata(strata, N):
    arr = np.asarray(strata)
    if arr.ndim != 1 or arr.shape[0] != N:
        raise ValueError(f"`strata` must have one stratum label per pool row, shape ({N},); "
                         f"got shape {arr.shape}.")
    labels, ids = np.unique(arr, return_inverse=True)
    return ids, labels


def _digest(*arrays):
    h = hashlib.sha256()
    for a in arrays:
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()[:16]


# --------------------------------------------------------------------------------------------
# Status and session
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True, repr=False)
class ActiveLabelingStatus(ResultMixin):
    """Verdict of an :class:`ActiveLabelingSession` after the labels used so far.

    The guarantee is about the procedure: if the risk over the pool is at least ``alpha``, the
    session ends ``certified`` with probability at most ``delta`` (over its random draws),
    however many rows were proposed at a time and whenever the labeling stopped.

    Attributes
    ----------
    n_labels : int
        Labels used by the e-process (labels of proposed rows, in the order proposed; a label
        waits while an earlier proposal is unlabeled).
    certified : bool
        The e-process reached ``1 / delta``: the risk over the pool is below ``alpha``.
    impossible : bool
        Not certified, and no labels of the rows left within ``max_labels`` can certify: the
        e-process's largest reachable value (each stratum's wealth grows by at most a factor
        ``1 + max_bet`` per label, or without bound once its labels can exhaust a null) is
        below ``1 / delta``.
    stopping_index : int or None
        0-based label count at the first crossing (``stopping_index + 1`` labels were needed).
    pvalue : float
        Anytime-valid p-value ``min(1, 1 / max_t E_t)``.
    log_evalue : float
        ``max_t log E_t`` so far (0 before any label).
    log_evalue_bound : float
        Upper bound on the log e-value reachable within the budget (see ``impossible``).
    labels_per_stratum : tuple of int
        Labels used in each stratum.
    max_labels : int
    alpha, delta : float
    """

    n_labels: int
    certified: bool
    impossible: bool
    stopping_index: object
    pvalue: float
    log_evalue: float
    log_evalue_bound: float
    labels_per_stratum: tuple
    max_labels: int
    alpha: float
    delta: float

    # the verdict's properties are LabelingStatus's (same fields, same meaning)
    decision = LabelingStatus.decision
    done = LabelingStatus.done
    remaining_budget = LabelingStatus.remaining_budget

    def __repr__(self):
        return (f"ActiveLabelingStatus(decision={self.decision!r}, n_labels={self.n_labels}, "
                f"pvalue={self.pvalue:.4g}, max_labels={self.max_labels})")

    def __str__(self):
        head = (f"Active labeling after {self.n_labels} labels (alpha={self.alpha:g}, "
                f"delta={self.delta:g}): ")
        if self.certified:
            return head + (
                f"certified pool risk < {self.alpha:g} after {self.stopping_index + 1} labels "
                f"(p-value {self.pvalue:.3g}); stop labeling. A pool with risk >= alpha is "
                f"certified this way with probability at most {self.delta:g}.")
        if self.impossible:
            return head + (f"certification is impossible within the budget of "
                           f"{self.max_labels} labels; stop labeling.")
        return head + f"not certified yet (p-value {self.pvalue:.3g}); label more."


_PROPOSED, _LABEL = "proposed", "label"


class ActiveLabelingSession:
    """Propose which pool rows to label and certify the pool's risk with few labels.

    Give it the judge's losses on the whole pool; ask :meth:`propose` for the next rows to
    label, label them, give the losses to :meth:`add`; stop when the status is ``done``. The
    rows are drawn without replacement, stratum by stratum: strata where the judge is nearly
    sure are labeled little, strata where it is unsure (or where labels show it errs) a lot.

    **What is certified**: the risk over the pool, ``R = mean of the true losses of the N rows
    of loss_judge`` (a finite population, labels sampled without replacement), is below
    ``alpha``. The test is anytime valid (Ville's inequality): if ``R >= alpha``, the session
    is ever ``certified`` with probability at most ``delta``, whatever the judge (a judge that
    is sure and wrong, or strata chosen to mislead, only costs labels), however many rows are
    proposed at a time and whenever labeling stops, because the next stratum is chosen from the
    judge and past labels only and the row uniformly within it. The e-process is a stratified
    union-intersection test of without-replacement betting e-processes (Spertus & Stark 2022,
    *Sweeter than SUITE*); see :mod:`sklearn_riskcontrol.autoeval._active` for the construction
    and proof.

    Parameters
    ----------
    loss_judge : array-like of shape (N,)
        The judge's losses in [0, 1] on every row of the pool (0/1 verdicts, or the judge's
        probability that the model errs).
    alpha : float in (0, 1)
        Tolerated risk.
    delta : float in (0, 1)
        Probability of certifying a pool whose risk is at least ``alpha``.
    max_labels : int
        Label budget (at most ``N``); needed for the ``impossible`` verdict.
    sampling : {"active", "uniform"}, default="active"
        ``"active"``: stratified; each stratum's share of the labels goes where labels are
        expected to add most evidence (from the judge and the labels so far), with a floor.
        ``"uniform"``: one stratum, the rows in plain random order (the judge is not used).
    strata : array-like of shape (N,), default=None
        User strata (any labels, one per row; sizes are counted from it). ``None``: strata
        from the judge, its verdict for 0/1 judges, else ``n_strata`` quantile bins of its loss;
        a judge stratum with less than 3% of the pool is merged into its neighbour (a tiny
        stratum could hide much of the risk, and ruling that out costs labels; with no
        stratum left to merge into, the session samples uniformly).
    n_strata : int, default=3
        Number of judge bins for probability judges.
    floor : float in (0, 1], default=0.5
        Share of the proportional allocation mixed into the active allocation: stratum ``k``
        gets at least ``floor * N_k / N`` of the labels, so every stratum keeps being sampled.
    grid_size : int, default=200
        Points of the grid over null allocations (the grid costs at most
        ``(K - 1) alpha / grid_size`` of risk).
    max_bet : float in (0, 1), default=0.9
        Largest bet fraction of a stratum's e-process.
    store : str, path-like or EvaluationStore, default=None
        Where proposals and labels are recorded (a path opens a
        :class:`~sklearn_riskcontrol.evaluation.SQLiteStore`), each before it is used. A new
        session opened on the same store with the same configuration continues the run: it
        never re-proposes a labeled row and proposes the rows still waiting for a label first.
    random_state : int, numpy Generator or None, default=None
        Randomness of the draws within strata.

    Attributes
    ----------
    status_ : ActiveLabelingStatus
        Verdict after the labels so far (also returned by :meth:`add`).
    strata_ : ndarray of shape (N,)
        Stratum (0..K-1) of each pool row.
    stratum_sizes_ : ndarray of shape (K,)
        Rows per stratum.
    proposed_ : ndarray
        Rows proposed so far, in order.
    probabilities_ : ndarray
        For each proposed row, the share of labels its stratum was allocated when it was
        proposed.
    log_eprocess_ : ndarray
        ``log E_t`` after each label used.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_riskcontrol.autoeval import ActiveLabelingSession
    >>> rng = np.random.default_rng(0)
    >>> N = 3000                                  # a calibrated judge: 2/3 nearly sure
    >>> sure = rng.random(N) < 2 / 3
    >>> p_err = np.where(sure, rng.uniform(0, 0.01, N), rng.uniform(0.1, 0.5, N))
    >>> truth = (rng.random(N) < p_err).astype(float)   # true losses (labels reveal them)
    >>> session = ActiveLabelingSession(p_err, alpha=0.15, delta=0.1, max_labels=1000,
    ...                                 random_state=0)
    >>> while not session.status_.done:
    ...     rows = session.propose(20)               # label these rows...
    ...     status = session.add(rows, truth[rows])  # ...and give their losses
    >>> status.decision, status.n_labels <= 300
    ('certified', True)
    """

    def __init__(
        self,
        loss_judge: ArrayLike,
        *,
        alpha: float,
        delta: float,
        max_labels: int,
        sampling: str = "active",
        strata: ArrayLike | None = None,
        n_strata: int = 3,
        floor: float = 0.5,
        grid_size: int = 200,
        max_bet: float = 0.9,
        store: str | os.PathLike[str] | EvaluationStore | None = None,
        random_state: Any = None,
    ) -> None:
        g = check_risks(loss_judge, "loss_judge")
        N = g.size
        if N == 0:
            raise ValueError("`loss_judge` is empty: give the judge's loss on every pool row.")
        self.alpha = check_level(alpha, "alpha")
        self.delta = check_level(delta, "delta")
        self.max_labels = check_number(max_labels, "max_labels", integer=True, minimum=1)
        if self.max_labels > N:
            raise ValueError(f"`max_labels`={self.max_labels} exceeds the pool's {N} rows: "
                             f"pass max_labels <= {N}.")
        if sampling not in ("active", "uniform"):
            raise ValueError(f"`sampling` must be 'active' or 'uniform'; got {sampling!r}.")
        self.sampling = sampling
        n_strata = check_number(n_strata, "n_strata", integer=True, minimum=1)
        self.floor = check_level(floor, "floor", high=1.0 + 1e-12)
        grid_size = check_number(grid_size, "grid_size", integer=True, minimum=10)
        self.max_bet = check_level(max_bet, "max_bet")
        if sampling == "uniform":
            if strata is not None:
                raise ValueError("`strata` needs sampling='active'; sampling='uniform' draws "
                                 "from the whole pool.")
            ids, self.strata_labels_ = np.zeros(N, dtype=int), np.array([0])
        elif strata is not None:
            ids, self.strata_labels_ = _user_strata(strata, N)
        else:
            ids = _judge_strata(g, n_strata)
            self.strata_labels_ = np.arange(ids.max() + 1)
        self.strata_ = ids
        self.stratum_sizes_ = np.bincount(ids)
        K = self.stratum_sizes_.size
        if grid_size < K:
            raise ValueError(f"`grid_size`={grid_size} must be at least the number of strata {K}.")
        # the judge's variance prior per stratum (a calibrated judge's loss is P(error))
        gbar = np.bincount(ids, weights=g) / self.stratum_sizes_
        self._prior_mean = gbar
        self._prior_var = gbar * (1 - gbar)
        self._proc = _StratifiedEProcess(self.stratum_sizes_, self.alpha, grid_size,
                                         self.max_bet)
        self._g = g
        self._seed = random_state if isinstance(random_state, (int, np.integer)) else None
        self._rng = (random_state if isinstance(random_state, np.random.Generator)
                     else np.random.default_rng(random_state))
        self._queue = []       # proposed rows, in order
        self._probs = []       # their stratum's allocated share
        self._labels = {}      # row -> loss
        self._used = 0         # labels fed to the e-process (a prefix of the queue)
        self._in_queue = np.zeros(N, dtype=bool)
        self._log_path = np.empty(0)
        self._share = None
        self._store = as_store(store)
        if self._store is not None:
            config = {"kind": "ActiveLabelingSession", "format": 1, "alpha": self.alpha,
                      "delta": self.delta, "max_labels": self.max_labels,
                      "sampling": sampling, "floor": self.floor, "grid_size": grid_size,
                      "max_bet": self.max_bet, "pool": _digest(g, ids), "N": int(N)}
            self._store.open(config)
            self._load()

    # ------------------------------------------------------------------ state
    def _load(self):
        proposed, labels = [], {}
        for rec in self._store.records():
            if rec.model == _PROPOSED:
                proposed.append((int(rec.example), rec.score))
            elif rec.model == _LABEL:
                labels[int(rec.example)] = rec.score
        if proposed:
            rows = np.array([r for r, _ in proposed])
            self._enqueue(rows, [p for _, p in proposed], save=False)
        if labels:
            self._record(np.array(list(labels)), np.array(list(labels.values())), save=False)

    def _enqueue(self, rows, probs, save=True):
        if save and self._store is not None:
            now = time.time()
            self._store.put_many([EvaluationRecord(_PROPOSED, str(int(r)), float(p), None, now)
                                  for r, p in zip(rows, probs)])
        self._queue.extend(int(r) for r in rows)
        self._probs.extend(float(p) for p in probs)
        self._in_queue[rows] = True

    def _record(self, rows, losses, save=True):
        if save and self._store is not None:
            now = time.time()
            self._store.put_many([EvaluationRecord(_LABEL, str(int(r)), float(v), None, now)
                                  for r, v in zip(rows, losses)])
        self._labels.update(zip((int(r) for r in rows), (float(v) for v in losses)))
        start = self._used
        end = start
        while end < len(self._queue) and self._queue[end] in self._labels:
            end += 1
        end = min(end, self.max_labels)
        if end > start:
            new = np.array(self._queue[start:end])
            h = np.array([self._labels[r] for r in new])
            path = self._proc.extend(h, self.strata_[new])
            self._log_path = np.concatenate([self._log_path, path])
            self._used = end

    def _allocation(self):
        """Share of the labels allocated to each stratum (from the judge and the labels used
        so far): ``floor`` of the proportional allocation; the rest maximises the smallest
        expected log-growth over the null allocations the e-process has not yet ruled out."""
        w = self.stratum_sizes_ / self.stratum_sizes_.sum()
        if w.size == 1:
            return w
        rates = []
        for k, s in enumerate(self._proc.strata):  # loop over strata
            if s.c >= s.N:  # exhausted: its mean is known, no label can add evidence
                r = np.zeros(s.x.size)
            else:
                m = (s.N * s.x - s.S) / (s.N - s.c)
                # the stratum's mean and variance: its labels, the judge as a prior worth 2
                mean = (2 * self._prior_mean[k] + s.S) / (2 + s.c)
                var = (2 * self._prior_var[k] + s.Q + 0.25) / (s.c + 3)
                r = _growth_rate(m, mean, var, self.max_bet)
            rates.append(np.where(np.isfinite(s.log_w), r, np.inf))
        # warm start from the previous shares (floored so that no stratum is locked out)
        start = None if self._share is None else 0.9 * self._share + 0.1 / w.size
        horizon = max(20.0, float(self._used))  # plan for as many labels again
        offsets = [s.log_w for s in self._proc.strata]
        share = self._share = _maxmin_shares(rates, self._proc.target, start,
                                             offsets=offsets, horizon=horizon)
        return (1 - self.floor) * share + self.floor * w

    # ------------------------------------------------------------------ public API
    def propose(self, k: int) -> np.ndarray:
        """The next ``k`` pool rows to label (indices into ``loss_judge``).

        Rows proposed earlier and still waiting for a label come first (so a call repeated
        after a crash returns the same rows); new rows are then drawn: the stratum furthest
        behind its allocated share (a function of the judge and the labels received before
        this call), then a row uniformly at random among the stratum's rows never proposed.
        A labeled row is never proposed again.

        Parameters
        ----------
        k : int
            Number of rows wanted; at most the labels left in the budget.

        Returns
        -------
        ndarray of shape (k,) of int

        Examples
        --------
        >>> from sklearn_riskcontrol.autoeval import ActiveLabelingSession
        >>> s = ActiveLabelingSession([0, 1, 0, 0, 1, 0], alpha=0.5, delta=0.1, max_labels=6,
        ...                           random_state=0)
        >>> rows = s.propose(2)
        >>> bool((s.propose(2) == rows).all())   # not labeled yet: proposed again
        True
        """
        k = check_number(k, "k", integer=True, minimum=1)
        left = self.max_labels - len(self._labels)
        if k > left:
            raise ValueError(
                f"`k`={k} is more than the {left} labels left in the budget "
                f"(max_labels={self.max_labels}, {len(self._labels)} labeled): ask for at "
                f"most {left} rows.")
        waiting = [r for r in self._queue[self._used:] if r not in self._labels][:k]
        n_new = k - len(waiting)
        if n_new:
            budget_rows = self.max_labels - len(self._queue)
            if n_new > budget_rows:
                raise ValueError(
                    f"{len(self._queue) - len(self._labels)} proposed rows still wait for a "
                    f"label and the budget allows only {budget_rows} new proposals; label the "
                    f"waiting rows first (propose({len(waiting)}) returns them).")
            self._enqueue(*self._draw(n_new))
        return np.array(waiting + self._queue[len(self._queue) - n_new:], dtype=np.int64)

    def _draw(self, n):
        p = self._allocation()
        K = p.size
        counts = np.bincount(self.strata_[np.array(self._queue, dtype=int)], minlength=K)
        counts = counts.astype(float)
        free = ~self._in_queue
        cands = [np.flatnonzero(free & (self.strata_ == j)) for j in range(K)]
        left = np.array([c.size for c in cands])
        total = float(len(self._queue))
        rng = (np.random.default_rng([self._seed, len(self._queue)]) if self._seed is not None
               else self._rng)
        rows, probs, taken = [], [], np.zeros(K, dtype=int)
        for _ in range(n):  # loop over the batch's proposals (choice of stratum), not samples
            deficit = np.where(taken < left, p * (total + 1) - counts, -np.inf)
            k = int(np.argmax(deficit))
            j = int(rng.integers(left[k] - taken[k]))
            pool = cands[k]
            # draw without replacement: swap the chosen row to the end of the candidates
            last = left[k] - taken[k] - 1
            pool[j], pool[last] = pool[last], pool[j]
            rows.append(int(pool[last]))
            probs.append(p[k])
            taken[k] += 1
            counts[k] += 1
            total += 1
        return np.array(rows, dtype=np.int64), probs

    def add(self, indices: ArrayLike, loss_labeled: ArrayLike) -> ActiveLabelingStatus:
        """Record the losses of proposed rows and return the verdict.

        Parameters
        ----------
        indices : array-like of shape (b,) of int
            Pool rows, each proposed by :meth:`propose`. A row already labeled with the same
            loss (a batch re-sent after a crash) is skipped; with another loss it is an error.
        loss_labeled : array-like of shape (b,)
            Their true losses, in [0, 1].

        Returns
        -------
        ActiveLabelingStatus
            Labels are used in the order the rows were proposed: a label waits while an
            earlier proposed row is unlabeled.
        """
        idx = check_indices(indices, "indices", self.strata_.size)
        h = check_risks(loss_labeled, "loss_labeled")
        if h.size != idx.size:
            raise ValueError(f"`loss_labeled` has {h.size} entries but `indices` has "
                             f"{idx.size}: give one loss per row.")
        if np.unique(idx).size != idx.size:
            raise ValueError("`indices` contains a row more than once; give each row once.")
        if not self._in_queue[idx].all():
            bad = int(idx[~self._in_queue[idx]][0])
            raise ValueError(f"Row {bad} was never proposed: label only rows returned by "
                             "`propose` (labels of rows chosen otherwise void the guarantee).")
        new = []
        for j, r in enumerate(idx.tolist()):  # loop over the batch's rows (dictionary look-up)
            old = self._labels.get(r)
            if old is None:
                new.append(j)
            elif abs(old - h[j]) > 1e-12:
                raise ValueError(f"Row {r} is already labeled with loss {old:g} (given "
                                 f"{h[j]:g}); a session never changes a recorded label.")
        if new:
            self._record(idx[new], h[new])
        return self.status_

    @property
    def status_(self) -> ActiveLabelingStatus:
        """:class:`ActiveLabelingStatus` after the labels used so far."""
        path = self._log_path
        log_thr = math.log(1 / self.delta)
        hits = np.flatnonzero(path >= log_thr)
        best = float(max(path.max(), 0.0)) if path.size else 0.0
        certified = hits.size > 0
        r = min(self.max_labels, self.strata_.size) - self._used
        bound = max(best, self._proc.bound(r))
        return ActiveLabelingStatus(
            n_labels=self._used, certified=certified,
            impossible=(not certified) and bound < log_thr,
            stopping_index=int(hits[0]) if certified else None,
            pvalue=float(min(1.0, math.exp(-best))), log_evalue=best, log_evalue_bound=bound,
            labels_per_stratum=tuple(int(s.c) for s in self._proc.strata),
            max_labels=self.max_labels, alpha=self.alpha, delta=self.delta)

    @property
    def proposed_(self) -> np.ndarray:
        return np.array(self._queue, dtype=np.int64)

    @property
    def probabilities_(self) -> FloatArray:
        return np.array(self._probs)

    @property
    def log_eprocess_(self) -> FloatArray:
        return self._log_path.copy()

    @property
    def n_labels(self) -> int:
        """Labels used by the e-process."""
        return self._used

    def __repr__(self):
        return (f"ActiveLabelingSession(sampling={self.sampling!r}, alpha={self.alpha:g}, "
                f"delta={self.delta:g}, n_labels={self.n_labels}, "
                f"max_labels={self.max_labels}, decision={self.status_.decision!r})")

    # the store's life cycle is LabelingSession's (same attribute ``_store``)
    close = _Session.close
    __enter__ = _Session.__enter__
    __exit__ = _Session.__exit__
