"""Testing by betting: betting strategies and log-space e-processes.

Observations ``q_1, ..., q_n`` lie in ``[m, M]`` and estimate an unknown mean ``R``. To test
``H0: R > alpha`` a gambler starts with wealth 1 and multiplies it in round ``i`` by
``1 - lambda_i (q_i - alpha)``, with a *predictable* bet ``lambda_i`` (a function of
``q_1, ..., q_{i-1}`` only) in ``[0, 1 / (M - alpha))``. Under ``H0`` the wealth is a
non-negative supermartingale, so by Ville's inequality ``P(sup_i E_i >= 1 / delta) <= delta``.

Everything here works on the logarithm of the wealth (cumulative sums of ``log1p`` of the
factors) and is vectorised over independent rows (e.g. the reliance factors ``rho`` of
R-AutoEval+): products over ``10**6`` rounds neither overflow nor underflow, and there is no
Python loop over rounds.

Betting strategies
------------------
:class:`WSR`
    Waudby-Smith & Ramdas' predictable plug-in bets (closed form with cumulative sums).
:class:`UniversalPortfolio`
    Cover's universal portfolio: ``lambda_i`` is the wealth-weighted average of the constant
    bets ``b / (M - alpha)``, ``b in (0, 1)``, under a prior ``F`` on ``b``. For a prior with
    atoms ``b_k`` and weights ``pi_k`` the log-wealth of every constant bet is a cumulative sum
    over rounds, so all bets come from one ``(rows, nodes, rounds)`` array: a softmax of the
    node log-wealths (shifted by their maximum every round) averages ``b_k``. The default prior
    is the continuous arcsine (Beta(1/2, 1/2)) law, integrated on a window of nodes that follows
    the concentrating posterior (O(n) per row; the exact Gauss-Chebyshev rule of
    :meth:`UniversalPortfolio.quadrature` costs O(n**2)).
:class:`FixedBet`
    A constant fraction of the maximal bet.

The wealth of a universal portfolio equals the prior mixture of the constant-bet wealths,
``E_i = sum_k pi_k W_k,i`` (the same telescoping as R-AutoEval+'s mixture over ``rho``);
:func:`mixture_log_eprocess` and :func:`mixture_weights` compute such mixtures in log space.
"""

from __future__ import annotations

import functools
import itertools
import numbers
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from threadpoolctl import ThreadpoolController

from .._typing import FloatArray
from .._validation import _as_1d_float, as_float_array, check_level, check_number, show

__all__ = [
    "WSR",
    "UniversalPortfolio",
    "FixedBet",
    "BettingEProcess",
    "betting_eprocess",
    "mixture_log_eprocess",
    "mixture_weights",
]

# Elements of the (rows, nodes, rounds) work array processed at once by the universal portfolio;
# bounds memory (16 MB) without measurable cost (chunks are over rounds, never single rounds).
_CHUNK_ELEMENTS = 2**21
# Rows of observations with at most this many distinct values get their node log-wealths from
# running counts (a matrix product) instead of a cumulative sum over rounds.
_MAX_DISTINCT = 32


@functools.lru_cache(maxsize=1)
def _blas_controller():
    return ThreadpoolController()


def _single_threaded_blas():
    """Context limiting BLAS to one thread: our matrix products are small (nodes x distinct
    values x rounds), and a multi-threaded BLAS on a loaded machine can make them 100x slower."""
    return _blas_controller().limit(limits=1, user_api="blas")


def _logsumexp(a, axis=0):
    """``log(sum(exp(a), axis))`` without overflow; ``-inf`` entries allowed (light-weight
    version of scipy's, which costs more than the sums here)."""
    m = np.max(a, axis=axis, keepdims=True)
    m[~np.isfinite(m)] = 0.0
    with np.errstate(divide="ignore"):
        out = np.log(np.sum(np.exp(a - m), axis=axis, keepdims=True))
    out += m
    return np.squeeze(out, axis=axis)


# --------------------------------------------------------------------------------------------
# Strategies
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class WSR:
    """Waudby-Smith & Ramdas (2024) predictable plug-in bets.

    With ``mu_j = (1/2 + sum_{k<=j} q_k) / (j + 1)`` and
    ``sigma2_{i-1} = (1/4 + sum_{j<=i-1} (q_j - mu_j)**2) / i``, the bet of round ``i`` is
    ``lambda_i = min(c / (M - alpha), sqrt(2 log(1/delta) / (n sigma2_{i-1})))``, where ``n`` is
    the total number of rounds and ``delta`` the level of the test (R-AutoEval+ paper, eqs.
    20-21). All bets come from cumulative sums (no loop over rounds).

    With ``monotone=True`` (confidence bounds) the cap becomes ``1 / (M - m)`` (paper, App. D.5):
    the bets then do not depend on ``alpha`` and the wealth is nondecreasing in ``alpha``.

    Parameters
    ----------
    c : float in (0, 1), default=0.75
        Fraction of the maximal bet ``1 / (M - alpha)`` used as cap.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_riskcontrol.evalues.betting import WSR, betting_eprocess
    >>> q = np.zeros(50)                       # fifty perfect answers
    >>> res = betting_eprocess(q, alpha=0.2, betting=WSR(), delta=0.1)
    >>> round(float(res.bets[0]), 4)           # sqrt(8 log(10) / 50) = 0.607 < 0.75 / 0.8
    0.607
    >>> bool(res.log_wealth[-1] >= np.log(10))
    True
    """

    c: float = 0.75

    def __post_init__(self):
        check_level(self.c, "c")

    needs_delta = True

    def _alpha_free(self, monotone):
        return monotone

    def _iter_bets(self, q, alpha, lower, upper, *, delta, n_total, monotone):
        n = q.shape[1]
        j = np.arange(1, n + 1, dtype=float)
        mu = (0.5 + np.cumsum(q, axis=1)) / (j + 1.0)
        sq = np.cumsum((q - mu) ** 2, axis=1)
        sigma2_prev = np.empty_like(q)
        sigma2_prev[:, 0] = 0.25
        sigma2_prev[:, 1:] = (0.25 + sq[:, :-1]) / j[1:]
        if monotone:
            cap = 1.0 / (upper - lower)
        else:
            cap = self.c / (upper - alpha)
        lam = np.sqrt(2.0 * np.log(1.0 / delta) / (n_total * sigma2_prev))
        yield 0, n, np.minimum(cap[:, None], lam)


@dataclass(frozen=True)
class FixedBet:
    """Constant bet ``lambda = fraction / (M - alpha)`` (``fraction / (M - m)`` if monotone).

    Parameters
    ----------
    fraction : float in [0, 1), default=0.5

    Examples
    --------
    >>> from sklearn_riskcontrol.evalues.betting import FixedBet, betting_eprocess
    >>> res = betting_eprocess([0.0, 0.0], alpha=0.5, betting=FixedBet(0.5))
    >>> res.bets.tolist(), round(float(res.log_wealth[-1]), 6)   # (1 + 0.5)**2
    ([1.0, 1.0], 0.81093)
    """

    fraction: float = 0.5

    def __post_init__(self):
        f = self.fraction
        if isinstance(f, bool) or not isinstance(f, numbers.Real) or not (0.0 <= f < 1.0):
            raise ValueError(f"`fraction` must lie in [0, 1); got {show(f)}.")

    needs_delta = False

    def _alpha_free(self, monotone):
        return monotone

    def _iter_bets(self, q, alpha, lower, upper, *, delta, n_total, monotone):
        unit = 1.0 / (upper - (lower if monotone else alpha))
        yield 0, q.shape[1], np.broadcast_to((self.fraction * unit)[:, None], q.shape).copy()


@functools.lru_cache(maxsize=64)
def _gauss_chebyshev(n_nodes):
    k = np.arange(1, n_nodes + 1)
    nodes = 0.5 * (1.0 + np.cos((2 * k - 1) * np.pi / (2 * n_nodes)))
    return nodes, np.full(n_nodes, 1.0 / n_nodes)


def _reference_grid(n_grid):
    grid = np.linspace(1e-8, 1.0 - 1e-8, n_grid)
    dens = 1.0 / np.sqrt(grid * (1.0 - grid))  # Beta(1/2, 1/2) density up to 1/pi
    return grid, dens / dens.sum()


def _interpolatory_rule(grid, weights, n_nodes):
    """Signed rule on ``n_nodes`` Chebyshev points equal to ``(grid, weights)`` up to degree
    ``n_nodes - 1``: ``omega_m = sum_k weights_k l_m(grid_k)`` with ``l_m`` the Lagrange basis
    (barycentric formula; first-kind Chebyshev points, Lebesgue constant O(log n))."""
    m = np.arange(n_nodes)
    theta = (2 * m + 1) * np.pi / (2 * n_nodes)
    xm = np.cos(theta)
    beta = np.where(m % 2 == 0, 1.0, -1.0) * np.sin(theta)
    x = 2.0 * grid - 1.0
    omega = np.zeros(n_nodes)
    step = max(1, _CHUNK_ELEMENTS // (4 * n_nodes))
    for s in range(0, x.size, step):
        diff = x[s : s + step, None] - xm[None, :]
        hit = diff == 0.0
        with np.errstate(divide="ignore", invalid="ignore"):
            c = beta / diff
            basis = c / c.sum(axis=1, keepdims=True)
        rows = hit.any(axis=1)
        if rows.any():
            basis[rows] = hit[rows].astype(float)
        omega += weights[s : s + step] @ basis
    return 0.5 * (1.0 + xm), omega


@functools.lru_cache(maxsize=32)
def _cached_rule(kind, n_grid, n_nodes, grid_bytes=None, weight_bytes=None):
    if kind == "reference":
        grid, weights = _reference_grid(n_grid)
    else:
        grid = np.frombuffer(grid_bytes, dtype=float)
        weights = np.frombuffer(weight_bytes, dtype=float)
    return _interpolatory_rule(grid, weights, n_nodes)


@dataclass(frozen=True, eq=False)
class UniversalPortfolio:
    """Cover's universal portfolio over the constant bets ``b / (M - alpha)``, ``b in (0, 1)``.

    The bet of round ``i`` is ``lambda_i = E_F[b W_{i-1}(b)] / E_F[W_{i-1}(b)] / (M - alpha)``
    with ``W_{i-1}(b) = prod_{j<i} (1 - b (q_j - alpha) / (M - alpha))`` and ``F`` the prior
    (R-AutoEval+ paper, eq. 19). The wealth equals ``E_F[W_i(b)]``.

    Parameters
    ----------
    prior : {"arcsine", "reference"} or tuple (grid, weights), default="arcsine"
        * ``"arcsine"``: the continuous Beta(1/2, 1/2) prior (see ``integration``).
        * ``"reference"``: the discrete prior of the paper's experiments: ``n_grid`` points
          ``linspace(1e-8, 1 - 1e-8, n_grid)`` with normalised Beta(1/2, 1/2) density weights
          (about 39% of the mass sits on the two end points).
        * ``(grid, weights)``: any discrete prior, ``0 <= grid < 1``, positive weights
          (normalised here).
    n_nodes : int, default=None
        Number of Gauss-Chebyshev nodes for ``prior="arcsine"``; ``None`` means the
        continuous prior, integrated as ``integration`` says. A value gives the universal portfolio of that discrete
        prior (valid, exact only up to round ``2K - 1``) at cost ``O(rows * K * n)``, e.g. for
        ``n >= 10**5`` rounds.
    n_grid : int, default=10_000
        Grid size of ``prior="reference"``.
    compress : bool, default=True
        For a discrete prior with more than ``n + 1`` atoms, replace it by the interpolatory
        rule on ``n + 1`` Chebyshev points, ``omega_m = sum_k pi_k l_m(b_k)`` (``l_m`` the
        Lagrange basis). It integrates every polynomial of degree ``<= n`` exactly, so the bets
        are those of the full grid up to rounding (weights may be negative; the sums are
        positive), at cost ``O(rows * n**2)`` instead of ``O(rows * grid * n)``. The rule is
        cached per ``(prior, n)``.
    integration : {"adaptive", "exact"}, default="adaptive"
        How ``prior="arcsine"`` (with ``n_nodes=None``) is integrated; both give the bets of
        the continuous prior up to rounding.

        * ``"exact"``: ``W_i`` is a polynomial of degree ``i`` in ``b`` and the arcsine law is
          the Chebyshev weight, so Gauss-Chebyshev quadrature with ``K = floor(n / 2) + 2``
          nodes ``b_k = (1 + cos((2k - 1) pi / (2K))) / 2`` and weights ``1/K`` integrates
          both expectations exactly in every round. Cost ``O(rows * n**2 / 2)``: about 3 s at
          ``n = 10**4`` and 10 minutes at ``10**5`` for R-AutoEval+'s 10 rows.
        * ``"adaptive"``: with ``b = sin(theta / 2)**2`` the prior is uniform in ``theta`` and
          ``W_i`` concentrates like a Gaussian of width ``~ 1 / sqrt(i)``. Each row uses the
          trapezoid rule on a window of ``K`` nodes (``K = 33`` on ``[0, pi]`` first: exact for
          62 rounds; later 17 to 129 nodes) and moves or refines it when a round fails a check:
          an interior window end must be ``exp(-50)`` below the best node (the integrand is
          unimodal, so this bounds the dropped mass rigorously) and the rule on every other
          node must agree with the full one to ``1e-5`` (trapezoid errors fall like
          ``exp(-2 pi**2 sigma**2 / h**2)``, so the full rule's is then ~``1e-16``). Cost
          ``O(rows * n * K)`` plus the rebuilds (``O(K)`` each for rows with at most 32
          distinct values, e.g. binary losses; ``O(i K)`` otherwise, a few per doubling of
          ``i``). Bets agree with ``"exact"`` to ``1e-12`` and log-wealths to ``1e-9`` in the
          tests (``n`` up to ``2 * 10**4``). Whatever the integration error, the bets are
          predictable, so the e-process stays exactly valid.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_riskcontrol.evalues.betting import UniversalPortfolio, betting_eprocess
    >>> up = UniversalPortfolio()
    >>> res = betting_eprocess(np.zeros(40), alpha=0.2, betting=up)
    >>> float(res.bets[0])                      # prior mean 1/2, divided by M - alpha = 0.8
    0.625
    >>> bool(res.log_wealth[-1] > np.log(20))
    True
    >>> nodes, weights = up.quadrature(40)     # 22 Gauss-Chebyshev nodes, weights 1/22
    >>> nodes.shape, float(weights.sum())
    ((22,), 1.0)
    """

    prior: object = "arcsine"
    n_nodes: int = None
    n_grid: int = 10_000
    compress: bool = True
    integration: str = "adaptive"
    _custom: tuple = field(default=None, init=False, repr=False)

    def __post_init__(self):
        prior = self.prior
        if isinstance(prior, str):
            if prior not in ("arcsine", "reference"):
                raise ValueError(
                    "`prior` must be 'arcsine', 'reference' or a tuple (grid, weights); "
                    f"got {prior!r}."
                )
        elif isinstance(prior, tuple) and len(prior) == 2:
            grid = _as_1d_float(prior[0], "prior grid")
            w = _as_1d_float(prior[1], "prior weights")
            if grid.shape != w.shape or grid.size == 0:
                raise ValueError("`prior` grid and weights must be non-empty and equally long.")
            if not (np.all(np.isfinite(grid)) and np.all((grid >= 0) & (grid < 1))):
                raise ValueError("`prior` grid points must lie in [0, 1).")
            if not (np.all(np.isfinite(w)) and np.all(w > 0)):
                raise ValueError("`prior` weights must be positive and finite.")
            object.__setattr__(self, "_custom", (grid.copy(), w / w.sum()))
        else:
            raise TypeError(
                "`prior` must be 'arcsine', 'reference' or a tuple (grid, weights); "
                f"got {type(prior).__name__}."
            )
        if self.integration not in ("adaptive", "exact"):
            raise ValueError(
                "`integration` must be 'adaptive' (moving window of nodes, O(n) per row) or "
                f"'exact' (n/2 + 2 Gauss-Chebyshev nodes, O(n**2)); got {self.integration!r}."
            )
        for name in ("n_nodes", "n_grid"):
            v = getattr(self, name)
            if v is None and name == "n_nodes":
                continue
            check_number(v, name, integer=True, minimum=1)

    needs_delta = False

    def _alpha_free(self, monotone):
        return False

    @property
    def _adaptive_arcsine(self):
        """Whether the bets are those of the continuous arcsine prior by adaptive integration
        (whose wealth is Cover's mixture up to the rule's ~1e-9 relative error)."""
        return (self._custom is None and self.prior == "arcsine" and self.n_nodes is None
                and self.integration == "adaptive")

    def quadrature(self, n_rounds: int) -> tuple[FloatArray, FloatArray]:
        """Nodes ``b_k`` and weights of the rule used for ``n_rounds`` rounds.

        Parameters
        ----------
        n_rounds : int

        For ``prior="arcsine"`` this is the exact Gauss-Chebyshev rule (also with
        ``integration="adaptive"``, which approximates it on a moving window of nodes).

        Returns
        -------
        nodes, weights : ndarray of shape (K,)
            Weights sum to one; they are all positive except for a compressed discrete prior.

        Examples
        --------
        >>> from sklearn_riskcontrol.evalues.betting import UniversalPortfolio
        >>> b, w = UniversalPortfolio(prior="reference").quadrature(300)
        >>> b.size, round(float(w.sum()), 12)      # 301 points stand in for 10**4
        (301, 1.0)
        """
        n_rounds = int(n_rounds)
        if self._custom is None and self.prior == "arcsine":
            k = self.n_nodes if self.n_nodes is not None else n_rounds // 2 + 2
            return _gauss_chebyshev(int(k))
        if self._custom is None:  # "reference"
            size = self.n_grid
            if self.compress and size > n_rounds + 1:
                return _cached_rule("reference", size, n_rounds + 1)
            return _reference_grid(size)
        grid, w = self._custom
        if self.compress and grid.size > n_rounds + 1:
            return _cached_rule("custom", 0, n_rounds + 1, grid.tobytes(), w.tobytes())
        return grid, w

    def _iter_bets(self, q, alpha, lower, upper, *, delta, n_total, monotone):
        rows, n = q.shape
        unit = 1.0 / (upper - (lower if monotone else alpha))  # bet of b = 1
        if self._adaptive_arcsine:
            yield from _adaptive_up_bets(q - alpha, unit)
            return
        nodes, weights = self.quadrature(n)
        if self._custom is not None:  # bets are averages of the original atoms
            lo, hi = float(self._custom[0].min()), float(self._custom[0].max())
        elif self.prior == "reference":
            lo, hi = 1e-8, 1.0 - 1e-8
        else:
            lo, hi = float(nodes.min()), float(nodes.max())
        yield from _up_bets(q - alpha, unit, nodes, weights, lo, hi)


def _up_bets(d, unit, nodes, weights, lo, hi):
    """Universal-portfolio bets for centred observations ``d`` (rows, n), chunked over rounds.

    Node log-wealths ``L_k,i = sum_{j<=i} log1p(-b_k unit d_j)``; the bet of round ``i`` is
    ``unit * sum_k w_k b_k exp(L_k,i-1 - max_k) / sum_k w_k exp(L_k,i-1 - max_k)``.

    Two exact ways to get ``L`` without a loop over rounds: a cumulative sum over rounds of the
    ``(nodes, rounds)`` log-factors, or, for a row with few distinct values ``v`` (binary
    losses give at most ``4 (r + 1)``), ``L_k,i = sum_v N_v(i) log1p(-b_k unit v)`` with the
    running counts ``N_v(i)``: one small matrix product, about 3x faster.
    """
    rows, n = d.shape
    k = nodes.size
    w2 = np.stack([weights * nodes, weights])  # (2, K)
    t_max = int(max(1, min(n, _CHUNK_ELEMENTS // max(1, rows * k))))
    # Rows with few distinct values use running counts (padded to a common number of values).
    uniq = [np.unique(d[s], return_inverse=True) for s in range(rows)]
    disc = np.array([s for s in range(rows) if uniq[s][0].size <= _MAX_DISTINCT], dtype=int)
    dense = np.array([s for s in range(rows) if uniq[s][0].size > _MAX_DISTINCT], dtype=int)
    if disc.size:
        n_val = max(uniq[s][0].size for s in disc)
        log_f = np.zeros((disc.size, k, n_val))  # padding columns never get counts
        inv = np.empty((disc.size, n), dtype=np.intp)
        for j, s in enumerate(disc):
            vals, idx = uniq[s]
            log_f[j, :, : vals.size] = np.log1p(-unit[s] * (nodes[:, None] * vals[None, :]))
            inv[j] = idx.ravel()
        counts = np.zeros((disc.size, n_val, 1))
        row_idx = np.arange(disc.size)[:, None]
    slope = -(unit[dense, None] * nodes[None, :])[:, :, None]  # (dense rows, K, 1)
    dbuf = np.empty((dense.size, k, t_max + 1))
    abuf = dbuf if dense.size == rows else np.empty((rows, k, t_max))
    carry = np.zeros((dense.size, k))
    for i0 in range(0, n, t_max):
        i1 = min(n, i0 + t_max)
        t = i1 - i0
        a = abuf[:, :, :t]  # log-wealth of every node before each round of the chunk
        if dense.size:
            b = dbuf[:, :, : t + 1]
            b[:, :, 0] = carry
            np.multiply(slope, d[dense, None, i0:i1], out=b[:, :, 1:])
            np.log1p(b[:, :, 1:], out=b[:, :, 1:])
            np.cumsum(b, axis=2, out=b)  # b[..., j] = node log-wealth after i0 + j rounds
            carry = b[:, :, t].copy()
            if abuf is not dbuf:
                a[dense] = b[:, :, :t]
        if disc.size:
            onehot = np.zeros((disc.size, n_val, t))
            onehot[row_idx, inv[:, i0:i1], np.arange(t)[None, :]] = 1.0
            before = np.cumsum(onehot, axis=2)
            before -= onehot  # counts of the rounds before each round of the chunk
            before += counts
            counts += onehot.sum(axis=2, keepdims=True)
            if disc.size == rows:
                np.matmul(log_f, before, out=a)
            else:
                a[disc] = np.matmul(log_f, before)
        a -= a.max(axis=1, keepdims=True)  # normalise every round
        # Nodes more than e**500 below the best change the sums by < 1e-200 relative; flooring
        # them keeps exp and the weighted sums out of the subnormal slow path (up to 400x).
        np.maximum(a, -500.0, out=a)
        np.exp(a, out=a)
        sums = np.matmul(w2, a)  # (rows, 2, t)
        frac = np.clip(sums[:, 0] / sums[:, 1], lo, hi)
        yield i0, i1, frac * unit[:, None]


# --------------------------------------------------------------------------------------------
# Adaptive integration of the arcsine universal portfolio
# --------------------------------------------------------------------------------------------
# With b = sin(theta / 2)**2 the arcsine prior is uniform in theta on [0, pi], and the node
# wealth W_t(b) is an even trigonometric polynomial of degree t in theta. Its logarithm is
# concave in b, hence unimodal in theta, and it concentrates like a Gaussian of width
# ~ 1 / sqrt(t). Each row integrates on a window [lo, hi] of [0, pi] with the trapezoid rule
# (K nodes, K odd); a window end at 0 or pi makes it the periodic trapezoid rule of the even
# extension (spectrally accurate, and exact for degree < 2 (K - 1) on the full window).
_UP_FIRST_NODES = 33  # full window [0, pi]: exact for the first 2 * 33 - 4 = 62 rounds
_UP_MIN_NODES = 17
_UP_EDGE = 50.0  # interior window ends at least this far below the best node's log-wealth
_UP_MARGIN = 0.2  # a new window: the region within _UP_EDGE of the best node, +20% each side
_UP_TOL = 1e-5  # rule on every other node vs the full rule, checked every round
_UP_ANCHOR_SLACK = 1e-2  # a new window must pass with _UP_TOL / 100 (lasts as it narrows)
_MAX_FRACTION = np.nextafter(1.0, 0.0)
# Rounds x nodes (or rows) per work array: under 128 KiB, so glibc serves it from the heap, never from
# a fresh mmap whose pages fault in on every use (1.5x slower in Dask workers, which set
# MALLOC_TRIM_THRESHOLD_ and so turn off glibc's adaptive mmap threshold).
_ROW_BLOCK_ELEMENTS = 12_000


class _AdaptiveUPRow:
    """Arcsine universal-portfolio bet fractions for one row of scaled observations
    ``c_j = unit (q_j - alpha) <= 1``, on a moving window of trapezoid nodes.

    A round is accepted when (i) every interior window end has log-wealth at least
    ``_UP_EDGE`` below the best node: by unimodality the integrand beyond an end is at most its
    value there, so the dropped mass is at most ``exp(-50) pi / h`` times the kept one (``h``
    the spacing), and the bet fraction moves by at most that ratio; and (ii) the rule on every
    other node agrees with the full rule to ``_UP_TOL`` in both integrals. For these
    Gaussian-like integrands the trapezoid error behaves like ``exp(-2 pi**2 sigma**2 / h**2)``,
    so halving the spacing takes an error of ``1e-5`` to about ``1e-16`` or less. A round that
    fails gets a new rule ("anchor") built from all past observations: O(distinct values x
    nodes) for rows with few distinct values, O(rounds x nodes) otherwise.
    """

    def __init__(self, c):
        self.c = c
        vals, inv = np.unique(c, return_inverse=True)
        self.vals = vals if vals.size <= _MAX_DISTINCT else None
        self.inv = inv.ravel()
        self.n_anchors = 0
        self._set_window(0.0, np.pi, _UP_FIRST_NODES, 0)

    def _log_factors(self, b, obs):
        with np.errstate(divide="ignore"):  # b = 1 and c = 1: zero wealth at that node
            return np.log1p(-np.multiply.outer(obs, b))

    def _log_wealth(self, b, t):
        """Node log-wealth after ``t`` rounds (sum over the past, never a running update)."""
        if self.vals is not None:
            counts = np.bincount(self.inv[:t], minlength=self.vals.size).astype(float)
            seen = counts > 0  # 0 * log(0) would be NaN
            return counts[seen] @ self._log_factors(b, self.vals[seen])
        out = np.zeros(b.size)
        step = max(1, _CHUNK_ELEMENTS // b.size)
        for s in range(0, t, step):
            out += self._log_factors(b, self.c[s:min(t, s + step)]).sum(axis=0)
        return out

    def _set_window(self, lo, hi, k, t):
        self.lo, self.hi, self.k = lo, hi, k
        self.theta = np.linspace(lo, hi, k)
        self.b = 0.5 * (1.0 - np.cos(self.theta))
        h = (hi - lo) / (k - 1)
        fine = np.full(k, h)
        fine[[0, -1]] *= 0.5
        coarse = np.zeros(k)
        coarse[::2] = 2.0 * h
        coarse[[0, -1]] *= 0.5
        w = np.stack([fine, fine * self.b, coarse, coarse * self.b])  # (4, K)
        self.w_t = np.ascontiguousarray(w.T)
        self.open_lo, self.open_hi = lo > 0.0, hi < np.pi
        full = not (self.open_lo or self.open_hi)
        self.exact_upto = 2 * k - 4 if full else -1  # last exact round (degree t + 1 < 2K - 2)
        self.table = None if self.vals is None else self._log_factors(self.b, self.vals)
        self.logw = self._log_wealth(self.b, t)

    def _fractions(self, a, t0, tol):
        """Fractions for the rounds whose node log-wealths are the rows of ``a`` (m, K), and
        whether each round passes the checks."""
        top = a.max(axis=1)
        e = a - top[:, None]
        np.maximum(e, -700.0, out=e)  # keep exp out of the subnormal range
        np.exp(e, out=e)
        s = e @ self.w_t  # (m, 4): fine and coarse integrals of W and b W
        frac = s[:, 1] / s[:, 0]
        with np.errstate(divide="ignore", invalid="ignore"):  # coarse sum 0: fails (NaN)
            ok = ((np.abs(s[:, 2] - s[:, 0]) <= tol * s[:, 0])
                  & (np.abs(s[:, 3] / s[:, 2] - frac) <= tol))
        ok |= np.arange(t0, t0 + a.shape[0]) <= self.exact_upto
        if self.open_lo:
            ok &= a[:, 0] - top <= -_UP_EDGE
        if self.open_hi:
            ok &= a[:, -1] - top <= -_UP_EDGE
        return frac, ok

    def _anchor(self, t, logw):
        """New rule for round ``t`` from the node log-wealths ``logw`` of the current one."""
        theta = self.theta
        k = max(_UP_MIN_NODES, (self.k + 1) // 2)
        # By unimodality the region within _UP_EDGE of the maximum lies strictly between the
        # nodes next to the outermost nodes inside it.
        inside = np.flatnonzero(logw >= logw.max() - _UP_EDGE)
        lo = theta[inside[0] - 1] if inside[0] > 0 else self.lo
        hi = theta[inside[-1] + 1] if inside[-1] < theta.size - 1 else self.hi
        for attempt in itertools.count():
            if attempt == 20:  # never seen; the full window with finer rules is exact in the end
                lo, hi = 0.0, np.pi
            width = hi - lo
            new_lo = max(0.0, lo - _UP_MARGIN * width)
            new_hi = min(np.pi, hi + _UP_MARGIN * width)
            self._set_window(new_lo, new_hi, k, t)
            if self._fractions(self.logw[None, :], t, _UP_TOL * _UP_ANCHOR_SLACK)[1][0]:
                self.n_anchors += 1
                return
            logw = self.logw
            top = logw.max()
            if attempt >= 20:
                k = 2 * k - 1
            elif self.open_lo and logw[0] - top > -_UP_EDGE:
                lo = max(0.0, lo - width)
            elif self.open_hi and logw[-1] - top > -_UP_EDGE:
                hi = min(np.pi, hi + width)
            else:
                inside = np.flatnonzero(logw >= top - _UP_EDGE)
                if inside[-1] - inside[0] < k // 2:  # region much narrower: zoom in
                    lo = self.theta[inside[0] - 1] if inside[0] > 0 else new_lo
                    hi = self.theta[inside[-1] + 1] if inside[-1] < k - 1 else new_hi
                else:  # finer spacing; terminates: exact once 2K - 4 >= t on [0, pi]
                    k = 2 * k - 1

    def fractions(self, i0, i1):
        """Bet fractions (in [0, 1)) of rounds ``i0 .. i1 - 1``; rounds arrive in order."""
        out = np.empty(i1 - i0)
        i = i0
        while i < i1:
            j = min(i1, i + _ROW_BLOCK_ELEMENTS // self.k)
            if self.vals is not None:
                f = self.table[self.inv[i:j]]
            else:
                f = self._log_factors(self.b, self.c[i:j])
            a = np.empty_like(f)  # log-wealth before each round
            a[0] = self.logw
            np.cumsum(f[:-1], axis=0, out=a[1:])
            a[1:] += self.logw
            frac, ok = self._fractions(a, i, _UP_TOL)
            bad = np.flatnonzero(~ok)
            stop = j - i if bad.size == 0 else int(bad[0])
            out[i - i0 : i - i0 + stop] = frac[:stop]
            if bad.size == 0:
                self.logw = a[-1] + f[-1]
                i = j
            else:
                i += stop
                self._anchor(i, a[stop].copy())
        return np.clip(out, 0.0, _MAX_FRACTION)


def _adaptive_up_bets(d, unit):
    """Arcsine universal-portfolio bets for centred observations ``d`` (rows, n), in chunks of
    rounds that grow with the round index (so an early stop wastes little work)."""
    rows, n = d.shape
    states = [_AdaptiveUPRow(np.minimum(unit[s] * d[s], 1.0)) for s in range(rows)]
    i0 = 0
    while i0 < n:
        i1 = min(n, i0 + int(np.clip(i0 // 2, 32, max(32, _ROW_BLOCK_ELEMENTS // rows))))
        yield i0, i1, np.stack([st.fractions(i0, i1) for st in states]) * unit[:, None]
        i0 = i1


_STRATEGIES = {"up": UniversalPortfolio, "wsr": WSR}


def _resolve_betting(betting):
    if isinstance(betting, str):
        if betting not in _STRATEGIES:
            raise ValueError(
                f"`betting` must be 'up', 'wsr' or a strategy object (UniversalPortfolio, WSR, "
                f"FixedBet); got {betting!r}."
            )
        return _STRATEGIES[betting]()
    if isinstance(betting, (UniversalPortfolio, WSR, FixedBet)):
        return betting
    raise TypeError(
        "`betting` must be 'up', 'wsr' or a strategy object (UniversalPortfolio, WSR, FixedBet); "
        f"got {type(betting).__name__}."
    )


# --------------------------------------------------------------------------------------------
# e-process driver
# --------------------------------------------------------------------------------------------
def _run(q, alpha, lower, upper, strategy, *, delta=None, n_total=None, monotone=False,
         log_prior=None, log_threshold=None):
    """Bets and per-row log-wealth of ``q`` (rows, n); validated inputs.

    If ``log_prior`` (rows,) and ``log_threshold`` are given, stop after the first round where
    the mixture ``logsumexp(log_prior + log_wealth)`` reaches the threshold and return the
    truncated arrays (the e-process stopped at that stopping time).
    """
    rows, n = q.shape
    if n_total is None:
        n_total = n
    bets = np.empty((rows, n))
    logw = np.empty((rows, n))
    carry = np.zeros(rows)
    with _single_threaded_blas():
        return _run_loop(q, alpha, lower, upper, strategy, delta, n_total, monotone, log_prior,
                         log_threshold, bets, logw, carry)


def _run_loop(q, alpha, lower, upper, strategy, delta, n_total, monotone, log_prior,
              log_threshold, bets, logw, carry):
    for i0, i1, lam in strategy._iter_bets(
        q, alpha, lower, upper, delta=delta, n_total=n_total, monotone=monotone
    ):
        bets[:, i0:i1] = lam
        with np.errstate(divide="ignore"):  # a zero factor (monotone bets) gives -inf
            inc = np.log1p(-lam * (q[:, i0:i1] - alpha))
        np.cumsum(inc, axis=1, out=logw[:, i0:i1])
        logw[:, i0:i1] += carry[:, None]
        carry = logw[:, i1 - 1].copy()
        if log_threshold is not None:
            mix = _logsumexp(log_prior[:, None] + logw[:, i0:i1], axis=0)
            hit = np.flatnonzero(mix >= log_threshold)
            if hit.size:
                stop = i0 + int(hit[0]) + 1
                return bets[:, :stop], logw[:, :stop]
    return bets, logw


def _as_rows(observations, name="observations"):
    q = as_float_array(observations, name, "a 1-d or 2-d array of numbers")
    if q.ndim == 1:
        return q[None, :], True
    if q.ndim != 2:
        raise ValueError(f"`{name}` must be 1-d (n,) or 2-d (rows, n); got shape {q.shape}.")
    return q, False


def _bounds(value, rows, name):
    arr = np.broadcast_to(np.asarray(value, dtype=float), (rows,)) if np.ndim(value) == 0 else (
        _as_1d_float(value, name))
    if arr.shape[0] != rows:
        raise ValueError(f"`{name}` has {arr.shape[0]} entries; expected one per row ({rows}).")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"`{name}` must be finite.")
    return np.array(arr, dtype=float)


@dataclass(frozen=True, eq=False)
class BettingEProcess:
    """Result of :func:`betting_eprocess`.

    Attributes
    ----------
    log_wealth : ndarray of shape (n,) or (rows, n)
        ``log E_i`` after each round ``i = 1..n``.
    bets : ndarray, same shape
        The predictable bets ``lambda_i``.
    """

    log_wealth: np.ndarray
    bets: np.ndarray


def betting_eprocess(
    observations: ArrayLike,
    alpha: float,
    *,
    lower: float | ArrayLike = 0.0,
    upper: float | ArrayLike = 1.0,
    betting: str | Any = "up",
    delta: float | None = None,
    monotone: bool = False,
    n_total: int | None = None,
) -> BettingEProcess:
    """Log-wealth e-process for ``H0: E[q] > alpha`` from bounded observations.

    ``log E_i = sum_{j<=i} log(1 - lambda_j (q_j - alpha))`` with predictable bets
    ``lambda_j in [0, 1 / (upper - alpha))`` chosen by ``betting``. Rejecting ``H0`` as soon as
    ``log E_i >= log(1 / delta)`` has type-I error at most ``delta`` (Ville's inequality).

    Parameters
    ----------
    observations : array-like of shape (n,) or (rows, n)
        Observations in ``[lower, upper]``, processed in the order given; rows are independent
        e-processes (e.g. one per reliance factor ``rho``).
    alpha : float
        Null threshold, ``alpha < upper`` (``lower <= alpha <= upper`` if ``monotone``).
    lower, upper : float or array-like of shape (rows,), default=0.0, 1.0
        Known bounds ``m`` and ``M`` of the observations (per row).
    betting : {"up", "wsr"} or UniversalPortfolio, WSR, FixedBet, default="up"
        Betting strategy; ``"up"`` is the arcsine universal portfolio
        (:class:`UniversalPortfolio`, adaptive integration).
    delta : float in (0, 1), default=None
        Level of the test; required by :class:`WSR` (it enters the bet).
    monotone : bool, default=False
        Use bets of ``b / (upper - lower)`` instead of ``b / (upper - alpha)`` (WSR: cap
        ``1 / (upper - lower)``). Every constant-bet wealth is then nondecreasing in ``alpha``,
        and so is the e-process of WSR / fixed bets (whose bets no longer depend on ``alpha``)
        and of the universal portfolio (a prior mixture of them). Used to invert tests into
        confidence bounds.
    n_total : int, default=None
        The ``n`` of the WSR bet (total planned number of rounds); ``None`` = number of rounds.

    Returns
    -------
    BettingEProcess
        ``log_wealth`` and ``bets``, shaped like ``observations``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_riskcontrol.evalues.betting import betting_eprocess
    >>> rng = np.random.default_rng(0)
    >>> q = rng.binomial(1, 0.05, size=300)     # risk 0.05 < alpha = 0.15
    >>> res = betting_eprocess(q, alpha=0.15, betting="wsr", delta=0.05)
    >>> # On this draw the wealth reaches 1/delta, rejecting H0: risk > 0.15 (a test whose
    >>> # type-I error is at most 0.05 over the draw of q, by Ville's inequality).
    >>> bool(res.log_wealth.max() >= np.log(1 / 0.05))
    True
    """
    q, one_d = _as_rows(observations)
    rows, n = q.shape
    lower = _bounds(lower, rows, "lower")
    upper = _bounds(upper, rows, "upper")
    if np.isnan(q).any():
        raise ValueError("`observations` contain NaN.")
    if np.any(q < lower[:, None]) or np.any(q > upper[:, None]):
        raise ValueError("`observations` must lie in [lower, upper] (row-wise).")
    alpha = check_number(alpha, "alpha")
    if (np.any((alpha < lower) | (alpha > upper)) if monotone else np.any(alpha >= upper)):
        raise ValueError(
            "`alpha` must satisfy alpha < upper (lower <= alpha <= upper with monotone=True); "
            f"got alpha={alpha!r}."
        )
    strategy = _resolve_betting(betting)
    if strategy.needs_delta:
        if delta is None:
            raise ValueError("`delta` is required by the WSR bets (it enters the bet size).")
        delta = check_level(delta, "delta")
    if n_total is None:
        n_total = n
    else:
        n_total = check_number(n_total, "n_total", integer=True, minimum=1)
    if n == 0:
        empty = np.zeros((rows, 0))
        return BettingEProcess(empty[0] if one_d else empty, empty[0] if one_d else empty)
    bets, logw = _run(q, alpha, lower, upper, strategy, delta=delta, n_total=n_total,
                      monotone=monotone)
    if one_d:
        bets, logw = bets[0], logw[0]
    return BettingEProcess(log_wealth=logw, bets=bets)


def _log_prior(prior, rows):
    if prior is None:
        return np.full(rows, -np.log(rows))
    w = _as_1d_float(prior, "prior")
    if w.shape[0] != rows or not np.all(np.isfinite(w)) or np.any(w <= 0):
        raise ValueError(
            f"`prior` must hold {rows} positive finite weights (one per e-process)."
        )
    return np.log(w) - np.log(w.sum())


def _check_log_wealth(log_wealth):
    """2-d float log-wealth; -inf (wealth 0) is legal, NaN and +inf are not."""
    lw = as_float_array(log_wealth, "log_wealth", "a 2-d array (S, n) of log-wealth")
    if lw.ndim != 2:
        raise ValueError(f"`log_wealth` must be 2-d (S, n); got shape {lw.shape}.")
    if lw.shape[0] == 0:
        raise ValueError("`log_wealth` is empty: at least one e-process (row) is required.")
    if np.isnan(lw).any() or np.isposinf(lw).any():
        raise ValueError("`log_wealth` must not contain NaN or +inf (-inf = zero wealth is allowed).")
    return lw


def mixture_log_eprocess(log_wealth: ArrayLike, prior: ArrayLike | None = None) -> FloatArray:
    """Log of the prior mixture ``E_i = sum_s w_s0 E_s,i`` of e-processes (logsumexp).

    This is exactly R-AutoEval+'s e-process: with adaptive weights
    ``w_s,i ∝ w_s0 E_s,i-1`` the product ``prod_i sum_s w_s,i (1 - lambda_s,i (q_s,i - alpha))``
    telescopes to the prior mixture.

    Parameters
    ----------
    log_wealth : array-like of shape (S, n)
        Log-wealth of each e-process after each round.
    prior : array-like of shape (S,), default=None
        Positive initial weights (normalised); ``None`` = uniform.

    Returns
    -------
    ndarray of shape (n,)

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_riskcontrol.evalues.betting import mixture_log_eprocess
    >>> lw = np.log([[1.0, 4.0], [1.0, 0.0 + 2.0]])
    >>> np.exp(mixture_log_eprocess(lw)).round(6)
    array([1., 3.])
    """
    lw = _check_log_wealth(log_wealth)
    lp = _log_prior(prior, lw.shape[0])
    return _logsumexp(lp[:, None] + lw, axis=0)


def mixture_weights(log_wealth: ArrayLike, prior: ArrayLike | None = None) -> FloatArray:
    """Adaptive weights ``w_s,i = w_s0 E_s,i-1 / sum_s' w_s'0 E_s',i-1`` for rounds ``i = 1..n``.

    These are R-AutoEval+'s weights on the reliance factors (eq. 13; the heatmap of its Fig. 2).

    Parameters
    ----------
    log_wealth : array-like of shape (S, n)
    prior : array-like of shape (S,), default=None

    Returns
    -------
    ndarray of shape (S, n)
        Columns sum to one; column ``i - 1`` uses the wealth after round ``i - 1``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_riskcontrol.evalues.betting import mixture_weights
    >>> mixture_weights(np.log([[2.0, 4.0], [1.0, 1.0]])).round(3)
    array([[0.5  , 0.667],
           [0.5  , 0.333]])
    """
    lw = _check_log_wealth(log_wealth)
    lp = _log_prior(prior, lw.shape[0])
    prev = np.concatenate([np.zeros((lw.shape[0], 1)), lw[:, :-1]], axis=1) + lp[:, None]
    prev = prev[:, : lw.shape[1]]  # n = 0 rounds: no column
    return np.exp(prev - _logsumexp(prev, axis=0)[None, :])
