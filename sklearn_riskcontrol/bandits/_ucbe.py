"""UCB-E (Audibert & Bubeck; Zhou et al. Alg. 1), the observation-only bandit baseline."""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions
from threadpoolctl import ThreadpoolController

from sklearn.utils.validation import check_is_fitted

from ._base import _COMMON_ATTRS_DOC, _COMMON_PARAMS_DOC, _argmax, _auto_period, _BaseStrategy
from ._intervals import _STOP_ATTRS_DOC, _STOP_DOC, _CertifyMixin, warn_vacuous
from .._docstrings import fill_doc
from .._validation import check_level
from .._typing import FloatArray, RandomStateLike

__all__ = ["UCBE", "UCBELRF"]

_THREADPOOLS = []


def _single_blas_thread():
    # the ensemble's products are small: BLAS threads only cost here. The controller is built
    # once (discovering the loaded libraries takes milliseconds, more than a refit step).
    if not _THREADPOOLS:
        _THREADPOOLS.append(ThreadpoolController())
    return _THREADPOOLS[0].limit(limits=1, user_api="blas")


@fill_doc(
    common_params=_COMMON_PARAMS_DOC.format(batch=64),
    stop_params=_STOP_DOC,
    common_attrs=_COMMON_ATTRS_DOC,
    stop_attrs=_STOP_ATTRS_DOC,
)
class UCBE(_CertifyMixin, _BaseStrategy):
    """UCB-E best-model identification from observed scores only.

    At each step the model with the largest index ``mean_i + sqrt(exploration / |O_i|)`` is
    scored on ``batch_size`` new examples drawn uniformly without replacement from the examples it
    has not seen (models never scored have an infinite index; a fully scored model is never pulled
    again and keeps its exact mean). The model with the best observed mean is returned. Each step
    costs O(batch_size + n_models).

    Parameters
    ----------
{common_params}
    exploration : float, default=1.0
        Exploration parameter ``a`` of the index.
{stop_params}

    Attributes
    ----------
{common_attrs}
{stop_attrs}

    See Also
    --------
    PULSE : the same bandit with unbiased prediction-powered estimates.
    UCBELRF : UCB-E with a low-rank ensemble choosing the examples.

    References
    ----------
    J.-Y. Audibert, S. Bubeck, "Best arm identification in multi-armed bandits", COLT 2010.
    J. P. Zhou et al., "On speeding up language model evaluation", ICLR 2025.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_riskcontrol.bandits import UCBE
    >>> rng = np.random.default_rng(0)
    >>> p = np.linspace(0.3, 0.7, 20)
    >>> S = (rng.uniform(size=(20, 2000)) < p[:, None]).astype(float)
    >>> ucbe = UCBE(budget=0.3, batch_size=32, random_state=0).fit(S)
    >>> int(ucbe.best_index_), ucbe.n_evaluations_      # realized, one run (best: 19)
    (19, 12000)

    Anytime-valid intervals (all 20 means inside w.p. >= 0.95), and the certified-best stop:

    >>> ci = ucbe.confidence_intervals(0.05)
    >>> bool(((ci[:, 0] <= S.mean(1)) & (S.mean(1) <= ci[:, 1])).all())    # this run
    True
    >>> stop = UCBE(budget=1.0, batch_size=32, stop_when_certified=True, random_state=0).fit(S)
    >>> stop.certified_best_, stop.n_evaluations_ < 40000     # best w.p. >= 0.95; one run
    (19, True)
    """

    _parameter_constraints = {
        **_BaseStrategy._parameter_constraints,
        **_CertifyMixin._stop_constraints,
        "exploration": [Interval(Real, 0, None, closed="left")],
    }

    def __init__(
        self,
        *,
        budget: float = 0.1,
        batch_size: int = 64,
        exploration: float = 1.0,
        stop_when_certified: bool = False,
        delta: float = 0.05,
        random_state: RandomStateLike = None,
        verbose: int = 0,
        warm_start: bool = False,
    ) -> None:
        self.budget = budget
        self.batch_size = batch_size
        self.exploration = exploration
        self.stop_when_certified = stop_when_certified
        self.delta = delta
        self.random_state = random_state
        self.verbose = verbose
        self.warm_start = warm_start

    def _init_run(self, st, side):
        st.index = np.full(st.m, np.inf)
        st.index[st.n_avail == 0] = -np.inf
        st.best_key = np.full(st.m, -np.inf)  # observed means, -inf for unpulled models

    def _plan_step(self, st):
        i = _argmax(st.index, st.priority)
        if st.index[i] == -np.inf:
            return None
        b = min(self.batch_size, st.budget - st.n_used, int(st.n_avail[i] - st.counts[i]))
        return i, st.draw_uniform(i, b), None

    def _update(self, st, i, J, values, ctx):
        b = J.size
        st.n_used += b
        st.counts[i] += b
        st.sums[i] += float(values.sum())
        mean = st.sums[i] / st.counts[i]
        st.best_key[i] = mean
        if st.counts[i] >= st.n_avail[i]:
            st.index[i] = -np.inf
        else:
            st.index[i] = mean + np.sqrt(self.exploration / st.counts[i])

    def _current_means(self, st):
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(st.counts > 0, st.sums / np.maximum(st.counts, 1), np.nan)

    def _best(self, st):
        return _argmax(st.best_key, st.priority)

    def _finalize_extra(self, st):
        self._set_certificate(st)

    def confidence_intervals(
        self, delta: float = 0.05, *, simultaneous: bool = True, method: str = "betting"
    ) -> FloatArray:
        """Anytime-valid confidence intervals for every model's mean score on its pool.

        With probability at least ``1 - delta`` every model's mean lies in its interval
        (``simultaneous=True``: union bound, level ``delta / n_models`` each), or each model's
        mean lies in its own interval (``simultaneous=False``), at every step of the run at
        once: the intervals stay valid whatever the adaptive number of evaluations per model
        and whenever the run stopped (including ``stop_when_certified``). A fully scored model
        gets its exact mean, a model never scored ``[0, 1]``.

        Parameters
        ----------
        delta : float in (0, 1), default=0.05
            Failure probability.
        simultaneous : bool, default=True
            Union bound over the models (so that all intervals hold at once).
        method : {"betting"}, default="betting"
            The betting confidence sequence for sampling without replacement (Waudby-Smith &
            Ramdas, NeurIPS 2020) on each model's observed scores, in the order drawn; see the
            user guide's section on anytime-valid intervals.

        Returns
        -------
        intervals : ndarray of shape (n_models, 2)
            Lower and upper bounds.

        Warns
        -----
        RiskControlWarning
            When some intervals are vacuous (at least 99% of the score range [0, 1]).

        Examples
        --------
        >>> import numpy as np
        >>> from sklearn_riskcontrol.bandits import UCBE
        >>> rng = np.random.default_rng(0)
        >>> S = (rng.uniform(size=(5, 1000)) < np.linspace(0.3, 0.7, 5)[:, None]) * 1.0
        >>> est = UCBE(budget=0.4, batch_size=20, random_state=1).fit(S)
        >>> ci = est.confidence_intervals(0.1)      # all 5 pool means inside w.p. >= 0.9
        >>> bool(((ci[:, 0] <= S.mean(1)) & (S.mean(1) <= ci[:, 1])).all())   # this run
        True
        """
        check_is_fitted(self, "means_")
        delta = check_level(delta, "delta")
        if method != "betting":
            raise ValueError(f"`method` must be 'betting' for UCBE; got {method!r}.")
        st = self._state
        ci = self._betting_intervals_all(st, delta, simultaneous)
        warn_vacuous(ci, st.counts, delta)
        return ci


_ENSEMBLE_PARAMS_DOC = """\
    warmup_fraction : float in (0, 1), default=0.05
        Fraction of all cells scored uniformly at random before the first fit (counts toward
        the budget).
    rank : int or "cv", default=1
        Rank of every member. ``"cv"``: chosen once, at the end of the warm-up (before the
        first batch that depends on the fit), among ``(1, 2, 4, 8, 16)`` (ranks ``>= min`` of
        the matrix's shape dropped) by 5-fold cross-validation of the members' ridge ALS model
        (no drop-out) over the cells observed so far (side information and warm-up), with the
        one-standard-error rule (:func:`~sklearn_riskcontrol.bandits.lowrank.select_rank_cv`);
        the ensemble is then rebuilt at that rank. Later refits keep it (they are warm-started).
    n_members : int, default=64
        Ensemble size ``K``.
    drop_rate : float, default=0.05
        Fraction of observed cells each member leaves out.
    ridge : float, default=0.1
        Ridge penalty of both ALS solves.
    n_sweeps : int, default=10
        ALS sweeps of the first fit (after the warm-up).
    refit_sweeps : int, default=2
        ALS sweeps of each refit after a batch. Refits continue from the previous factors (warm
        start): one batch moves the ALS solution little, so a few sweeps reach what
        ``n_sweeps`` sweeps per refit give (Zhou et al. do not state a number of sweeps;
        ``benchmarks/bandits_lrf.py --check-sweeps`` compares both).
    refit_every : int or "auto", default="auto"
        Refit the ensemble every ``refit_every`` steps. ``1`` is Zhou et al.'s algorithm as
        written (a refit after every batch): its number of refits grows with the matrix, each
        costing in proportion to it, so the run's cost grows quadratically (UCB-E-LRF, 100
        models, budget 10%: 7 s at 2,000 examples, 200 s at 10,000). ``"auto"`` spaces at most
        64 refits (at least 32 for longer runs) evenly over the steps after the warm-up, every
        ``ceil(steps / 64)`` steps (identical to ``1`` for runs of at most 64 steps), plus one
        after the last batch; at equal budget it identifies the best model as often (see the
        user guide's note on cost)."""

_ENSEMBLE_ATTRS_DOC = """\
    predictions_ : ndarray of shape (n_models, n_examples)
        Ensemble mean ``E_hat`` at the end of the run.
    uncertainties_ : ndarray of shape (n_models, n_examples)
        Ensemble standard deviation ``R``.
    rank_ : int
        Rank of the ensemble's members (``rank``, or the one chosen with ``rank="cv"``).
    ranks_ : list of int
        With ``rank="cv"``: the chosen rank (one selection per run; empty otherwise)."""


class _EnsembleStrategy(_BaseStrategy):
    """Shared machinery of the ALS-ensemble strategies (UCB-E-LRF and its non-active baseline).

    A uniform warm-up, an :class:`~sklearn_riskcontrol.bandits.lowrank.ALSEnsemble` over the
    models (and the stacked side information) refitted every ``refit_every`` steps and after the
    last batch, and the estimate ``(1/n)[sum_(O_i) S + sum_(U_i) E_hat]``. Subclasses choose the
    cells of each step (``_plan_step``) and may add an index (``_set_index``).
    """

    _parameter_constraints = {
        **_BaseStrategy._parameter_constraints,
        "warmup_fraction": [Interval(Real, 0, 1, closed="neither")],
        "rank": [Interval(Integral, 1, None, closed="left"), StrOptions({"cv"})],
        "n_members": [Interval(Integral, 1, None, closed="left")],
        "drop_rate": [Interval(Real, 0, 1, closed="left")],
        "ridge": [Interval(Real, 0, None, closed="neither")],
        "n_sweeps": [Interval(Integral, 1, None, closed="left")],
        "refit_sweeps": [Interval(Integral, 1, None, closed="left")],
        "refit_every": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"})],
    }
    _AUTO_REFITS = 64  # refits per run with refit_every="auto"

    def _init_run(self, st, side):
        from .lowrank import ALSEnsemble

        m, n = st.m, st.n
        if side is not None and not isinstance(side, np.ndarray):
            raise TypeError(
                f"{type(self).__name__} needs `side_scores` as an array (it is stacked into the "
                "ensemble)."
            )
        st.n_side = 0 if side is None else side.shape[0]
        st.ranks = []  # rank="cv": the ensemble is rebuilt at the chosen rank after the warm-up
        st.ens = ALSEnsemble(
            (m + st.n_side, n), rank=1 if self.rank == "cv" else self.rank, n_members=self.n_members,
            drop_rate=self.drop_rate, ridge=self.ridge, random_state=st.rng,
        )
        if st.n_side:
            r, c = np.nonzero(~np.isnan(side))
            st.ens.observe(r + m, c, side[r, c])
        st.obs = np.zeros((m, n), dtype=bool)
        st.free = np.ones((m, n), dtype=bool) if st.avail is None else st.avail.copy()
        total = int(st.free.sum())
        t0 = int(np.ceil(self.warmup_fraction * total))
        if t0 > st.budget:
            raise ValueError(
                f"`budget`={st.budget} is smaller than the warm-up ({t0} evaluations = "
                f"warmup_fraction={self.warmup_fraction} of {total} cells); raise the budget or "
                "lower warmup_fraction."
            )
        cand = np.flatnonzero(st.free.ravel())
        cells = np.sort(cand[st.rng.choice(cand.size, size=t0, replace=False)])
        rows, cols = np.divmod(cells, n)
        st.queue.append((rows, cols, "warmup"))
        st.n_warmup_evals = t0
        st.since_refit = 0
        st.index = np.full(m, -np.inf)
        st.est = np.full(m, -np.inf)

    def _uncertainty_cells(self, st, U):
        """Cells whose uncertainties the index sums (None: no uncertainty term)."""
        return None

    def _sums_all_uncertainties(self):
        """Whether the index sums the uncertainties of the scored cells too."""
        return False

    def _refresh(self, st):
        E, R = st.ens.mean_std(rows=slice(0, st.m))  # side models' rows are not needed
        U = st.free & ~st.obs
        st.pred = np.einsum("ij,ij->i", U, E)  # sums of E and R over each U_i
        cells = self._uncertainty_cells(st, U)
        st.unc = None if cells is None else np.einsum("ij,ij->i", cells, R)
        self._set_index(st)
        st.E, st.R = E, R

    def _set_index(self, st):
        with np.errstate(invalid="ignore", divide="ignore"):
            st.est = (st.sums + st.pred) / st.n_avail

    def _refit_period(self, st):
        if self.refit_every != "auto":
            return self.refit_every
        return _auto_period(st.budget - st.n_warmup_evals, self.batch_size, self._AUTO_REFITS)

    def _select_rank(self, st):
        """Rebuild the ensemble at the rank chosen by CV on the cells observed so far."""
        from .lowrank import ALSEnsemble, select_rank_cv

        old = st.ens
        O = old._O > 0  # every observed cell
        Y = np.where(O, old._Y, np.nan)
        rank = select_rank_cv(Y, ridge=self.ridge, biases=False, loss="squared",
                              random_state=st.rng).rank
        st.ranks.append(rank)
        if rank != old.rank:
            st.ens = ALSEnsemble(old.shape, rank=rank, n_members=self.n_members,
                                 drop_rate=self.drop_rate, ridge=self.ridge, random_state=st.rng)
            r, c = np.nonzero(O)
            st.ens.observe(r, c, old._Y[r, c])

    def _end_warmup(self, st):
        if self.rank == "cv":
            self._select_rank(st)
        with _single_blas_thread():
            st.ens.fit(self.n_sweeps)
            self._refresh(st)

    def _update(self, st, rows, cols, values, ctx):
        single = np.ndim(rows) == 0  # a step scoring one model (UCB-E-LRF)
        if single:
            rows = np.full(cols.size, rows)
        st.n_used += rows.size
        st.obs[rows, cols] = True
        st.counts += np.bincount(rows, minlength=st.m)
        st.sums += np.bincount(rows, weights=values, minlength=st.m)
        st.ens.observe(rows, cols, values)
        if ctx == "warmup":
            return
        st.since_refit += 1
        # the last batch is always followed by a refit: the returned estimates use every score
        if st.since_refit >= self._refit_period(st) or st.n_used >= st.budget:
            st.since_refit = 0
            with _single_blas_thread():
                st.ens.fit(self.refit_sweeps)
                self._refresh(st)
            return
        # no refit: the scored cells leave U_i, their scores replace their predictions (and,
        # when the index sums the uncertainties over U_i only, their uncertainties leave it)
        unscored_only = not self._sums_all_uncertainties()
        if single:
            i = rows[0]
            st.pred[i] -= st.E[i, cols].sum()
            if st.unc is not None and unscored_only:
                st.unc[i] -= st.R[i, cols].sum()
        else:
            st.pred -= np.bincount(rows, weights=st.E[rows, cols], minlength=st.m)
            if st.unc is not None and unscored_only:
                st.unc -= np.bincount(rows, weights=st.R[rows, cols], minlength=st.m)
        self._set_index(st)

    def _current_means(self, st):
        if not st.warmup_done:
            with np.errstate(invalid="ignore", divide="ignore"):
                return np.where(st.counts > 0, st.sums / np.maximum(st.counts, 1), np.nan)
        return st.est.copy()

    def _best(self, st):
        if not st.warmup_done:
            means = self._current_means(st)
            return _argmax(np.where(np.isnan(means), -np.inf, means), st.priority)
        return _argmax(st.est, st.priority)

    def _finalize_extra(self, st):
        self.rank_ = int(st.ens.rank)
        self.ranks_ = list(st.ranks)
        if st.warmup_done:
            self.predictions_ = st.E.copy()
            self.uncertainties_ = st.R.copy()


@fill_doc(
    common_params=_COMMON_PARAMS_DOC.format(batch=32),
    ensemble_params=_ENSEMBLE_PARAMS_DOC,
    common_attrs=_COMMON_ATTRS_DOC,
    ensemble_attrs=_ENSEMBLE_ATTRS_DOC,
)
class UCBELRF(_EnsembleStrategy):
    """UCB-E-LRF: UCB-E with a low-rank ensemble choosing models and examples.

    A warm-up scores ``warmup_fraction`` of all cells uniformly at random. Then an ensemble of
    ``n_members`` rank-``rank`` ridge ALS factorizations (each leaving out a random ``drop_rate``
    of the observed cells, see :class:`~sklearn_riskcontrol.bandits.lowrank.ALSEnsemble`) gives
    predictions ``E_hat`` (ensemble mean) and uncertainties ``R`` (ensemble standard deviation) of
    the unscored cells. Each step scores, for the model with the largest index
    ``(1/n)[sum_(O_i) S + sum_(U_i) (E_hat + eta R)]``, the ``batch_size`` unscored examples with
    the largest ``R``, and refits the ensemble (warm-started) every ``refit_every`` steps; between
    refits the scored cells leave ``U_i`` (their scores replace their predictions in the index).
    The model maximising ``(1/n)[sum_(O_i) S + sum_(U_i) E_hat]`` is returned; this estimate is
    biased (use :class:`PULSE` for unbiased estimates and intervals). A refit costs
    ``O(n_members * n_models * n_examples * rank^2 * refit_sweeps)``; with the default
    ``refit_every="auto"`` a run refits at most about 64 times whatever its size, so its cost grows
    linearly with the matrix. Scores may be fractional in [0, 1].

    The paper's ablations are options: ``acquisition="score_only"`` (Zhou et al.'s Algorithm 6)
    and ``uncertainty_cells="all"`` (the index of Algorithm 2 as printed); the non-active
    low-rank baseline (Algorithm 5) is :class:`UniformLRF`.

    Parameters
    ----------
{common_params}
    eta : float, default=5.0
        Weight of the uncertainty in the index. With ``acquisition="score_only"``, the
        exploration parameter of the UCB-E bonus ``sqrt(eta / |O_i|)`` instead (pass
        ``eta=1.0``, UCB-E's value in the paper, as ``benchmarks/bandits_ablations.py``
        does: the default 5 explores more).
    acquisition : {"uncertainty", "score_only"}, default="uncertainty"
        ``"uncertainty"``: UCB-E-LRF (Zhou et al. Alg. 2), the index above and the
        ``batch_size`` unscored examples of largest ``R``. ``"score_only"``: the paper's
        "UCB-E-LRF (Score Only)" ablation (Alg. 6): the uncertainty plays no part; the index is
        UCB-E's, on the low-rank estimate, ``(1/n)[sum_(O_i) S + sum_(U_i) E_hat] +
        sqrt(eta / |O_i|)`` (infinite for a model with no score yet), and the batch is drawn
        uniformly without replacement from the model's unscored examples.
    uncertainty_cells : {"unscored", "all"}, default="unscored"
        Cells whose uncertainties the index sums (``acquisition="uncertainty"`` only).
        ``"unscored"``: ``eta sum_(U_i) R``, the uncertainty of what is still predicted.
        ``"all"``: ``eta sum_j R[i, j]`` over all the model's cells, scored ones included, as
        Algorithm 2 is printed (the ensemble's spread on a scored cell does not affect the
        estimate, so this favours models whose observed cells the members fit differently).
{ensemble_params}

    Attributes
    ----------
{common_attrs}
{ensemble_attrs}

    See Also
    --------
    UCBE : the index on observed scores only.
    UniformLRF : the same estimate with uniformly random cells (non-active baseline).

    References
    ----------
    J. P. Zhou et al., "On speeding up language model evaluation", ICLR 2025.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_riskcontrol.bandits import UCBELRF
    >>> rng = np.random.default_rng(0)
    >>> skill, ease = rng.beta(5, 3, 40), rng.beta(4, 2, 300)    # a near rank-1 matrix
    >>> S = (rng.uniform(size=(40, 300)) < np.outer(skill, ease)).astype(float)
    >>> lrf = UCBELRF(budget=0.15, n_members=16, random_state=0).fit(S)
    >>> int(lrf.best_index_) == int(np.argmax(S.mean(1))), lrf.n_evaluations_   # one run
    (True, 1800)

    The score-only ablation spends the same budget, with UCB-E's bonus and uniform examples:

    >>> so = UCBELRF(budget=0.15, n_members=16, acquisition="score_only", eta=1.0,
    ...              random_state=0).fit(S)
    >>> so.n_evaluations_
    1800
    """

    _parameter_constraints = {
        **_EnsembleStrategy._parameter_constraints,
        "eta": [Interval(Real, 0, None, closed="left")],
        "acquisition": [StrOptions({"uncertainty", "score_only"})],
        "uncertainty_cells": [StrOptions({"unscored", "all"})],
    }

    def __init__(
        self,
        *,
        budget: float = 0.1,
        batch_size: int = 32,
        eta: float = 5.0,
        acquisition: str = "uncertainty",
        uncertainty_cells: str = "unscored",
        warmup_fraction: float = 0.05,
        rank: int | str = 1,
        n_members: int = 64,
        drop_rate: float = 0.05,
        ridge: float = 0.1,
        n_sweeps: int = 10,
        refit_sweeps: int = 2,
        refit_every: int | str = "auto",
        random_state: RandomStateLike = None,
        verbose: int = 0,
        warm_start: bool = False,
    ) -> None:
        self.budget = budget
        self.batch_size = batch_size
        self.eta = eta
        self.acquisition = acquisition
        self.uncertainty_cells = uncertainty_cells
        self.warmup_fraction = warmup_fraction
        self.rank = rank
        self.n_members = n_members
        self.drop_rate = drop_rate
        self.ridge = ridge
        self.n_sweeps = n_sweeps
        self.refit_sweeps = refit_sweeps
        self.refit_every = refit_every
        self.random_state = random_state
        self.verbose = verbose
        self.warm_start = warm_start

    def _uncertainty_cells(self, st, U):
        if self.acquisition == "score_only":
            return None
        return st.free if self._sums_all_uncertainties() else U

    def _sums_all_uncertainties(self):
        return self.uncertainty_cells == "all"

    def _set_index(self, st):
        with np.errstate(invalid="ignore", divide="ignore"):
            st.est = (st.sums + st.pred) / st.n_avail
            if self.acquisition == "score_only":
                # Alg. 6: UCB-E's bonus on the low-rank estimate; models never scored come first
                bonus = np.sqrt(self.eta / np.maximum(st.counts, 1))
                idx = st.est + np.where(st.counts > 0, bonus, np.inf)
            else:
                idx = (st.sums + st.pred + self.eta * st.unc) / st.n_avail
        st.index = np.where(st.counts >= st.n_avail, -np.inf, idx)

    def _plan_step(self, st):
        i = _argmax(st.index, st.priority)
        if st.index[i] == -np.inf:
            return None
        cand = np.flatnonzero(st.free[i] & ~st.obs[i])
        b = int(min(self.batch_size, st.budget - st.n_used, cand.size))
        if self.acquisition == "score_only":
            # Alg. 6: b examples uniformly without replacement from the unscored ones
            return i, np.sort(cand[st.rng.choice(cand.size, size=b, replace=False)]), None
        r = st.R[i, cand]
        if b < cand.size:
            # the b largest uncertainties; ties broken at random
            key = r + 1e-12 * st.rng.uniform(size=r.size)
            top = np.argpartition(-key, b - 1)[:b]
        else:
            top = np.arange(cand.size)
        return i, np.sort(cand[top]), None
