"""The plotting module as a whole (conventions shared by every function), SCoRE and bandit figures.

Online (SPS) figures: tests/faces/test_plotting_online.py; R-AutoEval figures:
tests/autoeval/test_estimators.py.
"""

import inspect
import sys

import numpy as np
import pytest
from _models import ZeroModel
from sklearn.exceptions import NotFittedError

from sklearn_riskcontrol.selective import SCoREMDR, SCoRESDR
from sklearn_riskcontrol import plotting
from sklearn_riskcontrol.bandits import UCBE, UniformSampling, make_score_matrix
from sklearn_riskcontrol.autoeval import rautoeval_test
from sklearn_riskcontrol.plotting import (
    plot_accuracy_vs_budget,
    plot_deployment_vs_alpha,
    plot_evaluations_per_model,
    plot_group_deployment,
    plot_risk_vs_alpha,
)
from sklearn_riskcontrol.plotting._common import MATPLOTLIB_MISSING


@pytest.fixture(scope="module")
def bandit_runs():
    data = make_score_matrix(12, 200, gap=0.05, random_state=0)
    runs = {
        "UCB-E": [
            UCBE(budget=0.4, batch_size=10, random_state=s).fit(data.scores) for s in range(4)
        ],
        "uniform": [UniformSampling(budget=0.4, random_state=s).fit(data.scores) for s in range(3)],
    }
    return data, runs


def _grouped_rows(seed, n):
    """Rows (group, score) of three groups; P(L = 1) = score * (group + 1) / 3."""
    rng = np.random.default_rng(seed)
    g = rng.integers(0, 3, n)
    s = rng.uniform(size=n)
    return np.column_stack([g, s]), (rng.uniform(size=n) < s * (g + 1) / 3).astype(int)


def _group(X):
    return np.asarray(X)[:, 0].astype(int)


def _score(X):
    return np.asarray(X)[:, 1]


@pytest.fixture(scope="module")
def grouped_sdr():
    X, y = _grouped_rows(0, 1500)
    return SCoRESDR(ZeroModel(), risk_score=_score, alpha=0.1, groups=_group,
                    random_state=0).fit(X, y)


@pytest.fixture(scope="module")
def calls(bandit_runs, grouped_sdr):
    """One valid call per public plotting function: name -> f(ax)."""
    data, runs = bandit_runs
    X_test, y_test = _grouped_rows(1, 300)
    rng = np.random.default_rng(0)
    s = rng.normal(size=200)
    taus = {"sps": np.full(200, -1.5), "dlr": np.linspace(-3, 0, 200)}
    h = rng.binomial(1, 0.05, 200).astype(float)
    res = rautoeval_test(h, h, h, alpha=0.2, delta=0.1, method="plus")
    alphas, mc = [0.05, 0.1], rng.random((5, 2))
    monitor = _monitor()
    return {
        "plot_thresholds": lambda ax: plotting.plot_thresholds(taus, tau_star=-1.28, ax=ax),
        "plot_coverage": lambda ax: plotting.plot_coverage(taus, s, alpha=0.1, ax=ax),
        "plot_set_size": lambda ax: plotting.plot_set_size(taus, np.column_stack([s, -s]), ax=ax),
        "plot_regret": lambda ax: plotting.plot_regret(taus, s, 0.1, ax=ax),
        "plot_eprocess": lambda ax: plotting.plot_eprocess(res, ax=ax),
        "plot_rho_weights": lambda ax: plotting.plot_rho_weights(res, ax=ax),
        "plot_risk_monitor": lambda ax: plotting.plot_risk_monitor(monitor, ax=ax),
        "plot_accuracy_vs_budget": lambda ax: plot_accuracy_vs_budget(runs, data.best_index, ax=ax),
        "plot_evaluations_per_model": lambda ax: plot_evaluations_per_model(
            runs["UCB-E"][0], ax=ax
        ),
        "plot_risk_vs_alpha": lambda ax: plot_risk_vs_alpha(alphas, {"m": mc}, ax=ax),
        "plot_deployment_vs_alpha": lambda ax: plot_deployment_vs_alpha(alphas, mc, ax=ax),
        "plot_group_deployment": lambda ax: plot_group_deployment(grouped_sdr, X_test, y_test,
                                                                  ax=ax),
    }


def _monitor():
    from sklearn_riskcontrol.autoeval import RiskMonitor

    rng = np.random.default_rng(3)
    loss = (rng.random(4000) < np.where(np.arange(4000) < 1500, 0.05, 0.3)).astype(float)
    judge = np.where(rng.random(4000) < 0.9, loss, 1 - loss)
    labels = np.where(rng.random(4000) < 0.2, loss, np.nan)
    return RiskMonitor(alpha=0.1, delta=0.1, label_rate=0.2).fit(judge, labels)


def test_plot_risk_monitor_draws_the_evidence_and_the_bounds(plt):
    from sklearn_riskcontrol.autoeval import RiskMonitor

    monitor = _monitor()
    assert monitor.alarm_
    ax = plotting.plot_risk_monitor(monitor)
    curve, threshold, alarm = ax.get_lines()
    np.testing.assert_array_equal(curve.get_ydata(), monitor.log_eprocess_)
    assert threshold.get_ydata()[0] == pytest.approx(np.log(10.0))
    assert alarm.get_xdata()[0] == monitor.alarm_index_
    ax = plotting.plot_risk_monitor(monitor, kind="risk")
    low, high = monitor.confidence_sequence()
    band = ax.collections[0].get_paths()[0].vertices
    assert band[:, 1].min() == pytest.approx(low.min()) and band[:, 1].max() == pytest.approx(
        high.max())
    with pytest.raises(ValueError, match="'evidence' or 'risk'"):
        plotting.plot_risk_monitor(monitor, kind="wealth")
    with pytest.raises(ValueError, match="seen no rows"):
        plotting.plot_risk_monitor(RiskMonitor(alpha=0.1, delta=0.1))
    with pytest.raises(TypeError, match="must be a RiskMonitor"):
        plotting.plot_risk_monitor("monitor")


# ------------------------------------------------------------------ shared conventions
def test_every_public_function_is_covered(calls):
    assert set(plotting.__all__) == set(calls)


@pytest.mark.parametrize("name", plotting.__all__)
def test_conventions(plt, calls, name):
    func = getattr(plotting, name)
    ax_param = inspect.signature(func).parameters["ax"]
    assert ax_param.default is None
    # a given axes is drawn on and returned; without one, a new figure is made
    fig, ax = plt.subplots()
    assert calls[name](ax) is ax
    assert ax.get_xlabel() and ax.get_ylabel()
    new = calls[name](None)
    assert isinstance(new, plt.Axes) and new.figure is not fig
    with pytest.raises(TypeError, match="`ax` must be a matplotlib Axes"):
        calls[name]("left")


@pytest.mark.parametrize("name", plotting.__all__)
def test_missing_matplotlib_gives_install_hint(monkeypatch, calls, name):
    # `None` in sys.modules makes `import matplotlib...` raise ImportError, as if not installed
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    with pytest.raises(ImportError) as info:
        calls[name](None)
    assert str(info.value) == MATPLOTLIB_MISSING
    assert "sklearn-riskcontrol[plot]" in MATPLOTLIB_MISSING


# ------------------------------------------------------------------ SCoRE
def _line(ax, i):
    """Data line of the i-th errorbar container (the caps are lines too)."""
    return ax.containers[i].lines[0]


def _bars(ax, i):
    """(low, high) of the error bars of the i-th errorbar container."""
    segments = ax.containers[i].lines[2][0].get_segments()
    return np.array([seg[0][1] for seg in segments]), np.array([seg[1][1] for seg in segments])


def test_risk_vs_alpha_data_error_bars_and_diagonal(plt):
    rng = np.random.default_rng(1)
    alphas = np.array([0.02, 0.05, 0.1, 0.2])
    mdr = rng.random((30, 4)) * alphas  # 30 repetitions
    sdr = rng.random((30, 4)) * alphas
    ax = plot_risk_vs_alpha(alphas, {"SCoRE-MDR": mdr, "SCoRE-SDR": sdr}, target=None)
    assert ax.get_xlabel() == "alpha" and ax.get_ylabel() == "realized risk"
    for i, values in enumerate([mdr, sdr]):
        np.testing.assert_array_equal(_line(ax, i).get_xdata(), alphas)
        np.testing.assert_allclose(_line(ax, i).get_ydata(), values.mean(axis=0))
    (diagonal,) = [ln for ln in ax.get_lines() if ln.get_label() == "y = alpha"]
    np.testing.assert_array_equal(diagonal.get_xdata(), alphas)
    np.testing.assert_array_equal(diagonal.get_ydata(), alphas)
    assert diagonal.get_linestyle() == "--"
    # bars = mean +- 2 standard errors over the repetitions
    half = 2 * mdr.std(axis=0, ddof=1) / np.sqrt(30)
    low, high = _bars(ax, 0)
    np.testing.assert_allclose(low, mdr.mean(axis=0) - half)
    np.testing.assert_allclose(high, mdr.mean(axis=0) + half)
    labels = sorted(t.get_text() for t in ax.get_legend().get_texts())
    assert labels == ["SCoRE-MDR", "SCoRE-SDR", "y = alpha"]

    ax = plot_risk_vs_alpha(alphas, {"m": mdr}, n_se=1)
    low, _ = _bars(ax, 0)
    np.testing.assert_allclose(low, mdr.mean(axis=0) - half / 2)
    assert plot_risk_vs_alpha(alphas, mdr, target="sdr").get_ylabel().startswith("realized SDR")
    assert plot_risk_vs_alpha(alphas, mdr).get_ylabel().startswith("realized MDR")


def test_risk_vs_alpha_without_repetitions_or_bars_and_unsorted_alphas(plt):
    ax = plot_risk_vs_alpha([0.2, 0.05, 0.1], [0.19, 0.04, 0.11])  # averaged: no bars
    assert not ax.containers[0].has_yerr
    line = _line(ax, 0)
    np.testing.assert_array_equal(line.get_xdata(), [0.05, 0.1, 0.2])  # drawn by increasing alpha
    np.testing.assert_array_equal(line.get_ydata(), [0.04, 0.11, 0.19])
    assert ax.get_legend().get_texts()[0].get_text() == "y = alpha"  # a bare array: no entry
    ax = plot_risk_vs_alpha([0.1, 0.2], np.ones((5, 2)) * 0.1, n_se=0)
    assert not ax.containers[0].has_yerr
    ax = plot_risk_vs_alpha([0.1, 0.2], [[0.05, 0.15]])  # a single repetition: no bars
    assert not ax.containers[0].has_yerr


def test_deployment_vs_alpha(plt):
    rates = {"SCoRE": np.array([[0.2, 0.5], [0.4, 0.7]]), "Hoeffding": np.array([0.0, 0.1])}
    _, ax = plt.subplots()
    assert plot_deployment_vs_alpha([0.05, 0.1], rates, ylabel="power", ax=ax) is ax
    assert ax.get_ylabel() == "power" and ax.get_xlabel() == "alpha"
    assert len(ax.containers) == 2 and len(ax.get_lines()) == 2 + 2  # two curves, two caps
    np.testing.assert_allclose(_line(ax, 0).get_ydata(), [0.3, 0.6])
    np.testing.assert_allclose(_line(ax, 1).get_ydata(), [0.0, 0.1])
    low, high = _bars(ax, 0)
    std = rates["SCoRE"].std(axis=0, ddof=1)
    np.testing.assert_allclose(high - low, 2 * 2 * std / np.sqrt(2))  # +- 2 s.e., 2 repetitions
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["SCoRE", "Hoeffding"]


def test_score_plot_errors(plt):
    with pytest.raises(ValueError, match=r"shape \(3, 2\) but there are 3 alphas"):
        plot_risk_vs_alpha([0.1, 0.2, 0.3], {"m": np.zeros((3, 2))})  # transposed
    with pytest.raises(ValueError, match=r"`rates\['m'\]` has shape \(2,\) but there are 3"):
        plot_deployment_vs_alpha([0.1, 0.2, 0.3], {"m": [0.1, 0.2]})
    with pytest.raises(ValueError, match="levels in \\(0, 1\\)"):
        plot_risk_vs_alpha([0.1, 1.5], [0.1, 0.2])
    with pytest.raises(ValueError, match="levels in \\(0, 1\\)"):
        plot_risk_vs_alpha([], [])
    with pytest.raises(ValueError, match="NaN or inf"):
        plot_risk_vs_alpha([0.1, 0.2], {"m": [0.1, np.nan]})
    with pytest.raises(ValueError, match="target"):
        plot_risk_vs_alpha([0.1], [0.1], target="fdr")
    with pytest.raises(ValueError, match="n_se"):
        plot_risk_vs_alpha([0.1], [0.1], n_se=-1)
    with pytest.raises(ValueError, match="1-d to 2-d"):
        plot_risk_vs_alpha([0.1], np.zeros((2, 2, 1)))
    with pytest.raises(ValueError, match="empty"):
        plot_deployment_vs_alpha([0.1], {})
    with pytest.raises(ValueError, match=r"`rates\['m'\]` must be an array of real numbers"):
        plot_deployment_vs_alpha([0.1], {"m": [0.1 + 1j]})  # complex: ValueError, as sklearn
    with pytest.raises(TypeError, match="real numbers"):
        plot_deployment_vs_alpha([0.1], {"m": ["0.1"]})


def _risk_axes(ax):
    (right,) = [a for a in ax.get_shared_x_axes().get_siblings(ax) if a is not ax]
    return right


def test_group_deployment_bars_risk_markers_and_alpha_line(plt, grouped_sdr):
    X, y = _grouped_rows(1, 300)
    # SCoRESDR draws fresh boosting uniforms per call: refit, then decide once by hand and
    # once in the plot (the first call after each fit draws the same uniforms)
    deploy = grouped_sdr.fit(*_grouped_rows(0, 1500)).decide(X)
    ax = plot_group_deployment(grouped_sdr.fit(*_grouped_rows(0, 1500)), X, y)
    g = _group(X)
    shares = [deploy[g == k].mean() for k in range(3)]
    np.testing.assert_allclose([p.get_height() for p in ax.patches], shares)
    assert [t.get_text() for t in ax.get_xticklabels()] == ["0", "1", "2"]
    assert ax.get_xlabel() == "group" and ax.get_ylabel() == "deployed share"
    right = _risk_axes(ax)
    markers, line = right.get_lines()
    sdr = [y[deploy & (g == k)].mean() for k in range(3)]  # risk among deployed
    np.testing.assert_allclose(markers.get_ydata(), sdr)
    assert "one draw" in markers.get_label() and "risk among deployed" in right.get_ylabel()
    np.testing.assert_array_equal(line.get_ydata(), [0.1, 0.1])
    assert line.get_linestyle() == "--"
    labels = [t.get_text() for t in right.get_legend().get_texts()]
    assert labels == ["deployed share", "realized risk among deployed (one draw)", "alpha = 0.1"]


def test_group_deployment_without_labels_or_groups_and_mdr(plt):
    X, y = _grouped_rows(2, 1500)
    X_test, y_test = _grouped_rows(3, 200)
    # an estimator fitted without groups: the groups to show are passed in
    mdr = SCoREMDR(ZeroModel(), risk_score=_score, alpha=0.1).fit(X, y)
    with pytest.raises(ValueError, match="fitted without groups: pass `groups`"):
        plot_group_deployment(mdr, X_test)
    ax = plot_group_deployment(mdr, X_test, groups=_group(X_test))
    assert len(ax.get_shared_x_axes().get_siblings(ax)) == 1  # no labels: no risk axis
    deploy, g = mdr.decide(X_test), _group(X_test)
    np.testing.assert_allclose([p.get_height() for p in ax.patches],
                               [deploy[g == k].mean() for k in range(3)])
    ax = plot_group_deployment(mdr, X_test, y_test, groups=_group)
    (markers, _) = _risk_axes(ax).get_lines()
    # MDR: the group's mean of L * deploy, over all its rows
    np.testing.assert_allclose(markers.get_ydata(),
                               [np.mean(y_test[g == k] * deploy[g == k]) for k in range(3)])
    assert "MDR" in markers.get_label()


def test_group_deployment_errors(plt, grouped_sdr):
    X, y = _grouped_rows(1, 50)
    with pytest.raises(TypeError, match="fitted selective estimator"):
        plot_group_deployment(object(), X)
    with pytest.raises(NotFittedError):
        plot_group_deployment(SCoRESDR(ZeroModel(), groups=_group), X)
    with pytest.raises(ValueError, match=r"one label per row of X: 50 rows, but got shape \(3,\)"):
        plot_group_deployment(grouped_sdr, X, groups=[0, 1, 2])
    with pytest.raises(ValueError, match="`X` has 50 rows but `y` has 49"):
        plot_group_deployment(grouped_sdr, X, y[:49])


# ------------------------------------------------------------------ bandits
def test_accuracy_vs_budget_data(plt, bandit_runs):
    data, runs = bandit_runs
    budgets = np.array([0, 200, 500, 900])
    ax = plot_accuracy_vs_budget(runs, data.best_index, budgets=budgets, level=0.9)
    lines = ax.get_lines()
    assert len(lines) == 3 and lines[2].get_ydata()[0] == 0.9
    for line, (name, fits) in zip(lines, runs.items()):
        # brute force: a run is right at budget b if its last choice within b is the best model
        expected = []
        for b in budgets:
            right = []
            for f in fits:
                seen = np.flatnonzero(f.history_["n_evaluations"] <= b)
                chosen = f.history_["best_index"][seen[-1]] if seen.size else -1
                right.append(chosen == data.best_index)
            expected.append(np.mean(right))
        np.testing.assert_array_equal(line.get_xdata(), budgets)
        np.testing.assert_allclose(line.get_ydata(), expected)
        assert line.get_label() == f"{name} ({len(fits)} runs)"
    band = ax.collections[0].get_paths()[0].vertices[:, 1]  # +- one binomial standard error
    acc = lines[0].get_ydata()
    se = np.sqrt(acc * (1 - acc) / len(runs["UCB-E"]))
    np.testing.assert_allclose([band.min(), band.max()], [(acc - se).min(), (acc + se).max()])
    # histories work as well as fitted strategies; default budgets reach the largest budget
    ax = plot_accuracy_vs_budget({"h": [f.history_ for f in runs["UCB-E"]]}, data.best_index)
    top = max(f.history_["n_evaluations"][-1] for f in runs["UCB-E"])
    assert ax.get_lines()[0].get_xdata()[-1] == top
    with pytest.raises(ValueError, match="`runs` is empty"):
        plot_accuracy_vs_budget({}, 0)
    with pytest.raises(ValueError, match="`budgets` is empty"):
        plot_accuracy_vs_budget(runs, data.best_index, budgets=[])


def test_evaluations_per_model_bars(plt, bandit_runs):
    data, runs = bandit_runs
    fit = runs["UCB-E"][0]
    ax = plot_evaluations_per_model(fit, true_means=data.means)
    order = np.argsort(-data.means, kind="stable")
    heights = [p.get_height() for p in ax.patches]
    np.testing.assert_array_equal(heights, fit.n_evaluations_per_model_[order])
    blue = ax.patches[-1].get_facecolor()
    red = [i for i, p in enumerate(ax.patches) if p.get_facecolor() != blue]
    if fit.best_index_ != order[-1]:
        assert red == [int(np.flatnonzero(order == fit.best_index_)[0])]
    assert ax.get_xlabel() == "models, by true mean (best first)"
    ax = plot_evaluations_per_model(fit, top=5)  # estimated means, best 5
    assert len(ax.patches) == 5 and ax.get_xlabel().startswith("models, by estimated")
    with pytest.raises(ValueError, match="one mean per model"):
        plot_evaluations_per_model(fit, true_means=data.means[:3])
    with pytest.raises(NotFittedError, match="`strategy` is not fitted"):
        plot_evaluations_per_model(UCBE())
