"""Paired comparison of models (issue 27, part 1): rautoeval_difference_interval,
rautoeval_difference_test, rautoeval_compare.

Real properties: the paired procedures are the single-risk ones on the paired losses (checked
against the definition), swapping A and B mirrors the interval, and the guarantees hold in Monte
Carlo with known risks (coverage at n = 50 and at a rare difference; type-I error at the
boundary; family-wise error of the all-pairs comparison when every model has the same risk).
"""

import warnings

import numpy as np
import pytest
from _monte_carlo import slack

from sklearn_riskcontrol import RiskControlWarning
from sklearn_riskcontrol.autoeval import (
    rautoeval_compare,
    rautoeval_confidence_interval,
    rautoeval_difference_interval,
    rautoeval_difference_test,
    rautoeval_test,
)


def _paired_losses(rng, m, risk_a, risk_b, overlap=0.5):
    """0/1 losses of two models on ``m`` items: B copies A's loss on a share ``overlap`` of the
    items and draws its own elsewhere; marginal risks ``risk_a`` and ``risk_b``."""
    a = rng.random(m) < risk_a
    own = (risk_b - overlap * risk_a) / (1.0 - overlap)
    b = np.where(rng.random(m) < overlap, a, rng.random(m) < own)
    return np.c_[a, b].astype(float)


def _judged(rng, L, accuracy=0.9):
    """A judge whose label is wrong on a share ``1 - accuracy`` of the items, which flips both
    models' 0/1 losses there (binary labels)."""
    flip = rng.random(L.shape[0]) > accuracy
    return np.where(flip[:, None], 1.0 - L, L)


def _data(rng, n, N, risk_a, risk_b, accuracy=0.9):
    L, L_unl = _paired_losses(rng, n, risk_a, risk_b), _paired_losses(rng, N, risk_a, risk_b)
    return L, _judged(rng, L, accuracy), _judged(rng, L_unl, accuracy)


def test_interval_is_the_single_risk_interval_of_the_paired_losses():
    rng = np.random.default_rng(0)
    L, G, U = _data(rng, 200, 1000, 0.2, 0.25)
    pair = [(x[:, 0] - x[:, 1] + 1) / 2 for x in (L, G, U)]
    for method in ("plus", "eval"):
        ci = rautoeval_difference_interval(L, G, U, delta=0.1, method=method)
        ref = rautoeval_confidence_interval(*pair, delta=0.1, method=method)
        assert (ci.low, ci.high) == (2 * ref.low - 1, 2 * ref.high - 1)
        res = rautoeval_difference_test(L, G, U, delta=0.1, margin=0.02, method=method)
        ref = rautoeval_test(*pair, alpha=0.49, delta=0.1, method=method)
        assert res.pvalue == ref.pvalue and res.certified == ref.certified


def test_swapping_the_models_mirrors_the_interval_and_the_sign():
    rng = np.random.default_rng(1)
    L, G, U = _data(rng, 300, 3000, 0.15, 0.3)
    ci = rautoeval_difference_interval(L, G, U, delta=0.1)
    swapped = rautoeval_difference_interval(L[:, ::-1], G[:, ::-1], U[:, ::-1], delta=0.1)
    np.testing.assert_allclose([swapped.low, swapped.high], [-ci.high, -ci.low], atol=1e-5)
    assert ci.sign == -1 and swapped.sign == 1


def test_identical_models_give_an_interval_around_zero_and_nothing_certified():
    rng = np.random.default_rng(2)
    a = (rng.random(300) < 0.2).astype(float)
    L = np.c_[a, a]                                      # B's losses are A's
    ci = rautoeval_difference_interval(L, delta=0.1, method="eval")
    assert ci.low < 0 < ci.high and ci.high - ci.low < 0.05
    res = rautoeval_compare(np.c_[L, L[:, 0]], delta=0.1, method="eval")
    assert res.certified_pairs() == []


def _coverage(n, N, risk_a, risk_b, reps, seed):
    rng = np.random.default_rng(seed)
    truth = risk_a - risk_b
    hits = np.zeros((2, reps), dtype=bool)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RiskControlWarning)  # empty intervals are counted
        for r in range(reps):
            L, G, U = _data(rng, n, N, risk_a, risk_b)
            for k, method in enumerate(("plus", "eval")):
                ci = rautoeval_difference_interval(L, G, U, delta=0.1, method=method)
                hits[k, r] = ci.low <= truth <= ci.high
    return hits.mean(axis=1)


@pytest.mark.parametrize("n, N, risk_a, risk_b", [
    (50, 500, 0.2, 0.25),     # few labels
    (200, 2000, 0.03, 0.03),  # a rare loss, no difference
    (200, 2000, 0.02, 0.04),  # a rare difference
])
def test_interval_covers_in_monte_carlo(n, N, risk_a, risk_b):
    reps = 300
    coverage = _coverage(n, N, risk_a, risk_b, reps, seed=n)
    assert np.all(coverage >= 0.9 - slack(0.1, reps)), coverage


@pytest.mark.slow
@pytest.mark.parametrize("n, N, risk_a, risk_b", [
    (50, 500, 0.2, 0.25), (200, 2000, 0.03, 0.03), (200, 2000, 0.02, 0.04), (1000, 10000, 0.1, 0.1),
])
def test_interval_covers_in_monte_carlo_1000_draws(n, N, risk_a, risk_b):
    reps = 1000
    coverage = _coverage(n, N, risk_a, risk_b, reps, seed=10 * n + 1)
    assert np.all(coverage >= 0.9 - slack(0.1, reps)), coverage


@pytest.mark.parametrize("margin", [0.0, -0.05, 0.05])
def test_difference_test_type_one_error_at_the_boundary(margin):
    # risk(A) - risk(B) = -margin exactly: certifying "risk(A) < risk(B) - margin" is an error
    rng = np.random.default_rng(7)
    reps, errors = 300, 0
    risk_b = 0.25
    risk_a = risk_b - margin
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RiskControlWarning)
        for _ in range(reps):
            L, G, U = _data(rng, 150, 1500, risk_a, risk_b)
            errors += rautoeval_difference_test(L, G, U, delta=0.1, margin=margin,
                                                early_stopping=True).certified
    assert errors / reps <= 0.1 + slack(0.1, reps)


def test_all_pairs_family_wise_error_when_all_models_are_equal():
    rng = np.random.default_rng(8)
    reps, any_error = 200, 0
    for _ in range(reps):
        L = (rng.random((200, 4)) < 0.3).astype(float)
        any_error += bool(rautoeval_compare(L, delta=0.1, method="eval").better.any())
    assert any_error / reps <= 0.1 + slack(0.1, reps)


def test_compare_finds_the_best_model_and_uses_holm_over_the_family():
    rng = np.random.default_rng(3)
    L = (rng.random((800, 3)) < [0.05, 0.2, 0.35]).astype(float)
    res = rautoeval_compare(L, delta=0.1, method="eval")
    assert res.certified_pairs() == [(0, 1), (0, 2), (1, 2)]
    assert res.ranking.tolist() == [0, 1, 2]
    assert np.isnan(np.diag(res.pvalues)).all() and res.procedure == "holm"
    # against a baseline: the 2 (K - 1) hypotheses of the baseline's row and column only
    base = rautoeval_compare(L, delta=0.1, method="eval", baseline=1)
    tested = ~np.isnan(base.pvalues)
    assert tested.sum() == 4 and tested[1].sum() == 2 and tested[:, 1].sum() == 2
    assert base.certified_pairs() == [(0, 1), (1, 2)]


def test_errors_name_the_argument():
    L = np.zeros((10, 2))
    with pytest.raises(ValueError, match=r"`loss_labeled` must be a 2-d table of shape \(n_items, 2\)"):
        rautoeval_difference_interval(np.zeros((10, 3)), delta=0.1)
    with pytest.raises(ValueError, match="`loss_judge_labeled` has 9 rows but `loss_labeled` has 10"):
        rautoeval_difference_interval(L, np.zeros((9, 2)), np.zeros((100, 2)), delta=0.1)
    with pytest.raises(ValueError, match=r"`loss_labeled` must lie in \[0, 1\]"):
        rautoeval_difference_test(L + 1.5, delta=0.1)
    with pytest.raises(ValueError, match=r"`margin` must lie in \(-1, 1\)"):
        rautoeval_difference_test(L, delta=0.1, margin=1.0)
    with pytest.raises(ValueError, match="`baseline` must be a model column in 0..1"):
        rautoeval_compare(L, delta=0.1, baseline=2)
    with pytest.raises(ValueError, match="comparing needs at least 2"):
        rautoeval_compare(np.zeros((10, 1)), delta=0.1)


# -- the estimator ---------------------------------------------------------------------------
def _classification_setup():
    from sklearn.datasets import make_classification
    from sklearn.linear_model import LogisticRegression
    from sklearn.tree import DecisionTreeClassifier

    X, y = make_classification(n_samples=4000, n_informative=6, random_state=0)
    models = [DecisionTreeClassifier(max_depth=d, random_state=0).fit(X[:1000], y[:1000])
              for d in (6, 2, 1)]
    judge = LogisticRegression().fit(X[1000:2000], y[1000:2000])
    y_semi = y[2000:].copy()
    y_semi[250:] = -1
    return X[2000:], y_semi, models, judge


def test_model_comparison_is_rautoeval_compare_on_each_models_losses():
    from sklearn_riskcontrol.autoeval import ModelComparison, RAutoEvalPlus, rautoeval_compare

    X, y, models, judge = _classification_setup()
    cmp = ModelComparison(models, autoevaluator=judge, delta=0.1, random_state=3).fit(X, y)
    # the losses are each model's RAutoEvalPlus losses, on one shared order of the rows
    seed = int(np.random.RandomState(3).randint(np.iinfo(np.int32).max))
    for k, model in enumerate(models):
        ref = RAutoEvalPlus(model, autoevaluator=judge, alpha=0.5, random_state=seed).fit(X, y)
        np.testing.assert_array_equal(cmp.loss_labeled_[:, k], ref.loss_labeled_)
        np.testing.assert_array_equal(cmp.loss_judge_unlabeled_[:, k], ref.loss_judge_unlabeled_)
    ref = rautoeval_compare(cmp.loss_labeled_, cmp.loss_judge_labeled_, cmp.loss_judge_unlabeled_,
                            delta=0.1)
    np.testing.assert_array_equal(cmp.pvalues_, ref.pvalues)
    assert cmp.decide() is cmp.better_ and cmp.certified_pairs_ == ref.certified_pairs()
    assert (0, 2) in cmp.certified_pairs_ and cmp.interval_ is None  # depth 6 beats a stump


def test_model_comparison_refuses_unfitted_models_and_checks_its_parameters():
    from sklearn.linear_model import LogisticRegression
    from sklearn.utils.estimator_checks import (
        check_get_params_invariance,
        check_no_attributes_set_in_init,
        check_set_params,
    )

    from sklearn_riskcontrol.autoeval import ModelComparison

    X, y, models, judge = _classification_setup()
    with pytest.raises(ValueError, match=r"estimators \[1\] is not fitted.*FrozenEstimator"):
        ModelComparison([models[0], LogisticRegression()], autoevaluator=judge).fit(X, y)
    with pytest.raises(ValueError, match="comparing needs at least 2"):
        ModelComparison(models[:1], method="eval").fit(X, y)
    est = ModelComparison(models, autoevaluator=judge)
    for check in (check_no_attributes_set_in_init, check_get_params_invariance, check_set_params):
        check("ModelComparison", est)


# -- the session ------------------------------------------------------------------------------
def test_session_runs_the_two_one_sided_batch_tests_at_half_delta():
    from sklearn_riskcontrol.autoeval import ComparisonSession

    rng = np.random.default_rng(4)
    L, G, U = _data(rng, 120, 1200, 0.15, 0.25)
    session = ComparisonSession(U, delta=0.1, max_labels=120)
    for start in range(0, 120, 30):                      # batches of any size
        session.add(L[start:start + 30], G[start:start + 30])
    pair = [(x[:, 0] - x[:, 1] + 1) / 2 for x in (L, G, U)]
    r = session.block_size
    for track, flip in ((0, False), (1, True)):
        h, g, u = (1 - p if flip else p for p in pair)
        ref = rautoeval_test(h, g, u[: 120 * r], alpha=0.5, delta=0.05)
        np.testing.assert_array_equal(session._tracks[track].result().log_eprocess,
                                      ref.log_eprocess)


def _session_wrong_signs(reps, seed):
    # risk(A) = risk(B): any certified sign is wrong; stop at the first certification
    from sklearn_riskcontrol.autoeval import ComparisonSession

    rng = np.random.default_rng(seed)
    wrong = 0
    for _ in range(reps):
        L, G, U = _data(rng, 200, 2000, 0.2, 0.2)
        session = ComparisonSession(U, delta=0.1, max_labels=200, betting="wsr")
        for start in range(0, 200, 25):
            status = session.add(L[start:start + 25], G[start:start + 25])
            if status.done:
                break
        wrong += status.decision in ("A better", "B better")
    return wrong / reps


def test_session_wrong_sign_rate_at_equal_risks():
    reps = 120
    assert _session_wrong_signs(reps, seed=5) <= 0.1 + slack(0.1, reps)


@pytest.mark.slow
def test_session_wrong_sign_rate_at_equal_risks_1000_draws():
    reps = 1000
    assert _session_wrong_signs(reps, seed=15) <= 0.1 + slack(0.1, reps)


def test_session_store_skips_a_resent_batch_and_resumes(tmp_path):
    from sklearn_riskcontrol.autoeval import ComparisonSession

    rng = np.random.default_rng(6)
    L, G, U = _data(rng, 60, 600, 0.1, 0.3)
    path = tmp_path / "cmp.db"
    ids = [f"q{k}" for k in range(60)]
    with ComparisonSession(U, delta=0.1, max_labels=60, store=path) as s:
        s.add(L[:30], G[:30], example_ids=ids[:30])
        s.add(L[:30], G[:30], example_ids=ids[:30])      # re-sent after a "crash": skipped
        assert s.n_labels == 30
    with ComparisonSession(U, delta=0.1, max_labels=60, store=path) as s:
        assert s.n_labels == 30
        status = s.add(L[30:], G[30:], example_ids=ids[30:])
    fresh = ComparisonSession(U, delta=0.1, max_labels=60)
    assert fresh.add(L, G).a_better.pvalue == status.a_better.pvalue
    with pytest.raises(ValueError, match="another run|configuration"):
        ComparisonSession(U, delta=0.2, max_labels=60, store=path)
    with pytest.raises(ValueError, match=r"`margin` must lie in \[0, 1\)"):
        ComparisonSession(U, delta=0.1, margin=-0.1)
    with pytest.raises(ValueError, match=r"`loss_judge_unlabeled` must be a 2-d table of shape \(n_items, 2\)"):
        ComparisonSession(U[:, :1], delta=0.1)


def test_b_losses_all_zero_give_the_single_risk_test_of_a():
    # R_A - 0 <= -margin with margin = -alpha is R_A <= alpha: the same e-process for R-Eval
    # with universal-portfolio bets (they scale with the observations; module docstring)
    rng = np.random.default_rng(11)
    h = (rng.random(300) < 0.1).astype(float)
    res = rautoeval_difference_test(np.c_[h, np.zeros(300)], delta=0.1, margin=-0.2,
                                    method="eval", betting="up")
    ref = rautoeval_test(h, alpha=0.2, delta=0.1, method="eval", betting="up")
    assert res.pvalue == pytest.approx(ref.pvalue, rel=1e-10)
    assert res.certified == ref.certified
