"""Clustered items: intervals for the item-level risk when questions come in documents (issue 27).

Same draws, one run, for each case: our finite-sample interval with clusters as the draws
(``rautoeval_confidence_interval(L, G, U, delta=0.1, groups_labeled=..., groups_unlabeled=...)``,
R-AutoEval+), the same with labels only (``method="eval"``), the same R-AutoEval+ interval with
the items treated as i.i.d. rows (rows shuffled, no groups: what ignoring the clusters gives),
a clustered PPI++ interval (asymptotic: the ratio estimator ``lam sum(Gu)/sum(Mu) + (sum(S) - lam
sum(G))/sum(M)`` with a cluster-robust, i.e. per-cluster, linearized variance and the
power-tuned ``lam``; computed here with numpy, no finite-sample guarantee) and PPI++ on the items
ignoring the clusters (``ppi_py.ppi_mean_ci``; asymptotic). Every interval targets coverage
``>= 1 - delta = 0.9`` of the item-level risk ``R = E[S] / E[M]`` (``S`` a document's loss sum,
``M`` its number of questions) over the draw of the documents.

One repetition draws ``n`` labeled and ``N`` unlabeled documents; question ``j`` of document
``d`` has the 0/1 loss ``Bernoulli(p_d)``; the judge's label is wrong on 10% of the questions
(independently), which flips the loss there. Cases (labeled x questions, unlabeled documents):

* ``documents``: 40 x 25, N = 400, document risks ``p_d ~ Beta(0.5, 2)`` (strong document
  effect; R = 0.2): issue 27's case;
* ``varied``: 40 documents of 5 to 25 questions (uniform), N = 400, ``p_d = Beta(0.5, 2) M /
  25`` (longer documents riskier; R = 0.1396, while the mean of the document risks is 0.12);
* ``iid-40x25``, ``iid-200x5``, ``iid-1000x1``: every question independent with risk 0.2 (no
  document effect), 1000 labeled questions in 40, 200 or 1000 clusters, 10x as many unlabeled:
  the cost of declaring clusters when the items are in fact independent.

Printed per (case, method): Monte-Carlo coverage and mean width (+- one standard error), the
width ratio to the items-as-i.i.d. R-AutoEval+ interval, seconds per repetition. Targets
(issue 27): ours (clustered) coverage ``>= 0.9`` on every case (a shortfall by more than
``3 sqrt(delta (1 - delta) / reps)`` is a wrong result: exit status 1, in quick mode too); the
items-as-i.i.d. interval's undercoverage on the clustered cases is reported; on the i.i.d. cases
ours at most 1.3x the width of the items-as-i.i.d. interval (printed ``met`` / ``NOT met``).

Run: ``python benchmarks/autoeval_clusters.py`` (1000 repetitions per case) or ``--quick``
(100 repetitions; a coverage shortfall still fails). ``--reps`` and ``--cases`` override. Needs
ppi_python (the ``compare`` extra) for the item-level PPI++ column; without it that column is
left out.
"""

import argparse
import time
import warnings

import numpy as np
from scipy import stats

from sklearn_riskcontrol import RiskControlWarning
from sklearn_riskcontrol.autoeval import rautoeval_confidence_interval

# benchmarks/ is on sys.path as a script
from _common import (case_arguments, exceeds, fail_if, met, report_undercoverage,
                     optional)

DELTA = 0.1
JUDGE_ERROR = 0.1
WIDTH_RATIO = 1.3
_M = np.arange(5, 26)

# name: (labeled clusters, unlabeled clusters, sizes, document effect)
CASES = {
    "documents": (40, 400, 25, "beta"),
    "varied": (40, 400, "5-25", "beta-by-size"),
    "iid-40x25": (40, 400, 25, "none"),
    "iid-200x5": (200, 2000, 5, "none"),
    "iid-1000x1": (1000, 10000, 1, "none"),
}
TRUTH = {"beta": 0.2, "beta-by-size": 0.2 * np.mean(_M**2) / (25 * np.mean(_M)), "none": 0.2}

OURS = "ours clustered (R-AutoEval+)"
EVAL = "ours clustered labels-only"
IID = "ours items as i.i.d."
CPPI = "clustered PPI++ (asympt.)"
PPI = "PPI++ items (asympt.)"


def documents(rng, n_docs, size, effect, start=0):
    """``(loss, judge loss, cluster id)`` of the questions of ``n_docs`` documents."""
    sizes = rng.integers(5, 26, n_docs) if size == "5-25" else np.full(n_docs, size)
    if effect == "none":
        p = np.full(n_docs, 0.2)
    else:
        p = rng.beta(0.5, 2.0, n_docs)
        if effect == "beta-by-size":
            p = p * sizes / 25.0
    ids = np.repeat(np.arange(n_docs), sizes)
    loss = (rng.random(ids.size) < p[ids]).astype(float)
    judge = np.where(rng.random(loss.size) < JUDGE_ERROR, 1.0 - loss, loss)
    return loss, judge, ids + start


def _sums(x, ids):
    _, codes = np.unique(ids, return_inverse=True)
    return np.bincount(codes.ravel(), weights=x), np.bincount(codes.ravel()).astype(float)


def clustered_ppi(L, G, g, Ju, gu, delta):
    """Clustered PPI++ for the ratio ``E[S] / E[M]`` (asymptotic): estimate ``lam theta_U +
    theta_L(lam)`` with ``theta_U = sum Gu / sum Mu``, ``theta_L = (sum S - lam sum G) / sum M``;
    variance from the per-cluster linearizations ``(S - lam G - theta_L M) / mean(M)`` and
    ``lam (Gu - theta_U Mu) / mean(Mu)``; ``lam`` minimizes that variance (clipped to [0, 1])."""
    S, M = _sums(L, g)
    Gs, _ = _sums(G, g)
    Gu, Mu = _sums(Ju, gu)
    n, N = S.size, Gu.size
    ys = (S - S.sum() / M.sum() * M) / M.mean()
    yg = (Gs - Gs.sum() / M.sum() * M) / M.mean()
    yu = (Gu - Gu.sum() / Mu.sum() * Mu) / Mu.mean()
    # var(ys - lam yg)/n + lam^2 var(yu)/N, minimized over lam
    lam = np.cov(ys, yg)[0, 1] / n / (np.var(yg, ddof=1) / n + np.var(yu, ddof=1) / N)
    lam = float(np.clip(lam, 0.0, 1.0))
    theta_l = (S.sum() - lam * Gs.sum()) / M.sum()
    est = lam * Gu.sum() / Mu.sum() + theta_l
    var = np.var(ys - lam * yg, ddof=1) / n + lam**2 * np.var(yu, ddof=1) / N
    half = stats.norm.ppf(1 - delta / 2) * np.sqrt(var)
    return est - half, est + half


def methods(ppi_py):
    def ours(L, G, g, Ju, gu, rng):
        ci = rautoeval_confidence_interval(L, G, Ju, delta=DELTA, groups_labeled=g,
                                           groups_unlabeled=gu)
        return ci.low, ci.high

    def labels_only(L, G, g, Ju, gu, rng):
        ci = rautoeval_confidence_interval(L, delta=DELTA, method="eval", groups_labeled=g)
        return ci.low, ci.high

    def iid(L, G, g, Ju, gu, rng):
        perm, permu = rng.permutation(L.size), rng.permutation(Ju.size)
        ci = rautoeval_confidence_interval(L[perm], G[perm], Ju[permu], delta=DELTA)
        return ci.low, ci.high

    def cppi(L, G, g, Ju, gu, rng):
        return clustered_ppi(L, G, g, Ju, gu, DELTA)

    out = {OURS: ours, EVAL: labels_only, IID: iid, CPPI: cppi}
    if ppi_py is not None:
        def ppi(L, G, g, Ju, gu, rng):
            low, high = ppi_py.ppi_mean_ci(L, G, Ju, alpha=DELTA)
            return float(np.ravel(low)[0]), float(np.ravel(high)[0])
        out[PPI] = ppi
    return out


def run_case(case, meths, reps, seed):
    n, N, size, effect = CASES[case]
    rng = np.random.default_rng([seed, list(CASES).index(case)])
    widths = {m: np.empty(reps) for m in meths}
    cover = {m: np.empty(reps, dtype=bool) for m in meths}
    secs = dict.fromkeys(meths, 0.0)
    truth = TRUTH[effect]
    for i in range(reps):
        L, G, g = documents(rng, n, size, effect)
        _, Ju, gu = documents(rng, N, size, effect, start=n)
        for name, fn in meths.items():
            t0 = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RiskControlWarning)
                low, high = fn(L, G, g, Ju, gu, rng)
            secs[name] += time.perf_counter() - t0
            widths[name][i] = high - low
            cover[name][i] = low <= truth <= high
    return widths, cover, secs


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="100 repetitions per case; a coverage shortfall still fails")
    args, reps, cases = case_arguments(parser, list(CASES), 100, argv)
    ppi_py = optional("ppi_py", "compare", f"the column {PPI!r} is left out")
    meths = methods(ppi_py)
    print(f"delta = {DELTA} (nominal coverage {1 - DELTA:g}); {reps} repetitions per case, the "
          "same draws for every method; coverage of the item risk and mean width, +- one "
          "Monte-Carlo standard error; ratio = mean width / items-as-i.i.d. R-AutoEval+'s")
    print(f"{'case':<11} {'method':<29} {'coverage':>15} {'mean width':>18} {'ratio':>6}"
          f" {'s/rep':>7}")
    results = {}
    t_all = time.perf_counter()
    for case in cases:
        widths, cover, secs = run_case(case, meths, reps, args.seed)
        ref = widths[IID].mean()
        for name in meths:
            c, w = cover[name].mean(), widths[name]
            results[case, name] = (c, w.mean())
            print(f"{case:<11} {name:<29} {c:8.3f} +- {np.sqrt(c * (1 - c) / reps):.3f} "
                  f"{w.mean():9.4f} +- {w.std(ddof=1) / np.sqrt(reps):.4f} "
                  f"{w.mean() / ref:6.2f} {secs[name] / reps:7.4f}")
    print(f"total {time.perf_counter() - t_all:.1f} s")

    print("\ntargets (issue 27; the width target is printed, a coverage shortfall fails)")
    wrong = []
    slack = 3 * np.sqrt(DELTA * (1 - DELTA) / reps)
    for case in cases:
        c = results[case, OURS][0]
        bad = exceeds(1 - c, DELTA, reps)
        line = f"  {case}: ours coverage {c:.3f} >= {1 - DELTA:g} - {slack:.3f}: {met(not bad)}"
        if not case.startswith("iid"):
            line += f" (items as i.i.d.: {results[case, IID][0]:.3f})"
        print(line)
        if bad:
            wrong.append(f"{case}, {OURS}: coverage {c:.3f} < 1 - delta {1 - DELTA:g} by more "
                         f"than 3 sqrt(delta (1 - delta) / {reps})")
    for case in cases:
        if case.startswith("iid"):
            ratio = results[case, OURS][1] / results[case, IID][1]
            print(f"  {case}: ours width <= {WIDTH_RATIO:g}x items-as-i.i.d.: {ratio:.2f}x: "
                  f"{met(ratio <= WIDTH_RATIO)}")
    for name in (IID, CPPI, PPI):  # reported
        if name not in meths:
            continue
        report_undercoverage(name, {case: results[case, name][0] for case in cases}, DELTA,
                             reps)
    fail_if(wrong)  # a coverage shortfall is a wrong result, in quick mode too


if __name__ == "__main__":
    main()
