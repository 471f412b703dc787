"""Label until certified: online R-Eval / R-AutoEval / R-AutoEval+ sessions.

R-AutoEval+'s e-process is anytime valid, so the labels need not be fixed in advance: label a
batch, look at the e-process, and stop as soon as it crosses ``1 / delta``. A
:class:`LabelingSession` does this for one model and a :class:`SelectionSession` for
:func:`~sklearn_riskcontrol.autoeval.rautoeval_select`'s fixed-sequence / Bonferroni selection.

Why a session object, not ``RAutoEvalPlus.partial_fit``
    :class:`~sklearn_riskcontrol.autoeval.RAutoEvalPlus` computes the losses from a wrapped model, the
    judge and ``(X, y)``, and ``fit`` derives its blocks of unlabeled rows from the final ``n``.
    An online run needs state that an estimator's ``partial_fit`` cannot express cleanly: a
    label budget fixed *before* the first label (it fixes the blocks and the WSR bet), a durable
    store keyed by example id, and a per-batch verdict. The session lives in the array layer
    (losses in, verdicts out), like :func:`~sklearn_riskcontrol.autoeval.rautoeval_test`, so it
    serves an LLM pipeline that computes losses itself as well as a scikit-learn model.

Online construction (fixed blocks)
    The pool of ``N`` judge losses ``u`` (unlabeled examples, in random order, disjoint from
    the examples that get labeled) and the label budget ``n_max`` (``max_labels``, default
    ``N``) are given when the session is created. The block size ``r = floor(N / n_max)`` is
    fixed then, and labeled round ``i`` (``i = 1, 2, ...``) uses its own fresh block ``i`` of
    ``u`` (entries ``(i-1) r .. i r - 1``): ``q_i(rho) = h_i + rho (ubar_i - g_i)``. After ``n``
    labels this is exactly :func:`~sklearn_riskcontrol.autoeval.rautoeval_test` on
    ``(h[:n], g[:n], u[:n r])`` (the batch construction with ``floor(n r / n) = r``); after
    ``n_max`` labels it is the batch test on ``(h, g, u)`` itself. The WSR bet uses
    ``n_total = n_max``.

Validity under optional stopping
    Let the labeled examples be i.i.d. draws, labeled in an order chosen without looking at
    their labels, and ``F_i`` the information in rounds ``1..i`` (``h_j``, ``g_j`` and block
    ``j`` for ``j <= i``). Block ``i + 1`` is disjoint from the earlier blocks and independent
    of the labeled examples, so ``E[q_{i+1}(rho) | F_i] = R`` and ``q_{i+1}(rho)`` lies in
    ``[-rho, 1 + rho]``; every bet of round ``i + 1`` is a function of ``F_i`` (predictable) in
    ``[0, 1 / (1 + rho - alpha))``. Under ``H0: R > alpha`` each factor therefore has
    conditional mean ``<= 1``, each ``E_s,i`` and the mixture ``E_i`` are nonnegative
    supermartingales with respect to ``(F_i)``, and Ville's inequality gives
    ``P(exists i <= n_max: E_i >= 1 / delta) <= delta``. Stopping at any time, even at a time
    that is not a stopping time (batch sizes, deadlines, peeking), certifies only on that event:
    the type-I error of "stop when certified" is at most ``delta``.

What a session reports after each batch (:class:`LabelingStatus`)
    ``certified`` (the e-process reached ``1 / delta`` at some round so far; the first such
    round is ``stopping_index``), ``impossible`` (even the most favourable remaining labels
    cannot reach ``1 / delta`` within the budget: a proof, see
    :attr:`LabelingStatus.log_evalue_bound`) and ``labels_needed``, a rough *range* (a
    forecast, not a guarantee) of how many more labels certification will take, given only
    once the labels so far bound it within the budget.
"""

from __future__ import annotations

import hashlib
import math
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike
from scipy import special

from .._validation import as_float_array, check_level, check_number, check_risks, warn
from ..evaluation._store import EvaluationRecord, EvaluationStore, as_store
from ._arrays import (
    _METHOD_NAMES,
    _METHODS,
    ModelSelectionResult,
    RAutoEvalResult,
    _core_test,
    _observations,
    _rho_setup,
)
from ..evalues.betting import WSR, FixedBet, UniversalPortfolio, _logsumexp, _resolve_betting, _run
from ..evalues.testing import bonferroni, fixed_sequence
from ._clusters import cluster_observations, cluster_sums
from ._compare import _columns as _loss_columns
from ._compare import _paired
from .._typing import FloatArray
from .._results import ResultMixin

if TYPE_CHECKING:
    import os

    from typing_extensions import Self  # typing.Self: Python >= 3.11

__all__ = [
    "LabelingSession",
    "LabelingStatus",
    "SelectionSession",
    "SelectionStatus",
    "ComparisonSession",
    "ComparisonStatus",
]

_FORMAT = 1
# Forecast of the labels still needed (LabelingStatus.labels_needed): a central 80% range
# (predictive quantiles), from _N_PATHS simulated paths on _N_TIMES future label counts, up to
# _HORIZON labels without a budget. Path k takes level _LEVELS[k] of the posterior of the risk
# and fixed standard normals (seeded, so that the same labels always give the same status;
# antithetic: path _N_PATHS - 1 - k takes level 1 - _LEVELS[k] and the opposite normals).
_RANGE = (0.1, 0.9)
_N_PATHS = 64
_N_TIMES = 32
_HORIZON = 10**6
_LEVELS = (np.arange(_N_PATHS) + 0.5) / _N_PATHS
_GRID = np.linspace(0.0, 1.0, _N_TIMES)  # t = horizon**_GRID: geometric from 1 to the horizon
_Z_WALK = np.random.default_rng(0).standard_normal((2, _N_PATHS // 2, 1, _N_TIMES))
_Z_WALK = np.concatenate([_Z_WALK, -_Z_WALK[:, ::-1]], axis=1)
_Z_MEAN = np.random.default_rng(1).standard_normal(_N_PATHS // 2)
_Z_MEAN = np.concatenate([_Z_MEAN, -_Z_MEAN[::-1]])
# Slack (in log-wealth) added to the universal portfolio's most-favourable-continuation bound for
# the quadrature error of its bets (log-wealths agree with exact integration to ~1e-9).
_UP_MARGIN = 1e-3


# --------------------------------------------------------------------------------------------
# Status objects
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True, repr=False)
class LabelingStatus(ResultMixin):
    """Verdict of a :class:`LabelingSession` after the labels received so far.

    The guarantee is about the procedure: over the draw of the labeled and unlabeled
    examples, a model whose risk exceeds ``alpha`` ends ``certified`` with probability at most
    ``delta``, however the batches were sized and whenever the labeling stopped.

    Attributes
    ----------
    n_labels : int
        Labels received.
    certified : bool
        ``risk <= alpha`` is certified: ``max_i E_i >= 1 / delta`` over the rounds so far.
    impossible : bool
        Not certified, and no sequence of remaining labels within ``max_labels`` can certify
        (``log_evalue_bound < log(1 / delta)``). Always ``False`` without a budget.
    stopping_index : int or None
        0-based round of the first crossing (``stopping_index + 1`` labels were needed).
    pvalue : float
        Anytime-valid p-value ``min(1, 1 / max_i E_i)`` (1 before any label).
    log_evalue : float
        ``max_i log E_i`` so far (0 before any label).
    log_evalue_bound : float
        Upper bound on ``max log E_i`` over the whole budget, whatever the remaining labels.
        Let ``qmin_i(rho) = max(-rho, rho (ubar_i - 1))`` be the smallest observation round
        ``i`` can give (true loss 0, judge loss 1; the block mean ``ubar_i`` is known). Any
        strategy: each remaining round multiplies the wealth of ``rho`` by at most
        ``1 + c (alpha - qmin_i) / (1 + rho - alpha)``, ``c`` the strategy's largest bet
        fraction. Universal portfolio (``betting="up"``): also the e-process of the most
        favourable continuation (every remaining observation at ``qmin_i``; its wealth, a
        positive mixture of constant-bet wealths, is nonincreasing in every observation) plus
        ``1e-3`` for the quadrature error; the smaller bound is reported. ``inf`` without a
        budget.
    labels_needed : tuple (low, high) of int, or None
        A rough range for how many *more* labels certification will take (``(0, 0)`` once
        certified): the 10% and 90% quantiles of its posterior predictive law, a central 80%
        range (in simulation it contains the realized number at least that often). A
        forecast from the labels so far, not a guarantee. ``None`` while no informative
        range exists: before the first label, once ``impossible``, and whenever ``high`` would
        exceed the labels left in the budget (``10**6`` without a budget), e.g. with few
        labels or a risk near ``alpha``.

        The posterior of the law of the (true, judge) losses is a Dirichlet process with one
        pseudo-label "model wrong, judge right" and one "model right, judge wrong" (for 0/1
        losses the risk's posterior is ``Beta(errors + 1, n - errors + 1)``). 64 paths (fixed
        seed: the same labels always give the same range) draw the risk from it and continue
        the sums of ``x = alpha - q(rho)`` as Gaussian walks; the log-wealth of each ``rho``
        is that of the two-point law with the sums' mean and mean square and its lower atom
        at the worst ``x`` (for the universal portfolio: of the best bet in hindsight, less
        the regret ``log((n + t) / n) / 2``), the mixture over ``rho`` is explicit, and the
        first passage over ``log(1 / delta)`` is found on a grid of future label counts with
        a Brownian-bridge correction between grid points.
    max_labels : int or None
        Label budget.
    alpha, delta : float
    method : str
        Method run (``"eval"`` without unlabeled data).
    """

    n_labels: int
    certified: bool
    impossible: bool
    stopping_index: object
    pvalue: float
    log_evalue: float
    log_evalue_bound: float
    labels_needed: object
    max_labels: object
    alpha: float
    delta: float
    method: str

    @property
    def decision(self) -> str:
        """``"certified"``, ``"impossible"`` or ``"continue"``."""
        if self.certified:
            return "certified"
        return "impossible" if self.impossible else "continue"

    @property
    def done(self) -> bool:
        """``True`` once labeling more cannot change the verdict."""
        return self.certified or self.impossible

    @property
    def remaining_budget(self) -> int | None:
        """Labels left in the budget (``None`` without a budget)."""
        return None if self.max_labels is None else self.max_labels - self.n_labels

    def __repr__(self):
        return (
            f"LabelingStatus(decision={self.decision!r}, n_labels={self.n_labels}, "
            f"pvalue={self.pvalue:.4g}, labels_needed={self.labels_needed}, "
            f"max_labels={self.max_labels})"
        )

    def __str__(self):
        head = (f"{_METHOD_NAMES[self.method]} after {self.n_labels} labels "
                f"(alpha={self.alpha:g}, delta={self.delta:g}): ")
        if self.certified:
            return head + (
                f"certified risk <= {self.alpha:g} after {self.stopping_index + 1} labels "
                f"(p-value {self.pvalue:.3g}); stop labeling. A model with risk above alpha is "
                f"certified this way with probability at most {self.delta:g}."
            )
        if self.impossible:
            return head + (
                f"certification is impossible within the budget of {self.max_labels} labels "
                f"(even the most favourable remaining labels give an e-value of at most "
                f"{math.exp(min(self.log_evalue_bound, 700)):.3g} < 1/delta = "
                f"{1 / self.delta:g}); stop labeling."
            )
        if self.labels_needed is not None:
            est = (f"likely between {self.labels_needed[0]} and {self.labels_needed[1]} more "
                   "labels (a rough range from the labels so far, not a guarantee)")
        elif self.n_labels == 0:
            est = "no range of the labels still needed before the first label"
        else:
            left = (f"even {_HORIZON:,} more labels" if self.max_labels is None
                    else f"the {self.remaining_budget} labels left in the budget")
            est = (f"too early for a range of the labels still needed (by a rough forecast "
                   f"from the labels so far, {left} may not suffice)")
        return head + f"not certified yet (p-value {self.pvalue:.3g}); {est}."


@dataclass(frozen=True, repr=False)
class SelectionStatus(ResultMixin):
    """Verdict of a :class:`SelectionSession` after the labels received so far.

    Over the draw of the data, every certified candidate has risk at most ``alpha`` with
    probability at least ``1 - delta`` (family-wise), whenever the labeling stopped.

    Attributes
    ----------
    n_labels : int
    certified : ndarray of bool, shape (K,)
        Candidates certified by the selection procedure (fixed-sequence: the certified prefix).
    impossible : ndarray of bool, shape (K,)
        Candidates that can no longer be certified within the budget (fixed-sequence: also
        every candidate after one that cannot).
    selected : int or None
        Certified candidate with the smallest cost (``None`` if none).
    final : bool
        The selection can no longer change: no candidate that could still be certified would
        be preferred to ``selected``.
    labels_needed : tuple (low, high) of int, or None
        Rough range of the labels needed until the selection next changes (see
        :attr:`LabelingStatus.labels_needed`): fixed sequence, that of the first candidate not
        yet certified or impossible; Bonferroni, the smallest ``low`` and the smallest
        ``high`` over the candidates that would be preferred to the selection and have a
        range. ``None`` if there is no such range or the selection is final.
    candidates : tuple of LabelingStatus
        Per-candidate status at the candidate's test level.
    procedure : str
    delta, test_level : float
    """

    _frame_columns = ("candidates", "certified", "impossible")

    n_labels: int
    certified: np.ndarray
    impossible: np.ndarray
    selected: object
    final: bool
    labels_needed: object
    candidates: tuple
    procedure: str
    delta: float
    test_level: float

    def __repr__(self):
        return (
            f"{type(self).__name__}(selected={self.selected}, final={self.final}, "
            f"n_labels={self.n_labels}, certified={np.flatnonzero(self.certified).tolist()}, "
            f"impossible={np.flatnonzero(self.impossible).tolist()}, "
            f"labels_needed={self.labels_needed})"
        )


# --------------------------------------------------------------------------------------------
# One candidate's e-process, grown by batches (no I/O)
# --------------------------------------------------------------------------------------------
def _max_fraction(strategy):
    """Largest bet, as a fraction of ``1 / (M - alpha)``, the strategy can place."""
    if isinstance(strategy, WSR):
        return strategy.c
    if isinstance(strategy, FixedBet):
        return strategy.fraction
    return 1.0


def _two_point_growth(s1, s2, n, low, cap, lam=None):
    """``n E log(1 + lam x)`` for the two-point law of ``x`` with mean ``s1 / n``, mean square
    ``s2 / n`` and lower atom ``low``, and ``lam`` (the best bet in ``[0, cap)`` if None)."""
    mu = s1 / n
    gap = np.maximum(mu - low, 1e-12)
    var = np.maximum(s2 / n - mu**2, 0.0)
    high = low + gap + var / gap
    p_high = gap**2 / (gap**2 + var)
    if lam is None:
        kelly = np.maximum(mu, 0.0) / np.maximum(-high * low, 1e-300)
        lam = np.minimum(kelly, cap * (1.0 - 1e-9))
    return n * (p_high * np.log1p(lam * high) + (1.0 - p_high) * np.log1p(lam * low)), lam


def _quantile(t, cdf, level):
    """Smallest ``t`` with ``cdf(t) >= level`` (nondecreasing ``cdf`` on the increasing grid
    ``t``, log-linear in between), rounded up; ``inf`` if ``cdf`` stays below ``level``."""
    k = int(np.searchsorted(cdf, level))
    if k == t.size:
        return math.inf
    if k == 0:
        return int(math.ceil(t[0]))
    f = (level - cdf[k - 1]) / (cdf[k] - cdf[k - 1])
    return int(math.ceil(t[k - 1] * (t[k] / t[k - 1]) ** f))


class _Track:
    def __init__(self, u, alpha, delta, method, strategy, rho, log_prior, max_labels):
        self.u, self.alpha, self.delta, self.method = u, alpha, delta, method
        self.strategy, self.rho, self.log_prior = strategy, rho, log_prior
        self.max_labels = max_labels
        self.r = 0 if u is None else u.size // max_labels
        self.h = np.empty(0)
        self.g = np.empty(0)
        self._out = None
        self._status = None

    @property
    def n(self):
        return self.h.size

    def extend(self, h, g):
        self.h = np.concatenate([self.h, h])
        if g is not None:
            self.g = np.concatenate([self.g, g])
        self._out = self._status = None

    def _q(self):
        if self.u is None:
            return _observations(self.h, None, None, self.rho)
        return _observations(self.h, self.g, self.u[: self.n * self.r], self.rho)

    def out(self):
        if self._out is None and self.n:
            n_total = self.n if self.max_labels is None else self.max_labels
            q = self._q()
            self._out = _core_test(q, self.rho, self.log_prior, self.alpha, self.delta,
                                   self.strategy, False, n_total)
            self._out["q"] = q
        return self._out

    def result(self):
        out = dict(self.out())
        out.pop("q")
        return RAutoEvalResult(method=self.method, block_size=self.r, **out)

    def _log_bound(self, log_wealth, log_e_max):
        if self.max_labels is None:
            return math.inf
        rho = self.rho[:, None]
        if self.u is None:
            qmin = np.zeros((1, self.max_labels - self.n))
        else:
            rest = self.u[self.n * self.r : self.max_labels * self.r]
            ubar = rest.reshape(-1, self.r).mean(axis=1)
            qmin = np.maximum(-rho, rho * (ubar[None, :] - 1.0))
        c = _max_fraction(self.strategy)
        logf = np.log1p(c * np.maximum(self.alpha - qmin, 0.0) / (1.0 + rho - self.alpha))
        bound = float(max(log_e_max, _logsumexp(self.log_prior + log_wealth
                                                + logf.sum(axis=1), axis=0)))
        if isinstance(self.strategy, UniversalPortfolio) and qmin.shape[1]:
            # The universal portfolio's wealth is a positive mixture of constant-bet wealths,
            # each nonincreasing in every observation: the most favourable continuation
            # (true loss 0, judge loss 1 in every remaining round) bounds every other one.
            q = np.concatenate([self._q(), np.broadcast_to(qmin, (rho.size, qmin.shape[1]))],
                               axis=1) if self.n else np.broadcast_to(qmin, (rho.size,
                                                                             qmin.shape[1]))
            _, logw = _run(np.ascontiguousarray(q), self.alpha, -self.rho, 1.0 + self.rho,
                           self.strategy, delta=self.delta, n_total=self.max_labels)
            best = float(_logsumexp(self.log_prior[:, None] + logw, axis=0).max())
            bound = min(bound, best + _UP_MARGIN)
        return bound

    def _labels_needed(self, q, log_wealth):
        """``(low, high)``: the ``_RANGE`` quantiles of the labels still needed under the
        posterior predictive law of the e-process, or None if ``high`` is beyond the horizon
        (see :attr:`LabelingStatus.labels_needed`)."""
        horizon = _HORIZON if self.max_labels is None else self.max_labels - self.n
        if horizon < 1 or _max_fraction(self.strategy) == 0:
            return None
        n, rho, alpha = q.shape[1], self.rho[:, None], self.alpha
        # q_i = h_i + rho (ubar_i - g_i): the block means ubar_i of the rounds to come are
        # known (their mean ubar is used), only (h_i, g_i) is random.
        if self.u is None:
            g, ubar, spread = np.zeros(n), 0.0, 0.0
        else:
            blocks = self.u[n * self.r : self.max_labels * self.r].reshape(-1, self.r)
            g, ubar, spread = self.g, float(blocks.mean()), rho**2 * blocks.mean(axis=1).var()
        # Posterior of the law of (h, g): Dirichlet process whose prior is one pseudo-label
        # "model wrong, judge right" (1, 0) and one "model right, judge wrong" (0, 1), the
        # uniform prior for 0/1 losses (posterior Beta(errors + 1, n - errors + 1)). Without
        # it 20 error-free labels would promise a zero risk.
        mh, mg = (self.h.sum() + 1.0) / (n + 2.0), (g.sum() + 1.0) / (n + 2.0)
        chh = (self.h @ self.h + 1.0) / (n + 2.0) - mh**2
        cgg = (g @ g + 1.0) / (n + 2.0) - mg**2
        chg = self.h @ g / (n + 2.0) - mh * mg
        # Path k draws E h at level _LEVELS[k] of its posterior (the Dirichlet mean's law,
        # of variance chh / (n + 3), moment-matched by a Beta: exact for 0/1 losses) and E g
        # from its regression on E h; the (co)variances of h and g scale as a two-point
        # law's at those means.
        prec = n + 3.0
        kappa = mh * (1.0 - mh) * prec / chh - 1.0
        eh = special.betaincinv(mh * kappa, (1.0 - mh) * kappa, _LEVELS)
        slope = chg / chh
        eg = np.clip(mg + slope * (eh - mh) + _Z_MEAN * math.sqrt(
            max(cgg - slope * chg, 0.0) / prec), 1e-9, 1.0 - 1e-9)
        fh = np.sqrt(eh * (1.0 - eh) / (mh * (1.0 - mh)))[:, None, None]
        fg = np.sqrt(eg * (1.0 - eg) / (mg * (1.0 - mg)))[:, None, None]
        m = alpha - eh[:, None, None] + rho * (eg[:, None, None] - ubar)
        v = fh**2 * chh - 2.0 * rho * fh * fg * chg + rho**2 * fg**2 * cgg
        # Sums over all labels of x = alpha - q: S1 is a Gaussian walk with drift m whose
        # noise, that of -h + rho g, comes from two Brownian motions shared by every rho
        # (Cholesky factor of their covariance), on the grid t of labels to come; S2 = sum
        # x**2 grows by its mean.
        t = float(horizon) ** _GRID
        dt = t.copy()
        dt[1:] -= t[:-1]
        l00 = math.sqrt(chh)
        l10 = chg / l00
        l11 = math.sqrt(max(cgg - l10**2, 0.0))
        z = np.cumsum(_Z_WALK * np.sqrt(dt), axis=-1)
        x = alpha - q
        s1, s2 = x.sum(axis=1)[:, None], (x * x).sum(axis=1)[:, None]
        S1 = s1 + m * t + (rho * fg * l10 - fh * l00) * z[0] + rho * fg * l11 * z[1]
        S2 = s2 + (v + spread + m**2) * t
        # Log-wealth: sum of log(1 + lam x) as if x followed the two-point law with the mean
        # and mean square of the n + t labels and its lower atom at the worst x seen or
        # (1, 0) (exact for 0/1 losses at rho = 0, pessimistic otherwise). The universal
        # portfolio gains as the best bet in hindsight, less the regret log((n + t) / n) / 2
        # of its mixture; the mixture over rho is explicit.
        worst = np.minimum(x.min(axis=1), alpha - 1.0 - self.rho * ubar)[:, None]
        unit = 1.0 / (1.0 + rho - alpha)
        bet = None
        if not isinstance(self.strategy, UniversalPortfolio):
            bet = _max_fraction(self.strategy) * unit
            if isinstance(self.strategy, WSR):
                bet = np.minimum(bet, np.sqrt(2.0 * np.log(1.0 / self.delta)
                                              / (self.max_labels * (v + spread))))
        total, lam = _two_point_growth(S1, S2, n + t, worst, unit, bet)
        gain = total - _two_point_growth(s1, s2, n, worst, unit, bet)[0]
        if bet is None:
            gain -= 0.5 * np.log1p(t / n)
        log_now = self.log_prior + log_wealth
        terms = log_now[:, None] + gain
        top = terms.max(axis=1, keepdims=True)
        weights = np.exp(terms - top)
        mass = weights.sum(axis=1)
        threshold = np.log(1.0 / self.delta)
        gap = threshold - top[:, 0] - np.log(mass)
        # Between grid points log E is a Brownian bridge (variance per label lam**2 v,
        # averaged over the mixture's weights), which reaches log(1 / delta) with probability
        # exp(-2 gap_0 gap_1 / variance); a gap <= 0 at a grid point is a crossing.
        var = (weights * lam**2 * v).sum(axis=1) / mass * dt
        before = np.concatenate([np.full((_N_PATHS, 1), threshold - _logsumexp(log_now)),
                                 gap[:, :-1]], axis=1)
        cross = np.exp(-2.0 * np.maximum(before * gap, 0.0) / np.maximum(var, 1e-300))
        cdf = 1.0 - np.cumprod(1.0 - cross, axis=1).mean(axis=0)
        low, high = (_quantile(t, cdf, level) for level in _RANGE)
        return None if math.isinf(high) else (low, high)

    def status(self):
        if self._status is not None:
            return self._status
        out = self.out()
        if out is None:
            log_wealth = np.zeros(self.rho.size)
            log_e, pvalue, stop = 0.0, 1.0, None
        else:
            log_wealth = out["log_wealth"][:, -1]
            log_e, pvalue, stop = float(out["log_eprocess"].max()), out["pvalue"], \
                out["stopping_index"]
        certified = out is not None and out["certified"]
        bound = self._log_bound(log_wealth, log_e)
        impossible = not certified and bound < np.log(1.0 / self.delta)
        needed = None
        if certified:
            needed = (0, 0)
        elif out is not None and not impossible:
            needed = self._labels_needed(out["q"], log_wealth)
        self._status = LabelingStatus(
            n_labels=self.n, certified=bool(certified), impossible=bool(impossible),
            stopping_index=stop, pvalue=float(pvalue), log_evalue=log_e,
            log_evalue_bound=bound, labels_needed=needed, max_labels=self.max_labels,
            alpha=self.alpha, delta=self.delta, method=self.method,
        )
        return self._status


# --------------------------------------------------------------------------------------------
# Shared set-up, store and batch handling
# --------------------------------------------------------------------------------------------
def _digest(arr):
    return hashlib.sha256(np.ascontiguousarray(arr, dtype=float).tobytes()).hexdigest()[:16]


def _betting_name(betting, strategy):
    return betting if isinstance(betting, str) else repr(strategy)


def _setup(pools, alpha, delta, max_labels, method, betting, n_rho, rho_grid, rho_prior):
    """Validated parameters; ``pools`` is a list of pools (arrays or None) with their names."""
    alpha = check_level(alpha, "alpha")
    delta = check_level(delta, "delta")
    if method not in _METHODS:
        raise ValueError(f"`method` must be one of {_METHODS}; got {method!r}.")
    strategy = _resolve_betting(betting)
    max_labels = check_number(max_labels, "max_labels", integer=True, minimum=1,
                              allow_none=True)
    checked = []
    for u, name in pools:
        if u is not None:
            u = check_risks(u, name)
            if u.size == 0:
                u = None
        checked.append(u)
    run_method = method
    if method != "eval":
        if any(u is None for u in checked):
            warn(
                f"No unlabeled data (`loss_judge_unlabeled` is None or empty): method={method!r} "
                "reduces to R-Eval (rho = 0)."
            )
            run_method = "eval"
    if run_method == "eval":
        checked = [None] * len(checked)
    else:
        N = min(u.size for u in checked)
        if max_labels is None:
            max_labels = N
        elif max_labels > N:
            raise ValueError(
                f"`max_labels`={max_labels} exceeds the {N} unlabeled judge losses in "
                "`loss_judge_unlabeled`: every labeled round needs its own fresh block of "
                "r = floor(N / max_labels) >= 1 of them. Lower `max_labels` or pass more "
                "unlabeled data."
            )
    if max_labels is None and strategy.needs_delta:
        raise ValueError(
            "`max_labels` is required with betting='wsr': the WSR bet depends on the planned "
            "number of labels, which must be fixed before the first label."
        )
    rho, log_prior = _rho_setup(run_method, n_rho, rho_grid, rho_prior)
    config = dict(alpha=alpha, delta=delta, method=run_method,
                  betting=_betting_name(betting, strategy), rho_grid=rho.tolist(),
                  rho_prior=np.exp(log_prior).round(15).tolist(), max_labels=max_labels,
                  pools=[None if u is None else [int(u.size), _digest(u)] for u in checked],
                  format=_FORMAT)
    return alpha, delta, strategy, max_labels, checked, run_method, rho, log_prior, config


def _cluster_pool(u, groups_unlabeled, max_group_size, name):
    """``(max_group_size, (sums, sizes) of the unlabeled clusters or None)`` of a clustered
    session's pool of item losses ``u`` (None or empty: no pool)."""
    max_group_size = float(check_number(max_group_size, "max_group_size", minimum=1))
    if u is None or np.size(u) == 0:
        return max_group_size, None
    if groups_unlabeled is None:
        raise ValueError("`groups_unlabeled` (the cluster id of each unlabeled row) is required "
                         "with `max_group_size` and an unlabeled pool: its clusters are the "
                         "unlabeled draws.")
    Su, Mu, _ = cluster_sums(u, groups_unlabeled, name, "groups_unlabeled")
    if Mu.max() > max_group_size:
        raise ValueError(f"An unlabeled cluster has {int(Mu.max())} rows, more than "
                         f"max_group_size={max_group_size:g}: pass a bound on every cluster's "
                         "size.")
    return max_group_size, (Su, Mu)


def _batch_ids(example_ids, b, start):
    if example_ids is None:
        return [f"#{start + k}" for k in range(b)]
    ids = [str(e) for e in np.asarray(example_ids, dtype=object).ravel()]
    if len(ids) != b:
        raise ValueError(
            f"`example_ids` has {len(ids)} entries but the batch has {b} labels: one id per "
            "labeled example is required."
        )
    if len(set(ids)) != b:
        dup = next(e for e in ids if ids.count(e) > 1)
        raise ValueError(f"`example_ids` contains {dup!r} more than once in this batch.")
    return ids


class _Session:
    """Labels of ``K`` candidates with a durable log (columns ``label[k]`` and ``judge[k]``)."""

    _max_group_size = None  # clustered sessions: the bound M_max on a cluster's size

    def _init_common(self, store, config, K):
        self._K = K
        self._ids = []
        self._index = {}
        # [h_0..h_K-1, g_0..g_K-1]; clustered: [S_0..S_K-1, G_0..G_K-1, M] (sums, size)
        self._rows = np.empty((0, 2 * K + (self._max_group_size is not None)))
        self._store = as_store(store)
        if self._store is not None:
            self._store.open(config)
            self._load()

    def _columns(self):
        cols = [f"label[{k}]" for k in range(self._K)] + [f"judge[{k}]" for k in range(self._K)]
        return cols + (["size"] if self._max_group_size is not None else [])

    def _needed(self):
        """Columns of a row that must be known (the judge's only when it is used)."""
        need = list(range(self._K if self._run_method == "eval" else 2 * self._K))
        return need + ([2 * self._K] if self._max_group_size is not None else [])

    def _load(self):
        cols = {c: j for j, c in enumerate(self._columns())}
        order, values = [], {}
        for rec in self._store.records():
            j = cols.get(rec.model)
            if j is None:
                continue
            if rec.example not in values:
                order.append(rec.example)
                values[rec.example] = np.full(len(cols), np.nan)
            values[rec.example][j] = rec.score
        need = self._needed()
        ids = [e for e in order if not np.isnan(values[e][need]).any()]
        if ids:
            self._append(ids, np.stack([values[e] for e in ids]), save=False)

    def _append(self, ids, rows, save=True):
        if self.max_labels is not None and len(self._ids) + len(ids) > self.max_labels:
            raise ValueError(
                f"This batch of {len(ids)} labels exceeds the budget: {len(self._ids)} of "
                f"max_labels={self.max_labels} are used. The budget fixes the blocks of "
                "unlabeled data, so it cannot grow during a session; start a new session "
                "(with a new store) for a larger budget."
            )
        if save and self._store is not None:
            now = time.time()
            cols = self._columns()
            self._store.put_many([
                EvaluationRecord(cols[j], e, float(row[j]), None, now)
                for e, row in zip(ids, rows) for j in self._needed()
            ])
        for e in ids:
            self._index[e] = len(self._ids)
            self._ids.append(e)
        self._rows = np.concatenate([self._rows, rows])
        self._feed(rows)

    def _feed(self, rows):
        """Give the new rows ``[h_0..h_K-1, g_0..g_K-1]`` to the tracks: candidate ``k``'s
        losses to track ``k`` (clustered: the cluster observations of its sums)."""
        K = self._K
        for k, track in enumerate(self._tracks):
            h, g = rows[:, k], None if self._run_method == "eval" else rows[:, K + k]
            if self._max_group_size is not None:
                h, g = (None if x is None else self._observe(track, x, rows[:, 2 * K])
                        for x in (h, g))
            track.extend(h, g)

    def _observe(self, track, sums, sizes):
        """Cluster observations ``alpha + (S - alpha M) / M_max`` at the track's level."""
        return cluster_observations(track.alpha, sums, sizes, self._max_group_size)

    def _add_rows(self, H, G, example_ids):
        """``H``, ``G``: validated (K, b) arrays (``G`` None for R-Eval)."""
        b = H.shape[1]
        if example_ids is None and self._store is not None:
            # Without ids a batch re-sent after a crash would be counted twice, inflating the
            # e-process: with a store, ids are what makes a re-send idempotent.
            raise ValueError(
                f"This session records labels in a store ({self._store!r}), so every batch "
                "must carry `example_ids` (one id per labeled example): a batch re-sent after "
                "a crash is recognised by its ids and skipped, instead of being counted twice. "
                "Pass example_ids=[...] to `add`."
            )
        ids = _batch_ids(example_ids, b, len(self._ids))
        rows = np.concatenate([H.T, (np.full_like(H, np.nan) if G is None else G).T], axis=1)
        self._add_new(ids, rows, "Example {!r} was already labeled with other losses")

    def _add_new(self, ids, rows, conflict):
        """Append the rows whose id is new; a recorded id with the same row is a re-send
        (skipped), with another row an error (``conflict`` formats the id)."""
        new = []
        need = self._needed()
        for k, e in enumerate(ids):
            old = self._index.get(e)
            if old is None:
                new.append(k)
            elif not np.allclose(self._rows[old, need], rows[k, need], rtol=0, atol=1e-12):
                raise ValueError(
                    conflict.format(e) + f" ({self._rows[old, need].tolist()} stored, "
                    f"{rows[k, need].tolist()} given). A session never changes a recorded "
                    "label; use new ids."
                )
        if new:
            self._append([ids[k] for k in new], rows[new])

    def _add_clusters(self, H, G, groups, example_ids):
        """Clustered sessions: ``H``, ``G`` validated (K, b) item losses, ``groups`` the cluster
        id of each item; the batch's clusters (in the order of their first item) become rows
        ``[S, G, M]`` keyed by cluster id."""
        if example_ids is not None:
            raise ValueError("A clustered session (max_group_size given) identifies its rows by "
                             "cluster: pass `groups=` (one cluster id per row), not "
                             "`example_ids`.")
        if groups is None:
            raise ValueError(
                "This session is clustered (max_group_size given): every batch must carry "
                "`groups=`, the cluster id of each row, and hold whole clusters.")
        sums = [cluster_sums(H[k], groups, f"loss_labeled[{k}]") for k in range(self._K)]
        M, ids = sums[0][1], [str(e) for e in sums[0][2]]
        if M.max() > self._max_group_size:
            big = ids[int(np.argmax(M))]
            raise ValueError(
                f"Cluster {big!r} has {int(M.max())} rows, more than max_group_size="
                f"{self._max_group_size:g}, the bound fixed when the session was created (the "
                "e-process scales by it). Start a new session with a larger max_group_size.")
        S = np.stack([sm[0] for sm in sums])
        Gs = (np.full_like(S, np.nan) if G is None else
              np.stack([cluster_sums(G[k], groups, f"loss_judge_labeled[{k}]")[0]
                        for k in range(self._K)]))
        rows = np.concatenate([S.T, Gs.T, M[:, None]], axis=1)
        self._add_new(ids, rows, "Cluster {!r} was already recorded with other rows: a "
                      "cluster must arrive complete in one `add` call (all its rows "
                      "together); re-send it only with exactly the same rows")

    def _refuse_groups(self, groups):
        if groups is not None:
            raise ValueError("`groups` needs a clustered session: create it with "
                             "`max_group_size=` (and `groups_unlabeled=` for the pool).")

    def close(self) -> None:
        """Close the store (the session's state stays readable)."""
        if self._store is not None:
            self._store.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def example_ids(self) -> list[Any]:
        """Ids of the labeled examples, in the order their labels were received."""
        return list(self._ids)

    @property
    def n_labels(self) -> int:
        """Number of labels received."""
        return len(self._ids)


def _check_batch(values, name, K, b=None, table=False):
    if values is None:
        raise ValueError(f"`{name}` is required with method='plus' or 'autoeval'.")
    if not table:
        arr = check_risks(values, name)[None, :]
    else:
        arr = as_float_array(values, name, "a 2-d table (n_candidates, n_new_labels)")
        if arr.ndim != 2 or arr.shape[0] != K:
            raise ValueError(
                f"`{name}` must have shape (n_candidates={K}, n_new_labels); got shape "
                f"{arr.shape}."
            )
        for k in range(K):
            check_risks(arr[k], f"{name}[{k}]")
    if b is not None and arr.shape[1] != b:
        raise ValueError(
            f"`{name}` has {arr.shape[1]} labels per candidate but `loss_labeled` has {b}."
        )
    return arr


# --------------------------------------------------------------------------------------------
# Public sessions
# --------------------------------------------------------------------------------------------
class LabelingSession(_Session):
    """Label until ``risk <= alpha`` is certified (or proven impossible) with R-AutoEval+.

    Give it the judge's losses on an unlabeled pool, then the human labels in batches of any
    size; after each batch it says whether the model is certified, whether certification has
    become impossible within the label budget, and, once the labels so far allow it, a rough
    range of the labels still needed. Stopping at the first certification keeps the type-I
    error at most ``delta`` (anytime validity; see :mod:`sklearn_riskcontrol.autoeval` for the
    construction and the proof). With ``store=`` every label is committed to a file before it
    is used, keyed by example id, and a new process that opens the same store continues the
    same session.

    Parameters
    ----------
    loss_judge_unlabeled : array-like of shape (N,) or None
        Judge losses, in [0, 1], on unlabeled examples in random order, none of which will be
        labeled. Round ``i`` uses block ``i`` of ``r = floor(N / max_labels)`` of them. ``None``
        (or empty) runs R-Eval, with a :class:`~sklearn_riskcontrol.RiskControlWarning`.
    alpha : float in (0, 1)
        Tolerated risk.
    delta : float in (0, 1)
        Probability of certifying a model whose risk exceeds ``alpha``.
    max_labels : int, default=None
        Label budget ``n_max``, fixed before the first label (it fixes ``r`` and the WSR bet).
        ``None``: ``N`` (``r = 1``) with unlabeled data; unlimited for R-Eval with
        ``betting="up"``. Needed for the ``impossible`` verdict.
    method : {"plus", "autoeval", "eval"}, default="plus"
        As in :func:`~sklearn_riskcontrol.autoeval.rautoeval_test`.
    betting : {"up", "wsr"} or strategy object, default="up"
        As in :func:`~sklearn_riskcontrol.autoeval.rautoeval_test` (``"wsr"`` needs
        ``max_labels``).
    n_rho, rho_grid, rho_prior
        Reliance factors of R-AutoEval+, as in
        :func:`~sklearn_riskcontrol.autoeval.rautoeval_test`.
    store : str, path-like or EvaluationStore, default=None
        Where labels are recorded (a path opens a
        :class:`~sklearn_riskcontrol.evaluation.SQLiteStore`). The store keeps the session's
        configuration (``alpha``, ``delta``, method, bets, budget, a digest of the pool);
        opening it with another configuration raises ``ValueError``. With a store every
        batch must carry ``example_ids``: a batch re-sent after a crash is then skipped (ids
        already recorded), so it is never counted twice.
    groups_unlabeled : array-like of shape (N,), default=None
        Cluster id of each row of the pool (required with ``max_group_size`` and a pool).
    max_group_size : float, default=None
        Makes the session clustered (:ref:`autoeval-clusters`): the clusters are the draws,
        the risk certified is the item-level ``E[S] / E[M]``, every :meth:`add` carries
        ``groups=`` and whole clusters, and a labeled round, ``max_labels`` and ``n_labels``
        count clusters. It bounds every cluster's size and must be fixed before the first
        label: the e-process's observations ``alpha + (S - alpha M) / max_group_size`` use it.

    Attributes
    ----------
    status_ : LabelingStatus
        Verdict after the labels so far (also returned by :meth:`add`).
    max_labels : int or None
        The budget in force.
    block_size : int
        ``r`` (0 for R-Eval).
    method : str
        Method run.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_riskcontrol.autoeval import LabelingSession
    >>> rng = np.random.default_rng(0)
    >>> def draw(n):                             # true losses (risk 0.05), judge right 95%
    ...     h = rng.binomial(1, 0.05, n).astype(float)
    ...     return h, np.where(rng.random(n) < 0.95, h, 1 - h)
    >>> pool = draw(4000)[1]                    # the judge's losses on the unlabeled pool
    >>> session = LabelingSession(pool, alpha=0.15, delta=0.1, max_labels=400)
    >>> while not session.status_.done:         # label 20 examples at a time
    ...     status = session.add(*draw(20))
    >>> # Over the draw of the data, a model with risk > 0.15 ends certified w.p. <= 0.1:
    >>> status.decision, status.n_labels, status.stopping_index + 1
    ('certified', 40, 31)

    The e-process is the batch test's on the same labels:

    >>> from sklearn_riskcontrol.autoeval import rautoeval_test
    >>> h, g = session.labels()
    >>> res = rautoeval_test(h, g, pool[: h.size * session.block_size], alpha=0.15, delta=0.1)
    >>> bool(np.array_equal(res.log_eprocess, session.result().log_eprocess))
    True
    """

    def __init__(
        self,
        loss_judge_unlabeled: ArrayLike,
        *,
        alpha: float,
        delta: float,
        max_labels: int | None = None,
        method: str = "plus",
        betting: str | Any = "up",
        n_rho: int = 10,
        rho_grid: ArrayLike | None = None,
        rho_prior: ArrayLike | None = None,
        store: str | os.PathLike[str] | EvaluationStore | None = None,
        groups_unlabeled: ArrayLike | None = None,
        max_group_size: float | None = None,
    ) -> None:
        pool = loss_judge_unlabeled
        if max_group_size is not None:  # clustered: the pool's clusters, observed at alpha
            alpha = check_level(alpha, "alpha")
            max_group_size, sums = _cluster_pool(pool, groups_unlabeled, max_group_size,
                                                 "loss_judge_unlabeled")
            pool = None if sums is None else cluster_observations(alpha, *sums, max_group_size)
            self._max_group_size = max_group_size
        (self.alpha, self.delta, strategy, self.max_labels, pools, self._run_method, rho,
         log_prior, config) = _setup([(pool, "loss_judge_unlabeled")], alpha,
                                     delta, max_labels, method, betting, n_rho, rho_grid,
                                     rho_prior)
        config["kind"] = "LabelingSession"
        if max_group_size is not None:
            config["max_group_size"] = max_group_size
        self.method = self._run_method
        self._tracks = [_Track(pools[0], self.alpha, self.delta, self._run_method, strategy,
                               rho, log_prior, self.max_labels)]
        self.block_size = self._tracks[0].r
        self._init_common(store, config, 1)

    def __repr__(self):
        return (f"LabelingSession(method={self.method!r}, alpha={self.alpha:g}, "
                f"delta={self.delta:g}, n_labels={self.n_labels}, max_labels={self.max_labels}, "
                f"decision={self.status_.decision!r})")

    def add(
        self,
        loss_labeled: ArrayLike,
        loss_judge_labeled: ArrayLike | None = None,
        *,
        example_ids: ArrayLike | None = None,
        groups: ArrayLike | None = None,
    ) -> LabelingStatus:
        """Record a batch of labels and return the verdict.

        Parameters
        ----------
        loss_labeled : array-like of shape (b,)
            Losses with the true labels, in [0, 1], in the order the examples were labeled.
        loss_judge_labeled : array-like of shape (b,), default=None
            Judge losses on the same examples (required unless the method is R-Eval).
        example_ids : array-like of shape (b,), default=None
            Ids of the examples (strings or numbers). An id already recorded (e.g. re-sent
            after a crash) is skipped if its losses agree and is an error if they differ, so a
            re-sent, partially overlapping or reordered batch never changes the e-process.
            **Required when the session has a store** (``ValueError`` otherwise): a re-send
            is recognised only by its ids. Without a store and without ids every call
            appends.
        groups : array-like of shape (b,), default=None
            Clustered sessions (``max_group_size`` given) only, and required there: the
            cluster id of each row. The batch must hold whole clusters: each is one labeled
            round (in the order of its first row), keyed by its id (a re-sent cluster with the
            same rows is skipped; a cluster already recorded with other rows, e.g. sent in two
            parts, is refused).

        Returns
        -------
        LabelingStatus

        Examples
        --------
        >>> from sklearn_riskcontrol.autoeval import LabelingSession
        >>> s = LabelingSession(None, alpha=0.3, delta=0.1, method="eval", max_labels=30)
        >>> s.add([0, 0, 0, 0, 0], example_ids=["a", "b", "c", "d", "e"]).decision
        'continue'
        >>> s.add([0, 0], example_ids=["e", "f"]).n_labels   # "e" was already recorded
        6
        """
        H = _check_batch(loss_labeled, "loss_labeled", 1)
        G = None
        if self._run_method != "eval":
            G = _check_batch(loss_judge_labeled, "loss_judge_labeled", 1, b=H.shape[1])
        if self._max_group_size is not None:
            self._add_clusters(H, G, groups, example_ids)
        else:
            self._refuse_groups(groups)
            self._add_rows(H, G, example_ids)
        return self.status_

    @property
    def status_(self) -> LabelingStatus:
        """:class:`LabelingStatus` after the labels so far."""
        return self._tracks[0].status()

    def labels(self) -> tuple[FloatArray, FloatArray | None]:
        """``(loss_labeled, loss_judge_labeled)`` received so far, in order (copies; the
        judge losses are ``None`` for R-Eval)."""
        t = self._tracks[0]
        return t.h.copy(), (None if self._run_method == "eval" else t.g.copy())

    def result(self) -> RAutoEvalResult:
        """The full :class:`~sklearn_riskcontrol.autoeval.RAutoEvalResult` of the labels so far.

        Raises ``ValueError`` before the first label.
        """
        if self.n_labels == 0:
            raise ValueError("No label has been added yet: call `add` first.")
        return self._tracks[0].result()


def _select(st, procedure, delta, cost):
    """The selection from per-candidate statuses (``certified``, ``impossible``, ``pvalue``
    each at the test level): ``(certified, impossible, selected, better, decides)``, where
    ``better`` lists the candidates still open that would be preferred to ``selected`` (the
    selection is final when it is empty) and ``decides`` is, for the fixed sequence, the
    first open candidate (``None`` for Bonferroni or when none is open)."""
    K = len(st)
    cert_k = np.array([s.certified for s in st])
    imp_k = np.array([s.impossible for s in st])
    pvals = np.array([s.pvalue for s in st])
    if procedure == "fst":
        certified = fixed_sequence(pvals, delta) & cert_k
        first_imp = int(np.argmax(imp_k)) if imp_k.any() else K
        impossible = np.arange(K) >= first_imp
        open_ = ~certified & ~impossible
        decides = int(np.argmax(open_)) if open_.any() else None
    else:
        certified = bonferroni(pvals, delta) & cert_k
        impossible = imp_k & ~certified
        open_ = ~certified & ~impossible
        decides = None
    key = [(c, k) for k, c in enumerate(cost)]
    selected = min((key[k] for k in np.flatnonzero(certified)), default=None)
    better = [int(k) for k in np.flatnonzero(open_) if selected is None or key[k] < selected]
    return certified, impossible, None if selected is None else selected[1], better, decides


class SelectionSession(_Session):
    """Label in rounds for risk-controlled model selection; stop once it cannot change.

    The online counterpart of :func:`~sklearn_riskcontrol.autoeval.rautoeval_select` (and of
    :class:`~sklearn_riskcontrol.autoeval.RiskControlledModelSelector`): every labeled example gives
    one true loss and one judge loss per candidate, and each candidate runs the online
    e-process of :class:`LabelingSession` at level ``delta`` (fixed sequence) or ``delta / K``
    (Bonferroni). A candidate that is certified stays certified, and one that is impossible
    stays impossible, so once no candidate that could still be certified would be preferred
    to the current selection the selection is final (:attr:`SelectionStatus.final`).

    Validity: each candidate's p-value ``1 / max_i E_k,i`` at the stopping time is at least its
    p-value over the whole budget, which is valid by Ville's inequality; fixed-sequence testing
    and Bonferroni applied to valid p-values control the family-wise error at ``delta``,
    whenever the labeling stops.

    Parameters
    ----------
    loss_judge_unlabeled : array-like of shape (K, N) or None
        Judge losses of each candidate on the unlabeled pool (the same examples, in random
        order, for every candidate). ``None`` runs R-Eval.
    alpha, delta : float in (0, 1)
        Tolerated risk and family-wise error.
    procedure : {"fst", "bonferroni"}, default="fst"
        As in :func:`~sklearn_riskcontrol.autoeval.rautoeval_select` (candidates in the order
        given for FST).
    cost : array-like of shape (K,), default=None
        Smallest certified cost wins (ties to the lowest index); ``None``: the last certified
        candidate in the order given.
    max_labels, method, betting, n_rho, rho_grid, rho_prior, store
        As in :class:`LabelingSession`.
    groups_unlabeled, max_group_size
        As in :class:`LabelingSession` (one cluster id per column of the pool, the same for
        every candidate): a clustered selection, whole clusters per :meth:`add`.

    Attributes
    ----------
    status_ : SelectionStatus
    n_candidates : int
    max_labels, block_size, method
        As in :class:`LabelingSession`.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_riskcontrol.autoeval import SelectionSession
    >>> rng = np.random.default_rng(0)
    >>> risks = np.array([0.02, 0.05, 0.3])             # bigger to smaller models
    >>> def draw(n):
    ...     h = rng.binomial(1, risks[:, None], (3, n)).astype(float)
    ...     return h, np.where(rng.random((3, n)) < 0.95, h, 1 - h)
    >>> pool = draw(3000)[1]
    >>> session = SelectionSession(pool, alpha=0.15, delta=0.1, max_labels=300)
    >>> while not session.status_.final:
    ...     status = session.add(*draw(20))
    >>> # With probability >= 0.9 every certified candidate has risk <= 0.15:
    >>> status.selected, status.certified.tolist(), status.n_labels
    (1, [True, True, False], 240)
    """

    def __init__(
        self,
        loss_judge_unlabeled: ArrayLike,
        *,
        alpha: float,
        delta: float,
        procedure: str = "fst",
        cost: ArrayLike | None = None,
        max_labels: int | None = None,
        method: str = "plus",
        betting: str | Any = "up",
        n_rho: int = 10,
        rho_grid: ArrayLike | None = None,
        rho_prior: ArrayLike | None = None,
        store: str | os.PathLike[str] | EvaluationStore | None = None,
        groups_unlabeled: ArrayLike | None = None,
        max_group_size: float | None = None,
    ) -> None:
        if procedure not in ("fst", "bonferroni"):
            raise ValueError(f"`procedure` must be 'fst' or 'bonferroni'; got {procedure!r}.")
        if loss_judge_unlabeled is None:
            pools, K = None, None
        else:
            U = as_float_array(loss_judge_unlabeled, "loss_judge_unlabeled",
                               "a 2-d table (n_candidates, n_unlabeled)")
            if U.ndim != 2 or U.shape[0] == 0:
                raise ValueError(
                    "`loss_judge_unlabeled` must be a 2-d table (n_candidates, n_unlabeled) "
                    f"with at least one candidate; got shape {U.shape}."
                )
            K = U.shape[0]
            pools = [(U[k], f"loss_judge_unlabeled[{k}]") for k in range(K)]
        if cost is not None:
            cost_arr = np.asarray(cost, dtype=float).ravel()
            if K is None:
                K = cost_arr.size
            if cost_arr.size != K or K == 0 or not np.all(np.isfinite(cost_arr)):
                raise ValueError(f"`cost` must hold {K} finite numbers (one per candidate).")
        if K is None:
            raise ValueError(
                "Without unlabeled data pass `cost` (one per candidate) so that the number "
                "of candidates is known."
            )
        if pools is None:
            pools = [(None, "loss_judge_unlabeled")] * K
        if max_group_size is not None:  # clustered: each candidate's pool clusters at alpha
            alpha = check_level(alpha, "alpha")
            clustered = [_cluster_pool(u, groups_unlabeled, max_group_size, name)
                         for u, name in pools]
            max_group_size = clustered[0][0]
            pools = [(None if sums is None else
                      cluster_observations(alpha, *sums, max_group_size), name)
                     for (_, sums), (_, name) in zip(clustered, pools)]
            self._max_group_size = max_group_size
        self.procedure = procedure
        self.n_candidates = K
        self._cost = -np.arange(K, dtype=float) if cost is None else cost_arr
        delta = check_level(delta, "delta")
        level = delta if procedure == "fst" else delta / K
        (self.alpha, _, strategy, self.max_labels, pools, self._run_method, rho, log_prior,
         config) = _setup(pools, alpha, level, max_labels, method, betting, n_rho, rho_grid,
                          rho_prior)
        self.delta, self.test_level = delta, level
        config.update(kind="SelectionSession", procedure=procedure, fwer=delta,
                      cost=self._cost.tolist())
        if max_group_size is not None:
            config["max_group_size"] = max_group_size
        self.method = self._run_method
        self._tracks = [_Track(u, self.alpha, level, self._run_method, strategy, rho,
                               log_prior, self.max_labels) for u in pools]
        self.block_size = self._tracks[0].r
        self._init_common(store, config, K)

    def __repr__(self):
        return (f"SelectionSession(n_candidates={self.n_candidates}, "
                f"procedure={self.procedure!r}, method={self.method!r}, n_labels={self.n_labels},"
                f" max_labels={self.max_labels})")

    def add(
        self,
        loss_labeled: ArrayLike,
        loss_judge_labeled: ArrayLike | None = None,
        *,
        example_ids: ArrayLike | None = None,
        groups: ArrayLike | None = None,
    ) -> SelectionStatus:
        """Record a batch of labeled examples (all candidates' losses) and return the verdict.

        Parameters
        ----------
        loss_labeled : array-like of shape (K, b)
            Column ``j``: every candidate's loss on labeled example ``j`` (true label).
        loss_judge_labeled : array-like of shape (K, b), default=None
            The judge's losses on the same examples (required unless R-Eval).
        example_ids : array-like of shape (b,), default=None
            As in :meth:`LabelingSession.add`.
        groups : array-like of shape (b,), default=None
            As in :meth:`LabelingSession.add` (clustered sessions: whole clusters per batch).

        Returns
        -------
        SelectionStatus

        Examples
        --------
        >>> from sklearn_riskcontrol.autoeval import SelectionSession
        >>> s = SelectionSession(None, alpha=0.3, delta=0.1, method="eval", cost=[2, 1],
        ...                      max_labels=50)
        >>> s.add([[0, 0, 0], [0, 1, 1]], example_ids=[7, 8, 9]).certified.tolist()
        [False, False]
        """
        H = _check_batch(loss_labeled, "loss_labeled", self.n_candidates, table=True)
        G = None
        if self._run_method != "eval":
            G = _check_batch(loss_judge_labeled, "loss_judge_labeled", self.n_candidates,
                             b=H.shape[1], table=True)
        if self._max_group_size is not None:
            self._add_clusters(H, G, groups, example_ids)
        else:
            self._refuse_groups(groups)
            self._add_rows(H, G, example_ids)
        return self.status_

    def labels(self) -> tuple[FloatArray, FloatArray | None]:
        """``(loss_labeled, loss_judge_labeled)`` tables (K, n) received so far."""
        K = self._K
        rows = self._rows.T
        return rows[:K].copy(), (None if self._run_method == "eval" else rows[K:].copy())

    @property
    def status_(self) -> SelectionStatus:
        """:class:`SelectionStatus` after the labels so far."""
        st = tuple(t.status() for t in self._tracks)
        certified, impossible, selected, better, decides = _select(
            st, self.procedure, self.delta, self._cost)
        final = not better
        needed = None
        if not final:
            if decides is not None:
                needed = st[decides].labels_needed
            else:
                ranges = [st[k].labels_needed for k in better if st[k].labels_needed is not None]
                needed = tuple(map(min, zip(*ranges))) if ranges else None
        return SelectionStatus(
            n_labels=self.n_labels, certified=certified, impossible=impossible,
            selected=selected, final=final, labels_needed=needed, candidates=st,
            procedure=self.procedure, delta=self.delta,
            test_level=self.test_level,
        )

    def result(self) -> ModelSelectionResult:
        """:class:`~sklearn_riskcontrol.autoeval.ModelSelectionResult` of the labels so far
        (every candidate tested; ``certified`` as in :attr:`status_`)."""
        if self.n_labels == 0:
            raise ValueError("No label has been added yet: call `add` first.")
        st = self.status_
        results = tuple(t.result() for t in self._tracks)
        return ModelSelectionResult(
            certified=st.certified, pvalues=np.array([r.pvalue for r in results]),
            tested=np.ones(self.n_candidates, dtype=bool), selected=st.selected,
            procedure=self.procedure, delta=self.delta, test_level=self.test_level,
            results=results,
        )


@dataclass(frozen=True)
class ComparisonStatus(ResultMixin):
    """Verdict of a :class:`ComparisonSession` after the labels received so far.

    Over the draw of the labeled and unlabeled examples, the session ends with a wrong sign
    (``"A better"`` while ``risk(A) >= risk(B) - margin``, or ``"B better"`` while
    ``risk(B) >= risk(A) - margin``) with probability at most ``delta``, however the batches
    were sized and whenever the labeling stopped.

    Attributes
    ----------
    n_labels : int
    a_better, b_better : LabelingStatus
        The two one-sided tests on the paired losses, each at level ``delta / 2``:
        ``a_better.certified`` certifies ``risk(A) < risk(B) - margin``, ``b_better.certified``
        ``risk(B) < risk(A) - margin``.
    margin, delta : float
    """

    n_labels: int
    a_better: LabelingStatus
    b_better: LabelingStatus
    margin: float
    delta: float

    @property
    def decision(self) -> str:
        """``"A better"``, ``"B better"``, ``"undecided"`` (neither can be certified within the
        budget any more) or ``"continue"``."""
        if self.a_better.certified:
            return "A better"
        if self.b_better.certified:
            return "B better"
        if self.a_better.impossible and self.b_better.impossible:
            return "undecided"
        return "continue"

    @property
    def done(self) -> bool:
        """``True`` once labeling more cannot change the verdict."""
        return self.decision != "continue"

    def __str__(self):
        gap = "" if not self.margin else f" {'-' if self.margin > 0 else '+'} {abs(self.margin):g}"
        verdict = {
            "A better": f"certified: risk(A) < risk(B){gap}",
            "B better": f"certified: risk(B) < risk(A){gap}",
            "undecided": "undecided: neither order can be certified within the label budget",
            "continue": "not decided yet: label more",
        }[self.decision]
        return (f"{verdict} after {self.n_labels} labels (p-values {self.a_better.pvalue:.4g} "
                f"for A better, {self.b_better.pvalue:.4g} for B better). A wrong sign is "
                f"certified with probability <= {self.delta:g} over the draw of the examples, "
                "whenever the labeling stops")


class ComparisonSession(_Session):
    """Label until the sign of ``risk(A) - risk(B)`` is certified: a paired comparison online.

    The sibling of :class:`LabelingSession` for two models on the same examples. Each labeled
    example gives both models' losses with the true label and with the judge's label; the
    session runs two of :class:`LabelingSession`'s anytime-valid e-processes on the paired
    losses ``l = (L_A - L_B + 1) / 2`` (see :func:`rautoeval_difference_test`), one per
    direction, each at level ``delta / 2``: ``mean(l) < (1 - margin) / 2`` certifies ``risk(A) <
    risk(B) - margin``, and the same on ``1 - l`` certifies the reverse. Stopping as soon as
    either certifies keeps the probability of a wrong sign at most ``delta``.

    Parameters
    ----------
    loss_judge_unlabeled : array-like of shape (N, 2) or None
        Both models' judge losses on an unlabeled pool in random order (column 0: A, 1: B),
        none of which will be labeled. ``None`` runs R-Eval (labels only).
    delta : float in (0, 1)
        Probability of certifying a wrong sign.
    margin : float in [0, 1), default=0.0
        Certify a difference larger than ``margin`` in either direction.
    max_labels, method, betting, n_rho, rho_grid, rho_prior, store
        As in :class:`LabelingSession` (the store keeps the raw losses of both models).
    groups_unlabeled, max_group_size
        As in :class:`LabelingSession`: a clustered comparison (paired loss of each row, then
        cluster sums; whole clusters per :meth:`add`).

    Attributes
    ----------
    status_ : ComparisonStatus
    max_labels, block_size, method
        As in :class:`LabelingSession`.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_riskcontrol.autoeval import ComparisonSession
    >>> rng = np.random.default_rng(0)
    >>> def draw(n):                  # A errs on 10%, B on 20% (B also errs where A does)
    ...     a = rng.random(n) < 0.1
    ...     L = np.c_[a, a | (rng.random(n) < 1 / 9)].astype(float)
    ...     flip = rng.random(n) < 0.05                # the judge's label is wrong on 5%
    ...     return L, np.where(flip[:, None], 1 - L, L)
    >>> pool = draw(4000)[1]
    >>> session = ComparisonSession(pool, delta=0.1, max_labels=400)
    >>> while not session.status_.done:               # label 20 examples at a time
    ...     status = session.add(*draw(20))
    >>> status.decision, status.n_labels           # one draw: the labels this run needed
    ('A better', 100)
    """

    def __init__(
        self,
        loss_judge_unlabeled: ArrayLike | None,
        *,
        delta: float,
        margin: float = 0.0,
        max_labels: int | None = None,
        method: str = "plus",
        betting: str | Any = "up",
        n_rho: int = 10,
        rho_grid: ArrayLike | None = None,
        rho_prior: ArrayLike | None = None,
        store: str | os.PathLike[str] | EvaluationStore | None = None,
        groups_unlabeled: ArrayLike | None = None,
        max_group_size: float | None = None,
    ) -> None:
        margin = check_number(margin, "margin")
        if not 0.0 <= margin < 1.0:
            raise ValueError(f"`margin` must lie in [0, 1) (a difference of risks, certified in "
                             f"either direction); got {margin!r}.")
        delta = check_level(delta, "delta")
        pair = _paired(_loss_columns(loss_judge_unlabeled, "loss_judge_unlabeled", 2), 0, 1)
        pools = [(pair, "loss_judge_unlabeled"),
                 (None if pair is None else 1.0 - pair, "loss_judge_unlabeled")]
        if max_group_size is not None:  # clustered: paired sums per unlabeled cluster
            a = (1.0 - margin) / 2.0
            max_group_size, sums = _cluster_pool(pair, groups_unlabeled, max_group_size,
                                                 "loss_judge_unlabeled")
            if sums is not None:
                P, Mu = sums
                pools = [(cluster_observations(a, x, Mu, max_group_size), "loss_judge_unlabeled")
                         for x in (P, Mu - P)]
            self._max_group_size = max_group_size
        (alpha, _, strategy, self.max_labels, pools, self._run_method, rho, log_prior,
         config) = _setup(pools, (1.0 - margin) / 2.0, delta / 2.0, max_labels, method,
                          betting, n_rho, rho_grid, rho_prior)
        self.margin, self.delta = margin, delta
        config.update(kind="ComparisonSession", margin=margin, delta=delta)
        if max_group_size is not None:
            config["max_group_size"] = max_group_size
        self.method = self._run_method
        self._tracks = [_Track(u, alpha, delta / 2.0, self._run_method, strategy, rho,
                               log_prior, self.max_labels) for u in pools]
        self.block_size = self._tracks[0].r
        self._init_common(store, config, 2)

    def _feed(self, rows):
        # the stored rows are [h_A, h_B, g_A, g_B]; the tracks test the paired losses
        h = _paired(rows, 0, 1)
        g = None if self._run_method == "eval" else _paired(rows, 2, 3)
        if self._max_group_size is not None:  # rows of sums: (S_A - S_B + M) / 2 = paired sum
            M = rows[:, 4]
            h, g = (None if x is None else x - 0.5 + M / 2.0 for x in (h, g))
            for track, flip in zip(self._tracks, (False, True)):
                track.extend(*(None if x is None else self._observe(track, M - x if flip else x,
                                                                     M) for x in (h, g)))
            return
        self._tracks[0].extend(h, g)
        self._tracks[1].extend(1.0 - h, None if g is None else 1.0 - g)

    def __repr__(self):
        return (f"ComparisonSession(method={self.method!r}, delta={self.delta:g}, "
                f"margin={self.margin:g}, n_labels={self.n_labels}, "
                f"max_labels={self.max_labels}, decision={self.status_.decision!r})")

    def add(
        self,
        loss_labeled: ArrayLike,
        loss_judge_labeled: ArrayLike | None = None,
        *,
        example_ids: ArrayLike | None = None,
        groups: ArrayLike | None = None,
    ) -> ComparisonStatus:
        """Record a batch of labeled examples (both models' losses) and return the verdict.

        Parameters
        ----------
        loss_labeled : array-like of shape (b, 2)
            Row ``j``: the losses of A and B on labeled example ``j`` (true label).
        loss_judge_labeled : array-like of shape (b, 2), default=None
            The judge's losses on the same examples (required unless R-Eval).
        example_ids : array-like of shape (b,), default=None
            As in :meth:`LabelingSession.add`.
        groups : array-like of shape (b,), default=None
            As in :meth:`LabelingSession.add` (clustered sessions: whole clusters per batch;
            the paired loss of each row, then its cluster's sum).

        Returns
        -------
        ComparisonStatus

        Examples
        --------
        >>> from sklearn_riskcontrol.autoeval import ComparisonSession
        >>> s = ComparisonSession(None, delta=0.1, method="eval", max_labels=100)
        >>> s.add([[0, 1], [0, 1], [1, 1]], example_ids=["q1", "q2", "q3"]).decision
        'continue'
        """
        # the array layer's table check (shape (b, 2), losses in [0, 1]), then the sessions'
        # (K, b) layout
        H = _loss_columns(loss_labeled, "loss_labeled", 2)
        G = None
        if self._run_method != "eval":
            if loss_judge_labeled is None:
                raise ValueError("`loss_judge_labeled` is required with method='plus' or "
                                 "'autoeval'.")
            G = _loss_columns(loss_judge_labeled, "loss_judge_labeled", 2, rows=H.shape[0]).T
        if self._max_group_size is not None:
            self._add_clusters(H.T, G, groups, example_ids)
        else:
            self._refuse_groups(groups)
            self._add_rows(H.T, G, example_ids)
        return self.status_

    @property
    def status_(self) -> ComparisonStatus:
        """:class:`ComparisonStatus` after the labels so far."""
        return ComparisonStatus(n_labels=self.n_labels, a_better=self._tracks[0].status(),
                                b_better=self._tracks[1].status(), margin=self.margin,
                                delta=self.delta)

