"""Anytime-valid betting intervals of UCB-E and PULSE, and the certified-best stopping rule."""

import math
import warnings

import numpy as np
import pytest

from sklearn_riskcontrol import RiskControlWarning
from sklearn_riskcontrol.bandits import PULSE, UCBE, make_score_matrix
from sklearn_riskcontrol.bandits._intervals import (
    betting_intervals,
    certified_best,
    draws_of,
    wor_betting_interval,
)
from sklearn_riskcontrol.bandits.lowrank import fit_logistic_factors


# ---------------------------------------------------------------- brute force of the definition
def _brute_accepts(streams, N, pool, alpha, m, det=(0.0, 1.0), cap=0.75):
    """Is ``m`` in the confidence sequence after all draws? Plain loops over the draws.

    ``streams``: list of (r, a, w, off) sequences; the capital is their average.
    """
    if not det[0] <= m <= det[1]:
        return False
    thr = math.log(2 / alpha)
    T = len(N)
    for r, a, w, off in streams:  # feasibility: every nu_k(m) in [0, 1]
        for k in range(T):
            nu = ((pool * m - off[k]) / N[k] - a[k]) / w[k]
            if nu < -1e-12 or nu > 1 + 1e-12:
                return False
    for sign in (1.0, -1.0):
        caps = [1.0] * len(streams)
        for k in range(T):
            for s, (r, a, w, off) in enumerate(streams):
                ys = [min(max((r[i] - a[i]) / w[i], 0.0), 1.0) for i in range(k + 1)]
                ybar = [(0.5 + sum(ys[: i + 1])) / (i + 2) for i in range(k)]
                sigma2 = (0.25 + sum((ys[i] - ybar[i]) ** 2 for i in range(k))) / (k + 1)
                t = k + 1
                beta = min(cap, math.sqrt(2 * math.log(2 / alpha) / (sigma2 * t * math.log(1 + t))))
                nu = ((pool * m - off[k]) / N[k] - a[k]) / w[k]
                caps[s] *= 1 + sign * beta * (ys[k] - nu)
            if sum(caps) / len(caps) >= math.exp(thr):
                return False
    return True


def _check_against_brute(lo, hi, streams, N, pool, alpha, det, n_grid=801):
    grid = np.unique(np.r_[np.linspace(0, 1, n_grid), det])
    acc = np.array([_brute_accepts(streams, N, pool, alpha, m, det) for m in grid])
    assert acc.any()
    step = 1 / (n_grid - 1)
    g_lo, g_hi = grid[acc].min(), grid[acc].max()
    # the interval contains every accepted grid point and ends within one grid step of them
    assert lo <= g_lo + 1e-9 and g_lo - lo <= step + 1e-9
    assert hi >= g_hi - 1e-9 and hi - g_hi <= step + 1e-9
    # and the accepted set is an interval (no rejected grid point inside)
    assert acc[np.flatnonzero(acc)[0]: np.flatnonzero(acc)[-1] + 1].all()


@pytest.mark.parametrize("seed,t,n", [(0, 12, 30), (1, 25, 25), (2, 1, 10), (3, 40, 200)])
def test_wor_interval_equals_brute_force(seed, t, n):
    rng = np.random.default_rng(seed)
    pop = rng.uniform(size=n) if seed % 2 else (rng.uniform(size=n) < 0.6).astype(float)
    x = rng.permutation(pop)[:t]
    lo, hi = wor_betting_interval(x, n, delta=0.2)
    off = np.cumsum(x) - x
    streams = [(x, np.zeros(t), np.ones(t), off)]
    det = (x.sum() / n, (x.sum() + n - t) / n)
    _check_against_brute(lo, hi, streams, n - np.arange(t), n, 0.2, det)
    assert lo <= pop.mean() <= hi


def test_wor_interval_exact_when_pool_exhausted_and_errors():
    x = np.array([1.0, 0.0, 1.0, 1.0])
    assert wor_betting_interval(x, 4) == (0.75, 0.75)
    assert wor_betting_interval([], 5) == (0.0, 1.0)
    with pytest.raises(ValueError, match="population_size"):
        wor_betting_interval(x, 3)
    with pytest.raises(ValueError, match=r"`x` must lie in \[0, 1\]"):
        wor_betting_interval([0.5, 1.5], 3)
    with pytest.raises(ValueError, match="delta"):
        wor_betting_interval(x, 10, delta=1.5)


def test_vectorised_over_models_equals_one_at_a_time():
    rng = np.random.default_rng(5)
    xs = [rng.uniform(size=k) for k in (0, 7, 30, 1)]
    n = np.array([10.0, 40.0, 30.0, 3.0])
    parts = []
    for x, nn in zip(xs, n):
        parts.append((x, np.cumsum(x) - x, nn - np.arange(x.size)))
    r = np.concatenate([p[0] for p in parts])
    off = np.concatenate([p[1] for p in parts])
    N = np.concatenate([p[2] for p in parts])
    lens = np.array([x.size for x in xs])
    lo, hi = betting_intervals(r, 0 * r, 0 * r + 1, off, N, n, lens, 0.1)
    for k, (x, nn) in enumerate(zip(xs, n)):
        l1, h1 = betting_intervals(x, 0 * x, 0 * x + 1, np.cumsum(x) - x, nn - np.arange(x.size),
                                   np.array([nn]), np.array([x.size]), 0.1)
        assert (lo[k], hi[k]) == (l1[0], h1[0])
    assert (lo[0], hi[0]) == (0.0, 1.0)


def _pulse_fixed_predictions(seed=0):
    data = make_score_matrix(5, 120, n_side_models=30, gap=0.05, random_state=seed)
    # no refit after the warm-up's: the predictions of every step are the final ones
    est = PULSE(budget=0.4, batch_size=6, refit_every=10**6, rank=2, random_state=seed)
    return data, est.fit(data.scores, side_scores=data.side_scores)


def test_pulse_draws_are_unbiased_aipw_residuals():
    # brute force: the offset makes (n mu - off_k) / N_k the mean residual over the remaining pool
    data, est = _pulse_fixed_predictions()
    st = est._state
    f = est.factorization_
    Sh_all = 1 / (1 + np.exp(-(f.model_factors @ f.example_factors.T + f.model_bias[:, None]
                               + f.example_bias[None, :])))
    for i in range(st.m):
        r, a, w, off, N, lens = draws_of(st, est.oracle_.cached_scores_, [i], st.draw_log, False)
        perm = st.observed(i)
        lam = np.concatenate([np.full(b, rec[1]) for rec in st.draw_log.batch[i]
                              for b in [int(rec[0])]])
        for k in range(perm.size):
            rest = st.perm[i][k:].astype(int)
            resid = data.scores[i, rest] - lam[k] * Sh_all[i, rest]
            assert np.isclose((120 * data.means[i] - off[k]) / N[k], resid.mean())
            assert a[k] - 1e-12 <= resid.min() and resid.max() <= a[k] + w[k] + 1e-12


def test_pulse_betting_interval_equals_brute_force():
    data, est = _pulse_fixed_predictions(1)
    st = est._state
    ci = est.confidence_intervals(0.2, simultaneous=False, method="betting")
    for i in np.argsort(st.counts)[:3]:  # the models with fewest draws: short loops
        r, a, w, off, N, lens = draws_of(st, est.oracle_.cached_scores_, [i], st.draw_log)
        streams = [tuple(v[s] for v in (r, a, w, off)) for s in range(2)]
        n = st.n_avail[i]
        det = (st.sums[i] / n, (st.sums[i] + n - st.counts[i]) / n)
        _check_against_brute(ci[i, 0], ci[i, 1], streams, N, n, 0.2, det, n_grid=401)


def test_subgaussian_method_is_the_former_construction():
    # method="subgaussian" reproduces the former intervals (the former default) bit for bit
    data = make_score_matrix(6, 400, n_side_models=20, gap=0.03, random_state=3)
    est = PULSE(budget=0.3, batch_size=8, refit_every=4, rank=2, random_state=0)
    est.fit(data.scores, side_scores=data.side_scores)
    st = est._state
    v_min = 1 / (4 * 400)
    grid = v_min * 4.0 ** np.arange(200)
    grid = grid[: np.searchsorted(grid, 400) + 1]
    L = np.log(2 * grid.size * 6 / 0.1)
    half = np.array([min(np.sqrt(2 * L / g) * V / 2 + L / np.sqrt(2 * L / g) for g in grid) / K
                     for V, K in zip(st.v_sum, st.n_theta)])
    mu = st.theta_sum / st.n_theta
    want = np.clip(np.column_stack([mu - half, mu + half]), 0, 1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RiskControlWarning)
        got = est.confidence_intervals(0.1, method="subgaussian")
        np.testing.assert_allclose(got, want)
        np.testing.assert_array_equal(est.confidence_intervals(0.1, method="betting"),
                                      est.confidence_intervals(0.1))  # the default
        # a run with the stopping rule off is the former run, decision for decision
        again = PULSE(budget=0.3, batch_size=8, refit_every=4, rank=2, random_state=0,
                      stop_when_certified=False).fit(data.scores, side_scores=data.side_scores)
        np.testing.assert_array_equal(again.confidence_intervals(0.1, method="subgaussian"), got)
        np.testing.assert_array_equal(again.history_["arm"], est.history_["arm"])


def test_bad_method_and_delta():
    S = (np.random.default_rng(0).uniform(size=(3, 50)) < 0.5) * 1.0
    est = UCBE(budget=0.5, batch_size=5, random_state=0).fit(S)
    with pytest.raises(ValueError, match="`method` must be 'betting'"):
        est.confidence_intervals(0.1, method="subgaussian")
    with pytest.raises(ValueError, match="delta"):
        UCBE(delta=1.5).fit(S)
    p = PULSE(budget=0.5, batch_size=5, rank=1, random_state=0).fit(S)
    with pytest.raises(ValueError, match="`method` must be 'subgaussian' or 'betting'"):
        p.confidence_intervals(0.1, method="hoeffding")


# ---------------------------------------------------------------- Monte Carlo validity
def _coverage(kind, n_rep, delta=0.1):
    data = make_score_matrix(8, 300, n_side_models=30, gap=0.03, random_state=7)
    fact = fit_logistic_factors(data.side_scores, rank=2, random_state=0)
    hits, widths = [], []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RiskControlWarning)
        for seed in range(n_rep):
            if kind == "UCBE":
                est = UCBE(budget=0.25, batch_size=8, random_state=seed).fit(data.scores)
            else:
                est = PULSE(budget=0.25, batch_size=8, refit_every=8, rank=2,
                            random_state=seed).fit(data.scores, side_scores=fact)
            ci = est.confidence_intervals(delta, method="betting")
            hits.append(((ci[:, 0] <= data.means) & (data.means <= ci[:, 1])).all())
            widths.append(ci[:, 1] - ci[:, 0])
    return np.mean(hits), np.median(widths)


@pytest.mark.parametrize("kind", ["UCBE", "PULSE"])
def test_simultaneous_coverage_reduced(kind):
    cov, width = _coverage(kind, n_rep=10)
    assert cov >= 0.9 - 2 * np.sqrt(0.09 / 10) and width < 1


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["UCBE", "PULSE"])
def test_simultaneous_coverage_full(kind):
    cov, _ = _coverage(kind, n_rep=300)
    assert cov >= 0.9 - 2 * np.sqrt(0.09 / 300)


def _wrong_certificates(kind, n_rep, delta=0.2):
    # a small gap: certification is hard, and a wrong one must stay rarer than delta
    data = make_score_matrix(6, 250, n_side_models=30, gap=0.01, random_state=11)
    fact = fit_logistic_factors(data.side_scores, rank=2, random_state=0)
    wrong = certified = saved = 0
    for seed in range(n_rep):
        kw = dict(budget=1.0, batch_size=10, stop_when_certified=True, delta=delta,
                  random_state=seed)
        if kind == "UCBE":
            est = UCBE(**kw).fit(data.scores)
        else:
            est = PULSE(refit_every=10, rank=2, **kw).fit(data.scores, side_scores=fact)
        b = est.certified_best_
        certified += b >= 0
        wrong += b >= 0 and b != data.best_index
        saved += est.n_evaluations_saved_
        assert est.n_evaluations_saved_ == (est._state.budget - est.n_evaluations_ if b >= 0 else 0)
    return wrong / n_rep, certified / n_rep, saved / n_rep


@pytest.mark.parametrize("kind", ["UCBE", "PULSE"])
def test_certified_stop_reduced(kind):
    wrong, certified, saved = _wrong_certificates(kind, n_rep=6)
    assert wrong <= 0.2 + 2 * np.sqrt(0.16 / 6)
    assert certified > 0 and saved > 0


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["UCBE", "PULSE"])
def test_certified_stop_full(kind):
    wrong, _, _ = _wrong_certificates(kind, n_rep=200)
    assert wrong <= 0.2 + 2 * np.sqrt(0.16 / 200)


def test_certificate_matches_the_intervals():
    rng = np.random.default_rng(0)
    S = (rng.uniform(size=(6, 1500)) < np.array([0.3, 0.4, 0.45, 0.5, 0.55, 0.75])[:, None]) * 1.0
    est = UCBE(budget=1.0, batch_size=20, stop_when_certified=True, delta=0.05,
               random_state=0).fit(S)
    assert est.certified_best_ == 5 and est.completed_
    assert est.n_evaluations_ + est.n_evaluations_saved_ == S.size
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RiskControlWarning)
        ci = est.confidence_intervals(0.05, method="betting")
    assert certified_best(ci) == 5
    # without the rule the attributes say so and the whole budget is spent
    full = UCBE(budget=0.5, batch_size=20, random_state=0).fit(S)
    assert full.certified_best_ is None and full.n_evaluations_saved_ == 0
    assert full.n_evaluations_ == S.size // 2
