"""Recorded bandit runs, for tests that a setting still reproduces the run of earlier code.

Each run below was recorded before a feature that changed the code path it goes through
(``acquisition`` / ``uncertainty_cells``, ``refit_every``, ``refit_every="auto"``, the
selector's default strategy); a test then checks that the setting which spells out the former
behaviour still gives that run. ``reference_runs.npz`` holds, per run, every step's pulled
model (``arm``, the evaluation order), current best (``best_index``) and evaluation count
(``n_evaluations``), the final ``means_`` and, for the first run, ``uncertainties_``.

It was written by ``python tests/_reference_runs.py`` at commit 77e82df, whose runs were still
those of the code before each feature: the tests then compared SHA-256 digests of the same
quantities (estimates rounded to 6 decimals), recorded before the features, and every digest
matched. Rewrite it only when a change of these runs is intended.

Tolerances. The choices (``arm``, ``best_index``, ``n_evaluations``) are compared exactly. The
estimates are compared with :func:`numpy.testing.assert_allclose`: their last bits depend on
the BLAS kernel of the low-rank fits (``OPENBLAS_CORETYPE``; the thread count changed nothing).
Measured at 77e82df with OpenBLAS 0.3.31 and its SkylakeX, Haswell, Sandybridge and Prescott
kernels, the largest relative differences were 5e-16 for UCB-E-LRF's ``means_``, 5e-11 for
its ``uncertainties_`` (the ensemble's spread, a difference of nearly equal fits) and 9e-8 for
the estimates of PULSE and NaivePooling (the logistic factor fit stops at a relative decrease
of ``tol=1e-4``, so the kernel's rounding moves the iterate it stops at).
"""

import functools
from pathlib import Path

import numpy as np

PATH = Path(__file__).with_name("reference_runs.npz")
HISTORY = ("arm", "best_index", "n_evaluations")

# assert_allclose rtol, from the spreads measured above with a margin of 20x or more
RTOL_ALS_MEANS = 1e-9  # UCB-E-LRF means_: observed scores + ALS predictions, 5e-16 measured
RTOL_ALS_UNCERTAINTIES = 1e-8  # UCB-E-LRF uncertainties_: 5e-11 measured
RTOL_LOGISTIC_FIT = 1e-6  # PULSE / NaivePooling means_: 9e-8 measured


def _near_low_rank(**kw):
    from sklearn_riskcontrol.bandits import make_score_matrix

    return make_score_matrix(30, 400, **kw)


def ucbelrf_default(**params):
    """UCB-E-LRF with its defaults (before ``acquisition`` / ``uncertainty_cells`` existed)."""
    from sklearn_riskcontrol.bandits import UCBELRF

    S = _near_low_rank(random_state=1).scores
    return UCBELRF(budget=0.3, n_members=8, random_state=0, **params).fit(S)


def ucbelrf_side_cv(**params):
    """UCB-E-LRF with side scores and a cross-validated rank, batches of 8."""
    from sklearn_riskcontrol.bandits import UCBELRF

    d = _near_low_rank(n_side_models=10, random_state=2)
    est = UCBELRF(budget=0.2, batch_size=8, n_members=8, rank="cv", random_state=3, **params)
    return est.fit(d.scores, side_scores=d.side_scores)


def ucbelrf_refit_every_1():
    """UCB-E-LRF refitting after every batch (the behaviour before ``refit_every`` existed)."""
    from sklearn_riskcontrol.bandits import UCBELRF

    S = _near_low_rank(random_state=1).scores
    return UCBELRF(budget=0.3, n_members=8, refit_every=1, random_state=0).fit(S)


def side_run(cls_name, refit_every):
    """PULSE or NaivePooling with side scores, rank 2, batches of 8, a fixed ``refit_every``."""
    from sklearn_riskcontrol import bandits

    data = _near_low_rank(n_side_models=30, random_state=2)
    est = getattr(bandits, cls_name)(budget=0.3, batch_size=8, rank=2, refit_every=refit_every,
                                     random_state=0)
    return est.fit(data.scores, side_scores=data.side_scores)


def selector_former_default():
    """BestModelSelector with its former default strategy spelled out; returns ``strategy_``."""
    from sklearn.datasets import make_classification
    from sklearn.linear_model import LogisticRegression

    from sklearn_riskcontrol.bandits import PULSE, BestModelSelector

    X, y = make_classification(1600, random_state=0)
    models = [LogisticRegression(C=C).fit(X[:600], y[:600]) for C in (1.0, 0.1, 0.01, 0.001)]
    former = PULSE(budget=0.3, batch_size=16, refit_every=10, rank=2, fractional_scores=True,
                   random_state=0)
    return BestModelSelector(models, strategy=former, random_state=0).fit(X[600:], y[600:]).strategy_


RUNS = {
    "ucbelrf_default": ucbelrf_default,
    "ucbelrf_side_cv": ucbelrf_side_cv,
    "ucbelrf_refit_every_1": ucbelrf_refit_every_1,
    "pulse_refit_1000": functools.partial(side_run, "PULSE", 1000),
    "pulse_refit_30": functools.partial(side_run, "PULSE", 30),
    "naive_pooling_refit_1000": functools.partial(side_run, "NaivePooling", 1000),
    "naive_pooling_refit_30": functools.partial(side_run, "NaivePooling", 30),
    "selector_former_default": selector_former_default,
}
WITH_UNCERTAINTIES = ("ucbelrf_default",)


@functools.lru_cache(maxsize=None)
def _recorded():
    with np.load(PATH) as f:
        return {key: f[key] for key in f.files}


def assert_same_run(est, name, *, means_rtol, uncertainties_rtol=None):
    """``est`` (fitted) made the recorded run ``name``: same steps, same estimates (to rtol)."""
    ref = _recorded()
    for key in HISTORY:
        got, want = np.asarray(est.history_[key]), ref[f"{name}/{key}"]
        n = min(got.size, want.size)
        diff = np.flatnonzero(got[:n] != want[:n])
        if diff.size or got.size != want.size:
            i = int(diff[0]) if diff.size else n
            raise AssertionError(
                f"{name}: history_[{key!r}] leaves the recorded run at step {i} (of "
                f"{want.size - 1} recorded, {got.size - 1} now): steps {i}..{i + 4} are "
                f"{got[i:i + 5].tolist()}, recorded {want[i:i + 5].tolist()}")
    np.testing.assert_allclose(est.means_, ref[f"{name}/means"], rtol=means_rtol, atol=0,
                               err_msg=f"{name}: means_")
    if uncertainties_rtol is not None:
        np.testing.assert_allclose(est.uncertainties_, ref[f"{name}/uncertainties"],
                                   rtol=uncertainties_rtol, atol=0,
                                   err_msg=f"{name}: uncertainties_")


def record():
    """Run every configuration and write ``reference_runs.npz``."""
    arrays = {}
    for name, run in RUNS.items():
        est = run()
        for key in HISTORY:
            values = np.asarray(est.history_[key])
            assert values.min() >= np.iinfo(np.int16).min and values.max() <= np.iinfo(np.int16).max
            arrays[f"{name}/{key}"] = values.astype(np.int16)
        arrays[f"{name}/means"] = est.means_
        if name in WITH_UNCERTAINTIES:
            arrays[f"{name}/uncertainties"] = est.uncertainties_
    np.savez_compressed(PATH, **arrays)
    print(f"wrote {PATH} ({PATH.stat().st_size} bytes, {len(RUNS)} runs)")


if __name__ == "__main__":
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1):  # as in the tests (conftest.py); the runs do not depend on it
        record()
