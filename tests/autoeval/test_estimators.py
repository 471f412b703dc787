"""RAutoEvalPlus and RiskControlledModelSelector (estimator layer of R-AutoEval+)."""

import io
import pickle
import warnings

import numpy as np
import pandas as pd
import pytest
from _models import FlipModel
from joblib import parallel_backend
from sklearn.base import clone
from sklearn.datasets import make_classification
from sklearn.dummy import DummyClassifier
from sklearn.exceptions import NotFittedError
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.tree import DecisionTreeClassifier
from sklearn.utils.estimator_checks import parametrize_with_checks

from sklearn_riskcontrol import RiskControlWarning
from sklearn_riskcontrol.autoeval import (
    RAutoEvalPlus,
    RiskControlledModelSelector,
    rautoeval_confidence_interval,
    rautoeval_select,
    rautoeval_test,
)
from sklearn_riskcontrol.evalues.betting import WSR
from sklearn_riskcontrol.risks import make_risk


# ----------------------------------------------------------------------- fixtures
def judge_of(gamma):
    """A callable auto-evaluator that reports the truth X[:, 0] w.p. gamma (via X[:, 1])."""

    def judge(X):
        X = np.asarray(X)
        truth = X[:, 0].astype(int)
        return np.where(X[:, 1] < gamma, truth, 1 - truth)

    return judge


def toy_data(rng, n, N, n_models=1):
    """Rows [truth, judge noise, model noise...]; y = truth on labeled rows, -1 elsewhere."""
    m = n + N
    X = np.column_stack([rng.integers(0, 2, m), rng.random((m, 1 + n_models))])
    y = X[:, 0].astype(int)
    y_semi = y.copy()
    y_semi[n:] = -1
    return X, y, y_semi


@pytest.fixture
def toy():
    rng = np.random.default_rng(0)
    return toy_data(rng, 300, 1500)


def fitted_model():
    return FlipModel(error=0.05).fit(np.zeros((2, 3)))


# ------------------------------------------------------------------ sklearn checks
@parametrize_with_checks(
    [
        RAutoEvalPlus(LogisticRegression(), autoevaluator=DecisionTreeClassifier(max_depth=2),
                      random_state=0),
        RAutoEvalPlus(LinearRegression(), risk=make_risk("squared", scale=1.0), autoevaluator=LinearRegression(),
                      betting="wsr", random_state=0),
        RAutoEvalPlus(LogisticRegression(), method="eval", random_state=0),
        # alpha = 0.99 so that the checks' random data certify something and predict runs;
        # two candidates that reject NaN (the NaN check predicts with the selected one).
        RiskControlledModelSelector(
            [LogisticRegression(), LogisticRegression(C=0.01)],
            tester=RAutoEvalPlus(None, method="eval", alpha=0.99, delta=0.5, random_state=0),
        ),
        RiskControlledModelSelector(
            [LogisticRegression(), LogisticRegression(C=0.01)],
            tester=RAutoEvalPlus(None, autoevaluator=DecisionTreeClassifier(max_depth=2),
                                 alpha=0.99, delta=0.5, random_state=0),
            procedure="bonferroni", cost=[2.0, 1.0],
        ),
    ],
)
def test_sklearn_compatible(estimator, check):
    # No expected failures: unfitted wrapped models are fitted on a split of the labeled rows,
    # and the checks' rows are all labeled (R-AutoEval+ then reduces to R-Eval with a warning).
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RiskControlWarning)
        check(estimator)


# --------------------------------------------------------- agreement with the arrays
def test_fit_runs_the_array_test_on_the_losses_in_order(toy):
    X, y, y_semi = toy
    model, judge = fitted_model(), judge_of(0.9)
    est = RAutoEvalPlus(model, autoevaluator=judge, alpha=0.15, delta=0.1, shuffle=False)
    est.fit(X, y_semi)
    lab, unl = np.arange(300), np.arange(300, 1800)
    h = (model.predict(X[lab]) != y[lab]).astype(float)
    g = (model.predict(X[lab]) != judge(X[lab])).astype(float)
    u = (model.predict(X[unl]) != judge(X[unl])).astype(float)
    ref = rautoeval_test(h, g, u, alpha=0.15, delta=0.1)
    np.testing.assert_array_equal(est.labeled_indices_, lab)
    np.testing.assert_array_equal(est.unlabeled_indices_, unl)
    np.testing.assert_array_equal(est.loss_labeled_, h)
    np.testing.assert_array_equal(est.loss_judge_labeled_, g)
    np.testing.assert_array_equal(est.loss_judge_unlabeled_, u)
    np.testing.assert_allclose(est.result_.log_eprocess, ref.log_eprocess, rtol=0, atol=0)
    assert est.certified_ == ref.certified == est.decide()
    assert est.pvalue_ == ref.pvalue
    assert (est.n_labeled_, est.n_unlabeled_, est.block_size_) == (300, 1500, 5)
    assert est.method_ == "plus"


def test_shuffle_is_seeded_and_streams_are_shuffled_separately(toy):
    X, y, y_semi = toy
    make = lambda rs: RAutoEvalPlus(fitted_model(), autoevaluator=judge_of(0.9),  # noqa: E731
                                    alpha=0.15, random_state=rs).fit(X, y_semi)
    a, b, c = make(0), make(0), make(1)
    np.testing.assert_array_equal(a.labeled_indices_, b.labeled_indices_)
    assert a.pvalue_ == b.pvalue_
    assert not np.array_equal(a.labeled_indices_, c.labeled_indices_)
    # labeled rows stay labeled, unlabeled stay unlabeled: each stream is only permuted
    assert set(a.labeled_indices_) == set(range(300))
    assert set(a.unlabeled_indices_) == set(range(300, 1800))
    # the losses are those of the rows in processing order
    model = fitted_model()
    np.testing.assert_array_equal(
        a.loss_labeled_, (model.predict(X[a.labeled_indices_]) != y[a.labeled_indices_])
    )


@pytest.mark.parametrize("method", ["eval", "autoeval", "plus"])
def test_methods_and_confidence_interval_match_arrays(toy, method):
    X, y, y_semi = toy
    est = RAutoEvalPlus(fitted_model(), autoevaluator=judge_of(0.9), method=method, alpha=0.2,
                        betting="wsr", random_state=0).fit(X, y_semi)
    g = None if method == "eval" else est.loss_judge_labeled_
    u = None if method == "eval" else est.loss_judge_unlabeled_
    ref = rautoeval_test(est.loss_labeled_, g, u, alpha=0.2, delta=0.1, method=method,
                         betting="wsr")
    assert est.pvalue_ == ref.pvalue
    ci = est.confidence_interval()
    ref_ci = rautoeval_confidence_interval(est.loss_labeled_, g, u, delta=0.1, method=method)
    assert (ci.low, ci.high) == (ref_ci.low, ref_ci.high)
    assert ci.low <= 0.05 + 0.05 and ci.high >= 0.05 - 0.05  # true risk 0.05
    upper = est.confidence_interval(0.05, side="upper")
    assert upper.low == 0.0 and upper.delta == 0.05
    if method == "eval":
        assert est.loss_judge_labeled_ is None and est.n_unlabeled_ == 0


def test_rho_grid_prior_and_betting_objects_are_passed_on(toy):
    X, y, y_semi = toy
    est = RAutoEvalPlus(fitted_model(), autoevaluator=judge_of(0.9), rho_grid=[0, 0.5, 1],
                        rho_prior=[1, 2, 1], betting=WSR(c=0.5), shuffle=False).fit(X, y_semi)
    np.testing.assert_allclose(est.result_.rho_grid, [0, 0.5, 1])
    np.testing.assert_allclose(est.result_.rho_prior, [0.25, 0.5, 0.25])
    ref = rautoeval_test(est.loss_labeled_, est.loss_judge_labeled_, est.loss_judge_unlabeled_,
                         alpha=0.1, delta=0.1, rho_grid=[0, 0.5, 1], rho_prior=[1, 2, 1],
                         betting=WSR(c=0.5))
    np.testing.assert_array_equal(est.result_.bets, ref.bets)


def test_early_stopping_truncates_at_the_crossing(toy):
    X, y, y_semi = toy
    est = RAutoEvalPlus(fitted_model(), autoevaluator=judge_of(0.95), alpha=0.2,
                        early_stopping=True, random_state=0).fit(X, y_semi)
    assert est.certified_
    assert est.result_.log_eprocess.size == est.result_.stopping_index + 1


# ---------------------------------------------------- semi-supervised conventions
def test_regression_uses_nan_for_unlabeled_rows():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(1200, 2))
    y = X @ [1.0, -1.0] + 0.1 * rng.normal(size=1200)
    model = LinearRegression().fit(X[:200], y[:200])
    y_semi = y.copy()
    y_semi[400:] = np.nan
    y_semi[250] = -1.0  # an ordinary target value in regression
    est = RAutoEvalPlus(model, autoevaluator=LinearRegression().fit(X[:200] * 0.9, y[:200]),
                        risk=make_risk("squared", scale=1.0), alpha=0.1, random_state=0).fit(X[200:], y_semi[200:])
    assert est.n_labeled_ == 200 and est.n_unlabeled_ == 800
    assert est.certified_


@pytest.mark.parametrize("kind", ["int", "float", "object", "str"])
def test_classification_uses_minus_one_for_unlabeled_rows(kind):
    X, y = make_classification(n_samples=1500, random_state=0)
    model = LogisticRegression().fit(X[:500], y[:500])
    labels = np.array(["a", "b"])[y] if kind == "str" else y
    if kind == "str":
        model = LogisticRegression().fit(X[:500], labels[:500])
    y_semi = labels[500:].astype(
        {"int": int, "float": float, "object": object, "str": object}[kind])
    y_semi[200:] = "-1" if kind == "str" else -1
    est = RAutoEvalPlus(model, autoevaluator=FrozenEstimator(model), alpha=0.3,
                        random_state=0).fit(X[500:], y_semi)
    assert (est.n_labeled_, est.n_unlabeled_) == (200, 800)


def test_minus_one_as_a_class_is_an_error():
    X, y = make_classification(n_samples=400, random_state=0)
    y = 2 * y - 1  # classes -1 and 1
    model = LogisticRegression().fit(X, y)
    y_semi = y.copy()
    y_semi[100:] = -1
    with pytest.raises(ValueError, match="-1 is also a class"):
        RAutoEvalPlus(model, autoevaluator=model).fit(X, y_semi)


# ------------------------------------------------------------------ wrapped models
def test_fitted_model_is_never_refitted_and_unfitted_one_is_fitted_on_a_split(toy):
    X, y, y_semi = toy
    model = LogisticRegression().fit(X[:100], y[:100])
    coef = model.coef_.copy()
    est = RAutoEvalPlus(model, autoevaluator=judge_of(0.9), alpha=0.3, random_state=0)
    est.fit(X, y_semi)
    assert est.estimator_ is model
    np.testing.assert_array_equal(model.coef_, coef)
    assert est.n_labeled_ == 300

    unfitted = LogisticRegression()
    est = RAutoEvalPlus(unfitted, autoevaluator=DecisionTreeClassifier(max_depth=3),
                        alpha=0.3, calib_size=0.5, random_state=0).fit(X, y_semi)
    assert not hasattr(unfitted, "coef_")  # the user's object is untouched
    assert est.estimator_ is not unfitted and hasattr(est.estimator_, "coef_")
    assert hasattr(est.autoevaluator_, "tree_")
    assert est.n_labeled_ == 150 and est.n_unlabeled_ == 1500
    assert set(est.labeled_indices_) < set(range(300))


def test_frozen_estimator_survives_clone(toy):
    X, y, y_semi = toy
    model = LogisticRegression().fit(X[:100], y[:100])
    est = clone(RAutoEvalPlus(FrozenEstimator(model), autoevaluator=judge_of(0.9), alpha=0.3,
                              random_state=0))
    est.fit(X, y_semi)
    assert est.n_labeled_ == 300  # no split: the frozen model counts as fitted
    np.testing.assert_array_equal(est.predict(X[:5]), model.predict(X[:5]))


def test_pandas_input_feature_names_and_delegation(toy):
    X, y, y_semi = toy
    df = pd.DataFrame(X, columns=["truth", "noise", "flip"])
    model = make_pipeline(StandardScaler(), LogisticRegression()).fit(df[:100], y[:100])
    est = RAutoEvalPlus(model, autoevaluator=lambda Z: Z["truth"].to_numpy().astype(int),
                        alpha=0.3, random_state=0).fit(df, pd.Series(y_semi))
    np.testing.assert_array_equal(est.feature_names_in_, ["truth", "noise", "flip"])
    assert est.n_features_in_ == 3
    np.testing.assert_array_equal(est.predict(df[:5]), model.predict(df[:5]))
    np.testing.assert_allclose(est.predict_proba(df[:5]), model.predict_proba(df[:5]))
    assert est.score(df[:50], y[:50]) == model.score(df[:50], y[:50])
    reg = RAutoEvalPlus(LinearRegression(), method="eval")
    assert not hasattr(reg, "predict_proba")


def test_pickle_roundtrip(toy):
    X, y, y_semi = toy
    est = RAutoEvalPlus(fitted_model(), autoevaluator=FrozenEstimator(fitted_model()),
                        alpha=0.2, random_state=0).fit(X, y_semi)
    again = pickle.loads(pickle.dumps(est))
    assert again.pvalue_ == est.pvalue_
    np.testing.assert_array_equal(again.predict(X[:10]), est.predict(X[:10]))


def test_unfitted_access_raises():
    est = RAutoEvalPlus(fitted_model(), method="eval")
    for call in (est.decide, est.confidence_interval):
        with pytest.raises(NotFittedError):
            call()


# ---------------------------------------------------------------------- bad inputs
def _fit(X, y, **params):
    params = {"autoevaluator": judge_of(0.9), **params}
    return RAutoEvalPlus(fitted_model(), **params).fit(X, y)


@pytest.mark.parametrize(
    "params, match",
    [
        ({"alpha": 1.0}, "alpha"),
        ({"alpha": 0.0}, "alpha"),
        ({"delta": 1.5}, "delta"),
        ({"delta": -0.1}, "delta"),
        ({"method": "ppi"}, "method"),
        ({"n_rho": 1}, "n_rho"),
        ({"betting": "kelly"}, "betting"),
        ({"autoevaluator": "gpt"}, "autoevaluator"),
        ({"rho_grid": [0.0, 2.0]}, "rho_grid"),
        ({"risk": lambda yt, yp: 2.0 * (yt != yp)}, r"must lie in \[0, 1\]"),
        ({"risk": lambda yt, yp: np.full(len(yt), np.nan)}, "NaN"),
        ({"autoevaluator": None}, "needs an `autoevaluator`"),
    ],
)
def test_bad_parameters_give_clear_errors(toy, params, match):
    X, y, y_semi = toy
    with pytest.raises((ValueError, TypeError), match=match):
        _fit(X, y_semi, **params)


def test_bad_data_gives_clear_errors(toy):
    X, y, y_semi = toy
    with pytest.raises(ValueError, match="no labeled row"):
        _fit(X, np.full(len(y), -1))
    with pytest.raises(ValueError, match="requires y"):
        _fit(X, None)
    with pytest.raises(ValueError, match="rows but `y` has"):
        _fit(X, y_semi[:-1])
    few = y.copy()
    few[-100:] = -1  # 100 unlabeled rows for 1700 labeled: r = 0
    with pytest.raises(ValueError, match=r"r = 0"):
        _fit(X, few)
    with pytest.raises(ValueError, match="train set will be empty|Cannot split"):
        one = np.full(len(y), -1)
        one[0] = 1
        RAutoEvalPlus(LogisticRegression(), autoevaluator=judge_of(0.9)).fit(X, one)


@pytest.mark.parametrize(
    "judge, match",
    [
        (lambda X: np.zeros(3), "one label per row"),
        (lambda X: np.full(len(X), np.nan), "left .* unlabeled"),
        (lambda X: np.full(len(X), -1), "left .* unlabeled"),
        (lambda X: 1 / 0, "could not label"),
    ],
)
def test_a_judge_that_cannot_label_is_an_error(toy, judge, match):
    X, y, y_semi = toy
    with pytest.raises(ValueError, match=match):
        _fit(X, y_semi, autoevaluator=judge)


def test_frozen_unfitted_autoevaluator_is_an_error(toy):
    X, y, y_semi = toy
    with pytest.raises(NotFittedError, match="not fitted"):
        _fit(X, y_semi, autoevaluator=FrozenEstimator(LogisticRegression()))


# ------------------------------------------------------------- degenerate but legal
def test_nothing_certified_warns_with_the_reason(toy):
    X, y, y_semi = toy
    bad = FlipModel(error=0.3).fit(X)
    with pytest.warns(RiskControlWarning, match=r"did not certify.*p-value.*mean loss .* > "
                                                r"alpha"):
        est = RAutoEvalPlus(bad, autoevaluator=judge_of(0.9), alpha=0.1,
                            random_state=0).fit(X, y_semi)
    assert est.certified_ is False and est.decide() is False
    assert est.pvalue_ > 0.1


def test_too_few_labels_for_delta_is_explained():
    rng = np.random.default_rng(0)
    X, y, y_semi = toy_data(rng, 3, 30)
    with pytest.warns(RiskControlWarning, match="impossible.*at least"):
        est = RAutoEvalPlus(fitted_model(), autoevaluator=judge_of(0.9), alpha=0.1,
                            delta=0.001, random_state=0).fit(X, y_semi)
    assert not est.certified_


def test_no_unlabeled_rows_reduces_to_r_eval_with_a_warning(toy):
    X, y, y_semi = toy
    with pytest.warns(RiskControlWarning, match="reduces to R-Eval"):
        est = RAutoEvalPlus(fitted_model(), autoevaluator=judge_of(0.9), alpha=0.2,
                            random_state=0).fit(X[:300], y[:300])
    assert est.method_ == "eval" and est.block_size_ == 0 and est.certified_
    ci = est.confidence_interval()
    assert ci.method == "eval"


# ----------------------------------------------------------------------- selection
def selection_data(seed=0, errors=(0.02, 0.05, 0.08, 0.3), n=400, N=2000):
    rng = np.random.default_rng(seed)
    X, y, y_semi = toy_data(rng, n, N, n_models=len(errors))
    models = [FlipModel(col=2 + k, error=e).fit(X) for k, e in enumerate(errors)]
    return X, y, y_semi, models


def template(**kw):
    return RAutoEvalPlus(None, **{"autoevaluator": judge_of(0.95), "alpha": 0.15,
                                  "delta": 0.1, "random_state": 0, **kw})


def test_fst_selects_the_last_certified_and_matches_rautoeval_select():
    X, y, y_semi, models = selection_data()
    sel = RiskControlledModelSelector(models, tester=template(shuffle=False)).fit(X, y_semi)
    H = np.array([(m.predict(X[:400]) != y[:400]) for m in models], dtype=float)
    G = np.array([(m.predict(X[:400]) != judge_of(0.95)(X[:400])) for m in models], dtype=float)
    U = np.array([(m.predict(X[400:]) != judge_of(0.95)(X[400:])) for m in models], dtype=float)
    ref = rautoeval_select(H, G, U, alpha=0.15, delta=0.1)
    np.testing.assert_array_equal(sel.certified_, ref.certified)
    np.testing.assert_array_equal(sel.pvalues_, ref.pvalues)
    assert sel.selected_index_ == ref.selected == 2
    assert sel.selected_estimator_ is models[2]
    np.testing.assert_array_equal(sel.predict(X[:20]), models[2].predict(X[:20]))
    np.testing.assert_array_equal(sel.decide(), sel.certified_)
    assert sel.testers_[3].delta == 0.1 and sel.test_level_ == 0.1


class CountingJudge:
    """A fitted auto-evaluator that counts the rows it is asked to label."""

    def __init__(self, gamma):
        self.judge, self.rows = judge_of(gamma), 0

    def predict(self, X):
        self.rows += len(X)
        return self.judge(X)


def test_a_fitted_judge_labels_each_row_once_for_all_candidates():
    X, y, y_semi, models = selection_data()
    judge = CountingJudge(0.95)
    sel = RiskControlledModelSelector(models, tester=template(autoevaluator=judge),
                                      procedure="bonferroni").fit(X, y_semi)
    assert judge.rows == len(X)  # not len(models) * len(X)
    for k, model in enumerate(models):  # each candidate's test as if run on its own
        alone = template(delta=0.1 / len(models)).set_params(estimator=model).fit(X, y_semi)
        assert sel.pvalues_[k] == alone.pvalue_
        np.testing.assert_array_equal(sel.testers_[k].loss_judge_unlabeled_,
                                      alone.loss_judge_unlabeled_)


def test_fst_stops_at_the_first_failure_and_never_falls_back():
    X, y, y_semi, models = selection_data(errors=(0.3, 0.02, 0.05))
    with pytest.warns(RiskControlWarning, match="first candidate .* not certified"):
        sel = RiskControlledModelSelector(models, tester=template()).fit(X, y_semi)
    assert not sel.certified_.any()
    assert sel.selected_index_ is None and sel.selected_estimator_ is None
    assert sel.tested_.tolist() == [True, False, False]
    assert np.isnan(sel.pvalues_[1:]).all()
    with pytest.raises(ValueError, match="certified no candidate"):
        sel.predict(X[:5])


def test_fst_parallel_batches_report_only_the_sequential_outcome():
    X, y, y_semi, models = selection_data(errors=(0.02, 0.3, 0.02, 0.02))
    seq = RiskControlledModelSelector(models, tester=template()).fit(X, y_semi)
    with parallel_backend("threading"):  # same batching logic, no process start-up cost
        par = RiskControlledModelSelector(models, tester=template(), n_jobs=4).fit(X, y_semi)
    for s in (seq, par):
        assert s.certified_.tolist() == [True, False, False, False]
        assert s.tested_.tolist() == [True, True, False, False]
        assert s.testers_[2] is None and s.testers_[3] is None
    np.testing.assert_array_equal(seq.pvalues_, par.pvalues_)


def test_bonferroni_tests_every_candidate_at_delta_over_k():
    X, y, y_semi, models = selection_data(errors=(0.3, 0.02, 0.05, 0.08))
    with parallel_backend("threading"):
        sel = RiskControlledModelSelector(models, tester=template(), procedure="bonferroni",
                                          cost=[4, 3, 2, 1], n_jobs=2).fit(X, y_semi)
    assert sel.tested_.all() and sel.test_level_ == pytest.approx(0.025)
    assert all(t.delta == pytest.approx(0.025) for t in sel.testers_)
    np.testing.assert_array_equal(sel.certified_, sel.pvalues_ * 4 <= 0.1)
    assert not sel.certified_[0] and sel.certified_[1]
    assert sel.selected_index_ == int(np.flatnonzero(sel.certified_)[-1])


def test_cost_order_and_callable_cost():
    X, y, y_semi, models = selection_data(errors=(0.08, 0.02, 0.3, 0.05))
    sizes = np.array([2.0, 4.0, 1.0, 3.0])  # safest = largest
    sel = RiskControlledModelSelector(models, tester=template(), order="cost",
                                      cost=sizes).fit(X, y_semi)
    np.testing.assert_array_equal(sel.order_, [1, 3, 0, 2])
    assert sel.certified_.tolist() == [True, True, False, True]
    assert sel.selected_index_ == 0  # cheapest certified
    by_callable = RiskControlledModelSelector(
        models, tester=template(), order="cost", cost=lambda m: {0.08: 2, 0.02: 4, 0.3: 1,
                                                                0.05: 3}[m.error]
    ).fit(X, y_semi)
    np.testing.assert_array_equal(by_callable.certified_, sel.certified_)
    explicit = RiskControlledModelSelector(models, tester=template(),
                                           order=[1, 3, 0, 2]).fit(X, y_semi)
    assert explicit.selected_index_ == 0  # no cost: last certified in the testing order


def test_callable_tester():
    X, y, y_semi, models = selection_data()

    def tester(model, X, y, *, delta):
        lab = y != -1
        return rautoeval_test((model.predict(X[lab]) != y[lab]).astype(float), alpha=0.15,
                              delta=delta, method="eval").pvalue

    sel = RiskControlledModelSelector(models, tester=tester, delta=0.1).fit(X, y_semi)
    assert sel.certified_[0] and not sel.certified_[-1]
    assert sel.testers_ == [None] * 4
    assert sel.selected_estimator_ is models[sel.selected_index_]
    with pytest.raises(ValueError, match="needs the family-wise level"):
        RiskControlledModelSelector(models, tester=tester).fit(X, y_semi)
    with pytest.raises(ValueError, match="p-value in"):
        RiskControlledModelSelector(models, tester=lambda *a, **k: 3.0, delta=0.1).fit(X, y)


def test_unfitted_candidates_are_fitted_by_the_tester():
    X, y = make_classification(n_samples=3000, n_informative=6, random_state=0)
    y_semi = y.copy()
    y_semi[1000:] = -1
    cands = [DecisionTreeClassifier(max_depth=d, random_state=0) for d in (8, 1)]
    judge = DummyClassifier(strategy="most_frequent")
    sel = RiskControlledModelSelector(
        cands, tester=template(autoevaluator=judge, alpha=0.35, method="eval")
    ).fit(X, y_semi)
    assert sel.selected_index_ is not None
    assert hasattr(sel.selected_estimator_, "tree_")
    assert not hasattr(cands[0], "tree_")


@pytest.mark.parametrize(
    "params, match",
    [
        ({"estimators": []}, "empty"),
        ({"order": "cost"}, "needs `cost`"),
        ({"order": [0, 0, 1, 2]}, "permutation"),
        ({"cost": [1, 2]}, "4 finite numbers"),
        ({"procedure": "holm"}, "procedure"),
    ],
)
def test_selector_errors(params, match):
    X, y, y_semi, models = selection_data()
    params = {"estimators": models, **params}
    with pytest.raises(ValueError, match=match):
        RiskControlledModelSelector(tester=template(), **params).fit(X, y_semi)


# ----------------------------------------------------------------------------- CLI
def cli(argv):
    """Parse with a stand-alone parser holding only the autoeval command, then run it."""
    import argparse

    from sklearn_riskcontrol.cli.autoeval import add_parser, run

    parser = argparse.ArgumentParser()
    add_parser(parser.add_subparsers(dest="command", required=True))
    run(parser.parse_args(argv))


@pytest.fixture
def loss_tables(tmp_path):
    rng = np.random.default_rng(0)
    risks = np.array([0.02, 0.05, 0.3])
    H = rng.binomial(1, risks[:, None], (3, 300)).astype(float)
    G = np.where(rng.random((3, 300)) < 0.95, H, 1 - H)
    Hu = rng.binomial(1, risks[:, None], (3, 1500))
    U = np.where(rng.random((3, 1500)) < 0.95, Hu, 1 - Hu).astype(float)
    names = ["big", "medium", "small"]
    paths = {}
    for key, table in (("labeled", H), ("judge", G), ("unlabeled", U)):
        paths[key] = tmp_path / f"{key}.csv"
        pd.DataFrame(table.T, columns=names).to_csv(paths[key], index=False)
    single_lab = tmp_path / "single_lab.csv"
    pd.DataFrame({"loss": H[1], "judge_loss": G[1]}).to_csv(single_lab, index=False)
    single_unl = tmp_path / "single_unl.csv"
    pd.DataFrame({"judge_loss": U[1]}).to_csv(single_unl, index=False)
    return paths, single_lab, single_unl, (H, G, U), tmp_path


def test_cli_certify_matches_the_array_layer(loss_tables, capsys):
    paths, lab, unl, (H, G, U), tmp = loss_tables
    out = tmp / "cert.csv"
    cli(["autoeval", "certify", "--labeled", str(lab), "--unlabeled", str(unl), "--alpha",
         "0.15", "--ci", "--output", str(out)])
    row = pd.read_csv(out).iloc[0]
    ref = rautoeval_test(H[1], G[1], U[1], alpha=0.15, delta=0.1)
    ci = rautoeval_confidence_interval(H[1], G[1], U[1], delta=0.1)
    assert bool(row["certified"]) == ref.certified
    assert row["pvalue"] == pytest.approx(ref.pvalue, rel=1e-12)
    assert row["labels_needed"] == ref.stopping_index + 1
    assert (row["n_labeled"], row["n_unlabeled"], row["block_size"]) == (300, 1500, 5)
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((ci.low, ci.high), rel=1e-12)
    assert "certified: risk <= 0.15" in capsys.readouterr().err


def test_cli_certify_r_eval_and_shuffle(loss_tables, capsys):
    paths, lab, unl, (H, G, U), tmp = loss_tables
    cli(["autoeval", "certify", "--labeled", str(lab), "--alpha", "0.15", "--method", "eval"])
    got = pd.read_csv(io.StringIO(capsys.readouterr().out)).iloc[0]
    assert got["pvalue"] == pytest.approx(
        rautoeval_test(H[1], alpha=0.15, delta=0.1, method="eval").pvalue, rel=1e-12)
    cli(["autoeval", "certify", "--labeled", str(lab), "--unlabeled", str(unl), "--alpha",
         "0.15", "--shuffle", "3", "--betting", "wsr"])
    rng = np.random.default_rng(3)
    p, q = rng.permutation(300), rng.permutation(1500)
    ref = rautoeval_test(H[1][p], G[1][p], U[1][q], alpha=0.15, delta=0.1, betting="wsr")
    got = pd.read_csv(io.StringIO(capsys.readouterr().out)).iloc[0]
    assert got["pvalue"] == pytest.approx(ref.pvalue, rel=1e-12)


def test_cli_select_matches_rautoeval_select(loss_tables, capsys):
    paths, lab, unl, (H, G, U), tmp = loss_tables
    cli(["autoeval", "select", "--labeled", str(paths["labeled"]), "--judge-labeled",
         str(paths["judge"]), "--unlabeled", str(paths["unlabeled"]), "--alpha", "0.15",
         "--cost", "3,2,1"])
    captured = capsys.readouterr()
    got = pd.read_csv(io.StringIO(captured.out))
    ref = rautoeval_select(H, G, U, alpha=0.15, delta=0.1, cost=[3, 2, 1])
    assert got["candidate"].tolist() == ["big", "medium", "small"]
    np.testing.assert_array_equal(got["certified"], ref.certified)
    np.testing.assert_array_equal(got["selected"], [False, True, False])
    np.testing.assert_allclose(got["pvalue"], ref.pvalues, rtol=1e-12)
    assert "selected 'medium'" in captured.err


def test_cli_select_nothing_certified_warns(loss_tables, capsys):
    paths, *_ = loss_tables
    cli(["autoeval", "select", "--labeled", str(paths["labeled"]), "--alpha", "0.01",
         "--method", "eval"])
    err = capsys.readouterr().err
    assert "nothing certified" in err and "warning:" in err


@pytest.mark.parametrize(
    "argv, match",
    [
        (["--alpha", "1.5"], "alpha"),
        (["--alpha", "0.1", "--delta", "0"], "delta"),
        (["--alpha", "0.1", "--loss-column", "nope"], "no column 'nope'"),
    ],
)
def test_cli_certify_errors(loss_tables, argv, match):
    paths, lab, unl, *_ = loss_tables
    with pytest.raises(ValueError, match=match):
        cli(["autoeval", "certify", "--labeled", str(lab), "--unlabeled", str(unl), *argv])


def test_cli_bad_losses_and_tables(loss_tables):
    paths, lab, unl, (H, G, U), tmp = loss_tables
    bad = tmp / "bad.csv"
    pd.DataFrame({"loss": [0.1, 1.5], "judge_loss": [0, 0]}).to_csv(bad, index=False)
    with pytest.raises(ValueError, match=r"must lie in \[0, 1\]"):
        cli(["autoeval", "certify", "--labeled", str(bad), "--alpha", "0.1", "--method", "eval"])
    pd.DataFrame({"loss": [0.1, "x"], "judge_loss": [0, 0]}).to_csv(bad, index=False)
    with pytest.raises(ValueError, match="'x' is not a number"):
        cli(["autoeval", "certify", "--labeled", str(bad), "--alpha", "0.1", "--method", "eval"])
    with pytest.raises(ValueError, match="needs --judge-labeled"):
        cli(["autoeval", "select", "--labeled", str(paths["labeled"]), "--alpha", "0.1"])
    with pytest.raises(ValueError, match="same candidate columns"):
        cli(["autoeval", "select", "--labeled", str(paths["labeled"]), "--judge-labeled",
             str(lab), "--alpha", "0.1"])
    with pytest.raises(ValueError, match="--cost has 2 values"):
        cli(["autoeval", "select", "--labeled", str(paths["labeled"]), "--alpha", "0.1",
             "--method", "eval", "--cost", "1,2"])
    few = tmp / "few.csv"
    pd.DataFrame({"judge_loss": [0.0] * 10}).to_csv(few, index=False)
    with pytest.raises(ValueError, match="fewer than the 300 labeled"):
        cli(["autoeval", "certify", "--labeled", str(lab), "--unlabeled", str(few), "--alpha",
             "0.1"])


# ------------------------------------------------------------ duck-typed models, demo
class DuckModel:
    """A model known only by its predict (e.g. an LLM behind an API): no fit, no tags."""

    def __init__(self, error_col=2, error=0.05):
        self.error_col, self.error = error_col, error

    def predict(self, X):
        X = np.asarray(X)
        truth = X[:, 0].astype(int)
        return np.where(X[:, self.error_col] < self.error, 1 - truth, truth)


def test_duck_typed_model_and_judge(toy):
    X, y, y_semi = toy
    est = RAutoEvalPlus(DuckModel(), autoevaluator=DuckModel(error_col=1, error=0.1),
                        alpha=0.15, random_state=0).fit(X, y_semi)
    assert est.certified_ and est.n_labeled_ == 300  # used as is: no split
    assert est.n_features_in_ == 3
    sel = RiskControlledModelSelector([DuckModel(error=0.05), DuckModel(error=0.4)],
                                      tester=template()).fit(X, y_semi)
    assert sel.certified_.tolist() == [True, False]
    np.testing.assert_array_equal(sel.predict(X[:5]), DuckModel().predict(X[:5]))


def test_demo_section_runs(capsys):
    from sklearn_riskcontrol.demo.autoeval import autoeval_section

    autoeval_section(seed=0, quick=True)
    out = capsys.readouterr().out
    for name in ("R-Eval", "R-AutoEval", "R-AutoEval+", "model selection"):
        assert name in out


# ------------------------------------------------------------------------- plotting
def test_plot_eprocess_and_rho_weights(toy):
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from sklearn_riskcontrol.plotting import plot_eprocess, plot_rho_weights

    X, y, y_semi = toy
    fits = {m: RAutoEvalPlus(fitted_model(), autoevaluator=judge_of(0.9), method=m, alpha=0.15,
                             random_state=0).fit(X, y_semi) for m in ("eval", "plus")}
    ax = plot_eprocess(fits)
    lines = ax.get_lines()
    threshold = [ln for ln in lines if ln.get_linestyle() == "--"]
    assert len(threshold) == 1 and threshold[0].get_ydata()[0] == pytest.approx(np.log(10))
    curve = lines[0]
    np.testing.assert_allclose(curve.get_ydata(), fits["eval"].result_.log_eprocess)
    np.testing.assert_array_equal(curve.get_xdata(), np.arange(1, 301))
    dots = [ln for ln in lines if ln.get_marker() == "o"]
    assert len(dots) == sum(f.certified_ for f in fits.values())
    assert [t.get_text() for t in ax.get_legend().get_texts()][:2] == ["eval", "plus"]
    ax2 = plot_eprocess(fits["plus"].result_, delta=0.01)  # a bare result, another level
    assert ax2.get_legend().get_texts()[0].get_text() == "R-AutoEval+"

    ax3 = plot_rho_weights(fits["plus"])
    mesh = ax3.collections[0]
    np.testing.assert_allclose(np.asarray(mesh.get_array()).reshape(10, 300),
                               fits["plus"].result_.rho_weights)
    assert len(ax3.figure.axes) == 2  # the colour bar
    fig, ax4 = plt.subplots()
    assert plot_rho_weights(fits["plus"].result_, ax=ax4, colorbar=False) is ax4
    plt.close("all")


def test_plot_errors(toy):
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from sklearn_riskcontrol.plotting import plot_eprocess, plot_rho_weights

    h = np.zeros(50)
    a = rautoeval_test(h, alpha=0.2, delta=0.1, method="eval")
    b = rautoeval_test(h, alpha=0.2, delta=0.05, method="eval")
    with pytest.raises(ValueError, match="different deltas"):
        plot_eprocess({"a": a, "b": b})
    with pytest.raises(ValueError, match="empty"):
        plot_eprocess({})
    with pytest.raises(TypeError, match="RAutoEvalResult"):
        plot_rho_weights(h)
    with pytest.raises(TypeError, match="RAutoEvalResult"):
        plot_eprocess(RAutoEvalPlus(fitted_model(), method="eval"))  # not fitted
    with pytest.raises(ValueError, match="delta"):
        plot_eprocess(a, delta=2.0)
    plt.close("all")


def test_selector_uses_a_fitted_autoevaluator_as_is():
    X, y = make_classification(n_samples=4000, n_informative=6, random_state=0)
    judge = DecisionTreeClassifier(max_depth=6, random_state=0).fit(X[:1000], y[:1000])
    models = [LogisticRegression().fit(X[:1000], y[:1000])]
    y_semi = y[1000:].copy()
    y_semi[300:] = -1
    sel = RiskControlledModelSelector(
        models, tester=template(autoevaluator=judge, alpha=0.3)).fit(X[1000:], y_semi)
    tester = sel.testers_[0]
    assert tester.autoevaluator_ is judge  # not cloned (which would unfit it), not refitted
    assert tester.n_labeled_ == 300  # no fitting split
    assert tester.estimator_ is models[0]
