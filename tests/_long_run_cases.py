"""Long-run numerical stability cases: inputs, the call, and its check against a reference.

Shared by ``tests/validity/test_long_run.py`` (every case at 10^5 rounds / test points, bandits 10^4
evaluations) and ``benchmarks/bench_long_run.py`` (the same cases at up to 10^7 items, timed,
with their peak memory). ``CASES[name] = (make, run, check, unit)``: ``make(size)`` builds the
inputs, ``run(**inputs)`` is the call under test and ``check(inputs, result)`` compares it with a
reference computed another way (closed-form wealth from exact counts, ``math.fsum`` of the
log-factors, order statistics by ``np.partition``, SCoRE by an independent binary-search
implementation, chunked recomputation, cells bought once); its dict has ``ok`` and the numbers
behind it. The benchmark's docstring describes every case.
"""

import math

import numpy as np

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
    from sklearn_riskcontrol.selective import sdr_evalues

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
    from sklearn_riskcontrol.selective import mdr_decisions, mdr_evalues

    return mdr_decisions(L, S, T, ALPHA), mdr_evalues(L, S, T, ALPHA)


run_mdr_n1e4 = run_mdr_n1e6 = run_mdr


def check_mdr(inputs, result):
    from sklearn_riskcontrol.selective import mdr_decisions, mdr_evalues

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
