"""Every op's gradient rule against central finite differences, at random points (hypothesis)."""

from __future__ import annotations

import numpy as np
import pytest
from eg_strategies import SYMBOLS, X, Y, Z, points, terms
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import exprgraph as eg
from exprgraph.diff import check_grad, grad, numeric_gradient

x, y, z = X, Y, Z

# (name, f, domain predicate over the point): smooth wherever the predicate holds
SCALAR_CASES = [
    ("add", lambda: x + y, None),
    ("add3", lambda: eg.add(x, y * z, x), None),
    ("add_const", lambda: x + 2.0, None),
    ("sub", lambda: x - y * z, None),
    ("mul", lambda: x * y, None),
    ("mul3", lambda: eg.mul(x, y, z), None),
    ("mul4", lambda: eg.mul(x, y, z, x), None),
    ("mul6", lambda: eg.mul(x, y, z, x, 2.0, y), None),
    ("truediv", lambda: x / y, lambda p: abs(p[y]) > 0.1),
    ("truediv_const", lambda: 3.0 / (y + z), lambda p: abs(p[y] + p[z]) > 0.1),
    ("floordiv", lambda: (x * 3.0) // y + x, lambda p: abs(p[y]) > 0.1 and _far_from_int(3 * p[x] / p[y])),
    ("mod", lambda: (x * 3.0) % y, lambda p: abs(p[y]) > 0.1 and _far_from_int(3 * p[x] / p[y])),
    ("pow_int", lambda: x**3, None),
    ("pow_one", lambda: x**1 * y, None),
    ("pow_zero", lambda: x**0 + y, None),
    ("pow_neg", lambda: x**-2, lambda p: abs(p[x]) > 0.2),
    ("pow_float", lambda: (x * x + 1.0) ** 1.5, None),
    ("pow_var", lambda: (x * x + 1.0) ** y, None),
    ("pow_var_base_const", lambda: 2.0**x, None),
    ("neg", lambda: -(x * y), None),
    ("abs", lambda: abs(x - y), lambda p: abs(p[x] - p[y]) > 1e-3),
    ("exp", lambda: eg.exp(x * y), None),
    ("log", lambda: eg.log(x * x + y * y), lambda p: p[x] ** 2 + p[y] ** 2 > 0.05),
    ("sqrt", lambda: eg.sqrt(x * x + 0.5), None),
    ("sin", lambda: eg.sin(x * y), None),
    ("cos", lambda: eg.cos(x + y), None),
    ("tan", lambda: eg.tan(x), lambda p: abs(np.cos(p[x])) > 0.2),
    ("tanh", lambda: eg.tanh(x * y), None),
    ("sigmoid", lambda: eg.sigmoid(x - y), None),
    ("log1p", lambda: eg.log1p(x * x + y * 0.5), lambda p: p[x] ** 2 + 0.5 * p[y] > -0.9),
    ("expm1", lambda: eg.expm1(x * y), None),
    ("softplus", lambda: eg.softplus(x * y), None),
    ("log_sigmoid", lambda: eg.log_sigmoid(x - y), None),
    ("logaddexp", lambda: eg.logaddexp(x * y, z), None),
    ("logaddexp_const", lambda: eg.logaddexp(2.0, x), None),
    ("maximum", lambda: eg.maximum(x, y), lambda p: abs(p[x] - p[y]) > 1e-3),
    ("maximum3", lambda: eg.maximum(x, y, z * 0.5), lambda p: _distinct(p[x], p[y], 0.5 * p[z])),
    ("minimum", lambda: eg.minimum(x, y * 2.0), lambda p: abs(p[x] - 2 * p[y]) > 1e-3),
    ("minimum3", lambda: eg.minimum(x, y, z), lambda p: _distinct(p[x], p[y], p[z])),
    ("maximum_const", lambda: eg.maximum(x, 0.5), lambda p: abs(p[x] - 0.5) > 1e-3),
    ("where", lambda: eg.where(x < y, x * z, y * y), lambda p: abs(p[x] - p[y]) > 1e-3),
    (
        "compare_logic",
        lambda: eg.where((x < y) & ~(z > 1.0) | eg.eq(x, z), x, y),
        lambda p: _distinct(p[x], p[y], p[z]) and abs(p[z] - 1) > 1e-3,
    ),
    ("ne", lambda: eg.where(eg.ne(x, y), x * y, y), lambda p: abs(p[x] - p[y]) > 1e-3),
    ("le_ge", lambda: eg.where((x <= y) | (z >= 0.0), x, -y), lambda p: abs(p[x] - p[y]) > 1e-3 and abs(p[z]) > 1e-3),
]


def _far_from_int(v: float) -> bool:
    return abs(v - round(v)) > 1e-3


def _distinct(*vs: float) -> bool:
    return min(abs(a - b) for i, a in enumerate(vs) for b in vs[i + 1 :]) > 1e-3


def test_every_standard_op_has_a_gradient_rule() -> None:
    names = {
        "add", "sub", "mul", "truediv", "floordiv", "mod", "matmul", "pow", "lt", "le", "gt", "ge", "eq", "ne",
        "logical_and", "logical_or", "neg", "logical_not", "abs", "exp", "log", "sqrt", "sin", "cos", "tan",
        "tanh", "sigmoid", "maximum", "minimum", "where", "dot", "sum", "transpose",
        "log1p", "expm1", "softplus", "log_sigmoid", "logaddexp", "logsumexp",
    }  # fmt: skip
    for name in names:
        assert eg.get_op(name).grad is not None, name
    covered = {n.split("_")[0] for n, _, _ in SCALAR_CASES} | {"matmul", "dot", "sum", "transpose", "logical"}
    covered |= {"logsumexp"}  # tests/core/test_logsumexp.py checks its gradient
    assert {n.split("_")[0] for n in names} <= covered | {"lt", "le", "gt", "ge", "eq", "ne"}


@pytest.mark.parametrize(("name", "make", "domain"), SCALAR_CASES, ids=[c[0] for c in SCALAR_CASES])
@settings(max_examples=25, deadline=None)
@given(point=points)
def test_gradient_matches_finite_differences(name: str, make, domain, point: dict) -> None:
    if domain is not None:
        assume(domain(point))
    f = make()
    result = check_grad(f, point, seed=1)
    assert result.ok, (name, point, result)


@settings(max_examples=60, deadline=None)
@given(f=terms(smooth=True), point=points)
def test_random_smooth_compositions(f: eg.Term, point: dict) -> None:
    result = check_grad(f, point, seed=2)
    assert result.ok, (str(f), point, result)


def test_piecewise_constant_ops_have_zero_gradient() -> None:
    for f in (x // y, x < y, eg.logical_not(x > y), eg.eq(x, y) | (x >= y), eg.where(x < y, 1.0, 2.0)):
        d = grad(f, [x, y])
        assert [float(eg.evaluate(t, {x: 0.3, y: 0.7})) for t in d] == [0.0, 0.0]


def test_kink_conventions() -> None:
    # abs: slope 1 at 0 (a subgradient); max/min: the first operand equal to the result takes it all
    assert float(eg.evaluate(grad(abs(x), x), {x: 0.0})) == 1.0
    assert [float(eg.evaluate(d, {x: 1.0, y: 1.0})) for d in grad(eg.maximum(x, y), [x, y])] == [1.0, 0.0]
    d = grad(eg.minimum(x, y, z), [x, y, z])
    assert [float(eg.evaluate(t, {x: 2.0, y: 1.0, z: 1.0})) for t in d] == [0.0, 1.0, 0.0]


def test_mod_gradient_with_respect_to_divisor_is_minus_floor() -> None:
    d = numeric_gradient(x % y, {x: 7.5, y: 2.0}, y)
    assert float(d) == -3.0


def test_pow_exponent_zero_and_base_zero() -> None:
    assert float(eg.evaluate(grad(x**0, x), {x: 3.0})) == 0.0
    assert float(eg.evaluate(grad(x**2, x), {x: 0.0})) == 0.0
    # an int base to a negative power differentiates to float powers (no int64 error)
    n = eg.Symbol("n", "int64")
    assert float(eg.evaluate(grad(n**-1.0, n), {n: 2})) == -0.25


@pytest.mark.parametrize("op", ["sin", "exp", "tanh", "sigmoid", "sqrt", "log"])
def test_vectorised_gradient_matches_pointwise(op: str) -> None:
    fn = eg.get_op(op)
    f = fn(x * x + 0.25) * y
    xs = np.linspace(-1.5, 1.5, 7)
    many = numeric_gradient(f, {x: xs, y: 2.0}, x)
    one = [float(numeric_gradient(f, {x: v, y: 2.0}, x)) for v in xs]
    np.testing.assert_allclose(many, one, rtol=1e-14)


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 2))
def test_gradient_is_a_term_of_the_variable_shape(i: int) -> None:
    s = SYMBOLS[i]
    d = grad(eg.sin(s) * 2.0, s)
    assert isinstance(d, eg.Term) and d.shape == ()
