"""R-AutoEval+ on degenerate but legal inputs: warnings that name the cause and the fix,
random states of every kind, missing labels, and messages and examples that tell the truth."""

import doctest
import re
import warnings

import joblib
import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import make_classification
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LinearRegression, LogisticRegression

from sklearn_riskcontrol import autoeval, studies, RiskControlWarning
from sklearn_riskcontrol.autoeval import (
    RAutoEvalPlus,
    RiskControlledModelSelector,
    _arrays as array_autoeval,
    effective_observations,
    rautoeval_confidence_interval,
    rautoeval_select,
    rautoeval_test,
)
from sklearn_riskcontrol.evalues import betting
from sklearn_riskcontrol.evalues.betting import FixedBet
from sklearn_riskcontrol.risks import make_risk

ALL_WRONG = "Every labeled loss"


def messages(record):
    return [str(w.message) for w in record if issubclass(w.category, RiskControlWarning)]


@pytest.fixture(scope="module")
def clf():
    """A classifier, 300 labeled rows then 1500 unlabeled (-1) ones, with its true labels."""
    X, y = make_classification(n_samples=2300, n_informative=5, random_state=0)
    model = LogisticRegression().fit(X[:500], y[:500])
    y_semi = y[500:].copy()
    y_semi[300:] = -1
    return model, X[500:], y[500:], y_semi


@pytest.fixture(scope="module")
def reg():
    """A regressor with residual sd 1, 200 labeled rows then 1000 unlabeled (NaN) ones."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(1400, 2))
    y = X @ [1.0, -1.0] + rng.normal(size=1400)
    model = LinearRegression().fit(X[:200], y[:200])
    y_semi = y[200:].copy()
    y_semi[200:] = np.nan
    return model, X[200:], y_semi


# ------------------------------------------------------------ every labeled loss is 1
def test_zero_one_risk_on_a_regressor_names_the_cause_and_the_fix(reg):
    model, X, y_semi = reg
    with pytest.warns(RiskControlWarning) as record:
        est = RAutoEvalPlus(model, autoevaluator=model, random_state=0).fit(X, y_semi)
    assert np.all(est.loss_labeled_ == 1.0) and not est.certified_
    msgs = messages(record)
    wrong = [m for m in msgs if m.startswith(ALL_WRONG)]
    assert len(wrong) == 1  # the array test's copy is replaced by the estimator's, not repeated
    assert re.search(r"\(all 200\) equals 1.*regressor.*risk=make_risk\('absolute', tolerance",
                     wrong[0])
    assert any("did not certify" in m for m in msgs)
    # Every warning points at this file, not at the library or scikit-learn's _fit_context.
    assert {w.filename for w in record} == {__file__}


def test_labels_the_classifier_never_predicts_name_the_encoding(clf):
    model, X, _, y_semi = clf
    y_str = np.where(y_semi == -1, "-1", np.where(y_semi == 1, "yes", "no")).astype(object)
    with pytest.warns(RiskControlWarning) as record:
        est = RAutoEvalPlus(model, autoevaluator=model, random_state=0).fit(X, y_str)
    assert est.n_labeled_ == 300 and np.all(est.loss_labeled_ == 1.0)
    pattern = (r"no label in `y` \(e\.g\. \['(yes|no)', '(yes|no)'\]\) is ever predicted by the "
               r"model \(it predicts e\.g\. \[[01], [01]\]\); encode `y` with the labels")
    assert sum(bool(re.search(pattern, m)) for m in messages(record)) == 1


def test_re_emitted_notes_of_the_array_test_point_at_the_users_line(clf):
    model, X, y, _ = clf
    # All rows labeled: the array test warns "reduces to R-Eval"; fit catches and re-emits it.
    with pytest.warns(RiskControlWarning, match="reduces to R-Eval") as record:
        est = RAutoEvalPlus(model, autoevaluator=model, alpha=0.3, random_state=0).fit(X, y)
    assert est.certified_ and est.method_ == "eval"
    assert [w.filename for w in record] == [__file__]


def test_no_all_wrong_warning_when_one_labeled_loss_is_zero():
    h = np.ones(40)
    h[17] = 0.0
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        rautoeval_test(h, alpha=0.2, delta=0.1, method="eval")
    assert not any(m.startswith(ALL_WRONG) for m in messages(record))


def test_array_functions_warn_when_every_labeled_loss_is_one():
    with pytest.warns(RiskControlWarning, match=r"Every labeled loss \(all 50\) equals 1.*"
                                                r"use a loss that fits the task") as record:
        res = rautoeval_test(np.ones(50), np.ones(50), np.ones(200), alpha=0.2, delta=0.1)
    assert not res.certified and res.pvalue == 1.0
    assert {w.filename for w in record} == {__file__}
    h = np.vstack([np.zeros(50), np.ones(50), np.zeros(50)])
    with pytest.warns(RiskControlWarning, match=r"Every labeled loss of candidate\(s\) \[1\] "):
        rautoeval_select(h, alpha=0.2, delta=0.1, method="eval", procedure="bonferroni")


def test_selector_summarises_the_cause_per_candidate_at_the_users_line(clf):
    model, X, y, y_semi = clf
    other = LogisticRegression().fit(X[:300], np.where(y[:300] == 1, "yes", "no"))
    tester = RAutoEvalPlus(None, autoevaluator=model, alpha=0.3, delta=0.1, random_state=0)
    with pytest.warns(RiskControlWarning) as record:
        sel = RiskControlledModelSelector([model, other], tester=tester).fit(X, y_semi)
    assert sel.certified_.tolist() == [True, False]
    msgs = messages(record)
    assert sum(m.startswith(f"Candidate(s) [1]: {ALL_WRONG} (all 300) equals 1") for m in msgs) == 1
    assert not any(m.startswith("Candidate(s) [0]") for m in msgs)
    assert {w.filename for w in record} == {__file__}


# ------------------------------------------------------------ losses clipped at 1
def _clipped_count(model, X, y_semi, scale):
    lab = ~np.isnan(y_semi)
    return int(np.sum((y_semi[lab] - model.predict(X[lab])) ** 2 / scale >= 1.0))


@pytest.mark.parametrize("quantile, warned", [(0.6, True), (0.85, False)])
def test_a_large_share_of_clipped_losses_warns_with_the_exact_count(reg, quantile, warned):
    model, X, y_semi = reg
    lab = ~np.isnan(y_semi)
    # A scale at the 60% quantile of squared residuals clips 40% of the losses; at 85%, 15%.
    scale = float(np.quantile((y_semi[lab] - model.predict(X[lab])) ** 2, quantile))
    k = _clipped_count(model, X, y_semi, scale)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        est = RAutoEvalPlus(model, autoevaluator=model, risk=make_risk("squared", scale=scale),
                            alpha=0.9, delta=0.1, random_state=0).fit(X, y_semi)
    assert int(np.sum(est.loss_labeled_ >= 1.0)) == k
    clipped = [m for m in messages(record) if "reach 1, the cap of risk" in m]
    if warned:
        assert len(clipped) == 1
        assert clipped[0].startswith(f"{k / 200:.0%} of the labeled losses ({k} of 200) reach 1")
        assert "Pass a larger `scale`" in clipped[0] and "scale=np." not in clipped[0]
        assert record[[str(w.message) for w in record].index(clipped[0])].filename == __file__
    else:
        assert clipped == [] and k > 0  # some clipping, below the 25% threshold


def test_a_scale_that_clips_everything_warns_once_with_the_scale_fix(reg):
    model, X, y_semi = reg
    with pytest.warns(RiskControlWarning) as record:
        RAutoEvalPlus(model, autoevaluator=model, risk=make_risk("squared", scale=1e-12),
                      random_state=0).fit(X, y_semi)
    msgs = messages(record)
    assert any(m.startswith(ALL_WRONG) and "clips every loss at 1: pass a larger `scale`" in m
               for m in msgs)
    assert not any("reach 1, the cap of risk" in m for m in msgs)  # one warning per cause


def test_selector_names_every_candidate_with_clipped_losses(reg):
    model, X, y_semi = reg
    shifted = LinearRegression().fit(X[:200], y_semi[:200] + 0.3)
    tester = RAutoEvalPlus(None, autoevaluator=model, risk=make_risk("squared", scale=0.5),
                           alpha=0.9, delta=0.1, random_state=0)
    with pytest.warns(RiskControlWarning) as record:
        RiskControlledModelSelector([model, shifted], tester=tester,
                                    procedure="bonferroni").fit(X, y_semi)
    clipped = [m for m in messages(record) if "the cap of risk" in m]
    assert len(clipped) == 1
    assert clipped[0].startswith("Candidate(s) [0, 1] (message of candidate 0): ")
    assert {w.filename for w in record} == {__file__}


# ------------------------------------------------------------ an uninformative judge
@pytest.mark.parametrize("constant", [0.0, 1.0])
def test_a_constant_judge_leaves_the_labels_test_and_does_not_warn(constant):
    """A judge whose losses are constant (it agrees with the model everywhere, or nowhere)
    makes q(rho) = h for every rho: R-AutoEval+ then bets on the labels alone, still valid and
    about as powerful as R-Eval, so nothing is useless and nothing is warned."""
    rng = np.random.default_rng(3)
    h = rng.binomial(1, 0.05, 300).astype(float)
    g, u = np.full(300, constant), np.full(1500, constant)
    rho = np.linspace(0, 1, 10)
    np.testing.assert_array_equal(effective_observations(h, g, u, rho), np.tile(h, (10, 1)))
    with warnings.catch_warnings():
        warnings.simplefilter("error", RiskControlWarning)
        res = rautoeval_test(h, g, u, alpha=0.15, delta=0.1)
    assert res.certified


def test_a_judge_that_returns_the_models_predictions_does_not_warn(clf):
    model, X, _, y_semi = clf
    with warnings.catch_warnings():
        warnings.simplefilter("error", RiskControlWarning)
        est = RAutoEvalPlus(model, autoevaluator=FrozenEstimator(model), alpha=0.3,
                            random_state=0).fit(X, y_semi)
    assert est.certified_ and np.all(est.loss_judge_unlabeled_ == 0.0)


# ------------------------------------------------------------ random states
def test_a_numpy_generator_seeds_the_split_and_the_shuffling(clf):
    model, X, _, y_semi = clf

    def fit(random_state):
        return RAutoEvalPlus(LogisticRegression(), autoevaluator=model, alpha=0.5,
                             random_state=random_state).fit(X, y_semi)

    a, b = fit(np.random.default_rng(5)), fit(np.random.default_rng(5))
    np.testing.assert_array_equal(a.labeled_indices_, b.labeled_indices_)
    np.testing.assert_array_equal(a.unlabeled_indices_, b.unlabeled_indices_)
    assert a.pvalue_ == b.pvalue_
    c = fit(np.random.default_rng(6))
    assert not np.array_equal(a.labeled_indices_, c.labeled_indices_)


def test_selector_with_a_generator_in_the_template_is_reproducible_for_any_n_jobs(clf):
    model, X, y, y_semi = clf
    candidates = [model, LogisticRegression(C=0.01).fit(X[:300], y[:300])]

    def fit(n_jobs):
        tester = RAutoEvalPlus(None, autoevaluator=model, alpha=0.3,
                               random_state=np.random.default_rng(7))
        with joblib.parallel_config(backend="threading"):
            return RiskControlledModelSelector(candidates, tester=tester, procedure="bonferroni",
                                               n_jobs=n_jobs).fit(X, y_semi)

    one, two = fit(1), fit(2)
    np.testing.assert_array_equal(one.pvalues_, two.pvalues_)
    seeds = {t.random_state for t in one.testers_}
    assert len(seeds) == 1 and isinstance(seeds.pop(), int)  # one stream for every candidate
    np.testing.assert_array_equal(one.testers_[0].labeled_indices_,
                                  one.testers_[1].labeled_indices_)


def test_studies_accept_every_random_state_form():
    def f(rng):
        return float(rng.random())

    gen = studies.monte_carlo(f, 3, random_state=np.random.default_rng(2))
    assert gen == studies.monte_carlo(f, 3, random_state=np.random.default_rng(2))
    with pytest.raises(TypeError, match=r"`random_state` must be .*; got float64\."):
        studies.monte_carlo(f, 3, random_state=np.float64(1.5))


# ------------------------------------------------------------ missing labels
@pytest.mark.parametrize("missing", [None, pd.NA, np.nan])
def test_missing_values_in_an_object_y_are_unlabeled_rows_for_classes(clf, missing):
    model, X, _, y_semi = clf
    ref = RAutoEvalPlus(model, autoevaluator=model, alpha=0.3, random_state=0).fit(X, y_semi)
    y_obj = y_semi.astype(object)
    y_obj[y_semi == -1] = missing
    y_obj[-5:] = -1  # both markers at once
    est = RAutoEvalPlus(model, autoevaluator=model, alpha=0.3, random_state=0).fit(X, y_obj)
    np.testing.assert_array_equal(est.labeled_indices_, ref.labeled_indices_)
    np.testing.assert_array_equal(est.unlabeled_indices_, ref.unlabeled_indices_)
    assert est.pvalue_ == ref.pvalue_


def test_missing_values_in_a_pandas_y_are_unlabeled_rows_for_regression(reg):
    model, X, y_semi = reg
    risk = make_risk("squared", scale=9.0)
    kw = dict(autoevaluator=model, risk=risk, alpha=0.3, random_state=0)
    ref = RAutoEvalPlus(model, **kw).fit(X, y_semi)
    y_obj = pd.Series(y_semi, dtype=object).where(~np.isnan(y_semi), None)
    y_obj.iloc[-3:] = pd.NA
    assert y_obj.dtype == object and y_obj.isna().sum() == 1000
    est = RAutoEvalPlus(model, **kw).fit(X, y_obj)
    assert (est.n_labeled_, est.n_unlabeled_) == (200, 1000)
    assert est.certified_ and est.pvalue_ == ref.pvalue_


def test_a_judge_returning_missing_values_is_an_error(clf):
    model, X, _, y_semi = clf

    def judge(rows):
        labels = model.predict(rows).astype(object)
        labels[0] = pd.NA
        return labels

    with pytest.raises(ValueError, match=r"autoevaluator left 1 of \d+ rows unlabeled"):
        RAutoEvalPlus(model, autoevaluator=judge, random_state=0).fit(X, y_semi)


# ------------------------------------------------------------ truthful output
def test_verbose_output_says_what_the_guarantee_is_about(clf, capsys):
    model, X, _, y_semi = clf
    RAutoEvalPlus(model, autoevaluator=model, alpha=0.3, delta=0.1, random_state=0,
                  verbose=1).fit(X, y_semi)
    out = capsys.readouterr().out
    assert "certified=True for risk <= alpha=0.3 (a test whose type-I error is at most " \
           "delta=0.1 over the draw of the labeled rows); realized on this draw: p-value" in out
    assert "e-process above 1/delta after" in out


def test_result_reprs_state_the_level():
    h = np.zeros(100)
    res = rautoeval_test(h, alpha=0.2, delta=0.1, method="eval")
    assert "certified=True, pvalue=" in repr(res) and "alpha=0.2, delta=0.1" in repr(res)
    ci = rautoeval_confidence_interval(h, delta=0.05, method="eval")
    assert str(ci).endswith("(two-sided, R-Eval): intervals built this way cover the risk "
                            "with probability >= 0.95 over the draw of the labeled data")


def test_messages_show_plain_numbers_not_numpy_reprs(clf):
    model, X, _, y_semi = clf
    tester = RAutoEvalPlus(None, autoevaluator=model, random_state=0)
    with pytest.raises(ValueError, match=r"permutation of range\(2\); got \[0, 0\]\.$"):
        RiskControlledModelSelector([model, model], tester=tester,
                                    order=np.array([0, 0])).fit(X, y_semi)

    def tester_fn(candidate, X, y, *, delta):
        return np.float64(1.5)

    with pytest.raises(ValueError, match=r"p-value in \[0, 1\]; got 1\.5\.$"):
        RiskControlledModelSelector([model], tester=tester_fn, delta=0.1).fit(X, y_semi)
    with pytest.raises(ValueError, match=r"got 1\.5\.$"):
        FixedBet(np.float64(1.5))
    with pytest.raises(ValueError, match=r"got 0\.$"):
        studies.monte_carlo(lambda rng: 0, np.int64(0))


@pytest.mark.parametrize("module", [autoeval, array_autoeval, betting, studies])
def test_docstring_examples_never_split_data_by_contiguous_slices(module):
    """Slices such as ``X[:1000]`` are not exchangeable splits; examples shuffle instead."""
    slicing = re.compile(r"\b[Xy]\w*\[\s*-?\d*\s*:\s*-?\d*\s*\]")
    for test in doctest.DocTestFinder().find(module):
        for example in test.examples:
            assert not slicing.search(example.source), (test.name, example.source)
