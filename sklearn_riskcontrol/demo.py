"""End-to-end demo on bundled data (``python -m sklearn_riskcontrol demo``).

Each section runs one family of methods and prints what was deployed / covered / certified /
identified together with the guarantee the number carries; a closing summary repeats the
headline numbers. Every printed number is one realization (one draw of the data, one stream, one
run); the guarantees are statements about expectations or probabilities over such draws, and
each line says which. Data: diamonds and letter recognition (bundled, see
``datasets/data/ATTRIBUTION.md``) and the package's own score-matrix simulator.
"""

import time
import warnings

import numpy as np
from sklearn.compose import make_column_transformer
from sklearn.ensemble import HistGradientBoostingRegressor
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import cross_val_predict, train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OrdinalEncoder, StandardScaler
from threadpoolctl import threadpool_limits

from ._demo_autoeval import autoeval_section
from ._demo_bandits import bandits_section
from .datasets import load_diamonds, load_letter
from .metrics import (
    average_set_size,
    coverage_rate,
    deployment_rate,
    oracle_threshold,
    realized_mdr,
    realized_sdr,
    undercoverage_count,
)
from .online import SemiBanditPredictionSet, simulate_thresholds
from .risks import make_risk
from .selective import ConcentrationMDR, ConcentrationSDR, SCoREMDR, SCoRESDR

_CATEGORIES = ["cut", "color", "clarity"]


def _gradient_boosting(seed, max_iter):
    prep = make_column_transformer((OrdinalEncoder(), _CATEGORIES), remainder="passthrough")
    return make_pipeline(prep, HistGradientBoostingRegressor(max_iter=max_iter, random_state=seed))


def _score_section(seed, quick):
    X, y = load_diamonds(return_X_y=True)
    y = np.log(y)
    if quick:  # a random subsample: the rows are in blocks sorted by price (the first 8000 cost
        # $326-$4327), so a head of the file is not a sample of the diamonds
        X, _, y, _ = train_test_split(X, y, train_size=8000, random_state=seed)
    X_fit, X_rest, y_fit, y_rest = train_test_split(X, y, train_size=0.4, random_state=seed)
    X_cal, X_test, y_cal, y_test = train_test_split(
        X_rest, y_rest, train_size=0.5, test_size=2000, random_state=seed
    )
    model = _gradient_boosting(seed, 100).fit(X_fit, y_fit)
    # Risk: squared error of log-price, scaled so that an error of 0.3 (~35% in price) counts 1.
    risk = make_risk("squared", scale=0.09)
    # The score predicts that risk. It is trained on the fitting split only, on out-of-fold risks
    # (in-sample errors of the model would be optimistic).
    oof = cross_val_predict(_gradient_boosting(seed, 100), X_fit, y_fit, cv=3)
    risk_model = _gradient_boosting(seed, 50).fit(X_fit, risk(y_fit, oof))
    L_test = risk(y_test, model.predict(X_test))
    alpha = 0.05
    print("SCoRE: deploy a diamond-price regressor only where it is safe")
    print(f"  calibration n = {len(y_cal)}, test m = {len(y_test)}, alpha = {alpha}, "
          f"risk = min((log-price error)^2 / 0.09, 1)")
    print(f"  risk if deployed everywhere (realized on this test set): {L_test.mean():.4f}")
    print("  SCoRE guarantees hold in finite samples, in expectation over calibration and test "
          "draws,\n  for exchangeable data (or a known covariate shift, via shift_weights); the "
          "shares and\n  realized risks below are one draw (measured with the test labels, "
          "which no method sees)")
    rows = [
        ("SCoRE-MDR", SCoREMDR, {}, realized_mdr,
         "E[L * deploy] <= alpha at each test point"),
        ("SCoRE-SDR (homo boosting)", SCoRESDR, {"boosting": "homo", "random_state": seed},
         realized_sdr, "E[risk among deployed] <= alpha"),
        ("Hoeffding MDR baseline", ConcentrationMDR,
         {"grid": np.linspace(0, 1, 101), "bound": "hoeffding", "procedure": "union"},
         realized_mdr, "MDR <= alpha w.p. >= 0.9 over the calibration draw (PAC)"),
        ("Rademacher SDR baseline", ConcentrationSDR, {"bound": "rademacher", "random_state": seed},
         realized_sdr, "SDR <= alpha w.p. >= 0.9 over the calibration draw (PAC)"),
    ]
    summary = []
    for name, cls, params, realized, guarantee in rows:
        est = cls(model, risk=risk, risk_score=risk_model, alpha=alpha, **params)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "nothing deployed" is reported in the table
            deployed = est.fit(X_cal, y_cal).decide(X_test)
        print(f"  {name:<27s} deployed on {deployment_rate(deployed):6.1%}; realized risk "
              f"{realized(L_test, deployed):.4f}")
        print(f"  {'':<27s} [{guarantee}]")
        if name.startswith("SCoRE"):
            summary.append(
                f"deployed    {name}: on {deployment_rate(deployed):.1%} of the test diamonds "
                f"(one draw); guarantee {guarantee.replace('alpha', str(alpha))}, in expectation "
                "over calibration and test draws (exchangeable or known shift)"
            )
    return summary


def _sps_section(seed, quick):
    X, y = load_letter(return_X_y=True)
    n_fit, T = (2000, 3000) if quick else (6000, 10000)
    alpha = 0.1
    X_fit, X_pool, y_fit, y_pool = train_test_split(
        X, y, train_size=n_fit, stratify=y, random_state=seed
    )
    model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000)).fit(X_fit, y_fit)
    # The stream draws T rounds i.i.d. from the held-out letters, so their empirical distribution
    # is the true one and tau* (the 10% quantile of the true letter's probability) is exact.
    proba = model.predict_proba(X_pool)
    label_pool = np.searchsorted(model.classes_, y_pool.to_numpy())
    s_pool = proba[np.arange(len(label_pool)), label_pool]
    tau_star = oracle_threshold(s_pool, alpha)
    rounds = np.random.default_rng(seed).integers(len(label_pool), size=T)
    S, s = proba[rounds], s_pool[rounds]
    oracle_size = average_set_size(S, np.full(T, tau_star))
    print("SPS: online prediction sets for a letter classifier, learned from semi-bandit feedback")
    print(f"  {T} letters streamed, alpha = {alpha}: round t publishes the letters with "
          "probability >= tau_t;")
    print("  the true letter is revealed only if it is in the set, otherwise only 'missed'")
    print(f"  classifier accuracy {np.mean(S.argmax(axis=1) == label_pool[rounds]):.3f}; oracle "
          f"tau* = {tau_star:.4f} (smallest sets with coverage 0.9: {oracle_size:.2f} letters)")
    rows = [
        ("SPS", "sps", f"w.p. >= {1 - 2 / T:.4g}, tau_t <= tau* at every round: each set's "
         f"coverage probability is >= {1 - alpha:g} (i.i.d. rounds)"),
        ("greedy baseline", "greedy", "no guarantee"),
        ("ACI baseline", "aci", "long-run average coverage only, no per-round guarantee"),
    ]
    print("  coverage = realized fraction of the rounds whose set held the true letter (one stream)")
    for name, strategy, guarantee in rows:
        tau = simulate_thresholds(s, alpha, strategy=strategy, horizon=T)
        if strategy == "sps":
            sps_coverage = coverage_rate(s, tau)
        print(f"  {name:<16s} coverage {coverage_rate(s, tau):.3f}, average set size "
              f"{average_set_size(S, tau):5.2f}, final tau {tau[-1]:.4f}, rounds with "
              f"tau > tau*: {undercoverage_count(tau, tau_star)}")
        print(f"  {'':<16s} [{guarantee}]")
    # The estimator wraps the fitted classifier and replays the same stream honestly.
    sps = SemiBanditPredictionSet(FrozenEstimator(model), alpha=alpha, horizon=T)
    sps.fit(X_pool.iloc[rounds], y_pool.iloc[rounds])
    print(f"  SemiBanditPredictionSet on the same stream: {sps.n_misses_} misses in "
          f"{sps.n_rounds_} rounds, next sets use threshold_ = {sps.threshold_:.4f}")
    return [(
        f"covered     SPS: {sps_coverage:.1%} of {T} rounds (one stream); guarantee w.p. >= "
        f"{1 - 2 / T:.4g}, every published set has coverage probability >= {1 - alpha:g} "
        "(i.i.d. rounds, semi-bandit feedback)"
    )]

def run_demo(seed=0, quick=False):
    """Run every method end to end and print a short report with each number's guarantee."""
    start = time.perf_counter()
    print(f"sklearn-riskcontrol demo (seed={seed})\n")
    # One BLAS/OpenMP thread: the demo's models are small, and on a busy machine (shared CI)
    # oversubscribed threads make it 10-20x slower.
    with threadpool_limits(limits=1):
        summary = _score_section(seed, quick)
        print()
        summary += _sps_section(seed, quick)
        print()
        summary += autoeval_section(seed, quick)
        print()
        summary.append(bandits_section(seed))
    print("\nSummary: what each number guarantees")
    for line in summary:
        print(f"  {line}")
    print(f"\ndone in {time.perf_counter() - start:.1f} s")
