"""The README's two set-up commands are exactly what CI runs."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


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


def test_ci_builds_the_docs_with_the_readme_command():
    text = (ROOT / "README.md").read_text()
    docs_command = re.search(r"Documentation \(builds offline\): `(.+?)`", text).group(1)
    assert docs_command in (ROOT / ".ci" / "run").read_text().splitlines()


def test_readme_quickstart_runs(capsys):
    text = (ROOT / "README.md").read_text()
    code = re.search(r"## Quickstart\n\n```python\n(.+?)```", text, re.S).group(1)
    exec(compile(code, "README quickstart", "exec"), {})
    assert "deployed on" in capsys.readouterr().out
