"""GCDs: divide both, maximal (coprime cofactors), planted factors found; sympy as an oracle."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from poly_helpers import ATOMS, X, Y, Z, nonzero_polys, polys

from exprgraph.poly import ONE, p_add, p_atom, p_cofactors, p_const, p_exact_div, p_gcd, p_lcm, p_mul, p_pow, p_sub

SMALL = polys(max_terms=4, max_degree=2)
SMALLQ = polys(max_terms=4, max_degree=2, fractions=True)


def _is_one(p):
    return p == {ONE: 1}


@settings(max_examples=60, deadline=None)
@given(SMALLQ, SMALLQ)
def test_gcd_divides_both_and_is_maximal(a, b):
    g, ca, cb = p_cofactors(a, b)
    if not a and not b:
        assert g == {}
        return
    assert p_mul(g, ca) == a and p_mul(g, cb) == b
    # maximal: the cofactors have no common factor left
    assert _is_one(p_gcd(ca, cb))


@settings(max_examples=40, deadline=None)
@given(SMALL, SMALL, nonzero_polys(max_terms=3, max_degree=2))
def test_planted_common_factor_is_found(a, b, c):
    g = p_gcd(p_mul(a, c), p_mul(b, c))
    if a or b:
        assert p_exact_div(g, c) is not None or all(not m for m in c)  # c divides the gcd (up to a constant)


@settings(max_examples=30, deadline=None)
@given(SMALL, SMALL)
def test_lcm(a, b):
    m = p_lcm(a, b)
    if a and b:
        assert p_exact_div(m, a) is not None and p_exact_div(m, b) is not None


def test_textbook_gcds():
    x, y, z = (p_atom(a) for a in (X, Y, Z))
    one = p_const(1)
    assert p_gcd(p_sub(p_mul(x, x), one), p_add(x, one)) == p_add(x, one)
    # gcd((x+y)(x-1), (x+y)(x+z)) = x + y
    assert p_gcd(p_mul(p_add(x, y), p_sub(x, one)), p_mul(p_add(x, y), p_add(x, z))) == p_add(x, y)
    # the sign is normalised: the leading coefficient is positive whatever the inputs' signs
    assert p_gcd(p_mul(p_sub(one, x), y), p_mul(p_sub(one, x), z)) == p_sub(x, one)
    assert p_gcd(p_pow(p_add(x, y), 3), p_pow(p_add(x, y), 2)) == p_pow(p_add(x, y), 2)


def _to_sympy(p, sym):
    sympy = pytest.importorskip("sympy")
    out = sympy.Integer(0)
    for m, c in p.items():
        t = sympy.Rational(c.numerator, c.denominator) if not isinstance(c, int) else sympy.Integer(c)
        for a, k in m:
            t *= sym[a] ** k
        out += t
    return sympy.expand(out)


@settings(max_examples=40, deadline=None)
@given(SMALL, SMALL, SMALL)
def test_gcd_against_sympy(a, b, c):
    sympy = pytest.importorskip("sympy")
    sym = {a_: sympy.Symbol(a_.name) for a_ in ATOMS}
    pa, pb = p_mul(a, c), p_mul(b, c)
    ours = _to_sympy(p_gcd(pa, pb), sym)
    theirs = sympy.gcd(_to_sympy(pa, sym), _to_sympy(pb, sym))
    if theirs == 0:
        assert ours == 0
        return
    ratio = sympy.cancel(ours / theirs)
    assert ratio.is_number and ratio != 0
