"""Fixtures shared by several test modules."""

import pytest
from threadpoolctl import threadpool_limits


@pytest.fixture(scope="session", autouse=True)
def _one_blas_and_openmp_thread():
    """One BLAS and one OpenMP thread for the whole run (issue 23), as the demo does.

    The tests' models and matrices are small and pytest runs one test at a time: extra threads
    buy little, and on a busy 2-core machine (shared CI) oversubscribed threads spin against each
    other. Measured on such a machine: the demo's SCoRE section (gradient boosting, OpenMP) took
    41 s instead of 4 s, test_score_validity.py 31 s of CPU instead of 16 s (BLAS). The results
    do not depend on it (the recorded bandit runs of reference_runs.npz are reproduced with one
    thread or two, step for step and to the last bit). Subprocesses the tests start, and joblib's
    worker processes, keep their own defaults.
    """
    with threadpool_limits(limits=1):
        yield


@pytest.fixture()
def plt():
    """``matplotlib.pyplot`` on the Agg backend (skips without matplotlib); closes every figure."""
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    yield plt
    plt.close("all")
