"""How many labels will certification take? A plan from a pilot, before labeling (issue 28, part 2).

The law of the labels needed by a :class:`~sklearn_riskcontrol.autoeval.LabelingSession` is
simulated: each simulated run draws a law of the (true, judge) losses from a posterior given the
pilot, then a stream of labeled rounds from it, and runs the session's test
(:func:`~sklearn_riskcontrol.autoeval.rautoeval_test` with ``early_stopping=True``) on that stream
and on the real pool of judge losses, with the real blocks of the budget.

Posterior (Bayesian bootstrap, stratified by the judge)
    The judge's losses on the pool say how often each judge verdict occurs; the pilot says what
    the true loss is given the verdict. The pool's judge losses are cut into at most
    ``_MAX_STRATA`` strata (their distinct values, or quantile bins); a simulated round picks a
    stratum with the pool's frequencies, then a pilot pair ``(h, g)`` of that stratum with
    Dirichlet weights drawn once per run (strata without a pilot pair are merged with a
    neighbour). Each stratum also holds two pseudo-labels at its median judge loss, true loss 1
    and 0, of Dirichlet weight 1/2 each (a pilot row weighs 1): Jeffreys' prior for 0/1 losses,
    which keeps a few error-free labels from promising a zero risk.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .._typing import RandomStateLike
from .._validation import check_level, check_number, check_random_state
from .._results import ResultMixin
from ._arrays import _check_losses, rautoeval_test

__all__ = ["plan_labels", "LabelPlan"]

_MAX_STRATA = 5
_PSEUDO = 0.25  # Dirichlet weight of each pseudo-label (a pilot row weighs 1)


@dataclass(frozen=True, repr=False)
class LabelPlan(ResultMixin):
    """Result of :func:`plan_labels`: a forecast, not a guarantee.

    Attributes
    ----------
    needed : ndarray of shape (n_simulations,)
        Labels each simulated run needed to certify (``inf``: not within ``max_labels``).
    low, median, high : float
        The 10%, 50% and 90% quantiles of ``needed`` (``inf`` when more than that share of
        runs did not certify within the budget): ``[low, high]`` is a central 80% range.
    p_certify : float
        Share of simulated runs that certified within ``max_labels``.
    max_labels : int
    n_pilot : int
        Pilot labels the plan was made from.
    alpha, delta : float

    Examples
    --------
    A labels-only pilot of 50 rows with 3 errors, a budget of 300 labels:

    >>> import numpy as np
    >>> from sklearn_riskcontrol.autoeval import plan_labels
    >>> h = np.r_[np.ones(3), np.zeros(47)]
    >>> plan = plan_labels(h, alpha=0.2, delta=0.1, max_labels=300, n_simulations=50,
    ...                    random_state=0, method="eval")
    >>> plan                      # quantiles of the labels needed over 50 simulated sessions
    LabelPlan(low=15.0, median=28.0, high=121.0, p_certify=0.960, max_labels=300)
    """

    needed: np.ndarray
    low: float
    median: float
    high: float
    p_certify: float
    max_labels: int
    n_pilot: int
    alpha: float
    delta: float

    @property
    def informative(self) -> bool:
        """Whether the 80% range ends within the budget."""
        return math.isfinite(self.high)

    def __repr__(self):
        return (f"LabelPlan(low={self.low}, median={self.median}, high={self.high}, "
                f"p_certify={self.p_certify:.3f}, max_labels={self.max_labels})")

    def __str__(self):
        head = (f"a forecast from a pilot of {self.n_pilot} labels over {self.needed.size} "
                f"simulated runs (not a guarantee): certifying risk <= {self.alpha:g} at "
                f"delta = {self.delta:g}")
        if self.informative:
            return (f"{head} would take between {self.low:.0f} and {self.high:.0f} labels in 80% "
                    f"of the runs (median {self.median:.0f}); {self.p_certify:.0%} of the runs "
                    f"certified within the budget of {self.max_labels}")
        return (f"{head} did not happen within the budget of {self.max_labels} labels in "
                f"{1 - self.p_certify:.0%} of the runs: no informative range (label more for "
                "the pilot, or raise max_labels)")


def _strata(g_pilot, u):
    """Stratum of each pilot row and each pool row, by the judge's loss."""
    values = np.unique(u)
    if values.size > _MAX_STRATA:
        edges = np.unique(np.quantile(u, np.linspace(0, 1, _MAX_STRATA + 1)[1:-1]))
    else:
        edges = (values[1:] + values[:-1]) / 2.0
    pilot, pool = np.searchsorted(edges, g_pilot), np.searchsorted(edges, u)
    # merge strata without a pilot row into the nearest one that has some
    have = np.unique(pilot)
    nearest = have[np.abs(np.arange(edges.size + 1)[:, None] - have[None, :]).argmin(axis=1)]
    return pilot, nearest[pool]


def plan_labels(
    loss_labeled: ArrayLike,
    loss_judge_labeled: ArrayLike | None = None,
    loss_judge_unlabeled: ArrayLike | None = None,
    *,
    alpha: float,
    delta: float,
    max_labels: int | None = None,
    n_simulations: int = 200,
    random_state: RandomStateLike = None,
    **test_options: Any,
) -> LabelPlan:
    """Forecast how many labels a :class:`LabelingSession` will need to certify ``risk <= alpha``.

    From a pilot (a few labeled rows with the judge's losses) and the judge's losses on the
    pool, simulate ``n_simulations`` sessions (module docstring: the posterior of the losses'
    law given the pilot, the session's own test on the real pool) and report the law of the
    labels they needed. A forecast, not a guarantee; the session's own guarantee does not
    depend on it.

    Parameters
    ----------
    loss_labeled : array-like of shape (n,)
        Pilot losses with the true labels, in [0, 1].
    loss_judge_labeled : array-like of shape (n,), default=None
        The judge's losses on the pilot rows (``None``: labels only).
    loss_judge_unlabeled : array-like of shape (N,), default=None
        The judge's losses on the pool the session will use (its ``loss_judge_unlabeled``).
    alpha, delta : float in (0, 1)
        The session's level and failure probability.
    max_labels : int, default=None
        The session's label budget; default ``N`` (or ``100 n`` without a pool).
    n_simulations : int, default=200
    random_state : int, numpy Generator or None, default=None
    **test_options
        Passed to :func:`rautoeval_test` (``method``, ``betting``, ``n_rho``, ...), as the
        session would use them.

    Returns
    -------
    LabelPlan

    Examples
    --------
    A model wrong on 3% of items, a judge that agrees with the truth on 95%, a pilot of 100
    labels and a pool of 5,000 judged items:

    >>> import numpy as np
    >>> from sklearn_riskcontrol.autoeval import plan_labels
    >>> rng = np.random.default_rng(0)
    >>> def draw(m):
    ...     h = (rng.random(m) < 0.03).astype(float)
    ...     return h, np.where(rng.random(m) < 0.95, h, 1 - h)
    >>> h, g = draw(100)
    >>> u = draw(5000)[1]
    >>> plan = plan_labels(h, g, u, alpha=0.1, delta=0.1, max_labels=1000, random_state=0)
    >>> print(plan)                # a forecast from this pilot; the session decides for real
    a forecast from a pilot of 100 labels over 200 simulated runs (not a guarantee): certifying
    risk <= 0.1 at delta = 0.1 would take between 44 and 115 labels in 80% of the runs (median
    68); 100% of the runs certified within the budget of 1000
    """
    alpha = check_level(alpha, "alpha")
    delta = check_level(delta, "delta")
    n_simulations = check_number(n_simulations, "n_simulations", integer=True, minimum=1)
    method = test_options.pop("method", "plus")
    h, g, u, run_method = _check_losses(loss_labeled, loss_judge_labeled, loss_judge_unlabeled,
                                        method)
    n = h.size
    if max_labels is None:
        max_labels = u.size if u is not None else 100 * n
    max_labels = check_number(max_labels, "max_labels", integer=True, minimum=1)
    if u is not None and max_labels > u.size:
        raise ValueError(f"`max_labels`={max_labels} exceeds the pool ({u.size} judged rows): "
                         "each labeled round needs its own block of the pool.")
    rng = check_random_state(random_state)
    if g is None:  # labels only: one stratum, the judge column is unused
        g_pilot, strata_pilot, strata_pool = np.zeros(n), np.zeros(n, int), np.zeros(1, int)
    else:
        g_pilot = g
        strata_pilot, strata_pool = _strata(g, u if u is not None else g)
    # per stratum, two half-weight pseudo-labels at its median judge loss: true loss 1 and 0
    # (Jeffreys' prior for 0/1 losses), so that error-free pilot rows do not promise a zero risk
    labels = np.unique(strata_pilot)
    med = np.array([np.median(g_pilot[strata_pilot == s]) for s in labels])
    pairs_h = np.r_[h, np.ones(labels.size), np.zeros(labels.size)]
    pairs_g = np.r_[g_pilot, med, med]
    pairs_s = np.r_[strata_pilot, labels, labels]
    prior = np.r_[np.ones(n), np.full(2 * labels.size, _PSEUDO)]
    freq = np.array([np.mean(strata_pool == s) for s in labels])
    members = [np.flatnonzero(pairs_s == s) for s in labels]
    needed = np.full(n_simulations, np.inf)
    for k in range(n_simulations):  # one test per run; each test is vectorised over rounds
        strata = rng.choice(labels.size, size=max_labels, p=freq / freq.sum())
        rows = np.empty(max_labels, dtype=int)
        for j, idx in enumerate(members):
            where = np.flatnonzero(strata == j)
            w = rng.dirichlet(prior[idx])
            rows[where] = idx[rng.choice(idx.size, size=where.size, p=w)]
        res = rautoeval_test(pairs_h[rows], None if g is None else pairs_g[rows], u,
                             alpha=alpha, delta=delta, method=run_method, early_stopping=True,
                             **test_options)
        if res.stopping_index is not None:
            needed[k] = res.stopping_index + 1
    low, median, high = np.quantile(needed, [0.1, 0.5, 0.9], method="higher")
    return LabelPlan(needed=needed, low=float(low), median=float(median), high=float(high),
                     p_certify=float(np.isfinite(needed).mean()), max_labels=max_labels,
                     n_pilot=n, alpha=alpha, delta=delta)
