"""Labels of the rows that wrapped models see: which rows are labeled, whether ``y`` holds
classes or regression targets, and what an auto-evaluator says about rows.

Shared by the SCoRE and R-AutoEval+ estimators (scikit-learn's semi-supervised convention: ``-1``
marks an unlabeled row for classes, NaN for regression).
"""

import numpy as np

from ._wrapping import chunked_call, tags_or_none

__all__ = [
    "missing_marks",
    "unlabeled_mask",
    "is_classification",
    "labeled_and_unlabeled",
    "raw_judge_labels",
    "class_index",
]


def _is_float_array(y):
    return y.dtype.kind == "f"


def missing_marks(y):
    """Entries of a 1-d ``y`` that are missing values (None, ``pd.NA``, NaN) and entries equal
    to the code ``-1`` / ``"-1"``, as two boolean masks (the code marks a row without a label
    for classes, unless ``-1`` is itself a class: the callers decide)."""
    kind = y.dtype.kind
    missing = np.zeros(y.shape, dtype=bool)
    code = np.zeros(y.shape, dtype=bool)
    if kind == "O":
        import pandas as pd

        missing = np.asarray(pd.isna(y), dtype=bool)
        rest = y[~missing]  # pd.NA == -1 is pd.NA, which has no truth value
        code[~missing] = (rest == -1) | (rest == "-1")
    elif kind in "iuf":
        code = y == -1
        if kind == "f":
            missing = np.isnan(y)
    elif kind == "c":  # complex: only NaN can mark anything
        missing = np.isnan(y)
    elif kind in "US":
        code = y == "-1"
    return missing, code


def unlabeled_mask(y, classification):
    """Rows without a label: NaN (regression), -1 / "-1" / NaN (classification).

    In an object ``y`` (pandas nullable or mixed columns) every missing value that pandas
    recognises (None, NaN, ``pd.NA``) marks an unlabeled row, like NaN in a float ``y``.
    """
    missing, code = missing_marks(y)
    return missing | code if classification else missing


def is_classification(model, y):
    """Whether ``y`` holds classes (``-1`` marks unlabeled rows) rather than regression targets.

    Decided by the wrapped model's type when it says (scikit-learn tags, ``classes_``), else by
    ``y``: floats are regression targets (NaN = unlabeled), anything else classes.
    """
    tags = tags_or_none(model)
    kind = None if tags is None else tags.estimator_type
    if kind == "classifier" or hasattr(model, "classes_"):
        return True
    if kind == "regressor":
        return False
    return not _is_float_array(y)


def labeled_and_unlabeled(y, classification, need):
    """Indices of the labeled and of the unlabeled rows of ``y`` (``-1`` / NaN marks); an error
    saying ``need`` when no row is labeled."""
    unlabeled = unlabeled_mask(y, classification)
    idx_lab, idx_unl = np.flatnonzero(~unlabeled), np.flatnonzero(unlabeled)
    if idx_lab.size == 0:
        raise ValueError(
            f"`y` has no labeled row (all {len(y)} are marked unlabeled with "
            f"{'-1/NaN' if classification else 'NaN'}): {need}."
        )
    return idx_lab, idx_unl


def raw_judge_labels(judge, X, n_jobs):
    """What the auto-evaluator (a fitted model or a callable) says about the rows of ``X``."""
    try:
        if hasattr(judge, "predict"):
            labels = chunked_call(judge.predict, X, n_jobs)
        else:
            labels = judge(X)
    except Exception as exc:
        raise ValueError(
            f"The autoevaluator could not label the rows ({type(exc).__name__}: {exc}). It "
            "must be a fitted model with predict, or a callable X -> one label per row."
        ) from exc
    return np.asarray(labels)


def class_index(classes, y):
    """Column of each label of ``y`` in ``classes`` (a classifier's ``classes_``, any order)
    and whether it is one of them (where it is not, the column is only a valid index)."""
    classes, y = np.asarray(classes), np.asarray(y)
    try:
        order = np.argsort(classes, kind="stable")  # identity for scikit-learn's sorted classes_
        pos = np.minimum(np.searchsorted(classes[order], y), len(classes) - 1)
    except TypeError:  # labels that do not compare with the classes (mixed types)
        known = np.array([np.any(classes == v) for v in y], dtype=bool)
        idx = [int(np.flatnonzero(classes == v)[0]) if k else 0 for v, k in zip(y, known)]
        return np.array(idx, dtype=np.intp), known
    idx = order[pos]
    return idx, np.asarray(classes[idx] == y, dtype=bool)
