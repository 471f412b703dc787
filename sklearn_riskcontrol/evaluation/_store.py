"""Durable evaluation stores: every score bought is saved before a strategy uses it.

An evaluation (an LLM call, a judge call, a human label) costs money. A store keeps every
score an oracle buys, keyed by ``(model id, example id)`` with the time it was bought and its
cost, together with the run's configuration, so that a killed process, a laptop that slept or a
rate-limit storm loses nothing: a new process that opens the same store continues the same run,
and the cells already paid for are read back instead of bought again (see
:doc:`/running_evaluations`).

The interface, :class:`EvaluationStore`, is deliberately narrow (``open``, ``get_many``,
``put_many``, ``records``, ``close``) so that it can be implemented on a shared database
server. The default back-end, :class:`SQLiteStore`, is one SQLite file (standard library,
write-ahead log).
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import threading
import time
from abc import ABC, abstractmethod
from collections import namedtuple
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from typing_extensions import Self  # typing.Self: Python >= 3.11

__all__ = ["EvaluationRecord", "EvaluationStore", "SQLiteStore", "as_store"]

FORMAT_VERSION = 1
_SQLITE_HEADER = b"SQLite format 3\x00"  # the first 16 bytes of every SQLite file

#: One stored evaluation: the cell ``(model, example)`` (ids as strings), its ``score`` in
#: [0, 1], its ``cost`` (``None`` when unknown) and ``time`` (seconds since the epoch).
EvaluationRecord = namedtuple("EvaluationRecord", ["model", "example", "score", "cost", "time"])
EvaluationRecord.__doc__ = """One stored evaluation of the cell ``(model, example)``.

Fields: ``model`` and ``example`` (ids, as strings), ``score`` (in [0, 1]), ``cost`` (float or
``None`` when unknown) and ``time`` (when it was bought, seconds since the epoch).

Examples
--------
>>> from sklearn_riskcontrol.evaluation import EvaluationRecord
>>> EvaluationRecord("gpt-x", "q17", 1.0, 0.002, 1700000000.0).score
1.0
"""


def canonical_config(config):
    """The run configuration as canonical JSON (sorted keys), the form stores compare."""
    try:
        return json.dumps(config, sort_keys=True, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise TypeError(
            f"The run configuration must be JSON-serializable (str, numbers, lists, dicts) so "
            f"that a store can save and compare it; got {config!r} ({exc})."
        ) from None


def _shown(config, key):
    """``key=value`` of one configuration entry (``no key`` when absent), long values cut."""
    if key not in config:
        return f"no {key}"
    value = config[key]
    text = repr(value)
    if len(text) > 60:
        text = f"<{len(value)} entries>" if isinstance(value, (list, dict)) else text[:57] + "..."
    return f"{key}={text}"


class ConfigMismatchError(ValueError):
    """A store holds another run: it was opened with another run configuration.

    The message names the differing keys first, with their stored and new values, and then
    (on a second line) both full configurations. The attributes let a caller say the same in
    its own words (the command line names its options instead of the configuration keys).

    Attributes
    ----------
    where : str
        The store (e.g. ``"SQLite store 'run.db'"``).
    stored, given : object
        The stored configuration and this run's (JSON values, usually dicts).
    keys : list of str
        The keys whose values differ (empty when a configuration is not a dict).
    """

    def __init__(self, where, stored, given):
        self.where, self.stored, self.given = where, json.loads(stored), json.loads(given)
        both_dicts = isinstance(self.stored, dict) and isinstance(self.given, dict)
        self.keys = sorted(
            k for k in set(self.stored) | set(self.given)
            if k not in self.stored or k not in self.given or self.stored[k] != self.given[k]
        ) if both_dicts else []
        if self.keys:
            was = ", ".join(_shown(self.stored, k) for k in self.keys)
            now = ", ".join(_shown(self.given, k) for k in self.keys)
        else:
            was, now = f"the configuration {stored}", given
        super().__init__(
            f"{where} holds the evaluations of another run: it was created with {was}; this "
            f"run has {now}. The stored scores may not be the scores of this run, so they are "
            "not reused. Use a new store file for a different run, or the same configuration "
            f"to continue the stored one.\nFull configurations: stored {stored}; this run "
            f"{given}."
        )


class EvaluationStore(ABC):
    """Interface of a durable store of bought scores (implement it for your database).

    A store holds one run: its configuration (a JSON-serializable dict describing what makes a
    score, e.g. the models, the examples, the prompt and the judge) and at most one
    :class:`EvaluationRecord` per cell ``(model id, example id)``. The oracles call, in
    this order:

    - :meth:`open` once, with the run configuration;
    - :meth:`get_many` before buying cells, to reuse those already stored;
    - :meth:`put_many` after each successful back-end call, *before* the scores are used. It
      must be atomic (all records of the call or none) and durable when it returns; a cell
      already stored keeps its first record (first write wins), so two processes racing on a
      cell cannot make a run see two different scores.

    Implementations should be safe to call from several threads (the oracles call them from
    the main thread only, but users may share a store).

    Examples
    --------
    A minimal in-memory store (not durable; for illustration):

    >>> from sklearn_riskcontrol.evaluation import EvaluationStore
    >>> class DictStore(EvaluationStore):
    ...     def __init__(self):
    ...         self.config, self.rows = None, {}
    ...     def open(self, config):
    ...         if self.config is not None and self.config != config:
    ...             raise ValueError("another run")
    ...         self.config = config
    ...         return self
    ...     def get_many(self, cells):
    ...         return {c: self.rows[c] for c in cells if c in self.rows}
    ...     def put_many(self, records):
    ...         for r in records:
    ...             self.rows.setdefault((r.model, r.example), r)
    ...     def records(self):
    ...         return list(self.rows.values())
    >>> from sklearn_riskcontrol.evaluation import CallableOracle
    >>> store = DictStore()
    >>> oracle = CallableOracle(lambda i, J: J % 2, n_models=2, n_examples=4, store=store)
    >>> oracle.query(0, [1, 2])
    array([1., 0.])
    >>> len(store.records()), store.summary()
    (2, (2, 0.0))
    """

    @abstractmethod
    def open(self, config: Mapping[str, Any]) -> Self:
        """Start the run ``config`` or check that the stored run has this configuration.

        Raises a ``ValueError`` when they differ (best a :class:`ConfigMismatchError`, which
        names the differing keys). Returns ``self``.
        """

    @abstractmethod
    def get_many(self, cells: Iterable[tuple[str, str]]) -> dict[tuple[str, str], EvaluationRecord]:
        """Stored records of ``cells`` (pairs of id strings): a dict ``cell -> record``.

        Cells that are not stored are absent from the dict.
        """

    @abstractmethod
    def put_many(self, records: Iterable[EvaluationRecord]) -> None:
        """Save ``records`` atomically and durably; an already stored cell is left unchanged."""

    @abstractmethod
    def records(self) -> list[EvaluationRecord]:
        """Every stored :class:`EvaluationRecord` (in insertion order when known)."""

    def summary(self) -> tuple[int, float]:
        """``(number of stored cells, total known cost)``; override when a query is cheaper."""
        recs = self.records()
        return len(recs), float(sum(r.cost for r in recs if r.cost is not None))

    def close(self) -> None:
        """Release connections (the store can be opened again)."""

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class SQLiteStore(EvaluationStore):
    """Evaluation store in one SQLite file (standard library, write-ahead-log mode).

    Each call of :meth:`put_many` is one transaction, committed before the scores reach the
    strategy; with ``durable=True`` it is also flushed to disk (``synchronous=FULL``), so it
    survives a power loss, not only a killed process. Several threads (one connection, guarded
    by a lock) and several processes (SQLite's file locking; ``timeout`` seconds of waiting)
    may write to the same file.

    Parameters
    ----------
    path : str or path-like
        The database file; created when it does not exist. An existing file that is not an
        evaluation store (not SQLite, or another program's SQLite database) raises a
        ``ValueError`` naming it and is left unchanged; SQLite's own errors (a directory, a
        corrupt file, a full disk) are raised as a ``ValueError`` naming the file too.
    durable : bool, default=True
        ``True``: ``PRAGMA synchronous=FULL`` (every commit reaches the disk). ``False``:
        ``synchronous=NORMAL``, faster; a commit survives a crash of the process but may be
        lost if the machine loses power.
    timeout : float, default=30.0
        Seconds to wait for a lock held by another process before failing.

    Examples
    --------
    >>> import os, tempfile
    >>> from sklearn_riskcontrol.evaluation import SQLiteStore, EvaluationRecord
    >>> path = os.path.join(tempfile.mkdtemp(), "run.db")
    >>> with SQLiteStore(path).open({"prompt": "v1"}) as store:
    ...     store.put_many([EvaluationRecord("m0", "e3", 1.0, 0.01, 0.0)])
    >>> with SQLiteStore(path).open({"prompt": "v1"}) as store:   # a new process would do this
    ...     store.get_many([("m0", "e3"), ("m0", "e4")])
    {('m0', 'e3'): EvaluationRecord(model='m0', example='e3', score=1.0, cost=0.01, time=0.0)}
    >>> SQLiteStore(path).open({"prompt": "v2"})      # a ValueError, what differs first
    Traceback (most recent call last):
    ...
    sklearn_riskcontrol.evaluation._store.ConfigMismatchError: SQLite store ... holds the evaluations of another run: it was created with prompt='v1'; this run has prompt='v2'. ...
    """

    def __init__(
        self, path: str | os.PathLike[str], *, durable: bool = True, timeout: float = 30.0
    ) -> None:
        if not isinstance(path, (str, os.PathLike)):
            raise TypeError(f"`path` must be a file path (str or path-like); got {path!r}.")
        self.path = os.fspath(path)
        self.durable = bool(durable)
        self.timeout = float(timeout)
        self._conn = None
        self._lock = threading.RLock()
        self.config_ = None

    def __repr__(self):
        return f"SQLiteStore({self.path!r})"

    # a live connection and a lock cannot be pickled or deep-copied (clone): reconnect lazily
    def __getstate__(self):
        state = self.__dict__.copy()
        state["_conn"] = None
        state["_lock"] = None
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._lock = threading.RLock()

    @contextlib.contextmanager
    def _locked(self):
        """Hold the lock; report SQLite's errors as a ValueError naming the file."""
        try:
            with self._lock:
                yield
        except sqlite3.Error as exc:
            raise ValueError(
                f"SQLite store {self.path!r}: {exc} ({type(exc).__name__})."
            ) from exc

    def _refuse_other_files(self, conn):
        """Refuse, before anything is written, a file that is not an evaluation store."""
        with open(self.path, "rb") as f:  # sqlite3.connect has created it if it was absent
            head = f.read(len(_SQLITE_HEADER))
        if head and head != _SQLITE_HEADER:  # SQLite takes an empty file for a new database
            problem = "is not a SQLite database"
        else:
            tables = {row[0] for row in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table'")}
            if tables <= {"meta", "scores"}:  # new, or this class's (perhaps half created)
                return
            problem = "is a SQLite database but not an evaluation store"
        raise ValueError(
            f"SQLite store {self.path!r} {problem}; it was left unchanged. Pass the path of an "
            "evaluation store, or of a file that does not exist yet to start one."
        )

    def _connect(self):
        if self._conn is None:
            conn = sqlite3.connect(self.path, timeout=self.timeout, check_same_thread=False,
                                   isolation_level=None)
            try:
                self._refuse_other_files(conn)
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute(f"PRAGMA synchronous={'FULL' if self.durable else 'NORMAL'}")
                conn.execute(
                    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
                conn.execute(
                    "CREATE TABLE IF NOT EXISTS scores (model TEXT NOT NULL, example TEXT NOT "
                    "NULL, score REAL NOT NULL, cost REAL, time REAL NOT NULL, "
                    "PRIMARY KEY (model, example))"
                )
            except BaseException:
                conn.close()
                raise
            self._conn = conn
        return self._conn

    def open(self, config: Mapping[str, Any]) -> Self:
        given = canonical_config(config)
        with self._locked():
            conn = self._connect()
            conn.execute("BEGIN IMMEDIATE")
            try:
                row = conn.execute("SELECT value FROM meta WHERE key = 'config'").fetchone()
                if row is None:
                    conn.executemany(
                        "INSERT INTO meta (key, value) VALUES (?, ?)",
                        [("config", given), ("format_version", str(FORMAT_VERSION)),
                         ("created", repr(time.time()))],
                    )
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
        if row is not None and row[0] != given:
            raise ConfigMismatchError(f"SQLite store {self.path!r}", row[0], given)
        self.config_ = json.loads(given)
        return self

    def get_many(self, cells: Iterable[tuple[str, str]]) -> dict[tuple[str, str], EvaluationRecord]:
        by_model = {}
        for model, example in cells:
            by_model.setdefault(str(model), []).append(str(example))
        out = {}
        with self._locked():
            conn = self._connect()
            for model, examples in by_model.items():
                for s in range(0, len(examples), 900):  # SQLite's bound-parameter limit
                    chunk = examples[s : s + 900]
                    marks = ",".join("?" * len(chunk))
                    for row in conn.execute(
                        "SELECT model, example, score, cost, time FROM scores "
                        f"WHERE model = ? AND example IN ({marks})", [model, *chunk]
                    ):
                        out[(row[0], row[1])] = EvaluationRecord(*row)
        return out

    def put_many(self, records: Iterable[EvaluationRecord]) -> None:
        rows = [(str(r.model), str(r.example), float(r.score),
                 None if r.cost is None else float(r.cost), float(r.time)) for r in records]
        if not rows:
            return
        with self._locked():
            conn = self._connect()
            conn.execute("BEGIN IMMEDIATE")
            try:
                conn.executemany(
                    "INSERT OR IGNORE INTO scores (model, example, score, cost, time) "
                    "VALUES (?, ?, ?, ?, ?)", rows
                )
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise

    def records(self) -> list[EvaluationRecord]:
        with self._locked():
            rows = self._connect().execute(
                "SELECT model, example, score, cost, time FROM scores ORDER BY rowid"
            ).fetchall()
        return [EvaluationRecord(*row) for row in rows]

    def summary(self) -> tuple[int, float]:
        with self._locked():
            n, cost = self._connect().execute(
                "SELECT COUNT(*), TOTAL(cost) FROM scores"
            ).fetchone()
        return int(n), float(cost)

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None


def as_store(store):
    """Return ``store`` as an :class:`EvaluationStore` (a path becomes a :class:`SQLiteStore`).

    Examples
    --------
    >>> from sklearn_riskcontrol.evaluation._store import as_store
    >>> as_store("run.db")
    SQLiteStore('run.db')
    """
    if store is None or isinstance(store, EvaluationStore):
        return store
    if isinstance(store, (str, os.PathLike)):
        return SQLiteStore(store)
    raise TypeError(
        f"`store` must be None, a file path (a SQLite store is created there) or an "
        f"EvaluationStore; got {type(store).__name__}."
    )


class RateLimiter:
    """Space calls at least ``60 / calls_per_minute`` seconds apart (thread safe).

    ``clock`` and ``sleep`` can be replaced (tests use a fake clock).

    Examples
    --------
    >>> from sklearn_riskcontrol.evaluation._store import RateLimiter
    >>> now = [0.0]
    >>> limiter = RateLimiter(120, clock=lambda: now[0], sleep=lambda s: now.__setitem__(0, now[0] + s))
    >>> for _ in range(3):
    ...     limiter.acquire()
    >>> now[0]       # 3 calls at 120 per minute: at t = 0, 0.5 and 1.0 s
    1.0
    """

    def __init__(self, calls_per_minute, *, clock=time.monotonic, sleep=time.sleep):
        self.interval = 60.0 / float(calls_per_minute)
        self.clock = clock
        self.sleep = sleep
        self._next = None
        self._lock = threading.Lock()

    def acquire(self):
        """Wait until the next call may start."""
        with self._lock:
            now = self.clock()
            start = now if self._next is None else max(now, self._next)
            self._next = start + self.interval
        if start > now:
            self.sleep(start - now)
