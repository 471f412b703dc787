"""Stand-in models and a scorer shared by several test modules (module level, so they pickle)."""

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin


class FlipModel(ClassifierMixin, BaseEstimator):
    """Predicts the true label X[:, 0], wrong exactly where X[:, col] < error: with a uniform
    column, a zero-one risk of ``error`` known in advance. ``fit(None)`` is allowed."""

    def __init__(self, col=2, error=0.1):
        self.col = col
        self.error = error

    def fit(self, X, y=None):
        self.classes_ = np.array([0, 1])
        if X is not None:
            self.n_features_in_ = np.asarray(X).shape[1]
        return self

    def predict(self, X):
        X = np.asarray(X)
        truth = X[:, 0].astype(int)
        return np.where(X[:, self.col] < self.error, 1 - truth, truth)


class ZeroModel:
    """A fitted stand-in model that always predicts 0, so the 0-1 risk of a row is its label."""

    def predict(self, X):
        return np.zeros(np.asarray(X).shape[0], dtype=int)


def within_one(y_true, y_pred):
    """Per-example score of a regressor: 1 where the prediction is within 1 of the truth."""
    return (np.abs(np.asarray(y_true) - np.asarray(y_pred)) < 1.0).astype(float)
