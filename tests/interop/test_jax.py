"""to_jax: the values of evaluate, under jax.jit and jax.grad, on random terms and the seeds' examples."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from interop_strategies import B, N, X, Y, Z, float_env, float_terms, int_env, int_terms, seed_examples

from exprgraph import Symbol, Term, const, evaluate, exp, get_op, grad, postorder, sigmoid, sin, transpose, where
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


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
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


@settings(max_examples=50, deadline=None)
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

    assert int(to_jax(parse_expression("CeilToInt(n, 8)"))(17)) == 3
    with pytest.raises(ConversionError, match="dim_fn"):
        to_jax(Term(get_op("dim_fn"), (N,), "opaque"))


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


def test_integer_division_by_zero_gives_zero_as_evaluate_does():
    # XLA's integer division by zero gives -1 (and floor adjusts it to -2): evaluate, as numpy, gives 0
    n, m = Symbol("n", "int64"), Symbol("m", "int64")
    values = {"n": np.array([5, -5, 0, -(2**63), 7, -(2**63)]), "m": np.array([0, 0, 0, 0, -2, -1])}
    outs = [n // m, n % m, B // B, n // B]
    got = to_jax(outs, [n, m, B])(values["n"], values["m"], False)
    for g, w in zip(got, evaluate(outs, {**values, "b": False}), strict=True):
        np.testing.assert_array_equal(np.asarray(g), np.broadcast_to(w, np.shape(g)))


def test_dtypes_promote_as_numpy_does():
    # JAX computes int64 with float32 in float32 and takes a Python constant's dtype from its
    # neighbour; numpy (and our dtype rules) compute both in float64
    f32 = Symbol("f", "float32")
    big = 2**24 + 1  # not a float32
    outs = [f32 + N, N * f32, get_op("maximum")(f32, N), where(B, f32, N), N > f32, f32 + const(0.1)]
    got = to_jax(outs, [f32, N, B])(np.float32(2**24), big, True)
    want = evaluate(outs, {"f": np.float32(2**24), "n": big, "b": True})
    for g, w in zip(got, want, strict=True):
        assert np.asarray(g).dtype == w.dtype
        assert np.asarray(g) == w
    assert bool(got[4]) is True  # 2**24 + 1 > 2**24: false in float32


def test_odd_integer_powers_keep_the_sign_of_the_base():
    # above 2**53 the exponent made a float is even; our pow gives x**n the sign of x for odd n
    exponents = np.array([2**53 + 1, 2**63 - 1, -(2**63) + 1, 2**53 + 2, 3])
    got = np.asarray(to_jax(X**N, [X, N])(-1.0, exponents))
    np.testing.assert_array_equal(got, evaluate(X**N, {"x": -1.0, "n": exponents}))
    np.testing.assert_array_equal(got, [-1.0, -1.0, -1.0, 1.0, -1.0])
    assert float(to_jax(X**N, [X, N])(-0.0, -(2**63) + 1)) == -np.inf


def test_subnormals_are_flushed_to_zero_on_cpu_as_documented():
    # XLA's CPU code flushes subnormal operands and results to zero, jitted or not (docs/interop.md)
    f = to_jax([X * Y, X * 1e100, X < 0], [X, Y])
    want = evaluate([X * Y, X * 1e100, X < 0], {"x": -1e-310, "y": 1e-10})
    assert -1e-319 < float(want[0]) < 0 and float(want[1]) == pytest.approx(-1e-210) and bool(want[2])
    for run in (f, jax.jit(f)):
        product, scaled, negative = (np.asarray(v) for v in run(-1e-310, 1e-10))
        assert product == 0.0 and np.signbit(product)  # a zero of the result's sign
        assert scaled == 0.0  # the operand was read as -0.0
        assert not negative  # -1e-310 < 0 is false when -1e-310 is -0.0


def test_without_64_bit_mode_int64_wraps_at_32_bits_as_documented():
    jax.config.update("jax_enable_x64", False)  # the fixture restores it
    got = to_jax(N + 1, [N])(2**31 - 1)
    assert got.dtype == np.int32 and int(got) == -(2**31)
    assert to_jax(X / 3, [X])(1.0).dtype == np.float32


def test_vectorised_division_is_within_an_ulp_as_documented():
    # XLA's CPU code divides arrays of float64 an ulp off the rounded quotient at times (10/3)
    values = np.array([10.0, 7.0, 1.0, -7.0])
    got = np.asarray(to_jax(X / 3.0, [X])(values))
    want = evaluate(X / 3.0, {"x": values})
    np.testing.assert_array_max_ulp(got, want, maxulp=1)


def test_maximum_and_minimum_break_ties_as_numpy():
    # numpy gives the second operand on a tie (-0.0 and 0.0), XLA the IEEE order; nan wins in both
    zeros = np.array([-0.0, 0.0, np.nan, 1.0])
    others = np.array([0.0, -0.0, 1.0, np.nan])
    outs = [get_op("maximum")(X, Y), get_op("minimum")(X, Y), get_op("maximum")(X, Y, Z)]
    got = to_jax(outs, [X, Y, Z])(zeros, others, -zeros)
    for g, w in zip(got, evaluate(outs, {"x": zeros, "y": others, "z": -zeros}), strict=True):
        np.testing.assert_array_equal(np.asarray(g), w)
        assert (np.signbit(np.asarray(g)) == np.signbit(w)).all()
