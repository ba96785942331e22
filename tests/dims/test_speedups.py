"""The shortcuts of the fast path for text give what the longer way gives.

- a flat sum read by its one scan gives what the general path gives, the same OverflowError too;
- whether a text makes atoms is decided on the text, not on its tokens;
- the fast reader reads the parser's tokens (one tokenizer for both readers): where it answers,
  its answer is the parser's, and text the parser rejects sends it the general way.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from exprgraph.dims import clear_caches, parse_expression, simplify_expression, simplify_term, unparse
from exprgraph.dims.context import context
from exprgraph.dims.parse import split_tokens
from exprgraph.dims.polyparse import _ATOM_TOKENS, _is_light, read_polynomial
from exprgraph.dims.polyprint import poly_value
from exprgraph.errors import DimExpressionError

_names = st.sampled_from(["a", "b", "seq", "s0", "_x"])
_ints = st.one_of(st.integers(0, 20), st.sampled_from([2**62, 2**63 - 1, 2**63]))
_factor = st.one_of(_names, _names, _ints.map(str))
_term = st.tuples(
    st.sampled_from(["", "-", "+", "- -", "-+"]),
    st.lists(_factor, min_size=1, max_size=4).map("*".join),
).map("".join)
flat_texts = st.tuples(_term, st.lists(st.tuples(st.sampled_from([" + ", "-", " - ", "+"]), _term), max_size=6)).map(
    lambda t: t[0] + "".join(op + term for op, term in t[1])
)


def _printed(text: str):
    """``poly_value(read_polynomial(text))`` (what simplify_expression gives), or None for the general path."""
    p = read_polynomial(text, context(False))
    if p is None:
        return None
    try:
        return poly_value(p)
    except OverflowError:
        return None  # the general path reports the overflow


def _general(text: str):
    try:
        top = simplify_term(parse_expression(text))
    except DimExpressionError:
        return text
    except OverflowError as err:
        return type(err)
    return int(top.attr) if top.op.name == "const" else unparse(top)


@settings(max_examples=200, deadline=None)
@given(flat_texts)
def test_flat_sums_give_what_the_general_path_gives(text):
    clear_caches()
    try:
        got = simplify_expression(text)
    except OverflowError as err:
        got = type(err)
    clear_caches()
    assert got == _general(text), text


def test_flat_sum_examples():
    clear_caches()
    assert simplify_expression("s0*b*a + 2*a*b*s0 - a*a*b + a*b*a") == "3*a*b*s0"
    assert simplify_expression("b*b - -a + 3 - 3") == "a+b*b"
    assert simplify_expression("-1*seq*seq + -2*a - 5") == "-2*a-seq*seq-5"
    assert simplify_expression("a - a + 7") == 7
    assert simplify_expression("2*a - a*2") == 0
    with pytest.raises(OverflowError):
        simplify_expression("9223372036854775807*a + 9223372036854775807*a")  # as the general path


_pieces = st.sampled_from(["a", "2", "/", "//", "///", "%", "^", "&", ",", "+", " ", "(", ")", "*", "٣", "é"])


@settings(max_examples=400, deadline=None)
@given(st.lists(_pieces, max_size=12).map("".join))
def test_atom_texts_are_told_from_the_text_as_from_the_tokens(text):
    tokens = split_tokens(text)
    if tokens is not None:
        assert _is_light(text) == _ATOM_TOKENS.isdisjoint(tokens)


_soup = st.sampled_from(["a", "b1", "_", "2", "09", "x_2", "/", "//", " ", "+", "-", "*", "(", ")", "٣", "é", "\t"])


@settings(max_examples=400, deadline=None)
@given(st.lists(_soup, max_size=12).map("".join))
def test_the_fast_reader_answers_as_the_parser(text):
    clear_caches()
    got = _printed(text)
    clear_caches()
    if got is not None:
        assert got == _general(text), text


@pytest.mark.parametrize(
    "text",
    [
        "2a",
        "2a + b",
        "a*2b",
        "1_000",
        "1_000 + a",
        "12ab//2",
        "٣ + a",
        "a + ٣",
        "-٣",
        "0x10",
        "1e3",
        "a_1 + 2",
        "_ + 1",
    ],
)
def test_tokens_that_run_together(text):
    clear_caches()
    got = simplify_expression(text)
    clear_caches()
    assert got == _general(text)
