"""Pools for active labeling at the null's boundary, shared by
``tests/autoeval/test_active_labeling.py`` (type-I error, reduced) and
``benchmarks/autoeval_active.py`` (table (c), 100 pools per row)."""

import numpy as np


def boundary_pool(rng, where, N, alpha):
    """Pool risk exactly alpha; a calibrated-looking judge sure on 2/3 of the rows; the errors
    put where the judge is sure (``"sure-and-wrong"``), where it is unsure (``"unsure"``), or
    ``"anywhere"``. Returns the judge's losses ``g`` and the true losses ``h``."""
    sure = rng.random(N) < 2 / 3
    g = np.where(sure, rng.uniform(0, 0.01, N), rng.uniform(0.1, 0.5, N))
    k = int(round(alpha * N))
    cand = {"sure-and-wrong": np.flatnonzero(sure), "unsure": np.flatnonzero(~sure),
            "anywhere": np.arange(N)}[where]
    h = np.zeros(N)
    h[rng.choice(cand, size=min(k, cand.size), replace=False)] = 1
    if h.sum() < k:
        h[rng.choice(np.flatnonzero(h == 0), k - int(h.sum()), replace=False)] = 1
    return g, h
