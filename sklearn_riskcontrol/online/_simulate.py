"""Replay a labeled stream under semi-bandit feedback and return the published thresholds."""

from __future__ import annotations

from .._validation import check_level, check_scores
from ._learners import _check_horizon, _horizon_error, make_learner
from numpy.typing import ArrayLike
from .._typing import FloatArray

__all__ = ["simulate_thresholds"]


def simulate_thresholds(
    true_label_scores: ArrayLike,
    alpha: float,
    *,
    strategy: str = "sps",
    horizon: int | None = None,
    delta: float | None = None,
    learning_rate: float | None = None,
    initial_threshold: float | None = None,
    n_explore: int | None = None,
) -> FloatArray:
    """Thresholds an online set learner publishes on a stream with semi-bandit feedback.

    Round ``t`` publishes ``tau_t`` (the set ``{y : f(x_t, y) >= tau_t}``); the learner sees the
    true label's score ``s_t`` only when ``s_t >= tau_t`` and is otherwise told of a miss. Only
    this feedback is used, so the result is what the strategy would have done in deployment.

    Parameters
    ----------
    true_label_scores : array-like of shape (n_rounds,)
        Score ``f(x_t, y_t*)`` of the true label at each round, in stream order (any finite
        scale: probabilities, logits, similarities, bids).
    alpha : float in (0, 1)
        Tolerated miscoverage; the target coverage is ``1 - alpha`` (MAPIE's
        ``confidence_level``). The paper's "alpha" is the coverage ``1 - alpha``.
    strategy : {"sps", "greedy", "aci", "dlr", "etc", "conservative_etc"}, default="sps"
        ``"sps"`` is the Semi-bandit Prediction Set algorithm; the others are the paper's
        baselines (see :mod:`sklearn_riskcontrol.online`).
    horizon : int, optional
        Number of rounds ``T`` the guarantee is set up for (``>= n_rounds``). With a horizon,
        SPS uses ``eps_t = sqrt(log(2 T / delta) / (2 t))``; pass ``horizon=len(scores)`` to run
        the paper's algorithm exactly. ``None``: the anytime schedule of :class:`SPSLearner`
        (same thresholds as the streaming learner and the estimator with default settings).
    delta : float in (0, 1), optional
        Probability that SPS's guarantee ``tau_t <= tau*`` fails at some round (also the
        failure probability of the conservative ETC commit). Default ``2 / T`` with a horizon
        (the paper's per-round level ``2 / T^2``), ``0.01`` without.
    learning_rate : float, optional
        ACI's level step (default 0.005) or DLR's step scale ``c`` in ``eta_t = c t^(-0.6)``
        (default 1.0).
    initial_threshold : float, optional
        DLR's first threshold (default 0.0).
    n_explore : int, optional
        Exploration rounds of the ETC strategies (default ``ceil(horizon^(2/3))``).

    Returns
    -------
    thresholds : ndarray of shape (n_rounds,)
        ``tau_t`` published at each round (``-inf`` = full set, ``+inf`` = empty set). The round
        was covered iff ``true_label_scores[t] >= thresholds[t]``.

    Notes
    -----
    SPS (and greedy) cost O(log t) amortized per round: records below the current threshold are
    clipped to it and only counted, the others sit in a heap that the threshold climbs through.
    Because ``max(tau_t, s_j)`` is the same whether ``s_j`` was observed or substituted by an
    earlier threshold, SPS's thresholds equal those of the same rule run with full feedback.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_riskcontrol.online import simulate_thresholds
    >>> rng = np.random.default_rng(0)
    >>> scores = rng.normal(size=5000)  # true-label logits, range unknown to the learner
    >>> tau = simulate_thresholds(scores, alpha=0.1, horizon=5000)
    >>> bool(tau[0] == -np.inf), bool(np.all(tau[1:] >= tau[:-1]))  # full sets, then up
    (True, True)
    >>> bool(tau[-1] <= -1.2816)  # tau* of N(0, 1): its 10% quantile
    True
    """
    alpha = check_level(alpha, "alpha")
    scores = check_scores(true_label_scores, "true_label_scores")
    horizon = _check_horizon(horizon)
    if horizon is not None and len(scores) > horizon:
        raise _horizon_error(horizon, len(scores))
    learner = make_learner(
        strategy,
        alpha,
        horizon=horizon,
        delta=delta,
        learning_rate=learning_rate,
        initial_threshold=initial_threshold,
        n_explore=n_explore,
    )
    return learner.replay(scores)
