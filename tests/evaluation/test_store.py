"""Durable evaluation store, retries, timeouts, concurrency, rate limit and cost budget.

(The tests that SIGKILL real processes are in evaluation/test_store_faults.py.)
"""

import pickle
import re
import sqlite3
import threading
import time
import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import make_classification
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.tree import DecisionTreeClassifier

from sklearn_riskcontrol.autoeval import LabelingSession
from sklearn_riskcontrol import RiskControlWarning
from sklearn_riskcontrol.bandits import (
    PULSE,
    UCBE,
    BestModelSelector,
)
from sklearn_riskcontrol.evaluation import (
    CallableOracle,
    CostBudgetReached,
    EvaluationError,
    EvaluationRecord,
    EvaluationStore,
    MatrixOracle,
    SQLiteStore,
)
from sklearn_riskcontrol.evaluation._store import (
    ConfigMismatchError,
    RateLimiter,
    as_store,
)


def _matrix(m=6, n=80, seed=0):
    rng = np.random.default_rng(seed)
    p = np.linspace(0.3, 0.7, m)
    return (rng.uniform(size=(m, n)) < p[:, None]).astype(float)


def _parity(i, J):
    return (J % 2).astype(float)


def _summary(est):
    return (int(est.best_index_), est.means_.tolist(), est.n_evaluations_per_model_.tolist(),
            {k: v.tolist() for k, v in est.history_.items()})


class Backend:
    """Scores from a matrix; counts every cell bought; optional failures and sleeps."""

    def __init__(self, S, fail_rate=0.0, seed=0, sleep=0.0, fail_calls=(), cost=None):
        self.S, self.fail_rate, self.sleep, self.cost = S, fail_rate, sleep, cost
        self.rng = np.random.default_rng(seed)
        self.bought = np.zeros(S.shape, dtype=int)
        self.n_calls = 0
        self.fail_calls = set(fail_calls)
        self.lock = threading.Lock()
        self.active = self.max_active = 0

    def __call__(self, i, J):
        with self.lock:
            self.n_calls += 1
            k = self.n_calls
            fail = k in self.fail_calls or self.rng.random() < self.fail_rate
            self.active += 1
            self.max_active = max(self.max_active, self.active)
        try:
            if self.sleep:
                time.sleep(self.sleep * (1 + (i + J[0]) % 3))  # calls complete out of order
            if fail:
                raise ConnectionError(f"503 on call {k}")
            with self.lock:
                self.bought[i, J] += 1
            return self.S[i, J] if self.cost is None else (self.S[i, J], self.cost * len(J))
        finally:
            with self.lock:
                self.active -= 1


# ----------------------------------------------------------------------------------- the store
def test_sqlite_store_round_trip_and_first_write_wins(tmp_path):
    path = tmp_path / "run.db"
    with SQLiteStore(path).open({"prompt": "v1", "n": 3}) as store:
        assert store.get_many([("a", "1")]) == {}
        store.put_many([EvaluationRecord("a", "1", 0.25, 0.5, 10.0),
                        EvaluationRecord("a", "2", 1.0, None, 11.0)])
        store.put_many([EvaluationRecord("a", "1", 0.75, 9.0, 12.0)])  # already stored: ignored
        store.put_many([])
    # a new connection (as in a new process); key order of the config does not matter
    store = SQLiteStore(str(path)).open({"n": 3, "prompt": "v1"})
    got = store.get_many([("a", "1"), ("a", "2"), ("b", "1")])
    assert got == {("a", "1"): EvaluationRecord("a", "1", 0.25, 0.5, 10.0),
                   ("a", "2"): EvaluationRecord("a", "2", 1.0, None, 11.0)}
    assert [r.example for r in store.records()] == ["1", "2"]
    assert store.summary() == (2, 0.5)
    assert store.config_ == {"n": 3, "prompt": "v1"}
    # picklable (clone deep-copies parameters): the copy reconnects lazily
    copy = pickle.loads(pickle.dumps(store))
    assert copy.summary() == (2, 0.5)
    store.close()
    copy.close()
    assert isinstance(as_store(path), SQLiteStore) and as_store(store) is store
    with pytest.raises(TypeError, match="store"):
        as_store(3)


def test_sqlite_store_refuses_another_run_naming_both_configs(tmp_path):
    path = tmp_path / "run.db"
    SQLiteStore(path).open({"prompt": "v1"}).close()
    with pytest.raises(ValueError) as info:
        SQLiteStore(path).open({"prompt": "v2"})
    msg = str(info.value)
    # what differs first, with both values; the full configurations after
    first, full = msg.split("\n")
    assert "run.db" in first and "created with prompt='v1'; this run has prompt='v2'" in first
    assert '{"prompt":"v1"}' in full and '{"prompt":"v2"}' in full
    assert isinstance(info.value, ConfigMismatchError) and info.value.keys == ["prompt"]
    with pytest.raises(TypeError, match="JSON-serializable"):
        SQLiteStore(tmp_path / "other.db").open({"f": object()})
    # the oracles put their own configuration in it: another matrix size is refused
    S = _matrix()
    CallableOracle(Backend(S), *S.shape, store=tmp_path / "c.db", run_config={"judge": "x"})
    with pytest.raises(ValueError, match=r"created with n_examples=80; this run has n_examples=81"):
        CallableOracle(Backend(S), 6, 81, store=tmp_path / "c.db", run_config={"judge": "x"})
    with pytest.raises(ValueError, match=r"created with run_config=\{'judge': 'x'\}; this run has "
                                         r"run_config=\{'judge': 'y'\}"):
        CallableOracle(Backend(S), *S.shape, store=tmp_path / "c.db", run_config={"judge": "y"})
    # keys on one side only, and long values (shortened; in full on the second line)
    SQLiteStore(tmp_path / "d.db").open({"ids": list(range(40)), "a": 1}).close()
    with pytest.raises(ValueError, match=r"created with no b, ids=<40 entries>; this run has b=2, "
                                         r"ids=<41 entries>\."):
        SQLiteStore(tmp_path / "d.db").open({"ids": list(range(41)), "a": 1, "b": 2})


def _not_a_store(tmp_path, kind):
    if kind == "csv":
        path = tmp_path / "good.csv"
        path.write_text("model,q1,q2\na,1,0\nb,0,1\n")
    else:  # another program's SQLite database
        path = tmp_path / "other.db"
        con = sqlite3.connect(path)
        con.execute("CREATE TABLE runs (x)")
        con.commit()
        con.close()
    return path


@pytest.mark.parametrize("kind, problem", [
    ("csv", "is not a SQLite database"),
    ("sqlite", "is a SQLite database but not an evaluation store"),
])
def test_a_file_that_is_not_a_store_is_refused_and_left_unchanged(tmp_path, kind, problem):
    path = _not_a_store(tmp_path, kind)
    before = path.read_bytes()
    for open_it in (lambda: SQLiteStore(path).open({"prompt": "v1"}),  # every caller
                    lambda: MatrixOracle(_matrix(), store=path),
                    lambda: LabelingSession(np.zeros(20), alpha=0.2, delta=0.1, store=path)):
        with pytest.raises(ValueError, match=f"SQLite store '{re.escape(str(path))}' {problem}; it "
                                             "was left unchanged"):
            open_it()
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name]  # no -wal / -shm either


def test_sqlite_errors_are_value_errors_naming_the_file(tmp_path):
    for path, reason in [(tmp_path, "unable to open database file"),
                         (tmp_path / "no" / "run.db", "unable to open database file")]:
        with pytest.raises(ValueError, match=f"SQLite store '{re.escape(str(path))}': {reason}"):
            SQLiteStore(path).open({})
    corrupt = tmp_path / "corrupt.db"
    corrupt.write_bytes(b"SQLite format 3\x00" + bytes(range(256)) * 8)
    with pytest.raises(ValueError, match=r"corrupt\.db': file is not a database \(DatabaseError\)"):
        SQLiteStore(corrupt).open({})
    empty = tmp_path / "empty.db"  # SQLite takes an empty file for a new database
    empty.touch()
    SQLiteStore(empty).open({"prompt": "v1"}).close()
    assert SQLiteStore(empty).open({"prompt": "v1"}).summary() == (0, 0.0)


def test_sqlite_store_concurrent_writers_from_threads(tmp_path):
    path = tmp_path / "run.db"
    SQLiteStore(path).open({}).close()
    shared = SQLiteStore(path).open({})
    errors = []

    def writer(t):
        try:
            own = shared if t % 2 else SQLiteStore(path).open({})  # shared and own connections
            for k in range(20):
                recs = [EvaluationRecord(f"m{t}", f"e{k}-{u}", (t + k) % 2, 0.1, 0.0)
                        for u in range(5)]
                recs.append(EvaluationRecord("common", f"e{k}", t / 10, 0.1, 0.0))  # races
                own.put_many(recs)
                assert set(own.get_many([(r.model, r.example) for r in recs[:5]])) == {
                    (r.model, r.example) for r in recs[:5]}
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(t,)) for t in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors
    recs = SQLiteStore(path).open({}).records()
    assert len(recs) == 8 * 20 * 5 + 20  # one record per cell, whoever won the race
    assert len({(r.model, r.example) for r in recs}) == len(recs)


def test_custom_store_implements_the_interface():
    class DictStore(EvaluationStore):
        def __init__(self):
            self.rows, self.config = {}, None

        def open(self, config):
            self.config = config
            return self

        def get_many(self, cells):
            return {c: self.rows[c] for c in cells if c in self.rows}

        def put_many(self, records):
            for r in records:
                self.rows.setdefault((r.model, r.example), r)

        def records(self):
            return list(self.rows.values())

    S = _matrix()
    store, backend = DictStore(), Backend(S)
    oracle = CallableOracle(backend, *S.shape, store=store, model_ids=[f"llm-{i}" for i in range(6)])
    ref = _summary(UCBE(budget=100, batch_size=5, random_state=0).fit(MatrixOracle(S)))
    assert _summary(UCBE(budget=100, batch_size=5, random_state=0).fit(oracle)) == ref
    assert store.config["model_ids"][0] == "llm-0" and store.summary() == (100, 0.0)
    again = CallableOracle(backend, *S.shape, store=store, model_ids=[f"llm-{i}" for i in range(6)])
    assert _summary(UCBE(budget=100, batch_size=5, random_state=0).fit(again)) == ref
    assert again.n_purchased_ == 0 and again.n_reused_ == 100 and backend.bought.max() == 1


# --------------------------------------------------------------- stop, new process, same run
@pytest.mark.parametrize("make", [
    lambda: UCBE(budget=150, batch_size=5, random_state=0),
    lambda: PULSE(budget=200, batch_size=8, rank=2, random_state=0),
])
def test_stopped_run_continued_by_a_fresh_oracle_equals_uninterrupted(tmp_path, make):
    S = _matrix()
    ref = _summary(make().fit(MatrixOracle(S)))
    path = tmp_path / "run.db"
    backend = Backend(S, fail_calls={7, 19, 30})
    for attempt in range(4):  # each failure stops the run; a "new process" continues it
        oracle = CallableOracle(backend, *S.shape, store=path, max_concurrency=2, chunk_size=3)
        try:
            est = make().fit(oracle)
        except ConnectionError:
            continue
        break
    assert attempt == 3 and est.completed_
    assert _summary(est) == ref
    assert backend.bought.max() == 1 and backend.bought.sum() == est.n_evaluations_
    assert oracle.n_reused_ > 0


def test_random_state_none_with_a_store_warns(tmp_path):
    S = _matrix()
    oracle = CallableOracle(Backend(S), *S.shape, store=tmp_path / "run.db")
    with pytest.warns(RiskControlWarning, match="integer random_state"):
        UCBE(budget=30, batch_size=5).fit(oracle)


# ----------------------------------------------------------------------------------- retries
def test_flaky_backend_completes_with_retries_and_exponential_backoff():
    S = _matrix()
    backend = Backend(S, fail_rate=0.1, seed=1)
    oracle = CallableOracle(backend, *S.shape, max_retries=6, retry_backoff=0.5, chunk_size=1)
    waits = []
    oracle._sleep = waits.append  # no real sleeping
    est = UCBE(budget=200, batch_size=5, random_state=0).fit(oracle)
    assert _summary(est) == _summary(UCBE(budget=200, batch_size=5, random_state=0).fit(S))
    assert oracle.n_retries_ == len(waits) > 5 and backend.bought.max() == 1
    assert all(0.25 <= w <= 60 for w in waits)
    # the backoff doubles, with jitter in [0.5, 1] from a generator seeded by the cell
    J = np.array([3])
    seq = [oracle._backoff(1, J, k) for k in range(4)]
    assert seq == [oracle._backoff(1, J, k) for k in range(4)]
    for k, w in enumerate(seq):
        assert 0.5 * 2**k * 0.5 <= w <= 0.5 * 2**k


def test_retry_budget_exhausted_names_the_cell_and_keeps_what_was_bought(tmp_path):
    S = _matrix()
    backend = Backend(S, fail_calls=range(4, 100))
    oracle = CallableOracle(backend, *S.shape, max_retries=3, retry_backoff=0, chunk_size=1,
                            store=tmp_path / "run.db")
    est = UCBE(budget=30, batch_size=5, random_state=0)
    with pytest.raises(EvaluationError, match=r"the cell \(model \d+, example \d+\) failed on all "
                                              r"4 attempts \(max_retries=3\).*ConnectionError: 503"):
        est.fit(oracle)
    assert oracle.n_purchased_ == 3 and oracle.store_.summary()[0] == 3 and not est.completed_
    # without retries the back-end's own exception propagates, with the cells in a note
    oracle = CallableOracle(Backend(S, fail_calls={1}), *S.shape)
    with pytest.raises(ConnectionError) as info:
        oracle.query(2, [5, 6])
    assert "the 2 cells of model 2 on examples 5, 6" in "".join(info.value.__notes__)


def test_timeout_counts_as_a_failure_and_is_retried():
    S = _matrix()
    calls = []

    def slow_first(i, J):
        calls.append(i)
        if len(calls) == 1:
            time.sleep(0.5)  # hangs: abandoned after the timeout
        return S[i, J]

    oracle = CallableOracle(slow_first, *S.shape, timeout=0.05, max_retries=1, retry_backoff=0)
    t0 = time.perf_counter()
    np.testing.assert_array_equal(oracle.query(0, [1, 2]), S[0, [1, 2]])
    assert time.perf_counter() - t0 < 0.4 and oracle.n_retries_ == 1
    oracle = CallableOracle(lambda i, J: time.sleep(0.3), *S.shape, timeout=0.02, max_retries=1,
                            retry_backoff=0)
    with pytest.raises(EvaluationError, match="TimeoutError.*timeout=0.02"):
        oracle.query(0, [1])


# ------------------------------------------------------------------------------- concurrency
def test_results_do_not_depend_on_concurrency_or_completion_order(tmp_path):
    S = _matrix(m=5, n=60)
    make = lambda: PULSE(budget=120, batch_size=8, rank=2, random_state=1)  # noqa: E731
    ref = _summary(make().fit(MatrixOracle(S)))
    backend = Backend(S, sleep=0.001)
    oracle = CallableOracle(backend, *S.shape, max_concurrency=4, chunk_size=1,
                            store=tmp_path / "run.db")
    assert _summary(make().fit(oracle)) == ref
    assert 1 < backend.max_active <= 4 and backend.bought.max() == 1
    assert oracle.n_calls_ == oracle.n_purchased_ == 120


def test_rate_limiter_with_a_fake_clock():
    now = [100.0]

    def sleep(s):
        now[0] += s

    lim = RateLimiter(30, clock=lambda: now[0], sleep=sleep)  # one call per 2 s
    starts = []
    for _ in range(4):
        lim.acquire()
        starts.append(now[0])
    assert starts == [100.0, 102.0, 104.0, 106.0]
    now[0] += 10  # idle time is not banked into a burst
    lim.acquire()
    lim.acquire()
    assert now[0] == 118.0
    # through an oracle: every call, retries included, goes through the limiter
    S = _matrix()
    stamps = []

    def backend(i, J):
        stamps.append(now[0])
        if len(stamps) == 2:
            raise ConnectionError("429")
        return S[i, J]

    oracle = CallableOracle(backend, *S.shape, rate_limit=60, chunk_size=2, max_retries=1,
                            retry_backoff=0)
    oracle._clock, oracle._sleep = (lambda: now[0]), sleep
    oracle.query(0, np.arange(6))
    assert np.allclose(np.diff(stamps), 1.0) and len(stamps) == 4


# ------------------------------------------------------------------------------- cost budget
def test_cost_budget_stops_cleanly_then_resumes(tmp_path):
    S = _matrix()
    make = lambda: UCBE(budget=150, batch_size=5, random_state=0)  # noqa: E731
    ref = _summary(make().fit(S))
    path = tmp_path / "run.db"
    backend = Backend(S, cost=0.01)  # returns (scores, cost of the call)
    oracle = CallableOracle(backend, *S.shape, store=path, cost="returned", max_cost=0.5,
                            chunk_size=2, max_concurrency=2)
    est = make()
    with pytest.warns(RiskControlWarning, match=r"stopped after \d+ of 150 evaluations.*max_cost"):
        est.fit(oracle)
    assert not est.completed_ and 0.5 <= oracle.cost_ <= 0.5 + 2 * 0.02 + 1e-9
    assert oracle.store_.summary() == (oracle.n_purchased_, pytest.approx(oracle.cost_))
    i, j = np.argwhere(~oracle.revealed_)[0]
    with pytest.raises(CostBudgetReached, match="reached max_cost=0.5"):
        oracle.query(i, [j])  # used directly, the oracle raises
    # a new process with a larger budget: the stored cost counts, nothing is bought twice
    oracle2 = CallableOracle(backend, *S.shape, store=path, cost="returned", max_cost=1.0)
    with pytest.warns(RiskControlWarning, match="max_cost"):
        est2 = make().fit(oracle2)
    assert oracle2.cost_ == pytest.approx(1.0, abs=0.02) and not est2.completed_
    # the same object: raise the budget and resume()
    oracle2.max_cost = None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est2.resume()
    assert est2.completed_ and _summary(est2) == ref
    assert backend.bought.max() == 1 and backend.bought.sum() == 150
    assert oracle2.cost_ == pytest.approx(1.5)


def test_cost_and_parameter_validation(tmp_path):
    S = _matrix()
    f = Backend(S)
    with pytest.raises(ValueError, match="`max_cost` needs costs"):
        CallableOracle(f, *S.shape, max_cost=3)
    for kw, match in [({"cost": -1}, "`cost`"), ({"cost": "yes"}, "`cost`"),
                      ({"max_concurrency": 0}, "max_concurrency"), ({"chunk_size": 0}, "chunk_size"),
                      ({"rate_limit": 0}, "rate_limit"), ({"max_retries": -1}, "max_retries"),
                      ({"retry_backoff": -1}, "retry_backoff"), ({"timeout": 0}, "timeout"),
                      ({"model_ids": ["a"] * 6}, "unique"), ({"example_ids": ["a"]}, "one id")]:
        with pytest.raises((ValueError, TypeError), match=match):
            CallableOracle(f, *S.shape, **kw)
    with pytest.raises(TypeError, match="run_config"):
        CallableOracle(f, *S.shape, run_config="v1")
    oracle = CallableOracle(f, *S.shape, cost="returned")
    with pytest.raises(TypeError, match=r"must return \(scores, cost\)"):
        oracle.query(0, [1])
    oracle = CallableOracle(lambda i, J: (S[i, J], [1.0]), *S.shape, cost="returned")
    with pytest.raises(ValueError, match="one per example"):
        oracle.query(0, [1, 2])
    assert oracle.n_purchased_ == 0
    oracle = CallableOracle(lambda i, J: (S[i, J], [1.0, 3.0]), *S.shape, cost="returned",
                            store=tmp_path / "c.db")
    oracle.query(0, [1, 2])
    assert oracle.cost_ == 4.0 and {r.cost for r in oracle.store_.records()} == {1.0, 3.0}
    # picklable with its store and rate limiter (they reconnect / restart)
    oracle = CallableOracle(_parity, *S.shape, store=tmp_path / "p.db", rate_limit=6000)
    oracle.query(0, [1, 2])
    copy = pickle.loads(pickle.dumps(oracle))
    np.testing.assert_array_equal(copy.query(0, [2, 3]), [0.0, 1.0])
    assert copy.n_purchased_ == 3 and copy.store_.summary()[0] == 3


# ------------------------------------------------------------------- selector, CLI, progress
def test_best_model_selector_with_a_store(tmp_path):
    X, y = make_classification(400, random_state=0)
    X_fit, X_pool, y_fit, y_pool = train_test_split(X, y, test_size=0.5, random_state=0)
    models = [DecisionTreeClassifier(max_depth=d, random_state=0).fit(X_fit, y_fit)
              for d in (1, 3)] + [LogisticRegression().fit(X_fit, y_fit)]
    path = tmp_path / "sel.db"
    sel = BestModelSelector(models, random_state=0, store=str(path)).fit(X_pool, y_pool)
    ref = BestModelSelector(models, random_state=0).fit(X_pool, y_pool)
    assert sel.best_index_ == ref.best_index_ and np.array_equal(sel.means_, ref.means_)
    # (clone would unfit the candidates, so the pool would be a split: a new pool is refused)
    again = BestModelSelector(models, random_state=0, store=SQLiteStore(path)).fit(X_pool, y_pool)
    assert clone(again).store.path == str(path)
    assert again.oracle_.n_purchased_ == 0 and again.oracle_.n_reused_ == sel.n_evaluations_
    assert np.array_equal(again.means_, sel.means_)
    with pytest.raises(ValueError, match="X_hash"):
        BestModelSelector(models, random_state=0, store=path).fit(X_pool[:100], y_pool[:100])


def test_cli_bandits_store(tmp_path, capsys):
    import pandas as pd

    from sklearn_riskcontrol.cli import main

    S = _matrix(m=4, n=100)
    pd.DataFrame(S, index=[f"m{i}" for i in range(4)]).to_csv(tmp_path / "s.csv")
    argv = ["bandits", "--scores", str(tmp_path / "s.csv"), "--budget", "0.6",
            "--strategy", "ucbe", "--store", str(tmp_path / "run.db")]
    assert main(argv) == 0
    first = capsys.readouterr().out
    assert "0 cells read back, 240 newly revealed, 240 stored in all" in first
    assert main(argv) == 0
    second = capsys.readouterr().out
    assert "240 cells read back, 0 newly revealed" in second
    assert first.splitlines()[0] == second.splitlines()[0]
    S[0, 0] = 1 - S[0, 0]
    pd.DataFrame(S, index=[f"m{i}" for i in range(4)]).to_csv(tmp_path / "s.csv")
    assert main(argv) == 2
    # what differs, in command-line words: no configuration keys, no JSON
    assert capsys.readouterr().err == (
        f"error: --store {tmp_path / 'run.db'} holds the cells of another run: the scores differ "
        f"from those of --scores {tmp_path / 's.csv'}; pass a new --store file, or rerun the "
        "stored run's command to continue it.\n")
    pd.DataFrame(S[:, :90], index=[f"m{i}" for i in range(4)]).to_csv(tmp_path / "s.csv")
    assert main(argv) == 2
    assert ("the number of examples (100 in the store, 90 now), example ids and scores differ"
            in capsys.readouterr().err)


@pytest.mark.parametrize("kind", ["csv", "sqlite"])
def test_cli_store_that_is_not_a_store_is_one_line_rc_2_and_unchanged(tmp_path, capsys, kind):
    from sklearn_riskcontrol.cli import main

    path = _not_a_store(tmp_path, kind)
    before = path.read_bytes()
    assert main(["bandits", "--scores", str(_not_a_store(tmp_path, "csv")), "--budget", "1.0",
                 "--store", str(path)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith(f"error: SQLite store '{path}' is ")
    assert "Traceback" not in err[0]
    assert path.read_bytes() == before


def test_progress_shows_bought_cost_and_the_best_interval(tmp_path, capsys):
    S = _matrix()
    oracle = CallableOracle(Backend(S), *S.shape, cost=0.002, store=tmp_path / "run.db")
    PULSE(budget=200, batch_size=8, rank=2, random_state=0, verbose=1).fit(oracle)
    out = capsys.readouterr().out
    last = out.strip().splitlines()[-1]
    assert "evaluations 200/200" in last and "bought 200" in last and "cost 0.4" in last
    assert "95% interval [" in last
