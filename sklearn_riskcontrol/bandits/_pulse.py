"""PULSE (Tolochinsky, Tenzer & Romano 2026) and the Naive-Pooling baseline.

Both share the UCB-E backbone, the uniform batch design and the low-rank logistic model of
:mod:`.lowrank` (example factors frozen from side information, model factors refitted every
``refit_every`` steps, only for the models that received new scores). They differ in the
estimate of each model's mean:

- PULSE averages the one-step AIPW estimates
  ``theta = (1/n)[sum_{O_i} S + lambda sum_{U_i} S_hat + sum_{j in J} (S_j - lambda S_hat_j) / pi]``
  with ``pi = |J| / |U_i|`` and ``lambda``, ``S_hat`` fixed before ``J`` is drawn, so that
  ``E[theta | past] = mu_i`` exactly (Lemma 1);
- Naive-Pooling uses ``(1/n)[sum_{O_i} S + sum_{U_i} S_hat]`` (biased).

Bookkeeping (all O(1) per model, O(B r + m) per step): per model the count and sum of observed
scores, and, for the *current* predictions, ``tot_i = sum_j S_hat_ij`` and
``obs_i = sum_{j in O_i} S_hat_ij`` (and the same for ``S_hat^2``). Both are recomputed exactly for
a model whenever its factors are refitted, and ``obs_i`` grows by the current predictions of each
new batch, so ``sum_{U_i} S_hat = tot_i - obs_i`` always uses the current predictions (the stale
running sum that biases public research code cannot occur).
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from numpy.typing import ArrayLike
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from ._base import _COMMON_ATTRS_DOC, _COMMON_PARAMS_DOC, _argmax, _auto_period, _BaseStrategy
from ._intervals import (
    _STOP_ATTRS_DOC,
    _STOP_DOC,
    DrawLog,
    _CertifyMixin,
    vacuous_intervals,
    warn_vacuous,
)
from .._docstrings import fill_doc
from .._validation import as_float_array, check_binary, check_level, warn
from ..evaluation import MatrixOracle
from .lowrank import (
    LowRankFactorization,
    _Cells,
    _design,
    _newton_rows_sparse,
    _outer_flat,
    _sigmoid_inplace,
    fit_logistic_factors,
    select_rank_cv,
    sigmoid,
)
from .._typing import FloatArray, RandomStateLike

__all__ = ["PULSE", "NaivePooling", "freedman_radius"]

# default of PULSE.confidence_intervals' `method` ("betting" is narrower and valid; see the
# user guide's section on anytime-valid intervals)
_DEFAULT_METHOD = "betting"

_BINARY_HINT = "Pass fractional_scores=True to fit fractional targets in [0, 1]."


def freedman_radius(n_pulls: ArrayLike, variance: ArrayLike, delta: float) -> FloatArray:
    """Half-width of Theorem 1's confidence interval (Freedman/Bernstein martingale bound).

    Solves ``2 exp(-K eps^2 / (2 (v + 2 eps / 3))) = delta`` for ``eps``, where ``K`` is the
    number of one-step estimates averaged and ``v`` bounds the average conditional variance of one
    estimate (``Var(Z) / n^2`` in the paper's notation; the increments are bounded by 2).
    Theorem 1 holds only if ``v`` is a *deterministic* bound (fixed before the run), not an
    estimate from the data. Its range term ``4 log(2 / delta) / (3 K)`` makes it vacuous for
    models pulled a few times; :meth:`PULSE.confidence_intervals` therefore uses a sub-Gaussian
    martingale bound instead, which has no range term.

    Parameters
    ----------
    n_pulls : array-like of int
    variance : array-like of float
    delta : float in (0, 1)

    Returns
    -------
    eps : ndarray

    Examples
    --------
    >>> from sklearn_riskcontrol.bandits import freedman_radius
    >>> float(freedman_radius(100, 0.25, 0.05).round(4))
    0.1626
    """
    delta = check_level(delta, "delta")
    K = as_float_array(n_pulls, "n_pulls", "counts (a number or a 1-d array)")
    v = as_float_array(variance, "variance", "variances (a number or a 1-d array)")
    for name, arr in (("n_pulls", K), ("variance", v)):
        if arr.ndim > 1:
            raise ValueError(f"`{name}` must be a number or a 1-d array; got shape {arr.shape}.")
    if K.ndim == v.ndim == 1 and K.shape != v.shape:
        raise ValueError(f"Mismatched lengths: `n_pulls` has {K.size} entries, `variance` has {v.size}.")
    if not np.all(np.isfinite(K) & (K >= 0)):
        raise ValueError("`n_pulls` must be finite non-negative counts.")
    # a variance is only used where K > 0 (K = 0 gives an infinite radius)
    if not np.all(((np.isfinite(v) & (v >= 0)) | (K <= 0))):
        raise ValueError("`variance` must be finite and non-negative.")
    L = np.log(2.0 / delta)
    with np.errstate(divide="ignore", invalid="ignore"):
        eps = (4.0 * L / 3.0 + np.sqrt((4.0 * L / 3.0) ** 2 + 8.0 * K * L * v)) / (2.0 * K)
    return np.where(K > 0, eps, np.inf)


def _is_factorization(obj):
    return isinstance(obj, LowRankFactorization)


class _LowRankBandit(_BaseStrategy):
    """Shared state and refits of PULSE and Naive-Pooling."""

    _parameter_constraints = {
        **_BaseStrategy._parameter_constraints,
        "exploration": [Interval(Real, 0, None, closed="left")],
        "n_warmup": [Interval(Integral, 1, None, closed="left")],
        "refit_every": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"})],
        "rank": [Interval(Integral, 0, None, closed="left"), StrOptions({"cv"})],
        "ridge": [Interval(Real, 0, None, closed="neither")],
        "biases": ["boolean"],
        "fractional_scores": ["boolean"],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
    }
    _needs_binary = True
    _AUTO_REFITS = 20  # refits per run with refit_every="auto"

    def __init__(
        self,
        *,
        budget: float = 0.1,
        batch_size: int = 64,
        exploration: float = 1.0,
        n_warmup: int = 1,
        refit_every: int | str = "auto",
        rank: int | str = 8,
        ridge: float = 1.0,
        biases: bool = True,
        fractional_scores: bool = False,
        max_iter: int = 30,
        random_state: RandomStateLike = None,
        verbose: int = 0,
        warm_start: bool = False,
    ) -> None:
        self.budget = budget
        self.batch_size = batch_size
        self.exploration = exploration
        self.n_warmup = n_warmup
        self.refit_every = refit_every
        self.rank = rank
        self.ridge = ridge
        self.biases = biases
        self.fractional_scores = fractional_scores
        self.max_iter = max_iter
        self.random_state = random_state
        self.verbose = verbose
        self.warm_start = warm_start

    # ------------------------------------------------------------------ set-up
    def _init_run(self, st, side):
        m = st.m
        w = self.batch_size * self.n_warmup
        need = int(np.minimum(st.n_avail, w).sum())
        if need > st.budget:
            raise ValueError(
                f"`budget`={st.budget} is smaller than the warm-up, which scores "
                f"n_warmup * batch_size = {w} examples of each of the {m} models ({need} "
                "evaluations); raise the budget or lower batch_size / n_warmup."
            )
        if isinstance(self.oracle_, MatrixOracle) and not self.fractional_scores:
            check_binary(self.oracle_.scores, "scores", hint=_BINARY_HINT)
        st.n_warmup_evals = need
        st.frozen = side is not None
        st.rank_cv = []  # RankCV of every rank selection (rank="cv")
        if side is None:
            st.fact = None
        elif _is_factorization(side):
            st.fact = side
        elif hasattr(side, "factorization_"):  # a fitted LowRankScoreCompleter
            st.fact = side.factorization_
        else:
            if not self.fractional_scores:
                check_binary(side, "side_scores", hint=_BINARY_HINT)
            st.fact = fit_logistic_factors(
                side, rank=self._select_rank(st, side), ridge=self.ridge, biases=self.biases,
                max_iter=self.max_iter, random_state=st.rng,
            )
        if st.frozen:
            if st.fact.loss != "logistic":
                raise ValueError("The side-information factorization must use the logistic loss.")
            self._set_example_side(st, st.fact.example_factors, st.fact.example_bias)
        else:
            st.r = self.rank if self.rank != "cv" else None  # "cv": set by the first refit
            st.d = (0 if st.r is None else st.r) + int(self.biases)
        st.W = np.zeros((m, st.d))  # [u_i, a_i]
        st.tot = np.zeros(m)
        st.tot2 = np.zeros(m)
        st.op = np.zeros(m)
        st.op2 = np.zeros(m)
        st.sh_range = np.zeros(m)  # max - min of the current predictions of each row
        st.sh_hi = np.zeros(m)  # max of the current predictions of each row
        st.dirty = np.zeros(m, dtype=bool)
        st.since_refit = 0
        st.n_refits = 0
        st.index = np.full(m, -np.inf)
        st.key = np.full(m, -np.inf)  # estimate used for the best model (-inf: no estimate)
        self._init_estimates(st)
        for i in range(m):
            b = int(min(w, st.n_avail[i]))
            st.queue.append((i, st.draw_uniform(i, b), "warmup"))

    def _select_rank(self, st, Y):
        """``rank``, or for ``rank="cv"`` the rank chosen by 5-fold CV on the cells of ``Y``.

        ``Y`` only holds cells scored before the call (side information, or the test-time scores
        observed so far), so the chosen rank, like the factors, is fixed before the next batch is
        drawn: the AIPW estimates stay conditionally unbiased (Lemma 1) whatever rank is chosen.
        """
        if self.rank != "cv":
            return self.rank
        res = select_rank_cv(Y, ridge=self.ridge, biases=self.biases, max_iter=self.max_iter,
                             random_state=st.rng)
        st.rank_cv.append(res)
        return res.rank

    def _set_example_side(self, st, V, b):
        st.r = V.shape[1]
        st.biases = bool(self.biases)  # intercept a_i per tested model
        st.X = _design(V, st.biases)
        b = np.asarray(b, dtype=float)
        st.off = b if np.any(b != 0) else None  # frozen example biases b_j
        st.XX = _outer_flat(st.X)
        st.d = st.X.shape[1]

    def _cells(self, st, rows):
        idx = [st.observed(i) for i in rows]
        lens = np.fromiter((len(x) for x in idx), dtype=np.int64, count=len(idx))
        indptr = np.zeros(len(rows) + 1, dtype=np.int64)
        np.cumsum(lens, out=indptr[1:])
        cols = np.concatenate(idx) if idx else np.zeros(0, dtype=np.int64)
        rr = np.repeat(np.asarray(rows, dtype=np.int64), lens)
        y = self.oracle_.cached_scores_[rr, cols]
        return _Cells(indptr, cols, y, st.n)

    def _refit(self, st, rows=None):
        """Refit the model factors (and, without side information, the example factors)."""
        if not st.frozen:
            Y = np.full((st.m, st.n), np.nan)
            for i in range(st.m):
                J = st.observed(i)
                Y[i, J] = self.oracle_.cached_scores_[i, J]
            rank = self._select_rank(st, Y)
            init = "svd" if st.fact is None or st.fact.rank != rank else st.fact
            st.fact = fit_logistic_factors(
                Y, rank=rank, ridge=self.ridge, biases=self.biases,
                max_iter=self.max_iter, init=init, random_state=st.rng,
            )
            self._set_example_side(st, st.fact.example_factors, st.fact.example_bias)
            st.W = (
                np.hstack([st.fact.model_factors, st.fact.model_bias[:, None]])
                if st.biases
                else st.fact.model_factors.copy()
            )
            rows = np.arange(st.m)
        else:
            rows = np.flatnonzero(st.dirty) if rows is None else np.asarray(rows)
            if rows.size == 0:
                return
            cells = self._cells(st, rows)
            st.W[rows] = _newton_rows_sparse(
                cells, st.X, st.off, st.W[rows], self.ridge, "logistic", 25, 1e-6, XX=st.XX
            )
        self._recompute_totals(st, rows)
        st.dirty[rows] = False
        st.since_refit = 0
        st.n_refits += 1
        if self.verbose >= 2:
            print(f"[{type(self).__name__}] refit {st.n_refits}: {rows.size} model(s)", flush=True)

    def _recompute_totals(self, st, rows):
        chunk = max(1, 2_000_000 // max(st.n, 1))
        for s in range(0, rows.size, chunk):
            R = rows[s : s + chunk]
            P = st.W[R] @ st.X.T
            if st.off is not None:
                P += st.off
            _sigmoid_inplace(P)
            if st.avail is not None:
                P *= st.avail[R]
            st.tot[R] = P.sum(1)
            st.tot2[R] = np.einsum("ij,ij->i", P, P)
            st.sh_range[R] = P.max(1) - P.min(1)
            st.sh_hi[R] = P.max(1)
        cells = self._cells(st, rows)
        if cells.y.size:
            Sh = self._predict_cells(st, rows[cells.rows], cells.indices)
            st.op[rows] = cells.row_sums(Sh)
            st.op2[rows] = cells.row_sums(Sh * Sh)
        else:
            st.op[rows] = 0.0
            st.op2[rows] = 0.0
        self._after_totals(st, rows)

    def _predict_cells(self, st, rows, cols):
        eta = np.einsum("cd,cd->c", st.W[rows], st.X[cols])
        if st.off is not None:
            eta += st.off[cols]
        return sigmoid(eta)

    def _predict_row(self, st, i, J):
        eta = st.X[J] @ st.W[i]
        if st.off is not None:
            eta += st.off[J]
        return sigmoid(eta)

    def _end_warmup(self, st):
        self._refit(st, np.arange(st.m))
        self._refresh_index(st, np.arange(st.m))

    def _refresh_index(self, st, rows):
        est = self._estimate(st, rows)
        full = st.counts[rows] >= st.n_avail[rows]
        with np.errstate(divide="ignore", invalid="ignore"):
            bonus = np.sqrt(self.exploration / st.counts[rows])
        st.index[rows] = np.where(full | (st.counts[rows] == 0), -np.inf, est + bonus)
        st.key[rows] = np.where(st.counts[rows] > 0, est, -np.inf)

    def _refit_period(self, st):
        """Steps between refits: ``refit_every``, or for "auto" the run's steps / _AUTO_REFITS."""
        if self.refit_every != "auto":
            return self.refit_every
        return _auto_period(st.budget - st.n_warmup_evals, self.batch_size, self._AUTO_REFITS)

    def _choose(self, st):
        if st.since_refit >= self._refit_period(st):
            self._refit(st)
        i = _argmax(st.index, st.priority)
        if st.index[i] == -np.inf:
            return None, 0
        b = int(min(self.batch_size, st.budget - st.n_used, st.n_avail[i] - st.counts[i]))
        return i, b

    def _add_batch(self, st, i, J, values, Sh):
        b = J.size
        st.n_used += b
        st.counts[i] += b
        st.sums[i] += float(values.sum())
        st.op[i] += float(Sh.sum())
        st.op2[i] += float(Sh @ Sh)
        st.dirty[i] = True

    def _best(self, st):
        return _argmax(st.key, st.priority)

    def _finalize_extra(self, st):
        if st.warmup_done and st.r is not None:
            r = st.r
            W = st.W
            self.factorization_ = LowRankFactorization(
                W[:, :r].copy(),
                st.X[:, :r].copy(),
                W[:, r].copy() if st.biases else np.zeros(st.m),
                st.off.copy() if st.off is not None else np.zeros(st.n),
                "logistic",
            )
        self.n_refits_ = int(st.n_refits)
        self.rank_ = st.r
        self.ranks_ = [res.rank for res in st.rank_cv]


_LOWRANK_PARAMS_DOC = """\
    exploration : float, default=1.0
        Exploration parameter ``a`` of the index ``estimate_i + sqrt(a / |O_i|)``.
    n_warmup : int, default=1
        Warm-up batches per model (``T0``): every model first scores ``n_warmup * batch_size``
        uniformly drawn examples.
    refit_every : int or "auto", default="auto"
        Refit the low-rank model every ``refit_every`` steps (``tau``), for the models that
        received new scores since the last refit (without side information: both sides, on all
        observed cells). ``"auto"``: ``tau = ceil(steps / 20)``, i.e. at most 20 refits (at
        least 10 for runs of 20 steps or more) spread evenly over the steps after the warm-up.
        A refit costs in proportion to the matrix and a fixed fraction of it takes a number of
        steps proportional to it, so a fixed ``tau`` makes the run's cost grow quadratically
        with the number of examples, a fixed number of refits linearly. ``1000``, the paper's
        value and the former default, gives the former runs exactly; at equal budget "auto"
        identifies the best model as often (see the user guide's note on cost).
    rank : int or "cv", default=8
        Rank of the logistic factorization fitted on ``side_scores`` (or, without side
        information, on the observed cells). Ignored when ``side_scores`` is already a
        factorization. ``"cv"``: the paper's choice, the smallest of ``(1, 2, 4, 8, 16)``
        (ranks ``>= min`` of the matrix's shape dropped) whose 5-fold cross-validated
        cross-entropy over the observed cells is within one standard error of the best
        (:func:`~sklearn_riskcontrol.bandits.lowrank.select_rank_cv`, folds drawn from the run's
        ``random_state``). It is chosen once on ``side_scores``, or without side information at
        every refit (25 extra fits per refit), always from cells scored before the next batch is
        drawn, so the estimates stay unbiased and the intervals valid whatever rank is chosen.
    ridge : float, default=1.0
        Ridge penalty of the factorization (``ridge / 2`` times the squared norms of the factors
        and biases; the paper's ``lambda / (2 (m + n))`` on the mean cross-entropy corresponds to
        ``ridge = lambda |Omega| / (m + n)``).
    biases : bool, default=True
        Add a bias per model and per example to ``u_i . v_j`` (False gives the paper's model).
    fractional_scores : bool, default=False
        Allow scores in [0, 1] (fractional cross-entropy targets); by default scores must be
        binary, as the logistic model assumes.
    max_iter : int, default=30
        Alternating sweeps when fitting the example factors."""


@fill_doc(
    common_params=_COMMON_PARAMS_DOC.format(batch=64),
    lowrank_params=_LOWRANK_PARAMS_DOC,
    stop_params=_STOP_DOC,
    common_attrs=_COMMON_ATTRS_DOC,
    stop_attrs=_STOP_ATTRS_DOC,
)
class PULSE(_CertifyMixin, _LowRankBandit):
    """PULSE: prediction-powered unbiased low-rank sequential evaluation.

    UCB-E over models in which each model's mean is estimated by averaging one-step
    doubly-robust (AIPW) estimates that use low-rank predictions ``S_hat`` of the unscored cells:
    each estimate is exactly unbiased whatever the predictions (Lemma 1 of the paper), and
    informative predictions shrink its variance, so fewer evaluations are needed to find the best
    model. Predictions come from a logistic factorization whose example factors are fitted once
    on ``side_scores`` (other models on the same examples) and frozen; the model factors are
    refitted every ``refit_every`` steps. The weight ``lambda`` of the predictions is tuned per
    step from past residuals (Step 3 / App. A.5), and :meth:`confidence_intervals` gives
    finite-sample intervals (a sub-Gaussian martingale bound on the same estimates, valid at any
    time, whatever the adaptive number of pulls; see its notes for how it relates to the
    paper's Theorem 1).

    Parameters
    ----------
{common_params}
{lowrank_params}
{stop_params}

    Attributes
    ----------
{common_attrs}
{stop_attrs}
    n_pulls_ : ndarray of shape (n_models,)
        Number of one-step estimates averaged per model (warm-up included).
    lambdas_ : ndarray of shape (n_models,)
        Weight ``lambda`` used at each model's last step.
    factorization_ : LowRankFactorization
        The current low-rank model (model factors of the tested models, frozen example factors).
    n_refits_ : int
    rank_ : int or None
        Rank of the current low-rank model (None before the first fit of a ``rank="cv"`` run).
    ranks_ : list of int
        With ``rank="cv"``: the rank chosen at each selection, in order (empty otherwise).

    See Also
    --------
    UCBE : the same bandit without predictions.
    NaivePooling : plugs the predictions in without debiasing (biased).

    References
    ----------
    E. Tolochinsky, Y. Tenzer, Y. Romano, "Valid best-model identification for LLM evaluation via
    low-rank factorization", arXiv:2605.10405, 2026.

    Examples
    --------
    >>> from sklearn_riskcontrol.bandits import PULSE, make_score_matrix
    >>> data = make_score_matrix(n_models=40, n_examples=600, n_side_models=60, gap=0.05,
    ...                          random_state=0)
    >>> pulse = PULSE(budget=0.25, batch_size=16, refit_every=20, rank=4, random_state=0)
    >>> pulse = pulse.fit(data.scores, side_scores=data.side_scores)
    >>> pulse.best_index_ == data.best_index       # realized, one run
    True
    >>> ci = pulse.confidence_intervals(0.05)    # all 40 means inside w.p. >= 0.95
    >>> bool(((ci[:, 0] <= data.means) & (data.means <= ci[:, 1])).all())   # this run
    True
    >>> lo, hi = ci[data.best_index]    # the best model was scored on all 600 examples: exact
    >>> float(hi - lo), int(pulse.n_evaluations_per_model_[data.best_index])
    (0.0, 600)
    """

    _parameter_constraints = {
        **_LowRankBandit._parameter_constraints,
        **_CertifyMixin._stop_constraints,
    }

    def __init__(
        self,
        *,
        budget: float = 0.1,
        batch_size: int = 64,
        exploration: float = 1.0,
        n_warmup: int = 1,
        refit_every: int | str = "auto",
        rank: int | str = 8,
        ridge: float = 1.0,
        biases: bool = True,
        fractional_scores: bool = False,
        max_iter: int = 30,
        stop_when_certified: bool = False,
        delta: float = 0.05,
        random_state: RandomStateLike = None,
        verbose: int = 0,
        warm_start: bool = False,
    ) -> None:
        super().__init__(
            budget=budget, batch_size=batch_size, exploration=exploration, n_warmup=n_warmup,
            refit_every=refit_every, rank=rank, ridge=ridge, biases=biases,
            fractional_scores=fractional_scores, max_iter=max_iter, random_state=random_state,
            verbose=verbose, warm_start=warm_start,
        )
        self.stop_when_certified = stop_when_certified
        self.delta = delta

    def _init_estimates(self, st):
        m = st.m
        st.draw_log = DrawLog(m)  # per batch: lambda, F, prediction range (betting intervals)
        st.theta_sum = np.zeros(m)
        st.n_theta = np.zeros(m, dtype=np.int64)
        st.z_sum = np.zeros(m)
        st.z_cnt = np.zeros(m, dtype=np.int64)
        st.v_sum = np.zeros(m)  # sum of the predictable sub-Gaussian proxies of theta - mu
        st.lam = np.full(m, np.nan)

    def _after_totals(self, st, rows):
        pass

    def _estimate(self, st, rows):
        with np.errstate(divide="ignore", invalid="ignore"):
            mu = st.theta_sum[rows] / st.n_theta[rows]
            exact = st.sums[rows] / st.n_avail[rows]
        return np.where(st.counts[rows] >= st.n_avail[rows], exact, mu)

    def _lambda(self, st, i, F, Phi, N):
        if st.z_cnt[i] == 0 or Phi <= 0:
            return 1.0
        zbar = st.z_sum[i] / st.z_cnt[i]
        return float(np.clip(1.0 - F * zbar / (N * Phi), 0.0, 1.0))

    def _plan_step(self, st):
        i, b = self._choose(st)
        if i is None:
            return None
        N = int(st.n_avail[i] - st.counts[i])
        F = st.tot[i] - st.op[i]
        Phi = st.tot2[i] - st.op2[i]
        lam = self._lambda(st, i, F, Phi, N)
        J = st.draw_uniform(i, b)
        return i, J, (lam, F, N)

    def _one_step(self, st, i, values, Sh, lam, F, N):
        """One-step AIPW estimate and the sub-Gaussian proxy of its error (fixed before the draw).

        ``theta - mu = (N / n) (mean_J r - mean_U r)`` with residuals ``r_j = S_j - lam Sh_j``,
        which lie in an interval of width ``w = 1 + lam (max Sh - min Sh)`` over ``U``. The mean
        of ``b`` draws without replacement is at least as concentrated as with replacement
        (Hoeffding 1963, Thm. 4), so by Hoeffding's lemma ``theta - mu`` is sub-Gaussian given
        the past with variance proxy ``(N / n)^2 w^2 / (4 b)``; it is exactly 0 when ``b = N``.
        """
        b = values.size
        n_i = st.n_avail[i]
        resid = values - lam * Sh
        Z = resid.sum() * N / b
        theta = (st.sums[i] + lam * F + Z) / n_i
        w = 1.0 + lam * st.sh_range[i]
        proxy = 0.0 if b >= N else (N / n_i) ** 2 * w * w / (4.0 * b)
        return theta, Z, proxy

    def _update(self, st, i, J, values, ctx):
        if ctx == "warmup":
            N = int(st.n_avail[i] - st.counts[i])
            Sh = np.zeros(J.size)
            theta, _, proxy = self._one_step(st, i, values, Sh, 0.0, 0.0, N)
            self._record_theta(st, i, theta, proxy)
            st.draw_log.add(i, J.size, 0.0, 0.0, 0.0, 0.0, Sh)
            st.n_used += J.size
            st.counts[i] += J.size
            st.sums[i] += float(values.sum())
            st.key[i] = st.theta_sum[i] / st.n_theta[i]
            return
        lam, F, N = ctx
        Sh = self._predict_row(st, i, J)
        theta, Z, proxy = self._one_step(st, i, values, Sh, lam, F, N)
        self._record_theta(st, i, theta, proxy)
        hi = st.sh_hi[i]
        st.draw_log.add(i, J.size, lam, F, hi - st.sh_range[i], hi, Sh)
        st.z_sum[i] += Z
        st.z_cnt[i] += 1
        st.lam[i] = lam
        self._add_batch(st, i, J, values, Sh)
        st.since_refit += 1
        self._refresh_index(st, np.array([i]))

    def _record_theta(self, st, i, theta, proxy):
        st.theta_sum[i] += theta
        st.n_theta[i] += 1
        st.v_sum[i] += proxy

    def _current_means(self, st):
        rows = np.arange(st.m)
        est = self._estimate(st, rows)
        return np.where(st.n_theta > 0, est, np.nan)

    def _finalize_extra(self, st):
        super()._finalize_extra(st)
        self.n_pulls_ = st.n_theta.copy()
        self.lambdas_ = st.lam.copy()
        self._set_certificate(st)

    def confidence_intervals(
        self, delta: float = 0.05, *, simultaneous: bool = True, method: str = _DEFAULT_METHOD
    ) -> FloatArray:
        """Finite-sample confidence intervals for every model's mean score.

        With probability at least ``1 - delta`` every model's mean lies in its interval
        (``simultaneous=True``), or, with ``simultaneous=False``, each model's mean lies in its
        own interval (for one model chosen before looking). Both methods are anytime-valid:
        they hold whatever the adaptive number of pulls and whenever the run stopped. A fully
        scored model gets its exact mean, a model never scored ``[0, 1]``.

        - ``method="betting"``: a betting confidence sequence for sampling without replacement
          (Waudby-Smith & Ramdas, NeurIPS 2020) run on the *per-draw* AIPW residuals
          ``S_j - lambda S_hat_j``, whose mean over the remaining pool is an affine function of
          the model's mean given the past (PULSE's Lemma 1 for one draw); bets adapt to the
          residuals' empirical variance, so good predictions narrow the interval. Typically
          more than 2x narrower for the best models at the spec size (see the user guide's
          section on anytime-valid intervals). Not centred on the PULSE estimate. The default.
        - ``method="subgaussian"``: the construction of earlier versions (kept bit for bit),
          centred on the unclipped PULSE estimate (the average of the one-step estimates),
          clipped to [0, 1]; see the Notes.

        Parameters
        ----------
        delta : float in (0, 1), default=0.05
            Failure probability.
        simultaneous : bool, default=True
            Union bound over the models (so that all intervals hold at once).
        method : {"betting", "subgaussian"}, default="betting"
            The construction (see above).

        Returns
        -------
        intervals : ndarray of shape (n_models, 2)
            Lower and upper bounds.

        Warns
        -----
        RiskControlWarning
            When some intervals are vacuous (at least 99% of the score range [0, 1]): those models have
            too few evaluations for this ``delta``.

        Examples
        --------
        >>> import numpy as np
        >>> from sklearn_riskcontrol.bandits import PULSE, make_score_matrix
        >>> data = make_score_matrix(n_models=20, n_examples=800, n_side_models=60, gap=0.05,
        ...                          random_state=0)
        >>> est = PULSE(budget=0.2, batch_size=16, rank=4, random_state=0)
        >>> est = est.fit(data.scores, side_scores=data.side_scores)
        >>> old = est.confidence_intervals(0.05, method="subgaussian")
        >>> new = est.confidence_intervals(0.05, method="betting")  # all 20 inside w.p. >= 0.95
        >>> bool(((new[:, 0] <= data.means) & (data.means <= new[:, 1])).all())   # this run
        True
        >>> def median_width(ci):
        ...     return round(float(np.median(ci[:, 1] - ci[:, 0])), 2)
        >>> median_width(old), median_width(new)     # this run
        (0.85, 0.51)

        Notes
        -----
        For model ``i`` with ``K`` one-step estimates, ``S = K (mu_hat - mu)`` is a sum of
        martingale differences (Lemma 1) and each difference is sub-Gaussian given the past
        with a variance proxy ``sigma_k^2`` fixed before its batch is drawn (see
        ``_one_step``: ``(N / n)^2 w^2 / (4 b)``, with ``N`` the unscored examples, ``b`` the
        batch size and ``w = 1 + lambda (max S_hat - min S_hat)`` the range of the residuals).
        For every fixed ``s > 0``, ``exp(s S - s^2 V / 2)`` with ``V = sum_k sigma_k^2`` is then
        a non-negative supermartingale, and Ville's inequality gives, at all times at once,
        ``|S| <= s V / 2 + L / s`` with ``L = log(2 G m / delta)`` (``m = 1`` if not
        simultaneous). A union over a fixed geometric grid of ``G`` values of ``s`` lets the
        half-width ``min_s (s V / 2 + L / s) / K`` adapt to ``V`` (within 6% of the best ``s``)
        for a ``log G`` price. So the intervals are valid whatever the adaptive number of pulls
        and whenever the run stopped.

        This replaces the paper's Theorem 1 (Freedman's inequality) in two ways: Theorem 1
        needs a deterministic bound ``v`` on the conditional variance, and an estimate of it
        from the data voids the guarantee; and with the only deterministic bound
        available, the range bound above, Freedman's range term ``4 log(2 / delta') / (3 K)``
        makes every interval vacuous for models pulled a few times, while the sub-Gaussian
        bound has no range term. The price of validity is that the width is driven by the
        range of the residuals, not by their (smaller, unknown) variance.
        """
        check_is_fitted(self, "means_")
        delta = check_level(delta, "delta")
        if method not in ("subgaussian", "betting"):
            raise ValueError(f"`method` must be 'subgaussian' or 'betting'; got {method!r}.")
        st = self._state
        if method == "betting":
            ci = self._betting_intervals_all(st, delta, simultaneous)
            warn_vacuous(ci, st.counts, delta)
            return ci
        K = st.n_theta.astype(float)
        s_grid, L = _ville_grid(st.n, delta / (st.m if simultaneous else 1))
        with np.errstate(divide="ignore", invalid="ignore"):
            half = (s_grid[None, :] * st.v_sum[:, None] / 2 + L / s_grid[None, :]).min(1) / K
            mu = (st.theta_sum / K)[:, None] + np.array([-1.0, 1.0]) * half[:, None]
        ci = np.clip(np.where(K[:, None] > 0, mu, [0.0, 1.0]), 0.0, 1.0)
        full = st.counts >= st.n_avail
        ci[full] = self.means_[full, None]
        warn_vacuous(ci, st.counts, delta)
        return ci


def _ville_grid(n, delta):
    """Fixed grid of tuning values ``s`` of the supermartingale bound, and its log-level ``L``.

    A model's ``V`` lies in ``[0, n]`` (each pull's proxy is at most 1 and scores at least one of
    the ``n`` examples); the grid's variances ``V_g = 4^g / (4 n)`` run from ``1 / (4 n)`` (below
    it the width is negligible) to at least ``n``, a factor 2 apart in ``s``. The grid depends
    on the number of examples only, never on the data or the budget.
    """
    v_min = 1.0 / (4.0 * n)
    n_grid = int(np.ceil(np.log(n / v_min) / np.log(4.0))) + 1
    L = np.log(2.0 * n_grid / delta)
    return np.sqrt(2.0 * L / (v_min * 4.0 ** np.arange(n_grid))), L


@fill_doc(
    common_params=_COMMON_PARAMS_DOC.format(batch=64),
    lowrank_params=_LOWRANK_PARAMS_DOC,
    common_attrs=_COMMON_ATTRS_DOC,
)
class NaivePooling(_LowRankBandit):
    """Naive-Pooling baseline: UCB-E on ``(sum_O S + sum_U S_hat) / n`` (biased).

    Same bandit, batch design and low-rank model as :class:`PULSE`, but the predictions of the
    unscored cells are plugged in as if they were true scores. When the predictions are biased
    the estimate is biased too, which is what PULSE's correction removes; kept as a baseline.

    Parameters
    ----------
{common_params}
{lowrank_params}

    Attributes
    ----------
{common_attrs}
    factorization_ : LowRankFactorization
    n_refits_ : int
    rank_ : int or None
        Rank of the current low-rank model.
    ranks_ : list of int
        With ``rank="cv"``: the rank chosen at each selection, in order (empty otherwise).

    Examples
    --------
    >>> from sklearn_riskcontrol.bandits import NaivePooling, make_score_matrix
    >>> data = make_score_matrix(n_models=30, n_examples=500, n_side_models=50, random_state=0)
    >>> naive = NaivePooling(budget=0.2, batch_size=16, refit_every=20, rank=4, random_state=0)
    >>> naive.fit(data.scores, side_scores=data.side_scores).means_.shape
    (30,)
    """

    def _init_estimates(self, st):
        pass

    def _after_totals(self, st, rows):
        self._refresh_index(st, rows)

    def _estimate(self, st, rows):
        return (st.sums[rows] + st.tot[rows] - st.op[rows]) / st.n_avail[rows]

    def _plan_step(self, st):
        i, b = self._choose(st)
        if i is None:
            return None
        return i, st.draw_uniform(i, b), None

    def _update(self, st, i, J, values, ctx):
        if ctx == "warmup":
            st.n_used += J.size
            st.counts[i] += J.size
            st.sums[i] += float(values.sum())
            st.key[i] = st.sums[i] / st.counts[i]
            return
        Sh = self._predict_row(st, i, J)
        self._add_batch(st, i, J, values, Sh)
        st.since_refit += 1
        self._refresh_index(st, np.array([i]))

    def _current_means(self, st):
        rows = np.arange(st.m)
        if not st.warmup_done:
            with np.errstate(invalid="ignore", divide="ignore"):
                return np.where(st.counts > 0, st.sums / np.maximum(st.counts, 1), np.nan)
        return self._estimate(st, rows)
