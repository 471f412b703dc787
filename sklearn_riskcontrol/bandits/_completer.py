"""Matrix completion of score matrices as a scikit-learn transformer."""

from __future__ import annotations

from numbers import Integral, Real
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike
from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin, _fit_context
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from .._validation import RANDOM_STATE, check_random_state
from .lowrank import fit_logistic_factors, fit_model_factors, select_rank_cv, sigmoid
from .._typing import FloatArray, RandomStateLike

if TYPE_CHECKING:
    from typing_extensions import Self  # typing.Self: Python >= 3.11

__all__ = ["LowRankScoreCompleter"]


class LowRankScoreCompleter(OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    """Fill in the missing cells (NaN) of a model x example score matrix with a low-rank model.

    ``fit`` learns example factors (one row per model, one column per example) by the
    alternating Newton solver of :func:`~sklearn_riskcontrol.bandits.lowrank.fit_logistic_factors`;
    ``transform`` fits, for each row it is given, the model factors with the example factors
    frozen (an independent ridge regression per row on its observed cells) and returns the matrix
    with every NaN replaced by the prediction. Observed cells are returned unchanged. A fitted
    completer can be passed as ``side_scores`` to :class:`PULSE` to reuse its example factors.

    Parameters
    ----------
    rank : int or "cv", default=8
        Rank of the factorization. ``"cv"``: chosen in ``fit`` among ``(1, 2, 4, 8, 16)``
        (ranks ``>= min(X.shape)`` dropped) by 5-fold cross-validation over the observed cells
        with the one-standard-error rule (see
        :func:`~sklearn_riskcontrol.bandits.lowrank.select_rank_cv`; 25 extra fits).
    loss : {"auto", "logistic", "squared"}, default="auto"
        ``"logistic"``: scores in [0, 1] (binary, or fractional targets) predicted as
        ``sigmoid(u_i . v_j + a_i + b_j)``; ``"squared"``: ridge alternating least squares
        (any real scores). ``"auto"`` picks ``"logistic"`` when every observed score lies in
        [0, 1] and ``"squared"`` otherwise.
    ridge : float, default=1.0
        Ridge penalty on the factors and biases.
    biases : bool, default=True
        Fit a bias per model and per example.
    max_iter : int, default=100
        Maximum alternating sweeps in ``fit``.
    tol : float, default=1e-4
        Relative decrease of the objective below which ``fit`` stops.
    random_state : int, RandomState, numpy.random.Generator or None, default=None

    Attributes
    ----------
    factorization_ : LowRankFactorization
        The fitted model of the training matrix.
    example_factors_ : ndarray of shape (n_examples, rank)
    example_bias_ : ndarray of shape (n_examples,)
    rank_ : int
        The rank used (``rank``, or the one chosen by cross-validation).
    rank_cv_ : RankCV or None
        The cross-validation result when ``rank="cv"`` (``cv_error``, ``cv_se`` per candidate).
    loss_ : str
        The loss used.
    n_iter_ : int
        Alternating sweeps performed.
    n_features_in_ : int
        Number of examples (columns).
    feature_names_in_ : ndarray of str
        Column names, when fitted on a DataFrame with string column names.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_riskcontrol.bandits import LowRankScoreCompleter
    >>> rng = np.random.default_rng(0)
    >>> P = 1 / (1 + np.exp(-np.add.outer(rng.normal(size=80), rng.normal(size=120))))
    >>> S = (rng.uniform(size=P.shape) < P).astype(float)
    >>> S[rng.uniform(size=S.shape) < 0.6] = np.nan
    >>> filled = LowRankScoreCompleter(rank=1, random_state=0).fit_transform(S)
    >>> bool(np.isnan(filled).any()), bool(np.abs(filled - P)[np.isnan(S)].mean() < 0.15)
    (False, True)
    >>> LowRankScoreCompleter(rank="cv", random_state=0).fit(S).rank_
    1
    """

    _parameter_constraints = {
        "rank": [Interval(Integral, 0, None, closed="left"), StrOptions({"cv"})],
        "loss": [StrOptions({"auto", "logistic", "squared"})],
        "ridge": [Interval(Real, 0, None, closed="neither")],
        "biases": ["boolean"],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "random_state": RANDOM_STATE,
    }

    def __init__(
        self,
        rank: int | str = 8,
        *,
        loss: str = "auto",
        ridge: float = 1.0,
        biases: bool = True,
        max_iter: int = 100,
        tol: float = 1e-4,
        random_state: RandomStateLike = None,
    ) -> None:
        self.rank = rank
        self.loss = loss
        self.ridge = ridge
        self.biases = biases
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state

    def _resolve_loss(self, X):
        if self.loss != "auto":
            return self.loss
        obs = X[~np.isnan(X)]
        return "logistic" if obs.size and obs.min() >= 0 and obs.max() <= 1 else "squared"

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: ArrayLike, y: None = None) -> Self:
        """Fit the low-rank model on a score matrix.

        Parameters
        ----------
        X : array-like of shape (n_models, n_examples)
            Scores; NaN marks a missing cell.
        y : None
            Ignored.

        Returns
        -------
        self
        """
        X = validate_data(self, X, ensure_all_finite="allow-nan", dtype=float)
        if np.isnan(X).all():
            raise ValueError("`X` has no observed cell (all NaN); nothing to fit.")
        self.loss_ = self._resolve_loss(X)
        rank, random_state, self.rank_cv_ = self.rank, self.random_state, None
        if self.rank == "cv":
            random_state = check_random_state(self.random_state)  # one stream: folds, then fit
            self.rank_cv_ = select_rank_cv(
                X, ridge=self.ridge, biases=self.biases, loss=self.loss_, max_iter=self.max_iter,
                tol=self.tol, random_state=random_state,
            )
            rank = self.rank_cv_.rank
        self.rank_ = int(rank)
        self.factorization_ = fit_logistic_factors(
            X, rank=rank, ridge=self.ridge, biases=self.biases, loss=self.loss_,
            max_iter=self.max_iter, tol=self.tol, random_state=random_state,
        )
        self.example_factors_ = self.factorization_.example_factors
        self.example_bias_ = self.factorization_.example_bias
        self.n_iter_ = int(self.factorization_.n_iter)
        return self

    def predict_scores(self, X: ArrayLike) -> FloatArray:
        """Predicted score of every cell (observed ones included) for the rows of ``X``.

        Parameters
        ----------
        X : array-like of shape (n_models, n_examples)
            Scores of (possibly new) models on the fitted examples; NaN marks a missing cell.

        Returns
        -------
        scores : ndarray of shape (n_models, n_examples)
        """
        check_is_fitted(self)
        X = validate_data(self, X, ensure_all_finite="allow-nan", dtype=float, reset=False)
        return self._predict(X)

    def _predict(self, X):
        if self.loss_ == "logistic":
            obs = X[~np.isnan(X)]
            if obs.size and (obs.min() < 0 or obs.max() > 1):
                raise ValueError(
                    "`X` must lie in [0, 1] for the logistic model this completer was fitted with."
                )
        U, a = fit_model_factors(
            X, self.example_factors_, self.example_bias_, ridge=self.ridge, biases=self.biases,
            loss=self.loss_,
        )
        eta = U @ self.example_factors_.T + a[:, None] + self.example_bias_[None, :]
        return sigmoid(eta) if self.loss_ == "logistic" else eta

    def transform(self, X: ArrayLike) -> FloatArray:
        """Return ``X`` with every NaN replaced by its predicted score.

        Parameters
        ----------
        X : array-like of shape (n_models, n_examples)

        Returns
        -------
        X_filled : ndarray of shape (n_models, n_examples)
        """
        check_is_fitted(self)
        X = validate_data(self, X, ensure_all_finite="allow-nan", dtype=float, reset=False)
        return np.where(np.isnan(X), self._predict(X), X)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        return tags
