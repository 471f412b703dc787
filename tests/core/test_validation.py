"""Shared input checks (``_validation.py``): accepted values and messages; user-facing stack
levels, random states, value display, labels."""

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import make_classification
from sklearn.linear_model import LogisticRegression

from sklearn_riskcontrol import RiskControlWarning
from sklearn_riskcontrol._validation import (
    _as_1d_float,
    as_float_array,
    check_binary,
    check_index,
    check_indices,
    check_labels,
    check_level,
    check_nonempty,
    check_random_state,
    check_returned_scores,
    check_risks,
    check_same_length,
    check_score_matrix,
    check_scores,
    check_weights,
    show,
    warn,
)
from sklearn_riskcontrol.selective import ConcentrationSDR

# NumPy >= 2 prints scalars as np.float64(...) in the messages (reported to the lead); the
# patterns below accept both spellings.
NUM = r"(np\.float64\()?"


# ----------------------------------------------------------------------------------------------
# check_level
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("value", [0.1, 0.5, 1e-9, 1 - 1e-9, np.float64(0.3), np.float32(0.25)])
def test_check_level_accepts(value):
    out = check_level(value, "alpha")
    assert type(out) is float and out == float(value)


@pytest.mark.parametrize("value", [0, 1, 0.0, 1.0, -0.5, 2, np.nan, np.inf, -np.inf])
def test_check_level_rejects_out_of_range(value):
    with pytest.raises(ValueError, match=r"`delta` must lie in the open interval \(0, 1\); got"):
        check_level(value, "delta")


@pytest.mark.parametrize("value", [True, False, "0.1", None, [0.1], np.array([0.1]), 1j])
def test_check_level_rejects_non_real(value):
    with pytest.raises(TypeError, match=r"`alpha` must be a real number in \(0, 1\); got"):
        check_level(value, "alpha")


def test_check_level_custom_bounds():
    assert check_level(5, "gamma", low=0, high=10) == 5.0
    with pytest.raises(ValueError, match=r"`gamma` must lie in the open interval \(0, 10\)"):
        check_level(10, "gamma", low=0, high=10)


# ----------------------------------------------------------------------------------------------
# 1-d conversion
# ----------------------------------------------------------------------------------------------


def test_as_1d_float_shapes():
    assert _as_1d_float(3, "x").tolist() == [3.0]
    assert _as_1d_float([1, 2], "x").dtype == float
    np.testing.assert_array_equal(_as_1d_float([[1], [2], [3]], "x"), [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(_as_1d_float([[1, 2, 3]], "x"), [1.0, 2.0, 3.0])
    assert _as_1d_float([], "x").shape == (0,)
    assert _as_1d_float([True, False], "x").tolist() == [1.0, 0.0]
    with pytest.raises(ValueError, match=r"`x` must be 1-d; got an array of shape \(2, 2\)"):
        _as_1d_float([[1, 2], [3, 4]], "x")
    with pytest.raises(ValueError, match=r"`x` must be 1-d; got an array of shape \(1, 1, 2\)"):
        _as_1d_float([[[1, 2]]], "x")


@pytest.mark.parametrize("value", ["abc", b"abc", ["a", "b"], [1, "x"], [{"a": 1}]])
def test_as_1d_float_rejects_non_numbers(value):
    with pytest.raises(TypeError, match=r"`x` must be a 1-d array of numbers"):
        _as_1d_float(value, "x")


def test_pandas_input():
    pd = pytest.importorskip("pandas")
    np.testing.assert_array_equal(check_scores(pd.Series([1.0, 2.0]), "s"), [1.0, 2.0])
    np.testing.assert_array_equal(check_risks(pd.DataFrame({"a": [0.0, 1.0]}), "r"), [0.0, 1.0])


# ----------------------------------------------------------------------------------------------
# check_scores / check_risks / check_weights
# ----------------------------------------------------------------------------------------------


def test_check_scores():
    np.testing.assert_array_equal(check_scores([-1e300, 0, 5], "s"), [-1e300, 0.0, 5.0])
    with pytest.raises(ValueError, match=rf"`s` must be finite; entry 2 is {NUM}nan\)? "
                                         r"\(2 non-finite value\(s\) in total\)"):
        check_scores([0.0, 1.0, np.nan, np.inf], "s")
    with pytest.raises(ValueError, match=rf"entry 0 is {NUM}-inf"):
        check_scores([-np.inf], "s")


def test_check_risks():
    np.testing.assert_array_equal(check_risks([0, 0.5, 1], "r"), [0.0, 0.5, 1.0])
    with pytest.raises(ValueError, match=r"`r` contains NaN \(first at entry 1\); risks must lie"):
        check_risks([0.5, np.nan, np.nan], "r")
    with pytest.raises(ValueError, match=rf"`r` must lie in \[0, 1\]; entry 2 is {NUM}1.0001"):
        check_risks([0.0, 1.0, 1.0001], "r")
    with pytest.raises(ValueError, match=rf"entry 0 is {NUM}-1e-12"):
        check_risks([-1e-12], "r")
    with pytest.raises(ValueError, match=r"make_risk\('squared', scale=...\)"):
        check_risks([2.0], "r")
    with pytest.raises(ValueError, match=r"`r` must lie in \[0, 1\]"):
        check_risks([np.inf], "r")


def test_check_weights():
    assert check_weights(None, "w", 3) is None
    np.testing.assert_array_equal(check_weights([1, 2.5, 1e-8], "w", 3), [1.0, 2.5, 1e-8])
    with pytest.raises(ValueError, match=r"`w` has 2 entries; expected 3"):
        check_weights([1.0, 1.0], "w", 3)
    for bad in (0.0, -1.0, np.nan, np.inf):
        with pytest.raises(ValueError, match=r"`w` must be strictly positive and finite "
                                             r"\(covariate-shift density ratios\); entry 1 is"):
            check_weights([1.0, bad], "w", 2)


# ----------------------------------------------------------------------------------------------
# lengths, emptiness, warnings
# ----------------------------------------------------------------------------------------------


def test_check_same_length():
    check_same_length(a=[1, 2], b=np.zeros(2), c=(3, 4))
    check_same_length()
    with pytest.raises(ValueError,
                       match=r"Mismatched lengths: `a` has 2, `b` has 3; they must be equal"):
        check_same_length(a=[1, 2], b=[1, 2, 3])


def test_check_nonempty():
    check_nonempty([1], "x")
    with pytest.raises(ValueError, match=r"`x` is empty: at least one calibration point is"):
        check_nonempty([], "x")
    with pytest.raises(ValueError, match=r"`y` is empty: at least one labeled point"):
        check_nonempty(np.zeros(0), "y", what="labeled")


def test_warn_category_and_stacklevel():
    assert issubclass(RiskControlWarning, UserWarning)

    def public_function():
        warn("nothing certified: too few calibration points")

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        public_function()  # the warning should point at this line (the user's call site)
    assert len(caught) == 1
    w = caught[0]
    assert w.category is RiskControlWarning
    assert "too few calibration points" in str(w.message)
    assert w.filename == __file__
    with pytest.warns(RiskControlWarning, match="nothing certified"):
        public_function()


# ----------------------------------------------------------------------------------------------
# score matrices and indices (best-model identification)
# ----------------------------------------------------------------------------------------------


def test_check_score_matrix_accepts_and_names_first_bad_cell():
    S = [[0.0, 1.0, 0.5], [1.0, 0.0, 0.25]]
    out = check_score_matrix(S, "scores")
    assert out.dtype == float and out.shape == (2, 3)
    with pytest.raises(ValueError, match=r"model 1, example 2.*complete\. use NaN"):
        check_score_matrix([[0, 1, 0], [1, 0, np.nan]], "scores", nan_hint="use NaN")
    with pytest.raises(ValueError, match=r"\[0, 1\]; entry \(model 0, example 1\) is 2\.0"):
        check_score_matrix([[0, 2.0]], "scores")
    with pytest.raises(ValueError, match=r"must be finite; entry \(model 0, example 0\)"):
        check_score_matrix([[np.inf, 0.0]], "scores", allow_nan=True)
    with pytest.raises(ValueError, match="must be 2-d"):
        check_score_matrix([0.0, 1.0], "scores")
    with pytest.raises(ValueError, match="is empty"):
        check_score_matrix(np.empty((0, 3)), "scores")
    kept = check_score_matrix([[np.nan, 7.0]], "scores", allow_nan=True, lower=None)
    assert np.isnan(kept[0, 0]) and kept[0, 1] == 7.0


def test_check_binary():
    check_binary([[0.0, 1.0, np.nan]], "scores")
    with pytest.raises(ValueError, match=r"binary.*entry \(model 0, example 1\) is 0\.5\. opt in"):
        check_binary([[1.0, 0.5]], "scores", hint="opt in")


def test_check_returned_scores():
    np.testing.assert_array_equal(check_returned_scores([1, 0], 2, 3), [1.0, 0.0])
    with pytest.raises(TypeError, match="returned None for model 3"):
        check_returned_scores(None, 2, 3)
    with pytest.raises(ValueError, match=r"returned 1 score\(s\) for model 3 but 2 example"):
        check_returned_scores([1.0], 2, 3)
    with pytest.raises(ValueError, match=r"must lie in \[0, 1\]"):
        check_returned_scores([1.0, -0.5], 2, 3)


def test_check_index_and_indices():
    assert check_index(np.int64(2), "model", 3) == 2
    with pytest.raises(ValueError, match=r"`model` must lie in \[0, 3\); got 3"):
        check_index(3, "model", 3)
    idx = check_indices(np.array([0, 4], dtype=np.int32), "examples", 5)
    assert idx.dtype == np.int64 and list(idx) == [0, 4]
    assert list(check_indices(2, "examples", 5)) == [2]
    with pytest.raises(TypeError, match="integer indices"):
        check_indices([0.5], "examples", 5)
    with pytest.raises(ValueError, match=r"got values in \[-1, 4\]"):
        check_indices([-1, 4], "examples", 5)
    with pytest.raises(ValueError, match="must be 1-d"):
        check_indices([[0]], "examples", 5)


@pytest.mark.parametrize(
    "values, error, pattern",
    [("abc", TypeError, "got a string"), (["a", "b"], TypeError, "got strings"),
     ([1 + 2j], ValueError, "Complex data not supported"), ([object()], TypeError, "must be")],
)
def test_as_float_array_rejects_non_numbers(values, error, pattern):
    with pytest.raises(error, match=pattern):
        as_float_array(values, "x")


# -- stack levels, random states, value display, labels ------------------------------------------


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
