"""Scoring back-ends ("oracles"): where the (model, example) scores come from.

Every best-model strategy only ever asks an oracle "score model ``i`` on examples ``J``". Three
back-ends are provided:

- :class:`MatrixOracle`: a precomputed score matrix (leaderboards, simulations), revealed lazily,
  so a strategy never sees a score it did not pay for. NaN may mark cells that are not available.
- :class:`EstimatorOracle`: a list of fitted scikit-learn estimators, a pool ``(X, y)`` and a
  per-example score in [0, 1] (default: accuracy ``1{y_pred == y}`` for classifiers, a scaled
  absolute error for regressors).
- :class:`CallableOracle`: a user function ``score(model_index, example_indices) -> scores``, e.g.
  an LLM call followed by a judge.

Every oracle caches what it returned: a cell is bought (``n_evaluations_``) exactly once, asking
for it again is free. If the back-end raises, nothing of that call is cached and everything bought
before is kept; the strategies use this to stop cleanly and to ``resume()``.

With ``store=`` (a file path or an :class:`~sklearn_riskcontrol.evaluation.EvaluationStore`)
every score bought is also committed to a durable store before it is returned, and cells found
in the store are returned without calling the back-end, so a new process continues a killed run
(see :doc:`/running_evaluations`). :class:`CallableOracle` adds what real, paid, I/O-bound
back-ends need: retries with exponential backoff, a timeout, a bounded thread pool, a rate limit
and a cost budget.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from .._validation import (
    add_note,
    check_labels,
    check_index,
    check_indices,
    check_returned_scores,
    check_score_matrix,
    warn,
)
from ._store import EvaluationRecord, RateLimiter, as_store
from .._typing import BoolArray, Estimator, FloatArray

if TYPE_CHECKING:
    import os

    from typing_extensions import Self  # typing.Self: Python >= 3.11

    from ._tables import LongTable
    from ._store import EvaluationStore

__all__ = [
    "EvaluationError",
    "CostBudgetReached",
    "ScoreOracle",
    "MatrixOracle",
    "EstimatorOracle",
    "CallableOracle",
    "as_oracle",
    "ScaledAbsoluteError",
    "resolve_scoring",
]


class EvaluationError(RuntimeError):
    """A back-end call still failed after all its retries; the message names the cells.

    The scores bought before are kept (and saved in the store, if any); the strategy stops and
    can ``resume()``.

    Examples
    --------
    >>> from sklearn_riskcontrol.evaluation import CallableOracle, EvaluationError
    >>> def down(model_index, example_indices):
    ...     raise ConnectionError("endpoint down")
    >>> oracle = CallableOracle(down, n_models=2, n_examples=5, max_retries=2, retry_backoff=0)
    >>> try:
    ...     oracle.query(1, [3])
    ... except EvaluationError as exc:
    ...     print(exc)  # doctest: +NORMALIZE_WHITESPACE
    Scoring the cell (model 1, example 3) failed on all 3 attempts (max_retries=2); the last
    error was ConnectionError: endpoint down. The scores bought before are kept; raise
    max_retries or fix the back-end, then resume().
    """


class CostBudgetReached(RuntimeError):
    """The cost already spent reached ``max_cost``: the oracle starts no more back-end calls.

    A strategy that meets it stops cleanly (``completed_`` is False, a warning says so) with
    every score bought saved; raise ``max_cost`` and call ``resume()`` (or ``fit`` again with
    the same store) to continue.

    Examples
    --------
    >>> from sklearn_riskcontrol.evaluation import CallableOracle, CostBudgetReached
    >>> oracle = CallableOracle(lambda i, J: J % 2, n_models=2, n_examples=10,
    ...                         cost=0.5, max_cost=1.0)
    >>> oracle.query(0, [0, 1])
    array([0., 1.])
    >>> try:
    ...     oracle.query(0, [2])
    ... except CostBudgetReached as exc:
    ...     print(exc)  # doctest: +NORMALIZE_WHITESPACE
    The cost spent, 1, reached max_cost=1; no more back-end calls are made (the scores
    bought are kept).
    """


_MAX_BACKOFF = 60.0  # seconds: the longest wait between two attempts
_COST_LOCK = threading.Lock()  # cost_ is added to from the worker threads


class ScoreOracle:
    """Base class of the scoring back-ends: a lazily revealed, cached score matrix.

    Subclasses implement ``_fetch(model_index, example_indices) -> scores`` (one score in
    ``[0, 1]`` per requested example, higher = better) and call ``_init_cache(n_models,
    n_examples)`` in their constructor.

    Attributes
    ----------
    shape : tuple of int
        ``(n_models, n_examples)``.
    cached_scores_ : ndarray of shape (n_models, n_examples)
        Scores bought so far; NaN where a cell has not been scored.
    revealed_ : ndarray of bool of shape (n_models, n_examples)
        Cells bought so far.
    n_evaluations_ : int
        Number of cells bought (each counted once, however often it is asked for).
    n_calls_ : int
        Number of successful calls made to the back-end.
    n_purchased_ : int
        Cells bought from the back-end by this object (cells read back from the store and
        cached cells are not counted).
    n_reused_ : int
        Cells read back from the store instead of bought.
    n_retries_ : int
        Back-end calls that failed and were retried.
    cost_ : float
        Cost spent on the run: the costs saved in the store when it was opened plus the cost
        of every call made since (0 when no cost is known).
    store_ : EvaluationStore or None
        The durable store every bought score is committed to.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_riskcontrol.evaluation import ScoreOracle
    >>> class Parity(ScoreOracle):
    ...     def __init__(self):
    ...         self._init_cache(2, 6)
    ...     def _fetch(self, model_index, example_indices):
    ...         return (example_indices % 2 == model_index).astype(float)
    >>> oracle = Parity()
    >>> oracle.query(1, [1, 2, 3]), oracle.n_evaluations_
    (array([1., 0., 1.]), 3)
    """

    # How cells are bought; CallableOracle exposes these as parameters.
    store_ = None
    cost = None
    max_cost = None
    max_concurrency = 1
    chunk_size = None
    rate_limit = None
    max_retries = 0
    retry_backoff = 0.0
    timeout = None
    _clock = staticmethod(time.monotonic)  # replaceable (tests use a fake clock)
    _sleep = staticmethod(time.sleep)

    def _init_cache(self, n_models, n_examples):
        self.n_models = int(n_models)
        self.n_examples = int(n_examples)
        self.cached_scores_ = np.full((self.n_models, self.n_examples), np.nan)
        self.revealed_ = np.zeros((self.n_models, self.n_examples), dtype=bool)
        self.n_evaluations_ = 0
        self.n_calls_ = 0
        self.n_purchased_ = 0
        self.n_reused_ = 0
        self.n_retries_ = 0
        self.cost_ = 0.0 if self.store_ is None else self.store_.summary()[1]

    def _attach_store(self, store, config=None, model_ids=None, example_ids=None):
        """Open ``store`` (path or EvaluationStore) with this oracle's run configuration.

        The configuration is what makes a score: the oracle type, the matrix size, the ids
        (model ids in full, example ids as a digest) and the entries of ``config``.
        """
        self._model_ids = _check_ids(model_ids, "model_ids", self.n_models)
        self._example_ids = _check_ids(example_ids, "example_ids", self.n_examples)
        store = as_store(store)
        if store is not None:
            full = {
                "oracle": type(self).__name__,
                "n_models": self.n_models,
                "n_examples": self.n_examples,
                "model_ids": None if model_ids is None else list(self._model_ids),
                "example_ids_sha256": None if example_ids is None else _digest(self._example_ids),
            }
            full.update(config or {})
            store.open(full)
            self.store_ = store
            self.cost_ = store.summary()[1]
        return store

    def _mid(self, i):
        ids = getattr(self, "_model_ids", None)
        return str(i) if ids is None else ids[i]

    def _eid(self, j):
        ids = getattr(self, "_example_ids", None)
        return str(j) if ids is None else ids[j]

    def __getstate__(self):  # a rate limiter holds a lock: it restarts after unpickling
        state = self.__dict__.copy()
        state.pop("_limiter", None)
        return state

    @property
    def shape(self) -> tuple[int, int]:
        return (self.n_models, self.n_examples)

    def available_mask(self) -> BoolArray | None:
        """Boolean mask of the cells that can be scored, or ``None`` when all can."""
        return None

    def _fetch(self, model_index, example_indices):  # pragma: no cover - abstract
        raise NotImplementedError

    def _buy(self, i, new):
        """Fetch, validate and cache the not yet revealed examples ``new`` of model ``i``."""
        self._buy_cells(np.full(new.size, i, dtype=np.int64), new)

    def _buy_cells(self, r, c):
        """Buy the distinct, not yet revealed cells ``(r, c)``.

        Cells found in the store are read back; the others are split into back-end calls (one
        model each, at most ``chunk_size`` examples), run on up to ``max_concurrency`` threads,
        and each successful call is validated, committed to the store and cached before the
        next result is looked at (calls that finished together share one transaction). The
        cache is filled by cell, so what a strategy receives does not depend on the order in
        which calls complete. If calls fail, every other call started is still awaited and
        saved, then the error of the first failed call (in cell order) is raised.
        """
        if self.store_ is not None:
            keys = [(self._mid(i), self._eid(j)) for i, j in zip(r.tolist(), c.tolist())]
            found = self.store_.get_many(keys)
            if found:
                hit = np.array([k in found for k in keys])
                self.cached_scores_[r[hit], c[hit]] = [found[k].score for k in keys if k in found]
                self.revealed_[r[hit], c[hit]] = True
                self.n_evaluations_ += int(hit.sum())
                self.n_reused_ += int(hit.sum())
                r, c = r[~hit], c[~hit]
        if not r.size:
            return
        order = np.lexsort((c, r))
        r, c = r[order], c[order]
        size = r.size if self.chunk_size is None else int(self.chunk_size)
        starts = np.flatnonzero(np.r_[True, r[1:] != r[:-1]])
        ends = np.r_[starts[1:], r.size]
        calls = [(int(r[s]), c[k : min(k + size, e)])
                 for s, e in zip(starts, ends) for k in range(s, e, size)]
        retries = []  # list.append is atomic: workers count their retries here
        try:
            if self.max_concurrency == 1 or len(calls) == 1:
                for i, J in calls:
                    self._commit([(i, J, *self._validated(i, J, self._attempt(i, J, retries)))])
                return
            errors = {}
            with ThreadPoolExecutor(max_workers=min(int(self.max_concurrency), len(calls))) as pool:
                futures = {pool.submit(self._attempt, i, J, retries): k
                           for k, (i, J) in enumerate(calls)}
                pending = set(futures)
                try:
                    while pending:
                        done, pending = wait(pending, return_when=FIRST_COMPLETED)
                        self._commit(self._collect(done, futures, calls, errors))
                        if errors:  # start nothing new; finish (and save) what runs
                            for fut in pending:
                                fut.cancel()
                except BaseException:  # Ctrl-C, SystemExit: save the calls that complete
                    for fut in pending:
                        fut.cancel()
                    done, _ = wait(pending)
                    try:
                        self._commit(self._collect(done, futures, calls, {}))
                    finally:
                        raise
            if errors:
                raise errors[min(errors)]
        finally:
            self.n_retries_ += len(retries)

    def _collect(self, done, futures, calls, errors):
        """Validated results of the finished calls ``done`` (failures go to ``errors``)."""
        group = []
        for fut in sorted(done, key=futures.get):
            if fut.cancelled():
                continue
            k = futures[fut]
            try:
                group.append((*calls[k], *self._validated(*calls[k], fut.result())))
            except BaseException as exc:  # raised once the calls running are saved
                errors[k] = exc
        return group

    def _attempt(self, i, J, retries):
        """One back-end call with its retries; returns ``(scores, per-cell costs or None)``."""
        last = None
        attempts = int(self.max_retries) + 1
        for attempt in range(attempts):
            if self.max_cost is not None and self.cost_ >= self.max_cost:
                raise CostBudgetReached(
                    f"The cost spent, {self.cost_:g}, reached max_cost={self.max_cost:g}; no more "
                    "back-end calls are made (the scores bought are kept)."
                )
            if self.rate_limit is not None:
                limiter = getattr(self, "_limiter", None)
                if limiter is None:
                    limiter = self._limiter = RateLimiter(self.rate_limit, clock=self._clock,
                                                          sleep=self._sleep)
                limiter.acquire()
            try:
                out = self._call_with_timeout(i, J)
            except Exception as exc:
                last = exc
            else:
                out, costs = self._split_cost(out, i, J)
                if costs is not None:  # spent, even if the scores turn out unusable
                    with _COST_LOCK:
                        self.cost_ += float(costs.sum())
                return out, costs
            if attempt + 1 < attempts:
                retries.append(1)
                delay = self._backoff(i, J, attempt)
                if delay > 0:
                    self._sleep(delay)
        cells = _describe_cells(self._mid(i), [self._eid(j) for j in J.tolist()])
        if attempts == 1:  # no retry asked for: the back-end's own exception, with the cells
            add_note(last, f"(raised while scoring {cells})")
            raise last
        raise EvaluationError(
            f"Scoring {cells} failed on all {attempts} attempts (max_retries={self.max_retries}); "
            f"the last error was {type(last).__name__}: {last}. The scores bought before are "
            "kept; raise max_retries or fix the back-end, then resume()."
        ) from last

    def _backoff(self, i, J, attempt):
        """Exponential backoff with jitter: ``retry_backoff * 2**attempt * U(0.5, 1)``.

        The jitter comes from a generator seeded by the cell and the attempt, so waits are
        reproducible; they never change a result.
        """
        if not self.retry_backoff:
            return 0.0
        u = np.random.default_rng([int(i), int(J[0]), int(attempt)]).uniform(0.5, 1.0)
        return min(float(self.retry_backoff) * 2.0**attempt * u, _MAX_BACKOFF)

    def _call_with_timeout(self, i, J):
        if self.timeout is None:
            return self._fetch(i, J)
        box = {}

        def target():
            try:
                box["out"] = self._fetch(i, J)
            except BaseException as exc:  # handed to the caller
                box["exc"] = exc

        worker = threading.Thread(target=target, daemon=True)
        worker.start()
        worker.join(self.timeout)
        if worker.is_alive():
            raise TimeoutError(
                f"the back-end did not answer within timeout={self.timeout:g} s (the call is "
                "abandoned: Python cannot cancel it, its answer is discarded)"
            )
        if "exc" in box:
            raise box["exc"]
        return box["out"]

    def _split_cost(self, out, i, J):
        """Separate ``(scores, cost)`` when the back-end reports costs; per-cell costs."""
        if self.cost is None:
            return out, None
        if isinstance(self.cost, str):  # "returned"
            if not (isinstance(out, (tuple, list)) and len(out) == 2):
                raise TypeError(
                    f"With cost='returned' the scoring function must return (scores, cost); for "
                    f"model {i} it returned {type(out).__name__}."
                )
            out, cost = out
            cost = np.asarray(cost, dtype=float)
            if cost.ndim == 0:
                cost = np.full(J.size, float(cost) / J.size)
            if cost.shape != (J.size,) or not np.all(np.isfinite(cost)) or np.any(cost < 0):
                raise ValueError(
                    f"The cost returned for model {i} must be a finite number >= 0 (the whole "
                    f"call) or one per example ({J.size}); got {cost!r}."
                )
            return out, cost
        return out, np.full(J.size, float(self.cost))

    def _validated(self, i, J, result):
        """The scores and per-cell costs of one call, checked (a defect raises, naming the cell)."""
        values, costs = result
        self._check_range(values, i, J)
        return check_returned_scores(values, J.size, i), costs

    def _commit(self, calls):
        """Commit the validated calls ``(i, J, scores, costs)`` in one transaction, then cache."""
        if not calls:
            return
        if self.store_ is not None:
            now = time.time()
            self.store_.put_many([
                EvaluationRecord(self._mid(i), self._eid(j), v, k, now)
                for i, J, values, costs in calls
                for j, v, k in zip(J.tolist(), values.tolist(),
                                   [None] * J.size if costs is None else costs.tolist())
            ])
        for i, J, values, costs in calls:
            self.n_calls_ += 1
            self.cached_scores_[i, J] = values
            self.revealed_[i, J] = True
            self.n_evaluations_ += J.size
            self.n_purchased_ += J.size

    def _describe(self, i):
        return f"model {i}"

    _range_hint = "the scoring back-end must return scores in [0, 1] (higher = better); rescale them"

    def _check_range(self, values, i, new):
        """Raise, naming the model and the example, if a returned score lies outside [0, 1].

        Other defects (wrong length, NaN, non-numeric) are left to ``check_returned_scores``.
        """
        try:
            arr = np.asarray(values, dtype=float)
        except (TypeError, ValueError):
            return
        if arr.shape != new.shape:
            return
        with np.errstate(invalid="ignore"):
            out = np.flatnonzero((arr < 0.0) | (arr > 1.0))
        if out.size:
            k = int(out[0])
            raise ValueError(
                f"The score of {self._describe(i)} on example {int(new[k])} is {float(arr[k])!r}, "
                f"outside the score range [0, 1] ({out.size} of the {new.size} scores returned "
                f"in this call are); {self._range_hint}."
            )

    def _check_available(self, i, J):
        avail = self.available_mask()
        if avail is not None and J.size and not avail[i, J].all():
            j = int(J[~avail[i, J]][0])
            raise ValueError(
                f"Cell (model {i}, example {j}) is not available in this score matrix (NaN); "
                "request only available cells."
            )

    def query(self, model_index: int, example_indices: ArrayLike) -> FloatArray:
        """Scores of one model on some examples, buying only the cells not yet cached.

        Parameters
        ----------
        model_index : int
        example_indices : array-like of int

        Returns
        -------
        scores : ndarray of shape (len(example_indices),)
        """
        i = check_index(model_index, "model_index", self.n_models)
        J = check_indices(example_indices, "example_indices", self.n_examples)
        self._check_available(i, J)
        new = np.unique(J[~self.revealed_[i, J]])
        if new.size:
            self._buy(i, new)
        return self.cached_scores_[i, J].copy()

    def query_cells(self, rows: ArrayLike, cols: ArrayLike) -> FloatArray:
        """Scores of arbitrary (model, example) cells, one back-end call per distinct model.

        If a call fails, the cells of the models already scored stay bought and cached.
        """
        rows = check_indices(rows, "rows", self.n_models)
        cols = check_indices(cols, "cols", self.n_examples)
        if rows.shape != cols.shape:
            raise ValueError(f"`rows` and `cols` must have the same length; got {rows.size} and {cols.size}.")
        need = ~self.revealed_[rows, cols]
        if need.any():
            r, c = rows[need], cols[need]
            avail = self.available_mask()
            if avail is not None and not avail[r, c].all():
                k = int(np.flatnonzero(~avail[r, c])[0])
                self._check_available(int(r[k]), c[k : k + 1])
            flat = np.unique(r * self.n_examples + c)
            self._buy_cells(*np.divmod(flat, self.n_examples))
        return self.cached_scores_[rows, cols].copy()

    def clear_cache(self) -> Self:
        """Forget every cached score and reset the counters (the store, if any, is kept)."""
        self._init_cache(self.n_models, self.n_examples)
        return self

    def __repr__(self):
        return (
            f"{type(self).__name__}(n_models={self.n_models}, n_examples={self.n_examples}, "
            f"n_evaluations_={self.n_evaluations_})"
        )


class MatrixOracle(ScoreOracle):
    """A precomputed score matrix, revealed lazily cell by cell.

    Parameters
    ----------
    scores : array-like of shape (n_models, n_examples)
        Scores in ``[0, 1]`` (higher = better), e.g. a leaderboard's correctness matrix.
    missing : {"error", "exclude"}, default="error"
        What a NaN means. ``"error"``: the matrix must be complete. ``"exclude"``: NaN marks a
        cell that is not available (the model was never run on that example); each model's mean
        is then over its available examples and strategies never ask for the missing cells. When
        the models' examples differ, a ``RiskControlWarning`` says how many each model has and
        how many all have: the means then compare different examples (drop the columns with a
        NaN to compare the models on the same ones).
    store : str, path-like, EvaluationStore or None, default=None
        Durable store of the revealed cells (a path opens a
        :class:`~sklearn_riskcontrol.evaluation.SQLiteStore`); its run configuration includes a
        digest of ``scores``, so a store written for another table is refused. Mostly useful
        to record which cells a run looked at (the command line's ``bandits --store``).
    model_ids, example_ids : sequence of str or None, default=None
        Names of the rows and columns, used as the store's keys (default: the indices); kept
        as the attributes ``model_ids`` and ``example_ids`` (lists of str, or None). A long
        table (one row per model and example) gives both: :meth:`from_long`.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_riskcontrol.evaluation import MatrixOracle
    >>> oracle = MatrixOracle(np.array([[1.0, 0.0, 1.0], [0.0, 0.0, 1.0]]))
    >>> oracle.query(0, [0, 2])
    array([1., 1.])
    >>> oracle.query(0, [2]), oracle.n_evaluations_      # cached: not bought twice
    (array([1.]), 2)
    """

    def __init__(
        self,
        scores: ArrayLike,
        *,
        missing: str = "error",
        store: str | os.PathLike[str] | EvaluationStore | None = None,
        model_ids: Sequence[Any] | None = None,
        example_ids: Sequence[Any] | None = None,
    ) -> None:
        if missing not in ("error", "exclude"):
            raise ValueError(f"`missing` must be 'error' or 'exclude'; got {missing!r}.")
        self.missing = missing
        hint = (
            "If some cells are genuinely not available, pass MatrixOracle(scores, "
            "missing='exclude') so that each model's mean is over its available examples."
        )
        self.scores = check_score_matrix(
            scores, "scores", allow_nan=(missing == "exclude"), nan_hint=hint
        )
        self._avail = None
        if missing == "exclude":
            avail = ~np.isnan(self.scores)
            if not avail.any(axis=1).all():
                i = int(np.flatnonzero(~avail.any(axis=1))[0])
                raise ValueError(f"`scores` row {i} has no available cell (all NaN); drop that model.")
            self._avail = None if avail.all() else avail
        self._init_cache(*self.scores.shape)
        self.store = store
        self._attach_store(store, {"scores_sha256": _digest(self.scores)}, model_ids, example_ids)
        self.model_ids, self.example_ids = self._model_ids, self._example_ids
        sets = different_example_sets(self._avail, [
            f"model {i}" if self.model_ids is None else f"model {m!r}"
            for i, m in enumerate(self.model_ids or range(self.n_models))])
        if sets is not None:
            text, common = sets
            fix = (f" To compare the models on the {common} example{'s' * (common > 1)} they all "
                   "have, drop the columns with a NaN before building the MatrixOracle.")
            warn(text + "." + (fix if common else ""))

    @classmethod
    def from_long(
        cls,
        table: LongTable,
        *,
        missing: str = "error",
        store: str | os.PathLike[str] | EvaluationStore | None = None,
    ) -> MatrixOracle:
        """A MatrixOracle over a long table read by :mod:`sklearn_riskcontrol.evaluation`.

        Parameters
        ----------
        table : LongTable
            The result of :func:`~sklearn_riskcontrol.evaluation.read_long_table` or
            :func:`~sklearn_riskcontrol.evaluation.read_harness_samples` (its ``scores``, in
            ``[0, 1]``, with ``model_ids`` and ``example_ids``).
        missing : {"error", "exclude"}, default="error"
            What a missing cell (no row for that model and example) means, as in the
            constructor; ``"error"`` names the first missing (model, example) pair.
        store : str, path-like, EvaluationStore or None, default=None
            As in the constructor; the table's ids are the store's keys.

        Returns
        -------
        oracle : MatrixOracle
            With ``model_ids`` and ``example_ids`` (as text) kept for reporting.

        Examples
        --------
        >>> import pandas as pd
        >>> from sklearn_riskcontrol.evaluation import MatrixOracle, read_long_table
        >>> t = read_long_table(pd.DataFrame({"model": ["a", "b", "a"], "example": [1, 1, 2],
        ...                                   "score": [1.0, 0.0, 0.0]}))
        >>> MatrixOracle.from_long(t)
        Traceback (most recent call last):
        ...
        ValueError: the long table has no score for model 'b' on example '2' (1 of 4 cells missing); pass missing='exclude' to use each model's available examples only, or add the missing rows.
        >>> oracle = MatrixOracle.from_long(t, missing="exclude")
        >>> oracle.model_ids, oracle.available_mask()
        (['a', 'b'], array([[ True,  True],
               [ True, False]]))
        """
        try:
            scores, model_ids, example_ids = table.scores, table.model_ids, table.example_ids
        except AttributeError:
            raise TypeError(
                "`table` must be a LongTable (from sklearn_riskcontrol.evaluation.read_long_table "
                f"or read_harness_samples); got {type(table).__name__}."
            ) from None
        scores = np.asarray(scores, dtype=float)
        if missing == "error" and scores.ndim == 2 and np.isnan(scores).any():
            i, j = (int(k) for k in np.argwhere(np.isnan(scores))[0])
            raise ValueError(
                f"the long table has no score for model {str(model_ids[i])!r} on example "
                f"{str(example_ids[j])!r} ({int(np.isnan(scores).sum())} of {scores.size} cells "
                "missing); pass missing='exclude' to use each model's available examples only, "
                "or add the missing rows."
            )
        return cls(scores, missing=missing, store=store, model_ids=list(model_ids),
                   example_ids=list(example_ids))

    def available_mask(self) -> BoolArray | None:
        return self._avail

    def _fetch(self, model_index, example_indices):
        return self.scores[model_index, example_indices]

    def query_cells(self, rows: ArrayLike, cols: ArrayLike) -> FloatArray:
        if self.store_ is not None:  # cell by cell through the store
            return super().query_cells(rows, cols)
        rows = check_indices(rows, "rows", self.n_models)
        cols = check_indices(cols, "cols", self.n_examples)
        if rows.shape != cols.shape:
            raise ValueError(f"`rows` and `cols` must have the same length; got {rows.size} and {cols.size}.")
        if self._avail is not None and not self._avail[rows, cols].all():
            k = int(np.flatnonzero(~self._avail[rows, cols])[0])
            raise ValueError(
                f"Cell (model {rows[k]}, example {cols[k]}) is not available in this score matrix "
                "(NaN); request only available cells."
            )
        need = ~self.revealed_[rows, cols]
        if need.any():
            r, c = rows[need], cols[need]
            flat = np.unique(r * self.n_examples + c)
            r, c = np.divmod(flat, self.n_examples)
            self.cached_scores_[r, c] = self.scores[r, c]
            self.revealed_[r, c] = True
            self.n_evaluations_ += flat.size
            self.n_purchased_ += flat.size
            self.n_calls_ += 1
        return self.cached_scores_[rows, cols].copy()

    def true_means(self) -> FloatArray:
        """Exact mean score of every model (over its available examples); for simulations."""
        return np.nanmean(self.scores, axis=1)


class CallableOracle(ScoreOracle):
    """Scores from a user function, e.g. an LLM call followed by a judge.

    Built for paid, slow, unreliable back-ends: every score can be committed to a durable
    ``store`` before it is used (a new process continues a killed run without buying anything
    twice), failed calls are retried with exponential backoff, calls run on a bounded thread
    pool under an optional rate limit, and a cost budget stops the run cleanly. See
    :doc:`/running_evaluations`.

    Parameters
    ----------
    score : callable
        ``score(model_index, example_indices) -> scores``: ``model_index`` is an int,
        ``example_indices`` a 1-d int array of distinct examples not scored before for that
        model (at most ``chunk_size`` of them); it returns one score in ``[0, 1]`` per example
        (higher = better), or ``(scores, cost)`` with ``cost="returned"``. With
        ``max_concurrency > 1`` it is called from several threads at once. If it still raises
        after its retries, the strategy stops, keeps every score already bought and can
        ``resume()``.
    n_models, n_examples : int
        Size of the (virtual) score matrix.
    store : str, path-like, EvaluationStore or None, default=None
        Durable store of the bought scores: a file path opens (or creates) a
        :class:`~sklearn_riskcontrol.evaluation.SQLiteStore`. Cells already stored are returned
        without calling ``score``; each successful call is committed before its scores are
        used. A store created with another run configuration is refused.
    run_config : dict or None, default=None
        JSON-serializable description of what makes a score (model versions, prompt, judge,
        temperature, ...), saved in the store with the matrix size and the ids; reopening the
        store with a different one raises a ``ValueError`` naming both.
    model_ids, example_ids : sequence of str or None, default=None
        Names of the models and examples, the store's keys (default: the indices), so that a
        store reads well and can be shared by runs over other subsets.
    cost : float, "returned" or None, default=None
        Cost of an evaluation: a fixed cost per cell, or ``"returned"`` when ``score`` returns
        ``(scores, cost)`` with ``cost`` one number for the call (split equally over its cells)
        or one per example. Saved with each score; ``cost_`` sums it.
    max_cost : float or None, default=None
        Cost budget of the run (costs already in the store included). Once ``cost_`` reaches
        it, no new call starts: the oracle raises :class:`CostBudgetReached` and a strategy
        stops cleanly, state saved. Calls already running finish, so the total can exceed
        ``max_cost`` by the cost of at most ``max_concurrency`` calls.
    max_concurrency : int, default=1
        Number of back-end calls run at once (threads) when a batch needs several calls. The
        results do not depend on it, nor on the order in which calls complete.
    chunk_size : int or None, default=None
        At most this many examples per call (``1`` for a one-example-per-request API). ``None``:
        all the examples of a model in a batch in one call.
    rate_limit : float or None, default=None
        At most this many calls per minute (calls are spaced ``60 / rate_limit`` seconds
        apart; retries count as calls).
    max_retries : int, default=0
        Attempts after the first one for a call that raises or times out. When they are all
        spent, :class:`EvaluationError` names the cells (with 0, the back-end's own exception
        propagates, with the cells in a note).
    retry_backoff : float, default=1.0
        Wait before retry ``k`` (from 0): ``retry_backoff * 2**k * u`` seconds, ``u`` uniform
        in [0.5, 1] from a generator seeded by the cell and ``k`` (capped at 60 s); 0 retries
        at once.
    timeout : float or None, default=None
        Seconds after which a call counts as failed (and is retried). Python cannot stop a
        running call: it is abandoned and its answer discarded, though a paid API may still
        charge for it; prefer your client's own timeout when it has one.

    Examples
    --------
    >>> from sklearn_riskcontrol.evaluation import CallableOracle
    >>> def score(model_index, example_indices):
    ...     return (example_indices % (model_index + 2) == 0).astype(float)
    >>> oracle = CallableOracle(score, n_models=3, n_examples=10)
    >>> oracle.query(1, [0, 1, 3])
    array([1., 0., 1.])

    A durable store: a second oracle (as a new process would build it) reuses the scores.

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "run.db")
    >>> first = CallableOracle(score, 3, 10, store=path, cost=0.01, run_config={"judge": "v1"})
    >>> first.query(1, [0, 1, 3]), first.n_purchased_
    (array([1., 0., 1.]), 3)
    >>> again = CallableOracle(score, 3, 10, store=path, cost=0.01, run_config={"judge": "v1"})
    >>> again.query(1, [0, 1, 3, 4]), again.n_purchased_, again.n_reused_, round(again.cost_, 2)
    (array([1., 0., 1., 0.]), 1, 3, 0.04)
    """

    def __init__(
        self,
        score: Callable[..., Any],
        n_models: int,
        n_examples: int,
        *,
        store: str | os.PathLike[str] | EvaluationStore | None = None,
        run_config: Mapping[str, Any] | None = None,
        model_ids: Sequence[Any] | None = None,
        example_ids: Sequence[Any] | None = None,
        cost: float | ArrayLike | Callable[..., Any] | None = None,
        max_cost: float | None = None,
        max_concurrency: int = 1,
        chunk_size: int | None = None,
        rate_limit: float | None = None,
        max_retries: int = 0,
        retry_backoff: float = 1.0,
        timeout: float | None = None,
    ) -> None:
        if not callable(score):
            raise TypeError(f"`score` must be callable score(model_index, example_indices); got {score!r}.")
        self.score = score
        if not (cost is None or cost == "returned"
                or (isinstance(cost, (int, float, np.number)) and not isinstance(cost, bool)
                    and np.isfinite(cost) and cost >= 0)):
            raise ValueError(
                f"`cost` must be None, a number >= 0 (the cost of one evaluation) or 'returned' "
                f"(score returns (scores, cost)); got {cost!r}."
            )
        self.cost = cost
        self.max_cost = _check_optional(max_cost, "max_cost", lambda v: v > 0, "a number > 0")
        if self.max_cost is not None and cost is None:
            raise ValueError(
                "`max_cost` needs costs: pass `cost` (a cost per evaluation, or 'returned' when "
                "score returns (scores, cost))."
            )
        self.max_concurrency = _positive_int(max_concurrency, "max_concurrency")
        self.chunk_size = None if chunk_size is None else _positive_int(chunk_size, "chunk_size")
        self.rate_limit = _check_optional(rate_limit, "rate_limit", lambda v: v > 0,
                                          "a number of calls per minute > 0")
        if (isinstance(max_retries, (bool, np.bool_))
                or not isinstance(max_retries, (int, np.integer)) or max_retries < 0):
            raise ValueError(f"`max_retries` must be an integer >= 0; got {max_retries!r}.")
        self.max_retries = int(max_retries)
        self.retry_backoff = _check_optional(retry_backoff, "retry_backoff", lambda v: v >= 0,
                                             "a number of seconds >= 0", allow_none=False)
        self.timeout = _check_optional(timeout, "timeout", lambda v: v > 0, "a number of seconds > 0")
        self._init_cache(_positive_int(n_models, "n_models"), _positive_int(n_examples, "n_examples"))
        if run_config is not None and not isinstance(run_config, dict):
            raise TypeError(f"`run_config` must be a dict (JSON-serializable); got {run_config!r}.")
        self.store = store
        self.run_config = run_config
        self._attach_store(store, None if run_config is None else {"run_config": run_config},
                           model_ids, example_ids)

    def _fetch(self, model_index, example_indices):
        return self.score(model_index, example_indices)


def different_example_sets(available, labels):
    """Say how the models' example sets differ, or None when every model has the same examples.

    ``available`` is a models x examples mask of the available cells (None: all available) and
    ``labels`` names the models in the message. Returns the sentence (how many examples each
    model has and how many all of them have; callers add their fix) and the number of common
    examples.
    """
    if available is None or (available == available[0]).all():
        return None
    counts = available.sum(axis=1)
    common = int(available.all(axis=0).sum())
    if len(counts) <= 5:
        per = ", ".join(f"{name} has {c}" for name, c in zip(labels, counts))
    elif counts.min() == counts.max():
        per = f"each model has {counts[0]}"
    else:
        lo, hi = int(np.argmin(counts)), int(np.argmax(counts))
        per = f"from {counts[lo]} ({labels[lo]}) to {counts[hi]} ({labels[hi]}) per model"
    shared = {0: "none is", 1: "1 is"}.get(common, f"{common} are")
    return (f"The models were scored on different examples ({per}; {shared} common to all): "
            "each model's mean is over its own examples, so the means, and the best model, "
            "compare different sets of examples", common)


def _check_optional(value, name, ok, what, allow_none=True):
    if value is None and allow_none:
        return None
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.number)) \
            or not np.isfinite(value) or not ok(value):
        raise ValueError(f"`{name}` must be {what}" + (" or None" if allow_none else "")
                         + f"; got {value!r}.")
    return float(value)


def _check_ids(ids, name, n):
    """Ids (as str) of the rows or columns, unique, one per index; ``None`` = the indices."""
    if ids is None:
        return None
    if isinstance(ids, str):
        raise TypeError(f"`{name}` must be a sequence of ids, one per index; got a string.")
    ids = [str(v) for v in ids]
    if len(ids) != n:
        raise ValueError(f"`{name}` must have one id per index ({n}); got {len(ids)}.")
    if len(set(ids)) != n:
        dup = next(v for k, v in enumerate(ids) if v in ids[:k])
        raise ValueError(f"`{name}` must be unique (the store's keys); {dup!r} appears twice.")
    return ids


def _digest(obj):
    """Short sha256 of an array or a list of strings (part of a store's run configuration)."""
    h = hashlib.sha256()
    if isinstance(obj, np.ndarray):
        h.update(str(obj.shape).encode())
        h.update(np.ascontiguousarray(obj, dtype=float).tobytes())
    else:
        h.update("\x1f".join(obj).encode())
    return h.hexdigest()[:16]


def _describe_cells(model, examples):
    if len(examples) == 1:
        return f"the cell (model {model}, example {examples[0]})"
    shown = ", ".join(examples[:5]) + (", ..." if len(examples) > 5 else "")
    return f"the {len(examples)} cells of model {model} on examples {shown}"


def _positive_int(value, name):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"`{name}` must be a positive integer; got {value!r}.")
    if value < 1:
        raise ValueError(f"`{name}` must be a positive integer; got {value}.")
    return int(value)


def _accuracy(y_true, y_pred):
    return (np.asarray(y_true) == np.asarray(y_pred)).astype(float)


class ScaledAbsoluteError:
    """Bounded per-example regression score ``1 - min(1, |y_true - y_pred| / scale)``.

    Higher is better; 1 is an exact prediction, 0 an error of at least ``scale``. The default
    score of :class:`EstimatorOracle` and :class:`BestModelSelector` for regressors, with
    ``scale`` the range ``max(y) - min(y)`` of the pool's labels: the scores are then a fixed
    function of the pool (known before any evaluation), so every guarantee about the pool mean
    of this score holds, and models are ranked by their mean absolute error (errors larger than
    the label range, rare, are clipped). The mean score ``s`` of a model converts back to a
    clipped mean absolute error ``(1 - s) * scale``.

    Parameters
    ----------
    scale : float > 0
        Error at which the score reaches 0, in the units of ``y``.

    Examples
    --------
    >>> from sklearn_riskcontrol.evaluation._oracles import ScaledAbsoluteError
    >>> ScaledAbsoluteError(10.0)([0.0, 0.0, 0.0], [1.0, -5.0, 30.0])
    array([0.9, 0.5, 0. ])
    """

    def __init__(self, scale):
        self.scale = float(scale)

    def __call__(self, y_true, y_pred):
        y_true = np.asarray(y_true, dtype=float)
        err = np.abs(y_true - np.asarray(y_pred, dtype=float).reshape(y_true.shape))
        return 1.0 - np.minimum(1.0, err / self.scale)

    def __repr__(self):
        return f"ScaledAbsoluteError(scale={self.scale:g})"


_SCORING_STRINGS = (
    "'accuracy' (1{y_pred == y}, the default for classifiers) and 'absolute_error' "
    "(1 - min(1, |y - y_pred| / (max(y) - min(y))), the default for regressors)"
)


def resolve_scoring(scoring, estimators, y, response_method="predict"):
    """Return the per-example score ``scoring(y_true, y_pred) -> array in [0, 1]`` to use.

    ``None`` picks by estimator type: ``"accuracy"`` for classifiers, ``"absolute_error"`` for
    regressors (by the type of ``y`` when the candidates declare no type). Strings name the
    bounded per-example scores; a callable is returned unchanged.

    Examples
    --------
    >>> from sklearn.linear_model import LinearRegression
    >>> from sklearn_riskcontrol.evaluation._oracles import resolve_scoring
    >>> resolve_scoring(None, [LinearRegression()], [1.0, 3.0, 5.0])
    ScaledAbsoluteError(scale=4)
    """
    from sklearn.base import is_classifier, is_regressor
    from sklearn.utils.multiclass import type_of_target

    if callable(scoring):
        return scoring
    if scoring is not None and not isinstance(scoring, str):
        raise TypeError(
            f"`scoring` must be None, a string or a callable (y_true, y_pred) -> scores in [0, 1]; "
            f"got {scoring!r}."
        )
    if response_method != "predict":
        raise ValueError(
            f"`scoring`={scoring!r} compares y with predict's output, so it needs "
            "response_method='predict'; pass a per-example callable `scoring(y_true, y_pred)` for "
            "other response methods."
        )
    if scoring is None:
        clf = [is_classifier(e) for e in estimators]
        reg = [is_regressor(e) for e in estimators]
        if any(clf) and any(reg):
            raise ValueError(
                "The candidates mix classifiers and regressors, so there is no common default "
                f"score; pass `scoring` (the accepted strings are {_SCORING_STRINGS}) or a "
                "callable scoring(y_true, y_pred) -> scores in [0, 1]."
            )
        if any(reg) or (not any(clf) and type_of_target(y) == "continuous"):
            scoring = "absolute_error"
        else:
            scoring = "accuracy"
    if scoring == "accuracy":
        return _accuracy
    if scoring == "absolute_error":
        y = np.asarray(y)
        if y.dtype.kind not in "biuf":
            raise ValueError(
                f"scoring='absolute_error' needs numeric targets; `y` has dtype {y.dtype}. Use "
                "scoring='accuracy' for class labels."
            )
        scale = float(np.ptp(y)) if y.size else 0.0
        if not scale > 0:
            raise ValueError(
                "scoring='absolute_error' scales errors by the range of `y`, but every label "
                "equals the same value; pass a callable `scoring` with an explicit scale."
            )
        return ScaledAbsoluteError(scale)
    raise ValueError(
        f"`scoring`={scoring!r} is not supported: the strategies need a bounded per-example "
        f"score in [0, 1], and the accepted strings are {_SCORING_STRINGS}. scikit-learn scorers "
        "such as 'neg_mean_absolute_error', 'r2' or 'roc_auc' are aggregates over a data set "
        "with no bounded per-example version; pass a callable scoring(y_true, y_pred) -> scores "
        "in [0, 1] instead."
    )


class EstimatorOracle(ScoreOracle):
    """Scores of already fitted scikit-learn estimators on a pool of labelled examples.

    Parameters
    ----------
    estimators : list of fitted estimators
        The candidate models (never refitted).
    X : array-like or DataFrame of shape (n_examples, n_features)
    y : array-like of shape (n_examples,)
    scoring : callable, {"accuracy", "absolute_error"} or None, default=None
        Per-example score ``scoring(y_true, y_pred) -> array in [0, 1]`` (higher = better); a
        score outside [0, 1] raises a ``ValueError`` naming the model and the example.
        ``"accuracy"`` is ``1{y_pred == y_true}``; ``"absolute_error"`` is
        ``1 - min(1, |y_true - y_pred| / (max(y) - min(y)))`` (:class:`ScaledAbsoluteError`).
        ``None`` picks ``"accuracy"`` for classifiers and ``"absolute_error"`` for regressors.
        To score with a risk from :func:`~sklearn_riskcontrol.risks.make_risk`, pass
        ``lambda yt, yp: 1 - risk(yt, yp)``.
    response_method : {"predict", "predict_proba", "decision_function"}, default="predict"
        Method whose output is passed to ``scoring`` as ``y_pred`` (the strings and the default
        need ``"predict"``).
    store : str, path-like, EvaluationStore or None, default=None
        Durable store of the bought scores (a path opens a
        :class:`~sklearn_riskcontrol.evaluation.SQLiteStore`). The run configuration saved with
        it names the candidates' classes and the scoring, with digests of ``X`` and ``y``, so
        a store written for another pool is refused.

    Attributes
    ----------
    scoring_ : callable
        The per-example score used (``scoring`` resolved).

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> from sklearn_riskcontrol.evaluation import EstimatorOracle
    >>> from sklearn.model_selection import train_test_split
    >>> X, y = make_classification(200, random_state=0)
    >>> X_fit, X_pool, y_fit, y_pool = train_test_split(X, y, test_size=0.5, random_state=0)
    >>> models = [LogisticRegression().fit(X_fit, y_fit),
    ...           DecisionTreeClassifier(random_state=0).fit(X_fit, y_fit)]
    >>> oracle = EstimatorOracle(models, X_pool, y_pool)   # default score: accuracy
    >>> oracle.shape
    (2, 100)
    >>> oracle.query(0, [0, 1, 2]).shape
    (3,)
    """

    def __init__(
        self,
        estimators: Sequence[Estimator],
        X: ArrayLike,
        y: ArrayLike,
        *,
        scoring: str | Callable[..., ArrayLike] | None = None,
        response_method: str = "predict",
        store: str | os.PathLike[str] | EvaluationStore | None = None,
    ) -> None:
        from sklearn.utils.validation import check_is_fitted

        estimators = list(estimators)
        if not estimators:
            raise ValueError("`estimators` is empty; pass at least one fitted estimator.")
        for k, est in enumerate(estimators):
            if not hasattr(est, response_method):
                raise TypeError(f"estimators[{k}] ({type(est).__name__}) has no method {response_method!r}.")
            try:
                check_is_fitted(est)
            except Exception as exc:  # NotFittedError, or TypeError for non-estimators
                raise type(exc)(
                    f"estimators[{k}] ({type(est).__name__}) is not fitted; the candidates must be "
                    "fitted models (they are never refitted)."
                ) from None
        n = _num_samples(X)
        y = check_labels(y)
        if y.ndim != 1 and not (y.ndim == 2 and y.shape[1] == 1):
            raise ValueError(f"`y` must be 1-d; got shape {y.shape}.")
        y = y.ravel()
        if y.shape[0] != n:
            raise ValueError(f"Mismatched lengths: `X` has {n} rows, `y` has {y.shape[0]}; they must be equal.")
        if n == 0:
            raise ValueError("`X` is empty: at least one example is required.")
        self.estimators = estimators
        self.X = X
        self.y = y
        self.scoring = scoring
        self.response_method = response_method
        self.scoring_ = resolve_scoring(scoring, estimators, y, response_method)
        self._init_cache(len(estimators), n)
        self.store = store
        if store is not None:
            from joblib import hash as joblib_hash

            config = {
                "estimators": [type(e).__name__ for e in estimators],
                "scoring": getattr(self.scoring_, "__qualname__", None) or repr(self.scoring_),
                "response_method": response_method,
                "X_hash": joblib_hash(X),
                "y_hash": joblib_hash(y),
            }
            self._attach_store(store, config)

    def _describe(self, i):
        return f"estimators[{i}] ({type(self.estimators[i]).__name__})"

    _range_hint = (
        "`scoring` must return per-example scores in [0, 1] (higher = better); rescale it, "
        "e.g. 1 - min(1, |y - y_pred| / scale), or use scoring='absolute_error'"
    )

    def _fetch(self, model_index, example_indices):
        from sklearn.utils import _safe_indexing

        Xj = _safe_indexing(self.X, example_indices)
        y_pred = getattr(self.estimators[model_index], self.response_method)(Xj)
        return self.scoring_(self.y[example_indices], y_pred)


def _num_samples(X):
    from sklearn.utils.validation import _num_samples as n_samples

    try:
        return int(n_samples(X))
    except TypeError:
        raise TypeError(f"`X` must be array-like with one row per example; got {type(X).__name__}.") from None


def as_oracle(scores: ArrayLike | ScoreOracle, name: str = "scores") -> ScoreOracle:
    """Return ``scores`` as a :class:`ScoreOracle` (a full score matrix becomes a MatrixOracle).

    A :class:`~sklearn_riskcontrol.evaluation.LongTable` becomes ``MatrixOracle.from_long(scores)``
    (complete tables; use ``from_long(table, missing="exclude")`` for missing cells).

    Examples
    --------
    >>> from sklearn_riskcontrol.evaluation import as_oracle
    >>> as_oracle([[1.0, 0.0], [0.0, 0.0]])
    MatrixOracle(n_models=2, n_examples=2, n_evaluations_=0)
    """
    if isinstance(scores, ScoreOracle):
        return scores
    if all(hasattr(scores, a) for a in ("scores", "model_ids", "example_ids")):
        return MatrixOracle.from_long(scores)  # a LongTable (sklearn_riskcontrol.evaluation)
    if callable(scores) and not hasattr(scores, "shape"):
        raise TypeError(
            f"`{name}` is a function; wrap it as CallableOracle(score, n_models=..., "
            "n_examples=...) so that the size of the score matrix is known."
        )
    return MatrixOracle(scores)
