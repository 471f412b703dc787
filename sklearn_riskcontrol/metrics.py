"""Realized risks of deployment decisions, and scikit-learn scorers for model selection.

The guarantees of the library are statements about expectations (MDR, SDR) or probabilities;
these functions measure the *realized* quantities on held-out labels, e.g. in Monte-Carlo studies
or to report a deployment. The scorers plug into ``GridSearchCV(scoring=...)``. Tuning ``alpha``
or the score on the calibration data voids the finite-sample guarantee: tune on separate data.
"""

import numpy as np

from ._validation import check_risks, check_same_length, check_scores, show
from .online.metrics import (
    average_set_size,
    coverage_rate,
    cumulative_regret,
    oracle_threshold,
    set_sizes,
    undercoverage_count,
)
from .risks import make_risk

__all__ = [
    "realized_mdr",
    "realized_sdr",
    "deployment_rate",
    "realized_reward",
    "make_deployment_scorer",
    "DEPLOYMENT_SCORERS",
    "coverage_rate",
    "average_set_size",
    "set_sizes",
    "undercoverage_count",
    "cumulative_regret",
    "oracle_threshold",
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


def realized_mdr(risks, deployed):
    """Realized marginal deployment risk ``mean_j L_j 1{deploy j}``.

    No test point (empty input) gives ``0.0``.

    Examples
    --------
    >>> from sklearn_riskcontrol.metrics import realized_mdr
    >>> realized_mdr([0.0, 1.0, 0.5, 1.0], [True, False, True, True])
    0.375
    """
    L, d = check_risks(risks, "risks"), _decisions(deployed)
    check_same_length(risks=L, deployed=d)
    return float(np.mean(L * d)) if L.size else 0.0


def realized_sdr(risks, deployed):
    """Realized selective deployment risk ``sum_j L_j 1{deploy j} / max(1, #deployed)`` (FDP-style).

    No test point (empty input) gives ``0.0``.

    Examples
    --------
    >>> from sklearn_riskcontrol.metrics import realized_sdr
    >>> realized_sdr([0.0, 1.0, 0.5, 1.0], [True, False, True, True])
    0.5
    """
    L, d = check_risks(risks, "risks"), _decisions(deployed)
    check_same_length(risks=L, deployed=d)
    return float(np.sum(L * d) / max(1, int(d.sum())))


def deployment_rate(deployed):
    """Fraction of test points deployed on.

    No test point (empty input) gives ``0.0``.

    Examples
    --------
    >>> from sklearn_riskcontrol.metrics import deployment_rate
    >>> deployment_rate([True, False, True, True])
    0.75
    """
    d = _decisions(deployed)
    return float(d.mean()) if d.size else 0.0


def realized_reward(rewards, deployed):
    """Realized power with rewards: ``mean_j r_j 1{deploy j}`` (paper eqs. 4.6, 5.2).

    No test point (empty input) gives ``0.0``.

    Examples
    --------
    >>> from sklearn_riskcontrol.metrics import realized_reward
    >>> realized_reward([1.0, 0.5, 0.2], [True, True, False])
    0.5
    """
    r, d = check_scores(rewards, "rewards"), _decisions(deployed)
    check_same_length(rewards=r, deployed=d)
    return float(np.mean(r * d)) if r.size else 0.0


_METRICS = ("deployment_rate", "realized_mdr", "realized_sdr")


def make_deployment_scorer(metric="deployment_rate", *, risk=None):
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
    >>> from sklearn_riskcontrol.metrics import make_deployment_scorer
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
