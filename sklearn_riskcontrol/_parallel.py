"""Parallel runs of independent units of work, in tasks large enough to pay for themselves.

Shared by the Monte-Carlo studies, model selection (estimator and array layer) and anything
else that runs many independent units (repetitions, candidates) on a joblib backend.
"""

import ctypes
import numbers
import os
import platform
import threading
import time
from contextlib import contextmanager

from joblib import effective_n_jobs, parallel_config
from sklearn.utils.parallel import Parallel, delayed  # propagate sklearn's config to workers

from ._dask import dask_client, direct_results, sent_once
from ._validation import show

__all__ = ["check_batch_size", "run_units"]

# Task granularity (doc/scale_out.rst): dispatching a task costs about a millisecond with loky
# and several on Dask, plus shipping its inputs, so a task must carry >= MIN_TASK_SECONDS of
# work; a few tasks per worker keep workers busy when units take unequal times.
MIN_TASK_SECONDS = 0.1
TASKS_PER_WORKER = 4
PILOT_SECONDS = 0.05  # units run here first to measure their cost


# glibc's mallopt parameters (malloc.h).
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
_TASK_MMAP_THRESHOLD = 32 << 20  # the ceiling glibc's adaptive threshold reaches on 64-bit
_DEFAULT_MMAP_THRESHOLD = 128 << 10
_heap_lock = threading.Lock()
_heap_users = 0


def _pinned_heap_libc():
    """glibc, when this process was started with ``MALLOC_TRIM_THRESHOLD_`` set (and no
    ``MALLOC_TOP_PAD_``); else None.

    Dask's nanny starts workers that way. Setting a threshold switches off glibc's adaptive
    thresholds, so every NumPy temporary of more than 128 KiB is a fresh ``mmap`` whose pages
    fault in on every use: measured, the library's tasks then take 1.4x the CPU time.
    """
    if "MALLOC_TRIM_THRESHOLD_" not in os.environ or "MALLOC_TOP_PAD_" in os.environ:
        return None
    if platform.system() != "Linux" or platform.libc_ver()[0] != "glibc":
        return None
    try:
        return ctypes.CDLL(None)
    except OSError:  # pragma: no cover - no dynamic C library
        return None


_LIBC = _pinned_heap_libc()


@contextmanager
def _task_heap():
    """Run a parallel task with glibc's adaptive-mode thresholds (large temporaries reuse heap
    pages), then restore the process's own and give freed memory back (``malloc_trim``), so a
    Dask worker keeps returning memory between tasks as its nanny intends."""
    global _heap_users
    if _LIBC is None:
        yield
        return
    with _heap_lock:
        _heap_users += 1
        if _heap_users == 1:
            _LIBC.mallopt(_M_MMAP_THRESHOLD, _TASK_MMAP_THRESHOLD)
            _LIBC.mallopt(_M_TRIM_THRESHOLD, 2 * _TASK_MMAP_THRESHOLD)
    try:
        yield
    finally:
        with _heap_lock:
            _heap_users -= 1
            if _heap_users == 0:
                mmap = int(os.environ.get("MALLOC_MMAP_THRESHOLD_", _DEFAULT_MMAP_THRESHOLD))
                _LIBC.mallopt(_M_MMAP_THRESHOLD, mmap)
                _LIBC.mallopt(_M_TRIM_THRESHOLD, int(os.environ["MALLOC_TRIM_THRESHOLD_"]))
                _LIBC.malloc_trim(0)


def _run_batch(func, units, *shared):
    """One parallel task: ``func(*unit, *shared)`` for a batch of units.

    Nested joblib calls (e.g. an estimator's row chunks) run sequentially: the outer call
    already occupies every worker, and inside a Dask worker the active backend would otherwise
    still be Dask, sending each repetition's chunks back to the cluster as new tasks.
    """
    with parallel_config(backend="sequential"), _task_heap():
        return [func(*unit, *shared) for unit in units]


def check_batch_size(batch_size):
    """``batch_size``: ``"auto"`` or a positive int (units of work per parallel task)."""
    if isinstance(batch_size, str) and batch_size == "auto":
        return batch_size
    if isinstance(batch_size, numbers.Integral) and not isinstance(batch_size, bool) \
            and batch_size >= 1:
        return int(batch_size)
    raise ValueError(
        f"`batch_size` must be 'auto' or a positive integer (units of work per parallel task); "
        f"got {show(batch_size)}."
    )


def run_units(func, units, shared=(), *, n_jobs=None, batch_size="auto", each=None,
              may_stop=False):
    """``[func(*unit, *shared) for unit in units]`` with joblib, in tasks large enough to pay.

    With ``batch_size="auto"`` the first units run in this process for about
    ``PILOT_SECONDS`` to measure their cost; the rest is split into at most
    ``TASKS_PER_WORKER`` tasks per worker of at least ``MIN_TASK_SECONDS`` each, and runs
    sequentially here when that leaves fewer than two tasks. An int ``batch_size`` always
    dispatches tasks of that many units. ``shared`` arguments are passed once per task, at the
    top level; on Dask they are sent to every worker once, before the tasks, and results come
    straight from local workers (see :mod:`._dask`).

    Parameters
    ----------
    func : callable
        A picklable (e.g. module-level) function.
    units : sequence of tuples
        Per-unit leading arguments of ``func``.
    shared : tuple
        Trailing arguments common to every unit.
    n_jobs : int or None
        As in joblib.
    batch_size : "auto" or int
    each : callable, optional
        ``each(i, result)`` is called in unit order as results arrive; when ``may_stop``, a
        true return value stops after unit ``i``.
    may_stop : bool
        Dispatch at most one task per worker at a time, so that stopping wastes little work.

    Returns
    -------
    list
        The results of units ``0 .. i`` (all units unless ``each`` stopped at unit ``i``).

    Examples
    --------
    >>> from operator import add
    >>> from sklearn_riskcontrol._parallel import run_units
    >>> run_units(add, [(1,), (2,), (3,)], shared=(10,), n_jobs=2, batch_size=2)
    [11, 12, 13]
    """
    units = list(units)
    results = []

    def keep(res):  # True when the caller stops here
        results.append(res)
        stop = each(len(results) - 1, res) if each is not None else False
        return may_stop and bool(stop)

    def here(unit, nested_sequential):
        return keep(_run_batch(func, [unit], *shared)[0] if nested_sequential
                    else func(*unit, *shared))

    jobs = effective_n_jobs(n_jobs)
    if jobs == 1:  # the units' own n_jobs (e.g. an estimator's) still apply
        any(here(unit, False) for unit in units)
        return results
    size = batch_size
    if batch_size == "auto":
        start = time.perf_counter()
        while len(results) < len(units) and (
                not results or time.perf_counter() - start < PILOT_SECONDS):
            if here(units[len(results)], True):
                return results
        left = len(units) - len(results)
        work = (time.perf_counter() - start) / max(len(results), 1) * left
        n_tasks = min(left, jobs * TASKS_PER_WORKER, int(work / MIN_TASK_SECONDS))
        if n_tasks < 2:  # too little work left to pay for dispatching it
            any(here(unit, True) for unit in units[len(results):])
            return results
        size = -(-left // n_tasks)
    rest = units[len(results):]
    client = dask_client()
    with direct_results(client):
        shared = sent_once(client, shared)
        tasks = [delayed(_run_batch)(func, rest[i:i + size], *shared)
                 for i in range(0, len(rest), size)]
        if may_stop:
            _run_rounds(tasks, jobs, n_jobs, keep)
        else:
            _run_streamed(tasks, n_jobs, keep)
    return results


def _run_streamed(tasks, n_jobs, keep):
    """One call, results streamed in order as they complete where possible."""
    try:
        parallel = Parallel(n_jobs=n_jobs, return_as="generator")
    except ValueError:  # a backend that cannot stream (multiprocessing)
        parallel = Parallel(n_jobs=n_jobs)
    for out in parallel(tasks):
        for res in out:
            keep(res)


def _run_rounds(tasks, jobs, n_jobs, keep):
    """Rounds of one task per worker until ``keep`` says stop."""
    with Parallel(n_jobs=n_jobs) as parallel:
        for r in range(0, len(tasks), jobs):
            # A whole round is awaited (abandoning joblib's output would make loky kill its
            # workers); results after the stop are dropped.
            if any(keep(res) for out in parallel(tasks[r:r + jobs]) for res in out):
                break
