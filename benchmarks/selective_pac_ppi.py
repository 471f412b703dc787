"""Prediction-powered PAC selective risk control: a judge's labels vs labels only.

Guarantee compared (the same for every row): with probability at least ``1 - delta`` over the
calibration data, the risk among deployed points (SDR, ``E[L | s(X) <= t_hat]``) is at most
``alpha``. Each method gets the same ``n`` labeled calibration points; the prediction-powered
ones also get the judge's labels on them and on ``N`` unlabeled points
(:func:`~sklearn_riskcontrol.selective.concentration_threshold` with the judge arrays).

Methods
-------
* ``labels only``: the default Learn-then-Test (exact binomial p-values for the 0/1 loss,
  fallback procedure over the calibration scores), on the ``n`` labels;
* ``labels only, wsr``: labels-only testing by betting (``bound="wsr"``), the apples-to-apples
  labels-only version of a betting test;
* ``ppi, judge=...``: the default with judge arrays (``bound="rautoeval_or_binomial"``: the
  larger threshold of the labels-only default at ``0.9 delta`` and R-AutoEval+ at
  ``0.1 delta``), with a judge that is the truth kept with probability ``gamma`` (else a wrong
  label), a second model (real data), or ``useless`` (random labels);
* ``R-AutoEval+ alone, judge=...``: ``bound="rautoeval"`` (fallback on
  ``linspace(0, 1, 100)``), the same judges.

Settings
--------
* ``synthetic``: ``S ~ U(0, 1)``, ``L ~ Bernoulli(S)``, so ``SDR*(t) = t / 2`` and the largest
  safe threshold is ``2 alpha``; failure = ``t_hat > 2 alpha`` (population risk, exact).
* ``letter`` / ``digits``: a random forest fitted on a shuffled half; per split the rest is
  shuffled into ``n`` labeled + ``N`` unlabeled calibration rows and test rows;
  ``s(x) = 1 - max proba``, loss = 0/1 error. Failure = test error among deployed > alpha
  (an estimate: the test error is itself noisy). The second-model judge is an extra-trees
  classifier fitted on the same training half.

Reported: mean fraction deployed (test rows, or ``P(S <= t_hat) = t_hat`` for synthetic), share
of splits failing (should be about ``delta`` or less), seconds per split.

Usage::

    python benchmarks/selective_pac_ppi.py            # 50 splits
    python benchmarks/selective_pac_ppi.py --splits 8 --datasets synthetic,letter   # RESULTS.md
    python benchmarks/selective_pac_ppi.py --quick    # smoke test: 1 split, n = 100, N = 500
"""

import argparse
import time
import warnings

import numpy as np
from sklearn.ensemble import ExtraTreesClassifier

from sklearn_riskcontrol import RiskControlWarning
from sklearn_riskcontrol.selective import concentration_threshold

from _common import exceeds, fail_if  # noqa: E402 (benchmarks/ is on sys.path)
from selective_pac import fitted_forest  # noqa: E402 (benchmarks/ is on sys.path)

DELTA = 0.1


def _flip_labels(rng, truth, classes, gamma):
    """The truth with probability gamma, else a uniformly drawn *other* class (0..K-1)."""
    other = (truth + rng.integers(1, classes.size, truth.size)) % classes.size
    return np.where(rng.uniform(size=truth.size) < gamma, truth, other)


def _real(name, seed):
    # The PAC benchmark's forest and split; labels as class indices 0..K-1.
    model, X_fit, y_fit, X_rest, y_rest = fitted_forest(name, seed)
    second = ExtraTreesClassifier(n_estimators=100, random_state=seed + 1, n_jobs=2).fit(
        X_fit, y_fit)
    proba = model.predict_proba(X_rest)
    index = lambda labels: np.searchsorted(model.classes_, labels)  # noqa: E731
    return dict(score=1.0 - proba.max(axis=1), pred=proba.argmax(axis=1), truth=index(y_rest),
                second=index(second.predict(X_rest)), classes=np.arange(model.classes_.size))


def _timed_threshold(L, S, alpha, kw):
    """The SDR threshold of one method (``kw``: its bound / judge arrays) and its time."""
    t0 = time.perf_counter()
    res = concentration_threshold(L, S, alpha, target="sdr", delta=DELTA, **kw)
    return res, time.perf_counter() - t0


def _run_real(data, n, N, alpha, splits, seed, gammas):
    rng = np.random.default_rng(seed)
    m = data["truth"].size
    loss = (data["pred"] != data["truth"]).astype(float)
    rows = {}
    for _ in range(splits):
        perm = rng.permutation(m)
        lab, unl, test = perm[:n], perm[n: n + N], perm[n + N:]
        S, L, T = data["score"][lab], loss[lab], data["score"][unl]
        judges = {f"truth kept w.p. {g:g}": _flip_labels(rng, data["truth"], data["classes"], g)
                  for g in gammas}
        judges["second model"] = data["second"]
        judges["useless (random)"] = rng.integers(0, data["classes"].size, m)
        runs = {"labels only": dict(), "labels only, wsr": dict(bound="wsr")}
        for label, j in judges.items():
            jl = (data["pred"] != j).astype(float)
            kw = dict(cal_judge_risks=jl[lab], unlabeled_judge_risks=jl[unl], unlabeled_scores=T)
            runs[f"ppi, judge={label}"] = kw
            runs[f"R-AutoEval+ alone, judge={label}"] = dict(bound="rautoeval", **kw)
        for label, kw in runs.items():
            res, dt = _timed_threshold(L, S, alpha, kw)
            d = res.decide(data["score"][test])
            fail = bool(d.any() and loss[test][d].mean() > alpha)
            rows.setdefault(label, []).append((d.mean(), fail, dt))
    return rows


def _run_synthetic(n, N, alpha, splits, seed, gammas):
    rng = np.random.default_rng(seed)
    rows = {}
    for _ in range(splits):
        S, T = rng.uniform(size=n), rng.uniform(size=N)
        L = (rng.uniform(size=n) < S).astype(float)
        L_unl = (rng.uniform(size=N) < T).astype(float)
        runs = {"labels only": dict(), "labels only, wsr": dict(bound="wsr")}
        for g in list(gammas) + [0.5]:
            keep_l, keep_u = rng.uniform(size=n) < g, rng.uniform(size=N) < g
            label = "useless (coin flip)" if g == 0.5 else f"truth kept w.p. {g:g}"
            kw = dict(cal_judge_risks=np.where(keep_l, L, 1 - L),
                      unlabeled_judge_risks=np.where(keep_u, L_unl, 1 - L_unl),
                      unlabeled_scores=T)
            runs[f"ppi, judge={label}"] = kw
            runs[f"R-AutoEval+ alone, judge={label}"] = dict(bound="rautoeval", **kw)
        for label, kw in runs.items():
            res, dt = _timed_threshold(L, S, alpha, kw)
            t = max(res.threshold, 0.0)
            rows.setdefault(label, []).append((min(t, 1.0), t > 2 * alpha, dt))
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--splits", type=int, default=50)
    parser.add_argument("--quick", action="store_true",
                        help="1 split, n = 100, N = 500, synthetic + letter (smoke test)")
    parser.add_argument("--datasets", default="synthetic,letter,digits")
    parser.add_argument("--n", type=int, default=500, help="labeled calibration rows")
    parser.add_argument("--N", type=int, default=5000, help="unlabeled calibration rows")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    splits, names = args.splits, args.datasets.split(",")
    if args.quick:
        splits, names = 1, ["synthetic", "letter"]
        args.n, args.N = min(args.n, 100), min(args.N, 500)
    gammas = (0.95, 0.8)
    warnings.simplefilter("ignore", RiskControlWarning)  # "nothing certified" is a result here
    print(f"# Prediction-powered PAC SDR control, delta={DELTA}, {splits} shuffled splits\n")
    print("deploy = mean fraction deployed; P(fail) = share of splits whose risk among "
          f"deployed exceeds alpha (guarantee: P(population SDR at t_hat > alpha) <= {DELTA}; "
          "exact for synthetic, estimated on the test rows for real data).\n")
    print("| data | n + N | alpha | method | deploy mean | P(fail) | s/split |")
    print("|---|---|---|---|---|---|---|")
    wrong = []
    for name in names:
        if name == "synthetic":
            alphas, n, N = (0.1, 0.2, 0.3), args.n, args.N
        else:
            data = _real(name, args.seed)
            # digits has 898 non-training rows: fewer labels and unlabeled rows there
            n, N = (args.n, args.N) if name == "letter" else (100, 500)
            alphas = (0.02, 0.05)
        for alpha in alphas:
            if name == "synthetic":
                rows = _run_synthetic(n, N, alpha, splits, args.seed, gammas)
            else:
                rows = _run_real(data, n, N, alpha, splits, args.seed, gammas)
            for label, vals in rows.items():
                dep, fail, dt = (np.array(v, dtype=float) for v in zip(*vals))
                print(f"| {name} | {n} + {N} | {alpha:g} | {label} | {dep.mean():.3f} | "
                      f"{fail.mean():.3f} | {dt.mean():.3f} |", flush=True)
                # Every method carries the PAC guarantee P(fail) <= delta. Checked on synthetic
                # only, where failure (t_hat > 2 alpha) is the exact population event; splits are
                # independent; slack 3 sqrt(delta (1 - delta) / splits) (0.13 at 50 splits; at
                # the quick mode's 1 split no share can fail it). Real data: the failure is
                # estimated on noisy test rows, not checked.
                if name == "synthetic" and exceeds(fail.mean(), DELTA, splits):
                    wrong.append(f"synthetic, alpha {alpha:g}, {label}: P(fail) {fail.mean():.3f}"
                                 f" > delta {DELTA:g} + 3 sqrt(delta (1 - delta) / {splits})")
    fail_if(wrong)


if __name__ == "__main__":
    main()
