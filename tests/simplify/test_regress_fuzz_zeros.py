"""Regressions of the simplify fuzzer (issue 30, "0 value changes"): the sign of a zero where float64 gives -0.0.

The findings (tests/fuzz/test_fuzz_simplify_values.py): exact folds gave +0.0 where float64 gives -0.0
(``ceil(rational(-1, 2))``, ``0*rational(-1, 2)``, ``1 mod rational(-1, 2)``, ``sqrt(2)*0*(-1)``); an int
coefficient 0 times -1 of a float product was the int 0 (``0*y*(-1) -> 0*y``); floor and ceil counted as
signless (``floor(-0.0)`` is -0.0), so ``x/floor(2.0 + y - 2.0)`` became ``x/floor(y)``; and for a nonnegative
``q`` (which may be -0.0), ``max(q, 0.0) -> q`` and ``sqrt(q)*sqrt(q) -> q`` lost the input's +0.0 under a
division. Each showed as an infinity of the other sign where a division reads the zero.
"""

from __future__ import annotations

import numpy as np
import pytest
from grid_values import same_float

from exprgraph import Symbol, evaluate, parse, simplify, symbols
from exprgraph.core.exact_fold import fold_exact
from exprgraph.simplify.signed_zero import may_lose_its_zero, never_minus_zero

X, Y = symbols("x y")
Q = Symbol("q", nonnegative=True)

#: exact constant terms that fold, some to -0.0 as float64 computes them, some to +0.0
FOLDS = ["ceil(rational(-1, 2))", "trunc(rational(-1, 3))", "0*rational(-1, 2)", "0/(-3)", "0/rational(-1, 2)"]
FOLDS += ["0//rational(-1, 2)", "0 % rational(-1, 2)", "1 % rational(-1, 2)", "rational(3, 2) % rational(-1, 2)"]
FOLDS += ["rational(-1, 2)//(-3)", "mul(0, rational(-1, 2), rational(-1, 3))", "floor(rational(1, 2))"]
FOLDS += ["rational(-1, 2) % rational(1, 2)", "ceil(rational(1, 3))"]


def _value(t: object, env: dict | None = None) -> float:
    with np.errstate(all="ignore"):
        return float(evaluate(t, env or {}))


@pytest.mark.parametrize("text", FOLDS)
def test_exact_folds_give_the_zero_float64_gives(text: str) -> None:
    """An exact fold of constants is the float64 value bit for bit, a zero's sign included."""
    t = parse(text)
    folded = fold_exact(t)
    assert folded is not None
    assert same_float(_value(folded), _value(t)), (text, str(folded))


#: forms whose zero a division reads: constants' products and quotients, floor and ceil of a kept sum
SIGNED = ["x/(0*y*(-1))", "x/(0*pi*(-1))", "x/(-(0*pi))", "x/(sqrt(2)*0*(-1))", "x/(pi*0*(-2))"]
SIGNED += ["x/ceil(2.0 + y - 2.0)", "x/floor(2.0 + y - 2.0)", "x/ceil(rational(-1, 2))", "x/(y*0 % rational(-1, 2))"]
SIGNED += [f"x/({f})" for f in FOLDS]


@pytest.mark.parametrize("text", SIGNED)
def test_simplify_keeps_the_sign_a_division_reads(text: str) -> None:
    """Safe simplify keeps a zero's sign under a division: the same infinity at both zeros."""
    t = parse(text)
    s = simplify(t)
    for x in (1.0, -1.0):
        for y in (-0.0, 0.0, 2.0, -3.0):
            env = {X: x, Y: y}
            assert same_float(_value(t, env), _value(s, env)), (text, str(s), x, y)
    assert simplify(s) is s


#: forms of a nonnegative q, +0.0 where q is -0.0 (their simplified forms q are -0.0 there)
NONNEGATIVE = ["x/maximum(q, 0.0)", "x/maximum(q, -q)", "x/(sqrt(q)*sqrt(q))", "x/(2*sqrt(q)*sqrt(q))"]


@pytest.mark.parametrize("text", NONNEGATIVE)
def test_a_nonnegative_symbol_may_be_minus_zero(text: str) -> None:
    """``q >= 0`` holds at q = -0.0: an extremum or a square of roots that is +0.0 there stays so under a division."""
    t = parse(text, {"x": X, "q": Q})
    for method in ("auto", "rules", "egraph"):
        s = simplify(t, method=method)
        for q in (-0.0, 0.0, 4.0):
            env = {X: 1.0, Q: q}
            assert same_float(_value(t, env), _value(s, env)), (text, method, str(s), q)


def test_the_sign_tables() -> None:
    """The logs are never -0.0 (log(1.0) is +0.0); floor and ceil pass a zero's sign on; repeats may lose it."""
    assert never_minus_zero(parse("log(y)")) and never_minus_zero(parse("log2(y) - 0.0"))
    assert never_minus_zero(parse("log10(y)"))
    assert not never_minus_zero(parse("floor(y)")) and not never_minus_zero(parse("ceil(y)"))
    assert may_lose_its_zero(parse("sqrt(y)*sqrt(y)")) and may_lose_its_zero(parse("maximum(y, 0.0)"))
    assert may_lose_its_zero(parse("log(exp(y))")) and not may_lose_its_zero(parse("sqrt(y)*y"))
    # log(y) is never -0.0: the +0.0 that kept a zero's sign is not needed under a division
    assert simplify(X / (parse("log(y)") + 0.0)) is X / parse("log(y)")
