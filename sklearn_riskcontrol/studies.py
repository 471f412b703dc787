"""Monte-Carlo studies that run in parallel on any joblib backend, reproducibly.

* :func:`monte_carlo` calls ``func(rng)`` for ``n_repetitions`` independent random generators
  spawned from one :class:`numpy.random.SeedSequence` and returns the results in repetition
  order.
* :func:`validity_study` repeats "draw fresh calibration and test data, fit, decide" for a
  deployment estimator (:class:`~sklearn_riskcontrol.selective.SCoREMDR`, :class:`~sklearn_riskcontrol.selective.SCoRESDR`,
  ...) and reports the realized MDR, SDR and deployment rate of every repetition.
* :func:`bandit_accuracy_study` runs best-model identification strategies (PULSE, UCB-E, ...)
  many times on one score matrix and returns their accuracy-vs-budget curves.

Reproducibility: repetition ``i`` only sees the ``i``-th child of ``SeedSequence(random_state)``,
never anything tied to a worker, so the same ``random_state`` gives identical results for every
``n_jobs`` and every joblib backend (loky, threading, multiprocessing, Dask, Ray). To run on a
cluster, wrap the call in ``joblib.parallel_config(backend="dask")`` (see the *Scale-out* page of
the user guide).
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike
from sklearn.base import clone
from sklearn.utils import Bunch

from ._parallel import check_batch_size, run_units
from ._progress import Progress
from ._validation import check_random_state, check_score_matrix, show
from ._wrapping import portable
from .evaluation import ScoreOracle
from .bandits import accuracy_curve
from .selective import deployment_rate, realized_mdr, realized_sdr
from ._typing import Estimator, RandomStateLike

if TYPE_CHECKING:
    from .evaluation import ScoreOracle

__all__ = ["monte_carlo", "validity_study", "bandit_accuracy_study"]


def _seed_sequence(random_state):
    """Root SeedSequence from an int, None, a SeedSequence, a Generator or a RandomState."""
    if isinstance(random_state, (bool, np.bool_)):
        raise TypeError("`random_state` must be an int, not a bool.")
    if isinstance(random_state, np.random.SeedSequence):
        return random_state
    if random_state is None or isinstance(random_state, numbers.Integral):
        return np.random.SeedSequence(random_state)
    if isinstance(random_state, (np.random.Generator, np.random.RandomState)):
        # Draws the root seed from the user's generator (which advances), like every estimator.
        rng = check_random_state(random_state)
        return np.random.SeedSequence(int(rng.randint(np.iinfo(np.int32).max)))
    raise TypeError(
        "`random_state` must be None, an int, a numpy SeedSequence, Generator or RandomState; "
        f"got {type(random_state).__name__}."
    )


def _one_repetition(seed, func, *args):
    return func(np.random.default_rng(seed), *args)


def _int_seed(rng):
    """An int seed for a scikit-learn ``random_state``, drawn from the repetition's generator."""
    return int(rng.integers(np.iinfo(np.int32).max))


def monte_carlo(
    func: Callable[..., Any],
    n_repetitions: int,
    *,
    args: tuple[Any, ...] = (),
    random_state: RandomStateLike | np.random.SeedSequence | None = None,
    n_jobs: int | None = None,
    verbose: int = 0,
    batch_size: int | str = "auto",
) -> list[Any]:
    """Run ``func(rng, *args)`` for independent generators, in parallel, reproducibly.

    Repetition ``i`` receives ``numpy.random.default_rng(children[i])`` where ``children =
    SeedSequence(random_state).spawn(n_repetitions)``. Results depend only on ``random_state``,
    never on ``n_jobs``, the joblib backend or the order in which workers finish.

    Parameters
    ----------
    func : callable
        ``func(rng, *args) -> result`` with ``rng`` a :class:`numpy.random.Generator`. To seed a
        scikit-learn object inside, draw an int from it, e.g. ``int(rng.integers(2**31 - 1))``.
        Lambdas and local functions are shipped with cloudpickle, so every backend accepts them.
    n_repetitions : int
        Number of independent repetitions (>= 1).
    args : tuple, default=()
        Extra arguments passed to every call. Put large arrays here rather than in a closure:
        joblib's loky backend memory-maps them and the Dask backend scatters them once.
    random_state : int, None, SeedSequence, Generator or RandomState, default=None
        Root of the child seeds. ``None`` draws fresh entropy (not reproducible).
    n_jobs : int, default=None
        joblib workers (``None``: 1 unless a ``joblib.parallel_config`` context sets it; ``-1``:
        all). The active joblib backend is used, so a Dask or Ray cluster works unchanged.
    verbose : int, default=0
        ``>= 1`` reports progress (a tqdm bar when available in an interactive session, else a
        line at every 10% of the repetitions).
    batch_size : "auto" or int, default="auto"
        Repetitions per parallel task. ``"auto"`` runs the first repetitions in this process
        for about 50 ms to measure their cost, then sends the rest as at most 4 tasks per
        worker of at least 0.1 s each, or finishes here when the remaining work is below
        0.2 s (parallelism would not pay; see the *Scale-out* page). An int always dispatches
        tasks of that many repetitions. Nested joblib calls inside a task (e.g. an
        estimator's ``n_jobs``) run sequentially. Results never depend on it.

    Returns
    -------
    results : list
        ``func``'s results, in repetition order.

    Examples
    --------
    Coverage of a 90% normal confidence interval for a mean, over 200 data sets:

    >>> import numpy as np
    >>> from sklearn_riskcontrol.studies import monte_carlo
    >>> def covers(rng, n=50):
    ...     x = rng.normal(size=n)
    ...     return abs(x.mean()) <= 1.645 / np.sqrt(n)
    >>> hits = monte_carlo(covers, 200, random_state=0)
    >>> len(hits), bool(0.85 < np.mean(hits) < 0.95)      # realized coverage rate near 0.9
    (200, True)
    >>> from joblib import parallel_config
    >>> with parallel_config(backend="threading"):          # any backend, any n_jobs
    ...     same = hits == monte_carlo(covers, 200, random_state=0, n_jobs=2)
    >>> same
    True
    """
    if not isinstance(n_repetitions, numbers.Integral) or isinstance(n_repetitions, bool) \
            or n_repetitions < 1:
        raise ValueError(f"`n_repetitions` must be a positive integer; got {show(n_repetitions)}.")
    if not callable(func):
        raise TypeError(f"`func` must be callable as func(rng, *args); got {func!r}.")
    batch_size = check_batch_size(batch_size)
    children = _seed_sequence(random_state).spawn(int(n_repetitions))
    # The function and args are passed once per task (sent to each Dask worker once).
    with Progress(n_repetitions, verbose=verbose, desc="monte_carlo", unit="repetitions") as bar:
        return run_units(_one_repetition, [(seed,) for seed in children],
                         (portable(func), *tuple(args)), n_jobs=n_jobs, batch_size=batch_size,
                         each=lambda i, _: bar.update(i + 1))


# --------------------------------------------------------------------------------------------
# Validity of deployment decisions
# --------------------------------------------------------------------------------------------
def _copy_with_seed(estimator, seed):
    """A new instance with the same parameters (not ``clone``: a fitted wrapped model stays
    fitted) and ``random_state=seed`` if the estimator has one."""
    params = estimator.get_params(deep=False)
    if "random_state" in params:
        params["random_state"] = seed
    return type(estimator)(**params)


class _ValidityRepetition:
    """One repetition of :func:`validity_study` (a module-level class: picklable everywhere)."""

    def __init__(self, estimator, sample):
        self.estimator = estimator
        self.sample = portable(sample)

    def __call__(self, rng):
        est = _copy_with_seed(self.estimator, _int_seed(rng))
        data = self.sample(rng)
        if len(data) not in (4, 6):
            raise ValueError(
                "`sample(rng)` must return (X_cal, y_cal, X_test, y_test) or, under covariate "
                "shift, (X_cal, y_cal, X_test, y_test, shift_weights_cal, shift_weights_test); "
                f"got {len(data)} items."
            )
        X_cal, y_cal, X_test, y_test = data[:4]
        w_cal, w_test = data[4:] if len(data) == 6 else (None, None)
        fit_kw = {} if w_cal is None else {"shift_weights": w_cal}
        test_kw = {} if w_test is None else {"shift_weights": w_test}
        est.fit(X_cal, y_cal, **fit_kw)
        deployed = np.asarray(est.decide(X_test, **test_kw), dtype=bool)
        risks = est.risk_(np.asarray(y_test), est.predict(X_test))
        return (realized_mdr(risks, deployed), realized_sdr(risks, deployed),
                deployment_rate(deployed))


def validity_study(
    estimator: Estimator,
    sample: Callable[..., Any],
    *,
    n_repetitions: int = 100,
    random_state: RandomStateLike = None,
    n_jobs: int | None = None,
    verbose: int = 0,
    batch_size: int | str = "auto",
) -> Bunch:
    """Realized deployment risks of a per-sample deployment estimator over fresh data sets.

    Each repetition draws ``(X_cal, y_cal, X_test, y_test) = sample(rng)``, fits a copy of
    ``estimator`` on the calibration rows, deploys with ``decide(X_test)`` and records the
    realized marginal deployment risk (MDR), selective deployment risk (SDR) and deployment
    rate (:func:`~sklearn_riskcontrol.selective.realized_mdr`, ...). Averages over repetitions estimate ``E[MDR]``
    (controlled by :class:`~sklearn_riskcontrol.selective.SCoREMDR`) and ``E[SDR]`` (controlled by
    :class:`~sklearn_riskcontrol.selective.SCoRESDR`).

    Parameters
    ----------
    estimator : SCoREMDR, SCoRESDR or another estimator with ``fit``, ``decide``, ``predict``
        and a fitted ``risk_`` (the per-sample loss). It is copied with
        ``type(estimator)(**estimator.get_params(deep=False))``, not ``clone``d, so a fitted
        wrapped model stays fitted; ``random_state`` (if any) is set from the repetition's
        generator.
    sample : callable
        ``sample(rng) -> (X_cal, y_cal, X_test, y_test)``, or a 6-tuple that adds the
        covariate-shift ratios ``(shift_weights_cal, shift_weights_test)``.
    n_repetitions : int, default=100
    random_state, n_jobs, verbose, batch_size
        As in :func:`monte_carlo`. The estimator's own ``n_jobs`` applies only when the
        repetitions run sequentially (``n_jobs=1``).

    Returns
    -------
    result : Bunch
        ``mdr``, ``sdr``, ``deployment_rate``: ndarrays of shape (n_repetitions,) in repetition
        order.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn_riskcontrol.selective import SCoREMDR
    >>> from sklearn_riskcontrol.studies import validity_study
    >>> def draw(rng, n):
    ...     X = rng.normal(size=(n, 2))
    ...     return X, (X[:, 0] + rng.normal(scale=0.7, size=n) > 0).astype(int)
    >>> model = LogisticRegression().fit(*draw(np.random.default_rng(0), 500))
    >>> def sample(rng):
    ...     return (*draw(rng, 300), *draw(rng, 300))
    >>> res = validity_study(SCoREMDR(model, alpha=0.1), sample, n_repetitions=100,
    ...                      random_state=0)
    >>> res.mdr.shape
    (100,)

    SCoREMDR guarantees ``E[MDR] <= alpha = 0.1`` in expectation over the calibration and test
    draws; each repetition's MDR is one realization, and their average estimates the
    expectation up to Monte Carlo error (here 2 standard errors):

    >>> se = res.mdr.std() / np.sqrt(100)
    >>> print(f"average realized MDR over 100 draws {res.mdr.mean():.3f} +- {2 * se:.3f}; "
    ...       f"deployed on {res.deployment_rate.mean():.2f} of the test rows on average")
    average realized MDR over 100 draws 0.104 +- 0.005;
    deployed on 0.78 of the test rows on average
    """
    for attr in ("fit", "decide", "predict", "get_params"):
        if not hasattr(estimator, attr):
            raise TypeError(
                f"`estimator` must be a deployment estimator with `{attr}` (e.g. SCoREMDR or "
                f"SCoRESDR); got {estimator!r}."
            )
    if not callable(sample):
        raise TypeError("`sample` must be callable: sample(rng) -> (X_cal, y_cal, X_test, y_test).")
    out = monte_carlo(_ValidityRepetition(estimator, sample), n_repetitions,
                      random_state=random_state, n_jobs=n_jobs, verbose=verbose,
                      batch_size=batch_size)
    mdr, sdr, rate = (np.array(col, dtype=float) for col in zip(*out))
    return Bunch(mdr=mdr, sdr=sdr, deployment_rate=rate)


# --------------------------------------------------------------------------------------------
# Best-model identification
# --------------------------------------------------------------------------------------------
def _bandit_repetition(rng, strategies, scores, side_scores):
    """Histories of every strategy on one repetition (all share the repetition's seed)."""
    seed = _int_seed(rng)
    out = {}
    for name, strategy in strategies.items():
        fitted = clone(strategy).set_params(random_state=seed)
        fitted.fit(scores, side_scores=side_scores)
        out[name] = {k: np.asarray(v) for k, v in fitted.history_.items()}
    return out


def bandit_accuracy_study(
    strategies: Mapping[str, Any],
    scores: ArrayLike | ScoreOracle,
    *,
    side_scores: ArrayLike | None = None,
    n_repetitions: int = 20,
    budgets: ArrayLike | None = None,
    best_index: int | None = None,
    random_state: RandomStateLike = None,
    n_jobs: int | None = None,
    verbose: int = 0,
    batch_size: int | str = "auto",
) -> Bunch:
    """Accuracy-vs-budget curves of best-model identification strategies.

    Every repetition fits a clone of each strategy with ``random_state`` set to the
    repetition's seed (all strategies of one repetition share it) on the same ``scores``; the
    curve is the fraction of repetitions whose current best model after at most ``budget``
    evaluations is the truly best one
    (:func:`~sklearn_riskcontrol.bandits.accuracy_curve`).

    Parameters
    ----------
    strategies : dict of str -> unfitted strategy
        E.g. ``{"PULSE": PULSE(budget=0.1), "uniform": UniformSampling(budget=0.1)}``; each
        needs a ``random_state`` parameter and a ``history_`` after ``fit``.
    scores : array-like of shape (n_models, n_examples) or ScoreOracle
        The score matrix (or oracle) every strategy is run on.
    side_scores : array-like of shape (n_side_models, n_examples), default=None
        Passed to ``fit`` (used by the low-rank strategies).
    n_repetitions : int, default=20
    budgets : array-like of int, default=None
        Evaluation counts at which the curves are computed. ``None``: 50 budgets evenly spaced
        up to the largest number of evaluations any run recorded.
    best_index : int, default=None
        Index of the truly best model. ``None``: the row of ``scores`` with the largest mean
        (lowest index on ties); required when ``scores`` is an oracle.
    random_state, n_jobs, verbose, batch_size
        As in :func:`monte_carlo`; the repetitions run in parallel.

    Returns
    -------
    result : Bunch
        ``budgets`` (ndarray), ``accuracy`` and ``stderr`` (dict name -> ndarray of shape
        (len(budgets),)), ``best_index`` (int) and ``histories`` (dict name -> list of the
        ``history_`` of every repetition, e.g. for
        :func:`~sklearn_riskcontrol.bandits.budget_to_reach`).

    Examples
    --------
    >>> from sklearn_riskcontrol.bandits import UCBE, UniformSampling, make_score_matrix
    >>> from sklearn_riskcontrol.studies import bandit_accuracy_study
    >>> data = make_score_matrix(20, 500, gap=0.05, random_state=0)
    >>> study = bandit_accuracy_study(
    ...     {"UCB-E": UCBE(budget=0.3), "uniform": UniformSampling(budget=0.3)}, data.scores,
    ...     n_repetitions=10, budgets=[300, 3000], random_state=0)
    >>> study.best_index == data.best_index, study.accuracy["uniform"].shape
    (True, (2,))
    >>> bool(study.accuracy["UCB-E"][-1] >= study.accuracy["UCB-E"][0])
    True
    """
    if not isinstance(strategies, dict) or not strategies:
        raise TypeError("`strategies` must be a non-empty dict: name -> unfitted strategy.")
    for name, strategy in strategies.items():
        ok = hasattr(strategy, "get_params") and not isinstance(strategy, type)
        if not ok or "random_state" not in strategy.get_params(deep=False):
            raise TypeError(
                f"Strategy {name!r} must be an estimator with `fit` and a `random_state` "
                f"parameter; got {strategy!r}."
            )
    if best_index is None:
        if isinstance(scores, ScoreOracle):
            raise ValueError("`best_index` is required when `scores` is an oracle.")
        means = np.nanmean(check_score_matrix(scores, "scores", allow_nan=True, lower=None), axis=1)
        best_index = int(np.argmax(means))
    runs = monte_carlo(_bandit_repetition, n_repetitions, args=(strategies, scores, side_scores),
                       random_state=random_state, n_jobs=n_jobs, verbose=verbose,
                       batch_size=batch_size)
    histories = {name: [run[name] for run in runs] for name in strategies}
    if budgets is None:
        top = max(int(h["n_evaluations"][-1]) for hs in histories.values() for h in hs
                  if len(h["n_evaluations"]))
        budgets = np.unique(np.linspace(1, max(top, 1), 50).round().astype(int))
    budgets = np.asarray(budgets)
    accuracy, stderr = {}, {}
    for name, hs in histories.items():
        accuracy[name], stderr[name] = accuracy_curve(hs, best_index, budgets)
    return Bunch(budgets=budgets, accuracy=accuracy, stderr=stderr, best_index=int(best_index),
                 histories=histories)
