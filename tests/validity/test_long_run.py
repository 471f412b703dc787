"""Long-run numerical stability (reduced: 10^5 rounds / test points, 10^4 evaluations).

The cases and their references live in ``_long_run_cases.py`` (closed-form wealth from exact
counts, ``math.fsum`` of the log-factors, order statistics by ``np.partition``, SCoRE by an
independent binary-search implementation, chunked recomputation, cells bought once). The full
sizes (10^7; bandits 10^6) and the linear-memory check run under ``-m slow``, through
``benchmarks/bench_long_run.py``, which measures the same cases, each size in a fresh
interpreter.
"""

import subprocess
import sys
from pathlib import Path

import pytest
from _long_run_cases import BANDIT_CASES, CASES, run_case

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_long_run.py"


@pytest.mark.parametrize("name", list(CASES))
def test_long_run_stability_reduced(name):
    size = 10**4 if name in BANDIT_CASES else 10**5
    checks = run_case(name, size)
    assert checks["ok"], checks


def _measured_rows(stdout, name):
    """The benchmark's table rows of case ``name``: {size: (traced bytes per item, checks)}."""
    rows = {}
    for line in stdout.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 9 and cells[0] == name:
            rows[int(float(cells[2]))] = (float(cells[7]), cells[8])
    return rows


@pytest.mark.slow
@pytest.mark.parametrize("name", list(CASES))
def test_long_run_stability_full_size_and_linear_memory(name):
    if not BENCH.exists():  # pragma: no cover - installed without the repository
        pytest.skip("benchmarks/ not available")
    big = 10**6 if name in BANDIT_CASES else 10**7
    proc = subprocess.run([sys.executable, str(BENCH), "--cases", name, "--max-size", str(big)],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = _measured_rows(proc.stdout, name)
    assert {big // 10, big} <= set(rows), proc.stdout
    for size, (_, checks) in rows.items():
        assert checks.startswith("OK:"), (size, checks)
    # traced peak per item at 10x the size: flat (linear memory), with slack for constants
    per_small, per_large = rows[big // 10][0], rows[big][0]
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
