"""Term-level polynomial and rational algebra: expand, collect, factor, cancel, together, apart.

Every result is checked to equal its input exactly (Fractions) at random points away from poles;
textbook cases by their printed form; deep and wide inputs; the work budget; sympy as an oracle.
"""

from __future__ import annotations

import math
import sys
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from exprgraph.core import Symbol, const, cos, exp, parse, sin, substitute, sum_, symbols
from exprgraph.errors import TermTooLargeError
from exprgraph.eval import evaluate
from exprgraph.interop import to_sympy
from exprgraph.poly import Budget
from exprgraph.simplify.polynomial import collect, expand, factor
from exprgraph.simplify.rational import apart, cancel, together

sys.path.insert(0, str(Path(__file__).parent.parent / "poly"))
from poly_helpers import exact_value

x, y, z, a, b = symbols("x y z a b")
LEAVES = [x, y, z, const(1), const(2), const(-3)]


def _expressions(divisions: bool):
    """Random expressions of +, -, *, small powers (and divisions by constants, or by anything)."""
    leaf = st.sampled_from(LEAVES)

    def extend(children):
        ops = [
            st.tuples(children, children).map(lambda p: p[0] + p[1]),
            st.tuples(children, children).map(lambda p: p[0] - p[1]),
            st.tuples(children, children).map(lambda p: p[0] * p[1]),
            st.tuples(children, st.integers(0, 3)).map(lambda p: p[0] ** p[1]),
            children.map(lambda c: -c),
        ]
        if divisions:
            ops.append(st.tuples(children, children).map(lambda p: p[0] / p[1]))
        else:
            ops.append(st.tuples(children, st.sampled_from([2, 3, -5])).map(lambda p: p[0] / const(p[1])))
        return st.one_of(*ops)

    return st.recursive(leaf, extend, max_leaves=10)


POINT = st.fixed_dictionaries({s: st.fractions(min_value=-5, max_value=5, max_denominator=7) for s in (x, y, z)})


def _value(t, env):
    try:
        return exact_value(t, env)
    except ZeroDivisionError:
        assume(False)


@settings(max_examples=80, deadline=None)
@given(_expressions(divisions=False), POINT)
def test_expand_equals_input(e, env):
    out = expand(e)
    assert _value(out, env) == _value(e, env)
    assert expand(out) is out  # expanded form is a fixpoint


@settings(max_examples=60, deadline=None)
@given(_expressions(divisions=True), POINT)
def test_cancel_together_factor_equal_input(e, env):
    v = _value(e, env)
    for f in (cancel, together, factor):
        assert _value(f(e), env) == v, f.__name__


@settings(max_examples=40, deadline=None)
@given(_expressions(divisions=False), POINT)
def test_collect_equals_input(e, env):
    assert _value(collect(e, x), env) == _value(e, env)


@settings(max_examples=40, deadline=None)
@given(_expressions(divisions=True), st.fractions(min_value=-5, max_value=5, max_denominator=7))
def test_apart_equals_input(e, t):
    e = substitute(e, {y: const(2), z: const(-1)})
    env = {x: t}
    v = _value(e, env)
    assert _value(apart(e, x), env) == v


def test_textbook_cases():
    assert str(expand((x + 1) * (x + 1) - x * x)) == "2*x + 1"
    assert str(cancel((x**2 - 1) / (x + 1))) == "x - 1"
    assert str(together(1 / x + 1 / y)) == "(x + y)/(x*y)"
    assert str(factor(x**4 - 1)) == "(x - 1)*(x + 1)*(x**2 + 1)"
    assert str(factor(x**2 - y**2)) == "(x - y)*(x + y)"
    assert str(factor(6 * x**2 * y**3 - 6 * y**3)) == "6*y**3*(x - 1)*(x + 1)"
    assert str(collect(a * x + b * x + x**2 + 1, x)) == "x**2 + (a + b)*x + 1"
    assert str(apart(1 / (x**2 - 1), x)) == "1/(2*(x - 1)) - 1/(2*(x + 1))"
    assert str(expand((x + 1) / 3)) == "x/3 + 1/3"
    assert str(cancel((x / 2 + 1) / (y + 1))) == "(x + 2)/(2*y + 2)"


def test_opaque_atoms():
    s = sin(x)
    assert str(expand(s * (s + 1))) == "sin(x)**2 + sin(x)"
    assert str(expand(sin((x + 1) ** 2))) == "sin(x**2 + 2*x + 1)"
    assert str(factor(exp(y) ** 2 - 1)) == "(exp(y) - 1)*(exp(y) + 1)"
    assert str(cancel((cos(x) ** 2 - 1) / (cos(x) + 1))) == "cos(x) - 1"
    env = {x: 0.7, y: -1.3}
    for e in (s * (s + 1), (exp(y) ** 2 - 1) / (exp(y) + 1)):
        for f in (expand, factor, cancel, together):
            assert math.isclose(evaluate(f(e), env), evaluate(e, env), rel_tol=1e-12)


def test_dtypes_and_constants():
    n = Symbol("n", "int64")
    assert expand(n * 2 + n).dtype == "int64"
    assert expand(x - x + 1.0).dtype == "float64"
    assert str(expand(x * 0.5 + x * 0.25)) == "3*x/4"
    # coefficients beyond int64 are written exactly in base 2**62
    e = (x + 1) ** 70
    env = {x: Fraction(3, 7)}
    assert exact_value(expand(e), env) == exact_value(e, env)


def test_dtype_and_shape_are_kept_or_nothing_is_rewritten():
    f = Symbol("f", "float32")
    v = Symbol("v", shape=(3,))
    e = f * (f + const(1.0, "float32"))
    assert expand(e) is e  # int coefficients would promote float32 to float64
    assert expand(v - v) is v - v  # the scalar 0 would lose the shape
    s = sum_(sin(v - v))
    assert expand(s) is s
    assert str(expand(v * (v + 1))) == "v**2 + v"


def test_deep_and_wide_inputs():
    t = x
    for _ in range(100_000):
        t = t + 1
    assert str(expand(t)) == "x + 100000"
    wide = sum((Symbol(f"s{i}") for i in range(5000)), const(0))
    assert len(expand(wide).args) == 5000
    p = x
    for _ in range(2000):
        p = p * x
    assert str(factor(p)) == "x**2001"


def test_many_atoms():
    wide = sum((Symbol(f"s{i}") for i in range(300)), const(0))
    assert str(cancel(wide * (x + 1) / (x + 1))) == str(expand(wide))
    assert str(cancel((wide * (x + 1)) / (wide * (x - 1)))) == "(x + 1)/(x - 1)"
    assert str(factor(wide * (x + 1))).startswith("(x + 1)*(s0 + s1 + ")


def test_limits_keep_factors_whole():
    # past the degree limits a part is returned whole: correct, perhaps reducible, quick
    assert str(factor(x**3000 - 1)) == "x**3000 - 1"
    assert str(factor(x**300 - y**300)) == "x**300 - y**300"
    assert str(factor(x**100000 - 1)) == "x**100000 - 1"


def test_budget_raises_instead_of_hanging():
    with pytest.raises(TermTooLargeError):
        expand((x + y + z + a + b + 1) ** 40, Budget(200_000))
    with pytest.raises(TermTooLargeError):
        expand((x + 1) ** 10**6)
    with pytest.raises(TermTooLargeError):
        cancel((x**5000 - 1) / (x**3000 - 1))


def test_against_sympy():
    sympy = pytest.importorskip("sympy")

    cases = [
        ((x + y) ** 3 - (x - y) ** 3, sympy.expand, expand),
        ((x**3 - y**3) / (x - y), sympy.cancel, cancel),
        (1 / (x + 1) + 1 / (x - 1), sympy.together, together),
        (x**6 - 1, sympy.factor, factor),
    ]
    for e, theirs, ours in cases:
        assert sympy.simplify(to_sympy(ours(e)) - theirs(to_sympy(e))) == 0


def test_a_sum_that_reads_one_term_twice_is_not_added_into_itself():
    # x + (x - x) - x: both sides of a difference share one numerator dict (was "changed size during iteration")
    for text in ("x + (x - x) - x", "(x + x) - (x + x)", "x*x - x*x + x"):
        t = parse(text)
        for form in (expand, cancel, together):
            got = form(t)
            assert float(evaluate(got, {"x": 1.75})) == float(evaluate(t, {"x": 1.75})), (text, form)
