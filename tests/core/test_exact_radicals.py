"""The radical field (exprgraph.core.exact_radicals): values checked with mpmath at 50 digits."""

from __future__ import annotations

from fractions import Fraction

import mpmath
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arith_strategies import arithmetic
from exprgraph import Symbol, const, parse, simplify
from exprgraph.core import get_op
from exprgraph.core.exact_fold import fold_exact
from exprgraph.core.exact_radicals import (
    MAX_TERMS,
    Radical,
    fold_radicals,
    no_larger,
    radical_term,
    radical_value,
    sqrt_of_rational,
    squarefree_split,
)
from exprgraph.core.walk import postorder

SQRT, POW = get_op("sqrt"), get_op("pow")
CTX = mpmath.mp.clone() if hasattr(mpmath.mp, "clone") else mpmath.mp
DIGITS = 50


def _mp(value: Fraction) -> mpmath.mpf:
    return mpmath.mpf(value.numerator) / value.denominator


def high_precision(t) -> mpmath.mpf:
    """The value of an exact term over ints, rationals, + - * / ** and sqrt, at 50 digits (iterative)."""
    values: dict = {}
    with mpmath.workdps(DIGITS):
        for node in postorder([t]):
            name = node.op.name
            a = [values[x] for x in node.args]
            if name == "const":
                values[node] = _mp(Fraction(node.attr))
            elif name == "add":
                values[node] = mpmath.fsum(a)
            elif name == "sub":
                values[node] = a[0] - a[1]
            elif name == "mul":
                out = mpmath.mpf(1)
                for v in a:
                    out *= v
                values[node] = out
            elif name == "neg":
                values[node] = -a[0]
            elif name == "truediv":
                values[node] = a[0] / a[1]
            elif name == "sqrt":
                values[node] = mpmath.sqrt(a[0])
            elif name == "pow":
                values[node] = mpmath.power(a[0], a[1])
            else:  # pragma: no cover - the strategies build no other op
                raise AssertionError(name)
        return values[t]


def radical_number(v: Radical) -> mpmath.mpf:
    """``sum q*sqrt(m)`` at 50 digits."""
    with mpmath.workdps(DIGITS):
        return mpmath.fsum(_mp(q) * mpmath.sqrt(m) for m, q in v.items())


def close(a: mpmath.mpf, b: mpmath.mpf) -> bool:
    with mpmath.workdps(DIGITS):
        return abs(a - b) <= mpmath.mpf(10) ** -40 * max(1, abs(a), abs(b))


small = st.builds(Fraction, st.integers(-9, 9), st.integers(1, 4))
roots = st.sampled_from([2, 3, 5, 6, 8, 12, 18, 50]).map(lambda n: SQRT(const(n)))


def radical_terms() -> st.SearchStrategy:
    """Random exact terms of square roots: + - * /, integer powers, square roots of rationals."""
    base = st.one_of(small.map(const), roots, small.filter(lambda q: q > 0).map(lambda q: SQRT(const(q))))

    def grow(inner: st.SearchStrategy) -> st.SearchStrategy:
        return st.one_of(
            *arithmetic(inner),
            inner.map(lambda a: -a),
            st.tuples(inner, st.integers(-3, 3)).map(lambda p: POW(p[0], const(p[1]))),
        )

    return st.recursive(base, grow, max_leaves=5)


# -- the field --------------------------------------------------------------------------------------


def test_squarefree_split_and_roots_of_rationals():
    assert squarefree_split(72) == (6, 2)
    assert squarefree_split(1) == (1, 1)
    assert squarefree_split(10007**2 * 3) == (10007, 3)  # a large prime square still comes out
    assert squarefree_split(10007 * 10009) is None  # two primes beyond trial division: unknown
    assert sqrt_of_rational(Fraction(1, 2)) == Radical({2: Fraction(1, 2)})  # sqrt(1/2) = sqrt(2)/2
    assert sqrt_of_rational(Fraction(9, 4)) == Radical({1: Fraction(3, 2)})
    assert sqrt_of_rational(Fraction(-1)) is None  # nan in float64


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1/(1 + sqrt(2))", {1: -1, 2: 1}),
        ("(sqrt(2) + 1)*(sqrt(2) - 1)", {1: 1}),
        ("sqrt(2)*sqrt(6)", {3: 2}),
        ("1/sqrt(2)", {2: Fraction(1, 2)}),
        ("1/(sqrt(3) - sqrt(2))", {2: 1, 3: 1}),
        ("(1 + sqrt(2))**-2", {1: 3, 2: -2}),
        ("2**rational(3, 2)", {2: 2}),
        ("sqrt(rational(3, 8))", {6: Fraction(1, 4)}),
    ],
)
def test_values(text, expected):
    assert radical_value(parse(text)) == Radical({m: Fraction(q) for m, q in expected.items()})


@pytest.mark.parametrize(
    "text",
    [
        "pi*sqrt(2)",
        "log(3)",
        "2**rational(1, 3)",
        "sqrt(1 + sqrt(2))",
        "x*sqrt(2)",
        "sqrt(2.0)",
        "1/(sqrt(2) - sqrt(2))",
    ],
)
def test_not_radical_numbers(text):
    assert radical_value(parse(text)) is None


def test_int64_subterms_keep_their_range():
    big = const(2**62)
    assert radical_value(SQRT(const(2)) * (big + big)) is None  # 2**63 wraps in int64: not the exact value
    assert radical_value(SQRT(const(2)) * (const(3) - const(5))) == Radical({2: Fraction(-2)})


def test_too_many_terms_stay():
    many = parse("sqrt(2) + sqrt(3) + sqrt(5) + sqrt(7) + sqrt(11) + sqrt(13)")
    assert len(radical_value(many)) == 6  # a sum is read as it is
    assert radical_value(1 / many) is None  # its inverse would pass the bound of MAX_TERMS terms: refused
    assert radical_value(parse("sqrt(2*3*5*7*11*13)*sqrt(2)")) == Radical({3 * 5 * 7 * 11 * 13: Fraction(2)})
    assert MAX_TERMS == 16


@given(radical_terms())
@settings(max_examples=300, deadline=None)
def test_value_is_the_high_precision_value(t):
    v = radical_value(t)
    if v is None:
        return
    assert close(radical_number(v), high_precision(t))
    out = radical_term(v)
    if out is not None:
        assert close(high_precision(out), high_precision(t))
        if out.attr.__class__ is not float:  # a whole value is its float64 constant (the op's dtype kept)
            assert radical_value(out) == v  # the normal form reads back as the same number


@given(radical_terms())
@settings(max_examples=300, deadline=None)
def test_fold_is_equal_no_larger_and_idempotent(t):
    out = fold_radicals(t)
    if out is None:
        return
    assert close(high_precision(out), high_precision(t))
    assert no_larger(out, t) or (t.op.name == "truediv" and out.size == t.size + 1)
    assert fold_radicals(out) is None  # the normal form is a fixed point
    assert out.dtype == "float64"


# -- in folding and simplify ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1/(1 + sqrt(2))", "sqrt(2) - 1"),
        ("1/(sqrt(3) - sqrt(2))", "sqrt(2) + sqrt(3)"),
        ("(sqrt(2) + 1)*(sqrt(2) - 1)", "1.0"),
        ("(sqrt(3) + 1)*(sqrt(3) - 1)", "2.0"),
        ("sqrt(2)*sqrt(6)", "2*sqrt(3)"),
        ("sqrt(18)/sqrt(2)", "3.0"),
        ("1/sqrt(2)", "rational(1, 2)*sqrt(2)"),
        ("sqrt(2)/2", "sqrt(2)/2"),  # the normal form is one node larger: the input comes back, exact
        ("sqrt(2)/2 + sqrt(2)/2", "sqrt(2)"),
        ("(1 + sqrt(2))**2 - 2*sqrt(2)", "3.0"),
        ("1/(sqrt(2) - 1) - sqrt(2)", "1.0"),
        ("(sqrt(2) + 1)**-3", "5*sqrt(2) - 7"),
    ],
)
def test_simplify_writes_radicals_exactly(text, expected):
    t = parse(text)
    out = simplify(t)
    assert str(out) == expected
    assert out.size <= t.size
    assert simplify(out) is out
    assert close(high_precision(out), high_precision(t))


def test_fold_exact_uses_the_field_and_keeps_floats_out():
    assert str(fold_exact(parse("(sqrt(2) + 1)*(sqrt(2) - 1)"))) == "1.0"
    assert fold_exact(parse("(sqrt(2) + 1)*(sqrt(2) - 1.0)")) is None  # a float operand: not exact
    x = Symbol("x")
    assert fold_radicals(x * SQRT(const(2))) is None
