"""Prediction-powered Learn-then-Test (``bound="rautoeval"``) for the PAC selective baselines.

Synthetic known-risk setting: scores ``S ~ U(0, 1)``, loss ``L ~ Bernoulli(c S)``, so
``SDR*(t) = E[L | S <= t] = c t / 2`` and ``MDR(t) = c t**2 / 2``; the largest safe threshold is
``t* = 2 alpha / c`` (SDR) or ``sqrt(2 alpha / c)`` (MDR). The judge's label agrees with the
truth with probability ``gamma`` (its loss is the true loss, else ``1 - loss``).
"""

import warnings

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.utils.estimator_checks import parametrize_with_checks

from _monte_carlo import three_se
from sklearn_riskcontrol.selective import (
    ConcentrationMDR,
    ConcentrationSDR,
    concentration_threshold,
    threshold_pvalues,
)
from sklearn_riskcontrol import RiskControlWarning
from sklearn_riskcontrol.autoeval import rautoeval_test


def _draw(rng, n, N, gamma, c=1.0):
    S, T = rng.uniform(size=n), rng.uniform(size=N)
    L = (rng.uniform(size=n) < c * S).astype(float)
    L_unl = (rng.uniform(size=N) < c * T).astype(float)

    def judge(loss):
        return np.where(rng.uniform(size=loss.size) < gamma, loss, 1.0 - loss)

    return L, S, judge(L), judge(L_unl), T


def _t_star(target, alpha, c=1.0):
    return 2 * alpha / c if target == "sdr" else np.sqrt(2 * alpha / c)


def _direct_pvalues(L, S, J, U, T, grid, alpha, target, delta, early_stopping):
    """One rautoeval_test per threshold on the subsets, by the definition."""
    out = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RiskControlWarning)
        for t in grid:
            lab, unl = S <= t, T <= t
            if target == "mdr":
                h, g, u = L * lab, J * lab, U * unl
            else:
                h, g, u = L[lab], J[lab], U[unl]
            if h.size == 0:
                out.append(1.0)
            elif u.size >= h.size:
                out.append(rautoeval_test(h, g, u, alpha=alpha, delta=delta,
                                          early_stopping=early_stopping).pvalue)
            else:  # fewer unlabeled than labeled points below t: labels only (R-Eval)
                out.append(rautoeval_test(h, alpha=alpha, delta=delta, method="eval",
                                          early_stopping=early_stopping).pvalue)
    return np.array(out)


@pytest.mark.parametrize("target", ["sdr", "mdr"])
@pytest.mark.parametrize("early_stopping", [False, True])
def test_pvalues_equal_direct_loop(target, early_stopping):
    rng = np.random.default_rng(3)
    L, S, J, U, T = _draw(rng, 60, 400, gamma=0.9)
    # include thresholds below every score, with N_t < n_t, and duplicated count pairs
    grid = np.r_[-1.0, 0.001, np.linspace(0, 1, 25), 0.5 + 1e-12, 2.0]
    p, _ = threshold_pvalues(L, S, grid, 0.3, target=target, bound="rautoeval", delta=0.1,
                             cal_judge_risks=J, unlabeled_judge_risks=U, unlabeled_scores=T,
                             early_stopping=early_stopping)
    expected = _direct_pvalues(L, S, J, U, T, grid, 0.3, target, 0.1, early_stopping)
    np.testing.assert_array_equal(p, expected)
    assert p[0] == 1.0 or target == "mdr"


def test_threshold_uses_pvalues_and_procedure():
    rng = np.random.default_rng(4)
    L, S, J, U, T = _draw(rng, 200, 2000, gamma=0.95)
    res = concentration_threshold(L, S, 0.4, target="sdr", cal_judge_risks=J,
                                  unlabeled_judge_risks=U, unlabeled_scores=T)
    assert (res.bound, res.procedure, res.delta) == ("rautoeval_or_binomial", "fallback", 0.1)
    # the default: the larger threshold of two procedures, the exact binomial test at 0.9 delta
    # (its default grid, the calibration scores) and R-AutoEval+ at 0.1 delta (fixed grid)
    labels = concentration_threshold(L, S, 0.4, target="sdr", bound="binomial", delta=0.09)
    judged = concentration_threshold(L, S, 0.4, target="sdr", bound="rautoeval", delta=0.01,
                                     cal_judge_risks=J, unlabeled_judge_risks=U,
                                     unlabeled_scores=T)
    np.testing.assert_array_equal(judged.grid, np.linspace(0, 1, 100))
    np.testing.assert_array_equal(
        judged.pvalues, _direct_pvalues(L, S, J, U, T, judged.grid, 0.4, "sdr", 0.01, False))
    best = judged if judged.threshold > labels.threshold else labels
    assert res.threshold == max(labels.threshold, judged.threshold)
    np.testing.assert_array_equal(res.grid, best.grid)
    np.testing.assert_array_equal(res.rejected, best.rejected)
    alone = concentration_threshold(L, S, 0.4, target="sdr", bound="rautoeval",
                                    cal_judge_risks=J, unlabeled_judge_risks=U,
                                    unlabeled_scores=T)
    np.testing.assert_array_equal(alone.grid, np.linspace(0, 1, 100))
    expected = _direct_pvalues(L, S, J, U, T, alone.grid, 0.4, "sdr", 0.1, False)
    np.testing.assert_array_equal(alone.pvalues, expected)
    mdr = concentration_threshold(L, S, 0.1, target="mdr", cal_judge_risks=J,
                                  unlabeled_judge_risks=U, unlabeled_scores=T)
    # R-AutoEval+ on the fixed grid with fixed-sequence testing, the labels on every threshold
    mdr_judged = concentration_threshold(L, S, 0.1, target="mdr", bound="rautoeval", delta=0.01,
                                         cal_judge_risks=J, unlabeled_judge_risks=U,
                                         unlabeled_scores=T)
    mdr_labels = concentration_threshold(L, S, 0.1, target="mdr", bound="binomial", delta=0.09)
    assert mdr_judged.procedure == "fixed_sequence" and mdr_judged.grid.size == 101
    assert mdr.threshold == max(mdr_judged.threshold, mdr_labels.threshold)


def _mc(target, alpha, gamma, reps, n, N, seed, grid_size, delta=0.1, judge_zero=False):
    rng = np.random.default_rng(seed)
    grid = np.linspace(0, 1, grid_size)
    fails, ppi, lab, wsr = 0, [], [], []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RiskControlWarning)
        for _ in range(reps):
            L, S, J, U, T = _draw(rng, n, N, gamma)
            if judge_zero:  # a judge that always agrees with the model: losses 0
                J, U = np.zeros_like(J), np.zeros_like(U)
            kw = dict(target=target, delta=delta, grid=grid)
            r = concentration_threshold(L, S, alpha, cal_judge_risks=J,
                                        unlabeled_judge_risks=U, unlabeled_scores=T, **kw)
            fails += r.threshold > _t_star(target, alpha)
            ppi.append(max(r.threshold, 0.0))
            if gamma > 0.9:
                lab.append(max(concentration_threshold(L, S, alpha, **kw).threshold, 0.0))
                wsr.append(max(concentration_threshold(L, S, alpha, bound="wsr",
                                                       **kw).threshold, 0.0))
    return fails / reps, np.mean(ppi), np.mean(lab or [0]), np.mean(wsr or [0])


@pytest.mark.parametrize("judge_zero", [False, True])
def test_useless_judge_stays_valid_reduced(judge_zero):
    # gamma = 0.5: the judge's losses are coin flips; judge_zero: an optimistic judge that
    # always says the model is right (the most dangerous bias). delta = 0.3 makes failures
    # frequent enough to be seen.
    reps, delta = 40, 0.3
    fail, *_ = _mc("sdr", 0.3, 0.5, reps, n=150, N=1500, seed=10, grid_size=20, delta=delta,
                   judge_zero=judge_zero)
    assert fail <= delta + three_se(delta, reps)


@pytest.mark.slow
@pytest.mark.parametrize("target", ["sdr", "mdr"])
@pytest.mark.parametrize("judge_zero", [False, True])
def test_useless_judge_stays_valid_slow(target, judge_zero):
    reps, delta = 400, 0.3
    fail, *_ = _mc(target, 0.3 if target == "sdr" else 0.1, 0.5, reps, n=200, N=2000, seed=11,
                   grid_size=50, delta=delta, judge_zero=judge_zero)
    assert fail <= delta + three_se(delta, reps)


def test_good_judge_deploys_at_least_as_much_reduced():
    # A near-perfect judge (agrees with the truth 98% of the time), 300 labels and 3000
    # unlabeled points at alpha = 0.4: the prediction-powered threshold is on average at least
    # the labels-only one, of the exact binomial default and of labels-only betting (WSR).
    fail, ppi, lab, wsr = _mc("sdr", 0.4, 0.98, 12, n=300, N=3000, seed=12, grid_size=40)
    assert ppi >= lab and ppi >= wsr
    assert fail <= 0.1 + three_se(0.1, 12)


# -- errors ------------------------------------------------------------------------------------
def test_array_errors():
    rng = np.random.default_rng(0)
    L, S, J, U, T = _draw(rng, 50, 500, gamma=0.9)
    judge = dict(cal_judge_risks=J, unlabeled_judge_risks=U, unlabeled_scores=T)
    with pytest.raises(ValueError, match="used only by the prediction-powered bounds .*"
                       "bound='binomial'"):
        concentration_threshold(L, S, 0.3, bound="binomial", **judge)
    with pytest.raises(ValueError, match="bound='rautoeval' needs the auto-evaluator"):
        concentration_threshold(L, S, 0.3, bound="rautoeval")
    with pytest.raises(ValueError, match="`unlabeled_scores` missing"):
        concentration_threshold(L, S, 0.3, cal_judge_risks=J, unlabeled_judge_risks=U)
    with pytest.raises(ValueError, match="fewer than the 50 labeled"):
        concentration_threshold(L, S, 0.3, cal_judge_risks=J, unlabeled_judge_risks=U[:40],
                                unlabeled_scores=T[:40])
    with pytest.raises(ValueError, match="cal_judge_risks"):
        concentration_threshold(L, S, 0.3, cal_judge_risks=J + 2, unlabeled_judge_risks=U,
                                unlabeled_scores=T)


def _classification_data(seed=0, n=1200):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    y = (X[:, 0] + 0.8 * rng.normal(size=n) > 0).astype(int)
    return X, y


def _fitted():
    X, y = _classification_data(1, 400)
    return LogisticRegression().fit(X, y), LogisticRegression(C=0.1).fit(X[::-1], y[::-1])


@pytest.mark.parametrize("cls", [ConcentrationMDR, ConcentrationSDR])
def test_estimator_matches_array_layer(cls):
    model, judge = _fitted()
    X, y = _classification_data(2)
    y_semi = np.where(np.arange(y.size) < 150, y, -1)
    est = cls(model, alpha=0.3, auto_evaluator=judge).fit(X, y_semi)
    assert est.result_.bound == "rautoeval_or_binomial" and est.n_unlabeled_ == y.size - 150
    assert est.n_calibration_ == 150
    J = (judge.predict(X[:150]) != model.predict(X[:150])).astype(float)
    U = (judge.predict(X[150:]) != model.predict(X[150:])).astype(float)
    np.testing.assert_array_equal(est.cal_judge_risks_, J)
    np.testing.assert_array_equal(est.unlabeled_judge_risks_, U)
    ref = concentration_threshold(est.cal_risks_, est.cal_scores_, 0.3, target=cls._target,
                                  cal_judge_risks=J, unlabeled_judge_risks=U,
                                  unlabeled_scores=1 - model.predict_proba(X[150:]).max(1))
    np.testing.assert_array_equal(est.result_.pvalues, ref.pvalues)
    assert est.threshold_ == ref.threshold
    # a callable judge gives the same result
    callable_est = cls(model, alpha=0.3, auto_evaluator=judge.predict).fit(X, y_semi)
    assert callable_est.threshold_ == est.threshold_


def test_estimator_without_judge_unchanged():
    model, _ = _fitted()
    X, y = _classification_data(3)
    est = ConcentrationSDR(model, alpha=0.3).fit(X, y)
    ref = concentration_threshold(est.cal_risks_, est.cal_scores_, 0.3, target="sdr")
    assert est.result_.bound == "binomial" and est.n_unlabeled_ == 0
    np.testing.assert_array_equal(est.result_.pvalues, ref.pvalues)
    assert est.threshold_ == ref.threshold


def test_estimator_errors_and_fallback():
    model, judge = _fitted()
    X, y = _classification_data(4)
    y_semi = np.where(np.arange(y.size) < 150, y, -1)
    with pytest.raises(ValueError, match="auto_evaluator.*used only by the prediction-powered"):
        ConcentrationSDR(model, bound="binomial", auto_evaluator=judge).fit(X, y_semi)
    with pytest.raises(ValueError, match="bound='rautoeval' needs an `auto_evaluator`"):
        ConcentrationSDR(model, bound="rautoeval").fit(X, y)
    with pytest.raises(ValueError, match="needs unlabeled rows"):
        ConcentrationSDR(model, bound="rautoeval", auto_evaluator=judge).fit(X, y)
    with pytest.raises(ValueError, match="at least as many unlabeled rows"):
        ConcentrationSDR(model, auto_evaluator=judge).fit(X[:300], np.r_[y[:200], -np.ones(100)])
    with pytest.raises(ValueError, match="no labeled row"):
        ConcentrationSDR(model, auto_evaluator=judge).fit(X, -np.ones(y.size))
    with pytest.raises(ValueError, match="one label per row"):
        ConcentrationSDR(model, auto_evaluator=lambda Z: np.zeros(3)).fit(X, y_semi)
    # no unlabeled row with bound="auto": a warning, then the labels-only default
    with pytest.warns(RiskControlWarning, match="marks no unlabeled row"):
        est = ConcentrationSDR(model, alpha=0.3, auto_evaluator=judge).fit(X, y)
    plain = ConcentrationSDR(model, alpha=0.3).fit(X, y)
    assert est.result_.bound == "binomial" and est.threshold_ == plain.threshold_


@pytest.mark.filterwarnings("ignore:No threshold is certified")
def test_regression_nan_marks_unlabeled():
    from sklearn.linear_model import LinearRegression
    from sklearn_riskcontrol.risks import make_risk

    rng = np.random.default_rng(5)
    X = rng.normal(size=(1000, 3))
    y = X @ [1.0, -1.0, 0.5] + rng.normal(size=1000)
    model = LinearRegression().fit(X[:200], y[:200])
    risk = make_risk("absolute", tolerance=1.5)
    y_semi = np.where(np.arange(800) < 100, y[200:], np.nan)
    est = ConcentrationSDR(model, risk=risk, risk_score=lambda Z: np.abs(Z[:, 0]) / 10,
                           alpha=0.3, grid=np.linspace(0, 1, 30),
                           auto_evaluator=lambda Z: Z @ [1.0, -1.0, 0.5]).fit(X[200:], y_semi)
    assert est.result_.bound == "rautoeval_or_binomial" and est.n_unlabeled_ == 700


def _judge_for_checks():
    from sklearn.dummy import DummyClassifier

    return DummyClassifier().fit(np.zeros((4, 1)), [0, 1, 1, 0])


@pytest.mark.filterwarnings("ignore::sklearn_riskcontrol.RiskControlWarning")
@parametrize_with_checks(
    [ConcentrationSDR(LogisticRegression(), auto_evaluator=_judge_for_checks(), random_state=0)]
)
def test_sklearn_checks_with_auto_evaluator(estimator, check):
    # scikit-learn's checks pass no unlabeled rows: fit warns and falls back on the labels
    check(estimator)
