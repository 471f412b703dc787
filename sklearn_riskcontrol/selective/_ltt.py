"""Learn-then-Test p-values for deployment thresholds (PAC selective risk control).

For each candidate threshold ``t`` the null hypothesis is ``H_t: risk(t) > alpha``, where

* ``target="mdr"``: ``risk(t) = E[L 1{s(X) <= t}]``, tested on ``L_i 1{S_i <= t}`` of all ``n``
  calibration points;
* ``target="sdr"``: ``risk(t) = E[L | s(X) <= t]``, tested on the losses of the ``n_t``
  calibration points with ``S_i <= t``. Conditionally on ``n_t`` these are i.i.d. draws of ``L``
  given ``s(X) <= t``, so a p-value valid for ``n_t`` i.i.d. losses is valid conditionally on
  ``n_t``, hence unconditionally.

Rejected hypotheses are certified thresholds (Angelopoulos, Bates, Candès, Jordan & Lei, "Learn
then Test", 2021): a family-wise error rate (FWER) at most ``delta`` gives
``P(risk(t_hat) > alpha) <= delta`` for any ``t_hat`` chosen among the rejected thresholds.

p-values
--------
``"hoeffding"``
    ``exp(-2 n (alpha - rhat)_+**2)`` (Hoeffding's inequality).
``"hoeffding_bentkus"``
    ``min(exp(-n h(min(rhat, alpha), alpha)), e P(Binom(n, alpha) <= ceil(n rhat)))`` with
    ``h(a, b) = a log(a / b) + (1 - a) log((1 - a) / (1 - b))`` (Bates, Angelopoulos, Lei, Malik
    & Jordan 2021, "Distribution-free, risk-controlling prediction sets", Prop. 3 / LTT eq. (8)).
    Valid for losses in [0, 1], tightest for binary losses.
``"binomial"``
    ``P(Binom(n, alpha) <= k)`` with ``k`` the number of errors: the exact binomial test, valid
    for *binary* losses only (then the Bentkus factor ``e`` is not needed).
``"wsr"``
    Testing by betting (Waudby-Smith & Ramdas 2024): the wealth of the WSR bets
    (:class:`~sklearn_riskcontrol.evalues.betting.WSR`) against ``H_t`` on the losses in the
    order given, and ``p = min(1, 1 / max_i wealth_i)`` (Ville's inequality). All thresholds are
    processed at once: row ``k`` of a ``(thresholds, n)`` array holds the losses of threshold
    ``k`` (compacted to the left for SDR, padded with ``alpha``, which leaves the wealth
    unchanged). The losses must be exchangeable in the order given (shuffle otherwise).
``"rautoeval"``
    Prediction-powered: R-AutoEval+ (Park, Zecchin & Simeone;
    :func:`~sklearn_riskcontrol.autoeval.rautoeval_test`, testing by betting with a
    mixture over reliance factors) on the labeled losses, an auto-evaluator's (judge's) losses
    on the same points and the judge's losses on ``N >= n`` unlabeled points, restricted to
    threshold ``t`` exactly like the labeled losses (see :func:`rautoeval_pvalues`). A useless
    judge costs little power (the mixture falls back on ``rho = 0``, labels only); a good one
    buys a smaller p-value with the same labels.

Procedures
----------
``fixed_sequence`` (:func:`~sklearn_riskcontrol.evalues.testing.fixed_sequence`) tests the thresholds
from the safest (smallest) to the riskiest at the full level ``delta`` and stops at the first
non-rejection; ``fallback`` (Wiens 2003) spreads ``delta`` over the ordered thresholds with
weights and passes the level of every rejected threshold on to the next one, so an early
non-rejection (too few calibration points below the smallest thresholds) does not end the
search; ``union`` (:func:`~sklearn_riskcontrol.evalues.testing.bonferroni`) tests every threshold at
``delta / |grid|``. All three control the FWER at ``delta`` under any dependence between the
p-values, provided the grid, its order and the weights are fixed without looking at the
calibration data (see :func:`~sklearn_riskcontrol.selective.concentration_threshold`).
"""

from __future__ import annotations

import warnings

import numpy as np
from numpy.typing import ArrayLike

from .._typing import FloatArray, IntArray
from .._validation import RiskControlWarning
from ..autoeval import rautoeval_test
from ..evalues.betting import WSR, _run
from ..evalues.ltt import binomial_pvalues, hb_pvalues, hoeffding_pvalues
from ..evalues.testing import bonferroni, fallback, fixed_sequence

__all__ = ["wsr_pvalues", "rautoeval_pvalues", "threshold_pvalues"]

PVALUE_BOUNDS = ("hoeffding", "hoeffding_bentkus", "binomial", "wsr", "rautoeval")
# Thresholds per block of the WSR (thresholds, n) array (memory cap: 2**22 float entries).
_WSR_BLOCK_ENTRIES = 1 << 22


def _wsr_rows(q, n_rounds, alpha, delta):
    """p-values ``min(1, 1 / max wealth)`` of WSR bets on the rows of ``q`` (rows, n).

    Row ``k`` has ``n_rounds[k]`` real rounds followed by ``alpha`` (wealth unchanged); the WSR
    bet of row ``k`` uses ``n_total = n_rounds[k]`` (a constant given the rows, so the bets
    stay predictable).
    """
    rows = q.shape[0]
    p = np.ones(rows)
    live = n_rounds > 0
    if not live.any() or q.shape[1] == 0:
        return p
    ql = q[live]
    lo, hi = np.zeros(ql.shape[0]), np.ones(ql.shape[0])
    n_total = n_rounds[live].astype(float)[:, None]
    _, logw = _run(ql, alpha, lo, hi, WSR(), delta=delta, n_total=n_total)
    p[live] = np.exp(-np.maximum(logw.max(axis=1), 0.0))
    return p


def wsr_pvalues(
    cal_risks: ArrayLike,
    cal_scores: ArrayLike,
    grid: ArrayLike,
    alpha: float,
    *,
    target: str = "sdr",
    delta: float = 0.1,
) -> FloatArray:
    """Testing-by-betting p-values of ``H_t: risk(t) > alpha`` for every ``t`` in ``grid``.

    The losses of threshold ``t`` (``L_i`` for ``S_i <= t`` with ``target="sdr"``,
    ``L_i 1{S_i <= t}`` for all ``i`` with ``target="mdr"``) are bet on in the order given with
    the WSR bets of level ``delta``; ``p_t = min(1, 1 / max_i wealth_i)`` is a valid p-value by
    Ville's inequality (conditionally on ``n_t`` for SDR). Vectorised over thresholds.

    Parameters
    ----------
    cal_risks, cal_scores : ndarray of shape (n,)
        Validated losses in [0, 1] and finite scores, in an exchangeable order.
    grid : ndarray of shape (g,)
    alpha : float in (0, 1)
    target : {"sdr", "mdr"}
    delta : float in (0, 1)
        Level that tunes the WSR bets (not a correction; any value gives valid p-values).

    Returns
    -------
    ndarray of shape (g,)

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_riskcontrol.selective import wsr_pvalues
    >>> rng = np.random.default_rng(0)
    >>> L = (rng.uniform(size=200) < 0.05).astype(float)    # error rate 0.05 at every score
    >>> S = np.linspace(0, 1, 200)
    >>> # SDR p-values at t = 0.25, 0.5, 1 (50, 100, 200 losses) against alpha = 0.15
    >>> wsr_pvalues(L, S, np.array([0.25, 0.5, 1.0]), alpha=0.15).round(4)
    array([0.8219, 0.0041, 0.0002])
    """
    L = np.asarray(cal_risks, dtype=float)
    S = np.asarray(cal_scores, dtype=float)
    G = np.asarray(grid, dtype=float)
    n = L.shape[0]
    out = np.ones(G.shape[0])
    block = max(1, _WSR_BLOCK_ENTRIES // max(n, 1))
    for b0 in range(0, G.shape[0], block):
        g = G[b0 : b0 + block]
        inside = S[None, :] <= g[:, None]  # (rows, n)
        if target == "mdr":
            q = np.where(inside, L[None, :], 0.0)
            counts = np.full(g.shape[0], n)
        else:
            counts = inside.sum(axis=1)
            # included losses first, in the given order (scatter by running rank, no sort)
            rank = np.cumsum(inside, axis=1) - 1
            rows, cols = np.nonzero(inside)
            q = np.full((g.shape[0], int(counts.max(initial=0))), alpha)
            q[rows, rank[rows, cols]] = L[cols]
        out[b0 : b0 + block] = _wsr_rows(q, counts, alpha, delta)
    return out


def rautoeval_pvalues(
    cal_risks: ArrayLike,
    cal_scores: ArrayLike,
    cal_judge_risks: ArrayLike,
    unlabeled_judge_risks: ArrayLike,
    unlabeled_scores: ArrayLike,
    grid: ArrayLike,
    alpha: float,
    *,
    target: str = "sdr",
    delta: float = 0.1,
    early_stopping: bool = False,
) -> tuple[FloatArray, IntArray]:
    """Prediction-powered p-values of ``H_t: risk(t) > alpha``: R-AutoEval+ at every ``t``.

    For each ``t`` in ``grid`` this is ``rautoeval_test(h, g, u, alpha=alpha, delta=delta,
    early_stopping=early_stopping).pvalue`` (R-AutoEval+, :func:`~sklearn_riskcontrol.evalues.
    autoeval.rautoeval_test`, default betting and reliance grid) on

    * ``target="sdr"``: ``h`` = the losses ``L_i`` of the labeled calibration points with
      ``S_i <= t``, ``g`` = the judge's losses ``G_i`` on the same points, ``u`` = the judge's
      losses ``U_k`` of the unlabeled points with score ``T_k <= t``, each in the order given;
      where fewer unlabeled than labeled points lie below ``t`` (``0 <= N_t < n_t``),
      R-Eval (``method="eval"``: the labels alone) is run instead; ``p = 1`` where ``n_t = 0``;
    * ``target="mdr"``: ``h = L_i 1{S_i <= t}``, ``g = G_i 1{S_i <= t}`` on all ``n`` labeled
      points and ``u = U_k 1{T_k <= t}`` on all ``N >= n`` unlabeled points.

    **Why the SDR p-value is valid.** Let the labeled and unlabeled points be independent
    draws from one distribution (i.i.d., or exchangeable rows), and let the score and the judge
    be fixed independently of them. Conditionally on the counts ``n_t`` and ``N_t``, the
    labeled points with ``S_i <= t`` are ``n_t`` i.i.d. draws from the distribution of ``X``
    given ``s(X) <= t`` (selection by a condition on each point alone keeps independence and
    the order), and the unlabeled ones ``N_t`` further i.i.d. draws from the same conditional
    distribution, independent of the first. So ``(h, g)`` and ``u`` are exactly what
    R-AutoEval+ assumes, with the risk ``E[L | s(X) <= t] = SDR*(t)``: its e-process is an
    anytime-valid test of ``H_t`` given ``(n_t, N_t)`` (and the choice of R-Eval where
    ``N_t < n_t`` depends on the counts only), hence unconditionally. For MDR the losses
    ``L 1{s(X) <= t}`` of all points are already i.i.d. with mean ``MDR(t)``.

    **Order.** Both ``h`` and the blocks of ``r = floor(N_t / n_t)`` unlabeled losses are taken
    in the order given, which must be exchangeable (e.g. a shuffled split). Nothing is
    shuffled here.

    Thresholds whose counts ``(n_t, N_t)`` equal another's test the same points and share its
    p-value (one :func:`rautoeval_test` per distinct pair; about 5 ms for ``n = 500``, so about
    0.5 s for a 100-point grid). The per-threshold warnings of :func:`rautoeval_test` (e.g. too
    few points below ``t`` to ever certify) are silenced: the caller reports the outcome.

    Parameters
    ----------
    cal_risks, cal_scores : ndarray of shape (n,)
        Validated labeled losses in [0, 1] and finite scores.
    cal_judge_risks : ndarray of shape (n,)
        The judge's losses on the labeled points (loss of the prediction against the judge's
        label), in [0, 1].
    unlabeled_judge_risks, unlabeled_scores : ndarray of shape (N,)
        The judge's losses and the scores of the unlabeled points (``N >= n``).
    grid : ndarray of shape (g,)
    alpha : float in (0, 1)
    target : {"sdr", "mdr"}
    delta : float in (0, 1)
        Passed to :func:`rautoeval_test` (its crossing level ``1 / delta`` for
        ``early_stopping``; the p-values are valid whatever its value).
    early_stopping : bool, default=False
        Stop each e-process at its first crossing of ``1 / delta`` (anytime validity). The
        p-value is still valid, and it is ``<= delta`` exactly when the full run's is, but it
        is then not the smallest one: use it only when each threshold is tested at level
        ``delta`` (fixed-sequence testing; Bonferroni with ``delta / |grid|``).

    Returns
    -------
    pvalues : ndarray of shape (g,)
    n_unlabeled : ndarray of shape (g,)
        Number of unlabeled points each test uses (``N_t`` for SDR, ``N`` for MDR).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_riskcontrol.selective import rautoeval_pvalues
    >>> rng = np.random.default_rng(0)
    >>> S, T = rng.uniform(size=300), rng.uniform(size=3000)       # labeled, unlabeled scores
    >>> L = (rng.uniform(size=300) < S / 2).astype(float)           # error rate s / 2
    >>> G = L.copy()                                                # a perfect judge
    >>> U = (rng.uniform(size=3000) < T / 2).astype(float)
    >>> p, N_t = rautoeval_pvalues(L, S, G, U, T, np.array([0.2, 0.5, 1.0]), alpha=0.2)
    >>> # SDR*(t) = t / 4 = 0.05, 0.125, 0.25: rejected (p <= 0.1) below alpha = 0.2 only
    >>> (p <= 0.1).tolist(), N_t.tolist()
    ([True, True, False], [622, 1545, 3000])
    """
    L, S, J = (np.asarray(a, dtype=float) for a in (cal_risks, cal_scores, cal_judge_risks))
    U, T = (np.asarray(a, dtype=float) for a in (unlabeled_judge_risks, unlabeled_scores))
    G = np.asarray(grid, dtype=float)
    k_lab = np.searchsorted(np.sort(S), G, side="right")
    k_unl = np.searchsorted(np.sort(T), G, side="right")
    p = np.ones(G.shape[0])
    _, first, inv = np.unique(np.c_[k_lab, k_unl], axis=0, return_index=True,
                              return_inverse=True)
    inv = inv.ravel()
    # One test per distinct count pair (about 100 grid points, not samples). catch_warnings
    # is process-wide: the estimators call this from the main thread.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RiskControlWarning)
        for j, row in enumerate(first):
            t = G[row]
            lab, unl = S <= t, T <= t
            if target == "mdr":
                h, g, u = L * lab, J * lab, U * unl
            else:
                h, g, u = L[lab], J[lab], U[unl]
            if h.size == 0:
                continue
            if u.size >= h.size:
                res = rautoeval_test(h, g, u, alpha=alpha, delta=delta,
                                     early_stopping=early_stopping)
            else:
                res = rautoeval_test(h, alpha=alpha, delta=delta, method="eval",
                                     early_stopping=early_stopping)
            p[inv == j] = res.pvalue
    n_unl = k_unl if target == "sdr" else np.full(G.shape[0], T.shape[0])
    return p, n_unl


def threshold_pvalues(
    cal_risks: ArrayLike,
    cal_scores: ArrayLike,
    grid: ArrayLike,
    alpha: float,
    *,
    target: str = "sdr",
    bound: str = "hoeffding_bentkus",
    delta: float = 0.1,
    cal_judge_risks: ArrayLike | None = None,
    unlabeled_judge_risks: ArrayLike | None = None,
    unlabeled_scores: ArrayLike | None = None,
    early_stopping: bool = False,
) -> tuple[FloatArray, IntArray]:
    """p-values of ``H_t: risk(t) > alpha`` for every ``t`` in ``grid`` (inputs validated).

    Parameters
    ----------
    cal_risks, cal_scores : ndarray of shape (n,)
    grid : ndarray of shape (g,)
    alpha : float in (0, 1)
    target : {"sdr", "mdr"}
    bound : {"hoeffding", "hoeffding_bentkus", "binomial", "wsr", "rautoeval"}
        ``"binomial"`` needs binary losses (checked by the caller); ``"rautoeval"`` needs the
        three judge arrays below (see :func:`rautoeval_pvalues`).
    delta : float in (0, 1)
        Tunes the WSR bets (``"wsr"``) or the crossing level of ``early_stopping``
        (``"rautoeval"``) only.
    cal_judge_risks, unlabeled_judge_risks, unlabeled_scores : ndarray, optional
        ``bound="rautoeval"`` only: the judge's losses on the labeled points (shape (n,)), its
        losses and the scores of the unlabeled points (shape (N,), ``N >= n``).
    early_stopping : bool, default=False
        ``bound="rautoeval"`` only; see :func:`rautoeval_pvalues`.

    Returns
    -------
    pvalues : ndarray of shape (g,)
    n_points : ndarray of shape (g,)
        Number of losses each test uses (``n_t`` for SDR, ``n`` for MDR).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_riskcontrol.selective import threshold_pvalues
    >>> S = np.linspace(0, 1, 1000)
    >>> L = (S > 0.6).astype(float)            # errors only above 0.6
    >>> p, n_t = threshold_pvalues(L, S, np.array([0.5, 0.9]), 0.1, target="sdr")
    >>> n_t.tolist(), bool(p[0] < 1e-10), float(p[1])
    ([500, 900], True, 1.0)
    """
    L = np.asarray(cal_risks, dtype=float)
    S = np.asarray(cal_scores, dtype=float)
    G = np.asarray(grid, dtype=float)
    n = L.shape[0]
    order = np.argsort(S, kind="stable")
    cum = np.r_[0.0, np.cumsum(L[order])]
    k = np.searchsorted(S[order], G, side="right")  # n_t
    sums = cum[k]
    n_points = k if target == "sdr" else np.full(G.shape[0], n)
    if bound == "rautoeval":
        p, _ = rautoeval_pvalues(L, S, cal_judge_risks, unlabeled_judge_risks,
                                 unlabeled_scores, G, alpha, target=target, delta=delta,
                                 early_stopping=early_stopping)
    elif bound == "wsr":  # thresholds with the same n_t bet on the same losses
        uniq, first, inv = np.unique(k, return_index=True, return_inverse=True)
        p = wsr_pvalues(L, S, G[first], alpha, target=target, delta=delta)[inv.ravel()]
    elif bound == "hoeffding_bentkus":
        p = hb_pvalues(sums, n_points, alpha)
    elif bound == "binomial":
        p = binomial_pvalues(sums, n_points, alpha)
    else:
        p = hoeffding_pvalues(sums, n_points, alpha)
    return p, n_points


def select(pvalues, delta, procedure, weights=None):
    """Rejected hypotheses (grid order, safest first) of ``procedure``."""
    if procedure == "fixed_sequence":
        return fixed_sequence(pvalues, delta)
    if procedure == "fallback":
        return fallback(pvalues, delta, weights)
    return bonferroni(pvalues, delta)
