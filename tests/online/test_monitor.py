"""SPS's drift monitor and adaptive mode: validity, detection, bit-for-bit equality, restart."""

import math
import pickle
import warnings

import numpy as np
import pytest
from sklearn.base import clone

from sklearn_riskcontrol import RiskControlWarning
from sklearn_riskcontrol.online import (
    MissRateMonitor,
    SemiBanditPredictionSet,
    SPSLearner,
    simulate_monitored,
    simulate_thresholds,
)

ALPHA = 0.1


def _shift_stream(rng, n=6000, at=3000, after=-0.5):
    """True-label scores N(3, 2^2), then N(after, 2^2) from round at + 1."""
    return np.concatenate([rng.normal(3, 2, at), rng.normal(after, 2, n - at)])


def _brute_force_log_wealth(missed, alpha, memory, max_bet):
    """The monitor's definition, one round at a time in plain Python."""
    r = 1.0 - 1.0 / memory
    avg, log_w, path = alpha, 0.0, []
    for m in missed:
        bet = min(max(((avg - alpha) / (alpha * (1 - alpha))), 0.0), max_bet / alpha)
        log_w += math.log(1.0 + bet * (float(m) - alpha))
        avg = r * avg + (1 - r) * float(m)
        path.append(log_w)
    return path


# -- the monitor itself ------------------------------------------------------------------------


def test_monitor_matches_definition_and_streaming():
    rng = np.random.default_rng(1)
    missed = rng.random(3000) < np.linspace(0.05, 0.3, 3000)
    ref = _brute_force_log_wealth(missed, 0.1, 50, 0.5)
    hit = next((i for i, v in enumerate(ref) if v >= math.log(1 / 0.001)), None)
    assert hit is not None
    batch = MissRateMonitor(0.1, delta=0.001, memory=50)
    assert batch.update_batch(missed) == hit
    assert batch.log_evalue == pytest.approx(ref[hit], rel=1e-9)
    one = MissRateMonitor(0.1, delta=0.001, memory=50)
    flags = [one.update(m) for m in missed[: hit + 1]]
    assert flags.index(True) == hit and one.detected_at == hit + 1 == batch.detected_at
    assert one.log_evalue == batch.log_evalue  # bit for bit
    # chunked batches give the same state as one batch
    chunked = MissRateMonitor(0.1, delta=0.001, memory=50)
    for i0 in range(0, hit + 1, 97):
        chunked.update_batch(missed[i0 : min(i0 + 97, hit + 1)])
    assert chunked.log_evalue == batch.log_evalue and chunked.detected_at == hit + 1
    # once rejected it stops; reset starts over
    assert batch.update_batch([True] * 10) is None and batch.n_rounds == hit + 1
    batch.reset()
    assert (batch.n_rounds, batch.log_evalue, batch.detected_at) == (0, 0.0, None)


def test_monitor_bets_nothing_while_sets_cover():
    monitor = MissRateMonitor(0.1)
    assert monitor.update_batch(np.zeros(1000, dtype=bool)) is None
    assert monitor.e_value == 1.0  # average of misses never above alpha: no bet, no loss


def _false_alarm_rate(runs, n, delta, seed, miss_rate=ALPHA):
    rng = np.random.default_rng(seed)
    alarms = 0
    for _ in range(runs):
        monitor = MissRateMonitor(ALPHA, delta=delta)
        alarms += monitor.update_batch(rng.random(n) < miss_rate) is not None
    return alarms / runs


def test_monitor_false_alarms_at_the_null_boundary():
    # Misses i.i.d. Bernoulli(alpha): the hardest case of the null. Ville: P(alarm) <= delta.
    runs, delta = 1000, 0.1
    rate = _false_alarm_rate(runs, 5000, delta, seed=2)
    assert rate <= delta + 3 * math.sqrt(delta * (1 - delta) / runs)


@pytest.mark.slow
def test_monitor_false_alarms_at_the_null_boundary_slow():
    runs, delta = 4000, 0.05
    rate = _false_alarm_rate(runs, 20000, delta, seed=3)
    assert rate <= delta + 3 * math.sqrt(delta * (1 - delta) / runs)


def _sps_false_alarm_rate(runs, n, monitor_delta, seed):
    rng = np.random.default_rng(seed)
    alarms = 0
    for _ in range(runs):
        _, rounds = simulate_monitored(rng.normal(size=n), ALPHA, on_drift="warn",
                                       monitor_delta=monitor_delta)
        alarms += len(rounds) > 0
    return alarms / runs


def test_sps_monitor_false_alarms_on_iid_streams():
    # Bound: monitor_delta + SPS's delta (0.01, anytime schedule).
    runs, md = 300, 0.1
    rate = _sps_false_alarm_rate(runs, 5000, md, seed=4)
    bound = md + 0.01
    assert rate <= bound + 3 * math.sqrt(bound * (1 - bound) / runs)


@pytest.mark.slow
def test_sps_monitor_false_alarms_on_iid_streams_slow():
    runs, md = 1000, 0.05
    rate = _sps_false_alarm_rate(runs, 20000, md, seed=5)
    bound = md + 0.01
    assert rate <= bound + 3 * math.sqrt(bound * (1 - bound) / runs)


def test_monitor_detects_an_abrupt_shift_within_200_rounds():
    # N(3, 4) -> N(-0.5, 4) at round 3000: SPS's sets then miss ~50% of the labels.
    rng = np.random.default_rng(6)
    delays = []
    for _ in range(20):
        _, rounds = simulate_monitored(_shift_stream(rng), ALPHA, on_drift="warn")
        delays.append(rounds[0] - 3000 if len(rounds) else np.inf)
    delays = np.array(delays)
    assert np.mean((delays > 0) & (delays <= 200)) >= 0.9  # observed: all within ~60 rounds


# -- warn / ignore: the paper's algorithm, bit for bit -----------------------------------------


def test_warn_mode_thresholds_are_bitwise_those_of_sps():
    rng = np.random.default_rng(7)
    for scores in (rng.normal(size=5000), _shift_stream(rng)):
        plain = simulate_thresholds(scores, ALPHA)
        for mode in ("warn", "ignore"):
            tau, _ = simulate_monitored(scores, ALPHA, on_drift=mode)
            assert tau.tobytes() == plain.tobytes()


@pytest.mark.parametrize("on_drift", ["warn", "ignore"])
def test_estimator_fit_and_stream_unchanged_by_monitor(on_drift):
    rng = np.random.default_rng(8)
    scores = _shift_stream(rng)
    X, y = scores[:, None], np.zeros(len(scores), dtype=int)
    ref = SPSLearner(ALPHA)
    plain = ref.replay(scores)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RiskControlWarning)
        est = SemiBanditPredictionSet("precomputed", on_drift=on_drift).fit(X, y)
    assert est.threshold_ == ref.threshold and est.learner_.records() == ref.records()
    assert est.n_misses_ == int(np.sum(scores < plain)) and est.n_rounds_ == len(scores)
    assert est.drift_detected_at_ is not None and est.drift_detected_at_ > 3000
    # streaming with partial_fit: the same thresholds as an unmonitored learner, batch by batch
    est = SemiBanditPredictionSet("precomputed", on_drift=on_drift)
    ref = SPSLearner(ALPHA)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RiskControlWarning)
        for i0 in range(0, len(scores), 250):
            s = scores[i0 : i0 + 250]
            served = est.threshold_ if hasattr(est, "threshold_") else -np.inf
            est.partial_fit(s[:, None], np.where(s >= served, 0, -1))
            ref.update_batch(np.where(s >= served, s, np.nan), served_threshold=served)
            assert est.threshold_ == ref.threshold
    assert est.history_["event"] == ["drift_detected"] and est.n_rounds_ == len(scores)


def test_warning_names_the_round_once():
    rng = np.random.default_rng(9)
    scores = _shift_stream(rng)
    with pytest.warns(RiskControlWarning, match=r"Drift detected after round (\d+).*restart") as rec:
        est = SemiBanditPredictionSet("precomputed").fit(scores[:, None], np.zeros(6000, int))
    drift = [w for w in rec if "Drift detected" in str(w.message)]
    assert len(drift) == 1 and f"round {est.drift_detected_at_}:" in str(drift[0].message)
    assert est.history_["round"] == [est.drift_detected_at_]
    assert est.history_["e_value"][0] >= 1 / est.monitor_delta
    with warnings.catch_warnings():
        warnings.simplefilter("error", RiskControlWarning)
        SemiBanditPredictionSet("precomputed", on_drift="ignore").fit(
            scores[:, None], np.zeros(6000, int)
        )
        # i.i.d. stream: no warning, nothing recorded
        est = SemiBanditPredictionSet("precomputed").fit(rng.normal(size=(3000, 1)),
                                                         np.zeros(3000, int))
    assert est.drift_detected_at_ is None and est.history_["round"] == []


# -- restart ------------------------------------------------------------------------------------


def test_restart_starts_a_fresh_learner():
    rng = np.random.default_rng(10)
    scores = _shift_stream(rng, n=8000, at=4000)
    tau, rounds = simulate_monitored(scores, ALPHA, on_drift="restart")
    assert len(rounds) >= 1 and 4000 < rounds[0] < 4200
    r = rounds[0]
    assert tau[r] == -np.inf  # the round after the detection gets a full set
    # up to the detection: SPS; after it: a fresh SPS on the rest of the stream
    plain = simulate_thresholds(scores, ALPHA)
    assert tau[:r].tobytes() == plain[:r].tobytes()
    end = rounds[1] if len(rounds) > 1 else len(scores)
    fresh = simulate_thresholds(scores[r:end], ALPHA)
    assert tau[r:end].tobytes() == fresh.tobytes()
    assert np.mean(scores[6000:] >= tau[6000:]) >= 0.85
    # the estimator: same thresholds, n_rounds_ counts the whole stream
    X, y = scores[:, None], np.zeros(len(scores), dtype=int)
    est = SemiBanditPredictionSet("precomputed", on_drift="restart").fit(X, y)
    assert est.history_["round"] == rounds.tolist()
    assert set(est.history_["event"]) == {"restart"}
    assert est.n_rounds_ == len(scores) and est.learner_.n_rounds == len(scores) - rounds[-1]
    assert est.n_misses_ == int(np.sum(scores < tau))
    last = SPSLearner(ALPHA)
    last.replay(scores[rounds[-1]:])
    assert est.threshold_ == last.threshold and est.learner_.records() == last.records()
    assert est.monitor_.n_rounds == len(scores) - rounds[-1]


def test_restart_in_partial_fit():
    rng = np.random.default_rng(11)
    scores = _shift_stream(rng)
    est = SemiBanditPredictionSet("precomputed", on_drift="restart")
    restarted = False
    for i0 in range(0, len(scores), 200):
        s = scores[i0 : i0 + 200]
        served = est.threshold_ if hasattr(est, "threshold_") else -np.inf
        est.partial_fit(s[:, None], np.where(s >= served, 0, -1))
        if est.history_["round"] and not restarted:
            restarted = True
            assert i0 < est.history_["round"][0] <= i0 + 200
            assert est.threshold_ == -np.inf and est.learner_.n_rounds == 0
            assert est.monitor_.n_rounds == 0 and est.n_rounds_ == i0 + len(s)
    assert restarted and est.n_rounds_ == len(scores)
    # a pickled estimator resumes with its monitor
    again = pickle.loads(pickle.dumps(est))
    assert again.monitor_.log_evalue == est.monitor_.log_evalue


def test_restart_keeps_iid_regret():
    # No detection on i.i.d. streams (here): the thresholds are SPS's.
    rng = np.random.default_rng(12)
    scores = rng.normal(size=10000)
    tau, rounds = simulate_monitored(scores, ALPHA, on_drift="restart")
    assert len(rounds) == 0 and tau.tobytes() == simulate_thresholds(scores, ALPHA).tobytes()


# -- parameters, plots --------------------------------------------------------------------------


def test_parameters_and_errors():
    X, y = np.random.default_rng(0).normal(size=(50, 2)), np.zeros(50, dtype=int)
    est = SemiBanditPredictionSet("precomputed", on_drift="restart", monitor_delta=0.05)
    params = clone(est).get_params()
    assert params["on_drift"] == "restart" and params["monitor_delta"] == 0.05
    with pytest.raises(ValueError, match="on_drift"):
        SemiBanditPredictionSet("precomputed", on_drift="sometimes").fit(X, y)
    with pytest.raises(ValueError, match="monitor_delta"):
        SemiBanditPredictionSet("precomputed", monitor_delta=1.5).fit(X, y)
    with pytest.raises(ValueError, match="on_drift='restart' needs strategy='sps'"):
        SemiBanditPredictionSet("precomputed", strategy="aci", on_drift="restart").fit(X, y)
    with pytest.raises(ValueError, match="on_drift='restart' needs strategy='sps'"):
        SemiBanditPredictionSet("precomputed", strategy="dlr", on_drift="restart").partial_fit(X, y)
    est = SemiBanditPredictionSet("precomputed", strategy="aci").fit(X, y)
    assert est.monitor_ is None and est.drift_detected_at_ is None
    with pytest.raises(ValueError, match="`on_drift` must be one of"):
        simulate_monitored([1.0, 2.0], 0.1, on_drift="never")
    with pytest.raises(ValueError, match="monitor_delta"):
        simulate_monitored([1.0, 2.0], 0.1, monitor_delta=0.0)
    with pytest.raises(ValueError, match="monitor_memory"):
        simulate_monitored([1.0, 2.0], 0.1, monitor_memory=0.5)
    with pytest.raises(ValueError, match="horizon"):
        simulate_monitored([1.0, 2.0, 3.0], 0.1, horizon=2)
    with pytest.raises(ValueError, match="`delta`"):
        MissRateMonitor(0.1, delta=1.0)
    with pytest.raises(ValueError, match="`max_bet`"):
        MissRateMonitor(0.1, max_bet=1.0)
    with pytest.raises(ValueError, match="one-dimensional"):
        MissRateMonitor(0.1).update_batch(np.zeros((2, 2), dtype=bool))


def test_plot_markers():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from sklearn_riskcontrol.plotting import plot_coverage, plot_thresholds

    rng = np.random.default_rng(13)
    scores = _shift_stream(rng)
    est = SemiBanditPredictionSet("precomputed", on_drift="ignore").fit(
        scores[:, None], np.zeros(6000, int)
    )
    tau = simulate_thresholds(scores, ALPHA)
    for ax in (
        plot_thresholds({"sps": tau}, drift_rounds=est.history_["round"]),
        plot_coverage({"sps": tau}, scores, drift_rounds=est.history_["round"]),
    ):
        marker = [ln for ln in ax.get_lines() if ln.get_label() == "drift detected"]
        assert len(marker) == 1 and marker[0].get_xdata()[0] == est.drift_detected_at_
        plt.close(ax.figure)
    with pytest.raises(ValueError, match="drift_rounds"):
        plot_thresholds({"sps": tau}, drift_rounds=[0])
