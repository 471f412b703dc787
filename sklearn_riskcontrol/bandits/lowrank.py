"""Low-rank models of partially observed score matrices (array layer: NumPy/SciPy only).

Two models are provided.

**Logistic factorization** (PULSE, Tolochinsky et al. 2026, Step 1)::

    P(S[i, j] = 1) = sigmoid(u_i . v_j + a_i + b_j)

fitted by minimising the binary cross-entropy over the observed cells plus
``ridge / 2 * (|U|^2 + |V|^2 + |a|^2 + |b|^2)`` (``biases=False`` drops ``a`` and ``b`` and gives
exactly the paper's ``sigmoid(u_i . v_j)``; with biases the model equals a rank ``r + 2``
factorization with two fixed coordinates). With the example side ``(V, b)`` frozen, every model row
is an independent ridge-logistic regression on the features ``[v_j, 1]`` (offset ``b_j``) of its
observed examples; :func:`fit_model_factors` solves all of them at once by vectorised Newton (IRLS)
steps with a per-row backtracking line search. :func:`fit_logistic_factors` fits both sides by
alternating such Newton steps (one per side per sweep). Fractional targets in ``[0, 1]`` are
allowed (the cross-entropy stays convex). ``loss="squared"`` gives the same machinery with the
squared loss, i.e. ridge alternating least squares.

**ALS ensemble** (UCB-E-LRF, Zhou et al. 2025): :class:`ALSEnsemble` fits ``K`` rank-``r``
least-squares factorizations ``U_k V_k^T`` of the observed cells, each with its own random
``drop_rate`` of the cells left out, by ridge alternating least squares vectorised over members;
the ensemble mean is the completed matrix and the ensemble standard deviation its uncertainty.

The observed cells are handled densely (matrix products) when at least 20% of the matrix is
observed and as CSR sparse matrices otherwise, so one Newton step costs
``O(n_observed * r^2)`` either way. The dense joint fit (e.g. on complete side information)
holds four float32 copies of the matrix (scores, linear predictor, cell losses, one work
buffer: twice the memory of a float64 input) and does its elementwise work in cache-sized blocks.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike
import scipy.sparse as sp

from .._validation import (
    as_float_array,
    check_indices,
    check_random_state,
    check_same_length,
    check_score_matrix,
    check_scores,
)
from .._typing import BoolArray, FloatArray, RandomStateLike

if TYPE_CHECKING:
    from typing_extensions import Self  # typing.Self: Python >= 3.11

__all__ = [
    "sigmoid",
    "LowRankFactorization",
    "fit_logistic_factors",
    "fit_model_factors",
    "RankCV",
    "select_rank_cv",
    "ALSEnsemble",
    "als_ensemble",
]

_DENSE_THRESHOLD = 0.2
_CHUNK_CELLS = 4_000_000  # cells per dense chunk (bounds the temporaries to ~32 MB each)
_BLOCK_CELLS = 1 << 18  # cells per block of elementwise float32 work (1 MB: stays in cache)


# ---------------------------------------------------------------------------------- helpers
def _design(F, bias):
    """Features of one side: the factors, plus a constant column when biases are fitted."""
    if not bias:
        return np.ascontiguousarray(F, dtype=float)
    return np.hstack([F, np.ones((F.shape[0], 1))])


def _logit(p):
    return np.log(p) - np.log1p(-p)


def _outer_flat(X):
    d = X.shape[1]
    return (X[:, :, None] * X[:, None, :]).reshape(X.shape[0], d * d)


def sigmoid(x: ArrayLike) -> FloatArray:
    """Logistic function, ``0.5 * (1 + tanh(x / 2))`` (fast and overflow-free in float64).

    Elementwise on any shape, like ``scipy.special.expit``: ``-inf -> 0``, ``+inf -> 1``,
    NaN stays NaN. Non-real input (strings, complex) raises ``TypeError``.

    Examples
    --------
    >>> from sklearn_riskcontrol.bandits.lowrank import sigmoid
    >>> sigmoid([-1000.0, 0.0, 1000.0])
    array([0. , 0.5, 1. ])
    """
    x = np.asarray(x)
    if x.dtype.kind not in "biuf":
        raise TypeError(f"`x` must hold real numbers; got dtype {x.dtype}.")
    return 0.5 + 0.5 * np.tanh(0.5 * x)


def _sigmoid_inplace(x):
    """:func:`sigmoid` of a float array, computed in place (same operations, no temporaries)."""
    x *= 0.5
    np.tanh(x, out=x)
    x *= 0.5
    x += 0.5
    return x


def _cell_loss(eta, y, loss):
    if loss == "logistic":
        # softplus(eta) - y * eta, written so that it neither overflows nor cancels
        return np.maximum(eta, 0) - y * eta + np.log1p(np.exp(-np.abs(eta)))
    r = eta - y
    return 0.5 * r * r


def _grad_weights(eta, y, loss):
    if loss == "logistic":
        p = sigmoid(eta)
        return p - y, p * (1.0 - p)
    return eta - y, np.ones_like(eta)


def _solve_batched(H, g):
    return np.linalg.solve(H, g[..., None])[..., 0]


class _Cells:
    """The observed cells of an ``R x C`` matrix in CSR order (row by row)."""

    def __init__(self, indptr, indices, y, n_cols):
        self.indptr = np.asarray(indptr, dtype=np.int64)
        self.indices = np.asarray(indices, dtype=np.int64)
        self.y = np.asarray(y, dtype=float)
        self.n_rows = self.indptr.size - 1
        self.n_cols = int(n_cols)
        self.rows = np.repeat(np.arange(self.n_rows), np.diff(self.indptr))

    @classmethod
    def from_coo(cls, r, c, y, shape):
        order = np.lexsort((c, r))
        r, c, y = r[order], c[order], y[order]
        indptr = np.zeros(shape[0] + 1, dtype=np.int64)
        np.cumsum(np.bincount(r, minlength=shape[0]), out=indptr[1:])
        return cls(indptr, c, y, shape[1])

    def matrix(self, data):
        return sp.csr_matrix((data, self.indices, self.indptr), shape=(self.n_rows, self.n_cols))

    def transpose(self):
        return _Cells.from_coo(self.indices, self.rows, self.y, (self.n_cols, self.n_rows))

    def row_sums(self, values):
        return np.bincount(self.rows, weights=values, minlength=self.n_rows)


def _newton_loop(W, eta_of, obj_of, grad_hess_of, ridge, loss, n_iter, tol):
    """Damped Newton iterations for ``R`` independent ridge GLM rows.

    ``eta_of(W)`` gives the linear predictor of the observed cells, ``obj_of(eta, W)`` the
    per-row objective and ``grad_hess_of(eta, W)`` the per-row gradient (R, d) and Hessian
    (R, d, d). Each row takes the full Newton step, halved (for that row only) until its objective
    does not increase; a row without any decrease keeps its coefficients.
    """
    R = W.shape[0]
    W = W.copy()
    eta = eta_of(W)
    obj = obj_of(eta, W)
    for _ in range(n_iter):
        grad, H = grad_hess_of(eta, W)
        delta = _solve_batched(H, grad)
        if loss == "squared":  # quadratic: the Newton step is exact
            return W - delta
        step = np.ones(R)
        # near the optimum a Newton step changes the objective by less than its rounding error,
        # so "no increase" is judged up to that error (otherwise the last steps are refused)
        slack = 1e-12 * np.abs(obj)
        for _ls in range(30):
            W_new = W - step[:, None] * delta
            eta_new = eta_of(W_new)
            obj_new = obj_of(eta_new, W_new)
            bad = obj_new > obj + slack
            if not bad.any():
                break
            step[bad] *= 0.5
        bad_final = obj_new > obj + slack
        if bad_final.any():
            W_new[bad_final] = W[bad_final]
            eta_new = eta_of(W_new)
            obj_new = obj_of(eta_new, W_new)
        change = np.abs(W_new - W).max()
        W, eta, obj = W_new, eta_new, obj_new
        if change < tol:
            break
    return W


def _newton_rows_sparse(cells, X, offset, W, ridge, loss, n_iter, tol, XX=None):
    """Newton steps for ``R`` independent ridge GLM rows on CSR cells; returns the new ``W``."""
    R, d = W.shape
    if cells.y.size == 0:
        return np.zeros_like(W) if n_iter else W
    if XX is None:
        XX = _outer_flat(X)
    Xc = X[cells.indices]
    offc = 0.0 if offset is None else offset[cells.indices]

    def eta_of(Wt):
        return offc + np.einsum("cd,cd->c", Wt[cells.rows], Xc)

    def obj_of(eta, Wt):
        return cells.row_sums(_cell_loss(eta, cells.y, loss)) + 0.5 * ridge * (Wt * Wt).sum(1)

    def grad_hess_of(eta, Wt):
        g, w = _grad_weights(eta, cells.y, loss)
        grad = cells.matrix(g) @ X + ridge * Wt
        H = (cells.matrix(w) @ XX).reshape(R, d, d) + ridge * np.eye(d)
        return grad, H

    return _newton_loop(W, eta_of, obj_of, grad_hess_of, ridge, loss, n_iter, tol)


def _newton_rows_dense(Y, M, X, offset, W, ridge, loss, n_iter, tol, XX=None):
    """Same as :func:`_newton_rows_sparse` for a dense ``Y`` with observation mask ``M``."""
    R, d = W.shape
    C = X.shape[0]
    if XX is None:
        XX = _outer_flat(X)
    W = W.copy()
    chunk = max(1, _CHUNK_CELLS // max(C, 1))
    for s in range(0, R, chunk):
        e = min(R, s + chunk)
        y = Y[s:e]
        m = None if M is None else M[s:e]

        def eta_of(Wt):
            eta = Wt @ X.T
            return eta if offset is None else eta + offset

        def obj_of(eta, Wt):
            cl = _cell_loss(eta, y, loss)
            if m is not None:
                cl *= m
            return cl.sum(1) + 0.5 * ridge * (Wt * Wt).sum(1)

        def grad_hess_of(eta, Wt):
            g, w = _grad_weights(eta, y, loss)
            if m is not None:
                g *= m
                w *= m
            H = (w @ XX).reshape(Wt.shape[0], d, d) + ridge * np.eye(d)
            return g @ X + ridge * Wt, H

        W[s:e] = _newton_loop(W[s:e], eta_of, obj_of, grad_hess_of, ridge, loss, n_iter, tol)
    return W


def _blocks(n_rows, n_cols):
    """Slices of consecutive rows holding about ``_BLOCK_CELLS`` cells each."""
    step = max(1, _BLOCK_CELLS // max(n_cols, 1))
    return [slice(s, min(n_rows, s + step)) for s in range(0, n_rows, step)]


def _dense_cell_loss(E, Y, M, loss, out=None):
    """Per-cell loss of a dense float32 predictor, written to ``out`` (new array if None)."""
    if loss == "squared":
        cl = np.subtract(E, Y, out=out)
        np.multiply(cl, cl, out=cl)
        cl *= 0.5
    else:
        cl = np.abs(E, out=out)
        np.negative(cl, out=cl)
        np.exp(cl, out=cl)
        np.log1p(cl, out=cl)
        t = np.maximum(E, 0)
        cl += t
        np.multiply(Y, E, out=t)
        cl -= t
    if M is not None:
        cl *= M
    return cl


def _dense_weights(E, Y, M, loss, g, w):
    """Gradient weights ``g`` and (logistic loss) Hessian weights ``w`` of the cells, in place."""
    if loss == "squared":
        np.subtract(E, Y, out=g)
    else:
        np.multiply(E, 0.5, out=g)
        np.tanh(g, out=g)
        g *= 0.5
        g += 0.5
        np.subtract(1.0, g, out=w)
        w *= g
        g -= Y
    if M is not None:
        g *= M
        if w is not None:
            w *= M


def _dense_half_step(E, CL, Y, M, X, W, ridge, loss, work, transposed):
    """One Newton step for every row (or, if ``transposed``, every column) of the dense problem.

    ``E`` is the current (m, n) linear predictor (float32) and ``CL`` its per-cell loss; both are
    updated in place. ``Y`` holds the scores, ``M`` the observation mask as 0/1 floats (or None),
    ``X`` the other side's design and ``W`` the coefficients being solved, one row per solved
    row/column. No full-size temporary is allocated: ``work`` (a float32 buffer of ``m * n``
    cells) holds the gradient weights, then the trial predictor, and ``CL``, once its row sums
    are taken, holds the Hessian weights until the new cell losses overwrite them.
    Elementwise work runs in cache-sized blocks of rows; the matrix products and reductions run
    on the whole matrix, in the memory layout of a plain implementation on ``E`` (or ``E.T``),
    so that the result does not depend on the block size. Rows whose full step does not
    decrease their objective are backtracked (only those rows are recomputed).
    Returns the new ``W``.
    """
    m, n = E.shape
    R, d = W.shape
    X32 = X.astype(np.float32)
    XX32 = _outer_flat(X).astype(np.float32)
    view = (lambda A: A.T) if transposed else (lambda A: A)
    logistic = loss == "logistic"
    if logistic:
        old = view(CL).sum(axis=1, dtype=np.float64) + 0.5 * ridge * (W * W).sum(1)
    G = work.reshape(m, n)
    for blk in _blocks(m, n):
        _dense_weights(E[blk], Y[blk], None if M is None else M[blk], loss, G[blk],
                       CL[blk] if logistic else None)
    grad = (view(G) @ X32).astype(np.float64) + ridge * W
    if logistic:
        H = (view(CL) @ XX32).astype(np.float64)
    else:
        H = XX32.sum(0) if M is None else view(M) @ XX32
        H = np.broadcast_to(H, (R, d * d)).astype(np.float64)
    H = H.reshape(R, d, d)
    H += ridge * np.eye(d)
    delta = _solve_batched(H, grad)
    W_new = W - delta
    E, CL, Y, M = view(E), view(CL), view(Y), None if M is None else view(M)
    T = np.matmul(delta.astype(np.float32), X32.T, out=work.reshape(E.shape))
    if not logistic:  # quadratic: the Newton step is exact
        E -= T
        for blk in _blocks(*E.shape):
            _dense_cell_loss(E[blk], Y[blk], None if M is None else M[blk], loss, CL[blk])
        return W_new
    np.subtract(E, T, out=T)  # the trial predictor
    bad = []
    for blk in _blocks(*E.shape):
        Mb = None if M is None else M[blk]
        dst = CL[blk]
        # losses are computed on contiguous arrays only (as in a plain implementation)
        CLt = _dense_cell_loss(T[blk], Y[blk], Mb, loss, dst if dst.flags.c_contiguous else None)
        Wb = W_new[blk]
        new = CLt.sum(axis=1, dtype=np.float64) + 0.5 * ridge * (Wb * Wb).sum(1)
        ok = new <= old[blk] + 1e-7 * np.abs(old[blk])
        np.copyto(E[blk], T[blk], where=ok[:, None])
        if CLt is not dst:
            dst[...] = CLt
        rej = np.flatnonzero(~ok)
        if rej.size:  # these rows keep their predictor: restore its losses
            Mr = None if Mb is None else Mb[rej]
            dst[rej] = _dense_cell_loss(E[blk][rej], Y[blk][rej], Mr, loss)
        bad.append(blk.start + rej)
    bad = np.concatenate(bad)
    step = 1.0
    while bad.size and step > 1e-4:
        step *= 0.5
        Mb = None if M is None else M[bad]
        Wb = W[bad] - step * delta[bad]
        Eb = E[bad] - (step * delta[bad]).astype(np.float32) @ X32.T
        CLb = _dense_cell_loss(Eb, Y[bad], Mb, loss)
        nb = CLb.sum(axis=1, dtype=np.float64) + 0.5 * ridge * (Wb * Wb).sum(1)
        okb = nb <= old[bad] + 1e-7 * np.abs(old[bad])
        rows = bad[okb]
        W_new[rows] = Wb[okb]
        E[rows] = Eb[okb]
        CL[rows] = CLb[okb]
        bad = bad[~okb]
    W_new[bad] = W[bad]  # no decrease found: keep these rows
    return W_new


def _fit_dense_alternating(Y, mask, U, a, V, b, biases, ridge, loss, max_iter, tol):
    """Alternating Newton sweeps on a dense (mostly observed) matrix, float32 inner arithmetic.

    Memory: four float32 copies of the matrix (scores, predictor, cell losses, one work buffer),
    plus the float32 mask when cells are missing.
    """
    r = U.shape[1]
    Y32 = Y.astype(np.float32)
    M32 = None
    if not mask.all():
        np.copyto(Y32, 0.0, where=~mask)
        M32 = mask.astype(np.float32)
    E = np.empty(Y.shape, dtype=np.float32)
    CL = np.empty_like(E)
    work = np.empty(E.size, dtype=np.float32)

    def refresh():
        # the predictor from the factors, and its cell losses (in place)
        np.matmul(U.astype(np.float32), V.T.astype(np.float32), out=E)
        np.add(E, a[:, None].astype(np.float32), out=E)
        np.add(E, b[None, :].astype(np.float32), out=E)
        for blk in _blocks(*E.shape):
            _dense_cell_loss(E[blk], Y32[blk], None if M32 is None else M32[blk], loss, CL[blk])

    def penalty():
        p = (U * U).sum() + (V * V).sum()
        return p + ((a * a).sum() + (b * b).sum() if biases else 0.0)

    refresh()
    obj = float(CL.sum(dtype=np.float64)) + 0.5 * ridge * penalty()
    converged = False
    it = 0
    for it in range(1, max_iter + 1):
        Xv = _design(V, biases)
        W = np.hstack([U, a[:, None]]) if biases else U
        W = _dense_half_step(E, CL, Y32, M32, Xv, W, ridge, loss, work, False)
        U, a = (W[:, :r].copy(), W[:, r].copy()) if biases else (W, a)
        Xu = _design(U, biases)
        W = np.hstack([V, b[:, None]]) if biases else V
        W = _dense_half_step(E, CL, Y32, M32, Xu, W, ridge, loss, work, True)
        V, b = (W[:, :r].copy(), W[:, r].copy()) if biases else (W, b)
        if it % 10 == 0:  # limit float32 drift of the carried predictor
            refresh()
        new = float(CL.sum(dtype=np.float64)) + 0.5 * ridge * penalty()
        if obj - new <= tol * max(abs(new), 1e-12):
            obj = new
            converged = True
            break
        obj = new
    return U, a, V, b, obj, it, converged


class _Observed:
    """Observed cells of a matrix, dense (with mask) or sparse, plus its transpose."""

    def __init__(self, Y, mask):
        self.shape = Y.shape
        self.n_obs = int(mask.sum())
        self.dense = self.n_obs >= _DENSE_THRESHOLD * Y.size
        if self.dense:
            self.Y = np.where(mask, Y, 0.0)
            self.M = None if self.n_obs == Y.size else mask
            self.YT = np.ascontiguousarray(self.Y.T)
            self.MT = None if self.M is None else np.ascontiguousarray(self.M.T)
        else:
            r, c = np.nonzero(mask)
            self.cells = _Cells.from_coo(r, c, Y[r, c], Y.shape)
            self.cellsT = self.cells.transpose()

    def newton(self, side, X, offset, W, ridge, loss, n_iter, tol):
        if self.dense:
            Y, M = (self.Y, self.M) if side == "rows" else (self.YT, self.MT)
            return _newton_rows_dense(Y, M, X, offset, W, ridge, loss, n_iter, tol)
        cells = self.cells if side == "rows" else self.cellsT
        return _newton_rows_sparse(cells, X, offset, W, ridge, loss, n_iter, tol)

    def data_loss(self, eta_fn, loss):
        if self.dense:
            total = 0.0
            R = self.shape[0]
            chunk = max(1, _CHUNK_CELLS // max(self.shape[1], 1))
            for s in range(0, R, chunk):
                e = min(R, s + chunk)
                cl = _cell_loss(eta_fn(slice(s, e)), self.Y[s:e], loss)
                if self.M is not None:
                    cl *= self.M[s:e]
                total += cl.sum()
            return total
        c = self.cells
        return _cell_loss(eta_fn((c.rows, c.indices)), c.y, loss).sum()


# ---------------------------------------------------------------------------------- results
class LowRankFactorization:
    """A fitted (logistic or squared-loss) low-rank model of a score matrix.

    ``eta[i, j] = model_factors[i] . example_factors[j] + model_bias[i] + example_bias[j]``;
    predictions are ``sigmoid(eta)`` for the logistic loss and ``eta`` for the squared loss.

    Attributes
    ----------
    model_factors : ndarray of shape (n_models, rank)
    example_factors : ndarray of shape (n_examples, rank)
    model_bias : ndarray of shape (n_models,)
        Zeros when fitted with ``biases=False``.
    example_bias : ndarray of shape (n_examples,)
    loss : {"logistic", "squared"}
    objective : float
        Final value of the penalised objective (sum over observed cells).
    n_iter : int
        Alternating sweeps performed.
    converged : bool

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_riskcontrol.bandits.lowrank import LowRankFactorization
    >>> fit = LowRankFactorization(np.array([[1.0], [-1.0]]), np.array([[2.0], [0.0]]),
    ...                            np.zeros(2), np.zeros(2), "logistic")
    >>> fit.decision_function()
    array([[ 2.,  0.],
           [-2.,  0.]])
    >>> fit.predict(rows=[0], cols=[1])
    array([[0.5]])
    """

    def __init__(
        self,
        model_factors: ArrayLike,
        example_factors: ArrayLike,
        model_bias: ArrayLike,
        example_bias: ArrayLike,
        loss: str,
        objective: float = np.nan,
        n_iter: int = 0,
        converged: bool = True,
    ) -> None:
        self.model_factors = model_factors
        self.example_factors = example_factors
        self.model_bias = model_bias
        self.example_bias = example_bias
        self.loss = loss
        self.objective = objective
        self.n_iter = n_iter
        self.converged = converged

    @property
    def rank(self) -> int:
        return self.model_factors.shape[1]

    def decision_function(
        self, rows: ArrayLike | None = None, cols: ArrayLike | None = None
    ) -> FloatArray:
        """Linear predictor ``eta`` for the given model rows and example columns."""
        U = self.model_factors if rows is None else self.model_factors[rows]
        a = self.model_bias if rows is None else self.model_bias[rows]
        V = self.example_factors if cols is None else self.example_factors[cols]
        b = self.example_bias if cols is None else self.example_bias[cols]
        return U @ V.T + a[:, None] + b[None, :]

    def predict(self, rows: ArrayLike | None = None, cols: ArrayLike | None = None) -> FloatArray:
        """Predicted scores (probabilities for the logistic loss)."""
        eta = self.decision_function(rows, cols)
        return sigmoid(eta) if self.loss == "logistic" else eta

    def __repr__(self):
        return (
            f"LowRankFactorization(n_models={self.model_factors.shape[0]}, "
            f"n_examples={self.example_factors.shape[0]}, rank={self.rank}, loss={self.loss!r}, "
            f"n_iter={self.n_iter}, converged={self.converged})"
        )


def _check_common(rank, ridge, loss):
    if not isinstance(rank, (int, np.integer)) or isinstance(rank, bool) or rank < 0:
        raise ValueError(f"`rank` must be a non-negative integer; got {rank!r}.")
    if not (np.isscalar(ridge) and np.isfinite(ridge) and ridge > 0):
        raise ValueError(f"`ridge` must be a positive number; got {ridge!r}.")
    if loss not in ("logistic", "squared"):
        raise ValueError(f"`loss` must be 'logistic' or 'squared'; got {loss!r}.")


def fit_logistic_factors(
    scores: ArrayLike,
    *,
    rank: int | str = 8,
    ridge: float = 1.0,
    biases: bool = True,
    loss: str = "logistic",
    max_iter: int = 100,
    tol: float = 1e-4,
    init: str | LowRankFactorization = "svd",
    random_state: RandomStateLike = None,
) -> LowRankFactorization:
    """Fit a low-rank logistic (or squared-loss) factorization of a partially observed matrix.

    Alternates one vectorised Newton step over all model rows (example side fixed) and one over all
    example columns (model side fixed), each a batch of independent ridge regressions, until the
    relative decrease of the objective falls below ``tol``.

    Parameters
    ----------
    scores : array-like of shape (n_models, n_examples)
        Scores in ``[0, 1]`` (binary or fractional for the logistic loss, any finite value for the
        squared loss); NaN marks an unobserved cell.
    rank : int, default=8
    ridge : float, default=1.0
        Penalty ``ridge / 2`` times the squared norms of all factors and biases.
    biases : bool, default=True
        Fit a bias per model and per example on top of the rank-``rank`` term.
    loss : {"logistic", "squared"}, default="logistic"
    max_iter : int, default=100
        Maximum number of alternating sweeps.
    tol : float, default=1e-4
        Stop when a sweep decreases the objective by less than ``tol`` times its value.
    init : {"svd", "random"} or LowRankFactorization, default="svd"
        Starting factors: the top singular vectors of the double-centred observed matrix
        (scaled to the logit scale), small random values, or a previous fit (warm start).
    random_state : int, RandomState, numpy.random.Generator or None, default=None
        Seeds the initial factors.

    Returns
    -------
    LowRankFactorization

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_riskcontrol.bandits.lowrank import fit_logistic_factors
    >>> rng = np.random.default_rng(0)
    >>> u, v = rng.normal(size=(60, 2)), rng.normal(size=(80, 2))
    >>> P = 1 / (1 + np.exp(-2 * u @ v.T))
    >>> S = (rng.uniform(size=P.shape) < P).astype(float)
    >>> S[rng.uniform(size=S.shape) < 0.5] = np.nan           # half the cells unobserved
    >>> fit = fit_logistic_factors(S, rank=2, random_state=0)
    >>> fit.predict().shape
    (60, 80)
    >>> bool(np.corrcoef(fit.predict().ravel(), P.ravel())[0, 1] > 0.8)
    True
    """
    _check_common(rank, ridge, loss)
    Y = check_score_matrix(scores, "scores", allow_nan=True, lower=0.0 if loss == "logistic" else None)
    mask = ~np.isnan(Y)
    if not mask.any():
        raise ValueError("`scores` has no observed cell (all NaN); nothing to fit.")
    rng = check_random_state(random_state)
    m, n = Y.shape
    cnt = np.maximum(mask.sum(1), 1)
    ccnt = np.maximum(mask.sum(0), 1)
    complete = bool(mask.all())
    Y0 = Y if complete else np.where(mask, Y, 0.0)
    rmean = Y0.sum(1) / cnt
    cmean = Y0.sum(0) / ccnt
    grand = Y0.sum() / mask.sum()
    del Y0  # (m, n) temporaries are freed as soon as possible: the fit below needs the memory
    if loss == "logistic":
        # additive logit start: a_i + b_j fits the row and column rates
        lr = _logit((rmean * cnt + 0.5) / (cnt + 1.0))
        lc = _logit((cmean * ccnt + 0.5) / (ccnt + 1.0))
        a = lr if biases else np.zeros(m)
        b = (lc - lc.mean()) if biases else np.zeros(n)
        slope = 4.0
    else:
        a = rmean.copy() if biases else np.zeros(m)
        b = (cmean - cmean.mean()) if biases else np.zeros(n)
        slope = 1.0
    if isinstance(init, LowRankFactorization):
        if init.model_factors.shape != (m, rank) or init.example_factors.shape != (n, rank):
            raise ValueError(
                f"`init` has factors of shapes {init.model_factors.shape} and "
                f"{init.example_factors.shape}; expected {(m, rank)} and {(n, rank)}."
            )
        U, V = init.model_factors.copy(), init.example_factors.copy()
        if biases:
            a, b = init.model_bias.copy(), init.example_bias.copy()
    elif init == "svd" and rank > 0:
        # spectral start: top singular vectors of the double-centred observed matrix
        from sklearn.utils.extmath import randomized_svd

        resid = Y - rmean[:, None]
        resid -= cmean[None, :]
        resid += grand
        if not complete:
            resid[~mask] = 0.0
        resid /= max(mask.mean(), 1e-12)
        k = min(rank, min(m, n) - 1) if min(m, n) > 1 else 0
        U = 0.01 * rng.standard_normal((m, rank))
        V = 0.01 * rng.standard_normal((n, rank))
        if k > 0:
            Us, sv, Vt = randomized_svd(resid, k, random_state=rng)
            root = np.sqrt(slope * sv)
            U[:, :k] = Us * root
            V[:, :k] = Vt.T * root
        del resid
    else:
        U = 0.1 * rng.standard_normal((m, rank))
        V = 0.1 * rng.standard_normal((n, rank))
    if mask.sum() >= _DENSE_THRESHOLD * mask.size:
        U, a, V, b, obj, it, converged = _fit_dense_alternating(
            Y, mask, U, a, V, b, biases, ridge, loss, max_iter, tol
        )
        U, a, V, b = (np.ascontiguousarray(x, dtype=float) for x in (U, a, V, b))
        return LowRankFactorization(U, V, a, b, loss, objective=float(obj), n_iter=it,
                                    converged=converged)
    obs = _Observed(Y, mask)

    def eta_fn(idx):
        if isinstance(idx, slice):
            return U[idx] @ V.T + a[idx, None] + b[None, :]
        r, c = idx
        return np.einsum("cd,cd->c", U[r], V[c]) + a[r] + b[c]

    def objective():
        pen = (U * U).sum() + (V * V).sum() + ((a * a).sum() + (b * b).sum() if biases else 0.0)
        return obs.data_loss(eta_fn, loss) + 0.5 * ridge * pen

    obj = objective()
    converged = False
    it = 0
    for it in range(1, max_iter + 1):
        # model rows, example side fixed
        W = np.hstack([U, a[:, None]]) if biases else U
        W = obs.newton("rows", _design(V, biases), b if biases else None, W, ridge, loss, 1, 0.0)
        U, a = (W[:, :rank], W[:, rank]) if biases else (W, a)
        # example columns, model side fixed
        W = np.hstack([V, b[:, None]]) if biases else V
        W = obs.newton("cols", _design(U, biases), a if biases else None, W, ridge, loss, 1, 0.0)
        V, b = (W[:, :rank], W[:, rank]) if biases else (W, b)
        new = objective()
        if obj - new <= tol * max(abs(new), 1e-12):
            obj = new
            converged = True
            break
        obj = new
    U, a, V, b = (np.ascontiguousarray(x) for x in (U, a, V, b))
    return LowRankFactorization(U, V, a, b, loss, objective=float(obj), n_iter=it, converged=converged)


def fit_model_factors(
    scores: ArrayLike,
    example_factors: ArrayLike,
    example_bias: ArrayLike | None = None,
    *,
    ridge: float = 1.0,
    biases: bool = True,
    loss: str = "logistic",
    init: ArrayLike | None = None,
    max_iter: int = 25,
    tol: float = 1e-6,
) -> tuple[FloatArray, FloatArray]:
    """Fit the model side of a factorization with the example side frozen.

    Each row of ``scores`` is an independent ridge regression (logistic or least squares) on the
    features ``[v_j, 1]`` (offset ``example_bias[j]``) of its observed examples, solved by
    vectorised Newton steps over all rows.

    Parameters
    ----------
    scores : array-like of shape (n_models, n_examples)
        NaN marks an unobserved cell. A row with no observed cell gets zero factors (and bias).
    example_factors : ndarray of shape (n_examples, rank)
    example_bias : ndarray of shape (n_examples,), default=None
    ridge, biases, loss : see :func:`fit_logistic_factors`
    init : ndarray of shape (n_models, rank + biases), default=None
        Starting coefficients ``[u_i, a_i]`` (warm start).
    max_iter : int, default=25
        Maximum Newton steps.
    tol : float, default=1e-6
        Stop when no coefficient moves by more than ``tol``.

    Returns
    -------
    model_factors : ndarray of shape (n_models, rank)
    model_bias : ndarray of shape (n_models,)

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_riskcontrol.bandits.lowrank import fit_model_factors
    >>> V = np.array([[1.0], [-1.0], [2.0], [0.5]])
    >>> S = np.array([[1.0, 0.0, 1.0, np.nan], [0.0, 1.0, np.nan, np.nan]])
    >>> U, a = fit_model_factors(S, V, np.zeros(4), ridge=1.0)
    >>> U.shape, bool(U[0, 0] > 0 > U[1, 0])
    ((2, 1), True)
    """
    _check_common(0, ridge, loss)
    V = as_float_array(example_factors, "example_factors", "a 2-d array (n_examples, rank)")
    if V.ndim != 2:
        raise ValueError(f"`example_factors` must be 2-d (n_examples, rank); got shape {V.shape}.")
    if V.shape[1] == 0 or not np.isfinite(V).all():
        raise ValueError(f"`example_factors` must be finite with at least one column; got shape {V.shape}.")
    Y = check_score_matrix(scores, "scores", allow_nan=True, lower=0.0 if loss == "logistic" else None)
    if Y.shape[1] != V.shape[0]:
        raise ValueError(
            f"Mismatched shapes: `scores` has {Y.shape[1]} columns but `example_factors` has "
            f"{V.shape[0]} rows; both index the same examples."
        )
    b = None
    if biases:
        b = np.zeros(V.shape[0]) if example_bias is None else np.asarray(example_bias, dtype=float)
    r = V.shape[1]
    d = r + int(biases)
    W = np.zeros((Y.shape[0], d)) if init is None else np.array(init, dtype=float)
    mask = ~np.isnan(Y)
    obs = _Observed(Y, mask)
    W = obs.newton("rows", _design(V, biases), b, W, ridge, loss, max_iter, tol)
    if biases:
        return W[:, :r].copy(), W[:, r].copy()
    return W, np.zeros(Y.shape[0])


# ---------------------------------------------------------------------------------- rank by CV
RANK_CANDIDATES = (1, 2, 4, 8, 16)


class RankCV:
    """Result of :func:`select_rank_cv`.

    Attributes
    ----------
    rank : int
        The chosen rank (one-standard-error rule).
    candidates : ndarray of int
        The ranks compared.
    fold_errors : ndarray of shape (n_candidates, n_folds)
        Mean held-out loss of each rank on each fold.
    cv_error : ndarray of shape (n_candidates,)
        Mean of ``fold_errors`` over the folds.
    cv_se : ndarray of shape (n_candidates,)
        Its standard error, ``std(fold_errors, ddof=1) / sqrt(n_folds)``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_riskcontrol.bandits.lowrank import RankCV
    >>> res = RankCV(1, [1, 2, 4], np.array([[0.52, 0.50], [0.40, 0.42], [0.41, 0.39]]))
    >>> res.cv_error.round(3).tolist(), res.cv_se.round(3).tolist()
    ([0.51, 0.41, 0.4], [0.01, 0.01, 0.01])
    """

    def __init__(self, rank: int, candidates: ArrayLike, fold_errors: ArrayLike) -> None:
        self.rank = int(rank)
        self.candidates = np.asarray(candidates, dtype=int)
        self.fold_errors = fold_errors
        k = fold_errors.shape[1]
        self.cv_error = fold_errors.mean(1)
        self.cv_se = fold_errors.std(1, ddof=1) / np.sqrt(k) if k > 1 else np.zeros(len(fold_errors))

    def __repr__(self):
        return f"RankCV(rank={self.rank}, candidates={self.candidates.tolist()})"


def one_se_choice(candidates, cv_error, cv_se):
    """Smallest candidate whose CV error is within one standard error of the best one.

    ``candidates`` must be increasing (the most parsimonious first); the threshold is
    ``min(cv_error) + cv_se[argmin(cv_error)]`` (Hastie, Tibshirani & Friedman, 2009, sec. 7.10).
    """
    best = int(np.argmin(cv_error))
    ok = np.flatnonzero(cv_error <= cv_error[best] + cv_se[best])
    return int(np.asarray(candidates)[ok[0]])


def _heldout_loss(fit, r, c, y, loss):
    eta = np.einsum("cd,cd->c", fit.model_factors[r], fit.example_factors[c])
    eta += fit.model_bias[r] + fit.example_bias[c]
    return float(_cell_loss(eta, y, loss).mean())


def select_rank_cv(
    scores: ArrayLike,
    *,
    candidates: Sequence[int] = RANK_CANDIDATES,
    n_folds: int = 5,
    ridge: float = 1.0,
    biases: bool = True,
    loss: str = "logistic",
    max_iter: int = 100,
    tol: float = 1e-4,
    random_state: RandomStateLike = None,
) -> RankCV:
    """Choose the rank of :func:`fit_logistic_factors` by K-fold CV over the observed cells.

    The observed cells are shuffled and split into ``n_folds`` folds of (almost) equal size; each
    candidate rank is fitted on the other folds and scored by its mean held-out loss on the fold
    (cross-entropy for ``loss="logistic"``, half squared error for ``"squared"``). The chosen rank
    is the smallest candidate whose mean CV loss is within one standard error of the smallest
    (the one-standard-error rule, as in PULSE's experiments, Tolochinsky et al. 2026, sec. 5).
    Candidates are capped by the matrix: ranks ``>= min(n_models, n_examples)`` are dropped
    (the smallest candidate is always kept). Costs ``n_folds * len(candidates)`` fits.

    Parameters
    ----------
    scores : array-like of shape (n_models, n_examples)
        NaN marks an unobserved cell; at least ``n_folds`` cells must be observed.
    candidates : sequence of int, default=(1, 2, 4, 8, 16)
        Ranks compared (non-negative; sorted and deduplicated).
    n_folds : int, default=5
    ridge, biases, loss, max_iter, tol : see :func:`fit_logistic_factors`
    random_state : int, RandomState, numpy.random.Generator or None, default=None
        Seeds the folds and the fits.

    Returns
    -------
    RankCV

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_riskcontrol.bandits.lowrank import select_rank_cv
    >>> rng = np.random.default_rng(0)
    >>> u, v = rng.normal(size=(40, 2)), rng.normal(size=(60, 2))
    >>> S = u @ v.T + 0.1 * rng.normal(size=(40, 60))
    >>> S[rng.uniform(size=S.shape) < 0.3] = np.nan
    >>> select_rank_cv(S, candidates=(1, 2, 4), loss="squared", random_state=0).rank
    2
    """
    _check_common(0, ridge, loss)
    Y = check_score_matrix(scores, "scores", allow_nan=True, lower=0.0 if loss == "logistic" else None)
    if isinstance(n_folds, bool) or not isinstance(n_folds, (int, np.integer)) or n_folds < 2:
        raise ValueError(f"`n_folds` must be an integer >= 2; got {n_folds!r}.")
    cand = np.unique(np.asarray(candidates))
    if cand.size == 0 or cand.dtype.kind not in "iu" or cand[0] < 0:
        raise ValueError(
            f"`candidates` must be a non-empty sequence of non-negative integers; got {candidates!r}."
        )
    cand = np.concatenate([cand[:1], cand[1:][cand[1:] < min(Y.shape)]])
    r, c = np.nonzero(~np.isnan(Y))
    if r.size < n_folds:
        raise ValueError(
            f"`scores` has {r.size} observed cells; {n_folds}-fold cross-validation needs at least "
            f"{n_folds}."
        )
    rng = check_random_state(random_state)
    folds = np.array_split(rng.permutation(r.size), n_folds)
    errors = np.empty((cand.size, n_folds))
    for k, test in enumerate(folds):
        train = Y.copy()
        train[r[test], c[test]] = np.nan
        for a, rank in enumerate(cand):
            fit = fit_logistic_factors(train, rank=int(rank), ridge=ridge, biases=biases, loss=loss,
                                       max_iter=max_iter, tol=tol, random_state=rng)
            errors[a, k] = _heldout_loss(fit, r[test], c[test], Y[r[test], c[test]], loss)
    res = RankCV(cand[0], cand, errors)
    res.rank = one_se_choice(cand, res.cv_error, res.cv_se)
    return res


# ---------------------------------------------------------------------------------- ALS ensemble
class ALSEnsemble:
    """Ensemble of ridge ALS low-rank fits with random cell drop-out (UCB-E-LRF's oracle).

    Member ``k`` fits ``min sum_{(i,j) in O_k} (U_k[i] . V_k[j] - S[i, j])^2 + ridge (|U_k|^2 +
    |V_k|^2)`` where ``O_k`` is the observed set with a random ``drop_rate`` of its cells left out
    (each cell is dropped independently, once and for all when it is first observed, so a member
    stays the same bootstrap replicate as new cells arrive).

    All members are solved together. The normal equations of every (row, member) pair are the
    sums over *all* observed cells, which for all members at once are two dense matrix products
    ``S_obs @ [V_1 ... V_K]`` and ``O @ [V_1 V_1^T ... V_K V_K^T]`` (BLAS, float64), minus the
    contributions of each member's dropped cells (only ``drop_rate`` of the observed cells, added
    up with :func:`numpy.bincount`); rank 1 then has the closed form ``u = rhs / (gram + ridge)``,
    higher ranks a batched ``r x r`` solve. A sweep costs ``O(n_models * n_examples * n_members *
    rank^2)`` flops in matrix products, so this is meant for matrices of up to a few hundred
    thousand cells. :meth:`fit` continues from the current factors (warm start): after a few new
    cells a couple of sweeps suffice (see :class:`~sklearn_riskcontrol.bandits.UCBELRF`).

    Parameters
    ----------
    shape : tuple of int
        ``(n_models, n_examples)``.
    rank : int, default=1
    n_members : int, default=64
    drop_rate : float, default=0.05
    ridge : float, default=0.1
    random_state : int, RandomState, numpy.random.Generator or None, default=None

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_riskcontrol.bandits.lowrank import ALSEnsemble
    >>> rng = np.random.default_rng(0)
    >>> truth = np.outer(rng.uniform(0.3, 1, 30), rng.uniform(0.3, 1, 40))
    >>> ens = ALSEnsemble((30, 40), rank=1, n_members=8, random_state=0)
    >>> r, c = np.nonzero(rng.uniform(size=truth.shape) < 0.3)
    >>> ens.observe(r, c, truth[r, c])
    >>> mean, std = ens.fit(n_sweeps=20).mean_std()
    >>> bool(np.abs(mean - truth).mean() < 0.05)
    True
    """

    def __init__(
        self,
        shape: tuple[int, int],
        *,
        rank: int | str = 1,
        n_members: int = 64,
        drop_rate: float = 0.05,
        ridge: float = 0.1,
        random_state: RandomStateLike = None,
    ) -> None:
        _check_common(rank, ridge, "squared")
        if rank < 1:
            raise ValueError(f"`rank` must be at least 1; got {rank}.")
        if not (0 <= drop_rate < 1):
            raise ValueError(f"`drop_rate` must lie in [0, 1); got {drop_rate!r}.")
        if n_members < 1:
            raise ValueError(f"`n_members` must be a positive integer; got {n_members!r}.")
        m, n = (int(s) for s in shape)
        self.shape = (m, n)
        self.rank = int(rank)
        self.n_members = int(n_members)
        self.drop_rate = float(drop_rate)
        self.ridge = float(ridge)
        self._rng = check_random_state(random_state)
        K = self.n_members
        self._Y = np.zeros((m, n))  # observed scores, 0 elsewhere
        self._O = np.zeros((m, n))  # observation mask as 0/1 floats
        self._YT = np.zeros((n, m))  # contiguous transposes for the example-side solves
        self._OT = np.zeros((n, m))
        # dropped cells, appended in place (capacity doubles): keys row * K + member and
        # col * K + member, and the cell's score
        self._n_drop = 0
        self._drop_keys = np.zeros((2, 1024), dtype=np.int64)
        self._drop_y = np.zeros(1024)
        scale = 1.0 / np.sqrt(rank)
        # stored (row, member, rank) so that all members form one (row, member * rank) matrix
        self._U = scale * self._rng.uniform(0.5, 1.5, size=(m, K, rank))
        self._V = scale * self._rng.uniform(0.5, 1.5, size=(n, K, rank))
        self.fitted = False

    @property
    def U(self) -> FloatArray:
        """Model factors, shape (n_members, n_models, rank) (a view)."""
        return self._U.transpose(1, 0, 2)

    @property
    def V(self) -> FloatArray:
        """Example factors, shape (n_members, n_examples, rank) (a view)."""
        return self._V.transpose(1, 0, 2)

    def observe(self, rows: ArrayLike, cols: ArrayLike, values: ArrayLike) -> None:
        """Add observed cells (scores of ``(rows[k], cols[k])``); re-observing a cell updates it."""
        m, n = self.shape
        rows, cols = check_indices(rows, "rows", m), check_indices(cols, "cols", n)
        values = check_scores(values, "values")
        check_same_length(rows=rows, cols=cols, values=values)
        K = self.n_members
        seen = self._O[rows, cols] > 0
        new = np.unique((rows * n + cols)[~seen])
        self._Y[rows, cols] = self._YT[cols, rows] = values
        self._O[rows, cols] = self._OT[cols, rows] = 1.0
        if seen.any() and self._n_drop:  # re-observed cells: refresh the dropped scores
            rk, ck = self._drop_keys[:, : self._n_drop] // K
            self._drop_y[: self._n_drop] = self._Y[rk, ck]
        if self.drop_rate > 0 and new.size:
            # the drop decisions of a cell are drawn once, when it is first observed
            k, c = np.nonzero(self._rng.uniform(size=(K, new.size)) < self.drop_rate)
            i, j = np.divmod(new[c], n)
            end = self._n_drop + k.size
            if end > self._drop_y.size:
                cap = max(end, 2 * self._drop_y.size)
                keys = np.zeros((2, cap), dtype=np.int64)
                keys[:, : self._n_drop] = self._drop_keys[:, : self._n_drop]
                dy = np.zeros(cap)
                dy[: self._n_drop] = self._drop_y[: self._n_drop]
                self._drop_keys, self._drop_y = keys, dy
            self._drop_keys[0, self._n_drop: end] = i * K + k
            self._drop_keys[1, self._n_drop: end] = j * K + k
            self._drop_y[self._n_drop: end] = self._Y[i, j]
            self._n_drop = end

    def member_mask(self, k: int) -> BoolArray:
        """Boolean (n_models, n_examples) mask of the cells member ``k`` is fitted on."""
        M = self._O > 0
        rk, ck = self._drop_keys[:, : self._n_drop]
        sel = rk % self.n_members == k
        M[rk[sel] // self.n_members, ck[sel] // self.n_members] = False
        return M

    def _half_step(self, Y, O, F, key, other_key, dy):
        """Ridge solves of all (row, member) pairs given the other side's factors ``F``.

        ``Y``, ``O``: (R, C) observed scores and mask; ``F``: (C, K, r); ``key``/``other_key``:
        ``row * K + member`` / ``col * K + member`` of each dropped cell, ``dy`` its score.
        """
        C, K, r = F.shape
        R = Y.shape[0]
        Ff = F.reshape(C, K * r)
        FF = Ff * Ff if r == 1 else (F[:, :, :, None] * F[:, :, None, :]).reshape(C, K * r * r)
        rhs = (Y @ Ff).reshape(R * K, r)
        gram = (O @ FF).reshape(R * K, r * r)
        if dy.size:
            # take out every member's dropped cells (a small fraction of the observed ones)
            Fd = F.reshape(C * K, r)[other_key]
            FFd = FF.reshape(C * K, r * r)[other_key]
            for a in range(r):
                rhs[:, a] -= np.bincount(key, weights=dy * Fd[:, a], minlength=R * K)
            for a in range(r * r):
                gram[:, a] -= np.bincount(key, weights=FFd[:, a], minlength=R * K)
        if r == 1:
            return (rhs / (gram + self.ridge)).reshape(R, K, 1)
        gram = gram.reshape(R * K, r, r) + self.ridge * np.eye(r)
        return _solve_batched(gram, rhs).reshape(R, K, r)

    def fit(self, n_sweeps: int = 10) -> Self:
        """Run ``n_sweeps`` alternating sweeps, continuing from the current factors."""
        rk, ck = self._drop_keys[:, : self._n_drop]
        dy = self._drop_y[: self._n_drop]
        for _ in range(int(n_sweeps)):
            self._U = self._half_step(self._Y, self._O, self._V, rk, ck, dy)
            self._V = self._half_step(self._YT, self._OT, self._U, ck, rk, dy)
        self.fitted = True
        return self

    def mean_std(self, rows: ArrayLike | None = None) -> tuple[FloatArray, FloatArray]:
        """Ensemble mean and standard deviation of ``U_k V_k^T`` (both of shape (m, n)).

        ``rows`` (a slice or index array) restricts both to those models.
        """
        U = self._U if rows is None else self._U[rows]
        m, K, r = U.shape
        n = self._V.shape[0]
        Uc = U.reshape(m, K * r)
        Vc = self._V.reshape(n, K * r)
        mean = (Uc @ Vc.T) / K
        if r == 1:
            second = ((Uc * Uc) @ (Vc * Vc).T) / K
        else:
            UU = (U[:, :, :, None] * U[:, :, None, :]).reshape(m, K * r * r)
            VV = (self._V[:, :, :, None] * self._V[:, :, None, :]).reshape(n, K * r * r)
            second = (UU @ VV.T) / K
        std = np.sqrt(np.maximum(second - mean * mean, 0.0))
        return mean, std


def als_ensemble(
    scores: ArrayLike,
    *,
    rank: int | str = 1,
    n_members: int = 64,
    drop_rate: float = 0.05,
    ridge: float = 0.1,
    n_sweeps: int = 10,
    random_state: RandomStateLike = None,
) -> tuple[FloatArray, FloatArray]:
    """Complete a partially observed score matrix with an ensemble of ridge ALS factorizations.

    Parameters
    ----------
    scores : array-like of shape (n_models, n_examples)
        NaN marks an unobserved cell.
    rank, n_members, drop_rate, ridge, random_state : see :class:`ALSEnsemble`
    n_sweeps : int, default=10

    Returns
    -------
    mean : ndarray of shape (n_models, n_examples)
        Ensemble mean (the completed matrix, observed cells included as fitted).
    std : ndarray of shape (n_models, n_examples)
        Ensemble standard deviation (uncertainty of each cell).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_riskcontrol.bandits.lowrank import als_ensemble
    >>> S = np.outer([0.9, 0.5, 0.2], [1.0, 0.8, 0.6, 0.4])
    >>> S[0, 3] = S[2, 0] = np.nan
    >>> mean, std = als_ensemble(S, n_members=16, n_sweeps=50, ridge=1e-3, random_state=0)
    >>> round(float(mean[0, 3]), 2), round(float(mean[2, 0]), 2)
    (0.36, 0.2)
    """
    Y = check_score_matrix(scores, "scores", allow_nan=True, lower=None)
    mask = ~np.isnan(Y)
    ens = ALSEnsemble(Y.shape, rank=rank, n_members=n_members, drop_rate=drop_rate, ridge=ridge,
                      random_state=random_state)
    r, c = np.nonzero(mask)
    ens.observe(r, c, Y[r, c])
    return ens.fit(n_sweeps).mean_std()
