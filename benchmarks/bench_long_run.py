"""Long-run stability and memory: e-processes, SPS, SCoRE and bandits at 10^5 .. 10^7 items.

Every (case, size) runs in a fresh subprocess so peaks do not mix (``--quick``, a smoke test at
small sizes, runs them all in this process). In the child the inputs are
built first (not measured); then the call is timed with the peak resident memory reset just
before it (``/proc/self/clear_refs``; ``rss`` = peak RSS minus RSS before the call), and run a
second time under ``tracemalloc`` (``traced`` = peak of the Python/NumPy allocations of the call).
Both are divided by the number of items (rounds, test points, evaluations) to show that memory
is linear: the bytes per item stay flat from 10^6 to 10^7.

Numerical checks on the result of the timed call, against references computed another way:

* ``fixed``: fixed bets on binary losses; the log-wealth after every round equals the closed form
  ``c0(i) log1p(lam alpha) + c1(i) log1p(-lam (1 - alpha))`` from exact integer counts.
* ``wsr``: WSR bets; the final log-wealth equals ``math.fsum`` of the per-round log-factors.
* ``up``: universal portfolio (16 Gauss-Chebyshev nodes) on binary losses; the log-wealth at
  1000 checkpoints equals the prior mixture of constant-bet wealths in closed form (counts).
* ``up-dense``: the same on continuous losses (cumulative-sum path); final log-wealth vs
  ``math.fsum`` of the log-factors of the returned bets.
* ``sps``: SPS thresholds (anytime schedule) are non-decreasing, and at 10 checkpoints equal
  ``max(tau_t, k_t-th smallest of s_1..s_t)`` computed with ``np.partition``; the last one is below
  the N(0, 1) quantile ``tau*``.
* ``sdr-n1e4`` / ``sdr-n1e6``: SCoRE-SDR e-values of ``size`` test points against ``n``
  calibration points, checked against an independent implementation of the closed form
  (binary searches in the sorted calibration and test scores instead of the merged sort).
* ``mdr-n1e4`` / ``mdr-n1e6``: MDR e-values and decisions equal those computed in chunks of
  10^6 test points, and the decisions equal Prop. 4.4 evaluated with binary searches.
* ``ucbe`` / ``pulse``: 500 models x (2 size / 500) examples, budget ``size`` evaluations; every
  cell is bought once (``n_evaluations_ == revealed cells == budget``), UCB-E's means equal
  ``math.fsum`` over the revealed cells, PULSE's estimates and intervals are finite.

    python benchmarks/bench_long_run.py                        # 10^5, 10^6, 10^7 (bandits 10^4..10^6)
    python benchmarks/bench_long_run.py --max-size 1e6         # quicker
    python benchmarks/bench_long_run.py --cases wsr,sps --no-trace
    python benchmarks/bench_long_run.py --quick    # 2 small sizes per case, in one process
"""

import argparse
import gc
import json
import math
import os
import subprocess
import sys
import time
import tracemalloc

import numpy as np

ARRAY_SIZES = (10**5, 10**6, 10**7)
BANDIT_SIZES = (10**4, 10**5, 10**6)
# --quick; a bandit budget must cover PULSE's warm-up (16 examples x 500 models)
QUICK_ARRAY_SIZES, QUICK_BANDIT_SIZES = (10**3, 10**4), (10**4, 3 * 10**4)
ALPHA = 0.2


# ---------------------------------------------------------------------------------- helpers
def _binary_losses(size, p=0.1, seed=0):
    return (np.random.default_rng(seed).random(size) < p).astype(float)


def _counts_before_and_after(q):
    """Exact integer counts of zeros and ones after each round."""
    c1 = np.cumsum(q.astype(np.int64))
    c0 = np.arange(1, q.size + 1, dtype=np.int64) - c1
    return c0, c1


def _rel_err(a, b):
    return float(np.max(np.abs(a - b) / np.maximum(1.0, np.abs(b)))) if np.size(a) else 0.0


def _finite_log_wealth(res):
    return bool(np.all(np.isfinite(res.log_wealth)) and np.all(np.isfinite(res.bets)))


# ------------------------------------------------------------------------------------ cases
def make_fixed(size):
    return {"q": _binary_losses(size)}


def run_fixed(q):
    from sklearn_riskcontrol.evalues.betting import FixedBet, betting_eprocess

    return betting_eprocess(q, ALPHA, betting=FixedBet(0.5))


def check_fixed(inputs, res):
    q = inputs["q"]
    lam = 0.5 / (1 - ALPHA)
    c0, c1 = _counts_before_and_after(q)
    ref = c0 * math.log1p(lam * ALPHA) + c1 * math.log1p(-lam * (1 - ALPHA))
    err = _rel_err(res.log_wealth, ref)
    return {"finite": _finite_log_wealth(res), "final_log_wealth": float(res.log_wealth[-1]),
            "max_rel_err": err, "ok": _finite_log_wealth(res) and err < 1e-9}


def make_wsr(size):
    return {"q": _binary_losses(size)}


def run_wsr(q):
    from sklearn_riskcontrol.evalues.betting import WSR, betting_eprocess

    return betting_eprocess(q, ALPHA, betting=WSR(), delta=0.05)


def _fsum_check(q, res):
    inc = np.log1p(-res.bets * (q - ALPHA))
    ref = math.fsum(inc.tolist())
    err = abs(float(res.log_wealth[-1]) - ref) / max(1.0, abs(ref))
    return {"finite": _finite_log_wealth(res), "final_log_wealth": float(res.log_wealth[-1]),
            "max_rel_err": err, "ok": _finite_log_wealth(res) and err < 1e-9}


def check_wsr(inputs, res):
    return _fsum_check(inputs["q"], res)


UP_NODES = 16


def make_up(size):
    return {"q": _binary_losses(size)}


def run_up(q):
    from sklearn_riskcontrol.evalues.betting import UniversalPortfolio, betting_eprocess

    return betting_eprocess(q, ALPHA, betting=UniversalPortfolio(n_nodes=UP_NODES))


def check_up(inputs, res):
    from sklearn_riskcontrol.evalues.betting import UniversalPortfolio

    q = inputs["q"]
    nodes, weights = UniversalPortfolio(n_nodes=UP_NODES).quadrature(q.size)
    unit = 1.0 / (1.0 - ALPHA)
    idx = np.unique(np.linspace(0, q.size - 1, 1000).astype(np.int64))
    c0, c1 = _counts_before_and_after(q)
    node_lw = (c0[idx, None] * np.log1p(nodes * unit * ALPHA)[None, :]
               + c1[idx, None] * np.log1p(-nodes * unit * (1 - ALPHA))[None, :])
    top = node_lw.max(axis=1)
    ref = top + np.log(np.exp(node_lw - top[:, None]) @ weights)
    err = _rel_err(res.log_wealth[idx], ref)
    return {"finite": _finite_log_wealth(res), "final_log_wealth": float(res.log_wealth[-1]),
            "max_rel_err": err, "ok": _finite_log_wealth(res) and err < 1e-9}


def make_up_dense(size):
    return {"q": np.random.default_rng(1).beta(1.0, 8.0, size)}


run_up_dense = run_up


def check_up_dense(inputs, res):
    return _fsum_check(inputs["q"], res)


def make_sps(size):
    return {"scores": np.random.default_rng(2).standard_normal(size)}


def run_sps(scores):
    from sklearn_riskcontrol.online import simulate_thresholds

    return simulate_thresholds(scores, 0.1)


def check_sps(inputs, tau):
    from scipy.stats import norm

    from sklearn_riskcontrol.online import SPSLearner

    s = inputs["scores"]
    learner = SPSLearner(0.1)
    monotone = bool(tau[0] == -np.inf and np.all(tau[1:] >= tau[:-1]))
    mismatches = 0
    for t in np.unique(np.linspace(1, s.size - 1, 10).astype(np.int64)):
        k = learner.rank(int(t))  # tau_{t+1} from the first t scores
        kth = np.partition(s[:t], k - 1)[k - 1] if k > 0 else -np.inf
        mismatches += tau[t] != max(tau[t - 1], kth)
    tau_star = norm.ppf(0.1)
    last = float(tau[-1])
    below = last <= tau_star
    return {"monotone": monotone, "checkpoint_mismatches": int(mismatches),
            "final_threshold": last, "tau_star_gap": float(tau_star - last),
            "ok": monotone and mismatches == 0 and below}


def _score_inputs(size, n_cal, seed=3):
    rng = np.random.default_rng(seed)
    S = rng.random(n_cal)
    L = (rng.random(n_cal) < S).astype(float)  # riskier when the score is high
    T = rng.random(size)
    return {"L": L, "S": S, "T": T}


def _sdr_reference(L, S, T, gamma):
    """Closed form of SCoRE-SDR (unweighted) with binary searches, independent of the merged
    sort of the package: t1 / t0 = last value with g(t) >= 1 / >= 0."""
    n, m = L.size, T.size
    order = np.argsort(S, kind="stable")
    Ss, cumA = S[order], np.cumsum(L[order])
    Ts = np.sort(T)
    cand = np.union1d(Ss, Ts)
    k = np.searchsorted(Ss, cand, side="right")
    A = np.where(k > 0, cumA[np.maximum(k - 1, 0)], 0.0)
    N = np.searchsorted(Ts, cand, side="right").astype(float)
    budget = gamma * (n + 1) * N / m
    tol = 1e-12 * np.abs(budget)
    ok1 = A + 1 <= budget + tol
    if not ok1.any():
        return np.zeros(m)
    i1 = np.flatnonzero(ok1)[-1]
    i0 = max(i1, np.flatnonzero(A <= budget + tol)[-1])
    value = (n + 1) / min(1 + A[i0], budget[i0])
    return np.where(T <= cand[i1], value, 0.0)


def make_sdr_n1e4(size):
    return _score_inputs(size, 10**4)


def make_sdr_n1e6(size):
    return _score_inputs(size, 10**6)


def run_sdr(L, S, T):
    from sklearn_riskcontrol.evalues import sdr_evalues

    return sdr_evalues(L, S, T, ALPHA)


run_sdr_n1e4 = run_sdr_n1e6 = run_sdr


def check_sdr(inputs, e):
    ref = _sdr_reference(inputs["L"], inputs["S"], inputs["T"], ALPHA)
    same_support = bool(np.array_equal(e > 0, ref > 0))
    err = _rel_err(e, ref)
    finite = bool(np.all(np.isfinite(e)) and np.all(e >= 0))
    return {"finite": finite, "n_nonzero": int((e > 0).sum()), "same_support": same_support,
            "max_rel_err": err, "ok": finite and same_support and err < 1e-12}


check_sdr_n1e4 = check_sdr_n1e6 = check_sdr


def make_mdr_n1e4(size):
    return _score_inputs(size, 10**4)


def make_mdr_n1e6(size):
    return _score_inputs(size, 10**6)


def run_mdr(L, S, T):
    from sklearn_riskcontrol.evalues import mdr_decisions, mdr_evalues

    return mdr_decisions(L, S, T, ALPHA), mdr_evalues(L, S, T, ALPHA)


run_mdr_n1e4 = run_mdr_n1e6 = run_mdr


def check_mdr(inputs, result):
    from sklearn_riskcontrol.evalues import mdr_decisions, mdr_evalues

    d, e = result
    L, S, T = inputs["L"], inputs["S"], inputs["T"]
    chunks = np.array_split(np.arange(T.size), max(1, T.size // 10**6))
    d_chunk = np.concatenate([mdr_decisions(L, S, T[c], ALPHA) for c in chunks])
    e_chunk = np.concatenate([mdr_evalues(L, S, T[c], ALPHA) for c in chunks])
    order = np.argsort(S, kind="stable")
    cumA = np.cumsum(L[order])
    k = np.searchsorted(S[order], T, side="right")
    A = np.where(k > 0, cumA[np.maximum(k - 1, 0)], 0.0)
    budget = ALPHA * (L.size + 1)
    prop44 = 1 + A <= budget + 1e-12 * budget
    chunk_equal = bool(np.array_equal(d, d_chunk) and np.array_equal(e, e_chunk))
    ref_equal = bool(np.array_equal(d, prop44))
    finite = bool(np.all(np.isfinite(e)) and np.all(e >= 0))
    return {"finite": finite, "deploy_rate": float(d.mean()), "chunked_equal": chunk_equal,
            "prop44_equal": ref_equal, "ok": finite and chunk_equal and ref_equal}


check_mdr_n1e4 = check_mdr_n1e6 = check_mdr


N_MODELS = 500


def _bandit_inputs(size, side):
    from sklearn_riskcontrol.bandits import make_score_matrix

    n_examples = max(2 * size // N_MODELS, 8)
    data = make_score_matrix(N_MODELS, n_examples, n_side_models=100 if side else 0,
                             gap=0.02, random_state=0)
    out = {"scores": data.scores, "budget": size}
    if side:
        out["side"] = data.side_scores
    return out


def make_ucbe(size):
    return _bandit_inputs(size, side=False)


def run_ucbe(scores, budget):
    from sklearn_riskcontrol.bandits import UCBE

    return UCBE(budget=budget, batch_size=16, random_state=0).fit(scores)


def _bandit_common(inputs, est):
    revealed = est.oracle_.revealed_
    bought_once = est.n_evaluations_ == inputs["budget"] == int(revealed.sum())
    return revealed, bool(bought_once)


def check_ucbe(inputs, est):
    revealed, once = _bandit_common(inputs, est)
    S = inputs["scores"]
    scored = np.flatnonzero(revealed.any(axis=1))
    ref = np.array([math.fsum(S[i, revealed[i]].tolist()) / revealed[i].sum() for i in scored])
    err = _rel_err(est.means_[scored], ref)
    return {"bought_once": once, "max_rel_err": err, "best_index": int(est.best_index_),
            "ok": once and err < 1e-12}


def make_pulse(size):
    return _bandit_inputs(size, side=True)


def run_pulse(scores, budget, side):
    from sklearn_riskcontrol.bandits import PULSE

    est = PULSE(budget=budget, batch_size=16, refit_every=200, rank=4, random_state=0)
    return est.fit(scores, side_scores=side)


def check_pulse(inputs, est):
    _, once = _bandit_common(inputs, est)
    ci = est.confidence_intervals(0.05)
    scored = est.n_pulls_ > 0
    finite = bool(np.all(np.isfinite(est.means_[scored])) and np.all(np.isfinite(ci[scored])))
    return {"bought_once": once, "finite": finite, "best_index": int(est.best_index_),
            "ok": once and finite}


CASES = {
    "fixed": (make_fixed, run_fixed, check_fixed, "rounds"),
    "wsr": (make_wsr, run_wsr, check_wsr, "rounds"),
    "up": (make_up, run_up, check_up, "rounds"),
    "up-dense": (make_up_dense, run_up_dense, check_up_dense, "rounds"),
    "sps": (make_sps, run_sps, check_sps, "rounds"),
    "sdr-n1e4": (make_sdr_n1e4, run_sdr_n1e4, check_sdr_n1e4, "test points"),
    "sdr-n1e6": (make_sdr_n1e6, run_sdr_n1e6, check_sdr_n1e6, "test points"),
    "mdr-n1e4": (make_mdr_n1e4, run_mdr_n1e4, check_mdr_n1e4, "test points"),
    "mdr-n1e6": (make_mdr_n1e6, run_mdr_n1e6, check_mdr_n1e6, "test points"),
    "ucbe": (make_ucbe, run_ucbe, check_ucbe, "evaluations"),
    "pulse": (make_pulse, run_pulse, check_pulse, "evaluations"),
}
BANDIT_CASES = ("ucbe", "pulse")


def run_case(name, size):
    """Build, run and check one case in this process (used by the tests)."""
    make, run, check, _ = CASES[name]
    inputs = make(size)
    return check(inputs, run(**inputs))


# ---------------------------------------------------------------------------- measurement
def _proc_kb(field):
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return -1


def _reset_peak():
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


def measure_here(name, size, trace=True):
    """Build, time (with the peak memory) and check one case in this process."""
    make, run, check, _ = CASES[name]
    inputs = make(size)
    run(**make(min(size, 10**4)))  # imports and caches outside the measurement
    gc.collect()
    reset = _reset_peak()
    rss0 = _proc_kb("VmRSS")
    t0 = time.perf_counter()
    result = run(**inputs)
    seconds = time.perf_counter() - t0
    rss_peak = (_proc_kb("VmHWM") - rss0) * 1024 if reset else -1
    traced = -1
    if trace:
        tracemalloc.start()  # a second call; the result of the first stays allocated
        run(**inputs)
        traced = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return {"case": name, "size": size, "seconds": seconds, "rss": rss_peak, "traced": traced,
            "checks": check(inputs, result)}


def child(name, size, trace):
    print(json.dumps(measure_here(name, size, trace), default=lambda o: o.item()))


def measure(name, size, trace=True):
    """Run one case in a fresh interpreter; returns time, peak memory and the checks."""
    cmd = [sys.executable, os.path.abspath(__file__), "--child", name, str(int(size))]
    if not trace:
        cmd.append("--no-trace")
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        lines = proc.stderr.strip().splitlines()
        raise RuntimeError(lines[-1] if lines else f"exit code {proc.returncode}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _measure_in_process(name, size, trace=True):
    try:
        return measure_here(name, size, trace)
    except Exception as exc:  # reported like a failed fresh interpreter
        raise RuntimeError(f"{type(exc).__name__}: {exc}") from exc


def _fmt_bytes(b):
    if b < 0:
        return "n/a"
    for unit in ("B", "kB", "MB", "GB"):
        if b < 1024 or unit == "GB":
            return f"{b:.0f} {unit}" if unit == "B" else f"{b:.1f} {unit}"
        b /= 1024


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--max-size", type=float, default=1e7)
    ap.add_argument("--no-trace", action="store_true", help="skip the tracemalloc run")
    ap.add_argument("--quick", action="store_true",
                    help="every case at 2 small sizes (10^3, 10^4; bandits 10^4, 3 x 10^4), all "
                         "in this process (smoke test)")
    ap.add_argument("--child", nargs=2, metavar=("CASE", "SIZE"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.child[0], int(args.child[1]), not args.no_trace)
        return
    load0 = os.getloadavg()
    print(f"load average at start: {load0[0]:.2f} {load0[1]:.2f} {load0[2]:.2f}; "
          f"{os.cpu_count()} cores; numpy {np.__version__}"
          + ("; --quick: every case in this process" if args.quick else ""))
    run_one = _measure_in_process if args.quick else measure
    print("| case | items | size | time (s) | peak RSS | RSS B/item | traced peak | "
          "traced B/item | checks |")
    print("|---|---|---|---|---|---|---|---|---|")
    failed, rows = [], {}
    t_all = time.perf_counter()
    for name in args.cases.split(","):
        bandit = name in BANDIT_CASES
        if args.quick:
            sizes = QUICK_BANDIT_SIZES if bandit else QUICK_ARRAY_SIZES
        else:
            sizes = BANDIT_SIZES if bandit else ARRAY_SIZES
        for size in [s for s in sizes if s <= args.max_size]:
            try:
                r = run_one(name, size, trace=not args.no_trace)
            except RuntimeError as exc:
                print(f"| {name} | | {size:.0e} | FAILED | | | | | {exc} |")
                failed.append((name, size))
                continue
            rows[name, size] = r
            c = r["checks"]
            detail = ", ".join(f"{k}={v:.2e}" if isinstance(v, float) else f"{k}={v}"
                               for k, v in c.items() if k != "ok")
            if not c["ok"]:
                failed.append((name, size))
            print(f"| {name} | {CASES[name][3]} | {size:.0e} | {r['seconds']:.2f} | "
                  f"{_fmt_bytes(r['rss'])} | {r['rss'] / size:.1f} | "
                  f"{_fmt_bytes(r['traced'])} | {r['traced'] / size:.1f} | "
                  f"{'OK' if c['ok'] else 'FAIL'}: {detail} |", flush=True)
    print()
    print("Memory growth (traced bytes per item, largest size / the size before it; 1.0 = linear):")
    for name in args.cases.split(","):
        sizes = sorted(s for (n, s) in rows if n == name)
        if len(sizes) >= 2:
            a, b = rows[name, sizes[-2]], rows[name, sizes[-1]]
            key = "traced" if a["traced"] > 0 else "rss"
            ratio = (b[key] / sizes[-1]) / max(a[key] / sizes[-2], 1e-9)
            print(f"  {name}: {ratio:.2f}  ({key}, {sizes[-2]:.0e} -> {sizes[-1]:.0e})")
    load1 = os.getloadavg()
    print(f"\ntotal {time.perf_counter() - t_all:.0f} s; load average at end: "
          f"{load1[0]:.2f} {load1[1]:.2f} {load1[2]:.2f}")
    if failed:
        print("FAILED:", failed)
        sys.exit(1)


if __name__ == "__main__":
    main()
