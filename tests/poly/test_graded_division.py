"""Graded division over the one ring (dims computes with the same ring: tests/test_architecture.py checks it)."""

from __future__ import annotations

from hypothesis import given, settings
from poly_helpers import X, Y, nonzero_polys, polys

from exprgraph.poly import ring as pr
from exprgraph.poly.division import p_divmod

INT = polys(max_terms=5, max_degree=3)


@settings(max_examples=40, deadline=None)
@given(INT, nonzero_polys(max_terms=3, max_degree=2))
def test_graded_division(a, d):
    q, r = p_divmod(a, d, [X, Y], order="grlex")
    assert pr.p_add(pr.p_mul(q, d), r) == a
