"""The parser's quick tokenizer agrees with tokenize_expression, and parse errors keep their positions.

The parser splits a text with str methods (a space around each operator) and carries token
indices; the shared tokenizer (core/tokens.py, in the dimension language), with character
positions, is the reference, and is what the quick one falls back to on anything unusual
(``2x``, ``**``, a stray character).
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from exprgraph.core.tokens import tokenize
from exprgraph.dims import parse_expression
from exprgraph.dims.grammar import LEXICON
from exprgraph.dims.parse import NotATokenError, clear_parse_cache, split_tokens, token_kind, tokenize_expression
from exprgraph.errors import DimExpressionError

_pieces = st.sampled_from(
    [
        *["a", "s0", "_x9", "FloorDiv", "0", "17", "٣", "2x", "+", "-", "*", "/", "//", "**", "%", "^", "&"],
        *["(", ")", ",", " ", "  ", "\t", "\n", "$", "é", "\x00", "\u00a0"],
    ]
)
texts = st.lists(_pieces, max_size=12).map("".join)


def _reference(text: str) -> list[tuple[str, str]] | str:
    try:
        return [(kind, value) for kind, value, _ in tokenize_expression(text)]
    except DimExpressionError as err:
        return str(err)


@settings(max_examples=400, deadline=None)
@given(texts)
def test_quick_tokens_are_the_pattern_tokens(text: str) -> None:
    """Where every piece of the quick split is a token, they are the shared tokenizer's tokens, in order."""
    want = _reference(text)
    values = split_tokens(text)
    if values is None:
        assert "**" in text or "\x00" in text
        return
    try:
        kinds = [token_kind(v) for v in values]
    except NotATokenError:
        return  # the parser reads the shared tokenizer's tokens instead
    assert list(zip(kinds, values, strict=True)) == want


@pytest.mark.parametrize(
    ("text", "position"),
    [
        ("a + ", 4),
        ("(a + b", 0),
        ("FloorDiv(a, b", 8),
        ("a // // b", 5),
        ("f()", 2),
        ("a ** 2", 2),
        ("a +  $", 5),
        ("x, y", 1),
        ("a) + b", 1),
        ("floor(a/b) + a/b", 14),
        ("  Max(a, b) + Max()", 18),
    ],
)
def test_error_positions(text: str, position: int) -> None:
    """Errors found by the parser (not the tokenizer) point at their token in the text."""
    clear_parse_cache()
    with pytest.raises(DimExpressionError) as info:
        parse_expression(text)
    assert info.value.pos == position


def test_quick_path_and_words_survive_clearing() -> None:
    """Clearing the parse cache forgets the words read, never the operators."""
    parse_expression("batch*seq + 7")
    clear_parse_cache()
    values = split_tokens("batch // 2 + (seq - 7)")
    assert values == ["batch", "//", "2", "+", "(", "seq", "-", "7", ")", ""]
    assert [token_kind(v) for v in values[:4]] == ["name", "op", "num", "op"]


@settings(max_examples=200, deadline=None)
@given(texts)
def test_tokens_are_the_shared_tokenizers(text: str) -> None:
    """tokenize_expression is the shared tokenizer in the dimension language (``**`` refused by name)."""
    try:
        got = tokenize_expression(text)
    except DimExpressionError as err:
        if "**" in text[: err.pos + 2]:
            assert "'**'" in str(err)
        else:
            with pytest.raises(DimExpressionError) as shared:
                tokenize(text, LEXICON)
            assert shared.value.pos == err.pos and str(shared.value) == str(err)
        return
    assert got == tokenize(text, LEXICON)
