"""Clustered items (issue 27, part 2): groups_labeled / groups_unlabeled on the array functions."""

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
from sklearn_riskcontrol.autoeval import _clusters
from sklearn_riskcontrol.autoeval._arrays import _PLUGIN_CAP, _PLUGIN_RHO, _plugin_rounds

# Documents of 5 to 25 questions whose risk grows with their size: the item-level risk
# E[S] / E[M] = 0.2 E[M^2] / (25 E[M]) differs from the mean of the document risks (0.12).
SIZE_LOW, SIZE_HIGH = 5, 25
_M = np.arange(SIZE_LOW, SIZE_HIGH + 1)
VARIED_RISK = 0.2 * np.mean(_M**2) / (SIZE_HIGH * np.mean(_M))


def _documents(rng, n_docs, questions=25, a=0.5, b=2.0, flip=0.1, varied=False, start=0):
    """Losses, judge losses and document ids of ``n_docs`` documents with Beta document risks
    (item risk a / (a + b) with equal sizes, ``VARIED_RISK`` with ``varied=True``)."""
    p = rng.beta(a, b, n_docs)  # strong document effect
    if varied:
        sizes = rng.integers(SIZE_LOW, SIZE_HIGH + 1, n_docs)
        p = p * sizes / SIZE_HIGH
    else:
        sizes = np.full(n_docs, questions)
    ids = np.repeat(np.arange(start, start + n_docs), sizes)
    L = (rng.random(ids.size) < p[ids - start]).astype(float)
    J = np.where(rng.random(L.size) < flip, 1 - L, L)
    return L, J, ids


def test_singleton_clusters_give_the_item_test():
    rng = np.random.default_rng(0)
    h = (rng.random(300) < 0.1).astype(float)
    g = np.where(rng.random(300) < 0.9, h, 1 - h)
    u = (rng.random(3000) < 0.1).astype(float)
    plain = rautoeval_test(h, g, u, alpha=0.2, delta=0.1)
    clustered = rautoeval_test(h, g, u, alpha=0.2, delta=0.1, groups_labeled=np.arange(300),
                               groups_unlabeled=np.arange(300, 3300))
    np.testing.assert_allclose(clustered.log_eprocess, plain.log_eprocess, rtol=1e-12)


@pytest.mark.parametrize("method", ["eval", "autoeval", "plus"])
def test_singleton_clusters_give_the_item_interval_exactly(method):
    rng = np.random.default_rng(1)
    h = (rng.random(300) < 0.1).astype(float)
    g = np.where(rng.random(300) < 0.9, h, 1 - h)
    u = (rng.random(3000) < 0.1).astype(float)
    plain = rautoeval_confidence_interval(h, g, u, delta=0.1, method=method)
    clustered = rautoeval_confidence_interval(
        h, g, u, delta=0.1, method=method, groups_labeled=np.arange(300),
        groups_unlabeled=np.arange(300, 3300))
    assert (clustered.low, clustered.high) == (plain.low, plain.high)


@pytest.mark.parametrize("use_judge", [False, True])
def test_general_construction_agrees_with_the_one_size_path(use_judge):
    """Equal sizes take today's construction on the cluster means; the general (ratio)
    construction, forced by declaring a smaller minimum size, gives the same bounds."""
    rng = np.random.default_rng(2)
    L, J, g = _documents(rng, 40)
    _, Ju, gu = _documents(rng, 400, start=40)
    t = _clusters.cluster_tables(L, J, Ju, g, gu)
    forced = dict(t, min_size=t["min_size"] * (1 - 1e-12))
    for side in ("upper", "lower"):
        a = _clusters.clustered_bound(t, use_judge, _PLUGIN_RHO, side, 0.05, 1e-8)
        b = _clusters.clustered_bound(forced, use_judge, _PLUGIN_RHO, side, 0.05, 1e-8)
        assert abs(a - b) < 1e-7


def _brute_force_log_wealth(alpha, L, J, Ju, g, gu, level):
    """The upper side's log-wealth at ``alpha`` from its definition: the cluster observations
    ``x_t = h'_t + rho_t (mean of the block's u' - g'_t)`` at this ``alpha``, a loop over the
    clusters, bets ``min(s_t, kappa_t(alpha))``."""
    t = _clusters.cluster_tables(L, J, Ju, g, gu)
    _, _, s, rho_t, r_t = _clusters.cluster_rounds(t, True, _PLUGIN_RHO, level, _plugin_rounds)
    h, gg, u = _clusters.clustered_losses(alpha, L, J, Ju, g, gu)
    n, r = h.size, u.size // h.size
    logw, out = 0.0, []
    for i in range(n):
        x = h[i] + rho_t[i] * (u[i * r:(i + 1) * r].mean() - gg[i])
        kappa = _PLUGIN_CAP * r_t[i] / ((1 + rho_t[i]) * (r_t[i] - alpha))
        lam = min(s[i], kappa)
        assert 1 + lam * (alpha - x) >= 1 - _PLUGIN_CAP - 1e-12   # never below 1 - c
        logw += np.log1p(lam * (alpha - x))
        out.append(logw)
    return max(out)


def test_interval_is_the_brute_force_inversion_of_the_clustered_test():
    rng = np.random.default_rng(3)
    L, J, g = _documents(rng, 40, varied=True)
    _, Ju, gu = _documents(rng, 200, varied=True, start=40)
    ci = rautoeval_confidence_interval(L, J, Ju, delta=0.1, side="upper", groups_labeled=g,
                                       groups_unlabeled=gu, tol=1e-7)
    grid = np.linspace(0.0, 0.999, 1000)
    wealth = np.array([_brute_force_log_wealth(a, L, J, Ju, g, gu, 0.1) for a in grid])
    assert np.all(np.diff(wealth) >= -1e-9)  # monotone in alpha, as proved
    rejected = grid[wealth >= np.log(1 / 0.1)]
    first = rejected[0]
    assert first - 1e-3 <= ci.high <= first + 1e-7  # the grid's first rejected level
    assert _brute_force_log_wealth(ci.high, L, J, Ju, g, gu, 0.1) >= np.log(10) - 1e-9
    assert _brute_force_log_wealth(ci.high - 2e-7, L, J, Ju, g, gu, 0.1) < np.log(10)


def _coverage(reps, seed, n_docs=40, n_unlabeled=200, varied=True, delta=0.1):
    rng = np.random.default_rng(seed)
    truth = VARIED_RISK if varied else 0.2
    hit = hit_iid = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RiskControlWarning)
        for _ in range(reps):
            L, J, g = _documents(rng, n_docs, varied=varied)
            _, Ju, gu = _documents(rng, n_unlabeled, varied=varied, start=n_docs)
            ci = rautoeval_confidence_interval(L, J, Ju, delta=delta, groups_labeled=g,
                                               groups_unlabeled=gu)
            hit += ci.low <= truth <= ci.high
            perm, permu = rng.permutation(L.size), rng.permutation(Ju.size)
            iid = rautoeval_confidence_interval(L[perm], J[perm], Ju[permu], delta=delta)
            hit_iid += iid.low <= truth <= iid.high
    return hit / reps, hit_iid / reps


def test_clustered_interval_covers_where_the_item_interval_does_not():
    reps = 150
    cov, cov_iid = _coverage(reps, seed=4)
    assert cov >= 0.9 - slack(0.1, reps)
    assert cov_iid < 0.85  # why groups are needed: items treated as i.i.d. undercover


@pytest.mark.slow
def test_clustered_interval_coverage_1000_draws():
    reps = 1000
    cov, _ = _coverage(reps, seed=5)
    assert cov >= 0.9 - slack(0.1, reps)
    cov, _ = _coverage(reps, seed=6, varied=False)
    assert cov >= 0.9 - slack(0.1, reps)


def test_clustered_type_one_error_at_the_boundary_where_the_item_test_fails():
    rng = np.random.default_rng(1)
    reps, clustered, items = 200, 0, 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RiskControlWarning)
        for _ in range(reps):
            L, J, g = _documents(rng, 40)           # item risk exactly alpha = 0.2
            _, Ju, gu = _documents(rng, 400, start=40)
            clustered += rautoeval_test(L, J, Ju, alpha=0.2, delta=0.1, groups_labeled=g,
                                        groups_unlabeled=gu).certified
            perm, permu = rng.permutation(L.size), rng.permutation(Ju.size)
            items += rautoeval_test(L[perm], J[perm], Ju[permu], alpha=0.2, delta=0.1).certified
    assert clustered / reps <= 0.1 + slack(0.1, reps)
    assert items / reps > 0.15  # why groups are needed: the item test is invalid here


def _paired_documents(rng, n_docs, start=0):
    """Two models on the same documents (A's document risk 0.05 lower), judge flips 10%."""
    L, _, ids = _documents(rng, n_docs, varied=True, start=start)
    p = rng.random(L.size)
    LA = np.where(p < 0.25, 0.0, L)            # A fixes a quarter of B's errors
    table = np.stack([LA, L], axis=1)
    flip = rng.random(L.size) < 0.1
    return table, np.where(flip[:, None], 1 - table, table), ids


def test_paired_functions_take_groups():
    rng = np.random.default_rng(7)
    h, g, ids = _paired_documents(rng, 40)
    _, u, ids_u = _paired_documents(rng, 200, start=40)
    kw = dict(groups_labeled=ids, groups_unlabeled=ids_u)
    ci = rautoeval_difference_interval(h, g, u, delta=0.1, **kw)
    paired = [(t[:, 0] - t[:, 1] + 1) / 2 for t in (h, g, u)]
    one = rautoeval_confidence_interval(*paired, delta=0.1, **kw)
    assert (ci.low, ci.high) == (2 * one.low - 1, 2 * one.high - 1)
    res = rautoeval_difference_test(h, g, u, delta=0.1, margin=-0.1, **kw)
    ref = rautoeval_test(*paired, alpha=0.55, delta=0.1, **kw)
    assert res.pvalue == ref.pvalue
    cmp = rautoeval_compare(h, g, u, delta=0.1, margin=-0.1, **kw)
    assert cmp.pvalues[0, 1] == res.pvalue
    # singleton clusters: the paired interval without groups
    single = rautoeval_difference_interval(h, g, u, delta=0.1, groups_labeled=np.arange(len(h)),
                                           groups_unlabeled=np.arange(len(h), len(h) + len(u)))
    plain = rautoeval_difference_interval(h, g, u, delta=0.1)
    assert (single.low, single.high) == (plain.low, plain.high)


def test_clustered_difference_interval_covers():
    rng = np.random.default_rng(8)
    reps, hit = 100, 0
    truth = -0.25 * VARIED_RISK
    for _ in range(reps):
        h, g, ids = _paired_documents(rng, 40)
        _, u, ids_u = _paired_documents(rng, 200, start=40)
        ci = rautoeval_difference_interval(h, g, u, delta=0.1, groups_labeled=ids,
                                           groups_unlabeled=ids_u)
        hit += ci.low <= truth <= ci.high
    assert hit / reps >= 0.9 - slack(0.1, reps)


def test_cluster_errors_name_the_argument():
    L, J, g = _documents(np.random.default_rng(2), 5)
    with pytest.raises(ValueError, match="one cluster id per row"):
        rautoeval_test(L, alpha=0.2, delta=0.1, method="eval", groups_labeled=g[:-1])
    with pytest.raises(ValueError, match="`groups_unlabeled` is required"):
        rautoeval_test(L, J, J, alpha=0.2, delta=0.1, groups_labeled=g)
    with pytest.raises(ValueError, match="smaller than the largest cluster"):
        rautoeval_test(L, alpha=0.2, delta=0.1, method="eval", groups_labeled=g,
                       max_group_size=10)
    with pytest.raises(ValueError, match="wholly labeled or wholly unlabeled"):
        rautoeval_confidence_interval(L, J, J, delta=0.1, groups_labeled=g, groups_unlabeled=g)
    with pytest.raises(ValueError, match="construction='plugin'"):
        rautoeval_confidence_interval(L, delta=0.1, method="eval", groups_labeled=g,
                                      construction="paper")
    with pytest.raises(ValueError, match="without unlabeled rows"):
        rautoeval_confidence_interval(L, delta=0.1, method="eval", groups_labeled=g,
                                      groups_unlabeled=g)


def test_select_runs_each_candidate_on_its_clusters():
    from sklearn_riskcontrol.autoeval import rautoeval_select

    rng = np.random.default_rng(9)
    L, J, g = _documents(rng, 40)
    _, Ju, gu = _documents(rng, 400, start=40)
    H, Gj, U = (np.stack([x, 0.5 * x]) for x in (L, J, Ju))
    kw = dict(groups_labeled=g, groups_unlabeled=gu)
    sel = rautoeval_select(H, Gj, U, alpha=0.2, delta=0.1, procedure="bonferroni", **kw)
    for k in range(2):
        one = rautoeval_test(H[k], Gj[k], U[k], alpha=0.2, delta=0.05, **kw)
        assert sel.pvalues[k] == one.pvalue


def test_clusters_take_one_judge_column():
    L, J, g = _documents(np.random.default_rng(3), 5)
    _, Ju, gu = _documents(np.random.default_rng(4), 10)
    with pytest.raises(ValueError, match="2 judge columns: clustered items"):
        rautoeval_test(L, np.c_[J, J], np.c_[Ju, Ju], alpha=0.2, delta=0.1, groups_labeled=g,
                       groups_unlabeled=gu + 100)
    one = rautoeval_test(L, J[:, None], Ju[:, None], alpha=0.2, delta=0.1, groups_labeled=g,
                         groups_unlabeled=gu + 100)
    ref = rautoeval_test(L, J, Ju, alpha=0.2, delta=0.1, groups_labeled=g,
                         groups_unlabeled=gu + 100)
    assert one.pvalue == ref.pvalue
