"""Labels saved by labeling until certified (R-AutoEval+) vs a fixed-n plan, on real LLM data.

Usage::

    python benchmarks/autoeval_label_until_certified.py [--quick] [--reps 200] [--budget 1000]
                                                      [--batch 10] [--betting up] [--data PATH]

Data: ``../shared/data/quantization_triviaqa/`` next to the repository (relative losses of 48
MX-quantized Llama-3.1-8B-Instruct models on 9,960 TriviaQA questions, against human labels and
the BF16 Llama-3.3-70B judge; see that folder's README). Read from the shared folder, never
copied. The script exits cleanly (status 0, a message) when the data is absent.

Protocol, for a few candidates with true risk (mean loss over all 9,960 questions) below
``alpha = 0.1``, ``delta = 0.1``, and each repetition (a random permutation of the questions):

- the first ``budget`` questions are the labeling stream, the other ``N = 9960 - budget`` the
  unlabeled pool (judge losses only);
- **label until certified**: a :class:`~sklearn_riskcontrol.autoeval.LabelingSession` with
  ``max_labels = budget`` (blocks of ``r = floor(N / budget)`` pool losses per label) receives
  labels in batches of ``--batch`` and stops after the batch in which the e-process first
  crosses ``1 / delta`` (or at the budget). Its e-process never looks ahead, so the labels used
  are the first batch boundary at or after the crossing of the full-budget e-process: the
  script computes that with one ``rautoeval_test(..., early_stopping=True)`` per repetition and
  checks it against a real session on the first repetitions;
- **fixed n**: the batch test on the first ``n`` labels with the whole pool
  (``r = floor(N / n)``, the paper's construction). The table gives the smallest ``n`` whose
  certification rate over the same repetitions reaches the sequential rule's (bisection on
  ``n``), and the rate of the fixed plan at the paper's ``n = 150``.

Both rules have type-I error at most ``delta`` over the draw of the labeled questions; the
numbers compare how many human labels each needs for the same power.
"""

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

from sklearn_riskcontrol.autoeval import LabelingSession, rautoeval_test
from sklearn_riskcontrol import RiskControlWarning

from _common import SHARED_DATA, data_file  # benchmarks/ is on sys.path when run as a script

DEFAULT_DATA = SHARED_DATA / "quantization_triviaqa"
ALPHA = DELTA = 0.1
PAPER_N = 150


def load(data):
    z = np.load(data_file(Path(data) / "triviaqa_losses.npz"))
    return z["loss_human"], z["loss_judge_bf16"]


def sequential(h, g, u, budget, batch, betting):
    """(certified, labels used) of stop-when-certified with batches of ``batch``."""
    res = rautoeval_test(h[:budget], g[:budget], u, alpha=ALPHA, delta=DELTA, betting=betting,
                         early_stopping=True)
    if res.stopping_index is None:
        return False, budget
    return True, min(budget, -(-(res.stopping_index + 1) // batch) * batch)


def session_run(h, g, u, budget, batch, betting):
    s = LabelingSession(u, alpha=ALPHA, delta=DELTA, max_labels=budget, betting=betting)
    while s.n_labels < budget and not s.status_.done:
        i = s.n_labels
        s.add(h[i : i + batch], g[i : i + batch])
    return s.status_.certified, s.n_labels


def fixed_rate(H, G, U, n, betting):
    return np.mean([rautoeval_test(h[:n], g[:n], u, alpha=ALPHA, delta=DELTA, betting=betting,
                                   early_stopping=True).certified
                    for h, g, u in zip(H, G, U)])


def smallest_fixed_n(H, G, U, target, budget, betting):
    """Smallest n (bisection, rates assumed nondecreasing in n) with rate >= target."""
    lo, hi = 1, budget
    if fixed_rate(H, G, U, hi, betting) < target:
        return None, fixed_rate(H, G, U, hi, betting)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if fixed_rate(H, G, U, mid, betting) >= target:
            hi = mid
        else:
            lo = mid
    return hi, fixed_rate(H, G, U, hi, betting)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="40 repetitions, budget 500, 2 models")
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--budget", type=int, default=1000)
    ap.add_argument("--batch", type=int, default=10)
    ap.add_argument("--betting", default="up", choices=["up", "wsr"])
    ap.add_argument("--data", default=str(DEFAULT_DATA))
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    Hall, Jall = load(args.data)
    reps, budget, targets = args.reps, args.budget, (0.03, 0.05, 0.07)
    if args.quick:
        reps, budget, targets = 40, 500, (0.03, 0.05)
    risks = Hall.mean(axis=1)
    cands = [int(np.argmin(np.abs(risks - t) + 10 * (risks >= ALPHA))) for t in targets]
    rng = np.random.default_rng(args.seed)
    perms = [rng.permutation(Hall.shape[1]) for _ in range(reps)]
    t0 = time.perf_counter()
    print(f"alpha = delta = {ALPHA}, budget {budget} labels, pool N = {Hall.shape[1] - budget}, "
          f"batches of {args.batch}, betting={args.betting!r}, {reps} repetitions, "
          "judge BF16")
    print("P(cert) = certification rate over repetitions (type-I error <= delta for both "
          "rules); labels = human labels used (budget when not certified).")
    head = (f"{'cand':>4} {'risk':>6} | {'seq P(cert)':>11} {'mean labels':>11} "
            f"{'median|cert':>11} | {'fixed n':>7} {'P(cert)':>7} {'saved':>6} | "
            f"{'P(cert) n=150':>13}")
    print(head)
    print("-" * len(head))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RiskControlWarning)
        for k in cands:
            H = [Hall[k, p[:budget]] for p in perms]
            G = [Jall[k, p[:budget]] for p in perms]
            U = [Jall[k, p[budget:]] for p in perms]
            seq = np.array([sequential(h, g, u, budget, args.batch, args.betting)
                            for h, g, u in zip(H, G, U)])
            for i in range(min(3, reps)):  # the shortcut is what a real session does
                real = session_run(H[i], G[i], U[i], budget, args.batch, args.betting)
                assert tuple(real) == (bool(seq[i, 0]), int(seq[i, 1])), (real, seq[i])
            power = seq[:, 0].mean()
            n_fix, p_fix = smallest_fixed_n(H, G, U, power, budget, args.betting)
            cert_labels = seq[seq[:, 0] == 1, 1]
            mean_lab = seq[:, 1].mean()
            saved = "n/a" if n_fix is None else f"{1 - mean_lab / n_fix:.0%}"
            p150 = fixed_rate(H, G, U, PAPER_N, args.betting)
            print(f"{k:>4} {risks[k]:>6.3f} | {power:>11.2f} {mean_lab:>11.1f} "
                  f"{(np.median(cert_labels) if cert_labels.size else np.nan):>11.0f} | "
                  f"{'>budget' if n_fix is None else n_fix:>7} {p_fix:>7.2f} {saved:>6} | "
                  f"{p150:>13.2f}")
    print(f"total time {time.perf_counter() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
