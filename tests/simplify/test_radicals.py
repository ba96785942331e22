"""Denesting of integer radicals (exprgraph.simplify.radicals): sqrt(a + b*sqrt(c)) -> sqrt(p) + sqrt(q)."""

from __future__ import annotations

import math

import mpmath
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import exprgraph as eg
from exprgraph.simplify import simplify
from exprgraph.simplify.radicals import denest_sqrt

mpmath.mp.dps = 40


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("sqrt(3 + 2*sqrt(2))", "sqrt(2) + 1"),
        ("sqrt(3 - 2*sqrt(2))", "sqrt(2) - 1"),
        ("sqrt(5 + 2*sqrt(6))", "sqrt(2) + sqrt(3)"),
        ("sqrt(4 + 2*sqrt(3))", "sqrt(3) + 1"),
        ("sqrt(2 + sqrt(3))", "sqrt(sqrt(3) + 2)"),  # halves 3/2 and 1/2: not taken
        ("sqrt(1 + sqrt(2))", "sqrt(sqrt(2) + 1)"),  # 1 - 2 < 0: no denesting
    ],
)
def test_denest(text: str, expected: str) -> None:
    assert str(simplify(eg.parse(text))) == expected


def test_declines_symbols_and_floats() -> None:
    x = eg.Symbol("x")
    assert denest_sqrt(eg.sqrt(3 + 2 * eg.sqrt(x))) is None
    assert denest_sqrt(eg.sqrt(eg.const(3.0) + 2 * eg.sqrt(eg.const(2.0)))) is None


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 10**4), st.integers(0, 10**4), st.booleans())
def test_denested_value(p: int, q: int, minus: bool) -> None:
    # sqrt(p + q - 2*sqrt(p*q)) = |sqrt(p) - sqrt(q)|, sqrt(p + q + 2*sqrt(p*q)) = sqrt(p) + sqrt(q)
    p, q = max(p, q), min(p, q)
    if q == 0:
        return
    t = eg.sqrt(eg.const(p + q) + eg.const(-2 if minus else 2) * eg.sqrt(eg.const(p * q)))
    r = denest_sqrt(t)
    exact = mpmath.sqrt(p) - mpmath.sqrt(q) if minus else mpmath.sqrt(p) + mpmath.sqrt(q)
    assert r is not None
    got = float(eg.evaluate(r, {}))
    assert abs(got - float(exact)) <= 4 * math.ulp(float(exact)) + 4 * math.ulp(math.sqrt(p))
