"""Radicals (exprgraph.simplify.radicals): denesting over the rationals, exact factors of products merged."""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import exprgraph as eg
from arith_strategies import arithmetic
from exprgraph.core.exact_fold import is_exact
from exprgraph.core.exact_radicals import squarefree_split
from exprgraph.simplify import simplify
from exprgraph.simplify.radicals import denest_sqrt, merge_exact_factors

mpmath.mp.dps = 40


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("sqrt(3 + 2*sqrt(2))", "sqrt(2) + 1"),
        ("sqrt(3 - 2*sqrt(2))", "sqrt(2) - 1"),
        ("sqrt(5 + 2*sqrt(6))", "sqrt(2) + sqrt(3)"),
        ("sqrt(4 + 2*sqrt(3))", "sqrt(3) + 1"),
        ("sqrt(rational(3, 2) + sqrt(2))", "rational(1, 2)*(sqrt(2) + 2)"),  # halves 1 and 1/2
        ("sqrt(rational(9, 4) - sqrt(2))", "sqrt(2) - rational(1, 2)"),  # halves 2 and 1/4
        ("sqrt(2 + sqrt(3))", "sqrt(sqrt(3) + 2)"),  # (sqrt(2) + sqrt(6))/2 would be larger: kept
        ("sqrt(1 + sqrt(2))", "sqrt(sqrt(2) + 1)"),  # 1 - 2 < 0: no denesting
    ],
)
def test_denest(text: str, expected: str) -> None:
    t = eg.parse(text)
    out = simplify(t)
    assert str(out) == expected
    assert out.size <= t.size and simplify(out) is out


def test_declines_symbols_and_floats() -> None:
    x = eg.Symbol("x")
    assert denest_sqrt(eg.sqrt(3 + 2 * eg.sqrt(x))) is None
    assert denest_sqrt(eg.sqrt(eg.const(3.0) + 2 * eg.sqrt(eg.const(2.0)))) is None


def _squarefree(n: int) -> bool:
    split = squarefree_split(n)
    return split is not None and split[0] == 1


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 10**4), st.integers(0, 10**4), st.booleans())
def test_denested_value(p: int, q: int, minus: bool) -> None:
    # sqrt(p + q - 2*sqrt(p*q)) = |sqrt(p) - sqrt(q)|, sqrt(p + q + 2*sqrt(p*q)) = sqrt(p) + sqrt(q)
    p, q = max(p, q), min(p, q)
    if q == 0:
        return
    t = eg.sqrt(eg.const(p + q) + eg.const(-2 if minus else 2) * eg.sqrt(eg.const(p * q)))
    r = denest_sqrt(t)
    exact = mpmath.sqrt(p) - mpmath.sqrt(q) if minus else mpmath.sqrt(p) + mpmath.sqrt(q)
    if p != q and _squarefree(p) and _squarefree(q):
        assert r is not None  # sqrt(p) +- sqrt(q) (or +- 1) is no larger than the nested root
    if r is None:
        return
    assert r.size <= t.size
    got = float(eg.evaluate(r, {}))
    assert abs(got - float(exact)) <= 4 * math.ulp(float(exact)) + 4 * math.ulp(math.sqrt(p))


fractions = st.builds(Fraction, st.integers(0, 60), st.integers(1, 9))


@settings(max_examples=200, deadline=None)
@given(fractions, fractions, st.booleans())
def test_denested_value_over_rationals(p: Fraction, q: Fraction, minus: bool) -> None:
    # sqrt(p + q +- 2*sqrt(p*q)) = sqrt(p) +- sqrt(q) for rationals p >= q >= 0, at 40 digits
    p, q = max(p, q), min(p, q)
    t = eg.sqrt(eg.const(p + q) + eg.const(-2 if minus else 2) * eg.sqrt(eg.const(p * q)))
    r = denest_sqrt(t)
    if r is None:
        return
    assert r.size <= t.size and r.dtype == "float64"
    root = mpmath.sqrt(mpmath.mpf(p.numerator) / p.denominator)
    other = mpmath.sqrt(mpmath.mpf(q.numerator) / q.denominator)
    exact = root - other if minus else root + other
    assert abs(_mp_value(r) - exact) <= mpmath.mpf(10) ** -30 * max(1, abs(exact))


def _mp_value(t: eg.Term) -> mpmath.mpf:
    """The value of an exact term of + - * sqrt over ints and rationals, at 40 digits."""
    values: dict = {}
    for node in eg.postorder(t):
        a = [values[x] for x in node.args]
        name = node.op.name
        if name == "const":
            v = Fraction(node.attr)
            values[node] = mpmath.mpf(v.numerator) / v.denominator
        elif name == "sqrt":
            values[node] = mpmath.sqrt(a[0])
        elif name == "add":
            values[node] = mpmath.fsum(a)
        elif name == "sub":
            values[node] = a[0] - a[1]
        elif name == "mul":
            values[node] = mpmath.fprod(a)
        elif name == "neg":
            values[node] = -a[0]
        else:  # pragma: no cover - the radical normal form has no other op
            raise AssertionError(name)
    return values[t]


# -- exact factors of a product ---------------------------------------------------------------------


def test_merge_exact_factors_is_unsafe_and_merges() -> None:
    x = eg.Symbol("x")
    t = x * eg.sqrt(eg.const(2)) * eg.sqrt(eg.const(6))
    assert str(simplify(t)) == str(t)  # reassociation: not at the safe strength
    out = simplify(t, unsafe=True)
    assert str(out) == "2*x*sqrt(3)" and out.size < t.size
    assert merge_exact_factors(x * eg.sqrt(eg.const(2))) is None  # one exact factor: nothing to merge


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.sampled_from([2, 3, 6, 8, 10, 15]), min_size=2, max_size=3),
    st.floats(-1e6, 1e6, allow_nan=False),
)
def test_merged_factors_keep_the_value(radicands: list[int], value: float) -> None:
    x = eg.Symbol("x")
    t = eg.core.get_op("mul")(x, *(eg.sqrt(eg.const(n)) for n in radicands))
    out = merge_exact_factors(t)
    if out is None:
        return
    assert out.size < t.size
    want = value * math.prod(math.sqrt(n) for n in radicands)
    got = float(eg.evaluate(out, {x: value}))
    assert got == pytest.approx(want, rel=1e-14, abs=1e-300)


def test_exact_results_compile_to_their_value() -> None:
    x = eg.Symbol("x")
    t = x / (1 + eg.sqrt(eg.const(2))) + eg.sqrt(eg.const(2)) * eg.sqrt(eg.const(6))
    out = simplify(t, unsafe=True)
    points = np.linspace(-3, 3, 7)
    want = points / (1 + math.sqrt(2)) + 2 * math.sqrt(3)
    np.testing.assert_allclose(eg.evaluate(out, {x: points}), want, rtol=1e-14)


# -- simplify over random terms of a symbol and radicals ----------------------------------------------


def _radical_leaves() -> st.SearchStrategy:
    x = eg.Symbol("x")
    return st.one_of(
        st.sampled_from([2, 3, 6, 8, 12]).map(lambda n: eg.sqrt(eg.const(n))),
        st.integers(-3, 3).map(eg.const),
        st.builds(Fraction, st.integers(-3, 3), st.integers(2, 4)).map(eg.const),
        st.just(x),
    )


def _radical_terms() -> st.SearchStrategy:
    def grow(inner: st.SearchStrategy) -> st.SearchStrategy:
        return st.one_of(
            *arithmetic(inner),
            # an int64 ** a negative int64 is an error: ints take nonnegative exponents
            st.tuples(inner, st.integers(-2, 3)).map(
                lambda p: p[0] ** eg.const(abs(p[1]) if p[0].dtype == "int64" else p[1])
            ),
        )

    return st.recursive(_radical_leaves(), grow, max_leaves=6)


def _float_over_exact(t: eg.Term) -> bool:
    """Whether ``t`` holds ``1.0/b`` of an exact ``b``: the output form's spelling of ``b**-1``, which reads
    back as a float (the canonical form's division; the simplify/output.py edit in the H-forms report)."""
    return any(
        n.op.name == "truediv" and n.args[0].op.name == "const" and n.args[0].dtype == "float64" and is_exact(n.args[1])
        for n in eg.postorder(t)
    )


def test_the_reciprocal_of_an_exact_sum_stays_exact_once() -> None:
    t = eg.parse("(sqrt(2) + (sqrt(2) + sqrt(3)))**-1")
    out = simplify(t)
    assert str(out) == "1.0/((sqrt(2) + sqrt(3)) + sqrt(2))" or str(out).startswith("1/")  # 1/b once fixed
    assert _float_over_exact(out) == str(out).startswith("1.0/")


@settings(max_examples=150, deadline=None)
@given(_radical_terms(), st.booleans())
def test_simplify_keeps_values_is_no_larger_and_idempotent(t: eg.Term, unsafe: bool) -> None:
    x = eg.Symbol("x")
    out = simplify(t, unsafe=unsafe)
    assert out.size <= t.size
    if not _float_over_exact(out):
        assert simplify(out, unsafe=unsafe) is out
    points = np.array([-2.5, -0.75, 0.5, 1.25, 3.0])
    with np.errstate(all="ignore"):
        want = np.broadcast_to(np.asarray(eg.evaluate(t, {x: points}), dtype=float), points.shape)
        got = np.broadcast_to(np.asarray(eg.evaluate(out, {x: points}), dtype=float), points.shape)
    finite = np.isfinite(want) & (np.abs(want) < 1e12)
    np.testing.assert_allclose(got[finite], want[finite], rtol=1e-9, atol=1e-9)
