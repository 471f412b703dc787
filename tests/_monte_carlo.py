"""Slack of a Monte-Carlo check of a guarantee: how far above its bound an estimated rate may lie.

A rate estimated from ``reps`` independent repetitions has standard error
``sqrt(rate (1 - rate) / reps)``; the checks allow three of them (:func:`three_se`), plus one
repetition's worth (:func:`slack`) where the rate is a count of rare events at a small ``reps``.
"""

import numpy as np


def three_se(rate, reps):
    """Three Monte-Carlo standard errors of a rate ``rate`` estimated from ``reps`` repetitions."""
    return 3 * np.sqrt(rate * (1 - rate) / reps)


def slack(rate, reps):
    """:func:`three_se` plus ``1 / reps`` (one repetition's worth)."""
    return three_se(rate, reps) + 1.0 / reps
