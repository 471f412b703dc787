"""Release hygiene (issue 26): one version, typed package, stated supported versions.

- The version is written once, in ``sklearn_riskcontrol/__init__.py``; the installed metadata
  (setup.cfg reads it with ``attr:``) must carry the same one.
- The package is typed (PEP 561): ``py.typed`` is package data, and every public function,
  class and method listed in ``doc/api.rst`` has annotated parameters and return type.
- The supported versions stated in the README (Python and the SPEC 0 minimum dependencies) are
  the ones setup.cfg declares and .ci/run tests.
- ``tools/check_dist.py`` (run by .ci/run on the built files) rejects what must not ship.
"""

import configparser
import importlib
import importlib.metadata
import importlib.util
import inspect
import json
import re
import tarfile
import zipfile
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest

import sklearn_riskcontrol

ROOT = Path(__file__).resolve().parents[2]
DIST_NAME = "sklearn-riskcontrol"


def _setup_cfg():
    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "setup.cfg")
    return cfg


def _installed_from_this_tree():
    """The installed distribution if it was installed from this checkout, else None.

    An install (editable or not) records where it came from in ``direct_url.json``; a wheel
    installed by hand has no such record, so there the imported package must be the one the
    distribution installed.
    """
    try:
        dist = importlib.metadata.distribution(DIST_NAME)
    except importlib.metadata.PackageNotFoundError:
        return None
    direct = dist.read_text("direct_url.json")
    if direct:
        url = urlparse(json.loads(direct).get("url", ""))
        if url.scheme == "file" and Path(unquote(url.path)).resolve() == ROOT:
            return dist
    imported = Path(sklearn_riskcontrol.__file__).resolve()
    for file in dist.files or ():
        if str(file) == "sklearn_riskcontrol/__init__.py":
            if Path(dist.locate_file(file)).resolve() == imported:
                return dist
    return None


def test_installed_metadata_carries_the_package_version():
    dist = _installed_from_this_tree()
    if dist is None:
        pytest.skip(f"{DIST_NAME} is not installed from this checkout (pip install -e .)")
    assert importlib.metadata.version(DIST_NAME) == sklearn_riskcontrol.__version__, (
        "the installed metadata is stale: reinstall (python -m pip install -e .)"
    )


def test_version_is_written_once_and_read_by_the_build():
    assert _setup_cfg()["metadata"]["version"].strip() == "attr: sklearn_riskcontrol.__version__"
    assert re.fullmatch(r"\d+\.\d+\.\d+((a|b|rc)\d+|\.dev\d+)?", sklearn_riskcontrol.__version__)
    # Nothing else writes it down: the docs import it, the tests compare with it.
    written = re.compile(r"""(version|release)\s*=\s*["']\d+\.\d+""")
    for path in [ROOT / "doc" / "conf.py", ROOT / "pyproject.toml", ROOT / "setup.cfg"]:
        assert not written.search(path.read_text()), f"{path.name} writes a version"


def test_package_is_typed():
    assert (ROOT / "sklearn_riskcontrol" / "py.typed").is_file()
    package_data = _setup_cfg()["options.package_data"]["sklearn_riskcontrol"]
    assert "py.typed" in [p.strip() for p in package_data.split(",")]


def _api_names():
    """``(module, name)`` of every entry of doc/api.rst's autosummary tables."""
    module, names = None, []
    for line in (ROOT / "doc" / "api.rst").read_text().splitlines():
        found = re.match(r"\.\. currentmodule:: (\S+)", line)
        if found:
            module = found.group(1)
        elif module and re.fullmatch(r"   [A-Za-z_]\w*", line):
            names.append((module, line.strip()))
    return names


def _public_callables(obj, name):
    """``(label, function)`` of a documented function, or of a class's ``__init__`` and public
    methods and properties (its own and those of the package's base classes)."""
    if not inspect.isclass(obj):
        return [(name, obj)] if inspect.isfunction(obj) else []
    found = []
    for klass in obj.__mro__:
        if not klass.__module__.startswith("sklearn_riskcontrol"):
            continue
        for attr, value in vars(klass).items():
            if attr.startswith("_") and attr not in ("__init__", "__call__"):
                continue
            func = value.fget if isinstance(value, property) else getattr(value, "__func__", value)
            if inspect.isfunction(func) and func.__module__.startswith("sklearn_riskcontrol"):
                found.append((f"{name}.{attr}", func))
    return found


def test_public_api_is_annotated():
    missing = []
    for module, name in _api_names():
        obj = getattr(importlib.import_module(module), name)
        for label, func in _public_callables(obj, name):
            signature = inspect.signature(func)
            bare = [p.name for p in signature.parameters.values()
                    if p.name not in ("self", "cls") and p.annotation is inspect.Parameter.empty]
            if signature.return_annotation is inspect.Signature.empty:
                bare.append("return")
            if bare:
                missing.append(f"{module}.{label}: {', '.join(bare)}")
    assert not missing, "unannotated public signatures:\n" + "\n".join(missing)


def _minimum_versions():
    """{name: lower bound} from setup.cfg's install_requires."""
    lines = _setup_cfg()["options"]["install_requires"].split()
    return dict(line.split(">=") for line in lines)


def test_readme_states_the_minimum_versions_setup_cfg_declares():
    text = (ROOT / "README.md").read_text()
    section = text.split("### Supported versions", 1)[1].split("\n## ", 1)[0]
    header, _, values = re.findall(r"^\|(.+)\|$", section, re.M)[:3]
    stated = dict(zip([c.strip() for c in header.split("|")], [c.strip() for c in values.split("|")]))
    assert stated == _minimum_versions()


def test_supported_pythons_agree_between_setup_cfg_readme_and_ci():
    cfg = _setup_cfg()
    classifiers = re.findall(r"Python :: (3\.\d+)$", cfg["metadata"]["classifiers"], re.M)
    oldest, newest = classifiers[0], classifiers[-1]
    assert cfg["options"]["python_requires"].strip() == f">={oldest}"
    readme = (ROOT / "README.md").read_text()
    assert f"CPython {oldest} to {newest}" in readme
    ci = (ROOT / ".ci" / "run").read_text()
    assert f"python_for {oldest})" in ci and f"python_for {newest})" in ci


def _check_dist_module():
    spec = importlib.util.spec_from_file_location("check_dist", ROOT / "tools" / "check_dist.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _fake_dist(tmp_path, version, extra_wheel=(), drop=()):
    """A wheel and an sdist holding the required files, plus ``extra_wheel``, minus ``drop``."""
    check_dist = _check_dist_module()
    wheel = tmp_path / f"sklearn_riskcontrol-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        for name in [*check_dist.REQUIRED_IN_WHEEL, *extra_wheel]:
            if name not in drop:
                zf.writestr(name, "")
        zf.writestr(f"sklearn_riskcontrol-{version}.dist-info/METADATA", "")
        if "LICENSE" not in drop:
            zf.writestr(f"sklearn_riskcontrol-{version}.dist-info/LICENSE", "")
    src = tmp_path / "src" / f"sklearn_riskcontrol-{version}" / "sklearn_riskcontrol"
    src.mkdir(parents=True)
    (src / "py.typed").write_text("")
    if "LICENSE" not in drop:
        (src.parent / "LICENSE").write_text("")
    with tarfile.open(tmp_path / f"sklearn_riskcontrol-{version}.tar.gz", "w:gz") as tar:
        tar.add(src.parent, arcname=src.parent.name)
    return check_dist


def test_check_dist_accepts_a_clean_build(tmp_path):
    check_dist = _fake_dist(tmp_path, sklearn_riskcontrol.__version__)
    assert check_dist.check(tmp_path) == []


@pytest.mark.parametrize(
    "extra, drop, version, message",
    [
        (["sklearn_riskcontrol/data/quantization_triviaqa/losses.csv"], (), None, "never ship"),
        (["shared/data/x.csv"], (), None, "outside the package"),
        (["tests/test_x.py"], (), None, "must not ship"),
        ([], ["sklearn_riskcontrol/py.typed"], None, "missing sklearn_riskcontrol/py.typed"),
        ([], (), "0.0.1", "not version"),
        ([], ["LICENSE"], None, "missing the LICENSE file"),
        ([], ["LICENSE"], None, "missing LICENSE"),
    ],
)
def test_check_dist_rejects_what_must_not_ship(tmp_path, extra, drop, version, message):
    version = version or sklearn_riskcontrol.__version__
    check_dist = _fake_dist(tmp_path, version, extra_wheel=extra, drop=drop)
    problems = check_dist.check(tmp_path)
    assert any(message in p for p in problems), problems
