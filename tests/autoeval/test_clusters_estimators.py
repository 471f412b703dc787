"""Clustered items (issue 27, part 2) in the estimators: ``groups=`` in ``fit``."""

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.linear_model import LogisticRegression
from sklearn.tree import DecisionTreeClassifier

from sklearn_riskcontrol.autoeval import (
    ModelComparison,
    RAutoEvalPlus,
    RiskControlledModelSelector,
    rautoeval_compare,
    rautoeval_confidence_interval,
    rautoeval_test,
)

pytestmark = pytest.mark.filterwarnings("ignore::sklearn_riskcontrol.RiskControlWarning")


def _setup():
    """Fitted models and judge; 3000 rows in 300 clusters of 10 (consecutive rows), the
    clusters of the first 40 labeled; rows given interleaved across clusters."""
    X, y = make_classification(n_samples=5000, n_informative=6, random_state=0)
    models = [DecisionTreeClassifier(max_depth=d, random_state=0).fit(X[:1000], y[:1000])
              for d in (6, 1)]
    judge = LogisticRegression().fit(X[1000:2000], y[1000:2000])
    X, y = X[2000:], y[2000:].copy()
    groups = np.repeat(np.arange(300), 10)
    y[groups >= 40] = -1
    perm = np.random.default_rng(0).permutation(3000)  # rows of a cluster not contiguous
    return X[perm], y[perm], groups[perm], models, judge


def test_rautoevalplus_groups_is_the_array_test_on_its_clusters():
    X, y, groups, models, judge = _setup()
    est = RAutoEvalPlus(models[0], autoevaluator=judge, alpha=0.2, delta=0.1,
                        random_state=0).fit(X, y, groups=groups)
    gl, gu = est.groups_labeled_, est.groups_unlabeled_
    assert gl.size == 400 and gu.size == 2600
    # shuffled clusters, not rows: the rows of each cluster come together
    for g in (gl, gu):
        starts = np.flatnonzero(np.r_[True, g[1:] != g[:-1]])
        assert starts.size == np.unique(g).size
    ref = rautoeval_test(est.loss_labeled_, est.loss_judge_labeled_, est.loss_judge_unlabeled_,
                         alpha=0.2, delta=0.1, betting="up", groups_labeled=gl,
                         groups_unlabeled=gu)
    assert est.pvalue_ == ref.pvalue
    ci = est.confidence_interval()
    ref_ci = rautoeval_confidence_interval(est.loss_labeled_, est.loss_judge_labeled_,
                                           est.loss_judge_unlabeled_, delta=0.1,
                                           groups_labeled=gl, groups_unlabeled=gu)
    assert (ci.low, ci.high) == (ref_ci.low, ref_ci.high)


def test_singleton_groups_without_shuffle_give_the_ungrouped_fit():
    X, y, _, models, judge = _setup()
    kw = dict(autoevaluator=judge, alpha=0.2, delta=0.1, shuffle=False)
    plain = RAutoEvalPlus(models[0], **kw).fit(X, y)
    single = RAutoEvalPlus(models[0], **kw).fit(X, y, groups=np.arange(len(y)))
    np.testing.assert_allclose(single.result_.log_eprocess, plain.result_.log_eprocess,
                               rtol=1e-12)


def test_fitting_split_keeps_clusters_whole():
    X, y, groups, models, judge = _setup()
    est = RAutoEvalPlus(DecisionTreeClassifier(max_depth=3, random_state=0), method="eval",
                        alpha=0.3, random_state=0).fit(X, y, groups=groups)
    kept = np.unique(est.groups_labeled_)
    assert 0 < kept.size < 40
    for g in kept:  # every labeled row of a kept cluster is in the test part
        assert np.sum(est.groups_labeled_ == g) == np.sum((groups == g) & (y != -1))


def test_cluster_errors_in_fit():
    X, y, groups, models, judge = _setup()
    est = RAutoEvalPlus(models[0], autoevaluator=judge)
    with pytest.raises(ValueError, match="one cluster id per row of X"):
        est.fit(X, y, groups=groups[:-1])
    y2 = y.copy()
    y2[np.flatnonzero(groups == 0)[0]] = -1  # cluster 0: one row unlabeled, the rest labeled
    with pytest.raises(ValueError, match="wholly labeled or wholly unlabeled"):
        est.fit(X, y2, groups=groups)


def test_model_comparison_and_selector_take_groups():
    X, y, groups, models, judge = _setup()
    cmp = ModelComparison(models, autoevaluator=judge, delta=0.1, random_state=3).fit(
        X, y, groups=groups)
    ref = rautoeval_compare(cmp.loss_labeled_, cmp.loss_judge_labeled_, cmp.loss_judge_unlabeled_,
                            delta=0.1, groups_labeled=cmp.groups_labeled_,
                            groups_unlabeled=cmp.groups_unlabeled_)
    np.testing.assert_array_equal(cmp.pvalues_, ref.pvalues)
    assert cmp.interval_ is not None
    tester = RAutoEvalPlus(None, autoevaluator=judge, alpha=0.3, delta=0.1, random_state=1)
    sel = RiskControlledModelSelector(models, tester=tester, procedure="bonferroni").fit(
        X, y, groups=groups)
    for k, model in enumerate(models):
        one = RAutoEvalPlus(model, autoevaluator=judge, alpha=0.3, delta=0.05,
                            random_state=1).fit(X, y, groups=groups)
        assert sel.pvalues_[k] == one.pvalue_


def test_not_certified_warning_counts_the_clusters():
    X, y, groups, models, judge = _setup()
    est = RAutoEvalPlus(models[1], autoevaluator=judge, alpha=0.01, delta=0.1, random_state=0)
    with pytest.warns(Warning, match=r"400 labeled rows in 40 clusters") as record:
        est.fit(X, y, groups=groups)
    assert not est.certified_
    text = " ".join(str(w.message) for w in record)
    assert "in 40 clusters" in text and "labeled rows)" not in text
