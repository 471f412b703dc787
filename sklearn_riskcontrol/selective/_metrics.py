"""Realized risks of deployment decisions, and scikit-learn scorers for model selection.

The guarantees of the library are statements about expectations (MDR, SDR) or probabilities;
these functions measure the *realized* quantities on held-out labels, e.g. in Monte-Carlo studies
or to report a deployment. The scorers plug into ``GridSearchCV(scoring=...)``. Tuning ``alpha``
or the score on the calibration data voids the finite-sample guarantee: tune on separate data.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike
from sklearn.pipeline import Pipeline

from .._validation import check_number, check_risks, check_same_length, check_scores, show
from ..risks import make_risk
from ._base import _DeploymentBase, _last_step_input

__all__ = [
    "realized_mdr",
    "realized_sdr",
    "deployment_rate",
    "realized_reward",
    "make_deployment_scorer",
    "make_selective_scorer",
    "DEPLOYMENT_SCORERS",
]


def _decisions(deployed, name="deployed"):
    d = np.asarray(deployed)
    if d.ndim > 1 and not (d.ndim == 2 and d.shape[1] == 1):
        raise ValueError(f"`{name}` must be 1-d (one decision per test point); got shape {d.shape}.")
    if d.dtype != bool:
        if not np.isin(d, (0, 1)).all():
            raise ValueError(f"`{name}` must be boolean (or 0/1) deploy decisions.")
        d = d.astype(bool)
    return d.ravel()


def realized_mdr(risks: ArrayLike, deployed: ArrayLike) -> float:
    """Realized marginal deployment risk ``mean_j L_j 1{deploy j}``.

    No test point (empty input) gives ``0.0``.

    Examples
    --------
    >>> from sklearn_riskcontrol.selective import realized_mdr
    >>> realized_mdr([0.0, 1.0, 0.5, 1.0], [True, False, True, True])
    0.375
    """
    L, d = check_risks(risks, "risks"), _decisions(deployed)
    check_same_length(risks=L, deployed=d)
    return float(np.mean(L * d)) if L.size else 0.0


def realized_sdr(risks: ArrayLike, deployed: ArrayLike) -> float:
    """Realized selective deployment risk ``sum_j L_j 1{deploy j} / max(1, #deployed)`` (FDP-style).

    No test point (empty input) gives ``0.0``.

    Examples
    --------
    >>> from sklearn_riskcontrol.selective import realized_sdr
    >>> realized_sdr([0.0, 1.0, 0.5, 1.0], [True, False, True, True])
    0.5
    """
    L, d = check_risks(risks, "risks"), _decisions(deployed)
    check_same_length(risks=L, deployed=d)
    return float(np.sum(L * d) / max(1, int(d.sum())))


def deployment_rate(deployed: ArrayLike) -> float:
    """Fraction of test points deployed on.

    No test point (empty input) gives ``0.0``.

    Examples
    --------
    >>> from sklearn_riskcontrol.selective import deployment_rate
    >>> deployment_rate([True, False, True, True])
    0.75
    """
    d = _decisions(deployed)
    return float(d.mean()) if d.size else 0.0


def realized_reward(rewards: ArrayLike, deployed: ArrayLike) -> float:
    """Realized power with rewards: ``mean_j r_j 1{deploy j}`` (paper eqs. 4.6, 5.2).

    No test point (empty input) gives ``0.0``.

    Examples
    --------
    >>> from sklearn_riskcontrol.selective import realized_reward
    >>> realized_reward([1.0, 0.5, 0.2], [True, True, False])
    0.5
    """
    r, d = check_scores(rewards, "rewards"), _decisions(deployed)
    check_same_length(rewards=r, deployed=d)
    return float(np.mean(r * d)) if r.size else 0.0


_METRICS = ("deployment_rate", "realized_mdr", "realized_sdr")


def make_deployment_scorer(
    metric: str = "deployment_rate", *, risk: str | Callable[..., ArrayLike] | None = None
) -> Callable[..., float]:
    """A scorer ``scorer(estimator, X, y) -> float`` for deployment estimators (greater is better).

    Parameters
    ----------
    metric : {"deployment_rate", "realized_mdr", "realized_sdr"}
        Realized risks are returned negated (``neg_`` convention of scikit-learn) so that
        greater is better.
    risk : str, callable or Risk, optional
        Risk used to measure realized risks; defaults to the estimator's own ``risk_``.

    Examples
    --------
    >>> from sklearn_riskcontrol.selective import make_deployment_scorer
    >>> scorer = make_deployment_scorer("realized_sdr")
    >>> callable(scorer)
    True
    """
    if metric not in _METRICS:
        raise ValueError(f"`metric` must be one of {list(_METRICS)}; got {show(metric)}.")
    return _DeploymentScorer(metric, risk)


class _DeploymentScorer:
    def __init__(self, metric, risk):
        self.metric = metric
        self.risk = risk

    def __call__(self, estimator, X, y):
        deployed = estimator.decide(X)
        if self.metric == "deployment_rate":
            return deployment_rate(deployed)
        risk = make_risk(self.risk) if self.risk is not None else estimator.risk_
        risks = risk(np.asarray(y), estimator.predict(X))
        value = realized_mdr(risks, deployed) if self.metric == "realized_mdr" else realized_sdr(risks, deployed)
        return -value

    def __repr__(self):
        return f"make_deployment_scorer({self.metric!r})"


#: Ready scorers for ``GridSearchCV(scoring=DEPLOYMENT_SCORERS, refit=...)``.
DEPLOYMENT_SCORERS = {
    "deployment_rate": make_deployment_scorer("deployment_rate"),
    "neg_realized_mdr": make_deployment_scorer("realized_mdr"),
    "neg_realized_sdr": make_deployment_scorer("realized_sdr"),
}


def make_selective_scorer(
    *, gain: float = 1.0, error_cost: float, abstain_cost: float = 0.0
) -> Callable[..., float]:
    """A scorer ``scorer(estimator, X, y) -> float`` that prices deployments, to tune ``alpha``.

    On the rows ``X`` (a held-out fold in ``GridSearchCV``), each point the estimator deploys
    on earns ``gain - error_cost * L`` and each point it abstains on costs ``abstain_cost``,
    where ``L = risk_(y, f(x))`` is the point's risk under the estimator's own ``risk`` (the
    per-point loss of the wrapped model ``f`` that ``fit`` calibrates on). The score is the mean
    over the rows; greater is better.

    The estimators' default ``score`` is the deployed share, which ignores the labels: a larger
    ``alpha`` deploys more, so a search over ``alpha`` with it picks the largest ``alpha`` of the
    grid (or the first listed of several that deploy the same share). This scorer weighs each
    deployment against its risk: deploying a point pays off when
    ``error_cost * L < gain + abstain_cost``, so a large ``error_cost`` picks a small ``alpha``.
    Only ``gain + abstain_cost`` relative to ``error_cost`` changes which configuration wins
    (``abstain_cost`` shifts every score by the same amount).

    Tune on a split that does not calibrate the final estimator (see the module description).

    Parameters
    ----------
    gain : float >= 0, default=1.0
        Value of deploying the model on a point (before its risk is charged).
    error_cost : float >= 0
        Cost of one unit of risk on a deployed point (for the 0-1 risk: of a wrong deployed
        prediction).
    abstain_cost : float >= 0, default=0.0
        Cost of abstaining on a point (e.g. deferring it to a human).

    Returns
    -------
    callable
        ``scorer(estimator, X, y)`` for ``GridSearchCV(scoring=...)``, ``cross_val_score`` and
        the like. ``estimator`` is a fitted :class:`~sklearn_riskcontrol.selective.SCoREMDR`,
        :class:`~sklearn_riskcontrol.selective.SCoRESDR`, :class:`~sklearn_riskcontrol.selective.ConcentrationMDR`
        or :class:`~sklearn_riskcontrol.selective.ConcentrationSDR`, or a
        :class:`~sklearn.pipeline.Pipeline` ending in one (the earlier steps transform ``X``
        first, as in :func:`~sklearn_riskcontrol.selective.pipeline_decide`).

    Examples
    --------
    >>> from sklearn.datasets import load_digits
    >>> from sklearn.frozen import FrozenEstimator
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.model_selection import GridSearchCV, KFold, train_test_split
    >>> from sklearn_riskcontrol.selective import SCoREMDR, make_selective_scorer
    >>> X, y = load_digits(return_X_y=True)
    >>> X_fit, X_tune, y_fit, y_tune = train_test_split(X, y, train_size=600, random_state=0)
    >>> model = FrozenEstimator(LogisticRegression(max_iter=2000).fit(X_fit, y_fit))
    >>> grid = {"alpha": [0.005, 0.01, 0.02, 0.05]}
    >>> cv = KFold(4, shuffle=True, random_state=0)
    >>> for cost in (0, 10, 100):  # a wrong deployed digit costs what `cost` right ones earn
    ...     scorer = make_selective_scorer(error_cost=cost)
    ...     search = GridSearchCV(SCoREMDR(model), grid, scoring=scorer, cv=cv).fit(X_tune, y_tune)
    ...     print(f"error_cost={cost}: alpha={search.best_params_['alpha']}")
    error_cost=0: alpha=0.05
    error_cost=10: alpha=0.01
    error_cost=100: alpha=0.005
    >>> scorer
    make_selective_scorer(gain=1.0, error_cost=100.0, abstain_cost=0.0)
    """
    return _SelectiveScorer(
        check_number(gain, "gain", minimum=0),
        check_number(error_cost, "error_cost", minimum=0),
        check_number(abstain_cost, "abstain_cost", minimum=0),
    )


class _SelectiveScorer:
    def __init__(self, gain, error_cost, abstain_cost):
        self.gain = gain
        self.error_cost = error_cost
        self.abstain_cost = abstain_cost

    def __call__(self, estimator, X, y):
        step = estimator[-1] if isinstance(estimator, Pipeline) else estimator
        if not isinstance(step, _DeploymentBase):
            got = type(estimator).__name__
            if step is not estimator:
                got += f" ending in a {type(step).__name__}"
            raise TypeError(
                "make_selective_scorer scores a selective estimator (SCoREMDR, SCoRESDR, "
                f"ConcentrationMDR, ConcentrationSDR) or a Pipeline ending in one; got a {got}."
            )
        if step is not estimator:  # the last step decides on rows the earlier steps transform
            X = _last_step_input(estimator, X)
        deployed = step.decide(X)  # first: it raises NotFittedError on an unfitted estimator
        earned = self.gain - self.error_cost * step._risks(X, y)
        return float(np.mean(np.where(deployed, earned, -self.abstain_cost)))

    def __repr__(self):
        return (f"make_selective_scorer(gain={self.gain!r}, error_cost={self.error_cost!r}, "
                f"abstain_cost={self.abstain_cost!r})")
