"""Forward mode and products: jvp equals J@v, hvp equals H@v, on random and tensor functions."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from eg_strategies import SYMBOLS, X, Y, Z, intermediate_scale, points, terms
from hypothesis import example, given, settings
from hypothesis import strategies as st
from test_tensor_grads import CASES, _env

import exprgraph as eg
from exprgraph.diff import DifferentiationError, forward, grad, hessian, hvp, jacobian, jvp, vjp

x, y, z = X, Y, Z
tangent_values = st.lists(st.floats(-2.0, 2.0, allow_nan=False), min_size=3, max_size=3)
#: points without subnormal-scale values: there x*y/y and its derivatives under- and overflow in
#: whatever order each side happens to compute them, and the comparison says nothing
sane_points = points.filter(lambda p: all(v == 0 or abs(v) > 1e-100 for v in p.values()))


def number(t: eg.Term, env: dict) -> float:
    with np.errstate(all="ignore"):
        return float(eg.evaluate(t, env))


def close(got: float, want: float, scale: float = 1.0) -> None:
    """Equal to 1e-9 of ``want`` and of ``scale``, the largest intermediate (cancellation in x/y - x*y/y**2
    leaves last bits of values the size of the terms, which each side rounds in its own order)."""
    if np.isfinite(want):
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9 * scale)
    else:  # the reference overflowed: in another order of operations inf may come out as nan
        assert not np.isfinite(got), (got, want)


@settings(max_examples=60, deadline=None)
@given(f=terms(smooth=True), point=sane_points, v=tangent_values)
def test_jvp_equals_gradient_dot_tangent(f: eg.Term, point: dict, v: list) -> None:
    d = grad(f, list(SYMBOLS))
    want = sum(number(t, point) * vi for t, vi in zip(d, v, strict=True) if vi != 0)  # zero tangents move nothing
    got = jvp(f, list(SYMBOLS), v)
    scale = max(float(np.max(intermediate_scale(e, point))) for e in (got, *d))
    close(number(got, point), want, scale)


@settings(max_examples=40, deadline=None)
@given(fs=st.lists(terms(kind="continuous", max_depth=3), min_size=1, max_size=3), point=sane_points, v=tangent_values)
@example(fs=[eg.maximum(eg.log(X), 0.5)], point={X: 0.0, Y: 0.0, Z: 0.0}, v=[1.0, 0.0, 0.0])
def test_jvp_of_several_outputs_equals_jacobian_times_v(fs: list, point: dict, v: list) -> None:
    with np.errstate(all="ignore"):
        values = eg.eval.evaluate_nodes(fs, point)
    if not all(np.all(np.isfinite(np.asarray(val, dtype=float))) for val in values.values()):
        # an infinite or nan intermediate (log(0) in max(log(x), 0.5) at x = 0): the derivative is
        # undefined there, and forward and reverse mode may each give their own non-answer
        return
    rows = jacobian(fs, list(SYMBOLS))
    got = jvp(fs, list(SYMBOLS), v)
    assert isinstance(got, list) and len(got) == len(fs)
    for row, t in zip(rows, got, strict=True):
        with np.errstate(all="ignore"):
            want = sum(number(e, point) * vi for e, vi in zip(row, v, strict=True) if vi != 0)
        scale = max(float(np.max(intermediate_scale(e, point))) for e in (t, *row))
        close(number(t, point), want, scale)


@settings(max_examples=40, deadline=None)
@given(f=terms(smooth=True, max_depth=3), point=sane_points, v=tangent_values)
def test_hvp_equals_hessian_times_v(f: eg.Term, point: dict, v: list) -> None:
    h = np.array([[number(t, point) for t in row] for row in hessian(f, list(SYMBOLS))])
    got = [number(t, point) for t in hvp(f, list(SYMBOLS), v)]
    np.testing.assert_allclose(got, h @ np.array(v), rtol=1e-8, atol=1e-8)


@pytest.mark.parametrize("name", sorted(CASES))
def test_tensor_jvp_matches_the_gradient(name: str) -> None:
    f = CASES[name]()
    env = _env()
    rng = np.random.default_rng(5)
    variables = sorted(f.free_symbols, key=lambda s: s.name)
    tangents = [rng.standard_normal(s.shape) if s.shape else float(rng.standard_normal()) for s in variables]
    got = float(eg.evaluate(jvp(f, variables, tangents), env))
    gradient = eg.evaluate(grad(f, variables), env)
    want = sum(float(np.sum(np.asarray(g) * t)) for g, t in zip(gradient, tangents, strict=True))
    assert got == pytest.approx(want, rel=1e-9, abs=1e-9), name


def test_tensor_jvp_and_vjp_are_transposes() -> None:
    a = eg.Symbol("a", shape=(3, 4))
    v = eg.Symbol("v", shape=(4,))
    f = eg.tanh(a @ v) * eg.sum(a, axis=1) + eg.transpose(eg.transpose(a) * 2.0) @ eg.sin(v)
    env = _env(2)
    env.update({a: np.random.default_rng(3).standard_normal((3, 4)), v: np.array([0.5, -1.0, 2.0, 0.1])})
    rng = np.random.default_rng(4)
    ta, tv, u = rng.standard_normal((3, 4)), rng.standard_normal(4), rng.standard_normal(3)
    jv = eg.evaluate(jvp(f, [a, v], [ta, tv]), env)
    assert jv.shape == (3,)
    back = eg.evaluate(vjp(f, [a, v], u), env)
    assert float(u @ jv) == pytest.approx(float(np.sum(back[0] * ta) + back[1] @ tv), rel=1e-10)


def test_tensor_hvp_matches_differences_of_the_gradient() -> None:
    a = eg.Symbol("a", shape=(2, 3))
    v = eg.Symbol("v", shape=(3,))
    f = eg.sum(eg.sin(a @ v)) + eg.sum(v * v * v)
    rng = np.random.default_rng(6)
    at = {a: rng.standard_normal((2, 3)), v: rng.standard_normal(3)}
    ta, tv = rng.standard_normal((2, 3)), rng.standard_normal(3)
    got = eg.evaluate(hvp(f, [a, v], [ta, tv]), at)
    h = 1e-6
    plus = eg.evaluate(grad(f, [a, v]), {a: at[a] + h * ta, v: at[v] + h * tv})
    minus = eg.evaluate(grad(f, [a, v]), {a: at[a] - h * ta, v: at[v] - h * tv})
    for g, p, m in zip(got, plus, minus, strict=True):
        np.testing.assert_allclose(g, (p - m) / (2 * h), rtol=1e-6, atol=1e-7)


def test_forward_forms() -> None:
    assert str(jvp(x * y, [x, y], [1.0, 2.0])) == "y + 2.0*x"
    assert str(jvp(eg.sin(x), x, 1.0)) == "cos(x)"
    assert str(jvp(x * y, [x, y], [1.0, 0.0])) == "y"  # a zero tangent moves nothing
    assert jvp(x * 2.0, y, 1.0) is eg.const(0.0)
    w = eg.Symbol("w", shape=(2,))
    assert str(jvp(eg.sin(w), w, [1.0, 0.0])) == "array([1.0, 0.0])*cos(w)"
    assert jvp(eg.sum(w) + x, x, 1.0).shape == ()
    assert jvp(w * x, x, 1.0).shape == (2,)  # a scalar tangent widened to the output's shape
    u = eg.Symbol("u")
    assert str(jvp(x * y, [x, y], [u, 2.0])) == "u*y + 2.0*x"  # symbolic tangents work too
    assert forward([x * y, z], {x: 1.0}) == [y, None]


def test_forward_errors() -> None:
    w = eg.Symbol("w", shape=(2,))
    with pytest.raises(ValueError, match="2 variables"):
        jvp(x * y, [x, y], [1.0])
    with pytest.raises(ValueError, match="twice"):
        jvp(x * y, [x, x], [1.0, 1.0])
    with pytest.raises(DifferentiationError, match="does not fit"):
        jvp(eg.sum(w), w, [1.0, 2.0, 3.0])
    with pytest.raises(TypeError, match="wrt"):
        jvp(x, None, [1.0])
    with pytest.raises(DifferentiationError, match="scalar f"):
        hvp(w, w, [1.0, 1.0])
    with pytest.raises(ValueError, match="1 variables"):
        hvp(x * x, [x], [1.0, 2.0])
    with pytest.raises(DifferentiationError, match="does not fit"):
        hvp(x * x, x, [1.0, 2.0])


def test_jvp_through_an_op_without_an_elementwise_rule() -> None:
    from exprgraph.core import Op, register_op
    from exprgraph.core.stdops import _grad_transpose, transpose_rule

    flip = eg.core.op.REGISTRY.get("test_flip")
    if flip is None:
        flip = register_op(Op("test_flip", 1, transpose_rule, impl=np.transpose, grad=_grad_transpose))
    a = eg.Symbol("a", shape=(2, 3))
    f = flip(a * x)
    ta = np.arange(6.0).reshape(2, 3)
    got = eg.evaluate(jvp(f, [a, x], [ta, 0.5]), {a: np.ones((2, 3)), x: 2.0})
    np.testing.assert_allclose(got, (ta * 2.0 + 0.5).T)


def test_jvp_and_hvp_of_a_chain_of_100k_nodes() -> None:
    assert sys.getrecursionlimit() <= 10_000
    g = x * x
    for _ in range(50_000):
        g = g * 1.0 + y  # x**2 + 50000 y, built as 100k nodes
    terms = [g, jvp(g, [x, y], [2.0, -1.0]), *hvp(eg.sin(g), [x, y], [1.0, 0.0])]
    gv, jv, *hv = (float(t) for t in eg.evaluate(terms, {x: 0.1, y: 0.2}))  # one pass over the shared chain
    assert jv == pytest.approx(2.0 * 0.2 - 50_000, rel=1e-12)
    assert hv == pytest.approx([2 * np.cos(gv) - 4 * 0.01 * np.sin(gv), -2 * 0.1 * 50_000 * np.sin(gv)], rel=1e-9)


def test_products_and_sparse_values_compile() -> None:
    from exprgraph.compile import compile as compile_terms

    f = eg.sin(x * y) + x**3 * z
    h = hessian(f, [x, y, z], sparse=True)
    terms = [jvp(f, [x, y, z], [1.0, 2.0, 0.5]), *hvp(f, [x, y, z], [1.0, 0.0, -1.0]), *h.values]
    fn = compile_terms(terms, [x, y, z])
    want = [float(v) for v in eg.evaluate(terms, {x: 0.5, y: 2.0, z: -1.0})]
    assert [float(v) for v in fn(0.5, 2.0, -1.0)] == pytest.approx(want, rel=1e-14)
