"""SymPy round trips of symbols named like the exact constants: ``Symbol('e')`` is not ``E``."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from exprgraph import Symbol, evaluate, parse
from exprgraph.core.leaves import exact_constant
from exprgraph.errors import ConversionError

sp = pytest.importorskip("sympy")
from exprgraph.interop import from_sympy, to_sympy  # noqa: E402 - after the optional import

NAMES = ["e", "pi", "E", "x"]


def sympy_exprs() -> st.SearchStrategy:
    """Random SymPy expressions over real symbols named e, pi, E, x and exact numbers (E, pi, rationals, sqrt(2))."""
    leaves = st.one_of(
        st.sampled_from(NAMES).map(lambda n: sp.Symbol(n, real=True)),
        st.sampled_from([sp.E, sp.pi, sp.sqrt(2), sp.Rational(1, 3), sp.Integer(2), sp.Integer(-3)]),
    )

    def grow(inner: st.SearchStrategy) -> st.SearchStrategy:
        return st.one_of(
            st.tuples(inner, inner).map(lambda p: p[0] + p[1]),
            st.tuples(inner, inner).map(lambda p: p[0] * p[1]),
            st.tuples(inner, st.integers(-2, 3)).map(lambda p: p[0] ** p[1]),
            inner.map(sp.sin),
            inner.map(sp.exp),
        )

    return st.recursive(leaves, grow, max_leaves=6)


def test_symbol_e_and_euler_come_back_apart():
    e, pi = sp.Symbol("e", real=True), sp.Symbol("pi", real=True)
    expr = e * sp.E + pi * sp.pi
    t = from_sympy(expr)
    assert t.free_symbols == {Symbol("e"), Symbol("pi")}
    assert to_sympy(t) == expr
    assert parse(str(t)) is t  # printed `e`*e + `pi`*pi
    value = evaluate(t, {Symbol("e"): 2.0, Symbol("pi"): 3.0})
    assert value == pytest.approx(2 * math.e + 3 * math.pi)


@given(sympy_exprs())
@settings(max_examples=150, deadline=None)
def test_sympy_expressions_round_trip(expr):
    if expr.has(sp.zoo, sp.nan, sp.oo, -sp.oo):
        return  # complex infinity and nan: no exprgraph term (from_sympy refuses them)
    t = from_sympy(expr)
    assert to_sympy(t) == expr
    assert from_sympy(to_sympy(t)) is t


@given(st.lists(st.sampled_from(NAMES), min_size=1, max_size=3), st.sampled_from(["e", "pi"]))
@settings(max_examples=50, deadline=None)
def test_terms_round_trip_through_sympy(names, constant):
    t = exact_constant(constant)
    for n in names:
        t = t * Symbol(n) + 1
    assert from_sympy(to_sympy(t)) is not None
    back = from_sympy(to_sympy(t))
    point = {s: 0.5 + i for i, s in enumerate(sorted(t.free_symbols, key=lambda s: s.name))}
    assert float(evaluate(back, point)) == pytest.approx(float(evaluate(t, point)), rel=1e-14)
    assert back.free_symbols == t.free_symbols


def test_names_no_symbol_may_take_say_so():
    for name in ("x y", "lambda", "1x"):
        with pytest.raises(ConversionError, match="pass symbols="):
            from_sympy(sp.Symbol(name))
    lam = Symbol("lam")
    assert from_sympy(sp.Symbol("lambda") + 1, symbols={"lambda": lam}).free_symbols == {lam}
