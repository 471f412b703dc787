"""Streaming threshold learners for prediction sets under semi-bandit feedback (array layer).

Every learner publishes a threshold ``tau_t``; the prediction set of round ``t`` is
``C_t = {y : f(x_t, y) >= tau_t}``. After the round the learner is told either the true label's
score (the label was in the set, so the user could point at it) or only that the label was
missed: ``learner.update(score)`` or ``learner.update(None)``.

Strategies (``specs/sps.md``; ``alpha`` is the tolerated *miscoverage*):

* ``"sps"`` -- Semi-bandit Prediction Set (Ge, Bastani & Bastani). A miss is recorded as the
  current threshold; ``tau_{t+1} = max(tau_t, k_t-th smallest of max(tau_t, s_j), j <= t)`` with
  ``k_t = floor((alpha - eps_t) t) + 1`` and the DKW width ``eps_t``.
* ``"greedy"`` -- the same without ``eps_t`` (undercovers).
* ``"aci"`` -- adaptive conformal inference with the quantile function fitted on observed scores
  only (biased under semi-bandit feedback; that is the point of the baseline).
* ``"dlr"`` -- gradient steps on the cutoff with decaying step ``c t^(-0.6)``.
* ``"etc"`` / ``"conservative_etc"`` -- explore with full sets, then commit.

SPS and greedy keep their order statistic in O(log t) amortized time per round: records at or
below the current threshold are clipped to it, so they only need to be *counted*; the records above
it sit in a min-heap. When ``k_t`` exceeds the count, the threshold moves up to the smallest
heap entries (each record leaves the heap at most once). Nothing is re-sorted.
"""

from __future__ import annotations

import heapq
import math
import numbers
from bisect import bisect_left, insort

import numpy as np
from numpy.typing import ArrayLike

from .._validation import check_level, check_number, show
from .._typing import FloatArray

__all__ = [
    "STRATEGIES",
    "ThresholdLearner",
    "SPSLearner",
    "GreedyLearner",
    "ACILearner",
    "DLRLearner",
    "ETCLearner",
    "make_learner",
]

STRATEGIES = ("sps", "greedy", "aci", "dlr", "etc", "conservative_etc")

#: Failure probability of the anytime schedule when ``horizon=None`` and ``delta=None``.
ANYTIME_DEFAULT_DELTA = 0.01

_NEG_INF = -math.inf
_POS_INF = math.inf
# Rounds per chunk of SPS/greedy ``replay`` (bounds its temporary Python lists).
_REPLAY_CHUNK = 2**16
# Ranks of SPS/greedy computed ahead for small batches (NumPy's per-call cost is then paid once).
_RANK_BLOCK = 2**12


# -- argument checks -------------------------------------------------------------------------


def _check_horizon(horizon):
    return check_number(horizon, "horizon", integer=True, minimum=1, allow_none=True)


def _horizon_error(horizon, t):
    return ValueError(
        f"`horizon`={horizon} is smaller than the number of rounds seen ({t}): the guarantee was "
        "set up for `horizon` rounds. Pass a larger `horizon`, or horizon=None for the anytime "
        "schedule."
    )


# -- a sorted multiset with O(log n)-ish insertion and k-th element ---------------------------


class _SortedMultiset:
    """Sorted multiset of floats: ``add`` and ``kth`` (0-based k-th smallest).

    Sorted blocks of bounded length (``bisect`` inside a block) plus a Fenwick tree over block
    lengths for the k-th element; a block is split when it doubles. Used by ACI, whose quantile
    level moves up and down, so the k-th element jumps around.
    """

    _LOAD = 512

    def __init__(self):
        self._blocks = []
        self._maxes = []
        self._tree = [0]
        self._len = 0

    def __len__(self):
        return self._len

    def _rebuild(self):
        n = len(self._blocks)
        tree = [0] * (n + 1)
        for i, block in enumerate(self._blocks, start=1):
            tree[i] += len(block)
            j = i + (i & -i)
            if j <= n:
                tree[j] += tree[i]
        self._tree = tree

    def add(self, x):
        self._len += 1
        blocks, maxes = self._blocks, self._maxes
        if not blocks:
            blocks.append([x])
            maxes.append(x)
            self._rebuild()
            return
        i = bisect_left(maxes, x)
        if i == len(blocks):
            i -= 1
            blocks[i].append(x)
            maxes[i] = x
        else:
            insort(blocks[i], x)
        block = blocks[i]
        if len(block) > 2 * self._LOAD:
            half = len(block) // 2
            blocks[i : i + 1] = [block[:half], block[half:]]
            maxes[i : i + 1] = [block[half - 1], block[-1]]
            self._rebuild()
        else:
            tree, n, j = self._tree, len(blocks), i + 1
            while j <= n:
                tree[j] += 1
                j += j & -j

    def kth(self, k):
        """The ``k``-th smallest element, ``0 <= k < len(self)``."""
        tree, n = self._tree, len(self._blocks)
        pos, rem, step = 0, k + 1, 1 << n.bit_length()
        while step:
            nxt = pos + step
            if nxt <= n and tree[nxt] < rem:
                pos = nxt
                rem -= tree[nxt]
            step >>= 1
        return self._blocks[pos][rem - 1]

    def to_list(self):
        return [x for block in self._blocks for x in block]


# -- base class ------------------------------------------------------------------------------


class ThresholdLearner:
    """Base class of the streaming threshold learners (one round at a time).

    A learner publishes :attr:`threshold`; the round's prediction set holds every candidate with
    score ``>= threshold``. Feed it the outcome with :meth:`update`: the true label's score when
    the label was in the set, ``None`` when the user only reported a miss. :meth:`replay` runs a
    whole stream of true-label scores, revealing each score only when it clears the threshold.
    Learners are plain Python objects: they pickle and resume mid-stream.

    Examples
    --------
    >>> from sklearn_riskcontrol.online import SPSLearner
    >>> learner = SPSLearner(alpha=0.1, horizon=1000)
    >>> learner.threshold                      # full sets before any feedback
    -inf
    >>> learner.update(0.7)                    # the true label was covered; its score was 0.7
    -inf
    >>> learner.n_rounds
    1
    """

    strategy = None
    #: True for learners whose threshold never decreases.
    monotone = False

    def __init__(self, alpha: float, *, horizon: int | None = None) -> None:
        self.alpha = check_level(alpha, "alpha")
        self.horizon = _check_horizon(horizon)
        self._t = 0
        self._tau = _NEG_INF

    @property
    def threshold(self) -> float:
        """The threshold ``tau_t`` of the next round (``-inf`` = full set, ``+inf`` = empty set)."""
        return self._tau

    @property
    def n_rounds(self) -> int:
        """Number of rounds fed so far."""
        return self._t

    def __repr__(self):
        return (
            f"{type(self).__name__}(alpha={self.alpha!r}, n_rounds={self._t}, "
            f"threshold={self._tau!r})"
        )

    def _check_served(self, served_threshold):
        if served_threshold is None:
            return self._tau
        served = float(served_threshold)
        if math.isnan(served):
            raise ValueError(
                "`served_threshold` is NaN; pass the threshold the set was built with."
            )
        if self.monotone and served > self._tau:
            raise ValueError(
                f"`served_threshold`={served!r} is above the current threshold {self._tau!r}; "
                f"{self.strategy!r} thresholds never decrease, so no set was published with it."
            )
        return served

    def update(self, score: float | None = None, *, served_threshold: float | None = None) -> float:
        """Feed the feedback of one round and return the next threshold.

        Parameters
        ----------
        score : float or None
            Score ``f(x_t, y_t*)`` of the true label when it was in the published set (the user
            pointed at it); ``None`` when the user only reported that the label was missed.
        served_threshold : float, optional
            The threshold the round's set was built with, when it is older than
            :attr:`threshold` (feedback for a batch of sets published before any update).
            Defaults to the current threshold.

        Returns
        -------
        float
            The threshold of the next round.

        Raises
        ------
        ValueError
            If ``score`` is not finite, if it is below the served threshold (a label reported as
            observed although it was not in the set), or if more rounds than ``horizon`` are fed.
        """
        served = self._check_served(served_threshold)
        if score is not None:
            if isinstance(score, bool) or not isinstance(score, numbers.Real):
                raise TypeError(f"`score` must be a real number or None; got {show(score)}.")
            score = float(score)
            if not math.isfinite(score):
                raise ValueError(f"`score` must be finite; got {score!r}.")
            if score < served:
                raise ValueError(
                    f"Inconsistent feedback: the label was reported as observed with score "
                    f"{score!r}, but the published set only holds scores >= {served!r}. Pass "
                    "None when the true label was not in the set."
                )
        t = self._t + 1
        if self.horizon is not None and t > self.horizon:
            raise _horizon_error(self.horizon, t)
        self._t = t
        self._record(score, served, t)
        return self._tau

    def update_batch(self, scores: ArrayLike, *, served_threshold: float | None = None) -> float:
        """Feed the feedback of several rounds served with one threshold; return the next one.

        Equivalent to calling :meth:`update` on each round in order (same thresholds), with the
        checks done once for the whole batch: use it for a batch of sets published together.

        Parameters
        ----------
        scores : array-like of shape (n_rounds,)
            Score of the true label of each round when it was in the published set; NaN (or
            ``None``) where the user only reported a miss.
        served_threshold : float, optional
            The threshold every set of the batch was built with; defaults to the current
            :attr:`threshold`.

        Returns
        -------
        float
            The threshold of the next round.

        Raises
        ------
        ValueError
            If ``scores`` is not one-dimensional, if an observed score is infinite or below the
            served threshold, or if more rounds than ``horizon`` are fed.

        Examples
        --------
        >>> from sklearn_riskcontrol.online import GreedyLearner
        >>> GreedyLearner(alpha=0.5).update_batch([2.0, None, 5.0, 4.0])
        4.0
        """
        served = self._check_served(served_threshold)
        arr = np.asarray(scores, dtype=float)
        if arr.ndim != 1:
            raise ValueError(
                f"`scores` must be one-dimensional (one score per round, NaN or None for a "
                f"miss); got an array of shape {arr.shape}."
            )
        observed = ~np.isnan(arr)
        bad = observed & ~np.isfinite(arr)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(
                f"`scores` must be finite where the label was observed (NaN or None marks a "
                f"miss); row {i} (0-based) is {float(arr[i])!r}."
            )
        below = observed & (arr < served)
        if below.any():
            i = int(np.flatnonzero(below)[0])
            raise ValueError(
                f"Inconsistent feedback at row {i} (0-based): the label was reported as observed "
                f"with score {float(arr[i])!r}, but the published set only holds scores >= "
                f"{served!r}. Pass NaN (or None) when the true label was not in the set."
            )
        if self.horizon is not None and self._t + arr.shape[0] > self.horizon:
            raise _horizon_error(self.horizon, self._t + arr.shape[0])
        self._record_batch(arr, observed, served)
        return self._tau

    def _record_batch(self, scores, observed, served):
        """Record validated rounds (``observed`` False = a miss), all served with ``served``."""
        record, t = self._record, self._t
        for s, seen in zip(scores.tolist(), observed.tolist()):
            t += 1
            self._t = t
            record(s if seen else None, served, t)

    def replay(self, true_scores: ArrayLike) -> FloatArray:
        """Replay a stream of true-label scores with semi-bandit feedback.

        Round ``t`` publishes the current threshold; the learner sees ``true_scores[t]`` only if
        it is ``>= threshold``, otherwise it is told of a miss. ``-inf`` marks a round whose true
        label is not among the candidates (always a miss).

        Parameters
        ----------
        true_scores : array-like of shape (n_rounds,)
            Scores of the true labels (finite, or ``-inf``); not validated here.

        Returns
        -------
        ndarray of shape (n_rounds,)
            The threshold published at each round.
        """
        scores = np.asarray(true_scores, dtype=float).tolist()
        if self.horizon is not None and self._t + len(scores) > self.horizon:
            raise _horizon_error(self.horizon, self._t + len(scores))
        out = []
        append = out.append
        record = self._record
        t = self._t
        for s in scores:
            tau = self._tau
            append(tau)
            t += 1
            self._t = t
            record(s if (s >= tau and s != _NEG_INF) else None, tau, t)
        return np.array(out, dtype=float)

    def _record(self, score, served, t):  # pragma: no cover - abstract
        raise NotImplementedError


# -- SPS and greedy: clipped order statistic ------------------------------------------------


class _ClippedQuantileLearner(ThresholdLearner):
    """Shared state of SPS and greedy: ``tau_{t+1} = max(tau_t, k_t-th clipped record)``.

    Records ``<= tau`` are clipped to ``tau`` and only counted (``_n_low``); larger records sit
    in the min-heap ``_heap``. Rank ``k_t = 0`` means "no update this round" (``q_t < 0``).
    """

    monotone = True

    def __init__(self, alpha: float, *, horizon: int | None = None) -> None:
        super().__init__(alpha, horizon=horizon)
        self._n_low = 0
        self._heap = []
        self._rank_block = (0, [])  # ranks of rounds start + 1, start + 2, ...

    def rank(self, t: int) -> int:
        """Rank ``k_t`` of the clipped record that becomes the threshold after round ``t``.

        ``0`` means the bound is vacuous this round (``tau_new = -inf``).
        """
        raise NotImplementedError

    def _ranks(self, t0, n):
        """Ranks of rounds ``t0 + 1 .. t0 + n`` (equal, element by element, to :meth:`rank`)."""
        start, block = self._rank_block
        if start <= t0 and t0 + n <= start + len(block):
            return block[t0 - start : t0 + n - start]
        if n >= _RANK_BLOCK:
            return self._compute_ranks(t0, n)
        self._rank_block = (t0, self._compute_ranks(t0, _RANK_BLOCK))
        return self._rank_block[1][:n]

    def _compute_ranks(self, t0, n):
        """:meth:`rank` of rounds ``t0 + 1 .. t0 + n``, as a list (vectorised by subclasses)."""
        return [self.rank(t) for t in range(t0 + 1, t0 + n + 1)]

    def _record(self, score, served, t):
        tau = self._tau
        # a miss is recorded as the served threshold (<= tau): clipped, it is tau
        if score is not None and score > tau:
            heapq.heappush(self._heap, score)
        else:
            self._n_low += 1
        k = self.rank(t)
        if k > self._n_low:
            self._advance(k)

    def _advance(self, k):
        heap, low = self._heap, self._n_low
        while low < k:
            tau = heapq.heappop(heap)
            low += 1
        while heap and heap[0] <= tau:
            heapq.heappop(heap)
            low += 1
        self._tau, self._n_low = tau, low

    def replay(self, true_scores: ArrayLike) -> FloatArray:
        arr = np.asarray(true_scores, dtype=float)
        if arr.ndim == 1 and arr.shape[0] > _REPLAY_CHUNK:
            # Chunks give the same thresholds and bound the Python lists (scores, ranks) to
            # one chunk: ~8 bytes per round instead of ~100 (1 GB at 10**7 rounds).
            if self.horizon is not None and self._t + arr.shape[0] > self.horizon:
                raise _horizon_error(self.horizon, self._t + arr.shape[0])
            out = np.empty(arr.shape[0])
            for i0 in range(0, arr.shape[0], _REPLAY_CHUNK):
                out[i0 : i0 + _REPLAY_CHUNK] = self.replay(arr[i0 : i0 + _REPLAY_CHUNK])
            return out
        t0 = self._t
        if self.horizon is not None and t0 + arr.shape[0] > self.horizon:
            raise _horizon_error(self.horizon, t0 + arr.shape[0])
        return np.array(self._consume(arr), dtype=float)

    def _record_batch(self, scores, observed, served):
        # A miss is recorded as the served threshold, which is at most tau: -inf is clipped alike.
        self._consume(np.where(observed, scores, _NEG_INF))

    def _consume(self, arr):
        """Record rounds of scores (misses as ``-inf``); return the threshold published at each.

        The loop of :meth:`replay` and :meth:`update_batch`: one heap operation per round, ranks
        computed for the whole batch.
        """
        scores = arr.tolist()
        n = len(scores)
        t0 = self._t
        ranks = self._ranks(t0, n)
        heap, low, tau = self._heap, self._n_low, self._tau
        push, pop = heapq.heappush, heapq.heappop
        out = [0.0] * n
        for i in range(n):
            out[i] = tau
            s = scores[i]
            if s > tau:  # observed and above the threshold
                push(heap, s)
            else:  # observed at the threshold, or missed (recorded as tau): clipped to tau
                low += 1
            k = ranks[i]
            if k > low:
                while low < k:
                    tau = pop(heap)
                    low += 1
                while heap and heap[0] <= tau:
                    pop(heap)
                    low += 1
        self._heap, self._n_low, self._tau, self._t = heap, low, tau, t0 + n
        return out

    def records(self) -> list[float]:
        """The clipped records ``max(tau_t, s_j)`` of all rounds so far, sorted (for checks)."""
        return [self._tau] * self._n_low + sorted(self._heap)


class SPSLearner(_ClippedQuantileLearner):
    """Semi-bandit Prediction Set learner (Ge, Bastani & Bastani), one round at a time.

    With probability at least ``1 - delta`` the published thresholds satisfy
    ``tau_t <= tau*`` at every round, i.e. every published set has coverage at least
    ``1 - alpha``; the regret against ``tau*`` grows like ``sqrt(T log T)``.

    Parameters
    ----------
    alpha : float in (0, 1)
        Tolerated miscoverage (coverage ``1 - alpha``; the paper's "alpha" is ``1 - alpha``).
    horizon : int, optional
        Number of rounds ``T``. The DKW band of round ``t`` is then
        ``eps_t = sqrt(log(2 T / delta) / (2 t))`` (union bound over ``T`` rounds), and more than
        ``T`` rounds raise an error. ``None`` (default) uses the anytime schedule
        ``eps_t = sqrt(log(2 t (t + 1) / delta) / (2 t))`` (round ``t`` gets failure probability
        ``delta / (t (t + 1))``, which sums to ``delta`` over all rounds), so the stream may be of
        any length.
    delta : float in (0, 1), optional
        Probability that the guarantee fails at some round. Default: ``2 / T`` with a horizon,
        which reproduces the paper's per-round level ``2 / T^2``
        (``eps_t = sqrt(log(T^2) / (2 t))``); ``0.01`` for the anytime schedule.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_riskcontrol.online import SPSLearner
    >>> learner = SPSLearner(alpha=0.1, horizon=1000)
    >>> learner.threshold  # round 1: full set
    -inf
    >>> rng = np.random.default_rng(0)
    >>> for s in rng.normal(size=1000):  # true-label scores; tau* = -1.28 for N(0, 1)
    ...     tau = learner.threshold
    ...     _ = learner.update(s if s >= tau else None)  # the score if covered, else a miss
    >>> learner.n_rounds, bool(-2.5 < learner.threshold <= -1.2816)
    (1000, True)
    """

    strategy = "sps"

    def __init__(
        self, alpha: float, *, horizon: int | None = None, delta: float | None = None
    ) -> None:
        super().__init__(alpha, horizon=horizon)
        if delta is not None:
            delta = check_level(delta, "delta")
        self.delta = delta
        if self.horizon is None:
            self._anytime_delta = ANYTIME_DEFAULT_DELTA if delta is None else delta
            self._log_term = None
        else:
            T = self.horizon
            per_round = 2.0 / (T * T) if delta is None else delta / T
            self._anytime_delta = None
            self._log_term = math.log(2.0 / per_round)

    @property
    def failure_probability(self) -> float:
        """Probability that the guarantee ``tau_t <= tau*`` fails at some round: ``delta``, or
        by default ``0.01`` (anytime schedule, ``horizon=None``) or ``2 / horizon`` (the
        per-round level ``2 / horizon**2`` summed over the horizon)."""
        if self.delta is not None:
            return self.delta
        return ANYTIME_DEFAULT_DELTA if self.horizon is None else 2.0 / self.horizon

    def epsilon(self, t: int) -> float:
        """DKW width ``eps_t`` of round ``t``."""
        if self._log_term is None:
            return math.sqrt(math.log(2.0 * (t * (t + 1)) / self._anytime_delta) / (2 * t))
        return math.sqrt(self._log_term / (2 * t))

    def rank(self, t: int) -> int:
        q = self.alpha - self.epsilon(t)
        if q < 0:
            return 0
        return math.floor(q * t) + 1

    def _compute_ranks(self, t0, n):
        # The same IEEE operations as `rank`, vectorised (sqrt, /, -, * are correctly rounded).
        t = np.arange(t0 + 1, t0 + n + 1, dtype=float)
        log_term = self._log_term
        with np.errstate(over="ignore", invalid="ignore"):  # a tiny delta: eps = inf, rank 0
            if log_term is None:
                log_term = np.log(2.0 * (t * (t + 1.0)) / self._anytime_delta)
            eps = np.sqrt(log_term / (2.0 * t))
            x = (self.alpha - eps) * t
            k = np.where(x < 0, 0, np.floor(x) + 1.0).astype(np.int64)
            # np.log may differ from math.log by a few ulps, which moves x by at most
            # ~1e-15 eps t: where x is that close to an integer (or to 0), `rank` decides.
            unsure = np.abs(x - np.rint(x)) <= 1e-12 * t * (1.0 + eps)
        if self._log_term is None:
            for i in np.flatnonzero(unsure).tolist():
                k[i] = self.rank(t0 + 1 + i)
        return k.tolist()


class GreedyLearner(_ClippedQuantileLearner):
    """Greedy baseline: SPS without the DKW width (``k_t = floor(alpha t) + 1``).

    Its threshold is the running maximum of empirical quantiles, which overshoots ``tau*``:
    it undercovers.

    Parameters
    ----------
    alpha : float in (0, 1)
        Tolerated miscoverage.
    horizon : int, optional
        Maximum number of rounds (more raise an error); no effect on the thresholds.

    Examples
    --------
    >>> from sklearn_riskcontrol.online import GreedyLearner
    >>> learner = GreedyLearner(alpha=0.5)
    >>> learner.update(2.0)  # k_1 = 1: jumps to the first score and never comes back down
    2.0
    >>> learner.update(None), learner.update(5.0), learner.update(4.0)
    (2.0, 2.0, 4.0)
    """

    strategy = "greedy"

    def rank(self, t: int) -> int:
        return math.floor(self.alpha * t) + 1

    def _compute_ranks(self, t0, n):
        t = np.arange(t0 + 1, t0 + n + 1, dtype=float)
        return (np.floor(self.alpha * t) + 1.0).astype(np.int64).tolist()


# -- ACI --------------------------------------------------------------------------------------


class ACILearner(ThresholdLearner):
    """Adaptive conformal inference (Gibbs & Candes 2021) under semi-bandit feedback.

    The level moves as ``alpha_{t+1} = alpha_t + learning_rate * (alpha - err_t)`` with
    ``err_t = 1`` on a miss; the threshold is the ``alpha_t``-quantile
    ``sup{tau : F_obs(tau) <= alpha_t}`` of the scores *observed so far* (``-inf`` before any
    observation or when ``alpha_t <= 0``, ``+inf`` = empty set when ``alpha_t >= 1``). Only
    covered labels reach the quantile function, which biases it upwards: ACI undercovers here.

    Parameters
    ----------
    alpha : float in (0, 1)
        Tolerated miscoverage.
    learning_rate : float > 0, default=0.005
        Step ``gamma`` of the level update (Gibbs & Candes use 0.005).
    horizon : int, optional
        Maximum number of rounds (more raise an error).

    Examples
    --------
    >>> from sklearn_riskcontrol.online import ACILearner
    >>> learner = ACILearner(alpha=0.5, learning_rate=0.1)
    >>> learner.update(1.0), learner.update(3.0), learner.update(None)
    (1.0, 3.0, 3.0)
    >>> round(learner.level, 2)  # 0.5 + 0.1 * (0.5 + 0.5 - 0.5)
    0.55
    """

    strategy = "aci"

    def __init__(
        self, alpha: float, *, learning_rate: float = 0.005, horizon: int | None = None
    ) -> None:
        super().__init__(alpha, horizon=horizon)
        self.learning_rate = check_number(learning_rate, "learning_rate", minimum=0, exclusive=True)
        self.level = self.alpha
        self._observed = _SortedMultiset()

    def _record(self, score, served, t):
        if score is None:
            err = 1.0
        else:
            err = 0.0
            self._observed.add(score)
        self.level += self.learning_rate * (self.alpha - err)
        n = len(self._observed)
        level = self.level
        if n == 0 or level <= 0:
            self._tau = _NEG_INF
        elif level >= 1:
            self._tau = _POS_INF
        else:
            k = math.floor(level * n) + 1
            self._tau = self._observed.kth(k - 1) if k <= n else _POS_INF


# -- DLR --------------------------------------------------------------------------------------


class DLRLearner(ThresholdLearner):
    """Decaying-learning-rate online conformal (Angelopoulos, Barber & Bates 2024) on the cutoff.

    ``tau_{t+1} = tau_t + eta_t (alpha - err_t)`` with ``err_t = 1`` on a miss and
    ``eta_t = learning_rate * t^(-0.6)``: a miss lowers the threshold, a covered round raises it.
    It needs no quantile function, so its speed depends on ``learning_rate`` matching the scale of
    the scores.

    Parameters
    ----------
    alpha : float in (0, 1)
        Tolerated miscoverage.
    learning_rate : float > 0, default=1.0
        Scale ``c`` of the step ``eta_t = c t^(-0.6)``; choose it on the scale of the scores.
    initial_threshold : float, default=0.0
        Threshold of round 1. Start below the bulk of the scores (conservative): ``0`` suits
        probabilities and non-negative scores such as bids; use a lower value for logits.
    horizon : int, optional
        Maximum number of rounds (more raise an error).

    Examples
    --------
    >>> from sklearn_riskcontrol.online import DLRLearner
    >>> learner = DLRLearner(alpha=0.1, learning_rate=1.0)
    >>> learner.update(0.5)  # covered: 0 + 1 * 0.1
    0.1
    """

    strategy = "dlr"

    def __init__(
        self,
        alpha: float,
        *,
        learning_rate: float = 1.0,
        initial_threshold: float = 0.0,
        horizon: int | None = None,
    ) -> None:
        super().__init__(alpha, horizon=horizon)
        self.learning_rate = check_number(learning_rate, "learning_rate", minimum=0, exclusive=True)
        self.initial_threshold = check_number(initial_threshold, "initial_threshold")
        self._tau = self.initial_threshold

    def _record(self, score, served, t):
        err = 1.0 if score is None else 0.0
        self._tau = self._tau + self.learning_rate * t ** (-0.6) * (self.alpha - err)


# -- explore then commit -----------------------------------------------------------------------


class ETCLearner(ThresholdLearner):
    """Explore-then-commit baselines: full sets for ``n_explore`` rounds, then a fixed threshold.

    After the exploration rounds the threshold is ``sup{tau : G_m(tau) + eps <= alpha}`` for the
    empirical CDF ``G_m`` of the ``m = n_explore`` explored scores, with ``eps = 0`` (``"etc"``,
    undercovers) or the DKW width ``eps = sqrt(log(2 / delta) / (2 m))``
    (``"conservative_etc"``: ``tau <= tau*`` with probability ``>= 1 - delta``, but never
    improves afterwards).

    Parameters
    ----------
    alpha : float in (0, 1)
        Tolerated miscoverage.
    n_explore : int, optional
        Exploration rounds ``m``; default ``ceil(horizon^(2/3))`` (needs ``horizon``).
    conservative : bool, default=False
        Commit to the DKW-adjusted threshold.
    horizon : int, optional
        Number of rounds (more raise an error).
    delta : float in (0, 1), optional
        Failure probability of the conservative commit; default ``2 / horizon`` (the paper's),
        or 0.01 without a horizon.

    Examples
    --------
    >>> from sklearn_riskcontrol.online import ETCLearner
    >>> learner = ETCLearner(alpha=0.5, n_explore=2)
    >>> learner.update(3.0), learner.update(1.0), learner.update(5.0)
    (-inf, 3.0, 3.0)
    """

    def __init__(
        self,
        alpha: float,
        *,
        n_explore: int | None = None,
        conservative: bool = False,
        horizon: int | None = None,
        delta: float | None = None,
    ) -> None:
        super().__init__(alpha, horizon=horizon)
        if n_explore is None:
            if self.horizon is None:
                raise ValueError(
                    "Explore-then-commit needs `n_explore` (exploration rounds) or `horizon` "
                    "(then n_explore = ceil(horizon ** (2/3)))."
                )
            n_explore = math.ceil(self.horizon ** (2.0 / 3.0))
        self.n_explore = check_number(n_explore, "n_explore", integer=True, minimum=1)
        self.conservative = bool(conservative)
        if delta is not None:
            delta = check_level(delta, "delta")
        self.delta = delta
        if delta is None:
            delta = ANYTIME_DEFAULT_DELTA if self.horizon is None else 2.0 / self.horizon
        self._commit_delta = delta
        self._explored = []
        self.strategy = "conservative_etc" if self.conservative else "etc"

    def _record(self, score, served, t):
        if t > self.n_explore:
            return
        self._explored.append(served if score is None else score)
        if t == self.n_explore:
            m = self.n_explore
            q = self.alpha
            if self.conservative:
                q -= math.sqrt(math.log(2.0 / self._commit_delta) / (2 * m))
            if q >= 0:
                k = math.floor(q * m) + 1
                self._tau = sorted(self._explored)[k - 1]
            self._explored = []


# -- factory ------------------------------------------------------------------------------------


def make_learner(
    strategy: str,
    alpha: float,
    *,
    horizon: int | None = None,
    delta: float | None = None,
    learning_rate: float | None = None,
    initial_threshold: float | None = None,
    n_explore: int | None = None,
) -> ThresholdLearner:
    """Build the streaming learner of a strategy.

    Parameters
    ----------
    strategy : {"sps", "greedy", "aci", "dlr", "etc", "conservative_etc"}
        Threshold-learning strategy (see the module docstring).
    alpha : float in (0, 1)
        Tolerated miscoverage.
    horizon, delta : see :class:`SPSLearner` (``delta`` also sets the conservative ETC commit).
    learning_rate : float, optional
        ACI's level step (default 0.005) or DLR's step scale ``c`` (default 1.0).
    initial_threshold : float, optional
        DLR's first threshold (default 0.0).
    n_explore : int, optional
        Exploration rounds of the ETC strategies (default ``ceil(horizon^(2/3))``).

    Parameters a strategy does not use are ignored.

    Returns
    -------
    ThresholdLearner

    Examples
    --------
    >>> from sklearn_riskcontrol.online import make_learner
    >>> make_learner("greedy", 0.1)
    GreedyLearner(alpha=0.1, n_rounds=0, threshold=-inf)
    """
    if not isinstance(strategy, str) or strategy not in STRATEGIES:
        raise ValueError(f"`strategy` must be one of {STRATEGIES}; got {strategy!r}.")
    if strategy == "sps":
        return SPSLearner(alpha, horizon=horizon, delta=delta)
    if strategy == "greedy":
        return GreedyLearner(alpha, horizon=horizon)
    if strategy == "aci":
        lr = 0.005 if learning_rate is None else learning_rate
        return ACILearner(alpha, learning_rate=lr, horizon=horizon)
    if strategy == "dlr":
        lr = 1.0 if learning_rate is None else learning_rate
        init = 0.0 if initial_threshold is None else initial_threshold
        return DLRLearner(alpha, learning_rate=lr, initial_threshold=init, horizon=horizon)
    return ETCLearner(
        alpha,
        n_explore=n_explore,
        conservative=strategy == "conservative_etc",
        horizon=horizon,
        delta=delta,
    )
