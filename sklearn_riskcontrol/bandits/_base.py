"""Shared machinery of the best-model strategies: budget, run loop, stop/resume, history.

A run is a queue of planned queries ("score model i on examples J") executed against an oracle.
A strategy plans its warm-up up front and then one step at a time; each query is executed, and
only after it succeeded is it removed from the queue and folded into the strategy's statistics.
If the oracle raises (an LLM call failing, Ctrl-C), the failed query stays at the head of the
queue, the fitted attributes are set from what has been paid for, and the exception propagates;
``resume()`` re-issues exactly the same query (so the sampling design, hence unbiasedness, is
unchanged) and continues. An oracle's cost budget (:class:`CostBudgetReached`) stops the run the
same way, without raising: ``completed_`` is False and a warning says how to continue.

A run's queries depend only on ``random_state`` and on the scores returned, so a new process
that runs the same strategy against an oracle with the same durable store replays the stopped
run exactly (every stored cell is read back instead of bought) and continues it.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING

from collections import deque
from numbers import Integral

import numpy as np
from numpy.typing import ArrayLike
from sklearn.base import BaseEstimator, _fit_context
from sklearn.utils._param_validation import Interval, RealNotInt
from sklearn.utils.validation import check_is_fitted

from .._progress import Progress
from .._validation import (
    RANDOM_STATE,
    add_note,
    check_random_state,
    check_score_matrix,
    warn,
)
from ..evaluation import CostBudgetReached, MatrixOracle, as_oracle

if TYPE_CHECKING:
    from ..evaluation import ScoreOracle
    from typing_extensions import Self  # typing.Self: Python >= 3.11


def _argmax(values, priority):
    """Index of the largest value; ties broken by a fixed random priority (never by index)."""
    mx = values.max()
    cands = np.flatnonzero(values == mx)
    if cands.size == 1:
        return int(cands[0])
    return int(cands[np.argmin(priority[cands])])


def _auto_period(evaluations, batch_size, n_refits):
    """Steps between refits so that ``evaluations`` spent in batches refit about ``n_refits`` times.

    The number of refits of a run then does not grow with the matrix (a refit costs in proportion
    to it), so a run's cost is linear in its size instead of quadratic.
    """
    steps = -(-max(int(evaluations), 0) // int(batch_size))
    return max(1, -(-steps // n_refits))


class _RunState:
    """Everything needed to continue a run: statistics, RNG, pending queries, history."""

    def __init__(self, oracle, budget, rng):
        m, n = oracle.shape
        avail = oracle.available_mask()
        self.m, self.n = m, n
        self.avail = avail
        self.n_avail = np.full(m, n, dtype=np.int64) if avail is None else avail.sum(axis=1)
        self.budget = int(budget)
        self.rng = rng
        self.priority = rng.permutation(m)
        self.counts = np.zeros(m, dtype=np.int64)  # |O_i|
        self.sums = np.zeros(m)  # sum of observed scores of row i
        self.n_used = 0
        self.queue = deque()
        self.warmup_done = False
        self.step = 0
        self.perm = [None] * m  # lazily drawn per-row permutations: O_i = perm[i][:ptr[i]]
        self.ptr = np.zeros(m, dtype=np.int64)
        self.hist_evals = []
        self.hist_best = []
        self.hist_arm = []

    def draw_uniform(self, i, b):
        """Next ``b`` examples of row ``i`` drawn uniformly without replacement from U_i."""
        perm = self.perm[i]
        if perm is None:
            pool = np.arange(self.n) if self.avail is None else np.flatnonzero(self.avail[i])
            # the smallest index type: m permutations of n examples are the run's largest state
            dtype = np.min_scalar_type(self.n - 1)
            perm = self.perm[i] = self.rng.permutation(pool).astype(dtype)
        p = int(self.ptr[i])
        self.ptr[i] = p + b
        return perm[p : p + b].astype(np.int64)

    def observed(self, i):
        """Examples of row ``i`` scored so far (strategies that sample through draw_uniform).

        A drawn batch whose query has not succeeded yet is not included: it is the last drawn,
        so the scored examples are exactly the first ``counts[i]`` of the permutation.
        """
        perm = self.perm[i]
        if perm is None:
            return np.zeros(0, dtype=np.int64)
        return perm[: int(self.counts[i])].astype(np.int64)


class _BaseStrategy(BaseEstimator):
    """Base class: budget handling, the run loop, stop/resume and the fitted attributes."""

    _parameter_constraints = {
        "budget": [
            Interval(Integral, 1, None, closed="left"),
            Interval(RealNotInt, 0, 1, closed="right"),
        ],
        "batch_size": [Interval(Integral, 1, None, closed="left")],
        "random_state": RANDOM_STATE,
        "verbose": ["verbose"],
        "warm_start": ["boolean"],
    }

    _name = "strategy"
    _needs_binary = False

    # ------------------------------------------------------------------ public API
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, scores: ArrayLike | ScoreOracle, *, side_scores: ArrayLike | None = None) -> Self:
        """Run the strategy until the budget is spent.

        Parameters
        ----------
        scores : array-like of shape (n_models, n_examples) or ScoreOracle
            A full score matrix in ``[0, 1]`` (revealed lazily: the strategy only looks at the
            cells it pays for), or an oracle (:class:`MatrixOracle`, :class:`EstimatorOracle`,
            :class:`CallableOracle`).
        side_scores : array-like of shape (n_side_models, n_examples), default=None
            Scores of *other* models on the same examples (historical results; NaN = missing).
            Used by the low-rank strategies (PULSE and NaivePooling fit their frozen example
            factors on it, UCBELRF stacks it into its ensemble); ignored by the others. PULSE and
            NaivePooling also accept a fitted :class:`LowRankScoreCompleter` or a
            :class:`~sklearn_riskcontrol.bandits.lowrank.LowRankFactorization` here, to reuse the
            example factors across runs instead of refitting them.

        Returns
        -------
        self
        """
        oracle = as_oracle(scores)
        st = getattr(self, "_state", None)
        if self.warm_start and st is not None and self._can_continue(scores, oracle):
            st.budget = self._resolve_budget(self.oracle_)
            if st.budget < st.n_used:
                st.budget = st.n_used
        else:
            side = self._check_side(side_scores, oracle)
            budget = self._resolve_budget(oracle)
            if oracle.n_models == 1:
                warn(
                    f"{type(self).__name__} was given a single model: there is nothing to "
                    "choose, so that model is returned as the best by default (the budget "
                    "only estimates its mean score). Pass two or more models to identify the "
                    "best one."
                )
            if oracle.store_ is not None and not isinstance(self.random_state, Integral):
                warn(
                    f"{type(self).__name__} runs with a store but random_state="
                    f"{self.random_state!r}: a run continued in a new process draws other "
                    "examples, so it does not replay the stopped run (no score is bought twice, "
                    "but the decisions can differ and stored cells may go unused); pass an "
                    "integer random_state."
                )
            st = _RunState(oracle, budget, check_random_state(self.random_state))
            self.oracle_ = oracle
            self._state = st
            self._init_run(st, side)
        self._run()
        return self

    def resume(self) -> Self:
        """Continue a run that stopped because the scoring back-end raised.

        The query that failed is issued again (cells already bought are not bought twice), then
        the run continues until the budget is spent. To continue a finished run with a larger
        budget, use ``set_params(budget=..., warm_start=True)`` and ``fit`` again.

        Returns
        -------
        self
        """
        check_is_fitted(self, "oracle_")
        self._run()
        return self

    # ------------------------------------------------------------------ validation
    def _resolve_budget(self, oracle):
        st_avail = oracle.available_mask()
        total = oracle.n_models * oracle.n_examples if st_avail is None else int(st_avail.sum())
        if isinstance(self.budget, Integral):
            budget = int(self.budget)
            if budget > total:
                raise ValueError(
                    f"`budget`={budget} exceeds the {total} available cells of the "
                    f"{oracle.n_models} x {oracle.n_examples} score matrix; lower the budget "
                    "(an int counts evaluations, a float in (0, 1] is a fraction of all cells)."
                )
        else:
            budget = int(np.ceil(float(self.budget) * total))
        return max(budget, 1)

    def _check_side(self, side_scores, oracle):
        if side_scores is None:
            return None
        if hasattr(side_scores, "example_factors") and hasattr(side_scores, "model_factors"):
            if side_scores.example_factors.shape[0] != oracle.n_examples:
                raise ValueError(
                    f"`side_scores` is a factorization of {side_scores.example_factors.shape[0]} "
                    f"examples but the score matrix has {oracle.n_examples}."
                )
            return side_scores
        if _is_fitted_completer(side_scores):
            if side_scores.n_features_in_ != oracle.n_examples:
                raise ValueError(
                    f"`side_scores` was fitted on {side_scores.n_features_in_} examples but the "
                    f"score matrix has {oracle.n_examples}; they must be the same examples."
                )
            return side_scores
        side = check_score_matrix(side_scores, "side_scores", allow_nan=True)
        if side.shape[1] != oracle.n_examples:
            raise ValueError(
                f"Mismatched shapes: `side_scores` has {side.shape[1]} columns (examples) but the "
                f"score matrix has {oracle.n_examples}; columns must be the same examples."
            )
        return side

    def _can_continue(self, scores, oracle):
        if oracle is self.oracle_:
            return True
        old = self.oracle_
        if oracle.shape != old.shape:
            raise ValueError(
                f"warm_start=True: the score matrix has shape {oracle.shape} but the previous fit "
                f"used {old.shape}; pass the same matrix/oracle or set warm_start=False."
            )
        if isinstance(oracle, MatrixOracle):
            rev = old.revealed_
            if np.array_equal(oracle.scores[rev], old.cached_scores_[rev]):
                return True
        return False

    def _check_values(self, values, rows):
        if self._needs_binary and not getattr(self, "fractional_scores", False):
            bad = (values != 0.0) & (values != 1.0)
            if bad.any():
                k = int(np.flatnonzero(bad)[0])
                i = rows if np.ndim(rows) == 0 else int(rows[k])
                raise ValueError(
                    f"{type(self).__name__}'s logistic low-rank model needs binary scores in "
                    f"{{0, 1}}; model {i} returned {values[k]!r}. Pass fractional_scores=True to "
                    "fit fractional targets in [0, 1] (the estimates stay unbiased)."
                )

    # ------------------------------------------------------------------ hooks
    def _init_run(self, st, side):  # pragma: no cover - abstract
        raise NotImplementedError

    def _end_warmup(self, st):
        pass

    def _plan_step(self, st):  # pragma: no cover - abstract
        raise NotImplementedError

    def _update(self, st, rows, cols, values, ctx):  # pragma: no cover - abstract
        raise NotImplementedError

    def _current_means(self, st):  # pragma: no cover - abstract
        raise NotImplementedError

    def _best(self, st):
        means = self._current_means(st)
        return _argmax(np.where(np.isnan(means), -np.inf, means), st.priority)

    def _finalize_extra(self, st):
        pass

    def _stop_now(self, st):
        """Stop before the budget is spent (strategies with a stopping rule override this)."""
        return False

    # ------------------------------------------------------------------ the loop
    def _run(self):
        st = self._state
        oracle = self.oracle_
        while True:
            if not st.queue:
                if not st.warmup_done:
                    self._end_warmup(st)
                    st.warmup_done = True
                    self._record(st, -1)
                if st.n_used >= st.budget:
                    break
                if st.warmup_done and self._stop_now(st):
                    break
                item = self._plan_step(st)
                if item is None:
                    break
                st.queue.append(item)
            rows, cols, ctx = st.queue[0]
            try:
                if np.ndim(rows) == 0:
                    values = oracle.query(rows, cols)
                else:
                    values = oracle.query_cells(rows, cols)
                self._check_values(values, rows)
            except CostBudgetReached as exc:
                self._finalize(st, completed=False)
                warn(
                    f"{type(self).__name__} stopped after {st.n_used} of {st.budget} "
                    f"evaluations: {exc} Raise the oracle's max_cost and call resume() (or fit "
                    "again on an oracle with the same store) to continue."
                )
                return
            except BaseException as exc:
                self._finalize(st, completed=False)
                add_note(
                    exc,
                    f"{type(self).__name__} stopped after {st.n_used} of {st.budget} "
                    "evaluations; the scores already bought are kept. Call resume() to "
                    "continue from there.",
                )
                raise
            st.queue.popleft()
            self._update(st, rows, cols, values, ctx)
            if st.warmup_done:
                st.step += 1
                self._record(st, rows if np.ndim(rows) == 0 else -1)
        self._finalize(st, completed=True)

    def _record(self, st, arm):
        st.hist_evals.append(st.n_used)
        st.hist_best.append(self._best(st))
        st.hist_arm.append(int(arm))
        if not self.verbose:
            return
        bar = getattr(st, "progress", None)
        if bar is None or bar.total != st.budget:  # new run, or a warm start with a new budget
            bar = st.progress = Progress(
                st.budget, verbose=self.verbose, desc=type(self).__name__, unit="evaluations"
            )
        if bar.due(st.n_used):
            best = st.hist_best[-1]
            info = {"step": st.step, "best_model": best,
                    "estimate": f"{_clip_means(self._current_means(st))[best]:.4f}"}
            ci = self._progress_interval(st, best)
            if ci is not None:
                info["95% interval"] = f"[{ci[0]:.3f}, {ci[1]:.3f}]"
            oracle = self.oracle_
            info["bought"] = oracle.n_purchased_
            if oracle.n_reused_:
                info["from store"] = oracle.n_reused_
            if oracle.cost is not None:
                info["cost"] = f"{oracle.cost_:.4g}"
            bar.update(st.n_used, **info)

    def _progress_interval(self, st, best):
        """The current best model's 95% simultaneous interval (strategies that give them)."""
        if not hasattr(self, "confidence_intervals") or not st.n_used:
            return None
        self._finalize(st, completed=False)  # the fitted attributes the intervals read
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return self.confidence_intervals(0.05)[best]

    def _finalize(self, st, completed):
        self.means_ = _clip_means(self._current_means(st))
        self.best_index_ = self._best(st) if st.n_used else int(np.argmin(st.priority))
        self.n_evaluations_ = int(st.n_used)
        self.n_evaluations_per_model_ = st.counts.copy()
        self.n_steps_ = int(st.step)
        self.completed_ = bool(completed and not st.queue)
        self.history_ = {
            "n_evaluations": np.asarray(st.hist_evals, dtype=np.int64),
            "best_index": np.asarray(st.hist_best, dtype=np.int64),
            "arm": np.asarray(st.hist_arm, dtype=np.int64),
        }
        self._finalize_extra(st)


def _clip_means(means):
    """Report estimated means inside the score range [0, 1] (NaN, for unscored models, stays).

    Doubly-robust (PULSE) and model-based (UCB-E-LRF) estimates can leave [0, 1]. Clipping an
    estimate of a mean that lies in [0, 1] can only move it closer to that mean, so the reported
    value is never less accurate; the unclipped estimate (conditionally unbiased for PULSE) is
    what the strategies use internally and what the confidence intervals are centred on.
    """
    return np.clip(means, 0.0, 1.0)


def _is_fitted_completer(obj):
    return hasattr(obj, "factorization_") and hasattr(obj, "n_features_in_")


_COMMON_PARAMS_DOC = """\
    budget : int or float, default=0.1
        Total number of evaluations (cells scored), warm-up included. A float in (0, 1] is a
        fraction of all (available) cells. A budget larger than the matrix is an error.
    batch_size : int, default={batch}
        Number of examples scored per step (B).
    random_state : int, RandomState, numpy.random.Generator or None, default=None
        Seeds the example sampling and the tie-breaking.
    verbose : int, default=0
        Print progress (about 10 lines per run for 1, about 100 for 2).
    warm_start : bool, default=False
        If True, a second ``fit`` on the same matrix/oracle continues the previous run (e.g. with a
        larger ``budget``) instead of starting over; no score is bought twice."""


_COMMON_ATTRS_DOC = """\
    best_index_ : int
        Index of the model identified as best.
    means_ : ndarray of shape (n_models,)
        Estimated mean score of every model (NaN for a model never scored), always within the
        score range [0, 1]: an estimate that leaves it (possible for the doubly-robust and
        model-based estimates) is clipped, which can only bring it closer to the true mean.
    n_evaluations_ : int
        Evaluations used by this run (each cell counted once).
    n_evaluations_per_model_ : ndarray of shape (n_models,)
        Evaluations per model.
    n_steps_ : int
        Number of steps after the warm-up.
    history_ : dict of ndarray
        ``"n_evaluations"`` and ``"best_index"`` after the warm-up and after every step (for
        accuracy-vs-budget curves), and ``"arm"``, the model scored at that step (-1 if none or
        several).
    completed_ : bool
        False if the run stopped because the scoring back-end raised or the oracle's cost
        budget was reached (see ``resume``).
    oracle_ : ScoreOracle
        The oracle that was queried (holds every score bought)."""
