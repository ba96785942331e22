"""A sum with a subterm of constants alone keeps its sign of zero where a division reads it.

The finding: ``x/(0.0/0.5 + y)`` became ``x/y``, -inf at y = -0.0 where the input is inf: the sign
analysis saw ``0.0/0.5`` as unknown, where ``0.0 + y`` was already known never to be -0.0.
"""

from __future__ import annotations

import math

import numpy as np
from grid_values import same_float
from hypothesis import given, settings
from hypothesis import strategies as st

from exprgraph import const, evaluate, parse, simplify, symbols
from exprgraph.simplify.signed_zero import never_minus_zero

X, Y = symbols("x y")

#: subterms of constants alone that are +0.0 or -0.0
ZEROS = ["0.0/0.5", "0.0*1.0", "(0.0 + 0.0)", "abs(0.0)*2.0", "0.0/2.0*3.0", "(1.0 - 1.0)", "sqrt(0.0)"]
ZEROS += ["0.5*0.0", "-0.0/2.0", "0.0*-1.0", "0.0", "-0.0", "-(0.0*1.0)"]
#: where the constant meets y, and a division reads the sum
FORMS = ["x/(C + y)", "x/(2.0*(C + y))", "x/((C + y)*3.0)", "1.0/(y + C)", "x/(y - (-C))", "x/(y - C)"]
FORMS += ["x/(y + C*C)", "-(-x)/(2.0*(C + y))"]


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(ZEROS), st.sampled_from(FORMS), st.sampled_from([-0.0, 0.0, 1.0, -2.5]))
def test_constant_subterms_keep_the_sign_of_zero(zero: str, form: str, y: float) -> None:
    t = parse(form.replace("C", zero))
    s = simplify(t)
    for x in (1.0, -1.0):
        a, b = float(evaluate(t, {X: x, Y: y})), float(evaluate(s, {X: x, Y: y}))
        assert same_float(a, b), (str(t), str(s), x, y, a, b)


def test_never_minus_zero_reads_constant_subterms() -> None:
    assert never_minus_zero(parse("0.0/0.5 + y"))  # +0.0 + y is never -0.0
    assert never_minus_zero(parse("y - -(0.0*1.0)"))  # y - (-0.0) is y + 0.0
    assert not never_minus_zero(parse("-0.0/2.0 + y"))  # -0.0 + -0.0 is -0.0
    assert not never_minus_zero(parse("y - 0.0*1.0"))  # -0.0 - 0.0 is -0.0
    assert never_minus_zero(Y + const(0.0))


def test_a_division_by_a_constant_zero_sum_is_exact() -> None:
    t = X / (parse("0.0/0.5") + Y)
    s = simplify(t)
    with np.errstate(all="ignore"):
        assert float(evaluate(s, {X: 1.0, Y: -0.0})) == math.inf
