"""plan_labels (issue 28, part 2): the stated 80% range covers the labels a fresh session needs,
in Monte Carlo; the plan follows the pilot; errors."""

import warnings

import numpy as np
import pytest

from sklearn_riskcontrol import RiskControlWarning
from sklearn_riskcontrol.autoeval import LabelPlan, plan_labels, rautoeval_test


def _draw(rng, m, risk, agree):
    h = (rng.random(m) < risk).astype(float)
    return h, np.where(rng.random(m) < agree, h, 1 - h)


def _coverage(rng, reps, pilot, risk, agree, n_simulations):
    covered = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RiskControlWarning)
        for r in range(reps):
            h, g = _draw(rng, pilot, risk, agree)
            u = _draw(rng, 5000, risk, agree)[1]
            plan = plan_labels(h, g, u, alpha=0.1, delta=0.1, max_labels=1000, betting="wsr",
                               n_simulations=n_simulations, random_state=r)
            hh, gg = _draw(rng, 1000, risk, agree)       # the session actually run
            uu = _draw(rng, 5000, risk, agree)[1]
            res = rautoeval_test(hh, gg, uu, alpha=0.1, delta=0.1, betting="wsr",
                                 early_stopping=True)
            need = np.inf if res.stopping_index is None else res.stopping_index + 1
            covered += plan.low <= need <= plan.high
    return covered / reps


def test_the_80_percent_range_covers_the_realized_need():
    # reduced version of the slow test: fails if the plan ignores its own uncertainty
    assert _coverage(np.random.default_rng(0), 40, 100, 0.02, 0.95, 60) >= 0.6


@pytest.mark.slow
@pytest.mark.parametrize("pilot,risk,agree", [(40, 0.05, 0.9), (100, 0.05, 0.9),
                                              (100, 0.07, 0.8), (40, 0.02, 0.95)])
def test_the_80_percent_range_covers_the_realized_need_in_70_percent(pilot, risk, agree):
    assert _coverage(np.random.default_rng(1), 150, pilot, risk, agree, 100) >= 0.7


def test_the_plan_follows_the_pilot():
    rng = np.random.default_rng(2)
    u = _draw(rng, 4000, 0.03, 0.9)[1]
    plans = {}
    for risk in (0.0, 0.06):
        h = (np.arange(200) < 200 * risk).astype(float)  # pilot with exactly this error rate
        plans[risk] = plan_labels(h, h, u, alpha=0.1, delta=0.1, max_labels=800,
                                  n_simulations=40, random_state=0, betting="wsr")
    assert plans[0.0].median < plans[0.06].median
    assert plans[0.0].p_certify == 1.0 and plans[0.0].informative
    plan = plans[0.0]
    assert isinstance(plan, LabelPlan) and plan.needed.shape == (40,)
    assert plan.low == np.quantile(plan.needed, 0.1, method="higher")
    assert plan.high == np.quantile(plan.needed, 0.9, method="higher")
    assert "not a guarantee" in str(plan) and "in 80% of the runs" in str(plan)


def test_labels_only_and_an_uninformative_plan():
    h = np.r_[np.ones(9), np.zeros(21)]  # pilot risk .3 > alpha: the session rarely certifies
    plan = plan_labels(h, alpha=0.1, delta=0.1, max_labels=300, n_simulations=30,
                       random_state=0, method="eval", betting="wsr")
    assert not plan.informative and plan.p_certify < 0.1
    assert "no informative range" in str(plan)


def test_errors():
    h = np.zeros(10)
    with pytest.raises(ValueError, match="exceeds the pool"):
        plan_labels(h, h, np.zeros(50), alpha=0.1, delta=0.1, max_labels=100)
    with pytest.raises(ValueError, match="n_simulations"):
        plan_labels(h, h, np.zeros(50), alpha=0.1, delta=0.1, n_simulations=0)
    with pytest.raises(ValueError, match="alpha"):
        plan_labels(h, h, np.zeros(50), alpha=1.5, delta=0.1)
