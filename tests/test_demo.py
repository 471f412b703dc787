"""Demo sections: each prints its numbers with their guarantee and returns summary lines."""

import re

import numpy as np

from sklearn_riskcontrol._demo_bandits import bandits_section
from sklearn_riskcontrol.bandits import PULSE, make_score_matrix


def test_bandits_section_reports_pulse_and_ucbe(capsys):
    summary = bandits_section(seed=0)
    out = capsys.readouterr().out
    assert out.startswith("Best-model identification")
    picks = re.findall(r"^  (PULSE|UCB-E)\s+picks model (\d+)", out, re.MULTILINE)
    assert [name for name, _ in picks] == ["PULSE", "UCB-E"]
    # The section's PULSE run is the estimator on the simulator's matrix with the same seed.
    data = make_score_matrix(60, 4000, n_side_models=60, gap=0.04, rank=8, random_state=0)
    ref = PULSE(budget=4000, batch_size=8, refit_every=20, rank=4, random_state=0)
    ref.fit(data.scores, side_scores=data.side_scores)
    assert int(picks[0][1]) == ref.best_index_
    lo, hi = ref.confidence_intervals(0.05)[ref.best_index_]
    assert f"[{lo:.3f}, {hi:.3f}]" in out and f"[{lo:.3f}, {hi:.3f}]" in summary
    assert hi - lo < 0.3  # an informative interval, not [0, 1]
    assert summary.startswith("identified") and "unbiased" in summary
    assert "simultaneous over the 60 models" in summary
    covered = int(re.search(r"(\d+) of 60 intervals contain", out).group(1))
    inside = (ref.confidence_intervals(0.05)[:, 0] <= data.means) & (
        data.means <= ref.confidence_intervals(0.05)[:, 1])
    assert covered == int(np.sum(inside))
