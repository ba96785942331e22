"""Symbol names: every name Symbol() accepts prints so that parse(str(t)) is t; others are refused when made."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from exprgraph.core import Symbol, parse, sin
from exprgraph.core.tokens import check_name
from exprgraph.errors import ParseError


@pytest.mark.parametrize("name", ["é", "x_1", "ünïcödé", "αβ", "λ2", "ﬁ", "Ω_ω", "x١", "名前", "_"])
def test_unicode_names_round_trip(name: str) -> None:
    s = Symbol(name)
    assert parse(str(s)) is s
    e = sin(s) * 2 + s**-1
    assert parse(str(e)) is e


@pytest.mark.parametrize(
    "name",
    [
        "e\u0301",  # e + a combining acute accent: an identifier, but not one token
        "a\u00b7b",  # a middle dot: an identifier character the tokenizer splits at
        "1x",
        "x y",
        "",
        "inf",
        "nan",
        "lambda",
        "and",
        "None",
        "x-y",
        "²",
    ],
)
def test_names_that_would_not_read_back_are_refused(name: str) -> None:
    with pytest.raises(ValueError):
        Symbol(name)


def test_refusal_says_how_to_fix() -> None:
    with pytest.raises(ValueError, match="NFC"):
        Symbol("e\u0301")
    s = Symbol(unicodedata.normalize("NFC", "e\u0301"))
    assert parse(str(s)) is s


def test_unicode_digits_are_not_numbers() -> None:
    # numbers are ASCII: an Arabic-Indic digit is not read as 3, and cannot start a name
    with pytest.raises(ParseError) as info:
        parse("\u0663 + x")
    assert info.value.pos == 0


@settings(max_examples=300, deadline=None)
@given(st.text(min_size=1, max_size=6))
def test_every_accepted_name_round_trips(name: str) -> None:
    try:
        s = Symbol(name)
    except ValueError:
        return
    assert parse(str(s)) is s
    assert parse(str(s + 1)) is s + 1


_NAMEISH = st.one_of(
    st.text(alphabet="abcxyz_019é\u0301·", min_size=0, max_size=8),
    st.sampled_from(["if", "None", "lambda", "x" * 512, "x" * 513, "pi", "e", "_", "a1"]),
)


@settings(max_examples=200, deadline=None)
@given(_NAMEISH)
def test_symbol_takes_exactly_the_names_check_name_takes(name: str) -> None:
    try:
        check_name(name)
    except ValueError:
        with pytest.raises(ValueError):
            Symbol(name)
    else:
        assert Symbol(name).name == name
