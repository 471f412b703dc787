"""SemiBanditPredictionSet: sklearn compliance, honest replay, streaming feedback, errors."""

import pickle

import numpy as np
import pandas as pd
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.datasets import make_classification
from sklearn.exceptions import NotFittedError
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.utils.estimator_checks import parametrize_with_checks

from sklearn_riskcontrol import RiskControlWarning
from sklearn_riskcontrol.online import (
    SemiBanditPredictionSet,
    make_learner,
    simulate_thresholds,
)

# -- scikit-learn compliance ------------------------------------------------------------------

# Each entry is a check that fails *by design*, with the reason.
EXPECTED_FAILED = {
    # The check calls partial_fit(X, y) with the true labels after fit. partial_fit's y is
    # semi-bandit feedback: a label reported as observed must lie in the published set, and
    # once the threshold is finite (ACI gets there on the check's small data) some true labels
    # are not, which partial_fit rejects with a ValueError on purpose.
    "check_fit_score_takes_y": "partial_fit rejects feedback inconsistent with the published set",
}


def _expected_failed(estimator):
    return EXPECTED_FAILED if estimator.strategy == "aci" else {}


@parametrize_with_checks(
    [
        SemiBanditPredictionSet(LogisticRegression(), random_state=0),
        SemiBanditPredictionSet(
            LogisticRegression(), strategy="aci", label_score="decision_function", random_state=0
        ),
    ],
    expected_failed_checks=_expected_failed,
)
def test_sklearn_compatible(estimator, check):
    check(estimator)


# -- data ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def data():
    X, y = make_classification(
        n_samples=6000, n_features=8, n_informative=5, n_classes=4, random_state=0
    )
    clf = LogisticRegression(max_iter=500).fit(X[:1000], y[:1000])
    return X, y, clf


def _true_scores(clf, X, y):
    return clf.predict_proba(X)[np.arange(len(y)), np.searchsorted(clf.classes_, y)]


# -- fit: honest replay ---------------------------------------------------------------------------


@pytest.mark.parametrize("strategy", ["sps", "greedy", "aci", "dlr", "etc", "conservative_etc"])
def test_fit_replays_exactly_like_simulate_thresholds(data, strategy):
    X, y, clf = data
    params = dict(strategy=strategy, horizon=5000, n_explore=300, learning_rate=0.05)
    est = SemiBanditPredictionSet(FrozenEstimator(clf), alpha=0.1, **params).fit(X[1000:], y[1000:])
    s = _true_scores(clf, X[1000:], y[1000:])
    taus = simulate_thresholds(s, 0.1, **params)
    learner = make_learner(strategy, 0.1, **{k: v for k, v in params.items() if k != "strategy"})
    learner.replay(s)
    assert est.threshold_ == learner.threshold
    assert est.n_rounds_ == 5000
    assert est.n_misses_ == int(np.sum(s < taus))


@pytest.mark.parametrize("strategy", ["sps", "aci", "dlr"])
def test_fit_uses_only_feedback_the_user_could_give(data, strategy):
    """Relabelling missed rows with other labels that were also outside the set changes nothing."""
    X, y, clf = data
    Xs, ys = X[1000:3000], y[1000:3000].copy()
    P = clf.predict_proba(Xs)
    params = dict(strategy=strategy, learning_rate=0.05)
    taus = simulate_thresholds(P[np.arange(2000), ys], 0.1, **params)
    ref = SemiBanditPredictionSet(FrozenEstimator(clf), **params).fit(Xs, ys)
    changed = 0
    for i in np.flatnonzero(P[np.arange(2000), ys] < taus):
        outside = np.flatnonzero(P[i] < taus[i])
        other = outside[outside != ys[i]]
        if len(other):
            ys[i] = other[0]
            changed += 1
    assert changed > 0
    est = SemiBanditPredictionSet(FrozenEstimator(clf), **params).fit(Xs, ys)
    assert est.threshold_ == ref.threshold_ and est.n_misses_ == ref.n_misses_


def test_wrapped_classifier_is_used_as_is_and_predictions_delegate(data):
    X, y, clf = data
    coef = clf.coef_.copy()
    est = SemiBanditPredictionSet(clf, horizon=5000).fit(X[1000:], y[1000:])
    assert est.estimator_ is clf
    np.testing.assert_array_equal(clf.coef_, coef)  # never refitted
    np.testing.assert_array_equal(est.predict(X[:50]), clf.predict(X[:50]))
    np.testing.assert_array_equal(est.predict_proba(X[:50]), clf.predict_proba(X[:50]))
    # FrozenEstimator keeps it fitted through clone (e.g. in GridSearchCV)
    frozen = clone(SemiBanditPredictionSet(FrozenEstimator(clf))).fit(X[1000:2000], y[1000:2000])
    np.testing.assert_array_equal(frozen.predict(X[:50]), clf.predict(X[:50]))


def test_unfitted_classifier_is_fitted_on_a_split(data):
    X, y, _ = data
    lr = LogisticRegression(max_iter=500)
    est = SemiBanditPredictionSet(lr, calib_size=0.4, random_state=0).fit(X[:2000], y[:2000])
    assert not hasattr(lr, "coef_")  # the user's object is untouched
    assert est.n_rounds_ == 800  # the stream is the calibration part
    assert est.n_features_in_ == 8
    again = SemiBanditPredictionSet(lr, calib_size=0.4, random_state=0).fit(X[:2000], y[:2000])
    assert again.threshold_ == est.threshold_
    np.testing.assert_array_equal(again.estimator_.coef_, est.estimator_.coef_)


def test_predict_set_is_the_threshold_rule(data):
    X, y, clf = data
    est = SemiBanditPredictionSet(FrozenEstimator(clf), alpha=0.2).fit(X[1000:4000], y[1000:4000])
    sets = est.predict_set(X[4000:])
    assert sets.dtype == bool and sets.shape == (2000, 4)
    np.testing.assert_array_equal(sets, clf.predict_proba(X[4000:]) >= est.threshold_)
    assert np.isfinite(est.threshold_)
    covered = sets[np.arange(2000), np.searchsorted(clf.classes_, y[4000:])]
    assert covered.mean() >= 0.8 - 3 * np.sqrt(0.16 / 2000)


def test_label_score_options(data):
    X, y, clf = data
    yb = (y > 1).astype(int)
    binary = LogisticRegression().fit(X[:1000], yb[:1000])
    est = SemiBanditPredictionSet(
        FrozenEstimator(binary), label_score="decision_function", horizon=3000
    ).fit(X[1000:4000], yb[1000:4000])
    d = binary.decision_function(X[1000:4000])
    learner = make_learner("sps", 0.1, horizon=3000)
    learner.replay(np.where(yb[1000:4000] == 1, d, -d))  # binary: class scores [-d, d]
    assert est.threshold_ == learner.threshold
    d5 = binary.decision_function(X[:5])
    expected = np.column_stack([-d5, d5]) >= est.threshold_
    np.testing.assert_array_equal(est.predict_set(X[:5]), expected)
    log_proba = SemiBanditPredictionSet(
        FrozenEstimator(clf), label_score=lambda e, Z: e.predict_log_proba(Z)
    ).fit(X[1000:3000], y[1000:3000])
    probs = SemiBanditPredictionSet(FrozenEstimator(clf)).fit(X[1000:3000], y[1000:3000])
    # SPS is rank-based: log-probabilities give the log of the probability threshold
    assert np.isfinite(probs.threshold_)
    assert log_proba.threshold_ == pytest.approx(np.log(probs.threshold_))


def test_precomputed_candidate_scores():
    """Retrieval/auction style: X holds the candidate scores, y the true candidate's column."""
    rng = np.random.default_rng(0)
    S = rng.normal(size=(3000, 20)) * 4 + 10
    y = rng.integers(0, 20, size=3000)
    S[np.arange(3000), y] += 3  # the true candidate tends to score higher
    est = SemiBanditPredictionSet("precomputed", alpha=0.1, horizon=3000).fit(S, y)
    learner = make_learner("sps", 0.1, horizon=3000)
    learner.replay(S[np.arange(3000), y])
    assert est.threshold_ == learner.threshold
    np.testing.assert_array_equal(est.classes_, np.arange(20))
    np.testing.assert_array_equal(est.predict_set(S[:10]), S[:10] >= est.threshold_)
    np.testing.assert_array_equal(est.predict(S[:10]), np.argmax(S[:10], axis=1))
    assert not hasattr(est, "predict_proba")
    with pytest.raises(ValueError, match="features"):
        est.predict_set(S[:10, :5])
    with pytest.raises(ValueError, match="NaN|infinity"):
        est.predict_set(np.full((2, 20), np.nan))


# -- partial_fit: streaming feedback ---------------------------------------------------------------


def _serve_and_reply(est, X, y, classes):
    """The user: sees the set, points at the true label if it is there, else reports -1."""
    sets = est.predict_set(X)
    inside = sets[np.arange(len(y)), np.searchsorted(classes, y)]
    reply = np.asarray(y, dtype=object).copy()
    reply[~inside] = -1
    return reply


def test_row_by_row_stream_equals_fit_and_resumes_after_pickle(data):
    X, y, clf = data
    Xs, ys = X[1000:2500], y[1000:2500]
    full = SemiBanditPredictionSet(FrozenEstimator(clf), strategy="aci", learning_rate=0.05)
    full.fit(Xs, ys)
    est = SemiBanditPredictionSet(FrozenEstimator(clf), strategy="aci", learning_rate=0.05)
    est.fit(Xs[:700], ys[:700])
    est = pickle.loads(pickle.dumps(est))  # stop and resume mid-stream
    for i in range(700, 1500):
        reply = _serve_and_reply(est, Xs[i : i + 1], ys[i : i + 1], clf.classes_)
        est.partial_fit(Xs[i : i + 1], reply)
    assert est.threshold_ == full.threshold_
    assert est.n_rounds_ == full.n_rounds_ == 1500
    assert est.n_misses_ == full.n_misses_


def test_batch_feedback_on_published_sets_is_exact_for_sps(data):
    X, y, clf = data
    Xs, ys = X[1000:5000], y[1000:5000]
    full = SemiBanditPredictionSet(FrozenEstimator(clf), horizon=4000).fit(Xs, ys)
    est = SemiBanditPredictionSet(FrozenEstimator(clf), horizon=4000)
    for chunk in np.array_split(np.arange(4000), 25):
        est.partial_fit(Xs[chunk], _serve_and_reply(est, Xs[chunk], ys[chunk], clf.classes_))
    assert est.threshold_ == full.threshold_ and est.n_rounds_ == 4000
    assert np.isfinite(est.threshold_)


class _CountingModel(ClassifierMixin, BaseEstimator):
    """A fitted classifier that counts its predict_proba calls."""

    def __init__(self, clf):
        self.clf, self.classes_, self.n_features_in_ = clf, clf.classes_, clf.n_features_in_
        self.calls_ = 0

    def fit(self, X, y):
        return self

    def predict(self, X):
        return self.clf.predict(X)

    def predict_proba(self, X):
        self.calls_ += 1
        return self.clf.predict_proba(X)


@pytest.mark.parametrize("strategy", ["sps", "greedy"])
@pytest.mark.parametrize("precomputed", [False, True])
def test_streaming_in_batches_equals_replay(data, strategy, precomputed):
    """predict_set + partial_fit per batch (anytime schedule) = fit on the whole stream."""
    X, y, clf = data
    Xs, ys = X[1000:6000], y[1000:6000]
    if precomputed:
        Xs, est, classes = clf.predict_proba(Xs), "precomputed", np.arange(4)
    else:
        est, classes = FrozenEstimator(clf), clf.classes_
    full = SemiBanditPredictionSet(est, strategy=strategy).fit(Xs, ys)
    stream, misses = SemiBanditPredictionSet(est, strategy=strategy), 0
    for chunk in np.array_split(np.arange(5000), 37):
        reply = _serve_and_reply(stream, Xs[chunk], ys[chunk], classes)
        misses += int(np.sum(reply == -1))
        stream.partial_fit(Xs[chunk], reply)
    # Clipping makes the records, hence the thresholds, independent of when a set was served
    # (the misses are not: a batch is served one older, lower threshold).
    assert stream.threshold_ == full.threshold_ and np.isfinite(full.threshold_)
    assert stream.n_rounds_ == 5000 and stream.n_misses_ == misses


def test_partial_fit_reuses_the_scores_of_predict_set_only_for_the_same_data(data):
    X, y, clf = data
    model, twin_model = _CountingModel(clf), _CountingModel(clf)
    est = SemiBanditPredictionSet(model, strategy="greedy").fit(X[1000:1500], y[1000:1500])
    twin = SemiBanditPredictionSet(twin_model, strategy="greedy").fit(X[1000:1500], y[1000:1500])
    # the same rows (even another array with the same bytes): one prediction per batch
    batch, yb = X[1500:1800].copy(), y[1500:1800]
    model.calls_ = 0
    est.partial_fit(batch.copy(), _serve_and_reply(est, batch, yb, clf.classes_))
    twin.partial_fit(batch, _serve_and_reply(twin, batch, yb, clf.classes_))
    assert model.calls_ == 1 and est.threshold_ == twin.threshold_
    # rows changed in place after predict_set: partial_fit predicts again, on the new rows
    buffer, other, yo = X[1800:2100].copy(), X[2100:2400], y[2100:2400]
    est.predict_set(buffer)
    buffer[:] = other
    reply = _serve_and_reply(twin, other, yo, clf.classes_)
    model.calls_ = 0
    est.partial_fit(buffer, reply)
    twin.partial_fit(other, reply)
    assert model.calls_ == 1
    assert est.threshold_ == twin.threshold_ and est.n_misses_ == twin.n_misses_
    # a signed zero is another input: bitwise comparison, not ==
    est.predict_set(np.zeros((2, X.shape[1])))
    model.calls_ = 0
    est.partial_fit(-np.zeros((2, X.shape[1])), [-1, -1])
    assert model.calls_ == 1
    # the cache is not part of the model
    est.predict_set(other)
    assert "_last_scores" in vars(est)
    assert "_last_scores" not in vars(pickle.loads(pickle.dumps(est)))


def test_sets_are_full_before_any_feedback(data):
    X, y, clf = data
    est = SemiBanditPredictionSet(FrozenEstimator(clf))
    assert est.predict_set(X[:3]).all() and est.predict_set(X[:3]).shape == (3, 4)
    est.partial_fit(X[:3], y[:3])  # every label was in the full sets
    assert est.n_rounds_ == 3 and est.n_misses_ == 0
    assert SemiBanditPredictionSet("precomputed").predict_set(np.zeros((2, 5))).all()


def test_first_partial_fit_with_unfitted_classifier_behaves_like_fit(data):
    X, y, _ = data
    a = SemiBanditPredictionSet(LogisticRegression(), random_state=0).partial_fit(X[:600], y[:600])
    b = SemiBanditPredictionSet(LogisticRegression(), random_state=0).fit(X[:600], y[:600])
    assert a.threshold_ == b.threshold_ and a.n_rounds_ == b.n_rounds_ == 300
    with pytest.raises(NotFittedError, match="misses"):
        SemiBanditPredictionSet(LogisticRegression()).partial_fit(X[:10], np.r_[y[:9], -1])


def _brute_force_coverage(est, clf, X, y, weights=None):
    """Coverage by definition: is y_i one of the labels whose probability is >= threshold_?"""
    P = clf.predict_proba(X)
    covered = [
        any(label == y_i and p >= est.threshold_ for label, p in zip(clf.classes_, row))
        for row, y_i in zip(P, y)
    ]
    weights = np.ones(len(y)) if weights is None else np.asarray(weights, dtype=float)
    return float(np.dot(covered, weights) / weights.sum())


def test_score_is_the_coverage_of_the_published_sets(data):
    X, y, clf = data
    est = SemiBanditPredictionSet(FrozenEstimator(clf), alpha=0.2).fit(X[1000:4000], y[1000:4000])
    X_new, y_new = X[4000:5000], y[4000:5000].copy()
    y_new[:20] = 9  # not a class of the classifier: never covered
    coverage = est.score(X_new, y_new)
    assert coverage == _brute_force_coverage(est, clf, X_new, y_new)
    assert 0 < coverage < 1 and coverage != clf.score(X_new, y_new)  # not the accuracy
    w = np.random.default_rng(0).uniform(size=len(y_new))
    assert est.score(X_new, y_new, sample_weight=w) == pytest.approx(
        _brute_force_coverage(est, clf, X_new, y_new, w), rel=1e-12
    )
    assert est.n_rounds_ == 3000  # scoring does not feed the stream
    with pytest.raises(ValueError, match="rows"):
        est.score(X_new, y_new[:-1])
    with pytest.raises(NotFittedError):
        SemiBanditPredictionSet(FrozenEstimator(clf)).score(X_new, y_new)


def test_feedback_messages_show_plain_numbers(data):
    X, y, clf = data
    est = SemiBanditPredictionSet(FrozenEstimator(clf), alpha=0.2).fit(X[1000:4000], y[1000:4000])
    P = clf.predict_proba(X[4000:4100])
    i, j = np.argwhere(P < est.threshold_)[0]
    with pytest.raises(ValueError, match=rf"label {clf.classes_[j]} was reported") as err:
        est.partial_fit(X[4000 + i : 4001 + i], clf.classes_[[j]])  # an np.int64 label
    assert "np." not in str(err.value)
    with pytest.raises(ValueError, match=r"label 7, which is not a class"):
        est.partial_fit(X[4000:4001], np.array([7]))
    with pytest.raises(ValueError, match=r"`classes` \[0, 1, 2\] differ.*classes_ \[0, 1, 2, 3\]"):
        est.partial_fit(X[4000:4001], [-1], classes=[0, 1, 2])


def test_warning_points_at_the_callers_line(data):
    X, y, clf = data
    yy = y[1000:2000].copy()
    yy[:10] = 9
    with pytest.warns(RiskControlWarning, match="count as misses") as record:
        SemiBanditPredictionSet(FrozenEstimator(clf)).fit(X[1000:2000], yy)
    assert record[0].filename == __file__


def test_inconsistent_feedback_is_rejected(data):
    X, y, clf = data
    est = SemiBanditPredictionSet(FrozenEstimator(clf), alpha=0.2).fit(X[1000:4000], y[1000:4000])
    P = clf.predict_proba(X[4000:4100])
    i, j = np.argwhere(P < est.threshold_)[0]
    before = (est.threshold_, est.n_rounds_)
    with pytest.raises(ValueError, match="Inconsistent feedback at row 0.*not in the set"):
        est.partial_fit(X[4000 + i : 4001 + i], [clf.classes_[j]])
    with pytest.raises(ValueError, match="not a class"):
        est.partial_fit(X[4000:4001], [7])
    assert (est.threshold_, est.n_rounds_) == before  # nothing was recorded
    est.partial_fit(X[4000 + i : 4001 + i], [-1])  # a miss is always consistent
    assert est.n_rounds_ == before[1] + 1


def test_string_labels_and_miss_marker():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(900, 3))
    y = np.array(["cat", "dog", "emu"])[np.argmax(X + rng.normal(size=(900, 3)), axis=1)]
    clf = LogisticRegression().fit(X[:300], y[:300])
    est = SemiBanditPredictionSet(FrozenEstimator(clf)).fit(X[300:600], y[300:600])
    reply = _serve_and_reply(est, X[600:], y[600:], clf.classes_)  # object: labels and -1
    est.partial_fit(X[600:], reply)
    assert est.n_rounds_ == 600
    assert est.n_misses_ == int(np.sum(reply == -1)) + SemiBanditPredictionSet(
        FrozenEstimator(clf)
    ).fit(X[300:600], y[300:600]).n_misses_
    with pytest.raises(ValueError, match="not a class"):
        est.partial_fit(X[:1], ["fox"])


def _stream(est, X, y, reply, n_batches=20):
    """Serve ``est`` batch by batch; ``reply(est, chunk)`` returns partial_fit's (y, kwargs)."""
    thresholds = []
    for chunk in np.array_split(np.arange(len(y)), n_batches):
        y_fb, kwargs = reply(est, chunk)
        est.partial_fit(X[chunk], y_fb, **kwargs)
        thresholds.append(est.threshold_)
    return thresholds


def _covered(est, X, y, classes):
    return est.predict_set(X)[np.arange(len(y)), np.searchsorted(classes, y)]


def test_covered_mask_is_bit_for_bit_the_minus_one_coding(data):
    X, y, clf = data
    Xs, ys = X[1000:5000], y[1000:5000]
    coded = SemiBanditPredictionSet(FrozenEstimator(clf), alpha=0.2)
    masked = SemiBanditPredictionSet(FrozenEstimator(clf), alpha=0.2)

    def minus_one(est, c):
        return _serve_and_reply(est, Xs[c], ys[c], clf.classes_).astype(int), {}

    def mask(est, c):  # the true labels everywhere: those of missed rows are ignored
        return ys[c], {"covered": _covered(est, Xs[c], ys[c], clf.classes_)}

    assert _stream(coded, Xs, ys, minus_one) == _stream(masked, Xs, ys, mask)
    assert np.isfinite(coded.threshold_) and coded.n_misses_ > 0
    assert (coded.n_rounds_, coded.n_misses_) == (masked.n_rounds_, masked.n_misses_)
    assert pickle.dumps(coded.learner_) == pickle.dumps(masked.learner_)
    assert pickle.dumps(coded.monitor_) == pickle.dumps(masked.monitor_)


NAMES = np.array(["bird", "cat", "dog"])  # sorted like 0, 1, 2: the same class columns


def _missing_marked(labels, covered, marker):
    out = np.asarray(labels, dtype=object).copy()
    out[~covered] = marker
    return out


@pytest.mark.parametrize(
    "reply", ["covered", "covered_placeholder", "none", "pd_na", "nan", "string_series"]
)
def test_string_labels_give_the_thresholds_of_the_integer_coded_run(reply):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(4000, 3))
    y = np.argmax(X + rng.normal(size=(4000, 3)), axis=1)
    clf_int = LogisticRegression().fit(X[:1000], y[:1000])
    clf_str = LogisticRegression().fit(X[:1000], NAMES[y[:1000]])
    Xs, ys, labels = X[1000:], y[1000:], NAMES[y[1000:]]
    coded = SemiBanditPredictionSet(FrozenEstimator(clf_int), alpha=0.2)
    named = SemiBanditPredictionSet(FrozenEstimator(clf_str), alpha=0.2)

    def minus_one(est, c):
        return _serve_and_reply(est, Xs[c], ys[c], clf_int.classes_).astype(int), {}

    def string_reply(est, c):
        covered = _covered(est, Xs[c], labels[c], clf_str.classes_)
        if reply == "covered":
            return labels[c], {"covered": covered}
        if reply == "covered_placeholder":  # not even a class on the missed rows
            return np.where(covered, labels[c], "?"), {"covered": covered}
        if reply == "string_series":
            return pd.Series(labels[c], dtype="string").where(covered), {}
        marker = {"none": None, "pd_na": pd.NA, "nan": np.nan}[reply]
        return _missing_marked(labels[c], covered, marker), {}

    assert _stream(coded, Xs, ys, minus_one) == _stream(named, Xs, ys, string_reply)
    assert np.isfinite(named.threshold_) and named.n_misses_ == coded.n_misses_ > 0
    np.testing.assert_array_equal(named.predict_set(X[:200]), coded.predict_set(X[:200]))


@pytest.mark.parametrize(
    "marked",
    [
        lambda y, miss: pd.Series(y, dtype="Int64").mask(miss),  # NumPy: floats with NaN
        lambda y, miss: np.where(miss, np.nan, y),
        lambda y, miss: _missing_marked(y, ~miss, None),
        lambda y, miss: _missing_marked(y, ~miss, pd.NA),
    ],
    ids=["Int64_series", "float_nan", "object_none", "object_pd_na"],
)
def test_missing_values_mark_misses_of_integer_labels(data, marked):
    X, y, clf = data
    Xs, ys = X[1000:3000], y[1000:3000]
    coded = SemiBanditPredictionSet(FrozenEstimator(clf), alpha=0.2).fit(X[3000:4000], y[3000:4000])
    other = clone(coded).fit(X[3000:4000], y[3000:4000])
    reply = _serve_and_reply(coded, Xs, ys, clf.classes_).astype(int)
    coded.partial_fit(Xs, reply)
    other.partial_fit(Xs, marked(ys, reply == -1))
    assert (other.threshold_, other.n_misses_) == (coded.threshold_, coded.n_misses_)
    assert coded.n_misses_ > 0


def test_covered_errors(data):
    X, y, clf = data
    est = SemiBanditPredictionSet(FrozenEstimator(clf), alpha=0.2).fit(X[1000:3000], y[1000:3000])
    Xb, yb = X[3000:3005], y[3000:3005]
    covered = np.ones(5, dtype=bool)
    with pytest.raises(ValueError, match=r"`covered` must have one entry per row.*\(5,\).*\(4,\)"):
        est.partial_fit(Xb, yb, covered=covered[:4])
    with pytest.raises(ValueError, match=r"`covered` must have one entry per row.*shape \(\)"):
        est.partial_fit(Xb, yb, covered=True)
    with pytest.raises(ValueError, match=r"`covered` must be boolean.*entry 2 is 2\."):
        est.partial_fit(Xb, yb, covered=[1, 0, 2, 1, 0])
    with pytest.raises(ValueError, match=r"`covered` must be boolean.*entry 0 is 'True'"):
        est.partial_fit(Xb, yb, covered=np.array(["True"] * 5))
    with pytest.raises(ValueError, match=r"`covered` must be boolean.*entry 1 is <NA>"):
        est.partial_fit(Xb, yb, covered=pd.array([True, None, True, True, True], dtype="boolean"))
    for marker in (None, pd.NA, -1):
        reply = _missing_marked(yb, np.arange(5) != 3, marker)
        with pytest.raises(ValueError, match=rf"Row 3 \(0-based\) has covered=True but `y` holds "
                           rf"the miss marker {marker!r} there"):
            est.partial_fit(Xb, reply, covered=covered)
    with pytest.raises(ValueError, match=r"Row 1 \(0-based\) has covered=True.*marker nan"):
        est.partial_fit(Xb, np.array([0, np.nan, 1, 2, 3]), covered=covered)
    P = clf.predict_proba(X[3000:3100])
    i, j = np.argwhere(P < est.threshold_)[0]
    outside = X[3000 + i : 3001 + i], clf.classes_[[j]]
    with pytest.raises(ValueError, match=r"row 0 .*not in the set\. Report a miss with covered="):
        est.partial_fit(*outside, covered=[True])
    with pytest.raises(ValueError, match=r"row 0 .*not in the set\. Report a miss with None in"):
        est.partial_fit(*outside)
    with pytest.raises(ValueError, match=r"Row 0 .*'fox', which is not a class.*covered=False"):
        est.partial_fit(Xb[:1], ["fox"], covered=[1])
    assert est.n_rounds_ == 2000  # nothing was recorded
    est.partial_fit(Xb, [0, 0, 0, 0, 0], covered=[False] * 5)  # placeholders of missed rows
    assert est.n_rounds_ == 2005 and est.n_misses_ >= 5


def test_covered_reads_minus_one_as_a_class(data):
    X, y, _ = data
    labels = np.where(y == 0, -1, y)
    clf = LogisticRegression(max_iter=500).fit(X[:1000], labels[:1000])
    est = SemiBanditPredictionSet(FrozenEstimator(clf))
    with pytest.raises(ValueError, match=r"-1 is also a class.*pass `covered`"):
        est.partial_fit(X[1000:1100], labels[1000:1100])
    est.partial_fit(X[1000:1100], labels[1000:1100], covered=np.ones(100, dtype=bool))
    assert est.n_rounds_ == 100 and est.n_misses_ == 0
    full = SemiBanditPredictionSet(FrozenEstimator(clf)).fit(X[1000:1100], labels[1000:1100])
    assert est.threshold_ == full.threshold_


def test_first_partial_fit_with_unfitted_classifier_and_covered(data):
    X, y, _ = data
    a = SemiBanditPredictionSet(LogisticRegression(), random_state=0)
    a.partial_fit(X[:600], y[:600], covered=np.ones(600, dtype=bool))
    b = SemiBanditPredictionSet(LogisticRegression(), random_state=0).fit(X[:600], y[:600])
    assert a.threshold_ == b.threshold_ and a.n_rounds_ == b.n_rounds_ == 300
    miss = np.arange(10) == 4
    with pytest.raises(NotFittedError, match="the feedback reports misses"):
        SemiBanditPredictionSet(LogisticRegression()).partial_fit(X[:10], y[:10], covered=~miss)
    with pytest.raises(NotFittedError, match="the feedback reports misses"):
        SemiBanditPredictionSet(LogisticRegression()).partial_fit(
            X[:10], _missing_marked(y[:10], ~miss, None)
        )


def test_labels_unknown_to_the_classifier_count_as_misses(data):
    X, y, clf = data
    yy = y[1000:2000].copy()
    yy[:10] = 9  # not a class of the classifier: it can never be in a set
    with pytest.warns(RiskControlWarning, match="count as misses"):
        est = SemiBanditPredictionSet(FrozenEstimator(clf)).fit(X[1000:2000], yy)
    assert est.n_misses_ >= 10


def test_pandas_input_and_feature_names():
    rng = np.random.default_rng(2)
    X = pd.DataFrame(rng.normal(size=(600, 3)), columns=["a", "b", "c"])
    y = (X["a"] + rng.normal(size=600) > 0).astype(int)
    clf = LogisticRegression().fit(X[:200], y[:200])
    est = SemiBanditPredictionSet(FrozenEstimator(clf)).fit(X[200:], y[200:])
    assert list(est.feature_names_in_) == ["a", "b", "c"] and est.n_features_in_ == 3
    assert est.predict_set(X[:4]).shape == (4, 2)


# -- errors ----------------------------------------------------------------------------------------


def test_parameter_and_input_errors(data):
    X, y, clf = data
    frozen = FrozenEstimator(clf)
    with pytest.raises(ValueError, match="alpha"):
        SemiBanditPredictionSet(frozen, alpha=1.0).fit(X[1000:1100], y[1000:1100])
    with pytest.raises(ValueError, match="strategy"):
        SemiBanditPredictionSet(frozen, strategy="ucb").fit(X[1000:1100], y[1000:1100])
    with pytest.raises(ValueError, match="horizon"):
        SemiBanditPredictionSet(frozen, horizon=50).fit(X[1000:1100], y[1000:1100])
    est = SemiBanditPredictionSet(frozen, horizon=100).fit(X[1000:1090], y[1000:1090])
    with pytest.raises(ValueError, match="horizon"):
        est.partial_fit(X[:11], np.full(11, -1))
    with pytest.raises(ValueError, match="n_explore"):
        SemiBanditPredictionSet(frozen, strategy="etc").fit(X[1000:1100], y[1000:1100])
    with pytest.raises(ValueError, match="requires y"):
        SemiBanditPredictionSet(frozen).fit(X[1000:1100], None)
    with pytest.raises(ValueError, match="rows"):
        SemiBanditPredictionSet(frozen).fit(X[1000:1100], y[1000:1099])
    nan_scores = lambda e, Z: np.full((len(Z), 4), np.nan)  # noqa: E731
    with pytest.raises(ValueError, match="NaN"):
        SemiBanditPredictionSet(frozen, label_score=nan_scores).fit(X[1000:1100], y[1000:1100])
    bad_shape = lambda e, Z: np.zeros((len(Z), 3))  # noqa: E731
    with pytest.raises(ValueError, match="shape"):
        SemiBanditPredictionSet(frozen, label_score=bad_shape).fit(X[1000:1100], y[1000:1100])
    with pytest.raises(NotFittedError):
        SemiBanditPredictionSet(LogisticRegression()).predict_set(X[:3])
    with pytest.raises(NotFittedError):
        SemiBanditPredictionSet(frozen).predict(X[:3])
    minus_one = LogisticRegression().fit(X[:500], np.where(y[:500] == 0, -1, y[:500]))
    est = SemiBanditPredictionSet(FrozenEstimator(minus_one))
    with pytest.raises(ValueError, match="-1 is also a class"):
        est.partial_fit(X[:2], [-1, -1])
