"""Fixtures shared by several test modules, and the layout of ``tests/``.

The test folders mirror the package (CONTRIBUTING.md, "Layout and layers"): ``evalues/``,
``evaluation/``, ``selective/``, ``autoeval/``, ``online/``, ``bandits/`` test the subpackage of
that name; ``core/`` the shared root modules (risks, validation, parallel work, parcels,
progress); ``package/`` the whole-package checks (API homes, docstrings, docs, packaging,
release, layers, estimator checks, persistence, bad inputs, properties); ``faces/`` the command
line, demo, plotting, studies, examples, benchmarks' quick modes and CI commands; ``validity/``
the Monte-Carlo guarantee studies.

Helper modules (``_models.py``, ``_api.py``, ``_score_reference.py``, ... and
``reference_runs.npz``) stay in ``tests/`` itself; a test in any folder imports them by their
plain name (``from _models import FlipModel``) because this file puts ``tests/`` first on
``sys.path``, whatever pytest's import mode. Test folders have no ``__init__.py``: pytest imports
each test module by its basename (its folder first on ``sys.path``), so **basenames must be
unique across all folders** (pytest stops with "import file mismatch" otherwise: the array
layer of ``online/`` is ``test_sps.py``, not a second ``test_arrays.py``). Test modules never
import each other: what two of them share lives in a helper module.
"""

import sys
from pathlib import Path

import pytest
from threadpoolctl import threadpool_limits

TESTS = str(Path(__file__).resolve().parent)
if TESTS not in sys.path:
    sys.path.insert(0, TESTS)


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


def _digits_split(train_size, test_size, max_iter):
    """Digits: a logistic regression fitted on ``train_size`` rows, the rest split into
    calibration rows and ``test_size`` test rows (fixed seeds)."""
    from sklearn.datasets import load_digits
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import train_test_split

    X, y = load_digits(return_X_y=True)
    X_fit, X_rest, y_fit, y_rest = train_test_split(X, y, train_size=train_size, random_state=0)
    X_cal, X_test, y_cal, y_test = train_test_split(X_rest, y_rest, test_size=test_size,
                                                    random_state=0)
    model = LogisticRegression(max_iter=max_iter).fit(X_fit, y_fit)
    return model, X_fit, y_fit, X_cal, y_cal, X_test, y_test


@pytest.fixture(scope="session")
def digits():
    """``(model, X_fit, y_fit, X_cal, y_cal, X_test, y_test)``: 500 fitting rows, 897
    calibration rows, 400 test rows. Shared by every module: do not modify it."""
    return _digits_split(500, 400, max_iter=3000)


@pytest.fixture(scope="session")
def digits_600():
    """``(model, X_fit, y_fit, X_cal, y_cal, X_test, y_test)``: 600 fitting rows, 697
    calibration rows, 500 test rows. Shared by every module: do not modify it."""
    return _digits_split(600, 500, max_iter=2000)
