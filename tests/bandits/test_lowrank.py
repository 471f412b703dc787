"""Low-rank models: agreement with brute-force solvers, dense = sparse, recovery, the completer."""

import tracemalloc

import numpy as np
import pytest
from _lowrank_reference import plain_fit_dense_alternating, plain_svd_start
from sklearn.linear_model import LogisticRegression

import sklearn_riskcontrol.bandits.lowrank as lowrank
from sklearn_riskcontrol.bandits import LowRankScoreCompleter
from sklearn_riskcontrol.bandits.lowrank import (
    ALSEnsemble,
    als_ensemble,
    fit_logistic_factors,
    fit_model_factors,
    sigmoid,
)


def _logistic_matrix(m=60, n=90, r=2, seed=0, missing=0.5):
    rng = np.random.default_rng(seed)
    u, v = rng.normal(size=(m, r)), rng.normal(size=(n, r))
    P = sigmoid(1.5 * u @ v.T + rng.normal(size=m)[:, None] + rng.normal(size=n)[None, :])
    S = (rng.uniform(size=P.shape) < P).astype(float)
    if missing:
        S[rng.uniform(size=S.shape) < missing] = np.nan
    return S, P


@pytest.mark.parametrize("ridge", [0.1, 1.0, 10.0])
def test_row_fit_equals_ridge_logistic_regression(ridge):
    rng = np.random.default_rng(0)
    n, r = 200, 3
    V, b = rng.normal(size=(n, r)), 0.5 * rng.normal(size=n)
    S = (rng.uniform(size=(4, n)) < 0.4).astype(float)
    S[rng.uniform(size=S.shape) < 0.6] = np.nan
    U, a = fit_model_factors(S, V, np.zeros(n), ridge=ridge, tol=1e-12, max_iter=60)
    for i in range(4):
        o = ~np.isnan(S[i])
        X = np.hstack([V[o], np.ones((o.sum(), 1))])
        ref = LogisticRegression(C=1 / ridge, fit_intercept=False, tol=1e-12, max_iter=10_000)
        ref.fit(X, S[i, o])
        np.testing.assert_allclose(np.r_[U[i], a[i]], ref.coef_[0], atol=1e-6)
    # with an offset b_j the row problem is a logistic regression with that offset: check the
    # stationarity condition directly
    U, a = fit_model_factors(S, V, b, ridge=ridge, tol=1e-12, max_iter=60)
    for i in range(4):
        o = ~np.isnan(S[i])
        X = np.hstack([V[o], np.ones((o.sum(), 1))])
        w = np.r_[U[i], a[i]]
        grad = X.T @ (sigmoid(X @ w + b[o]) - S[i, o]) + ridge * w
        assert np.abs(grad).max() < 1e-8


def test_squared_loss_row_fit_is_ridge_regression():
    rng = np.random.default_rng(1)
    V = rng.normal(size=(50, 2))
    S = rng.normal(size=(3, 50))
    S[:, ::3] = np.nan
    U, a = fit_model_factors(S, V, None, ridge=0.7, loss="squared", biases=False)
    for i in range(3):
        o = ~np.isnan(S[i])
        w = np.linalg.solve(V[o].T @ V[o] + 0.7 * np.eye(2), V[o].T @ S[i, o])
        np.testing.assert_allclose(U[i], w, atol=1e-10)
    assert np.all(a == 0)


@pytest.mark.parametrize("loss", ["logistic", "squared"])
def test_dense_and_sparse_paths_agree(monkeypatch, loss):
    S, _ = _logistic_matrix(missing=0.4)
    fits = []
    for thr in (0.0, 1.1):  # force the dense path, then the sparse path
        monkeypatch.setattr(lowrank, "_DENSE_THRESHOLD", thr)
        rng = np.random.default_rng(3)
        V = rng.normal(size=(S.shape[1], 2))
        fits.append(fit_model_factors(S, V, rng.normal(size=S.shape[1]), loss=loss, tol=1e-12))
    np.testing.assert_allclose(fits[0][0], fits[1][0], atol=1e-6)
    np.testing.assert_allclose(fits[0][1], fits[1][1], atol=1e-6)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_in_place_sigmoid_equals_sigmoid_bit_for_bit(dtype):
    x = np.random.default_rng(0).normal(scale=20, size=1000)
    x = np.r_[x, -np.inf, np.inf, 0.0].astype(dtype)
    assert np.array_equal(lowrank._sigmoid_inplace(x.copy()), sigmoid(x))


def _dense_case(case):
    """A score matrix and starting factors for the dense alternating fit."""
    rng = np.random.default_rng(7)
    m, n, r = 40, 151, 3
    P = sigmoid(rng.normal(size=(m, 1)) + rng.normal(size=n))
    Y = (rng.uniform(size=(m, n)) < P).astype(float)
    loss, biases, scale = "logistic", True, 0.1
    if case == "missing":
        Y[rng.uniform(size=Y.shape) < 0.3] = np.nan
    elif case == "squared":
        Y[rng.uniform(size=Y.shape) < 0.3] = np.nan
        loss = "squared"
    elif case == "no biases":
        biases = False
    elif case == "fractional":
        Y = rng.uniform(size=(m, n))
    elif case == "far start":  # saturated start: many full Newton steps are refused (backtracking)
        scale = 3.0
    start = (scale * rng.normal(size=(m, r)), scale * rng.normal(size=m),
             scale * rng.normal(size=(n, r)), scale * rng.normal(size=n))
    return Y, ~np.isnan(Y), start, loss, biases


@pytest.mark.parametrize(
    "case", ["complete", "missing", "squared", "no biases", "fractional", "far start"]
)
def test_blocked_dense_fit_equals_plain_fit_bit_for_bit(monkeypatch, case):
    # cache-sized blocks and reused buffers (issue 13) must not change a single bit of the fit:
    # blocks of 257 cells give ragged blocks of rows (and of columns) at this size
    monkeypatch.setattr(lowrank, "_BLOCK_CELLS", 257)
    Y, mask, (U, a, V, b), loss, biases = _dense_case(case)
    args = (biases, 1e-3 if case == "far start" else 1.0, loss, 12, 0.0)
    ours = lowrank._fit_dense_alternating(Y, mask, U, a, V, b, *args)
    plain = plain_fit_dense_alternating(Y, mask, U, a, V, b, *args)
    for x, y in zip(ours, plain):
        assert np.array_equal(x, y)


@pytest.mark.parametrize("missing", [0.0, 0.3])
def test_svd_start_equals_plain_start(monkeypatch, missing):
    S, _ = _logistic_matrix(m=50, n=70, missing=missing)
    seen = {}

    def capture(Y, mask, U, a, V, b, *args):
        seen.update(U=U, V=V)
        return U, a, V, b, 0.0, 0, True

    monkeypatch.setattr(lowrank, "_fit_dense_alternating", capture)
    monkeypatch.setattr(lowrank, "_DENSE_THRESHOLD", 0.0)
    fit_logistic_factors(S, rank=3, random_state=0)
    rng = np.random.RandomState(0)
    rng.standard_normal((50, 3)), rng.standard_normal((70, 3))  # the random start, drawn first
    U, V = plain_svd_start(S, 3, 4.0, rng)
    assert np.array_equal(seen["U"], U) and np.array_equal(seen["V"], V)


def test_dense_fit_peak_memory_is_four_float32_copies():
    S = (np.random.default_rng(0).uniform(size=(330, 3000)) < 0.4).astype(float)
    peaks = []
    for fit in (lowrank._fit_dense_alternating, plain_fit_dense_alternating):
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(lowrank, "_fit_dense_alternating", fit)
            tracemalloc.start()
            fit_logistic_factors(S, rank=8, max_iter=3, random_state=0)
            peaks.append(tracemalloc.get_traced_memory()[1])
            tracemalloc.stop()
    # ours: scores, predictor, cell losses and one work buffer in float32 (2x the float64
    # input), the mask (1/8), 1 MB blocks and (m + n) x d^2 Newton systems (~1x at this small
    # size); the plain fit holds about twice as much
    assert peaks[0] <= 3.3 * S.nbytes
    assert peaks[0] <= 0.6 * peaks[1]


@pytest.mark.parametrize("missing", [0.0, 0.7])
def test_joint_fit_recovers_low_rank_probabilities(missing):
    S, P = _logistic_matrix(m=80, n=120, missing=missing, seed=2)
    fit = fit_logistic_factors(S, rank=2, random_state=0)
    assert fit.converged
    corr = np.corrcoef(fit.predict().ravel(), P.ravel())[0, 1]
    assert corr > (0.9 if missing == 0 else 0.8)
    # stationarity of the model rows given the example side
    X = np.hstack([fit.example_factors, np.ones((S.shape[1], 1))])
    W = np.hstack([fit.model_factors, fit.model_bias[:, None]])
    obs = ~np.isnan(S)
    G = np.where(obs, fit.predict() - np.nan_to_num(S), 0.0) @ X + 1.0 * W
    assert np.abs(G).max() < 0.05 * np.abs(np.where(obs, np.nan_to_num(S), 0) @ X).max()


def test_joint_fit_variants():
    S, P = _logistic_matrix(missing=0.3)
    nob = fit_logistic_factors(S, rank=3, biases=False, init="random", random_state=0)
    assert np.all(nob.model_bias == 0) and np.all(nob.example_bias == 0)
    np.testing.assert_allclose(nob.predict(), sigmoid(nob.model_factors @ nob.example_factors.T))
    warm = fit_logistic_factors(S, rank=3, biases=False, init=nob, random_state=0)
    assert warm.n_iter <= nob.n_iter and warm.objective <= nob.objective * (1 + 1e-6)
    frac = np.where(np.isnan(S), np.nan, 0.25 + 0.5 * np.nan_to_num(S))
    assert fit_logistic_factors(frac, rank=1, random_state=0).converged
    sq = fit_logistic_factors(S * 3 - 1, rank=2, loss="squared", random_state=0)
    assert sq.loss == "squared" and sq.predict().min() < 0
    r0 = fit_logistic_factors(S, rank=0, random_state=0)
    assert r0.model_factors.shape == (S.shape[0], 0)


def test_lowrank_errors():
    S, _ = _logistic_matrix()
    with pytest.raises(ValueError, match="rank"):
        fit_logistic_factors(S, rank=-1)
    with pytest.raises(ValueError, match="ridge"):
        fit_logistic_factors(S, ridge=0)
    with pytest.raises(ValueError, match="no observed cell"):
        fit_logistic_factors(np.full((3, 4), np.nan))
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        fit_logistic_factors(S * 2)
    with pytest.raises(ValueError, match="Mismatched shapes"):
        fit_model_factors(S, np.ones((5, 2)))


def _plain_als(Y, M, U, V, ridge, sweeps):
    """Textbook ridge ALS, one row at a time (the definition)."""
    U, V = U.copy(), V.copy()
    r = U.shape[1]
    for _ in range(sweeps):
        for i in range(Y.shape[0]):
            o = M[i]
            U[i] = np.linalg.solve(V[o].T @ V[o] + ridge * np.eye(r), V[o].T @ Y[i, o])
        for j in range(Y.shape[1]):
            o = M[:, j]
            V[j] = np.linalg.solve(U[o].T @ U[o] + ridge * np.eye(r), U[o].T @ Y[o, j])
    return U, V


@pytest.mark.parametrize("rank", [1, 3])
def test_als_ensemble_member_equals_plain_als(rank):
    rng = np.random.default_rng(0)
    Y = rng.uniform(size=(12, 15))
    M = rng.uniform(size=Y.shape) < 0.6
    ens = ALSEnsemble(Y.shape, rank=rank, n_members=3, drop_rate=0.2, ridge=0.3, random_state=0)
    r, c = np.nonzero(M)
    # observed in two batches (the second overlapping the first): drops are drawn per new cell
    ens.observe(r[: r.size // 2], c[: r.size // 2], Y[r[: r.size // 2], c[: r.size // 2]])
    ens.observe(r[r.size // 3:], c[r.size // 3:], Y[r[r.size // 3:], c[r.size // 3:]])
    U0, V0 = ens.U.copy(), ens.V.copy()
    ens.fit(4)
    n_dropped = 0
    for k in range(3):
        Mk = ens.member_mask(k)
        assert not (Mk & ~M).any()
        n_dropped += (M & ~Mk).sum()
        U, V = _plain_als(Y, Mk, U0[k], V0[k], 0.3, 4)
        np.testing.assert_allclose(ens.U[k], U, rtol=0, atol=1e-8)
        np.testing.assert_allclose(ens.V[k], V, rtol=0, atol=1e-8)
    assert 0.1 < n_dropped / (3 * M.sum()) < 0.3  # about drop_rate of the cells, per member
    mean, std = ens.mean_std()
    P = np.einsum("kir,kjr->kij", ens.U, ens.V)
    np.testing.assert_allclose(mean, P.mean(0), atol=1e-10)
    np.testing.assert_allclose(std, P.std(0), atol=1e-6)


def test_als_ensemble_warm_refit_continues_the_same_als():
    """A refit after new cells equals plain ALS started from the previous factors."""
    rng = np.random.default_rng(1)
    Y = rng.uniform(size=(10, 14))
    M = rng.uniform(size=Y.shape) < 0.5
    ens = ALSEnsemble(Y.shape, rank=1, n_members=4, drop_rate=0.1, ridge=0.1, random_state=1)
    r, c = np.nonzero(M)
    ens.observe(r, c, Y[r, c])
    ens.fit(5)
    U1, V1 = ens.U.copy(), ens.V.copy()
    J = np.flatnonzero(~M[3])[:4]
    ens.observe(np.full(J.size, 3), J, Y[3, J])
    # a re-observed cell takes its new score, dropped or not, in every member
    r2, c2 = r[:5], c[:5]
    Y[r2, c2] = 1.0 - Y[r2, c2]
    ens.observe(r2, c2, Y[r2, c2])
    ens.fit(2)
    M[3, J] = True
    for k in range(4):
        Mk = ens.member_mask(k)
        assert not (Mk & ~M).any()
        U, V = _plain_als(Y, Mk, U1[k], V1[k], 0.1, 2)
        np.testing.assert_allclose(ens.U[k], U, rtol=0, atol=1e-8)
        np.testing.assert_allclose(ens.V[k], V, rtol=0, atol=1e-8)


def test_als_ensemble_completes_rank_one_and_reports_uncertainty():
    rng = np.random.default_rng(1)
    truth = np.outer(rng.uniform(0.3, 1, 40), rng.uniform(0.3, 1, 60))
    S = truth.copy()
    S[rng.uniform(size=S.shape) < 0.7] = np.nan
    mean, std = als_ensemble(S, n_members=16, n_sweeps=30, ridge=0.01, random_state=0)
    assert np.abs(mean - truth).mean() < 0.02
    assert std.shape == truth.shape and (std >= 0).all() and std.max() > 0
    with pytest.raises(ValueError, match="drop_rate"):
        ALSEnsemble((3, 3), drop_rate=1.0)


def test_completer_fills_only_missing_cells():
    S, P = _logistic_matrix(m=70, n=100, missing=0.5, seed=4)
    comp = LowRankScoreCompleter(rank=2, random_state=0).fit(S)
    assert comp.loss_ == "logistic" and comp.n_features_in_ == 100
    filled = comp.transform(S)
    obs = ~np.isnan(S)
    np.testing.assert_array_equal(filled[obs], S[obs])
    assert not np.isnan(filled).any()
    assert np.corrcoef(filled[~obs], P[~obs])[0, 1] > 0.7
    # new models on the same examples (example factors frozen)
    S2, P2 = _logistic_matrix(m=70, n=100, missing=0.5, seed=4)
    pred = comp.predict_scores(S2[:5])
    assert pred.shape == (5, 100) and ((pred > 0) & (pred < 1)).all()
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        comp.transform(S2 * 2)
    with pytest.raises(ValueError, match="features"):
        comp.transform(S2[:, :50])
    sq = LowRankScoreCompleter(rank=1, random_state=0).fit(S * 5)
    assert sq.loss_ == "squared"


def test_completer_keeps_dataframe_column_names():
    pd = pytest.importorskip("pandas")
    S, _ = _logistic_matrix(m=20, n=30, seed=5)
    df = pd.DataFrame(S, columns=[f"q{j}" for j in range(30)])
    comp = LowRankScoreCompleter(rank=1, random_state=0).fit(df)
    assert list(comp.feature_names_in_) == list(df.columns)
    assert comp.transform(df).shape == (20, 30)
