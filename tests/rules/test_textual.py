"""Textual rules: parsing, conditions, names, segments, and errors in rule files (one-rule errors:
tests/test_parse_errors.py)."""

from __future__ import annotations

import pytest

from exprgraph import Symbol, add, const, mul, parse, symbols
from exprgraph.errors import RuleSyntaxError
from exprgraph.rules import RuleSet, parse_condition, rewrite, rule

x, y = symbols("x y")


def test_simple_rules():
    r = rule("x*1 -> x")
    assert r(parse("a*1")) is Symbol("a")
    assert r(parse("1.0*a")) is Symbol("a")  # commutative, constants by value
    assert r(parse("a*2")) is parse("a*2")
    assert r.name == "x*1 -> x"


def test_variables_are_the_names_on_the_left():
    r = rule("f + g -> g + f")
    assert r(x + y) is y + x
    with pytest.raises(RuleSyntaxError, match="'z' on the right-hand side") as info:
        rule("x + 0 -> z")
    assert info.value.pos == 9


def test_rhs_literal_takes_the_dtype_of_the_matched_term():
    zero = rule("x*0 -> 0")
    assert zero(x * 0).value == 0.0 and zero(x * 0).dtype == "float64"
    n = Symbol("n", "int64")
    assert zero(n * 0).dtype == "int64"
    half = rule("x - x -> 0.5")
    assert half(n - n).value == 0.5  # would lose information as an int: stays a float


def test_wildcard_and_segments():
    r = rule("_ * 0 -> 0")
    assert r(x * 0).value == 0.0
    drop = rule("add(x, 0, y, *rest) -> add(x, y, *rest)")
    assert drop(add(x, const(0), y, y)) is add(x, y, y)
    with pytest.raises(RuleSyntaxError, match="whole argument"):
        rule("x + *rest -> x")
    with pytest.raises(RuleSyntaxError, match="'_'"):
        rule("x * _ -> _")


def test_attrs_and_functions():
    m = Symbol("m", shape=(2, 3))
    r = rule("sum(sum(a, axis=0), axis=0) -> sum(a, axis=None)")
    assert r(parse("sum(sum(m, axis=0), axis=0)", [m])) is parse("sum(m)", [m])
    assert rule("exp(log(x)) -> x")(parse("exp(log(q))")) is Symbol("q")


def test_where_conditions_are_conservative():
    r = rule("(x*y)/y -> x", where="y != 0")
    assert r(parse("(a*2)/2")) is Symbol("a")
    assert r(parse("(a*b)/b")) is parse("(a*b)/b")  # b might be 0
    assert r(parse("(a*0)/0")) is parse("(a*0)/0")
    inline = rule("x / x -> 1 where x != 0")
    assert inline(parse("3/3")).value == 1.0
    assert inline(parse("q/q")) is parse("q/q")


def test_where_backtracks_over_commutative_orders():
    r = rule("x * y -> y", where="is_const(x)")
    assert r(parse("2*a")) is Symbol("a")
    assert r(parse("a*2")) is Symbol("a")  # the order with x = 2 is found


def test_condition_language():
    b = {"x": const(2), "y": const(0), "s": x, "t": y}
    assert parse_condition("x > y")(b)
    assert parse_condition("x + 1 == 3")(b)
    assert parse_condition("x**2 >= 4 and not y")(b)
    assert not parse_condition("s != 0")(b)  # unknown: a symbol
    assert parse_condition("s == s")(b)
    assert not parse_condition("s == t")(b)
    assert parse_condition("s != 0 or x > 1")(b)  # unknown or true is true
    assert parse_condition("is_symbol(s) and is_const(x) and is_float(s) and is_scalar(s)")(b)
    assert parse_condition("is_int(n)")({"n": Symbol("n", "int64")})
    assert parse_condition("even(x)", functions={"even": lambda v: v.value % 2 == 0})(b)
    with pytest.raises(RuleSyntaxError, match="unknown function"):
        parse_condition("odd(x)")


def test_where_callable():
    r = rule("x + y -> y", where=lambda x, y: x is Symbol("a"))
    assert r(parse("a + b")) is Symbol("b")
    assert r(parse("b + a")) is Symbol("b")


def test_ruleset_parse_with_comments_and_names():
    rs = RuleSet.parse(
        """
        # identities
        add_zero: x + 0 -> x   # x + 0 = x

        mul_one:  x * 1 -> x
        x - x -> 0
        """,
        name="tiny",
    )
    assert len(rs) == 3
    assert [r.name for r in rs] == ["add_zero", "mul_one", "x - x -> 0"]
    assert [r.doc for r in rs] == ["x + 0 = x", "", ""]  # a comment after a rule is its doc
    assert rs["mul_one"](x * 1) is x
    assert rewrite(parse("(a*1 + 0) - (a + 0)"), rs).value == 0.0
    assert repr(rs) == "<RuleSet 'tiny' of 3 rules>"


def test_errors_in_a_rule_file_point_into_the_file():
    text = "x + 0 -> x\n# fine\nx * 1 -> y\n"
    with pytest.raises(RuleSyntaxError) as info:
        RuleSet.parse(text)
    err = info.value
    assert err.lineno == 3 and err.pos == text.index("y\n")
    assert err.text == "x * 1 -> y"
    assert str(err).splitlines()[-1] == " " * 9 + "^"


def test_separate_where_errors_point_into_the_condition():
    with pytest.raises(RuleSyntaxError) as info:
        rule("x / y -> x", where="y != ")
    assert info.value.pos == 5


def test_rules_never_evaluate_python():
    with pytest.raises(RuleSyntaxError):
        rule("__import__('os') -> x")
    with pytest.raises(RuleSyntaxError):
        rule("x -> x where __import__('os')")


def test_pathological_inputs_do_not_crash():
    deep = "(" * 5000 + "x" + ")" * 5000
    r = rule(f"{deep} * 1 -> x")
    assert r(x * 1) is x
    with pytest.raises(RuleSyntaxError):
        rule("(" * 5000 + " -> x")
    with pytest.raises(TypeError):
        rule(3)  # type: ignore[arg-type]
    assert rule("x -> x")(mul(x, y)) is mul(x, y)


def test_the_arrow_is_a_token_of_rule_text():
    from exprgraph.core.tokens import tokenize as scan_text
    from exprgraph.rules.rule_parser import RULE

    assert [t for _, t, _ in scan_text("x-->y", RULE)] == ["x", "-", "->", "y", ""]
    assert str(rule("x<-y -> y").pattern) == "lt(V.x, neg(V.y))"  # "<-" is no token: a comparison with -y
    with pytest.raises(RuleSyntaxError) as exc:
        rule("sin(x -> y) -> x")  # an arrow inside brackets is reported where it stands
    assert (exc.value.msg, exc.value.pos) == ("expected an operator, got '->'", 6)
    with pytest.raises(RuleSyntaxError) as exc:
        rule("x - > y")  # a minus sign and a greater-than apart are no arrow
    assert exc.value.msg == "expected '->' between the two sides of the rule"
