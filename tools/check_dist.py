"""Check what the built sdist and wheel ship (run by .ci/run after ``python -m build``).

Usage: ``python tools/check_dist.py DIST_DIR`` where DIST_DIR holds exactly one ``*.whl`` and one
``*.tar.gz``. Exits 1 with one line per problem:

- both files carry the version written in ``sklearn_riskcontrol/__init__.py`` (the one place it
  lives);
- the wheel holds the package only: ``sklearn_riskcontrol/`` and its ``.dist-info``, with the
  ``py.typed`` marker (PEP 561), the bundled data sets with their attribution and the JSON
  Schema of the command line's ``--json`` output;
- both carry the licence (``LICENSE``, BSD-3-Clause as the metadata says);
- neither file holds what must never ship: the team's shared folder, the quantization/TriviaQA
  tables (not ours to redistribute), built docs, caches, or anything of tests/, benchmarks/,
  examples/, doc/, tools/ or .ci/ (MANIFEST.in prunes the tests from the sdist).
"""

import ast
import re
import sys
import tarfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "sklearn_riskcontrol"
REQUIRED_IN_WHEEL = (
    f"{PACKAGE}/__init__.py",
    f"{PACKAGE}/py.typed",
    f"{PACKAGE}/datasets/data/diamonds.csv.gz",
    f"{PACKAGE}/datasets/data/letter.csv.gz",
    f"{PACKAGE}/datasets/data/ATTRIBUTION.md",
    f"{PACKAGE}/cli/schema/v1.json",
)
# Anywhere in either file: data we may not redistribute, the team's folder, build leftovers.
NEVER = re.compile(
    r"triviaqa|(^|/)shared/|(^|/)_build/|__pycache__|\.pyc$|(^|/)\.hypothesis/"
    r"|(^|/)\.git/",
    re.IGNORECASE,
)
# Top-level folders of the repository that stay out of both files.
NOT_SHIPPED = ("tests/", "benchmarks/", "examples/", "doc/", "tools/", ".ci/")


def source_version():
    """``__version__`` as written in the package's ``__init__.py`` (read, not imported)."""
    tree = ast.parse((ROOT / PACKAGE / "__init__.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__version__" for t in node.targets
        ):
            return ast.literal_eval(node.value)
    raise SystemExit(f"no __version__ in {PACKAGE}/__init__.py")


def check(dist_dir):
    dist_dir = Path(dist_dir)
    wheels = list(dist_dir.glob("*.whl"))
    sdists = list(dist_dir.glob("*.tar.gz"))
    if len(wheels) != 1 or len(sdists) != 1:
        return [f"expected one wheel and one sdist in {dist_dir}, found {wheels + sdists}"]
    wheel, sdist = wheels[0], sdists[0]
    version = source_version()
    problems = []

    for path in (wheel, sdist):
        if f"-{version}" not in path.name:
            problems.append(f"{path.name}: not version {version} (sklearn_riskcontrol/__init__.py)")

    wheel_names = zipfile.ZipFile(wheel).namelist()
    for name in REQUIRED_IN_WHEEL:
        if name not in wheel_names:
            problems.append(f"{wheel.name}: missing {name}")
    if not any(n.endswith(".dist-info/LICENSE") or "/licenses/LICENSE" in n for n in wheel_names):
        problems.append(f"{wheel.name}: missing the LICENSE file in its .dist-info")
    for name in wheel_names:
        top = name.split("/", 1)[0]
        if top != PACKAGE and not top.endswith(".dist-info"):
            problems.append(f"{wheel.name}: {name} is outside the package")
        if name.startswith(NOT_SHIPPED):
            problems.append(f"{wheel.name}: {name} must not ship in the wheel")
        if NEVER.search(name):
            problems.append(f"{wheel.name}: {name} must never ship")

    with tarfile.open(sdist) as tar:
        sdist_names = [m.name.split("/", 1)[1] for m in tar.getmembers() if "/" in m.name]
    if "LICENSE" not in sdist_names:
        problems.append(f"{sdist.name}: missing LICENSE")
    if f"{PACKAGE}/py.typed" not in sdist_names:
        problems.append(f"{sdist.name}: missing {PACKAGE}/py.typed")
    for name in sdist_names:
        if name.startswith(NOT_SHIPPED):
            problems.append(f"{sdist.name}: {name} must not ship in the sdist")
        if NEVER.search(name):
            problems.append(f"{sdist.name}: {name} must never ship")
    if not problems:
        print(f"{wheel.name}: {len(wheel_names)} files, {sdist.name}: {len(sdist_names)} files: OK")
    return problems


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    found = check(sys.argv[1])
    for line in found:
        print(line, file=sys.stderr)
    sys.exit(1 if found else 0)
