"""Bitwise equality of arrays: for caches keyed on inputs and for what parallel workers send
back, where equal values are not enough (0.0 and -0.0 compare equal, NaN never does)."""

import numpy as np

__all__ = ["same_bytes"]


def same_bytes(a, b):
    """Whether ``a`` and ``b`` are numeric arrays of the same dtype, shape and bytes (bitwise:
    NaN payloads and signed zeros count)."""
    if not (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)):
        return False
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
    return np.array_equal(a.reshape(-1).view(np.uint8), b.reshape(-1).view(np.uint8))
