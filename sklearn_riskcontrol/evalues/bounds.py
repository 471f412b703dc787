"""Concentration-inequality baselines for selective deployment (SCoRE paper, Appendix D.4).

These baselines deploy a test point iff its score is at most a threshold ``t_hat`` chosen so that
a *high-probability* upper bound on the deployment risk at ``t_hat`` is at most ``alpha``:

* ``target="mdr"``: ``MDR(t) = E[L 1{s(X) <= t}]`` is bounded by its empirical mean plus a slack;
* ``target="sdr"``: ``SDR*(t) = E[L | s(X) <= t]`` is bounded by an upper bound on the numerator
  ``E[L 1{s(X) <= t}]`` divided by a lower bound on the denominator ``P(s(X) <= t)`` (``inf``
  where that lower bound is ``<= 0``).

Two uniform bounds are offered: Hoeffding's inequality with a union bound over a fixed,
data-independent grid of thresholds, and a Rademacher-complexity bound that holds for all
thresholds simultaneously (so the grid can be the calibration scores themselves).

Unlike SCoRE (:func:`~sklearn_riskcontrol.evalues.mdr_decisions`,
:func:`~sklearn_riskcontrol.evalues.sdr_evalues`), whose guarantees are exact in expectation,
these give only PAC-type guarantees: ``risk(t_hat) <= alpha`` *with probability at least
``1 - delta`` over the calibration data*. They are conservative and exist so that users can
compare their power with SCoRE's.
"""

from dataclasses import dataclass, field

import numpy as np

from .._validation import (
    check_level,
    check_nonempty,
    check_number,
    check_random_state,
    check_risks,
    check_same_length,
    check_scores,
    show,
    warn,
)

__all__ = ["ConcentrationResult", "concentration_threshold"]

_TARGETS = ("mdr", "sdr")
_BOUNDS = ("hoeffding", "rademacher")
# Default Hoeffding grid sizes of the paper (App. D.4): 101 points for MDR, 100 for SDR.
_DEFAULT_GRID_SIZE = {"mdr": 101, "sdr": 100}
# Rademacher sign matrices are processed in blocks of at most this many entries (memory cap).
_BLOCK_ENTRIES = 1 << 22


@dataclass(frozen=True, eq=False)
class ConcentrationResult:
    """Result of :func:`concentration_threshold`.

    Attributes
    ----------
    threshold : float
        ``t_hat = max{t in grid : upper_bound(t) <= alpha}``; ``-inf`` when no grid point
        qualifies (then :meth:`decide` deploys nothing).
    grid : ndarray of shape (g,)
        Sorted distinct candidate thresholds.
    upper_bound : ndarray of shape (g,)
        The high-probability upper bound on the risk (MDR or SDR*) at each grid point
        (``inf`` for SDR where the lower bound on the denominator is ``<= 0``).
    slack : float
        Amount added to the empirical mean (of ``L 1{S <= t}``, the MDR or the SDR numerator).
    denominator_slack : float or None
        Amount subtracted from the empirical ``P(S <= t)`` (SDR only; ``None`` for MDR).
    target, bound : str
        The options used.
    alpha, delta : float
        Tolerated risk and failure probability.
    """

    threshold: float
    grid: np.ndarray = field(repr=False)
    upper_bound: np.ndarray = field(repr=False)
    slack: float
    denominator_slack: float | None = None
    target: str = "mdr"
    bound: str = "hoeffding"
    alpha: float = float("nan")
    delta: float = float("nan")

    def decide(self, test_scores):
        """Deploy decisions ``test_scores <= threshold``.

        Parameters
        ----------
        test_scores : array-like of shape (m,)
            Finite scores of the test points (smaller = safer).

        Returns
        -------
        ndarray of bool, shape (m,)
        """
        return check_scores(test_scores, "test_scores") <= self.threshold


def _check_option(value, name, allowed):
    if not isinstance(value, str) or value.lower() not in allowed:
        choices = ", ".join(repr(a) for a in allowed)
        raise ValueError(f"`{name}` must be one of {choices}; got {show(value)}.")
    return value.lower()


def _check_grid(grid, target, bound, S):
    """Sorted distinct grid; the paper's default when ``grid`` is None."""
    if grid is None:
        if bound == "rademacher":
            return np.unique(S)
        lo, hi = float(S.min()), float(S.max())
        if lo < 0.0 or hi > 1.0:
            size = _DEFAULT_GRID_SIZE[target]
            raise ValueError(
                f"`cal_scores` lie outside [0, 1] (min {lo!r}, max {hi!r}), but the default "
                f"Hoeffding grid np.linspace(0, 1, {size}) assumes scores in [0, 1]. Pass "
                "`grid=`, a set of thresholds fixed before seeing the calibration data (e.g. "
                f"np.linspace(low, high, {size}) from known bounds of the score); a grid built "
                "from the calibration scores voids the Hoeffding guarantee."
            )
        return np.linspace(0.0, 1.0, _DEFAULT_GRID_SIZE[target])
    g = check_scores(grid, "grid")
    check_nonempty(g, "grid", what="candidate threshold")
    return np.unique(g)


def _empirical_means_on_grid(L, S, grid):
    """``(1/n) sum_i L_i 1{S_i <= t}`` and ``(1/n) sum_i 1{S_i <= t}`` for every t in ``grid``."""
    n = S.shape[0]
    order = np.argsort(S, kind="stable")
    s_sorted = S[order]
    cum_l = np.r_[0.0, np.cumsum(L[order])]
    k = np.searchsorted(s_sorted, grid, side="right")  # #{i : S_i <= t}
    return cum_l[k] / n, k / n


def _rademacher(L, S, n_draws, random_state, *, with_indicator):
    """Monte Carlo empirical Rademacher complexities over all thresholds t.

    Returns ``(rad_l, rad_1)``: the averages over ``n_draws`` sign vectors of
    ``sup_t (1/n) sum_i sigma_i L_i 1{S_i <= t}`` and of ``sup_t (1/n) sum_i sigma_i 1{S_i <= t}``
    (``rad_1`` is None unless ``with_indicator``). The supremum over all real t is a maximum of
    prefix sums in score order, taken at the ends of tie groups, and 0 (t below every score).
    Signs: ``sigma_ki = -1`` if ``U_ki < 0.5`` else ``+1``, with
    ``U = check_random_state(random_state).random_sample((n_draws, n))`` in the order of the
    calibration points as given; blocks of rows are drawn one after another, which yields the
    same ``U`` as one draw of the full matrix.
    """
    rng = check_random_state(random_state)
    n = S.shape[0]
    order = np.argsort(S, kind="stable")
    s_sorted = S[order]
    ends = np.flatnonzero(np.r_[s_sorted[1:] != s_sorted[:-1], True])  # last index of tie groups
    l_sorted = L[order]
    block = max(1, _BLOCK_ENTRIES // n)
    sup_l = np.empty(n_draws)
    sup_1 = np.empty(n_draws) if with_indicator else None
    for start in range(0, n_draws, block):
        rows = min(block, n_draws - start)
        signs = np.where(rng.random_sample((rows, n)) < 0.5, -1.0, 1.0)[:, order]
        prefix = np.cumsum(signs * l_sorted, axis=1)[:, ends]
        sup_l[start : start + rows] = np.maximum(prefix.max(axis=1), 0.0)
        if with_indicator:
            prefix = np.cumsum(signs, axis=1)[:, ends]
            sup_1[start : start + rows] = np.maximum(prefix.max(axis=1), 0.0)
    rad_l = float(sup_l.mean() / n)
    rad_1 = float(sup_1.mean() / n) if with_indicator else None
    return rad_l, rad_1


def concentration_threshold(
    cal_risks,
    cal_scores,
    alpha,
    *,
    target="mdr",
    bound="hoeffding",
    delta=0.1,
    grid=None,
    n_draws=100,
    random_state=None,
):
    """Deployment threshold from a uniform concentration bound (SCoRE paper, App. D.4).

    Deploy a test point iff ``s(X) <= t_hat`` with
    ``t_hat = max{t in grid : upper_bound(t) <= alpha}``, where ``upper_bound`` is, with
    probability at least ``1 - delta`` over the calibration data, an upper bound on the risk
    simultaneously at every grid point. Hence the guarantee is **PAC-type only**:
    ``risk(t_hat) <= alpha`` with probability ``>= 1 - delta``; it is not the in-expectation
    control of SCoRE (:func:`~sklearn_riskcontrol.evalues.mdr_decisions`,
    :func:`~sklearn_riskcontrol.evalues.sdr_evalues`). These baselines are conservative and are
    provided so that users can compare their power with SCoRE's.

    With ``Lbar(t) = (1/n) sum_i L_i 1{S_i <= t}`` and ``Pbar(t) = (1/n) sum_i 1{S_i <= t}``:

    ``target="mdr"`` bounds ``MDR(t) = E[L 1{s(X) <= t}]`` by ``Lbar(t) + eps``.

    ``target="sdr"`` bounds ``SDR*(t) = E[L | s(X) <= t]`` by ``A(t) / B(t)`` with
    ``A(t) = Lbar(t) + eps`` and ``B(t) = Pbar(t) - eps'``, and by ``inf`` where ``B(t) <= 0``.

    ``bound="hoeffding"``: union bound over a grid ``G`` fixed before seeing the data, with
    ``eps = sqrt(log(2|G|/delta) / (2n))`` for MDR and
    ``eps = eps' = sqrt(log(4|G|/delta) / (2n))`` for SDR. Default ``G = np.linspace(0, 1, 101)``
    (MDR) or ``np.linspace(0, 1, 100)`` (SDR), as in the paper, which assumes scores in [0, 1].

    ``bound="rademacher"``: uniform over all thresholds, with
    ``eps = 2 Rad + 3 sqrt(log(2/delta) / (2n))`` for MDR, and ``eps = 2 Rad + c``,
    ``eps' = 2 Rad~ + c``, ``c = 3 sqrt(log(4/delta) / (2n))`` for SDR, where ``Rad`` and ``Rad~``
    are the empirical Rademacher complexities of ``{t -> L_i 1{S_i <= t}}`` and
    ``{t -> 1{S_i <= t}}`` on the calibration data, estimated with ``n_draws`` Rademacher sign
    vectors. Default grid: the calibration scores.

    Parameters
    ----------
    cal_risks : array-like of shape (n,)
        Calibration risks ``L_i`` in [0, 1].
    cal_scores : array-like of shape (n,)
        Finite calibration scores ``S_i = s(X_i)`` (smaller = safer).
    alpha : float in (0, 1)
        Tolerated risk (MDR or SDR).
    target : {"mdr", "sdr"}, default="mdr"
        Which risk to bound.
    bound : {"hoeffding", "rademacher"}, default="hoeffding"
        Which uniform concentration bound to use.
    delta : float in (0, 1), default=0.1
        Failure probability of the bound.
    grid : array-like of shape (g,), optional
        Candidate thresholds (sorted and de-duplicated; ``|G|`` is the number of distinct
        points). For ``"hoeffding"`` it must not depend on the calibration data, otherwise the
        guarantee is void; it is required when the scores are not in [0, 1]. For
        ``"rademacher"`` any grid is valid (the bound is uniform over all thresholds).
    n_draws : int, default=100
        Number of Rademacher sign vectors used to estimate the complexities (``"rademacher"``
        only; the paper uses 100).
    random_state : int, RandomState instance, numpy.random.Generator or None, default=None
        Seed of the Rademacher signs (``"rademacher"`` only); an int makes the result
        reproducible.

    Returns
    -------
    ConcentrationResult
        With fields ``threshold``, ``grid``, ``upper_bound``, ``slack`` (``eps``),
        ``denominator_slack`` (``eps'``, SDR only) and the method ``decide(test_scores)``.
        When no grid point qualifies, ``threshold = -inf`` (nothing is deployed) and a
        :class:`~sklearn_riskcontrol._validation.RiskControlWarning` says why.

    Notes
    -----
    The Rademacher complexity is the conditional expectation over the signs; like the paper, the
    Monte Carlo average over ``n_draws`` sign vectors is used in its place, and its own Monte
    Carlo error is not added to the slack. The same sign vectors are used for ``Rad`` and
    ``Rad~``. Draw ``k`` uses ``sigma_ki = -1`` if ``U_ki < 0.5`` and ``+1`` otherwise, where
    ``U = check_random_state(random_state).random_sample((n_draws, n))`` follows the order of the
    calibration points as given. The supremum over thresholds is a running maximum of prefix
    sums in score order (including ``t`` below every score, where the sum is 0), so the cost is
    O(n log n + n_draws n).

    The paper's lower bound on the SDR denominator in the Rademacher case is printed as
    ``Pbar(t) - 2 Rad~ + 3 sqrt(...)``; a lower bound needs ``- 3 sqrt(...)``, which is used here.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_riskcontrol.evalues.bounds import concentration_threshold
    >>> rng = np.random.default_rng(0)
    >>> scores = rng.uniform(size=2000)
    >>> risks = (rng.uniform(size=2000) < scores).astype(float)  # riskier when the score is high
    >>> res = concentration_threshold(risks, scores, alpha=0.2, target="mdr", delta=0.1)
    >>> float(res.threshold)
    0.56
    >>> res.decide([0.1, 0.5, 0.9])
    array([ True,  True, False])
    >>> # Rademacher: uniform over all t, grid = the scores, but a larger slack
    >>> res = concentration_threshold(risks, scores, alpha=0.2, bound="rademacher",
    ...                               random_state=0)
    >>> round(res.threshold, 3), round(res.slack, 3)
    (0.43, 0.107)
    >>> res = concentration_threshold(risks, scores, alpha=0.4, target="sdr")
    >>> round(res.threshold, 3)
    0.566
    """
    alpha = check_level(alpha, "alpha")
    delta = check_level(delta, "delta")
    target = _check_option(target, "target", _TARGETS)
    bound = _check_option(bound, "bound", _BOUNDS)
    n_draws = check_number(n_draws, "n_draws", integer=True, minimum=1)
    L = check_risks(cal_risks, "cal_risks")
    S = check_scores(cal_scores, "cal_scores")
    check_same_length(cal_risks=L, cal_scores=S)
    check_nonempty(L, "cal_risks")
    n = L.shape[0]
    G = _check_grid(grid, target, bound, S)
    l_bar, p_bar = _empirical_means_on_grid(L, S, G)

    if bound == "hoeffding":
        k = 2.0 if target == "mdr" else 4.0
        slack = float(np.sqrt(np.log(k * G.shape[0] / delta) / (2.0 * n)))
        den_slack = slack if target == "sdr" else None
    else:
        rad_l, rad_1 = _rademacher(
            L, S, n_draws, random_state, with_indicator=(target == "sdr")
        )
        k = 2.0 if target == "mdr" else 4.0
        conc = 3.0 * float(np.sqrt(np.log(k / delta) / (2.0 * n)))
        slack = 2.0 * rad_l + conc
        den_slack = 2.0 * rad_1 + conc if target == "sdr" else None

    if target == "mdr":
        upper = l_bar + slack
    else:
        lower = p_bar - den_slack
        with np.errstate(divide="ignore", invalid="ignore"):
            upper = np.where(lower > 0, (l_bar + slack) / lower, np.inf)

    ok = upper <= alpha
    if ok.any():
        threshold = float(G[np.flatnonzero(ok)[-1]])
    else:
        threshold = -np.inf
        warn(
            f"No threshold is certified: the {bound} upper bound on the {target.upper()} exceeds "
            f"alpha={alpha:g} at every grid point (smallest bound {float(upper.min()):.4g}, slack "
            f"{slack:.4g} with n={n}), so nothing is deployed. A larger calibration set, a "
            "larger alpha or delta, or SCoRE (exact, non-PAC control) may help."
        )
    G.flags.writeable = False
    upper.flags.writeable = False
    return ConcentrationResult(
        threshold=threshold,
        grid=G,
        upper_bound=upper,
        slack=slack,
        denominator_slack=den_slack,
        target=target,
        bound=bound,
        alpha=alpha,
        delta=delta,
    )
