"""Command line: subcommands on CSV tables, clear one-line errors."""

import re
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from sklearn_riskcontrol.cli import main
from sklearn_riskcontrol.evalues.testing import boost_evalues, ebh
from sklearn_riskcontrol.selective import mdr_decisions, sdr_evalues


@pytest.fixture()
def tables(tmp_path):
    rng = np.random.default_rng(0)
    s_cal, s_test = rng.uniform(size=500), rng.uniform(size=80)
    risk = (rng.uniform(size=500) < s_cal).astype(float)
    cal, test = tmp_path / "cal.csv", tmp_path / "test.csv"
    pd.DataFrame({"risk": risk, "score": s_cal}).to_csv(cal, index=False)
    pd.DataFrame({"id": np.arange(80), "score": s_test}).to_csv(test, index=False)
    return cal, test, risk, s_cal, s_test


def test_selective_sdr_matches_array_layer(tables, tmp_path):
    cal, test, risk, s_cal, s_test = tables
    out = tmp_path / "out.csv"
    args = ["selective", "--calibration", str(cal), "--test", str(test), "--alpha", "0.3"]
    assert main(args + ["--output", str(out)]) == 0
    got = pd.read_csv(out)
    e = sdr_evalues(risk, s_cal, s_test, 0.3)
    # default boosting "homo", like SCoRESDR
    np.testing.assert_array_equal(got["deploy"], ebh(boost_evalues(e, "homo", random_state=0), 0.3))
    np.testing.assert_allclose(got["evalue"], e)
    assert list(got["id"]) == list(range(80))
    assert main(args + ["--boosting", "hete", "--output", str(out)]) == 0
    hete = ebh(boost_evalues(e, "hete", random_state=0), 0.3)
    np.testing.assert_array_equal(pd.read_csv(out)["deploy"], hete)


def test_selective_mdr_matches_array_layer(tables, tmp_path):
    cal, test, risk, s_cal, s_test = tables
    out = tmp_path / "out.csv"
    args = ["selective", "--calibration", str(cal), "--test", str(test), "--alpha", "0.3",
            "--target", "mdr", "--output", str(out)]
    assert main(args) == 0
    np.testing.assert_array_equal(pd.read_csv(out)["deploy"], mdr_decisions(risk, s_cal, s_test, 0.3))


def test_bad_input_gives_one_line_error(tables, capsys):
    cal, test, *_ = tables
    assert main(["selective", "--calibration", str(cal), "--test", str(test),
                 "--alpha", "1.5"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error:") and "alpha" in err[0]
    assert main(["selective", "--calibration", str(cal), "--test", str(test), "--alpha", "0.1",
                 "--risk-column", "loss"]) == 2
    assert "no column 'loss'" in capsys.readouterr().err
    assert main(["selective", "--calibration", "missing.csv", "--test", str(test),
                 "--alpha", "0.1"]) == 2


def test_module_entry_point_help():
    result = subprocess.run(
        [sys.executable, "-m", "sklearn_riskcontrol", "--help"], capture_output=True, text=True,
        check=False,
    )
    assert result.returncode == 0 and "demo" in result.stdout and "selective" in result.stdout


def test_demo_quick_runs(capsys):
    assert main(["demo", "--quick"]) == 0
    out = capsys.readouterr().out
    assert "SCoRE-MDR" in out and "deployed on" in out
    summary = out.split("Summary: what each number guarantees", 1)[1].split("\n\n")[0]
    kinds = [line.split()[0] for line in summary.splitlines()[1:]]
    # every method family reports its headline number with the guarantee it carries
    assert kinds == ["deployed", "deployed", "covered", "certified", "selected", "identified"]
    assert re.search(r"w\.p\. >= 0\.99\d+, every published set has coverage probability >= 0\.9",
                     out)
    assert "P(certified while error > 0.3) <= 0.1" in out
    assert "simultaneously over the 60 models" in out
