"""Docstrings assembled from shared parts (the package's one mechanism for it)."""

import re

__all__ = ["fill_doc"]

_PLACEHOLDER = re.compile(r"\{(\w+)\}")


def fill_doc(**parts):
    """Decorator replacing each ``{name}`` in a class's or function's docstring by ``parts[name]``.

    Only the given names are replaced, in one pass (the inserted text is not scanned again), so
    other braces, such as the value sets ``{"a", "b"}`` of numpydoc types, need no escaping.

    Parameters
    ----------
    **parts : str
        The text of each placeholder; each must occur in the docstring.

    Returns
    -------
    callable
        The decorator; it sets ``__doc__`` and returns the object.

    Examples
    --------
    >>> from sklearn_riskcontrol._docstrings import fill_doc
    >>> @fill_doc(unit="seconds")
    ... def wait(t):
    ...     '''Wait ``t`` {unit}; ``t`` in {"float", "int"}.'''
    >>> wait.__doc__
    'Wait ``t`` seconds; ``t`` in {"float", "int"}.'
    """

    def decorate(obj):
        doc = obj.__doc__
        missing = [name for name in parts if "{" + name + "}" not in doc]
        if missing:  # a renamed placeholder would otherwise leave a part out silently
            raise ValueError(f"The docstring of {obj.__qualname__} has no {missing} placeholder.")
        obj.__doc__ = _PLACEHOLDER.sub(lambda m: parts.get(m[1], m[0]), doc)
        return obj

    return decorate
