"""Testers sent back from parallel workers in fewer bytes are restored exactly (issue #13).

``RiskControlledModelSelector`` ships each candidate's fitted tester in a ``_parcel.Parcel``
(without the candidate, the template's auto-evaluator and repeated index arrays; 0-1 losses as
bytes) and ``RAutoEvalResult`` pickles itself without its mixture weights. Whatever the backend,
the testers a user gets must be the ones a sequential run fits, bit for bit.
"""

import dataclasses
import pickle
import warnings

import joblib
import numpy as np
import pytest
from sklearn.datasets import make_classification, make_regression
from sklearn.ensemble import RandomForestClassifier
from sklearn.linear_model import LinearRegression, Ridge
from sklearn.tree import DecisionTreeClassifier

from sklearn_riskcontrol.autoeval import RAutoEvalPlus, RiskControlledModelSelector, rautoeval_test
from sklearn_riskcontrol import RiskControlWarning, _dask, _parallel, _parcel
from sklearn_riskcontrol._bytes import same_bytes
from sklearn_riskcontrol.risks import make_risk


def _classification(n=2400, n_labeled=300):
    X, y = make_classification(n_samples=4000 + n, n_informative=6, random_state=0)
    cands = [DecisionTreeClassifier(max_depth=d, random_state=0).fit(X[:2000], y[:2000])
             for d in (8, 4, 2)]
    judge = RandomForestClassifier(n_estimators=8, random_state=0).fit(X[2000:4000],
                                                                       y[2000:4000])
    y_semi = y[4000:].copy()
    y_semi[n_labeled:] = -1
    return cands, judge, X[4000:], y_semi


def _fit(tester, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RiskControlWarning)
        return tester.fit(X, y)


def _assert_same_tester(a, b):
    """Same class and attributes, compared structurally: arrays by dtype and bits."""
    assert type(a) is type(b)
    assert vars(a).keys() == vars(b).keys()
    for key, x in vars(a).items():
        _assert_same_value(x, vars(b)[key], key)


def _assert_same_value(x, y, where):
    assert type(x) is type(y), where
    if isinstance(x, np.ndarray):
        if x.dtype.kind == "O":
            assert x.shape == y.shape, where
            for i, (u, v) in enumerate(zip(x.ravel(), y.ravel())):
                _assert_same_value(u, v, f"{where}[{i}]")
        else:
            assert same_bytes(x, y), where
    elif dataclasses.is_dataclass(x):
        for f in dataclasses.fields(x):
            _assert_same_value(getattr(x, f.name), getattr(y, f.name), f"{where}.{f.name}")
    elif isinstance(x, dict):
        assert x.keys() == y.keys(), where
        for key in x:
            _assert_same_value(x[key], y[key], f"{where}[{key!r}]")
    elif isinstance(x, (list, tuple)):
        assert len(x) == len(y), where
        for i, (u, v) in enumerate(zip(x, y)):
            _assert_same_value(u, v, f"{where}[{i}]")
    elif isinstance(x, (bool, int, float, complex, str, bytes, type(None), np.generic)):
        assert x == y or (x != x and y != y), where  # NaN == NaN
    elif hasattr(x, "__getstate__") and not callable(x):  # e.g. estimators, sklearn's trees
        _assert_same_value(x.__getstate__(), y.__getstate__(), f"{where}.__getstate__()")
    else:  # functions, classes: pickled by reference
        assert pickle.dumps(x) == pickle.dumps(y), where


def _round_trip(parcels):
    return pickle.loads(pickle.dumps(parcels))


SETUPS = {
    "fitted judge, 0-1 losses": dict(),
    "unfitted judge (a clone is fitted per test)": dict(judge="unfitted"),
    "R-Eval (no judge)": dict(method="eval"),
    "early stopping, WSR bets": dict(early_stopping=True, betting="wsr"),
    "unshuffled": dict(shuffle=False),
}


@pytest.mark.parametrize("setup", list(SETUPS))
def test_a_parcel_restores_the_fitted_tester_bit_for_bit(setup):
    cands, judge, X, y = _classification()
    options = dict(SETUPS[setup])
    if options.pop("judge", None) == "unfitted":
        judge = RandomForestClassifier(n_estimators=8, random_state=0)
    fitted = [_fit(RAutoEvalPlus(c, autoevaluator=judge, alpha=0.3, delta=0.1, random_state=0,
                                 **options), X, y) for c in cands]
    sent = {}
    parcels = _round_trip([_parcel.Parcel(f, sent, candidate=c, autoevaluator=judge)
                           for f, c in zip(fitted, cands)])
    for f, c, parcel in zip(fitted, cands, parcels):
        restored = parcel.unpack(candidate=c, autoevaluator=judge)
        _assert_same_tester(f, restored)
        # The caller's own objects are back, as in a sequential fit.
        assert restored.estimator is c and restored.estimator_ is c
        assert restored.autoevaluator is judge
        assert (restored.autoevaluator_ is judge) == (f.autoevaluator_ is judge)
        assert parcel.unpack(candidate=c, autoevaluator=judge) is restored  # unpacked once


def test_continuous_losses_and_regression_round_trip():
    X, y = make_regression(n_samples=1500, n_features=5, noise=5.0, random_state=0)
    y = (y - y.min()) / (y.max() - y.min())  # squared losses in [0, 1]
    model = LinearRegression().fit(X[:500], y[:500])
    judge = Ridge(alpha=10.0).fit(X[500:700], y[500:700])
    y_semi = y[700:].copy()
    y_semi[100:] = np.nan
    fitted = _fit(RAutoEvalPlus(model, autoevaluator=judge, risk=make_risk("squared", scale=0.05),
                                alpha=0.1, delta=0.1, random_state=0), X[700:], y_semi)
    assert not np.isin(fitted.loss_judge_unlabeled_, [0.0, 1.0]).all()  # really continuous
    parcel = _round_trip(_parcel.Parcel(fitted, {}, candidate=model, autoevaluator=judge))
    restored = parcel.unpack(candidate=model, autoevaluator=judge)
    _assert_same_tester(fitted, restored)


def test_a_parcel_sends_far_fewer_bytes_and_restored_testers_share_no_array():
    cands, judge, X, y = _classification(n=20_000, n_labeled=2000)
    fitted = [_fit(RAutoEvalPlus(c, autoevaluator=judge, alpha=0.3, delta=0.1, random_state=0),
                   X, y) for c in cands]
    whole = len(pickle.dumps(fitted))
    sent = {}
    packed = pickle.dumps([_parcel.Parcel(f, sent, candidate=c, autoevaluator=judge)
                           for f, c in zip(fitted, cands)])
    # Measured 0.53 (the results' mixture weights are left out of both): no judge, no
    # candidates, the indices once, 0-1 losses in one byte instead of eight.
    assert len(packed) < 0.6 * whole
    alone = len(pickle.dumps(_parcel.Parcel(fitted[1], {}, candidate=cands[1],
                                            autoevaluator=judge)))
    assert len(packed) < 3 * alone - 2 * fitted[0].unlabeled_indices_.nbytes  # indices once
    restored = [p.unpack(candidate=c, autoevaluator=judge)
                for p, c in zip(pickle.loads(packed), cands)]
    for a in restored:
        for b in restored:
            if a is not b:
                for key, x in vars(a).items():
                    if isinstance(x, np.ndarray):
                        assert not np.shares_memory(x, vars(b)[key]), key


def test_pack_keeps_negative_zero_nan_and_integer_dtypes():
    fitted = RAutoEvalPlus(None)
    fitted.zeros_ = np.array([0.0, -0.0, 0.5])
    fitted.signed_ = np.array([-0.0, 1.0])  # -0.0 is not sent as the byte 0
    fitted.nan_ = np.array([np.nan, 1.0, 0.0])
    fitted.ints_ = np.arange(5, dtype=np.int32)
    fitted.binary_ = np.array([1.0, 0.0, 1.0])
    twin = RAutoEvalPlus(None)
    twin.zeros_ = np.array([0.0, 0.0, 0.5])  # equal by ==, not by bits: sent on its own
    twin.signed_ = np.array([0.0, 1.0])
    twin.nan_, twin.ints_, twin.binary_ = fitted.nan_.copy(), fitted.ints_ + 0, np.ones(3)
    sent = {}
    a, b = _round_trip([_parcel.Parcel(fitted, sent, candidate=None, autoevaluator=None),
                        _parcel.Parcel(twin, sent, candidate=None, autoevaluator=None)])
    _assert_same_tester(fitted, a.unpack(candidate=None, autoevaluator=None))
    _assert_same_tester(twin, b.unpack(candidate=None, autoevaluator=None))


def test_a_result_pickles_without_its_weights_only_when_they_follow_from_the_wealth():
    rng = np.random.default_rng(0)
    h = rng.binomial(1, 0.1, 400).astype(float)
    u = rng.binomial(1, 0.1, 2000).astype(float)
    res = rautoeval_test(h, h, u, alpha=0.2, delta=0.1)
    _assert_same_value(res, pickle.loads(pickle.dumps(res)), "result")
    # Weights that are not the mixture's (a hand-made result) are pickled as they are.
    odd = dataclasses.replace(res, rho_weights=res.rho_weights[::-1].copy())
    _assert_same_value(odd, pickle.loads(pickle.dumps(odd)), "hand-made result")
    assert len(pickle.dumps(res)) < len(pickle.dumps(odd)) - res.rho_weights.nbytes + 500


@pytest.fixture
def force_parallel(monkeypatch):
    monkeypatch.setattr(_parallel, "PILOT_SECONDS", 0.0)
    monkeypatch.setattr(_parallel, "MIN_TASK_SECONDS", 1e-12)


def _select(problem, n_jobs, procedure="bonferroni"):
    cands, judge, X, y = problem
    tester = RAutoEvalPlus(None, autoevaluator=judge, alpha=0.3, delta=0.1, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RiskControlWarning)
        return RiskControlledModelSelector(cands, tester=tester, procedure=procedure,
                                           n_jobs=n_jobs).fit(X, y)


def _assert_same_selection(seq, par, problem):
    cands, judge = problem[:2]
    np.testing.assert_array_equal(seq.pvalues_, par.pvalues_)
    for k, (a, b) in enumerate(zip(seq.testers_, par.testers_)):
        if a is None:
            assert b is None
            continue
        _assert_same_tester(a, b)
        assert b.estimator_ is cands[k] and b.autoevaluator_ is judge


@pytest.mark.parametrize("backend", ["loky", "multiprocessing"])
def test_selector_testers_from_worker_processes_equal_the_sequential_ones(backend,
                                                                          force_parallel):
    problem = _classification()
    seq = _select(problem, 1)
    with joblib.parallel_config(backend=backend):
        par = _select(problem, 2)
    _assert_same_selection(seq, par, problem)


def test_dask_worker_processes_get_shared_inputs_once_and_return_the_same_testers(
        force_parallel):
    pytest.importorskip("distributed")
    from distributed import Client, Future, LocalCluster

    problem = _classification()
    seq = _select(problem, 1)
    shared = (0.5, "text", None, np.arange(3), {"k": 1})
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        with joblib.parallel_config(backend="dask"):
            par = _select(problem, -1)
            assert _dask.dask_client() is client
            sent = _dask.sent_once(client, shared)
        assert sent[:3] == shared[:3]  # scalars stay in the task
        assert all(isinstance(f, Future) for f in sent[3:])
        np.testing.assert_array_equal(sent[3].result(), shared[3])
        assert sent[4].result() == shared[4]
    _assert_same_selection(seq, par, problem)
    assert _dask.dask_client() is None  # other backends: nothing sent
    assert _dask.sent_once(None, shared) is shared


def test_direct_results_only_for_a_cluster_of_this_process_and_an_unset_choice():
    pytest.importorskip("distributed")
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                      dashboard_address=None) as cluster:
        with Client(cluster) as client:
            assert client.direct_to_workers is None
            with _dask.direct_results(client):
                assert client.direct_to_workers is True
                with _dask.direct_results(client):  # e.g. a second call in another thread
                    assert client.direct_to_workers is True
                assert client.direct_to_workers is True  # the outer call still runs
            assert client.direct_to_workers is None  # put back
            client.direct_to_workers = False  # the user's own choice is kept
            with _dask.direct_results(client):
                assert client.direct_to_workers is False
        with Client(cluster.scheduler_address) as remote:  # connected by address: a cluster
            with _dask.direct_results(remote):  # elsewhere may not reach its workers
                assert remote.direct_to_workers is None
    with _dask.direct_results(None):
        pass
