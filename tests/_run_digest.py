"""Fingerprint of a bandit run, for tests that a setting reproduces an earlier run exactly."""

import hashlib

import numpy as np


def run_digest(est):
    """Every step's pulled model, current best and evaluation count, and the final estimates.

    The estimates enter to 6 decimals: their last bits depend on the BLAS kernel that the ALS
    fits use (e.g. ``OPENBLAS_CORETYPE``), the choices of the run do not.
    """
    h = est.history_
    data = b"".join(np.asarray(h[k], np.int64).tobytes() for k in ("arm", "best_index", "n_evaluations"))
    return hashlib.sha256(data + np.round(est.means_, 6).tobytes()).hexdigest()[:16]
