"""Any ``NAME(args)`` parses: known functions get their real meaning, others are opaque and print back as read."""

from __future__ import annotations

import itertools

import pytest

from exprgraph import get_op
from exprgraph.dims import (
    FN,
    DimEnv,
    dim_fn,
    dim_name,
    evaluate_expression,
    parse_expression,
    parse_expression_tokens,
    rename_dynamic_expression,
    rename_expression,
    simplify_expression,
    unparse,
)
from exprgraph.errors import EvaluationError

# -- opaque functions ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    ["foo(x)", "f(a,b+1)", "Opaque(s0*2,s1//3,1)", "g(h(x),2)+1", "2*f(x)", "-f(x)", "f(x)^g(y)", "f(x)//2"],
)
def test_opaque_calls_print_back_as_read(text):
    t = parse_expression(text)
    assert unparse(t) == text
    assert parse_expression(unparse(t)) is t


def test_opaque_call_is_a_term_with_its_name():
    t = parse_expression("foo(a, 2)")
    assert t.op is FN and t.attr == "foo"
    assert t is dim_fn("foo", dim_name("a"), parse_expression("2"))
    assert t.dtype == "int64" and t.shape == ()
    assert parse_expression("foo(a)") is not parse_expression("bar(a)")


def test_issue_examples_parse_rename_and_list_names():
    # the reference emits these; before, they did not parse
    assert sorted(parse_expression_tokens("Mod(s0, 2) + s1")) == ["s0", "s1"]
    assert sorted(parse_expression_tokens("FloorDiv(s0, 2) + 1")) == ["s0"]
    assert sorted(parse_expression_tokens("broadcast(s0, s1)")) == ["s0", "s1"]
    assert sorted(parse_expression_tokens("unknown(s3, g(s4)) * s5")) == ["s3", "s4", "s5"]
    assert rename_expression("Mod(s0, 2) + s1", {"s0": "batch"}) == "batch%2+s1"
    assert rename_expression("FloorDiv(s0, 2) + 1", {"s0": "seq"}) == "seq//2+1"
    assert rename_expression("broadcast(s0, s1)", {"s0": "a", "s1": "b"}) == "broadcast(a,b)"
    assert rename_expression("unknown(s3, g(s4))*s5", {"s3": "x", "s4": "y"}) == "unknown(x,g(y))*s5"
    assert rename_dynamic_expression("f(s1+0)*1", {"s1": "n"}) == "f(n)"


def test_opaque_calls_simplify_inside_and_compare_by_arguments():
    assert simplify_expression("f(b+a+1, 2*3) - f(1+a+b, 6)") == 0
    assert simplify_expression("f(x - x + y)*2 + f(y)") == "3*f(y)"
    assert simplify_expression("f(x) - g(x)") == "f(x)-g(x)"
    assert simplify_expression("f(x)//1") == "f(x)"


def test_opaque_calls_evaluate_with_a_callable():
    assert evaluate_expression("f(a, 2) + 1", {"a": 3, "f": lambda x, y: x * y}) == 7
    with pytest.raises(EvaluationError, match="opaque"):
        evaluate_expression("f(a)", {"a": 1})
    with pytest.raises(EvaluationError, match="must be an integer"):
        evaluate_expression("f(a)", {"a": 1, "f": lambda x: 0.5})


# -- known functions: their meaning, checked on every value of a small box ---------------------------------


def _floordiv(a, b):
    return a // b


def _ceil(a, b):
    return -((-a) // b)


# name -> (argument count, Python meaning, values each argument takes)
KNOWN = {
    "FloorDiv": (2, _floordiv, None),
    "CleanDiv": (2, _floordiv, None),
    "CeilDiv": (2, _ceil, None),
    "CeilToInt": (2, _ceil, None),
    "PythonMod": (2, lambda a, b: a % b, None),
    "Mod": (2, lambda a, b: a % b, None),
    "ModularIndexing": (3, lambda x, d, m: (x // d) % m, None),
    "Max": (3, max, None),
    "Min": (3, min, None),
    "abs": (1, abs, None),
}
VALUES = range(-7, 8)


@pytest.mark.parametrize("name", sorted(KNOWN))
def test_known_functions_mean_what_their_libraries_say(name):
    n, meaning, _ = KNOWN[name]
    names = ["a", "b", "c"][:n]
    text = f"{name}({', '.join(names)})"
    term = parse_expression(text)
    assert term.op is not FN  # mapped to a real op
    # simplified for names >= 0 (the default), and for names that may be negative too
    simplified = simplify_expression(text)
    signed = DimEnv({x: (VALUES[0], VALUES[-1]) for x in names}).simplify(text)
    for values in itertools.product(VALUES, repeat=n):
        env = dict(zip(names, values, strict=True))
        try:
            want = meaning(*values)
        except ZeroDivisionError:
            continue
        assert evaluate_expression(term, env) == want, (text, env)
        assert evaluate_expression(signed, env) == want, (text, signed, env)
        if min(values) >= 0:
            assert evaluate_expression(simplified, env) == want, (text, simplified, env)


def test_sympy_rounding_of_a_ratio():
    for text, meaning in [
        ("floor(a/b)", _floordiv),
        ("ceiling(a/b)", _ceil),
        ("FloorToInt(a/b)", _floordiv),
        ("CeilToInt(a/b)", _ceil),
        ("floor((a+1)/(2*b))", lambda a, b: (a + 1) // (2 * b)),
    ]:
        term = parse_expression(text)
        for a, b in itertools.product(VALUES, VALUES):
            if b == 0:
                continue
            assert evaluate_expression(term, {"a": a, "b": b}) == meaning(a, b), (text, a, b)
    # the rounding of an integer is the integer
    assert parse_expression("floor(x)") is dim_name("x")
    assert parse_expression("CeilToInt(x + 1)") is parse_expression("x+1")
    assert simplify_expression("floor(a/b) + ceiling((a+1)/(2*b))") == "a//(2*b)+a//b+1"


def test_broadcast_meaning_and_rules():
    term = parse_expression("broadcast(a, b)")
    assert term.op is get_op("broadcast_dim")
    for a, b in itertools.product(range(0, 5), repeat=2):
        if a == b or a == 1 or b == 1:
            want = b if a == 1 else a
            assert evaluate_expression(term, {"a": a, "b": b}) == want
        else:
            with pytest.raises(EvaluationError, match="do not broadcast"):
                evaluate_expression(term, {"a": a, "b": b})
    assert simplify_expression("broadcast(s0, 1)") == "s0"
    assert simplify_expression("broadcast(1, s0)") == "s0"
    assert simplify_expression("broadcast(s0, s0)") == "s0"
    assert simplify_expression("broadcast(s0 + 2, s1)") == "s0+2"  # s0+2 is never 1, so s1 is s0+2 or 1
    assert simplify_expression("broadcast(s1, s0)") == simplify_expression("broadcast(s0, s1)") == "broadcast(s0,s1)"
    assert simplify_expression("broadcast(4, 1)") == 4
