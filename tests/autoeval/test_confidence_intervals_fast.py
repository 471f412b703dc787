"""Count-based fast path of the universal-portfolio confidence bounds (issue 13).

``_upper_bound(..., fast=True)`` (the default) must return the bound of the root finding on
full runs (``fast=False``) to within ``tol``, on the conservative side of the crossing of the
very test the root finding inverts: ``f(bound) >= 0`` and ``f(bound - tol) < 0`` with ``f`` the
monotone test's ``max_i log E_i - log(1/delta)`` computed by direct ``_run`` calls.
"""

import numpy as np
import pytest

from sklearn_riskcontrol.autoeval import rautoeval_confidence_interval
from sklearn_riskcontrol.autoeval._arrays import (
    _CountMixture,
    _FastPathError,
    _fast_upper_bound,
    _prepare,
    _upper_bound,
)
from sklearn_riskcontrol.evalues.betting import UniversalPortfolio, _logsumexp, _run

TOL = 1e-6


def binary(rng, n, risk, gamma=0.9, r=5):
    h = rng.binomial(1, risk, n).astype(float)
    g = np.where(rng.random(n) < gamma, h, 1 - h)
    hu = rng.binomial(1, risk, n * r).astype(float)
    u = np.where(rng.random(n * r) < gamma, hu, 1 - hu)
    return h, g, u


def few_valued(rng, n, risk, r=3):
    """Losses in {0, 0.5, 1}; the judge is right 85% of the time."""
    levels = np.array([0.0, 0.5, 1.0])
    p = [1 - risk, risk / 2, risk / 2]
    h = levels[rng.choice(3, n, p=p)]
    g = np.where(rng.random(n) < 0.85, h, levels[rng.integers(0, 3, n)])
    hu = levels[rng.choice(3, n * r, p=p)]
    u = np.where(rng.random(n * r) < 0.85, hu, levels[rng.integers(0, 3, n * r)])
    return h, g, u


def sides(h, g, u, delta, n_rho=10, rho_grid=None):
    """``(q, rho, log_prior, strategy)`` of the upper side and of the mirrored (lower) side."""
    q, rho, log_prior, _, _, strategy, *_ = _prepare(h, g, u, 0.5, delta, "plus", "up", n_rho,
                                                     rho_grid, None)
    mirrored = np.clip(1.0 - q, -rho[:, None], 1.0 + rho[:, None])
    return [(q, rho, log_prior, strategy), (mirrored, rho, log_prior, strategy)]


def f(q, rho, log_prior, delta, strategy, a):
    """The test inverted by `_upper_bound`, from one full run."""
    with np.errstate(divide="ignore"):
        logw = _run(q, a, -rho, 1.0 + rho, strategy, delta=delta, n_total=q.shape[1],
                    monotone=True)[1]
    return float(_logsumexp(log_prior[:, None] + logw, axis=0).max()) - np.log(1.0 / delta)


CASES = [  # (data, n, risk, delta, n_rho, rho_grid, seed)
    (binary, 400, 0.1, 0.1, 10, None, 0),
    (binary, 1500, 0.2, 0.05, 10, None, 1),
    (binary, 3000, 0.05, 0.02, 5, None, 2),
    (binary, 2000, 0.3, 0.1, None, [0.0, 0.3, 0.7, 1.0], 3),
    (few_valued, 800, 0.15, 0.1, 10, None, 4),
    (few_valued, 2500, 0.1, 0.05, 4, None, 5),
    (binary, 1000, 0.1, 0.1, None, [1.0], 6),  # one row (R-AutoEval)
    (binary, 60, 0.05, 0.3, 10, None, 8),  # within the adaptive rule's exact start
]


@pytest.mark.parametrize("data, n, risk, delta, n_rho, rho_grid, seed", CASES)
def test_fast_bound_equals_root_finding_and_is_conservative(data, n, risk, delta, n_rho,
                                                            rho_grid, seed):
    rng = np.random.default_rng(seed)
    h, g, u = data(rng, n, risk)
    for q, rho, log_prior, strategy in sides(h, g, u, delta, n_rho or 10, rho_grid):
        fast = _fast_upper_bound(q, rho, log_prior, delta, strategy, TOL)  # no fallback
        slow = _upper_bound(q, rho, log_prior, delta, strategy, TOL, fast=False)
        assert _upper_bound(q, rho, log_prior, delta, strategy, TOL) == fast
        assert abs(fast - slow) <= TOL, (fast, slow)
        if fast < 1.0:  # 1: never rejects (always a valid bound)
            assert f(q, rho, log_prior, delta, strategy, fast) >= 0  # not below the crossing
        if fast > 0.0:
            assert f(q, rho, log_prior, delta, strategy, fast - TOL) < 0  # within tol of it


def test_public_interval_matches_root_finding(monkeypatch):
    rng = np.random.default_rng(7)
    h, g, u = binary(rng, 2000, 0.1)
    kw = dict(delta=0.1, construction="paper", betting="up")
    fast = rautoeval_confidence_interval(h, g, u, **kw)
    import sklearn_riskcontrol.autoeval._arrays as mod

    slow_bound = mod._upper_bound
    monkeypatch.setattr(mod, "_upper_bound",
                        lambda *a, **k: slow_bound(*a, **dict(k, fast=False)))
    slow = rautoeval_confidence_interval(h, g, u, **kw)
    assert abs(fast.high - slow.high) <= TOL and abs(fast.low - slow.low) <= TOL
    assert fast.low < h.mean() < fast.high


def test_exact_mixture_matches_the_runs_and_blocks_bound_their_rounds():
    rng = np.random.default_rng(11)
    h, g, u = binary(rng, 3000, 0.1)
    (q, rho, log_prior, strategy), _ = sides(h, g, u, 0.1)
    mix = _CountMixture(q, rho, log_prior)
    for a in (0.05, 0.11, 0.3):
        logw = _run(q, a, -rho, 1.0 + rho, strategy, n_total=q.shape[1], monotone=True)[1]
        run = _logsumexp(log_prior[:, None] + logw, axis=0)
        t = np.arange(1, q.shape[1] + 1)
        np.testing.assert_allclose(mix.mixture(a, t, t), run, rtol=0, atol=1e-9)
        t0, t1 = mix.blocks
        best = np.maximum.reduceat(run, t0 - 1)
        assert np.all(mix.mixture(a, t0, t1) >= best - 1e-12)


def test_never_rejects_gives_one_and_rejects_everywhere_gives_zero():
    strategy = UniversalPortfolio()
    rho = np.linspace(0.0, 1.0, 4)
    log_prior = np.full(4, -np.log(4))
    # five labels: 1 / delta = 1000 is out of reach at any alpha
    q = np.zeros((4, 5))
    assert _fast_upper_bound(q, rho, log_prior, 1e-3, strategy, TOL) == 1.0
    assert _upper_bound(q, rho, log_prior, 1e-3, strategy, TOL, fast=False) == 1.0
    # h = 0, g = 1, ubar = 0: q = -rho, the test rejects already at alpha = 0
    q = np.broadcast_to(-rho[:, None], (4, 300)).copy()
    assert _fast_upper_bound(q, rho, log_prior, 0.1, strategy, TOL) == 0.0
    assert _upper_bound(q, rho, log_prior, 0.1, strategy, TOL, fast=False) == 0.0
    assert f(q, rho, log_prior, 0.1, strategy, 0.0) >= 0


def test_many_distinct_values_take_root_finding():
    rng = np.random.default_rng(3)
    n = 400
    h = rng.random(n) * 0.3  # continuous losses: n distinct values per row
    g = np.clip(h + rng.normal(0, 0.05, n), 0, 1)
    u = rng.random(2 * n) * 0.3
    (q, rho, log_prior, strategy), _ = sides(h, g, u, 0.1)
    with pytest.raises(_FastPathError):
        _fast_upper_bound(q, rho, log_prior, 0.1, strategy, TOL)
    bound = _upper_bound(q, rho, log_prior, 0.1, strategy, TOL)
    assert bound == _upper_bound(q, rho, log_prior, 0.1, strategy, TOL, fast=False)


def test_other_strategies_keep_root_finding(monkeypatch):
    import sklearn_riskcontrol.autoeval._arrays as mod

    def boom(*args, **kwargs):
        raise AssertionError("fast path used")

    monkeypatch.setattr(mod, "_fast_upper_bound", boom)
    rng = np.random.default_rng(5)
    h, g, u = binary(rng, 300, 0.1)
    for betting in ("wsr", UniversalPortfolio(integration="exact"),
                    UniversalPortfolio(prior="reference")):
        rautoeval_confidence_interval(h, g, u, delta=0.1, construction="paper",
                                      betting=betting)
