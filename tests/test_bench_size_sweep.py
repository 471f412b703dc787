"""The size-sweep benchmark (``benchmarks/bench_size_sweep.py``): slope fit, every path's set-up
at its smoke-test size, and the script end to end on two cheap paths."""

import importlib.util
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

_PATH = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_size_sweep.py"
if not _PATH.exists():  # pragma: no cover - installed without the repository
    pytest.skip("benchmarks/ not available", allow_module_level=True)
_spec = importlib.util.spec_from_file_location("bench_size_sweep", _PATH)
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)


@pytest.mark.parametrize("exponent", [0.5, 1.0, 1.15, 2.0, 2.3])
def test_slope_recovers_an_exact_power_law(exponent):
    sizes = [370, 1111, 3333, 10000]
    values = [4.2e-7 * n**exponent for n in sizes]
    assert bench.loglog_slope(sizes, values) == pytest.approx(exponent, abs=1e-10)


def test_slope_is_the_least_squares_fit_and_skips_unusable_points():
    rng = np.random.default_rng(0)
    sizes = np.geomspace(100, 3000, 4)
    values = 0.01 * sizes**1.3 * np.exp(rng.normal(scale=0.2, size=4))
    # normal equations of y = a + b x in log space
    x, y = np.log(sizes), np.log(values)
    expected = np.sum((x - x.mean()) * (y - y.mean())) / np.sum((x - x.mean()) ** 2)
    assert bench.loglog_slope(sizes, values) == pytest.approx(expected, rel=1e-12)
    # zero (e.g. no measurable RSS growth) and NaN are left out, not taken as log(0)
    assert bench.loglog_slope([10, 20, 40, 80], [0.0, 2.0, np.nan, 8.0]) == pytest.approx(1.0)
    assert math.isnan(bench.loglog_slope([10, 20], [0.0, 5.0]))


def test_flag_marks_slopes_above_threshold_only():
    row = {"path": "p", "unit": "rows", "sizes": [10, 100], "seconds": [0.1, 1.0],
           "rss_mb": [1.0, 2.0], "traced_mb": [1.0, 10.0], "time_slope": 1.0,
           "time_slope_last": 1.0, "mem_slope": 1.0}
    assert "NOT near-linear" not in bench.format_row(row)
    assert "NOT near-linear" in bench.format_row({**row, "time_slope": 1.2})


def test_grids_are_geometric_and_span_10_to_30x():
    for name, (_, sizes, quick, _) in bench.CASES.items():
        ratios = np.diff(np.log(sizes))
        assert len(sizes) == 4 and np.allclose(ratios, ratios[0], atol=0.01), name
        assert 10 <= sizes[-1] / sizes[0] <= 30, name
        assert quick[1] == 3 * quick[0] and quick[1] <= sizes[-1], name


@pytest.mark.filterwarnings("ignore")  # e.g. "nothing certified" at tiny sizes
@pytest.mark.parametrize("name", list(bench.CASES))
def test_every_path_runs_at_its_smoke_test_size(name):
    _, _, quick, setup = bench.CASES[name]
    setup(quick[0])()


def test_traced_peak_covers_the_output(tmp_path):
    # ebh returns a boolean mask of n bytes, so its call allocates at least that much
    n = 10**6
    result = bench.measure("ebh", n, repeat=1)
    assert result["traced_mb"] >= n / 2**20
    assert result["seconds"] > 0


def test_script_quick_run_writes_the_table(tmp_path):
    out = tmp_path / "sweep.md"
    proc = subprocess.run(
        [sys.executable, str(_PATH), "--quick", "--repeat", "1", "--paths", "ebh,simulate_thr",
         "--out", str(out)], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    assert "cores, load average" in proc.stdout
    rows = [line for line in out.read_text().splitlines() if line.startswith("| ")]
    paths = [r.split(" | ")[0][2:] for r in rows[1:]]  # rows[0] is the header
    assert paths == ["ebh", "simulate_thresholds (sps)"]
    for r in rows[1:]:
        cells = r.split(" | ")
        assert cells[2] == "100, 300"
        float(cells[6])  # the time slope is a number


def test_script_rejects_an_unknown_path():
    proc = subprocess.run([sys.executable, str(_PATH), "--paths", "no-such-path"],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 2
    assert "matches no path" in proc.stderr
