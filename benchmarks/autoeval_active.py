"""Active labeling: labels to certify with ActiveLabelingSession, active vs uniform, and its
type-I error at the boundary.

Usage::

    python benchmarks/autoeval_active.py [--quick] [--reps 100] [--typei-reps 100]
                                         [--data PATH] [--seed 0] [--only d]

All tables come from one run, at the same (alpha, delta) within a table; labels are proposed in
batches of 10 and the labels to certify are ``stopping_index + 1`` (the label at which the
e-process crossed ``1 / delta``; the budget when it never did).

(a) Simulated pool, N = 6000, a calibrated judge (its loss is the probability that the model
    errs): nearly sure (P(error) ~ U(0, 0.01)) on 2/3 of the rows, unsure (U(0.1, 0.5)) on the
    rest; true losses drawn from those probabilities (pool risk ~ 0.10); alpha = 0.15,
    delta = 0.1, budget 3000. A fresh pool per repetition. Columns: ``sampling="active"``
    (default), ``sampling="uniform"`` (the plain random order over the pool, the same e-process
    with one stratum) and, for reference, R-Eval (``LabelingSession(method="eval")``, i.i.d.
    bets, no judge) on the same uniform order. Target: active needs >= 25% fewer labels than
    uniform (mean) at a certification rate at least as high.
(b) quantization_triviaqa (``../shared/data``; skipped when absent, never copied): the pool is
    the 9,960 questions, a candidate's relative loss against the human labels is the true loss,
    its loss against a judge (BF16, good; MX4, almost useless) is ``loss_judge``; three
    candidates with pool risk below alpha = 0.1, delta = 0.1, budget 2000; repetitions differ
    only in the random draws. Target: active never needs more than 5% more labels than uniform.
(c) Type-I error at the boundary: pool risk exactly alpha = 0.15 (450 errors among N = 3000),
    the judge as in (a) but the errors placed where it is sure (sure and wrong), where it is
    unsure, or anywhere; budget 1500 (proposals in batches of 50), delta = 0.1. A rate above
    delta + 3 s.e. is a wrong result.
(d) Model selection (``loss_judge`` of shape (N, 3)): the pool of (a) with N = 3000, three
    candidates whose error probabilities are 0.5, 1 and 2.5 times the judge's (pool risks
    ~0.05, ~0.10, ~0.25), one label per row giving all three losses; alpha = 0.15,
    delta = 0.1 family-wise, budget 1000, default cost (the last certified candidate is
    selected: candidate 1 when both 0 and 1 are certified). Labels to reach that selection:
    fixed sequence, the label at which the last of candidates 0, 1 crossed; Bonferroni, the
    label at which candidate 1 crossed (at level delta / 3); the budget when never. Active
    vs uniform on the same pools, both procedures.
"""

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from _common import SHARED_DATA, exceeds, fail_if, met  # benchmarks/ is on sys.path

from sklearn_riskcontrol import RiskControlWarning
from sklearn_riskcontrol.autoeval import ActiveLabelingSession, rautoeval_test

DEFAULT_DATA = SHARED_DATA / "quantization_triviaqa"
BATCH = 10

# the boundary pools of table (c), shared with tests/autoeval/test_active_labeling.py
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from _active_pools import boundary_pool  # noqa: E402


def labels_to_certify(g, h, alpha, delta, budget, sampling, seed, batch=BATCH):
    s = ActiveLabelingSession(g, alpha=alpha, delta=delta, max_labels=budget,
                              sampling=sampling, random_state=seed)
    while not s.status_.done:
        rows = s.propose(min(batch, budget - s.n_labels))
        st = s.add(rows, h[rows])
    return (True, st.stopping_index + 1) if st.certified else (False, budget)


def reval_uniform(h, alpha, delta, budget, seed):
    order = np.random.default_rng(seed).permutation(h.size)[:budget]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RiskControlWarning)
        res = rautoeval_test(h[order], alpha=alpha, delta=delta, method="eval",
                             early_stopping=True)
    return (True, res.stopping_index + 1) if res.certified else (False, budget)


def simulated_pool(rng, N):
    sure = rng.random(N) < 2 / 3
    g = np.where(sure, rng.uniform(0, 0.01, N), rng.uniform(0.1, 0.5, N))
    return g, (rng.random(N) < g).astype(float)


def summary(runs):
    runs = np.array(runs, dtype=float)
    return runs[:, 0].mean(), runs[:, 1].mean(), np.median(runs[:, 1])


def table_a(reps, seed):
    alpha, delta, N, budget = 0.15, 0.1, 6000, 3000
    rng = np.random.default_rng(seed)
    runs = {"active": [], "uniform": [], "R-Eval (uniform)": []}
    for r in range(reps):
        g, h = simulated_pool(rng, N)
        runs["active"].append(labels_to_certify(g, h, alpha, delta, budget, "active", r))
        runs["uniform"].append(labels_to_certify(g, h, alpha, delta, budget, "uniform", r))
        runs["R-Eval (uniform)"].append(reval_uniform(h, alpha, delta, budget, r))
    print(f"(a) simulated pool N={N}, calibrated judge sure on 2/3, alpha={alpha}, "
          f"delta={delta}, budget {budget}, {reps} pools")
    print(f"{'sampling':>18} | {'P(cert)':>7} {'mean labels':>11} {'median':>7}")
    res = {}
    for name, v in runs.items():
        res[name] = summary(v)
        p, m, med = res[name]
        print(f"{name:>18} | {p:>7.2f} {m:>11.1f} {med:>7.0f}")
    ratio = res["active"][1] / res["uniform"][1]
    ok = ratio <= 0.75 and res["active"][0] >= res["uniform"][0]
    print(f"active / uniform mean labels = {ratio:.2f} ({1 - ratio:.0%} fewer); target >= 25% "
          f"fewer at a certification rate at least as high: {met(ok)}")
    print()


def table_b(reps, data, quick):
    path = Path(data) / "triviaqa_losses.npz"
    if not path.exists():
        print(f"skipped: (b) quantization_triviaqa not found at {path}")
        print()
        return
    z = np.load(path)
    H = z["loss_human"]
    alpha, delta, budget = 0.1, 0.1, 2000
    risks = H.mean(axis=1)
    targets = (0.03, 0.05, 0.07)
    cands = [int(np.argmin(np.abs(risks - t) + 10 * (risks >= alpha))) for t in targets]
    judges = ("bf16",) if quick else ("bf16", "mx4")
    print(f"(b) quantization_triviaqa, pool N={H.shape[1]}, alpha={alpha}, delta={delta}, "
          f"budget {budget}, {reps} repetitions per candidate")
    head = (f"{'judge':>5} {'cand':>4} {'risk':>6} {'strata':>12} | {'active P/mean/med':>19} | "
            f"{'uniform P/mean/med':>19} | {'ratio':>5}")
    print(head)
    print("-" * len(head))
    worst = 0.0
    for judge in judges:
        G = z[f"loss_judge_{judge}"]
        for k in cands:
            g, h = G[k], H[k]
            act = [labels_to_certify(g, h, alpha, delta, budget, "active", r)
                   for r in range(reps)]
            uni = [labels_to_certify(g, h, alpha, delta, budget, "uniform", r)
                   for r in range(reps)]
            a, u = summary(act), summary(uni)
            sizes = ActiveLabelingSession(g, alpha=alpha, delta=delta,
                                          max_labels=budget).stratum_sizes_
            ratio = a[1] / u[1]
            worst = max(worst, ratio)
            print(f"{judge:>5} {k:>4} {risks[k]:>6.3f} {'/'.join(map(str, sizes)):>12} | "
                  f"{a[0]:>5.2f} {a[1]:>7.1f} {a[2]:>5.0f} | {u[0]:>5.2f} {u[1]:>7.1f} "
                  f"{u[2]:>5.0f} | {ratio:>5.2f}")
    print(f"largest active / uniform ratio of mean labels = {worst:.2f}; target <= 1.05: "
          f"{met(worst <= 1.05)}")
    print()


def table_c(reps, seed):
    alpha, delta, N, budget = 0.15, 0.1, 3000, 1500
    rng = np.random.default_rng(seed + 1)
    print(f"(c) type-I error at the boundary: pool risk exactly {alpha} (N={N}), delta={delta}, "
          f"budget {budget}, batches of 50, {reps} pools per row")
    print(f"{'errors placed':>15} {'sampling':>8} | {'P(cert)':>7} {'bound':>6}")
    wrong = []
    for where in ("sure-and-wrong", "unsure", "anywhere"):
        for sampling in ("active", "uniform"):
            hits = 0
            for r in range(reps):
                g, h = boundary_pool(rng, where, N, alpha)
                hits += labels_to_certify(g, h, alpha, delta, budget, sampling, r, 50)[0]
            rate = hits / reps
            print(f"{where:>15} {sampling:>8} | {rate:>7.3f} {delta:>6.2f}")
            if exceeds(rate, delta, reps):
                wrong.append(f"type-I error {rate:.3f} > delta={delta} + 3 s.e. ({where}, "
                             f"{sampling})")
    print()
    return wrong


def labels_to_select(G, H, alpha, delta, budget, sampling, procedure, seed, batch=BATCH):
    """Labels until candidate 1 is selected (see (d)); ``(reached, labels)``."""
    s = ActiveLabelingSession(G, alpha=alpha, delta=delta, max_labels=budget,
                              sampling=sampling, procedure=procedure, random_state=seed)
    st = s.status_
    # candidate 2 (risk above alpha) is only ruled out near the end of the budget; the
    # selection of candidate 1 is settled once it is certified
    while not st.final and st.selected != 1:
        rows = s.propose(min(batch, budget - s.n_labels))
        st = s.add(rows, H[rows])
    if st.selected != 1:
        return False, budget
    stop = [c.stopping_index for c in st.candidates[:2]]
    return True, (max(stop) if procedure == "fst" else stop[1]) + 1


def table_d(reps, seed):
    alpha, delta, N, budget = 0.15, 0.1, 3000, 1000
    rng = np.random.default_rng(seed + 2)
    runs = {(p, s): [] for p in ("fst", "bonferroni") for s in ("active", "uniform")}
    risks = []
    for r in range(reps):
        g, _ = simulated_pool(rng, N)
        G = np.minimum(1, g[:, None] * np.array([0.5, 1.0, 2.5]))
        H = (rng.random(N)[:, None] < G).astype(float)
        risks.append(H.mean(axis=0))
        for (procedure, sampling), out in runs.items():
            out.append(labels_to_select(G, H, alpha, delta, budget, sampling, procedure, r))
    mean_risk = np.mean(risks, axis=0)
    print(f"(d) model selection, 3 candidates (mean pool risks "
          f"{', '.join(f'{x:.3f}' for x in mean_risk)}), N={N}, alpha={alpha}, family-wise "
          f"delta={delta}, budget {budget}, {reps} pools; labels until candidate 1 is selected")
    print(f"{'procedure':>10} {'sampling':>8} | {'P(sel)':>6} {'mean labels':>11} {'median':>7}")
    for procedure in ("fst", "bonferroni"):
        res = {}
        for sampling in ("active", "uniform"):
            res[sampling] = summary(runs[procedure, sampling])
            p, m, med = res[sampling]
            print(f"{procedure:>10} {sampling:>8} | {p:>6.2f} {m:>11.1f} {med:>7.0f}")
        ratio = res["active"][1] / res["uniform"][1]
        print(f"{procedure:>10}: active / uniform mean labels = {ratio:.2f} (one realized run)")
    print()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true",
                    help="10 pools for (a), 5 repetitions and the BF16 judge for (b), 20 for "
                         "(c), 5 pools for (d)")
    ap.add_argument("--reps", type=int, default=100)
    ap.add_argument("--typei-reps", type=int, default=100)
    ap.add_argument("--data", default=str(DEFAULT_DATA))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--only", default="abcd", help="tables to run (default: abcd)")
    args = ap.parse_args(argv)
    reps_a, reps_b, reps_c = args.reps, max(1, args.reps // 2), args.typei_reps
    reps_d = max(1, args.reps // 4)
    if args.quick:
        reps_a, reps_b, reps_c, reps_d = 10, 5, 20, 5
    t0 = time.perf_counter()
    print(f"labels proposed in batches of {BATCH}; labels = label at which the e-process "
          "crossed 1/delta (budget when never); one realized run of each table.\n")
    wrong = []
    if "a" in args.only:
        table_a(reps_a, args.seed)
    if "b" in args.only:
        table_b(reps_b, args.data, args.quick)
    if "c" in args.only:
        wrong = table_c(reps_c, args.seed)
    if "d" in args.only:
        table_d(reps_d, args.seed)
    print(f"total time {time.perf_counter() - t0:.1f} s")
    fail_if(wrong)
    return 0


if __name__ == "__main__":
    sys.exit(main())
