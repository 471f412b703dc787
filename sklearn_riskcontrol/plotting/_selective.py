"""Figures of SCoRE (selective deployment): realized risk and deployment rate against alpha,
and deployment per group.

:func:`plot_risk_vs_alpha` and :func:`plot_deployment_vs_alpha` take the nominal levels
``alphas`` and, per method, the realized quantity of each Monte-Carlo repetition at each level
(shape ``(n_repetitions, n_alphas)``), e.g. computed with
:func:`~sklearn_riskcontrol.selective.realized_mdr`, :func:`~sklearn_riskcontrol.selective.realized_sdr`
and :func:`~sklearn_riskcontrol.selective.deployment_rate` on held-out labels. They draw the mean
over the repetitions with error bars of ``n_se`` standard errors of that mean.
:func:`plot_group_deployment` takes a fitted selective estimator and test rows.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike
from sklearn.utils.validation import check_is_fitted

from .._validation import _as_1d_float, check_labels, check_number
from ._common import as_curves, finish_axes, get_ax
from .._typing import Estimator

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["plot_risk_vs_alpha", "plot_deployment_vs_alpha", "plot_group_deployment"]

_RISK_LABELS = {
    "mdr": "realized MDR  mean(L * deploy)",
    "sdr": "realized SDR  (risk among deployed)",
    None: "realized risk",
}


def _mc_curves(alphas, values, name, n_se):
    """Sorted alphas and, per curve, (label, mean, half-width of the error bar or None)."""
    a = _as_1d_float(alphas, "alphas")
    if a.size == 0 or not np.all((a > 0) & (a < 1)):
        raise ValueError(f"`alphas` must be a non-empty array of levels in (0, 1); got {a}.")
    n_se = check_number(n_se, "n_se", minimum=0)
    order = np.argsort(a, kind="stable")
    out = []
    for label, v in as_curves(values, name, max_ndim=2):
        where = f"`{name}`" if label is None else f"`{name}[{label!r}]`"
        if v.shape[-1] != a.size:
            raise ValueError(
                f"{where} has shape {v.shape} but there are {a.size} alphas; pass shape "
                f"(n_alphas,) or (n_repetitions, n_alphas), one column per alpha."
            )
        if not np.isfinite(v).all():
            raise ValueError(f"{where} contains NaN or inf; pass finite realized values.")
        v = np.atleast_2d(v)[:, order]
        n_rep = v.shape[0]
        band = None
        if n_rep > 1 and n_se > 0:
            band = n_se * v.std(axis=0, ddof=1) / np.sqrt(n_rep)
        out.append((label, v.mean(axis=0), band))
    return a[order], out


def _draw(ax, alphas, curves):
    for label, mean, band in curves:
        ax.errorbar(alphas, mean, yerr=band, fmt="o-", markersize=4, capsize=3, label=label)


def plot_risk_vs_alpha(
    alphas: ArrayLike,
    risks: Mapping[str, ArrayLike] | ArrayLike,
    *,
    target: str = "mdr",
    n_se: float = 2.0,
    ax: Axes | None = None,
) -> Axes:
    """Realized risk against the nominal level ``alpha``, with the line ``y = alpha``.

    The SCoRE guarantees bound an expectation (``E[L * deploy] <= alpha`` for MDR, the expected
    average risk among the deployed points for SDR), so a valid method's mean realized risk over
    repetitions stays on or below the diagonal up to Monte-Carlo error. Several methods (SCoRE,
    baselines, boosting variants) can share the axes.

    Parameters
    ----------
    alphas : array-like of shape (n_alphas,)
        Nominal levels in (0, 1) (any order; the curves are drawn by increasing alpha).
    risks : dict of {str: array-like} or array-like
        Realized risks, keyed by the legend label, each of shape ``(n_repetitions, n_alphas)``
        (one row per calibration/test split) or ``(n_alphas,)`` (already averaged, no error
        bars). A bare array is drawn without a legend entry.
    target : {"mdr", "sdr"} or None, default="mdr"
        Which risk is shown; sets the y label (``None``: "realized risk", e.g. for MDR and SDR
        methods on one axes).
    n_se : float, default=2.0
        Half-width of the error bars in standard errors of the mean over repetitions
        (``0`` hides them).
    ax : matplotlib.axes.Axes, optional
        Axes to draw on; default: a new figure.

    Returns
    -------
    matplotlib.axes.Axes

    See Also
    --------
    plot_deployment_vs_alpha : The deployment rate (power) of the same study.
    sklearn_riskcontrol.selective.realized_mdr, sklearn_riskcontrol.selective.realized_sdr

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import numpy as np
    >>> from sklearn_riskcontrol.selective import mdr_decisions, realized_mdr
    >>> from sklearn_riskcontrol.plotting import plot_risk_vs_alpha
    >>> rng = np.random.default_rng(0)
    >>> alphas = [0.05, 0.1, 0.2]
    >>> risks = np.zeros((20, 3))
    >>> for r in range(20):
    ...     s = rng.random(300)
    ...     L = (rng.random(300) < s).astype(float)  # riskier when the score is larger
    ...     for k, a in enumerate(alphas):
    ...         deploy = mdr_decisions(L[:200], s[:200], s[200:], alpha=a)
    ...         risks[r, k] = realized_mdr(L[200:], deploy)
    >>> ax = plot_risk_vs_alpha(alphas, {"SCoRE-MDR": risks})
    >>> bool(np.allclose(ax.get_lines()[0].get_ydata(), risks.mean(axis=0)))
    True
    >>> sorted(t.get_text() for t in ax.get_legend().get_texts())
    ['SCoRE-MDR', 'y = alpha']
    >>> import matplotlib.pyplot as plt; plt.close(ax.figure)
    """
    if target not in _RISK_LABELS:
        raise ValueError(f"`target` must be 'mdr', 'sdr' or None; got {target!r}.")
    alphas, curves = _mc_curves(alphas, risks, "risks", n_se)
    ax = get_ax(ax)
    _draw(ax, alphas, curves)
    # the reference goes on top: an exact method's curve lies on it
    ax.plot(alphas, alphas, color="black", linestyle="--", linewidth=1, zorder=3, label="y = alpha")
    return finish_axes(ax, "alpha", _RISK_LABELS[target])


def plot_deployment_vs_alpha(
    alphas: ArrayLike,
    rates: Mapping[str, ArrayLike] | ArrayLike,
    *,
    ylabel: str = "deployment rate",
    n_se: float = 2.0,
    ax: Axes | None = None,
) -> Axes:
    """Deployment rate (or another power measure) against the nominal level ``alpha``.

    The companion of :func:`plot_risk_vs_alpha`: among methods that control the risk, the one
    that deploys on more test points at the same ``alpha`` is the more powerful.

    Parameters
    ----------
    alphas : array-like of shape (n_alphas,)
        Nominal levels in (0, 1) (any order; the curves are drawn by increasing alpha).
    rates : dict of {str: array-like} or array-like
        Realized deployment rates (e.g. :func:`~sklearn_riskcontrol.selective.deployment_rate`)
        or rewards (:func:`~sklearn_riskcontrol.selective.realized_reward`), keyed by the legend
        label, each of shape ``(n_repetitions, n_alphas)`` or ``(n_alphas,)``.
    ylabel : str, default="deployment rate"
        Label of the y axis (e.g. ``"power"`` for rewards).
    n_se : float, default=2.0
        Half-width of the error bars in standard errors of the mean over repetitions
        (``0`` hides them).
    ax : matplotlib.axes.Axes, optional
        Axes to draw on; default: a new figure.

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from sklearn_riskcontrol.plotting import plot_deployment_vs_alpha
    >>> ax = plot_deployment_vs_alpha([0.05, 0.1], {"SCoRE-MDR": [[0.2, 0.5], [0.4, 0.7]],
    ...                                             "Hoeffding": [[0.0, 0.1], [0.0, 0.3]]})
    >>> ax.get_lines()[0].get_ydata()
    array([0.3, 0.6])
    >>> import matplotlib.pyplot as plt; plt.close(ax.figure)
    """
    alphas, curves = _mc_curves(alphas, rates, "rates", n_se)
    ax = get_ax(ax)
    _draw(ax, alphas, curves)
    return finish_axes(ax, "alpha", ylabel)


def plot_group_deployment(
    estimator: Estimator,
    X: ArrayLike,
    y: ArrayLike | None = None,
    *,
    groups: str | Callable[..., ArrayLike] | None = None,
    ax: Axes | None = None,
) -> Axes:
    """Deployed share per group, and with labels the realized risk of each group (one draw).

    Bars: the share of each group's rows of ``X`` that ``estimator.decide(X)`` deploys. With
    ``y``, markers on a second y axis (right): the realized risk of each group on these rows,
    with a dashed line at ``alpha``. For an SDR estimator (:class:`~sklearn_riskcontrol.selective.SCoRESDR`,
    :class:`~sklearn_riskcontrol.selective.ConcentrationSDR`) that is the risk among the group's deployed
    rows (no marker when the group deploys nothing); for an MDR one the group's mean of
    ``L * deploy``. It is **one draw**: SCoRE bounds its expectation over calibration and test
    data, the PAC estimators bound the population risk with probability ``1 - delta``, so a
    marker may lie above the line by chance; a group whose markers lie above it over repeated
    draws is not controlled. Fitted with ``groups=`` the guarantee holds within each group;
    without, only over all rows together (pass ``groups`` here to see how each group fares).

    Parameters
    ----------
    estimator : fitted SCoREMDR, SCoRESDR, ConcentrationMDR or ConcentrationSDR
    X : array-like of shape (m, n_features)
        Test rows (one batch: SCoRESDR decides the batch together).
    y : array-like of shape (m,), optional
        Their labels; the realized risk is drawn only when given.
    groups : array-like of shape (m,) or callable, optional
        Group label of each row of ``X`` (or a callable ``X -> labels``). Default: the groups
        of the estimator's own ``groups`` rule (required when it was fitted without groups).
    ax : matplotlib.axes.Axes, optional
        Axes of the bars; default: a new figure. The risk axis is its twin.

    Returns
    -------
    matplotlib.axes.Axes
        The axes of the bars.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from sklearn.datasets import load_digits
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.model_selection import train_test_split
    >>> from sklearn_riskcontrol.selective import SCoRESDR
    >>> from sklearn_riskcontrol.plotting import plot_group_deployment
    >>> X, y = load_digits(return_X_y=True)
    >>> X_fit, X_rest, y_fit, y_rest = train_test_split(X, y, train_size=600, random_state=0)
    >>> X_cal, X_test, y_cal, y_test = train_test_split(X_rest, y_rest, test_size=500,
    ...                                                 random_state=0)
    >>> model = LogisticRegression(max_iter=2000).fit(X_fit, y_fit)
    >>> sdr = SCoRESDR(model, alpha=0.05, groups="predicted_class", random_state=0)
    >>> ax = plot_group_deployment(sdr.fit(X_cal, y_cal), X_test, y_test)
    >>> [t.get_text() for t in ax.get_xticklabels()]
    ['0', '1', '2', '3', '4', '5', '6', '7', '8', '9']
    >>> import matplotlib.pyplot as plt; plt.close(ax.figure)
    """
    if not hasattr(estimator, "decide") or not hasattr(estimator, "_risks"):
        raise TypeError(
            "`estimator` must be a fitted selective estimator (SCoREMDR, SCoRESDR, "
            f"ConcentrationMDR, ConcentrationSDR); got a {type(estimator).__name__}."
        )
    check_is_fitted(estimator, "cal_risks_")
    if y is not None:
        y = check_labels(y)
    table = estimator.group_report(X, y, groups=groups)
    share = table["deployed_share"].to_numpy()
    k = share.shape[0]
    ax = get_ax(ax)
    x = np.arange(k)
    ax.bar(x, share, color="C0", alpha=0.75, label="deployed share")
    ax.set_xticks(x, [str(v) for v in table.index.tolist()])
    if y is None:
        ax.set_ylim(0, 1.05)
        return finish_axes(ax, "group", "deployed share")
    if "risk_among_deployed" in table:
        risk, what = table["risk_among_deployed"].to_numpy(), "risk among deployed"
    else:
        risk, what = table["mdr"].to_numpy(), "MDR mean(L * deploy)"
    right = ax.twinx()
    right.plot(x, risk, "o", color="C3", markersize=7, label=f"realized {what} (one draw)")
    right.axhline(estimator.alpha, color="black", linestyle="--", linewidth=1,
                  label=f"alpha = {estimator.alpha:g}")
    top = np.nanmax(np.r_[risk, estimator.alpha]) if np.isfinite(risk).any() else estimator.alpha
    # headroom above the bars (share <= 1) and the markers for the legend
    ax.set_ylim(0, 1.35)
    right.set_ylim(0, 1.6 * top)
    right.set_ylabel(f"realized {what} (one draw)")
    handles, texts = ax.get_legend_handles_labels()
    more = right.get_legend_handles_labels()
    right.legend(handles + more[0], texts + more[1], loc="upper left", fontsize="small")
    ax.set_xlabel("group")
    ax.set_ylabel("deployed share")
    return ax


