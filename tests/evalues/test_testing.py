"""Multiple-testing helpers (``evalues/testing.py``): e-BH, BH, boosting, FST, Bonferroni."""

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _score_reference import bh_bruteforce, ebh_bruteforce
from sklearn_riskcontrol.evalues.testing import bh, bonferroni, boost_evalues, ebh, fixed_sequence, TIE_RTOL, at_most

DECIMAL_ALPHAS = [Fraction(k, 100) for k in (1, 5, 10, 15, 20, 25, 30, 50, 70, 95)]
SETTINGS = settings(max_examples=80, deadline=None)


def _tied_evalues(rng, m, alpha):
    """E-values exactly on e-BH thresholds m/(alpha k) (in exact arithmetic), plus others."""
    out = []
    for _ in range(m):
        u = rng.uniform()
        if u < 0.5:
            out.append(Fraction(m) / (alpha * int(rng.integers(1, m + 1))))
        elif u < 0.6:
            out.append(Fraction(0))
        else:
            out.append(Fraction(float(rng.exponential(2.0 / float(alpha)))))
    return out


# ----------------------------------------------------------------------------------------------
# e-BH and BH by definition
# ----------------------------------------------------------------------------------------------


def test_ebh_equals_definition_with_exact_ties():
    """Ties exact in decimal arithmetic (alpha = 0.1, E = m/(alpha k)) count as ties."""
    rng = np.random.default_rng(0)
    for _ in range(300):
        m = int(rng.integers(1, 15))
        alpha = DECIMAL_ALPHAS[int(rng.integers(len(DECIMAL_ALPHAS)))]
        e = _tied_evalues(rng, m, alpha)
        expected = ebh_bruteforce(e, alpha)
        got = ebh([float(x) for x in e], float(alpha))
        assert got.dtype == bool
        assert got.tolist() == expected, (e, alpha)


def test_ebh_equals_definition_on_continuous_evalues_with_inf():
    rng = np.random.default_rng(1)
    for _ in range(300):
        m = int(rng.integers(1, 30))
        alpha = float(rng.uniform(0.01, 0.99))
        e = rng.pareto(1.0, size=m) * rng.choice([0.0, 1.0, 5.0], size=m)
        e[rng.uniform(size=m) < 0.05] = np.inf
        expected = ebh_bruteforce([Fraction(x) if np.isfinite(x) else x for x in e],
                                  Fraction(alpha))
        assert ebh(e, alpha).tolist() == expected


def test_bh_equals_definition():
    rng = np.random.default_rng(2)
    for _ in range(300):
        m = int(rng.integers(1, 20))
        alpha = DECIMAL_ALPHAS[int(rng.integers(len(DECIMAL_ALPHAS)))]
        # p-values on the BH grid alpha k / m (exact ties) and continuous ones
        p = [alpha * int(rng.integers(1, m + 1)) / m if rng.uniform() < 0.5
             else Fraction(float(rng.uniform())) for _ in range(m)]
        p = [min(x, Fraction(1)) for x in p]
        assert bh([float(x) for x in p], float(alpha)).tolist() == bh_bruteforce(p, alpha), p


def test_examples_by_hand():
    # m = 4, alpha = 0.1: thresholds m/(alpha k) = 40, 20, 13.3, 10.
    assert ebh([40.0, 25.0, 1.0, 0.0], 0.1).tolist() == [True, True, False, False]
    assert ebh([39.9, 25.0, 1.0, 0.0], 0.1).tolist() == [True, True, False, False]
    assert ebh([39.9, 19.0, 1.0, 0.0], 0.1).tolist() == [False] * 4
    assert ebh([10.0] * 4, 0.1).tolist() == [True] * 4
    assert ebh([np.inf, 0.0], 0.1).tolist() == [True, False]
    assert bh([0.025, 0.05, 0.075, 0.1], 0.1).tolist() == [True] * 4
    assert bh([0.2, 0.02, 0.05, 0.11], 0.1).tolist() == [False, True, True, False]


def test_empty_input():
    assert ebh([], 0.1).shape == (0,) and ebh([], 0.1).dtype == bool
    assert bh([], 0.1).shape == (0,) and bh([], 0.1).dtype == bool
    assert boost_evalues([], "hete", random_state=0).shape == (0,)
    assert fixed_sequence([], 0.1).shape == (0,)
    assert bonferroni([], 0.1).shape == (0,)


# ----------------------------------------------------------------------------------------------
# Invariances and monotonicity of e-BH
# ----------------------------------------------------------------------------------------------

evalue_lists = st.lists(
    st.one_of(
        st.floats(0, 1e6, allow_nan=False),
        st.sampled_from([0.0, 1.0, 10.0, 20.0, 40.0, np.inf]),
    ),
    min_size=0,
    max_size=25,
)
alphas = st.sampled_from([0.01, 0.05, 0.1, 0.2, 0.25, 0.5, 0.9]) | st.floats(0.001, 0.999)


@SETTINGS
@given(e=evalue_lists, alpha=alphas, data=st.data())
def test_ebh_permutation_equivariant(e, alpha, data):
    e = np.array(e, dtype=float)
    perm = np.asarray(data.draw(st.permutations(range(e.size))), dtype=int)
    np.testing.assert_array_equal(ebh(e[perm], alpha), ebh(e, alpha)[perm])


@SETTINGS
@given(e=evalue_lists, alpha=alphas, power=st.integers(-3, 6))
def test_ebh_scaling_evalues_and_alpha_inversely(e, alpha, power):
    # Powers of two keep the products e * alpha exact, so decisions must be identical.
    c = 2.0**power
    if not 0 < alpha / c < 1:
        return
    e = np.array(e, dtype=float)
    np.testing.assert_array_equal(ebh(c * e, alpha / c), ebh(e, alpha))


@SETTINGS
@given(e=evalue_lists, a1=alphas, a2=alphas)
def test_ebh_monotone_in_alpha(e, a1, a2):
    lo, hi = sorted((a1, a2))
    assert np.all(~ebh(e, lo) | ebh(e, hi))


@SETTINGS
@given(e=evalue_lists, alpha=alphas, data=st.data())
def test_ebh_monotone_in_evalues(e, alpha, data):
    e = np.array(e, dtype=float)
    bump = np.array(data.draw(st.lists(st.floats(1.0, 100.0), min_size=e.size,
                                       max_size=e.size)), dtype=float)
    assert np.all(~ebh(e, alpha) | ebh(e * bump, alpha))


@SETTINGS
@given(p=st.lists(st.floats(0, 1) | st.sampled_from([0.01, 0.02, 0.05, 0.1, 0.2]), max_size=25),
       alpha=alphas)
def test_ebh_on_bh_evalues_equals_bh(p, alpha):
    """Wang & Ramdas: e_j = 1{p_j <= t}/t with t = alpha |R_BH| / m gives e-BH = BH."""
    p = np.array(p, dtype=float)
    m = p.size
    rejected = bh(p, alpha)
    k = int(rejected.sum())
    if k == 0:
        e = np.zeros(m)
    else:
        t = alpha * k / m
        e = np.where(at_most(p, t), 1.0 / t, 0.0)
    np.testing.assert_array_equal(ebh(e, alpha), rejected)


@SETTINGS
@given(p=st.lists(st.floats(0, 1), max_size=25), alpha=alphas, data=st.data())
def test_bh_permutation_equivariant_and_monotone(p, alpha, data):
    p = np.array(p, dtype=float)
    perm = np.asarray(data.draw(st.permutations(range(p.size))), dtype=int)
    np.testing.assert_array_equal(bh(p[perm], alpha), bh(p, alpha)[perm])
    assert np.all(~bh(p, alpha) | bh(p / 2, alpha))


# ----------------------------------------------------------------------------------------------
# Boosting (SCoRE paper, Sec. 5.2)
# ----------------------------------------------------------------------------------------------


def test_boost_reproducible_and_semantics():
    e = np.array([2.0, 0.0, 5.0, np.inf, 1.0, 3.0])
    for method in ("hete", "homo"):
        a = boost_evalues(e, method, random_state=7)
        b = boost_evalues(e, method, random_state=7)
        np.testing.assert_array_equal(a, b)
        rs = np.random.RandomState(7)
        c = boost_evalues(e, method, random_state=rs)
        np.testing.assert_array_equal(a, c)
        assert not np.array_equal(boost_evalues(e, method, random_state=8), a)
        # zero stays zero, inf stays inf, others grow (divided by U in (0, 1))
        assert a[1] == 0 and np.isinf(a[3])
        finite = np.isfinite(e) & (e > 0)
        assert np.all(a[finite] >= e[finite])
    hete = boost_evalues(e, "hete", random_state=7)
    u = np.random.RandomState(7).uniform(size=e.size)
    np.testing.assert_allclose(hete, e / u)
    homo = boost_evalues(e, "homo", random_state=7)
    u0 = np.random.RandomState(7).uniform()
    np.testing.assert_allclose(homo, e / u0)
    pos = finite
    ratios_hete = e[pos] / hete[pos]
    assert np.unique(ratios_hete).size == pos.sum()  # one U per test point
    np.testing.assert_allclose(e[pos] / homo[pos], u0)  # one shared U


def test_boost_accepts_every_random_state_form():
    e = np.array([2.0, 0.0, 5.0, 1.0])
    for method in ("hete", "homo"):
        # A seeded Generator is reproducible and advances: fresh uniforms at every call.
        gen_a, gen_b = np.random.default_rng(3), np.random.default_rng(3)
        first = boost_evalues(e, method, random_state=gen_a)
        np.testing.assert_array_equal(first, boost_evalues(e, method, random_state=gen_b))
        assert not np.array_equal(boost_evalues(e, method, random_state=gen_a), first)
        assert first[1] == 0 and np.all(first[[0, 2, 3]] >= e[[0, 2, 3]])
        # A RandomState passed on every call is a stream too; None draws from NumPy's global one.
        rs = np.random.RandomState(7)
        np.testing.assert_array_equal(boost_evalues(e, method, random_state=rs),
                                      boost_evalues(e, method, random_state=7))
        assert not np.array_equal(boost_evalues(e, method, random_state=rs),
                                  boost_evalues(e, method, random_state=7))
        assert boost_evalues(e, method, random_state=None).shape == e.shape
    with pytest.raises(ValueError, match=r"`random_state` must be None, an int, .*Generator; got 'x'"):
        boost_evalues(e, "hete", random_state="x")


def test_boost_none_returns_evalues_and_bad_method_raises():
    e = [1.0, 2.0]
    np.testing.assert_array_equal(boost_evalues(e, None), e)
    with pytest.raises(ValueError, match=r"None, 'hete' or 'homo'; got 'heterogeneous'"):
        boost_evalues(e, "heterogeneous")


def test_boost_uniforms_are_uniform():
    e = np.ones(20000)
    u = e / boost_evalues(e, "hete", random_state=0)
    # Kolmogorov-Smirnov distance to Unif(0, 1); 1.63/sqrt(n) is the 1% critical value.
    u.sort()
    ks = np.max(np.abs(u - np.arange(1, u.size + 1) / u.size))
    assert ks < 1.63 / np.sqrt(u.size)
    homo = [1.0 / boost_evalues([1.0], "homo", random_state=s)[0] for s in range(2000)]
    assert abs(np.mean(homo) - 0.5) < 4 * np.sqrt(1 / 12 / 2000)


@SETTINGS
@given(e=evalue_lists, alpha=alphas, seed=st.integers(0, 2**31 - 1),
       method=st.sampled_from(["hete", "homo"]))
def test_boosted_ebh_selects_a_superset(e, alpha, seed, method):
    e = np.array(e, dtype=float)
    assert np.all(~ebh(e, alpha) | ebh(boost_evalues(e, method, random_state=seed), alpha))


def test_boosted_ebh_controls_fdr_by_simulation():
    """Theorem 5.5 for standard e-values (Remark 5.6): nulls have E[e] <= 1."""
    rng = np.random.default_rng(3)
    alpha, m, reps = 0.2, 20, 3000
    for method in ("hete", "homo"):
        fdp = np.empty(reps)
        for r in range(reps):
            null = rng.uniform(size=m) < 0.5
            # null e-values: 2 * Bernoulli(1/2) (mean 1); non-nulls large
            e = np.where(null, 2.0 * (rng.uniform(size=m) < 0.5), rng.exponential(40.0, m))
            sel = ebh(boost_evalues(e, method, random_state=rng.integers(2**31)), alpha)
            fdp[r] = (sel & null).sum() / max(1, sel.sum())
        assert fdp.mean() <= alpha + 4 * fdp.std() / np.sqrt(reps), method


# ----------------------------------------------------------------------------------------------
# Fixed-sequence testing and Bonferroni
# ----------------------------------------------------------------------------------------------


@SETTINGS
@given(p=st.lists(st.floats(0, 1), max_size=20), delta=alphas)
def test_fixed_sequence_definition(p, delta):
    expected = [all(q <= delta for q in p[: k + 1]) for k in range(len(p))]
    assert fixed_sequence(p, delta).tolist() == expected


@SETTINGS
@given(p=st.lists(st.floats(0, 1), max_size=20), delta=alphas)
def test_bonferroni_definition(p, delta):
    expected = [Fraction(q) * len(p) <= Fraction(delta) for q in p]
    got = bonferroni(p, delta).tolist()
    # Float rounding of p * K may only matter within TIE_RTOL of the boundary.
    for q, g, x in zip(p, got, expected):
        if g != x:
            assert abs(q * len(p) - delta) <= TIE_RTOL * delta + 1e-300, (q, delta)


def test_fixed_sequence_and_bonferroni_by_hand():
    assert fixed_sequence([0.01, 0.05, 0.2, 0.01], 0.1).tolist() == [True, True, False, False]
    assert fixed_sequence([0.2, 0.01], 0.1).tolist() == [False, False]
    assert fixed_sequence([0.1], 0.1).tolist() == [True]
    assert bonferroni([0.01, 0.05, 0.2], 0.1).tolist() == [True, False, False]
    assert bonferroni([0.02, 0.026, 0.0], 0.075).tolist() == [True, False, True]


def test_bonferroni_decimal_ties_are_ties():
    # p = delta / K exactly in decimal; bh() (with TIE_RTOL) certifies, so should bonferroni.
    assert bh([0.05, 0.05, 0.05], 0.15).tolist() == [True] * 3
    assert bonferroni([0.05, 0.05, 0.05], 0.15).tolist() == [True] * 3
    assert bonferroni([0.025, 0.5, 0.5], 0.075).tolist() == [True, False, False]


# ----------------------------------------------------------------------------------------------
# Errors
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "evalues, match",
    [
        ([1.0, np.nan], r"`evalues` must be non-negative \(inf is allowed, NaN is not\)"),
        ([1.0, -0.5], r"`evalues` must be non-negative"),
        ([[1.0, 2.0], [3.0, 4.0]], r"`evalues` must be 1-d"),
    ],
)
@pytest.mark.parametrize("fn", [lambda e: ebh(e, 0.1), lambda e: boost_evalues(e, "hete")])
def test_bad_evalues(fn, evalues, match):
    with pytest.raises(ValueError, match=match):
        fn(evalues)


def test_non_numeric_evalues():
    with pytest.raises(TypeError, match=r"`evalues` must be a 1-d array of numbers"):
        ebh(["a"], 0.1)
    with pytest.raises(TypeError, match=r"`evalues` must be a 1-d array of numbers; got a str"):
        ebh("1.0", 0.1)


@pytest.mark.parametrize("alpha", [0.0, 1.0, -0.2, 1.2, np.nan])
def test_alpha_outside_unit_interval(alpha):
    with pytest.raises(ValueError, match=r"`alpha` must lie in the open interval \(0, 1\)"):
        ebh([1.0], alpha)
    with pytest.raises(ValueError, match=r"`alpha` must lie in the open interval \(0, 1\)"):
        bh([0.5], alpha)
    with pytest.raises(ValueError, match=r"`delta` must lie in the open interval \(0, 1\)"):
        fixed_sequence([0.5], alpha)
    with pytest.raises(ValueError, match=r"`delta` must lie in the open interval \(0, 1\)"):
        bonferroni([0.5], alpha)


@pytest.mark.parametrize("alpha", ["0.1", None, True])
def test_alpha_of_wrong_type(alpha):
    with pytest.raises(TypeError, match=r"`alpha` must be a real number"):
        ebh([1.0], alpha)


@pytest.mark.parametrize("p", [[0.5, 1.5], [-0.1], [np.nan]])
def test_bh_rejects_invalid_pvalues(p):
    with pytest.raises(ValueError, match=r"`pvalues` must lie in \[0, 1\]"):
        bh(p, 0.1)


@pytest.mark.parametrize("fn", [fixed_sequence, bonferroni])
@pytest.mark.parametrize("p", [[0.05, np.nan], [0.05, -0.1], [0.05, 1.5]])
def test_fwer_procedures_reject_invalid_pvalues(fn, p):
    # DESIGN: bad input raises, never a silent answer; bh() already does this.
    with pytest.raises(ValueError, match=r"`pvalues`"):
        fn(p, 0.1)


def test_holm_is_the_closed_test_of_bonferroni_tests():
    # brute-force definition: H_i is rejected iff every intersection hypothesis containing i is
    # rejected by its Bonferroni test, min_{j in S} p_j <= delta / |S|
    from itertools import combinations

    from sklearn_riskcontrol.evalues.testing import holm

    rng = np.random.default_rng(0)
    for _ in range(200):
        k = int(rng.integers(1, 7))
        p = rng.choice([0.001, 0.01, 0.02, 0.025, 0.05, 0.1, 0.5], size=k)  # ties included
        delta = 0.1
        closed = [all(min(p[list(S)]) <= delta / len(S)
                      for size in range(1, k + 1) for S in combinations(range(k), size) if i in S)
                  for i in range(k)]
        assert holm(p, delta).tolist() == closed, p
