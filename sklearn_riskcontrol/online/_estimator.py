"""SemiBanditPredictionSet: online prediction sets for a fitted classifier (estimator layer)."""

from __future__ import annotations

from collections.abc import Callable
from numbers import Integral, Real
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.base import BaseEstimator, ClassifierMixin, MetaEstimatorMixin, _fit_context, clone
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import train_test_split
from sklearn.utils import _safe_indexing, get_tags
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, column_or_1d, validate_data

from .._bytes import same_bytes
from .._labels import class_index, missing_marks
from .._validation import RANDOM_STATE, check_labels, check_random_state, show, warn
from .._wrapping import (
    DelegatesPredictions,
    copy_feature_info,
    indexable_rows,
    is_fitted,
    n_rows,
    wrapped_estimator,
)
from ._learners import STRATEGIES, make_learner
from ._monitor import ON_DRIFT, MissRateMonitor, _replay_monitored
from .._typing import BoolArray, Estimator, RandomStateLike

if TYPE_CHECKING:
    from typing_extensions import Self  # typing.Self: Python >= 3.11

__all__ = ["SemiBanditPredictionSet"]

#: Largest ``X`` (bytes) whose label scores ``predict_set`` keeps for the next ``partial_fit``.
_SCORE_CACHE_MAX_BYTES = 2**24


def _rows(X):
    """``X`` with selectable rows (objects that only implement ``__array__`` become arrays)."""
    if not hasattr(X, "shape") and not hasattr(X, "__len__") and hasattr(X, "__array__"):
        X = np.asarray(X)
    return indexable_rows(X)


def _check_covered(covered, n):
    """``covered`` as a bool array of shape (n,): booleans or 0/1, with no missing value."""
    import pandas as pd

    arr = np.asarray(covered)
    if arr.shape != (n,):
        raise ValueError(
            f"`covered` must have one entry per row of `y`, shape ({n},); got shape {arr.shape}."
        )
    valid = np.zeros(n, dtype=bool)
    if arr.dtype.kind in "biufO":
        present = ~np.asarray(pd.isna(arr), dtype=bool)
        valid[present] = (arr[present] == 0) | (arr[present] == 1)
    if not valid.all():
        i = int(np.flatnonzero(~valid)[0])
        raise ValueError(
            f"`covered` must be boolean (True: the true label was in the published set and `y` "
            f"holds it; False: a miss); entry {i} is {show(arr[i])}."
        )
    return arr.astype(bool)


def _cacheable(X):
    """A NumPy array of numbers small enough to be copied for the score cache."""
    return (
        isinstance(X, np.ndarray) and X.dtype.kind in "biufc" and X.nbytes <= _SCORE_CACHE_MAX_BYTES
    )


class SemiBanditPredictionSet(
    ClassifierMixin, DelegatesPredictions, MetaEstimatorMixin, BaseEstimator
):
    """Online prediction sets learned from semi-bandit feedback (SPS and baselines).

    Each round the user sees the set ``{y : score(x, y) >= threshold_}`` of labels and either
    points at the true label (it was in the set) or reports a miss. The threshold is learned
    online from that feedback only. With ``strategy="sps"`` (Ge, Bastani & Bastani), with
    probability at least ``1 - delta`` every published set has coverage at least ``1 - alpha``
    (``threshold_ <= tau*``) and the sets converge to the smallest such sets (regret
    ``O(sqrt(T log T))``). The other strategies are the paper's baselines.

    Parameters
    ----------
    estimator : classifier or "precomputed"
        A fitted classifier is used as is (never refitted); wrap it in
        ``sklearn.frozen.FrozenEstimator`` to keep it fitted through ``clone``. An unfitted one
        is fitted by :meth:`fit` on a ``1 - calib_size`` split of the data (the rest is replayed
        as the stream). ``"precomputed"``: ``X`` holds the candidate scores directly (rows =
        rounds, columns = candidates, e.g. retrieval similarities or bids) and labels are column
        indices.
    alpha : float in (0, 1), default=0.1
        Tolerated miscoverage; target coverage ``1 - alpha`` (MAPIE's ``confidence_level``).
    strategy : {"sps", "greedy", "aci", "dlr", "etc", "conservative_etc"}, default="sps"
        Threshold learner (:func:`sklearn_riskcontrol.online.make_learner`).
    horizon : int, optional
        Number of rounds the guarantee is set up for; more rounds raise an error. ``None``: the
        anytime schedule (any stream length).
    delta : float in (0, 1), optional
        Probability that the guarantee fails at some round; default ``2 / horizon`` (the paper's
        choice) or ``0.01`` without a horizon.
    label_score : {"proba", "decision_function"} or callable, default="proba"
        Score of each label (larger = more plausible): a column of ``predict_proba`` or of
        ``decision_function`` (binary: ``[-d, d]``), or ``label_score(estimator, X)`` returning an
        array of shape (n_samples, n_classes). Ignored with ``estimator="precomputed"``.
    learning_rate : float, optional
        ACI's level step (default 0.005) or DLR's step scale (default 1.0).
    initial_threshold : float, optional
        DLR's first threshold (default 0.0).
    n_explore : int, optional
        Exploration rounds of the ETC strategies (default ``ceil(horizon^(2/3))``).
    on_drift : {"warn", "restart", "ignore"}, default="warn"
        What to do when the drift monitor (``strategy="sps"`` only) rejects the i.i.d.
        assumption, i.e. finds that the published sets miss the true label more often than
        ``alpha`` allows (:class:`~sklearn_riskcontrol.online.MissRateMonitor`). ``"warn"``: a
        :class:`~sklearn_riskcontrol.RiskControlWarning` naming the round; ``"ignore"``: only
        record it. Both leave SPS exactly the paper's algorithm (the thresholds do not depend on
        the monitor). ``"restart"``: start a fresh learner (full sets again) and a fresh monitor
        at the next published set; this adapts to a changed stream but is *outside the paper's
        guarantee*, which then holds only if the stream is i.i.d. after the restart.
    monitor_delta : float in (0, 1), default=0.01
        Level of the drift monitor: on i.i.d. rounds it raises a false alarm with probability
        at most ``monitor_delta + delta`` over the whole stream.
    calib_size : float in (0, 1), default=0.5
        Fraction of the rows of :meth:`fit` replayed as the stream when ``estimator`` has to be
        fitted first (the others fit it).
    random_state : int, RandomState instance, numpy Generator or None, default=None
        Seed of that split.

    Attributes
    ----------
    estimator_ : estimator or None
        The fitted classifier in use (``None`` with ``"precomputed"``).
    classes_ : ndarray of shape (n_classes,)
        Labels, i.e. the columns of :meth:`predict_set`.
    learner_ : ThresholdLearner
        The streaming state (picklable; resumes where it stopped).
    threshold_ : float
        Threshold of the next published set (``-inf`` = all labels).
    n_rounds_ : int
        Rounds fed so far.
    n_misses_ : int
        Rounds whose true label was not in the set.
    monitor_ : MissRateMonitor or None
        The drift monitor's state (e-value, rounds since its last reset); ``None`` for strategies
        other than ``"sps"``.
    drift_detected_at_ : int or None
        Round (1-based, counted from the start of the stream) after which the monitor first
        rejected, or ``None``.
    history_ : dict of lists
        The monitor's events, one entry per detection: ``"round"`` (as in
        ``drift_detected_at_``), ``"event"`` (``"drift_detected"``, or ``"restart"`` with
        ``on_drift="restart"``) and ``"e_value"`` (the e-value that crossed
        ``1 / monitor_delta``). ``pandas.DataFrame(history_)`` tabulates it.
    n_features_in_ : int
        Number of features of ``X`` (copied from the wrapped classifier).
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Feature names, when the wrapped classifier has them.

    See Also
    --------
    sklearn_riskcontrol.online.simulate_thresholds : the same learners on an array of scores.

    Notes
    -----
    :meth:`fit` starts a new stream and replays ``(X, y)`` row by row honestly: a row's true label
    is revealed to the learner only if it lies in the set published for that row; labels the
    classifier does not know count as misses. :meth:`partial_fit` continues the stream with the
    user's feedback: ``y`` holds the true label when it was in the set; a miss is reported with
    ``covered=False`` (labels of any type), a missing value in ``y`` (None, ``pd.NA``, NaN) or
    ``-1``. All rows of one :meth:`partial_fit` call are taken to have been served with the sets
    :meth:`predict_set` returned just before the call (the current ``threshold_``).

    With ``strategy="sps"`` a drift monitor bets against the published sets' misses (the one
    thing semi-bandit feedback observes exactly): see ``on_drift`` and the user guide's "When the
    stream drifts".

    :meth:`score` returns the coverage of the published sets (the fraction of rows whose true
    label is in its set), not the wrapped classifier's accuracy.

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> from sklearn.frozen import FrozenEstimator
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.model_selection import train_test_split
    >>> from sklearn_riskcontrol.online import SemiBanditPredictionSet
    >>> X, y = make_classification(n_samples=4000, n_classes=3, n_informative=4, random_state=0)
    >>> X_fit, X_rest, y_fit, y_rest = train_test_split(X, y, train_size=1000, random_state=0)
    >>> X_stream, X_new, y_stream, y_new = train_test_split(X_rest, y_rest, train_size=2000,
    ...                                                     random_state=0)
    >>> clf = LogisticRegression().fit(X_fit, y_fit)
    >>> sps = SemiBanditPredictionSet(FrozenEstimator(clf), alpha=0.2)
    >>> sps = sps.fit(X_stream, y_stream)  # replay a labeled stream honestly
    >>> sps.n_rounds_, bool(sps.threshold_ > 0)
    (2000, True)
    >>> sets = sps.predict_set(X_new)  # publish sets for 1000 new rounds
    >>> coverage = sps.score(X_new, y_new)  # fraction of true labels in their set: one draw
    >>> bool(coverage >= 0.8)
    True
    >>> feedback = np.where(sets[range(1000), y_new], y_new, -1)  # user: label or miss
    >>> sps.partial_fit(X_new, feedback).n_rounds_
    3000

    A stream whose true-label scores drop halfway (here ``"precomputed"`` scores of a single
    candidate) breaks the i.i.d. assumption; the drift monitor detects it, and
    ``on_drift="restart"`` starts SPS afresh:

    >>> rng = np.random.default_rng(0)
    >>> scores = np.concatenate([rng.normal(3, 2, 3000), rng.normal(-0.5, 2, 3000)])
    >>> sps = SemiBanditPredictionSet("precomputed", on_drift="restart")
    >>> sps = sps.fit(scores[:, None], np.zeros(6000, dtype=int))
    >>> sps.history_["event"], 3000 < sps.drift_detected_at_ < 3200
    (['restart'], True)
    """

    _parameter_constraints = {
        "estimator": [HasMethods(["predict"]), StrOptions({"precomputed"})],
        "alpha": [Interval(Real, 0, 1, closed="neither")],
        "strategy": [StrOptions(set(STRATEGIES))],
        "horizon": [Interval(Integral, 1, None, closed="left"), None],
        "delta": [Interval(Real, 0, 1, closed="neither"), None],
        "label_score": [StrOptions({"proba", "decision_function"}), callable],
        "learning_rate": [Interval(Real, 0, None, closed="neither"), None],
        "initial_threshold": [Interval(Real, None, None, closed="neither"), None],
        "n_explore": [Interval(Integral, 1, None, closed="left"), None],
        "on_drift": [StrOptions(set(ON_DRIFT))],
        "monitor_delta": [Interval(Real, 0, 1, closed="neither")],
        "calib_size": [Interval(Real, 0, 1, closed="neither")],
        "random_state": RANDOM_STATE,
    }

    def __init__(
        self,
        estimator: Estimator,
        *,
        alpha: float = 0.1,
        strategy: str = "sps",
        horizon: int | None = None,
        delta: float | None = None,
        label_score: str | Callable[..., ArrayLike] | None = "proba",
        learning_rate: float | None = None,
        initial_threshold: float | None = None,
        n_explore: int | None = None,
        on_drift: str = "warn",
        monitor_delta: float = 0.01,
        calib_size: float = 0.5,
        random_state: RandomStateLike = None,
    ) -> None:
        self.estimator = estimator
        self.alpha = alpha
        self.strategy = strategy
        self.horizon = horizon
        self.delta = delta
        self.label_score = label_score
        self.learning_rate = learning_rate
        self.initial_threshold = initial_threshold
        self.n_explore = n_explore
        self.on_drift = on_drift
        self.monitor_delta = monitor_delta
        self.calib_size = calib_size
        self.random_state = random_state

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        if not isinstance(self.estimator, str):
            tags.input_tags.sparse = get_tags(self.estimator).input_tags.sparse
        return tags

    # -- helpers -------------------------------------------------------------------------------
    @property
    def _precomputed(self):
        return isinstance(self.estimator, str)

    def _new_learner(self):
        return make_learner(
            self.strategy,
            self.alpha,
            horizon=self.horizon,
            delta=self.delta,
            learning_rate=self.learning_rate,
            initial_threshold=self.initial_threshold,
            n_explore=self.n_explore,
        )

    def _new_monitor(self):
        return MissRateMonitor(self.alpha, delta=self.monitor_delta)

    def _check_on_drift(self):
        if self.on_drift == "restart" and self.strategy != "sps":
            raise ValueError(
                f"on_drift='restart' needs strategy='sps' (the drift monitor tests SPS's "
                f"guarantee); got strategy={self.strategy!r}. Use on_drift='warn' or 'ignore'."
            )

    def _start_history(self):
        self.monitor_ = self._new_monitor() if self.strategy == "sps" else None
        self.drift_detected_at_ = None
        self.history_ = {"round": [], "event": [], "e_value": []}
        self._rounds_before_restart = 0

    def _record_detection(self, round_, e_value):
        """Log a detection after stream round ``round_`` (1-based); warn or restart."""
        restart = self.on_drift == "restart"
        if self.drift_detected_at_ is None:
            self.drift_detected_at_ = int(round_)
        self.history_["round"].append(int(round_))
        self.history_["event"].append("restart" if restart else "drift_detected")
        self.history_["e_value"].append(float(e_value))
        if self.on_drift == "warn":
            warn(
                f"Drift detected after round {int(round_)}: the published sets miss the true label "
                f"more often than alpha={self.alpha:g} allows (the miss-rate e-value reached "
                f"{float(e_value):.3g} >= 1/monitor_delta = {1 / self.monitor_delta:g}), so the "
                "stream is not i.i.d. and SPS's coverage guarantee no longer holds; its "
                "threshold never decreases, so coverage will not recover by itself. Refit on "
                "recent rounds, or pass on_drift='restart' to restart the learner after a "
                "detection (outside the paper's guarantee)."
            )

    def _set_model(self, model, X):
        self.estimator_ = model
        if model is None:
            X = validate_data(self, X, reset=True, dtype=float, ensure_all_finite=True)
            self.classes_ = np.arange(X.shape[1])
            return
        if not hasattr(model, "classes_"):
            raise TypeError(
                f"`estimator` must be a classifier with `classes_` (labels of the score columns); "
                f"got {model!r}. Use estimator='precomputed' to pass candidate scores as X."
            )
        self.classes_ = np.asarray(model.classes_)
        copy_feature_info(self, model, X)

    def _label_scores(self, X):
        """Scores of every label, shape (n_samples, n_classes), validated finite."""
        X = _rows(X)
        if self.estimator_ is None:
            # validate_data costs ~0.2 ms a call; a float array of the fitted width without
            # feature names only needs the finiteness check below.
            plain = (
                isinstance(X, np.ndarray)
                and X.dtype == np.float64
                and X.ndim == 2
                and X.shape[0] > 0
                and X.shape[1] == self.n_features_in_
                and not hasattr(self, "feature_names_in_")
            )
            S = X if plain else validate_data(self, X, reset=False, dtype=float, ensure_all_finite=True)
        elif callable(self.label_score):
            S = self.label_score(self.estimator_, X)
        elif self.label_score == "proba":
            if not hasattr(self.estimator_, "predict_proba"):
                raise TypeError(
                    f"label_score='proba' needs `predict_proba`, which {self.estimator_!r} lacks; "
                    "use label_score='decision_function' or a callable."
                )
            S = self.estimator_.predict_proba(X)
        else:
            if not hasattr(self.estimator_, "decision_function"):
                raise TypeError(
                    f"label_score='decision_function' needs `decision_function`, which "
                    f"{self.estimator_!r} lacks; use label_score='proba' or a callable."
                )
            S = np.asarray(self.estimator_.decision_function(X), dtype=float)
            if S.ndim == 1:
                S = np.column_stack([-S, S])
        S = np.asarray(S, dtype=float)
        n, k = n_rows(X), len(self.classes_)
        if S.shape != (n, k):
            raise ValueError(
                f"The label scores have shape {S.shape}; expected (n_samples, n_classes) = "
                f"({n}, {k})."
            )
        if not np.isfinite(S).all():
            raise ValueError(
                "The label scores contain NaN or infinite values; the score of every label must "
                "be finite."
            )
        return S

    def _scores_of_last_sets(self, X):
        """Label scores of ``X``, reused from the last :meth:`predict_set` when ``X`` is the same.

        The scores are reused only if ``X`` is a NumPy array with exactly the bytes, dtype and
        shape of that call's input (a copy is kept, so changing the array in place is seen) and
        the model and ``label_score`` are the same objects; otherwise they are recomputed. The
        cache is dropped either way: it serves the one ``partial_fit`` after ``predict_set``.
        """
        cache = self.__dict__.pop("_last_scores", None)
        if (
            cache is not None
            and _cacheable(X)
            and cache[0] is self.estimator_
            and cache[1] is self.label_score
            and same_bytes(cache[2], X)
        ):
            return cache[3]
        return self._label_scores(X)

    def __getstate__(self):
        state = dict(super().__getstate__())
        state.pop("_last_scores", None)  # a cache of the last batch, not part of the model
        return state

    def _label_index(self, y):
        """Column of each label in ``classes_`` and whether it is a known class."""
        return class_index(self.classes_, y)

    def _miss_mask(self, y, covered):
        """Rows of the feedback that report a miss: ``~covered`` when ``covered`` is given, else
        the rows of ``y`` holding a miss marker (None, ``pd.NA``, NaN, or ``-1`` / ``"-1"``).
        Errors for a marker on a covered row and for a ``-1`` code that is also a class."""
        missing, code = missing_marks(y)
        if code.any() and hasattr(self, "classes_"):
            is_class = np.zeros_like(code)
            is_class[code] = class_index(self.classes_, y[code])[1]
            if covered is None and is_class.any():
                value = show(y[np.flatnonzero(is_class)[0]])
                raise ValueError(
                    f"{value} marks a missed label in `partial_fit`, but {value} is also a class "
                    "of the wrapped estimator; pass `covered` (False for the misses) so that it "
                    "reads as the class, or encode the classes differently (e.g. with a "
                    "LabelEncoder)."
                )
            code &= ~is_class  # with `covered`, a code that is a class is that label
        marked = missing | code
        if covered is None:
            return marked
        wrong = covered & marked
        if wrong.any():
            i = int(np.flatnonzero(wrong)[0])
            raise ValueError(
                f"Row {i} (0-based) has covered=True but `y` holds the miss marker "
                f"{show(y[i])} there; a covered row must carry its true label (covered=False "
                "reports a miss)."
            )
        return ~covered

    def _finish(self):
        self.threshold_ = float(self.learner_.threshold)
        self.n_rounds_ = getattr(self, "_rounds_before_restart", 0) + self.learner_.n_rounds

    # -- fitting ------------------------------------------------------------------------------
    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X: ArrayLike, y: ArrayLike) -> Self:
        """Start a new stream and replay the labeled rows ``(X, y)`` honestly, in order.

        Each row is served the current set; its true label reaches the learner only if it is in
        that set (otherwise a miss is recorded), exactly as in deployment.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Inputs in stream order, passed untouched to the wrapped classifier (candidate scores
            with ``estimator="precomputed"``).
        y : array-like of shape (n_samples,)
            True labels (column indices with ``"precomputed"``).

        Returns
        -------
        self
        """
        if y is None:
            raise ValueError(
                f"{type(self).__name__} requires y to be passed, but the target y is None: the "
                "replay needs the true labels."
            )
        return self._fit(X, column_or_1d(check_labels(y), warn=True))

    def _fit(self, X, y):
        check_classification_targets(y)
        X = _rows(X)
        n = n_rows(X)
        if n != len(y):
            raise ValueError(f"`X` has {n} rows but `y` has {len(y)} entries; they must be equal.")
        if n == 0:
            raise ValueError("`X` is empty: at least one round is required.")
        self._check_on_drift()
        learner = self._new_learner()
        X_stream, y_stream = self._model_and_stream(X, y)
        true_scores, known = self._true_label_scores(X_stream, y_stream)
        self._start_history()
        thresholds = self._replay(learner, true_scores)
        self.n_misses_ = int(np.sum(~(true_scores >= thresholds) | ~known))
        self._finish()
        return self

    def _model_and_stream(self, X, y):
        """Set the wrapped model (a clone fitted on a random split when it is unfitted) and
        return the rows replayed as the stream, in their order."""
        n = n_rows(X)
        needs_fit = not self._precomputed and not is_fitted(self.estimator)
        if needs_fit:
            idx_train, idx_stream = self._split(n, y)
            idx_stream = np.sort(idx_stream)  # keep the stream order
        else:
            idx_stream = np.arange(n)
        if self.horizon is not None and len(idx_stream) > self.horizon:
            raise ValueError(
                f"`horizon`={self.horizon} is smaller than the number of rounds to replay "
                f"({len(idx_stream)}); pass a larger `horizon` or horizon=None."
            )
        if self._precomputed:
            self._set_model(None, X)
        elif needs_fit:
            model = clone(self.estimator).fit(_safe_indexing(X, idx_train), y[idx_train])
            self._set_model(model, X)
        else:
            self._set_model(self.estimator, X)
        if needs_fit:
            return _safe_indexing(X, idx_stream), y[idx_stream]
        return X, y  # the whole stream, in order: no copy of X

    def _true_label_scores(self, X, y):
        """Each round's true-label score (``-inf`` for a label that is not a class, with a
        warning) and the mask of labels that are classes."""
        S = self._label_scores(X)
        col, known = self._label_index(y)
        if not known.all():
            warn(
                f"{int((~known).sum())} of {len(y)} replayed labels are not classes of the "
                "wrapped estimator (they can never be in a set); they count as misses."
            )
        return np.where(known, S[np.arange(len(y)), col], -np.inf), known

    def _replay(self, learner, true_scores):
        """Published thresholds of the replayed stream; sets ``learner_`` (and, with a drift
        monitor, records its detections and restarts)."""
        if self.monitor_ is None:
            self.learner_ = learner
            return learner.replay(true_scores)
        # "warn"/"ignore": learner.replay as above, the monitor only reads its output
        first = [learner]  # the learner built (and validated) above, then fresh ones
        thresholds, events, self.learner_, self.monitor_ = _replay_monitored(
            true_scores,
            lambda: first.pop() if first else self._new_learner(),
            self._new_monitor,
            self.on_drift == "restart",
        )
        for round_, e_value in events:
            self._record_detection(round_, e_value)
        if self.on_drift == "restart" and events:
            self._rounds_before_restart = events[-1][0]
        return thresholds

    def _split(self, n, y):
        rng = check_random_state(self.random_state)
        try:
            return train_test_split(
                np.arange(n), test_size=self.calib_size, random_state=rng, stratify=y
            )
        except ValueError:  # a class too small to stratify: raised before any draw
            pass
        idx_train, idx_stream = train_test_split(
            np.arange(n), test_size=self.calib_size, random_state=rng
        )
        if len(idx_train) == 0 or len(idx_stream) == 0:  # pragma: no cover - sklearn raises first
            raise ValueError(
                f"Cannot split {n} rows into a fitting part and a stream; pass a fitted classifier "
                "(e.g. sklearn.frozen.FrozenEstimator(model)) or more data."
            )
        return idx_train, idx_stream

    @_fit_context(prefer_skip_nested_validation=False)
    def partial_fit(
        self,
        X: ArrayLike,
        y: ArrayLike,
        classes: ArrayLike | None = None,
        *,
        covered: ArrayLike | None = None,
    ) -> Self:
        """Continue the stream with the user's feedback on the sets just published.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Inputs of the new rounds, in order.
        y : array-like of shape (n_samples,)
            Feedback: the true label when it was in the published set. Without ``covered``, a
            miss is a missing value (None, ``pd.NA``, NaN) or the code ``-1`` (``"-1"`` for
            string labels), so labels of any type can come as an object array or a pandas
            Series with missing entries. With ``covered``, the entries of the missed rows are
            ignored (they may hold the true labels or any placeholder).
        classes : array-like, optional
            Accepted for API compatibility; must equal the wrapped classifier's ``classes_``.
        covered : array-like of bool of shape (n_samples,), optional
            Whether the true label of each row was in its published set: True rows must hold
            that label in ``y`` (no miss marker), False rows are misses. With ``covered``,
            ``-1`` in ``y`` is read as a label when it is a class.

        Returns
        -------
        self

        Raises
        ------
        ValueError
            If a label is reported as observed but was not in the set served with the current
            ``threshold_`` (or is not a class at all), if ``covered`` is not a boolean array of
            one entry per row, if a covered row holds a miss marker, if ``-1`` reports a miss
            without ``covered`` but is also a class, or if ``horizon`` would be exceeded.
        NotFittedError
            If this is the first call, the wrapped classifier is not fitted and the feedback
            reports misses.

        Notes
        -----
        On the first call the published sets are full (``threshold_ = -inf``), so every reply is
        a true label. With an unfitted wrapped classifier the first call is therefore handled
        like :meth:`fit` (fit on a split of the batch, replay the rest).

        The label scores :meth:`predict_set` computed are reused when the next call receives a
        NumPy array with the same bytes (the rows those sets were served for), so the wrapped
        model predicts once per batch; any other input is scored again.

        Examples
        --------
        String labels: pass the coverage of the served sets as ``covered`` (``y`` may then hold
        the true labels everywhere), or mark the misses with missing values in ``y``.

        >>> import pandas as pd
        >>> from sklearn.linear_model import LogisticRegression
        >>> from sklearn_riskcontrol.online import SemiBanditPredictionSet
        >>> rng = np.random.default_rng(0)
        >>> def draw(n):                      # i.i.d. rows with string classes
        ...     X = rng.normal(size=(n, 3))
        ...     y = np.array(["bird", "cat", "dog"])[np.argmax(X + rng.normal(size=(n, 3)), 1)]
        ...     return X, y
        >>> clf = LogisticRegression().fit(*draw(1000))
        >>> X_cal, y_cal = draw(1000)
        >>> sps = SemiBanditPredictionSet(clf, alpha=0.2).fit(X_cal, y_cal)
        >>> X, y = draw(1000)
        >>> sets = sps.predict_set(X)                  # served; the user replies per row
        >>> covered = sets[np.arange(1000), np.searchsorted(sps.classes_, y)]
        >>> misses = sps.n_misses_
        >>> sps = sps.partial_fit(X, y, covered=covered)
        >>> sps.n_rounds_, sps.n_misses_ - misses == int((~covered).sum())
        (2000, True)
        >>> feedback = pd.Series(y).where(covered)     # NaN where the user reported a miss
        >>> same = SemiBanditPredictionSet(clf, alpha=0.2).fit(X_cal, y_cal)
        >>> same.partial_fit(X, feedback).threshold_ == sps.threshold_
        True
        """
        X, y, covered = self._check_feedback(X, y, covered)
        if not hasattr(self, "learner_"):
            first = self._start_stream(X, y, covered)
            if first is not None:  # an unfitted classifier: the batch was handled by `fit`
                return first
        n = len(y)
        self._check_batch(classes, n)
        if n == 0:
            return self
        miss = self._miss_mask(y, covered)
        scores, served = self._feedback_scores(X, y, miss, covered)
        self._record_feedback(scores, miss, served)
        return self

    def _check_feedback(self, X, y, covered):
        """``X`` as rows, ``y`` as a 1-d array of the same length and ``covered`` (if given) as
        a bool array of that length."""
        if y is None:
            raise ValueError(
                f"{type(self).__name__}.partial_fit requires y (the feedback: the true label, or "
                "a miss marker), but the target y is None."
            )
        y = np.asarray(y)
        if y.ndim != 1:  # a column vector warns and is raveled, anything else raises
            y = column_or_1d(y, warn=True)
        X = _rows(X)
        n = n_rows(X)
        if n != len(y):
            raise ValueError(f"`X` has {n} rows but `y` has {len(y)} entries; they must be equal.")
        return X, y, None if covered is None else _check_covered(covered, n)

    def _start_stream(self, X, y, covered):
        """First call: set up the learner, the model and the history. With an unfitted wrapped
        classifier the batch is a labeled stream, handled by :meth:`_fit` (returned)."""
        self._check_on_drift()
        learner = self._new_learner()
        if self._precomputed:
            self._set_model(None, X)
        elif is_fitted(self.estimator):
            self._set_model(self.estimator, X)
        else:
            # The first sets are full (threshold -inf), so every reply is a true label:
            # this batch is a labeled stream, handled by `fit` (split, fit, replay).
            if self._miss_mask(y, covered).any():
                raise NotFittedError(
                    f"The first {type(self).__name__}.partial_fit call fits the unfitted "
                    "`estimator` on its labels, but the feedback reports misses. Pass a fitted "
                    "classifier (e.g. sklearn.frozen.FrozenEstimator(model)) or labeled rows."
                )
            return self._fit(X, check_labels(y))
        self.learner_ = learner
        self.n_misses_ = 0
        self._start_history()
        self._finish()
        return None

    def _check_batch(self, classes, n):
        """``classes`` (if given) equal to the wrapped classifier's; ``n`` rounds fit the horizon."""
        if classes is not None and not np.array_equal(np.unique(classes), self.classes_):
            raise ValueError(
                f"`classes` {np.unique(classes).tolist()} differ from the wrapped classifier's "
                f"classes_ {self.classes_.tolist()}; pass classes=None or the same classes."
            )
        horizon = self.learner_.horizon
        if n and horizon is not None and self.learner_.n_rounds + n > horizon:
            raise ValueError(
                f"`horizon`={horizon} is smaller than the number of rounds seen "
                f"({self.learner_.n_rounds + n}); pass a larger `horizon` or horizon=None."
            )

    def _feedback_scores(self, X, y, miss, covered):
        """The true labels' scores (only those of the observed rows are meaningful) and the
        threshold the sets were served with; errors for feedback that contradicts them."""
        S = self._scores_of_last_sets(X)
        served = self.threshold_
        how = "covered=False" if covered is not None else "None in `y`"
        rows = np.flatnonzero(~miss)  # the entries of missed rows may be anything
        col = np.zeros(len(y), dtype=np.intp)
        col[rows], known = self._label_index(y[rows])
        if not known.all():
            i = int(rows[np.flatnonzero(~known)[0]])
            raise ValueError(
                f"Row {i} (0-based) reports label {show(y[i])}, which is not a class of the "
                f"wrapped estimator, so it cannot have been in the set; report a miss with {how}."
            )
        scores = S[np.arange(len(y)), col]
        outside = ~miss & (scores < served)
        if outside.any():
            i = int(np.flatnonzero(outside)[0])
            raise ValueError(
                f"Inconsistent feedback at row {i} (0-based): label {show(y[i])} was reported as "
                f"observed, but its score {float(scores[i])!r} is below the threshold "
                f"{float(served)!r} of the published set, so it was not in the set. Report a miss "
                f"with {how}."
            )
        return scores, served

    def _record_feedback(self, scores, miss, served):
        """Record the rounds in the learner and the drift monitor (restarting on a detection
        with ``on_drift="restart"``)."""
        n = len(scores)
        rounds_before = self.n_rounds_
        # Every check of the learner's update_batch is done above or holds by construction
        # (finite label scores, none observed below `served`, the horizon), so the rounds are
        # recorded without checking them a second time.
        self.learner_._record_batch(scores, ~miss, served)
        self.n_misses_ += int(miss.sum())
        monitor = self.monitor_
        i = None if monitor is None else monitor.update_batch(miss)
        if i is not None:
            self._record_detection(rounds_before + i + 1, monitor.e_value)
            if self.on_drift == "restart":
                # The rest of this batch was served by the old sets: the fresh learner and
                # monitor start with the next published set.
                self._rounds_before_restart = rounds_before + n
                self.learner_ = self._new_learner()
                monitor.reset()
        self._finish()

    # -- prediction ---------------------------------------------------------------------------
    def predict_set(self, X: ArrayLike) -> BoolArray:
        """Prediction sets at the current threshold: labels with score ``>= threshold_``.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Inputs (candidate scores with ``estimator="precomputed"``).

        Returns
        -------
        ndarray of bool, shape (n_samples, n_classes)
            ``sets[i, j]`` is True iff ``classes_[j]`` is in the set of row ``i``. Before the
            first feedback (a fitted classifier, no :meth:`fit` / :meth:`partial_fit` yet) the
            threshold is ``-inf``: every set holds all labels.
        """
        if not hasattr(self, "learner_"):
            if self._precomputed:
                X = _rows(X)
                return np.ones((n_rows(X), np.shape(X)[1]), dtype=bool)
            if is_fitted(self.estimator) and hasattr(self.estimator, "classes_"):
                return np.ones((n_rows(_rows(X)), len(self.estimator.classes_)), dtype=bool)
            check_is_fitted(self, "learner_")
        S = self._label_scores(X)
        if _cacheable(X):  # partial_fit on the same rows reuses S instead of predicting again
            self._last_scores = (self.estimator_, self.label_score, X.copy(), S)
        return S >= self.threshold_

    def predict(self, X: ArrayLike) -> NDArray[Any]:
        """Predictions of the wrapped classifier (the top candidate with ``"precomputed"``).

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        check_is_fitted(self)
        if self.estimator_ is None:
            return self.classes_[np.argmax(self._label_scores(X), axis=1)]
        return self.estimator_.predict(X)

    def _delegate(self):  # for predict_proba (predict and score are this estimator's own)
        check_is_fitted(self)
        return self.estimator_

    def _delegation_targets(self):
        """The wrapped classifier; none that has a method with ``"precomputed"`` (even for an
        estimator fitted before ``set_params``)."""
        return (None,) if self._precomputed else wrapped_estimator(self)

    def score(self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None) -> float:
        """Coverage: the fraction of rows whose true label is in their prediction set.

        The sets are those :meth:`predict_set` publishes at the current ``threshold_``; the
        stream is not updated (use :meth:`partial_fit` for that). This replaces the accuracy that
        scikit-learn classifiers return, because the sets, not the wrapped classifier's single
        guess, are what this estimator serves; ``accuracy_score(y, est.predict(X))`` still gives
        the classifier's accuracy. Labels that are not classes of the wrapped classifier are
        never covered. The value is a realization on these rows: SPS guarantees, with
        probability at least ``1 - delta``, that every published set has coverage probability
        at least ``1 - alpha`` on i.i.d. rounds, so the coverage of a batch fluctuates around a
        value at least ``1 - alpha``.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Inputs (candidate scores with ``estimator="precomputed"``).
        y : array-like of shape (n_samples,)
            True labels (column indices with ``"precomputed"``).
        sample_weight : array-like of shape (n_samples,), optional
            Weights of the rows (a weighted fraction).

        Returns
        -------
        float
            Coverage in [0, 1].

        Examples
        --------
        >>> from sklearn.datasets import make_classification
        >>> from sklearn.linear_model import LogisticRegression
        >>> from sklearn.model_selection import train_test_split
        >>> from sklearn_riskcontrol.online import SemiBanditPredictionSet
        >>> X, y = make_classification(n_samples=3000, n_classes=3, n_informative=4,
        ...                            random_state=0)
        >>> X_fit, X_rest, y_fit, y_rest = train_test_split(X, y, train_size=1000, random_state=0)
        >>> X_stream, X_new, y_stream, y_new = train_test_split(X_rest, y_rest, train_size=1000,
        ...                                                     random_state=0)
        >>> clf = LogisticRegression().fit(X_fit, y_fit)
        >>> sps = SemiBanditPredictionSet(clf, alpha=0.2).fit(X_stream, y_stream)
        >>> coverage = sps.score(X_new, y_new)
        >>> bool(coverage == sps.predict_set(X_new)[range(1000), y_new].mean())
        True
        """
        check_is_fitted(self)
        y = column_or_1d(check_labels(y), warn=True)
        sets = self.predict_set(X)
        if len(y) != len(sets):
            raise ValueError(
                f"`X` has {len(sets)} rows but `y` has {len(y)} entries; they must be equal."
            )
        if len(y) == 0:
            raise ValueError("`X` is empty: coverage needs at least one row.")
        col, known = self._label_index(y)
        covered = known & sets[np.arange(len(y)), col]
        return float(np.average(covered, weights=sample_weight))
