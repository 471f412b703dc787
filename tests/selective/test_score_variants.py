"""SCoRE's remaining variants (issue 16): label-dependent e-values (paper eq. 4.3), the infimum
restricted to attainable risk values (Remark 4.1, Cor. 5.4) and SDR with ``gamma >= 1``.

Oracles (``tests/_score_reference.py``): eq. 4.3 by definition, eqs. 4.1 / 5.1 / 6.1 / 6.2 with
the infimum over given values of ``l``, conformal selection with BH, all in exact rational
arithmetic. Monte Carlo: ``E[L E] <= 1`` and MDR / SDR control with a 4-standard-error slack
(reduced here, larger under ``-m slow``).
"""

import warnings
from fractions import Fraction

import numpy as np
import pytest
from sklearn.linear_model import LinearRegression

from _score_instances import FAMILIES, as_floats, assert_same_evalues, instances
from _score_reference import (
    bh_bruteforce,
    conformal_pvalues,
    ebh_bruteforce,
    mdr_evalues_exact,
    mdr_label_evalues_exact,
    sdr_evalues_exact,
)
from sklearn_riskcontrol.selective import (
    SCoREMDR,
    SCoRESDR,
    mdr_decisions,
    mdr_evalues,
    mdr_label_decisions,
    mdr_label_evalues,
    sdr_evalues,
)
from sklearn_riskcontrol import RiskControlWarning
from sklearn_riskcontrol.risks import make_risk
from sklearn_riskcontrol.evalues.testing import (
    bh,
    boost_evalues,
    ebh,
)

RTOL = 1e-9
ATTAINABLE = {"binary": [0, 1], "decimal": [k / 10 for k in range(11)]}


def _fractions(values):
    return [Fraction(x) for x in values]


def _label_instance(rng, family):
    """Instance plus candidate-label risks and scores (m x K), same kinds of numbers."""
    inst = instances(family, seed=int(rng.integers(1 << 30)), count=1)[0]
    m, K = len(inst.T), int(rng.integers(1, 5))
    risk_kind = FAMILIES[family][0]
    if risk_kind == "binary":
        R = [[Fraction(int(x)) for x in row] for row in rng.integers(0, 2, (m, K))]
    elif risk_kind == "decimal":
        R = [[Fraction(int(x), 10) for x in row] for row in rng.integers(0, 11, (m, K))]
    else:
        R = [[Fraction(float(x)) if rng.uniform() < 0.8 else Fraction(0) for x in row]
             for row in rng.uniform(size=(m, K))]
    pool = sorted(set(inst.exact["S"]) | set(inst.exact["T"]))
    V = [[pool[int(k)] if rng.uniform() < 0.7 else Fraction(float(rng.uniform(-1, 8)))
          for k in row] for row in rng.integers(0, len(pool), (m, K))]
    return inst, R, V


# ----------------------------------------------------------------------------------------------
# 1. Label-dependent e-values (eq. 4.3) against the definition
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("family", FAMILIES)
def test_label_evalues_equal_eq_4_3(family):
    rng = np.random.default_rng(list(FAMILIES).index(family))
    for _ in range(25):
        inst, R, V = _label_instance(rng, family)
        L, S, _, gamma, w, v = inst.args(exact=True)
        expected = mdr_label_evalues_exact(L, S, R, V, gamma, w, v)
        got = mdr_label_evalues(inst.L, inst.S, np.array(R, float), np.array(V, float),
                                inst.gamma, inst.w, inst.v)
        exp = as_floats(expected)
        np.testing.assert_array_equal(np.isinf(got), np.isinf(exp), err_msg=repr(inst))
        fin = ~np.isinf(exp)
        assert_same_evalues(got[fin], exp[fin], inst)
        # zero-risk labels left out of the infimum only raise it (Remark 4.1)
        literal = as_floats(mdr_label_evalues_exact(L, S, R, V, gamma, w, v, positive_only=False))
        assert np.all(literal <= exp * (1 + RTOL)), inst
        # decisions = E >= 1/alpha, for gamma below, at and above alpha
        for alpha in (gamma, gamma / 2 if gamma > Fraction(1, 20) else gamma, min(gamma * 2, Fraction(19, 20))):
            want = [e >= 1 / alpha for e in expected]
            dec = mdr_label_decisions(inst.L, inst.S, np.array(R, float), np.array(V, float),
                                      float(alpha), inst.gamma, inst.w, inst.v)
            assert dec.tolist() == want, (inst, alpha)


def test_label_independent_score_is_attainable_restriction():
    """Eq. 4.3 with V(x, y) = s(x) is eq. 4.1 with the infimum over each point's risks."""
    for inst in instances("decimal", seed=3, count=30):
        L, S, T, gamma, w, v = inst.args(exact=True)
        values = [Fraction(k, 10) for k in range(11)]
        got = mdr_label_evalues(inst.L, inst.S, np.tile(as_floats(values), (len(T), 1)), inst.T,
                                inst.gamma, inst.w, inst.v)
        expected = mdr_evalues_exact(L, S, T, gamma, w, v, ls=values[1:])
        assert_same_evalues(got, expected, inst)
        np.testing.assert_array_equal(
            got, mdr_evalues(inst.L, inst.S, inst.T, inst.gamma, inst.w, inst.v,
                             attainable=as_floats(values)))


def test_label_evalues_edge_cases():
    L, S = [0.0, 1.0, 0.0], [0.1, 0.5, 0.9]
    # every candidate risk zero: deploying costs nothing, E = inf, always deployed
    e = mdr_label_evalues(L, S, [[0.0, 0.0], [0.0, 1.0]], [[5.0, 5.0], [0.0, 9.0]], gamma=0.4)
    assert np.isinf(e[0]) and e[1] == 0
    assert mdr_label_decisions(L, S, [[0.0, 0.0]], [[5.0, 5.0]], alpha=0.1).tolist() == [True]
    assert mdr_label_evalues(L, S, np.zeros((0, 2)), np.zeros((0, 2)), gamma=0.4).shape == (0,)
    with pytest.raises(ValueError, match="test_scores.*shape"):
        mdr_label_evalues(L, S, [[0.0, 1.0]], [[0.1, 0.2, 0.3]], gamma=0.4)
    with pytest.raises(ValueError, match="test_risks"):
        mdr_label_evalues(L, S, [[0.0, 1.5]], [[0.1, 0.2]], gamma=0.4)
    with pytest.raises(ValueError, match="test_risks.*2-d"):
        mdr_label_evalues(L, S, np.zeros((1, 2, 2)), [0.1], gamma=0.4)


# ----------------------------------------------------------------------------------------------
# 2. Attainable risk values (Remark 4.1) and Cor. 5.4
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("family", [f for f in FAMILIES if FAMILIES[f][0] in ATTAINABLE])
def test_attainable_evalues_equal_infimum_over_values(family):
    values = ATTAINABLE[FAMILIES[family][0]]
    att = "binary" if values == [0, 1] else values
    positive = [Fraction(x).limit_denominator(10) for x in values if x > 0]
    for inst in instances(family, seed=7):
        L, S, T, gamma, w, v = inst.args(exact=True)
        sdr = sdr_evalues(inst.L, inst.S, inst.T, inst.gamma, inst.w, inst.v, attainable=att)
        assert_same_evalues(sdr, sdr_evalues_exact(L, S, T, gamma, w, v, ls=positive), inst)
        mdr_exact = mdr_evalues_exact(L, S, T, gamma, w, v, ls=positive)
        mdr = mdr_evalues(inst.L, inst.S, inst.T, inst.gamma, inst.w, inst.v, attainable=att)
        assert_same_evalues(mdr, mdr_exact, inst)
        # larger than (or equal to) the infimum over [0, 1]
        assert np.all(sdr >= sdr_evalues(*inst.args()) * (1 - RTOL)), inst
        assert np.all(mdr >= mdr_evalues(*inst.args()) * (1 - RTOL)), inst
        for alpha in (gamma, min(gamma * 2, Fraction(19, 20))):
            got = mdr_decisions(inst.L, inst.S, inst.T, float(alpha), inst.gamma, inst.w, inst.v,
                                attainable=att)
            assert got.tolist() == [e >= 1 / alpha for e in mdr_exact], (inst, alpha)


def test_attainable_binary_mdr_decisions_equal_default_at_gamma_alpha():
    for inst in instances("binary", seed=11, count=60):
        np.testing.assert_array_equal(
            mdr_decisions(inst.L, inst.S, inst.T, inst.gamma, attainable="binary"),
            mdr_decisions(inst.L, inst.S, inst.T, inst.gamma))


def test_corollary_5_4_binary_sdr_is_conformal_selection_with_bh():
    """Cor. 5.4 (ii): with gamma = alpha, e-BH on E(1) = BH on the conformal p-values, exactly;
    it deploys every point with a non-zero e-value, so boosting (either kind) changes nothing."""
    for inst in instances("binary", seed=5, count=120):
        alpha = inst.exact["gamma"]
        cs = bh_bruteforce(conformal_pvalues(inst.exact["L"], inst.exact["S"], inst.exact["T"]),
                           alpha)
        e = sdr_evalues(inst.L, inst.S, inst.T, inst.gamma, attainable="binary")
        assert ebh(e, inst.gamma).tolist() == cs, inst
        # e-BH already deploys every point with a non-zero e-value: boosting cannot add any
        assert ebh(e, inst.gamma).tolist() == (e > 0).tolist(), inst
    rng = np.random.default_rng(8)
    for _ in range(200):  # larger random float instances
        n, m = int(rng.integers(20, 300)), int(rng.integers(5, 80))
        alpha = float(rng.choice([0.05, 0.1, 0.2, 0.3, rng.uniform(0.02, 0.6)]))
        x = rng.uniform(size=n + m)
        L = (rng.uniform(size=n) < x[:n]).astype(float)
        scores = np.round(x + 0.3 * rng.normal(size=n + m), int(rng.choice([1, 2, 8])))
        S, T = scores[:n], scores[n:]
        p = (1 + ((L[None, :] == 1) & (S[None, :] <= T[:, None])).sum(axis=1)) / (n + 1)
        e = sdr_evalues(L, S, T, alpha, attainable="binary")
        np.testing.assert_array_equal(ebh(e, alpha), bh(p, alpha))
        np.testing.assert_array_equal(ebh(e, alpha), e > 0)
        for method in ("homo", "hete"):
            np.testing.assert_array_equal(ebh(boost_evalues(e, method, rng), alpha), e > 0)


CUSTOM_SETS = ([0, Fraction(1, 4), Fraction(1, 2)], [0, Fraction(3, 10), Fraction(7, 10)],
               [Fraction(1, 5), Fraction(3, 5)])


def _custom_instances(seed, count=20):
    """Instances whose risks take values in a set with largest value below 1 (capped losses) or
    without 0, over unweighted, shared-weight and weighted families with many ties."""
    rng = np.random.default_rng(seed)
    for family in ("decimal", "weighted-shared-test-weight", "weighted-decimal"):
        for inst in instances(family, seed=seed, count=count):
            values = CUSTOM_SETS[int(rng.integers(len(CUSTOM_SETS)))]
            L = [values[int(k)] for k in rng.integers(0, len(values), len(inst.exact["L"]))]
            inst.exact["L"], inst.L = L, [float(x) for x in L]
            yield inst, values


def test_attainable_custom_sets_equal_infimum_over_values():
    """Sets with ``l_max < 1`` (where MDR decisions change) and supersets of the risks' values:
    e-values = the infimum over the positive listed values, exactly; decisions = ``E >= 1/alpha``
    and, for ``gamma <= alpha``, the one-line rule with ``l_max`` of ``mdr_decisions``."""
    changed = 0
    for inst, values in _custom_instances(seed=31):
        L, S, T, gamma, w, v = inst.args(exact=True)
        for att in (values, values + [Fraction(9, 10)]):  # the set, a superset
            positive = [x for x in att if x > 0]
            att_f = [float(x) for x in att]
            mdr_exact = mdr_evalues_exact(L, S, T, gamma, w, v, ls=positive)
            mdr = mdr_evalues(inst.L, inst.S, inst.T, inst.gamma, inst.w, inst.v, attainable=att_f)
            assert_same_evalues(mdr, mdr_exact, inst)
            for g in (gamma, Fraction(3, 2), Fraction(4)):
                sdr = sdr_evalues(inst.L, inst.S, inst.T, float(g), inst.w, inst.v,
                                  attainable=att_f)
                assert_same_evalues(sdr, sdr_evalues_exact(L, S, T, g, w, v, ls=positive), inst)
            for alpha in (gamma, gamma / 2, min(gamma * 2, Fraction(19, 20))):
                got = mdr_decisions(inst.L, inst.S, inst.T, float(alpha), inst.gamma, inst.w,
                                    inst.v, attainable=att_f)
                assert got.tolist() == [e >= 1 / alpha for e in mdr_exact], (inst, alpha, att)
                if gamma <= alpha:
                    vs = [1] * len(T) if v is None else v
                    ws = [1] * len(L) if w is None else w
                    rule = [(v_j * max(att) + sum(w_i * L_i for w_i, L_i, s in zip(ws, L, S)
                                                   if s <= T_j)) / (v_j + sum(ws)) <= gamma
                            for T_j, v_j in zip(T, vs)]
                    assert got.tolist() == rule, (inst, alpha, att)
                    default = mdr_decisions(inst.L, inst.S, inst.T, float(alpha), inst.gamma,
                                            inst.w, inst.v)
                    assert np.all(got | ~default)  # never deploys less than l in [0, 1]
                    changed += int((got & ~default).sum())
    assert changed > 0  # the capped sets do deploy more somewhere


def test_attainable_validation():
    L, S, T = [0.0, 0.5, 1.0], [0.1, 0.2, 0.3], [0.15]
    with pytest.raises(ValueError, match="entry 1 is 0.5, which is not among the `attainable`"):
        sdr_evalues(L, S, T, 0.2, attainable="binary")
    with pytest.raises(ValueError, match="not among the `attainable`"):
        mdr_evalues(L, S, T, 0.2, attainable=[0.0, 1.0])
    with pytest.raises(ValueError, match="`attainable` must be None, 'binary'"):
        mdr_decisions(L, S, T, 0.2, attainable="ternary")
    with pytest.raises(ValueError, match="no positive value"):
        mdr_evalues([0.0, 0.0], [0.1, 0.2], T, 0.2, attainable=[0.0])
    with pytest.raises(ValueError, match="attainable"):
        sdr_evalues(L, S, T, 0.2, attainable=[0.0, 0.5, 1.5])


# ----------------------------------------------------------------------------------------------
# 3. SDR with gamma >= 1
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("gamma", [Fraction(1), Fraction(3, 2), Fraction(3)])
@pytest.mark.parametrize("family", FAMILIES)
def test_sdr_gamma_at_least_one_equals_definition(family, gamma):
    for inst in instances(family, seed=21, count=20):
        L, S, T, _, w, v = inst.args(exact=True)
        got = sdr_evalues(inst.L, inst.S, inst.T, float(gamma), inst.w, inst.v)
        assert_same_evalues(got, sdr_evalues_exact(L, S, T, gamma, w, v), inst)
        risk_kind = FAMILIES[family][0]
        if risk_kind in ATTAINABLE:
            values = ATTAINABLE[risk_kind]
            positive = [Fraction(x).limit_denominator(10) for x in values if x > 0]
            got = sdr_evalues(inst.L, inst.S, inst.T, float(gamma), inst.w, inst.v,
                              attainable=values)
            assert_same_evalues(got, sdr_evalues_exact(L, S, T, gamma, w, v, ls=positive), inst)


@pytest.mark.parametrize("family", FAMILIES)
def test_sdr_gamma_at_least_one_is_all_or_nothing(family):
    """For ``gamma >= 1`` every threshold ``t(l)`` is the largest score (the plug-in SDR at the
    top, ``(v_j l + sum_i w_i L_i) / (W + v_j)``, is at most 1), so
    ``E_j = (W + v_j) / (v_j l_max + sum_i w_i L_i)`` for every ``j`` and every ``gamma >= 1``,
    and unboosted e-BH (equal test weights) deploys all test points or none."""
    for inst in instances(family, seed=23, count=25):
        L, S, T, _, w, v = inst.args(exact=True)
        ws = [1] * len(L) if w is None else w
        vs = [1] * len(T) if v is None else v
        for l_max, att in ((1, None), (1, "binary"), (Fraction(7, 10), "cap")):
            if att == "cap":
                if FAMILIES[family][0] != "decimal":
                    continue
                L = [min(x, l_max) for x in inst.exact["L"]]
                att = [k / 10 for k in range(8)]
            elif att == "binary" and FAMILIES[family][0] != "binary":
                continue
            expected = [(sum(ws) + v_j) / (v_j * l_max + sum(a * b for a, b in zip(ws, L)))
                        for v_j in vs]
            Lf = [float(x) for x in L]
            # the same for every gamma at least the plug-in risk of deploying everything
            top = max((v_j * l_max + sum(a * b for a, b in zip(ws, L))) / (sum(ws) + v_j)
                      for v_j in vs)
            for gamma in (1.0, 1.5, 7.0, float(top) * (1 + 1e-9)):
                if gamma <= 0:
                    continue
                got = sdr_evalues(Lf, inst.S, inst.T, gamma, inst.w, inst.v, attainable=att)
                assert_same_evalues(got, expected, inst)
                if v is None or len(set(v)) == 1:
                    sel = ebh(got, 0.3)
                    assert sel.all() or not sel.any()


def test_gamma_validation():
    L, S, T = [0.0, 1.0], [0.1, 0.2], [0.15]
    for bad in (0.0, -1.0, np.inf, np.nan):
        with pytest.raises(ValueError, match="`gamma` must be a positive finite number"):
            sdr_evalues(L, S, T, bad)
    with pytest.raises(ValueError, match="`gamma` must lie in the open interval"):
        mdr_evalues(L, S, T, 1.5)  # the paper's MDR e-value needs gamma in (0, 1)


# ----------------------------------------------------------------------------------------------
# Monte Carlo validity (reduced here; larger under -m slow)
# ----------------------------------------------------------------------------------------------


COSTS = np.array([0.0, 0.4, 1.0])  # cost of the true label when the model predicts class 0


def _draw(x, rng):
    """Three classes; the model predicts class 0, the true class gets likelier away from 0 as
    ``x`` grows. Returns the labels and noisy predicted probabilities (the label scores)."""
    p = np.column_stack([1 - x, 0.7 * x, 0.3 * x])
    y = (rng.uniform(size=x.size)[:, None] > np.cumsum(p, axis=1)).sum(axis=1)
    noisy = np.clip(p + 0.1 * rng.normal(size=p.shape), 0, None)
    return y, noisy


def _shifted(m, rng):
    """``m`` draws of x from the density ``w(x) = 0.5 + x`` on [0, 1] (calibration: uniform, so
    ``w`` is the density ratio), by inverting its CDF ``(x + x^2) / 2``."""
    return -0.5 + np.sqrt(0.25 + 2 * rng.uniform(size=m))


def _mc(reps, seed, n=40, m=8, alpha=0.2):
    """Per repetition: ``L * E`` of each variant's e-values and the realized MDR / SDR of its
    decisions (SDR: e-BH, no boosting or homogeneous boosting). Variants: label-dependent
    e-values (0/1 and cost-sensitive label risks, unweighted and under a known covariate shift),
    attainable values (binary; a loss capped at 0.5, where the MDR decisions change; decimal),
    SDR with ``gamma`` in {1, 1.5, 3}."""
    rng = np.random.default_rng(seed)
    prods, risks = {}, {}

    def add(key, L, e, sel=None, selective=False):
        prods.setdefault(key, []).append(L * e)
        if sel is not None:
            risk = (L * sel).sum() / (max(1, sel.sum()) if selective else len(L))
            risks.setdefault(key, []).append(risk)

    for _ in range(reps):
        y, noisy = _draw(rng.uniform(size=n + m), rng)
        err = (y != 0).astype(float)
        cal, test = err[:n], err[n:]
        V_cal = noisy[np.arange(n), y[:n]]
        e = mdr_label_evalues(cal, V_cal, np.tile([0.0, 1.0, 1.0], (m, 1)), noisy[n:], alpha)
        add("label", test, e, e >= 1 / alpha)
        cost = COSTS[y]
        e = mdr_label_evalues(cost[:n], V_cal, np.tile(COSTS, (m, 1)), noisy[n:], alpha)
        add("label-cost", cost[n:], e, e >= 1 / alpha)
        s = 1 - noisy[:, 0]
        e = mdr_evalues(cal, s[:n], s[n:], alpha, attainable="binary")
        add("mdr-binary", test, e, e >= 1 / alpha)
        half = 0.5 * err  # a loss that never exceeds 0.5: l_max < 1 changes the decisions
        e = mdr_evalues(half[:n], s[:n], s[n:], alpha, attainable=[0.0, 0.5])
        dec = mdr_decisions(half[:n], s[:n], s[n:], alpha, attainable=[0.0, 0.5])
        add("mdr-capped", half[n:], e, dec)
        e = sdr_evalues(half[:n], s[:n], s[n:], alpha, attainable=[0.0, 0.5])
        add("sdr-capped", half[n:], e, ebh(e, alpha), selective=True)
        for key, gamma, att in (("sdr-binary", alpha, "binary"), ("sdr-g1", 1.0, None),
                                ("sdr-g1.5", 1.5, None), ("sdr-g3", 3.0, None)):
            e = sdr_evalues(cal, s[:n], s[n:], gamma, attainable=att)
            add(key, test, e, ebh(e, alpha), selective=True)
            sel = ebh(boost_evalues(e, "homo", random_state=rng), alpha)
            risks.setdefault(key + "-homo", []).append((test * sel).sum() / max(1, sel.sum()))
        # decimal risks, attainable values {0, 0.1, ..., 1}
        Ld = np.round(err * rng.uniform(size=n + m) * 10) / 10
        e = sdr_evalues(Ld[:n], s[:n], s[n:], alpha, attainable=ATTAINABLE["decimal"])
        add("sdr-decimal", Ld[n:], e, ebh(e, alpha), selective=True)
        # covariate shift with known density ratios: calibration x uniform, test x ~ 0.5 + x
        x_t = _shifted(m, rng)
        y_t, noisy_t = _draw(x_t, rng)
        x_c = rng.uniform(size=n)  # a fresh calibration sample (the one above is unweighted)
        y_c, noisy_c = _draw(x_c, rng)
        w, v = 0.5 + x_c, 0.5 + x_t
        err_c, err_t = (y_c != 0).astype(float), (y_t != 0).astype(float)
        V_c = noisy_c[np.arange(n), y_c]
        e = mdr_label_evalues(COSTS[y_c], V_c, np.tile(COSTS, (m, 1)), noisy_t, alpha, w, v)
        add("label-cost-shift", COSTS[y_t], e, e >= 1 / alpha)
        s_c, s_t = 1 - noisy_c[:, 0], 1 - noisy_t[:, 0]
        dec = mdr_decisions(0.5 * err_c, s_c, s_t, alpha, None, w, v, attainable=[0.0, 0.5])
        e = mdr_evalues(0.5 * err_c, s_c, s_t, alpha, w, v, attainable=[0.0, 0.5])
        add("mdr-capped-shift", 0.5 * err_t, e, dec)
        e = sdr_evalues(err_c, s_c, s_t, 2.0, w, v)
        add("sdr-g2-shift", err_t, e, ebh(e, alpha), selective=True)
    return prods, risks, m, alpha


def _check_mc(prods, risks, m, alpha):
    """``mean(L E) <= 1`` and realized MDR / SDR ``<= alpha``, each up to 4 Monte-Carlo standard
    errors (the guarantees are expectations; a repetition is one draw)."""
    for key, values in prods.items():
        values = np.concatenate(values)
        mean, se = values.mean(), values.std() / np.sqrt(values.size / m)
        assert mean <= 1 + 4 * se, (key, mean, se)
    for key, values in risks.items():
        values = np.asarray(values)
        assert values.mean() <= alpha + 4 * values.std() / np.sqrt(values.size), (key, values.mean())
    for key in ("label", "label-cost", "label-cost-shift", "sdr-binary", "mdr-capped",
                "mdr-capped-shift", "sdr-capped"):  # not vacuous: these variants do deploy
        assert np.mean(risks[key]) > 0, key


def test_monte_carlo_variants_valid():
    _check_mc(*_mc(reps=400, seed=1))


@pytest.mark.slow
def test_monte_carlo_variants_valid_full():
    _check_mc(*_mc(reps=8000, seed=2, n=60, m=10))


# ----------------------------------------------------------------------------------------------
# Estimators
# ----------------------------------------------------------------------------------------------


def test_estimators_call_the_array_functions(digits_600):
    model, _, _, X_cal, y_cal, X_test, _ = digits_600
    proba_cal, proba_test = model.predict_proba(X_cal), model.predict_proba(X_test)
    L = (model.predict(X_cal) != y_cal).astype(float)
    S, T = 1 - proba_cal.max(axis=1), 1 - proba_test.max(axis=1)
    est = SCoREMDR(model, alpha=0.02, label_score="proba").fit(X_cal, y_cal)
    V_cal = proba_cal[np.arange(len(y_cal)), np.searchsorted(model.classes_, y_cal)]
    R = (model.predict(X_test)[:, None] != model.classes_[None, :]).astype(float)
    np.testing.assert_array_equal(est.cal_scores_, V_cal)
    np.testing.assert_array_equal(est.evalues(X_test), mdr_label_evalues(L, V_cal, R, proba_test, 0.02))
    np.testing.assert_array_equal(est.decide(X_test), mdr_label_decisions(L, V_cal, R, proba_test, 0.02))
    np.testing.assert_array_equal(est.decide(X_test), est.decision_function(X_test) >= 0)
    # a callable gives the same as "proba"
    same = SCoREMDR(model, alpha=0.02, label_score=model.predict_proba).fit(X_cal, y_cal)
    np.testing.assert_array_equal(same.decide(X_test), est.decide(X_test))
    est = SCoREMDR(model, alpha=0.02, attainable="binary").fit(X_cal, y_cal)
    np.testing.assert_array_equal(est.evalues(X_test), mdr_evalues(L, S, T, 0.02, attainable="binary"))
    for kw in (dict(attainable="binary", boosting=None), dict(gamma=1.5, boosting=None),
               dict(gamma=3.0, attainable=[0, 1], boosting=None)):
        sdr = SCoRESDR(model, alpha=0.05, **kw).fit(X_cal, y_cal)
        gamma = kw.get("gamma", 0.05)
        np.testing.assert_array_equal(
            sdr.evalues(X_test), sdr_evalues(L, S, T, gamma, attainable=kw.get("attainable")))
    # Cor. 5.4 through the estimator: no boosting, binary, gamma = alpha = conformal selection
    sdr = SCoRESDR(model, alpha=0.05, attainable="binary", boosting=None).fit(X_cal, y_cal)
    p = (1 + ((L[None, :] == 1) & (S[None, :] <= T[:, None])).sum(axis=1)) / (len(L) + 1)
    np.testing.assert_array_equal(sdr.decide(X_test), bh(p, 0.05))
    # at alpha = 0.01 conformal selection deploys 463 of 500 and boosting changes no decision
    expected = bh(p, 0.01)
    assert 0 < expected.sum() < len(expected)
    for boosting in (None, "homo", "hete"):
        boosted = SCoRESDR(model, alpha=0.01, attainable="binary", boosting=boosting,
                           random_state=0).fit(X_cal, y_cal)
        for _ in range(3):
            np.testing.assert_array_equal(boosted.decide(X_test), expected)


def test_estimator_label_score_cost_risk_and_shift_weights(digits_600):
    """A cost-sensitive risk (candidate labels have different risks) with covariate-shift
    weights: the estimator passes ``risk(y, f(x))`` for every class and the weights through."""
    model, _, _, X_cal, y_cal, X_test, _ = digits_600
    rng = np.random.default_rng(0)
    w, v = rng.uniform(0.5, 2, len(y_cal)), rng.uniform(0.5, 2, len(X_test))

    def cost(y_true, y_pred):
        return np.abs(np.asarray(y_true, float) - np.asarray(y_pred, float)) / 9

    est = SCoREMDR(model, risk=cost, alpha=0.005, label_score="proba")
    est.fit(X_cal, y_cal, shift_weights=w)
    proba_cal, proba_test = model.predict_proba(X_cal), model.predict_proba(X_test)
    L = cost(y_cal, model.predict(X_cal))
    V_cal = proba_cal[np.arange(len(y_cal)), np.searchsorted(model.classes_, y_cal)]
    R = cost(model.classes_[None, :], model.predict(X_test)[:, None])
    np.testing.assert_array_equal(est.evalues(X_test, shift_weights=v),
                                  mdr_label_evalues(L, V_cal, R, proba_test, 0.005, w, v))
    dec = est.decide(X_test, shift_weights=v)
    np.testing.assert_array_equal(dec, mdr_label_decisions(L, V_cal, R, proba_test, 0.005, None, w, v))
    assert 0 < dec.sum() < len(dec)
    with pytest.raises(ValueError, match="shift_weights"):
        est.decide(X_test)


def test_estimator_variant_errors(digits_600):
    model, _, _, X_cal, y_cal, X_test, _ = digits_600
    with pytest.raises(ValueError, match="label_score` or `attainable`, not both"):
        SCoREMDR(model, label_score="proba", attainable="binary").fit(X_cal, y_cal)
    with pytest.raises(ValueError, match="not among the classifier's `classes_`"):
        SCoREMDR(model, label_score="proba").fit(X_cal, np.where(y_cal == 3, 42, y_cal))
    with pytest.raises(ValueError, match="shape"):
        SCoREMDR(model, label_score=lambda X: np.zeros((len(X), 3))).fit(X_cal, y_cal)
    with pytest.raises(ValueError, match="gamma"):
        SCoREMDR(model, gamma=1.5).fit(X_cal, y_cal)
    with pytest.raises(ValueError, match="label_score"):
        SCoREMDR(model, label_score="nope").fit(X_cal, y_cal)
    Xr = np.random.default_rng(0).normal(size=(60, 3))
    reg = LinearRegression().fit(Xr, Xr[:, 0])
    with pytest.raises(ValueError, match="classes_"):
        SCoREMDR(reg, risk=make_risk("absolute", tolerance=0.5), risk_score=lambda X: X[:, 1], label_score="proba").fit(
            Xr, Xr[:, 0])
    with pytest.raises(ValueError, match="not among the `attainable`"):
        SCoRESDR(reg, risk=make_risk("squared", scale=4.0), risk_score=lambda X: X[:, 1],
                 attainable="binary").fit(Xr, Xr[:, 0] + 0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RiskControlWarning)
        SCoRESDR(model, gamma=2.0).fit(X_cal, y_cal).decide(X_test)  # legal now
