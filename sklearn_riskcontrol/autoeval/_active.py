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

Model selection (``loss_judge`` of shape ``(N, K)``)
    One label of a row gives the true loss of every candidate on it. The strata are shared
    (user strata, or judge strata of the candidates' mean judge loss), and each candidate ``c``
    runs the e-process above on its own losses, at level ``delta`` (fixed sequence, in the order
    given) or ``delta / K`` (Bonferroni). A row is drawn uniformly within a stratum chosen from
    the judge and the past labels of *all* candidates: predictable for each candidate's
    filtration (the shared past), so each candidate's product is a test supermartingale under
    its own null ``R_c >= alpha`` and its anytime p-value ``1 / max_t E_{c,t}`` is valid at
    any stopping time; fixed-sequence testing and Bonferroni on valid p-values control the
    family-wise error at ``delta``. The allocation is the mean of the allocations of the
    candidates the selection still waits for (fixed sequence: the first undecided one;
    Bonferroni: the undecided ones that would be preferred to the current selection).
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
from ._sessions import LabelingStatus, SelectionStatus, _select, _Session

if TYPE_CHECKING:
    import os

__all__ = ["ActiveLabelingSession", "ActiveLabelingStatus", "ActiveSelectionStatus"]

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


@dataclass(frozen=True, repr=False)
class ActiveSelectionStatus(SelectionStatus):
    """Verdict of an :class:`ActiveLabelingSession` selecting among ``K`` candidates.

    Over the session's random draws, with probability at least ``1 - delta`` every certified
    candidate has risk over the pool below ``alpha`` (family-wise), whenever the labeling
    stopped. The fields are :class:`SelectionStatus`'s, plus the budget and ``alpha``.

    Attributes
    ----------
    n_labels : int
        Labels used (one per row: it gives every candidate's loss on the row).
    certified : ndarray of bool, shape (K,)
        Candidates certified by the selection procedure (fixed sequence: the certified
        prefix, in the order given).
    impossible : ndarray of bool, shape (K,)
        Candidates that can no longer be certified within the budget (fixed sequence: also
        every candidate after one that cannot).
    selected : int or None
        Certified candidate with the smallest cost (``None`` if none).
    final : bool
        The selection can no longer change: no candidate that could still be certified would
        be preferred to ``selected``; stop labeling.
    labels_needed : None
        No forecast of the labels still needed (always ``None``).
    candidates : tuple of ActiveLabelingStatus
        Per-candidate status at the candidate's test level.
    procedure : str
        ``"fst"`` or ``"bonferroni"``.
    delta : float
        Family-wise error.
    test_level : float
        Each candidate's level: ``delta`` (fixed sequence) or ``delta / K`` (Bonferroni).
    max_labels : int
    alpha : float
    """

    max_labels: int
    alpha: float

    @property
    def done(self) -> bool:
        """``final``: the loop condition shared with :class:`ActiveLabelingStatus`."""
        return bool(self.final)

    def __str__(self):
        head = (f"Active selection after {self.n_labels} labels (alpha={self.alpha:g}, "
                f"family-wise delta={self.delta:g}, {self.procedure}): ")
        cert = np.flatnonzero(self.certified).tolist()
        sel = ("no candidate certified" if self.selected is None else
               f"candidates {cert} certified (pool risk < {self.alpha:g}), "
               f"candidate {self.selected} selected")
        tail = ("; the selection is final, stop labeling." if self.final
                else "; label more (a preferred candidate is still undecided).")
        return head + sel + tail


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

    **Model selection**: with ``loss_judge`` of shape ``(N, K)`` (the judge's losses of ``K``
    candidates on the same pool) one label per row gives every candidate's true loss
    (``loss_labeled`` of shape ``(b, K)``), and the session certifies each candidate's pool
    risk below ``alpha`` with family-wise error at most ``delta``, as
    :class:`SelectionSession` does: ``procedure="fst"`` tests the candidates in the order given
    (each at level ``delta``, a candidate certified only if all before it are),
    ``"bonferroni"`` each at ``delta / K``; the certified candidate of smallest ``cost`` is
    selected (:class:`ActiveSelectionStatus`). Validity: each candidate's e-process is valid for
    its own pool risk at any stopping time whatever the (predictable) choice of rows, so its
    anytime p-value is valid and the fixed sequence or Bonferroni on these p-values keeps the
    family-wise error below ``delta`` whenever labeling stops. The next rows serve the
    candidates still undecided (fixed sequence: the first one; Bonferroni: those that would be
    preferred to the current selection). ``K = 1`` with a 1-d ``loss_judge`` is the
    single-model session.

    Parameters
    ----------
    loss_judge : array-like of shape (N,) or (N, K)
        The judge's losses in [0, 1] on every row of the pool (0/1 verdicts, or the judge's
        probability that the model errs); one column per candidate for a selection.
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
        from the judge (in a selection: from the candidates' mean judge loss), its verdict for
        0/1 judges, else ``n_strata`` quantile bins of its loss;
        a judge stratum with less than 3% of the pool is merged into its neighbour (a tiny
        stratum could hide much of the risk, and ruling that out costs labels; with no
        stratum left to merge into, the session samples uniformly).
    procedure : {"fst", "bonferroni"}, default="fst"
        Selection only: fixed-sequence testing in the order given, or Bonferroni.
    cost : array-like of shape (K,), default=None
        Selection only: the certified candidate of smallest cost is selected (ties to the
        lowest index); ``None``: the last certified candidate in the order given.
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
    status_ : ActiveLabelingStatus or ActiveSelectionStatus
        Verdict after the labels so far (also returned by :meth:`add`);
        :class:`ActiveSelectionStatus` in a selection.
    n_candidates : int
        ``K`` (1 for a 1-d ``loss_judge``).
    delta_test_ : float
        Each candidate's test level: ``delta``, or ``delta / K`` for Bonferroni.
    strata_ : ndarray of shape (N,)
        Stratum (0..K-1) of each pool row.
    stratum_sizes_ : ndarray of shape (K,)
        Rows per stratum.
    proposed_ : ndarray
        Rows proposed so far, in order.
    probabilities_ : ndarray
        For each proposed row, the share of labels its stratum was allocated when it was
        proposed.
    log_eprocess_ : ndarray of shape (n_labels,), or (n_labels, K) in a selection
        ``log E_t`` after each label used (per candidate).

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

    Model selection among three candidates (bigger to smaller), the same pool:

    >>> P = np.stack([p_err / 2, p_err, np.minimum(1, 3 * p_err)], axis=1)
    >>> H = (rng.random(N)[:, None] < P).astype(float)    # one label: every candidate's loss
    >>> select = ActiveLabelingSession(P, alpha=0.15, delta=0.1, max_labels=400,
    ...                                random_state=0)
    >>> while not select.status_.done:                   # done: the selection is final
    ...     rows = select.propose(20)
    ...     status = select.add(rows, H[rows])
    >>> H.mean(axis=0).round(3).tolist(), status.certified.tolist(), status.selected
    ([0.048, 0.104, 0.274], [True, True, False], 1)
    >>> # labels at which each candidate was certified; candidate 2 (risk above alpha) is
    >>> # ruled out only once the labels left cannot certify it, near the end of the budget
    >>> [c.stopping_index for c in status.candidates], status.n_labels
    ([42, 131, None], 400)
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
        procedure: str = "fst",
        cost: ArrayLike | None = None,
        n_strata: int = 3,
        floor: float = 0.5,
        grid_size: int = 200,
        max_bet: float = 0.9,
        store: str | os.PathLike[str] | EvaluationStore | None = None,
        random_state: Any = None,
    ) -> None:
        raw = np.asarray(loss_judge)
        self._multi = raw.ndim == 2
        if self._multi:  # model selection: one judge column per candidate
            G = check_risks(raw.ravel(), "loss_judge").reshape(raw.shape)
            if 0 in G.shape:
                raise ValueError(f"`loss_judge` of shape {G.shape} is empty: give the judge's "
                                 "loss of every candidate (columns) on every pool row (rows).")
            g = G.mean(axis=1)  # judge strata: the candidates' mean judge loss
        else:
            if raw.ndim > 2:
                raise ValueError("`loss_judge` must have shape (N,) (one model) or (N, K) (K "
                                 f"candidates); got shape {raw.shape}.")
            g = check_risks(loss_judge, "loss_judge")
            G = g[:, None]
        N = g.size
        if N == 0:
            raise ValueError("`loss_judge` is empty: give the judge's loss on every pool row.")
        C = G.shape[1]
        if procedure not in ("fst", "bonferroni"):
            raise ValueError(f"`procedure` must be 'fst' or 'bonferroni'; got {procedure!r}.")
        if not self._multi and (procedure != "fst" or cost is not None):
            raise ValueError("`procedure` and `cost` select among candidates: give one judge "
                             "column per candidate, loss_judge of shape (N, K).")
        self.procedure = procedure
        self.n_candidates = C
        if cost is None:
            self._cost = -np.arange(C, dtype=float)
        else:
            self._cost = np.asarray(cost, dtype=float).ravel()
            if self._cost.size != C or not np.all(np.isfinite(self._cost)):
                raise ValueError(f"`cost` must hold {C} finite numbers (one per candidate).")
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
        # the judge's variance prior per candidate and stratum (a calibrated judge's loss is
        # P(error))
        gbar = np.array([np.bincount(ids, weights=G[:, c]) for c in range(C)])
        gbar /= self.stratum_sizes_
        self._prior_mean = gbar
        self._prior_var = gbar * (1 - gbar)
        self.delta_test_ = (self.delta if procedure == "fst" or not self._multi
                            else self.delta / C)
        self._procs = [_StratifiedEProcess(self.stratum_sizes_, self.alpha, grid_size,
                                           self.max_bet) for _ in range(C)]
        self._proc = self._procs[0]
        self._g = g
        self._seed = random_state if isinstance(random_state, (int, np.integer)) else None
        self._rng = (random_state if isinstance(random_state, np.random.Generator)
                     else np.random.default_rng(random_state))
        self._queue = []       # proposed rows, in order
        self._probs = []       # their stratum's allocated share
        self._labels = {}      # row -> its losses, shape (C,)
        self._used = 0         # labels fed to the e-process (a prefix of the queue)
        self._in_queue = np.zeros(N, dtype=bool)
        self._log_paths = [np.empty(0) for _ in range(C)]
        self._shares = [None] * C
        self._store = as_store(store)
        if self._store is not None:
            config = {"kind": "ActiveLabelingSession", "format": 1, "alpha": self.alpha,
                      "delta": self.delta, "max_labels": self.max_labels,
                      "sampling": sampling, "floor": self.floor, "grid_size": grid_size,
                      "max_bet": self.max_bet, "pool": _digest(g, ids), "N": int(N)}
            if self._multi:
                config.update(candidates=C, procedure=procedure, cost=self._cost.tolist(),
                              pool=_digest(G, ids))
            self._store.open(config)
            self._load()

    # ------------------------------------------------------------------ state
    def _load(self):
        proposed, labels = [], {}
        for rec in self._store.records():
            if rec.model == _PROPOSED:
                proposed.append((int(rec.example), rec.score))
            elif rec.model in self._label_keys:
                c = self._label_keys.index(rec.model)
                labels.setdefault(int(rec.example), [math.nan] * self.n_candidates)[c] = rec.score
        if proposed:
            rows = np.array([r for r, _ in proposed])
            self._enqueue(rows, [p for _, p in proposed], save=False)
        # a row is labeled once every candidate's loss is in (a crash may split a write)
        labels = {r: v for r, v in labels.items() if not np.isnan(v).any()}
        if labels:
            self._record(np.array(list(labels)), np.array(list(labels.values())), save=False)

    @property
    def _label_keys(self):
        """The store's record names of the labels, one per candidate."""
        if not self._multi:
            return [_LABEL]
        return [f"{_LABEL}:{c}" for c in range(self.n_candidates)]

    def _enqueue(self, rows, probs, save=True):
        if save and self._store is not None:
            now = time.time()
            self._store.put_many([EvaluationRecord(_PROPOSED, str(int(r)), float(p), None, now)
                                  for r, p in zip(rows, probs)])
        self._queue.extend(int(r) for r in rows)
        self._probs.extend(float(p) for p in probs)
        self._in_queue[rows] = True

    def _record(self, rows, losses, save=True):
        """Record labels ``losses`` of shape (b, C) of ``rows``; feed the e-processes."""
        if save and self._store is not None:
            now = time.time()
            self._store.put_many([EvaluationRecord(key, str(int(r)), float(v), None, now)
                                  for r, vs in zip(rows, losses)
                                  for key, v in zip(self._label_keys, vs)])
        self._labels.update(zip((int(r) for r in rows), np.array(losses, dtype=float)))
        start = self._used
        end = start
        while end < len(self._queue) and self._queue[end] in self._labels:
            end += 1
        end = min(end, self.max_labels)
        if end > start:
            new = np.array(self._queue[start:end])
            H = np.array([self._labels[r] for r in new])
            for c, proc in enumerate(self._procs):  # loop over candidates
                path = proc.extend(H[:, c], self.strata_[new])
                self._log_paths[c] = np.concatenate([self._log_paths[c], path])
            self._used = end

    def _allocation(self):
        """Share of the labels allocated to each stratum: that of :meth:`_allocation_for`
        for one model; in a selection, the mean of the shares of the candidates the selection
        still waits for (:meth:`_serving`)."""
        if not self._multi:
            return self._allocation_for(0)
        return np.mean([self._allocation_for(c) for c in self._serving()], axis=0)

    def _serving(self):
        """Candidates the next labels serve: fixed sequence, the first one neither certified
        nor impossible; Bonferroni, the open ones that would be preferred to the selection;
        once the selection is final, the open ones (else all)."""
        certified, impossible, _, better, decides = self._selection()
        if decides is not None:
            return [decides]
        if better:
            return better
        open_ = np.flatnonzero(~certified & ~impossible).tolist()
        return open_ or list(range(self.n_candidates))

    def _allocation_for(self, c):
        """Share of the labels allocated to each stratum for candidate ``c`` (from its judge
        and the labels used so far): ``floor`` of the proportional allocation; the rest
        maximises the smallest expected log-growth over the null allocations its e-process
        has not yet ruled out."""
        w = self.stratum_sizes_ / self.stratum_sizes_.sum()
        if w.size == 1:
            return w
        rates = []
        for k, s in enumerate(self._procs[c].strata):  # loop over strata
            if s.c >= s.N:  # exhausted: its mean is known, no label can add evidence
                r = np.zeros(s.x.size)
            else:
                m = (s.N * s.x - s.S) / (s.N - s.c)
                # the stratum's mean and variance: its labels, the judge as a prior worth 2
                mean = (2 * self._prior_mean[c, k] + s.S) / (2 + s.c)
                var = (2 * self._prior_var[c, k] + s.Q + 0.25) / (s.c + 3)
                r = _growth_rate(m, mean, var, self.max_bet)
            rates.append(np.where(np.isfinite(s.log_w), r, np.inf))
        # warm start from the previous shares (floored so that no stratum is locked out)
        start = None if self._shares[c] is None else 0.9 * self._shares[c] + 0.1 / w.size
        horizon = max(20.0, float(self._used))  # plan for as many labels again
        offsets = [s.log_w for s in self._procs[c].strata]
        share = self._shares[c] = _maxmin_shares(rates, self._procs[c].target, start,
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

    def add(self, indices: ArrayLike,
            loss_labeled: ArrayLike) -> ActiveLabelingStatus | ActiveSelectionStatus:
        """Record the losses of proposed rows and return the verdict.

        Parameters
        ----------
        indices : array-like of shape (b,) of int
            Pool rows, each proposed by :meth:`propose`. A row already labeled with the same
            loss (a batch re-sent after a crash) is skipped; with another loss it is an error.
        loss_labeled : array-like of shape (b,), or (b, K) in a selection
            Their true losses, in [0, 1] (in a selection, row ``j`` holds every candidate's
            loss on row ``indices[j]``).

        Returns
        -------
        ActiveLabelingStatus, or ActiveSelectionStatus in a selection
            Labels are used in the order the rows were proposed: a label waits while an
            earlier proposed row is unlabeled.
        """
        idx = check_indices(indices, "indices", self.strata_.size)
        if self._multi:
            raw = np.asarray(loss_labeled, dtype=float)
            if raw.ndim != 2 or raw.shape != (idx.size, self.n_candidates):
                raise ValueError(
                    f"`loss_labeled` has shape {raw.shape}; a selection among "
                    f"{self.n_candidates} candidates needs shape ({idx.size}, "
                    f"{self.n_candidates}): one row per index, one loss per candidate.")
            H = check_risks(raw.ravel(), "loss_labeled").reshape(raw.shape)
        else:
            h = check_risks(loss_labeled, "loss_labeled")
            if h.size != idx.size:
                raise ValueError(f"`loss_labeled` has {h.size} entries but `indices` has "
                                 f"{idx.size}: give one loss per row.")
            H = h[:, None]
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
            elif np.abs(old - H[j]).max() > 1e-12:
                shown = (lambda v: f"{v[0]:g}") if not self._multi else np.ndarray.tolist
                raise ValueError(f"Row {r} is already labeled with loss {shown(old)} (given "
                                 f"{shown(H[j])}); a session never changes a recorded label.")
        if new:
            self._record(idx[new], H[new])
        return self.status_

    def _status(self, c):
        """:class:`ActiveLabelingStatus` of candidate ``c`` at its test level."""
        path = self._log_paths[c]
        log_thr = math.log(1 / self.delta_test_)
        hits = np.flatnonzero(path >= log_thr)
        best = float(max(path.max(), 0.0)) if path.size else 0.0
        certified = hits.size > 0
        r = min(self.max_labels, self.strata_.size) - self._used
        bound = max(best, self._procs[c].bound(r))
        return ActiveLabelingStatus(
            n_labels=self._used, certified=certified,
            impossible=(not certified) and bound < log_thr,
            stopping_index=int(hits[0]) if certified else None,
            pvalue=float(min(1.0, math.exp(-best))), log_evalue=best, log_evalue_bound=bound,
            labels_per_stratum=tuple(int(s.c) for s in self._procs[c].strata),
            max_labels=self.max_labels, alpha=self.alpha, delta=self.delta_test_)

    def _selection(self):
        return _select([self._status(c) for c in range(self.n_candidates)], self.procedure,
                       self.delta, self._cost)

    @property
    def status_(self) -> ActiveLabelingStatus | ActiveSelectionStatus:
        """:class:`ActiveLabelingStatus` after the labels used so far; in a selection
        (``loss_judge`` of shape (N, K)), :class:`ActiveSelectionStatus`."""
        if not self._multi:
            return self._status(0)
        st = tuple(self._status(c) for c in range(self.n_candidates))
        certified, impossible, selected, better, _ = _select(st, self.procedure, self.delta,
                                                             self._cost)
        return ActiveSelectionStatus(
            n_labels=self._used, certified=certified, impossible=impossible,
            selected=selected, final=not better, labels_needed=None, candidates=st,
            procedure=self.procedure, delta=self.delta, test_level=self.delta_test_,
            max_labels=self.max_labels, alpha=self.alpha)

    @property
    def proposed_(self) -> np.ndarray:
        return np.array(self._queue, dtype=np.int64)

    @property
    def probabilities_(self) -> FloatArray:
        return np.array(self._probs)

    @property
    def log_eprocess_(self) -> FloatArray:
        if self._multi:
            return np.stack(self._log_paths, axis=1)
        return self._log_paths[0].copy()

    @property
    def n_labels(self) -> int:
        """Labels used by the e-process."""
        return self._used

    def __repr__(self):
        if self._multi:
            st = self.status_
            return (f"ActiveLabelingSession(sampling={self.sampling!r}, alpha={self.alpha:g}, "
                    f"delta={self.delta:g}, n_candidates={self.n_candidates}, "
                    f"procedure={self.procedure!r}, n_labels={self.n_labels}, "
                    f"max_labels={self.max_labels}, selected={st.selected}, final={st.final})")
        return (f"ActiveLabelingSession(sampling={self.sampling!r}, alpha={self.alpha:g}, "
                f"delta={self.delta:g}, n_labels={self.n_labels}, "
                f"max_labels={self.max_labels}, decision={self.status_.decision!r})")

    # the store's life cycle is LabelingSession's (same attribute ``_store``)
    close = _Session.close
    __enter__ = _Session.__enter__
    __exit__ = _Session.__exit__
