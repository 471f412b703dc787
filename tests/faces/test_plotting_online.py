"""Plots of online prediction sets: axes, lines, labels, data; the missing-matplotlib error."""

import subprocess
import sys

import numpy as np
import pytest
from scipy.stats import norm

from sklearn_riskcontrol.online import (
    average_set_size,
    coverage_rate,
    cumulative_regret,
    oracle_threshold,
    simulate_thresholds,
)
from sklearn_riskcontrol.plotting import plot_coverage, plot_regret, plot_set_size, plot_thresholds
from sklearn_riskcontrol.plotting._common import MATPLOTLIB_MISSING

STRATEGIES = ("sps", "greedy", "aci", "dlr")


@pytest.fixture(scope="module")
def stream():
    """A classification-like stream: candidate scores, true-label scores and every strategy's run."""
    rng = np.random.default_rng(0)
    n, k = 1500, 6
    S = rng.dirichlet(np.full(k, 0.7), size=n)
    y = np.array([rng.choice(k, p=p) for p in S])
    s = S[np.arange(n), y]
    runs = {st: simulate_thresholds(s, 0.1, strategy=st, horizon=n) for st in STRATEGIES}
    return S, s, runs


def _legend_labels(ax):
    legend = ax.get_legend()
    return [] if legend is None else [t.get_text() for t in legend.get_texts()]


def test_plot_thresholds_lines_labels_and_data(plt, stream):
    S, s, runs = stream
    tau_star = oracle_threshold(s, 0.1)
    ax = plot_thresholds(runs, tau_star=tau_star)
    assert isinstance(ax, plt.Axes)
    lines = ax.get_lines()
    assert len(lines) == len(STRATEGIES) + 1
    assert _legend_labels(ax) == [*STRATEGIES, "oracle tau*"]
    assert ax.get_xlabel() == "round t" and ax.get_ylabel() == "threshold tau_t"
    for line, name in zip(lines, STRATEGIES):
        x, y = line.get_data()
        np.testing.assert_array_equal(x, np.arange(1, len(s) + 1))
        tau = runs[name]
        # infinite thresholds (full / empty sets) are gaps in the line, the rest is drawn as is
        np.testing.assert_array_equal(np.isnan(y), ~np.isfinite(tau))
        np.testing.assert_array_equal(y[np.isfinite(tau)], tau[np.isfinite(tau)])
    assert np.isinf(runs["sps"][0])  # the SPS line does start with a gap
    np.testing.assert_array_equal(lines[-1].get_ydata(), [tau_star, tau_star])


def test_plot_thresholds_without_tau_star_and_bare_array(plt, stream):
    _, _, runs = stream
    ax = plot_thresholds(runs["sps"])  # one array: one line, no legend
    assert len(ax.get_lines()) == 1 and ax.get_legend() is None


def test_given_ax_is_used_and_returned(plt, stream):
    S, s, runs = stream
    fig, axes = plt.subplots(2, 2)
    n_figures = len(plt.get_fignums())
    out = [
        plot_thresholds(runs, ax=axes[0, 0]),
        plot_coverage(runs, s, alpha=0.1, ax=axes[0, 1]),
        plot_set_size(runs, S, ax=axes[1, 0]),
        plot_regret(runs, s, 0.1, ax=axes[1, 1]),
    ]
    assert out == list(axes.ravel())
    assert len(plt.get_fignums()) == n_figures  # no new figure
    for ax in out:
        assert len(ax.get_lines()) >= len(STRATEGIES)


def test_plot_coverage_is_the_running_coverage(plt, stream):
    _, s, runs = stream
    ax = plot_coverage(runs, s, alpha=0.1)
    lines = ax.get_lines()
    assert len(lines) == len(STRATEGIES) + 1
    assert _legend_labels(ax) == [*STRATEGIES, "target 1 - alpha = 0.9"]
    assert ax.get_ylabel() == "running coverage"
    t = np.arange(1, len(s) + 1)
    for line, name in zip(lines, STRATEGIES):
        y = line.get_ydata()
        np.testing.assert_allclose(y, np.cumsum(s >= runs[name]) / t)
        assert y[-1] == pytest.approx(coverage_rate(s, runs[name]))
    np.testing.assert_allclose(lines[-1].get_ydata(), [0.9, 0.9])
    assert len(plot_coverage(runs, s).get_lines()) == len(STRATEGIES)  # no target line


def test_plot_set_size_is_the_running_average(plt, stream):
    S, s, runs = stream
    tau_star = oracle_threshold(s, 0.1)
    ax = plot_set_size(runs, S, tau_star=tau_star)
    lines = ax.get_lines()
    assert len(lines) == len(STRATEGIES) + 1
    assert _legend_labels(ax)[-1] == "oracle tau*"
    assert ax.get_ylabel() == "running average set size"
    for line, name in zip(lines, STRATEGIES):
        assert line.get_ydata()[-1] == pytest.approx(average_set_size(S, runs[name]))
    oracle = lines[-1].get_ydata()
    assert oracle[-1] == pytest.approx(average_set_size(S, np.full(len(s), tau_star)))
    # SPS is conservative: its sets are never smaller than the oracle's on average
    assert lines[0].get_ydata()[-1] >= oracle[-1]


def test_plot_regret_matches_cumulative_regret(plt, stream):
    _, s, runs = stream
    ax = plot_regret(runs, s, 0.1, yscale="symlog")
    lines = ax.get_lines()
    assert len(lines) == len(STRATEGIES) and _legend_labels(ax) == list(STRATEGIES)
    assert ax.get_ylabel() == "cumulative regret" and ax.get_yscale() == "symlog"
    for line, name in zip(lines, STRATEGIES):
        np.testing.assert_allclose(line.get_ydata(), cumulative_regret(runs[name], s, 0.1))
    # with a known distribution (callable reference) and the paper's ordering on N(0, 1) scores
    z = np.random.default_rng(1).normal(size=3000)
    runs = {st: simulate_thresholds(z, 0.1, strategy=st, horizon=3000) for st in ("sps", "greedy")}
    lines = plot_regret(runs, norm.cdf, 0.1).get_lines()
    assert lines[0].get_ydata()[-1] < lines[1].get_ydata()[-1]


def test_bad_input_errors(plt, stream):
    S, s, runs = stream
    with pytest.raises(ValueError, match="have 1500 rounds but `true_label_scores` has 10"):
        plot_coverage(runs, s[:10])
    with pytest.raises(ValueError, match="`candidate_scores` has 10"):
        plot_set_size(runs, S[:10])
    with pytest.raises(ValueError, match="must be 2-d"):
        plot_set_size(runs, s)
    with pytest.raises(ValueError, match="contain NaN"):
        plot_thresholds({"bad": [0.1, np.nan]})
    with pytest.raises(ValueError, match="empty"):
        plot_thresholds({})
    with pytest.raises(TypeError, match="dict"):
        plot_thresholds("sps")
    with pytest.raises(ValueError, match="non-empty 1-d"):
        plot_thresholds({"2d": np.zeros((3, 2))})
    with pytest.raises(TypeError, match="`ax` must be a matplotlib Axes"):
        plot_thresholds(runs, ax="left")
    with pytest.raises(ValueError, match="alpha"):
        plot_coverage(runs, s, alpha=0.9 + 0.2)
    with pytest.raises(ValueError, match="yscale"):
        plot_regret(runs, s, 0.1, yscale="loglog")
    with pytest.raises(ValueError, match="tau_star"):
        plot_thresholds(runs, tau_star=np.nan)


def test_missing_matplotlib_gives_install_hint(monkeypatch, stream):
    _, s, runs = stream
    # `None` in sys.modules makes `import matplotlib...` raise ImportError, as if not installed
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    calls = [
        lambda: plot_thresholds(runs),
        lambda: plot_coverage(runs, s),
        lambda: plot_set_size(runs, np.column_stack([s, s])),
        lambda: plot_regret(runs, s, 0.1),
    ]
    for call in calls:
        with pytest.raises(ImportError) as info:
            call()
        assert str(info.value) == MATPLOTLIB_MISSING
    assert MATPLOTLIB_MISSING == "plotting needs matplotlib: pip install 'sklearn-riskcontrol[plot]'"


def test_importing_plotting_does_not_import_matplotlib():
    code = (
        "import sys; sys.modules['matplotlib'] = None\n"
        "import sklearn_riskcontrol.plotting as p\n"
        "try:\n"
        "    p.plot_thresholds({'sps': [0.0, 1.0]})\n"
        "except ImportError as e:\n"
        "    print(e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == MATPLOTLIB_MISSING


def test_empty_streams_are_rejected_by_name(plt):
    with pytest.raises(ValueError, match="`true_label_scores` is empty"):
        plot_coverage({"sps": []}, [])
    with pytest.raises(ValueError, match="`candidate_scores` is empty"):
        plot_set_size({"sps": np.zeros(3)}, np.zeros((3, 0)))
    with pytest.raises(ValueError, match=r"`thresholds_by_strategy\['sps'\]` must be an array of real"):
        plot_thresholds({"sps": np.zeros(3) + 1j})
