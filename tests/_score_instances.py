"""Random small SCoRE instances, exact (Fraction) and float versions of the same numbers.

Shared by ``selective/test_score_evalues.py`` (the closed forms against the exact oracles of
``_score_reference.py``) and ``selective/test_score_variants.py``. Instances are small and have
many ties (integer-valued scores), binary, decimal and continuous risks, weights and random
``gamma``; :data:`FAMILIES` names the kinds, :func:`instances` draws them reproducibly.
"""

from fractions import Fraction

import numpy as np

RTOL = 1e-9  # relative tolerance of a closed form against the exact oracle


class Instance:
    """One problem; ``exact`` holds Fractions, ``floats`` the same values as floats."""

    def __init__(self, L, S, T, gamma, w=None, v=None):
        self.exact = dict(L=L, S=S, T=T, gamma=gamma, w=w, v=v)
        self.L, self.S, self.T = _f(L), _f(S), _f(T)
        self.gamma = float(gamma)
        self.w, self.v = _f(w), _f(v)

    def args(self, exact=False):
        if exact:
            e = self.exact
            return (e["L"], e["S"], e["T"], e["gamma"], e["w"], e["v"])
        return (self.L, self.S, self.T, self.gamma, self.w, self.v)

    def __repr__(self):
        e = self.exact
        return (f"Instance(L={_s(e['L'])}, S={_s(e['S'])}, T={_s(e['T'])}, gamma={e['gamma']}, "
                f"w={_s(e['w'])}, v={_s(e['v'])})")


def _f(values):
    return None if values is None else [float(x) for x in values]


def _s(values):
    return None if values is None else "[" + ", ".join(str(x) for x in values) + "]"


def _fr(x):
    return Fraction(float(x))


def make_instance(rng, risk, weights, gamma_kind, n_max=12, m_max=8):
    n = int(rng.integers(1, n_max + 1))
    m = int(rng.integers(1, m_max + 1))
    if risk == "binary":
        L = [Fraction(int(k)) for k in rng.integers(0, 2, n)]
    elif risk == "decimal":
        L = [Fraction(int(k), 10) for k in rng.integers(0, 11, n)]
    else:
        L = [_fr(x) for x in rng.uniform(size=n)]
    if rng.uniform() < 0.8:  # integer scores with few distinct values: many ties
        k = int(rng.integers(1, 8))
        S = [Fraction(int(x)) for x in rng.integers(0, k, n)]
        T = [Fraction(int(x)) for x in rng.integers(0, k, m)]
    else:
        S = [_fr(x) for x in rng.uniform(size=n)]
        T = [_fr(x) for x in rng.uniform(size=m)]
    if gamma_kind == "decimal":  # ties that are exact in decimal arithmetic are frequent
        gamma = Fraction(int(rng.integers(1, 20)), 20)
    else:
        gamma = _fr(rng.uniform(0.02, 0.95))
    w = v = None
    if weights == "decimal":
        w = [Fraction(int(x), 4) for x in rng.integers(1, 13, n)]
        v = [Fraction(int(x), 4) for x in rng.integers(1, 13, m)]
    elif weights == "equal_test":  # one shared test weight: the closed form's shared branch
        w = [Fraction(int(x), 4) for x in rng.integers(1, 13, n)]
        v = [Fraction(int(rng.integers(1, 13)), 4)] * m
    elif weights == "float":
        w = [_fr(x) for x in rng.uniform(0.1, 3.0, n)]
        v = [_fr(x) for x in rng.uniform(0.1, 3.0, m)]
    return Instance(L, S, T, gamma, w, v)


FAMILIES = {
    "binary": ("binary", None, "decimal"),
    "decimal": ("decimal", None, "decimal"),
    "continuous": ("continuous", None, "float"),
    "weighted-shared-test-weight": ("decimal", "equal_test", "decimal"),
    "weighted-continuous": ("continuous", "float", "float"),
    "weighted-decimal": ("decimal", "decimal", "float"),
}
N_PER_FAMILY = 40  # 6 families x 40 = 240 instances per property


def instances(family, seed=0, count=N_PER_FAMILY):
    rng = np.random.default_rng([seed, list(FAMILIES).index(family)])
    return [make_instance(rng, *FAMILIES[family]) for _ in range(count)]


def as_floats(values):
    return np.array([float(x) for x in values])


def assert_same_evalues(actual, expected, inst):
    actual = np.asarray(actual, dtype=float)
    expected = as_floats(expected)
    np.testing.assert_array_equal(actual == 0, expected == 0, err_msg=f"zero pattern, {inst!r}")
    np.testing.assert_allclose(actual, expected, rtol=RTOL, atol=0, err_msg=repr(inst))
