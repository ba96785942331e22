"""Fuzzing the dimension-expression parser: it parses, simplifies and prints, or raises a project error;
over the size limit (deep nesting, long texts, long tokens), SizeLimitError exactly past the limit."""

from __future__ import annotations

import pytest
from fuzz_support import (
    DIM_EXPRESSIONS,
    FUZZ,
    FUZZ_MAX_TEXT,
    fuzz_inputs,
    mutated,
    oversized,
    parsed_or_none,
    read_within_limit,
)
from hypothesis import given

from exprgraph.core.tokens import ENV_MAX_TEXT
from exprgraph.dims import parse_expression, simplify_expression, unparse
from exprgraph.errors import DimExpressionError, ExprgraphError

DIM_TOKENS = [
    *"sxyz",
    "s0",
    "batch",
    "seq",
    "0",
    "1",
    "2",
    "8",
    "-1",
    "9223372036854775807",
    "99999999999999999999",
    *"+-*/%^&(),",
    "//",
    "**",
    "CeilToInt",
    "FloorDiv",
    "ModularIndexing",
    "Max",
    "Min",
    "f",
    "g",
]


def _known_overflow(exc: BaseException) -> bool:
    # dims' own constants past int64 raise DimConstantOverflowError, a project error (see
    # test_constant_overflow_is_a_project_error); the core's const() still raises a raw OverflowError: tolerated
    return isinstance(exc, OverflowError) and "does not fit in int64" in str(exc)


@FUZZ
@given(fuzz_inputs(DIM_EXPRESSIONS, DIM_TOKENS))
def test_dims_parse_raises_only_dim_expression_errors(text: str) -> None:
    term = parsed_or_none(parse_expression, text, DimExpressionError)
    if term is None:
        return
    try:
        simplified = simplify_expression(text)
        unparse(term)
    except ExprgraphError:
        return  # a project error with a message (a limit, say) is fine; anything else is a bug
    except OverflowError as exc:
        if _known_overflow(exc):
            return
        raise
    assert isinstance(simplified, (int, str))


@FUZZ
@given(text=oversized(mutated(DIM_EXPRESSIONS, DIM_TOKENS)))
def test_dims_oversized_text_raises_only_named_errors(text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_MAX_TEXT, str(FUZZ_MAX_TEXT))
    term = read_within_limit(parse_expression, text, DimExpressionError)
    # the quick reader of simplify_expression splits the text on its own: the same limit holds
    try:
        simplified = read_within_limit(simplify_expression, text, DimExpressionError)
    except OverflowError as exc:  # a constant past int64: DimConstantOverflowError, or the core's const()
        if isinstance(exc, ExprgraphError) or _known_overflow(exc):
            return
        raise
    if term is not None:  # what parses simplifies
        assert isinstance(simplified, (int, str))


@pytest.mark.parametrize("text", ["(1 + 9223372036854775807)", "9223372036854775807*2", "-9223372036854775807 - 2"])
def test_constant_overflow_is_a_project_error(text: str) -> None:
    # was a raw OverflowError; now DimConstantOverflowError, a project error and still an OverflowError
    with pytest.raises(ExprgraphError, match="does not fit in int64") as info:
        simplify_expression(text)
    assert isinstance(info.value, OverflowError)
