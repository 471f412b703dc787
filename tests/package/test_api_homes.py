"""One home per public name: the API reference (``doc/api.rst``) lists every public name once,
under the one module it imports from, and no other public module offers it.

A public module is one whose path has no component starting with ``_``; its public names are its
``__all__``. The command line and the demo (``cli``, ``demo``) are programs, not Python API, and
are left out.
"""

import importlib
import pkgutil
from collections import Counter

import pytest
from _api import documented_names

import sklearn_riskcontrol

NOT_API = ("sklearn_riskcontrol.cli", "sklearn_riskcontrol.demo")
DOCUMENTED = documented_names()


def _public_modules():
    names = ["sklearn_riskcontrol"]
    for info in pkgutil.walk_packages(sklearn_riskcontrol.__path__, "sklearn_riskcontrol."):
        parts = info.name.split(".")
        if any(p.startswith("_") for p in parts) or info.name.startswith(NOT_API):
            continue
        names.append(info.name)
    return names


PUBLIC_MODULES = _public_modules()


def test_the_reference_lists_every_name_once():
    twice = [name for name, k in Counter(name for _, name in DOCUMENTED).items() if k > 1]
    assert len(DOCUMENTED) > 100 and not twice, twice


@pytest.mark.parametrize("module, name", DOCUMENTED, ids=lambda x: x)
def test_documented_name_imports_from_its_home(module, name):
    mod = importlib.import_module(module)
    assert hasattr(mod, name), f"{module}.{name} is documented but does not import"
    assert name in mod.__all__, f"{name} is documented at {module} but not in its __all__"


@pytest.mark.parametrize("module", PUBLIC_MODULES)
def test_public_module_offers_only_documented_names(module):
    mod = importlib.import_module(module)
    assert hasattr(mod, "__all__"), f"{module} has no __all__: its public names are unclear"
    documented_here = {name for home, name in DOCUMENTED if home == module}
    extra = set(mod.__all__) - documented_here - {"__version__"}
    assert not extra, f"{module} offers undocumented names {sorted(extra)}: add them to " \
                      "doc/api.rst under this module, or drop them from __all__"


def test_no_object_has_two_public_paths():
    homes = {}
    for module in PUBLIC_MODULES:
        mod = importlib.import_module(module)
        for name in mod.__all__:
            obj = getattr(mod, name)
            if isinstance(obj, (type, type(test_no_object_has_two_public_paths))):
                homes.setdefault(id(obj), []).append(f"{module}.{name}")
    twice = [paths for paths in homes.values() if len(paths) > 1]
    assert not twice, twice
