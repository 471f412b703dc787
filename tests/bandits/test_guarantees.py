"""Issue 12 (best-model part): bounded default scores, estimates inside the score range, valid
and honestly reported PULSE intervals, numpy Generators as random_state."""

import itertools
import re
import warnings
from types import SimpleNamespace

import numpy as np
import pytest
from sklearn.datasets import load_diabetes, make_classification
from sklearn.dummy import DummyRegressor
from sklearn.linear_model import LinearRegression, LogisticRegression, Ridge
from sklearn.model_selection import train_test_split
from sklearn.tree import DecisionTreeRegressor

from sklearn_riskcontrol import RiskControlWarning
from sklearn_riskcontrol.bandits import (
    PULSE,
    UCBE,
    UCBELRF,
    BestModelSelector,
    LowRankScoreCompleter,
    NaivePooling,
    UniformSampling,
    make_score_matrix,
)
from sklearn_riskcontrol.evaluation import (
    CallableOracle,
    EstimatorOracle,
)
from sklearn_riskcontrol.bandits.lowrank import fit_logistic_factors
from sklearn_riskcontrol.evaluation._oracles import ScaledAbsoluteError

# ----------------------------------------------------------------- default and string scores


def _diabetes():
    X, y = load_diabetes(return_X_y=True)
    X_fit, X_pool, y_fit, y_pool = train_test_split(X, y, test_size=0.5, random_state=0)
    models = [DummyRegressor().fit(X_fit, y_fit), LinearRegression().fit(X_fit, y_fit),
              Ridge(alpha=1.0).fit(X_fit, y_fit),
              DecisionTreeRegressor(max_depth=3, random_state=0).fit(X_fit, y_fit)]
    return models, X_pool, y_pool


def test_regressors_get_a_bounded_score_that_ranks_by_absolute_error():
    # before: the default 1{y_pred == y} was 0 for every regressor, the "best" model changed
    # with the seed and means_ were negative
    models, X, y = _diabetes()
    sel = BestModelSelector(models, strategy=UCBE(budget=1.0, random_state=0)).fit(X, y)
    scale = float(y.max() - y.min())
    assert isinstance(sel.scoring_, ScaledAbsoluteError) and sel.scoring_.scale == scale
    mae = np.array([np.abs(m.predict(X) - y).mean() for m in models])
    # no error exceeds the label range here, so the score is exactly 1 - MAE / scale
    np.testing.assert_allclose(sel.means_, 1 - mae / scale)
    assert sel.best_index_ == int(np.argmin(mae))
    # the default strategy (PULSE, 30% budget): estimates in range, never all zero
    for seed in range(3):
        means = BestModelSelector(models, random_state=seed).fit(X, y).means_
        assert ((means >= 0.5) & (means <= 1)).all()


def test_scoring_strings_and_rejections():
    X, y = make_classification(300, random_state=0)
    X_fit, X_pool, y_fit, y_pool = train_test_split(X, y, test_size=0.5, random_state=0)
    clf = LogisticRegression().fit(X_fit, y_fit)
    o = EstimatorOracle([clf], X_pool, y_pool, scoring="accuracy")
    np.testing.assert_array_equal(o.query(0, np.arange(150)), clf.predict(X_pool) == y_pool)
    reg = LinearRegression().fit(X_fit, y_fit)
    o = EstimatorOracle([reg], X_pool, y_pool.astype(float), scoring="absolute_error")
    np.testing.assert_allclose(
        o.query(0, np.arange(150)), 1 - np.minimum(1, np.abs(y_pool - reg.predict(X_pool)) / 1.0))
    for bad in ("r2", "neg_mean_absolute_error", "roc_auc"):
        with pytest.raises(ValueError, match=re.escape(f"`scoring`='{bad}' is not supported")
                           + ".*'accuracy'.*'absolute_error'"):
            BestModelSelector([clf], scoring=bad).fit(X_pool, y_pool)
    with pytest.raises(ValueError, match="mix classifiers and regressors, so there is no "
                                         "common default score; pass `scoring`"):
        EstimatorOracle([clf, reg], X_pool, y_pool)
    with pytest.raises(ValueError, match="every label equals the same value"):
        EstimatorOracle([reg], X_pool, np.ones(150))
    with pytest.raises(ValueError, match="needs numeric targets"):
        EstimatorOracle([clf], X_pool, np.array(["a", "b"] * 75), scoring="absolute_error")
    with pytest.raises(ValueError, match="response_method='predict'"):
        EstimatorOracle([clf], X_pool, y_pool, scoring="accuracy", response_method="predict_proba")


def test_scores_outside_the_range_name_the_model_and_the_example():
    models, X, y = _diabetes()
    sel = BestModelSelector(models[1:2], strategy=UCBE(budget=1.0),
                            scoring=lambda yt, yp: (yt - yp) / 100)
    with pytest.raises(ValueError, match=r"score of estimators\[0\] \(LinearRegression\) on "
                                         r"example \d+ is -?[\d.]+, outside the score range "
                                         r"\[0, 1\].*rescale"):
        sel.fit(X, y)
    oracle = CallableOracle(lambda i, J: np.where(J == 3, 2.0, 0.5), 2, 5)
    with pytest.raises(ValueError, match=r"score of model 1 on example 3 is 2\.0, outside"):
        oracle.query(1, [1, 3, 4])
    assert oracle.n_evaluations_ == 0  # nothing of the failed call is cached


# ----------------------------------------------------------------- means inside [0, 1]


def test_no_public_mean_leaves_the_score_range():
    data = make_score_matrix(8, 200, n_side_models=20, gap=0.05, random_state=0)
    S = data.scores.copy()
    S[0], S[1] = 1.0, 0.0  # means at the ends of the range: doubly-robust estimates overshoot
    raw_outside = 0
    for seed in range(10):
        p = PULSE(budget=0.3, batch_size=4, refit_every=3, rank=2, random_state=seed)
        p.fit(S, side_scores=data.side_scores)
        raw = p._state.theta_sum / p._state.n_theta
        raw_outside += int(((raw < 0) | (raw > 1)).sum())
        # clipping towards the range never moves an estimate away from the true mean
        clipped_err = np.abs(p.means_ - S.mean(1))
        assert (clipped_err <= np.abs(raw - S.mean(1)) + 1e-12).all()
        for est in (p, UCBE(budget=0.3, random_state=seed).fit(S),
                    NaivePooling(budget=0.3, batch_size=4, rank=2, random_state=seed)
                    .fit(S, side_scores=data.side_scores),
                    UCBELRF(budget=0.3, n_members=4, random_state=seed).fit(S),
                    UniformSampling(budget=0.3, random_state=seed).fit(S)):
            assert ((est.means_ >= 0) & (est.means_ <= 1)).all(), type(est).__name__
    assert raw_outside > 0  # the test exercises the clipping


# ----------------------------------------------------------------- PULSE intervals


def _population_mgf_check(U_scores, U_pred, n, n_obs, b, lam, s_values):
    """Exact conditional mgf of theta - mu over all b-subsets vs the proxy used by PULSE."""
    N = U_scores.size
    sh_range = U_pred.max() - U_pred.min()
    st = SimpleNamespace(sums=np.array([0.3 * n_obs]), n_avail=np.array([n]),
                         sh_range=np.array([sh_range]))
    F = U_pred.sum()
    mu = (st.sums[0] + U_scores.sum()) / n
    thetas, proxies = [], set()
    for J in itertools.combinations(range(N), b):
        J = list(J)
        theta, _, proxy = PULSE._one_step(None, st, 0, U_scores[J], U_pred[J], lam, F, N)
        thetas.append(theta - mu)
        proxies.add(proxy)
    (proxy,) = proxies  # fixed before the draw
    d = np.array(thetas)
    assert abs(d.mean()) < 1e-12  # Lemma 1: conditionally unbiased
    for s in s_values:  # log E exp(s d) <= s^2 proxy / 2
        assert np.logaddexp.reduce(s * d) - np.log(d.size) <= s * s * proxy / 2 + 1e-12
    return proxy


@pytest.mark.parametrize("b,lam", [(1, 0.0), (1, 1.0), (2, 0.7), (3, 1.0), (6, 0.4)])
def test_variance_proxy_bounds_the_exact_conditional_mgf(b, lam):
    # the old intervals plugged a *random* estimate of the variance (or 1.0) into Theorem 1;
    # the proxy must bound the moment generating function of every one-step error exactly
    rng = np.random.default_rng(b)
    for _ in range(20):
        U_scores = rng.integers(0, 2, 7).astype(float)
        U_pred = rng.uniform(size=7) ** rng.uniform(0.2, 3)
        _population_mgf_check(U_scores, U_pred, n=12, n_obs=5, b=b, lam=lam,
                              s_values=np.r_[-np.geomspace(0.1, 80, 15), np.geomspace(0.1, 80, 15)])
    # a batch covering every unscored example has no error at all
    assert _population_mgf_check(np.ones(4), np.full(4, 0.5), 12, 8, 4, 1.0, [1.0]) == 0.0


def _coverage(batch_size, budget, n_rep, deltas=(0.1, 0.05)):
    data = make_score_matrix(10, 600, n_side_models=30, gap=0.03, random_state=7)
    fact = fit_logistic_factors(data.side_scores, rank=2, random_state=0)
    hits = {d: ([], []) for d in deltas}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RiskControlWarning)
        for seed in range(n_rep):
            est = PULSE(budget=budget, batch_size=batch_size, refit_every=max(1, 64 // batch_size),
                        rank=2, random_state=seed).fit(data.scores, side_scores=fact)
            for d in deltas:
                for k, sim in enumerate((True, False)):
                    ci = est.confidence_intervals(d, simultaneous=sim)
                    hits[d][k].append((ci[:, 0] <= data.means) & (data.means <= ci[:, 1]))
    for d in deltas:
        sim, marg = (np.array(h) for h in hits[d])
        slack = 2 * np.sqrt(d * (1 - d) / n_rep)
        assert sim.all(axis=1).mean() >= 1 - d - slack
        assert marg.mean(axis=0).min() >= 1 - d - slack


@pytest.mark.parametrize("batch_size", [1, 8, 64])
def test_pulse_interval_coverage_reduced(batch_size):
    _coverage(batch_size, 0.2, n_rep=8)


@pytest.mark.slow
@pytest.mark.parametrize("batch_size,budget", list(itertools.product([1, 8, 64], [0.15, 0.3])))
def test_pulse_interval_coverage_full(batch_size, budget):
    _coverage(batch_size, budget, n_rep=200)


def test_interval_widths_follow_the_bound():
    # brute force: the half-width is the best, over the fixed grid, of (s V / 2 + L / s) / K
    data = make_score_matrix(6, 400, n_side_models=20, gap=0.03, random_state=3)
    est = PULSE(budget=0.3, batch_size=8, refit_every=4, rank=2, random_state=0)
    est.fit(data.scores, side_scores=data.side_scores)
    st = est._state
    v_min = 1 / (4 * 400)
    grid = v_min * 4.0 ** np.arange(200)
    grid = grid[: np.searchsorted(grid, 400) + 1]  # up to the first value >= n
    for delta, m in ((0.1, 6), (0.05, 1)):
        L = np.log(2 * grid.size * m / delta)
        half = [min(np.sqrt(2 * L / g) * V / 2 + L / np.sqrt(2 * L / g) for g in grid) / K
                for V, K in zip(st.v_sum, st.n_theta)]
        mu = st.theta_sum / st.n_theta
        want = np.clip(np.column_stack([mu - half, mu + half]), 0, 1)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RiskControlWarning)
            got = est.confidence_intervals(delta, simultaneous=m > 1, method="subgaussian")
        np.testing.assert_allclose(got, want)


def test_vacuous_intervals_warn_with_the_fix():
    rng = np.random.default_rng(0)
    S = (rng.uniform(size=(5, 1297)) < np.array([0.55, 0.5, 0.45, 0.4, 0.3])[:, None]) * 1.0
    est = PULSE(budget=0.01, batch_size=4, random_state=0).fit(S)
    with pytest.warns(RiskControlWarning) as rec:
        ci = est.confidence_intervals(0.01)
    n_vac = int((ci[:, 1] - ci[:, 0] >= 0.99).sum())
    assert n_vac > 0 and len(rec) == 1
    assert re.search(rf"^{n_vac} of 5 confidence intervals at delta=0.01 are vacuous: they span "
                     r"at least 99% of the score range \[0, 1\] \(models with \d+( to \d+)? evaluations "
                     r"each\).*raise `budget`.*larger `delta`", str(rec[0].message))
    # the setting (default batch_size=64, 5 x 1,297, 20% budget) is no longer vacuous
    est = PULSE(budget=0.2, random_state=0).fit(S)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RiskControlWarning)
        ci = est.confidence_intervals(0.05)
    assert (ci[:, 1] - ci[:, 0] < 0.6).all()
    assert ((ci[:, 0] <= S.mean(1)) & (S.mean(1) <= ci[:, 1])).all()


# ----------------------------------------------------------------- random_state


def test_numpy_generator_as_random_state():
    data = make_score_matrix(6, 200, n_side_models=10, gap=0.05,
                             random_state=np.random.default_rng(0))
    again = make_score_matrix(6, 200, n_side_models=10, gap=0.05,
                              random_state=np.random.default_rng(0))
    np.testing.assert_array_equal(data.scores, again.scores)
    S, side = data.scores, data.side_scores
    for make in (lambda g: PULSE(budget=0.3, batch_size=8, rank=2, random_state=g),
                 lambda g: NaivePooling(budget=0.3, batch_size=8, rank=2, random_state=g),
                 lambda g: UCBE(budget=0.3, batch_size=8, random_state=g),
                 lambda g: UCBELRF(budget=0.3, n_members=4, random_state=g),
                 lambda g: UniformSampling(budget=0.3, random_state=g)):
        a = make(np.random.default_rng(5)).fit(S, side_scores=side)
        b = make(np.random.default_rng(5)).fit(S, side_scores=side)
        np.testing.assert_array_equal(a.history_["arm"], b.history_["arm"])
        np.testing.assert_array_equal(a.means_, b.means_)
    filled = LowRankScoreCompleter(rank=1, random_state=np.random.default_rng(0)).fit_transform(
        np.where(np.eye(6, 200, dtype=bool), np.nan, S))
    assert not np.isnan(filled).any()
    X, y = make_classification(300, random_state=0)
    sel = BestModelSelector([LogisticRegression(), LogisticRegression(C=0.01)],
                            random_state=np.random.default_rng(1)).fit(X, y)
    assert sel.oracle_.n_examples == 150
