"""Rule text is checked completely when the rule is made: splices, arities and shapes, with a position."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from exprgraph.core import Symbol, add, const, mul, symbols
from exprgraph.errors import DTypeError, RuleSyntaxError, ShapeError
from exprgraph.rules import RuleSet, rule

x, y, z = symbols("x y z")


def refused(text: str, fragment: str) -> RuleSyntaxError:
    """The error of ``rule(text)``, whose caret must point at ``fragment`` (its last occurrence)."""
    with pytest.raises(RuleSyntaxError) as info:
        rule(text)
    err = info.value
    assert err.pos == text.rindex(fragment), (err.pos, str(err))
    assert str(err).splitlines()[-1] == " " * err.pos + "^"
    return err


def test_splicing_a_single_term_is_refused() -> None:
    # the finding: accepted, then a raw TypeError every time it fired
    err = refused("x -> sqrt(*x)", "*x")
    assert "matches one term" in str(err)
    refused("x + y -> add(*x, y)", "*x")


def test_a_run_must_be_spliced() -> None:
    err = refused("add(x, *r) -> mul(x, r)", "r)")
    assert "splice it as *r" in str(err)


@pytest.mark.parametrize(
    ("text", "at"),
    [
        ("add(x, *r) -> sqrt(*r)", "sqrt"),  # *r holds 1 or more
        ("add(x, y, *r) -> add(*r)", "add(*r)"),  # 0 or more: add needs 2
        ("add(x, 0, *rest) -> add(x, *rest)", "add(x, *rest)"),  # add(x) when rest is empty
        ("mul(x, *r) -> sqrt(x, *r)", "sqrt"),
    ],
)
def test_arities_that_may_fail_are_refused(text: str, at: str) -> None:
    err = refused(text, at)
    assert "operand(s)" in str(err)


@pytest.mark.parametrize(
    ("text", "at", "why"),
    [
        ("x -> x @ 2", "@", "at least one dimension"),
        ("x -> transpose(x, axes=(0, 0))", "transpose", "repeated axis"),
        ("sum(x, axis=(1, 1)) -> x", "sum", "repeated axis"),  # a left side that can never match
        ("x -> x + array([1, 2]) @ array([1, 2, 3])", "@", "contracted dimensions differ"),
        ("x -> x + array([1, 2]) * array([1, 2, 3])", "*", "do not broadcast"),
    ],
)
def test_shape_errors_have_a_position(text: str, at: str, why: str) -> None:
    err = refused(text, at)
    assert why in str(err) and "whatever the operands' shapes" in str(err)


def test_predicates_are_called_with_their_arity() -> None:
    refused("x -> 0 where is_const(x, x)", "is_const")
    with pytest.raises(RuleSyntaxError, match="cannot take 2"):
        rule("x -> 0", where="is_int(x, x)")


def test_a_rule_file_reports_the_offset_in_the_file() -> None:
    text = "one: x*1 -> x\n\ntwo: x -> sqrt(*x)\n"
    with pytest.raises(RuleSyntaxError) as info:
        RuleSet.parse(text)
    assert info.value.pos == text.index("*x") and info.value.lineno == 3


@pytest.mark.parametrize(
    "text",
    [
        "x*1 -> x",
        "add(x, *r) -> mul(x, *r)",
        "add(x, y, *r) -> add(y, x, *r)",
        "mul(*r) -> add(*r)",
        "x -> sum(x, axis=5)",  # fine for a term of 6 or more dimensions
        "sum(x, axis=-3) -> x",
        "transpose(transpose(x)) -> x",
        "x @ y -> transpose(transpose(y) @ transpose(x))",
        "x -> x + array([1, 2]) * array([[1], [2], [3]])",
        "(x*y)/y -> x where y != 0",
        "x -> 0 where is_const(x) and x > 1",
    ],
)
def test_valid_rules_are_accepted(text: str) -> None:
    assert rule(text).name


def test_accepted_segment_rules_fire() -> None:
    r = rule("add(x, *r) -> mul(x, *r)")
    assert r(add(x, y, z)) is mul(x, y, z)
    r = rule("add(x, 0, y, *rest) -> add(x, y, *rest)")
    assert r(add(x, const(0), y)) is add(x, y)


# -- a property: an accepted rule never fails with a raw TypeError when it fires -----------------------

CALLS = ["add", "mul", "sqrt", "exp", "maximum", "where", "sum", "transpose", "truediv"]
TERMS = [x + 1, add(x, y, z), mul(x, y), x * 0, Symbol("A", shape=(2, 3)) @ Symbol("B", shape=(3, 2)), -x]


@st.composite
def rule_texts(draw: st.DrawFn) -> str:
    left = draw(st.sampled_from(["add(x, *r)", "mul(x, y, *r)", "x + y", "x", "sqrt(x)", "add(*r)"]))
    fn = draw(st.sampled_from(CALLS))
    args = draw(st.lists(st.sampled_from(["x", "y", "*r", "*x", "r", "1", "array([1, 2])"]), min_size=0, max_size=3))
    return f"{left} -> {fn}({', '.join(args)})"


@settings(max_examples=200, deadline=None)
@given(rule_texts())
def test_accepted_rules_never_fail_with_a_raw_type_error(text: str) -> None:
    try:
        r = rule(text)
    except RuleSyntaxError:
        return
    for t in TERMS:
        try:
            r(t)
        except (ShapeError, DTypeError):
            pass  # the right side does not fit this particular match's shapes
