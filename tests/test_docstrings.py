"""Every public function and class has a numpydoc docstring with a runnable Examples section.

(The examples themselves run as doctests in the default suite: ``--doctest-modules``.)
"""

import importlib
import inspect

import pytest

MODULES = [
    "sklearn_riskcontrol",
    "sklearn_riskcontrol.evalues",
    "sklearn_riskcontrol.metrics",
    "sklearn_riskcontrol.risks",
    "sklearn_riskcontrol.datasets",
    "sklearn_riskcontrol.online",
    "sklearn_riskcontrol.autoeval",
    "sklearn_riskcontrol.plotting",
    "sklearn_riskcontrol.bandits",
    "sklearn_riskcontrol.bandits.lowrank",
    "sklearn_riskcontrol.bandits.oracles",
    "sklearn_riskcontrol.bandits.store",
    "sklearn_riskcontrol.tables",
    "sklearn_riskcontrol.evalues.ltt",
]


def _public_objects():
    seen = {}
    for name in MODULES:
        module = importlib.import_module(name)
        for attr in getattr(module, "__all__", []):
            obj = getattr(module, attr)
            if (inspect.isclass(obj) or inspect.isfunction(obj)) and obj.__module__.startswith(
                "sklearn_riskcontrol"
            ):
                seen.setdefault(f"{obj.__module__}.{obj.__qualname__}", obj)
    return sorted(seen.items())


# Result containers and warnings are documented by their fields, not by an example.
_NO_EXAMPLE_NEEDED = ("Result", "Interval", "EProcess", "Warning", "Setting")


@pytest.mark.parametrize("name, obj", _public_objects(), ids=lambda x: x if isinstance(x, str) else "")
def test_public_object_has_docstring_with_examples(name, obj):
    doc = inspect.getdoc(obj) or ""
    assert len(doc) > 80, f"{name} has no real docstring"
    if not name.endswith(_NO_EXAMPLE_NEEDED):
        assert "Examples\n--------" in doc and ">>>" in doc, f"{name} has no runnable Examples section"
