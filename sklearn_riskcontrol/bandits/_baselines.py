"""Non-adaptive baseline: score uniformly random cells, return the best observed row mean."""

import numpy as np

from ._base import _COMMON_ATTRS_DOC, _COMMON_PARAMS_DOC, _argmax, _BaseStrategy

__all__ = ["UniformSampling"]


class UniformSampling(_BaseStrategy):
    __doc__ = f"""Uniform baseline: score uniformly random (model, example) cells.

    The cells are drawn uniformly without replacement from all (available) cells, ``batch_size``
    per step, and the model with the best observed mean is returned. This is the "uniform"
    baseline of Zhou et al. (2025); it spends the budget evenly, so it shows what the adaptive
    strategies gain.

    Parameters
    ----------
{_COMMON_PARAMS_DOC.format(batch=64)}

    Attributes
    ----------
{_COMMON_ATTRS_DOC}

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

    def __init__(self, *, budget=0.1, batch_size=64, random_state=None, verbose=0, warm_start=False):
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
