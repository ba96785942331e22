"""Fuzzing the infix parser: text either parses (and prints back to the same term) or raises ParseError;
over the size limit (deep nesting, long texts, long tokens), SizeLimitError exactly past the limit."""

from __future__ import annotations

import pytest
from fuzz_support import (
    EXPR_TOKENS,
    EXPRESSIONS,
    FUZZ,
    FUZZ_MAX_TEXT,
    inputs,
    mutated,
    oversized,
    read_within_limit,
)
from hypothesis import given
from hypothesis import strategies as st

from exprgraph.core import parse
from exprgraph.core.tokens import ENV_MAX_TEXT
from exprgraph.errors import ParseError


@FUZZ
@given(st.one_of(mutated(EXPRESSIONS, EXPR_TOKENS), inputs(EXPR_TOKENS)))
def test_parse_raises_only_parse_errors(text: str) -> None:
    try:
        term = parse(text)
    except ParseError as exc:
        assert 0 <= exc.pos <= len(text)
        assert str(exc).splitlines()[-1].endswith("^")
        return
    assert parse(str(term)) is term


@FUZZ
@given(mutated(EXPRESSIONS, EXPR_TOKENS))
def test_strict_and_int_parsing_raise_only_parse_errors(text: str) -> None:
    for kwargs in ({"strict": True}, {"dtype": "int64"}, {"dtype": "bool"}):
        try:
            term = parse(text, **kwargs)
        except ParseError:
            continue
        assert parse(str(term), dtype=kwargs.get("dtype", "float64")) is term


@FUZZ
@given(text=oversized(mutated(EXPRESSIONS, EXPR_TOKENS)))
def test_parse_of_oversized_text_raises_only_named_errors(text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_MAX_TEXT, str(FUZZ_MAX_TEXT))
    term = read_within_limit(parse, text, ParseError)
    if term is not None:
        assert parse(str(term)) is term
