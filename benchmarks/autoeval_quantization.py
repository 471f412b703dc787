"""LLM quantization study of R-AutoEval+ (paper Fig. 1 / Fig. 6): which quantized model to deploy.

Usage::

    python benchmarks/autoeval_quantization.py [--reps 500] [--betting wsr] [--n-jobs 2]
                                                [--n 150] [--r 5] [--data PATH] [--quick]

Data: ``../shared/data/quantization_triviaqa/`` next to the repository (per-question relative
losses of 48 MX-quantized Llama-3.1-8B-Instruct candidates on 9,960 TriviaQA questions, against
human labels and against three LLM judges; see that folder's README). The tables have no clear
licence: they are read from the shared folder and never copied into the package.

Protocol (the reference's ``main_box.py``): ``np.random.seed(10)`` once, then repetition ``k``
permutes the 9,960 questions with the ``k``-th draw of ``np.random.permutation(9960)``; columns
``[0, 960)`` are the test set (only used to report the risk of the selected model), the next
``n`` columns are labeled, the next ``N = ceil(r n)`` are unlabeled (R-Eval ignores them).
Fixed-sequence testing over the 48 candidates in decreasing bitwidth at ``alpha = delta = 0.1``
(:func:`sklearn_riskcontrol.autoeval.rautoeval_select`, ``cost`` = model size); the selected model
is the smallest certified one. If nothing is certified the unquantized BF16 model (16.06 GB,
relative loss 0 by definition) is deployed; the table reports both the mean size with that
fallback and how often it happens.

Reported per judge x method: mean selected size (GB) with its standard error, the largest size
within 1.5 IQR of the upper quartile (what the paper's Fig. 1 plots), the fraction of
repetitions with nothing certified, mean test-set risk of the deployed model, and the fraction of
repetitions whose deployed model has true risk (mean loss over all 9,960 questions) above alpha
(the FWER guarantee bounds it by delta = 0.1). Then the wall-clock time of the whole study with
``n_jobs`` workers (target: <= 2 minutes for the default 500 repetitions, WSR, ``n_jobs=2``)
and, for scale, the time of a plain per-round loop implementation of the same WSR test on a few
repetitions (extrapolated), with the ratio; its selections are checked to equal ours.
"""

import argparse
import math
import time
import warnings
from pathlib import Path

import numpy as np
from joblib import Parallel, delayed

from sklearn_riskcontrol import RiskControlWarning
from sklearn_riskcontrol.autoeval import rautoeval_select

from _common import SHARED_DATA, data_file, exceeds, fail_if, met  # benchmarks/ on sys.path

DEFAULT_DATA = SHARED_DATA / "quantization_triviaqa"
JUDGES = {"BF16": "loss_judge_bf16", "MX6": "loss_judge_mx6", "MX4": "loss_judge_mx4"}
METHODS = {"R-Eval": "eval", "R-AutoEval": "autoeval", "R-AutoEval+": "plus"}
N_TEST = 960
FULL_SIZE_GB = 8.03e9 * 16 / 8 / 1e9  # unquantized BF16 model, the fallback


def load(data):
    z = np.load(data_file(Path(data) / "triviaqa_losses.npz"))
    return z["loss_human"], {j: z[key] for j, key in JUDGES.items()}, z["model_size_gb"]


def permutations(reps, n_cols, seed=10):
    """The reference's splits: seed once, then the k-th draw of np.random.permutation."""
    np.random.seed(seed)
    return np.stack([np.random.permutation(n_cols) for _ in range(reps)])


def run_one(perm, H, judges, sizes, n, N, alpha, delta, betting):
    """All judges x methods for one repetition: (selected index or -1) per cell."""
    lab, unl = perm[N_TEST : N_TEST + n], perm[N_TEST + n : N_TEST + n + N]
    out = {}
    for jname, J in judges.items():
        for mname, method in METHODS.items():
            sel = rautoeval_select(
                H[:, lab], J[:, lab], None if method == "eval" else J[:, unl], alpha=alpha,
                delta=delta, procedure="fst", cost=sizes, method=method, betting=betting,
            )
            out[jname, mname] = -1 if sel.selected is None else sel.selected
    return out


def run_chunk(perms, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RiskControlWarning)  # "nothing certified" is counted
        return [run_one(p, *args) for p in perms]


def whisker(x):
    """Largest value within 1.5 IQR of the upper quartile (the statistic of the paper's Fig. 1)."""
    q1, q3 = np.percentile(x, [25, 75])
    return float(x[x <= q3 + 1.5 * (q3 - q1)].max())


# ---------------------------------------------------------------------- plain baseline
def plain_wsr_select(Hl, Jl, Ju, alpha, delta, method, n_rho=10, c=0.75):
    """FST with R-(Auto)Eval(+) and WSR bets, written plainly: loops over candidates and rounds."""
    K, n = Hl.shape
    rhos = {"eval": [0.0], "autoeval": [1.0], "plus": list(np.linspace(0, 1, n_rho))}[method]
    last = None
    for k in range(K):
        r = Ju.shape[1] // n if Ju is not None else 0
        total = 0.0
        peak = 0.0
        wealth = [1.0] * len(rhos)
        sums = [0.0] * len(rhos)
        sq = [0.0] * len(rhos)
        for i in range(n):
            ubar = float(np.mean(Ju[k, i * r : (i + 1) * r])) if r else 0.0
            for s, rho in enumerate(rhos):
                q = Hl[k, i] + rho * (ubar - Jl[k, i]) if r else Hl[k, i]
                sigma2 = (0.25 + sq[s]) / (i + 1)
                lam = min(c / (1 + rho - alpha), math.sqrt(2 * math.log(1 / delta) / (n * sigma2)))
                wealth[s] *= 1 - lam * (q - alpha)
                sums[s] += q
                mu = (0.5 + sums[s]) / (i + 2)
                sq[s] += (q - mu) ** 2
            total = sum(wealth) / len(rhos)
            peak = max(peak, total)
        if peak < 1 / delta:
            break
        last = k
    return last


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=500)
    ap.add_argument("--n", type=int, default=150)
    ap.add_argument("--r", type=float, default=5.0)
    ap.add_argument("--alpha", type=float, default=0.1)
    ap.add_argument("--delta", type=float, default=0.1)
    ap.add_argument("--betting", choices=["wsr", "up"], default="wsr")
    ap.add_argument("--n-jobs", type=int, default=2)
    ap.add_argument("--baseline-reps", type=int, default=3,
                    help="repetitions timed with the plain loop implementation (0: skip)")
    ap.add_argument("--data", default=str(DEFAULT_DATA))
    ap.add_argument("--quick", action="store_true", help="20 repetitions, 1 with the baseline")
    args = ap.parse_args()
    if args.quick:
        args.reps, args.baseline_reps = 20, min(args.baseline_reps, 1)
    H, judges, sizes = load(args.data)
    K, n_cols = H.shape
    n, N = args.n, int(math.ceil(args.r * args.n))
    perms = permutations(args.reps, n_cols)
    true_risk = H.mean(axis=1)
    print(f"{K} candidates, {n_cols} questions; reps={args.reps}, n={n}, N={N}, "
          f"alpha={args.alpha}, delta={args.delta}, betting={args.betting}, "
          f"n_jobs={args.n_jobs}")

    fargs = (H, judges, sizes, n, N, args.alpha, args.delta, args.betting)
    t0 = time.perf_counter()
    chunks = np.array_split(np.arange(args.reps), max(1, 4 * args.n_jobs))
    parts = Parallel(n_jobs=args.n_jobs)(
        delayed(run_chunk)(perms[idx], *fargs) for idx in chunks if idx.size
    )
    elapsed = time.perf_counter() - t0
    runs = [r for part in parts for r in part]
    n_sel = args.reps * len(JUDGES) * len(METHODS)

    print()
    print("| judge | method | mean size (GB) | max size within 1.5 IQR (GB) | nothing certified "
          "| mean test risk | P(true risk > alpha) |")
    print("|---|---|---|---|---|---|---|")
    wrong = []
    for jname in JUDGES:
        for mname in METHODS:
            sel = np.array([r[jname, mname] for r in runs])
            none = sel < 0
            size = np.where(none, FULL_SIZE_GB, sizes[np.maximum(sel, 0)])
            test_risk = np.array([
                0.0 if s < 0 else H[s, p[:N_TEST]].mean() for s, p in zip(sel, perms)
            ])
            viol = np.where(none, False, true_risk[np.maximum(sel, 0)] > args.alpha)
            se = size.std(ddof=1) / np.sqrt(size.size) if size.size > 1 else 0.0
            print(f"| {jname} | {mname} | {size.mean():.3f} ± {se:.3f} | {whisker(size):.3f} | "
                  f"{none.mean():.3f} | "
                  f"{test_risk.mean():.4f} | {viol.mean():.3f} |")
            # FWER guarantee of every method: P(deployed model's true risk > alpha) <= delta
            # (true risk: the mean loss over all questions, a population quantity). Repetitions
            # are treated as independent draws; slack 3 sqrt(delta (1 - delta) / reps) (0.20 at
            # the quick mode's 20 repetitions, 0.040 at 500).
            if exceeds(viol.mean(), args.delta, args.reps):
                wrong.append(f"{jname} judge, {mname}: P(true risk > alpha) {viol.mean():.3f} > "
                             f"delta {args.delta:g} + 3 sqrt(delta (1 - delta) / {args.reps})")
    print()
    print(f"study: {args.reps} reps x {len(JUDGES)} judges x {len(METHODS)} methods = {n_sel} "
          f"FST selections in {elapsed:.1f} s with n_jobs={args.n_jobs} "
          f"({1000 * elapsed / n_sel:.2f} ms per selection)")
    if (args.reps, args.n_jobs, args.betting) == (500, 2, "wsr"):  # the setting of the target
        print(f"target: the study in <= 2 minutes: {met(elapsed <= 120)}")

    if args.baseline_reps and args.betting == "wsr":
        check = {}
        t0 = time.perf_counter()
        for p in perms[: args.baseline_reps]:
            lab, unl = p[N_TEST : N_TEST + n], p[N_TEST + n : N_TEST + n + N]
            for jname, J in judges.items():
                for mname, method in METHODS.items():
                    check[tuple(p[:3]), jname, mname] = plain_wsr_select(
                        H[:, lab], J[:, lab], None if method == "eval" else J[:, unl],
                        args.alpha, args.delta, method)
        base = time.perf_counter() - t0
        agree = all(
            (-1 if v is None else v) == runs[i][j, m]
            for i, p in enumerate(perms[: args.baseline_reps])
            for (key, j, m), v in check.items() if key == tuple(p[:3])
        )
        per = base / (args.baseline_reps * len(JUDGES) * len(METHODS))
        print(f"plain per-round loop (1 core): {1000 * per:.1f} ms per selection, "
              f"extrapolated {per * n_sel:.0f} s for the study; ours is "
              f"{per * n_sel / elapsed:.0f}x faster (with {args.n_jobs} jobs); "
              f"same selections: {agree}")
        assert agree, "the plain loop selects other models"
    fail_if(wrong)


if __name__ == "__main__":
    main()
