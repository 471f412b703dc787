"""Bad-input matrix (issue #6): every public callable x every bad-input category.

Each :class:`Row` of ``TABLE`` is one public callable with a *good call*; :func:`cells` derives
the bad calls from it (NaN, +inf, empty, wrong ndim, mismatched lengths, complex dtype, strings,
out-of-range levels, unfitted model, pandas with a renamed column). A cell passes when the bad
call raises ``ValueError``/``TypeError`` (``NotFittedError`` is a ``ValueError``) whose message
names the offending argument, or returns the documented result stated in the row. NumPy's
``RuntimeWarning``/``ComplexWarning`` are errors inside a cell: a bad input must not reach NumPy.

``tools/bad_input_matrix.py`` renders the same table to ``doc/bad_inputs.rst``; the last test
checks that the committed page is what the table produces.
"""

import ast
import functools
import re
import warnings
from collections import namedtuple
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pandas as pd
import pytest
from sklearn.exceptions import NotFittedError
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LinearRegression, LogisticRegression

from sklearn_riskcontrol import autoeval, bandits, evaluation, online, selective
from sklearn_riskcontrol.evalues import betting, testing
from sklearn_riskcontrol.bandits import lowrank
from sklearn_riskcontrol.datasets import load_diamonds, load_letter, make_score_setting
from sklearn_riskcontrol.risks import make_risk

CATEGORIES = ("nan", "inf", "empty", "shape", "length", "dtype", "string", "level", "unfitted", "pandas")
CATEGORY_TITLES = {
    "nan": "NaN",
    "inf": "+inf",
    "empty": "empty",
    "shape": "wrong ndim",
    "length": "mismatched lengths",
    "dtype": "wrong dtype",
    "string": "strings",
    "level": "level out of (0, 1)",
    "unfitted": "unfitted model",
    "pandas": "renamed column",
}
ERRORS = (ValueError, TypeError)


@dataclass(frozen=True)
class Documented:
    """A legal degenerate input: the call returns ``check(result) is True``; ``text`` and
    ``where`` (the place that documents it) go to the docs."""

    check: Callable[[Any], bool]
    text: str
    where: str


@dataclass
class Row:
    """One public callable. ``run(**good())`` must succeed; bad calls perturb its arguments.

    arrays: argument -> kind ("1d", "2d", "bool", "int", "X", "y"); lengths: groups of arguments
    that must align (the first is the reference); levels: arguments in (0, 1); scalars: numeric
    scalar arguments; unfitted / pandas: zero-argument thunks for those categories; names:
    argument -> regex the message must match (default: the argument's name); documented:
    "category-suffix" -> :class:`Documented`; extra: (category, suffix, thunk) cells.
    """

    name: str
    module: str
    run: Callable[..., Any]
    good: Callable[[], dict]
    arrays: dict = field(default_factory=dict)
    lengths: tuple = ()
    levels: tuple = ()
    scalars: tuple = ()
    unfitted: Callable | None = None
    pandas: Callable | None = None
    names: dict = field(default_factory=dict)
    documented: dict = field(default_factory=dict)
    extra: tuple = ()


# ----------------------------------------------------------------------------- derivations


def _with(value, fill):
    arr = np.array(value, dtype=float, copy=True)
    arr.flat[0] = fill
    return arr


def _wrong_ndim(value, kind):
    arr = np.asarray(value)
    if kind == "1d2d":  # 1-d or 2-d (rows) are legal, 3-d is not
        return arr[None, None, :]
    if kind in ("X", "2d"):
        return arr[:, 0] if kind == "X" else arr[..., None]
    return np.stack([arr, arr], axis=1)


def _wrong_dtype(value, kind):
    arr = np.asarray(value)
    if kind in ("bool", "int"):
        return np.full(arr.shape, 0.5)
    return arr.astype(float) + 1j


def _empty(value, kind):
    arr = np.asarray(value)
    return arr[:, :0] if kind == "2d" else arr[:0]


def _call(row, **changes):
    def thunk():
        kwargs = row.good()
        kwargs.update(changes)
        return row.run(**kwargs)

    return thunk


def cells(row):
    """Yield ``(category, suffix, thunk)`` for every bad call derived from ``row``."""
    kw = row.good()
    grouped = {a for g in row.lengths for a in g}
    for arg, kind in row.arrays.items():
        yield "nan", arg, _call(row, **{arg: _with(kw[arg], np.nan)})
        yield "inf", arg, _call(row, **{arg: _with(kw[arg], np.inf)})
        if arg not in grouped:
            yield "empty", arg, _call(row, **{arg: _empty(kw[arg], kind)})
        yield "shape", arg, _call(row, **{arg: _wrong_ndim(kw[arg], kind)})
        yield "dtype", arg, _call(row, **{arg: _wrong_dtype(kw[arg], kind)})
        yield "string", arg, _call(row, **{arg: np.full(np.shape(kw[arg]), "abc")})
    for group in row.lengths:
        yield "empty", group[0], _call(row, **{a: _empty(kw[a], row.arrays[a]) for a in group})
        for arg in group[1:]:
            yield "length", arg, _call(row, **{arg: np.asarray(kw[arg])[:-1]})
    for arg in row.scalars:
        yield "nan", arg, _call(row, **{arg: np.nan})
        yield "inf", arg, _call(row, **{arg: np.inf})
        yield "string", arg, _call(row, **{arg: "abc"})
    for arg in row.levels:
        for value, tag in ((0.0, "0"), (1.0, "1"), (np.nan, "nan")):
            yield "level", f"{arg}={tag}", _call(row, **{arg: value})
        yield "string", arg, _call(row, **{arg: "0.1"})
    if row.unfitted is not None:
        yield "unfitted", "model", row.unfitted
    if row.pandas is not None:
        yield "pandas", "X", row.pandas
    yield from row.extra


def _arg_of(suffix):
    return suffix.split("=")[0]


def expectation(row, category, suffix):
    """The documented result for this cell, or the regex its error message must match."""
    if f"{category}-{suffix}" in row.documented:
        return row.documented[f"{category}-{suffix}"]
    if category == "unfitted":
        return r"not fitted|must be fitted|call .?fit"
    if category == "pandas":
        return r"feature names"
    arg = _arg_of(suffix)
    group = next((g for g in row.lengths if g[0] == arg), None)
    if category == "empty" and group:  # the whole aligned group is empty: any member may be named
        return "|".join(row.names.get(a, rf"(?<![A-Za-z0-9_]){re.escape(a)}(?![A-Za-z0-9_])") for a in group)
    if arg in row.names:
        return row.names[arg]
    return rf"(?<![A-Za-z0-9_]){re.escape(arg)}(?![A-Za-z0-9_])"


_OUTCOMES = {}


def outcome(row, category, suffix, thunk):
    """Run one cell once (cached): ("raises", type name, message) or ("returns", value)."""
    key = f"{row.name}-{category}-{suffix}"
    if key not in _OUTCOMES:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            warnings.simplefilter("error", RuntimeWarning)
            warnings.simplefilter("error", np.exceptions.ComplexWarning)
            try:
                _OUTCOMES[key] = ("returns", thunk())
            except Exception as exc:  # noqa: BLE001 - classified by the caller
                _OUTCOMES[key] = ("raises", exc, str(exc))
    return _OUTCOMES[key]


def cell_ok(row, category, suffix, result):
    """Return (passed, label for the docs)."""
    expect = expectation(row, category, suffix)
    if result[0] == "returns":
        if isinstance(expect, Documented) and expect.check(result[1]):
            return True, f"documented: {expect.text}"
        return False, f"returned {result[1]!r:.80}"
    exc = result[1]
    if isinstance(expect, Documented):
        return False, f"raised {type(exc).__name__}: {result[2]}"
    if isinstance(exc, ERRORS) and re.search(expect, result[2]):
        return True, "NotFittedError" if isinstance(exc, NotFittedError) else type(exc).__name__
    return False, f"{type(exc).__name__}: {result[2]}"


# ------------------------------------------------------------------------------------ data

RNG = np.random.default_rng(0)
N_CAL, N_TEST = 40, 6
S_CAL = RNG.uniform(size=N_CAL)
L_CAL = np.clip(S_CAL + 0.1 * RNG.normal(size=N_CAL), 0, 1)
S_TEST = RNG.uniform(size=N_TEST)
W_CAL, W_TEST = RNG.uniform(0.5, 2, N_CAL), RNG.uniform(0.5, 2, N_TEST)
H = RNG.binomial(1, 0.05, 60).astype(float)
G = np.where(RNG.random(60) < 0.9, H, 1 - H)
U = RNG.binomial(1, 0.05, 240).astype(float)
BIN = (RNG.uniform(size=(6, 40)) < np.linspace(0.2, 0.8, 6)[:, None]).astype(float)
SIDE = (RNG.uniform(size=(8, 40)) < 0.5).astype(float)


@functools.cache
def _clf_data():
    X = np.random.default_rng(1).normal(size=(240, 4))
    y = (X[:, 0] + 0.5 * X[:, 1] > 0).astype(int)
    return X, y


@functools.cache
def _clf():
    X, y = _clf_data()
    return LogisticRegression().fit(X[:80], y[:80])


@functools.cache
def _frame_clf():
    X, y = _clf_data()
    df = pd.DataFrame(X, columns=list("abcd"))
    return df, LogisticRegression().fit(df[:80], y[:80])


def _renamed(df):
    return df.rename(columns={"d": "e"})


def _est_good():
    X, y = _clf_data()
    return {"X": X[80:200], "y": y[80:200], "X_test": X[200:]}


EST_ARRAYS = {"X": "X", "y": "y", "X_test": "X"}
# X goes to the wrapped model untouched (DESIGN.md), so sklearn's own check_array messages count.
SKLEARN_X = (r"(?<![A-Za-z_])X(?![A-Za-z_])|2D array|features?\b|Complex data|dtype='numeric'"
             r"|0 sample\(s\)")
# a transformer validates X with sklearn's validate_data, whose string message is NumPy's
SKLEARN_X_ANY = SKLEARN_X + r"|could not convert string to float|dim 3|0 feature"
EST_NAMES = {
    "X": SKLEARN_X,
    "X_test": SKLEARN_X,
    "y": r"(?<![A-Za-z_])y(?![A-Za-z_])|y_true|label|1d array|class",
}


def _meta_row(name, module, make, method, levels=(), unfitted_method=None, **extra):
    """Row for a meta-estimator wrapping the fitted classifier: fit(X, y) then ``method``."""

    def run(X, y, X_test, **params):
        est = make(_clf(), **params).fit(X, y)
        return getattr(est, method)(X_test) if method != "decide()" else est.decide()

    def good():
        kw = _est_good()
        kw.update({lv: 0.2 for lv in levels})
        return kw

    def unfitted():
        est = make(_clf())
        return est.decide() if method == "decide()" else getattr(est, unfitted_method or method)(_est_good()["X_test"])

    def frame():
        df, model = _frame_clf()
        _, y = _clf_data()
        est = make(model).fit(df[80:200], y[80:200])
        target = getattr(est, "predict" if method == "decide()" else method)
        return target(_renamed(df[200:]))

    arrays = {k: v for k, v in EST_ARRAYS.items() if k != "X_test" or method != "decide()"}
    return Row(name, module, run, good, arrays=arrays, lengths=(("X", "y"),),
               levels=levels, unfitted=unfitted, pandas=frame, names=dict(EST_NAMES), **extra)


def _empty_bool(r):
    return isinstance(r, np.ndarray) and r.shape == (0,) and r.dtype == bool


def _empty_float(r):
    return isinstance(r, np.ndarray) and r.shape == (0,)


NO_TEST = "no test point returns an empty array (DESIGN.md, 'Inputs and errors')"
SDR_GAMMA = "SDR e-values are valid for any gamma > 0, 1 and above included (paper Thm. 5.1)"


def _bool_array(r):
    return isinstance(r, np.ndarray) and r.dtype == bool


def _nonnegative_floats(r):
    return isinstance(r, np.ndarray) and r.dtype == float and bool(np.all(r >= 0))


# ----------------------------------------------------------------------------------- table


def _score_rows():
    rows = []
    cal = ("cal_risks", "cal_scores", "cal_weights")
    test = ("test_scores", "test_weights")
    arrays = dict.fromkeys(cal + test, "1d")

    def good_with(level):
        return lambda: {"cal_risks": L_CAL, "cal_scores": S_CAL, "test_scores": S_TEST,
                        level: 0.2, "cal_weights": W_CAL, "test_weights": W_TEST}

    doc = {"empty-test_scores": Documented(_empty_float, "empty array", NO_TEST)}
    sdr_doc = dict(doc)
    sdr_doc["level-gamma=1"] = Documented(_nonnegative_floats, "valid e-values", SDR_GAMMA)
    rows.append(Row("mdr_evalues", "selective", selective.mdr_evalues, good_with("gamma"), arrays,
                    (cal, test), ("gamma",), documented=doc))
    rows.append(Row("sdr_evalues", "selective", selective.sdr_evalues, good_with("gamma"), arrays,
                    (cal, test), ("gamma",), documented=sdr_doc))
    docb = {"empty-test_scores": Documented(_empty_bool, "empty bool array", NO_TEST)}

    def good_mdr():
        kw = good_with("alpha")()
        kw["gamma"] = 0.2
        return kw

    rows.append(Row("mdr_decisions", "selective", selective.mdr_decisions, good_mdr, arrays,
                    (cal, test), ("alpha", "gamma"), documented=docb))
    return rows


def _testing_rows():
    docb = Documented(_empty_bool, "empty bool array", "no hypothesis: nothing rejected (DESIGN.md)")
    rows = []
    for name, func, arg, level, values in [
        ("ebh", testing.ebh, "evalues", "alpha", [40.0, 25.0, 1.0, 0.0]),
        ("bh", testing.bh, "pvalues", "alpha", [0.001, 0.02, 0.5]),
        ("fixed_sequence", testing.fixed_sequence, "pvalues", "delta", [0.01, 0.05, 0.2]),
        ("bonferroni", testing.bonferroni, "pvalues", "delta", [0.01, 0.05, 0.2]),
    ]:
        documented = {f"empty-{arg}": docb}
        if name == "ebh":
            documented["inf-evalues"] = Documented(
                lambda r: r.tolist() == [True, True, False, False], "an infinite e-value is rejected",
                "ebh docstring: non-negative e-values, inf allowed")
        rows.append(Row(name, "evalues.testing", func, (lambda a=arg, lv=level, v=values: {a: np.array(v), lv: 0.1}),
                        {arg: "1d"}, levels=(level,), documented=documented))
    rows.append(Row("boost_evalues", "evalues.testing", testing.boost_evalues,
                    lambda: {"evalues": np.array([2.0, 0.0, 1.0]), "method": "homo", "random_state": 0},
                    {"evalues": "1d"},
                    documented={"empty-evalues": Documented(_empty_float, "empty array", NO_TEST),
                                "inf-evalues": Documented(lambda r: r[0] == np.inf and r[1] == 0,
                                                          "inf stays inf", "ebh docstring: inf allowed")},
                    extra=(("string", "method", lambda: testing.boost_evalues([1.0], "bogus")),)))
    return rows


def _bounds_rows():
    def run(cal_risks, cal_scores, alpha, delta, test_scores):
        return selective.concentration_threshold(cal_risks, cal_scores, alpha, delta=delta).decide(test_scores)

    return [Row("concentration_threshold", "selective", run,
                lambda: {"cal_risks": L_CAL, "cal_scores": S_CAL, "alpha": 0.4, "delta": 0.1,
                         "test_scores": S_TEST},
                {"cal_risks": "1d", "cal_scores": "1d", "test_scores": "1d"},
                (("cal_risks", "cal_scores"),), ("alpha", "delta"),
                documented={"empty-test_scores": Documented(_empty_bool, "empty bool array", NO_TEST)})]


def _betting_rows():
    LW = np.log([[1.0, 4.0, 2.0], [1.0, 2.0, 3.0]])
    rows = [
        Row("betting_eprocess", "evalues.betting",
            lambda observations, alpha, delta: betting.betting_eprocess(observations, alpha, betting="wsr", delta=delta),
            lambda: {"observations": H, "alpha": 0.2, "delta": 0.1}, {"observations": "1d2d"},
            levels=("alpha", "delta"),
            documented={
                "empty-observations": Documented(lambda r: r.log_wealth.shape == (0,), "no round: empty log-wealth",
                                                 "betting_eprocess returns one value per round"),
                # H0: E[q] > 0 with q >= 0: the wealth can never grow
                "level-alpha=0": Documented(lambda r: r.log_wealth.shape == (60,) and np.all(r.log_wealth <= 0),
                                            "legal null threshold: wealth never grows",
                                            "betting_eprocess docstring: alpha < upper"),
            }),
        Row("mixture_log_eprocess", "evalues.betting", betting.mixture_log_eprocess,
            lambda: {"log_wealth": LW, "prior": np.array([0.5, 0.5])},
            {"log_wealth": "2d", "prior": "1d"},
            documented={"empty-log_wealth": Documented(_empty_float, "no round: empty array",
                                                       "docstring: returns shape (n,)")}),
        Row("mixture_weights", "evalues.betting", betting.mixture_weights,
            lambda: {"log_wealth": LW, "prior": np.array([0.5, 0.5])},
            {"log_wealth": "2d", "prior": "1d"},
            documented={"empty-log_wealth": Documented(lambda r: r.shape == (2, 0), "no round: shape (S, 0)",
                                                       "docstring: returns shape (S, n)")}),
        Row("WSR", "evalues.betting", lambda c: betting.betting_eprocess(H, 0.2, betting=betting.WSR(c), delta=0.1),
            lambda: {"c": 0.75}, scalars=("c",)),
        Row("FixedBet", "evalues.betting", lambda fraction: betting.betting_eprocess(H, 0.2, betting=betting.FixedBet(fraction)),
            lambda: {"fraction": 0.5}, scalars=("fraction",)),
        Row("UniversalPortfolio", "evalues.betting",
            lambda n_nodes: betting.betting_eprocess(H, 0.2, betting=betting.UniversalPortfolio(n_nodes=n_nodes)),
            lambda: {"n_nodes": 10}, scalars=("n_nodes",)),
    ]
    return rows


EVAL = Documented(lambda r: r.method == "eval", "falls back to R-Eval (warning)",
                  "rautoeval_test docstring: method 'eval' when no unlabeled data")


def _autoeval_array_rows():
    labeled = ("loss_labeled", "loss_judge_labeled")
    arrays = {"loss_labeled": "1d", "loss_judge_labeled": "1d", "loss_judge_unlabeled": "1d"}
    rows = [
        Row("effective_observations", "autoeval", autoeval.effective_observations,
            lambda: {"loss_labeled": H, "loss_judge_labeled": G, "loss_judge_unlabeled": U,
                     "rho": np.array([0.0, 0.5, 1.0])},
            dict(arrays, rho="1d"), (labeled,)),
        Row("rautoeval_test", "autoeval", autoeval.rautoeval_test,
            lambda: {"loss_labeled": H, "loss_judge_labeled": G, "loss_judge_unlabeled": U,
                     "alpha": 0.2, "delta": 0.1},
            arrays, (labeled,), ("alpha", "delta"), documented={"empty-loss_judge_unlabeled": EVAL}),
        Row("rautoeval_confidence_interval", "autoeval", autoeval.rautoeval_confidence_interval,
            lambda: {"loss_labeled": H, "loss_judge_labeled": G, "loss_judge_unlabeled": U, "delta": 0.1},
            arrays, (labeled,), ("delta",), documented={"empty-loss_judge_unlabeled": EVAL}),
    ]
    H2 = np.stack([H, np.roll(H, 1)])
    G2 = np.stack([G, np.roll(G, 1)])
    U2 = np.stack([U, np.roll(U, 1)])
    rows.append(Row("rautoeval_select", "autoeval", autoeval.rautoeval_select,
                    lambda: {"loss_labeled": H2, "loss_judge_labeled": G2, "loss_judge_unlabeled": U2,
                             "alpha": 0.2, "delta": 0.1},
                    dict.fromkeys(arrays, "2d"), (labeled,), ("alpha", "delta"),
                    documented={"empty-loss_judge_unlabeled": Documented(
                        lambda r: all(x.method == "eval" for x in r.results), "falls back to R-Eval",
                        "rautoeval_test docstring: method 'eval' when no unlabeled data")}))
    return rows


ZERO = Documented(lambda r: r == 0.0, "0.0", "docstring: no test point gives 0.0")


def _risk_metric_rows():
    rows = [
        Row("make_risk", "risks", lambda risk, y_true, y_pred: make_risk(risk, scale=1.0)(y_true, y_pred),
            lambda: {"risk": "squared", "y_true": np.array([0.1, 0.5, 0.9]), "y_pred": np.array([0.2, 0.5, 0.1])},
            {"y_true": "1d", "y_pred": "1d"}, (("y_true", "y_pred"),),
            documented={"empty-y_true": Documented(_empty_float, "empty array", "no sample: no risk (DESIGN.md)")},
            extra=(("string", "risk", lambda: make_risk("bogus")),)),
    ]
    dep = np.array([True, False, True, True])
    rsk = np.array([0.0, 1.0, 0.5, 1.0])
    for name, func, first in [
        ("realized_mdr", selective.realized_mdr, "risks"),
        ("realized_sdr", selective.realized_sdr, "risks"),
        ("realized_reward", selective.realized_reward, "rewards"),
    ]:
        rows.append(Row(name, "selective", func, (lambda f=first: {f: rsk, "deployed": dep}),
                        {first: "1d", "deployed": "bool"}, ((first, "deployed"),),
                        documented={f"empty-{first}": ZERO}))
    rows.append(Row("deployment_rate", "selective", selective.deployment_rate, lambda: {"deployed": dep},
                    {"deployed": "bool"}, documented={"empty-deployed": ZERO}))
    rows.append(Row("make_deployment_scorer", "selective",
                    lambda metric: selective.make_deployment_scorer(metric), lambda: {"metric": "realized_sdr"},
                    extra=(("string", "metric", lambda: selective.make_deployment_scorer("bogus")),)))
    return rows


def _online_rows():
    tls = RNG.normal(size=30)
    tau = np.sort(RNG.normal(size=30))
    cand = RNG.dirichlet(np.ones(3), size=30)
    t_inf = _with(tau, np.inf)  # what the "inf" cells pass: +inf = empty set at round 0
    where = "online coverage functions: +inf threshold = empty set"

    def regret(t):
        return online.cumulative_regret(t, lambda x: 1 / (1 + np.exp(-x)), 0.1)

    rows = [
        Row("oracle_threshold", "online", online.oracle_threshold,
            lambda: {"true_label_scores": tls, "alpha": 0.2}, {"true_label_scores": "1d"}, levels=("alpha",)),
        Row("coverage_rate", "online", online.coverage_rate,
            lambda: {"true_label_scores": tls, "thresholds": tau},
            {"true_label_scores": "1d", "thresholds": "1d"}, (("true_label_scores", "thresholds"),),
            documented={"inf-thresholds": Documented(lambda r: r == np.mean(tls >= t_inf), "empty set at that round", where)}),
        Row("average_set_size", "online", online.average_set_size,
            lambda: {"candidate_scores": cand, "thresholds": tau},
            {"candidate_scores": "2d", "thresholds": "1d"}, (("candidate_scores", "thresholds"),),
            documented={"inf-thresholds": Documented(
                lambda r: r == np.mean((cand >= t_inf[:, None]).sum(1)), "empty set at that round", where)}),
        Row("set_sizes", "online", online.set_sizes,
            lambda: {"candidate_scores": cand, "thresholds": tau},
            {"candidate_scores": "2d", "thresholds": "1d"}, (("candidate_scores", "thresholds"),),
            documented={"inf-thresholds": Documented(
                lambda r: np.array_equal(r, (cand >= t_inf[:, None]).sum(1)) and r[0] == 0, "size 0 at that round", where)}),
        Row("undercoverage_count", "online", online.undercoverage_count,
            lambda: {"thresholds": tau, "tau_star": 0.1}, {"thresholds": "1d"}, scalars=("tau_star",),
            documented={"inf-thresholds": Documented(lambda r: r == np.sum(t_inf > 0.1), "counted as above tau*", where),
                        "empty-thresholds": Documented(lambda r: r == 0, "0", where)}),
        Row("cumulative_regret", "online",
            lambda thresholds, alpha: online.cumulative_regret(thresholds, lambda t: 1 / (1 + np.exp(-t)), alpha),
            lambda: {"thresholds": tau, "alpha": 0.1}, {"thresholds": "1d"}, levels=("alpha",),
            documented={"inf-thresholds": Documented(lambda r: np.array_equal(r, regret(np.where(np.isinf(t_inf), 1e300, t_inf))),
                                                     "empty set at that round (limit tau -> +inf)", where),
                        "empty-thresholds": Documented(_empty_float, "empty array", where)}),
        Row("simulate_thresholds", "online",
            lambda true_label_scores, alpha, delta: online.simulate_thresholds(
                true_label_scores, alpha, horizon=30, delta=delta),
            lambda: {"true_label_scores": tls, "alpha": 0.2, "delta": 0.1}, {"true_label_scores": "1d"},
            levels=("alpha", "delta"),
            documented={"empty-true_label_scores": Documented(_empty_float, "empty array", "no round: no threshold")}),
        Row("make_learner", "online", lambda strategy, alpha: online.make_learner(strategy, alpha),
            lambda: {"strategy": "sps", "alpha": 0.1}, levels=("alpha",),
            extra=(("string", "strategy", lambda: online.make_learner("bogus", 0.1)),)),
    ]
    for name, cls, params in [
        ("SPSLearner", online.SPSLearner, {"horizon": 100}),
        ("GreedyLearner", online.GreedyLearner, {}),
        ("ACILearner", online.ACILearner, {"learning_rate": 0.1}),
        ("DLRLearner", online.DLRLearner, {"learning_rate": 1.0}),
        ("ETCLearner", online.ETCLearner, {"n_explore": 2}),
    ]:
        rows.append(Row(name, "online",
                        lambda alpha, score, c=cls, p=params: c(alpha, **p).update(score),
                        lambda: {"alpha": 0.1, "score": 0.7}, levels=("alpha",), scalars=("score",)))
    return rows


def _sps_row():
    def make(model, **params):
        return online.SemiBanditPredictionSet(FrozenEstimator(model), **{"alpha": 0.2, **params})

    row = _meta_row("SemiBanditPredictionSet", "online", make, "predict_set", levels=("alpha", "delta"))
    X = _clf_data()[0]
    row.unfitted = lambda: online.SemiBanditPredictionSet(LogisticRegression()).predict_set(X)
    row.documented["string-y"] = Documented(
        lambda r: r.dtype == bool and r.all(), "unknown labels count as misses (warning): full sets",
        "SemiBanditPredictionSet.fit: labels that are not classes count as misses")

    def partial(feedback):
        X, y = _clf_data()
        return make(_clf()).fit(X[80:200], y[80:200]).partial_fit(X[200:], feedback)

    fb = _clf_data()[1][200:]
    row.extra = (
        ("nan", "partial_fit-y", lambda: partial(_with(fb, np.nan))),
        ("string", "partial_fit-y", lambda: partial(np.full(fb.shape, "abc"))),
        ("length", "partial_fit-y", lambda: partial(fb[:-1])),
    )
    row.names["partial_fit-y"] = EST_NAMES["y"]
    row.documented["nan-partial_fit-y"] = Documented(
        lambda r: r.threshold_ == partial(_with(fb, -1)).threshold_,  # as the miss code -1
        "NaN in the feedback = a reported miss",
        "SemiBanditPredictionSet.partial_fit: a missing value in y (None, pd.NA, NaN) is a miss")
    return [row]


def _like_unseen_label(row):
    """y = "abc" are legal labels that no prediction matches: every calibration risk is 1, so the
    decisions equal those for any other never-predicted label (here 7)."""

    def check(result):
        kw = row.good()
        reference = row.run(**dict(kw, y=np.full(len(kw["y"]), 7)))
        return result.dtype == bool and np.array_equal(result, reference)

    return Documented(check, "labels compared as given (all wrong): same as an unseen label",
                      "make_risk: zero_one accepts any labels")


def _selective_rows():
    rows = []
    for name, cls, levels in [
        ("SCoREMDR", selective.SCoREMDR, ("alpha", "gamma")),
        ("SCoRESDR", selective.SCoRESDR, ("alpha", "gamma")),
        ("ConcentrationMDR", selective.ConcentrationMDR, ("alpha", "delta")),
        ("ConcentrationSDR", selective.ConcentrationSDR, ("alpha", "delta")),
    ]:
        row = _meta_row(name, "selective", lambda m, c=cls, **p: c(m, **p), "decide", levels)
        row.documented["string-y"] = _like_unseen_label(row)
        if cls is selective.SCoRESDR:
            row.documented["level-gamma=1"] = Documented(_bool_array, "decisions", SDR_GAMMA)
        rows.append(row)

    def run(X):
        return selective.RewardAwareScore(_rp(), _rp(), target="sdr", alpha=0.2)(X)

    def unfitted():
        return selective.RewardAwareScore(LinearRegression(), _rp(), target="sdr", alpha=0.2)(_clf_data()[0])

    def frame():
        X, y = _clf_data()
        df = pd.DataFrame(X, columns=list("abcd"))
        rp = LinearRegression().fit(df, y * 0.5 + 0.25)
        return selective.RewardAwareScore(rp, rp, target="sdr", alpha=0.2)(_renamed(df))

    rows.append(Row("RewardAwareScore", "selective", run, lambda: {"X": _clf_data()[0][:20]},
                    {"X": "X"}, levels=(), unfitted=unfitted, pandas=frame, names=dict(EST_NAMES),
                    extra=(("level", "alpha=0", lambda: selective.RewardAwareScore(_rp(), _rp(), target="sdr", alpha=0.0)),
                           ("level", "alpha=nan", lambda: selective.RewardAwareScore(_rp(), _rp(), target="sdr", alpha=np.nan)))))
    return rows


@functools.cache
def _rp():
    X, y = _clf_data()
    return LinearRegression().fit(X, y * 0.5 + 0.25)


def _autoeval_rows():
    def make(model, **params):
        params = {"alpha": 0.3, "delta": 0.1, **params}
        return autoeval.RAutoEvalPlus(model, autoevaluator=_clf(), n_rho=3, random_state=0, **params)

    rae = _meta_row("RAutoEvalPlus", "autoeval", make, "decide()", levels=("alpha", "delta"))
    rae.documented["string-y"] = Documented(lambda r: r is False, "labels compared as given: all wrong, not certified",
                                            "make_risk: zero_one accepts any labels")

    def make_sel(model, **params):
        tester = autoeval.RAutoEvalPlus(None, autoevaluator=_clf(), alpha=0.3, delta=0.1, n_rho=3, random_state=0)
        return autoeval.RiskControlledModelSelector([model, model], tester=tester, **params)

    sel = _meta_row("RiskControlledModelSelector", "autoeval", make_sel, "predict", levels=("delta",),
                    unfitted_method="predict")
    return [rae, sel]


def _bandit_rows():
    rows = []
    for name, cls, params, side in [
        ("PULSE", bandits.PULSE, {"batch_size": 4, "refit_every": 5, "rank": 2, "max_iter": 5}, True),
        ("NaivePooling", bandits.NaivePooling, {"batch_size": 4, "refit_every": 5, "rank": 2, "max_iter": 5}, True),
        ("UCBE", bandits.UCBE, {"batch_size": 4}, False),
        ("UCBELRF", bandits.UCBELRF, {"batch_size": 4, "n_members": 4, "n_sweeps": 2}, False),
        ("UniformSampling", bandits.UniformSampling, {"batch_size": 4}, False),
        ("FilledSubset", bandits.FilledSubset, {}, False),
        ("UniformLRF", bandits.UniformLRF, {"batch_size": 4, "n_members": 4, "n_sweeps": 2}, False),
    ]:
        def run(scores, budget, c=cls, p=params, s=side, **kw):
            est = c(budget=budget, random_state=0, **p)
            est.fit(scores, **({"side_scores": kw["side_scores"]} if s else {}))
            return est.confidence_intervals(kw["delta"]) if "delta" in kw else est.best_index_

        def good(s=side, n=name):
            kw = {"scores": BIN, "budget": 0.3}
            if s:
                kw["side_scores"] = SIDE
            if n == "PULSE":
                kw["delta"] = 0.1
            return kw

        arrays = {"scores": "2d"}
        if side:
            arrays["side_scores"] = "2d"

        def unfitted(c=cls, n=name):
            est = c()
            return est.confidence_intervals(0.1) if n == "PULSE" else est.resume()

        side_nan = Documented(lambda r: r is not None, "NaN = missing side score",
                              "fit docstring: side_scores NaN = missing")
        rows.append(Row(name, "bandits", run, good, arrays, scalars=("budget",),
                        levels=("delta",) if name == "PULSE" else (), unfitted=unfitted,
                        documented={"nan-side_scores": side_nan}))

    def run_lrc(X, X_new):
        return bandits.LowRankScoreCompleter(rank=1, max_iter=5, random_state=0).fit(X).transform(X_new)

    miss = BIN.copy()
    miss[0, :5] = np.nan
    rows.append(Row("LowRankScoreCompleter", "bandits", run_lrc, lambda: {"X": miss, "X_new": miss},
                    {"X": "2d", "X_new": "2d"}, names={"X": SKLEARN_X_ANY, "X_new": SKLEARN_X_ANY},
                    documented={
                        "nan-X": Documented(lambda r: r.shape == BIN.shape and not np.isnan(r).any(),
                                        "NaN = missing cell, completed",
                                        "LowRankScoreCompleter docstring"),
                        "nan-X_new": Documented(lambda r: r.shape == BIN.shape and not np.isnan(r).any(),
                                            "NaN = missing cell, completed",
                                            "LowRankScoreCompleter docstring"),
                    },
                    unfitted=lambda: bandits.LowRankScoreCompleter().transform(miss)))

    def make_bms(model, **params):
        return bandits.BestModelSelector([model, model], strategy=bandits.UniformSampling(budget=0.5, random_state=0))

    bms = _meta_row("BestModelSelector", "bandits", make_bms, "predict")
    X, y = _clf_data()
    bms.extra = (("unfitted", "candidates",
                  lambda: bandits.BestModelSelector([LogisticRegression()]).fit(X[:50], y[:50])),)
    bms.documented["unfitted-candidates"] = Documented(
        lambda r: hasattr(r, "best_estimator_"), "fitted on a split (calib_size)",
        "BestModelSelector docstring: unfitted candidates are fitted on a split")
    bms.documented["string-y"] = Documented(lambda r: r.shape == (40,), "labels compared as given",
                                            "EstimatorOracle: default for classifiers is accuracy, 1{y_true == y_pred}")
    rows.append(bms)

    rows.append(Row("MatrixOracle", "evaluation",
                    lambda scores, example_indices: evaluation.MatrixOracle(scores).query(0, example_indices),
                    lambda: {"scores": BIN, "example_indices": np.array([0, 2, 3])},
                    {"scores": "2d", "example_indices": "int"},
                    documented={"empty-example_indices": Documented(_empty_float, "empty array", "no example queried")}))
    rows.append(Row("as_oracle", "evaluation", lambda scores: evaluation.as_oracle(scores).query(0, [0, 1]),
                    lambda: {"scores": BIN}, {"scores": "2d"}))

    def run_eo(X, y):
        return evaluation.EstimatorOracle([_clf()], X, y).query(0, [0, 1, 2])

    def frame_eo():
        df, model = _frame_clf()
        return evaluation.EstimatorOracle([model], _renamed(df[100:]), _clf_data()[1][100:]).query(0, [0, 1])

    rows.append(Row("EstimatorOracle", "evaluation", run_eo,
                    lambda: {"X": _clf_data()[0][100:], "y": _clf_data()[1][100:]},
                    {"X": "X", "y": "y"}, (("X", "y"),), names=dict(EST_NAMES),
                    documented={"string-y": Documented(lambda r: r.tolist() == [0.0, 0.0, 0.0],
                                                       "labels compared as given: all wrong (0)",
                                                       "EstimatorOracle docstring: default scoring for classifiers = accuracy")},
                    unfitted=lambda: evaluation.EstimatorOracle([LogisticRegression()], X[:10], y[:10]).query(0, [0]),
                    pandas=frame_eo))
    rows.append(Row("CallableOracle", "evaluation",
                    lambda n_models, n_examples: evaluation.CallableOracle(
                        lambda i, idx: np.ones(len(idx)), n_models, n_examples).query(0, [0]),
                    lambda: {"n_models": 2, "n_examples": 5}, scalars=("n_models", "n_examples")))
    rows.append(Row("freedman_radius", "bandits", bandits.freedman_radius,
                    lambda: {"n_pulls": np.array([10, 100]), "variance": np.array([0.25, 0.1]), "delta": 0.05},
                    {"n_pulls": "1d", "variance": "1d"}, (("n_pulls", "variance"),), ("delta",),
                    documented={"empty-n_pulls": Documented(_empty_float, "empty array", "no model: no radius")}))
    rows.append(Row("make_score_matrix", "bandits",
                    lambda n_models, n_examples, gap: bandits.make_score_matrix(n_models, n_examples, gap=gap,
                                                                                rank=2, random_state=0),
                    lambda: {"n_models": 5, "n_examples": 20, "gap": 0.05},
                    scalars=("n_models", "n_examples", "gap")))
    return rows


SIG = "sigmoid docstring: elementwise like scipy.special.expit"


def _lowrank_rows():
    miss = BIN.copy()
    miss[0, :5] = np.nan
    nan_ok = Documented(lambda r: r is not None, "NaN = unobserved cell", "docstring: NaN marks missing scores")
    V = RNG.normal(size=(40, 1))
    r, c = np.nonzero(RNG.uniform(size=(6, 8)) < 0.5)
    vals = RNG.uniform(size=len(r))
    return [
        Row("sigmoid", "bandits.lowrank", lowrank.sigmoid, lambda: {"x": np.array([-1.0, 0.0, 2.0])},
            {"x": "1d"}, documented={
                "nan-x": Documented(lambda r: np.isnan(r[0]) and r[1] == 0.5, "NaN stays NaN", SIG),
                "inf-x": Documented(lambda r: r[0] == 1.0, "+inf -> 1", SIG),
                "empty-x": Documented(_empty_float, "empty array", SIG),
                "shape-x": Documented(lambda r: r.shape == (3, 2), "elementwise, same shape", SIG)}),
        Row("fit_logistic_factors", "bandits.lowrank",
            lambda scores: lowrank.fit_logistic_factors(scores, rank=1, max_iter=5, random_state=0),
            lambda: {"scores": miss}, {"scores": "2d"}, documented={"nan-scores": nan_ok}),
        Row("fit_model_factors", "bandits.lowrank",
            lambda scores, example_factors: lowrank.fit_model_factors(scores, example_factors, max_iter=5),
            lambda: {"scores": miss, "example_factors": V}, {"scores": "2d", "example_factors": "2d"},
            documented={"nan-scores": nan_ok}),
        Row("als_ensemble", "bandits.lowrank",
            lambda scores: lowrank.als_ensemble(scores, n_members=4, n_sweeps=2, random_state=0),
            lambda: {"scores": np.where(np.isnan(miss), np.nan, miss * 0.8 + 0.1)}, {"scores": "2d"},
            documented={"nan-scores": nan_ok}),
        Row("ALSEnsemble", "bandits.lowrank",
            lambda rows, cols, values: lowrank.ALSEnsemble((6, 8), n_members=4, random_state=0)
            .observe(rows, cols, values) or None,
            lambda: {"rows": r, "cols": c, "values": vals},
            {"rows": "int", "cols": "int", "values": "1d"}, (("rows", "cols", "values"),),
            documented={"empty-rows": Documented(lambda x: x is None, "nothing observed", "observe docstring")}),
    ]


def _dataset_rows():
    def run_setting(setting, n_train):
        return make_score_setting(setting, n_train=n_train, n_estimators=2, random_state=0)

    return [
        Row("load_diamonds", "datasets", load_diamonds, lambda: {"return_X_y": True}),
        Row("load_letter", "datasets", load_letter, lambda: {"return_X_y": True}),
        Row("make_score_setting", "datasets", run_setting, lambda: {"setting": 1, "n_train": 50},
            scalars=("setting", "n_train")),
    ]


def _plot_rows():
    from sklearn_riskcontrol import plotting

    names = {"thresholds": r"thresholds"}
    axes = Documented(lambda r: type(r).__name__ == "Axes", "drawn (+inf = empty set, left out)",
                      "plot_thresholds docstring: +inf = empty set, left out of the line")
    doc = {"inf-thresholds": axes}

    tls = RNG.normal(size=30)
    tau = np.sort(RNG.normal(size=30))
    cand = RNG.dirichlet(np.ones(3), size=30)

    def closing(func):
        def run(**kw):
            import matplotlib.pyplot as plt

            try:
                return func(**kw)
            finally:
                plt.close("all")

        return run

    return [
        Row("plot_thresholds", "plotting", closing(lambda thresholds: plotting.plot_thresholds({"sps": thresholds})),
            lambda: {"thresholds": tau}, {"thresholds": "1d"}, names=names, documented=doc),
        Row("plot_coverage", "plotting",
            closing(lambda thresholds, true_label_scores, alpha: plotting.plot_coverage(
                {"sps": thresholds}, true_label_scores, alpha=alpha)),
            lambda: {"thresholds": tau, "true_label_scores": tls, "alpha": 0.1},
            {"thresholds": "1d", "true_label_scores": "1d"}, (("true_label_scores", "thresholds"),),
            ("alpha",), names=names, documented=doc),
        Row("plot_set_size", "plotting",
            closing(lambda thresholds, candidate_scores: plotting.plot_set_size({"sps": thresholds}, candidate_scores)),
            lambda: {"thresholds": tau, "candidate_scores": cand},
            {"thresholds": "1d", "candidate_scores": "2d"}, (("candidate_scores", "thresholds"),), names=names, documented=doc),
        Row("plot_regret", "plotting",
            closing(lambda thresholds, alpha: plotting.plot_regret({"sps": thresholds}, lambda t: 1 / (1 + np.exp(-t)), alpha)),
            lambda: {"thresholds": tau, "alpha": 0.1}, {"thresholds": "1d"}, levels=("alpha",), names=names, documented=doc),
        Row("plot_eprocess", "plotting",
            closing(lambda delta: plotting.plot_eprocess({"plus": autoeval.rautoeval_test(H, G, U, alpha=0.2, delta=0.1)},
                                                         delta=delta)),
            lambda: {"delta": 0.1}, levels=("delta",),
            extra=(("dtype", "result", closing(lambda: plotting.plot_eprocess({"plus": np.ones(3)}))),)),
        Row("plot_rho_weights", "plotting", closing(lambda result: plotting.plot_rho_weights(result)),
            lambda: {"result": autoeval.rautoeval_test(H, G, U, alpha=0.2, delta=0.1)},
            extra=(("dtype", "result", closing(lambda: plotting.plot_rho_weights(np.ones(3)))),)),
        Row("plot_evaluations_per_model", "plotting",
            closing(lambda strategy: plotting.plot_evaluations_per_model(strategy)),
            lambda: {"strategy": bandits.UCBE(budget=0.3, batch_size=4, random_state=0).fit(BIN)},
            unfitted=closing(lambda: plotting.plot_evaluations_per_model(bandits.UCBE()))),
    ]


def _studies_rows():
    from sklearn_riskcontrol import studies

    def draw(rng, n):
        X = rng.normal(size=(n, 4))
        return X, (X[:, 0] > 0).astype(int)

    def run_validity(n_repetitions, model=None):
        est = selective.SCoREMDR(model if model is not None else _clf(), alpha=0.2)
        return studies.validity_study(est, lambda rng: (*draw(rng, 40), *draw(rng, 10)),
                                      n_repetitions=n_repetitions, random_state=0)

    def run_bandit(scores, n_repetitions):
        return studies.bandit_accuracy_study({"uniform": bandits.UniformSampling(budget=0.5)}, scores,
                                             n_repetitions=n_repetitions, budgets=[10, 20], random_state=0)

    return [
        Row("monte_carlo", "studies",
            lambda n_repetitions: studies.monte_carlo(lambda rng: rng.uniform(), n_repetitions, random_state=0),
            lambda: {"n_repetitions": 3}, scalars=("n_repetitions",)),
        Row("validity_study", "studies", run_validity, lambda: {"n_repetitions": 2}, scalars=("n_repetitions",),
            unfitted=lambda: run_validity(2, model=FrozenEstimator(LogisticRegression()))),
        Row("bandit_accuracy_study", "studies", run_bandit, lambda: {"scores": BIN, "n_repetitions": 2},
            {"scores": "2d"}, scalars=("n_repetitions",)),
    ]


def build_table():
    return (_score_rows() + _testing_rows() + _bounds_rows() + _betting_rows() + _autoeval_array_rows()
            + _risk_metric_rows() + _online_rows() + _sps_row() + _selective_rows() + _autoeval_rows()
            + _bandit_rows() + _lowrank_rows() + _dataset_rows() + _plot_rows() + _studies_rows())


TABLE = build_table()
CELLS = [(row, cat, suf, thunk) for row in TABLE for cat, suf, thunk in cells(row)]


# ----------------------------------------------------------------------------------- tests


@pytest.mark.parametrize("row", TABLE, ids=[r.name for r in TABLE])
def test_good_call_runs(row):
    """The good call of every row succeeds, so each bad cell tests one perturbation only."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        row.run(**row.good())


@pytest.mark.parametrize(
    "row, category, suffix, thunk", CELLS, ids=[f"{r.name}-{c}-{s}" for r, c, s, _ in CELLS]
)
def test_bad_input_cell(row, category, suffix, thunk):
    result = outcome(row, category, suffix, thunk)
    ok, label = cell_ok(row, category, suffix, result)
    assert ok, label


# ------------------------------------------------------------------------------------ docs

DOC_PATH = Path(__file__).resolve().parents[2] / "doc" / "bad_inputs.rst"

_HEADER = """\
.. _bad_inputs:

Bad-input matrix
================

.. This page is generated by ``python tools/bad_input_matrix.py`` from the table in
   ``tests/package/test_bad_inputs.py``; ``test_doc_matches_table`` fails when they drift apart.

Every public function and estimator, fed each kind of bad input, either raises a
``ValueError`` / ``TypeError`` (``NotFittedError`` for an unfitted model) whose message names the
offending argument, or returns a documented, well-formed result (the library's error policy,
:ref:`conventions`). Each cell below is one or more calls run by ``tests/package/test_bad_inputs.py``,
which derives them from a valid call of the row by changing one argument:

* **NaN** / **+inf**: the first entry of a numeric argument (or a numeric scalar argument) is
  NaN / +inf.
* **empty**: a zero-length argument (aligned arguments are emptied together).
* **wrong ndim**: a 1-d argument given as 2-d ``(n, 2)``, a 2-d one as 3-d (or ``X`` as 1-d).
* **mismatched lengths**: one of several aligned arguments is one entry short.
* **wrong dtype**: complex numbers (NumPy would silently drop the imaginary part), or non-0/1
  floats where booleans or integer indices are expected.
* **strings**: an array of non-numeric strings, or a level passed as the string ``"0.1"``.
* **level out of (0, 1)**: ``alpha`` / ``delta`` / ``gamma`` set to 0, 1 and NaN.
* **unfitted model**: a method that needs a fitted estimator called before ``fit``, or an
  unfitted model passed where a fitted one is required.
* **renamed column**: the estimator is fitted on a DataFrame and called on one whose column
  ``d`` was renamed ``e``.

``ValueError`` / ``TypeError`` entries include scikit-learn's own messages where ``X`` is passed
untouched to the wrapped model (e.g. ``Input X contains NaN``) and its parameter validation
(``InvalidParameterError``, a ``ValueError``). "n/a" marks a category that does not apply to the
callable (no such argument). Result containers (``ConcentrationResult``, ``RAutoEvalResult``,
``RiskConfidenceInterval``, ``ModelSelectionResult``, ``BettingEProcess``,
``LowRankFactorization``, ``ScoreSetting``) are built by the library, not validated inputs, and
are not listed.
"""


def _short(label):
    return {"InvalidParameterError": "ValueError"}.get(label, label)


def cell_labels():
    """``{(row name, category): [labels]}`` for every cell, running the cells (cached)."""
    out = {}
    for row, category, suffix, thunk in CELLS:
        ok, label = cell_ok(row, category, suffix, outcome(row, category, suffix, thunk))
        if not ok:
            label = f"FAILS ({suffix})"
        elif label.startswith("documented"):
            label = f"documented ({suffix}): {label[len('documented: '):]}"
        else:
            label = _short(label)
        out.setdefault((row.name, category), []).append(label)
    return out


def render_rst():
    """The RST page of the matrix, one table per module."""
    labels = cell_labels()
    lines = [_HEADER]
    modules = list(dict.fromkeys(row.module for row in TABLE))
    n_cells = sum(len(v) for v in labels.values())
    lines.append(f"{len(TABLE)} callables x {len(CATEGORIES)} categories; {n_cells} calls.\n")
    notes = []
    for module in modules:
        title = f"``sklearn_riskcontrol.{module}``"
        lines += ["", title, "-" * len(title), "", ".. list-table::", "   :header-rows: 1", ""]
        lines.append("   * - callable")
        lines += [f"     - {CATEGORY_TITLES[c]}" for c in CATEGORIES]
        for row in (r for r in TABLE if r.module == module):
            lines.append(f"   * - ``{row.name}``")
            for c in CATEGORIES:
                cell = list(dict.fromkeys(labels.get((row.name, c), [])))
                lines.append(f"     - {'; '.join(cell) if cell else 'n/a'}")
            for key, doc in row.documented.items():
                notes.append(f"* ``{row.name}``, {key}: {doc.text} -- {doc.where}.")
    lines += ["", "Where the documented results are documented", "-------------------------------------------", ""]
    lines += notes
    lines += _render_run_layer()
    return "\n".join(lines) + "\n"


# Inputs of the run layer (sessions, stores, the command line) that once broke a guarantee, misled
# or crashed, each with the behaviour now and the test that checks it ("file::function").
RunCase = namedtuple("RunCase", "surface given behaviour test")
RUN_LAYER = [
    RunCase("LabelingSession / SelectionSession with store=", "a batch without example_ids",
            "ValueError naming example_ids (a re-sent batch would count twice); nothing stored",
            "autoeval/test_sessions.py::test_store_requires_example_ids"),
    RunCase("LabelingSession with store=", "a batch re-sent after a crash (from another process), "
            "reordered, or partially overlapping", "recorded ids skipped: the e-process is "
            "unchanged", "autoeval/test_sessions.py::"
            "test_resend_after_crash_in_another_process_never_changes_the_eprocess"),
    RunCase("LabelingSession status", "20 error-free labels", "no point estimate of the labels "
            "needed: a rough 80% range, or none until the labels bound it",
            "autoeval/test_sessions.py::"
            "test_labels_needed_no_point_estimate_from_twenty_error_free_labels"),
    RunCase("autoeval certify", "a model column holding several models", "one test and one "
            "output row per model (or --model NAME); never pooled",
            "faces/test_cli_messages.py::test_certify_never_pools_models"),
    RunCase("autoeval certify", "several models in --labeled, no model column in --unlabeled",
            "error (rc 2) naming the column and the models",
            "faces/test_cli_messages.py::test_certify_never_pools_models"),
    RunCase("autoeval certify / select", "one file whose unlabeled rows have an empty loss",
            "those rows are unlabeled (their judge losses are used)",
            "faces/test_cli_messages.py::test_certify_one_file_with_unlabeled_rows"),
    RunCase("autoeval certify", "a row with neither a loss nor a judge loss",
            "error (rc 2) naming the file, column and row",
            "faces/test_cli_messages.py::test_certify_one_file_with_unlabeled_rows"),
    RunCase("autoeval select", "an example labeled for some candidates only",
            "error (rc 2) naming the candidate and the example",
            "faces/test_cli_messages.py::test_select_one_long_file_with_unlabeled_rows"),
    RunCase("autoeval certify / select", "--method plus without unlabeled rows",
            "warning in command-line words; runs R-Eval",
            "faces/test_cli_messages.py::test_cli_messages_use_cli_words"),
    RunCase("bandits", "a long table whose models were scored on different examples",
            "warning with each model's and the common count; --common-examples compares on the "
            "common ones", "faces/test_cli_bandits.py::test_models_scored_on_different_examples"),
    RunCase("bandits --common-examples", "no example common to all models",
            "error (rc 2) naming the file",
            "faces/test_cli_bandits.py::test_models_scored_on_different_examples"),
    RunCase("MatrixOracle(missing='exclude') / from_long", "models with different examples",
            "RiskControlWarning with the counts",
            "faces/test_cli_bandits.py::test_python_oracle_warns_about_different_example_sets"),
    RunCase("PULSE, UCBE, UCBELRF, baselines, BestModelSelector, bandits", "a single model",
            "RiskControlWarning: nothing to choose",
            "bandits/test_pulse.py::test_a_single_model_is_not_silently_the_best"),
    RunCase("bandits --strategy ucbe", "(none: a true story)", "prints UCB-E's anytime-valid "
            "simultaneous intervals and their guarantee",
            "faces/test_cli_bandits.py::test_ucbe_prints_its_intervals"),
    RunCase("bandits --store", "a file that is not an evaluation store (CSV, another "
            "program's SQLite file)", "one error line naming the file, rc 2; the file is unchanged",
            "evaluation/test_store.py::test_cli_store_that_is_not_a_store_is_one_line_rc_2_and_unchanged"),
    RunCase("SQLiteStore, LabelingSession(store=)", "a directory, a missing folder, a corrupt "
            "file", "ValueError naming the file and SQLite's reason",
            "evaluation/test_store.py::test_sqlite_errors_are_value_errors_naming_the_file"),
    RunCase("any store", "another run's configuration", "ValueError leading with the keys that "
            "differ (stored and new values)",
            "evaluation/test_store.py::test_sqlite_store_refuses_another_run_naming_both_configs"),
    RunCase("bandits", "a repeated (model, example) row", "error (rc 2) suggesting "
            "--duplicates mean / last", "faces/test_cli_messages.py::test_bandits_duplicates_option"),
    RunCase("SemiBanditPredictionSet.partial_fit", "string labels with misses",
            "covered= mask, or None / pd.NA / NaN in y, marks the misses",
            "online/test_prediction_set.py::test_string_labels_give_the_thresholds_of_the_integer_coded_run"),
    RunCase("SemiBanditPredictionSet.partial_fit", "covered= of another length or not boolean",
            "ValueError naming covered", "online/test_prediction_set.py::test_covered_errors"),
    RunCase("SemiBanditPredictionSet.partial_fit", "covered=True on a row whose y is a miss "
            "marker", "ValueError naming the row",
            "online/test_prediction_set.py::test_covered_errors"),
    RunCase("GridSearchCV over alpha", "the default score (deployed share)",
            "documented: prefers the largest alpha; make_selective_scorer prices deployments",
            "selective/test_scorer.py::test_gridsearch_picks_alpha_by_error_cost"),
    RunCase("make_selective_scorer", "an estimator that is not selective",
            "TypeError naming its type", "selective/test_scorer.py::test_refuses_estimators_that_do_not_decide"),
]


def _render_run_layer():
    title = "Run layer and command line"
    lines = ["", title, "-" * len(title), "",
             "Sessions, stores and the command line take files and batches rather than arrays; "
             "each input below once broke a guarantee, misled or crashed. The test named in the "
             "last column checks the behaviour.", "", ".. list-table::", "   :header-rows: 1", "",
             "   * - where", "     - bad input", "     - behaviour", "     - test"]
    for case in RUN_LAYER:
        lines += [f"   * - {case.surface}", f"     - {case.given}", f"     - {case.behaviour}",
                  f"     - ``{case.test}``"]
    return lines


def test_run_layer_rows_name_real_tests():
    """Every row of the run-layer table names a test function that exists."""
    for case in RUN_LAYER:
        path, name = case.test.split("::")
        tree = ast.parse((Path(__file__).resolve().parents[1] / path).read_text())  # tests/
        names = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
        assert name in names, case.test


def test_doc_matches_table():
    """doc/bad_inputs.rst is exactly what the table produces (regenerate with the tool)."""
    assert DOC_PATH.read_text() == render_rst(), "run `python tools/bad_input_matrix.py`"
