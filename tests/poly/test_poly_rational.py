"""Rational functions: cancel, together (sums over the lcm) and partial fractions, checked exactly at random points."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from poly_helpers import X, Y, Z, poly_value, polys

from exprgraph import Symbol
from exprgraph.poly import (
    ONE,
    from_dense,
    p_atom,
    p_const,
    p_gcd,
    p_mul,
    p_sub,
    r_add,
    r_apart,
    r_cancel,
    r_mul,
    to_ratio,
)
from exprgraph.poly.dense import d_eval, d_pow

SMALL = polys(max_terms=3, max_degree=2)
UNI = polys(atoms=(X,), max_terms=4, max_degree=4, fractions=True)
point = st.fixed_dictionaries({a: st.fractions(min_value=-7, max_value=7, max_denominator=7) for a in (X, Y, Z)})


def _value(r, env):
    d = poly_value(r[1], env)
    assume(d != 0)
    return poly_value(r[0], env) / d


@settings(max_examples=50, deadline=None)
@given(SMALL, SMALL.filter(bool), SMALL.filter(bool), point)
def test_cancel_is_lowest_terms_and_equal(a, b, c, env):
    r = (p_mul(a, c), p_mul(b, c))
    n, d = r_cancel(r)
    assert p_gcd(n, d) == {ONE: 1} or not n
    assume(poly_value(c, env) != 0)
    assert _value((n, d), env) == _value(r, env)


@settings(max_examples=50, deadline=None)
@given(SMALL, SMALL.filter(bool), SMALL, SMALL.filter(bool), point)
def test_sum_and_product_of_fractions(a, b, c, d, env):
    s = r_add((a, b), (c, d))
    m = r_mul((a, b), (c, d))
    assert _value(s, env) == _value((a, b), env) + _value((c, d), env)
    assert _value(m, env) == _value((a, b), env) * _value((c, d), env)


@settings(max_examples=50, deadline=None)
@given(UNI, UNI.filter(bool), st.fractions(min_value=-9, max_value=9, max_denominator=9))
def test_apart_equals_input(n, d, t):
    poly, parts = r_apart((n, d), X)
    env = {X: t}
    assume(poly_value(d, env) != 0)
    total = d_eval(poly, t) if poly else Fraction(0)
    for num, f, j in parts:
        assert len(num) < len(f)  # deg A < deg f
        fv = d_eval(f, t)
        assume(fv != 0)
        total += Fraction(d_eval(num, t)) / fv**j
    assert total == poly_value(n, env) / poly_value(d, env)


def test_textbook_fractions():
    x, y = p_atom(X), p_atom(Y)
    one = p_const(1)
    # (x**2 - 1)/(x + 1) -> x - 1
    assert r_cancel((p_sub(p_mul(x, x), one), p_sub(x, p_const(-1)))) == (p_sub(x, one), {ONE: 1})
    # 1/x + 1/y -> (x + y)/(x*y)
    n, d = r_add((one, x), (one, y))
    assert d == p_mul(x, y) and n == p_sub(x, p_const(0)) | p_sub(y, p_const(0))
    # 1/(x**2 - 1) = 1/(2(x - 1)) - 1/(2(x + 1))
    poly, parts = r_apart((one, p_sub(p_mul(x, x), one)), X)
    assert poly == [] and sorted((f, num) for num, f, _ in parts) == [
        ([-1, 1], [Fraction(1, 2)]),
        ([1, 1], [Fraction(-1, 2)]),
    ]


def test_apart_refuses_other_atoms():
    with pytest.raises(ValueError):
        r_apart((p_const(1), p_mul(p_atom(X), p_atom(Y))), X)


def test_apart_repeated_and_irreducible_factors():
    x = p_atom(X)
    den = p_mul(p_mul(x, from_dense(d_pow([-1, 1], 2), X)), from_dense([1, 0, 1], X))
    _, parts = r_apart((from_dense([1, 0, 0, 1], X), den), X)
    assert sorted((len(f) - 1, j) for _, f, j in parts) == [(1, 1), (1, 1), (1, 2), (2, 1)]


def test_a_sum_adding_only_zeros_does_not_share_its_operands_numerator():
    """``y + 0`` read once, then ``- y + y``: adding into the sum's numerator must not change ``y``'s (a copy)."""
    y, z = Symbol("y"), Symbol("z")
    for s in (y + 0 - y + y, y - 0 - y + y, (y + z) + 0 - (y + z) + (y + z)):
        got = to_ratio(s)
        want = to_ratio(s.args[1])
        assert got == want, (s, got, want)
