"""Simulated selective-deployment problems of the SCoRE paper (Bai & Jin, Table 1, App. D.3).

``make_score_setting(k)`` builds data-generating process ``k`` (1..6) together with everything a
Monte-Carlo study of SCoRE needs: the risk and reward functions, a fitted prediction model ``f``
(settings 3 and 4), fitted risk and reward predictors ``l_hat`` and ``r_hat`` that give the scores,
and the covariate shift of the paper's Sections 6 and 8 (``w(x) = sigmoid(theta^T x)``,
``theta_i = 0.1`` for ``i <= 5``) with exact sampling of the shifted population and a
probabilistic-classification estimate of the density ratio.

All fitted models are trained once, on samples that are independent of anything later drawn with
:meth:`ScoreSetting.sample`, so SCoRE's guarantees hold conditionally on them and one fitted
setting can be reused across Monte-Carlo repetitions.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import expit
from sklearn.base import clone
from sklearn.ensemble import RandomForestRegressor
from sklearn.linear_model import LogisticRegression
from sklearn.utils import Bunch

from .._validation import check_number, check_random_state, show
from .._typing import Estimator, FloatArray, RandomStateLike

__all__ = ["ScoreSetting", "make_score_setting"]

_N_FEATURES = 20
# Settings 1-4: the noise is clipped so that Y <= 6 and the excess risk Y 1{Y > 2} / 6 is <= 1.
_NOISE = {  # setting -> (centre a, divisor, clip bound): eps = clip(sigma (a - mu) Z / divisor)
    1: (5.5, 1.0, 1.5),
    2: (6.0, 1.0, 1.0),
    3: (5.5, 1.0, 1.5),
    4: (6.0, 1.0, 1.0),
    5: (5.5, 2.0, None),
    6: (5.5, 2.0, None),
}
_RISK_KIND = {1: "excess", 2: "excess", 3: "mse", 4: "mse", 5: "sigmoid", 6: "sigmoid"}
_MSE_CLIP = {3: 0.6, 4: 0.4}
# Reward Y^2 divided by a bound on Y^2 so that it lies in [0, 1] (|Y| <= 6 exactly in settings
# 1-4; |Y| <= 4 up to Gaussian tails beyond 8 standard deviations in settings 5-6, and clipped).
_REWARD_SCALE = {1: 36.0, 2: 36.0, 3: 36.0, 4: 36.0, 5: 16.0, 6: 16.0}
_THETA = np.r_[np.full(5, 0.1), np.zeros(_N_FEATURES - 5)]


def _mu_step(X, shift):
    """``1{x1 x2 > 0, x4 > .5} (x4 + s) + 1{x1 x2 <= 0, x4 < -.5} (x4 - s)``."""
    pos = X[:, 0] * X[:, 1] > 0
    x4 = X[:, 3]
    return np.where(pos & (x4 > 0.5), x4 + shift, 0.0) + np.where(
        ~pos & (x4 < -0.5), x4 - shift, 0.0
    )


def _mu_smooth(X):
    """``x1 x2 + x3^2 + exp(x4 - 1)``."""
    return X[:, 0] * X[:, 1] + X[:, 2] ** 2 + np.exp(X[:, 3] - 1.0)


def _mu(setting, X):
    if setting in (1, 3):
        return 3.0 + _mu_step(X, 0.5)
    if setting in (2, 4):
        return 2.0 + _mu_smooth(X)
    if setting == 5:
        return _mu_step(X, 0.25)
    return _mu_smooth(X)


def _forest(n_estimators, seed):
    return RandomForestRegressor(n_estimators=n_estimators, n_jobs=1, random_state=seed)


@dataclass
class ScoreSetting:
    """One fitted data-generating process of the SCoRE paper's Table 1.

    Build it with :func:`make_score_setting`; the attributes below are filled there.

    Attributes
    ----------
    setting : int
        Table 1 row, 1..6.
    risk_kind : {"excess", "mse", "sigmoid"}
        ``Y 1{Y > 2} / 6``, ``clip((Y - f(X))^2, 0, c) / c`` or ``sigmoid(-tau Y)``.
    reward_kind : {"squared", "constant"}
        ``min(Y^2 / reward_scale, 1)`` (the paper's ``r_1 = Y^2``, rescaled into [0, 1]) or 1.
    sigma, tau, clip_c, reward_scale : float
        Noise level (0.1), sigmoid temperature (10), MSE clipping constant (0.6 in setting 3,
        0.4 in setting 4, else None) and the divisor of the squared reward.
    theta : ndarray of shape (20,)
        Covariate-shift direction: ``dQ/dP(x) = 2 sigmoid(theta^T x)``.
    model : RandomForestRegressor or None
        The deployed prediction model ``f`` (settings 3 and 4 only).
    risk_model, reward_model : RandomForestRegressor
        ``l_hat`` (predicts the risk) and ``r_hat`` (predicts the reward), fitted on their own
        independent sample of size ``n_train``.
    """

    setting: int
    n_train: int
    risk_kind: str
    reward_kind: str
    sigma: float = 0.1
    tau: float = 10.0
    clip_c: float | None = None
    reward_scale: float = 1.0
    theta: np.ndarray = field(default_factory=lambda: _THETA.copy(), repr=False)
    model: object = field(default=None, repr=False)
    risk_model: object = field(default=None, repr=False)
    reward_model: object = field(default=None, repr=False)

    # ----------------------------------------------------------------------------- sampling
    def _draw_y(self, X, rng):
        mu = _mu(self.setting, X)
        centre, divisor, bound = _NOISE[self.setting]
        eps = self.sigma * (centre - mu) / divisor * rng.standard_normal(X.shape[0])
        if bound is not None:
            eps = np.clip(eps, -bound, bound)
        return mu + eps

    def _draw_x(self, n, rng, shift):
        if not shift:
            return rng.uniform(-1.0, 1.0, size=(n, _N_FEATURES))
        # Exact rejection sampling: draw from P, accept with probability sigmoid(theta^T x),
        # so the accepted points have density proportional to sigmoid(theta^T x) dP.
        out, have = [], 0
        while have < n:
            cand = rng.uniform(-1.0, 1.0, size=(2 * (n - have) + 16, _N_FEATURES))
            keep = rng.uniform(size=cand.shape[0]) < expit(cand @ self.theta)
            out.append(cand[keep])
            have += int(keep.sum())
        return np.concatenate(out)[:n]

    def sample(
        self, n: int, random_state: RandomStateLike = None, shift: bool = False
    ) -> tuple[FloatArray, FloatArray]:
        """Draw ``n`` fresh points ``(X, Y)`` from P (``shift=False``) or from the shifted Q.

        Parameters
        ----------
        n : int
            Number of points.
        random_state : int, RandomState instance or None
        shift : bool, default False
            If True, draw X from Q with ``dQ/dP(x) = 2 sigmoid(theta^T x)`` (exactly, by
            rejection sampling); the conditional law of Y given X is unchanged.

        Returns
        -------
        X : ndarray of shape (n, 20)
        Y : ndarray of shape (n,)
        """
        rng = check_random_state(random_state)
        X = self._draw_x(int(n), rng, shift)
        return X, self._draw_y(X, rng)

    # ----------------------------------------------------------------- risk, reward, scores
    def risk(self, X: ArrayLike, Y: ArrayLike) -> FloatArray:
        """Realized risk ``L(f, X, Y)`` in [0, 1] of the setting (Table 1, last column)."""
        X = np.asarray(X, dtype=float)
        Y = np.asarray(Y, dtype=float)
        if self.risk_kind == "excess":
            out = Y * (Y > 2.0) / 6.0
        elif self.risk_kind == "mse":
            out = np.clip((Y - self.model.predict(X)) ** 2, 0.0, self.clip_c) / self.clip_c
        else:
            out = expit(-self.tau * Y)
        return np.clip(out, 0.0, 1.0)

    def reward(self, X: ArrayLike, Y: ArrayLike) -> FloatArray:
        """Reward of deploying on ``(X, Y)``, in [0, 1] (``Y^2 / reward_scale`` or 1)."""
        Y = np.asarray(Y, dtype=float)
        if self.reward_kind == "constant":
            return np.ones_like(Y)
        return np.minimum(Y**2 / self.reward_scale, 1.0)

    def predict_risk(self, X: ArrayLike) -> FloatArray:
        """``l_hat(X)``, the fitted risk predictor."""
        return self.risk_model.predict(np.asarray(X, dtype=float))

    def predict_reward(self, X: ArrayLike) -> FloatArray:
        """``r_hat(X)``, the fitted reward predictor, floored at a tiny positive value."""
        if self.reward_kind == "constant":
            return np.ones(np.asarray(X).shape[0])
        return np.maximum(self.reward_model.predict(np.asarray(X, dtype=float)), 1e-12)

    @staticmethod
    def combine_scores(
        l_hat: ArrayLike, r_hat: ArrayLike, kind: str = "risk", alpha: float | None = None
    ) -> FloatArray:
        """Score from precomputed ``l_hat`` and ``r_hat`` (see :meth:`score`)."""
        l_hat = np.asarray(l_hat, dtype=float)
        if kind == "risk":
            return l_hat
        if kind == "mdr_ratio":
            return l_hat / np.asarray(r_hat, dtype=float)
        if kind == "sdr_ratio":
            if alpha is None:
                raise ValueError(
                    "`alpha` is required for kind='sdr_ratio' ((l_hat - alpha) / r_hat)."
                )
            return (l_hat - alpha) / np.asarray(r_hat, dtype=float)
        raise ValueError(f"`kind` must be 'risk', 'mdr_ratio' or 'sdr_ratio'; got {show(kind)}.")

    def score(self, X: ArrayLike, kind: str = "risk", alpha: float | None = None) -> FloatArray:
        """Deployment score (smaller = safer).

        Parameters
        ----------
        X : array-like of shape (n, 20)
        kind : {"risk", "mdr_ratio", "sdr_ratio"}
            ``l_hat(x)`` (constant-reward optimal), ``l_hat(x) / r_hat(x)`` (optimal ranking for
            MDR, paper Thm 4.6) or ``(l_hat(x) - alpha) / r_hat(x)`` (optimal for SDR, Thm 5.8).
        alpha : float, optional
            Target level; required for ``"sdr_ratio"``.
        """
        if kind not in ("risk", "mdr_ratio", "sdr_ratio"):
            raise ValueError(f"`kind` must be 'risk', 'mdr_ratio' or 'sdr_ratio'; got {show(kind)}.")
        l_hat = self.predict_risk(X)
        r_hat = None if kind == "risk" else self.predict_reward(X)
        return self.combine_scores(l_hat, r_hat, kind, alpha)

    # -------------------------------------------------------------------- covariate shift
    def true_weights(self, X: ArrayLike) -> FloatArray:
        """Exact density ratio ``dQ/dP(x) = 2 sigmoid(theta^T x)``.

        ``E_P[sigmoid(theta . X)] = 1/2`` because ``theta . X`` is symmetric about 0, so the
        factor 2 makes this the normalised ratio (SCoRE only needs it up to a constant).
        """
        return 2.0 * expit(np.asarray(X, dtype=float) @ self.theta)

    def estimate_weights(
        self, n_extra: int = 1000, random_state: RandomStateLike = None, estimator: Estimator = None
    ) -> Callable[[ArrayLike], FloatArray]:
        """Estimate ``dQ/dP`` by probabilistic classification on extra source and target points.

        Draws ``n_extra`` points from P (label 0) and ``n_extra`` from Q (label 1), fits
        ``estimator`` (default ``LogisticRegression()``) and returns
        ``x -> p(x) / (1 - p(x)) * n_source / n_target`` with ``p = P(label 1 | x)`` (clipped
        to ``[1e-6, 1 - 1e-6]`` so the ratio stays finite and positive). Only asymptotic
        validity: SCoRE with estimated weights controls the risk as the estimate converges.

        Parameters
        ----------
        n_extra : int, default 1000
            Points drawn from each population.
        random_state : int, RandomState instance or None
        estimator : sklearn classifier with ``predict_proba``, optional

        Returns
        -------
        callable
            ``X -> ndarray of shape (len(X),)`` of estimated density ratios.
        """
        rng = check_random_state(random_state)
        X_src, _ = self.sample(n_extra, rng)
        X_tgt, _ = self.sample(n_extra, rng, shift=True)
        clf = LogisticRegression() if estimator is None else clone(estimator)
        clf.fit(np.vstack([X_src, X_tgt]), np.r_[np.zeros(n_extra), np.ones(n_extra)])
        col = list(clf.classes_).index(1.0)

        def w_hat(X):
            p = np.clip(clf.predict_proba(np.asarray(X, dtype=float))[:, col], 1e-6, 1 - 1e-6)
            return p / (1.0 - p)  # * n_source / n_target, equal to 1 here

        w_hat.classifier = clf
        return w_hat

    # ------------------------------------------------------------------ Monte-Carlo draws
    def draw_problem(
        self,
        n: int = 1000,
        m: int = 100,
        random_state: RandomStateLike = None,
        shift: bool = False,
        estimate: bool = False,
        n_extra: int = 1000,
    ) -> Bunch:
        """One Monte-Carlo instance: ``n`` calibration points from P, ``m`` test points.

        Everything SCoRE and its baselines need, as arrays: risks, ``l_hat`` and ``r_hat`` of
        calibration and test points, the test rewards, and the density ratios.

        Parameters
        ----------
        n, m : int
            Calibration and test sizes.
        random_state : int, RandomState instance or None
        shift : bool, default False
            Draw the test points from the shifted population Q instead of P.
        estimate : bool, default False
            Also estimate the density ratio with :meth:`estimate_weights` (on ``n_extra`` fresh
            points per population) and return it at the calibration and test points.
        n_extra : int, default 1000

        Returns
        -------
        Bunch
            ``cal_risks, cal_lhat, cal_rhat, cal_weights`` (true ``dQ/dP``),
            ``test_risks, test_rewards, test_lhat, test_rhat, test_weights`` and, with
            ``estimate=True``, ``cal_weights_hat, test_weights_hat``. Turn ``lhat``/``rhat``
            into scores with :meth:`combine_scores`.
        """
        rng = check_random_state(random_state)
        X_cal, Y_cal = self.sample(n, rng)
        X_test, Y_test = self.sample(m, rng, shift=shift)
        X_all = np.vstack([X_cal, X_test])
        lhat, rhat = self.predict_risk(X_all), self.predict_reward(X_all)
        w = self.true_weights(X_all)
        out = Bunch(
            cal_risks=self.risk(X_cal, Y_cal),
            cal_lhat=lhat[:n],
            cal_rhat=rhat[:n],
            cal_weights=w[:n],
            test_risks=self.risk(X_test, Y_test),
            test_rewards=self.reward(X_test, Y_test),
            test_lhat=lhat[n:],
            test_rhat=rhat[n:],
            test_weights=w[n:],
        )
        if estimate:
            w_hat = self.estimate_weights(n_extra, rng)(X_all)
            out.cal_weights_hat, out.test_weights_hat = w_hat[:n], w_hat[n:]
        return out


def make_score_setting(
    setting: int,
    *,
    n_train: int = 1000,
    reward: str = "squared",
    n_estimators: int = 100,
    random_state: RandomStateLike = None,
) -> ScoreSetting:
    """Build and fit simulation setting ``setting`` of the SCoRE paper (Table 1, App. D.3).

    ``X ~ Unif[-1, 1]^20``, ``Y = mu(X) + eps`` with, for a standard normal ``Z`` and
    ``sigma = 0.1`` (the table lists the noise scale; we read it as a Gaussian of that scale):

    * settings 1 and 3: ``mu = 3 + 1{x1 x2 > 0, x4 > .5} (x4 + .5)
      + 1{x1 x2 <= 0, x4 < -.5} (x4 - .5)``, ``eps = clip(sigma (5.5 - mu) Z, -1.5, 1.5)``;
    * settings 2 and 4: ``mu = 2 + x1 x2 + x3^2 + exp(x4 - 1)``,
      ``eps = clip(sigma (6 - mu) Z, -1, 1)``;
    * setting 5: ``mu = 1{x1 x2 > 0, x4 > .5} (x4 + .25) + 1{x1 x2 <= 0, x4 < -.5} (x4 - .25)``,
      ``eps = sigma (5.5 - mu) Z / 2``;
    * setting 6: ``mu = x1 x2 + x3^2 + exp(x4 - 1)``, ``eps = sigma (5.5 - mu) Z / 2``.

    Risks: settings 1-2 ``Y 1{Y > 2} / 6``; settings 3-4 ``clip((Y - f(X))^2, 0, c) / c`` with
    ``c = 0.6`` / ``0.4`` and ``f`` a random forest fitted on an independent sample of
    ``n_train``; settings 5-6 ``sigmoid(-10 Y)``. All lie in [0, 1]. Reward: the paper's
    ``Y^2`` divided by a bound (36 in settings 1-4, 16 in 5-6) so it lies in [0, 1] (the scale
    does not change any ranking), or the constant 1. ``l_hat`` and ``r_hat`` are random forests
    fitted on another independent sample of ``n_train``.

    Parameters
    ----------
    setting : int in 1..6
    n_train : int, default 1000
        Size of each independent training sample (one for ``f``, one for ``l_hat``/``r_hat``).
    reward : {"squared", "constant"}, default "squared"
    n_estimators : int, default 100
        Trees per forest (``n_jobs=1``); fitting the forests is the slow part, so build a setting
        once and reuse it across Monte-Carlo repetitions.
    random_state : int, RandomState instance or None

    Returns
    -------
    ScoreSetting

    Examples
    --------
    >>> from sklearn_riskcontrol.datasets import make_score_setting
    >>> from sklearn_riskcontrol.selective import mdr_decisions
    >>> sim = make_score_setting(3, n_train=300, n_estimators=10, random_state=0)
    >>> X, Y = sim.sample(500, random_state=1)
    >>> Xt, Yt = sim.sample(50, random_state=2, shift=True)
    >>> L = sim.risk(X, Y)
    >>> bool(L.min() >= 0 and L.max() <= 1)
    True
    >>> deploy = mdr_decisions(L, sim.score(X), sim.score(Xt), alpha=0.2,
    ...                        cal_weights=sim.true_weights(X), test_weights=sim.true_weights(Xt))
    >>> deploy.shape, deploy.dtype
    ((50,), dtype('bool'))
    """
    if isinstance(setting, bool) or setting not in _RISK_KIND:
        raise ValueError(f"`setting` must be an integer in 1..6 (paper Table 1); got {show(setting)}.")
    if reward not in ("squared", "constant"):
        raise ValueError(f"`reward` must be 'squared' or 'constant'; got {show(reward)}.")
    n_train = check_number(n_train, "n_train", integer=True, minimum=2)
    rng = check_random_state(random_state)
    sim = ScoreSetting(
        setting=int(setting),
        n_train=int(n_train),
        risk_kind=_RISK_KIND[setting],
        reward_kind=reward,
        clip_c=_MSE_CLIP.get(setting),
        reward_scale=_REWARD_SCALE[setting],
    )
    seeds = rng.randint(np.iinfo(np.int32).max, size=3)
    if sim.risk_kind == "mse":
        X_f, Y_f = sim.sample(n_train, rng)
        sim.model = _forest(n_estimators, seeds[0]).fit(X_f, Y_f)
    X_tr, Y_tr = sim.sample(n_train, rng)
    sim.risk_model = _forest(n_estimators, seeds[1]).fit(X_tr, sim.risk(X_tr, Y_tr))
    if reward == "squared":
        sim.reward_model = _forest(n_estimators, seeds[2]).fit(X_tr, sim.reward(X_tr, Y_tr))
    return sim
