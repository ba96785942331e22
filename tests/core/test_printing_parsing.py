"""Printing and parsing: round trips (hypothesis), precedence corner cases, garbage input (error positions and carets:
tests/test_parse_errors.py)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import exprgraph as eg
from exprgraph import ParseError, Symbol, const, parse, symbols

x, y, z = symbols("x y z")
b = Symbol("b", "bool")

# -- a strategy for random terms over the scalar ops ------------------------------------------------

_BINARY = ["add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "maximum", "minimum", "lt", "le",
           "gt", "ge", "eq", "ne", "logical_and", "logical_or"]  # fmt: skip
_UNARY = ["neg", "abs", "exp", "log", "sqrt", "sin", "cos", "tan", "tanh", "sigmoid", "logical_not"]

leaves = st.one_of(
    st.sampled_from([x, y, z, b, Symbol("n", "int64")]),
    st.integers(-5, 5).map(const),
    st.floats(allow_nan=True, allow_infinity=True).map(const),
    st.booleans().map(const),
)


def _extend(children: st.SearchStrategy) -> st.SearchStrategy:
    return st.one_of(
        st.tuples(st.sampled_from(_BINARY), children, children).map(lambda t: eg.get_op(t[0])(t[1], t[2])),
        st.tuples(st.sampled_from(_UNARY), children).map(lambda t: eg.get_op(t[0])(t[1])),
        st.tuples(children, children, children).map(lambda t: eg.where(t[0], t[1], t[2])),
        st.lists(children, min_size=3, max_size=4).map(lambda a: eg.add(*a)),
        st.lists(children, min_size=3, max_size=4).map(lambda a: eg.mul(*a)),
        st.lists(children, min_size=3, max_size=4).map(lambda a: eg.maximum(*a)),
    )


terms = st.recursive(leaves, _extend, max_leaves=25)


@settings(max_examples=400, deadline=None)
@given(terms)
def test_parse_of_print_is_the_same_term(t):
    text = str(t)
    assert parse(text, [b, Symbol("n", "int64")]) is t, text


@settings(max_examples=100, deadline=None)
@given(terms)
def test_print_is_stable(t):
    assert str(parse(str(t), [b, Symbol("n", "int64")])) == str(t)


# -- precedence corner cases --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("term", "text"),
    [
        (-(x**2), "-x**2"),
        ((-x) ** 2, "(-x)**2"),
        (const(-2) ** x, "(-2)**x"),
        (-(const(2) ** x), "-2**x"),
        (x ** const(-2), "x**-2"),
        (x**-y, "x**-y"),
        (x ** (y**z), "x**y**z"),
        ((x**y) ** z, "(x**y)**z"),
        (x - const(-2), "x - -2"),
        (-const(2), "-(2)"),
        (-const(-2), "-(-2)"),
        (const(-2) * x, "-2*x"),
        (x - (y - z), "x - (y - z)"),
        ((x - y) - z, "x - y - z"),
        (x + (y + z), "x + (y + z)"),
        (x / (y * z), "x/(y*z)"),
        (x * y + 3, "x*y + 3"),
        ((x * y + 3) / (z - 2), "(x*y + 3)/(z - 2)"),
        (-(x + y), "-(x + y)"),
        (eg.add(x, y, z), "x + y + z"),
        # a flat chain is one variadic term; a term of the same op inside one is parenthesised
        ((x + y) + z, "(x + y) + z"),
        (eg.mul(x, y, eg.sin(x * y)), "x*y*sin(x*y)"),
        ((x * y) * eg.sin(x * y), "(x*y)*sin(x*y)"),
        (eg.add(x + y, z, x), "(x + y) + z + x"),
        (eg.add(x - y, z, x), "x - y + z + x"),
        (eg.add(x, y - z, z), "x + (y - z) + z"),
        (eg.mul(-x, y, z), "-x*y*z"),
        (eg.mul(x, y, z) ** 2, "(x*y*z)**2"),
        (eg.mul(eg.add(x, y, z), x, y), "(x + y + z)*x*y"),
        (eg.add(x * y * z, eg.mul(x, y, z)), "(x*y)*z + x*y*z"),
        (eg.mul(x, y / z, z), "x*(y/z)*z"),
        (eg.logical_not(x < y), "not x < y"),
        (eg.logical_not(b & b), "not (b and b)"),
        ((x < y) & (y < z), "x < y and y < z"),
        (eg.lt(x < y, z), "(x < y) < z"),
        (eg.eq(x, y), "x == y"),
        (const(float("inf")), "inf"),
        (const(float("-inf")), "-inf"),
        (const(-0.0), "-0.0"),
        (const(1e-10), "1e-10"),
        (eg.sum(Symbol("A", shape=(2, 3)), axis=1), "sum(A, axis=1)"),
        (eg.transpose(Symbol("A", shape=(2, 3)), axes=(1, 0)), "transpose(A, axes=(1, 0))"),
        (Symbol("A", shape=(2, 3)) @ Symbol("B", shape=(3,)), "A @ B"),
        (eg.where(b, x, 1.0), "where(b, x, 1.0)"),
        (const([[1.0, -2.0]]), "array([[1.0, -2.0]])"),
    ],
)
def test_printed_forms(term, text):
    assert str(term) == text
    syms = [b, Symbol("A", shape=(2, 3)), Symbol("B", shape=(3,))]
    assert parse(text, syms) is term


def test_python_precedence_of_literals():
    # the parser reads -2**2 as Python does: -(2**2)
    assert parse("-2**2") is -(const(2) ** 2)
    assert parse("(-2)**2") is const(-2) ** 2
    assert parse("2**-1") is const(2) ** const(-1)
    assert parse("+x") is x
    assert parse("- - x") is eg.neg(eg.neg(x))
    assert parse("max(x, y)") is eg.maximum(x, y)
    assert parse("True") is const(True)
    assert parse("3") is const(3) and parse("3.0") is const(3.0)
    assert parse("1e3") is const(1000.0)
    assert math.isnan(parse("nan").value)


def test_repr_is_the_constructor_form():
    assert repr(x * y + 3) == "add(mul(Symbol('x'), Symbol('y')), const(3))"
    assert repr(Symbol("n", "int64")) == "Symbol('n', 'int64')"
    assert repr(Symbol("A", shape=(3, "m"))) == "Symbol('A', shape=(3, 'm'))"
    assert repr(eg.sum(Symbol("v", shape=(2,)), axis=0)) == "sum(Symbol('v', shape=(2,)), axis=0)"


def test_parse_with_symbol_table_and_dtype():
    n = Symbol("n", "int64")
    assert parse("n + 1", {"n": n}) is n + 1
    assert parse("k // 2", dtype="int64") is Symbol("k", "int64") // 2
    with pytest.raises(ParseError, match="unknown name 'q'"):
        parse("q + 1", [n], strict=True)


def test_shape_errors_while_parsing_are_parse_errors():
    A = Symbol("A", shape=(2, 3))
    with pytest.raises(ParseError, match="contracted"):
        parse("A @ A", [A])


def test_parse_rejects_non_strings():
    with pytest.raises(TypeError):
        parse(b"x")


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="xy0123456789.+-*/%()<>=!, eamnot", max_size=30))
def test_garbage_never_crashes(text):
    try:
        parse(text)
    except ParseError as err:
        assert 0 <= err.pos <= len(text)


def test_dformat_shows_shared_nodes_once():
    shared = eg.sin(x * y)
    listing = eg.dformat(shared * shared + shared)
    lines = listing.splitlines()
    assert lines[0] == "add float64"
    assert sum("sin float64 [id A]" in line for line in lines) == 1
    assert sum("[id A] ···" in line for line in lines) == 2
    assert sum(" mul float64" in line for line in lines) == 2  # the outer product and x*y, once each


def test_dprint_writes_the_listing(capsys):
    eg.dprint([x + 1, x * 2])
    out = capsys.readouterr().out
    assert out.splitlines()[0] == "add float64" and "mul float64" in out


def test_to_dot_lists_each_node_once():
    t = eg.sin(x) * eg.sin(x)
    dot = eg.to_dot(t)
    assert dot.startswith('digraph "expr" {') and dot.rstrip().endswith("}")
    assert dot.count('label="sin float64"') == 1
    assert dot.count("->") == 3


def test_printing_a_huge_shared_dag_raises_instead_of_hanging():
    t = x
    for _ in range(100):
        t = t * t  # 2**100 tree nodes, 101 DAG nodes
    with pytest.raises(eg.TermTooLargeError):
        str(t)
    assert len(eg.dformat(t).splitlines()) == 201
