"""SCoRE's remaining variants (issue 16): what each one adds in power, and its realized risk.

Three comparisons, each on the SCoRE paper's simulation settings and on ``letter``:

1. **Attainable risk values** (paper Remark 4.1; ``attainable="binary"``), for a 0/1 risk.
   The infimum over the unknown test risk ``l`` runs over {1} instead of [0, 1]. With
   ``gamma = alpha`` the MDR decisions cannot change (the rule of Prop. 4.4 already uses
   ``l = 1``); the SDR e-values can only grow, and e-BH on them is conformal selection with BH
   (Cor. 5.4). Default vs ``"binary"`` for SCoRE-MDR and SCoRE-SDR (e-BH without boosting and
   with homogeneous boosting; the same uniform for both in a repetition, so the comparison is
   paired). ``more`` = share of repetitions where ``"binary"`` deploys more points than the
   default, ``fewer`` = where it deploys fewer.
2. **Label-dependent e-values** (paper Remark 4.3, eq. 4.3; ``label_score="proba"``), on
   ``letter`` only (it needs a classifier): SCoRE-MDR with the default score
   ``1 - max predict_proba`` vs the label-dependent score ``V(x, y) = predict_proba(x)[y]``
   (the infimum over the 25 labels the prediction would be wrong for).
3. **SDR with gamma >= 1** (paper Thm. 5.1 allows any ``gamma > 0``): SCoRE-SDR with
   ``gamma`` in {alpha, 0.5, 1, 2}, e-BH without boosting and with homogeneous boosting (the
   estimator's default). ``all/none`` = share of repetitions that deploy every test point or
   none; ``pred.`` = for ``gamma >= 1``, the mean of ``min(1, alpha (n + 1) / (1 + sum_i L_i))``,
   the exact probability (given the calibration data) that homogeneous boosting deploys the
   whole batch (see ``doc/user_guide/selective.rst``, section "SCoRE variants"); ``SDR when
   deployed`` = mean realized SDR over the repetitions that deploy something (a conditional
   average: the guarantee bounds the unconditional one, where deploying nothing counts 0).

Problems:

* ``sim1`` .. ``sim6``: paper Table 1 / App. D.3 via
  :func:`~sklearn_riskcontrol.datasets.make_score_setting` (forests of ``--trees`` trees, constant
  reward), score ``l_hat``, ``n = 1000`` calibration and ``m = 100`` test points drawn afresh per
  repetition. Comparison 3 uses the paper's (continuous) risks; comparison 1 needs a 0/1 risk and
  uses ``1{L >= 1/2}`` with the same score (settings 1-2: ``Y >= 3``; 3-4: squared error at least
  half the clip; 5-6: ``Y <= 0``).
* ``letter`` (``--letter``, default ``../shared/data/letter/letter.csv.gz``, else the copy
  bundled with the package; skipped when neither is found): a random forest (100 trees,
  ``n_jobs=1``) fitted on a shuffled half of the 20,000 rows, 0/1 error; each repetition shuffles
  the other half into 5,000 calibration and 5,000 test rows.

Columns: ``deploy`` = mean deployed fraction of the test batch (power with unit reward) ± Monte-
Carlo s.e. over repetitions; ``MDR`` = realized ``mean_j L_j psi_j``, ``SDR`` = realized
``sum_j L_j psi_j / max(1, #deployed)``, each averaged over repetitions ± s.e. The guarantees are
on these expectations (MDR, SDR <= alpha); one repetition is one draw. ``ok`` = mean
``<= alpha + 3 s.e.``. A risk above ``alpha + 3 sqrt(alpha (1 - alpha) / reps)`` (the largest
standard error the guarantee allows for a risk in [0, 1]) is a wrong result: the script exits with
status 1 once every table is printed.

Usage::

    python benchmarks/selective_variants.py --reps 200
    python benchmarks/selective_variants.py --quick            # smoke test, under a minute
    python benchmarks/selective_variants.py --problems letter --reps 500
"""

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.ensemble import RandomForestClassifier
from sklearn.model_selection import train_test_split

from sklearn_riskcontrol import RiskControlWarning
from sklearn_riskcontrol.datasets import make_score_setting
from sklearn_riskcontrol.evalues.testing import ebh
from sklearn_riskcontrol.selective import (
    mdr_decisions,
    mdr_label_decisions,
    sdr_evalues,
)

from _common import SHARED_DATA, exceeds, fail_if  # benchmarks/ is on sys.path as a script

SIM_N, SIM_M = 1000, 100
SIM_ALPHAS = (0.1, 0.2, 0.3)
LETTER_ALPHAS = (0.01, 0.02, 0.03, 0.05)
LETTER_PATH = SHARED_DATA / "letter" / "letter.csv.gz"
Z_OK = 3.0


# ------------------------------------------------------------------------------ problems
class _Sim:
    """Paper setting: fresh calibration / test draws per repetition, score ``l_hat``."""

    def __init__(self, setting, trees, seed):
        self.sim = make_score_setting(setting, reward="constant", n_estimators=trees,
                                      random_state=seed + setting)

    def draw(self, rng):
        b = self.sim.draw_problem(SIM_N, SIM_M, rng)
        return dict(cal_L=b.cal_risks, cal_s=b.cal_lhat, test_s=b.test_lhat, test_L=b.test_risks)


class _Letter:
    """Random forest on a shuffled half of ``letter``; the other half is the pool of rows."""

    def __init__(self, frame, seed):
        X, y = frame.drop(columns="letter").to_numpy(), frame["letter"].to_numpy()
        X_fit, X_rest, y_fit, y_rest = train_test_split(X, y, train_size=0.5, shuffle=True,
                                                        random_state=seed)
        model = RandomForestClassifier(n_estimators=100, random_state=seed, n_jobs=1)
        model.fit(X_fit, y_fit)
        proba = model.predict_proba(X_rest)
        pred = model.classes_[proba.argmax(axis=1)]
        self.err = (pred != y_rest).astype(float)
        self.score = 1.0 - proba.max(axis=1)  # the default risk_score="proba"
        self.proba = proba  # V(x, y) of label_score="proba"
        self.v_true = proba[np.arange(len(y_rest)), np.searchsorted(model.classes_, y_rest)]
        self.wrong = (pred[:, None] != model.classes_[None, :]).astype(float)  # L(x, y)

    def draw(self, rng):
        perm = rng.permutation(self.err.size)
        cal, test = perm[: perm.size // 2], perm[perm.size // 2:]
        return dict(cal_L=self.err[cal], cal_s=self.score[cal], test_s=self.score[test],
                    test_L=self.err[test], cal_V=self.v_true[cal], test_V=self.proba[test],
                    test_R=self.wrong[test])


def _letter_frame(path):
    if path.exists():
        return pd.read_csv(path)
    try:
        from sklearn_riskcontrol.datasets import load_letter
        return load_letter().frame
    except Exception:  # noqa: BLE001 -- no bundled copy either: skip the problem
        return None


def build(name, trees, seed, letter_path):
    if name.startswith("sim"):
        return _Sim(int(name[3:]), trees, seed), SIM_ALPHAS
    frame = _letter_frame(letter_path)
    if frame is None:
        return None, ()
    return _Letter(frame, seed), LETTER_ALPHAS


# ------------------------------------------------------------------------------ one repetition
def _risks(L, psi):
    return psi.mean(), (L * psi).mean(), (L * psi).sum() / max(1, psi.sum())


def one_rep(d, alphas, gammas_extra, rng, with_label, acc):
    """Append to ``acc[key]`` one (deploy, MDR, SDR) triple per method for this draw ``d``."""
    L01 = (d["cal_L"] >= 0.5).astype(float) if "cal_V" not in d else d["cal_L"]
    T01 = (d["test_L"] >= 0.5).astype(float) if "cal_V" not in d else d["test_L"]
    S, T = d["cal_s"], d["test_s"]
    u = rng.uniform()  # the homogeneous boosting uniform, shared by the compared variants
    for alpha in alphas:
        # 1. attainable values, 0/1 risk
        for att in (None, "binary"):
            tag = "default" if att is None else "binary"
            psi = mdr_decisions(L01, S, T, alpha, attainable=att)
            acc.setdefault(("att", alpha, "SCoRE-MDR", tag), []).append(_risks(T01, psi))
            e = sdr_evalues(L01, S, T, alpha, attainable=att)
            for boost, ee in (("none", e), ("homo", e / u)):
                psi = ebh(ee, alpha)
                acc.setdefault(("att", alpha, f"SCoRE-SDR ({boost})", tag), []).append(
                    _risks(T01, psi))
        # 2. label-dependent e-values (classification only)
        if with_label:
            psi = mdr_decisions(d["cal_L"], S, T, alpha)
            acc.setdefault(("label", alpha, "default"), []).append(_risks(d["test_L"], psi))
            lab = mdr_label_decisions(d["cal_L"], d["cal_V"], d["test_R"], d["test_V"], alpha)
            acc.setdefault(("label", alpha, "label"), []).append(_risks(d["test_L"], lab))
            acc.setdefault(("label-overlap", alpha), []).append(
                ((lab & ~psi).mean(), (psi & ~lab).mean()))
        # 3. SDR gamma
        pred = min(1.0, alpha * (len(d["cal_L"]) + 1) / (1 + d["cal_L"].sum()))
        for gamma in (alpha,) + gammas_extra:
            e = sdr_evalues(d["cal_L"], S, T, gamma)
            for boost, ee in (("none", e), ("homo", e / u)):
                psi = ebh(ee, alpha)
                r = _risks(d["test_L"], psi) + (float(psi.all() or not psi.any()), pred)
                acc.setdefault(("gamma", alpha, gamma, boost), []).append(r)


# ------------------------------------------------------------------------------ tables
def _mean_se(x):
    x = np.asarray(x, float)
    return x.mean(), (x.std(ddof=1) / np.sqrt(x.size) if x.size > 1 else float("nan"))


def _cell(x, digits=3):
    m, se = _mean_se(x)
    return f"{m:.{digits}f} ± {se:.{digits}f}"


WRONG = []  # rows whose realized risk exceeds alpha beyond what sampling explains


def _ok(x, alpha, where):
    m, se = _mean_se(x)
    if exceeds(m, alpha, len(x), Z_OK):
        WRONG.append(f"{where}: risk {m:.4f} > alpha {alpha:g} + {Z_OK:g} sqrt(alpha (1 - alpha)"
                     f" / {len(x)})")
    return "yes" if m <= alpha + Z_OK * se else "NO"


def print_tables(results, reps):
    print("### Attainable values (Remark 4.1): default `l in [0, 1]` vs `attainable=\"binary\"`, "
          "0/1 risk\n")
    print("Realized risk: MDR for SCoRE-MDR, SDR for SCoRE-SDR (guarantee: expectation <= "
          "alpha).\n")
    print("| problem | alpha | method | deploy (default) | deploy (binary) | more | fewer "
          "| risk (default) | risk (binary) | ok |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, acc, alphas in results:
        for alpha in alphas:
            for method in ("SCoRE-MDR", "SCoRE-SDR (none)", "SCoRE-SDR (homo)"):
                a = np.asarray(acc["att", alpha, method, "default"])
                b = np.asarray(acc["att", alpha, method, "binary"])
                col = 1 if method == "SCoRE-MDR" else 2
                more, fewer = (b[:, 0] > a[:, 0]).mean(), (b[:, 0] < a[:, 0]).mean()
                print(f"| {name} | {alpha:g} | {method} | {_cell(a[:, 0])} | {_cell(b[:, 0])} "
                      f"| {more:.2f} | {fewer:.2f} | {_cell(a[:, col], 4)} | {_cell(b[:, col], 4)} "
                      f"| {_ok(a[:, col], alpha, f'{name}, {method}, default')}"
                      f"/{_ok(b[:, col], alpha, f'{name}, {method}, binary')} |")
    label = [(n, acc, al) for n, acc, al in results if any(k[0] == "label" for k in acc)]
    if label:
        print("\n### Label-dependent e-values (eq. 4.3), SCoRE-MDR\n")
        print("`default`: score `1 - max predict_proba`; `label`: `label_score=\"proba\"`. "
              "only label / only default = mean fraction of the test batch deployed by one rule "
              "and not the other. Guarantee: E[MDR] <= alpha.\n")
        print("| problem | alpha | deploy (default) | deploy (label) | only label | only default "
              "| MDR (default) | MDR (label) | ok |")
        print("|---|---|---|---|---|---|---|---|---|")
        for name, acc, alphas in label:
            for alpha in alphas:
                a = np.asarray(acc["label", alpha, "default"])
                b = np.asarray(acc["label", alpha, "label"])
                ov = np.asarray(acc["label-overlap", alpha])
                print(f"| {name} | {alpha:g} | {_cell(a[:, 0])} | {_cell(b[:, 0])} "
                      f"| {ov[:, 0].mean():.3f} | {ov[:, 1].mean():.3f} | {_cell(a[:, 1], 4)} "
                      f"| {_cell(b[:, 1], 4)} | {_ok(a[:, 1], alpha, f'{name}, MDR, default')}"
                      f"/{_ok(b[:, 1], alpha, f'{name}, MDR, label')} |")
    print("\n### SCoRE-SDR with gamma in {alpha, 0.5, 1, 2}\n")
    print("Paper risks (continuous in the simulations). Guarantee: E[SDR] <= alpha for every "
          "gamma > 0. all/none = share of repetitions deploying every test point or none; "
          "pred. = mean of min(1, alpha (n+1) / (1 + sum L_i)) (gamma >= 1 only); "
          "SDR when deployed = mean realized SDR over the repetitions that deploy something "
          "(their share in parentheses): a conditional average, not what the guarantee bounds.\n")
    print("| problem | alpha | gamma | deploy (none) | SDR (none) | deploy (homo) "
          "| all/none (homo) | pred. | SDR (homo) | SDR when deployed (homo) | ok |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for name, acc, alphas in results:
        for alpha in alphas:
            gammas = sorted(k[2] for k in acc if k[0] == "gamma" and k[1] == alpha
                            and k[3] == "none")
            for gamma in gammas:
                a = np.asarray(acc["gamma", alpha, gamma, "none"])
                b = np.asarray(acc["gamma", alpha, gamma, "homo"])
                g = "alpha" if gamma == alpha else f"{gamma:g}"
                pred = f"{b[:, 4].mean():.3f}" if gamma >= 1 else ""
                hit = b[:, 0] > 0
                cond = f"{b[hit, 2].mean():.3f} ({hit.mean():.2f})" if hit.any() else "-"
                print(f"| {name} | {alpha:g} | {g} | {_cell(a[:, 0])} | {_cell(a[:, 2], 4)} "
                      f"| {_cell(b[:, 0])} | {b[:, 3].mean():.2f} | {pred} | {_cell(b[:, 2], 4)} "
                      f"| {cond} | {_ok(a[:, 2], alpha, f'{name}, SDR gamma {g}, none')}"
                      f"/{_ok(b[:, 2], alpha, f'{name}, SDR gamma {g}, homo')} |")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=200, help="Monte-Carlo repetitions")
    parser.add_argument("--problems", default="sim1,sim2,sim3,sim4,sim5,sim6,letter")
    parser.add_argument("--alphas", default=None,
                        help="comma-separated alphas for every problem (default: per problem)")
    parser.add_argument("--gammas", default="0.5,1,2", help="gammas besides gamma = alpha")
    parser.add_argument("--trees", type=int, default=100, help="trees per simulation forest")
    parser.add_argument("--letter", type=Path, default=LETTER_PATH, help="letter.csv.gz")
    parser.add_argument("--quick", action="store_true", help="20 reps, forests of 25 trees")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    reps, trees = args.reps, args.trees
    if args.quick:
        reps, trees = min(reps, 20), min(trees, 25)
    gammas = tuple(float(g) for g in args.gammas.split(","))
    warnings.simplefilter("ignore", RiskControlWarning)
    print(f"## SCoRE variants: power and realized risk ({reps} repetitions; simulations "
          f"n={SIM_N}, m={SIM_M}, forests of {trees} trees; letter n=m=5000)\n")
    results = []
    for name in args.problems.split(","):
        t0 = time.perf_counter()
        problem, alphas = build(name, trees, args.seed, args.letter)
        if problem is None:
            print(f"_{name}: data not found ({args.letter}), skipped._\n")
            continue
        if args.alphas:
            alphas = tuple(float(a) for a in args.alphas.split(","))
        rng = np.random.default_rng([args.seed, sum(map(ord, name))])
        acc = {}
        for _ in range(reps):
            d = problem.draw(rng)
            one_rep(d, alphas, tuple(g for g in gammas if g not in alphas), rng,
                    "cal_V" in d, acc)
        results.append((name, acc, alphas))
        print(f"{name}: {time.perf_counter() - t0:.1f} s", file=sys.stderr, flush=True)
    print_tables(results, reps)
    fail_if(WRONG)


if __name__ == "__main__":
    main()
