"""UCB-E-LRF's ablations and baselines (Zhou et al., ICLR 2025, Fig. 3-4) next to PULSE.

Methods, each run on the same matrix with the same seed (paired):

- ``UCB-E``: Alg. 1, eta = 1 (the paper's value), batches of 32;
- ``UCB-E-LRF``: Alg. 2 with the library's defaults (5% warm-up, K = 64, rank 1, eta = 5,
  b = 32, the uncertainty summed over the *unscored* cells of each model);
- ``LRF-all-R``: the same with ``uncertainty_cells="all"`` (Alg. 2's index as printed: eta R
  summed over every cell of the model, scored ones included);
- ``LRF-score-only``: ``acquisition="score_only"`` (Alg. 6: UCB-E's bonus sqrt(eta / |O_i|) on
  the low-rank estimate, uniform examples), eta = 1 as for UCB-E;
- ``LRF``: :class:`UniformLRF` (Alg. 5, uniform cells, low-rank estimate);
- ``filled-subset``: :class:`FilledSubset` (Alg. 4, every model on the same random examples);
- ``row-mean``: :class:`UniformSampling` (Alg. 3, "row mean imputation");
- ``PULSE``: PULSE with side information (the example factors fitted once per matrix on the side
  models, rank ``--pulse-rank``), batches of 32, one warm-up batch per model.

Metric: the paper's top-1 precision (the returned model is within ``eps`` of the best model's
mean; ``eps = 0``: the best itself) as a function of the number of evaluations, and the
fraction of the m x n cells (and number of evaluations) from which the mean precision over the
runs stays >= 95%, with a 90% cluster-bootstrap CI (matrices resampled, then seeds within) and
its ratio to UCB-E's (paired resamples). Every run records its choice after
each step, so one run at the largest budget gives the whole curve. ``LRF-all-R`` vs
``UCB-E-LRF`` is also compared run by run (paired): difference of the precision at each budget
and of the evaluations after which the run's choice stays correct, mean +- standard error.

Two kinds of matrices (``--kind``):

``synthetic``
    the repository's generator (:func:`~sklearn_riskcontrol.bandits.make_score_matrix`: rank-8
    logistic model, example easiness N(0, 1.8^2), guessing floor 0.1, top-2 gap ``--gap``) at a
    modest size (default 100 models x 600 examples, ``--n-side`` side models for PULSE).

``alpacaeval``
    a generator calibrated to a real leaderboard. No registry package found in the package
    lists ships a per-example (model x item) correctness matrix (checked: ``alpaca-eval`` 0.6.6
    ships per-model leaderboards only; ``benchprobe`` 0.1.1 ships model x benchmark aggregates
    and a rubric item bank, and needs Python >= 3.12; ``torch-measure`` and ``irw`` download
    their data at run time, which is not allowed here). The per-model accuracies are therefore
    the real ones: the 222 discrete win rates of the AlpacaEval 2.0 leaderboard shipped in
    ``alpaca-eval`` 0.6.6 (file ``alpaca_eval/leaderboards/data_AlpacaEval_2/
    weighted_alpaca_eval_gpt4_turbo_leaderboard.csv``, column ``discrete_win_rate``, the
    ``NullModel`` row excluded; Apache-2.0, (c) the AlpacaEval authors, Li et al. 2023, Dubois et
    al. 2024), over its 805 instructions: median 0.143, quartiles 0.072 / 0.307, 82 of the 222
    models below 0.1 and 8 above 0.7 (deciles 0-0.1, ..., 0.7-0.8: 82, 53, 31, 18, 13, 7, 10, 8),
    top two 0.7963 / 0.7950 (one instruction apart), third 0.7714. Each row i wins exactly
    ``k_i = round(805 * rate_i)`` instructions (so the histogram and the top-2 gap are exact),
    chosen as the ``k_i`` largest of ``-d_j + sum_k s_k u_ik v_jk + L_ij`` over the instructions
    j, with instruction difficulty ``d_j ~ N(0, sigma_d^2)``, a rank-8 interaction (``s_k =
    0.7^k``, standard normal factors) and standard logistic noise ``L_ij``: a Rasch-type model
    conditioned on the real row totals. The item-difficulty spread is *not* calibrated on real
    per-instruction data (none is shipped); ``--difficulty-scale`` (default 1.8, the spec
    generator's example-easiness scale) sets it. Side information for PULSE: ``--n-side`` more
    rows from the same instructions, with rates resampled from the same 222 values. Both the
    paper's performance-gap precision with ``eps = 0.01`` (here: either of the top two) and
    ``eps = 0`` (the best itself, one instruction ahead) are printed.

Runs of ``benchmarks/RESULTS.md`` (2 cores shared: ``--n-jobs 1``; counts of evaluations, not
times, are the result; 3-6 minutes each)::

    python benchmarks/bandits_ablations.py --kind synthetic --m 150 --n 800 \\
        --matrices 10 --reps 5 --budget 0.3 --eps 0
    python benchmarks/bandits_ablations.py --kind alpacaeval --matrices 8 --reps 5 --budget 0.6
    python benchmarks/bandits_ablations.py --kind synthetic --m 150 --n 800 --matrices 20 \\
        --reps 5 --budget 0.2 --eps 0 --matrix-seed 700 --methods UCB-E-LRF,LRF-all-R

Smoke test (every method, a few seconds): ``python benchmarks/bandits_ablations.py --quick``.
Every run first checks the generator and the precision-curve helpers on known inputs
(``self_check``; an error ends it).
"""

import argparse
import time

import numpy as np
from joblib import Parallel, delayed

from sklearn_riskcontrol.bandits import (
    PULSE,
    UCBE,
    UCBELRF,
    FilledSubset,
    UniformLRF,
    UniformSampling,
    make_score_matrix,
)
from sklearn_riskcontrol.bandits.lowrank import fit_logistic_factors

ALL_METHODS = ("UCB-E", "UCB-E-LRF", "LRF-all-R", "LRF-score-only", "LRF", "filled-subset",
               "row-mean", "PULSE")

# AlpacaEval 2.0 discrete win rates of the 222 models (NullModel excluded) of the leaderboard
# shipped in alpaca-eval 0.6.6 (Apache-2.0), rounded to 4 decimals, best first.
ALPACAEVAL2_DISCRETE_WIN_RATES = (
    0.7963, 0.795, 0.7714, 0.7553, 0.7416, 0.7174, 0.7043, 0.7006, 0.6988, 0.6714, 0.6665,
    0.6602, 0.6596, 0.6447, 0.6441, 0.6441, 0.636, 0.6093, 0.5826, 0.5776, 0.5677, 0.5677,
    0.5373, 0.5286, 0.5, 0.4932, 0.4901, 0.4894, 0.4801, 0.4789, 0.4658, 0.4652, 0.4497,
    0.4484, 0.4373, 0.4043, 0.4025, 0.4019, 0.3969, 0.3876, 0.3857, 0.382, 0.3807, 0.3745,
    0.3596, 0.3559, 0.3447, 0.3404, 0.3366, 0.3329, 0.3317, 0.3273, 0.3236, 0.3199, 0.318,
    0.3093, 0.2988, 0.2907, 0.2907, 0.2901, 0.2879, 0.2801, 0.2795, 0.2789, 0.2745, 0.2708,
    0.2602, 0.2522, 0.2516, 0.2484, 0.2422, 0.2422, 0.2379, 0.236, 0.2292, 0.2273, 0.2205,
    0.2205, 0.218, 0.2174, 0.2149, 0.213, 0.2107, 0.2087, 0.2068, 0.2062, 0.205, 0.1981,
    0.1981, 0.1863, 0.1845, 0.1839, 0.1801, 0.1739, 0.1727, 0.1708, 0.1689, 0.1634, 0.1627,
    0.1602, 0.1547, 0.1534, 0.1534, 0.1509, 0.1503, 0.1497, 0.1497, 0.1478, 0.1478, 0.1466,
    0.1441, 0.1416, 0.141, 0.1393, 0.1373, 0.1329, 0.1304, 0.1298, 0.1294, 0.1273, 0.1267,
    0.123, 0.1224, 0.1224, 0.1199, 0.1199, 0.1193, 0.118, 0.1143, 0.113, 0.113, 0.1106,
    0.1087, 0.1037, 0.1037, 0.1031, 0.1025, 0.1019, 0.1006, 0.1, 0.0988, 0.0981, 0.0963,
    0.0963, 0.095, 0.0944, 0.0913, 0.0913, 0.0888, 0.0876, 0.0863, 0.0851, 0.0845, 0.084,
    0.082, 0.0814, 0.0801, 0.0801, 0.0752, 0.0752, 0.0745, 0.0739, 0.0733, 0.0733, 0.0733,
    0.0727, 0.0714, 0.0708, 0.0708, 0.0696, 0.0689, 0.0671, 0.0665, 0.0658, 0.0646, 0.0634,
    0.0634, 0.0627, 0.0621, 0.0621, 0.0602, 0.0596, 0.0581, 0.0571, 0.0559, 0.0559, 0.0547,
    0.0547, 0.054, 0.0535, 0.0534, 0.0491, 0.0484, 0.0478, 0.0478, 0.046, 0.0453, 0.0416,
    0.0416, 0.041, 0.0404, 0.036, 0.0354, 0.0348, 0.0342, 0.0342, 0.0335, 0.0323, 0.0305,
    0.0298, 0.0292, 0.0287, 0.0286, 0.0267, 0.0267, 0.0236, 0.023, 0.0211, 0.0205, 0.0199,
    0.018, 0.0174,
)
ALPACAEVAL2_N_INSTRUCTIONS = 805


def alpacaeval_like(n_side=222, difficulty_scale=1.8, rank=8, decay=0.7, random_state=0):
    """Binary matrix with AlpacaEval 2.0's real per-model win rates (exact row totals).

    Returns ``(scores, side_scores, true_means)``; rows are shuffled (the best is never row 0).
    """
    rng = np.random.default_rng(random_state)
    n = ALPACAEVAL2_N_INSTRUCTIONS
    rates = np.asarray(ALPACAEVAL2_DISCRETE_WIN_RATES)
    side_rates = rng.choice(rates, size=n_side, replace=True)
    all_rates = np.concatenate([rates, side_rates])
    m_all = all_rates.size
    d = rng.normal(0.0, difficulty_scale, n)
    s = decay ** np.arange(rank)
    u = rng.standard_normal((m_all, rank)) * s
    v = rng.standard_normal((n, rank))
    key = -d[None, :] + u @ v.T + rng.logistic(size=(m_all, n))
    k = np.rint(n * all_rates).astype(int)
    # row i wins its k_i instructions of largest key (a Rasch-type model given the row total)
    ranks = np.argsort(np.argsort(-key, axis=1), axis=1)
    S = (ranks < k[:, None]).astype(float)
    perm = rng.permutation(rates.size)
    test = S[: rates.size][perm]
    return test, S[rates.size:], test.mean(1)


def make_estimator(method, budget, seed, B):
    if method == "UCB-E":
        return UCBE(budget=budget, batch_size=B, exploration=1.0, random_state=seed)
    if method == "UCB-E-LRF":
        return UCBELRF(budget=budget, batch_size=B, random_state=seed)
    if method == "LRF-all-R":
        return UCBELRF(budget=budget, batch_size=B, uncertainty_cells="all", random_state=seed)
    if method == "LRF-score-only":
        return UCBELRF(budget=budget, batch_size=B, acquisition="score_only", eta=1.0,
                       random_state=seed)
    if method == "LRF":
        return UniformLRF(budget=budget, batch_size=B, random_state=seed)
    if method == "filled-subset":
        return FilledSubset(budget=budget, batch_size=1, random_state=seed)
    if method == "row-mean":
        return UniformSampling(budget=budget, batch_size=B, random_state=seed)
    raise ValueError(method)


def run_one(S, fact, method, seed, budget, B, pulse_rank, tau):
    if method == "PULSE":
        est = PULSE(budget=budget, batch_size=B, rank=pulse_rank, refit_every=tau,
                    random_state=seed)
    else:
        est = make_estimator(method, budget, seed, B)
    t0 = time.perf_counter()
    est.fit(S, side_scores=fact if method == "PULSE" else None)
    h = est.history_
    return method, np.asarray(h["n_evaluations"]), np.asarray(h["best_index"]), time.perf_counter() - t0


def hits_on_grid(ev, best, good, grid):
    """Whether the run's choice after at most ``b`` evaluations is good, for every b in grid."""
    pos = np.searchsorted(ev, grid, side="right") - 1  # last record with n_evaluations <= b
    ok = good[best]
    return np.where(pos >= 0, ok[np.maximum(pos, 0)], False)


def level_budget(curve, grid, level=0.95):
    """Smallest grid budget from which ``curve`` stays >= level (inf if never)."""
    bad = np.flatnonzero(curve < level)
    if bad.size == 0:
        return grid[0]
    return grid[bad[-1] + 1] if bad[-1] + 1 < grid.size else np.inf


def cluster_boot(H, n_mat, reps, grid, n_boot=1000, seed=0):
    """95%-level budgets of ``n_boot`` cluster-bootstrap resamples (matrices, then seeds within).

    The resampled runs depend only on ``seed``, ``n_mat`` and ``reps``, so the resamples of two
    methods are paired (same matrices and seeds).
    """
    rng = np.random.default_rng(seed)
    out = np.empty(n_boot)
    for t in range(n_boot):
        mats = rng.integers(0, n_mat, n_mat)
        idx = (mats[:, None] * reps + rng.integers(0, reps, (n_mat, reps))).ravel()
        out[t] = level_budget(H[idx].mean(0), grid)
    return out


def ci90(x):
    x = np.sort(np.where(np.isnan(x), np.inf, x))  # inf (never reached) sorts last
    return x[int(0.05 * x.size)], x[int(np.ceil(0.95 * x.size)) - 1]


def settle(H, grid, budget):
    """Per run: evaluations from which its choice stays good (budget + 1 if not at the end)."""
    last_bad = np.where(~H, np.arange(grid.size), -1).max(1)
    return np.where(last_bad + 1 < grid.size, grid[np.minimum(last_bad + 1, grid.size - 1)], budget + 1)


def self_check():
    """Check the leaderboard generator and the precision-curve helpers on known inputs; raise if
    one is wrong. Run before any matrix is drawn: a wrong helper would make every number wrong.
    """
    rates = np.asarray(ALPACAEVAL2_DISCRETE_WIN_RATES)
    assert rates.size == 222 and np.all(np.diff(rates) <= 0)  # best first, NullModel excluded
    # the published histogram quoted in the docstring (deciles of the win rate)
    deciles = np.histogram(rates, bins=np.arange(0, 1.01, 0.1))[0][:8]
    assert deciles.tolist() == [82, 53, 31, 18, 13, 7, 10, 8], deciles
    n = ALPACAEVAL2_N_INSTRUCTIONS
    S, side, mu = alpacaeval_like(n_side=50, random_state=3)
    assert S.shape == (222, n) and side.shape == (50, n)
    assert set(np.unique(S)) <= {0.0, 1.0}
    # every row wins exactly round(805 * rate) instructions; rows are shuffled
    assert np.array_equal(np.sort(S.sum(1))[::-1], np.rint(n * rates))
    assert not np.all(np.diff(S.sum(1)) <= 0)  # not in the leaderboard's order
    assert np.allclose(mu, S.mean(1), rtol=1e-12, atol=0)
    top = np.sort(mu)[::-1]
    assert abs(top[0] - top[1] - 1 / n) < 1e-12
    # instruction difficulty matters: item means spread far more than binomial noise would
    assert S.mean(0).std() > 0.1
    assert np.array_equal(S, alpacaeval_like(n_side=50, random_state=3)[0])  # seeded
    # precision curve on a grid of budgets, 95%-level budget, evaluations until a run settles
    good, ev, best = np.array([False, True, True]), np.array([10, 20, 40]), np.array([0, 1, 2])
    grid = np.array([5, 10, 19, 20, 39, 40, 60])
    assert hits_on_grid(ev, best, good, grid).tolist() == [False] * 3 + [True] * 4
    H = np.array([[0, 0, 1, 1, 0, 1, 1], [0, 1, 1, 1, 1, 1, 1]], dtype=bool)
    assert level_budget(H.mean(0), grid, level=0.95) == 40
    assert level_budget(H.mean(0), grid, level=0.5) == 10
    assert level_budget(np.zeros(7), grid) == np.inf
    assert settle(H, grid, 60).tolist() == [40, 10]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kind", choices=("synthetic", "alpacaeval"), default="synthetic")
    ap.add_argument("--m", type=int, default=100, help="models (synthetic)")
    ap.add_argument("--n", type=int, default=600, help="examples (synthetic)")
    ap.add_argument("--gap", type=float, default=0.02, help="top-2 gap (synthetic)")
    ap.add_argument("--n-side", type=int, default=None,
                    help="side models for PULSE (default: as many as the models)")
    ap.add_argument("--difficulty-scale", type=float, default=1.8, help="(alpacaeval)")
    ap.add_argument("--budget", type=float, default=0.3, help="fraction of the m x n cells")
    ap.add_argument("--B", type=int, default=32)
    ap.add_argument("--pulse-rank", type=int, default=8)
    ap.add_argument("--tau", default="auto", help="PULSE refit_every")
    ap.add_argument("--eps", default="0,0.01", help="top-1 precision tolerances (comma list)")
    ap.add_argument("--matrices", type=int, default=4)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--matrix-seed", type=int, default=500)
    ap.add_argument("--methods", default=",".join(ALL_METHODS))
    ap.add_argument("--n-jobs", type=int, default=1)
    ap.add_argument("--quick", action="store_true",
                    help="2 matrices x 2 seeds; synthetic 40 x 200 (smoke test)")
    args = ap.parse_args()
    self_check()
    print("self-check passed: AlpacaEval-like generator, precision curve helpers")
    if args.quick:
        args.m, args.n, args.matrices, args.reps = 40, 200, 2, 2
    methods = args.methods.split(",")
    eps_list = [float(e) for e in args.eps.split(",")]
    tau = args.tau if args.tau == "auto" else int(args.tau)
    runs = {meth: [] for meth in methods}
    times = {meth: [] for meth in methods}
    goods = []
    t_start = time.perf_counter()
    for k in range(args.matrices):
        seed = args.matrix_seed + k
        if args.kind == "synthetic":
            n_side = args.m if args.n_side is None else args.n_side
            d = make_score_matrix(args.m, args.n, n_side_models=n_side, gap=args.gap, random_state=seed)
            S, side, mu = d.scores, d.side_scores, d.scores.mean(1)
        else:
            n_side = len(ALPACAEVAL2_DISCRETE_WIN_RATES) if args.n_side is None else args.n_side
            S, side, mu = alpacaeval_like(n_side, args.difficulty_scale, random_state=seed)
        m, n = S.shape
        cells = m * n
        budget = int(args.budget * cells)
        fact = None
        if "PULSE" in methods:
            fact = fit_logistic_factors(side, rank=args.pulse_rank, random_state=k)
        goods.append({e: mu >= mu.max() - e - 1e-12 for e in eps_list})
        out = Parallel(n_jobs=args.n_jobs)(
            delayed(run_one)(S, fact, meth, r, budget, args.B, args.pulse_rank, tau)
            for r in range(args.reps) for meth in methods
        )
        for meth, ev, bi, t in out:
            runs[meth].append((k, ev, bi))
            times[meth].append(t)
        top = np.sort(mu)[::-1]
        print(f"matrix {k}: {m} x {n}, top means {top[0]:.4f} / {top[1]:.4f} / {top[2]:.4f}, "
              f"elapsed {time.perf_counter() - t_start:.0f} s", flush=True)
    n_runs = args.matrices * args.reps
    grid = np.unique(np.linspace(0, budget, 601).astype(int)[1:])
    fracs = [f for f in (0.02, 0.05, 0.1, 0.15, 0.2, 0.3, 0.5) if f <= args.budget + 1e-9]
    marks = np.searchsorted(grid, [int(f * cells) for f in fracs])
    marks = np.minimum(marks, grid.size - 1)
    print(f"\n{args.kind}: {m} models x {n} examples, {n_runs} runs per method "
          f"({args.matrices} matrices x {args.reps} seeds), budget {budget} = {args.budget:.0%} of the cells")
    H_all = {}
    for eps in eps_list:
        print(f"\ntop-1 precision, eps = {eps:g} (mean over {n_runs} runs; binomial s.e. <= "
              f"{0.5 / np.sqrt(n_runs):.3f}) and cells to reach 95% precision (90% cluster-bootstrap CI)")
        print("method            mean time " + "".join(f"{f:>8.0%}" for f in fracs)
              + "   cells for 95% (CI)      evaluations   / UCB-E (paired CI)")
        boots, b95s = {}, {}

        def pct(b):
            return f"{b / cells:.1%}" if np.isfinite(b) else f">{args.budget:.0%}"

        for meth in methods:
            H = np.array([hits_on_grid(ev, bi, goods[k][eps], grid) for k, ev, bi in runs[meth]])
            H_all[meth, eps] = H
            curve = H.mean(0)
            b95s[meth] = b95 = level_budget(curve, grid)
            boots[meth] = cluster_boot(H, args.matrices, args.reps, grid)
            lo, hi = ci90(boots[meth])
            line = (f"{meth:<17s} {np.mean(times[meth]):7.1f} s " + "".join(f"{curve[i]:8.2f}" for i in marks)
                    + f"   {pct(b95):>6s} ({pct(lo)}-{pct(hi)})".ljust(24)
                    + (f"{b95:>9,.0f}" if np.isfinite(b95) else f"{'-':>9s}"))
            if meth != "UCB-E" and "UCB-E" in boots:
                with np.errstate(invalid="ignore", divide="ignore"):
                    rlo, rhi = ci90(boots[meth] / boots["UCB-E"])
                    line += f"   {b95 / b95s['UCB-E']:.2f} ({rlo:.2f}-{rhi:.2f})"
            print(line)
        if "LRF-all-R" in methods and "UCB-E-LRF" in methods:
            A, U = H_all["LRF-all-R", eps], H_all["UCB-E-LRF", eps]
            D = A.astype(float) - U
            se = D.std(0, ddof=1) / np.sqrt(n_runs) if n_runs > 1 else np.full(grid.size, np.nan)
            print("  all-cells minus unscored-cells uncertainty, paired over the same runs:")
            print("    precision difference " + "  ".join(
                f"@{f:.0%}: {D[:, i].mean():+.3f} +- {se[i]:.3f}" for f, i in zip(fracs, marks)))
            sa, su = settle(A, grid, budget), settle(U, grid, budget)
            dd = (sa - su) / cells
            dse = dd.std(ddof=1) / np.sqrt(n_runs) if n_runs > 1 else np.nan
            print(f"    cells until the choice stays good: all {sa.mean() / cells:.2%}, unscored "
                  f"{su.mean() / cells:.2%}, difference {dd.mean():+.2%} +- {dse:.2%} "
                  "(mean +- s.e. over runs; a run not settled by the end counts as budget + 1)")


if __name__ == "__main__":
    main()
