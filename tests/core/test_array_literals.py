"""Array literals are read token by token: malformed ones raise ParseError with a position (found by fuzzing)."""

from __future__ import annotations

import numpy as np
import pytest

from exprgraph.core import const, parse
from exprgraph.errors import ParseError


@pytest.mark.parametrize(
    ("text", "at"),
    [
        ("array([2.5 1.0, -2.0])", "1.0"),  # was a raw ValueError: could not convert '2.51.0'
        ("array(1e-320[1.0, -2.0])", "1e-320"),
        ("array([1.0,, 2.0])", ", 2.0"),
        ("array([1.0, x])", "x"),
        ("array([[1.0], [2.0, 3.0]])", "array"),  # ragged
        ("array([1.0, 2.0)", ")"),
        ("array([1.0", ""),
    ],
)
def test_malformed_array_literals(text: str, at: str) -> None:
    with pytest.raises(ParseError) as info:
        parse(text)
    want = text.rindex(at) if at else len(text)
    assert info.value.pos == want, str(info.value)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("array([[1.0, -2.0], [3.0, 4.0]])", [[1.0, -2.0], [3.0, 4.0]]),
        ("array([1, --2, +3])", [1, 2, 3]),
        ("array([True, False])", [True, False]),
        ("array([-inf, nan, 1e308])", [-np.inf, np.nan, 1e308]),
    ],
)
def test_well_formed_array_literals(text: str, value: list) -> None:
    t = parse(text)
    assert t is const(np.array(value))
    assert parse(str(t)) is t
