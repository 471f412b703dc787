"""Monte-Carlo study runner and the convenience studies (sklearn_riskcontrol.studies)."""

import warnings

import joblib
import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

from sklearn_riskcontrol import RiskControlWarning
from sklearn_riskcontrol.selective import SCoREMDR, SCoRESDR, deployment_rate, realized_mdr, realized_sdr
from sklearn_riskcontrol.bandits import UCBE, UniformSampling, make_score_matrix, accuracy_curve
from sklearn_riskcontrol.evaluation import MatrixOracle
from sklearn_riskcontrol.studies import bandit_accuracy_study, monte_carlo, validity_study


def _draw(rng, n):
    X = rng.normal(size=(n, 2))
    return X, (X[:, 0] + rng.normal(scale=0.7, size=n) > 0).astype(int)


def _sample(rng):
    return (*_draw(rng, 200), *_draw(rng, 200))


MODEL = LogisticRegression().fit(*_draw(np.random.default_rng(123), 500))


# -- monte_carlo -------------------------------------------------------------------------------
def test_monte_carlo_is_the_spawned_seed_definition():
    def func(rng):
        return rng.random(4)

    children = np.random.SeedSequence(7).spawn(9)
    expected = [func(np.random.default_rng(c)) for c in children]
    got = monte_carlo(func, 9, random_state=7)
    assert len(got) == 9
    for a, b in zip(got, expected):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("n_jobs", [1, 2, 3])
@pytest.mark.parametrize("batch_size", ["auto", 1, 4, 7, 30])
def test_monte_carlo_same_results_for_any_n_jobs_and_batch_size(n_jobs, batch_size):
    ref = monte_carlo(lambda rng: float(rng.normal()), 25, random_state=1)
    with joblib.parallel_config(backend="threading"):
        assert monte_carlo(lambda rng: float(rng.normal()), 25, random_state=1,
                           n_jobs=n_jobs, batch_size=batch_size) == ref


def test_monte_carlo_batch_size_errors():
    for bad in (0, -2, 2.5, True, "big"):
        with pytest.raises(ValueError, match="`batch_size` must be 'auto' or a positive"):
            monte_carlo(lambda rng: 0, 2, batch_size=bad)


def test_monte_carlo_repetitions_are_independent_and_seeded():
    a = monte_carlo(lambda rng: float(rng.random()), 200, random_state=0)
    assert len(set(a)) == 200  # distinct streams
    assert monte_carlo(lambda rng: float(rng.random()), 200, random_state=1) != a
    # uniform draws: mean within 4 standard errors of 1/2
    assert abs(np.mean(a) - 0.5) < 4 * np.sqrt(1 / 12 / 200)


def test_monte_carlo_random_state_kinds():
    def f(rng):
        return float(rng.random())

    ss = monte_carlo(f, 3, random_state=np.random.SeedSequence(5))
    assert ss == monte_carlo(f, 3, random_state=5)
    assert monte_carlo(f, 3, random_state=np.random.default_rng(2)) == monte_carlo(
        f, 3, random_state=np.random.default_rng(2))
    assert monte_carlo(f, 3, random_state=np.random.RandomState(2)) == monte_carlo(
        f, 3, random_state=np.random.RandomState(2))
    assert monte_carlo(f, 3) != monte_carlo(f, 3)  # None: fresh entropy


def test_monte_carlo_args_are_passed():
    x = np.arange(5.0)
    out = monte_carlo(lambda rng, a, b: a.sum() + b, 3, args=(x, 1.0), random_state=0)
    assert out == [11.0, 11.0, 11.0]


def test_monte_carlo_errors():
    with pytest.raises(ValueError, match="n_repetitions"):
        monte_carlo(lambda rng: 0, 0)
    with pytest.raises(ValueError, match="n_repetitions"):
        monte_carlo(lambda rng: 0, 2.5)
    with pytest.raises(TypeError, match="callable"):
        monte_carlo(3, 2)
    with pytest.raises(TypeError, match="random_state"):
        monte_carlo(lambda rng: 0, 2, random_state="seed")


@pytest.mark.parametrize("backend", ["threading", "multiprocessing"])
def test_monte_carlo_verbose_reports_progress(capsys, backend):
    with joblib.parallel_config(backend=backend):
        out = monte_carlo(lambda rng: 1, 10, random_state=0, n_jobs=2, verbose=1, batch_size=3)
    assert out == [1] * 10
    printed = capsys.readouterr().out
    assert "[monte_carlo] repetitions 10/10 (100%)" in printed
    assert monte_carlo(lambda rng: 1, 10, random_state=0) == out
    assert capsys.readouterr().out == ""  # verbose=0 is silent


# -- validity_study ----------------------------------------------------------------------------
def test_validity_study_matches_a_plain_loop():
    est = SCoRESDR(MODEL, alpha=0.2)
    res = validity_study(est, _sample, n_repetitions=5, random_state=3)
    for i, child in enumerate(np.random.SeedSequence(3).spawn(5)):
        rng = np.random.default_rng(child)
        seed = int(rng.integers(np.iinfo(np.int32).max))
        X_cal, y_cal, X_test, y_test = _sample(rng)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RiskControlWarning)
            fitted = SCoRESDR(MODEL, alpha=0.2, random_state=seed).fit(X_cal, y_cal)
            d = fitted.decide(X_test)
        loss = (MODEL.predict(X_test) != y_test).astype(float)
        assert res.mdr[i] == realized_mdr(loss, d)
        assert res.sdr[i] == realized_sdr(loss, d)
        assert res.deployment_rate[i] == deployment_rate(d)
    assert res.deployment_rate.max() > 0


def test_validity_study_keeps_the_fitted_model_and_the_user_estimator():
    est = SCoREMDR(MODEL, alpha=0.1)
    coef = MODEL.coef_.copy()
    validity_study(est, _sample, n_repetitions=3, random_state=0)
    np.testing.assert_array_equal(MODEL.coef_, coef)  # not refitted
    assert not hasattr(est, "cal_risks_")  # the user's estimator stays unfitted


def test_validity_study_mdr_and_sdr_control():
    # E[MDR] <= alpha (SCoREMDR) and E[SDR] <= alpha (SCoRESDR), with 3 standard errors of slack.
    alpha, n = 0.1, 150
    for est, field in ((SCoREMDR(MODEL, alpha=alpha), "mdr"),
                       (SCoRESDR(MODEL, alpha=alpha), "sdr")):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RiskControlWarning)
            res = validity_study(est, _sample, n_repetitions=n, random_state=11)
        vals = res[field]
        assert vals.mean() <= alpha + 3 * vals.std() / np.sqrt(n) + 1e-12, field
        assert res.deployment_rate.mean() > 0.2, field  # the check is not vacuous
    # deploying everywhere would have realized MDR = error rate, clearly above alpha
    X, y = _draw(np.random.default_rng(0), 5000)
    assert (MODEL.predict(X) != y).mean() > 1.5 * alpha


def test_validity_study_shift_weights_are_used():
    def shifted(rng):
        X_cal, y_cal, X_test, y_test = _sample(rng)
        return X_cal, y_cal, X_test, y_test, np.ones(len(y_cal)), np.ones(len(y_test))

    plain = validity_study(SCoREMDR(MODEL, alpha=0.1), _sample, n_repetitions=4, random_state=0)
    unit = validity_study(SCoREMDR(MODEL, alpha=0.1), shifted, n_repetitions=4, random_state=0)
    # unit density ratios are exchangeable weights: same decisions as without weights
    np.testing.assert_allclose(unit.mdr, plain.mdr)
    np.testing.assert_allclose(unit.deployment_rate, plain.deployment_rate)


def test_validity_study_errors():
    with pytest.raises(TypeError, match="deployment estimator"):
        validity_study(MODEL, _sample, n_repetitions=2)
    with pytest.raises(TypeError, match="sample"):
        validity_study(SCoREMDR(MODEL), "data", n_repetitions=2)
    with pytest.raises(ValueError, match="must return"):
        validity_study(SCoREMDR(MODEL), lambda rng: _sample(rng)[:3], n_repetitions=2)


# -- bandit_accuracy_study ---------------------------------------------------------------------
@pytest.fixture(scope="module")
def matrix():
    return make_score_matrix(15, 400, gap=0.05, random_state=0)


def test_bandit_study_matches_manual_runs(matrix):
    strategies = {"ucbe": UCBE(budget=0.2), "uniform": UniformSampling(budget=0.2)}
    budgets = [100, 600, 1200]
    study = bandit_accuracy_study(strategies, matrix.scores, n_repetitions=6, budgets=budgets,
                                  random_state=4)
    assert study.best_index == matrix.best_index  # default: row with the largest mean
    for name in strategies:
        hist = []
        for child in np.random.SeedSequence(4).spawn(6):
            seed = int(np.random.default_rng(child).integers(np.iinfo(np.int32).max))
            fitted = UCBE if name == "ucbe" else UniformSampling
            hist.append(fitted(budget=0.2, random_state=seed).fit(matrix.scores).history_)
        acc, se = accuracy_curve(hist, matrix.best_index, budgets)
        np.testing.assert_array_equal(study.accuracy[name], acc)
        np.testing.assert_array_equal(study.stderr[name], se)
        assert len(study.histories[name]) == 6
    assert strategies["ucbe"].get_params()["random_state"] is None  # templates untouched


def test_bandit_study_same_for_any_n_jobs_and_default_budgets(matrix):
    strategies = {"ucbe": UCBE(budget=0.1)}
    a = bandit_accuracy_study(strategies, matrix.scores, n_repetitions=4, random_state=0)
    with joblib.parallel_config(backend="threading"):
        b = bandit_accuracy_study(strategies, matrix.scores, n_repetitions=4, random_state=0,
                                  n_jobs=2, batch_size=1)
    np.testing.assert_array_equal(a.budgets, b.budgets)
    np.testing.assert_array_equal(a.accuracy["ucbe"], b.accuracy["ucbe"])
    assert a.budgets[-1] == 600 and len(a.budgets) <= 50  # 10% of 15 x 400 cells
    assert np.all(np.diff(a.budgets) > 0)


def test_bandit_study_errors(matrix):
    with pytest.raises(TypeError, match="non-empty dict"):
        bandit_accuracy_study([UCBE()], matrix.scores)
    with pytest.raises(TypeError, match="random_state"):
        bandit_accuracy_study({"lr": LogisticRegression}, matrix.scores)
    with pytest.raises(ValueError, match="best_index"):
        bandit_accuracy_study({"u": UCBE(budget=0.1)}, MatrixOracle(matrix.scores))
