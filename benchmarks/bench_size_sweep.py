"""Size sweep of every public path: time and peak memory against size, with log-log slopes.

For each public path (estimators' ``fit`` / ``decide`` / ``predict_set`` / ``partial_fit`` /
confidence intervals, and the array-layer functions users call) one size parameter (rows,
labels, rounds, examples: the ``unit`` column) is swept over a geometric grid of 4 sizes spanning
27x. Every size runs in a fresh subprocess, so the peaks are the run's own:

* the inputs are built first and the path is run once at a tiny size (imports, caches), none of
  which is measured;
* ``time`` = min over ``--repeat`` calls (default 3; 1 with ``--quick``);
* ``RSS MB`` = peak resident memory during those calls minus the resident memory before them
  (the peak is reset with ``/proc/self/clear_refs`` where Linux allows it, otherwise
  ``ru_maxrss`` minus its value before the calls);
* ``traced MB`` = ``tracemalloc`` peak of one more call (the Python and NumPy allocations of
  the call alone; deterministic, so the memory slope is fitted to it).

Slopes are least-squares fits of ``log(time)`` and ``log(traced MB)`` against ``log(size)``:
1 = linear, 2 = quadratic; fixed costs pull slopes below 1 at small sizes, so ``last`` also
gives the slope between the two largest sizes. A time slope above 1.15 is flagged
``NOT near-linear``. Two reference rows (``x.cumsum()`` and ``np.sort(x)``) show what a
linear and an n log n NumPy call give on this machine at the same sizes: memory bandwidth and
caches already push plain linear work above 1 once arrays outgrow the caches. Sizes are chosen
so that the largest run takes well under 5 s today. BLAS runs on one thread (``n_jobs`` stays
at its default), so the slopes describe the algorithms, not thread contention. ``--quick`` (a
smoke test of every path) measures 2 tiny sizes per path in this one process instead: its
peak RSS then leaves out memory reused from earlier paths, and its slopes mean little. Before
measuring, the script checks its slope fit, flag and size grids on known inputs (``self_check``;
an error ends it).

    python benchmarks/bench_size_sweep.py                      # every path (a few minutes)
    python benchmarks/bench_size_sweep.py --paths SCoRE,ebh    # paths whose name contains one
    python benchmarks/bench_size_sweep.py --quick              # 2 tiny sizes, one process
    python benchmarks/bench_size_sweep.py --out sweep.md       # also write the Markdown table
"""

import argparse
import copy
import gc
import json
import os
import resource
import subprocess
import sys
import time
import tracemalloc
from functools import lru_cache

import numpy as np

SLOPE_FLAG = 1.15
R_UNLABELED = 5  # unlabeled rows per label for R-AutoEval+ (the r = 5)
N_MODELS = 100  # bandits: models (rows of the score matrix); the size is the examples

CASES = {}  # name -> (unit, sizes of the full sweep, sizes of --quick, setup)


def case(name, unit, top, low=100, span=27):
    """Register ``setup(size) -> run``: ``setup`` builds the inputs (not timed), ``run()`` is
    the timed call. Full sweep: 4 sizes from ``top / span`` to ``top`` in geometric steps;
    ``--quick``: ``low, 3 low``."""

    def register(setup):
        sizes = tuple(int(round(top / span ** (k / 3))) for k in (3, 2, 1, 0))
        CASES[name] = (unit, sizes, (low, 3 * low), setup)
        return setup

    return register


def loglog_slope(sizes, values):
    """Least-squares slope of ``log(values)`` against ``log(sizes)``.

    Pairs with a non-positive or non-finite value are left out; NaN when fewer than two remain.

    Examples
    --------
    >>> round(loglog_slope([10, 100, 1000], [2.0, 200.0, 20000.0]), 6)
    2.0
    """
    x, y = np.asarray(sizes, dtype=float), np.asarray(values, dtype=float)
    keep = (x > 0) & (y > 0) & np.isfinite(y)
    if keep.sum() < 2:
        return float("nan")
    return float(np.polyfit(np.log(x[keep]), np.log(y[keep]), 1)[0])


# ------------------------------------------------------------------------------ inputs
def _rng(seed=0):
    return np.random.default_rng(seed)


def _rows(n, n_classes=2, seed=0):
    """Features and labels from a noisy linear rule (cheap to draw at any size)."""
    rng = _rng(seed)
    X = rng.normal(size=(n, 5))
    latent = X @ np.array([1.0, 0.5, -0.5, 0.25, 0.0]) + rng.normal(scale=0.7, size=n)
    edges = np.quantile(latent, np.linspace(0, 1, n_classes + 1)[1:-1])
    return X, np.searchsorted(edges, latent)


@lru_cache(maxsize=None)
def _model(n_classes=2, seed=0, C=1.0):
    from sklearn.linear_model import LogisticRegression

    return LogisticRegression(C=C).fit(*_rows(2000, n_classes, seed=100 + seed))


def _score_arrays(n):
    """Calibration risks/scores and test scores for the SCoRE array layer (n = m)."""
    rng = _rng()
    S = rng.random(n)
    return (rng.random(n) < S).astype(float), S, rng.random(n)


def _losses(n, n_models=None):
    """Labeled losses, judge's losses on them and on ``R_UNLABELED * n`` unlabeled rows."""
    rng = _rng()
    shape = (n,) if n_models is None else (n_models, n)
    risk = 0.1 if n_models is None else np.linspace(0.05, 0.3, n_models)[:, None]
    h = (rng.random(shape) < risk).astype(float)
    g = np.where(rng.random(shape) < 0.9, h, 1 - h)
    u_shape = shape[:-1] + (R_UNLABELED * n,)
    u = np.where(rng.random(u_shape) < 0.9, rng.random(u_shape) < risk,
                 rng.random(u_shape) >= risk).astype(float)
    return h, g, u


def _semi_rows(n_labeled):
    """Rows for the R-AutoEval+ estimators: ``n_labeled`` labels, the others ``y = -1``."""
    X, y = _rows((1 + R_UNLABELED) * n_labeled, seed=1)
    y[n_labeled:] = -1  # rows are i.i.d., so the first ones are a random labeled subset
    return X, y


def _matrix(n_examples, side=False):
    from sklearn_riskcontrol.bandits import make_score_matrix

    return make_score_matrix(N_MODELS, n_examples, n_side_models=N_MODELS if side else 0,
                             random_state=0)


# ------------------------------------------------------------------------------- paths
@case("reference: x.cumsum() (linear floor)", "floats", 10**7)
def _(n):
    x = _rng().random(n)
    return x.cumsum


@case("reference: np.sort(x) (n log n floor)", "floats", 3 * 10**6)
def _(n):
    x = _rng().random(n)
    return lambda: np.sort(x)


def _selective(cls, n):
    Xc, yc = _rows(n, seed=1)
    Xt, _ = _rows(n, seed=2)
    return lambda: cls(_model(), alpha=0.1).fit(Xc, yc).decide(Xt)


@case("SCoREMDR fit+decide", "rows", 10**6, low=200)
def _(n):
    from sklearn_riskcontrol.selective import SCoREMDR

    return _selective(SCoREMDR, n)


@case("SCoRESDR fit+decide", "rows", 10**6, low=200)
def _(n):
    from sklearn_riskcontrol.selective import SCoRESDR

    return _selective(SCoRESDR, n)


@case("ConcentrationMDR fit+decide", "rows", 10**6, low=200)
def _(n):
    from sklearn_riskcontrol.selective import ConcentrationMDR

    return _selective(ConcentrationMDR, n)


@case("ConcentrationSDR fit+decide", "rows", 10**6, low=200)
def _(n):
    from sklearn_riskcontrol.selective import ConcentrationSDR

    return _selective(ConcentrationSDR, n)


@case("mdr_decisions", "rows", 10**6)
def _(n):
    from sklearn_riskcontrol.selective import mdr_decisions

    L, S, T = _score_arrays(n)
    return lambda: mdr_decisions(L, S, T, 0.1)


@case("mdr_evalues", "rows", 10**6)
def _(n):
    from sklearn_riskcontrol.selective import mdr_evalues

    L, S, T = _score_arrays(n)
    return lambda: mdr_evalues(L, S, T, 0.1)


@case("sdr_evalues", "rows", 10**6)
def _(n):
    from sklearn_riskcontrol.selective import sdr_evalues

    L, S, T = _score_arrays(n)
    return lambda: sdr_evalues(L, S, T, 0.1)


@case("ebh", "e-values", 3 * 10**6)
def _(n):
    from sklearn_riskcontrol.evalues.testing import ebh

    e = _rng().exponential(size=n) * (_rng(1).random(n) < 0.1) * 50
    return lambda: ebh(e, 0.1)


@case("boost_evalues hete", "e-values", 3 * 10**6)
def _(n):
    from sklearn_riskcontrol.evalues.testing import boost_evalues

    e = _rng().exponential(size=n)
    return lambda: boost_evalues(e, "hete", random_state=0)


@case("bh, bonferroni, fixed_sequence", "p-values", 3 * 10**6)
def _(n):
    from sklearn_riskcontrol.evalues.testing import bh, bonferroni, fixed_sequence

    p = _rng().random(n) ** 3
    return lambda: (bh(p, 0.1), bonferroni(p, 0.1), fixed_sequence(p, 0.1))


@case("rautoeval_test wsr", "labels", 3 * 10**5)
def _(n):
    from sklearn_riskcontrol.autoeval import rautoeval_test

    h, g, u = _losses(n)
    return lambda: rautoeval_test(h, g, u, alpha=0.2, delta=0.1, betting="wsr")


@case("rautoeval_test up", "labels", 10**4)
def _(n):
    from sklearn_riskcontrol.autoeval import rautoeval_test

    h, g, u = _losses(n)
    return lambda: rautoeval_test(h, g, u, alpha=0.2, delta=0.1, betting="up")


@case("rautoeval_select (4 models, up)", "labels", 3000)
def _(n):
    from sklearn_riskcontrol.autoeval import rautoeval_select

    h, g, u = _losses(n, n_models=4)
    return lambda: rautoeval_select(h, g, u, alpha=0.2, delta=0.1)


@case("rautoeval_confidence_interval", "labels", 10**5)
def _(n):
    from sklearn_riskcontrol.autoeval import rautoeval_confidence_interval

    h, g, u = _losses(n)
    return lambda: rautoeval_confidence_interval(h, g, u, delta=0.1)


def _per_label(rows):
    """Labels when ``rows`` counts labeled and unlabeled rows (``R_UNLABELED`` per label)."""
    return max(rows // (1 + R_UNLABELED), 2)


@case("rautoeval_difference_interval (2 models)", "rows", 12 * 10**5, low=600)
def _(rows):
    from sklearn_riskcontrol.autoeval import rautoeval_difference_interval

    n = _per_label(rows)
    (ha, ga, ua), (hb, gb, ub) = _losses(n), _losses(n)
    hb, gb, ub = 1 - hb, 1 - gb, 1 - ub  # a second model, risk 0.9
    return lambda: rautoeval_difference_interval(np.c_[ha, hb], np.c_[ga, gb], np.c_[ua, ub],
                                                 delta=0.1)


@case("rautoeval_confidence_interval (2 judges)", "rows", 12 * 10**5, low=600)
def _(rows):
    from sklearn_riskcontrol.autoeval import rautoeval_confidence_interval

    h, g, u = _losses(_per_label(rows))
    g2 = np.where(_rng(1).random(g.size) < 0.8, h, 1 - h)
    u2 = _rng(2).permutation(u)
    return lambda: rautoeval_confidence_interval(h, np.c_[g, g2], np.c_[u, u2], delta=0.1)


@case("rautoeval_confidence_interval (clusters of 25)", "rows", 12 * 10**5, low=600)
def _(rows):
    from sklearn_riskcontrol.autoeval import rautoeval_confidence_interval

    h, g, u = _losses(_per_label(rows))
    groups, groups_u = np.arange(h.size) // 25, np.arange(u.size) // 25 + h.size
    return lambda: rautoeval_confidence_interval(h, g, u, delta=0.1, groups_labeled=groups,
                                                 groups_unlabeled=groups_u)


@case("RiskMonitor.fit (judge, 10% labeled)", "rows", 10**6, low=1000)
def _(rows):
    from sklearn_riskcontrol.autoeval import RiskMonitor

    rng = _rng()
    h = (rng.random(rows) < 0.05).astype(float)
    g = np.where(rng.random(rows) < 0.9, h, 1 - h)
    labels = np.where(rng.random(rows) < 0.1, h, np.nan)
    return lambda: RiskMonitor(alpha=0.1, delta=0.1, label_rate=0.1).fit(g, labels)


@case("RAutoEvalPlus fit+decide (up)", "labels", 10**4)
def _(n):
    from sklearn_riskcontrol.autoeval import RAutoEvalPlus

    X, y = _semi_rows(n)
    est = RAutoEvalPlus(_model(), autoevaluator=_model(seed=1), alpha=0.3, delta=0.1,
                        random_state=0)
    return lambda: est.fit(X, y).decide()


@case("RAutoEvalPlus.confidence_interval", "labels", 10**5)
def _(n):
    from sklearn_riskcontrol.autoeval import RAutoEvalPlus

    X, y = _semi_rows(n)
    est = RAutoEvalPlus(_model(), autoevaluator=_model(seed=1), alpha=0.3, delta=0.1,
                        betting="wsr", random_state=0).fit(X, y)
    return lambda: est.confidence_interval()


@case("RiskControlledModelSelector fit (4 models, up)", "labels", 3000)
def _(n):
    from sklearn_riskcontrol.autoeval import RAutoEvalPlus, RiskControlledModelSelector

    X, y = _semi_rows(n)
    models = [_model(C=C) for C in (1.0, 0.1, 0.01, 0.001)]
    tester = RAutoEvalPlus(None, autoevaluator=_model(seed=1), alpha=0.3, delta=0.1,
                           random_state=0)
    return lambda: RiskControlledModelSelector(models, tester=tester).fit(X, y).decide()


@case("SemiBanditPredictionSet streaming (batch 1000)", "rounds", 3 * 10**5, low=1000)
def _(n):
    from sklearn_riskcontrol.online import SemiBanditPredictionSet

    X0, y0 = _rows(200, n_classes=10, seed=1)
    fitted = SemiBanditPredictionSet(_model(10), alpha=0.2).fit(X0, y0)
    X, y = _rows(n, n_classes=10, seed=2)
    batches = [slice(i, i + 1000) for i in range(0, n, 1000)]

    def run():
        sps = copy.deepcopy(fitted)  # the stream changes the estimator: start each call afresh
        for b in batches:
            sets = sps.predict_set(X[b])
            yb = y[b]
            sps.partial_fit(X[b], np.where(sets[np.arange(yb.size), yb], yb, -1))
        return sps

    return run


@case("SemiBanditPredictionSet fit (replay)", "rounds", 5 * 10**5)
def _(n):
    from sklearn_riskcontrol.online import SemiBanditPredictionSet

    X, y = _rows(n, n_classes=10, seed=2)
    return lambda: SemiBanditPredictionSet(_model(10), alpha=0.2).fit(X, y)


@case("simulate_thresholds (sps)", "rounds", 3 * 10**6)
def _(n):
    from sklearn_riskcontrol.online import simulate_thresholds

    s = _rng().standard_normal(n)
    return lambda: simulate_thresholds(s, 0.1)


def _bandit(make, n, side=False):
    data = _matrix(n, side)
    side_scores = data.side_scores if side else None
    return lambda: make().fit(data.scores, side_scores=side_scores)


@case(f"PULSE fit ({N_MODELS} models + {N_MODELS} side, batch 32)", "examples", 4000, low=400,
      span=10)
def _(n):
    from sklearn_riskcontrol.bandits import PULSE

    # batch 32 halves the warm-up (batch_size examples of every model), so 400 examples fit
    return _bandit(lambda: PULSE(budget=0.1, batch_size=32, random_state=0), n, side=True)


@case(f"UCBE fit ({N_MODELS} models)", "examples", 30000, low=700)
def _(n):
    from sklearn_riskcontrol.bandits import UCBE

    return _bandit(lambda: UCBE(budget=0.1, random_state=0), n)


@case(f"UCBELRF fit ({N_MODELS} models)", "examples", 1500, low=200, span=10)
def _(n):
    from sklearn_riskcontrol.bandits import UCBELRF

    return _bandit(lambda: UCBELRF(budget=0.1, random_state=0), n)


@case(f"UniformSampling fit ({N_MODELS} models)", "examples", 30000, low=700)
def _(n):
    from sklearn_riskcontrol.bandits import UniformSampling

    return _bandit(lambda: UniformSampling(budget=0.1, random_state=0), n)


@case(f"NaivePooling fit ({N_MODELS} models + {N_MODELS} side, batch 32)", "examples", 4000,
      low=400, span=10)
def _(n):
    from sklearn_riskcontrol.bandits import NaivePooling

    return _bandit(lambda: NaivePooling(budget=0.1, batch_size=32, random_state=0), n, side=True)


@case(f"LowRankScoreCompleter fit_transform ({N_MODELS} models, 10 sweeps)", "examples",
      6000, low=200)
def _(n):
    from sklearn_riskcontrol.bandits import LowRankScoreCompleter

    S = _matrix(n).scores.copy()
    S[_rng().random(S.shape) < 0.6] = np.nan
    # tol=0 fixes the number of sweeps, so the slope is the cost per sweep
    return lambda: LowRankScoreCompleter(max_iter=10, tol=0.0, random_state=0).fit_transform(S)


@case("BestModelSelector fit (5 models, default PULSE)", "rows", 6000, low=200)
def _(n):
    from sklearn_riskcontrol.bandits import BestModelSelector

    X, y = _rows(n, seed=3)
    models = [_model(C=C) for C in (1.0, 0.1, 0.01, 0.001, 0.0001)]
    return lambda: BestModelSelector(models, random_state=0).fit(X, y)


@case("metrics: realized_mdr/sdr, deployment_rate, realized_reward", "rows", 10**7)
def _(n):
    from sklearn_riskcontrol import selective as metrics

    rng = _rng()
    risks, deployed = rng.random(n), rng.random(n) < 0.7
    return lambda: (metrics.realized_mdr(risks, deployed), metrics.realized_sdr(risks, deployed),
                    metrics.deployment_rate(deployed), metrics.realized_reward(risks, deployed))


@case("metrics: coverage, set size, undercoverage, regret, oracle", "rounds", 10**6)
def _(n):
    from sklearn_riskcontrol import online as metrics
    from sklearn_riskcontrol.online import simulate_thresholds

    rng = _rng()
    cand = rng.random((n, 10))
    true = cand[np.arange(n), rng.integers(0, 10, n)]
    tau = simulate_thresholds(true, 0.2)
    tau_star = metrics.oracle_threshold(true, 0.2)

    def run():
        return (metrics.coverage_rate(true, tau), metrics.average_set_size(cand, tau),
                metrics.undercoverage_count(tau, tau_star),
                metrics.cumulative_regret(tau, true, 0.2), metrics.oracle_threshold(true, 0.2))

    return run


# -------------------------------------------------------------------------- measurement
def _status_kb(field):
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise OSError(field)


def _peak_probe():
    """Return ``peak_kb()``: peak resident kB since this call minus resident kB at this call."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")  # reset VmHWM to the current RSS
        rss0 = _status_kb("VmRSS")
        return lambda: _status_kb("VmHWM") - rss0
    except OSError:  # no /proc: ru_maxrss (kB on Linux) only grows, so this is a lower bound
        max0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - max0


_WARM = set()  # paths already run in this process (--quick): warmed up once


def measure_here(name, size, repeat, freeze=False):
    """Measure one (path, size) in this process; returns seconds, rss_mb, traced_mb.

    ``freeze`` (``--quick``, every path in one process): after the collection before the
    measurement, move the surviving objects to the permanent generation (``gc.freeze``), so
    that the next paths' collections do not scan the imported libraries again (0.1 s each).
    """
    import warnings

    from sklearn_riskcontrol import RiskControlWarning

    from threadpoolctl import threadpool_limits

    warnings.simplefilter("ignore", RiskControlWarning)  # e.g. "nothing certified" at tiny n
    # one BLAS thread: slopes of the algorithm, not of thread contention with the machine's load
    threadpool_limits(1)
    _, _, quick, setup = CASES[name]
    if name not in _WARM:  # imports, caches and first-call costs outside the measurement
        setup(quick[0])()
        _WARM.add(name)
    run = setup(size)
    gc.collect()
    if freeze:
        gc.freeze()
    peak_kb = _peak_probe()
    seconds = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        run()
        seconds.append(time.perf_counter() - t0)
    rss_mb = peak_kb() / 1024
    gc.collect()
    tracemalloc.start()
    run()
    traced_mb = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    return {"seconds": min(seconds), "rss_mb": rss_mb, "traced_mb": traced_mb}


def child(name, size, repeat):
    """Measure one (path, size) in this process and print one line of JSON."""
    print(json.dumps(measure_here(name, size, repeat)))


def measure(name, size, repeat=3):
    """Run one (path, size) in a fresh interpreter; returns seconds, rss_mb, traced_mb."""
    cmd = [sys.executable, os.path.abspath(__file__), "--child", name, str(size),
           "--repeat", str(repeat)]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        lines = proc.stderr.strip().splitlines()
        raise RuntimeError(f"{name} at size {size}: {lines[-1] if lines else proc.returncode}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _measure_in_process(name, size, repeat):
    try:
        return measure_here(name, size, repeat, freeze=True)
    except Exception as exc:  # reported like a failed fresh interpreter
        raise RuntimeError(f"{name} at size {size}: {type(exc).__name__}: {exc}") from exc


def sweep(name, sizes, repeat=3, fresh=True):
    """Measure every size of one path, each in a fresh interpreter (``fresh``) or all in this
    one; returns its table row as a dict."""
    runs = [(measure if fresh else _measure_in_process)(name, s, repeat) for s in sizes]
    times = [r["seconds"] for r in runs]
    traced = [r["traced_mb"] for r in runs]
    return {"path": name, "unit": CASES[name][0], "sizes": list(sizes), "seconds": times,
            "rss_mb": [r["rss_mb"] for r in runs], "traced_mb": traced,
            "time_slope": loglog_slope(sizes, times),
            "time_slope_last": loglog_slope(sizes[-2:], times[-2:]),
            "mem_slope": loglog_slope(sizes, traced)}


HEADER = ("| path | unit | sizes | time (s) | peak RSS MB | traced MB | time slope | last | "
          "mem slope | flag |\n|---|---|---|---|---|---|---|---|---|---|")


def _join(values, fmt):
    return ", ".join(format(v, fmt) for v in values)


def format_row(row):
    flag = "NOT near-linear" if row["time_slope"] > SLOPE_FLAG else ""
    return (f"| {row['path']} | {row['unit']} | {_join(row['sizes'], '.3g')} | "
            f"{_join(row['seconds'], '.3g')} | {_join(row['rss_mb'], '.1f')} | "
            f"{_join(row['traced_mb'], '.3g')} | {row['time_slope']:.2f} | "
            f"{row['time_slope_last']:.2f} | {row['mem_slope']:.2f} | {flag} |")


def self_check():
    """Check the slope fit, the flag and the size grids on known inputs; raise if one is wrong.

    Run before any measurement: a wrong helper would make every row of the table wrong.
    """
    sizes = [370, 1111, 3333, 10000]
    for exponent in (0.5, 1.0, 1.15, 2.0, 2.3):  # an exact power law gives its exponent
        slope = loglog_slope(sizes, [4.2e-7 * n**exponent for n in sizes])
        assert abs(slope - exponent) < 1e-10, (exponent, slope)
    # the least-squares slope: normal equations of y = a + b x in log space
    x = np.log(np.geomspace(100, 3000, 4))
    y = np.log(0.01) + 1.3 * x + np.array([0.13, -0.21, 0.05, 0.17])
    expected = np.sum((x - x.mean()) * (y - y.mean())) / np.sum((x - x.mean()) ** 2)
    slope = loglog_slope(np.exp(x), np.exp(y))
    assert abs(slope - expected) <= 1e-12 * abs(expected), (slope, expected)
    # zero (e.g. no measurable RSS growth) and NaN are left out, not taken as log(0)
    assert abs(loglog_slope([10, 20, 40, 80], [0.0, 2.0, np.nan, 8.0]) - 1.0) < 1e-12
    assert np.isnan(loglog_slope([10, 20], [0.0, 5.0]))
    row = {"path": "p", "unit": "rows", "sizes": [10, 100], "seconds": [0.1, 1.0],
           "rss_mb": [1.0, 2.0], "traced_mb": [1.0, 10.0], "time_slope": SLOPE_FLAG,
           "time_slope_last": 1.0, "mem_slope": 1.0}
    assert "NOT near-linear" not in format_row(row)
    assert "NOT near-linear" in format_row({**row, "time_slope": SLOPE_FLAG + 0.01})
    for name, (_, full, quick, _) in CASES.items():
        # 4 geometric sizes spanning 10-30x; --quick: (low, 3 low) within the full range
        ratios = np.diff(np.log(full))
        assert len(full) == 4 and np.allclose(ratios, ratios[0], atol=0.01), name
        assert 10 <= full[-1] / full[0] <= 30, name
        assert quick[1] == 3 * quick[0] and quick[1] <= full[-1], name


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true",
                    help="2 tiny sizes per path, all measured in this process (smoke test)")
    ap.add_argument("--paths", default="",
                    help="comma-separated substrings; run the paths whose name contains one")
    ap.add_argument("--repeat", type=int, default=None,
                    help="time = min over this many calls (default 3; 1 with --quick)")
    ap.add_argument("--out", help="also write the Markdown table to this file")
    ap.add_argument("--child", nargs=2, metavar=("PATH", "SIZE"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    args.repeat = args.repeat or (1 if args.quick else 3)
    if args.child:
        child(args.child[0], int(args.child[1]), args.repeat)
        return
    wanted = [p.strip().lower() for p in args.paths.split(",") if p.strip()]
    names = [n for n in CASES if not wanted or any(w in n.lower() for w in wanted)]
    if not names:
        ap.error(f"--paths {args.paths!r} matches no path; paths: {', '.join(CASES)}")
    self_check()
    print("self-check passed: slope fit, flag, size grids")
    load = os.getloadavg()
    header = (f"Size sweep ({'quick, in one process' if args.quick else 'full'}): "
              f"{os.cpu_count()} cores, "
              f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}, numpy {np.__version__}, "
              f"time = min of {args.repeat}; flag: time slope > {SLOPE_FLAG}")
    print(header)
    print(HEADER, flush=True)
    t_all, rows, failed = time.perf_counter(), [], []
    for name in names:
        try:
            rows.append(sweep(name, CASES[name][2 if args.quick else 1], args.repeat,
                              fresh=not args.quick))
        except RuntimeError as exc:  # report it and go on with the other paths
            failed.append(str(exc))
            print(f"| {name} | FAILED: {exc} |", flush=True)
            continue
        print(format_row(rows[-1]), flush=True)
    flagged = [r["path"] for r in rows if r["time_slope"] > SLOPE_FLAG]
    load = os.getloadavg()
    footer = (f"Not near-linear (time slope > {SLOPE_FLAG}): {', '.join(flagged) or 'none'}\n"
              f"Failed: {'; '.join(failed) or 'none'}\n"
              f"total {time.perf_counter() - t_all:.0f} s; load average at end "
              f"{load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    print("\n" + footer)
    if args.out:
        with open(args.out, "w") as fh:
            fh.write("\n".join([header, "", HEADER, *map(format_row, rows), "", footer]) + "\n")
    if failed:
        sys.exit(1)


if __name__ == "__main__":
    main()
