"""Speed of the exact SCoRE e-values against plain baselines, in one process.

Cases (sizes adjustable, see ``--help``):

a. ``sdr_evalues`` with n = m = 10^6 against one ``np.sort`` of the 2 * 10^6 scores
   (target: within 6x of the sort) and against the previous implementation (one argsort of all
   n + m scores, kept in ``tests/_score_reference.py``); e-values must be identical.
b. ``sdr_evalues`` against the paper's Algorithm 3 at n = m = 2000, written plainly from the
   pseudocode (Algorithm 5): the literal pure-Python loops and the same algorithm with each test
   point's inner loop vectorised by NumPy (target >= 1000x; e-values must agree).
c. weighted ``sdr_evalues`` with n = m = 10^5 (target < 2 s) against Algorithm 4 (vectorised per
   test point) on a smaller size, extrapolated by its O(m (n + m)) cost; e-values must agree.
d. ``mdr_decisions`` with n = m = 10^6 (target < 1 s) against a plain loop over test points
   (Prop. 4.4 evaluated with one O(n) pass per point) on a subset, extrapolated to all points.
e. ``SCoRESDR(...).fit(X_cal, y_cal).decide(X_test)`` around a fitted ``LogisticRegression``
   with n = m = 10^6 rows, against its floor: the model's predictions it needs (``predict`` and
   ``predict_proba`` on the calibration rows, ``predict_proba`` on the test rows) plus one
   ``np.sort`` of the n + m scores (target: within 1.5x of the floor).

Times are the best of ``--repeat`` runs with ``time.perf_counter``; absolute numbers are noisy on
shared machines, the printed ratios are what to compare.

    python benchmarks/selective_speed.py            # all cases, default sizes
    python benchmarks/selective_speed.py --quick    # smaller sizes, a few seconds
"""

import argparse
import sys
import time
from pathlib import Path

import os

import numpy as np
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from _score_reference import algorithm3, algorithm3_numpy, previous_sdr_evalues  # noqa: E402

from sklearn_riskcontrol.selective import SCoRESDR  # noqa: E402
from sklearn_riskcontrol.selective import mdr_decisions, sdr_evalues  # noqa: E402

from _common import met  # noqa: E402 (benchmarks/ is on sys.path when run as a script)


def best_time(fn, repeat):
    """Best wall time of ``repeat`` calls and the last result."""
    best, out = np.inf, None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def best_times(fns, repeat):
    """Best wall time of each function, the runs interleaved (same machine load), and results."""
    best, out = [np.inf] * len(fns), [None] * len(fns)
    for _ in range(repeat):
        for i, fn in enumerate(fns):
            t0 = time.perf_counter()
            out[i] = fn()
            best[i] = min(best[i], time.perf_counter() - t0)
    return best, out


def make_data(rng, n, m, weighted=False):
    """Regression-style data: risk grows with x, the score is a noisy estimate of x."""
    x = rng.uniform(-1, 1, size=n + m)
    risk = np.clip(0.5 * (x + 1) ** 2 / 2 + 0.1 * rng.normal(size=n + m), 0, 1)
    score = x + 0.3 * rng.normal(size=n + m)
    data = dict(cal_risks=risk[:n], cal_scores=score[:n], test_scores=score[n:])
    if weighted:  # covariate shift w(x) = sigmoid(theta x), as in the paper's simulations
        w = 1 / (1 + np.exp(-1.5 * x))
        data.update(cal_weights=w[:n], test_weights=w[n:])
    return data


def check_same(ours, ref, what):
    ref = np.asarray(ref, dtype=float)
    if not (np.array_equal(ours == 0, ref == 0) and np.allclose(ours, ref, rtol=1e-9, atol=0)):
        bad = np.flatnonzero(~np.isclose(ours, ref, rtol=1e-9, atol=0))
        raise AssertionError(f"{what}: e-values differ at {bad[:10]} ({bad.size} entries)")


ROWS = []


def row(case, size, ours, base, baseline, target, ok, ratio=None):
    """One table line; ``ratio`` defaults to the speed-up baseline / ours."""
    ratio = f"{base / ours:,.0f}x faster" if ratio is None else ratio
    ROWS.append((case, size, ours, base, baseline, ratio, target, ok))


def case_a(args, rng):
    n = m = args.n_big
    d = make_data(rng, n, m)
    gamma = 0.2
    allscores = np.concatenate([d["cal_scores"], d["test_scores"]])
    L, S, T = d["cal_risks"], d["cal_scores"], d["test_scores"]
    (t_ours, t_sort, t_prev), (e, _, e_prev) = best_times(
        [lambda: sdr_evalues(gamma=gamma, **d), lambda: np.sort(allscores),
         lambda: previous_sdr_evalues(L, S, T, gamma)], args.repeat)
    if not np.array_equal(e, e_prev):
        raise AssertionError("sdr_evalues differs from the previous implementation")
    row("a. sdr_evalues", f"n=m={n:.0e}", t_ours, t_sort, "np.sort of the n+m scores",
        "<=6x sort", t_ours <= 6 * t_sort, ratio=f"{t_ours / t_sort:.1f}x sort")
    row("a. sdr_evalues", f"n=m={n:.0e}", t_ours, t_prev, "previous (argsort of n+m)",
        "faster", t_ours < t_prev, ratio=f"{t_prev / t_ours:.1f}x faster")
    print(f"   (a) deployable fraction at gamma={gamma}: {(e > 0).mean():.3f}; e-values identical "
          "to the previous implementation")


def case_b(args, rng):
    n = m = args.n_alg3
    d = make_data(rng, n, m)
    gamma = 0.2
    t_ours, e = best_time(lambda: sdr_evalues(gamma=gamma, **d), max(args.repeat, 5))
    lists = {k: v.tolist() for k, v in d.items()}
    t_lit, ref = best_time(lambda: algorithm3(gamma=gamma, **lists), 1)
    check_same(e, ref, "Algorithm 3 (literal)")
    t_vec, ref2 = best_time(lambda: algorithm3_numpy(gamma=gamma, **d), args.repeat)
    check_same(e, ref2, "Algorithm 3 (vectorised)")
    row("b. sdr_evalues", f"n=m={n}", t_ours, t_lit, "Alg. 3 literal loops", ">=1000x",
        t_lit / t_ours >= 1000)
    row("b. sdr_evalues", f"n=m={n}", t_ours, t_vec, "Alg. 3 numpy per j", ">=1000x",
        t_vec / t_ours >= 1000)
    print(f"   (b) e-values identical to Algorithm 3 (rtol 1e-9); "
          f"non-zero fraction {(e > 0).mean():.3f}")


def case_c(args, rng):
    n = m = args.n_weighted
    d = make_data(rng, n, m, weighted=True)
    gamma = 0.2
    t_ours, e = best_time(lambda: sdr_evalues(gamma=gamma, **d), args.repeat)
    # Algorithm 4 on a smaller problem, checked for agreement, then extrapolated by m (n + m).
    ns = args.n_alg4
    ds = make_data(rng, ns, ns, weighted=True)
    t_small, ref = best_time(lambda: algorithm3_numpy(gamma=gamma, **ds), 1)
    check_same(sdr_evalues(gamma=gamma, **ds), ref, "Algorithm 4 (vectorised)")
    lists = {k: v[: args.n_alg4_literal].tolist() for k, v in ds.items()}
    ref_lit = algorithm3(gamma=gamma, **lists)
    check_same(sdr_evalues(gamma=gamma, **lists), ref_lit, "Algorithm 4 (literal)")
    t_extra = t_small * (m * (n + m)) / (ns * (ns + ns))
    row("c. weighted sdr", f"n=m={n:.0e}", t_ours, t_extra,
        f"Alg. 4 numpy per j (n={ns}, extrap.)", "< 2 s", t_ours < 2)
    print(f"   (c) Algorithm 4 at n=m={ns}: {t_small:.3f} s; agreement checked at n=m={ns} "
          f"(vectorised) and n=m={args.n_alg4_literal} (literal); "
          f"non-zero fraction {(e > 0).mean():.3f}")


def plain_mdr_loop(cal_risks, cal_scores, test_scores, alpha):
    """Prop. 4.4 one test point at a time: an O(n) pass over the calibration data per point."""
    n = len(cal_risks)
    out = np.zeros(len(test_scores), dtype=bool)
    for j, t in enumerate(test_scores):
        out[j] = (1 + cal_risks[cal_scores <= t].sum()) / (n + 1) <= alpha
    return out


def case_d(args, rng):
    n = m = args.n_big
    d = make_data(rng, n, m)
    alpha = 0.2
    t_ours, dec = best_time(lambda: mdr_decisions(alpha=alpha, **d), args.repeat)
    k = args.mdr_subset
    sub = dict(d, test_scores=d["test_scores"][:k])
    t_sub, ref = best_time(lambda: plain_mdr_loop(alpha=alpha, **sub), 1)
    if not np.array_equal(dec[:k], ref):
        raise AssertionError("mdr_decisions differs from the plain loop")
    t_extra = t_sub * m / k
    row("d. mdr_decisions", f"n=m={n:.0e}", t_ours, t_extra,
        f"per-point loop ({k} pts, extrap.)", "< 1 s", t_ours < 1)
    print(f"   (d) decisions identical on the {k}-point subset; deployed {dec.mean():.3f}")


def case_e(args, rng):
    n = m = args.n_big
    X = rng.normal(size=(n + m + 5000, 5))
    y = (X[:, 0] + 0.5 * X[:, 1] + rng.normal(size=len(X)) > 0).astype(int)
    model = LogisticRegression().fit(X[:5000], y[:5000])
    X_cal, y_cal, X_test = X[5000 : 5000 + n], y[5000 : 5000 + n], X[5000 + n :]

    def ours():
        return SCoRESDR(FrozenEstimator(model), alpha=0.1, random_state=0).fit(X_cal, y_cal).decide(X_test)

    def floor():  # the fastest row maximum for two classes, as ours uses
        model.predict(X_cal)
        p_cal, p_test = model.predict_proba(X_cal), model.predict_proba(X_test)
        s_cal = 1 - np.maximum(p_cal[:, 0], p_cal[:, 1])
        s_test = 1 - np.maximum(p_test[:, 0], p_test[:, 1])
        return np.sort(np.concatenate([s_cal, s_test]))

    (t_ours, t_floor), (deploy, _) = best_times([ours, floor], args.repeat)
    row("e. SCoRESDR", f"n=m={n:.0e}", t_ours, t_floor, "predictions + one np.sort",
        "<=1.5x floor", t_ours <= 1.5 * t_floor, ratio=f"{t_ours / t_floor:.2f}x floor")
    print(f"   (e) fit + decide, default boosting={SCoRESDR(None).boosting!r}: deployed "
          f"{deploy.mean():.3f}")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--cases", default="abcde", help="subset of 'abcde' to run (default all)")
    p.add_argument("--n-big", type=int, default=10**6, help="n = m for cases a, d and e")
    p.add_argument("--n-alg3", type=int, default=2000, help="n = m for case b")
    p.add_argument("--n-weighted", type=int, default=10**5, help="n = m for case c")
    p.add_argument("--n-alg4", type=int, default=2000, help="n = m of Algorithm 4 in case c")
    p.add_argument("--n-alg4-literal", type=int, default=300,
                   help="n = m of the literal Algorithm 4 agreement check in case c")
    p.add_argument("--mdr-subset", type=int, default=200, help="test points of the plain loop")
    p.add_argument("--repeat", type=int, default=3, help="best of this many runs")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--quick", action="store_true", help="small sizes (smoke run)")
    args = p.parse_args(argv)
    if args.quick:
        args.n_big, args.n_alg3, args.n_weighted = 10**5, 400, 10**4
        args.n_alg4, args.n_alg4_literal, args.mdr_subset = 400, 100, 50
    rng = np.random.default_rng(args.seed)
    print(f"numpy {np.__version__}; best of {args.repeat}; load {os.getloadavg()}")
    for c in args.cases:
        {"a": case_a, "b": case_b, "c": case_c, "d": case_d, "e": case_e}[c](args, rng)

    header = ("case", "size", "ours [s]", "baseline [s]", "baseline", "ratio", "target", "")
    fmt = "{:<17} {:<10} {:>9} {:>13}  {:<36} {:>16}  {:<17} {}"
    print()
    print(fmt.format(*header))
    for case, size, ours, base, baseline, ratio, target, ok in ROWS:
        print(fmt.format(case, size, f"{ours:.4f}", f"{base:.4f}", baseline, ratio, target,
                         met(ok)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
