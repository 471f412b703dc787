"""``autoeval monitor``: the command line runs RiskMonitor on the stream it reads, per model."""

import numpy as np
import pandas as pd
import pytest

from sklearn_riskcontrol.autoeval import RiskMonitor
from sklearn_riskcontrol.cli import main


def _stream(seed, n=6000, jump=2500):
    rng = np.random.default_rng(seed)
    loss = (rng.random(n) < np.where(np.arange(n) < jump, 0.05, 0.2)).astype(float)
    judge = np.where(rng.random(n) < 0.9, loss, 1 - loss)
    return np.where(rng.random(n) < 0.1, loss, np.nan), judge


def test_monitor_prints_what_the_monitor_finds(tmp_path, capsys):
    h, g = _stream(0)
    path, out = tmp_path / "stream.csv", tmp_path / "out.csv"
    pd.DataFrame({"loss": h, "judge_loss": g}).to_csv(path, index=False)
    assert main(["autoeval", "monitor", "--stream", str(path), "--alpha", "0.1",
                 "--label-rate", "0.1", "--output", str(out)]) == 0
    ref = RiskMonitor(alpha=0.1, delta=0.1, label_rate=0.1).fit(g, h)
    got = pd.read_csv(out).iloc[0]
    assert ref.alarm_ and got["alarm"] and got["alarm_row"] == ref.alarm_index_ + 1
    assert (got["n_rows"], got["n_labels"], got["mode"]) == (6000, ref.n_labels_, "judge")
    low, high = ref.confidence_sequence()
    assert got["risk_low"] == pytest.approx(low[-1]) and got["risk_high"] == pytest.approx(high[-1])
    err = capsys.readouterr().err
    assert f"ALARM at data row {ref.alarm_index_ + 1}" in err
    assert "alarm fires with probability at most 0.1 over the whole stream" in err


def test_monitor_keeps_models_apart_and_runs_labels_only(tmp_path, capsys):
    (h1, _), (h2, _) = _stream(1), _stream(2, jump=10**6)  # model b never degrades
    path, out = tmp_path / "two.csv", tmp_path / "out.csv"
    frame = pd.DataFrame({"model": ["a"] * h1.size + ["b"] * h2.size,
                          "loss": np.r_[h1, h2], "other": 0.0})
    frame.to_csv(path, index=False)
    assert main(["autoeval", "monitor", "--stream", str(path), "--alpha", "0.1",
                 "--output", str(out)]) == 0
    got = pd.read_csv(out).set_index("model")
    for name, h in (("a", h1), ("b", h2)):
        ref = RiskMonitor(alpha=0.1, delta=0.1).fit(None, h)
        assert got.loc[name, "alarm"] == ref.alarm_ and got.loc[name, "mode"] == "labels"
        assert got.loc[name, "n_labels"] == ref.n_labels_
    assert got.loc["a", "alarm"]
    assert "model 'b': no alarm over 6000 rows" in capsys.readouterr().err


def test_monitor_needs_the_label_rate_with_a_judge(tmp_path, capsys):
    h, g = _stream(3, n=50)
    path = tmp_path / "stream.csv"
    pd.DataFrame({"loss": h, "judge_loss": g}).to_csv(path, index=False)
    assert main(["autoeval", "monitor", "--stream", str(path), "--alpha", "0.1"]) == 2
    assert "--label-rate is required with a judge column" in capsys.readouterr().err
