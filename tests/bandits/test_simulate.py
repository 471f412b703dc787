"""Synthetic generator and accuracy curves (their plots: tests/faces/test_plotting.py)."""

import numpy as np
import pytest

from sklearn_riskcontrol.bandits import UCBE, make_score_matrix, accuracy_curve, budget_to_reach


def test_generator_structure():
    data = make_score_matrix(40, 500, n_side_models=25, gap=0.03, random_state=0)
    S = data.scores
    assert S.shape == (40, 500) and set(np.unique(S)) <= {0.0, 1.0}
    means = S.mean(1)
    np.testing.assert_allclose(means, data.means)
    top = np.sort(means)
    assert top[-1] - top[-2] == pytest.approx(0.03, abs=1 / 500 + 1e-12)
    assert data.best_index == int(np.argmax(means)) and data.best_index != 0
    assert (means < top[-1]).sum() == 39  # the best is unique
    assert data.side_scores.shape == (25, 500)
    # side models are weaker on average (ability -1.8 vs -1.3, and tested rows are selected)
    assert data.side_scores.mean() < S.mean()
    again = make_score_matrix(40, 500, n_side_models=25, gap=0.03, random_state=0)
    np.testing.assert_array_equal(again.scores, S)
    for seed in range(5):
        assert make_score_matrix(10, 100, random_state=seed).best_index != 0
    with pytest.raises(ValueError, match="gap"):
        make_score_matrix(10, 100, gap=1.5)


def test_accuracy_curve_and_budget_to_reach():
    data = make_score_matrix(15, 300, gap=0.05, random_state=1)
    runs = [UCBE(budget=0.5, batch_size=10, random_state=s).fit(data.scores) for s in range(8)]
    budgets = np.array([0, 500, 1000, 2250])
    acc, se = accuracy_curve(runs, data.best_index, budgets)
    assert acc[0] == 0 and acc[-1] == np.mean([r.best_index_ == data.best_index for r in runs])
    assert np.all(se >= 0)
    b = budget_to_reach(runs, data.best_index, level=0.5)
    assert np.isinf(b) or acc[np.searchsorted(budgets, b) :].min() >= 0.5 - 1e-12 or b > 1000
