"""The size-sweep benchmark (``benchmarks/bench_size_sweep.py``), run as a script: its quick mode
measures every path at its smoke-test sizes and writes a consistent table; an unknown path is a
usage error.

The script checks its own helpers before measuring (``self_check``: the slope is the
least-squares fit in log-log space and leaves out zero and NaN values, the flag marks slopes
above the threshold only, every full grid is 4 geometric sizes spanning 10-30x): a failed
check ends it with an error, which the quick run below would report.
"""

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_size_sweep.py"
if not BENCH.exists():  # pragma: no cover - installed without the repository
    pytest.skip("benchmarks/ not available", allow_module_level=True)


def _numbers(cell):
    return [float(v) for v in cell.split(", ")]


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    """One ``--quick`` run of every path: (stdout, the table rows of the written file)."""
    out = tmp_path_factory.mktemp("sweep") / "sweep.md"
    proc = subprocess.run(
        [sys.executable, str(BENCH), "--quick", "--repeat", "1", "--out", str(out)],
        capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = [line for line in out.read_text().splitlines() if line.startswith("| ")]
    assert rows[0].startswith("| path | unit | sizes |")
    return proc.stdout, [r.strip("| ").split(" | ") for r in rows[1:]]


def test_quick_run_measures_every_path_at_two_sizes(quick):
    stdout, rows = quick
    assert "self-check passed" in stdout
    assert "cores, load average" in stdout
    assert "Failed: none" in stdout
    paths = [cells[0] for cells in rows]
    assert len(paths) >= 25 and len(set(paths)) == len(paths)
    for cells in rows:  # the file's table is the one printed
        assert f"| {' | '.join(cells)}" in stdout
    sizes = {cells[0]: cells[2] for cells in rows}
    assert sizes["ebh"] == "100, 300"
    assert sizes["simulate_thresholds (sps)"] == "100, 300"
    for cells in rows:
        low, high = _numbers(cells[2])
        assert high == 3 * low, cells  # --quick: (low, 3 low)
        seconds, traced = _numbers(cells[3]), _numbers(cells[5])
        assert min(seconds) > 0 and min(traced) > 0, cells


def test_slopes_are_the_log_log_fits_of_the_printed_values(quick):
    stdout, rows = quick
    threshold = float(re.search(r"flag: time slope > ([0-9.]+)", stdout).group(1))
    for cells in rows:
        sizes, seconds, traced = (np.log(_numbers(cells[k])) for k in (2, 3, 5))
        time_slope, last, mem_slope = (float(cells[k]) for k in (6, 7, 8))
        # 2 sizes: the least-squares slope is the slope between them; the printed values have
        # 3 significant digits (at most 0.5% each) and the slopes 2 decimals
        tol = 2 * 0.005 / np.ptp(sizes) + 0.005 + 1e-9
        assert time_slope == pytest.approx((seconds[1] - seconds[0]) / (sizes[1] - sizes[0]),
                                           abs=tol), cells
        assert last == time_slope, cells
        assert mem_slope == pytest.approx((traced[1] - traced[0]) / (sizes[1] - sizes[0]),
                                          abs=tol), cells
        # flagged above the threshold only (a printed slope equal to it may be either side)
        flagged = len(cells) > 9 and cells[9] == "NOT near-linear"
        assert time_slope >= threshold if flagged else time_slope <= threshold, cells


def test_traced_peak_covers_the_output(quick):
    # x.cumsum() returns n new float64s: tracemalloc must see at least those 8 n bytes
    _, rows = quick
    (cells,) = [c for c in rows if c[0].startswith("reference: x.cumsum()")]
    for n, mb in zip(_numbers(cells[2]), _numbers(cells[5])):
        assert mb * 2**20 >= 8 * n, cells


def test_script_rejects_an_unknown_path():
    proc = subprocess.run([sys.executable, str(BENCH), "--paths", "no-such-path"],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 2
    assert "matches no path" in proc.stderr
