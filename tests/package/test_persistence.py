"""Persistence: every public estimator survives pickle / joblib, and runs resume after it.

* Round trip: each fitted public estimator (the registry below must cover every estimator class
  exported by the method packages) is pickled and dumped
  with joblib; the copy has deep-equal attributes (arrays, RNG states, oracles, run state) and
  gives identical outputs (``decide``, ``evalues``, ``predict_set``, intervals, ...). A
  ``RandomState`` held by an estimator is copied in its current state, so random draws made
  after loading (SCoRE-SDR's boosting) are the ones the original would make.
* Pickle in the middle: a bandit run whose scoring callable raises is pickled at *every*
  interruption and resumed from the copy; it ends identical to an uninterrupted run with the
  same ``random_state``, and every (model, example) cell is bought exactly once. A finished
  ``warm_start`` run, pickled and continued with a larger budget, equals the continued original.
  An online stream fed by ``partial_fit`` and persisted between every batch ends in the same
  state as the uninterrupted stream, for every strategy.
"""

import inspect
import io
import pickle
from collections import deque

import joblib
import numpy as np
import pandas as pd
import pytest
from sklearn.base import BaseEstimator
from sklearn.datasets import make_classification
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.tree import DecisionTreeClassifier

from sklearn_riskcontrol import autoeval, bandits, online, selective
from sklearn_riskcontrol.autoeval import ModelComparison, RAutoEvalPlus, RiskControlledModelSelector
from sklearn_riskcontrol.bandits import (
    PULSE,
    UCBE,
    UCBELRF,
    BestModelSelector,
    LowRankScoreCompleter,
    NaivePooling,
    UniformSampling,
    FilledSubset,
    UniformLRF,
    make_score_matrix,
)
from sklearn_riskcontrol.evaluation import CallableOracle
from sklearn_riskcontrol.online import STRATEGIES, SemiBanditPredictionSet
from sklearn_riskcontrol.selective import (
    ConcentrationMDR,
    ConcentrationSDR,
    RewardAwareScore,
    SCoREMDR,
    SCoRESDR,
)


# --------------------------------------------------------------------------- deep equality
def assert_same(a, b, path="obj", _seen=None):
    """Recursive equality of two object graphs (NaN == NaN, dtypes and types must agree)."""
    seen = set() if _seen is None else _seen
    key = (id(a), id(b))
    if key in seen:
        return
    seen.add(key)
    assert type(a) is type(b), f"{path}: {type(a).__name__} != {type(b).__name__}"
    if isinstance(a, np.ndarray):
        assert a.dtype == b.dtype and a.shape == b.shape, path
        if a.dtype == object:
            for k, (x, y) in enumerate(zip(a.ravel(), b.ravel())):
                assert_same(x, y, f"{path}[{k}]", seen)
        else:
            np.testing.assert_array_equal(a, b, err_msg=path)
    elif isinstance(a, (pd.DataFrame, pd.Series)):
        assert a.equals(b), path
    elif isinstance(a, np.random.RandomState):
        assert_same(a.get_state(legacy=False), b.get_state(legacy=False), path, seen)
    elif isinstance(a, np.random.Generator):
        assert_same(a.bit_generator.state, b.bit_generator.state, path, seen)
    elif isinstance(a, dict):
        assert list(a) == list(b), f"{path}: keys {list(a)} != {list(b)}"
        for k in a:
            assert_same(a[k], b[k], f"{path}[{k!r}]", seen)
    elif isinstance(a, (list, tuple, deque)):
        assert len(a) == len(b), path
        for k, (x, y) in enumerate(zip(a, b)):
            assert_same(x, y, f"{path}[{k}]", seen)
    elif isinstance(a, float) and np.isnan(a):
        assert np.isnan(b), path
    elif isinstance(a, (type, type(len))) or inspect.isfunction(a) or inspect.ismodule(a):
        assert a is b, path  # module-level callables unpickle to the same object
    elif hasattr(a, "__dict__") and not isinstance(a, (np.generic, str, bytes)):
        assert_same(vars(a), vars(b), f"{path}.", seen)
    elif hasattr(type(a), "__slots__") and not isinstance(a, (np.generic, str, bytes, int)):
        for s in type(a).__slots__:
            assert_same(getattr(a, s, None), getattr(b, s, None), f"{path}.{s}", seen)
    elif isinstance(a, (int, float, complex, str, bytes, np.generic, type(None))):
        assert a == b, f"{path}: {a!r} != {b!r}"
    else:  # extension types (e.g. sklearn's Cython Tree): compare their pickled state
        assert_same(a.__reduce_ex__(4)[1:], b.__reduce_ex__(4)[1:], f"{path}<state>", seen)


def pickle_copy(obj):
    return pickle.loads(pickle.dumps(obj))


def joblib_copy(obj, compress=0):
    buf = io.BytesIO()
    joblib.dump(obj, buf, compress=compress)
    buf.seek(0)
    return joblib.load(buf)


def assert_outputs_equal(a, b):
    assert type(a) is type(b)
    if isinstance(a, np.ndarray):
        np.testing.assert_array_equal(a, b)
    elif isinstance(a, tuple) and hasattr(a, "_fields"):
        for x, y in zip(a, b):
            assert_outputs_equal(x, y)
    elif hasattr(a, "__dataclass_fields__"):
        for f in a.__dataclass_fields__:
            assert_outputs_equal(getattr(a, f), getattr(b, f))
    else:
        assert_same(a, b, "output")


# --------------------------------------------------------------------------- fitted objects
class CountingScorer:
    """Module-level (so picklable) scoring callable: counts every cell it scores and raises at
    the given attempt numbers, like an LLM endpoint that times out."""

    def __init__(self, S, fail_at=()):
        self.S = S
        self.fail_at = set(fail_at)
        self.attempts = 0
        self.calls = np.zeros(S.shape, dtype=int)

    def __call__(self, i, J):
        self.attempts += 1
        if self.attempts in self.fail_at:
            raise ConnectionError(f"timeout at attempt {self.attempts}")
        self.calls[i, J] += 1
        return self.S[i, J]


def judge(X):
    """A module-level auto-evaluator callable (picklable)."""
    return (np.asarray(X)[:, 0] > 0).astype(int)


@pytest.fixture(scope="module")
def clf_data():
    X, y = make_classification(900, n_features=6, n_informative=4, n_classes=3,
                               random_state=0)
    model = LogisticRegression(max_iter=500).fit(X[:300], y[:300])
    return X, y, model


@pytest.fixture(scope="module")
def bandit_data():
    return make_score_matrix(12, 200, n_side_models=20, gap=0.05, random_state=0)


def _digits_like(clf_data):
    X, y, model = clf_data
    return model, X[300:600], y[300:600], X[600:]


def _fit_score(clf_data, kind):
    model, Xc, yc, Xt = _digits_like(clf_data)
    if kind == "SCoREMDR":
        est = SCoREMDR(model, alpha=0.2).fit(Xc, yc)
    elif kind == "SCoREMDR-weighted":
        w = np.exp(0.3 * Xc[:, 0])
        est = SCoREMDR(model, alpha=0.2).fit(Xc, yc, shift_weights=w)
        wt = np.exp(0.3 * Xt[:, 0])
        return est, {
            "decide": lambda e: e.decide(Xt, shift_weights=wt),
            "evalues": lambda e: e.evalues(Xt, shift_weights=wt),
        }
    elif kind == "SCoRESDR":
        est = SCoRESDR(model, alpha=0.2, random_state=np.random.RandomState(3)).fit(Xc, yc)
    elif kind == "ConcentrationMDR":
        est = ConcentrationMDR(model, alpha=0.3, random_state=0).fit(Xc, yc)
    else:
        est = ConcentrationSDR(model, alpha=0.45, random_state=0).fit(Xc, yc)
    outs = {
        "decide": lambda e: e.decide(Xt),
        "decision_function": lambda e: e.decision_function(Xt),
        "predict": lambda e: e.predict(Xt),
        "predict_proba": lambda e: e.predict_proba(Xt),
    }
    if kind.startswith("SCoRE"):
        outs["evalues"] = lambda e: e.evalues(Xt)
        # a second draw: the boosting RNG state travels with the estimator
        outs["decide-again"] = lambda e: e.decide(Xt)
    return est, outs


def _fit_reward_aware(clf_data):
    X, y, model = clf_data
    risk = (model.predict(X[:300]) != y[:300]).astype(float)
    risk_model = LinearRegression().fit(X[:300], risk)
    reward_model = LinearRegression().fit(X[:300], 1.0 + 0.1 * X[:300, 1] ** 2)
    scorer = RewardAwareScore(risk_model, reward_model, target="sdr", alpha=0.2)
    est = SCoREMDR(model, alpha=0.2, risk_score=scorer).fit(X[300:600], y[300:600])
    return scorer, {"call": lambda s: s(X[600:]), "in-SCoRE": lambda s: (
        SCoREMDR(model, alpha=0.2, risk_score=s).fit(X[300:600], y[300:600]).decide(X[600:])
    ), "fitted-SCoRE": lambda s: est.decide(X[600:])}


def _fit_online(clf_data, kind):
    X, y, model = clf_data
    if kind == "precomputed":
        P = model.predict_proba(X[300:])
        est = SemiBanditPredictionSet("precomputed", alpha=0.2, strategy="aci",
                                      learning_rate=0.02).fit(P[:400], y[300:700])
        return est, {"predict_set": lambda e: e.predict_set(P[400:]),
                     "threshold": lambda e: e.threshold_}
    est = SemiBanditPredictionSet(FrozenEstimator(model), alpha=0.2).fit(X[300:700], y[300:700])
    return est, {"predict_set": lambda e: e.predict_set(X[700:]),
                 "predict": lambda e: e.predict(X[700:]),
                 "threshold": lambda e: e.threshold_}


def _fit_autoeval(clf_data, kind):
    X, y, model = clf_data
    y_semi = y.copy()
    y_semi[450:] = -1
    judge_model = DecisionTreeClassifier(max_depth=3, random_state=0).fit(X[:300], y[:300])
    if kind == "RAutoEvalPlus":
        est = RAutoEvalPlus(model, autoevaluator=judge_model, alpha=0.5, delta=0.2,
                            betting="wsr", random_state=0).fit(X[300:], y_semi[300:])
        return est, {"decide": lambda e: e.decide(),
                     "ci": lambda e: e.confidence_interval(),
                     "predict": lambda e: e.predict(X[:50])}
    models = [model, LogisticRegression(C=0.01, max_iter=500).fit(X[:300], y[:300])]
    if kind == "ModelComparison":
        est = ModelComparison(models, autoevaluator=judge_model, delta=0.2,
                              random_state=0).fit(X[300:], y_semi[300:])
        return est, {"decide": lambda e: e.decide(), "pvalues": lambda e: e.pvalues_,
                     "interval": lambda e: (e.interval_.low, e.interval_.high)}
    tester = RAutoEvalPlus(None, autoevaluator=judge, alpha=0.6, delta=0.2, betting="wsr",
                           random_state=0)
    est = RiskControlledModelSelector(models, tester=tester).fit(X[300:], y_semi[300:])
    return est, {"decide": lambda e: e.decide(), "predict": lambda e: e.predict(X[:50])}


def _fit_monitor():
    rng = np.random.default_rng(0)
    loss = (rng.random(3000) < np.where(np.arange(3000) < 1500, 0.05, 0.3)).astype(float)
    judge = np.where(rng.random(3000) < 0.9, loss, 1 - loss)
    labels = np.where(rng.random(3000) < 0.2, loss, np.nan)
    est = autoeval.RiskMonitor(alpha=0.1, delta=0.1, label_rate=0.2)
    est.partial_fit(judge[:2000], labels[:2000])
    return est, {"continue": lambda e: e.partial_fit(judge[2000:], labels[2000:]).log_eprocess_,
                 "bounds": lambda e: e.confidence_sequence(),
                 "alarm": lambda e: e.alarm_index_}


def _fit_bandit(bandit_data, clf_data, kind):
    S, side = bandit_data.scores, bandit_data.side_scores
    if kind == "PULSE":
        est = PULSE(budget=600, batch_size=8, refit_every=5, rank=2, random_state=0)
        est.fit(S, side_scores=side)
        return est, {"ci": lambda e: e.confidence_intervals(0.1),
                     "best": lambda e: e.best_index_}
    if kind == "NaivePooling":
        return NaivePooling(budget=600, batch_size=8, refit_every=5, rank=2,
                            random_state=0).fit(S, side_scores=side), {}
    if kind == "UCBE":
        return UCBE(budget=600, batch_size=8, random_state=0).fit(S), {}
    if kind == "UCBELRF":
        return UCBELRF(budget=600, batch_size=8, n_members=8, random_state=0).fit(S), {}
    if kind == "UniformSampling":
        return UniformSampling(budget=600, random_state=0).fit(S), {}
    if kind == "FilledSubset":
        return FilledSubset(budget=600, batch_size=2, random_state=0).fit(S), {}
    if kind == "UniformLRF":
        return UniformLRF(budget=600, batch_size=8, n_members=8, random_state=0).fit(S), {}
    if kind == "LowRankScoreCompleter":
        M = S.copy()
        M[np.random.default_rng(0).uniform(size=M.shape) < 0.5] = np.nan
        est = LowRankScoreCompleter(rank=2, max_iter=20, random_state=0).fit(M)
        return est, {"transform": lambda e: e.transform(M),
                     "predict_scores": lambda e: e.predict_scores(M)}
    X, y, model = clf_data  # BestModelSelector
    cands = [DecisionTreeClassifier(max_depth=d, random_state=0).fit(X[:300], y[:300])
             for d in (1, 3)] + [model]
    est = BestModelSelector(cands, strategy=UCBE(budget=0.5, batch_size=10, random_state=0))
    est.fit(X[300:], y[300:])
    return est, {"predict": lambda e: e.predict(X[:40]),
                 "predict_proba": lambda e: e.predict_proba(X[:40])}


FACTORIES = {
    "SCoREMDR": lambda c, b: _fit_score(c, "SCoREMDR"),
    "SCoREMDR-weighted": lambda c, b: _fit_score(c, "SCoREMDR-weighted"),
    "SCoRESDR": lambda c, b: _fit_score(c, "SCoRESDR"),
    "ConcentrationMDR": lambda c, b: _fit_score(c, "ConcentrationMDR"),
    "ConcentrationSDR": lambda c, b: _fit_score(c, "ConcentrationSDR"),
    "RewardAwareScore": lambda c, b: _fit_reward_aware(c),
    "SemiBanditPredictionSet": lambda c, b: _fit_online(c, "estimator"),
    "SemiBanditPredictionSet-precomputed": lambda c, b: _fit_online(c, "precomputed"),
    "RAutoEvalPlus": lambda c, b: _fit_autoeval(c, "RAutoEvalPlus"),
    "RiskControlledModelSelector": lambda c, b: _fit_autoeval(c, "selector"),
    "ModelComparison": lambda c, b: _fit_autoeval(c, "ModelComparison"),
    "RiskMonitor": lambda c, b: _fit_monitor(),
    **{k: (lambda c, b, k=k: _fit_bandit(b, c, k)) for k in (
        "PULSE", "NaivePooling", "UCBE", "UCBELRF", "UniformSampling", "FilledSubset",
        "UniformLRF", "LowRankScoreCompleter", "BestModelSelector")},
}


def test_registry_covers_every_public_estimator():
    public = set()
    for module in (selective, autoeval, online, bandits):
        for name in module.__all__:
            obj = getattr(module, name)
            if isinstance(obj, type) and (issubclass(obj, BaseEstimator) or
                                          name == "RewardAwareScore"):
                public.add(name)
    assert {"SCoREMDR", "PULSE", "SemiBanditPredictionSet"} <= public
    missing = public - {k.split("-")[0] for k in FACTORIES}
    assert not missing, f"add persistence coverage for {sorted(missing)}"


@pytest.mark.parametrize("copy", ["pickle", "joblib", "joblib-compressed"])
@pytest.mark.parametrize("kind", sorted(FACTORIES))
def test_round_trip_keeps_attributes_and_outputs(kind, copy, clf_data, bandit_data):
    est, outputs = FACTORIES[kind](clf_data, bandit_data)
    again = {"pickle": pickle_copy, "joblib": joblib_copy,
             "joblib-compressed": lambda o: joblib_copy(o, compress=3)}[copy](est)
    assert again is not est
    assert_same(vars(again), vars(est), kind)
    if isinstance(est, BaseEstimator):
        assert again.get_params(deep=False).keys() == est.get_params(deep=False).keys()
    for fn in outputs.values():  # same order of calls on both (RNG draws line up)
        assert_outputs_equal(fn(again), fn(est))
    for attr in ("best_index_", "means_", "n_evaluations_", "certified_", "pvalue_"):
        if hasattr(est, attr):
            assert_same(getattr(again, attr), getattr(est, attr), attr)
    assert_same(vars(again), vars(est), kind + " (after use)")


# ------------------------------------------------------------------ bandits: pickle mid-run
def _bandit(kind, **extra):
    common = dict(batch_size=6, random_state=4, **extra)
    if kind == "PULSE":
        return PULSE(refit_every=3, rank=2, **common)
    if kind == "NaivePooling":
        return NaivePooling(refit_every=3, rank=2, **common)
    if kind == "UCBELRF":
        return UCBELRF(n_members=6, **common)
    if kind == "UniformSampling":
        return UniformSampling(**common)
    if kind == "FilledSubset":
        return FilledSubset(**dict(common, batch_size=1))
    if kind == "UniformLRF":
        return UniformLRF(n_members=6, **common)
    return UCBE(**common)


BANDITS = ["PULSE", "NaivePooling", "UCBE", "UCBELRF", "UniformSampling", "FilledSubset",
           "UniformLRF"]
FITTED_ATTRS = ("best_index_", "means_", "n_evaluations_", "n_evaluations_per_model_",
                "n_steps_", "history_", "completed_")


def _side(kind, data):
    return data.side_scores if kind in ("PULSE", "NaivePooling") else None


@pytest.mark.parametrize("copy", [pickle_copy, joblib_copy], ids=["pickle", "joblib"])
@pytest.mark.parametrize("kind", BANDITS)
def test_interrupted_run_pickled_at_every_failure_equals_uninterrupted(kind, copy,
                                                                      bandit_data):
    S, budget = bandit_data.scores, 700
    ref = _bandit(kind, budget=budget).fit(S, side_scores=_side(kind, bandit_data))

    scorer = CountingScorer(S, fail_at={2, 3, 9, 25, 26, 60})
    est = _bandit(kind, budget=budget)
    with pytest.raises(ConnectionError):
        est.fit(CallableOracle(scorer, *S.shape), side_scores=_side(kind, bandit_data))
    n_failures = 1
    while True:
        est = copy(est)  # the process dies; a new one loads the checkpoint
        assert not est.completed_ and est.n_evaluations_ < budget
        try:
            est.resume()
            break
        except ConnectionError:
            n_failures += 1
    assert n_failures == 6
    scorer = est.oracle_.score  # the copy's scorer carries the counts of every past attempt
    assert scorer.calls.max() == 1, "a cell was bought twice"
    spent = budget // S.shape[0] * S.shape[0] if kind == "FilledSubset" else budget  # whole examples
    assert scorer.calls.sum() == est.oracle_.n_evaluations_ == spent
    assert est.completed_
    for attr in FITTED_ATTRS:
        assert_same(getattr(est, attr), getattr(ref, attr), attr)
    if kind == "PULSE":
        np.testing.assert_array_equal(est.confidence_intervals(0.1),
                                      ref.confidence_intervals(0.1))
    # the cells bought are the cells the uninterrupted run bought
    np.testing.assert_array_equal(est.oracle_.revealed_, ref.oracle_.revealed_)


@pytest.mark.parametrize("kind", BANDITS)
def test_warm_start_continues_identically_after_pickle(kind, bandit_data):
    S = bandit_data.scores
    scorer = CountingScorer(S)
    est = _bandit(kind, budget=400, warm_start=True)
    est.fit(CallableOracle(scorer, *S.shape), side_scores=_side(kind, bandit_data))
    copy = pickle_copy(est)
    for e in (est, copy):
        e.set_params(budget=900).fit(e.oracle_)  # same oracle: the run continues
    for attr in FITTED_ATTRS:
        assert_same(getattr(copy, attr), getattr(est, attr), attr)
    assert copy.n_evaluations_ == 900
    assert copy.oracle_.score.calls.max() == 1 and copy.oracle_.score.calls.sum() == 900
    assert est.oracle_.score.calls.sum() == 900  # the two runs paid separately, once each


# --------------------------------------------------------------- online: pickle mid-stream
def _serve(est, P, y):
    """The user's feedback on the published sets: the label if in the set, else -1."""
    sets = est.predict_set(P)
    return np.where(sets[np.arange(len(y)), y], y, -1)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_partial_fit_stream_persisted_between_batches_equals_uninterrupted(strategy,
                                                                          clf_data):
    X, y, model = clf_data
    P, yy = model.predict_proba(X[300:]), y[300:]
    params = {"alpha": 0.2, "strategy": strategy, "horizon": 700, "n_explore": 40,
              "learning_rate": 0.02}
    cuts = np.array_split(np.arange(600), 13)

    ref = SemiBanditPredictionSet("precomputed", **params)
    for idx in cuts:
        ref.partial_fit(P[idx], _serve(ref, P[idx], yy[idx]))

    est = SemiBanditPredictionSet("precomputed", **params)
    for k, idx in enumerate(cuts):
        est.partial_fit(P[idx], _serve(est, P[idx], yy[idx]))
        est = (pickle_copy if k % 2 else joblib_copy)(est)
    assert_same(vars(est), vars(ref), strategy)
    assert est.n_rounds_ == 600
    np.testing.assert_array_equal(est.predict_set(P[:50]), ref.predict_set(P[:50]))
    # and the copy keeps streaming like the original
    for e in (est, ref):
        e.partial_fit(P[:30], _serve(e, P[:30], yy[:30]))
    assert_same(vars(est), vars(ref), strategy + " (continued)")
