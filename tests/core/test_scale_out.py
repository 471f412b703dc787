"""Every n_jobs code path gives the sequential result under any joblib backend (issue #6), and
parallel work is only dispatched in tasks large enough to pay (issue #13)."""

import os
import time
import warnings

import joblib
import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.ensemble import RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.tree import DecisionTreeClassifier

from sklearn_riskcontrol.autoeval import (
    RAutoEvalPlus,
    RiskControlledModelSelector,
    rautoeval_select,
)
from sklearn_riskcontrol import RiskControlWarning, _parallel, _wrapping
from sklearn_riskcontrol.selective import (
    SCoREMDR,
    SCoRESDR,
)
from sklearn_riskcontrol._wrapping import chunked_call
from sklearn_riskcontrol.studies import monte_carlo, validity_study

BACKENDS = ["loky", "threading", "multiprocessing"]


@pytest.fixture
def force_parallel(monkeypatch):
    """Dispatch every parallel path even on tiny test inputs (the granularity rule would
    otherwise run them in this process)."""
    monkeypatch.setattr(_parallel, "PILOT_SECONDS", 0.0)
    monkeypatch.setattr(_parallel, "MIN_TASK_SECONDS", 1e-12)
    monkeypatch.setattr(_wrapping, "MIN_CHUNK_ROWS", 1)


@pytest.fixture(scope="module")
def selection_problem():
    X, y = make_classification(n_samples=3000, n_informative=6, random_state=0)
    cands = [DecisionTreeClassifier(max_depth=d, random_state=0).fit(X[:1000], y[:1000])
             for d in (10, 6, 4, 2, 1)]
    judge = RandomForestClassifier(n_estimators=10, random_state=0).fit(X[1000:2000], y[1000:2000])
    y_semi = y[2000:].copy()
    y_semi[300:] = -1
    return cands, judge, X[2000:], y_semi


def _select(problem, procedure, n_jobs, random_state=0):
    cands, judge, X, y = problem
    tester = RAutoEvalPlus(None, autoevaluator=judge, alpha=0.25, delta=0.1,
                           random_state=random_state)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RiskControlWarning)
        return RiskControlledModelSelector(cands, tester=tester, procedure=procedure,
                                           n_jobs=n_jobs).fit(X, y)


def _loss_tables():
    rng = np.random.default_rng(0)
    risks = np.array([0.02, 0.05, 0.08, 0.1, 0.3, 0.05])
    h = rng.binomial(1, risks[:, None], (6, 200)).astype(float)
    g = np.where(rng.random((6, 200)) < 0.9, h, 1 - h)
    hu = rng.binomial(1, risks[:, None], (6, 800))
    u = np.where(rng.random((6, 800)) < 0.9, hu, 1 - hu).astype(float)
    return h, g, u


@pytest.fixture(scope="module")
def deployment_problem():
    X, y = make_classification(n_samples=1600, n_informative=5, random_state=1)
    model = LogisticRegression().fit(X[:400], y[:400])
    return model, X[400:800], y[400:800], X[800:]


def _sample(rng):
    X = rng.normal(size=(240, 2))
    y = (X[:, 0] + rng.normal(scale=0.7, size=240) > 0).astype(int)
    return X[:120], y[:120], X[120:], y[120:]


_MODEL = LogisticRegression().fit(*_sample(np.random.default_rng(0))[:2])


def _all_paths(selection_problem, deployment_problem, n_jobs):
    """Outputs of every parallel path (compared exactly across backends)."""
    out = {}
    for procedure in ("fst", "bonferroni"):
        sel = _select(selection_problem, procedure, n_jobs)
        out[f"selector-{procedure}"] = (sel.pvalues_, sel.certified_, sel.selected_index_)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RiskControlWarning)
            res = rautoeval_select(*_loss_tables(), alpha=0.12, delta=0.1, procedure=procedure,
                                   n_jobs=n_jobs)
        out[f"select-{procedure}"] = (res.pvalues, res.certified, res.selected)
    model, X_cal, y_cal, X_test = deployment_problem
    mdr = SCoREMDR(model, alpha=0.05, n_jobs=n_jobs).fit(X_cal, y_cal)
    out["mdr"] = (mdr.decide(X_test), mdr.evalues(X_test), mdr.decision_function(X_test))
    sdr = SCoRESDR(model, alpha=0.2, random_state=0, n_jobs=n_jobs).fit(X_cal, y_cal)
    out["sdr"] = (sdr.decide(X_test), sdr.decision_function(X_test))
    out["mc"] = monte_carlo(lambda rng: rng.normal(size=3), 12, random_state=0, n_jobs=n_jobs)
    val = validity_study(SCoREMDR(_MODEL, alpha=0.1), _sample, n_repetitions=6, random_state=0,
                         n_jobs=n_jobs)
    out["validity"] = (val.mdr, val.sdr, val.deployment_rate)
    return out


def _assert_identical(a, b):
    assert a.keys() == b.keys()
    for key in a:
        for x, y in zip(a[key], b[key]):
            if isinstance(x, np.ndarray) and x.dtype.kind == "f":
                np.testing.assert_array_equal(x, y, err_msg=key)  # NaN == NaN, bitwise values
            else:
                assert np.array_equal(x, y), key


@pytest.fixture(scope="module")
def sequential(selection_problem, deployment_problem):
    return _all_paths(selection_problem, deployment_problem, n_jobs=1)


@pytest.mark.parametrize("backend", BACKENDS)
def test_every_backend_matches_sequential(backend, sequential, selection_problem,
                                          deployment_problem, force_parallel):
    filters = _filters()
    with joblib.parallel_config(backend=backend):
        out = _all_paths(selection_problem, deployment_problem, n_jobs=2)
    _assert_identical(sequential, out)
    # A thread-unsafe catch_warnings in worker threads used to leave "ignore" filters behind.
    assert _filters() == filters


def _filters():
    # sklearn's Parallel re-installs the filters in workers (regex strings become compiled).
    return [tuple(getattr(x, "pattern", x) for x in f) for f in warnings.filters]


def test_sequential_reference_is_nontrivial(sequential):
    # The comparison above is only meaningful if the reference certifies and deploys something.
    assert sequential["selector-fst"][1].any() and not sequential["selector-fst"][1].all()
    assert sequential["mdr"][0].any() and not sequential["mdr"][0].all()
    assert sequential["sdr"][0].any()


def test_n_jobs_none_follows_parallel_config():
    calls = []

    def func(chunk):
        calls.append(len(chunk))
        return chunk[:, 0] * 2

    X = np.arange(10_000.0).reshape(5000, 2)
    np.testing.assert_array_equal(chunked_call(func, X, None), X[:, 0] * 2)
    assert calls == [5000]
    calls.clear()
    with joblib.parallel_config(backend="threading", n_jobs=2):
        np.testing.assert_array_equal(chunked_call(func, X, None), X[:, 0] * 2)
        assert sorted(calls) == [2500, 2500]
        calls.clear()
        # chunks of fewer than MIN_CHUNK_ROWS rows are not worth a task
        small = X[: 2 * _wrapping.MIN_CHUNK_ROWS - 1]
        np.testing.assert_array_equal(chunked_call(func, small, None), small[:, 0] * 2)
        assert calls == [len(small)]


def test_row_chunks_use_threads_unless_a_backend_is_chosen():
    # Row chunks run in threads by default (no copy of X per worker); a parallel_config backend
    # on this machine still wins, so the same call can go to processes.
    def pid(chunk):
        return np.full(len(chunk), os.getpid())

    X = np.zeros((5000, 1))
    assert set(chunked_call(pid, X, 2)) == {os.getpid()}
    with joblib.parallel_config(backend="loky"):
        assert os.getpid() not in set(chunked_call(pid, X, 2))


def _pid_after(rng, seconds):
    time.sleep(seconds)
    return os.getpid()


def test_granularity_tiny_work_stays_here_large_work_is_dispatched(monkeypatch):
    with joblib.parallel_config(backend="loky"):
        # 20 repetitions of microseconds: dispatching cannot pay, all run in this process
        assert set(monte_carlo(_pid_after, 20, args=(0.0,), n_jobs=2)) == {os.getpid()}
        # an explicit batch_size always dispatches
        assert os.getpid() not in monte_carlo(_pid_after, 4, args=(0.0,), n_jobs=2,
                                              batch_size=1)
    # 30 x 40 ms = 1.2 s: the first repetitions measure the cost here (about PILOT_SECONDS),
    # the rest goes out as at most TASKS_PER_WORKER tasks per worker of >= MIN_TASK_SECONDS.
    sizes = []
    run_batch = _parallel._run_batch

    def recording(func, units, *shared):
        sizes.append(len(units))
        return run_batch(func, units, *shared)

    monkeypatch.setattr(_parallel, "_run_batch", recording)
    with joblib.parallel_config(backend="threading"):
        out = monte_carlo(_pid_after, 30, args=(0.04,), n_jobs=2, random_state=0)
    assert out == [os.getpid()] * 30 and sum(sizes) == 30
    pilot = [s for s in sizes if s == 1]
    tasks = sizes[len(pilot):]
    assert 1 <= len(pilot) <= 2
    assert 2 <= len(tasks) <= 2 * _parallel.TASKS_PER_WORKER
    assert min(tasks) * 0.04 >= _parallel.MIN_TASK_SECONDS - 0.04  # equal tasks, +-1 unit


def test_nested_joblib_calls_run_sequentially_inside_tasks():
    def inner(rng):
        return joblib.effective_n_jobs(-1)

    with joblib.parallel_config(backend="loky"):
        assert monte_carlo(inner, 4, n_jobs=2, batch_size=1) == [1] * 4  # in the workers
        assert monte_carlo(inner, 4, n_jobs=2) == [1] * 4  # sequential fallback here
    assert monte_carlo(inner, 2, n_jobs=1) == [os.cpu_count()] * 2  # n_jobs=1: untouched


def test_selector_random_state_instance_does_not_depend_on_n_jobs(selection_problem):
    # A RandomState template used to be shared (sequential) or copied (workers): different splits.
    a = _select(selection_problem, "bonferroni", 1, np.random.RandomState(3))
    b = _select(selection_problem, "bonferroni", 2, np.random.RandomState(3))
    np.testing.assert_array_equal(a.pvalues_, b.pvalues_)


def _on_dask_worker():
    from distributed import get_worker

    try:
        get_worker()
    except ValueError:
        return False
    return True


def test_dask_cluster_matches_sequential(selection_problem, force_parallel):
    pytest.importorskip("distributed")
    from distributed import Client, LocalCluster

    reference = _select(selection_problem, "fst", 1)
    mc_ref = monte_carlo(lambda rng: rng.normal(size=3), 12, random_state=0)
    val_ref = validity_study(SCoREMDR(_MODEL, alpha=0.1), _sample, n_repetitions=8,
                             random_state=0)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                      dashboard_address=None) as cluster, Client(cluster):
        with joblib.parallel_config(backend="dask"):
            sel = _select(selection_problem, "fst", -1)
            mc = monte_carlo(lambda rng: rng.normal(size=3), 12, random_state=0, n_jobs=-1)
            val = validity_study(SCoREMDR(_MODEL, alpha=0.1), _sample, n_repetitions=8,
                                 random_state=0, n_jobs=-1)
            on_worker = monte_carlo(lambda rng: _on_dask_worker(), 4, n_jobs=-1, batch_size=1)
            # Inside a Dask task the active backend used to be Dask again (2 jobs), sending
            # every repetition's row chunks back to the cluster; now nested calls are sequential.
            nested = monte_carlo(lambda rng: joblib.effective_n_jobs(-1), 4, n_jobs=-1)
            # Row chunks stay in threads of this process (shipping rows would cost more).
            chunks_on_worker = chunked_call(
                lambda c: np.full(len(c), _on_dask_worker()), np.zeros((8, 1)), -1)
    assert all(on_worker)  # the work really ran on the cluster
    assert nested == [1] * 4
    assert not chunks_on_worker.any() and len(chunks_on_worker) == 8
    np.testing.assert_array_equal(sel.pvalues_, reference.pvalues_)
    assert sel.selected_index_ == reference.selected_index_
    for a, b in zip(mc, mc_ref):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(val.mdr, val_ref.mdr)
    np.testing.assert_array_equal(val.deployment_rate, val_ref.deployment_rate)


def test_ray_matches_sequential(selection_problem, force_parallel):
    # doc/scale_out.rst's Ray recipe, on a local Ray instance (skipped when ray is absent).
    ray = pytest.importorskip("ray")
    from ray.util.joblib import register_ray

    reference = _select(selection_problem, "bonferroni", 1)
    val_ref = validity_study(SCoREMDR(_MODEL, alpha=0.1), _sample, n_repetitions=8,
                             random_state=0)
    # Ray pickles module-level functions by reference: the workers must be able to import this
    # test module (for users: their own modules, via runtime_env, see the docs)
    here = os.path.dirname(os.path.abspath(__file__))
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False,
             runtime_env={"env_vars": {"PYTHONPATH": here}})
    try:
        register_ray()
        with joblib.parallel_config(backend="ray"):
            sel = _select(selection_problem, "bonferroni", -1)
            val = validity_study(SCoREMDR(_MODEL, alpha=0.1), _sample, n_repetitions=8,
                                 random_state=0, n_jobs=-1)
            pids = monte_carlo(lambda rng: os.getpid(), 4, n_jobs=-1, batch_size=1)
    finally:
        ray.shutdown()
    assert os.getpid() not in pids  # the work really ran in Ray workers
    np.testing.assert_array_equal(sel.pvalues_, reference.pvalues_)
    assert sel.selected_index_ == reference.selected_index_
    np.testing.assert_array_equal(val.mdr, val_ref.mdr)
    np.testing.assert_array_equal(val.deployment_rate, val_ref.deployment_rate)
