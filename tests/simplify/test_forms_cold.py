"""The shortcuts of unsafe simplify's forms against their long ways.

A term without a quotient is read once, as a polynomial, for all three forms: its rational function in
lowest terms is that polynomial over 1 (the long way: ``r_cancel(to_ratio(t))``), and ``expand`` writes that
polynomial back. Each form must give the very term (or raise the very error class) the long way gives, the
coefficients of the rational function of the very types (an int is written ``2``, a Fraction ``2/1`` would
not be). ``factored`` skips factoring a denominator of 1.
"""

from __future__ import annotations

import operator
from fractions import Fraction
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from exprgraph.core import Term, const, exp, maximum, parse, sin, symbols
from exprgraph.errors import TermTooLargeError
from exprgraph.poly import ONE, Budget, p_factor, r_cancel, same_kind, to_poly, to_ratio
from exprgraph.simplify import forms
from exprgraph.simplify.forms import formed
from exprgraph.simplify.polynomial import expand, factored
from exprgraph.simplify.rational import fraction_term

x, y = symbols("x y")
LEAVES = [x, y, const(1), const(2), const(-3), const(0.5), const(2.0), const(0), parse("1/3")]


#: the operations of the random terms, by arity: ring operations, quotients, negative and float powers, atoms
UNARY = (
    operator.neg,
    lambda c: c**2,
    lambda c: c**3,
    lambda c: c**-1,
    lambda c: c ** const(2.0),
    sin,
    exp,
)
BINARY = (operator.add, operator.sub, operator.mul, operator.truediv, maximum)


def _terms():
    """Random terms of :data:`UNARY` and :data:`BINARY` operations and three-operand products over :data:`LEAVES`."""

    def extend(children):
        ops = [children.map(f) for f in UNARY]
        ops += [st.tuples(children, children).map(lambda p, f=f: f(*p)) for f in BINARY]
        ops.append(st.tuples(children, children, children).map(lambda p: p[0] * p[1] * p[2]))
        return st.one_of(*ops)

    return st.recursive(st.sampled_from(LEAVES), extend, max_leaves=12)


def _outcome(make: Any, *args: Any) -> Any:
    """``make(*args)``, or the class of what it raises."""
    try:
        return make(*args)
    except Exception as e:  # the class is compared: both ways must raise alike
        return type(e)


def _typed(ratio: Any) -> Any:
    """A rational function with each coefficient's type: equal only when the two are written alike."""
    if isinstance(ratio, type):
        return ratio
    return tuple({m: (type(c), c) for m, c in p.items()} for p in ratio)


def _long_ratio(t: Term) -> Any:
    return r_cancel(to_ratio(t))


def _long_form(name: str, t: Term) -> Term:
    if name == "expand":
        return expand(t)
    ratio = _long_ratio(t)
    return same_kind(factored(ratio, t) if name == "factor" else fraction_term(ratio, t), t)


@settings(max_examples=300, deadline=None)
@given(_terms())
@example(parse("(x + 1)**2 - x**2"))
@example(parse("exp(2*(x + y))"))
@example(parse("x*y*(x + y)**2"))
@example(parse("(x + 1)/3 + x**-1"))
@example(const(0) * x)
def test_each_form_is_the_long_ways(t):
    memo: dict = {}

    def once(key, make):
        if key not in memo:
            memo[key] = make()
        return memo[key]

    short = _outcome(lambda: forms._lowest_terms(t, once)[0])
    assert _typed(short) == _typed(_outcome(_long_ratio, t))
    for name in forms.FORMS:
        long = _outcome(_long_form, name, t)
        assert _outcome(formed, name, t, once) is long  # with the call's memo
        assert _outcome(formed, name, t) is long  # and without


@settings(max_examples=100, deadline=None)
@given(_terms(), _terms())
def test_forms_shared_across_bases_are_the_long_ways(a, b):
    # two bases in one call share what they have alike (a rational function, a polynomial): each still gets its
    # own long way's form
    memo: dict = {}

    def once(key, make):
        if key not in memo:
            memo[key] = make()
        return memo[key]

    for t in (a, b, a + b, b + a):
        for name in forms.FORMS:
            assert _outcome(formed, name, t, once) is _outcome(_long_form, name, t)


def test_a_quotient_goes_the_long_way():
    assert forms._mul_operands(parse("x/(x + 1)")) is None
    assert forms._mul_operands(parse("x**-1 + 1")) is None
    assert forms._mul_operands(x ** const(2.0)) is None  # a float power: left to the long way
    assert forms._mul_operands(parse("x**y")) is None
    assert forms._mul_operands(parse("2*x*y + (x + 1)**2*3")) == 3
    assert forms._polynomial(parse("x/(x + 1)"), forms._now) is None


def test_a_budget_nearly_spent_goes_the_long_way(monkeypatch):
    # to_ratio spends 1 more than to_poly per operand of a product beyond the first: with less than that left,
    # the short way stands aside
    t = parse("(x + 1)*(y + 2)*(x - y)")
    spent = Budget()
    to_poly(t, spent)
    used = spent.limit - spent.left
    monkeypatch.setattr(forms, "Budget", lambda: Budget(used + 1))  # 1 left, 2 extra operands
    assert forms._polynomial(t, forms._now) is None
    monkeypatch.setattr(forms, "Budget", lambda: Budget(used + 2))
    assert forms._polynomial(t, forms._now) == to_poly(t)
    monkeypatch.setattr(forms, "Budget", lambda: Budget(used - 1))  # to_poly runs out: so would to_ratio
    assert _outcome(lambda: forms._polynomial(t, forms._now)) is TermTooLargeError


def test_factoring_one_gives_nothing():
    # the shortcut of factored: p_factor(1) is the content 1 and no factors
    assert p_factor({ONE: 1}) == (1, [])
    assert p_factor({ONE: Fraction(1)}) == (1, [])
    r = r_cancel(to_ratio(parse("x**2 - 1")))
    assert r[1] == {ONE: 1}
    assert str(factored(r, x)) == "(x - 1)*(x + 1)"
