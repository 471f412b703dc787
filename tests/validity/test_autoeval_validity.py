"""Monte-Carlo validity of the R-AutoEval+ estimators (the array-level studies are in
autoeval/test_rautoeval.py): the guarantees hold end to end, through losses computed from models,
the semi-supervised ``y``, shuffling and the fitting split.

Each check has a reduced version in the default run and a full one marked ``slow``. The null
is put at its least favourable point, risk exactly ``alpha`` (the closure of ``H0: R > alpha``),
where the betting wealth is still a supermartingale. Slack: 3 binomial standard errors + 1/reps.
"""

import warnings

import numpy as np
import pytest
from _monte_carlo import slack
from _models import FlipModel

from sklearn_riskcontrol import RiskControlWarning
from sklearn_riskcontrol.autoeval import RAutoEvalPlus, RiskControlledModelSelector


class Judge:
    """Auto-evaluator reporting the true label w.p. gamma (a picklable callable)."""

    def __init__(self, gamma):
        self.gamma = gamma

    def __call__(self, X):
        truth = X[:, 0].astype(int)
        return np.where(X[:, 1] < self.gamma, truth, 1 - truth)


def data(rng, n, N, n_models):
    X = np.column_stack([rng.integers(0, 2, n + N), rng.random((n + N, 1 + n_models))])
    y = X[:, 0].astype(int)
    y[n:] = -1
    return X, y


def seed_of(rng):
    return int(rng.integers(2**31))


def type_one_error(method, betting, reps, gamma=0.9, alpha=0.15, delta=0.1, n=200, r=5,
                   seed=0):
    rng = np.random.default_rng(seed)
    model = FlipModel(error=alpha).fit(None)  # risk exactly alpha: the boundary of H0
    hits = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RiskControlWarning)
        for _ in range(reps):
            X, y = data(rng, n, r * n, 1)
            est = RAutoEvalPlus(model, autoevaluator=Judge(gamma), alpha=alpha, delta=delta,
                                method=method, betting=betting, random_state=seed_of(rng))
            hits += est.fit(X, y).decide()
    return hits / reps


def fwer(procedure, betting, reps, alpha=0.15, delta=0.1, n=200, r=5, seed=0):
    """Candidates: risks (0.05, alpha, alpha) - the last two are nulls (at the boundary)."""
    rng = np.random.default_rng(seed)
    errors = (0.05, alpha, alpha)
    models = [FlipModel(col=2 + k, error=e).fit(None) for k, e in enumerate(errors)]
    bad = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RiskControlWarning)
        for _ in range(reps):
            X, y = data(rng, n, r * n, len(models))
            tester = RAutoEvalPlus(None, autoevaluator=Judge(0.9), alpha=alpha, delta=delta,
                                   betting=betting, random_state=seed_of(rng))
            sel = RiskControlledModelSelector(models, tester=tester, procedure=procedure)
            bad += bool(sel.fit(X, y).certified_[1:].any())
    return bad / reps


def coverage(method, reps, risk=0.1, delta=0.2, n=150, r=5, seed=0):
    rng = np.random.default_rng(seed)
    model = FlipModel(error=risk).fit(None)
    covered = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RiskControlWarning)
        for _ in range(reps):
            X, y = data(rng, n, r * n, 1)
            est = RAutoEvalPlus(model, autoevaluator=Judge(0.8), alpha=0.5, delta=delta,
                                method=method, betting="wsr", random_state=seed_of(rng))
            est.fit(X, y)
            ci = est.confidence_interval()
            covered += ci.low <= risk <= ci.high
    return covered / reps


# ------------------------------------------------------------------------- type-I error
@pytest.mark.parametrize("method", ["plus", "autoeval", "eval"])
def test_type_one_error_reduced(method):
    rate = type_one_error(method, "wsr", reps=150)
    assert rate <= 0.1 + slack(0.1, 150)


@pytest.mark.slow
@pytest.mark.parametrize("method", ["plus", "autoeval", "eval"])
@pytest.mark.parametrize("betting", ["wsr", "up"])
def test_type_one_error_full(method, betting):
    rate = type_one_error(method, betting, reps=5000)
    assert rate <= 0.1 + slack(0.1, 5000)


# ------------------------------------------------------------------------------ FWER
@pytest.mark.parametrize("procedure", ["fst", "bonferroni"])
def test_fwer_reduced(procedure):
    rate = fwer(procedure, "wsr", reps=100)
    assert rate <= 0.1 + slack(0.1, 100)


@pytest.mark.slow
@pytest.mark.parametrize("procedure", ["fst", "bonferroni"])
@pytest.mark.parametrize("betting", ["wsr", "up"])
def test_fwer_full(procedure, betting):
    rate = fwer(procedure, betting, reps=2000)
    assert rate <= 0.1 + slack(0.1, 2000)


# ------------------------------------------------------------------------ CI coverage
@pytest.mark.parametrize("method", ["plus", "eval"])
def test_ci_coverage_reduced(method):
    rate = coverage(method, reps=100)
    assert rate >= 0.8 - slack(0.8, 100)


@pytest.mark.slow
@pytest.mark.parametrize("method", ["plus", "autoeval", "eval"])
def test_ci_coverage_full(method):
    rate = coverage(method, reps=2000)
    assert rate >= 0.8 - slack(0.8, 2000)
