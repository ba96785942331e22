"""The fast paths of exact folding against their long ways (issue 30, cold time).

- the radical field's sums and products (a product's coefficients summed as int pairs) against plain
  Fraction arithmetic;
- :func:`radical_value`, read through its plain-dict walk, against the value read node by node with
  cleared caches (and read again from the caches);
- :func:`fold_exact`'s rational test and :func:`is_exact`'s leaf test against their definitions.
"""

from __future__ import annotations

import math
from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st

from exprgraph import const, parse
from exprgraph.core import exact_radicals, get_op
from exprgraph.core.exact import EULER, PI, Rational
from exprgraph.core.exact_fold import EXACT_LEAVES, MAX_EXACT_NODES, fold_exact, is_exact
from exprgraph.core.exact_radicals import (
    Radical,
    _bounded,
    _plus,
    _times,
    clear_radical_caches,
    radical_value,
)
from exprgraph.core.walk import postorder

ADD, SUB, MUL, DIV, SQRT, POW, CONST = (get_op(n) for n in ("add", "sub", "mul", "truediv", "sqrt", "pow", "const"))

SQUAREFREE = [1, 2, 3, 5, 6, 7, 10, 11, 13, 14, 15, 30]
COEFFICIENTS = st.fractions(min_value=-50, max_value=50, max_denominator=12)
RADICALS = st.dictionaries(st.sampled_from(SQUAREFREE), COEFFICIENTS, max_size=5).map(Radical)


def times_long_way(u: Radical, v: Radical) -> Radical | None:
    """``u*v`` with Fraction arithmetic term by term (the code before the pair arithmetic)."""
    out: dict[int, Fraction] = {}
    for m1, a in u.items():
        for m2, b in v.items():
            g = math.gcd(m1, m2)
            m = (m1 // g) * (m2 // g)
            out[m] = out.get(m, Fraction(0)) + a * b * g
    made = Radical(out)
    return made if _bounded(made) else None


def sum_long_way(values: list[Radical], sign: int = 1) -> Radical:
    """``values[0] + sign*values[1] + ...`` with Fraction arithmetic."""
    out: dict[int, Fraction] = dict(values[0]) if values else {}
    for v in values[1:]:
        for m, q in v.items():
            out[m] = out.get(m, Fraction(0)) + sign * q
    return Radical(out)


def same(a: Radical | None, b: Radical | None) -> bool:
    """Equal radical numbers, with Fraction coefficients (no whole coefficient left an int) and no zero term."""
    if a is None or b is None:
        return a is b
    return dict(a) == dict(b) and all(q.__class__ is Fraction and q != 0 for q in a.values())


@settings(max_examples=300, deadline=None)
@given(RADICALS, RADICALS)
def test_times_is_fraction_arithmetic(u: Radical, v: Radical) -> None:
    assert same(_times(u, v), times_long_way(u, v))


@settings(max_examples=300, deadline=None)
@given(st.lists(RADICALS, min_size=1, max_size=5), st.sampled_from([1, -1]))
def test_sums_are_fraction_arithmetic(values: list[Radical], sign: int) -> None:
    out = values[0]
    for v in values[1:]:
        out = _plus(out, v, sign)
    assert same(out, sum_long_way(values, sign))


def test_sum_cancels_to_zero_terms_dropped() -> None:
    u = Radical({2: Fraction(1, 2), 1: Fraction(3)})
    assert dict(_plus(u, u, -1)) == {}
    assert dict(_plus(u, Radical({2: Fraction(-1, 2)}))) == {1: Fraction(3)}


def test_radical_keeps_fractions_and_reads_like_a_mapping() -> None:
    v = Radical({3: 2, 1: Fraction(1, 2), 5: 0})
    assert dict(v) == {3: Fraction(2), 1: Fraction(1, 2)} and all(q.__class__ is Fraction for q in v.values())
    assert 3 in v and 5 not in v and v.get(5) is None and v.get(5, 7) == 7 and v.get(1) == Fraction(1, 2)
    assert sorted(v.keys()) == [1, 3] and sorted(v.items()) == [(1, Fraction(1, 2)), (3, Fraction(2))]
    assert v == Radical({1: Fraction(1, 2), 3: Fraction(2)}) and v != Radical({1: Fraction(1, 2)})


# -- radical_value: the walk with a plain dict against the value read node by node ------------------------

LEAVES = st.sampled_from(["2", "3", "1", "rational(1, 2)", "sqrt(2)", "sqrt(3)", "sqrt(8)", "2.0", "pi"])


@st.composite
def exact_texts(draw: st.DrawFn, depth: int = 3) -> str:
    """A small expression over ints, rationals, square roots (and a float or pi, which is no radical)."""
    if depth == 0 or draw(st.booleans()):
        return draw(LEAVES)
    op = draw(st.sampled_from(["+", "-", "*", "/", "**2", "**-1", "sqrt"]))
    a = draw(exact_texts(depth - 1))
    if op == "sqrt":
        return f"sqrt({a})"
    if op.startswith("**"):
        return f"({a}){op}"
    return f"({a}) {op} ({draw(exact_texts(depth - 1))})"


def value_node_by_node(t) -> Radical | None:
    """The radical value of ``t`` read bottom-up one subterm at a time, each from cleared caches first."""
    for node in postorder([t]):
        clear_radical_caches()
        for a in node.args:
            radical_value(a)  # the operands are in the cache: the node's own step alone
        radical_value(node)
    clear_radical_caches()
    return radical_value(t)


@settings(max_examples=200, deadline=None)
@given(exact_texts())
def test_radical_value_walk_is_the_node_by_node_value(text: str) -> None:
    t = parse(text)
    clear_radical_caches()
    once = radical_value(t)
    again = radical_value(t)  # from the cache
    assert same(once, again) or once is again
    slow = value_node_by_node(t)
    assert (once is None and slow is None) or (once is not None and slow is not None and dict(once) == dict(slow))


def test_radical_value_remembers_every_subterm_it_read() -> None:
    t = parse("(sqrt(2) + 1)*(sqrt(2) - 1)")
    clear_radical_caches()
    assert dict(radical_value(t)) == {1: Fraction(1)}
    inner = t.args[0]
    assert inner in exact_radicals._VALUES and dict(exact_radicals._VALUES[inner]) == {2: 1, 1: 1}
    assert radical_value(parse("x + sqrt(2)")) is None


# -- fold_exact and is_exact: the quick tests against their definitions ---------------------------------


def is_exact_long_way(t) -> bool:
    """Every node scalar, every leaf an int64 or exact constant, at most MAX_EXACT_NODES nodes walked."""
    stack, seen = [t], 0
    while stack:
        node = stack.pop()
        seen += 1
        if seen > MAX_EXACT_NODES or node.shape:
            return False
        if node.args:
            stack.extend(node.args)
        elif node.op is not CONST or node.attr.__class__ not in EXACT_LEAVES:
            return False
    return True


@settings(max_examples=200, deadline=None)
@given(st.one_of(exact_texts(), st.sampled_from(["x", "x + 1", "sin(2)", "2.5", "True", "e", "sqrt(x)"])))
def test_is_exact_and_fold_exact(text: str) -> None:
    t = parse(text)
    assert is_exact(t) == is_exact_long_way(t)
    clear_radical_caches()
    first = fold_exact(t)
    clear_radical_caches()
    assert fold_exact(t) is first  # a function of the term alone


def test_leaves() -> None:
    assert is_exact(const(2)) and is_exact(const(Fraction(1, 3))) and is_exact(const(PI)) and is_exact(const(EULER))
    assert not is_exact(const(2.0)) and not is_exact(const(True)) and not is_exact(parse("x"))
    assert not is_exact(const([1, 2]))
    assert Rational in EXACT_LEAVES


def test_rational_operands_fold_to_their_values() -> None:
    assert fold_exact(parse("rational(1, 3) + rational(1, 6)")) is const(Fraction(1, 2))
    assert fold_exact(parse("rational(1, 2)*4")) is const(2.0)
    assert fold_exact(parse("sqrt(8)")) is MUL(const(2), SQRT(const(2)))
    assert fold_exact(parse("2*pi")) is None and fold_exact(parse("sqrt(2)*sqrt(2)")) is const(2.0)
