"""Speed of the best-model strategies against plain implementations, in one process.

Cases (paper-scale sizes by default, see ``--help``):

a. Side-information factors: ``fit_logistic_factors`` on 1100 models x 12,000 examples, rank 8
   (target <= 60 s) against a plain alternating fit that solves each row and column by
   ``scipy.optimize.minimize`` (L-BFGS), timed on a subset of one sweep and extrapolated to the
   same number of sweeps.
b. A full PULSE run, 1000 models x 12,000 examples, B = 64, tau = 1000, 64,000 warm-up + 400,000
   evaluations (target <= 30 s), against PULSE written plainly from Algorithm 1 (dense
   prediction matrix, sums over U_i recomputed from the masks at every step, refits row by row
   with L-BFGS), run for ``--plain-steps`` bandit steps (one refit included) and extrapolated.
c. A full UCB-E run at the same size and budget (target <= 3 s) against a plain UCB-E that
   recomputes the counts and sums from the observation mask at every step (extrapolated from
   ``--plain-steps`` steps).
d. A full UCB-E-LRF run on a near rank-one 150 x 800 matrix to 25% of the cells (K = 64, rank 1,
   10 sweeps for the first fit, 2 warm-started sweeps per refit; target: a few seconds) against
   (i) the same ensemble code refitting with 10 sweeps per batch and (ii) a plain ensemble fitted
   one member at a time (dense masked ALS per member, 10 sweeps per refit), timed for
   ``--plain-lrf-steps`` refits and extrapolated to the run's number of refits.
e. Time and peak memory of ``PULSE.fit`` given the raw side scores (the side-information fit
   included), m models x n examples with 1.1 m side models, B = 64, tau = 1000, rank 8,
   64,000 + 16,000 evaluations at the spec's size (where PULSE reaches about 95% accuracy),
   against the same run whose alternating side fit is the previous whole-matrix implementation
   (``tests/_lowrank_reference.py``; everything else shared; results must be identical; the
   previous code measured 11.2 s and 719 MB at the spec's size). Time: best of ``--repeats``
   interleaved runs; peak memory: ``tracemalloc`` (NumPy allocations included) during ``fit``,
   over the bytes of the two input matrices (target: <= 2x and <= 6 s at 1000 x 12,000).

f. Time against the number of examples n of the default settings, new against old: UCBELRF
   (``refit_every="auto"`` against 1, a refit after every batch), PULSE with side scores
   (``"auto"`` against the former default 1000) and BestModelSelector's default strategy
   (``"auto"`` against the former ``refit_every=10``), 100 models (5 candidates for the
   selector), budget a fixed fraction. Best of ``--repeats`` interleaved runs per size; prints
   the log-log slope of each and the old / new time ratio at the largest size.

    python benchmarks/bandits_speed.py            # paper scale (several minutes)
    python benchmarks/bandits_speed.py --cases f  # time vs n, old vs new defaults (~3 min)
    python benchmarks/bandits_speed.py --quick    # small sizes, one run each (smoke test)
    python benchmarks/bandits_speed.py --cases d  # UCB-E-LRF only
    python benchmarks/bandits_speed.py --cases e  # PULSE time and memory (~2 minutes)
"""

import argparse
import os
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np
from scipy.optimize import minimize

from sklearn_riskcontrol.bandits import PULSE, UCBE, UCBELRF, lowrank, make_score_matrix
from sklearn_riskcontrol.bandits.lowrank import fit_logistic_factors, sigmoid

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from _lowrank_reference import plain_fit_dense_alternating  # noqa: E402

from _common import met  # noqa: E402 (benchmarks/ is on sys.path when run as a script)


def _row_objective(w, X, y, off, ridge):
    eta = X @ w + off
    p = sigmoid(eta)
    loss = np.sum(np.logaddexp(0, eta) - y * eta) + 0.5 * ridge * w @ w
    return loss, X.T @ (p - y) + ridge * w


def plain_row_fit(X, y, off, ridge, w0):
    """One ridge-logistic regression with an offset, by L-BFGS (the plain way)."""
    return minimize(_row_objective, w0, args=(X, y, off, ridge), jac=True, method="L-BFGS-B").x


def plain_sweep_time(S, fact, n_rows, n_cols, ridge=1.0):
    """Time of one plain alternating sweep, extrapolated from n_rows rows and n_cols columns."""
    r = fact.rank
    Xv = np.hstack([fact.example_factors, np.ones((S.shape[1], 1))])
    Xu = np.hstack([fact.model_factors, np.ones((S.shape[0], 1))])
    t0 = time.perf_counter()
    for i in range(n_rows):
        plain_row_fit(Xv, S[i], fact.example_bias, ridge, np.r_[fact.model_factors[i], fact.model_bias[i]])
    t_rows = (time.perf_counter() - t0) / n_rows * S.shape[0]
    t0 = time.perf_counter()
    for j in range(n_cols):
        plain_row_fit(Xu, S[:, j], fact.model_bias, ridge, np.r_[fact.example_factors[j], fact.example_bias[j]])
    t_cols = (time.perf_counter() - t0) / n_cols * S.shape[1]
    return t_rows + t_cols, r


def plain_pulse(S, fact, budget, B, tau, n_steps, ridge=1.0, a=1.0, seed=0):
    """PULSE written plainly from Algorithm 1.

    Returns the time of the warm-up and first fit, and the time of the first n_steps steps.
    """
    rng = np.random.default_rng(seed)
    m, n = S.shape
    X = np.hstack([fact.example_factors, np.ones((n, 1))])
    b = fact.example_bias
    O = np.zeros((m, n), dtype=bool)
    thetas = [[] for _ in range(m)]
    Zs = [[] for _ in range(m)]
    W = np.zeros((m, X.shape[1]))
    t0 = time.perf_counter()
    for i in range(m):
        J = rng.choice(n, B, replace=False)
        O[i, J] = True
        thetas[i].append(S[i, J].mean())

    def refit(rows):
        for i in rows:
            o = O[i]
            W[i] = plain_row_fit(X[o], S[i, o], b[o], ridge, W[i])

    refit(range(m))
    Shat = sigmoid(W @ X.T + b)
    dirty = np.zeros(m, dtype=bool)
    used = m * B
    t_init = time.perf_counter() - t0
    t0 = time.perf_counter()
    for t in range(n_steps):
        if used >= budget:
            break
        if t > 0 and t % tau == 0:
            rows = np.flatnonzero(dirty)
            refit(rows)
            Shat[rows] = sigmoid(W[rows] @ X.T + b)
            dirty[:] = False
        cnt = O.sum(1)
        mu = np.array([np.mean(th) for th in thetas])
        idx = mu + np.sqrt(a / cnt)
        idx[cnt == n] = -np.inf
        i = int(np.argmax(idx))
        U = np.flatnonzero(~O[i])
        N = U.size
        F = Shat[i, U].sum()
        Phi = (Shat[i, U] ** 2).sum()
        lam = 1.0 if not Zs[i] else float(np.clip(1 - F * np.mean(Zs[i]) / (N * Phi), 0, 1))
        J = rng.choice(U, min(B, N), replace=False)
        Z = (S[i, J] - lam * Shat[i, J]).sum() * N / J.size
        thetas[i].append((S[i, O[i]].sum() + lam * F + Z) / n)
        Zs[i].append(Z)
        O[i, J] = True
        dirty[i] = True
        used += J.size
    return t_init, time.perf_counter() - t0


def plain_ucbe(S, budget, B, n_steps, a=1.0, seed=0):
    """UCB-E recomputing counts and sums from the mask at every step; time of n_steps steps."""
    rng = np.random.default_rng(seed)
    m, n = S.shape
    O = np.zeros((m, n), dtype=bool)
    used = 0
    t0 = time.perf_counter()
    for _ in range(n_steps):
        if used >= budget:
            break
        cnt = O.sum(1)
        sums = np.where(O, S, 0.0).sum(1)
        with np.errstate(divide="ignore", invalid="ignore"):
            idx = np.where(cnt == 0, np.inf, sums / cnt + np.sqrt(a / cnt))
        idx[cnt == n] = -np.inf
        i = int(np.argmax(idx))
        J = rng.choice(np.flatnonzero(~O[i]), min(B, n - cnt[i]), replace=False)
        O[i, J] = True
        used += J.size
    return time.perf_counter() - t0


def plain_lrf_refits(S, n_steps, K=64, drop=0.05, ridge=0.1, sweeps=10, b=32, seed=0):
    """Time of ``n_steps`` refits of a plain UCB-E-LRF ensemble (after a 5% warm-up).

    Each member keeps its own dense drop mask and is fitted on its own (rows vectorised within
    the member), 10 ALS sweeps per refit, then the ensemble mean and standard deviation.
    The cost of a refit does not depend on which cells are observed, so the batches are random.
    """
    rng = np.random.default_rng(seed)
    m, n = S.shape
    keep = rng.uniform(size=(K, m, n)) >= drop
    obs = rng.uniform(size=(m, n)) < 0.05
    U = rng.uniform(0.5, 1.5, size=(K, m))
    V = rng.uniform(0.5, 1.5, size=(K, n))

    def refit():
        for k in range(K):
            Mk = (keep[k] & obs).astype(float)
            Yk = Mk * S
            for _ in range(sweeps):
                U[k] = (Yk @ V[k]) / (Mk @ (V[k] * V[k]) + ridge)
                V[k] = (Yk.T @ U[k]) / (Mk.T @ (U[k] * U[k]) + ridge)
        P = U[:, :, None] * V[:, None, :]
        return P.mean(0), P.std(0)

    refit()
    t0 = time.perf_counter()
    for _ in range(n_steps):
        i = rng.integers(m)
        free = np.flatnonzero(~obs[i])
        obs[i, free[:b]] = True
        refit()
    return time.perf_counter() - t0


def lrf_case(plain_steps, m=150, n=800):
    rng = np.random.default_rng(100)
    S = (rng.uniform(size=(m, n)) < np.outer(rng.beta(5, 3, m), rng.beta(4, 2, n))).astype(float)
    budget = m * n // 4
    times = {}
    for sweeps in (2, 10):
        t0, c0 = time.perf_counter(), time.process_time()
        # refit_every=1: Zhou et al.'s refit after every batch (case f times the default "auto")
        UCBELRF(budget=budget, refit_sweeps=sweeps, refit_every=1, random_state=0).fit(S)
        times[sweeps] = (time.perf_counter() - t0, time.process_time() - c0)
    n_refits = -(-(budget - int(np.ceil(0.05 * m * n))) // 32)  # batches after the warm-up
    t_part = plain_lrf_refits(S, plain_steps)
    t_plain = t_part * n_refits / plain_steps
    t2, c2 = times[2]
    t10, c10 = times[10]
    print(f"d. UCB-E-LRF, {m} x {n}, {budget} evaluations ({n_refits} refits): ours {t2:.1f} s "
          f"(CPU {c2:.1f} s); same code with 10 sweeps per refit {t10:.1f} s (CPU {c10:.1f} s) -> "
          f"{t10 / t2:.1f}x; plain one-member-at-a-time ALS, 10 sweeps per refit: {t_part:.1f} s "
          f"for {plain_steps} refits, ~{t_plain:.0f} s extrapolated -> {t_plain / t2:.0f}x faster")
    return t2


def _pulse_fit(data, budget, dense_fit, trace):
    """One PULSE.fit on the raw side scores; returns (seconds, peak bytes or None, estimator)."""
    saved = lowrank._fit_dense_alternating
    lowrank._fit_dense_alternating = dense_fit
    try:
        if trace:
            tracemalloc.start()
        t0 = time.perf_counter()
        est = PULSE(budget=budget, batch_size=64, refit_every=1000, rank=8, random_state=0)
        est.fit(data.scores, side_scores=data.side_scores)
        seconds = time.perf_counter() - t0
        peak = tracemalloc.get_traced_memory()[1] if trace else None
    finally:
        tracemalloc.stop()
        lowrank._fit_dense_alternating = saved
    return seconds, peak, est


def pulse_memory_case(sizes, repeats):
    print("e. PULSE.fit with raw side scores: ours vs the previous whole-matrix side fit")
    print("   size (side) | inputs | ours: time, peak (x inputs) | previous: time, peak (x inputs) "
          "| time ratio, memory ratio | identical")
    for m, n in sizes:
        data = make_score_matrix(m, n, n_side_models=int(1.1 * m), gap=0.02, random_state=0)
        budget = m * 64 + 16 * n // 12  # 64,000 + 16,000 at the spec's size
        inputs = data.scores.nbytes + data.side_scores.nbytes
        fits = {"ours": lowrank._fit_dense_alternating, "previous": plain_fit_dense_alternating}
        best = dict.fromkeys(fits, np.inf)
        for _ in range(repeats):  # interleaved, best of `repeats`
            for name, fit in fits.items():
                best[name] = min(best[name], _pulse_fit(data, budget, fit, False)[0])
        peak, est = {}, {}
        for name, fit in fits.items():
            _, peak[name], est[name] = _pulse_fit(data, budget, fit, True)
        a, b = est["ours"], est["previous"]
        same = (np.array_equal(a.means_, b.means_) and a.best_index_ == b.best_index_
                and all(np.array_equal(a.history_[k], b.history_[k]) for k in a.history_))
        t, p = best["ours"], peak["ours"] / inputs
        print(f"   {m} x {n} ({int(1.1 * m)}) | {inputs / 1e6:.0f} MB | {t:.2f} s, "
              f"{peak['ours'] / 1e6:.0f} MB ({p:.2f}x) | {best['previous']:.2f} s, "
              f"{peak['previous'] / 1e6:.0f} MB ({peak['previous'] / inputs:.2f}x) | "
              f"{best['previous'] / t:.2f}x faster, {peak['previous'] / peak['ours']:.2f}x less "
              f"memory | {same}")
        assert same, f"{m} x {n}: the previous side fit gives other PULSE results"
        if (m, n) == (1000, 12_000):
            print(f"   targets at 1000 x 12,000: <= 6 s: {met(t <= 6)}; "
                  f"peak <= 2x inputs: {met(p <= 2)}")
    print(f"   load average {os.getloadavg()}")


def _selector_fit(n, strategy):
    from sklearn.linear_model import LogisticRegression

    from sklearn_riskcontrol.bandits import BestModelSelector

    rng = np.random.default_rng(3)
    X = rng.normal(size=(n + 2000, 5))
    y = (X @ np.array([1.0, 0.5, -0.5, 0.25, 0.0]) + rng.normal(scale=0.7, size=len(X))) > 0
    models = [LogisticRegression(C=C).fit(X[:2000], y[:2000]) for C in (1.0, 0.1, 0.01, 1e-3, 1e-4)]
    return lambda: BestModelSelector(models, strategy=strategy, random_state=0).fit(X[2000:], y[2000:])


def scaling_case(quick, repeats):
    """Case f: time vs n of the default settings, new ("auto" refits) vs old schedule."""
    from threadpoolctl import threadpool_limits

    def bandit(make, n, side):
        data = make_score_matrix(100, n, n_side_models=100 if side else 0, random_state=0)
        side_scores = data.side_scores if side else None
        return lambda: make().fit(data.scores, side_scores=side_scores)

    old_sel = PULSE(budget=0.3, batch_size=16, refit_every=10, rank=2, fractional_scores=True,
                    random_state=0)
    paths = {  # name: (sizes, setup(n, old) -> run)
        "UCBELRF fit, 100 models, budget 10%": (
            (250, 500) if quick else (500, 1000, 2000, 4000),
            lambda n, old: bandit(lambda: UCBELRF(budget=0.1, refit_every=1 if old else "auto",
                                                  random_state=0), n, False)),
        "PULSE fit, 100 models + 100 side, budget 10%, B = 32": (
            (1000, 2000) if quick else (4000, 16000, 64000),
            lambda n, old: bandit(lambda: PULSE(budget=0.1, batch_size=32,
                                                refit_every=1000 if old else "auto",
                                                random_state=0), n, True)),
        "BestModelSelector fit, 5 candidates, default strategy": (
            (500, 1000) if quick else (1000, 4000, 16000),
            lambda n, old: _selector_fit(n, old_sel if old else None)),
    }
    print("f. time vs number of examples n, default settings: new (refit_every='auto') vs old "
          "refit schedule; best of interleaved runs")
    with threadpool_limits(1):  # slopes of the algorithms, not of thread contention
        for name, (sizes, setup) in paths.items():
            best = {"new": [], "old": []}
            for n in sizes:
                runs = {"new": setup(n, False), "old": setup(n, True)}
                t = dict.fromkeys(runs, np.inf)
                for _ in range(repeats):
                    for key, run in runs.items():
                        t0 = time.perf_counter()
                        run()
                        t[key] = min(t[key], time.perf_counter() - t0)
                for key in runs:
                    best[key].append(t[key])
                print(f"   {name}: n = {n}: new {t['new']:.2f} s, old {t['old']:.2f} s "
                      f"({t['old'] / t['new']:.1f}x)", flush=True)
            x = np.log(sizes)
            slope = {k: np.polyfit(x, np.log(v), 1)[0] for k, v in best.items()}
            last = {k: np.log(v[-1] / v[-2]) / (x[-1] - x[-2]) for k, v in best.items()}
            print(f"   -> slope new {slope['new']:.2f} (last step {last['new']:.2f}), old "
                  f"{slope['old']:.2f} (last step {last['old']:.2f}); old / new at n = "
                  f"{sizes[-1]}: {best['old'][-1] / best['new'][-1]:.1f}x")
    print(f"   load average {os.getloadavg()}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true",
                    help="cases a-c and e at 150 x 1500, d at 75 x 400, f at 2 small sizes; "
                         "one timed run each, fewer plain steps (smoke test; targets not checked)")
    ap.add_argument("--rank", type=int, default=8)
    ap.add_argument("--plain-steps", type=int, default=1200)
    ap.add_argument("--plain-lrf-steps", type=int, default=20)
    ap.add_argument("--cases", default="abcdef", help="which cases to run, e.g. 'd'")
    ap.add_argument("--sizes", default="300x3000,1000x12000", help="case e: m x n sizes")
    ap.add_argument("--repeats", type=int, default=3,
                    help="cases e, f: timed runs per method (f uses at most 2)")
    args = ap.parse_args()
    lrf_size = (150, 800)  # the size of the UCB-E-LRF target
    if args.quick:
        args.sizes, args.repeats, args.plain_steps, args.plain_lrf_steps = "150x1500", 1, 200, 5
        lrf_size = (75, 400)
    if "f" in args.cases:
        scaling_case(args.quick, min(args.repeats, 2))
    if "e" in args.cases:
        sizes = [tuple(int(v) for v in s.split("x")) for s in args.sizes.split(",")]
        pulse_memory_case(sizes, args.repeats)
    if not set(args.cases) & set("abc"):
        if "d" in args.cases:
            t_lrf = lrf_case(args.plain_lrf_steps, *lrf_size)
            if not args.quick:
                print(f"target: UCB-E-LRF run <= 10 s: {met(t_lrf <= 10)}")
        return
    if args.quick:
        m, n, n_side, after = 150, 1500, 165, 50_000
    else:
        m, n, n_side, after = 1000, 12_000, 1100, 400_000
    B, tau = 64, 1000
    budget = m * B + after
    t0 = time.perf_counter()
    data = make_score_matrix(m, n, n_side_models=n_side, gap=0.02, random_state=0)
    print(f"data {m} x {n} (+{n_side} side models): generated in {time.perf_counter() - t0:.1f} s")

    # a. side-information factors
    t0 = time.perf_counter()
    fact = fit_logistic_factors(data.side_scores, rank=args.rank, random_state=0)
    t_side = time.perf_counter() - t0
    t_sweep, _ = plain_sweep_time(data.side_scores, fact, 20, 100)
    t_plain = t_sweep * fact.n_iter
    print(f"a. side factors, rank {args.rank}: ours {t_side:.1f} s ({fact.n_iter} sweeps, "
          f"converged={fact.converged}); plain L-BFGS per row/column: {t_plain:.0f} s "
          f"(extrapolated) -> {t_plain / t_side:.0f}x faster")

    # b. PULSE
    t0 = time.perf_counter()
    pulse = PULSE(budget=budget, batch_size=B, refit_every=tau, random_state=0)
    pulse.fit(data.scores, side_scores=fact)
    t_pulse = time.perf_counter() - t0
    steps = pulse.n_steps_
    n_plain = min(args.plain_steps, steps)
    t_init, t_steps = plain_pulse(data.scores, fact, budget, B, tau, n_plain)
    # warm-up and first fit once, then the steps (with their refits every tau) scaled up
    t_plain_full = t_init + t_steps * steps / n_plain
    print(f"b. PULSE, {budget} evaluations ({steps} steps, {pulse.n_refits_} fits): ours "
          f"{t_pulse:.1f} s; plain Algorithm 1: warm-up + first fit {t_init:.1f} s, "
          f"{t_steps:.1f} s for {n_plain} steps -> ~{t_plain_full:.0f} s extrapolated -> "
          f"{t_plain_full / t_pulse:.0f}x faster")

    # c. UCB-E
    t0 = time.perf_counter()
    ucbe = UCBE(budget=budget, batch_size=B, random_state=0).fit(data.scores)
    t_ucbe = time.perf_counter() - t0
    n_plain = min(args.plain_steps, ucbe.n_steps_)
    t_plain_part = plain_ucbe(data.scores, budget, B, n_plain)
    t_plain_full = t_plain_part * ucbe.n_steps_ / n_plain
    print(f"c. UCB-E, {budget} evaluations ({ucbe.n_steps_} steps): ours {t_ucbe:.2f} s; plain "
          f"mask recomputation: {t_plain_part:.1f} s for {n_plain} steps, ~{t_plain_full:.0f} s "
          f"extrapolated -> {t_plain_full / t_ucbe:.0f}x faster")
    t_lrf = lrf_case(args.plain_lrf_steps, *lrf_size) if "d" in args.cases else None
    if args.quick:
        print("targets are set at 1000 x 12,000 (UCB-E-LRF: 150 x 800): not checked at these sizes")
        return
    lrf = "" if t_lrf is None else f"; UCB-E-LRF <= 10 s: {met(t_lrf <= 10)}"
    print(f"targets: side factors <= 60 s: {met(t_side <= 60)}; "
          f"PULSE <= 30 s: {met(t_pulse <= 30)}; UCB-E <= 3 s: {met(t_ucbe <= 3)}{lrf}")


if __name__ == "__main__":
    main()
