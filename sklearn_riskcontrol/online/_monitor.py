"""Anytime-valid drift monitor for online prediction sets (array layer).

SPS's guarantee needs i.i.d. rounds; its thresholds never decrease, so a stream whose scores drift
down leaves it undercovering for good. Semi-bandit feedback observes one thing exactly: whether the
true label was in the published set. :class:`MissRateMonitor` bets against the null "every
published set misses with conditional probability at most ``alpha``" -- SPS's own guarantee --
and :func:`simulate_monitored` replays a stream with SPS under that monitor, optionally restarting
the learner after a detection. This goes beyond the paper (Ge, Bastani & Bastani), whose
guarantee covers i.i.d. streams only.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from .._validation import check_level, check_number, check_scores
from ._learners import _check_horizon, _horizon_error, make_learner
from .._typing import FloatArray, IntArray

__all__ = ["MissRateMonitor", "simulate_monitored", "ON_DRIFT"]

#: What :class:`~sklearn_riskcontrol.online.SemiBanditPredictionSet` does after a detection.
ON_DRIFT = ("warn", "restart", "ignore")

# First chunk of rounds replayed between monitor checks in restart mode (then doubled).
_FIRST_CHUNK = 1024


def _check_on_drift(on_drift):
    if not isinstance(on_drift, str) or on_drift not in ON_DRIFT:
        raise ValueError(f"`on_drift` must be one of {ON_DRIFT}; got {on_drift!r}.")
    return on_drift


class MissRateMonitor:
    """Testing-by-betting e-process on the miss indicator of published prediction sets.

    After each round it multiplies its wealth by ``1 + lambda_t (m_t - alpha)``, ``m_t = 1`` on a
    miss, and rejects once the wealth (the e-value) reaches ``1 / delta``. The bet ``lambda_t``
    is the Kelly bet ``(p - alpha) / (alpha (1 - alpha))`` for an exponentially weighted average
    ``p`` of the *past* misses (window ``memory``), clipped to ``[0, max_bet / alpha]``: it bets
    nothing while sets cover, and quickly after a change, so the delay does not grow with the
    number of rounds before it.

    *Validity.* ``lambda_t`` depends on past rounds only and every factor is ``>= 1 - max_bet >
    0``. Under the null ``P(m_t = 1 | past) <= alpha`` at every round the wealth is then a
    non-negative supermartingale started at 1, so by Ville's inequality it ever reaches
    ``1 / delta`` with probability at most ``delta``. On i.i.d. rounds SPS's sets satisfy this
    null until the first round with ``tau_t > tau*`` (a predictable time, probability at most SPS's
    ``delta``), so the false-alarm probability is at most ``delta + delta_SPS`` over the whole
    stream.

    One round costs O(1); :meth:`update_batch` processes a batch without a Python loop.

    Parameters
    ----------
    alpha : float in (0, 1)
        Tolerated miscoverage of the monitored sets (the null's miss probability).
    delta : float in (0, 1), default=0.01
        Level of the test: probability of a false alarm under the null.
    memory : int >= 1, default=100
        Effective window (in rounds) of the average of past misses the bets are based on: the
        weight of round ``t - j`` is ``(1 - 1/memory)^j``. Shorter reacts faster, longer is less
        noisy; validity holds for any value.
    max_bet : float in (0, 1), default=0.5
        Largest fraction of the wealth staked on a miss: a covered round multiplies the wealth
        by at least ``1 - max_bet``.

    Attributes
    ----------
    n_rounds : int
        Rounds monitored since the last :meth:`reset`.
    log_evalue : float
        Logarithm of the current e-value (the wealth).
    detected_at : int or None
        Round (1-based, counted since the last reset) at which the e-value first reached
        ``1 / delta``; the monitor stops updating then.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_riskcontrol.online import MissRateMonitor
    >>> rng = np.random.default_rng(0)
    >>> monitor = MissRateMonitor(alpha=0.1, delta=0.01)
    >>> monitor.update_batch(rng.random(5000) < 0.08) is None  # sets cover: no alarm
    True
    >>> i = monitor.update_batch(rng.random(1000) < 0.4)  # sets now miss 40% of the labels
    >>> i is not None and i < 100, monitor.detected_at == 5000 + i + 1
    (True, True)
    >>> bool(monitor.e_value >= 100)
    True
    """

    def __init__(
        self, alpha: float, *, delta: float = 0.01, memory: int = 100, max_bet: float = 0.5
    ) -> None:
        self.alpha = check_level(alpha, "alpha")
        self.delta = check_level(delta, "delta")
        self.memory = check_number(memory, "memory", minimum=1)
        self.max_bet = check_level(max_bet, "max_bet")
        self._decay = 1.0 - 1.0 / self.memory
        self._log_threshold = math.log(1.0 / self.delta)
        self.reset()

    def reset(self) -> None:
        """Forget every round: wealth 1, average of misses back to ``alpha``."""
        self.n_rounds = 0
        self.log_evalue = 0.0
        self.detected_at = None
        self._average = self.alpha

    @property
    def e_value(self) -> float:
        """Current e-value (wealth of the bettor); ``>= 1 / delta`` means rejection."""
        return math.exp(self.log_evalue)

    @property
    def rejected(self) -> bool:
        """Whether the e-value has reached ``1 / delta``."""
        return self.detected_at is not None

    def __repr__(self):
        return (
            f"MissRateMonitor(alpha={self.alpha!r}, delta={self.delta!r}, n_rounds={self.n_rounds}, "
            f"e_value={self.e_value:.4g})"
        )

    def update(self, missed: bool) -> bool:
        """Monitor one round; return True if the test rejects at this round."""
        return self.update_batch([bool(missed)]) is not None

    def update_batch(self, missed: ArrayLike) -> int | None:
        """Monitor a batch of rounds in order.

        Parameters
        ----------
        missed : array-like of bool, shape (n_rounds,)
            True where the true label was not in the published set.

        Returns
        -------
        int or None
            0-based index in the batch of the round at which the test first rejects (the rounds
            after it are not monitored), or None. Once rejected, the monitor ignores further
            rounds until :meth:`reset`.
        """
        m = np.asarray(missed)
        if m.ndim != 1:
            raise ValueError(
                f"`missed` must be one-dimensional (one flag per round); got shape {m.shape}."
            )
        if self.rejected or m.shape[0] == 0:
            return None
        from scipy.signal import lfilter

        m = m.astype(float)
        alpha, r = self.alpha, self._decay
        # average_t = r average_{t-1} + (1 - r) m_t; round t bets on average_{t-1} (predictable).
        avg, _ = lfilter([1.0 - r], [1.0, -r], m, zi=[r * self._average])
        prev = np.concatenate(([self._average], avg[:-1]))
        bets = np.clip((prev - alpha) / (alpha * (1.0 - alpha)), 0.0, self.max_bet / alpha)
        # the running sum starts from the current log-wealth: batches of any size add up alike
        log_wealth = np.cumsum(np.concatenate(([self.log_evalue], np.log1p(bets * (m - alpha)))))
        log_wealth = log_wealth[1:]
        hits = np.flatnonzero(log_wealth >= self._log_threshold)
        stop = int(hits[0]) if hits.size else m.shape[0] - 1
        self.log_evalue = float(log_wealth[stop])
        self._average = float(avg[stop])
        self.n_rounds += stop + 1
        if hits.size:
            self.detected_at = self.n_rounds
            return stop
        return None


def _missed(scores, thresholds):
    """Misses of a replay: the score is below the threshold, or ``-inf`` (label not a candidate)."""
    return ~(scores >= thresholds) | (scores == -np.inf)


def _replay_monitored(scores, new_learner, new_monitor, restart):
    """Replay ``scores`` with semi-bandit feedback under a monitor.

    Returns ``(thresholds, events, learner, monitor)``: ``events`` lists ``(round, e_value)``
    (1-based stream rounds) of each detection. Without ``restart`` the learner runs unchanged
    (the same thresholds as ``learner.replay``) and the monitor stops at its first detection.
    With ``restart`` a detection after round ``r`` gives round ``r + 1`` a fresh learner and a
    fresh monitor; the stream is replayed in chunks (doubling from 1024 rounds) so that the work
    wasted after a detection is at most the length of the segment before it.
    """
    n = scores.shape[0]
    learner, monitor = new_learner(), new_monitor()
    events = []
    if not restart:
        tau = learner.replay(scores)
        i = monitor.update_batch(_missed(scores, tau))
        if i is not None:
            events.append((i + 1, monitor.e_value))
        return tau, events, learner, monitor
    out = np.empty(n)
    pos, chunk = 0, _FIRST_CHUNK
    while pos < n:
        stop = min(n, pos + chunk)
        tau = learner.replay(scores[pos:stop])
        i = monitor.update_batch(_missed(scores[pos:stop], tau))
        if i is None:
            out[pos:stop] = tau
            pos, chunk = stop, 2 * chunk
            continue
        out[pos : pos + i + 1] = tau[: i + 1]
        pos += i + 1
        events.append((pos, monitor.e_value))
        learner, monitor, chunk = new_learner(), new_monitor(), _FIRST_CHUNK
    return out, events, learner, monitor


def simulate_monitored(
    true_label_scores: ArrayLike,
    alpha: float,
    *,
    on_drift: str = "restart",
    monitor_delta: float = 0.01,
    monitor_memory: int = 100,
    horizon: int | None = None,
    delta: float | None = None,
) -> tuple[FloatArray, IntArray]:
    """SPS on a stream of true-label scores under the drift monitor, optionally restarting.

    Replays the stream with semi-bandit feedback like
    :func:`~sklearn_riskcontrol.online.simulate_thresholds` (``strategy="sps"``) while a
    :class:`MissRateMonitor` tests whether the published sets miss more often than ``alpha``.
    With ``on_drift="restart"`` the learner and the monitor restart from scratch after each
    detection (the round after it publishes a full set again); otherwise the thresholds are
    exactly those of :func:`~sklearn_riskcontrol.online.simulate_thresholds` and only the first
    detection is reported. Restarting is outside the paper's guarantee: a restarted SPS is valid
    only if the stream is i.i.d. after the restart.

    Parameters
    ----------
    true_label_scores : array-like of shape (n_rounds,)
        Score of the true label at each round, in stream order.
    alpha : float in (0, 1)
        Tolerated miscoverage.
    on_drift : {"restart", "warn", "ignore"}, default="restart"
        ``"restart"`` restarts after each detection; ``"warn"`` and ``"ignore"`` only record the
        first detection (no warning is emitted here; the estimator warns).
    monitor_delta : float in (0, 1), default=0.01
        Level of the monitor: on i.i.d. rounds, it raises a false alarm with probability at
        most ``monitor_delta + delta``.
    monitor_memory : int >= 1, default=100
        Window of the monitor's bets (see :class:`MissRateMonitor`).
    horizon, delta : see :class:`~sklearn_riskcontrol.online.SPSLearner` (each restarted learner
        gets the same ``horizon`` and ``delta``).

    Returns
    -------
    thresholds : ndarray of shape (n_rounds,)
        Threshold published at each round.
    detections : ndarray of int
        Rounds (1-based) after which the monitor rejected.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_riskcontrol.online import simulate_monitored, simulate_thresholds
    >>> rng = np.random.default_rng(0)
    >>> scores = np.concatenate([rng.normal(3, 2, 5000), rng.normal(0, 2, 5000)])  # a shift
    >>> tau, rounds = simulate_monitored(scores, alpha=0.1, on_drift="warn")
    >>> bool(np.array_equal(tau, simulate_thresholds(scores, 0.1))), len(rounds)
    (True, 1)
    >>> bool(5000 < rounds[0] < 5200)  # detected within 200 rounds of the shift
    True
    >>> tau, rounds = simulate_monitored(scores, alpha=0.1, on_drift="restart")
    >>> bool(tau[rounds[0]] == -np.inf)  # the round after the detection: a full set
    True
    >>> bool(np.mean(scores[7500:] >= tau[7500:]) >= 0.85)  # last-quarter coverage
    True
    """
    alpha = check_level(alpha, "alpha")
    on_drift = _check_on_drift(on_drift)
    scores = check_scores(true_label_scores, "true_label_scores")
    horizon = _check_horizon(horizon)
    if horizon is not None and len(scores) > horizon:
        raise _horizon_error(horizon, len(scores))
    monitor_delta = check_level(monitor_delta, "monitor_delta")
    monitor_memory = check_number(monitor_memory, "monitor_memory", minimum=1)
    tau, events, _, _ = _replay_monitored(
        np.asarray(scores, dtype=float),
        lambda: make_learner("sps", alpha, horizon=horizon, delta=delta),
        lambda: MissRateMonitor(alpha, delta=monitor_delta, memory=monitor_memory),
        on_drift == "restart",
    )
    return tau, np.array([r for r, _ in events], dtype=int)
