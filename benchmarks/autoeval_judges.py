"""R-AutoEval+ with several judges: interval widths with both judges vs each alone (issue 27).

Same draws, one run, for each case: our finite-sample interval with every judge
(``rautoeval_confidence_interval(h, G, U, delta=0.1)`` with judge tables of shape (n, k) and
(N, k): the plug-in construction, whose reliance vector over the judges is chosen from past
rounds only), the same interval with each judge alone (``G[:, j]``, ``U[:, j]``), the
labels-only interval (``method="eval"``) and, as a reference without finite-sample guarantee,
the asymptotic multi-judge prediction-powered interval: the least-squares control variate
``mean(h - lam . g) + mean_N(lam . u)`` with the vector
``lam = ((1 + n / N) Cov(g))^-1 Cov(g, h)`` estimated on the labeled rows, plus or minus
``z_{1 - delta/2}`` standard errors (computed here with numpy). Every interval targets coverage
``>= 1 - delta = 0.9`` of the true risk over the draw of the data.

One repetition draws 0/1 losses ``h`` (the model errs with probability ``risk``) on ``n = 200``
labeled and ``N = 2000`` unlabeled items; a judge of accuracy ``a`` gives the judge loss
``h`` with probability ``a`` and ``1 - h`` otherwise, its errors independent of the other
judge's. Cases:

* ``two-75``: risk .25, two judges each 75% accurate (the issue's first target);
* ``good+useless``: risk .25, a 90%-accurate judge and a useless one (its loss an independent
  fair coin; the issue's second target);
* ``good+anti``: risk .25, a 90% judge and an anti-informative one (its loss ``1 - h``
  everywhere: accuracy 0; validity only);
* ``good+labelcorr``: risk .25, a 90% judge and one whose loss has the same distribution as
  ``h`` (Bernoulli(.25)) but whose errors depend on the loss (it is right on every item the
  model gets right with probability .8 and wrong on 60% of the model's errors): validity only.

Printed per (case, interval): Monte-Carlo coverage and mean width, each +- one standard error,
and the seconds per repetition; then the targets: ``two-75``: the interval with both judges
narrower than with either alone (mean paired width difference and its standard error);
``good+useless``: mean width with both at most 1.02x the good judge's alone (ratio of mean
widths, with the standard error of the paired difference); coverage >= 0.9 for every one of our
intervals (checked as in ``_common.exceeds``: a miscoverage above delta by more than
``3 sqrt(delta (1 - delta) / reps)`` is a wrong result, exit status 1, in quick mode too).

Run: ``python benchmarks/autoeval_judges.py`` (1000 repetitions per case) or ``--quick``
(60 repetitions; the width targets are printed, a coverage shortfall still fails).
``--reps`` and ``--cases`` override.
"""

import argparse
import time
import warnings

import numpy as np
from _common import case_arguments, exceeds, fail_if, met  # benchmarks/ is on sys.path

from scipy import stats

from sklearn_riskcontrol import RiskControlWarning
from sklearn_riskcontrol.autoeval import rautoeval_confidence_interval

DELTA = 0.1
N_LABELED, N_UNLABELED = 200, 2000
RISK = 0.25
USELESS_RATIO = 1.02

CASES = {  # name: the two judges
    "two-75": ("acc-0.75", "acc-0.75"),
    "good+useless": ("acc-0.9", "coin"),
    "good+anti": ("acc-0.9", "anti"),
    "good+labelcorr": ("acc-0.9", "labelcorr"),
}


def judge_losses(rng, h, kind):
    """0/1 judge losses on items with true 0/1 losses ``h``."""
    if kind.startswith("acc-"):
        right = rng.random(h.size) < float(kind[4:])
        return np.where(right, h, 1.0 - h)
    if kind == "coin":
        return (rng.random(h.size) < 0.5).astype(float)
    if kind == "anti":
        return 1.0 - h
    if kind == "labelcorr":  # P(g = 1) = .75 * .2 + .25 * .4 = .25 = P(h = 1) at risk .25
        p1 = np.where(h > 0.5, 0.4, 0.2)
        return (rng.random(h.size) < p1).astype(float)
    raise ValueError(kind)


def draw(case, rng):
    h = (rng.random(N_LABELED) < RISK).astype(float)
    hu = (rng.random(N_UNLABELED) < RISK).astype(float)
    G = np.column_stack([judge_losses(rng, h, kind) for kind in CASES[case]])
    U = np.column_stack([judge_losses(rng, hu, kind) for kind in CASES[case]])
    return h, G, U


def ppi_multi(h, G, U, delta):
    """Asymptotic least-squares control-variate interval with a vector lambda (no guarantee)."""
    n, N = h.size, U.shape[0]
    cov = np.cov(np.column_stack([h, G]), rowvar=False)
    c_gh, s_g = cov[1:, 0], cov[1:, 1:]
    lam = np.linalg.lstsq((1.0 + n / N) * s_g, c_gh, rcond=None)[0]
    est = np.mean(h - G @ lam) + np.mean(U @ lam)
    var = np.var(h - G @ lam, ddof=1) / n + float(lam @ np.cov(U, rowvar=False) @ lam) / N
    half = stats.norm.ppf(1 - delta / 2) * np.sqrt(var)
    return est - half, est + half


BOTH, FIRST, SECOND, EVAL, PPI = ("ours, both judges", "ours, judge 1 alone",
                                  "ours, judge 2 alone", "ours, labels only",
                                  "PPI multi-judge (asym.)")
OURS = (BOTH, FIRST, SECOND, EVAL)


def intervals(h, G, U):
    def ci(*args, **kw):
        c = rautoeval_confidence_interval(*args, delta=DELTA, **kw)
        return c.low, c.high

    return {
        BOTH: lambda: ci(h, G, U),
        FIRST: lambda: ci(h, G[:, 0], U[:, 0]),
        SECOND: lambda: ci(h, G[:, 1], U[:, 1]),
        EVAL: lambda: ci(h, method="eval"),
        PPI: lambda: ppi_multi(h, G, U, DELTA),
    }


def run_case(case, reps, seed):
    rng = np.random.default_rng([seed, list(CASES).index(case)])
    names = (BOTH, FIRST, SECOND, EVAL, PPI)
    widths = {m: np.empty(reps) for m in names}
    cover = {m: np.empty(reps, dtype=bool) for m in names}
    secs = dict.fromkeys(names, 0.0)
    for i in range(reps):
        h, G, U = draw(case, rng)
        for name, fn in intervals(h, G, U).items():
            t0 = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RiskControlWarning)
                low, high = fn()
            secs[name] += time.perf_counter() - t0
            widths[name][i] = high - low
            cover[name][i] = low <= RISK <= high
    return widths, cover, secs


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="60 repetitions per case; width targets printed, a coverage "
                             "shortfall fails")
    args, reps, cases = case_arguments(parser, list(CASES), 60, argv)
    print(f"delta = {DELTA} (nominal coverage {1 - DELTA:g}); n = {N_LABELED}, N = "
          f"{N_UNLABELED}, risk {RISK}; {reps} repetitions per case, the same draws for every "
          "interval; coverage and mean width +- one Monte-Carlo standard error")
    print(f"{'case':<15} {'interval':<24} {'coverage':>15} {'mean width':>18} {'s/rep':>7}")
    results = {}
    t_all = time.perf_counter()
    for case in cases:
        widths, cover, secs = run_case(case, reps, args.seed)
        for name in widths:
            c, w = cover[name].mean(), widths[name]
            results[case, name] = (c, w)
            print(f"{case:<15} {name:<24} {c:8.3f} +- {np.sqrt(c * (1 - c) / reps):.3f} "
                  f"{w.mean():9.4f} +- {w.std(ddof=1) / np.sqrt(reps):.4f} "
                  f"{secs[name] / reps:7.4f}")
    print(f"total {time.perf_counter() - t_all:.1f} s")

    print("\ntargets (issue 27; the width targets are printed, a coverage shortfall fails)")
    wrong = []
    if "two-75" in cases:
        w = {m: results["two-75", m][1] for m in OURS}
        for alone in (FIRST, SECOND):
            d = w[BOTH] - w[alone]
            print(f"  two-75: both narrower than {alone[6:]}: {w[BOTH].mean():.4f} vs "
                  f"{w[alone].mean():.4f} (paired difference {d.mean():+.4f} +- "
                  f"{d.std(ddof=1) / np.sqrt(reps):.4f}): {met(d.mean() < 0)}")
    if "good+useless" in cases:
        wb, wg = results["good+useless", BOTH][1], results["good+useless", FIRST][1]
        d = wb - wg
        ratio = wb.mean() / wg.mean()
        print(f"  good+useless: width with both <= {USELESS_RATIO:g}x good alone: {ratio:.4f}x "
              f"({wb.mean():.4f} vs {wg.mean():.4f}; paired difference {d.mean():+.4f} +- "
              f"{d.std(ddof=1) / np.sqrt(reps):.4f}): {met(ratio <= USELESS_RATIO)}")
    slack = 3 * np.sqrt(DELTA * (1 - DELTA) / reps)
    for case in cases:
        worst = min(OURS, key=lambda m: results[case, m][0])
        c = results[case, worst][0]
        print(f"  {case}: lowest coverage of ours {c:.3f} ({worst}) >= {1 - DELTA:g} - "
              f"{slack:.3f}: {met(not exceeds(1 - c, DELTA, reps))}")
        for name in OURS:
            c = results[case, name][0]
            if exceeds(1 - c, DELTA, reps):
                wrong.append(f"{case}, {name}: coverage {c:.3f} < 1 - delta {1 - DELTA:g} by "
                             f"more than 3 sqrt(delta (1 - delta) / {reps})")
    under = [f"{case} {results[case, PPI][0]:.3f}" for case in cases
             if results[case, PPI][0] < 1 - DELTA]
    print(f"  (report) {PPI} covers less than {1 - DELTA:g} on: {', '.join(under) or 'none'}")
    fail_if(wrong)  # a coverage shortfall is a wrong result, in quick mode too


if __name__ == "__main__":
    main()
