"""The package builds as sdist + wheel, ships its bundled data, and runs from a fresh venv."""

import os
import site
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
pytest.importorskip("build", reason="the `build` package (test extra) is needed")


def _run(args, **kwargs):
    """Run ``args``; on a non-zero exit fail with the tail of the child's own output."""
    proc = subprocess.run(args, capture_output=True, text=True, **kwargs)
    if proc.returncode != 0:
        tail = "\n".join((proc.stdout + proc.stderr).splitlines()[-30:])
        pytest.fail(f"{' '.join(map(str, args))} exited {proc.returncode}:\n{tail}", pytrace=False)
    return proc


def _current_site_dirs():
    """Site directories of the running interpreter (the active venv's when there is one)."""
    dirs = list(site.getsitepackages())
    if site.ENABLE_USER_SITE:
        dirs.append(site.getusersitepackages())
    return [d for d in dirs if os.path.isdir(d)]


@pytest.fixture(scope="module")
def dist(tmp_path_factory):
    out = tmp_path_factory.mktemp("dist")
    _run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(ROOT)])
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
    # No pip of its own (ensurepip took ~5 s): the running pip (>= 22.3) installs into it.
    venv.create(env, with_pip=False)
    python = env / "bin" / "python"
    clean_env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    # The (large) dependencies come from the running interpreter's site-packages, which is the
    # active venv's inside a venv (system_site_packages=True would give the *base* interpreter's).
    # A .pth file of plain paths appends them after the child's own site-packages and does not
    # run their .pth files, so an editable install of this package there stays inactive.
    child_site = _run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                      env=clean_env).stdout.strip()
    (Path(child_site) / "_parent_site.pth").write_text("\n".join(_current_site_dirs()) + "\n")

    wheel = next(dist.glob("*.whl"))
    _run([sys.executable, "-m", "pip", "--python", python, "install", "--no-index", "--no-deps",
          "-q", str(wheel)], env=clean_env)
    # Run from a directory without the source tree: the package must be the wheel's copy.
    where = _run([python, "-c", "import sklearn_riskcontrol; print(sklearn_riskcontrol.__file__)"],
                 cwd=tmp_path, env=clean_env).stdout
    assert Path(where.strip()).is_relative_to(Path(child_site)), where
    demo = _run([python, "-m", "sklearn_riskcontrol", "demo", "--quick"],
                cwd=tmp_path, env=clean_env)
    assert "SCoRE-MDR" in demo.stdout
