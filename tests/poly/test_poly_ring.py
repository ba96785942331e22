"""The ring of exprgraph.poly: laws on random polynomials, exact evaluation as a homomorphism, budgets."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from poly_helpers import ATOMS, X, Y, poly_value, polys

from exprgraph.errors import TermTooLargeError
from exprgraph.poly import (
    ONE,
    Budget,
    p_add,
    p_atom,
    p_const,
    p_content,
    p_diff,
    p_divmod,
    p_eval,
    p_exact_div,
    p_mul,
    p_neg,
    p_pow,
    p_primitive,
    p_scale,
    p_sub,
)

points = st.fixed_dictionaries({a: st.fractions(min_value=-4, max_value=4, max_denominator=5) for a in ATOMS})
P = polys(fractions=True)


def _clean(p: dict) -> bool:
    """No zero coefficient and no whole Fraction: the stored form."""
    return all(c and not (isinstance(c, Fraction) and c.denominator == 1) for c in p.values())


@settings(max_examples=60, deadline=None)
@given(P, P, P)
def test_ring_laws(a, b, c):
    assert p_add(a, b) == p_add(b, a)
    assert p_mul(a, b) == p_mul(b, a)
    assert p_add(p_add(a, b), c) == p_add(a, p_add(b, c))
    assert p_mul(p_mul(a, b), c) == p_mul(a, p_mul(b, c))
    assert p_mul(a, p_add(b, c)) == p_add(p_mul(a, b), p_mul(a, c))
    assert p_sub(a, a) == {}
    assert p_add(a, p_neg(a)) == {}
    assert p_mul(a, p_const(1)) == a
    for r in (p_add(a, b), p_mul(a, b), p_sub(a, c), p_scale(a, Fraction(2, 3))):
        assert _clean(r)


@settings(max_examples=60, deadline=None)
@given(P, P, points, st.integers(0, 4))
def test_evaluation_is_a_homomorphism(a, b, env, e):
    va, vb = poly_value(a, env), poly_value(b, env)
    assert poly_value(p_add(a, b), env) == va + vb
    assert poly_value(p_mul(a, b), env) == va * vb
    assert poly_value(p_pow(a, e), env) == va**e
    assert poly_value(p_eval(p_mul(a, b), env), {}) == va * vb


@settings(max_examples=60, deadline=None)
@given(P, polys(fractions=True).filter(bool))
def test_division_with_remainder(a, d):
    q, r = p_divmod(a, d, [X, Y])
    assert p_add(p_mul(q, d), r) == a
    assert p_exact_div(p_mul(a, d), d) == a


@settings(max_examples=40, deadline=None)
@given(P)
def test_content_and_primitive(a):
    c, q = p_primitive(a)
    assert p_scale(q, c) == a
    if a:
        assert all(isinstance(v, int) for v in q.values())
        assert p_content(q) == 1


def test_integer_path_keeps_ints():
    x, y = p_atom(X), p_atom(Y)
    p = p_pow(p_add(x, y, p_const(1)), 5)
    assert all(type(c) is int for c in p.values())
    assert p_diff(p, X) == p_scale(p_pow(p_add(x, y, p_const(1)), 4), 5)
    assert p_scale(p, Fraction(1, 2))[ONE] == Fraction(1, 2)


def test_budget_refuses_an_explosion():
    s = p_add(*[p_atom(a) for a in ATOMS], p_const(1))
    with pytest.raises(TermTooLargeError):
        p_pow(s, 200, Budget(100_000))


def test_degree_limit():
    with pytest.raises(TermTooLargeError):
        p_pow(p_atom(X), 10**6)
