"""RiskMonitor (issue 28, part 3): the e-process against a loop over its definition, streaming
invariance, the false-alarm guarantee in Monte Carlo (adversarial judges, drifting nulls),
detection after a jump, the confidence sequence's coverage, and the errors."""

import math
import warnings

import numpy as np
import pytest
from _monte_carlo import slack
from sklearn.base import clone

from sklearn_riskcontrol import RiskControlWarning
from sklearn_riskcontrol.autoeval import RiskMonitor

ALPHA = DELTA = 0.1


def _stream(rng, risk, rate, judge="good"):
    h = (rng.random(risk.size) < risk).astype(float)
    g = {"good": lambda: np.where(rng.random(risk.size) < 0.9, h, 1 - h),
         "adversarial": lambda: 1 - h,
         "useless": lambda: (rng.random(risk.size) < 0.5).astype(float)}[judge]()
    return g, np.where(rng.random(risk.size) < rate, h, np.nan)


def _loop_log_eprocess(g, h, alpha, rate, half_life, rhos, prior=10.0, cap=0.5):
    """The module docstring's e-process, one row at a time."""
    decay = 0.5 ** (1.0 / (half_life / rate if g is not None else half_life))
    rows = range(h.size) if g is not None else np.flatnonzero(~np.isnan(h))
    out_rounds = []
    log_w = np.zeros(len(rhos))
    sw = np.zeros(len(rhos)); s1 = np.zeros(len(rhos)); s2 = np.zeros(len(rhos))
    for t in rows:
        for s, rho in enumerate(rhos):
            if g is None:
                x, lo = h[t], 0.0
            else:
                xi = not np.isnan(h[t])
                x = rho * g[t] + (xi * ((h[t] if xi else 0.0) - rho * g[t]) / rate)
                lo = -rho * (1 - rate) / rate
            mu = (prior * alpha + s1[s]) / (prior + sw[s])
            var = max((prior * alpha + s2[s]) / (prior + sw[s]) - mu * mu, 1e-6)
            lam = min(max((mu - alpha) / var, 0.0), cap / (alpha - lo))
            log_w[s] += math.log1p(lam * (x - alpha))
            sw[s] = decay * sw[s] + 1; s1[s] = decay * s1[s] + x; s2[s] = decay * s2[s] + x * x
        out_rounds.append(np.logaddexp.reduce(log_w) - math.log(len(rhos)))
    if g is not None:
        return np.array(out_rounds)
    per_row, k = np.zeros(h.size), -1
    for t in range(h.size):
        k += not np.isnan(h[t])
        per_row[t] = out_rounds[k] if k >= 0 else 0.0
    return per_row


@pytest.mark.parametrize("judge", [True, False])
def test_eprocess_is_its_definition(judge):
    rng = np.random.default_rng(0)
    risk = np.where(np.arange(600) < 300, 0.05, 0.3)
    g, h = _stream(rng, risk, 0.2)
    mon = RiskMonitor(alpha=ALPHA, delta=DELTA, label_rate=0.2 if judge else None,
                      half_life=7, n_rho=3).fit(g if judge else None, h)
    ref = _loop_log_eprocess(g if judge else None, h, ALPHA, 0.2, 7,
                             np.linspace(0, 1, 3) if judge else [0.0])
    np.testing.assert_allclose(mon.log_eprocess_, ref, rtol=1e-9, atol=1e-9)
    crossed = np.flatnonzero(ref >= math.log(1 / DELTA))
    assert mon.alarm_index_ == (int(crossed[0]) if crossed.size else None)
    assert mon.alarm_ == bool(crossed.size)


@pytest.mark.parametrize("judge", [True, False])
def test_batches_give_the_same_stream(judge):
    rng = np.random.default_rng(1)
    g, h = _stream(rng, np.full(5000, 0.15), 0.1)
    whole = RiskMonitor(alpha=ALPHA, delta=DELTA, label_rate=0.1).fit(g if judge else None, h)
    parts = RiskMonitor(alpha=ALPHA, delta=DELTA, label_rate=0.1)
    cuts = np.sort(rng.choice(np.arange(1, 5000), 30, replace=False))
    for rows in np.split(np.arange(5000), cuts):
        parts.partial_fit(g[rows] if judge else None, h[rows])
    parts.partial_fit(np.zeros(0) if judge else None, np.zeros(0))  # an empty batch is a no-op
    np.testing.assert_allclose(parts.log_eprocess_, whole.log_eprocess_, atol=1e-9)
    for a, b in zip(parts.confidence_sequence(), whole.confidence_sequence()):
        np.testing.assert_allclose(a, b, atol=1e-9)
    assert (parts.alarm_index_, parts.n_rows_, parts.n_labels_) == (
        whole.alarm_index_, whole.n_rows_, whole.n_labels_)
    assert parts.n_labels_ == int((~np.isnan(h)).sum())


@pytest.mark.parametrize("risk_kind,judge", [("boundary", "adversarial"),
                                             ("boundary", "good"),
                                             ("drifting", "adversarial"),
                                             ("boundary", None)])
def test_false_alarms_stay_below_delta(risk_kind, judge):
    rng = np.random.default_rng(2)
    rows, reps = 4000, 150
    t = np.arange(rows)
    risk = np.full(rows, ALPHA) if risk_kind == "boundary" else \
        ALPHA * (3 + np.cos(2 * np.pi * t / 1000)) / 4
    alarms = 0
    for _ in range(reps):
        g, h = _stream(rng, risk, 0.25, judge or "good")
        mon = RiskMonitor(alpha=ALPHA, delta=DELTA, label_rate=0.25, half_life=5)
        alarms += mon.fit(None if judge is None else g, h).alarm_
    assert alarms / reps <= DELTA + slack(DELTA, reps)


@pytest.mark.slow
@pytest.mark.parametrize("judge", ["adversarial", "good", "useless", None])
def test_false_alarms_over_long_streams(judge):
    rng = np.random.default_rng(3)
    reps, risk = 200, np.full(100_000, ALPHA)
    alarms = 0
    for _ in range(reps):
        g, h = _stream(rng, risk, 0.1, judge or "good")
        alarms += RiskMonitor(alpha=ALPHA, delta=DELTA, label_rate=0.1).fit(
            None if judge is None else g, h).alarm_
    assert alarms / reps <= DELTA + slack(DELTA, reps)


def test_a_jump_is_detected_sooner_with_the_judge():
    rng = np.random.default_rng(4)
    risk = np.where(np.arange(12_000) < 2000, ALPHA / 2, 2 * ALPHA)
    delay = {"judge": [], "labels": []}
    for _ in range(20):
        g, h = _stream(rng, risk, 0.1)
        for name, judge in (("judge", g), ("labels", None)):
            mon = RiskMonitor(alpha=ALPHA, delta=DELTA, label_rate=0.1).fit(judge, h)
            assert mon.alarm_ and mon.alarm_index_ >= 2000  # fired, and only after the jump
            delay[name].append(mon.alarm_index_ - 2000)
    assert np.mean(delay["judge"]) < np.mean(delay["labels"])


@pytest.mark.parametrize("judge", [True, False])
def test_confidence_sequence_covers_a_constant_risk_at_all_times(judge):
    rng = np.random.default_rng(5)
    reps, misses = 150, 0
    for _ in range(reps):
        g, h = _stream(rng, np.full(3000, 0.2), 0.3)
        mon = RiskMonitor(alpha=ALPHA, delta=DELTA, label_rate=0.3).fit(g if judge else None, h)
        low, high = mon.confidence_sequence()
        assert np.all(low <= high) and low.shape == (3000,)
        misses += bool(np.any((low > 0.2) | (high < 0.2)))
    assert misses / reps <= DELTA + slack(DELTA, reps)
    assert np.median(high - low) < 0.5  # and it says something: width after 3000 rows


def test_errors_name_the_fix():
    h = np.array([0.0, np.nan, 1.0])
    with pytest.raises(ValueError, match="`label_rate` is required with a judge"):
        RiskMonitor(alpha=ALPHA, delta=DELTA).partial_fit([0, 0, 1], h)
    mon = RiskMonitor(alpha=ALPHA, delta=DELTA, label_rate=0.5).partial_fit([0, 0, 1], h)
    with pytest.raises(ValueError, match="runs in judge mode"):
        mon.partial_fit(None, h)
    with pytest.raises(ValueError, match="one entry per row"):
        mon.partial_fit([0, 1], h)
    with pytest.raises(ValueError, match="below label_rate=0.5"):
        mon.partial_fit([0, 0, 1], h, label_probability=[0.5, 0.2, 1.0])
    with pytest.raises(ValueError, match="1-d"):
        mon.partial_fit([0, 0, 1], h[:, None])
    with pytest.raises(ValueError, match="loss_labeled"):
        mon.partial_fit([0, 0, 1], [0.0, np.nan, 2.0])
    with pytest.raises(ValueError, match="judge mode only"):
        RiskMonitor(alpha=ALPHA, delta=DELTA).partial_fit(None, h, label_probability=[1, 1, 1])
    with pytest.raises(AttributeError, match="seen no rows"):
        RiskMonitor(alpha=ALPHA, delta=DELTA).confidence_sequence()
    assert clone(mon).get_params() == mon.get_params()
    refit = mon.fit(None if False else [1, 1, 1], [1.0, 1.0, 1.0])  # fit starts a new stream
    assert refit.n_rows_ == 3


def test_a_wrong_label_rate_is_reported():
    rng = np.random.default_rng(6)
    g, h = _stream(rng, np.full(2000, 0.1), 0.5)  # half the rows labeled, not 10%
    with pytest.warns(RiskControlWarning, match="label_rate=0.1"):
        RiskMonitor(alpha=ALPHA, delta=DELTA, label_rate=0.1).fit(g, h)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RiskControlWarning)
        RiskMonitor(alpha=ALPHA, delta=DELTA, label_rate=0.5).fit(g, h)


def test_a_long_batch_is_processed_in_chunks_with_the_same_result():
    rng = np.random.default_rng(7)
    g, h = _stream(rng, np.full(150_000, 0.12), 0.1)
    whole = RiskMonitor(alpha=ALPHA, delta=DELTA, label_rate=0.1).fit(g, h)  # > one chunk
    parts = RiskMonitor(alpha=ALPHA, delta=DELTA, label_rate=0.1)
    for rows in np.array_split(np.arange(150_000), 7):
        parts.partial_fit(g[rows], h[rows], np.full(rows.size, 0.1))
    np.testing.assert_allclose(whole.log_eprocess_, parts.log_eprocess_, atol=1e-8)
    assert whole.n_rows_ == 150_000 and whole.alarm_index_ == parts.alarm_index_
