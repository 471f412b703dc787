"""Demo sections: each prints its numbers with their guarantee and returns summary lines."""

import re

import numpy as np
import pytest

from sklearn_riskcontrol import RiskControlWarning
from sklearn_riskcontrol.bandits import PULSE, UCBE, make_score_matrix
from sklearn_riskcontrol.demo import run_demo
from sklearn_riskcontrol.demo.bandits import bandits_section


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
    with pytest.warns(RiskControlWarning, match="vacuous"):  # the section reports them
        ci = ref.confidence_intervals(0.05)
    lo, hi = ci[ref.best_index_]
    assert f"[{lo:.3f}, {hi:.3f}]" in out and f"[{lo:.3f}, {hi:.3f}]" in summary
    assert hi - lo < 0.3  # an informative interval, not [0, 1]
    assert summary.startswith("identified") and "one run" in summary
    assert "w.p. >= 0.95 the intervals hold simultaneously over the 60 models" in summary
    covered = int(re.search(r"(\d+) of 60 intervals contain", out).group(1))
    assert covered == int(np.sum((ci[:, 0] <= data.means) & (data.means <= ci[:, 1])))
    vacuous = int(re.search(r"(\d+) of them vacuous", out).group(1))
    assert vacuous == int(np.sum(ci[:, 1] - ci[:, 0] >= 0.99))
    # UCB-E's intervals are anytime-valid and simultaneous too: printed the same way
    ucbe = UCBE(budget=4000, batch_size=8, random_state=0).fit(data.scores)
    assert int(picks[1][1]) == ucbe.best_index_
    with pytest.warns(RiskControlWarning, match="vacuous"):
        ci = ucbe.confidence_intervals(0.05)
    lo, hi = ci[ucbe.best_index_]
    section = out.split("  UCB-E  picks", 1)[1]
    assert f"95% CI for model {ucbe.best_index_}: [{lo:.3f}, {hi:.3f}]" in section
    inside = int(np.sum((ci[:, 0] <= data.means) & (data.means <= ci[:, 1])))
    assert f"{inside} of 60 intervals contain their model's exact mean" in section
    assert f"{int(np.sum(ci[:, 1] - ci[:, 0] >= 0.99))} of them vacuous" in section
    assert "all 60 intervals of a method hold at once" in out
    assert "UCB-E has no interval" not in out

def test_every_printed_realization_is_labelled_with_its_guarantee(capsys):
    """The quick demo's summary: each number is marked as one draw and carries its guarantee."""
    run_demo(seed=0, quick=True)
    out = capsys.readouterr().out
    summary = out.split("Summary: what each number guarantees\n", 1)[1].split("\n\ndone", 1)[0]
    lines = summary.splitlines()
    assert [line.split()[0] for line in lines] == [
        "deployed", "deployed", "covered", "certified", "selected", "identified"]
    for line in lines:
        assert re.search(r"\(one (draw|stream|run)\)|; one run\)", line), line
        assert "guarantee" in line, line
    for line in lines[:2]:  # SCoRE: in expectation
        assert "in expectation over calibration and test draws" in line
    for line in lines[2:]:  # SPS, R-AutoEval+, PULSE: with probability
        assert re.search(r"w\.p\. >= 0\.9|<= 0\.1", line), line
    # The PAC baselines say over what their probability is.
    assert out.count("w.p. >= 0.9 over the calibration draw (PAC)") == 2


def test_selective_section_names_mdr_and_sdr_and_says_one_draw_may_exceed(capsys):
    """MDR lines report mean(L x deploy) over all points, SDR lines the mean among deployed
    (the demo once printed both as "realized risk", 0.0542 next to alpha = 0.05 unexplained)."""
    from sklearn_riskcontrol.demo.selective import selective_section

    selective_section(seed=0, quick=True)
    blocks = re.split(r"\n  (?=\S)", capsys.readouterr().out)
    methods = {b.split("  ")[0]: b for b in blocks if "deployed on" in b}
    assert len(methods) == 4
    for name, block in methods.items():
        kind = "MDR" if "MDR" in name else "SDR"
        assert f"\n{' ' * 30}{kind} = " in block and ("MDR" if kind == "SDR" else "SDR = ") \
            not in block, block
        value = re.search(rf"{kind} = [^:]+: (\S+)", block).group(1)
        if value != "none":
            side = "above" if float(value) > 0.05 else "at or below"
            assert f"({side} alpha = 0.05 in this one draw; a single draw may exceed alpha)" \
                in block
