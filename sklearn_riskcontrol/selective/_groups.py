"""Per-group guarantees of the selective estimators (``groups=``): group labels of rows, the
calibration rows of each group, and the messages about groups that cannot deploy.

Two constructions, one per kind of guarantee:

* SCoRE (:class:`SCoREMDR`, :class:`SCoRESDR`, control in expectation): Mondrian calibration. A
  test row of group ``g`` is decided by the one-group estimator restricted to the calibration
  rows of group ``g`` (:func:`group_view`), on the test rows of group ``g`` only.
* Concentration (:class:`ConcentrationMDR`, :class:`ConcentrationSDR`, PAC): one threshold per
  group, each at the Šidák level :func:`sidak_level` so that the family-wise error over all
  groups is at most ``delta``.
"""

import numpy as np
from sklearn.utils import _safe_indexing
from sklearn.utils._param_validation import StrOptions

from .._labels import class_index, missing_marks
from .._validation import show, warn
from .._wrapping import indexable_rows, n_rows, tags_or_none
from ..evalues.testing import at_most
from ..evalues.ltt import zero_loss_count

__all__ = [
    "GROUPS_CONSTRAINT",
    "by_group",
    "check_groups_inputs",
    "describe_groups",
    "fit_groups",
    "group_codes",
    "group_labels",
    "group_view",
    "min_rows_for_budget",
    "min_rows_for_pvalue",
    "row_group_codes",
    "sidak_level",
]

#: ``_parameter_constraints`` entry of ``groups``.
GROUPS_CONSTRAINT = [StrOptions({"predicted_class"}), callable, None]

#: Fitted attributes that only exist with ``groups`` (removed by a refit without groups).
GROUP_ATTRIBUTES = ("groups_", "group_n_calibration_", "group_thresholds_", "group_results_",
                    "group_delta_", "_cal_group_codes", "_group_rngs", "_unlabeled_group_codes")

# At most this many groups are named in a message (the rest are counted).
_MAX_NAMED = 12


def check_groups_inputs(est, shift_weights, X_target=None):
    """Raise if ``groups`` is combined with covariate-shift weights (not supported)."""
    if est.groups is None:
        return
    shift = [name for name, value in (
        ("shift_weights", shift_weights), ("X_target", X_target),
        ("weight_estimator", getattr(est, "weight_estimator", None))) if value is not None]
    if shift:
        raise ValueError(
            f"{type(est).__name__}(groups=...) does not support covariate shift, but "
            f"{', '.join(f'`{s}`' for s in shift)} {'was' if len(shift) == 1 else 'were'} given: "
            "the per-group guarantee needs calibration and test rows of a group to be "
            "exchangeable. Drop the covariate-shift weights, or use groups=None."
        )


def group_labels(est, X):
    """One group label per row of ``X``: the wrapped model's prediction
    (``groups="predicted_class"``) or the user's ``groups(X)``, checked."""
    n = n_rows(X)
    rule = est.groups
    if n == 0:
        return np.zeros(0)
    if isinstance(rule, str):  # "predicted_class"
        model = est.estimator_
        tags = tags_or_none(model)
        kind = None if tags is None else tags.estimator_type
        if not (kind == "classifier" or hasattr(model, "classes_")):
            raise ValueError(
                f"groups='predicted_class' needs a classifier (the group of a row is the class "
                f"the model predicts), but the wrapped {type(model).__name__} is not one (no "
                "classifier tag, no `classes_`). For a regressor pass a callable X -> one group "
                "label per row, e.g. bins of the prediction: "
                "groups=lambda X: np.digitize(model.predict(X), edges)."
            )
        labels = np.asarray(est._predict(X))
        where = "the predicted classes"
    else:
        labels = np.asarray(rule(X))
        where = "`groups(X)`"
    if labels.ndim != 1 or labels.shape[0] != n:
        raise ValueError(
            f"{where} must be a 1-d array with one group label per row: {n} rows gave an array "
            f"of shape {labels.shape}. Return e.g. np.asarray(labels).ravel() from the callable."
        )
    missing, _ = missing_marks(labels)
    if missing.any():
        i = int(np.flatnonzero(missing)[0])
        raise ValueError(
            f"{where} gave a missing group label (NaN or None) for row {i}: every row needs a "
            "group. Map missing values to a group of their own (e.g. 'missing')."
        )
    return labels


def _clear_group_attributes(est):
    for name in GROUP_ATTRIBUTES:
        if name in est.__dict__:
            delattr(est, name)


def fit_groups(est, X_cal):
    """Set ``groups_`` (sorted labels seen in calibration), ``group_n_calibration_`` and the
    group code of every calibration row; remove them when ``groups`` is None."""
    _clear_group_attributes(est)
    if est.groups is None:
        return
    labels = group_labels(est, X_cal)
    try:
        groups, codes, counts = np.unique(labels, return_inverse=True, return_counts=True)
    except TypeError:
        raise ValueError(
            "The group labels must be comparable with each other (all numbers or all strings) "
            f"to be sorted; got {show(sorted({type(v).__name__ for v in labels.tolist()}))}."
        ) from None
    est.groups_ = groups
    est.group_n_calibration_ = counts.astype(np.intp)
    est._cal_group_codes = codes.ravel().astype(np.intp)


def row_group_codes(est, X, labels=None):
    """Index in ``groups_`` of the group of each row of ``X`` (-1 for a group not seen in
    calibration, with one warning naming those groups: their rows abstain)."""
    if labels is None:
        labels = group_labels(est, X)
    if labels.shape[0] == 0:
        return np.zeros(0, dtype=np.intp)
    codes, known = _codes(est.groups_, labels)
    if not known.all():
        unseen, counts = _unique_counts(labels[~known])
        warn(
            f"{type(est).__name__}: {_named(unseen, counts, 'test row')} "
            f"{'is' if len(unseen) == 1 else 'are'} in no group seen in calibration (fit saw "
            f"{_list(est.groups_)}), so these rows abstain (never deployed). Calibrate on "
            "rows of every group you will decide on, or map new groups to known ones in the "
            "`groups` callable."
        )
    return np.where(known, codes, -1)


def group_codes(groups, labels):
    """Index of each label in the sorted ``groups`` (-1 where it is none of them)."""
    codes, known = _codes(groups, labels)
    return np.where(known, codes, -1)


def _codes(groups, labels):
    try:
        idx, known = class_index(groups, labels)
    except TypeError:
        known = np.zeros(labels.shape[0], dtype=bool)
        idx = np.zeros(labels.shape[0], dtype=np.intp)
    return np.asarray(idx, dtype=np.intp), np.asarray(known, dtype=bool)


def _unique_counts(labels):
    try:
        return np.unique(labels, return_counts=True)
    except TypeError:  # labels of mixed types: first-seen order
        seen = {}
        for v in labels.tolist():
            seen[v] = seen.get(v, 0) + 1
        return np.array(list(seen), dtype=object), np.array(list(seen.values()))


def group_view(est, k):
    """``est`` restricted to the calibration rows of group ``k`` and without groups: what a
    one-group estimator fitted on those rows would hold. Shares everything else (the wrapped
    models, the parameters), and stays silent about deploying nothing (the caller warns once)."""
    view = type(est).__new__(type(est))
    view.__dict__.update(est.__dict__)
    rows = est._cal_group_codes == k
    view.groups = None
    view.cal_risks_ = est.cal_risks_[rows]
    view.cal_scores_ = est.cal_scores_[rows]
    view.n_calibration_ = int(np.count_nonzero(rows))
    view._silent = True
    rngs = est.__dict__.get("_group_rngs")
    if rngs is not None:
        view._boosting_rng = rngs[k]
    return view


def by_group(est, X, method, fill, dtype=float):
    """``method`` of each group's :func:`group_view` on the rows of ``X`` of that group, put
    back in row order; rows of groups unseen in calibration get ``fill``."""
    X = indexable_rows(X)
    codes = row_group_codes(est, X)
    out = np.full(codes.shape[0], fill, dtype=dtype)
    for k in np.unique(codes[codes >= 0]):
        rows = np.flatnonzero(codes == k)
        out[rows] = getattr(group_view(est, k), method)(_safe_indexing(X, rows))
    return out


def sidak_level(delta, n_groups):
    """Šidák level ``1 - (1 - delta) ** (1 / n_groups)`` of each of ``n_groups`` independent
    tests whose family-wise error must be at most ``delta`` (``delta`` itself for one group)."""
    if n_groups <= 1:
        return float(delta)
    return float(-np.expm1(np.log1p(-delta) / n_groups))


def min_rows_for_pvalue(bound, target, alpha, level):
    """Fewest calibration rows with which ``bound`` can certify anything at ``level`` (every
    loss 0, every row below the threshold), or None when that depends on more than the count
    (betting p-values, a judge). A necessary condition: no threshold gets more than ``level``."""
    if bound == "rademacher":
        # the slack alone, 3 sqrt(log(k / delta) / (2 n)), must not exceed alpha
        k = 2.0 if target == "mdr" else 4.0
        return int(np.ceil(9.0 * np.log(k / level) / (2.0 * alpha**2) * (1 - 1e-12)))
    if bound not in ("binomial", "hoeffding_bentkus", "hoeffding"):
        return None
    return zero_loss_count(bound, alpha, level)


def min_rows_for_budget(l_max, level):
    """Fewest calibration rows ``n`` with ``l_max <= level (n + 1)`` (tie-tolerant): below it
    even a risk-free calibration set leaves a SCoRE e-value short of deploying."""
    n = max(0, int(np.floor(l_max / level)) - 2)
    while not at_most(l_max, level * (n + 1)):
        n += 1
    return n


def group_report(est, X, y=None, groups=None):
    """Per-group table of ``est.decide(X)``: see :meth:`_DeploymentBase.group_report`."""
    import pandas as pd

    X = indexable_rows(X)
    m = n_rows(X)
    if groups is None:
        if est.groups is None:
            raise ValueError(
                f"The {type(est).__name__} was fitted without groups: pass `groups` (one label "
                "per row of X, or a callable X -> labels) to see each group's deployment."
            )
        labels = group_labels(est, X)
    else:
        labels = np.asarray(groups(X) if callable(groups) else groups)
        if labels.ndim != 1 or labels.shape[0] != m:
            raise ValueError(f"`groups` must give one label per row of X: {m} rows, but got "
                             f"shape {labels.shape}.")
    if y is not None and len(y) != m:
        raise ValueError(f"`X` has {m} rows but `y` has {len(y)} entries; they must be equal.")
    deployed = np.asarray(est.decide(X), dtype=bool)
    try:
        names, codes = np.unique(labels, return_inverse=True)
    except TypeError:
        raise ValueError("The group labels must be comparable (all numbers or all strings).") \
            from None
    codes = codes.ravel()
    k = names.shape[0]
    size = np.bincount(codes, minlength=k)
    n_deployed = np.bincount(codes, weights=deployed, minlength=k)
    table = {"n_rows": size, "deployed_share": n_deployed / np.maximum(size, 1)}
    fitted = getattr(est, "groups_", None) if est.groups is not None and groups is None else None
    if fitted is not None:
        where = group_codes(fitted, names)
        seen = where >= 0
        table["n_calibration"] = np.where(seen, est.group_n_calibration_[where], 0)
        if hasattr(est, "group_thresholds_"):
            table["threshold"] = np.where(seen, est.group_thresholds_[where], -np.inf)
    if y is not None:
        cost = np.bincount(codes, weights=np.asarray(est._risks(X, y), float) * deployed,
                           minlength=k)
        if est._target == "sdr":
            with np.errstate(invalid="ignore", divide="ignore"):
                table["risk_among_deployed"] = np.where(n_deployed > 0, cost / n_deployed,
                                                        np.nan)
        else:
            table["mdr"] = cost / np.maximum(size, 1)
    return pd.DataFrame(table, index=pd.Index(names, name="group"))


def describe_groups(labels, counts, what="calibration row"):
    """``group 3 (12 calibration rows), group 'b' (1 calibration row)``, capped."""
    return _named(labels, counts, what)


def _named(labels, counts, what):
    items = [f"{show(g)} ({int(c)} {what}{'' if int(c) == 1 else 's'})"
             for g, c in zip(list(labels)[:_MAX_NAMED], list(counts)[:_MAX_NAMED])]
    more = len(labels) - _MAX_NAMED
    text = ", ".join(items) + (f" and {more} more" if more > 0 else "")
    return ("group " if len(labels) == 1 else "groups ") + text


def _list(values):
    values = list(values)
    shown = ", ".join(show(v) for v in values[:_MAX_NAMED])
    more = len(values) - _MAX_NAMED
    return "[" + shown + (f", ... ({more} more)" if more > 0 else "") + "]"
