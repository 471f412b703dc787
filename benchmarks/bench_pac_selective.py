"""PAC selective risk control: our bounds x procedures against MAPIE's Learn-then-Test controller.

Guarantee compared: with probability at least ``1 - delta`` over the calibration data, the risk
among deployed points (SDR, here the error rate of the model on the points it is deployed on)
is at most ``alpha``. A random forest (100 trees) is fitted once per data set on a shuffled
training part; the rest is split ``--splits`` times, shuffled, into calibration and test halves,
the same splits for every method. Score ``s(x) = 1 - max class probability``; loss = 0/1 error.

Methods
-------
* ours: :func:`~sklearn_riskcontrol.evalues.concentration_threshold` with ``target="sdr"``,
  every ``bound`` x ``procedure`` (``hoeffding`` + ``union`` is the SCoRE paper's baseline,
  App. D.4), default grids;
* MAPIE 1.6 ``BinaryClassificationController`` (Hoeffding-Bentkus p-values): the binary
  "classifier" says "the model is right" with probability ``max proba``, ``risk="precision"``,
  ``target_level = 1 - alpha``, ``confidence_level = 1 - delta``, its default 100 thresholds
  ``linspace(0, 0.99, 100)``, one row per ``fwer_method`` (the ``compare`` extra; without it
  these rows are left out, as the script says).

Reported per (data set, alpha, method): fraction of test points deployed (mean over splits and
its 10% quantile) and the realized frequency, over splits, of "test error among deployed
> alpha" (an estimate of the failure probability, which should be about ``delta`` or less; the
test error is itself noisy, so a method exactly at the limit shows a little above ``delta``).

Usage::

    python benchmarks/bench_pac_selective.py --splits 200
    python benchmarks/bench_pac_selective.py --quick
"""

import argparse
import time
import warnings

import numpy as np
from sklearn.datasets import load_digits
from sklearn.ensemble import RandomForestClassifier
from sklearn.model_selection import train_test_split

from sklearn_riskcontrol._validation import RiskControlWarning
from sklearn_riskcontrol.datasets import load_letter
from sklearn_riskcontrol.evalues.bounds import concentration_threshold

from _common import optional  # benchmarks/ is on sys.path when run as a script

DELTA = 0.1
OURS = [
    ("hoeffding", "union"),  # the SCoRE paper's baseline (App. D.4)
    ("rademacher", "auto"),
    ("hoeffding", "fixed_sequence"),
    ("hoeffding_bentkus", "union"),
    ("hoeffding_bentkus", "fixed_sequence"),
    ("hoeffding_bentkus", "fallback"),
    ("binomial", "union"),
    ("binomial", "fixed_sequence"),
    ("binomial", "fallback"),  # = the default (bound="auto", procedure="auto") for 0/1 losses
    ("wsr", "union"),
    ("wsr", "fixed_sequence"),
    ("wsr", "fallback"),
]
MAPIE_FWER = ("bonferroni", "bonferroni_holm", "fixed_sequence")


def fitted_forest(name, seed):
    """A random forest fitted on a shuffled half of ``digits`` or ``letter``; returns it with
    both halves ``(model, X_fit, y_fit, X_rest, y_rest)`` (shared with bench_pac_ppi.py)."""
    if name == "digits":
        X, y = load_digits(return_X_y=True)
    else:
        X, y = load_letter(return_X_y=True)
        X, y = X.to_numpy(), y.to_numpy()
    X_fit, X_rest, y_fit, y_rest = train_test_split(X, y, train_size=0.5, shuffle=True,
                                                    random_state=seed)
    model = RandomForestClassifier(n_estimators=100, random_state=seed, n_jobs=2).fit(X_fit, y_fit)
    return model, X_fit, y_fit, X_rest, y_rest


def _prepare(name, seed):
    """Scores and 0/1 losses of a random forest on the non-training rows."""
    model, _, _, X_rest, y_rest = fitted_forest(name, seed)
    proba = model.predict_proba(X_rest)
    conf = proba.max(axis=1)
    loss = (model.classes_[proba.argmax(axis=1)] != y_rest).astype(float)
    return 1.0 - conf, loss


def _mapie(risk_control, fwer):
    def run(score, loss, cal, test, alpha):
        conf = 1.0 - score
        two = np.column_stack([score, conf])  # P(wrong), P(right): row i for row index i

        def predict_proba(X):
            return two[np.asarray(X)[:, 0].astype(int)]

        ctrl = risk_control.BinaryClassificationController(
            predict_function=predict_proba, risk="precision", target_level=1.0 - alpha,
            confidence_level=1.0 - DELTA, fwer_method=fwer,
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ctrl.calibrate(cal[:, None], 1 - loss[cal].astype(int))
        if ctrl.best_predict_param is None:
            return np.zeros(test.size, dtype=bool)
        return np.asarray(ctrl.predict(test[:, None])).astype(bool)

    return run


def _ours(bound, procedure):
    def run(score, loss, cal, test, alpha):
        res = concentration_threshold(loss[cal], score[cal], alpha, target="sdr", bound=bound,
                                      procedure=procedure, delta=DELTA, random_state=0)
        return res.decide(score[test])

    return run


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--splits", type=int, default=200)
    parser.add_argument("--quick", action="store_true", help="10 splits")
    parser.add_argument("--datasets", default="digits,letter")
    parser.add_argument("--alphas", default="0.01,0.02,0.03")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    splits = min(args.splits, 10) if args.quick else args.splits
    alphas = [float(a) for a in args.alphas.split(",")]
    methods = [(f"ours {b} + {p}", _ours(b, p)) for b, p in OURS]
    risk_control = optional("mapie.risk_control", "compare", "the MAPIE rows are left out")
    if risk_control is not None:
        methods += [(f"MAPIE {f}", _mapie(risk_control, f)) for f in MAPIE_FWER]
    warnings.simplefilter("ignore", RiskControlWarning)  # "nothing certified" is a result here
    print(f"# PAC selective risk control (SDR), delta={DELTA}, {splits} shuffled cal/test splits\n")
    print("deploy = fraction of test points deployed (mean / 10% quantile over splits); "
          "P(fail) = share of splits whose test error among deployed exceeds alpha "
          f"(guarantee: P(population risk among deployed > alpha) <= {DELTA}).\n")
    print("| data | n_cal | alpha | method | deploy mean | deploy q10 | P(fail) | s/split |")
    print("|---|---|---|---|---|---|---|---|")
    for name in args.datasets.split(","):
        score, loss = _prepare(name, args.seed)
        rng = np.random.default_rng(args.seed)
        m = score.size
        perms = [rng.permutation(m) for _ in range(splits)]
        for alpha in alphas:
            for label, run in methods:
                dep, fail, t0 = [], [], time.perf_counter()
                for perm in perms:
                    cal, test = perm[: m // 2], perm[m // 2:]
                    d = run(score, loss, cal, test, alpha)
                    dep.append(d.mean())
                    fail.append(d.any() and loss[test][d].mean() > alpha)
                dt = (time.perf_counter() - t0) / splits
                print(f"| {name} | {m // 2} | {alpha:g} | {label} | {np.mean(dep):.3f} | "
                      f"{np.quantile(dep, 0.1):.3f} | {np.mean(fail):.3f} | {dt:.3f} |",
                      flush=True)


if __name__ == "__main__":
    main()
