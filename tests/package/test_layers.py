"""The layers hold (tools/check_layers.py), and the package imports in any order."""

import importlib.util
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("check_layers", REPO / "tools" / "check_layers.py")
check_layers = importlib.util.module_from_spec(spec)
spec.loader.exec_module(check_layers)

# one unit per layer, and the method that imports another method (each import costs ~1 s)
UNITS = ["evalues.ltt", "evaluation", "selective", "cli"]


def test_no_arrow_back_up_no_circle_no_reexport_module():
    violations, edges = check_layers.check()
    assert not violations, "\n".join(violations)
    assert ("selective", "autoeval") in edges  # the checker sees the package's real graph


def _fake_package(tmp_path, files):
    root = tmp_path / "sklearn_riskcontrol"
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def test_checker_finds_each_kind_of_violation(tmp_path, monkeypatch):
    root = _fake_package(tmp_path, {
        "__init__.py": "",
        "_validation.py": "",
        "evalues/__init__.py": "from ..selective import x\n",          # arrow back up
        "selective/__init__.py": "from ..autoeval._arrays import y\n",  # a method's internals
        "autoeval/__init__.py": "from ..selective import z\n",          # circle with selective
        "autoeval/_arrays.py": "y = 1\n",
        "online/shim.py": '"""Old home."""\nfrom ._impl import f\n__all__ = ["f"]\n',
        "online/__init__.py": "",
        "online/_impl.py": "def f():\n    pass\n",
    })
    monkeypatch.setattr(check_layers, "ROOT", root)
    text = "\n".join(check_layers.check()[0])
    assert "evalues (layer 0) imports sklearn_riskcontrol.selective (layer 2)" in text
    assert "imports private ['_arrays']" in text
    assert "circle between units: autoeval -> selective -> autoeval" in text
    assert "online/shim.py: only re-exports" in text


def test_package_imports_starting_from_any_unit():
    # one fresh interpreter per unit (run side by side): the package's first import goes
    # through that unit, as in a user's script that imports only it
    procs = {unit: subprocess.Popen([sys.executable, "-c", f"import sklearn_riskcontrol.{unit}"],
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                    cwd=REPO)
             for unit in UNITS}
    failed = {unit: p.communicate()[1] for unit, p in procs.items()}
    failed = {unit: err for unit, err in failed.items() if procs[unit].returncode}
    assert not failed, failed
