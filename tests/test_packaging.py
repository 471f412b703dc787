"""The package builds as sdist + wheel, ships its bundled data, and runs from a fresh venv."""

import os
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytest.importorskip("build", reason="the `build` package (test extra) is needed")


@pytest.fixture(scope="module")
def dist(tmp_path_factory):
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(ROOT)],
        check=True,
        capture_output=True,
    )
    return out


def test_wheel_ships_bundled_data_with_attribution_and_no_unlicensed_data(dist):
    wheel = next(dist.glob("*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    data = "sklearn_riskcontrol/datasets/data/"
    for required in ("diamonds.csv.gz", "letter.csv.gz", "ATTRIBUTION.md"):
        assert data + required in names
    assert not any("triviaqa" in n or "quantization" in n for n in names)
    assert next(dist.glob("*.tar.gz"))


def test_wheel_installs_into_fresh_venv_and_runs_the_demo(dist, tmp_path):
    env = tmp_path / "env"
    # System site-packages provide the (large) dependencies; the package itself comes only from
    # the wheel, and the demo runs from a directory without the source tree.
    venv.create(env, system_site_packages=True, with_pip=True)
    python = env / "bin" / "python"
    clean_env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    wheel = next(dist.glob("*.whl"))
    subprocess.run(
        [python, "-m", "pip", "install", "--no-deps", "--force-reinstall", "-q", str(wheel)],
        check=True,
        capture_output=True,
        env=clean_env,
    )
    result = subprocess.run(
        [python, "-c", "import sklearn_riskcontrol, sys; print(sklearn_riskcontrol.__file__)"],
        check=True, capture_output=True, text=True, cwd=tmp_path, env=clean_env,
    )
    assert str(env) in result.stdout
    demo = subprocess.run(
        [python, "-m", "sklearn_riskcontrol", "demo", "--quick"],
        check=True, capture_output=True, text=True, cwd=tmp_path, env=clean_env,
    )
    assert "SCoRE-MDR" in demo.stdout
