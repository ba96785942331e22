"""numeric_gradient (the seed's session, many points at once, IEEE, every node, zeros) and check_grad."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import exprgraph as eg
from exprgraph.diff import GradCheck, GradientMap, check_grad, grad, numeric_gradient
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


# -- CGraph's idioms (seed 004): partials by every node, zero for an unused symbol ---------------------


def test_the_notebooks_partials_by_every_node() -> None:
    # In [21]: numeric_gradient((x+3)*(y+4)*z*z, {x:2, y:3, z:5}), a partial for every node
    three, four = eg.const(3), eg.const(4)
    f = (x + 3) * (y + 4) * z * z
    d = numeric_gradient(f, {x: 2, y: 3, z: 5}, nodes=True)
    assert float(d[three]) == 175.0  # the notebook's `3: 175`
    assert float(d[four]) == 125.0  # the notebook's `4: 125`
    notebook = {
        y: 125,
        (x + 3) * (y + 4): 25,
        (x + 3) * (y + 4) * z: 5,
        x: 175,
        three: 175,
        y + 4: 125,
        z: 350,
        four: 125,
        f: 1,
        x + 3: 175,
    }
    assert {k: float(v) for k, v in d.items()} == notebook
    assert list(d)[-1] is f  # every node of f, children first
    # In [20]: numeric_gradient(x*x + y*y, {x:2, y:3})
    g = x * x + y * y
    d = numeric_gradient(g, {x: 2, y: 3}, nodes=True)
    assert {k: float(v) for k, v in d.items()} == {x * x: 1, g: 1, x: 4, y * y: 1, y: 6}


def test_partials_by_named_intermediates_and_constants() -> None:
    f = (x + 3) * (y + 4) * z * z
    at = {x: np.array([2.0, 1.0]), y: 3.0, z: 5.0}
    by_const, by_sum, by_y = numeric_gradient(f, at, [eg.const(3), x + 3, y])
    np.testing.assert_array_equal(by_const, [175.0, 175.0])
    np.testing.assert_array_equal(by_sum, [175.0, 175.0])
    np.testing.assert_array_equal(by_y, [125.0, 100.0])
    # a constant used twice (interned: one node) gets the sum of its two partials
    g = (x + 2.5) * (y + 2.5)
    assert float(numeric_gradient(g, {x: 1.0, y: 2.0}, eg.const(2.5))) == (2.0 + 2.5) + (1.0 + 2.5)
    # a float32 constant keeps float32 arithmetic in f
    s = eg.Symbol("s", "float32")
    assert float(numeric_gradient(s * eg.const(1.5, "float32"), {s: 2.0}, eg.const(1.5, "float32"))) == 2.0


def test_the_gradient_answers_zero_for_a_symbol_f_does_not_use() -> None:
    # In [25]: ddy = symbolic_gradient(d[y]); value(ddy[y], {x:2, y:3}) is 0
    f = (x + y) * x
    d = grad(f)
    ddy = numeric_gradient(d[y], {x: 2, y: 3})
    assert float(ddy[x]) == 1.0 and float(ddy[y]) == 0.0 and float(ddy["y"]) == 0.0
    assert y not in ddy  # a dict of the partials computed: the zero is an answer, not an entry
    # one zero per point, like every other partial
    many = numeric_gradient(x * 2, {x: np.array([1.0, 2.0, 3.0])})
    assert many[z].shape == (3,) and not many[z].any()
    assert many[eg.Symbol("v", shape=(2,))].shape == (3, 2)
    # a node of f whose partial was not asked for is not zero: KeyError says how to get it
    d = numeric_gradient(f, {x: 2, y: 3})
    with pytest.raises(KeyError, match="not computed"):
        d[x + y]
    assert float(d[x * 7]) == 0.0  # not a node of f: zero


def test_the_gradient_mapping_keeps_its_zeros_through_pickling() -> None:
    d = numeric_gradient(x * y, {x: 2.0, y: 3.0})
    back = pickle.loads(pickle.dumps(d))
    assert isinstance(back, GradientMap) and dict(back) == dict(d) and float(back[z]) == 0.0


def test_nodes_and_wrt_together_are_refused() -> None:
    with pytest.raises(TypeError, match="nodes=True"):
        numeric_gradient(x * y, {x: 1.0, y: 1.0}, x, nodes=True)


def test_the_symbolic_gradient_answers_zero_for_a_symbol_f_does_not_use() -> None:
    # In [25]: ddy = symbolic_gradient(d[y]); value(ddy[y], {x:2, y:3}) is 0
    d = grad((x + y) * x)
    ddy = grad(d[y])
    assert ddy[y] is eg.const(0.0) and float(eg.evaluate(ddy[y], {x: 2, y: 3})) == 0.0
    assert float(eg.evaluate(grad(d[x])[y], {x: 2, y: 3})) == 1.0
    assert eg.Symbol("v", shape=(2,)) not in ddy and ddy[eg.Symbol("v", shape=(2,))].shape == (2,)
