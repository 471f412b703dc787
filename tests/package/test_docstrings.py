"""Every public function and class has a numpydoc docstring with a runnable Examples section.

(The examples themselves run as doctests in the default suite: ``--doctest-modules``.)
"""

import importlib
import inspect

import pytest

from _api import documented_names


def _public_objects():
    """Every class and function of the API reference."""
    seen = {}
    for module, attr in documented_names():
        obj = getattr(importlib.import_module(module), attr)
        if inspect.isclass(obj) or inspect.isfunction(obj):
            seen.setdefault(f"{module}.{attr}", obj)
    return sorted(seen.items())


# Result and status containers and warnings are documented by their fields, not by an example.
_NO_EXAMPLE_NEEDED = ("Result", "Interval", "EProcess", "Warning", "Setting", "Status")


@pytest.mark.parametrize("name, obj", _public_objects(), ids=lambda x: x if isinstance(x, str) else "")
def test_public_object_has_docstring_with_examples(name, obj):
    doc = inspect.getdoc(obj) or ""
    assert len(doc) > 80, f"{name} has no real docstring"
    if not name.endswith(_NO_EXAMPLE_NEEDED):
        assert "Examples\n--------" in doc and ">>>" in doc, f"{name} has no runnable Examples section"
