"""R-Eval / R-AutoEval / R-AutoEval+ on loss arrays (sklearn_riskcontrol.autoeval._arrays)."""

import warnings

import numpy as np
import pytest

from _monte_carlo import slack
from sklearn_riskcontrol import RiskControlWarning
from sklearn_riskcontrol.autoeval import (
    _arrays as A,
    effective_observations,
    rautoeval_confidence_interval,
    rautoeval_select,
    rautoeval_test,
)
from sklearn_riskcontrol.evalues.betting import UniversalPortfolio, WSR, betting_eprocess


def toy(rng, n, risk=0.1, gamma=0.9, r=5, continuous=False):
    """Paper's Example 1 (binary loss, judge right w.p. gamma) or a continuous variant."""
    if continuous:
        def draw(size):
            return rng.beta(1, (1 - risk) / risk, size)

        def judge(x):
            return np.clip(x + (1 - gamma) * rng.standard_normal(x.size), 0, 1)
    else:
        def draw(size):
            return rng.binomial(1, risk, size).astype(float)

        def judge(x):
            return np.where(rng.random(x.size) < gamma, x, 1 - x)
    h = draw(n)
    return h, judge(h), judge(draw(n * r))


# --------------------------------------------------------------------- observations
def test_effective_observations_use_blocks_in_order_and_drop_leftovers():
    h = np.array([0.0, 1.0, 0.5])
    g = np.array([1.0, 1.0, 0.0])
    u = np.arange(11) / 10  # N = 11, r = 3, leftovers 0.9 and 1.0 dropped
    q = effective_observations(h, g, u, rho=[0.0, 0.25, 1.0])
    ubar = np.array([0.1, 0.4, 0.7])
    for s, rho in enumerate([0.0, 0.25, 1.0]):
        np.testing.assert_allclose(q[s], h + rho * (ubar - g))


# ------------------------------------------------------------------- the mixture
@pytest.mark.parametrize("betting", ["up", "wsr"])
def test_mixture_equals_weighted_sum_of_per_rho_eprocesses(betting):
    rng = np.random.default_rng(0)
    h, g, u = toy(rng, 120, continuous=True)
    prior = rng.random(10) + 0.1
    res = rautoeval_test(h, g, u, alpha=0.2, delta=0.1, betting=betting, rho_prior=prior)
    w0 = prior / prior.sum()
    np.testing.assert_allclose(res.rho_prior, w0)
    direct = np.log(np.sum(w0[:, None] * np.exp(res.log_wealth), axis=0))
    np.testing.assert_allclose(res.log_eprocess, direct, rtol=0, atol=1e-10)
    # the adaptive-weight product of eq. 11 telescopes to the same e-process
    q = effective_observations(h, g, u, res.rho_grid)
    factors = 1 - res.bets * (q - 0.2)
    eq11 = np.cumsum(np.log(np.sum(res.rho_weights * factors, axis=0)))
    np.testing.assert_allclose(res.log_eprocess, eq11, rtol=0, atol=1e-10)
    # per-rho processes are the single-rho betting e-processes
    for s, rho in enumerate(res.rho_grid):
        single = betting_eprocess(q[s], 0.2, lower=-rho, upper=1 + rho, betting=betting,
                                  delta=0.1)
        np.testing.assert_allclose(res.log_wealth[s], single.log_wealth, rtol=1e-13, atol=1e-13)


def _loop_rautoeval_plus(h, g, u, alpha, delta, rhos, grid, weights):
    """Brute force: eq. 11 with eq. 13 weights, one round at a time, UP on a grid per rho."""
    n = h.size
    r = u.size // n
    ubar = u[: n * r].reshape(n, r).mean(axis=1)
    S = rhos.size
    w = np.full(S, 1.0 / S)
    node_w = np.tile(weights, (S, 1))
    log_e, out = 0.0, []
    for i in range(n):
        total = 0.0
        for s in range(S):
            unit = 1 / (1 + rhos[s] - alpha)
            lam = unit * np.sum(grid * node_w[s]) / np.sum(node_w[s])
            q = h[i] + rhos[s] * (ubar[i] - g[i])
            f = 1 - lam * (q - alpha)
            total += w[s] * f
            w[s] *= f
            node_w[s] *= 1 - grid * unit * (q - alpha)
            node_w[s] /= node_w[s].max()
        w /= w.sum()
        log_e += np.log(total)
        out.append(log_e)
    return np.array(out)


def test_matches_brute_force_round_by_round_implementation():
    rng = np.random.default_rng(1)
    h, g, u = toy(rng, 80, risk=0.08, gamma=0.9, r=3)
    grid = np.linspace(0.01, 0.99, 60)
    weights = np.full(60, 1 / 60)
    ref = _loop_rautoeval_plus(h, g, u, 0.15, 0.1, np.linspace(0, 1, 4), grid, weights)
    for compress in (False, True):
        res = rautoeval_test(h, g, u, alpha=0.15, delta=0.1, n_rho=4,
                             betting=UniversalPortfolio(prior=(grid, weights), compress=compress))
        np.testing.assert_allclose(res.log_eprocess, ref, rtol=0, atol=1e-10)


@pytest.mark.parametrize("betting", ["up", "wsr"])
def test_rho_endpoints_reproduce_r_eval_and_r_autoeval(betting):
    rng = np.random.default_rng(2)
    h, g, u = toy(rng, 150, risk=0.06)
    plus = rautoeval_test(h, g, u, alpha=0.12, delta=0.1, betting=betting)
    ev = rautoeval_test(h, g, u, alpha=0.12, delta=0.1, betting=betting, method="eval")
    ae = rautoeval_test(h, g, u, alpha=0.12, delta=0.1, betting=betting, method="autoeval")
    assert plus.rho_grid[0] == 0 and plus.rho_grid[-1] == 1
    np.testing.assert_array_equal(plus.log_wealth[0], ev.log_eprocess)
    np.testing.assert_array_equal(plus.log_wealth[-1], ae.log_eprocess)
    np.testing.assert_array_equal(ev.rho_grid, [0.0])
    np.testing.assert_array_equal(ae.rho_grid, [1.0])
    # R-Eval ignores the judge: same with the labeled losses only
    np.testing.assert_array_equal(
        rautoeval_test(h, alpha=0.12, delta=0.1, betting=betting, method="eval").log_eprocess,
        ev.log_eprocess)
    one = rautoeval_test(h, g, u, alpha=0.12, delta=0.1, betting=betting, rho_grid=[1.0])
    np.testing.assert_allclose(one.log_eprocess, ae.log_eprocess, rtol=0, atol=1e-12)


def test_result_fields_are_consistent():
    rng = np.random.default_rng(3)
    h, g, u = toy(rng, 200, risk=0.05, gamma=0.95, r=10)
    res = rautoeval_test(h, g, u, alpha=0.12, delta=0.1)
    assert res.certified and res.pvalue <= 0.1
    assert res.pvalue == pytest.approx(np.exp(-res.log_eprocess.max()))
    i = res.stopping_index
    assert res.log_eprocess[i] >= np.log(10) - 1e-12 and np.all(res.log_eprocess[:i] < np.log(10))
    assert res.block_size == 10 and res.method == "plus"
    assert res.rho_weights.shape == res.log_wealth.shape == res.bets.shape == (10, 200)
    np.testing.assert_allclose(res.rho_weights.sum(axis=0), 1)
    with pytest.raises(AttributeError):
        res.certified = False  # frozen
    early = rautoeval_test(h, g, u, alpha=0.12, delta=0.1, early_stopping=True)
    assert early.log_eprocess.size == i + 1 and early.stopping_index == i
    np.testing.assert_allclose(early.log_eprocess, res.log_eprocess[: i + 1], atol=1e-12)
    assert early.certified
    fail = rautoeval_test(1 - h, g, u, alpha=0.12, delta=0.1)
    assert not fail.certified and fail.stopping_index is None and fail.pvalue == 1.0


def test_order_of_data_is_respected():
    rng = np.random.default_rng(4)
    h, g, u = toy(rng, 100, risk=0.05)
    a = rautoeval_test(h, g, u, alpha=0.12, delta=0.1)
    perm = rng.permutation(100)
    b = rautoeval_test(h[perm], g[perm], u, alpha=0.12, delta=0.1)
    assert not np.allclose(a.log_eprocess, b.log_eprocess)
    again = rautoeval_test(h, g, u, alpha=0.12, delta=0.1)
    np.testing.assert_array_equal(a.log_eprocess, again.log_eprocess)


def test_reference_grid_option_reproduces_paper_bets():
    rng = np.random.default_rng(5)
    h, g, u = toy(rng, 100)
    ref = rautoeval_test(h, g, u, alpha=0.12, delta=0.1,
                         betting=UniversalPortfolio(prior="reference"))
    full = rautoeval_test(h, g, u, alpha=0.12, delta=0.1,
                          betting=UniversalPortfolio(prior="reference", compress=False))
    np.testing.assert_allclose(ref.bets, full.bets, rtol=0, atol=1e-12)


# ------------------------------------------------------------------- errors / warnings
@pytest.mark.parametrize(
    "args, kwargs, match",
    [
        (([0.1, 1.2], [0, 0], [0, 0]), {}, r"\[0, 1\]"),
        (([0.1, np.nan], [0, 0], [0, 0]), {}, "NaN"),
        (([0.1, 0.2], [0, 0], [0, -0.1]), {}, "loss_judge_unlabeled"),
        (([0.1, 0.2], [0, 0], [0, 0]), dict(alpha=1.0), "alpha"),
        (([0.1, 0.2], [0, 0], [0, 0]), dict(delta=0.0), "delta"),
        (([], [], []), {}, "empty"),
        (([0.1, 0.2, 0.3], [0, 0, 0], [0, 0]), {}, "N >= n"),
        (([0.1, 0.2], [0, 0, 0], [0, 0]), {}, "Mismatched"),
        (([0.1, 0.2], None, [0, 0]), {}, "loss_judge_labeled"),
        (([0.1, 0.2], [0, 0], [0, 0]), dict(method="ppi"), "method"),
        (([0.1, 0.2], [0, 0], [0, 0]), dict(betting="kelly"), "betting"),
        (([0.1, 0.2], [0, 0], [0, 0]), dict(n_rho=1), "n_rho"),
        (([0.1, 0.2], [0, 0], [0, 0]), dict(rho_grid=[0, 2]), "rho_grid"),
        (([0.1, 0.2], [0, 0], [0, 0]), dict(rho_prior=[1, 2]), "prior"),
    ],
)
def test_errors(args, kwargs, match):
    kw = dict(alpha=0.1, delta=0.1)
    kw.update(kwargs)
    with pytest.raises(ValueError, match=match):
        rautoeval_test(*args, **kw)


def test_no_unlabeled_data_warns_and_runs_r_eval():
    h = np.zeros(50)
    with pytest.warns(RiskControlWarning, match="reduces to R-Eval"):
        res = rautoeval_test(h, h, None, alpha=0.2, delta=0.1)
    assert res.method == "eval" and res.rho_grid.tolist() == [0.0] and res.block_size == 0
    with pytest.warns(RiskControlWarning, match="reduces to R-Eval"):
        rautoeval_test(h, h, [], alpha=0.2, delta=0.1, method="autoeval")


def test_impossible_certification_warns():
    with pytest.warns(RiskControlWarning, match="impossible"):
        res = rautoeval_test(np.zeros(5), alpha=0.1, delta=0.1, method="eval")
    assert not res.certified
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rautoeval_test(np.zeros(30), alpha=0.1, delta=0.1, method="eval")


# --------------------------------------------------------------------- validity (MC)
def _type1(reps, n, configs, seed=0):
    rng = np.random.default_rng(seed)
    for risk, gamma, continuous, betting, method in configs:
        alpha, delta = risk - 0.005, 0.1  # null close to the boundary: R = alpha + 0.005
        rej = 0
        for _ in range(reps):
            h, g, u = toy(rng, n, risk=risk, gamma=gamma, r=4, continuous=continuous)
            rej += rautoeval_test(h, g, u, alpha=alpha, delta=delta, betting=betting,
                                  method=method).certified
        assert rej / reps <= delta + slack(delta, reps), (risk, gamma, betting, method, rej)


CONFIGS = [
    (0.12, 0.95, False, "up", "plus"),
    (0.12, 0.6, False, "wsr", "plus"),
    (0.3, 0.8, True, "up", "plus"),
    (0.3, 0.9, True, "wsr", "autoeval"),
    (0.12, 0.9, False, "up", "eval"),
]


def test_type_one_error_is_controlled_reduced():
    _type1(reps=200, n=150, configs=CONFIGS)


@pytest.mark.slow
def test_type_one_error_is_controlled_full():
    _type1(reps=1000, n=300, configs=CONFIGS, seed=1)


def _fwer(reps, procedure, betting, seed=0):
    rng = np.random.default_rng(seed)
    risks = np.array([0.04, 0.07, 0.12, 0.14, 0.05, 0.2])  # nulls (> 0.1) at 2, 3, 5
    null = risks > 0.1
    alpha, delta, n, r = 0.1, 0.1, 150, 3
    bad = 0
    for _ in range(reps):
        H = rng.binomial(1, risks[:, None], (6, n)).astype(float)
        G = np.where(rng.random((6, n)) < 0.9, H, 1 - H)
        HU = rng.binomial(1, risks[:, None], (6, n * r))
        U = np.where(rng.random((6, n * r)) < 0.9, HU, 1 - HU).astype(float)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RiskControlWarning)
            sel = rautoeval_select(H, G, U, alpha=alpha, delta=delta, procedure=procedure,
                                   betting=betting)
        bad += bool(np.any(sel.certified & null))
    assert bad / reps <= delta + slack(delta, reps), (procedure, bad)


@pytest.mark.parametrize("procedure", ["fst", "bonferroni"])
def test_fwer_is_controlled_reduced(procedure):
    _fwer(100, procedure, "up")


@pytest.mark.slow
@pytest.mark.parametrize("procedure", ["fst", "bonferroni"])
@pytest.mark.parametrize("betting", ["up", "wsr"])
def test_fwer_is_controlled_full(procedure, betting):
    _fwer(500, procedure, betting, seed=2)


# ------------------------------------------------------------------ confidence bounds
def _coverage(reps, n, method, betting, side, seed=0):
    rng = np.random.default_rng(seed)
    risk, delta = 0.2, 0.1
    miss = 0
    for _ in range(reps):
        h, g, u = toy(rng, n, risk=risk, gamma=0.85, r=3)
        ci = rautoeval_confidence_interval(h, g, u, delta=delta, method=method, side=side,
                                           betting=betting,
                                           construction="plugin" if betting == "wsr" else "paper")
        miss += not (ci.low <= risk <= ci.high)
    assert miss / reps <= delta + slack(delta, reps), (method, side, miss)


@pytest.mark.parametrize("method", ["eval", "plus"])
def test_ci_coverage_reduced(method):
    _coverage(150, 150, method, "wsr", "two-sided")


@pytest.mark.slow
@pytest.mark.parametrize("method", ["eval", "autoeval", "plus"])
@pytest.mark.parametrize("side", ["two-sided", "upper", "lower"])
def test_ci_coverage_full(method, side):
    _coverage(1000, 200, method, "wsr", side, seed=3)


@pytest.mark.slow
def test_ci_coverage_up_full():
    _coverage(200, 100, "plus", "up", "two-sided", seed=4)


@pytest.mark.parametrize("betting", ["wsr", "up"])
def test_ci_agrees_with_fine_grid_inversion(betting):
    rng = np.random.default_rng(6)
    h, g, u = toy(rng, 120, risk=0.2, gamma=0.9, r=3)
    delta = 0.1
    ci = rautoeval_confidence_interval(h, g, u, delta=delta, betting=betting, n_rho=4,
                                       tol=1e-9, construction="paper")
    q = effective_observations(h, g, u, np.linspace(0, 1, 4))
    rho = np.linspace(0, 1, 4)
    strategy = WSR() if betting == "wsr" else UniversalPortfolio()

    def rejected(obs, a, level):
        lw = betting_eprocess(obs, a, lower=-rho, upper=1 + rho, betting=strategy,
                              delta=level, monotone=True).log_wealth
        mix = np.log(np.mean(np.exp(lw), axis=0))
        return mix.max() >= np.log(1 / level)

    grid = np.linspace(0, 1, 1001 if betting == "wsr" else 201)
    step = grid[1] - grid[0]
    up = [rejected(q, a, delta / 2) for a in grid]
    lo = [rejected(1 - q, a, delta / 2) for a in grid]
    # rejection is monotone in alpha along the grid
    assert all(np.diff(up) >= 0) and all(np.diff(lo) >= 0)
    high_grid = grid[np.argmax(up)]
    low_grid = 1 - grid[np.argmax(lo)]
    assert high_grid - step <= ci.high <= high_grid + 1e-9
    assert low_grid - 1e-9 <= ci.low <= low_grid + step


def test_ci_sides_and_nesting():
    rng = np.random.default_rng(7)
    h, g, u = toy(rng, 200, risk=0.15)
    two = rautoeval_confidence_interval(h, g, u, delta=0.1)
    upper = rautoeval_confidence_interval(h, g, u, delta=0.1, side="upper")
    lower = rautoeval_confidence_interval(h, g, u, delta=0.1, side="lower")
    wide = rautoeval_confidence_interval(h, g, u, delta=0.01)
    assert upper.low == 0 and lower.high == 1
    assert two.low <= lower.low and upper.high <= two.high  # one-sided at full delta: tighter
    assert two.low <= two.high
    assert wide.low <= two.low and wide.high >= two.high
    # the upper bound is the smallest alpha certified by the monotone test
    assert upper.high > 0
    with pytest.raises(ValueError, match="side"):
        rautoeval_confidence_interval(h, delta=0.1, side="both", method="eval")
    with pytest.raises(ValueError, match="split"):
        rautoeval_confidence_interval(h, delta=0.1, split=1.0, method="eval")


# --------------------------------------------------------------------- model selection
def _table(rng, risks, n=200, r=3, gamma=0.9):
    k = len(risks)
    H = rng.binomial(1, np.asarray(risks)[:, None], (k, n)).astype(float)
    G = np.where(rng.random((k, n)) < gamma, H, 1 - H)
    HU = rng.binomial(1, np.asarray(risks)[:, None], (k, n * r))
    U = np.where(rng.random((k, n * r)) < gamma, HU, 1 - HU).astype(float)
    return H, G, U


def test_fst_stops_at_first_failure_and_never_falls_back():
    rng = np.random.default_rng(8)
    H, G, U = _table(rng, [0.02, 0.03, 0.4, 0.02, 0.03])
    sel = rautoeval_select(H, G, U, alpha=0.12, delta=0.1)
    assert sel.certified.tolist() == [True, True, False, False, False]
    assert sel.tested.tolist() == [True, True, True, False, False]
    assert np.isnan(sel.pvalues[3:]).all() and sel.results[3] is None
    assert sel.selected == 1 and sel.test_level == 0.1
    for k in range(3):  # each test is the single test at the full delta
        single = rautoeval_test(H[k], G[k], U[k], alpha=0.12, delta=0.1)
        assert sel.pvalues[k] == single.pvalue
    cheap_first = rautoeval_select(H, G, U, alpha=0.12, delta=0.1, cost=[1, 5, 0, 0, 0])
    assert cheap_first.selected == 0
    with pytest.warns(RiskControlWarning, match="first candidate"):
        none = rautoeval_select(H[2:], G[2:], U[2:], alpha=0.12, delta=0.1)
    assert none.selected is None and not none.certified.any()
    assert none.tested.tolist() == [True, False, False]


def test_bonferroni_tests_each_candidate_at_delta_over_k():
    rng = np.random.default_rng(9)
    H, G, U = _table(rng, [0.4, 0.02, 0.05, 0.3])
    sel = rautoeval_select(H, G, U, alpha=0.12, delta=0.2, procedure="bonferroni",
                           betting="wsr")
    assert sel.test_level == pytest.approx(0.05) and sel.tested.all()
    single = rautoeval_test(H[1], G[1], U[1], alpha=0.12, delta=0.05, betting="wsr")
    np.testing.assert_array_equal(sel.results[1].bets, single.bets)  # delta/K in the bet
    assert sel.pvalues[1] == single.pvalue
    assert sel.certified.tolist() == [False, True, True, False]
    assert sel.selected == 2  # default: the last certified in the given order
    assert rautoeval_select(H, G, U, alpha=0.12, delta=0.2, procedure="bonferroni",
                            cost=[0, 1, 2, 0]).selected == 1


def test_selection_parallel_equals_sequential():
    rng = np.random.default_rng(10)
    H, G, U = _table(rng, [0.02, 0.03, 0.05, 0.4, 0.03], n=100)
    a = rautoeval_select(H, G, U, alpha=0.12, delta=0.1)
    b = rautoeval_select(H, G, U, alpha=0.12, delta=0.1, n_jobs=2)
    np.testing.assert_array_equal(a.certified, b.certified)
    np.testing.assert_array_equal(a.tested, b.tested)
    np.testing.assert_array_equal(a.pvalues, b.pvalues)
    assert a.selected == b.selected


def test_selection_errors():
    H = np.zeros((3, 10))
    with pytest.raises(ValueError, match="procedure"):
        rautoeval_select(H, alpha=0.1, delta=0.1, procedure="holm", method="eval")
    with pytest.raises(ValueError, match="2-d"):
        rautoeval_select(np.zeros(10), alpha=0.1, delta=0.1, method="eval")
    with pytest.raises(ValueError, match="rows"):
        rautoeval_select(H, np.zeros((2, 10)), np.zeros((3, 30)), alpha=0.1, delta=0.1)
    with pytest.raises(ValueError, match="cost"):
        rautoeval_select(H, alpha=0.1, delta=0.1, method="eval", cost=[1, 2])
    bad = H.copy()
    bad[2, 4] = 2.0
    with pytest.raises(ValueError, match=r"loss_labeled\[2\]"):  # found before FST would stop
        rautoeval_select(bad, alpha=0.1, delta=0.1, method="eval")
    with pytest.raises(ValueError, match="n_rho"):
        rautoeval_select(H, H, np.zeros((3, 30)), alpha=0.1, delta=0.1, n_rho=0)


def test_selection_without_unlabeled_warns_once():
    H = np.zeros((2, 60))
    with pytest.warns(RiskControlWarning, match="reduces to R-Eval"):
        sel = rautoeval_select(H, H, None, alpha=0.2, delta=0.1)
    assert sel.certified.all() and sel.results[0].method == "eval"


def test_module_all_is_public():
    for name in A.__all__:
        assert getattr(A, name).__doc__


@pytest.mark.parametrize("risk", [0.06, 0.11])  # certified early / p-value near 1
def test_default_up_pvalues_equal_exact_up(risk):
    """Issue 13: the adaptive universal portfolio gives the exact implementation's p-values
    to 1e-9 relative (R-AutoEval+, S = 10)."""
    rng = np.random.default_rng(21)
    h, g, u = toy(rng, 2000, risk)
    new = rautoeval_test(h, g, u, alpha=0.1, delta=0.1)
    old = rautoeval_test(h, g, u, alpha=0.1, delta=0.1,
                         betting=UniversalPortfolio(integration="exact"))
    assert new.pvalue == pytest.approx(old.pvalue, rel=1e-9, abs=0)
    np.testing.assert_allclose(new.log_eprocess, old.log_eprocess, rtol=0, atol=1e-9)
    assert new.stopping_index == old.stopping_index


def test_early_stopping_stops_at_first_crossing_and_reports_it():
    rng = np.random.default_rng(22)
    h, g, u = toy(rng, 2000, 0.03)
    full = rautoeval_test(h, g, u, alpha=0.1, delta=0.1)
    early = rautoeval_test(h, g, u, alpha=0.1, delta=0.1, early_stopping=True)
    assert early.certified and early.stopping_index == full.stopping_index
    assert early.log_eprocess.size == early.stopping_index + 1 < h.size
    np.testing.assert_array_equal(early.bets, full.bets[:, : early.stopping_index + 1])
    assert early.pvalue == pytest.approx(np.exp(-early.log_eprocess[-1])) and early.pvalue <= 0.1
