"""The ring gives what dims' ring gives on integer polynomials: the same dicts, so dims can import ours."""

from __future__ import annotations

from hypothesis import given, settings
from poly_helpers import X, Y, nonzero_polys, polys

from exprgraph.dims import monomials as dm
from exprgraph.dims import ring as dn
from exprgraph.poly import monomials as pm
from exprgraph.poly import ring as pr
from exprgraph.poly.division import p_divmod, p_exact_div

INT = polys(max_terms=5, max_degree=3)


@settings(max_examples=60, deadline=None)
@given(INT, INT)
def test_same_results_as_dims(a, b):
    # the same dicts in the same order (dims' readers must agree on the order of their polynomials)
    assert list(pr.p_add(a, b).items()) == list(dn.p_add(a, b).items())
    assert list(pr.p_sub(a, b).items()) == list(dn.p_sub(a, b).items())
    assert list(pr.p_mul(a, b).items()) == list(dn.p_mul(a, b).items())
    assert list(pr.p_scale(a, -3).items()) == list(dn.p_scale(a, -3).items())
    assert pr.p_content(a) == dn.p_content(a)
    assert pr.p_mono_gcd(a, b) == dn.p_mono_gcd(a, b)
    acc1, acc2 = dict(a), dict(a)
    pr.p_add_into(acc1, b, 2)
    dn.p_add_into(acc2, b, 2)
    assert list(acc1.items()) == list(acc2.items())
    assert all(type(c) is int for c in pr.p_mul(a, b).values())
    if b:
        prod = pr.p_mul(a, b)
        assert p_exact_div(prod, b) == dn.p_exact_div(prod, b)


@settings(max_examples=60, deadline=None)
@given(INT, INT)
def test_monomials_as_dims(a, b):
    for m1 in a:
        for m2 in b:
            assert pm.mono_mul(m1, m2) == dm.mono_mul(m1, m2)
            assert pm.mono_div(m1, m2) == dm.mono_div(m1, m2)
            assert pm.mono_gcd(m1, m2) == dm._mono_gcd(m1, m2)
            assert pm.mono_pow(m1, 3) == dm.mono_pow(m1, 3)


@settings(max_examples=40, deadline=None)
@given(INT, nonzero_polys(max_terms=3, max_degree=2))
def test_graded_division(a, d):
    q, r = p_divmod(a, d, [X, Y], order="grlex")
    assert pr.p_add(pr.p_mul(q, d), r) == a
