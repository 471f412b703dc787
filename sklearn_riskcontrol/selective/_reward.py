"""Reward-aware scores for SCoRE (paper Sec. 5.3): a score that orders test points by estimated risk and reward."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from .._typing import Estimator, FloatArray
from .._validation import (
    check_level,
    show,
)

__all__ = ["RewardAwareScore"]


class RewardAwareScore:
    """Score recipe ranking test points by risk per unit of reward (paper Thms. 4.6 and 5.8).

    The asymptotically optimal score for MDR ranks by ``l(x) / r(x)``; for SDR by
    ``(l(x) - alpha) / r(x)``, where ``l`` predicts the risk and ``r`` the reward of deploying.
    Pass an instance as ``risk_score=`` (smaller = safer).

    Parameters
    ----------
    risk_predictor : fitted estimator with ``predict``
        Predicts the risk ``l(x)`` (in [0, 1]).
    reward_predictor : fitted estimator with ``predict``
        Predicts the reward ``r(x) > 0`` of deploying on ``x``.
    target : {"mdr", "sdr"}, default="mdr"
    alpha : float, optional
        Required for ``target="sdr"``: the level used by :class:`SCoRESDR`.
    min_reward : float, default=1e-6
        Rewards are clipped below at this value before dividing.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.dummy import DummyRegressor
    >>> from sklearn_riskcontrol.selective import RewardAwareScore
    >>> X = np.zeros((3, 1))
    >>> l_hat = DummyRegressor(strategy="constant", constant=0.2).fit(X, [0, 0, 0])
    >>> r_hat = DummyRegressor(strategy="constant", constant=0.5).fit(X, [0, 0, 0])
    >>> RewardAwareScore(l_hat, r_hat, target="sdr", alpha=0.1)(X)
    array([0.2, 0.2, 0.2])
    """

    def __init__(
        self,
        risk_predictor: Estimator,
        reward_predictor: Estimator,
        *,
        target: str = "mdr",
        alpha: float | None = None,
        min_reward: float = 1e-6,
    ) -> None:
        if target not in ("mdr", "sdr"):
            raise ValueError(f"`target` must be 'mdr' or 'sdr'; got {show(target)}.")
        if target == "sdr" and alpha is None:
            raise ValueError("The SDR recipe (l - alpha) / r needs `alpha` (the level of SCoRESDR).")
        if alpha is not None:
            alpha = check_level(alpha, "alpha")
        self.risk_predictor = risk_predictor
        self.reward_predictor = reward_predictor
        self.target = target
        self.alpha = alpha
        self.min_reward = min_reward

    def __call__(self, X: ArrayLike) -> FloatArray:
        risk = np.asarray(self.risk_predictor.predict(X), dtype=float)
        reward = np.maximum(np.asarray(self.reward_predictor.predict(X), dtype=float), self.min_reward)
        if self.target == "sdr":
            risk = risk - self.alpha
        return risk / reward
