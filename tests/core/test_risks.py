"""Bounded per-sample risks (``risks.py``)."""

import copy
import pickle

import numpy as np
import pytest
from sklearn.base import clone

from sklearn_riskcontrol.risks import RISK_NAMES, Risk, make_risk


def test_builtin_names():
    assert set(RISK_NAMES) == {"zero_one", "squared", "absolute", "threshold"}


def test_zero_one():
    r = make_risk("zero_one")
    np.testing.assert_array_equal(r([1, 2, 3, 3], [1, 0, 3, 2]), [0.0, 1.0, 0.0, 1.0])
    np.testing.assert_array_equal(r(np.array(["a", "b"]), np.array(["a", "c"])), [0.0, 1.0])
    assert r([1], [1]).dtype == float


def test_squared_scale_and_clipping():
    r = make_risk("squared", scale=1.0)  # min((y - f)^2, 1)
    np.testing.assert_allclose(r([0.0, 0.5, 3.0, -2.0], [0.0, 0.0, 0.0, 0.0]),
                               [0.0, 0.25, 1.0, 1.0])
    r4 = make_risk("squared", scale=4.0)
    np.testing.assert_allclose(r4([0.0, 1.0, 2.0, 5.0], [0.0, 0.0, 0.0, 0.0]),
                               [0.0, 0.25, 1.0, 1.0])
    y = np.linspace(-3, 3, 101)
    out = r4(y, np.zeros_like(y))
    assert np.all((0 <= out) & (out <= 1))
    np.testing.assert_allclose(out, np.minimum(y**2 / 4, 1))


def test_squared_requires_an_explicit_scale():
    # An unbounded loss has no neutral scale: a default of 1 clipped 99% of load_diabetes risks.
    msg = (r"risk 'squared' is unbounded and needs an explicit `scale`.*guarantee covers that "
           r"clipped loss\. Pass risk=make_risk\('squared', scale=s\) \(the `risk=` of any estimator")
    with pytest.raises(ValueError, match=msg):
        make_risk("squared")
    with pytest.raises(ValueError, match=msg):
        make_risk("squared", scale=None)


def test_only_the_squared_risk_clips():
    assert make_risk("squared", scale=2.0).clips
    for risk in (make_risk("zero_one"), make_risk("absolute", tolerance=1.0),
                 make_risk("threshold", threshold=0.0), make_risk(_half_error)):
        assert not risk.clips


def test_absolute_is_tolerance_indicator():
    r = make_risk("absolute", tolerance=0.5)
    np.testing.assert_array_equal(r([0.0, 0.5, 0.51, -1.0], [0.0, 0.0, 0.0, 0.0]),
                                  [0.0, 0.0, 1.0, 1.0])


def test_threshold_is_conformal_selection_risk():
    r = make_risk("threshold", threshold=1.0)
    # 1{y_true <= c}: the prediction is irrelevant
    np.testing.assert_array_equal(r([0.0, 1.0, 1.5], [9.0, 9.0, 9.0]), [1.0, 1.0, 0.0])
    np.testing.assert_array_equal(r([0.0, 1.0, 1.5], [-9.0, 0.0, 2.0]), [1.0, 1.0, 0.0])


def test_outputs_are_in_unit_interval_for_random_inputs():
    rng = np.random.default_rng(0)
    y, f = rng.normal(size=500) * 3, rng.normal(size=500) * 3
    for risk in (make_risk("squared", scale=2.0), make_risk("absolute", tolerance=1.0),
                 make_risk("threshold", threshold=0.0), make_risk("zero_one")):
        out = risk(y, f)
        assert out.shape == (500,)
        assert np.all((out >= 0) & (out <= 1))


# ----------------------------------------------------------------------------------------------
# Callables: output checked on every call
# ----------------------------------------------------------------------------------------------


def _half_error(y_true, y_pred):
    return 0.5 * (np.asarray(y_true) != np.asarray(y_pred))


def _too_big(y_true, y_pred):
    return np.full(len(y_true), 2.0)


def _negative(y_true, y_pred):
    return -np.ones(len(y_true))


def _nan(y_true, y_pred):
    return np.full(len(y_true), np.nan)


def _wrong_length(y_true, y_pred):
    return np.zeros(len(y_true) + 1)


def _scaled(y_true, y_pred, *, factor):
    return np.abs(np.asarray(y_true) - np.asarray(y_pred)) * factor


def test_callable_risk():
    r = make_risk(_half_error)
    assert isinstance(r, Risk)
    assert r.name == "_half_error"
    np.testing.assert_array_equal(r([1, 2], [1, 3]), [0.0, 0.5])
    # parameters are passed through
    r2 = make_risk(_scaled, factor=0.1)
    np.testing.assert_allclose(r2([0.0, 5.0], [0.0, 0.0]), [0.0, 0.5])


@pytest.mark.parametrize(
    "func, match",
    [
        (_too_big, r"`risk '_too_big' output` must lie in \[0, 1\]; entry 0 is"),
        (_negative, r"`risk '_negative' output` must lie in \[0, 1\]"),
        (_nan, r"`risk '_nan' output` contains NaN"),
        (_wrong_length, r"risk '_wrong_length' returned 3 values for 2 samples"),
    ],
)
def test_callable_output_is_checked(func, match):
    r = make_risk(func)
    with pytest.raises(ValueError, match=match):
        r([0.0, 1.0], [0.0, 1.0])


def test_callable_range_error_suggests_a_fix():
    with pytest.raises(ValueError, match=r"Rescale or clip the loss"):
        make_risk(_scaled, factor=10.0)([0.0, 5.0], [0.0, 0.0])


# ----------------------------------------------------------------------------------------------
# Risk objects: equality, hashing, pickling, cloning, repr
# ----------------------------------------------------------------------------------------------


def test_equality_and_hash():
    a = make_risk("squared", scale=2.0)
    b = make_risk("squared", scale=2.0)
    assert a == b and hash(a) == hash(b)
    assert a != make_risk("squared", scale=3.0)
    assert a != make_risk("squared", scale=1.0)
    assert make_risk("zero_one") != make_risk("threshold", threshold=0.0)
    assert make_risk(_half_error) == make_risk(_half_error)
    assert make_risk(_half_error) != make_risk(_too_big)
    assert a != "squared"
    assert len({a, b, make_risk("zero_one")}) == 2


@pytest.mark.parametrize(
    "risk",
    [
        make_risk("zero_one"),
        make_risk("squared", scale=2.5),
        make_risk("absolute", tolerance=0.1),
        make_risk("threshold", threshold=-1.0),
        make_risk(_half_error),
        make_risk(_scaled, factor=0.2),
    ],
)
def test_pickle_copy_and_clone_roundtrip(risk):
    y, f = np.array([0.0, 1.0, 2.0]), np.array([0.0, 0.5, 5.0])
    for other in (pickle.loads(pickle.dumps(risk)), copy.deepcopy(risk),
                  clone(risk, safe=False)):
        assert other == risk
        assert hash(other) == hash(risk)
        np.testing.assert_array_equal(other(y, f), risk(y, f))


def test_repr():
    assert repr(make_risk("squared", scale=2.0)) == "make_risk('squared', scale=2.0)"
    assert repr(make_risk("zero_one")) == "make_risk('zero_one')"
    assert repr(make_risk("threshold", threshold=1)) == "make_risk('threshold', threshold=1)"


def test_existing_risk_is_returned_unchanged():
    r = make_risk("squared", scale=2.0)
    assert make_risk(r) is r
    with pytest.raises(TypeError, match=r"Parameters cannot be given together with an existing"):
        make_risk(r, scale=3.0)


# ----------------------------------------------------------------------------------------------
# Errors
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["mse", "Squared", "", 3, None])
def test_unknown_risk(name):
    with pytest.raises(ValueError, match=r"Unknown risk .* use one of \['zero_one', 'squared'"):
        make_risk(name)


@pytest.mark.parametrize(
    "name, params, match",
    [
        ("squared", dict(scal=2.0),
         r"Risk 'squared' takes parameters \['scale'\]; got \['scal'\]"),
        ("zero_one", dict(scale=2.0), r"Risk 'zero_one' takes parameters \[\]; got \['scale'\]"),
        ("absolute", {}, r"Risk 'absolute' needs the parameter\(s\) \['tolerance'\]"),
        ("threshold", {},
         r"needs the parameter\(s\) \['threshold'\], e.g. make_risk\('threshold'"),
    ],
)
def test_bad_parameters(name, params, match):
    with pytest.raises(TypeError, match=match):
        make_risk(name, **params)


@pytest.mark.parametrize("scale", [0.0, -1.0, np.inf, np.nan])
def test_bad_scale(scale):
    with pytest.raises(ValueError, match=r"`scale` of risk 'squared' must be a positive finite number"):
        make_risk("squared", scale=scale)


def test_messages_show_numpy_scalars_as_plain_numbers():
    with pytest.raises(ValueError, match=r"got -1\.0\.$"):
        make_risk("squared", scale=np.float64(-1.0))
    with pytest.raises(ValueError, match=r"Unknown risk 'mse'"):
        make_risk(np.str_("mse"))
    assert repr(make_risk("squared", scale=np.float64(2.0))) == "make_risk('squared', scale=2.0)"


def test_non_numeric_scale_has_a_clear_message():
    with pytest.raises((TypeError, ValueError), match=r"`scale`"):
        make_risk("squared", scale="2")
