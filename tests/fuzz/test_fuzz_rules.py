"""Fuzzing the rule language: text is a rule (that fires without a raw error) or a RuleSyntaxError."""

from __future__ import annotations

from fuzz_support import EXPR_TOKENS, FUZZ, RULES, inputs, mutated
from hypothesis import given
from hypothesis import strategies as st

from exprgraph.core import Symbol, add, const, mul, symbols, transpose
from exprgraph.errors import DTypeError, RuleSyntaxError, ShapeError
from exprgraph.rules import RuleSet, rule

RULE_TOKENS = [*EXPR_TOKENS, "->", "->", "<->", "where", "*r", "*x", "#", ":", "name:", "is_const", "is_int", "_"]
x, y, z = symbols("x y z")
TERMS = [x * 1, x + 0, add(x, y, const(0)), mul(x, y, z), x - x, -x, transpose(Symbol("A", shape=(2, 3))), x**2, x / y]


def _fire(rules: list) -> None:
    for r in rules:
        for t in TERMS:
            try:
                r(t)
            except (ShapeError, DTypeError):
                pass  # the right side does not fit this match's shapes


@FUZZ
@given(st.one_of(mutated(RULES, RULE_TOKENS), mutated(RULES, RULE_TOKENS), inputs(RULE_TOKENS)))
def test_rule_raises_only_rule_syntax_errors(text: str) -> None:
    try:
        made = rule(text)
    except RuleSyntaxError as exc:
        assert 0 <= exc.pos <= len(text)
        return
    _fire(list(made) if isinstance(made, tuple) else [made])


@FUZZ
@given(st.lists(mutated(RULES, RULE_TOKENS), max_size=4).map("\n".join))
def test_rule_files_raise_only_rule_syntax_errors(text: str) -> None:
    try:
        rules = RuleSet.parse(text)
    except RuleSyntaxError as exc:
        assert 0 <= exc.pos <= len(text)
        return
    _fire(list(rules))
