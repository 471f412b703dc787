"""Plain reference for the dense side-information fit of ``sklearn_riskcontrol.bandits.lowrank``.

:func:`plain_fit_dense_alternating` is the alternating Newton fit written plainly on whole
matrices (every step allocates its full-size float32 temporaries), as the library did before it
switched to cache-sized blocks and reused buffers (issue 13). The blocked version must give
bit-for-bit the same factors, so tests compare the two with ``np.array_equal`` and
``benchmarks/bandits_speed.py`` times and measures the memory of both.
:func:`plain_svd_start` is the spectral start computed with ``np.where`` temporaries.
"""

import numpy as np
from sklearn.utils.extmath import randomized_svd

from sklearn_riskcontrol.bandits.lowrank import _design, _outer_flat, _solve_batched


def _cell_loss(E, Y, M, loss):
    if loss == "squared":
        cl = 0.5 * (E - Y) ** 2
    else:
        cl = np.log1p(np.exp(-np.abs(E))) + np.maximum(E, 0) - Y * E
    return cl if M is None else cl * M


def _half_step(E, CL, Y, M, X, W, ridge, loss):
    R, d = W.shape
    X32 = X.astype(np.float32)
    XX32 = _outer_flat(X).astype(np.float32)
    if loss == "logistic":
        p = 0.5 + 0.5 * np.tanh(0.5 * E)
        w = (1.0 - p) * p
        g = p - Y
    else:
        g, w = E - Y, None
    if M is not None:
        g = g * M
        w = M if w is None else w * M
    grad = (g @ X32).astype(np.float64) + ridge * W
    if w is None:
        H = np.broadcast_to(XX32.sum(0), (R, d * d)).astype(np.float64)
    else:
        H = (w @ XX32).astype(np.float64)
    delta = _solve_batched(H.reshape(R, d, d) + ridge * np.eye(d), grad)
    W_new = W - delta
    if loss == "squared":
        E -= delta.astype(np.float32) @ X32.T
        CL[...] = _cell_loss(E, Y, M, loss)
        return W_new
    old = CL.sum(axis=1, dtype=np.float64) + 0.5 * ridge * (W * W).sum(1)
    step, rows = 1.0, np.arange(R)
    while rows.size and step > 1e-4 / 2:  # full step, then halvings down to 2**-14
        Wt = W[rows] - step * delta[rows]
        Et = E[rows] - (step * delta[rows]).astype(np.float32) @ X32.T
        CLt = _cell_loss(Et, Y[rows], None if M is None else M[rows], loss)
        new = CLt.sum(axis=1, dtype=np.float64) + 0.5 * ridge * (Wt * Wt).sum(1)
        ok = new <= old[rows] + 1e-7 * np.abs(old[rows])
        W_new[rows[ok]], E[rows[ok]], CL[rows[ok]] = Wt[ok], Et[ok], CLt[ok]
        rows = rows[~ok]
        step *= 0.5
    W_new[rows] = W[rows]  # no decrease found: keep these rows
    return W_new


def plain_fit_dense_alternating(Y, mask, U, a, V, b, biases, ridge, loss, max_iter, tol):
    """Drop-in reference for ``lowrank._fit_dense_alternating`` (same signature and returns)."""
    r = U.shape[1]
    Y32 = np.where(mask, Y, 0.0).astype(np.float32)
    M32 = None if mask.all() else mask.astype(np.float32)

    def full_eta():
        return (U.astype(np.float32) @ V.T.astype(np.float32) + a[:, None].astype(np.float32)
                + b[None, :].astype(np.float32))

    def objective(CL):
        pen = (U * U).sum() + (V * V).sum() + ((a * a).sum() + (b * b).sum() if biases else 0.0)
        return float(CL.sum(dtype=np.float64)) + 0.5 * ridge * pen

    E = full_eta()
    CL = _cell_loss(E, Y32, M32, loss)
    obj, converged, it = objective(CL), False, 0
    for it in range(1, max_iter + 1):
        W = np.hstack([U, a[:, None]]) if biases else U
        W = _half_step(E, CL, Y32, M32, _design(V, biases), W, ridge, loss)
        U, a = (W[:, :r].copy(), W[:, r].copy()) if biases else (W, a)
        W = np.hstack([V, b[:, None]]) if biases else V
        W = _half_step(E.T, CL.T, Y32.T, None if M32 is None else M32.T, _design(U, biases),
                       W, ridge, loss)
        V, b = (W[:, :r].copy(), W[:, r].copy()) if biases else (W, b)
        if it % 10 == 0:
            E = full_eta()
            CL = _cell_loss(E, Y32, M32, loss)
        new = objective(CL)
        converged = obj - new <= tol * max(abs(new), 1e-12)
        obj = new
        if converged:
            break
    return U, a, V, b, obj, it, converged


def plain_svd_start(Y, rank, slope, random_state):
    """Spectral start of ``fit_logistic_factors`` (``init="svd"``), whole-matrix temporaries."""
    mask = ~np.isnan(Y)
    Y0 = np.where(mask, Y, 0.0)
    rmean = Y0.sum(1) / np.maximum(mask.sum(1), 1)
    cmean = Y0.sum(0) / np.maximum(mask.sum(0), 1)
    resid = np.where(mask, Y - rmean[:, None] - cmean[None, :] + Y0.sum() / mask.sum(), 0.0)
    resid /= max(mask.mean(), 1e-12)
    Us, sv, Vt = randomized_svd(resid, rank, random_state=random_state)
    root = np.sqrt(slope * sv)
    return Us * root, Vt.T * root
