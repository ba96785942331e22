"""The dimension grammar: precedence, calls, round trips, deep input (errors with positions:
tests/test_parse_errors.py)."""

from __future__ import annotations

import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from exprgraph import Symbol, const, get_op
from exprgraph.dims import (
    DimExpressionError,
    dim_name,
    evaluate_expression,
    parse_expression,
    parse_expression_tokens,
    tokenize_expression,
    unparse,
)

a, b, c = (Symbol(n, "int64") for n in "abc")
MAX, MIN, CEIL = get_op("maximum"), get_op("minimum"), get_op("ceil_div")


def test_names_are_int64_symbols():
    t = parse_expression("batch")
    assert t is Symbol("batch", "int64")
    assert t.dtype == "int64"


@pytest.mark.parametrize(
    ("text", "term"),
    [
        ("a+b*c", a + b * c),
        ("a-b-c", (a - b) - c),
        ("a-(b-c)", a - (b - c)),
        ("a*b//c", (a * b) // c),
        ("a*(b//c)", a * (b // c)),
        ("a%b*c", (a % b) * c),
        ("-a//2", (-a) // 2),
        ("-(a//2)", -(a // 2)),
        ("-2*a", const(-2) * a),
        ("+a", a),
        ("a^b&c", MAX(a, MIN(b, c))),  # & binds tighter than ^
        ("a&b^c", MAX(MIN(a, b), c)),
        ("a^b+1", MAX(a, b + 1)),  # + binds tighter than ^
        ("(a^b)+1", MAX(a, b) + 1),
        ("Max(a,b)", MAX(a, b)),
        ("max(a, b, c)", MAX(MAX(a, b), c)),
        ("Min(a)", a),
        ("min(a,b)", MIN(a, b)),
        ("CeilToInt(a, 8)", CEIL(a, 8)),
        ("  a  +  1 ", a + 1),
    ],
)
def test_precedence_and_calls(text, term):
    assert parse_expression(text) is term


def test_int64_limits():
    assert parse_expression("9223372036854775807").value == 2**63 - 1
    assert parse_expression("-9223372036854775808").value == -(2**63)
    with pytest.raises(DimExpressionError):
        parse_expression("9223372036854775808")


def test_non_string_input():
    with pytest.raises(TypeError):
        parse_expression(3)


def test_tokens():
    assert [t[:2] for t in tokenize_expression("a//2^b")] == [
        ("name", "a"),
        ("op", "//"),
        ("num", "2"),
        ("op", "^"),
        ("name", "b"),
        ("end", ""),
    ]
    assert parse_expression_tokens("Max(s1, s2) + CeilToInt(s3, 8)") == {"s1", "s2", "s3"}
    assert parse_expression_tokens("a +") == {"a +"}


@pytest.mark.parametrize(
    ("text", "printed"),
    [
        ("a + b", "a+b"),
        ("(a^b)+1", "(a^b)+1"),
        ("-(a//2)", "-(a//2)"),
        ("-a//2", "-a//2"),
        ("1-a//2", "1-a//2"),
        ("a-(b+c)", "a-(b+c)"),
        ("a*(b*c)", "a*(b*c)"),
        ("a-(-2)", "a-(-2)"),
        ("a*-b", "a*(-b)"),
        ("-(-a)", "-(-a)"),
        ("-(2)", "-(2)"),
        ("(a^b)&c", "(a^b)&c"),
        ("a^(b^c)", "a^(b^c)"),
        ("Max(s10,s3)", "s10^s3"),
        ("CeilToInt(a+1, b*2)", "CeilToInt(a+1,b*2)"),
    ],
)
def test_unparse_uses_only_needed_parentheses(text, printed):
    t = parse_expression(text)
    assert unparse(t) == printed
    assert parse_expression(printed) is t


def test_unparse_variadic_core_terms():
    # terms built by the core may be variadic: they print flat, with the same value
    t = get_op("add")(a, b, c)
    assert unparse(t) == "a+b+c"
    assert unparse(MAX(a, b, c)) == "a^b^c"
    assert unparse(5) == "5"
    with pytest.raises(ValueError):
        unparse(a**2)


# -- round trips on random terms -------------------------------------------------------------------

_leaves = st.one_of(st.sampled_from([a, b, c]), st.integers(-5, 20).map(const))
_BIN = ["add", "sub", "mul", "floordiv", "mod", "maximum", "minimum", "ceil_div"]


def _extend(children):
    binary = st.tuples(st.sampled_from(_BIN), children, children).map(lambda t: get_op(t[0])(t[1], t[2]))
    return st.one_of(binary, children.map(lambda t: -t))


terms = st.recursive(_leaves, _extend, max_leaves=16)


@settings(max_examples=300, deadline=None)
@given(terms)
def test_parse_unparse_round_trip(term):
    assert parse_expression(unparse(term)) is term


@settings(max_examples=100, deadline=None)
@given(st.text(alphabet="ab1+-*/%^&(),CeilToInt ", max_size=20))
def test_random_text_parses_or_raises_our_error(text):
    try:
        t = parse_expression(text)
    except DimExpressionError as err:
        assert 0 <= err.pos <= len(text)
    else:
        assert t.dtype == "int64"


# -- deep and long input -----------------------------------------------------------------------------

N = 100_000


def test_deeply_nested_parentheses():
    assert sys.getrecursionlimit() <= 10_000
    text = "(" * N + "x+1" + ")" * N
    assert parse_expression(text) is dim_name("x") + 1
    text = "-(" * N + "x" + ")" * N
    t = parse_expression(text)
    assert t.depth == N
    assert evaluate_expression(t, {"x": 3}) == 3
    assert parse_expression(unparse(t)) is t


def test_deep_right_nesting():
    text = "".join(f"x{i}-(" for i in range(N)) + "y" + ")" * N
    t = parse_expression(text)
    assert t.depth == N
    assert parse_expression(unparse(t)) is t


def test_long_sum():
    text = "+".join(f"x{i}" for i in range(N))
    t = parse_expression(text)
    assert t.depth == N - 1
    assert unparse(t) == text
    assert evaluate_expression(t, {f"x{i}": 1 for i in range(N)}) == N
