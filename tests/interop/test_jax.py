"""to_jax: the values of evaluate, under jax.jit and jax.grad, on random terms and the seeds' examples."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from interop_strategies import B, N, X, Y, Z, float_env, float_terms, int_env, int_terms, seed_examples

from exprgraph import Symbol, evaluate, exp, get_op, grad, postorder, sigmoid, sin, transpose, where
from exprgraph import sum as sum_
from exprgraph.errors import ConversionError
from exprgraph.interop import to_jax

jax = pytest.importorskip("jax")


@pytest.fixture(autouse=True)
def _x64():
    before = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)  # float64 like evaluate (JAX's default is float32)
    yield
    jax.config.update("jax_enable_x64", before)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(float_terms())
@example(-sin(exp(exp(Z))))  # sin of ~1e7: XLA and libm round the argument reduction differently
def test_random_float_terms_compute_our_values(t):
    env = float_env(16)
    f = to_jax(t, [X, Y, Z])
    with np.errstate(all="ignore"):
        got = np.asarray(f(env["x"], env["y"], env["z"]))
        want = np.broadcast_to(evaluate(t, env), got.shape)
        fair = _moderate_periodic_arguments(t, env, got.shape)
    np.testing.assert_allclose(got[fair], want[fair], rtol=1e-9, atol=1e-12, equal_nan=True)


def _moderate_periodic_arguments(t, env, shape):
    """Points where every sin/cos/tan argument is below 1e5 in magnitude: beyond, XLA reduces the
    argument less exactly than libm (sin(exp(exp(z))) differs in the 6th digit), which is not ours."""
    fair = np.ones(shape, dtype=bool)
    periodic = {get_op("sin"), get_op("cos"), get_op("tan")}
    for node in postorder(t):
        if node.op in periodic:
            arg = np.broadcast_to(np.asarray(evaluate(node.args[0], env), dtype=float), shape)
            fair &= ~(np.abs(arg) >= 1e5)  # nan arguments stay: both sides give nan
    return fair


@settings(max_examples=100, deadline=None)
@given(int_terms())
def test_random_int_terms_compute_our_values_exactly(t):
    env = int_env(16)
    got = np.asarray(to_jax(t, ["n", "m"])(env["n"], env["m"]))
    np.testing.assert_array_equal(got, np.broadcast_to(evaluate(t, env), got.shape))


def test_jit_and_grad_accept_it_and_agree_with_our_gradient():
    f = (X * Y + 3) / (Z - 2) + sigmoid(X) * sin(Y) + where(X > 0, X**2, -X)
    fj = to_jax(f)
    assert fj.inputs == (X, Y, Z)
    point = (2.0, 3.0, 3.0)
    assert float(jax.jit(fj)(*point)) == pytest.approx(float(evaluate(f, dict(zip("xyz", point, strict=True)))))
    g = jax.grad(fj, argnums=(0, 1, 2))(*point)
    ours = grad(f, [X, Y, Z])
    want = evaluate(ours, dict(zip("xyz", point, strict=True)))
    np.testing.assert_allclose(np.array(g), np.array(want, dtype=float), rtol=1e-12)
    # the CGraph seed: f = (x*y + 3)/(z - 2), df/dx = 3 and df/dz = -9 at (2, 3, 3)
    seed = to_jax(seed_examples()[0])
    assert jax.grad(seed, argnums=(0, 2))(*point) == (3.0, -9.0)


def test_tensor_ops_and_several_outputs():
    A = Symbol("A", shape=(2, 3))
    v = Symbol("v", shape=(3,))
    outs = [A @ v, sum_(A, axis=0), transpose(A) @ A, get_op("dot")(v, v), get_op("maximum")(A, 0.5, v)]
    values = {"A": np.arange(6.0).reshape(2, 3) / 7, "v": np.array([1.0, -2.0, 0.5])}
    f = to_jax(outs, ["A", "v"])
    got = jax.jit(f)(values["A"], values["v"])
    assert isinstance(got, tuple) and len(got) == len(outs)
    for g, w in zip(got, evaluate(outs, values), strict=True):
        np.testing.assert_allclose(np.asarray(g), w, rtol=1e-12)


def test_bools_count_as_integers_and_errors_are_clear():
    f = to_jax([B + B, ~B, where(B, N, 0)], [B, N])
    assert [int(v) for v in f(True, 7)] == [2, 0, 7]
    with pytest.raises(ConversionError, match="not in inputs"):
        to_jax(X + Y, [X])
    with pytest.raises(TypeError, match="takes 2 values"):
        to_jax(X + Y)(1.0)
    from exprgraph.dims import parse_expression

    with pytest.raises(ConversionError, match="ceil_div"):
        to_jax(parse_expression("CeilToInt(n, 8)"))


def test_deep_chain_runs_without_recursion():
    # each JAX op dispatches in tens of microseconds: 30,000 links are far past any recursion limit
    chain = X
    for _ in range(30_000):
        chain = chain + 1.0
    f = to_jax(chain)
    assert float(f(0.5)) == 30_000.5


def test_half_power_is_sqrt_as_in_evaluate():
    # our pow reads a**0.5 as sqrt(a): -0.0 at -0.0 (so 1/... is -inf) and nan at -inf; C's pow gives 0.0, inf
    t = 1.0 / X**0.5
    values = np.array([-0.0, 0.0, 4.0, -np.inf, np.inf])
    got = np.asarray(to_jax(t, [X])(values))
    np.testing.assert_array_equal(got, evaluate(t, {X: values}))
    assert got[0] == -np.inf and np.isnan(got[3])
    g = jax.grad(to_jax(X**Y, [X, Y]), argnums=0)(2.0, 3.0)  # the sqrt branch leaves other gradients finite
    assert float(g) == 12.0
