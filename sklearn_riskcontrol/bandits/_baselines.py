"""Non-adaptive baselines of Zhou et al. (2025): uniform cells (row mean imputation), the
filled subset, and uniform cells with the low-rank estimate (LRF)."""

from __future__ import annotations

import numpy as np

from ._base import _COMMON_ATTRS_DOC, _COMMON_PARAMS_DOC, _argmax, _BaseStrategy
from ._ucbe import _ENSEMBLE_ATTRS_DOC, _ENSEMBLE_PARAMS_DOC, _EnsembleStrategy
from .._docstrings import fill_doc
from .._typing import RandomStateLike

__all__ = ["UniformSampling", "FilledSubset", "UniformLRF"]


@fill_doc(common_params=_COMMON_PARAMS_DOC.format(batch=64), common_attrs=_COMMON_ATTRS_DOC)
class UniformSampling(_BaseStrategy):
    """Uniform baseline: score uniformly random (model, example) cells.

    The cells are drawn uniformly without replacement from all (available) cells, ``batch_size``
    per step, and the model with the best observed mean is returned. This is the "uniform"
    baseline of Zhou et al. (2025); it spends the budget evenly, so it shows what the adaptive
    strategies gain.

    Parameters
    ----------
{common_params}

    Attributes
    ----------
{common_attrs}

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_riskcontrol.bandits import UniformSampling
    >>> rng = np.random.default_rng(0)
    >>> S = (rng.uniform(size=(10, 500)) < np.linspace(0.2, 0.8, 10)[:, None]).astype(float)
    >>> uni = UniformSampling(budget=0.2, random_state=0).fit(S)
    >>> int(uni.best_index_), uni.n_evaluations_      # realized, one run (best: 9)
    (9, 1000)
    """

    def __init__(
        self,
        *,
        budget: float = 0.1,
        batch_size: int = 64,
        random_state: RandomStateLike = None,
        verbose: int = 0,
        warm_start: bool = False,
    ) -> None:
        self.budget = budget
        self.batch_size = batch_size
        self.random_state = random_state
        self.verbose = verbose
        self.warm_start = warm_start

    def _init_run(self, st, side):
        st.obs = np.zeros((st.m, st.n), dtype=bool)
        st.seq = np.zeros(0, dtype=np.int64)
        st.seq_ptr = 0
        st.best_key = np.full(st.m, -np.inf)

    def _extend(self, st, size):
        # Draw the next cells uniformly without replacement among the available, unscored ones.
        pending = st.seq[st.seq_ptr :]
        if st.seq.size == 0 and st.avail is None and st.n_used == 0:
            pos = st.rng.choice(st.m * st.n, size=size, replace=False)
        else:
            free = ~st.obs if st.avail is None else (st.avail & ~st.obs)
            free = free.ravel()
            free[pending] = False
            cand = np.flatnonzero(free)
            size = min(size - pending.size, cand.size)
            pos = cand[st.rng.choice(cand.size, size=size, replace=False)]
        st.seq = np.concatenate([pending, pos.astype(np.int64)])
        st.seq_ptr = 0

    def _plan_step(self, st):
        b = min(self.batch_size, st.budget - st.n_used)
        if st.seq.size - st.seq_ptr < b:
            self._extend(st, st.budget - st.n_used)
        cells = st.seq[st.seq_ptr : st.seq_ptr + b]
        if cells.size == 0:
            return None
        st.seq_ptr += cells.size
        rows, cols = np.divmod(cells, st.n)
        return rows, cols, None

    def _update(self, st, rows, cols, values, ctx):
        st.n_used += rows.size
        st.obs[rows, cols] = True
        st.counts += np.bincount(rows, minlength=st.m)
        st.sums += np.bincount(rows, weights=values, minlength=st.m)
        touched = np.unique(rows)
        st.best_key[touched] = st.sums[touched] / st.counts[touched]

    def _current_means(self, st):
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(st.counts > 0, st.sums / np.maximum(st.counts, 1), np.nan)

    def _best(self, st):
        return _argmax(st.best_key, st.priority)


@fill_doc(common_params=_COMMON_PARAMS_DOC.format(batch=1), common_attrs=_COMMON_ATTRS_DOC)
class FilledSubset(UniformSampling):
    """Filled-subset baseline: score every model on the same random examples.

    Zhou et al.'s "Filled Subset" (Algorithm 4): each step draws ``batch_size`` examples
    uniformly without replacement among those not drawn yet and scores *every* model on them (an
    example costs ``n_models`` evaluations, or its number of available models), so all models
    are compared on the same subset of the pool. The model with the best mean on that subset is
    returned (an unbiased estimate of every model's pool mean). Only whole examples are scored:
    the run stops when the next example no longer fits in the budget, so ``n_evaluations_`` is
    ``floor(budget / n_models) * n_models`` for a full matrix.

    Parameters
    ----------
{common_params}

    Attributes
    ----------
{common_attrs}

    See Also
    --------
    UniformSampling : uniformly random cells (the paper's "Row Mean Imputation").

    References
    ----------
    J. P. Zhou et al., "On speeding up language model evaluation", ICLR 2025, Algorithm 4.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_riskcontrol.bandits import FilledSubset
    >>> rng = np.random.default_rng(0)
    >>> S = (rng.uniform(size=(10, 500)) < np.linspace(0.2, 0.8, 10)[:, None]).astype(float)
    >>> fs = FilledSubset(budget=0.2, random_state=0).fit(S)
    >>> int(fs.best_index_), fs.n_evaluations_, int(fs.n_evaluations_per_model_.min())  # one run
    (9, 1000, 100)
    """

    def __init__(
        self,
        *,
        budget: float = 0.1,
        batch_size: int = 1,
        random_state: RandomStateLike = None,
        verbose: int = 0,
        warm_start: bool = False,
    ) -> None:
        self.budget = budget
        self.batch_size = batch_size
        self.random_state = random_state
        self.verbose = verbose
        self.warm_start = warm_start

    def _init_run(self, st, side):
        super()._init_run(st, side)
        # cost of each example: the number of models it is available for
        st.col_cost = (np.full(st.n, st.m, dtype=np.int64) if st.avail is None
                       else st.avail.sum(axis=0).astype(np.int64))
        cheapest = st.col_cost[st.col_cost > 0]
        if cheapest.size and st.budget < cheapest.min():
            raise ValueError(
                f"`budget`={st.budget} is smaller than one example scored by all models "
                f"({int(cheapest.min())} evaluations); FilledSubset scores whole examples, so "
                "raise the budget."
            )
        st.col_order = None  # drawn lazily: a random permutation of the examples
        st.col_ptr = 0

    def _plan_step(self, st):
        if st.col_order is None:
            st.col_order = st.rng.permutation(st.n)
        # The next examples of the permutation, in order: those no model can be scored on are
        # skipped, at most ``batch_size`` others are taken, and the step stops at the first one
        # that no longer fits in the budget (only whole examples: Alg. 4 scores floor(T / m)).
        # Both conditions hold on a prefix; the window grows only past skipped examples.
        left = st.budget - st.n_used
        width = self.batch_size
        while True:
            seg = st.col_order[st.col_ptr : st.col_ptr + width]
            cost = st.col_cost[seg]
            scored = cost > 0
            ok = (np.cumsum(cost) <= left) & (np.cumsum(scored) - scored < self.batch_size)
            take = int(np.count_nonzero(ok))
            if take < seg.size or st.col_ptr + width >= st.n:
                break
            width *= 2
        st.col_ptr += take
        cols = seg[:take][scored[:take]].astype(np.int64)
        if cols.size == 0:
            return None
        if st.avail is None:
            return np.tile(np.arange(st.m), cols.size), np.repeat(cols, st.m), None
        k, r = np.nonzero(st.avail[:, cols].T)  # example by example, models in order
        return r.astype(np.int64), cols[k], None


@fill_doc(
    common_params=_COMMON_PARAMS_DOC.format(batch=32),
    ensemble_params=_ENSEMBLE_PARAMS_DOC,
    common_attrs=_COMMON_ATTRS_DOC,
    ensemble_attrs=_ENSEMBLE_ATTRS_DOC,
)
class UniformLRF(_EnsembleStrategy):
    """Non-active low-rank baseline: uniformly random cells, low-rank estimate.

    Zhou et al.'s "LRF" baseline (Algorithm 5): the cells are chosen as by
    :class:`UniformSampling` (uniformly without replacement among the unscored cells, all of the
    run's cells drawn at once after the warm-up, so a step costs O(batch_size); the warm-up of
    ``warmup_fraction`` of all cells is drawn the same way), but each model's mean is
    estimated as by :class:`UCBELRF`: ``(1/n)[sum_(O_i) S + sum_(U_i) E_hat]``, with ``E_hat`` the
    mean of the same ALS ensemble, fitted after the warm-up and refitted every ``refit_every``
    steps of ``batch_size`` cells and after the last one. It separates what the low-rank estimate
    brings (vs :class:`UniformSampling`) from what the active choice of cells brings (vs
    :class:`UCBELRF`). The estimate is biased like UCB-E-LRF's. (Algorithm 5 pairs ``b`` distinct
    models with ``b`` distinct examples; drawing ``b`` unscored cells uniformly differs only in
    allowing two cells of a step to share a model or an example, and never scores a cell twice.)

    Parameters
    ----------
{common_params}
{ensemble_params}

    Attributes
    ----------
{common_attrs}
{ensemble_attrs}

    See Also
    --------
    UCBELRF : the active version (uncertainty-driven choice of models and examples).
    UniformSampling : uniform cells with the observed means.

    References
    ----------
    J. P. Zhou et al., "On speeding up language model evaluation", ICLR 2025, Algorithm 5.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_riskcontrol.bandits import UniformLRF
    >>> rng = np.random.default_rng(0)
    >>> skill, ease = rng.beta(5, 3, 40), rng.beta(4, 2, 300)    # a near rank-1 matrix
    >>> S = (rng.uniform(size=(40, 300)) < np.outer(skill, ease)).astype(float)
    >>> lrf = UniformLRF(budget=0.15, n_members=16, random_state=0).fit(S)
    >>> lrf.n_evaluations_, bool(lrf.n_evaluations_per_model_.min() > 0)   # one run
    (1800, True)
    >>> round(float(np.abs(lrf.means_ - S.mean(1)).mean()), 3)  # mean abs. error of the 40 means
    0.056
    """

    def __init__(
        self,
        *,
        budget: float = 0.1,
        batch_size: int = 32,
        warmup_fraction: float = 0.05,
        rank: int | str = 1,
        n_members: int = 64,
        drop_rate: float = 0.05,
        ridge: float = 0.1,
        n_sweeps: int = 10,
        refit_sweeps: int = 2,
        refit_every: int | str = "auto",
        random_state: RandomStateLike = None,
        verbose: int = 0,
        warm_start: bool = False,
    ) -> None:
        self.budget = budget
        self.batch_size = batch_size
        self.warmup_fraction = warmup_fraction
        self.rank = rank
        self.n_members = n_members
        self.drop_rate = drop_rate
        self.ridge = ridge
        self.n_sweeps = n_sweeps
        self.refit_sweeps = refit_sweeps
        self.refit_every = refit_every
        self.random_state = random_state
        self.verbose = verbose
        self.warm_start = warm_start

    def _init_run(self, st, side):
        super()._init_run(st, side)
        st.cell_seq = np.zeros(0, dtype=np.int64)  # cells of the next steps, in random order
        st.cell_ptr = 0

    def _plan_step(self, st):
        left = st.budget - st.n_used
        if st.cell_ptr >= st.cell_seq.size and left > 0:
            # every planned cell has been scored: draw the rest of the budget at once, uniformly
            # without replacement among the unscored cells (once per run, or per warm start)
            cand = np.flatnonzero((st.free & ~st.obs).ravel())
            size = min(left, cand.size)
            st.cell_seq = cand[st.rng.choice(cand.size, size=size, replace=False)]
            st.cell_ptr = 0
        b = int(min(self.batch_size, left, st.cell_seq.size - st.cell_ptr))
        if b <= 0:
            return None
        cells = np.sort(st.cell_seq[st.cell_ptr : st.cell_ptr + b])
        st.cell_ptr += b
        rows, cols = np.divmod(cells, st.n)
        return rows, cols, None
