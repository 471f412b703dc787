"""Type aliases of the public signatures (the package ships ``py.typed``).

Only annotations use them. Array inputs are ``numpy.typing.ArrayLike`` (lists, arrays, pandas
objects); results are ``NDArray`` of a stated dtype.
"""

from __future__ import annotations

from typing import Any, Union

import numpy as np
from numpy.typing import NDArray

__all__ = ["BoolArray", "Estimator", "FloatArray", "IntArray", "RandomStateLike"]

#: ``random_state`` as scikit-learn takes it, plus a NumPy ``Generator``.
RandomStateLike = Union[int, np.random.RandomState, np.random.Generator, None]
FloatArray = NDArray[np.float64]
BoolArray = NDArray[np.bool_]
IntArray = NDArray[np.intp]
#: A scikit-learn estimator (duck-typed: ``fit``/``predict``...; scikit-learn ships no types).
Estimator = Any
