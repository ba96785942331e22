"""The trig family's tables per strength (exprgraph.simplify.trig): pruning them changes no result.

The safe strength tries only the relations with a safe direction and the safe product identities,
and a product without a trigonometric, hyperbolic or exp factor is rejected before it is read. Each
test rewrites random sums and products with the pruned tables and with the full ones (the tables of
the unsafe strength, which the safe checks then filter as before) and asks for the same term.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from exprgraph import Symbol, Term, const, evaluate, get_op, parse
from exprgraph.simplify import simplify, trig

x, y = Symbol("x"), Symbol("y")
ADD, MUL, POW = get_op("add"), get_op("mul"), get_op("pow")
#: the functions of the family's relations and products
NAMES = ("sin", "cos", "tan", "sinh", "cosh", "tanh", "exp")
#: arguments: a symbol, its double, its negation, a sum, a half (what ``2u`` forms are read from)
ARGUMENTS = (x, MUL(const(2), x), MUL(const(-1), x), ADD(x, y), MUL(const(0.5), x))


@st.composite
def factors(draw: st.DrawFn) -> Term:
    """A factor: a function of an argument to a small power, or a symbol."""
    if draw(st.integers(0, 5)) == 0:
        return y
    f = get_op(draw(st.sampled_from(NAMES)))(draw(st.sampled_from(ARGUMENTS)))
    e = draw(st.sampled_from((1, 1, 2, 3, 4, -1, -2)))
    return f if e == 1 else POW(f, const(e))


@st.composite
def monomials(draw: st.DrawFn) -> Term:
    """A product of a coefficient (or none) and one to three factors."""
    parts = draw(st.lists(factors(), min_size=1, max_size=3))
    c = draw(st.sampled_from((None, 1, -1, 2, -2, 3, 0.5)))
    if c is not None:
        parts = [const(c), *parts]
    return parts[0] if len(parts) == 1 else MUL(*parts)


@st.composite
def related(draw: st.DrawFn) -> Term:
    """Two monomials of one relation of the table (each coefficient scaled alike, or one of them off),
    sometimes with another factor: the sums the relations are about, and their near misses."""
    _, _, parts, _ = draw(st.sampled_from(trig.RELATIONS))
    i, j = draw(st.sampled_from(((0, 1), (1, 0), (0, 2), (2, 0), (1, 2), (2, 1))))
    args = {"u": draw(st.sampled_from(ARGUMENTS)), "a": draw(st.sampled_from(ARGUMENTS)), "b": y}
    lam = Fraction(draw(st.sampled_from((1, -1, 2, -2, 3))), draw(st.sampled_from((1, 1, 2))))
    off = Fraction(draw(st.sampled_from((1,) * 8 + (2, -1))))
    terms = []
    for k, scale in ((i, lam), (j, lam * off)):
        extra = [y] if draw(st.integers(0, 9)) == 0 else []
        made = trig.monomial(scale * parts[k][0], extra + trig._build(parts[k][1], args), x)
        assume(made is not None)
        terms.append(made)
    return ADD(*terms)


@st.composite
def sums(draw: st.DrawFn) -> Term:
    """A sum of two monomials or of a monomial and a number, or two monomials of one relation."""
    if draw(st.integers(0, 3)):
        return draw(related())
    a = draw(monomials())
    b = draw(st.one_of(monomials(), st.sampled_from((const(1), const(-1), const(2), const(1.0)))))
    return ADD(a, b)


@st.composite
def products(draw: st.DrawFn) -> Term:
    """A product identity's factors (or their reciprocals) with a coefficient and another factor, or
    a random product."""
    if draw(st.booleans()):
        return draw(monomials())
    _, _, spec, _, _, _ = draw(st.sampled_from(trig._PRODUCTS_BOTH_WAYS))
    made = trig._build(spec, {"u": draw(st.sampled_from(ARGUMENTS))})
    c = draw(st.sampled_from((None, 1, -1, 2, -2)))
    extra = [y] if draw(st.integers(0, 3)) == 0 else []
    parts = ([] if c is None else [const(c)]) + extra + made
    return parts[0] if len(parts) == 1 else MUL(*parts)


def _full_tables(monkeypatch: pytest.MonkeyPatch) -> None:
    """The safe strength given the unsafe strength's tables (the code's checks filter them as before)."""
    monkeypatch.setitem(trig._ONE_BY_FUNCTION, False, trig._ONE_BY_FUNCTION[True])
    monkeypatch.setitem(trig._TWO_BY_STRENGTH, False, trig._TWO_BY_STRENGTH[True])
    monkeypatch.setitem(trig._PRODUCTS_BY_STRENGTH, False, trig._PRODUCTS_BY_STRENGTH[True])


def test_safe_tables_hold_only_safe_identities() -> None:
    assert trig._TWO_BY_STRENGTH[False] == []  # the sum formulas round: no safe direction
    kept = {r[0] for rows in trig._ONE_BY_FUNCTION[False].values() for r, _, _ in rows}
    assert "pythagorean" in kept and "secant" in kept and "exp_cosh" in kept
    assert "double_cos" not in kept and "triple_sin" not in kept
    assert all(any(r[3]) for rows in trig._ONE_BY_FUNCTION[False].values() for r, _, _ in rows)
    assert all(p[5] for p in trig._PRODUCTS_BY_STRENGTH[False])
    assert len(trig._PRODUCTS_BY_STRENGTH[False]) < len(trig._PRODUCTS_BY_STRENGTH[True])


def test_pruned_tables_keep_the_examples() -> None:
    one = const(1)
    assert str(trig.trig_sum_safe(ADD(one, MUL(const(-1), POW(get_op("sin")(x), const(2)))))) == "cos(x)**2"
    assert str(trig.trig_product_safe(MUL(get_op("sin")(x), POW(get_op("cos")(x), const(-1))))) == "tan(x)"
    assert trig.trig_product_safe(MUL(x, y)) is None  # no function: rejected before it is read


@settings(max_examples=500, deadline=None)
@given(sums())
def test_safe_sums_unchanged_by_pruning(t: Term) -> None:
    pruned = trig.trig_sum_safe(t)
    with pytest.MonkeyPatch.context() as mp:
        _full_tables(mp)
        full = trig.trig_sum_safe(t)
    assert pruned is full


@settings(max_examples=300, deadline=None)
@given(products())
def test_safe_products_unchanged_by_pruning(t: Term) -> None:
    pruned = trig.trig_product_safe(t) if t.op is MUL else None
    with pytest.MonkeyPatch.context() as mp:
        _full_tables(mp)
        full = trig.trig_product_safe(t) if t.op is MUL else None
    assert pruned is full


@settings(max_examples=300, deadline=None)
@given(products())
def test_rejected_products_have_no_function_key(t: Term) -> None:
    # the early rejection of _product is exact: a product it rejects reads with no key of a function
    if t.op is not MUL or trig._has_function(t):
        return
    read = trig.read_term(t)
    assert read is None or all(key[0] not in trig.FUNCTIONS for key in read[1])


@pytest.mark.parametrize(
    "text", ["1 - (y/y)*sin(x)**2", "1 - y*sin(x)**2/y", "(y/y)*sin(x)/cos(x)", "1 - sin(x)**3/sin(x)"]
)
def test_safe_strength_keeps_a_cancelled_base(text: str) -> None:
    # y/y and sin(x)**3/sin(x) are nan where y or sin(x) is 0 or inf: the safe relations read no
    # b**m * b**-n as b**(m - n), so the rewrite keeps that nan (it gave cos(x)**2 and tan(x))
    t = parse(text)
    out = simplify(t)
    for point in ({x: 0.7, y: 0.0}, {x: 0.0, y: 1.0}, {x: 0.7, y: math.inf}, {x: 0.7, y: 2.0}):
        with np.errstate(all="ignore"):
            a, b = float(evaluate(t, point)), float(evaluate(out, point))
        assert (math.isnan(a) and math.isnan(b)) or a == pytest.approx(b, rel=1e-12), (text, str(out), point)
