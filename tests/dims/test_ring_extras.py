"""dims' ring is poly's ring with dims' limits: its budget, its bound on constant powers, products in order."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from exprgraph.dims import dim_name
from exprgraph.dims import ring as dims_ring
from exprgraph.dims.monomials import ONE, mono_of_powers
from exprgraph.errors import TermTooLargeError
from exprgraph.poly import ring as poly_ring

A, B, C = (dim_name(n) for n in ("a", "b", "c"))
ATOMS = (A, B, C)

monos = st.dictionaries(st.sampled_from(ATOMS), st.integers(1, 3), max_size=3).map(mono_of_powers)
int_polys = st.dictionaries(monos, st.integers(-5, 5).filter(bool), max_size=4)


def test_the_budget_of_a_simplification_is_dims_own(monkeypatch):
    assert dims_ring.Budget().limit == dims_ring.MAX_WORK == 1_000_000
    assert poly_ring.Budget().limit == poly_ring.MAX_WORK  # the ring's own default is left alone
    monkeypatch.setattr(dims_ring, "MAX_WORK", 50)
    budget = dims_ring.Budget()  # read at each new budget: a test may lower it
    assert budget.limit == 50 and isinstance(budget, poly_ring.Budget)
    budget.spend(50)
    with pytest.raises(TermTooLargeError, match="dimension expression would expand it beyond 50 monomial"):
        budget.spend(1)
    with pytest.raises(TermTooLargeError, match="this polynomial computation would take more than 7"):
        poly_ring.Budget(7).spend(8)


def test_constant_powers_stop_at_dims_bound():
    assert dims_ring.int_power(2, 2048) == 2**2048  # 2 bits, 2048 times: 4096 bits, allowed
    assert dims_ring.int_power(-3, 2047) == (-3) ** 2047
    with pytest.raises(TermTooLargeError, match="more than 4096 bits"):
        dims_ring.int_power(2, 2049)
    for c in (0, 1, -1):
        assert dims_ring.int_power(c, 10**6 + 1) == c**3  # never refused
    assert poly_ring.int_power(2, 2049) == 2**2049  # the ring's own bound is larger
    with pytest.raises(TermTooLargeError):
        dims_ring.split_factors([({ONE: 2}, 2049)])
    with pytest.raises(TermTooLargeError):
        dims_ring.p_product([({ONE: 2}, 3000), ({((A, 1),): 1, ONE: 1}, 1)])


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(int_polys, st.integers(0, 3)), min_size=1, max_size=4))
def test_products_multiply_the_sums_in_order_after_the_single_terms(factors):
    singles = [(p, e) for p, e in factors if len(p) == 1 or e == 0 or not p]
    sums = [(p, e) for p, e in factors if len(p) > 1 and e > 0]
    want: dict = {ONE: 1}
    for p, e in singles + sums:  # the single-term factors first, then each sum e times, in order
        for _ in range(e):
            want = dims_ring.p_mul(want, p)
    got = dims_ring.p_product(factors, dims_ring.Budget())
    if not want:
        assert got == {}
    else:
        assert list(got.items()) == list(want.items())
    assert all(type(c) is int for c in got.values())
    split = dims_ring.split_factors(factors)
    if split is not None:
        coef, powers, left = split
        assert type(coef) is int and left == sums
        product_of_singles = {ONE: 1}
        for p, e in singles:
            for _ in range(e):
                product_of_singles = dims_ring.p_mul(product_of_singles, p)
        assert product_of_singles == {mono_of_powers(powers): coef}


@settings(max_examples=100, deadline=None)
@given(int_polys, int_polys.filter(bool))
def test_exact_division_of_dims_polynomials(p, q):
    product = dims_ring.p_mul(p, q)
    quotient = dims_ring.p_exact_div(product, q, dims_ring.Budget())
    assert quotient == p
    shifted = dims_ring.p_add(product, {((A, 5),): 1})  # divisible by q or not: a quotient must be exact
    got = dims_ring.p_exact_div(shifted, q, dims_ring.Budget())
    assert got is None or dims_ring.p_mul(got, q) == shifted


def test_a_negative_power_is_refused():
    with pytest.raises(ValueError, match="powers >= 0"):
        dims_ring.p_product([({((A, 1),): 1}, -1)])
