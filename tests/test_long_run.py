"""Long-run numerical stability (reduced: 10^5 rounds / test points, 10^4 evaluations).

The cases and their references live in ``benchmarks/bench_long_run.py`` (closed-form wealth from
exact counts, ``math.fsum`` of the log-factors, order statistics by ``np.partition``, SCoRE by an
independent binary-search implementation, chunked recomputation, cells bought once). The full
sizes (10^7; bandits 10^6) and the linear-memory check run under ``-m slow``.
"""

import importlib.util
from pathlib import Path

import pytest

_PATH = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_long_run.py"
if not _PATH.exists():  # pragma: no cover - installed without the repository
    pytest.skip("benchmarks/ not available", allow_module_level=True)
_spec = importlib.util.spec_from_file_location("bench_long_run", _PATH)
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)

ARRAY_CASES = [c for c in bench.CASES if c not in bench.BANDIT_CASES]


@pytest.mark.parametrize("name", list(bench.CASES))
def test_long_run_stability_reduced(name):
    size = 10**4 if name in bench.BANDIT_CASES else 10**5
    checks = bench.run_case(name, size)
    assert checks["ok"], checks


@pytest.mark.slow
@pytest.mark.parametrize("name", list(bench.CASES))
def test_long_run_stability_full_size_and_linear_memory(name):
    big = 10**6 if name in bench.BANDIT_CASES else 10**7
    small = bench.measure(name, big // 10)
    large = bench.measure(name, big)
    assert large["checks"]["ok"], large["checks"]
    # traced peak per item at 10x the size: flat (linear memory), with slack for constants
    per_small = small["traced"] / (big // 10)
    per_large = large["traced"] / big
    assert per_large <= 1.3 * per_small + 8, (per_small, per_large)


def test_sps_replay_memory_is_bounded_per_round(monkeypatch):
    """Replay memory: the output (8 B/round) plus the learner's heap of records above the
    threshold (~(1 - alpha) 32 B/round, inherent to SPS), ~48 B/round; unchunked Python lists of
    every score and rank doubled it (~97 B/round, 1 GB at 10**7 rounds)."""
    import tracemalloc

    import numpy as np

    from sklearn_riskcontrol.online import _learners, simulate_thresholds

    monkeypatch.setattr(_learners, "_REPLAY_CHUNK", 2**12)  # many chunks at a test's size
    n = 10**5
    s = np.random.default_rng(0).standard_normal(n)
    tracemalloc.start()
    try:
        tau = simulate_thresholds(s, 0.1)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert tau.shape == (n,)
    assert peak < 64 * n + 2**20, peak / n
