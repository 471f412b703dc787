"""Realized risk, deployment rate and reward of SCoRE vs. concentration baselines (paper Sec. 8).

For each simulation setting of the SCoRE paper (Table 1) and each alpha, over ``--reps``
Monte-Carlo repetitions with n = 1000 calibration and m = 100 test points:

* MDR rows: SCoRE-MDR, and the Hoeffding / Rademacher baselines for ``MDR(t)`` (App. D.4);
* SDR rows: SCoRE-SDR with e-BH and boosting none / hete / homo, and the Hoeffding / Rademacher
  baselines for ``SDR*(t)``;

each with the two scores of the paper: ``l_hat`` ("risk") and the reward-aware ratio ("ratio":
``l_hat / r_hat`` for MDR, ``(l_hat - alpha) / r_hat`` for SDR). Reported: realized MDR
(``mean_j L_j psi_j``) or SDR (``sum_j L_j psi_j / max(1, #psi)``) averaged over repetitions
(with its Monte-Carlo standard error), the deployment rate (power) and the reward per test point
(``sum_j r_j psi_j / m``, reward ``Y^2`` rescaled into [0, 1]).

Baseline grids: the Hoeffding baseline needs a grid fixed before seeing the calibration data.
For the "risk" score (``l_hat`` in [0, 1]) it is the paper's ``linspace(0, 1, 101 | 100)``; the
ratio scores are not in [0, 1], so their grid is the 101 (100) evenly spaced quantiles of the
score on an independent sample of 2000 points drawn once per setting, before the repetitions.
The Rademacher baseline uses the calibration scores (its bound is uniform over all thresholds).
``delta = 0.1``. The baselines give PAC-type guarantees only; SCoRE controls the risk in
expectation.

With ``--shift true|estimated`` the test points come from the shifted population (paper Sec. 6)
and SCoRE uses the true / estimated density ratio; the (unweighted) baselines are then skipped.

Usage::

    python benchmarks/selective_validity_power.py --reps 100 > table.md
    python benchmarks/selective_validity_power.py --quick
"""

import argparse
import sys
import time
import warnings

import numpy as np

from sklearn_riskcontrol import RiskControlWarning
from sklearn_riskcontrol.datasets import ScoreSetting, make_score_setting
from sklearn_riskcontrol.evalues.testing import boost_evalues, ebh
from sklearn_riskcontrol.selective import mdr_decisions, sdr_evalues, concentration_threshold


from _common import exceeds, fail_if  # benchmarks/ is on sys.path when run as a script

N_CAL, N_TEST = 1000, 100
DELTA = 0.1
SCORES = ("risk", "ratio")
MDR_METHODS = ("SCoRE-MDR", "Hoeffding-MDR", "Rademacher-MDR")
SDR_METHODS = ("SCoRE-SDR (none)", "SCoRE-SDR (hete)", "SCoRE-SDR (homo)",
               "Hoeffding-SDR", "Rademacher-SDR")


def _kind(target, score):
    return "risk" if score == "risk" else f"{target}_ratio"


def _grids(sim, alphas, rng):
    """Data-independent Hoeffding grids: {(target, score, alpha): grid or None (= default)}."""
    X, _ = sim.sample(2000, rng)
    lhat, rhat = sim.predict_risk(X), sim.predict_reward(X)
    grids = {}
    for alpha in alphas:
        for target, size in (("mdr", 101), ("sdr", 100)):
            grids[target, "risk", alpha] = None
            s = ScoreSetting.combine_scores(lhat, rhat, _kind(target, "ratio"), alpha)
            grids[target, "ratio", alpha] = np.quantile(s, np.linspace(0, 1, size))
    return grids


def _record(acc, key, L, reward, psi, selective):
    risk = (L * psi).sum() / (max(1, psi.sum()) if selective else len(psi))
    acc.setdefault(key, []).append((risk, psi.mean(), (reward * psi).sum() / len(psi)))


def _one_rep(sim, alphas, grids, shift, rng, acc):
    b = sim.draw_problem(N_CAL, N_TEST, rng, shift=shift != "none", estimate=shift == "estimated")
    weights = {}
    if shift == "true":
        weights = dict(cal_weights=b.cal_weights, test_weights=b.test_weights)
    elif shift == "estimated":
        weights = dict(cal_weights=b.cal_weights_hat, test_weights=b.test_weights_hat)
    L, reward = b.test_risks, b.test_rewards
    baselines = shift == "none"
    for alpha in alphas:
        for score in SCORES:
            for target in ("mdr", "sdr"):
                kind = _kind(target, score)
                s_cal = ScoreSetting.combine_scores(b.cal_lhat, b.cal_rhat, kind, alpha)
                s_test = ScoreSetting.combine_scores(b.test_lhat, b.test_rhat, kind, alpha)
                sel = target == "sdr"
                if target == "mdr":
                    psi = mdr_decisions(b.cal_risks, s_cal, s_test, alpha, **weights)
                    _record(acc, (alpha, "SCoRE-MDR", score), L, reward, psi, sel)
                else:
                    e = sdr_evalues(b.cal_risks, s_cal, s_test, alpha, **weights)
                    for boost in ("none", "hete", "homo"):
                        psi = ebh(boost_evalues(e, None if boost == "none" else boost, rng), alpha)
                        _record(acc, (alpha, f"SCoRE-SDR ({boost})", score), L, reward, psi, sel)
                if not baselines:
                    continue
                for bound in ("hoeffding", "rademacher"):
                    res = concentration_threshold(
                        b.cal_risks, s_cal, alpha, target=target, bound=bound, delta=DELTA,
                        grid=grids[target, score, alpha] if bound == "hoeffding" else None,
                        random_state=rng,
                    )
                    name = f"{bound.capitalize()}-{target.upper()}"
                    _record(acc, (alpha, name, score), L, reward, res.decide(s_test), sel)


def _fmt(values):
    """Markdown cells: realized risk ± MC s.e., deployment rate, reward per test point."""
    v = np.asarray(values)
    mean = v.mean(axis=0)
    se = v[:, 0].std(ddof=1) / np.sqrt(len(v)) if len(v) > 1 else float("nan")
    return f"{mean[0]:.3f} ± {se:.3f} | {mean[1]:.3f} | {mean[2]:.4f}"


def _violations(acc, k, alpha, reps, shift):
    """SCoRE's guarantee, E[realized MDR or SDR] <= alpha (values in [0, 1]), for each SCoRE row
    and score: fails when the mean over the ``reps`` independent repetitions exceeds alpha by more
    than 3 sqrt(alpha (1 - alpha) / reps), 3 standard errors of the largest variance the guarantee
    allows (``_common.exceeds``: 0.28 / 0.38 at the quick mode's 10 repetitions and alpha = 0.1 /
    0.2, 0.09 at 100), so a correct method essentially never fails. Not checked: the Hoeffding /
    Rademacher baselines (PAC guarantees on the population risk, not on the realized one) and
    ``--shift estimated`` (estimated density ratios: no finite-sample guarantee)."""
    if shift == "estimated":
        return []
    wrong = []
    for name in MDR_METHODS + SDR_METHODS:
        if not name.startswith("SCoRE") or (alpha, name, "risk") not in acc:
            continue
        for score in SCORES:
            risk = float(np.mean([v[0] for v in acc[alpha, name, score]]))
            if exceeds(risk, alpha, reps):
                wrong.append(f"setting {k}, alpha {alpha:g}, {name}, score {score}: realized "
                             f"risk {risk:.4f} > alpha + 3 sqrt(alpha (1 - alpha) / {reps})")
    return wrong


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=100, help="Monte-Carlo repetitions")
    parser.add_argument("--quick", action="store_true",
                        help="settings 1, 3, 5; alphas 0.1, 0.2; 10 reps; 25 trees")
    parser.add_argument("--settings", type=str, default="1,2,3,4,5,6")
    parser.add_argument("--alphas", type=str, default="0.05,0.1,0.2,0.3")
    parser.add_argument("--trees", type=int, default=100, help="trees per random forest")
    parser.add_argument("--shift", choices=("none", "true", "estimated"), default="none")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    settings = [int(s) for s in args.settings.split(",")]
    alphas = [float(a) for a in args.alphas.split(",")]
    reps, trees = args.reps, args.trees
    if args.quick:
        settings, alphas, reps, trees = [1, 3, 5], [0.1, 0.2], min(reps, 10), 25

    warnings.simplefilter("ignore", RiskControlWarning)  # "nothing certified" is a result here
    print(f"# SCoRE validity and power (n={N_CAL}, m={N_TEST}, reps={reps}, trees={trees}, "
          f"shift={args.shift}, delta={DELTA} for the baselines)\n")
    print("Score `l_hat` (risk) and the reward-aware ratio score; risk = realized MDR or SDR ± "
          "Monte-Carlo s.e., deploy = deployment rate, reward = reward per test point.\n")
    print("| setting | alpha | method | risk (l_hat) | deploy (l_hat) | reward (l_hat) "
          "| risk (ratio) | deploy (ratio) | reward (ratio) |")
    print("|---|---|---|---|---|---|---|---|---|")
    wrong = []
    for k in settings:
        t0 = time.perf_counter()
        rng = np.random.RandomState(args.seed + 100 * k)
        sim = make_score_setting(k, n_estimators=trees, random_state=args.seed + k)
        grids = _grids(sim, alphas, rng)
        acc = {}
        for _ in range(reps):
            _one_rep(sim, alphas, grids, args.shift, rng, acc)
        for alpha in alphas:
            for name in MDR_METHODS + SDR_METHODS:
                if (alpha, name, "risk") in acc:
                    cells = " | ".join(_fmt(acc[alpha, name, s]) for s in SCORES)
                    print(f"| {k} | {alpha:g} | {name} | {cells} |")
            wrong += _violations(acc, k, alpha, reps, args.shift)
        print(f"setting {k}: {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    fail_if(wrong)


if __name__ == "__main__":
    main()
