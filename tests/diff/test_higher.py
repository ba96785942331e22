"""Higher order derivatives on closed forms; jacobian, hessian, jvp and vjp agree with each other."""

from __future__ import annotations

import numpy as np
import pytest
from eg_strategies import SYMBOLS, points, terms
from hypothesis import given, settings

import exprgraph as eg
from exprgraph.diff import DifferentiationError, grad, hessian, jacobian, jvp, vjp

x, y, z = eg.symbols("x y z")


def value(t: eg.Term, **env: float) -> float:
    return float(eg.evaluate(t, env))


def test_nth_derivative_of_sin_cycles() -> None:
    d = eg.sin(x)
    expected = [np.cos, lambda v: -np.sin(v), lambda v: -np.cos(v), np.sin]
    for n in range(8):
        d = grad(d, x)
        assert value(d, x=0.7) == pytest.approx(expected[n % 4](0.7), rel=1e-13)


def test_derivatives_of_a_polynomial_end_in_zero() -> None:
    d = x**4 - 3 * x**2 + x
    values = []
    for _ in range(5):
        d = grad(d, x)
        values.append(value(d, x=2.0))
    assert values == [4 * 8 - 12 + 1, 48 - 6, 48.0, 24.0, 0.0]


def test_exp_of_product_closed_form_hessian() -> None:
    f = eg.exp(x * y)
    h = hessian(f, [x, y])
    xv, yv = 0.5, -1.5
    e = np.exp(xv * yv)
    expected = [[yv * yv * e, (1 + xv * yv) * e], [(1 + xv * yv) * e, xv * xv * e]]
    got = [[value(t, x=xv, y=yv) for t in row] for row in h]
    np.testing.assert_allclose(got, expected, rtol=1e-13)


def test_seed_second_derivatives() -> None:
    f = (x * y + 3) / (z - 2)
    h = hessian(f, [x, y, z])
    at = {"x": 2.0, "y": 3.0, "z": 3.0}
    got = [[float(eg.evaluate(t, at)) for t in row] for row in h]
    # f = (xy + 3)/(z - 2): f_xy = 1/(z-2), f_xz = -y/(z-2)^2, f_zz = 2(xy+3)/(z-2)^3
    np.testing.assert_allclose(got, [[0, 1, -3], [1, 0, -2], [-3, -2, 18]])


@settings(max_examples=25, deadline=None)
@given(f=terms(smooth=True, max_depth=3), point=points)
def test_hessian_is_symmetric(f: eg.Term, point: dict) -> None:
    h = hessian(f, list(SYMBOLS))
    values = np.array([[float(eg.evaluate(t, point)) for t in row] for row in h])
    np.testing.assert_allclose(values, values.T, rtol=1e-9, atol=1e-9)


def test_hessian_of_vector_variables_is_entry_by_entry() -> None:
    v = eg.Symbol("v", shape=(2,))
    h = hessian(eg.sum(v * v) + v[0] * v[1] ** 2, v)
    at = {"v": np.array([3.0, 5.0])}
    got = np.array([[float(eg.evaluate(e, at)) for e in row] for row in h])
    assert got.tolist() == [[2.0, 10.0], [10.0, 2.0 + 6.0]]  # d2/dv0dv1 of v0*v1**2 = 2*v1
    with pytest.raises(DifferentiationError):
        hessian(eg.sum(v * v), eg.Symbol("w", shape=("n",)))


def test_jacobian_of_several_outputs_and_of_a_vector() -> None:
    j = jacobian([x * y, x + y, eg.sin(x)], [x, y])
    assert [[str(t) for t in row] for row in j] == [["y", "x"], ["1.0", "1.0"], ["cos(x)", "0.0"]]
    v = eg.Symbol("v", shape=(3,))
    m = eg.const(np.arange(6.0).reshape(2, 3))
    rows = jacobian(eg.dot(m, v) * x, [v, x])
    env = {v: np.array([1.0, 2.0, 3.0]), x: 2.0}
    np.testing.assert_allclose(eg.evaluate(rows[0][0], env), [0.0, 2.0, 4.0])
    np.testing.assert_allclose(eg.evaluate(rows[1][0], env), [6.0, 8.0, 10.0])
    assert float(eg.evaluate(rows[1][1], env)) == 3 + 8 + 15


def test_jvp_and_vjp_agree_with_the_jacobian() -> None:
    v = eg.Symbol("v", shape=(3,))
    f = eg.sin(v * x) + v * v
    env = {v: np.array([0.1, -0.4, 0.9]), x: 1.3}
    rows = jacobian(f, [v, x])
    jv = np.array([eg.evaluate(r[0], env) for r in rows])  # d f_i / d v_j
    jx = np.array([float(eg.evaluate(r[1], env)) for r in rows])
    tangent_v, tangent_x = np.array([1.0, 2.0, -1.0]), 0.5
    got = eg.evaluate(jvp(f, [v, x], [tangent_v, tangent_x]), env)
    np.testing.assert_allclose(got, jv @ tangent_v + jx * tangent_x, rtol=1e-13)
    cot = np.array([0.3, -1.0, 2.0])
    back = vjp(f, [v, x], cot)
    np.testing.assert_allclose(eg.evaluate(back[0], env), cot @ jv, rtol=1e-13)
    assert float(eg.evaluate(back[1], env)) == pytest.approx(cot @ jx, rel=1e-13)
    assert "_jvp_u" not in str(jvp(f, [v, x], [tangent_v, tangent_x]))


def test_jvp_of_scalar_and_argument_checks() -> None:
    assert value(jvp(x * y, x, 2.0), x=1.0, y=3.0) == 6.0
    with pytest.raises(ValueError):
        jvp(x * y, [x, y], [1.0])
