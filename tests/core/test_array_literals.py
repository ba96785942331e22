"""Array literals are read token by token (the malformed ones, found by fuzzing:
tests/test_parse_errors.py)."""

from __future__ import annotations

import numpy as np
import pytest

from exprgraph.core import const, parse


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
