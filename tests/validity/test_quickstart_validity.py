"""The README quickstart keeps its promise: expected error among deployed points <= alpha.

The quickstart's code is read from README.md and rerun with every ``random_state=<int>`` set to
one seed per repetition, so the fitting, calibration and test splits and SCoRE-SDR's boosting
all change between repetitions. SCoRE-SDR controls the *expected* error rate among deployed
points (its SDR) over these draws; the test checks the Monte-Carlo average of the realized rate
against ``alpha`` plus 3 standard errors of that average (a valid method fails with probability
about 0.1%). The quickstart as it was before issue 12 (contiguous slices of ``load_digits``)
averages 4.1% against alpha = 2% and fails this test.

Default run: 100 splits (about 4 s on 2 cores); ``-m slow``: 4000 splits. The realized rate has
a standard deviation of about 0.009 per split and the quickstart sits at alpha (mean 0.020 over
400 splits), so with 100 splits the check fails above about alpha + 0.003: it still fails the
quickstart run at twice its alpha (mean 0.038 over these splits, 15 standard errors above 2%)
and the issue-12 quickstart (4.1%); the quickstart run at 1.5 alpha (mean 0.029) fails it by
7.6 standard errors, and even at 1.25 alpha (mean 0.024) by 4.0 (all measured on splits 0-99).
Each split is cheap (a logistic regression on 600 digits, 0.03 s) but two BLAS threads fighting
for two busy cores made it 0.2 s of CPU, so the splits run with BLAS on one thread (the
quickstart's code and its results are unchanged; only its speed depends on the thread count).
"""

import contextlib
import io
import re
import warnings
from pathlib import Path

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

from sklearn_riskcontrol import RiskControlWarning

ROOT = Path(__file__).resolve().parents[2]
SEED = re.compile(r"random_state=\d+")


def _quickstart():
    text = (ROOT / "README.md").read_text()
    code = re.search(r"## Quickstart\n\n```python\n(.+?)```", text, re.S).group(1)
    alpha = float(re.search(r"alpha=([0-9.]+)", code).group(1))
    assert SEED.search(code), "the quickstart must seed its splits with random_state=<int>"
    return compile(SEED.sub("random_state=SEED", code), "README quickstart", "exec"), alpha


def _realized_sdr(code, seed):
    """Realized error rate among deployed test points and the deployed share, for one split."""
    ns = {"SEED": seed}
    with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
        # "deploys on no test point" is a legal outcome; it counts as error 0 (SDR definition).
        warnings.simplefilter("ignore", RiskControlWarning)
        exec(code, ns)
    missing = {"model", "deploy", "X_test", "y_test"} - ns.keys()
    assert not missing, f"the quickstart no longer defines {sorted(missing)}"
    # Brute-force definition, independent of the library's metrics.
    errors = ns["model"].predict(ns["X_test"]) != ns["y_test"]
    deploy = np.asarray(ns["deploy"], dtype=bool)
    return errors[deploy].sum() / max(1, deploy.sum()), deploy.mean()


def _check(n_splits):
    code, alpha = _quickstart()
    with threadpool_limits(limits=1, user_api="blas"):
        sdp, share = np.array([_realized_sdr(code, seed) for seed in range(n_splits)]).T
    mean, se = sdp.mean(), sdp.std(ddof=1) / np.sqrt(n_splits)
    assert mean <= alpha + 3 * se, (
        f"README quickstart: average error among deployed points {mean:.4f} over {n_splits} "
        f"shuffled splits exceeds alpha = {alpha} + 3 standard errors ({3 * se:.4f})"
    )
    # Not vacuous: deploying (almost) nothing would pass the check above trivially.
    assert share.mean() > 0.5, f"README quickstart deploys on only {share.mean():.0%} on average"
    return mean, se


def test_readme_quickstart_controls_the_expected_error_among_deployed():
    # Reduced study (see the module docstring): still fails the quickstart run at 1.25-2 x alpha.
    _check(100)


@pytest.mark.slow
def test_readme_quickstart_controls_the_expected_error_among_deployed_many_splits():
    _check(4000)
