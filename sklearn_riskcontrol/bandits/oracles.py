"""Scoring back-ends ("oracles"): where the (model, example) scores come from.

Every best-model strategy only ever asks an oracle "score model ``i`` on examples ``J``". Three
back-ends are provided:

- :class:`MatrixOracle`: a precomputed score matrix (leaderboards, simulations), revealed lazily,
  so a strategy never sees a score it did not pay for. NaN may mark cells that are not available.
- :class:`EstimatorOracle`: a list of fitted scikit-learn estimators, a pool ``(X, y)`` and a
  per-example score in [0, 1] (default: accuracy ``1{y_pred == y}`` for classifiers, a scaled
  absolute error for regressors).
- :class:`CallableOracle`: a user function ``score(model_index, example_indices) -> scores``, e.g.
  an LLM call followed by a judge.

Every oracle caches what it returned: a cell is bought (``n_evaluations_``) exactly once, asking
for it again is free. If the back-end raises, nothing of that call is cached and everything bought
before is kept; the strategies use this to stop cleanly and to ``resume()``.
"""

import numpy as np

from .._validation import (
    check_labels,
    check_index,
    check_indices,
    check_returned_scores,
    check_score_matrix,
)

__all__ = [
    "ScoreOracle",
    "MatrixOracle",
    "EstimatorOracle",
    "CallableOracle",
    "as_oracle",
    "ScaledAbsoluteError",
    "resolve_scoring",
]


class ScoreOracle:
    """Base class of the scoring back-ends: a lazily revealed, cached score matrix.

    Subclasses implement ``_fetch(model_index, example_indices) -> scores`` (one score in
    ``[0, 1]`` per requested example, higher = better) and call ``_init_cache(n_models,
    n_examples)`` in their constructor.

    Attributes
    ----------
    shape : tuple of int
        ``(n_models, n_examples)``.
    cached_scores_ : ndarray of shape (n_models, n_examples)
        Scores bought so far; NaN where a cell has not been scored.
    revealed_ : ndarray of bool of shape (n_models, n_examples)
        Cells bought so far.
    n_evaluations_ : int
        Number of cells bought (each counted once, however often it is asked for).
    n_calls_ : int
        Number of calls made to the back-end.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_riskcontrol.bandits import ScoreOracle
    >>> class Parity(ScoreOracle):
    ...     def __init__(self):
    ...         self._init_cache(2, 6)
    ...     def _fetch(self, model_index, example_indices):
    ...         return (example_indices % 2 == model_index).astype(float)
    >>> oracle = Parity()
    >>> oracle.query(1, [1, 2, 3]), oracle.n_evaluations_
    (array([1., 0., 1.]), 3)
    """

    def _init_cache(self, n_models, n_examples):
        self.n_models = int(n_models)
        self.n_examples = int(n_examples)
        self.cached_scores_ = np.full((self.n_models, self.n_examples), np.nan)
        self.revealed_ = np.zeros((self.n_models, self.n_examples), dtype=bool)
        self.n_evaluations_ = 0
        self.n_calls_ = 0

    @property
    def shape(self):
        return (self.n_models, self.n_examples)

    def available_mask(self):
        """Boolean mask of the cells that can be scored, or ``None`` when all can."""
        return None

    def _fetch(self, model_index, example_indices):  # pragma: no cover - abstract
        raise NotImplementedError

    def _buy(self, i, new):
        """Fetch, validate and cache the not yet revealed examples ``new`` of model ``i``."""
        values = self._fetch(i, new)
        self._check_range(values, i, new)
        values = check_returned_scores(values, new.size, i)
        self.n_calls_ += 1
        self.cached_scores_[i, new] = values
        self.revealed_[i, new] = True
        self.n_evaluations_ += new.size

    def _describe(self, i):
        return f"model {i}"

    _range_hint = "the scoring back-end must return scores in [0, 1] (higher = better); rescale them"

    def _check_range(self, values, i, new):
        """Raise, naming the model and the example, if a returned score lies outside [0, 1].

        Other defects (wrong length, NaN, non-numeric) are left to ``check_returned_scores``.
        """
        try:
            arr = np.asarray(values, dtype=float)
        except (TypeError, ValueError):
            return
        if arr.shape != new.shape:
            return
        with np.errstate(invalid="ignore"):
            out = np.flatnonzero((arr < 0.0) | (arr > 1.0))
        if out.size:
            k = int(out[0])
            raise ValueError(
                f"The score of {self._describe(i)} on example {int(new[k])} is {float(arr[k])!r}, "
                f"outside the score range [0, 1] ({out.size} of the {new.size} scores returned "
                f"in this call are); {self._range_hint}."
            )

    def _check_available(self, i, J):
        avail = self.available_mask()
        if avail is not None and J.size and not avail[i, J].all():
            j = int(J[~avail[i, J]][0])
            raise ValueError(
                f"Cell (model {i}, example {j}) is not available in this score matrix (NaN); "
                "request only available cells."
            )

    def query(self, model_index, example_indices):
        """Scores of one model on some examples, buying only the cells not yet cached.

        Parameters
        ----------
        model_index : int
        example_indices : array-like of int

        Returns
        -------
        scores : ndarray of shape (len(example_indices),)
        """
        i = check_index(model_index, "model_index", self.n_models)
        J = check_indices(example_indices, "example_indices", self.n_examples)
        self._check_available(i, J)
        new = np.unique(J[~self.revealed_[i, J]])
        if new.size:
            self._buy(i, new)
        return self.cached_scores_[i, J].copy()

    def query_cells(self, rows, cols):
        """Scores of arbitrary (model, example) cells, one back-end call per distinct model.

        If a call fails, the cells of the models already scored stay bought and cached.
        """
        rows = check_indices(rows, "rows", self.n_models)
        cols = check_indices(cols, "cols", self.n_examples)
        if rows.shape != cols.shape:
            raise ValueError(f"`rows` and `cols` must have the same length; got {rows.size} and {cols.size}.")
        need = ~self.revealed_[rows, cols]
        if need.any():
            r, c = rows[need], cols[need]
            order = np.argsort(r, kind="stable")
            r, c = r[order], c[order]
            starts = np.flatnonzero(np.r_[True, r[1:] != r[:-1]])
            ends = np.r_[starts[1:], r.size]
            for s, e in zip(starts, ends):
                i = int(r[s])
                self._check_available(i, c[s:e])
                self._buy(i, np.unique(c[s:e]))
        return self.cached_scores_[rows, cols].copy()

    def clear_cache(self):
        """Forget every cached score and reset the counters."""
        self._init_cache(self.n_models, self.n_examples)
        return self

    def __repr__(self):
        return (
            f"{type(self).__name__}(n_models={self.n_models}, n_examples={self.n_examples}, "
            f"n_evaluations_={self.n_evaluations_})"
        )


class MatrixOracle(ScoreOracle):
    """A precomputed score matrix, revealed lazily cell by cell.

    Parameters
    ----------
    scores : array-like of shape (n_models, n_examples)
        Scores in ``[0, 1]`` (higher = better), e.g. a leaderboard's correctness matrix.
    missing : {"error", "exclude"}, default="error"
        What a NaN means. ``"error"``: the matrix must be complete. ``"exclude"``: NaN marks a
        cell that is not available (the model was never run on that example); each model's mean
        is then over its available examples and strategies never ask for the missing cells.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_riskcontrol.bandits import MatrixOracle
    >>> oracle = MatrixOracle(np.array([[1.0, 0.0, 1.0], [0.0, 0.0, 1.0]]))
    >>> oracle.query(0, [0, 2])
    array([1., 1.])
    >>> oracle.query(0, [2]), oracle.n_evaluations_      # cached: not bought twice
    (array([1.]), 2)
    """

    def __init__(self, scores, *, missing="error"):
        if missing not in ("error", "exclude"):
            raise ValueError(f"`missing` must be 'error' or 'exclude'; got {missing!r}.")
        self.missing = missing
        hint = (
            "If some cells are genuinely not available, pass MatrixOracle(scores, "
            "missing='exclude') so that each model's mean is over its available examples."
        )
        self.scores = check_score_matrix(
            scores, "scores", allow_nan=(missing == "exclude"), nan_hint=hint
        )
        self._avail = None
        if missing == "exclude":
            avail = ~np.isnan(self.scores)
            if not avail.any(axis=1).all():
                i = int(np.flatnonzero(~avail.any(axis=1))[0])
                raise ValueError(f"`scores` row {i} has no available cell (all NaN); drop that model.")
            self._avail = None if avail.all() else avail
        self._init_cache(*self.scores.shape)

    def available_mask(self):
        return self._avail

    def _fetch(self, model_index, example_indices):
        return self.scores[model_index, example_indices]

    def query_cells(self, rows, cols):
        rows = check_indices(rows, "rows", self.n_models)
        cols = check_indices(cols, "cols", self.n_examples)
        if rows.shape != cols.shape:
            raise ValueError(f"`rows` and `cols` must have the same length; got {rows.size} and {cols.size}.")
        if self._avail is not None and not self._avail[rows, cols].all():
            k = int(np.flatnonzero(~self._avail[rows, cols])[0])
            raise ValueError(
                f"Cell (model {rows[k]}, example {cols[k]}) is not available in this score matrix "
                "(NaN); request only available cells."
            )
        need = ~self.revealed_[rows, cols]
        if need.any():
            r, c = rows[need], cols[need]
            flat = np.unique(r * self.n_examples + c)
            r, c = np.divmod(flat, self.n_examples)
            self.cached_scores_[r, c] = self.scores[r, c]
            self.revealed_[r, c] = True
            self.n_evaluations_ += flat.size
            self.n_calls_ += 1
        return self.cached_scores_[rows, cols].copy()

    def true_means(self):
        """Exact mean score of every model (over its available examples); for simulations."""
        return np.nanmean(self.scores, axis=1)


class CallableOracle(ScoreOracle):
    """Scores from a user function, e.g. an LLM call followed by a judge.

    Parameters
    ----------
    score : callable
        ``score(model_index, example_indices) -> scores``: ``model_index`` is an int,
        ``example_indices`` a 1-d int array of distinct examples not scored before for that
        model; it returns one score in ``[0, 1]`` per example (higher = better). If it raises,
        the strategy stops, keeps every score already bought and can ``resume()``.
    n_models, n_examples : int
        Size of the (virtual) score matrix.

    Examples
    --------
    >>> from sklearn_riskcontrol.bandits import CallableOracle
    >>> def score(model_index, example_indices):
    ...     return (example_indices % (model_index + 2) == 0).astype(float)
    >>> oracle = CallableOracle(score, n_models=3, n_examples=10)
    >>> oracle.query(1, [0, 1, 3])
    array([1., 0., 1.])
    """

    def __init__(self, score, n_models, n_examples):
        if not callable(score):
            raise TypeError(f"`score` must be callable score(model_index, example_indices); got {score!r}.")
        self.score = score
        self._init_cache(_positive_int(n_models, "n_models"), _positive_int(n_examples, "n_examples"))

    def _fetch(self, model_index, example_indices):
        return self.score(model_index, example_indices)


def _positive_int(value, name):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"`{name}` must be a positive integer; got {value!r}.")
    if value < 1:
        raise ValueError(f"`{name}` must be a positive integer; got {value}.")
    return int(value)


def _accuracy(y_true, y_pred):
    return (np.asarray(y_true) == np.asarray(y_pred)).astype(float)


class ScaledAbsoluteError:
    """Bounded per-example regression score ``1 - min(1, |y_true - y_pred| / scale)``.

    Higher is better; 1 is an exact prediction, 0 an error of at least ``scale``. The default
    score of :class:`EstimatorOracle` and :class:`BestModelSelector` for regressors, with
    ``scale`` the range ``max(y) - min(y)`` of the pool's labels: the scores are then a fixed
    function of the pool (known before any evaluation), so every guarantee about the pool mean
    of this score holds, and models are ranked by their mean absolute error (errors larger than
    the label range, rare, are clipped). The mean score ``s`` of a model converts back to a
    clipped mean absolute error ``(1 - s) * scale``.

    Parameters
    ----------
    scale : float > 0
        Error at which the score reaches 0, in the units of ``y``.

    Examples
    --------
    >>> from sklearn_riskcontrol.bandits.oracles import ScaledAbsoluteError
    >>> ScaledAbsoluteError(10.0)([0.0, 0.0, 0.0], [1.0, -5.0, 30.0])
    array([0.9, 0.5, 0. ])
    """

    def __init__(self, scale):
        self.scale = float(scale)

    def __call__(self, y_true, y_pred):
        y_true = np.asarray(y_true, dtype=float)
        err = np.abs(y_true - np.asarray(y_pred, dtype=float).reshape(y_true.shape))
        return 1.0 - np.minimum(1.0, err / self.scale)

    def __repr__(self):
        return f"ScaledAbsoluteError(scale={self.scale:g})"


_SCORING_STRINGS = (
    "'accuracy' (1{y_pred == y}, the default for classifiers) and 'absolute_error' "
    "(1 - min(1, |y - y_pred| / (max(y) - min(y))), the default for regressors)"
)


def resolve_scoring(scoring, estimators, y, response_method="predict"):
    """Return the per-example score ``scoring(y_true, y_pred) -> array in [0, 1]`` to use.

    ``None`` picks by estimator type: ``"accuracy"`` for classifiers, ``"absolute_error"`` for
    regressors (by the type of ``y`` when the candidates declare no type). Strings name the
    bounded per-example scores; a callable is returned unchanged.

    Examples
    --------
    >>> from sklearn.linear_model import LinearRegression
    >>> from sklearn_riskcontrol.bandits.oracles import resolve_scoring
    >>> resolve_scoring(None, [LinearRegression()], [1.0, 3.0, 5.0])
    ScaledAbsoluteError(scale=4)
    """
    from sklearn.base import is_classifier, is_regressor
    from sklearn.utils.multiclass import type_of_target

    if callable(scoring):
        return scoring
    if scoring is not None and not isinstance(scoring, str):
        raise TypeError(
            f"`scoring` must be None, a string or a callable (y_true, y_pred) -> scores in [0, 1]; "
            f"got {scoring!r}."
        )
    if response_method != "predict":
        raise ValueError(
            f"`scoring`={scoring!r} compares y with predict's output, so it needs "
            "response_method='predict'; pass a per-example callable `scoring(y_true, y_pred)` for "
            "other response methods."
        )
    if scoring is None:
        clf = [is_classifier(e) for e in estimators]
        reg = [is_regressor(e) for e in estimators]
        if any(clf) and any(reg):
            raise ValueError(
                "The candidates mix classifiers and regressors, so there is no common default "
                f"score; pass `scoring` (the accepted strings are {_SCORING_STRINGS}) or a "
                "callable scoring(y_true, y_pred) -> scores in [0, 1]."
            )
        if any(reg) or (not any(clf) and type_of_target(y) == "continuous"):
            scoring = "absolute_error"
        else:
            scoring = "accuracy"
    if scoring == "accuracy":
        return _accuracy
    if scoring == "absolute_error":
        y = np.asarray(y)
        if y.dtype.kind not in "biuf":
            raise ValueError(
                f"scoring='absolute_error' needs numeric targets; `y` has dtype {y.dtype}. Use "
                "scoring='accuracy' for class labels."
            )
        scale = float(np.ptp(y)) if y.size else 0.0
        if not scale > 0:
            raise ValueError(
                "scoring='absolute_error' scales errors by the range of `y`, but every label "
                "equals the same value; pass a callable `scoring` with an explicit scale."
            )
        return ScaledAbsoluteError(scale)
    raise ValueError(
        f"`scoring`={scoring!r} is not supported: the strategies need a bounded per-example "
        f"score in [0, 1], and the accepted strings are {_SCORING_STRINGS}. scikit-learn scorers "
        "such as 'neg_mean_absolute_error', 'r2' or 'roc_auc' are aggregates over a data set "
        "with no bounded per-example version; pass a callable scoring(y_true, y_pred) -> scores "
        "in [0, 1] instead."
    )


class EstimatorOracle(ScoreOracle):
    """Scores of already fitted scikit-learn estimators on a pool of labelled examples.

    Parameters
    ----------
    estimators : list of fitted estimators
        The candidate models (never refitted).
    X : array-like or DataFrame of shape (n_examples, n_features)
    y : array-like of shape (n_examples,)
    scoring : callable, {"accuracy", "absolute_error"} or None, default=None
        Per-example score ``scoring(y_true, y_pred) -> array in [0, 1]`` (higher = better); a
        score outside [0, 1] raises a ``ValueError`` naming the model and the example.
        ``"accuracy"`` is ``1{y_pred == y_true}``; ``"absolute_error"`` is
        ``1 - min(1, |y_true - y_pred| / (max(y) - min(y)))`` (:class:`ScaledAbsoluteError`).
        ``None`` picks ``"accuracy"`` for classifiers and ``"absolute_error"`` for regressors.
        To score with a risk from :func:`~sklearn_riskcontrol.make_risk`, pass
        ``lambda yt, yp: 1 - risk(yt, yp)``.
    response_method : {"predict", "predict_proba", "decision_function"}, default="predict"
        Method whose output is passed to ``scoring`` as ``y_pred`` (the strings and the default
        need ``"predict"``).

    Attributes
    ----------
    scoring_ : callable
        The per-example score used (``scoring`` resolved).

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> from sklearn_riskcontrol.bandits import EstimatorOracle
    >>> from sklearn.model_selection import train_test_split
    >>> X, y = make_classification(200, random_state=0)
    >>> X_fit, X_pool, y_fit, y_pool = train_test_split(X, y, test_size=0.5, random_state=0)
    >>> models = [LogisticRegression().fit(X_fit, y_fit),
    ...           DecisionTreeClassifier(random_state=0).fit(X_fit, y_fit)]
    >>> oracle = EstimatorOracle(models, X_pool, y_pool)   # default score: accuracy
    >>> oracle.shape
    (2, 100)
    >>> oracle.query(0, [0, 1, 2]).shape
    (3,)
    """

    def __init__(self, estimators, X, y, *, scoring=None, response_method="predict"):
        from sklearn.utils.validation import check_is_fitted

        estimators = list(estimators)
        if not estimators:
            raise ValueError("`estimators` is empty; pass at least one fitted estimator.")
        for k, est in enumerate(estimators):
            if not hasattr(est, response_method):
                raise TypeError(f"estimators[{k}] ({type(est).__name__}) has no method {response_method!r}.")
            try:
                check_is_fitted(est)
            except Exception as exc:  # NotFittedError, or TypeError for non-estimators
                raise type(exc)(
                    f"estimators[{k}] ({type(est).__name__}) is not fitted; the candidates must be "
                    "fitted models (they are never refitted)."
                ) from None
        n = _num_samples(X)
        y = check_labels(y)
        if y.ndim != 1 and not (y.ndim == 2 and y.shape[1] == 1):
            raise ValueError(f"`y` must be 1-d; got shape {y.shape}.")
        y = y.ravel()
        if y.shape[0] != n:
            raise ValueError(f"Mismatched lengths: `X` has {n} rows, `y` has {y.shape[0]}; they must be equal.")
        if n == 0:
            raise ValueError("`X` is empty: at least one example is required.")
        self.estimators = estimators
        self.X = X
        self.y = y
        self.scoring = scoring
        self.response_method = response_method
        self.scoring_ = resolve_scoring(scoring, estimators, y, response_method)
        self._init_cache(len(estimators), n)

    def _describe(self, i):
        return f"estimators[{i}] ({type(self.estimators[i]).__name__})"

    _range_hint = (
        "`scoring` must return per-example scores in [0, 1] (higher = better); rescale it, "
        "e.g. 1 - min(1, |y - y_pred| / scale), or use scoring='absolute_error'"
    )

    def _fetch(self, model_index, example_indices):
        from sklearn.utils import _safe_indexing

        Xj = _safe_indexing(self.X, example_indices)
        y_pred = getattr(self.estimators[model_index], self.response_method)(Xj)
        return self.scoring_(self.y[example_indices], y_pred)


def _num_samples(X):
    from sklearn.utils.validation import _num_samples as n_samples

    try:
        return int(n_samples(X))
    except TypeError:
        raise TypeError(f"`X` must be array-like with one row per example; got {type(X).__name__}.") from None


def as_oracle(scores, name="scores"):
    """Return ``scores`` as a :class:`ScoreOracle` (a full score matrix becomes a MatrixOracle).

    Examples
    --------
    >>> from sklearn_riskcontrol.bandits import as_oracle
    >>> as_oracle([[1.0, 0.0], [0.0, 0.0]])
    MatrixOracle(n_models=2, n_examples=2, n_evaluations_=0)
    """
    if isinstance(scores, ScoreOracle):
        return scores
    if callable(scores) and not hasattr(scores, "shape"):
        raise TypeError(
            f"`{name}` is a function; wrap it as CallableOracle(score, n_models=..., "
            "n_examples=...) so that the size of the score matrix is known."
        )
    return MatrixOracle(scores)
