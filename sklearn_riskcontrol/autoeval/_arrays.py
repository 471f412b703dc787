"""R-Eval, R-AutoEval and R-AutoEval+ on loss arrays (Park, Zecchin & Simeone).

Certify that a model's risk ``R = E[loss]`` is at most ``alpha`` with probability at least
``1 - delta`` from ``n`` human-labeled losses, the auto-evaluator's (judge's) losses on the same
examples and its losses on ``N >= n`` unlabeled examples. Losses lie in ``[0, 1]``.

Effective observations (one candidate)
    ``h_i`` = loss with the true label, ``g_i`` = loss with the judge's label (``i = 1..n``),
    ``u_k`` = judge losses on the unlabeled examples. ``r = floor(N / n)`` (``0 < N < n`` is an
    error), ``ubar_i`` = mean of block ``i`` of ``u`` (entries ``(i-1) r .. i r - 1``; leftovers
    are dropped). For a reliance factor ``rho in [0, 1]``,
    ``q_i(rho) = h_i + rho (ubar_i - g_i)`` is unbiased for ``R`` and lies in
    ``[-rho, 1 + rho]``. R-Eval uses ``rho = 0``, R-AutoEval ``rho = 1`` and R-AutoEval+ the grid
    ``rho_s = linspace(0, 1, S)`` with prior weights ``w_s0 = 1 / S``.

Several judges
    Judge losses of shape ``(n, k)`` and ``(N, k)`` (one column per judge; ``(n, 1)`` is one
    judge) give corrections ``d_ij = ubar_ij - g_ij``, each unbiased for 0, and the reliance
    factor becomes a vector ``w`` with ``w_j >= 0`` and ``|w| = sum_j w_j <= 1``:
    ``q_i(w) = h_i + w . d_i`` is unbiased for ``R`` whatever the judges and lies in
    ``[-|w|, 1 + |w|]``. The mixture test runs over a grid of vectors on this scaled simplex
    (default: step ``1 / (n_rho - 1)``, coarsened for ``k >= 3`` to at most
    ``max(n_rho, 100)`` vectors; ``k = 2``: 55 vectors), the plug-in interval picks ``w_t``
    from rounds ``< t`` only. R-AutoEval uses ``w = (1/k, ..., 1/k)``.

Testing by betting
    Each ``rho_s`` has its own betting e-process ``E_s,i`` (``M - alpha = 1 + rho_s - alpha``,
    see :mod:`~sklearn_riskcontrol.evalues.betting`). R-AutoEval+ bets the fraction
    ``w_s,i ∝ w_s0 E_s,i-1`` of its wealth on ``rho_s`` (paper eq. 13), so its e-process
    telescopes exactly to ``E_i = sum_s w_s0 E_s,i``, computed here by logsumexp of the per-rho
    log-wealths. ``H0: R > alpha`` is rejected ("certified") iff ``max_i E_i >= 1 / delta``
    (Ville's inequality: anytime valid, the test may stop at the first crossing), and
    ``pvalue = min(1, 1 / max_i E_i)``.
"""

from __future__ import annotations

import dataclasses
import numbers
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy import optimize

from .._bytes import same_bytes
from .._parallel import run_units
from .._progress import Progress
from .._validation import (
    as_float_array,
    check_level,
    check_nonempty,
    check_number,
    check_risks,
    check_same_length,
    warn,
)
from ..evalues.betting import (
    UniversalPortfolio,
    _log_prior,
    _logsumexp,
    _resolve_betting,
    _run,
    mixture_weights,
)
from ..evalues.testing import bonferroni, fixed_sequence
from .._typing import FloatArray
from .._results import ResultMixin

__all__ = [
    "effective_observations",
    "rautoeval_test",
    "RAutoEvalResult",
    "rautoeval_confidence_interval",
    "RiskConfidenceInterval",
    "rautoeval_select",
    "ModelSelectionResult",
]

_METHODS = ("plus", "autoeval", "eval")
_METHOD_NAMES = {"plus": "R-AutoEval+", "autoeval": "R-AutoEval", "eval": "R-Eval"}


# --------------------------------------------------------------------------------------------
# Inputs
# --------------------------------------------------------------------------------------------
def _check_losses(loss_labeled, loss_judge_labeled, loss_judge_unlabeled, method, suffix=""):
    """Validated ``h, g, u`` and the method actually run (``eval`` if there is no unlabeled
    data; the caller warns)."""
    if method not in _METHODS:
        raise ValueError(f"`method` must be one of {_METHODS}; got {method!r}.")
    h = check_risks(loss_labeled, "loss_labeled" + suffix)
    check_nonempty(h, "loss_labeled" + suffix, what="human-labeled")
    g = u = None
    if loss_judge_labeled is not None:
        g = _judge_losses(loss_judge_labeled, "loss_judge_labeled" + suffix)
        if g.ndim == 1:
            check_same_length(**{"loss_labeled" + suffix: h, "loss_judge_labeled" + suffix: g})
        elif g.shape[0] != h.size:
            raise ValueError(
                f"`loss_judge_labeled{suffix}` has {g.shape[0]} rows but `loss_labeled{suffix}` "
                f"has {h.size}: the judges' losses on the labeled examples must be on the same "
                "examples, in the same order (one row per example, one column per judge)."
            )
    if loss_judge_unlabeled is not None:
        u = _judge_losses(loss_judge_unlabeled, "loss_judge_unlabeled" + suffix)
        if g is not None and u.size and _n_judges(u) != _n_judges(g):
            raise ValueError(
                f"`loss_judge_unlabeled{suffix}` has {_n_judges(u)} judge column(s) but "
                f"`loss_judge_labeled{suffix}` has {_n_judges(g)}: pass the same judges, in the "
                "same column order, on the labeled and on the unlabeled examples."
            )
        if 0 < u.shape[0] < h.size:
            raise ValueError(
                f"`loss_judge_unlabeled{suffix}` has {u.shape[0]} entries, fewer than the {h.size} "
                "labeled ones: R-AutoEval needs N >= n unlabeled examples (r = floor(N / n) of "
                "them per labeled example). Pass more unlabeled data, or None / an empty "
                "array to run R-Eval."
            )
        if u.shape[0] == 0:
            u = None
    if method != "eval":
        if u is not None and g is None:
            raise ValueError(
                f"`loss_judge_labeled{suffix}` is required with method={method!r}: the judge's "
                "losses on the labeled examples correct its bias."
            )
        if u is None:
            return h, g, None, "eval"
    return h, g, u, method


def _judge_losses(x, name):
    """One judge's losses as a 1-d array (shape (m,) or (m, 1)), several judges' as a 2-d
    array (m, k) with k >= 2; every entry checked to lie in [0, 1]."""
    arr = as_float_array(x, name, "losses in [0, 1]: shape (n,) for one judge, (n, k) for k")
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr[:, 0]
    if arr.ndim != 2:
        return check_risks(arr, name)
    if arr.shape[1] == 0:
        raise ValueError(f"`{name}` has no judge column: pass shape (n,) or (n, k), k >= 1.")
    return check_risks(arr.ravel(), name).reshape(arr.shape)


def _n_judges(x):
    """Number of judges of checked judge losses (1-d: one)."""
    return 1 if x.ndim == 1 else x.shape[1]


def _simplex_grid(k, m):
    """Reliance vectors ``w`` with entries in ``{0, 1/m, ..., 1}`` and ``sum(w) <= 1``, shape
    (C(m + k, k), k), in lexicographic order (the zero vector first)."""
    pts = np.zeros((1, 0), dtype=np.int64)
    for _ in range(k):
        rest = m - pts.sum(axis=1)
        reps = rest + 1
        first = np.repeat(pts, reps, axis=0)
        new = np.concatenate([np.arange(r + 1) for r in rest])
        pts = np.column_stack([first, new])
    return pts / float(m)


# Largest number of reliance vectors of R-AutoEval+'s default mixture with several judges.
_MAX_TEST_VECTORS = 100


def _test_grid(k, n_rho):
    """Default reliance vectors of the mixture test with ``k >= 2`` judges: the scaled simplex
    with step ``1 / m``, ``m`` the largest integer ``<= n_rho - 1`` whose grid has at most
    ``max(n_rho, _MAX_TEST_VECTORS)`` points (k = 2, n_rho = 10: step 1/9, 55 vectors)."""
    m, cap = int(n_rho) - 1, max(int(n_rho), _MAX_TEST_VECTORS)
    while m > 1 and _simplex_size(k, m) > cap:
        m -= 1
    return _simplex_grid(k, m)


def _simplex_size(k, m):
    from math import comb

    return comb(m + k, k)


def _reach(rho):
    """``||w||_1`` of each reliance factor (1-d grid: ``rho`` itself): the observations
    ``h + w . d`` lie in ``[-||w||_1, 1 + ||w||_1]``."""
    return rho if rho.ndim == 1 else rho.sum(axis=1)


def _rho_setup(method, n_rho, rho_grid, rho_prior, k=1):
    """Reliance factors ``(S,)`` (one judge) or reliance vectors ``(S, k)`` (``k >= 2``
    judges, entries >= 0 summing to at most 1) and the log prior."""
    if method == "eval":
        return (np.zeros(1) if k == 1 else np.zeros((1, k))), np.zeros(1)
    if method == "autoeval":
        return (np.ones(1) if k == 1 else np.full((1, k), 1.0 / k)), np.zeros(1)
    if rho_grid is None:
        n_rho = check_number(n_rho, "n_rho", integer=True, minimum=2)
        rho = np.linspace(0.0, 1.0, int(n_rho)) if k == 1 else _test_grid(k, n_rho)
    else:
        rho = _check_rho_grid(rho_grid, k)
    return rho, _log_prior(rho_prior, rho.shape[0])


def _check_rho_grid(rho_grid, k):
    if k == 1:
        rho = np.asarray(rho_grid, dtype=float).ravel()
        if rho.size == 0 or not np.all(np.isfinite(rho)) or np.any((rho < 0) | (rho > 1)):
            raise ValueError("`rho_grid` must be a non-empty array of values in [0, 1].")
        return rho
    rho = np.asarray(rho_grid, dtype=float)
    if (rho.ndim != 2 or rho.shape[1] != k or rho.shape[0] == 0
            or not np.all(np.isfinite(rho)) or np.any(rho < 0)
            or np.any(rho.sum(axis=1) > 1.0 + 1e-12)):
        raise ValueError(
            f"With {k} judges `rho_grid` must be a non-empty array of shape (S, {k}) of "
            "reliance vectors: nonnegative entries summing to at most 1 on each row; got "
            f"shape {rho.shape}."
        )
    return rho


def effective_observations(
    loss_labeled: ArrayLike,
    loss_judge_labeled: ArrayLike,
    loss_judge_unlabeled: ArrayLike,
    rho: float | ArrayLike,
) -> FloatArray:
    """R-AutoEval+'s effective observations ``q_i(rho) = h_i + rho (ubar_i - g_i)``.

    With ``k >= 2`` judges (one column each) the reliance factor is a vector ``w`` and
    ``q_i(w) = h_i + sum_j w_j (ubar_ij - g_ij)``.

    Parameters
    ----------
    loss_labeled : array-like of shape (n,)
        Losses ``h_i`` with the true labels, in [0, 1].
    loss_judge_labeled : array-like of shape (n,) or (n, k)
        Losses ``g_i`` with the judge's labels on the same examples (one column per judge;
        ``(n, 1)`` is the same as ``(n,)``).
    loss_judge_unlabeled : array-like of shape (N,) or (N, k), N >= n
        Judge losses on unlabeled examples; block means of ``r = floor(N / n)`` consecutive
        rows give ``ubar_i`` (leftovers dropped).
    rho : float or array-like of shape (S,); with k >= 2 judges array-like of shape (S, k) or (k,)
        Reliance factors in [0, 1]; with several judges reliance vectors with nonnegative
        entries summing to at most 1.

    Returns
    -------
    q : ndarray of shape (S, n)
        ``q[s]`` lies in ``[-|w_s|, 1 + |w_s|]`` (``|w_s| = rho_s``, or the sum of the entries of
        the vector) and is unbiased for the risk.

    Examples
    --------
    >>> from sklearn_riskcontrol.autoeval import effective_observations
    >>> effective_observations([1, 0], [1, 0], [0, 1, 1, 1], rho=[0, 0.5, 1])
    array([[1.  , 0.  ],
           [0.75, 0.5 ],
           [0.5 , 1.  ]])
    """
    h, g, u, _ = _check_losses(loss_labeled, loss_judge_labeled, loss_judge_unlabeled, "plus")
    if g is None or u is None:
        raise ValueError("`loss_judge_labeled` and `loss_judge_unlabeled` are required.")
    if _n_judges(g) > 1:
        k = _n_judges(g)
        w = as_float_array(rho, "rho", f"reliance vectors of shape (S, {k})")
        return _observations(h, g, u, _check_rho_grid(w.reshape(1, -1) if w.ndim == 1 else w,
                                                      k))
    rho = np.atleast_1d(as_float_array(rho, "rho", "reliance factors in [0, 1]"))
    if rho.ndim != 1 or rho.size == 0 or np.any(~np.isfinite(rho)) or np.any((rho < 0) | (rho > 1)):
        raise ValueError("`rho` must be a non-empty 1-d array of reliance factors in [0, 1].")
    return _observations(h, g, u, rho)


def _observations(h, g, u, rho):
    if u is None:
        return np.broadcast_to(h, (rho.shape[0], h.size)).copy()
    n = h.size
    if rho.ndim == 2:  # several judges: q[s] = h + sum_j w_sj (ubar_j - g_j)
        reach = _reach(rho)
        q = h[None, :] + rho @ _corrections(g, u, n).T
        return np.clip(q, -reach[:, None], 1.0 + reach[:, None]) + 0.0
    r = u.size // n
    ubar = u[: n * r].reshape(n, r).mean(axis=1)
    q = h[None, :] + rho[:, None] * (ubar - g)[None, :]
    return np.clip(q, -rho[:, None], 1.0 + rho[:, None]) + 0.0  # rounding guard; no -0.0


def _corrections(g, u, n):
    """``d = ubar - g`` of each labeled example: shape (n,) for one judge, (n, k) for k, each
    entry in [-1, 1] (``ubar``: means of blocks of ``r = floor(N / n)`` unlabeled rows)."""
    r = u.shape[0] // n
    ubar = u[: n * r].reshape((n, r) + u.shape[1:]).mean(axis=1)
    return ubar - g


# --------------------------------------------------------------------------------------------
# The test
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False, repr=False)
class RAutoEvalResult(ResultMixin):
    """Result of :func:`rautoeval_test`.

    The guarantee is about the procedure, not this one result: over the random draw of the
    labeled (and unlabeled) examples, ``P(certified and R > alpha) <= delta``. The numbers here
    (p-value, stopping index, e-process) are realizations for the draw at hand.

    Attributes
    ----------
    certified : bool
        ``True`` iff ``H0: R > alpha`` is rejected, i.e. ``max_i E_i >= 1 / delta``.
    pvalue : float
        ``min(1, 1 / max_i E_i)`` (anytime-valid p-value: ``P(pvalue <= t) <= t`` under H0).
    log_eprocess : ndarray of shape (n_rounds,)
        ``log E_i`` of the mixture e-process after labeled example ``i`` (one entry per round
        processed; fewer than ``n`` only with ``early_stopping=True``).
    stopping_index : int or None
        0-based index of the first round with ``E_i >= 1 / delta`` (so ``stopping_index + 1``
        labeled examples were needed), ``None`` if it never crosses.
    rho_grid : ndarray of shape (S,), or (S, k) with k >= 2 judges
        Reliance factors (``[0]`` for R-Eval, ``[1]`` for R-AutoEval); with several judges the
        reliance vectors (R-Eval: the zero vector, R-AutoEval: ``1/k`` on every judge).
    rho_prior : ndarray of shape (S,)
        Initial weights ``w_s0``.
    rho_weights : ndarray of shape (S, n_rounds)
        Adaptive weights ``w_s,i ∝ w_s0 E_s,i-1`` used in round ``i`` (paper's Fig. 2).
    log_wealth : ndarray of shape (S, n_rounds)
        Per-rho log-wealth ``log E_s,i``.
    bets : ndarray of shape (S, n_rounds)
        Per-rho bets ``lambda_s,i``.
    alpha, delta : float
    method : str
        Method actually run (``"eval"`` when no unlabeled data was given).
    block_size : int
        ``r = floor(N / n)`` unlabeled examples per labeled one (0 for R-Eval).
    """

    certified: bool
    pvalue: float
    log_eprocess: np.ndarray
    stopping_index: object
    rho_grid: np.ndarray
    rho_prior: np.ndarray
    rho_weights: np.ndarray
    log_wealth: np.ndarray
    bets: np.ndarray
    alpha: float
    delta: float
    method: str
    block_size: int

    @property
    def log_evalue(self) -> float:
        """``max_i log E_i`` (the statistic compared with ``log(1 / delta)``)."""
        return float(self.log_eprocess.max())

    def __reduce__(self):
        # Pickled without ``rho_weights`` when they are (bit for bit) the mixture weights of
        # ``log_wealth``, as every test computes them: a third fewer bytes for parallel workers
        # to send back; unpickling recomputes them.
        fields = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        if same_bytes(_weights_of(fields), self.rho_weights):
            fields["rho_weights"] = None
        return _result_from_fields, (fields,)

    def __repr__(self):
        return (
            f"RAutoEvalResult(certified={self.certified}, pvalue={self.pvalue:.4g}, "
            f"alpha={self.alpha:g}, delta={self.delta:g}, "
            f"stopping_index={self.stopping_index}, method={self.method!r}, "
            f"n_rounds={self.log_eprocess.size}, n_rho={self.rho_grid.shape[0]})"
        )


def _weights_of(fields):
    return mixture_weights(fields["log_wealth"], fields["rho_prior"])


def _result_from_fields(fields):
    if fields["rho_weights"] is None:
        fields["rho_weights"] = _weights_of(fields)
    return RAutoEvalResult(**fields)


def _core_test(q, rho, log_prior, alpha, delta, strategy, early_stopping, n_total):
    rows, n = q.shape
    log_threshold = np.log(1.0 / delta)
    reach = _reach(rho)
    bets, logw = _run(
        q, alpha, -reach, 1.0 + reach, strategy, delta=delta, n_total=n_total,
        log_prior=log_prior if early_stopping else None,
        log_threshold=log_threshold if early_stopping else None,
    )
    log_e = _logsumexp(log_prior[:, None] + logw, axis=0)
    pvalue = float(min(1.0, np.exp(-log_e.max())))
    crossed = np.flatnonzero(np.exp(-log_e) <= delta)
    return dict(
        certified=bool(pvalue <= delta),
        pvalue=pvalue,
        log_eprocess=log_e,
        stopping_index=int(crossed[0]) if crossed.size else None,
        rho_grid=rho,
        rho_prior=np.exp(log_prior),
        rho_weights=mixture_weights(logw, np.exp(log_prior)),
        log_wealth=logw,
        bets=bets,
        alpha=alpha,
        delta=delta,
    )


def _impossible_message(n, rho, alpha, delta):
    """Message if no betting strategy can reach 1/delta with n rounds (else None): a factor is
    at most 1 + (alpha - m) / (M - alpha) = (1 + 2 rho) / (1 + rho - alpha)."""
    best = n * np.max(np.log((1.0 + 2.0 * rho) / (1.0 + rho - alpha)))
    if best >= np.log(1.0 / delta):
        return None
    need = int(np.ceil(np.log(1.0 / delta) / np.max(np.log((1 + 2 * rho) / (1 + rho - alpha)))))
    return (
        f"Certification is impossible: with n={n} labeled examples no betting e-process can "
        f"reach 1/delta={1 / delta:g} at alpha={alpha:g} (at least {need} are needed)."
    )


def _all_wrong_message(subject):
    """Warning text for labeled losses that all equal 1 (``subject`` says whose)."""
    return (
        f"Every labeled loss {subject} equals 1, the largest possible loss: the model was wrong "
        "on every labeled example, so these labels give no evidence that its risk is below 1 "
        "and risk <= alpha is practically never certified. If that is unexpected, the losses "
        "are miscomputed: a 0-1 loss on continuous (regression) predictions, or labels encoded "
        "differently from the predictions, is 1 everywhere; use a loss that fits the task."
    )


def _prepare(loss_labeled, loss_judge_labeled, loss_judge_unlabeled, alpha, delta, method,
             betting, n_rho, rho_grid, rho_prior, suffix="", observations=True):
    alpha = check_level(alpha, "alpha")
    delta = check_level(delta, "delta")
    h, g, u, run_method = _check_losses(
        loss_labeled, loss_judge_labeled, loss_judge_unlabeled, method, suffix
    )
    k = 1 if g is None else _n_judges(g)
    rho, log_prior = _rho_setup(run_method, n_rho, rho_grid, rho_prior, k)
    strategy = _resolve_betting(betting)
    q = _observations(h, g, u, rho) if observations else None  # not used by the plug-in
    r = 0 if u is None else u.shape[0] // h.size
    return q, rho, log_prior, alpha, delta, strategy, run_method, r, h


def rautoeval_test(
    loss_labeled: ArrayLike,
    loss_judge_labeled: ArrayLike | None = None,
    loss_judge_unlabeled: ArrayLike | None = None,
    *,
    alpha: float,
    delta: float,
    method: str = "plus",
    betting: str | Any = "up",
    n_rho: int = 10,
    rho_grid: ArrayLike | None = None,
    rho_prior: ArrayLike | None = None,
    early_stopping: bool = False,
    groups_labeled: ArrayLike | None = None,
    groups_unlabeled: ArrayLike | None = None,
    max_group_size: float | None = None,
) -> RAutoEvalResult:
    """Certify ``risk <= alpha`` with R-Eval, R-AutoEval or R-AutoEval+ (testing by betting).

    Tests ``H0: R > alpha`` with type-I error at most ``delta``, processing the labeled examples
    in the order given. See the module docstring for the effective observations and the
    mixture over reliance factors.

    Parameters
    ----------
    loss_labeled : array-like of shape (n,)
        Losses with the true (human) labels, in [0, 1].
    loss_judge_labeled : array-like of shape (n,) or (n, k), default=None
        Losses with the auto-evaluator's labels on the same examples (required unless
        ``method="eval"``). Several judges: one column each (see the module docstring); the
        test mixes over reliance vectors, so its guarantee holds whatever the judges.
    loss_judge_unlabeled : array-like of shape (N,) or (N, k), default=None
        Auto-evaluator losses on ``N >= n`` unlabeled examples, used in blocks of
        ``r = floor(N / n)`` rows (the same judges, in the same column order). ``None`` (or
        empty) reduces every method to R-Eval, with a
        :class:`~sklearn_riskcontrol.RiskControlWarning`.
    alpha : float in (0, 1)
        Tolerated risk.
    delta : float in (0, 1)
        Type-I error (probability of certifying a model whose risk exceeds ``alpha``).
    method : {"plus", "autoeval", "eval"}, default="plus"
        R-AutoEval+ (mixture over ``rho``), R-AutoEval (``rho = 1``) or R-Eval (``rho = 0``).
    betting : {"up", "wsr"} or strategy object, default="up"
        ``"up"``: universal portfolio with the continuous arcsine prior
        (:class:`~sklearn_riskcontrol.evalues.betting.UniversalPortfolio`, adaptive
        integration: ``O(S n)``, about 0.5 s for ``S = 10``, ``n = 10**5``; pass
        ``UniversalPortfolio(integration="exact")`` for the ``O(S n**2)`` rule, or
        ``UniversalPortfolio(prior="reference")`` for the paper's grid); ``"wsr"``: WSR bets
        (``O(S n)``, several times cheaper).
    n_rho : int, default=10
        Number of reliance factors ``linspace(0, 1, n_rho)`` of R-AutoEval+. With ``k >= 2``
        judges: reliance vectors on the scaled simplex with step ``1 / (n_rho - 1)``, coarsened
        to at most ``max(n_rho, 100)`` vectors.
    rho_grid : array-like, default=None
        Explicit reliance factors in [0, 1] (overrides ``n_rho``; ``method="plus"`` only);
        with ``k >= 2`` judges an array (S, k) of vectors with nonnegative entries summing to
        at most 1.
    rho_prior : array-like, default=None
        Initial weights ``w_s0`` (normalised); ``None`` = uniform.
    early_stopping : bool, default=False
        Stop at the first crossing of ``1 / delta`` (anytime validity): for when only the
        decision is needed. The rounds after ``stopping_index`` (the stopping round, reported
        as usual) are not computed, so the cost is that of ``stopping_index + 1`` labels; the
        arrays of the result end there and the p-value uses the rounds processed (it is then
        at most ``delta``, but not the smallest p-value all ``n`` labels would give). Without
        a crossing all rounds run.
    groups_labeled : array-like of shape (n,), default=None
        Cluster id of each labeled row (the document of a question, the conversation of a
        turn). The clusters, not the rows, are then the independent draws and the rounds of
        the test, in the order of their first row (shuffle the clusters, not the rows); the
        risk tested is still the item-level ``R = E[loss sum of a cluster] / E[cluster size]``.
        Each cluster gives ``alpha + (S_c - alpha M_c) / M_max`` (``S_c`` its loss sum, ``M_c``
        its size), whose mean exceeds ``alpha`` exactly when ``R`` does. Rows of a cluster
        treated as independent can certify far more often than ``delta`` (24.7% at
        ``delta = 0.1`` with 40 documents of 25 questions; 0% with ``groups_labeled``).
    groups_unlabeled : array-like of shape (N,), default=None
        Cluster id of each unlabeled row (required with ``groups_labeled`` and unlabeled rows).
    max_group_size : float, default=None
        ``M_max``, a bound on every cluster's size fixed before the losses are seen; default:
        the largest cluster of the labeled and unlabeled rows (the sizes are known before any
        label, so this keeps the guarantee).

    Returns
    -------
    RAutoEvalResult

    Warns
    -----
    RiskControlWarning
        When every labeled loss equals 1 (the losses are probably miscomputed), when no
        betting strategy could reach ``1 / delta`` with ``n`` labels, and when there is no
        unlabeled data (the method reduces to R-Eval).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_riskcontrol.autoeval import rautoeval_test
    >>> rng = np.random.default_rng(0)
    >>> n, r = 200, 10
    >>> h = rng.binomial(1, 0.05, n).astype(float)          # true losses, risk 0.05
    >>> g = np.where(rng.random(n) < 0.95, h, 1 - h)        # a good judge
    >>> h_u = rng.binomial(1, 0.05, n * r)
    >>> u = np.where(rng.random(n * r) < 0.95, h_u, 1 - h_u)
    >>> res = rautoeval_test(h, g, u, alpha=0.12, delta=0.1)
    >>> res.certified, res.pvalue < 0.1, res.rho_weights.shape
    (True, True, (10, 200))

    ``certified`` is the outcome of a test: over the draw of the data, a model with risk above
    ``alpha`` is certified with probability at most ``delta``. Labels used until the
    e-process crossed ``1 / delta`` (realized on this one draw):

    >>> ev = rautoeval_test(h, alpha=0.12, delta=0.1, method="eval")   # labels only
    >>> res.stopping_index + 1, ev.stopping_index + 1
    (56, 66)
    """
    if groups_labeled is not None:  # clusters are the draws (issue 27)
        from ._clusters import clustered_losses

        loss_labeled, loss_judge_labeled, loss_judge_unlabeled = clustered_losses(
            check_level(alpha, "alpha"), loss_labeled, loss_judge_labeled,
            loss_judge_unlabeled, groups_labeled, groups_unlabeled, max_group_size)
    q, rho, log_prior, alpha, delta, strategy, run_method, r, h = _prepare(
        loss_labeled, loss_judge_labeled, loss_judge_unlabeled, alpha, delta, method, betting,
        n_rho, rho_grid, rho_prior,
    )
    if run_method != method:
        warn(
            f"No unlabeled data (`loss_judge_unlabeled` is None or empty): method={method!r} "
            "reduces to R-Eval (rho = 0)."
        )
    if np.all(h >= 1.0):
        warn(_all_wrong_message(f"(all {h.size})"))
    msg = _impossible_message(q.shape[1], _reach(rho), alpha, delta)
    if msg is not None:
        warn(msg)
    out = _core_test(q, rho, log_prior, alpha, delta, strategy, early_stopping, q.shape[1])
    return RAutoEvalResult(method=run_method, block_size=r, **out)


# --------------------------------------------------------------------------------------------
# Confidence bounds
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class RiskConfidenceInterval(ResultMixin):
    """Result of :func:`rautoeval_confidence_interval`: ``low <= R <= high`` w.p. ``1 - delta``.

    The probability is over the random draw of the labeled (and unlabeled) examples: the
    procedure covers the risk ``R`` in at least a ``1 - delta`` share of draws; one realized
    interval either covers it or not. ``str(ci)`` says so next to the bounds.

    Attributes
    ----------
    low, high : float
        Bounds on the risk (``low = 0`` for an upper bound, ``high = 1`` for a lower bound).
    delta : float
    side : str
    method : str
    construction : str
        ``"plugin"`` or ``"paper"`` (see :func:`rautoeval_confidence_interval`).
    """

    low: float
    high: float
    delta: float
    side: str
    method: str
    construction: str = "plugin"

    def __str__(self):
        return (
            f"[{self.low:.4g}, {self.high:.4g}] ({self.side}, {_METHOD_NAMES[self.method]}): "
            f"intervals built this way cover the risk with probability >= {1 - self.delta:g} "
            "over the draw of the labeled data"
        )


def _upper_bound(q, rho, log_prior, delta, strategy, tol, fast=True):
    """Smallest alpha in [0, 1] at which the monotone test at level ``delta`` rejects, to within
    ``tol`` and never below it (so the bound is conservative); 1 if it never rejects.

    ``f(alpha) = max_i log E_i(alpha) - log(1/delta)`` is continuous and nondecreasing in
    ``alpha``; Brent's method finds its root in a few evaluations, then the answer is moved to
    the rejecting side (``f >= 0``) of the root. With ``fast=True`` the default arcsine
    universal portfolio on at most ``_FAST_MAX_VALUES`` classes of equal rounds takes the
    count-based path of :func:`_fast_upper_bound` instead (one early-stopped run instead of
    about ten full ones; same bound to within ``tol``); ``fast=False`` forces root finding.
    """
    lower, upper = -rho, 1.0 + rho
    log_threshold = np.log(1.0 / delta)
    n = q.shape[1]
    if fast and isinstance(strategy, UniversalPortfolio) and strategy._adaptive_arcsine:
        try:
            return _fast_upper_bound(q, rho, log_prior, delta, strategy, tol)
        except _FastPathError:
            pass
    fixed = None
    if strategy._alpha_free(True):
        fixed = _run(q, 0.5, lower, upper, strategy, delta=delta, n_total=n, monotone=True)[0]

    def f(a):
        with np.errstate(divide="ignore"):
            if fixed is not None:
                logw = np.cumsum(np.log1p(-fixed * (q - a)), axis=1)
            else:
                logw = _run(q, a, lower, upper, strategy, delta=delta, n_total=n,
                            monotone=True)[1]
            mix = _logsumexp(log_prior[:, None] + logw, axis=0)
        return max(float(mix.max()) - log_threshold, -1e6)  # finite for the root finder

    # Bracket the crossing by expanding around the plug-in guess in steps of the standard
    # error, so Brent starts on a short interval.
    sd = float(np.std(q[0]))
    return _crossing(f, _plugin_guess(q, log_threshold), max(sd / np.sqrt(n), 1e-3), tol)


def _plugin_guess(q, log_threshold):
    """Plug-in guess of the upper bound from the labels-only row: ``mean + sd sqrt(2
    log(1/delta) / n)``, clipped to [0, 1]."""
    mean, sd = float(np.mean(q[0])), float(np.std(q[0]))
    return min(1.0, max(0.0, mean + sd * np.sqrt(2.0 * log_threshold / q.shape[1])))


def _crossing(f, a, width, tol, lo_end=0.0, hi_end=1.0):
    """Smallest point of ``[lo_end, hi_end]`` where the nondecreasing ``f`` is ``>= 0``, to
    within ``tol`` and never below it; ``hi_end`` if there is none.

    The crossing is bracketed by expanding around the guess ``a`` in steps of ``width``
    (growing 4x), then Brent's method finds the root and the answer is moved to the side where
    ``f >= 0``.
    """
    if f(a) >= 0:
        hi = a
        while True:
            lo = max(lo_end, hi - width)
            if f(lo) < 0:
                break
            if lo == lo_end:
                return lo_end
            hi, width = lo, 4.0 * width
    else:
        lo = a
        while True:
            hi = min(hi_end, lo + width)
            if f(hi) >= 0:
                break
            if hi == hi_end:
                return hi_end
            lo, width = hi, 4.0 * width
    root = optimize.brentq(f, lo, hi, xtol=tol / 4, rtol=4 * np.finfo(float).eps)
    for step in (0.0, 0.25, 0.5, 1.0, 2.0):  # brentq's root is within tol/4 of the boundary
        a = min(hi_end, root + step * tol)
        if f(a) >= 0:
            return a
    return hi_end  # unreachable in exact arithmetic; conservative


# --------------------------------------------------------------------------------------------
# Confidence bounds: count-based fast path of the universal-portfolio upper bound (issue 13)
# --------------------------------------------------------------------------------------------
# By Cover's identity the wealth of the arcsine universal portfolio of row s after t rounds is
# the prior mean of the constant-bet wealths,
#     M_s,t(a) = (1/pi) int_0^pi prod_{j<=t} (1 - b c_s,j) dtheta,  b = sin(theta/2)**2,
# with c_s,j = (q_s,j - a) / (1 + 2 rho_s) (monotone bets), and the test's e-process is
# M_t(a) = sum_s pi_s M_s,t(a). On a row with few distinct values v the product is
# exp(sum_v N_v(t) log(1 - b c_v)) (N_v(t) = counts among the first t rounds), so M_t(a) costs
# O(values x nodes) for any t. The bound is min_t a_t*, a_t* the root of log M_t(a) = log(1/delta)
# for round t alone; rounds are screened by a rigorous upper bound per block of rounds
# (log(1 - x) <= -x): for t0 <= t <= t1, prod_{t0<j<=t} (1 - b c_j) <= exp(-b C) with
# C = min_t sum_{t0<j<=t} c_j <= 0, so one integral bounds the whole block.
_FAST_MAX_VALUES = 256  # more classes of equal rounds: root finding on full runs instead
_FAST_EDGE = 50.0  # window ends of the quadrature: log-integrand this far below its maximum
_FAST_COARSE = 65  # nodes of the grid on [0, pi] that locates each integrand's window
_FAST_GROUP = 16  # queries (rounds or blocks, ordered by round) sharing one window of nodes
_FAST_NODES = 33  # first trapezoid rule on a window; doubled until it passes the check
_FAST_MAX_NODES = 2**14 + 1
_FAST_RTOL = 1e-7  # trapezoid rule vs the rule on every other node (then ~1e-28 off)
_FAST_BLOCK = 16  # first blocks: rounds t0 .. t0 + t0 // _FAST_BLOCK (single rounds up to 16)
_FAST_SPLIT = 16  # a block whose bound reaches the threshold is split into this many
_FAST_BATCH = 8  # blocks split per step of the search (highest bounds first)
_FAST_TOP = 4  # rounds returned per search: the candidates of the root
_FAST_ITERATIONS = 20  # candidate / certification rounds before giving up (1 to 4 seen)


class _FastPathError(Exception):
    """The count-based path does not apply or did not converge; root finding takes over."""


def _column_classes(q):
    """Classes of rounds with equal observations in every row, as ``(code, first)`` (class of
    each round, first round of each class).

    The classes start as the pairs (value in the first row, value in the last row): R-AutoEval+'s
    rows are ``h + rho (ubar - g)``, so two rows determine all up to rounding; a row they do not
    determine refines them. Raises :class:`_FastPathError` beyond ``_FAST_MAX_VALUES``
    classes."""
    rows, n = q.shape
    code, n_cls = np.zeros(n, dtype=np.int64), 1
    todo = [0, rows - 1] if rows > 1 else [0]
    while todo:
        for s in todo:
            vals, inv = np.unique(q[s], return_inverse=True)
            if vals.size > _FAST_MAX_VALUES:
                raise _FastPathError
            pair = code * vals.size + inv.ravel()
            used = np.zeros(n_cls * vals.size, dtype=np.int64)
            used[pair] = 1
            code, n_cls = (np.cumsum(used) - 1)[pair], int(used.sum())
            if n_cls > _FAST_MAX_VALUES:
                raise _FastPathError
        first_pos = np.zeros(n_cls, dtype=np.int64)
        first_pos[code[::-1]] = np.arange(n - 1, -1, -1)
        todo = np.flatnonzero(np.any(np.take(q[:, first_pos], code, axis=1) != q, axis=1))
        todo = todo.tolist()
    return code, first_pos


class _CountMixture:
    """Exact log-wealth ``log M_t(a)`` of the mixture of arcsine universal portfolios (monotone
    bets) from value counts, for single rounds and as an upper bound over blocks of rounds.

    A query is a block ``[t0, t1]`` of wealth indices (wealth after ``t`` rounds); ``t0 == t1``
    gives the exact value of round ``t0``.
    """

    def __init__(self, q, rho, log_prior):
        rows, n = q.shape
        code, first_pos = _column_classes(q)
        n_cls = first_pos.size
        self.n, self.log_prior = n, log_prior
        self.unit = 1.0 / (1.0 + 2.0 * rho)  # 1 / (M - m)
        self.vals = q[:, first_pos]  # value of every class in every row
        # keys sorted by class then position: N_v(t) = #(keys < v (n + 1) + t) - first[v]
        order = np.argsort(code.astype(np.int16), kind="stable")  # radix sort
        self.keys = code[order] * np.int64(n + 1) + order
        self.offset = np.arange(n_cls, dtype=np.int64) * (n + 1)
        self.first = np.searchsorted(self.keys, self.offset)
        self.sums = np.zeros((rows, n + 1))  # prefix sums of q
        np.cumsum(q, axis=1, out=self.sums[:, 1:])
        theta = np.linspace(0.0, np.pi, _FAST_COARSE)
        self.theta_c, self.b_c = theta, np.sin(0.5 * theta) ** 2
        t0 = [1]  # first blocks: geometric sizes, about _FAST_BLOCK per doubling of t
        while t0[-1] <= n:
            t0.append(t0[-1] + max(1, t0[-1] // _FAST_BLOCK))
        t0 = np.array(t0[:-1], dtype=np.int64)
        self.blocks = (t0, np.append(t0[1:] - 1, n))

    def counts(self, t):
        """``N_v(t)`` (len(t), classes): counts of each class in the first ``t`` rounds."""
        return (np.searchsorted(self.keys, self.offset[None, :] + t[:, None])
                - self.first).astype(float)

    def tilt(self, a, t0, t1):
        """``C = min_{t0 <= t <= t1} sum_{t0 < j <= t} c_j`` (rows, blocks); 0 for single rounds.
        Costs O(rows x rounds covered), one row at a time."""
        out = np.zeros((self.sums.shape[0], t0.size))
        span = t1 - t0 + 1
        if np.all(span == 1):
            return out
        starts = np.cumsum(span) - span
        idx = np.arange(int(span.sum())) + np.repeat(t0 - starts, span)  # rounds covered
        for s, sums in enumerate(self.sums):
            x = sums[idx] - a * idx  # sum_{j<=t} (q_j - a), up to a constant
            out[s] = np.minimum.reduceat(x, starts) - x[starts]
        out *= self.unit[:, None]
        return out

    def log_integrals(self, a, counts, tilt):
        """``log (1/pi) int_0^pi exp(sum_v N_v log(1 - b c_v) - b C) dtheta`` (rows, queries).

        The integrand is unimodal in theta (its log is concave in b). A coarse grid locates,
        for each query, the window outside which it is ``exp(-_FAST_EDGE)`` below its maximum
        (rigorous by unimodality); queries in groups of ``_FAST_GROUP`` share a window and a
        trapezoid rule, refined until the rule on every other node agrees to ``_FAST_RTOL``.
        """
        rows, n_q = tilt.shape
        c = np.minimum(self.unit[:, None] * (self.vals - a), 1.0)
        with np.errstate(divide="ignore"):  # b = 1 and c = 1: zero wealth at that node
            table = np.log1p(-c[:, :, None] * self.b_c[None, None, :])
        np.maximum(table, -1e250, out=table)  # finite: 0 counts x -inf would be NaN
        coarse = np.matmul(counts, table) - tilt[:, :, None] * self.b_c
        inside = coarse >= coarse.max(axis=2, keepdims=True) - _FAST_EDGE
        lo = np.maximum(np.argmax(inside, axis=2) - 1, 0)
        hi = np.minimum(_FAST_COARSE - np.argmax(inside[:, :, ::-1], axis=2), _FAST_COARSE - 1)
        # groups of consecutive queries (padded by repeating the last one)
        n_g = -(-n_q // _FAST_GROUP)
        take = np.minimum(np.arange(n_g * _FAST_GROUP), n_q - 1)
        shape = (rows * n_g, _FAST_GROUP)
        cnt = np.broadcast_to(counts[take], (rows,) + counts[take].shape).reshape(
            shape + (counts.shape[1],))
        tl = tilt[:, take].reshape(shape)
        lo_t = self.theta_c[lo[:, take].reshape(shape).min(axis=1)]
        hi_t = self.theta_c[hi[:, take].reshape(shape).max(axis=1)]
        c_g = np.repeat(c, n_g, axis=0)
        out = np.empty(shape)
        todo = np.arange(shape[0])
        k = _FAST_NODES
        while todo.size:
            if k > _FAST_MAX_NODES:
                raise _FastPathError
            span = (hi_t[todo] - lo_t[todo])[:, None]
            theta = lo_t[todo, None] + span * np.linspace(0.0, 1.0, k)[None, :]
            b = np.sin(0.5 * theta) ** 2  # (groups, k)
            with np.errstate(divide="ignore"):
                tab = np.log1p(-c_g[todo, :, None] * b[:, None, :])
            np.maximum(tab, -1e250, out=tab)
            ell = np.matmul(cnt[todo], tab) - tl[todo, :, None] * b[:, None, :]
            top = ell.max(axis=2, keepdims=True)
            e = np.exp(ell - top)
            ends = 0.5 * (e[:, :, 0] + e[:, :, -1])
            fine = e.sum(axis=2) - ends
            half = 2.0 * (e[:, :, ::2].sum(axis=2) - ends)
            ok = np.all(np.abs(fine - half) <= _FAST_RTOL * fine, axis=1)
            h = span / (k - 1)
            out[todo[ok]] = np.log(fine[ok] * h[ok] / np.pi) + top[ok, :, 0]
            todo, k = todo[~ok], 2 * k - 1
        return out.reshape(rows, n_g * _FAST_GROUP)[:, :n_q]

    def mixture(self, a, t0, t1, counts=None):
        """``log sum_s pi_s M_s`` for blocks ``[t0, t1]`` (exact for single rounds, an upper
        bound on every round of a block otherwise)."""
        if counts is None:
            counts = self.counts(t0)
        tilt = self.tilt(a, t0, t1)
        logs = self.log_integrals(a, counts, tilt)
        return _logsumexp(self.log_prior[:, None] + logs, axis=0)

    def search(self, a, threshold, top=_FAST_TOP):
        """The ``top`` rounds with the largest ``log M_t(a)`` among those ``>= threshold``
        (branch and bound over blocks; none if no round reaches ``threshold``). Returns
        ``(rounds, values)``, values decreasing."""
        t0, t1 = self.blocks
        val = self.mixture(a, t0, t1)
        found_t, found_v = [], []
        while True:
            single = t0 == t1
            found_t.append(t0[single])
            found_v.append(val[single])
            t0, t1, val = t0[~single], t1[~single], val[~single]
            all_v = np.concatenate(found_v)
            level = threshold
            if all_v.size >= top:
                level = max(level, float(np.partition(all_v, all_v.size - top)[-top]))
            keep = val >= level  # blocks below the level cannot hold a better round
            t0, t1, val = t0[keep], t1[keep], val[keep]
            if t0.size == 0:
                break
            pick = np.zeros(t0.size, dtype=bool)
            pick[np.argsort(-val, kind="stable")[:_FAST_BATCH]] = True
            new0, new1 = [], []
            for lo, hi in zip(t0[pick], t1[pick]):
                step = -(-(hi - lo + 1) // _FAST_SPLIT)
                starts = np.arange(lo, hi + 1, step)
                new0.append(starts)
                new1.append(np.minimum(starts + step - 1, hi))
            new0, new1 = np.concatenate(new0), np.concatenate(new1)
            order = np.argsort(new0)
            new0, new1 = new0[order], new1[order]
            t0 = np.concatenate([t0[~pick], new0])
            t1 = np.concatenate([t1[~pick], new1])
            val = np.concatenate([val[~pick], self.mixture(a, new0, new1)])
            order = np.argsort(t0, kind="stable")
            t0, t1, val = t0[order], t1[order], val[order]
        rounds, values = np.concatenate(found_t), np.concatenate(found_v)
        good = values >= threshold
        rounds, values = rounds[good], values[good]
        order = np.argsort(-values, kind="stable")[:top]
        return rounds[order], values[order]


def _rounds_root(mix, rounds, log_threshold, guess):
    """Smallest ``a`` in [0, 1] at which one of ``rounds`` reaches the threshold (``1.0`` with
    ``False`` if none does at 1), to ~1e-12 and on the side where one does, with whether it is
    interior: :func:`_crossing` on the maximum over the rounds, which is nondecreasing in ``a``."""
    t = np.sort(rounds)
    counts = mix.counts(t)

    def g(a):
        return float(mix.mixture(a, t, t, counts).max()) - log_threshold

    if g(1.0) < 0:
        return 1.0, False
    if g(0.0) >= 0:
        return 0.0, False
    return _crossing(g, guess, 1e-3, 4e-13), True


def _fast_upper_bound(q, rho, log_prior, delta, strategy, tol):
    """:func:`_upper_bound` for the default universal portfolio from value counts.

    1. The ``_FAST_TOP`` rounds with the largest log-wealth at a plug-in guess are candidates;
       ``a*`` = the smallest single-round root among the candidates (Brent, cheap).
    2. Certification: no round reaches the threshold at ``a* - tol / 4`` (branch and bound);
       otherwise its top rounds join the candidates and step 1 repeats. So the exact root of the
       whole e-process lies in ``(a* - tol / 4, a*]``.
    3. ``a* + tol / 8`` is returned after one run of the actual test there (stopped at its
       first crossing) confirms that it rejects: the bound is conservative for the test the
       user runs whatever the quadrature error (Cover's mixture and the adaptive rule differ by
       ~1e-9 relative; ``tol / 8`` buys ``1e-4`` or more in log-wealth at ``n >= 10**4``).
    Raises :class:`_FastPathError` if the confirmation fails (root finding takes over).
    """
    log_threshold = np.log(1.0 / delta)
    n = q.shape[1]
    mix = _CountMixture(q, rho, log_prior)
    guess = _plugin_guess(q, log_threshold)
    candidates = mix.search(guess, -np.inf)[0]
    for _ in range(_FAST_ITERATIONS):
        root, interior = _rounds_root(mix, candidates, log_threshold, guess)
        if root == 0.0:
            break  # rejects at alpha = 0 already (confirmed below)
        check = max(0.0, root - 0.25 * tol) if interior else 1.0
        found = mix.search(check, log_threshold)[0]
        if found.size == 0:
            if not interior:
                return 1.0  # no round reaches the threshold at alpha = 1: never rejects
            break
        candidates, guess = np.union1d(candidates, found), root
    else:
        raise _FastPathError
    bound = min(1.0, root + 0.125 * tol) if interior else root  # root 0: rejects at 0
    if bound == 1.0:
        return 1.0
    with np.errstate(divide="ignore"):
        logw = _run(q, bound, -rho, 1.0 + rho, strategy, delta=delta, n_total=n, monotone=True,
                    log_prior=log_prior, log_threshold=log_threshold)[1]
    if float(_logsumexp(log_prior[:, None] + logw, axis=0).max()) >= log_threshold:
        return bound
    raise _FastPathError


# --------------------------------------------------------------------------------------------
# Confidence bounds: the "plugin" construction (predictable reliance factor, one e-process)
# --------------------------------------------------------------------------------------------
_CONSTRUCTIONS = ("plugin", "paper")
# Cap of the plug-in bets as a fraction of the largest bet 1 / (M_t - alpha) keeping the factor
# nonnegative (Waudby-Smith & Ramdas' c = 3/4).
_PLUGIN_CAP = 0.75
# Reliance factors searched by the plug-in rule when `rho_grid` is not given.
_PLUGIN_RHO = np.linspace(0.0, 1.0, 101)
# Reliance vectors searched by the plug-in rule with k >= 2 judges: the scaled simplex with the
# finest step 1/m (m <= 20) giving at most this many vectors (k = 2: step 0.05, 231 vectors;
# k = 3: step 0.1, 286; k = 4: step 1/6, 210). Two 75% judges, n = 200, 60 draws: the mean
# width with step 0.02 (1326 vectors) was the same to 1e-4, at 12x the cost.
_PLUGIN_MAX_VECTORS = 300


def _plugin_grid(k):
    """Default reliance vectors of the plug-in rule with ``k >= 2`` judges."""
    m = 20
    while m > 1 and _simplex_size(k, m) > _PLUGIN_MAX_VECTORS:
        m -= 1
    return _simplex_grid(k, m)


# The plug-in rule re-selects rho at every round up to this one, then about this many times
# per doubling of the round index (its cost is then O(n + grid * log n)).
_PLUGIN_FULL_ROUNDS = 64


def _plugin_checkpoints(n):
    """Rounds (0-based) at which the plug-in rule re-selects its reliance factor: every round
    before ``_PLUGIN_FULL_ROUNDS``, then every ``t // _PLUGIN_FULL_ROUNDS`` rounds (about
    ``_PLUGIN_FULL_ROUNDS`` selections per doubling of ``t``, ``O(log n)`` grids in all)."""
    t = np.arange(n)
    return np.flatnonzero((t < _PLUGIN_FULL_ROUNDS)
                          | (t % np.maximum(t // _PLUGIN_FULL_ROUNDS, 1) == 0))


def _plugin_rounds(h, d, d_range, rho, side, level, n_total):
    """Predictable reliance factors, observations and bet sizes of one side (plug-in rule).

    The observation of round ``t`` is ``x_t = h_t + rho_t d_t`` with the correction ``d_t``
    known a priori to lie in ``d_range = (d_min, d_max)``, so ``x_t`` lies in
    ``[rho_t d_min, 1 + rho_t d_max]``. Round ``t`` uses only rounds ``< t``. For every ``rho``
    in ``rho`` the variance of ``h + rho d`` is estimated with the pseudo-observation
    ``(1 + rho**2) / 4``, ``sigma2_t(rho) = ((1 + rho**2) / 4 + sum_{j<t} (x_j(rho) -
    xbar(rho))**2) / t``, the risk by ``Rhat_t = (1/2 + sum_{j<t} h_j) / t``. At the rounds of
    :func:`_plugin_checkpoints` ``rho_t`` minimises the predicted half-width
    ``L / (n lam) + lam sigma2 / 2`` with ``lam = min(sqrt(2 L / (n sigma2)), c / span)``,
    ``span = 1 + rho d_max - Rhat`` (upper side) or ``Rhat - rho d_min`` (lower side); in
    between it keeps the last choice (still predictable). The bet size is
    ``s_t = sqrt(2 L / (n sigma2_t(rho_t)))``.

    Returns ``(x, edge, s, rho_t)`` in the *upper* orientation: the lower side is returned
    negated (``-x``, ``edge = -rho_t d_min``) so that one routine computes both wealths:
    ``log W(a) = sum_t log(1 + lam_t(a) (a - x_t))`` with ``lam_t(a) = min(s_t, c / (edge_t -
    a))``.
    """
    if d is not None and d.ndim == 2:
        return _plugin_rounds_judges(h, d, d_range, rho, side, level, n_total)
    n = h.size
    L = np.log(1.0 / level)
    dd = np.zeros(n) if d is None else d

    def past(v):
        out = np.zeros(n)
        np.cumsum(v[:-1], out=out[1:])
        return out

    sums = [past(h), past(dd), past(h * h), past(dd * dd), past(h * dd)]

    def sigma2_of(k, r, s_h, s_d, s_hh, s_dd, s_hd):
        sx = s_h + r * s_d
        ss = s_hh + 2 * r * s_hd + r**2 * s_dd
        ss = np.where(k > 0, ss - sx**2 / np.maximum(k, 1.0), 0.0)
        return ((1.0 + r**2) / 4.0 + np.maximum(ss, 0.0)) / (k + 1.0)

    d_min, d_max = d_range
    cps = _plugin_checkpoints(n)
    k = cps.astype(float)[:, None]  # past rounds before each checkpoint round
    r = rho[None, :]
    sigma2 = sigma2_of(k, r, *(v[cps, None] for v in sums))  # (checkpoints, rho)
    rhat = (0.5 + sums[0][cps, None]) / (k + 1.0)
    span = (1.0 + r * d_max - rhat) if side == "upper" else (rhat - r * d_min)
    cap = _PLUGIN_CAP / np.maximum(span, 1e-12)
    lam = np.minimum(np.sqrt(2.0 * L / (n_total * sigma2)), cap)
    width = L / (n_total * lam) + lam * sigma2 / 2.0
    chosen = rho[np.argmin(width, axis=1)]  # ties: the smallest rho
    rho_t = chosen[np.searchsorted(cps, np.arange(n), side="right") - 1]
    sigma2_t = sigma2_of(np.arange(n, dtype=float), rho_t, *sums)
    s = np.sqrt(2.0 * L / (n_total * sigma2_t))
    x = h + rho_t * dd
    if side == "upper":
        return x, 1.0 + rho_t * d_max, s, rho_t
    return -x, -rho_t * d_min, s, rho_t


def _past_sums(v):
    """Sums over the rounds before each round, along axis 0 (``out[t] = sum_{j<t} v[j]``)."""
    out = np.zeros_like(v, dtype=float)
    np.cumsum(v[:-1], axis=0, out=out[1:])
    return out


def _judge_checkpoints(n):
    """Rounds (0-based) at which the plug-in rule with several judges re-selects its reliance
    vector: every round before ``_PLUGIN_FULL_ROUNDS``, then geometrically, ``t -> t + t //
    _PLUGIN_FULL_ROUNDS`` (about 44 selections per doubling of ``t``: 690 at ``n = 10**6``)."""
    cps = list(range(min(n, _PLUGIN_FULL_ROUNDS)))
    t = _PLUGIN_FULL_ROUNDS
    while t < n:
        cps.append(t)
        t += t // _PLUGIN_FULL_ROUNDS
    return np.array(cps, dtype=np.int64)


def _plugin_rounds_judges(h, d, d_range, rho, side, level, n_total):
    """:func:`_plugin_rounds` with ``k >= 2`` judges: ``d`` (n, k), reliance vectors ``rho``
    (S, k) with nonnegative entries, ``x_t = h_t + w_t . d_t`` in ``[|w_t| d_min, 1 + |w_t|
    d_max]`` (``|w| = sum_j w_j``).

    The same rule as for one judge, with the past (co)variances: ``sigma2_t(w) = ((1 + |w|_2**2)
    / 4 + sum_{j<t} (x_j(w) - xbar(w))**2) / t`` from the past sums of ``h``, ``d``, ``h**2``,
    ``h d`` and ``d d^T``; ``w_t`` minimises the predicted half-width at the rounds of
    :func:`_judge_checkpoints`, using rounds ``< t`` only, and is kept in between. Returns
    ``(x, edge, s, w_t)`` (``w_t`` of shape (n, k))."""
    n, k = d.shape
    L = np.log(1.0 / level)
    pairs = [(i, j) for i in range(k) for j in range(i, k)]  # upper triangle of d d^T
    s_h, s_hh = _past_sums(h), _past_sums(h * h)
    s_d, s_hd = _past_sums(d), _past_sums(h[:, None] * d)
    s_dd = _past_sums(np.column_stack([d[:, i] * d[:, j] for i, j in pairs]))
    mult = np.array([1.0 if i == j else 2.0 for i, j in pairs])

    def sigma2_of(at, w):
        """``sigma2_t(w)`` (m, S) at rounds ``at`` (m,) for the vectors ``w`` (S, k)."""
        t = at.astype(float)[:, None]
        sx = s_h[at, None] + s_d[at] @ w.T
        wp = np.column_stack([w[:, i] * w[:, j] for i, j in pairs]) * mult
        ss = s_hh[at, None] + 2.0 * (s_hd[at] @ w.T) + s_dd[at] @ wp.T
        ss = np.where(t > 0, ss - sx**2 / np.maximum(t, 1.0), 0.0)
        return ((1.0 + np.sum(w * w, axis=1))[None, :] / 4.0 + np.maximum(ss, 0.0)) / (t + 1.0)

    d_min, d_max = d_range
    reach = rho.sum(axis=1)
    cps = _judge_checkpoints(n)
    sigma2 = sigma2_of(cps, rho)  # (checkpoints, S)
    rhat = (0.5 + s_h[cps, None]) / (cps.astype(float)[:, None] + 1.0)
    span = (1.0 + reach[None, :] * d_max - rhat) if side == "upper" else \
        (rhat - reach[None, :] * d_min)
    cap = _PLUGIN_CAP / np.maximum(span, 1e-12)
    lam = np.minimum(np.sqrt(2.0 * L / (n_total * sigma2)), cap)
    width = L / (n_total * lam) + lam * sigma2 / 2.0
    chosen = np.argmin(width, axis=1)  # ties: the first vector in the grid's order
    seg = np.searchsorted(cps, np.arange(n), side="right") - 1  # checkpoint of each round
    idx = chosen[seg]
    w_t = rho[idx]
    # sigma2_t(w_t) of every round, the vector of its segment: O(n k^2)
    t = np.arange(n, dtype=float)
    sx = s_h + np.einsum("tj,tj->t", w_t, s_d)
    wp = np.column_stack([w_t[:, i] * w_t[:, j] for i, j in pairs]) * mult
    ss = s_hh + 2.0 * np.einsum("tj,tj->t", w_t, s_hd) + np.einsum("tp,tp->t", wp, s_dd)
    ss = np.where(t > 0, ss - sx**2 / np.maximum(t, 1.0), 0.0)
    sigma2_t = ((1.0 + np.einsum("tj,tj->t", w_t, w_t)) / 4.0 + np.maximum(ss, 0.0)) / (t + 1.0)
    s = np.sqrt(2.0 * L / (n_total * sigma2_t))
    x = h + np.sum(w_t * d, axis=1)
    if side == "upper":
        return x, 1.0 + reach[idx] * d_max, s, w_t
    return -x, -reach[idx] * d_min, s, w_t


def _plugin_log_wealth(x, edge, s, a):
    """``log W_t(a) = sum_{j<=t} log(1 + lam_j(a) (a - x_j))``, ``lam_j(a) = min(s_j,
    c / (edge_j - a))``; each factor is nondecreasing in ``a`` (see the user guide), so is the
    wealth."""
    lam = np.minimum(s, _PLUGIN_CAP / np.maximum(edge - a, 1e-300))
    return np.cumsum(np.log1p(lam * (a - x)))


def _plugin_upper(x, edge, s, level, tol, lo, hi):
    """Smallest ``a`` in ``[lo, hi]`` (upper orientation) at which the plug-in e-process
    reaches ``1 / level``, to within ``tol`` on the conservative side; ``hi`` if never."""
    log_threshold = np.log(1.0 / level)

    def f(a):
        return max(float(_plugin_log_wealth(x, edge, s, a).max()) - log_threshold, -1e6)

    n = x.size
    mean, sd = float(np.mean(x)), float(np.std(x))
    guess = min(hi, max(lo, mean + sd * np.sqrt(2.0 * log_threshold / n)))
    return _crossing(f, guess, max(sd / np.sqrt(n), 1e-3), tol, lo, hi)


def _plugin_side(h, g, u, rho, side, level, tol, d=None):
    """One bound (``side`` "upper" or "lower") at level ``level`` by the plug-in construction;
    ``u=None`` (or ``rho == [0]``) runs labels only. Returns ``(bound, rho_t)``. Several judges
    (``rho`` of shape (S, k)): ``d``, if given, is ``_corrections(g, u, n)`` computed once for
    both sides."""
    n = h.size
    if u is None or not np.any(rho > 0):
        rho, d = np.zeros(1), None
    elif rho.ndim == 2:
        d = _corrections(g, u, n) if d is None else d         # (n, k), in [-1, 1]
    else:
        r = u.size // n
        d = u[: n * r].reshape(n, r).mean(axis=1) - g       # ubar_t - g_t in [-1, 1]
    x, edge, s, rho_t = _plugin_rounds(h, d, (-1.0, 1.0), rho, side, level, n)
    if side == "upper":
        return _plugin_upper(x, edge, s, level, tol, 0.0, 1.0), rho_t
    return -_plugin_upper(x, edge, s, level, tol, -1.0, 0.0), rho_t


def rautoeval_confidence_interval(
    loss_labeled: ArrayLike,
    loss_judge_labeled: ArrayLike | None = None,
    loss_judge_unlabeled: ArrayLike | None = None,
    *,
    delta: float,
    side: str = "two-sided",
    method: str = "plus",
    betting: str | Any = "wsr",
    n_rho: int = 10,
    rho_grid: ArrayLike | None = None,
    rho_prior: ArrayLike | None = None,
    split: float = 0.5,
    tol: float = 1e-6,
    construction: str = "plugin",
    groups_labeled: ArrayLike | None = None,
    groups_unlabeled: ArrayLike | None = None,
    max_group_size: float | None = None,
) -> RiskConfidenceInterval:
    """Confidence bounds for the risk by inverting R-Eval / R-AutoEval / R-AutoEval+ tests.

    Each bound is the set of ``alpha`` a betting test does not reject; the test's bets are
    made so that rejection is monotone in ``alpha``, and the crossing is found by root finding
    to ``tol`` (on the conservative side). Two-sided: ``delta_u = split * delta`` for the upper
    bound, ``delta_l = (1 - split) * delta`` for the lower one. Two constructions
    (``construction``; see :ref:`autoeval-ci` in the user guide for the validity proofs):

    * ``"plugin"`` (default): **one** e-process per side on ``q_t(rho_t) = h_t + rho_t
      (ubar_t - g_t)`` whose reliance factor ``rho_t`` is chosen from rounds ``< t`` only
      (predictable), by minimising the half-width predicted from the past variance of
      ``h + rho (ubar - g)`` and from the range ``[-rho, 1 + rho]``; ``R-Eval`` and
      ``R-AutoEval`` fix ``rho_t = 0`` and ``1``. With ``k >= 2`` judges ``rho_t`` is a
      vector ``w_t`` (``w_tj >= 0``, ``sum_j w_tj <= 1``) chosen the same way from the past
      covariances of ``h`` and the judges' corrections, among the vectors of ``rho_grid``
      (default: the scaled simplex with step 0.05 for two judges, at most 300 vectors for
      more), re-selected at every round up to 64, then about 44 times per doubling of ``t``.
      The bets are ``lambda_t(alpha) = min(s_t, 0.75 / (1 + rho_t - alpha))`` (upper bound;
      ``1 + sum_j w_tj - alpha`` with several judges) with the
      variance-adaptive size ``s_t = sqrt(2 log(1 / delta_u) / (n sigma2_t))``, and the mirror
      image for the lower bound; each wealth factor is nonnegative and monotone in ``alpha``.
      No ``log S`` mixture cost, and the cap follows the actual ``alpha`` instead of the
      whole range: narrower than the paper's construction in every case measured.
    * ``"paper"``: the paper's App. D.5: the R-AutoEval+ mixture over the reliance factors,
      with WSR bets capped at ``1 / (M - m) = 1 / (1 + 2 rho)`` (or universal-portfolio bets
      ``b / (M - m)``) so that they do not depend on ``alpha``.

    An *empty* interval (``low > high``) is returned as computed with a
    :class:`~sklearn_riskcontrol.RiskControlWarning`: it happens with probability at most
    ``delta``, or when the judge's losses on the labeled and unlabeled examples differ in
    distribution (then no guarantee holds).

    Parameters
    ----------
    loss_labeled, loss_judge_labeled, loss_judge_unlabeled : array-like
        As in :func:`rautoeval_test` (judge losses of shape (n, k) and (N, k) for ``k``
        judges).
    delta : float in (0, 1)
        Miscoverage: ``P(low <= R <= high) >= 1 - delta``.
    side : {"two-sided", "upper", "lower"}, default="two-sided"
    method : {"plus", "autoeval", "eval"}, default="plus"
    betting : {"wsr", "up"} or strategy object, default="wsr"
        Bets of the paper construction: WSR (the paper's choice) costs ``O(S n)`` per
        evaluation of the test, with the bets computed once per bound. The universal
        portfolio (``"up"``, adaptive integration) on losses with few distinct values (at most
        256 classes of labeled examples with equal effective observations; binary losses give
        at most ``4 (r + 1)``) finds each bound from Cover's mixture computed from value counts
        and confirms it with one run of the
        test stopped at its first crossing: a two-sided interval takes 0.6 to 0.9 s of CPU at
        ``n = 10**5``, ``S = 10``, ``r = 5`` (0.04 to 0.08 s at ``10**4``; about 10x faster
        than root finding, same bounds to within ``tol``). Other losses and other UP
        settings use root finding on full runs, about 10 per bound, each ``O(S n)``
        (``O(S n**2 / 2)`` with ``integration="exact"``): about 7 s at ``n = 10**5``.
        ``construction="plugin"`` takes only ``"wsr"`` (its own variance-adaptive bets,
        ``O(n + len(rho_grid) log n)`` once plus ``O(n)`` per evaluation: 0.05 s at
        ``n = 10**5``).
    n_rho, rho_grid, rho_prior
        As in :func:`rautoeval_test` for ``construction="paper"``. With ``"plugin"``,
        ``rho_t`` is searched in ``rho_grid`` (default ``linspace(0, 1, 101)``; several
        judges: the vectors above); ``n_rho`` and ``rho_prior`` (mixture settings) are not
        used.
    split : float in (0, 1), default=0.5
        Share of ``delta`` spent on the upper bound (two-sided only).
    tol : float, default=1e-6
        Tolerance on each bound (the returned bound is conservative by at most ``tol``).
    construction : {"plugin", "paper"}, default="plugin"
        ``"plugin"``: predictable reliance factor and alpha-adaptive capped bets (above);
        ``"paper"``: the paper's mixture inversion (the former default; kept to reproduce
        the paper's intervals).
    groups_labeled, groups_unlabeled, max_group_size
        Clustered items, as in :func:`rautoeval_test`: the bounds are on the item-level risk
        ``R = E[S] / E[M]``, the clusters (in the order of their first row) are the draws. The
        test at each ``alpha`` bets on ``alpha B - A`` with ``A = S + rho (Ubar - G)`` and
        ``B = (1 - rho) M + rho Mbar``, which is nondecreasing in ``alpha``, with an
        ``alpha``-dependent cap that keeps every wealth factor nondecreasing in ``alpha``
        (:ref:`autoeval-clusters`); with clusters of one size it is the default construction
        on the cluster means, so singleton clusters give the interval without groups exactly.
        ``construction="plugin"`` only.

    Returns
    -------
    RiskConfidenceInterval

    Warns
    -----
    RiskControlWarning
        When the interval is empty (``low > high``), and when there is no unlabeled data
        (the method reduces to R-Eval).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_riskcontrol.autoeval import rautoeval_confidence_interval
    >>> rng = np.random.default_rng(0)
    >>> h = rng.binomial(1, 0.2, 400).astype(float)      # labeled losses only: R-Eval
    >>> ci = rautoeval_confidence_interval(h, delta=0.1, method="eval")
    >>> round(float(h.mean()), 4)                         # realized mean loss of this draw
    0.2475
    >>> print(ci)                                         # true risk here: 0.2
    [0.2106, 0.2995] (two-sided, R-Eval): intervals built this way cover the risk with
    probability >= 0.9 over the draw of the labeled data

    With a judge that agrees with the true loss 90% of the time and 4000 unlabeled examples
    (widths of this one draw; both constructions cover with probability >= 0.9):

    >>> g = np.where(rng.random(400) < 0.9, h, 1 - h)
    >>> h_u = rng.binomial(1, 0.2, 4000)
    >>> u = np.where(rng.random(4000) < 0.9, h_u, 1 - h_u).astype(float)
    >>> ci = rautoeval_confidence_interval(h, g, u, delta=0.1)
    >>> paper = rautoeval_confidence_interval(h, g, u, delta=0.1, construction="paper")
    >>> round(ci.high - ci.low, 3), round(paper.high - paper.low, 3)
    (0.048, 0.052)

    Two judges, each right on 75% of the examples with independent errors, one column each
    (widths of one draw; over 1000 draws with n = 200 the interval with both judges is about
    6% narrower than with either alone, see :ref:`autoeval-judges`):

    >>> def judge(x):
    ...     return np.where(rng.random(x.size) < 0.75, x, 1 - x)
    >>> G = np.column_stack([judge(h), judge(h)])           # (n, 2)
    >>> U = np.column_stack([judge(h_u), judge(h_u)])       # (N, 2)
    >>> both = rautoeval_confidence_interval(h, G, U, delta=0.1)
    >>> alone = [rautoeval_confidence_interval(h, G[:, j], U[:, j], delta=0.1) for j in (0, 1)]
    >>> round(both.high - both.low, 3), [round(c.high - c.low, 3) for c in alone]
    (0.086, [0.086, 0.088])
    """
    if side not in ("two-sided", "upper", "lower"):
        raise ValueError(f"`side` must be 'two-sided', 'upper' or 'lower'; got {side!r}.")
    if construction not in _CONSTRUCTIONS:
        raise ValueError(
            f"`construction` must be 'plugin' (predictable reliance factor, the default) or "
            f"'paper' (the paper's mixture over rho); got {construction!r}."
        )
    split = check_level(split, "split")
    if not (isinstance(tol, numbers.Real) and 0 < tol < 1):
        raise ValueError(f"`tol` must be a number in (0, 1); got {tol!r}.")
    if construction == "plugin" and not (isinstance(betting, str) and betting == "wsr"):
        _resolve_betting(betting)  # a clear error for an invalid value first
        raise ValueError(
            f"`betting`={betting!r} applies to construction='paper' only: the default "
            "construction='plugin' uses its own variance-adaptive bets (betting='wsr'). Pass "
            "construction='paper' to invert the paper's tests with other bets."
        )
    tables = None
    if groups_labeled is not None:  # clusters are the draws: checked at the cluster level
        from ._clusters import _observations_at, cluster_tables

        if construction != "plugin":
            raise ValueError("`groups_labeled` needs construction='plugin' (the default): the "
                             "paper's construction has no clustered version.")
        tables = cluster_tables(loss_labeled, loss_judge_labeled, loss_judge_unlabeled,
                                groups_labeled, groups_unlabeled, max_group_size)
        loss_labeled, loss_judge_labeled, loss_judge_unlabeled = _observations_at(0.5, tables)
    q, rho, log_prior, _, delta, strategy, run_method, _, h = _prepare(
        loss_labeled, loss_judge_labeled, loss_judge_unlabeled, 0.5, delta, method, betting,
        n_rho, rho_grid, rho_prior, observations=construction == "paper",
    )
    if run_method != method:
        warn(
            f"No unlabeled data (`loss_judge_unlabeled` is None or empty): method={method!r} "
            "reduces to R-Eval (rho = 0)."
        )
    d_up = {"two-sided": split * delta, "upper": delta, "lower": 0.0}[side]
    d_lo = {"two-sided": (1.0 - split) * delta, "upper": 0.0, "lower": delta}[side]
    if construction == "paper":
        reach = _reach(rho)
        high = _upper_bound(q, reach, log_prior, d_up, strategy, tol) if d_up > 0 else 1.0
        mirrored = np.clip(1.0 - q, -reach[:, None], 1.0 + reach[:, None])  # m + M - q = 1 - q
        low = (1.0 - _upper_bound(mirrored, reach, log_prior, d_lo, strategy, tol)
               if d_lo > 0 else 0.0)
    else:
        _, g, u, _ = _check_losses(loss_labeled, loss_judge_labeled, loss_judge_unlabeled,
                                   run_method)
        if run_method == "plus" and rho_grid is None:
            rho = _PLUGIN_RHO if rho.ndim == 1 else _plugin_grid(rho.shape[1])
        if tables is not None:
            from ._clusters import clustered_bound

            use = run_method != "eval"
            high = clustered_bound(tables, use, rho, "upper", d_up, tol) if d_up > 0 else 1.0
            low = clustered_bound(tables, use, rho, "lower", d_lo, tol) if d_lo > 0 else 0.0
        else:
            d = _corrections(g, u, h.size) if u is not None and rho.ndim == 2 else None
            high = _plugin_side(h, g, u, rho, "upper", d_up, tol, d)[0] if d_up > 0 else 1.0
            low = _plugin_side(h, g, u, rho, "lower", d_lo, tol, d)[0] if d_lo > 0 else 0.0
    low = float(max(low, 0.0))
    if low > high:
        warn(
            f"The confidence interval is empty: its lower bound {low:.4g} exceeds its upper "
            f"bound {high:.4g}. Two causes are likely: the auto-evaluator's losses on the "
            "labeled and on the unlabeled examples differ in distribution (different sources, "
            "a judge that behaves differently on the two sets, or a non-random labeled "
            "subset), which biases the correction; or this draw is one of the rare ones, of "
            f"probability at most delta={delta:g}, on which the interval misses the risk. "
            "Check how the labeled rows were chosen, and compare with method='eval' (labels "
            "only)."
        )
    return RiskConfidenceInterval(low=low, high=float(high), delta=delta, side=side,
                                  method=run_method, construction=construction)


# --------------------------------------------------------------------------------------------
# Model selection over loss tables
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False, repr=False)
class ModelSelectionResult(ResultMixin):
    """Result of :func:`rautoeval_select`.

    Attributes
    ----------
    certified : ndarray of bool, shape (K,)
        Candidates certified with family-wise error at most ``delta``.
    pvalues : ndarray of shape (K,)
        Per-candidate p-values (NaN for candidates fixed-sequence testing never reached).
    tested : ndarray of bool, shape (K,)
    selected : int or None
        Index of the certified candidate with the smallest ``cost``; ``None`` if nothing is
        certified (never an uncertified fallback).
    procedure : str
    delta : float
        Family-wise error level.
    test_level : float
        Level of each individual test (``delta`` for FST, ``delta / K`` for Bonferroni).
    results : tuple
        The :class:`RAutoEvalResult` of each tested candidate (``None`` if not tested).
    """

    _frame_columns = ("certified", "pvalues", "tested")

    certified: np.ndarray
    pvalues: np.ndarray
    tested: np.ndarray
    selected: object
    procedure: str
    delta: float
    test_level: float
    results: tuple

    def __repr__(self):
        return (
            f"ModelSelectionResult(selected={self.selected}, "
            f"certified={np.flatnonzero(self.certified).tolist()}, "
            f"n_tested={int(self.tested.sum())}/{self.tested.size}, "
            f"procedure={self.procedure!r}, delta={self.delta:g})"
        )


def _as_table(x, name):
    """Rows of a (K, n) table; a list/tuple of 1-d rows (possibly ragged) is accepted."""
    if x is None:
        return None
    what = "a 2-d table of numbers (n_candidates, n_examples)"
    if isinstance(x, (list, tuple)) and not all(np.ndim(row) == 1 for row in x):
        x = as_float_array(x, name, what)
    if isinstance(x, (list, tuple)):
        return [as_float_array(row, name, what) for row in x]
    arr = as_float_array(x, name, what)
    if arr.ndim != 2:
        raise ValueError(
            f"`{name}` must be a 2-d table (n_candidates, n_examples); got shape {arr.shape}."
        )
    return list(arr)


def _one_candidate(k, h, g, u, alpha, level, method, strategy, n_rho, rho_grid, rho_prior,
                   early_stopping):
    q, rho, log_prior, alpha, level, _, run_method, r, _ = _prepare(
        h, g, u, alpha, level, method, strategy, n_rho, rho_grid, rho_prior, suffix=f"[{k}]"
    )
    out = _core_test(q, rho, log_prior, alpha, level, strategy, early_stopping, q.shape[1])
    return RAutoEvalResult(method=run_method, block_size=r, **out)


def rautoeval_select(
    loss_labeled: ArrayLike,
    loss_judge_labeled: ArrayLike | None = None,
    loss_judge_unlabeled: ArrayLike | None = None,
    *,
    alpha: float,
    delta: float,
    procedure: str = "fst",
    cost: ArrayLike | None = None,
    method: str = "plus",
    betting: str | Any = "up",
    n_rho: int = 10,
    rho_grid: ArrayLike | None = None,
    rho_prior: ArrayLike | None = None,
    early_stopping: bool = False,
    n_jobs: int | None = None,
    verbose: int = 0,
    groups_labeled: ArrayLike | None = None,
    groups_unlabeled: ArrayLike | None = None,
    max_group_size: float | None = None,
) -> ModelSelectionResult:
    """Risk-controlled model selection over loss tables (one R-AutoEval+ test per candidate).

    Parameters
    ----------
    loss_labeled : array-like of shape (K, n)
        Row ``k``: losses of candidate ``k`` on the labeled examples (true labels).
    loss_judge_labeled : array-like of shape (K, n), default=None
        Losses of each candidate judged by the auto-evaluator on the same examples.
    loss_judge_unlabeled : array-like of shape (K, N), default=None
        Judge losses of each candidate on the unlabeled examples.
    alpha, delta : float in (0, 1)
        Tolerated risk and family-wise error rate: with probability ``1 - delta`` every
        certified candidate has risk at most ``alpha``.
    procedure : {"fst", "bonferroni"}, default="fst"
        * ``"fst"`` (fixed-sequence testing): candidates in the order given (e.g. decreasing
          model size) are tested at the full ``delta``; testing stops at the first failure and
          only the candidates before it are certified. If the first fails nothing is certified.
        * ``"bonferroni"``: every candidate is tested at ``delta / K`` (in the WSR bet and in
          the threshold ``K / delta``).
    cost : array-like of shape (K,), default=None
        Selection criterion among certified candidates (smallest wins, ties to the lowest
        index). ``None`` selects the certified candidate that comes last in the given order
        (FST's convention: order from safest to cheapest).
    method, betting, n_rho, rho_grid, rho_prior, early_stopping
        As in :func:`rautoeval_test`.
    n_jobs : int, default=None
        Candidates tested in parallel with joblib, in tasks of several candidates sized from
        the first candidates' cost (all tested here when parallelism would not pay; see
        :doc:`/scale_out`). FST evaluates one round of tasks per worker at a time and stops
        after the round with the first failure; the result does not depend on ``n_jobs``.
    verbose : int, default=0
        Report progress over the candidates (a tqdm bar in a terminal or notebook, else a line
        at about every 10% of the candidates).
    groups_labeled, groups_unlabeled, max_group_size
        Clustered items, as in :func:`rautoeval_test` (one cluster id per column of the
        tables, the same for every candidate): each candidate's test runs on the clusters.

    Returns
    -------
    ModelSelectionResult

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_riskcontrol.autoeval import rautoeval_select
    >>> rng = np.random.default_rng(0)
    >>> risks = np.array([0.02, 0.04, 0.08, 0.3])          # bigger to smaller models
    >>> h = rng.binomial(1, risks[:, None], (4, 300)).astype(float)
    >>> g = np.where(rng.random((4, 300)) < 0.95, h, 1 - h)
    >>> hu = rng.binomial(1, risks[:, None], (4, 1500))
    >>> u = np.where(rng.random((4, 1500)) < 0.95, hu, 1 - hu).astype(float)
    >>> sel = rautoeval_select(h, g, u, alpha=0.15, delta=0.1)
    >>> # Over the draw of the data, P(some certified candidate has risk > 0.15) <= 0.1:
    >>> sel.certified.tolist(), sel.selected
    ([True, True, True, False], 2)
    """
    if procedure not in ("fst", "bonferroni"):
        raise ValueError(f"`procedure` must be 'fst' or 'bonferroni'; got {procedure!r}.")
    alpha = check_level(alpha, "alpha")
    delta = check_level(delta, "delta")
    strategy = _resolve_betting(betting)
    H = _as_table(loss_labeled, "loss_labeled")
    if H is None or len(H) == 0:
        raise ValueError("`loss_labeled` must hold at least one candidate (one row each).")
    K = len(H)
    G = _as_table(loss_judge_labeled, "loss_judge_labeled")
    U = _as_table(loss_judge_unlabeled, "loss_judge_unlabeled")
    for name, tab in (("loss_judge_labeled", G), ("loss_judge_unlabeled", U)):
        if tab is not None and len(tab) != K:
            raise ValueError(
                f"`{name}` has {len(tab)} rows but `loss_labeled` has {K}: one row per "
                "candidate is required."
            )
    if groups_labeled is not None:  # clusters are the draws: each candidate's cluster rows
        from ._clusters import clustered_losses

        for k in range(K):
            H[k], gk, uk = clustered_losses(
                alpha, H[k], None if G is None else G[k], None if U is None else U[k],
                groups_labeled, groups_unlabeled, max_group_size)
            if G is not None:
                G[k] = gk
            if U is not None and uk is not None:
                U[k] = uk
    if cost is None:
        cost_arr = -np.arange(K, dtype=float)
    else:
        cost_arr = np.asarray(cost, dtype=float).ravel()
        if cost_arr.shape[0] != K or not np.all(np.isfinite(cost_arr)):
            raise ValueError(f"`cost` must hold {K} finite numbers (one per candidate).")
    level = delta if procedure == "fst" else delta / K
    if method == "plus":
        _rho_setup("plus", n_rho, rho_grid, rho_prior)  # parameter errors before any work

    # Validate every candidate's inputs up front so that errors never depend on FST's stop.
    all_wrong = []
    for k in range(K):
        h = _check_losses(H[k], None if G is None else G[k], None if U is None else U[k],
                          method, suffix=f"[{k}]")[0]
        if np.all(h >= 1.0):
            all_wrong.append(k)
    if all_wrong:
        warn(_all_wrong_message(f"of candidate(s) {all_wrong}"))
    if method != "eval" and (U is None or any(np.size(row) == 0 for row in U)):
        warn(
            f"No unlabeled data for some candidates: method={method!r} reduces to R-Eval "
            "(rho = 0) for them."
        )
    bar = Progress(K, verbose=verbose, desc="rautoeval_select", unit="candidates")

    def record(k, res):  # True (FST: stop) when candidate k is not certified
        bar.update(k + 1, pvalue=res.pvalue)
        return not res.certified

    # A module-level task with each candidate's rows: every backend can pickle it; tasks are
    # sized from the first candidates' cost, or all run here when too small to pay.
    done = run_units(
        _one_candidate,
        [(k, H[k], None if G is None else G[k], None if U is None else U[k]) for k in range(K)],
        (alpha, level, method, strategy, n_rho, rho_grid, rho_prior, early_stopping),
        n_jobs=n_jobs, each=record, may_stop=procedure == "fst",
    )
    results = done + [None] * (K - len(done))
    bar.close()
    pvalues = np.full(K, np.nan)
    for k, res in enumerate(results):
        if res is not None:
            pvalues[k] = res.pvalue
    if procedure == "fst":
        first_fail = next((k for k, res in enumerate(results) if res is None or
                           not res.certified), K)
        for k in range(first_fail + 1, K):  # never reached by FST (a batch may have run them)
            results[k] = None
            pvalues[k] = np.nan
        certified = np.zeros(K, dtype=bool)
        certified[: first_fail + 1] = fixed_sequence(pvalues[: first_fail + 1], delta)
    else:
        certified = bonferroni(pvalues, delta)
    tested = np.array([res is not None for res in results])
    if certified.any():
        idx = np.flatnonzero(certified)
        selected = int(idx[np.argmin(cost_arr[idx])])
    else:
        selected = None
        if procedure == "fst":
            warn(
                f"Nothing is certified: the first candidate in the fixed sequence failed "
                f"(p-value {pvalues[0]:.3g} > delta={delta:g}), so fixed-sequence testing "
                "stops there and no later candidate may be selected."
            )
        else:
            warn(
                f"Nothing is certified: no candidate reached p-value <= delta/K = {level:.3g} "
                f"(smallest p-value {np.nanmin(pvalues):.3g})."
            )
    return ModelSelectionResult(
        certified=certified, pvalues=pvalues, tested=tested, selected=selected,
        procedure=procedure, delta=delta, test_level=level, results=tuple(results),
    )
