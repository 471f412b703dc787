"""The ablations benchmark (``benchmarks/bandits_ablations.py``), run as a script at a tiny
size: every method and the paired comparison are reported.

The script checks its own helpers before drawing a matrix (``self_check``: the
leaderboard-calibrated generator reproduces the 222 real accuracies exactly, with their
published deciles, shuffled rows, a top-2 gap of one instruction and a real item-difficulty
spread, seeded; the precision curve, the 95%-level budget and the settling budget equal their
definitions on a hand-computed case): a failed check ends it with an error.
"""

import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "bandits_ablations.py"
if not BENCH.exists():  # pragma: no cover - installed without the repository
    pytest.skip("benchmarks/ not available", allow_module_level=True)

METHODS = ("UCB-E", "UCB-E-LRF", "LRF-all-R", "LRF-score-only", "LRF", "filled-subset",
           "row-mean", "PULSE")


def test_script_runs_end_to_end_at_a_tiny_size():
    proc = subprocess.run(
        [sys.executable, str(BENCH), "--kind", "synthetic", "--m", "12", "--n", "60",
         "--matrices", "2", "--reps", "1", "--budget", "0.5", "--eps", "0",
         "--pulse-rank", "2", "--B", "8"],
        capture_output=True, text=True, timeout=300, check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout
    assert out.startswith("self-check passed")
    assert "synthetic: 12 models x 60 examples, 2 runs per method" in out
    for name in METHODS:  # every method by default, one row of the table each
        assert f"\n{name} " in out
    assert "all-cells minus unscored-cells uncertainty" in out
