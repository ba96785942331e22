"""Fuzzing the rule language: text is a rule (that fires without a raw error) or a RuleSyntaxError;
over the size limit (deep nesting, long texts, long tokens), SizeLimitError exactly past the limit."""

from __future__ import annotations

import pytest
from fuzz_support import (
    EXPR_TOKENS,
    EXPRESSIONS,
    FUZZ,
    FUZZ_MAX_TEXT,
    RULES,
    fuzz_inputs,
    mutated,
    oversized,
    parsed_or_none,
    read_within_limit,
)
from hypothesis import given
from hypothesis import strategies as st

from exprgraph.core import Symbol, add, const, mul, symbols, transpose
from exprgraph.core.tokens import ENV_MAX_TEXT
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
@given(fuzz_inputs(RULES, RULE_TOKENS))
def test_rule_raises_only_rule_syntax_errors(text: str) -> None:
    made = parsed_or_none(rule, text, RuleSyntaxError)
    if made is not None:
        _fire(list(made) if isinstance(made, tuple) else [made])


@FUZZ
@given(st.lists(mutated(RULES, RULE_TOKENS), max_size=4).map("\n".join))
def test_rule_files_raise_only_rule_syntax_errors(text: str) -> None:
    rules = parsed_or_none(RuleSet.parse, text, RuleSyntaxError)
    if rules is not None:
        _fire(list(rules))


@FUZZ
@given(
    text=st.one_of(
        oversized(EXPRESSIONS, "{} -> 0"),  # a deep or long left-hand side
        oversized(mutated(RULES, RULE_TOKENS), joiner="\n"),  # a long rule file
    )
)
def test_oversized_rule_text_raises_only_named_errors(text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_MAX_TEXT, str(FUZZ_MAX_TEXT))
    rules = read_within_limit(RuleSet.parse, text, RuleSyntaxError)
    if rules is not None:
        _fire(list(rules))
