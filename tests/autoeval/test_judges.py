"""Several judges (issue 27, part 3): judge losses of shape (n, k) and (N, k).

Reductions (one column is one judge, a reliance vector that ignores a judge is the other judge
alone), the observations against their definition, validity in Monte Carlo with adversarial
judges (reduced default; 1000 draws under ``slow``), the paired functions' judge axis, errors.
"""

import warnings

import numpy as np
import pytest
from _monte_carlo import slack

from sklearn_riskcontrol import RiskControlWarning
from sklearn_riskcontrol.autoeval import (
    effective_observations,
    rautoeval_compare,
    rautoeval_confidence_interval,
    rautoeval_difference_interval,
    rautoeval_difference_test,
    rautoeval_test,
)
from sklearn_riskcontrol.autoeval._arrays import _plugin_grid, _simplex_grid, _test_grid

DELTA = 0.1


def judged(rng, h, kind):
    """0/1 judge losses of items with true 0/1 losses ``h``."""
    if kind == "anti":  # anti-informative: wrong exactly where the truth is right
        return 1.0 - h
    if kind == "labelcorr":  # same marginal as h at risk .25, errors depend on the loss
        return (rng.random(h.size) < np.where(h > 0.5, 0.4, 0.2)).astype(float)
    if kind == "coin":
        return (rng.random(h.size) < 0.5).astype(float)
    return np.where(rng.random(h.size) < kind, h, 1.0 - h)  # accuracy ``kind``


def data(rng, n, N, kinds, risk=0.25):
    h = (rng.random(n) < risk).astype(float)
    hu = (rng.random(N) < risk).astype(float)
    G = np.column_stack([judged(rng, h, k) for k in kinds])
    U = np.column_stack([judged(rng, hu, k) for k in kinds])
    return h, G, U


def test_simplex_grids():
    w = _simplex_grid(3, 4)
    assert w.shape == (35, 3) and np.all(w >= 0) and np.all(w.sum(axis=1) <= 1 + 1e-12)
    assert len({tuple(r) for r in w}) == 35  # all distinct: every point of the grid once
    assert np.allclose(np.sort(_simplex_grid(1, 9).ravel()), np.linspace(0, 1, 10))
    assert _test_grid(2, 10).shape == (55, 2)  # step 1/9
    assert _test_grid(3, 10).shape[0] <= 100 and _plugin_grid(2).shape == (231, 2)
    for k in (2, 3, 4):
        assert _plugin_grid(k).shape[0] <= 300
        assert np.any(np.all(_plugin_grid(k) == np.eye(k)[0], axis=1))  # vertices included


def test_one_column_is_one_judge():
    rng = np.random.default_rng(0)
    h, G, U = data(rng, 150, 900, [0.8])
    one = rautoeval_test(h, G[:, 0], U[:, 0], alpha=0.35, delta=DELTA)
    col = rautoeval_test(h, G, U, alpha=0.35, delta=DELTA)
    for name in ("log_eprocess", "log_wealth", "bets", "rho_grid", "rho_weights"):
        np.testing.assert_array_equal(getattr(one, name), getattr(col, name))
    for construction in ("plugin", "paper"):
        a = rautoeval_confidence_interval(h, G[:, 0], U[:, 0], delta=DELTA,
                                          construction=construction)
        b = rautoeval_confidence_interval(h, G, U, delta=DELTA, construction=construction)
        assert a == b
    np.testing.assert_array_equal(effective_observations(h, G, U, [0, 0.5]),
                                  effective_observations(h, G[:, 0], U[:, 0], [0, 0.5]))


def test_observations_match_their_definition():
    rng = np.random.default_rng(1)
    h, G, U = data(rng, 40, 130, [0.8, 0.6, "coin"])  # r = 3, one leftover row dropped
    W = np.array([[0.2, 0.3, 0.5], [0.0, 0.0, 0.0], [1.0, 0.0, 0.0]])
    q = effective_observations(h, G, U, W)
    ubar = U[:120].reshape(40, 3, 3).mean(axis=1)
    for s, w in enumerate(W):
        want = h + sum(w[j] * (ubar[:, j] - G[:, j]) for j in range(3))
        np.testing.assert_allclose(q[s], want, rtol=0, atol=1e-14)
    np.testing.assert_allclose(effective_observations(h, G, U, W[0]), q[:1], rtol=0, atol=1e-14)


def test_a_vector_that_ignores_a_judge_is_the_other_judge_alone():
    rng = np.random.default_rng(2)
    h, G, U = data(rng, 120, 1200, [0.85, "coin"])
    grid = np.linspace(0, 1, 7)
    W = np.column_stack([grid, np.zeros_like(grid)])
    one = rautoeval_test(h, G[:, 0], U[:, 0], alpha=0.4, delta=DELTA, rho_grid=grid)
    two = rautoeval_test(h, G, U, alpha=0.4, delta=DELTA, rho_grid=W)
    np.testing.assert_allclose(two.log_eprocess, one.log_eprocess, rtol=0, atol=1e-12)
    paper1 = rautoeval_confidence_interval(h, G[:, 0], U[:, 0], delta=DELTA, rho_grid=grid,
                                           construction="paper")
    paper2 = rautoeval_confidence_interval(h, G, U, delta=DELTA, rho_grid=W, construction="paper")
    assert abs(paper1.low - paper2.low) <= 1e-12 and abs(paper1.high - paper2.high) <= 1e-12
    # n <= 128: the plug-in rules re-select at every round for one judge and for several
    plug1 = rautoeval_confidence_interval(h, G[:, 0], U[:, 0], delta=DELTA, rho_grid=grid)
    plug2 = rautoeval_confidence_interval(h, G, U, delta=DELTA, rho_grid=W)
    assert abs(plug1.low - plug2.low) <= 1e-9 and abs(plug1.high - plug2.high) <= 1e-9


def test_methods_with_several_judges():
    rng = np.random.default_rng(3)
    h, G, U = data(rng, 100, 500, [0.8, 0.7])
    ev = rautoeval_test(h, G, U, alpha=0.4, delta=DELTA, method="eval")
    np.testing.assert_array_equal(ev.log_eprocess,
                                  rautoeval_test(h, alpha=0.4, delta=DELTA,
                                                 method="eval").log_eprocess)
    ae = rautoeval_test(h, G, U, alpha=0.4, delta=DELTA, method="autoeval")
    np.testing.assert_array_equal(ae.rho_grid, [[0.5, 0.5]])  # the judges' mean, rho = 1
    assert rautoeval_test(h, G, U, alpha=0.4, delta=DELTA).rho_grid.shape == (55, 2)


def _coverage(kinds, reps, n, N, seed):
    rng = np.random.default_rng(seed)
    hits = 0
    for _ in range(reps):
        h, G, U = data(rng, n, N, kinds)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RiskControlWarning)
            ci = rautoeval_confidence_interval(h, G, U, delta=DELTA)
        hits += ci.low <= 0.25 <= ci.high
    return hits / reps


KINDS = [[0.75, 0.75], [0.9, "anti"], [0.9, "labelcorr"], ["anti", "labelcorr", 0.6]]


@pytest.mark.parametrize("kinds", KINDS, ids=lambda k: "+".join(map(str, k)))
def test_interval_covers_with_any_judges(kinds):
    reps = 150
    miss = 1 - _coverage(kinds, reps, 60, 300, seed=hash(tuple(map(str, kinds))) % 2**32)
    assert miss <= DELTA + slack(DELTA, reps)


@pytest.mark.slow
@pytest.mark.parametrize("kinds", KINDS, ids=lambda k: "+".join(map(str, k)))
def test_interval_covers_with_any_judges_1000_draws(kinds):
    reps = 1000
    miss = 1 - _coverage(kinds, reps, 200, 2000, seed=7)
    assert miss <= DELTA + slack(DELTA, reps)


@pytest.mark.parametrize("kinds", [[0.9, "anti"], [0.75, 0.75, "labelcorr"]],
                         ids=lambda k: "+".join(map(str, k)))
def test_type_one_error_at_the_boundary(kinds):
    """Risk .25 = alpha: the mixture test certifies at most delta of the time."""
    rng = np.random.default_rng(11)
    reps = 200
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RiskControlWarning)
        hits = sum(rautoeval_test(*data(rng, 80, 400, kinds), alpha=0.25, delta=DELTA,
                                  betting="wsr").certified for _ in range(reps))
    assert hits / reps <= DELTA + slack(DELTA, reps)


def test_two_independent_judges_give_narrower_intervals_than_either():
    rng = np.random.default_rng(5)
    diffs = []
    for _ in range(25):
        h, G, U = data(rng, 200, 2000, [0.75, 0.75])
        both = rautoeval_confidence_interval(h, G, U, delta=DELTA)
        alone = [rautoeval_confidence_interval(h, G[:, j], U[:, j], delta=DELTA)
                 for j in (0, 1)]
        diffs.append([(both.high - both.low) - (a.high - a.low) for a in alone])
    diffs = np.array(diffs)
    # paired mean differences below zero by more than 2 standard errors
    assert np.all(diffs.mean(axis=0) + 2 * diffs.std(axis=0, ddof=1) / 5 < 0)


def test_paired_functions_take_a_judge_axis():
    rng = np.random.default_rng(6)
    L = (rng.random((150, 2)) < [0.2, 0.3]).astype(float)
    Lu = (rng.random((1500, 2)) < [0.2, 0.3]).astype(float)

    def judge(x, acc):
        flip = rng.random(x.shape[0]) > acc
        return np.where(flip[:, None], 1 - x, x)

    G = np.stack([judge(L, 0.8), judge(L, 0.75)], axis=2)
    U = np.stack([judge(Lu, 0.8), judge(Lu, 0.75)], axis=2)
    ci = rautoeval_difference_interval(L, G, U, delta=DELTA)
    paired = rautoeval_confidence_interval((L[:, 0] - L[:, 1] + 1) / 2,
                                           (G[:, 0] - G[:, 1] + 1) / 2,
                                           (U[:, 0] - U[:, 1] + 1) / 2, delta=DELTA)
    assert (ci.low, ci.high) == (2 * paired.low - 1, 2 * paired.high - 1)
    assert rautoeval_difference_interval(L, G[:, :, :1], U[:, :, :1], delta=DELTA) == \
        rautoeval_difference_interval(L, G[:, :, 0], U[:, :, 0], delta=DELTA)
    t = rautoeval_difference_test(L, G, U, delta=DELTA, margin=-0.05)
    assert t.result.rho_grid.shape == (55, 2)
    cmp = rautoeval_compare(np.c_[L, L[:, :1]], np.concatenate([G, G[:, :1]], axis=1),
                            np.concatenate([U, U[:, :1]], axis=1), delta=DELTA)
    assert np.isclose(cmp.pvalues[0, 1], rautoeval_difference_test(L, G, U,
                                                                   delta=DELTA).pvalue)


def test_errors_name_the_fix():
    rng = np.random.default_rng(8)
    h, G, U = data(rng, 50, 200, [0.8, 0.7])
    with pytest.raises(ValueError, match="same judges, in the same column order"):
        rautoeval_test(h, G, U[:, :1], alpha=0.3, delta=DELTA)
    with pytest.raises(ValueError, match="same examples, in the same order"):
        rautoeval_test(h, G[:-1], U, alpha=0.3, delta=DELTA)
    with pytest.raises(ValueError, match=r"shape \(S, 2\)"):
        rautoeval_test(h, G, U, alpha=0.3, delta=DELTA, rho_grid=[[0.7, 0.7]])
    with pytest.raises(ValueError, match=r"must lie in \[0, 1\]"):
        rautoeval_test(h, G * 2, U, alpha=0.3, delta=DELTA)
    L = np.c_[h, h]
    with pytest.raises(ValueError, match="axis 2: the judges"):
        rautoeval_difference_interval(L, np.zeros((50, 3, 2)), np.zeros((200, 3, 2)),
                                      delta=DELTA)
    with pytest.raises(ValueError, match="the same judges"):
        rautoeval_difference_interval(L, np.zeros((50, 2, 2)), np.zeros((200, 2, 3)),
                                      delta=DELTA)


def test_estimator_takes_a_list_of_judges():
    from sklearn.datasets import make_classification
    from sklearn.linear_model import LogisticRegression
    from sklearn.tree import DecisionTreeClassifier

    from sklearn_riskcontrol.autoeval import RAutoEvalPlus

    X, y = make_classification(1500, n_features=6, random_state=0)
    model = LogisticRegression().fit(X[:300], y[:300])
    j1 = DecisionTreeClassifier(max_depth=5, random_state=0).fit(X[300:700], y[300:700])
    j2 = DecisionTreeClassifier(max_depth=2, random_state=0).fit(X[300:700], y[300:700])
    Xe, ye = X[700:], y[700:].copy()
    ye[150:] = -1
    est = RAutoEvalPlus(model, autoevaluator=[j1, j2], alpha=0.3, delta=DELTA,
                        random_state=0).fit(Xe, ye)
    lab, unl = est.labeled_indices_, est.unlabeled_indices_
    pred = model.predict(Xe)
    want_g = np.column_stack([j.predict(Xe[lab]) != pred[lab] for j in (j1, j2)])
    want_u = np.column_stack([j.predict(Xe[unl]) != pred[unl] for j in (j1, j2)])
    np.testing.assert_array_equal(est.loss_judge_labeled_, want_g)
    np.testing.assert_array_equal(est.loss_judge_unlabeled_, want_u)
    direct = rautoeval_test(est.loss_labeled_, want_g, want_u, alpha=0.3, delta=DELTA)
    assert est.pvalue_ == direct.pvalue and est.n_unlabeled_ == unl.size
    single = RAutoEvalPlus(model, autoevaluator=j1, alpha=0.3, delta=DELTA,
                           random_state=0).fit(Xe, ye)
    listed = RAutoEvalPlus(model, autoevaluator=[j1], alpha=0.3, delta=DELTA,
                           random_state=0).fit(Xe, ye)
    assert listed.pvalue_ == single.pvalue_
    with pytest.raises(ValueError, match="entries \\[1\\] are neither"):
        RAutoEvalPlus(model, autoevaluator=[j1, "judge"], alpha=0.3).fit(Xe, ye)


def test_model_comparison_takes_a_list_of_judges():
    from sklearn.datasets import make_classification
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import train_test_split
    from sklearn.tree import DecisionTreeClassifier

    from sklearn_riskcontrol.autoeval import ModelComparison

    X, y = make_classification(1500, n_features=6, random_state=0)
    X_fit, X_eval, y_fit, y_eval = train_test_split(X, y, train_size=500, random_state=0)
    models = [LogisticRegression().fit(X_fit, y_fit),
              DecisionTreeClassifier(max_depth=2, random_state=0).fit(X_fit, y_fit)]
    judges = [DecisionTreeClassifier(max_depth=d, random_state=1).fit(X_fit, y_fit)
              for d in (3, 6)]
    y_semi = np.where(np.random.default_rng(0).permutation(y_eval.size) < 200, y_eval, -1)
    cmp = ModelComparison(models, autoevaluator=judges, delta=DELTA,
                          random_state=0).fit(X_eval, y_semi)
    assert cmp.loss_judge_labeled_.shape == (200, 2, 2)
    assert cmp.loss_judge_unlabeled_.shape == (800, 2, 2)
    ci = rautoeval_difference_interval(cmp.loss_labeled_, cmp.loss_judge_labeled_,
                                       cmp.loss_judge_unlabeled_, delta=DELTA)
    assert (cmp.interval_.low, cmp.interval_.high) == (ci.low, ci.high)
    alone = ModelComparison(models, autoevaluator=judges[0], delta=DELTA,
                            random_state=0).fit(X_eval, y_semi)
    np.testing.assert_array_equal(alone.loss_judge_labeled_, cmp.loss_judge_labeled_[:, :, 0])
