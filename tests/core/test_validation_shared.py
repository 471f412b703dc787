"""Shared validation helpers: user-facing stack levels, random states, value display, labels."""

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import make_classification
from sklearn.linear_model import LogisticRegression

from sklearn_riskcontrol.selective import ConcentrationSDR
from sklearn_riskcontrol import RiskControlWarning
from sklearn_riskcontrol._validation import (
    check_labels,
    check_level,
    check_random_state,
    show,
    warn,
)


def test_warning_points_at_the_users_line_through_fit_context():
    # Nothing can be certified with 20 calibration points: the warning is raised deep inside the
    # array layer, under scikit-learn's _fit_context, and must still name the user's line.
    X, y = make_classification(n_samples=60, random_state=0)
    model = LogisticRegression().fit(X[:40], y[:40])
    with pytest.warns(RiskControlWarning) as record:
        ConcentrationSDR(model, alpha=0.01).fit(X[40:], y[40:])  # the warning names this line
    assert record[0].filename == __file__
    line = open(__file__).read().splitlines()[record[0].lineno - 1]
    assert "ConcentrationSDR(model, alpha=0.01).fit" in line


def test_warning_category_can_be_overridden():
    with pytest.warns(UserWarning) as record:
        warn("plain", category=UserWarning)
    assert record[0].category is UserWarning
    assert record[0].filename == __file__


@pytest.mark.parametrize(
    "seed", [None, 0, 2**32 - 1, np.random.RandomState(0), np.random.default_rng(0)]
)
def test_check_random_state_accepts_every_common_form(seed):
    assert isinstance(check_random_state(seed), np.random.RandomState)


def test_generator_is_reproducible_and_advances():
    a = check_random_state(np.random.default_rng(3)).uniform(size=4)
    b = check_random_state(np.random.default_rng(3)).uniform(size=4)
    np.testing.assert_array_equal(a, b)
    gen = np.random.default_rng(3)
    first, second = check_random_state(gen).uniform(), check_random_state(gen).uniform()
    assert first != second


def test_check_random_state_rejects_other_values_with_the_accepted_forms():
    with pytest.raises(ValueError, match="None, an int, a numpy.random.RandomState or a numpy"):
        check_random_state("seed")


def test_messages_show_numpy_scalars_as_python_values():
    assert show(np.float64(0.5)) == "0.5"
    assert show(np.int64(3)) == "3"
    with pytest.raises(ValueError) as err:
        check_level(np.float64(2.0), "alpha")
    assert "np.float64" not in str(err.value) and "got 2.0" in str(err.value)


@pytest.mark.parametrize("missing", [None, pd.NA, np.nan, float("nan")])
def test_missing_object_labels_are_rejected_like_nan(missing):
    with pytest.raises(ValueError, match=r"missing label \(None/NaN\) at entry 1"):
        check_labels(np.array(["a", missing, "b"], dtype=object))
    with pytest.raises(ValueError, match="entry 1"):
        check_labels(np.array([0.0, np.nan]))


def test_object_labels_without_missing_values_pass_unchanged():
    y = np.array(["a", "b", 3], dtype=object)
    assert check_labels(y) is not None
    np.testing.assert_array_equal(check_labels(y), y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_labels(pd.Series(["x", "y"]).to_numpy())


@pytest.mark.parametrize("classes, y", [
    (np.array([0, 1, 2]), np.array([2, 0, 5, 1, -1])),  # sorted, as scikit-learn's classes_
    (np.array([3, 1, 2]), np.array([1, 3, 4, 2, 3])),  # any order
    (np.array(["b", "a", "c"]), np.array(["a", "c", "z", "b"])),
    (np.array([0, 1]), np.array(["0", "x"], dtype=object)),  # labels that do not compare
])
def test_class_index_agrees_with_a_lookup(classes, y):
    from sklearn_riskcontrol._labels import class_index

    idx, known = class_index(classes, y)
    lookup = {c: k for k, c in enumerate(classes.tolist())}
    np.testing.assert_array_equal(known, [v in lookup for v in y.tolist()])
    np.testing.assert_array_equal(idx[known], [lookup[v] for v in y[known].tolist()])
    assert np.all((0 <= idx) & (idx < classes.size))
