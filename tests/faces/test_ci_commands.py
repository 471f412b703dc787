"""The README's two set-up commands are exactly what CI runs."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _readme_commands():
    text = (ROOT / "README.md").read_text()
    section = text.split("## Set-up (exactly two commands)", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```bash\n(.+?)\n```", section)


def test_readme_has_exactly_two_setup_commands():
    assert len(_readme_commands()) == 2


def test_ci_runs_the_readme_commands_verbatim():
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    for command in _readme_commands():
        assert command in ci, f"{command!r} is not a line of .ci/run"


def test_ci_runs_the_readme_commands_in_a_fresh_venv():
    # Users run the README inside a virtual environment; outside one, a test that leaks the base
    # interpreter's packages (issue 12) stays green.
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    create = [i for i, line in enumerate(ci) if re.search(r"python3? -m venv \S+", line)]
    sourced = re.compile(r"(^|&&)\s*(\.|source) \S*/bin/activate")
    activate = [i for i, line in enumerate(ci) if sourced.search(line)]
    assert create and activate, (
        ".ci/run must create (python -m venv) and activate (. DIR/bin/activate) a venv"
    )
    first_command = min(ci.index(command) for command in _readme_commands())
    assert create[0] <= activate[0] < first_command, (
        ".ci/run must create and activate a venv before the README set-up commands"
    )
    assert "mktemp -d" in ci[create[0]], "the venv must be fresh (created in a new temp directory)"


def test_ci_builds_the_docs_with_the_readme_command():
    text = (ROOT / "README.md").read_text()
    docs_command = re.search(r"Documentation \(builds offline\): `(.+?)`", text).group(1)
    assert docs_command in (ROOT / ".ci" / "run").read_text().splitlines()


def test_readme_quickstart_runs(capsys):
    text = (ROOT / "README.md").read_text()
    code = re.search(r"## Quickstart\n\n```python\n(.+?)```", text, re.S).group(1)
    exec(compile(code, "README quickstart", "exec"), {})
    assert "deployed on" in capsys.readouterr().out


def test_ci_lists_the_slowest_tests():
    # Issue 23: CI's report names the slowest tests, so a default run creeping past its stated
    # time (README) shows where. The README command stays verbatim: the option comes from
    # PYTEST_ADDOPTS, set before it.
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    setting = [i for i, line in enumerate(ci)
               if re.match(r'export PYTEST_ADDOPTS="[^"]*--durations=\d+', line)]
    test_command = next(i for i, line in enumerate(ci) if line.endswith("python -m pytest"))
    assert setting and setting[0] < test_command


def test_ci_runs_every_benchmark_quick_mode():
    # Issue 24: a claim whose script does not run is a claim nobody can check. CI runs the
    # runner, with the peers installed, and every script the runner finds has a quick mode.
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    install = 'python -m pip install -e ".[compare]"'
    assert ci.index("python benchmarks/run_quick.py") > ci.index(install)
    # the runner's rule (its docstring): every benchmarks/*.py except itself and the helper
    # modules (_*.py) is a benchmark, and fails without an add_argument("--quick", ...)
    runner = ROOT / "benchmarks" / "run_quick.py"
    assert "except this runner and the helper modules (``_*.py``)" in runner.read_text()
    scripts = sorted(p for p in runner.parent.glob("*.py")
                     if not p.name.startswith("_") and p != runner)
    assert len(scripts) >= 26
    quick_flag = re.compile(r"""add_argument\(\s*["']--quick["']""")
    for path in scripts:
        assert quick_flag.search(path.read_text()), f"{path.name} has no --quick mode"
