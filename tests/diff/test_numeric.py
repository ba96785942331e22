"""numeric_gradient (the seed's session, many points at once, IEEE) and check_grad."""

from __future__ import annotations

import numpy as np

import exprgraph as eg
from exprgraph.diff import GradCheck, check_grad, grad, numeric_gradient
from exprgraph.simplify import simplify

x, y, z = eg.symbols("x y z")


def test_seed_session() -> None:
    f = (x * y + 3) / (z - 2)
    at = {x: 2, y: 3, z: 3}
    assert float(eg.evaluate(f, at)) == 9.0
    d = numeric_gradient(f, at)
    assert float(d[x]) == 3.0
    assert float(d[z]) == -9.0
    assert float(d[y]) == 2.0
    s = grad(f)
    assert str(simplify(s[x])) == "y/(z - 2)"
    assert float(eg.evaluate(s[x], at)) == 3.0
    ddx = grad(s[x])
    assert str(simplify(ddx[y])) == "1.0/(z - 2)"


def test_many_parameter_sets_at_once() -> None:
    f = x * x * y
    xs = np.linspace(-1, 1, 5)
    d = numeric_gradient(f, {x: xs, y: 3.0})
    np.testing.assert_allclose(d[x], 6 * xs)
    np.testing.assert_allclose(d[y], xs * xs)
    # a partial that is constant is still one value per point
    d = numeric_gradient(x + y, {x: xs, y: 1.0})
    assert d[x].shape == (5,) and d[y].shape == (5,)


def test_nan_and_inf_propagate_without_exceptions() -> None:
    f = eg.sqrt(x) * y + eg.log(y)
    with np.errstate(all="raise"):
        d = numeric_gradient(f, {x: np.array([-1.0, 0.0, 4.0, np.nan]), y: np.array([1.0, 1.0, 0.0, 1.0])})
    assert np.isnan(d[x][0]) and np.isinf(d[x][1]) and d[x][2] == 0.0 and np.isnan(d[x][3])
    assert np.isinf(d[y][2])


def test_numeric_gradient_wrt_forms() -> None:
    f = x * y
    assert float(numeric_gradient(f, {"x": 2.0, "y": 5.0}, x)) == 5.0
    assert [float(v) for v in numeric_gradient(f, {"x": 2.0, "y": 5.0}, [y, x])] == [2.0, 5.0]


def test_check_grad_passes_and_reports() -> None:
    result = check_grad(eg.sin(x * y) + eg.exp(z) * x, {x: [0.1, 0.5], y: 0.3, z: [-1.0, 1.0]})
    assert isinstance(result, GradCheck) and result.ok and bool(result)
    assert result.analytic.shape == (2,) and result.error < 1.0


def test_check_grad_catches_a_wrong_rule() -> None:
    sin = eg.get_op("sin")
    # ops are read-only: a twin of sin whose rule is wrong on purpose
    wrong = eg.Op(
        "sin_wrong", 1, sin.infer, impl=sin.impl, ufunc=sin.ufunc, grad=lambda node, g: (g * eg.sin(node.args[0]),)
    )
    assert check_grad(eg.sin(x), {x: 0.4}).ok
    assert not check_grad(wrong(x), {x: 0.4}).ok
    assert not check_grad(wrong(x) + 262144.0, {x: 0.4}).ok  # the rounding allowance hides no wrong rule


def test_check_grad_allows_for_the_rounding_of_large_values() -> None:
    # f = 2**18 + x rounds at 3e-11 while x moves by 1e-6: the quotient is off by about 1e-5, which
    # is rounding, not a wrong gradient
    for offset in (2.0**18, 1e9, -1e12):
        result = check_grad(x + offset + y * z, {x: 0.0, y: 0.0, z: 0.0}, seed=2)
        assert result.ok, (offset, result)


def test_check_grad_tensor_variables() -> None:
    a = eg.Symbol("a", shape=(2, 3))
    result = check_grad(eg.sum(eg.sin(a) * a) * x, {a: np.arange(6.0).reshape(2, 3) / 7, x: 1.5})
    assert result.ok
