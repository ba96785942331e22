"""to_onnx: models the ONNX checker accepts and the reference evaluator runs to our values."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from interop_strategies import B, M, N, X, Y, Z, float_env, float_terms, int_env, int_terms, seed_examples

from exprgraph import Symbol, dot, evaluate, get_op, maximum, minimum, transpose, where
from exprgraph import sum as sum_
from exprgraph.core.ops_index import broadcast_to, concat, reshape, stack
from exprgraph.errors import ConversionError
from exprgraph.interop import to_onnx

onnx = pytest.importorskip("onnx")
from onnx.reference import ReferenceEvaluator  # noqa: E402


def _run(model, env):
    feeds = {i.name: np.asarray(env[i.name]) for i in model.graph.input}
    with np.errstate(all="ignore"):
        return ReferenceEvaluator(model).run(None, feeds)


def _check(outputs, inputs, env, exact=False):
    model = to_onnx(outputs, inputs)
    onnx.checker.check_model(model, full_check=True)
    got = _run(model, env)
    with np.errstate(all="ignore"):
        want = evaluate(list(outputs), env)
    for g, w in zip(got, want, strict=True):
        w = np.broadcast_to(w, g.shape)
        assert g.dtype == w.dtype
        if exact:
            np.testing.assert_array_equal(g, w)
            if g.dtype.kind == "f":  # zeros keep their sign (numpy's // and % give -0.0 in places)
                known = ~np.isnan(w)
                np.testing.assert_array_equal(np.signbit(g[known]), np.signbit(w[known]))
        else:
            np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-300, equal_nan=True)
    return model


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(float_terms())
def test_random_float_terms(t):
    _check([t], [X, Y, Z], float_env(32))


@settings(max_examples=100, deadline=None)
@given(int_terms())
def test_random_int_terms_exactly(t):
    _check([t], [N, M], int_env(32), exact=True)


def test_floor_semantics_and_dtypes_match_numpy_exactly():
    rng = np.random.default_rng(2)
    env = {
        "x": np.concatenate(
            [rng.normal(size=20) * 4, [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 7.5, 0.5, -0.5, 4.0, -4.0]]
        ),
        "y": np.concatenate(
            [rng.normal(size=20) * 2, [0.5, -0.5, 0.0, np.inf, 2.0, -3.0, 1.0, -0.0, 2.0, -2.0, -2.0, 2.0]]
        ),
        "n": rng.integers(-20, 20, 32),
        "m": np.concatenate([rng.integers(1, 9, 16), -rng.integers(1, 9, 16)]),
        "b": rng.random(32) > 0.5,
    }
    outs = [X // Y, X % Y, N // M, N % M, B + B, -B, abs(N), maximum(B, B), minimum(B, ~B), where(B, X, N),
            (B | (X < N)) & ~(N >= M), X / N, get_op("exp")(N), get_op("ne")(X, Y), get_op("eq")(B, B)]  # fmt: skip
    _check(outs, [X, Y, N, M, B], env, exact=True)


def test_tensor_ops_with_symbolic_dimensions():
    A = Symbol("A", shape=("batch", 3))
    v = Symbol("v", shape=(3,))
    W = Symbol("W", shape=(3, "k"))
    outs = [A @ W, dot(A, v), dot(v, v), sum_(A, axis=0), sum_(A), sum_(A * 2, axis=(0, 1)), transpose(A) * 2, A + v]
    model = to_onnx(outs, [A, v, W])
    dims = [[d.dim_param or d.dim_value for d in i.type.tensor_type.shape.dim] for i in model.graph.input]
    assert dims == [["batch", 3], [3], [3, "k"]]
    out_dims = [[d.dim_param or d.dim_value for d in o.type.tensor_type.shape.dim] for o in model.graph.output]
    assert out_dims[0] == ["batch", "k"] and out_dims[2] == [] and out_dims[6] == [3, "batch"]
    rng = np.random.default_rng(3)
    env = {"A": rng.normal(size=(4, 3)), "v": rng.normal(size=3), "W": rng.normal(size=(3, 5))}
    _check(outs, [A, v, W], env)


def test_seed_examples_and_names():
    model = _check(seed_examples(), [X, Y, Z], float_env(8, seed=5))
    assert [o.name for o in model.graph.output] == [f"output_{i}" for i in range(len(seed_examples()))]
    f = seed_examples()[0]
    named = to_onnx(f, output_names=["f"])
    assert [i.name for i in named.graph.input] == ["x", "y", "z"]
    assert _run(named, {"x": 2.0, "y": 3.0, "z": 3.0})[0] == 9.0  # the seed's value
    # an output that is an input, and one output twice
    _check([X, X, X + 1], [X], {"x": np.arange(3.0)})


def test_errors():
    with pytest.raises(ConversionError, match="not in inputs"):
        to_onnx(X + Y, [X])
    with pytest.raises(ConversionError, match="output_names"):
        to_onnx([X, Y], output_names=["a"])


def test_long_chain_exports_without_recursion():
    chain = X
    for _ in range(100_000):
        chain = chain + 1.0
    model = to_onnx(chain)
    assert len(model.graph.node) == 100_001
    onnx.checker.check_model(model)


def test_logsumexp_is_reduce_log_sum_exp_and_does_not_overflow():
    logsumexp = get_op("logsumexp")
    A = Symbol("A", shape=("batch", 3))
    s = Symbol("s")
    outs = [logsumexp(A), logsumexp(A, axis=1), logsumexp(A * 2, axis=(0, 1)), logsumexp(s), logsumexp(A, axis=0)]
    model = _check(outs, [A, s], {"A": np.array([[1000.0, 1000.0, -5.0], [-1e4, 0.5, 2.0]]), "s": 3.0})
    assert {n.op_type for n in model.graph.node} >= {"ReduceLogSumExp"}
    got = _run(model, {"A": np.array([[1000.0, 1000.0, 1000.0]]), "s": -1.0})
    assert got[1][0] == pytest.approx(1000 + np.log(3))  # no overflow in the exported model either
    assert got[3] == -1.0  # logsumexp of one number is the number


EDGE_INTS = np.array([0, 1, -1, 2, -3, 7, 2**62, 2**63 - 1, -(2**63), -(2**63) + 1], dtype=np.int64)


def test_integer_floor_division_at_the_int64_limits():
    # every pair of edge values: -2**63 // 3 overflowed in x - x % y; a zero divisor is 0 in evaluate
    n, m = np.meshgrid(EDGE_INTS, EDGE_INTS)
    env = {"n": n.ravel(), "m": m.ravel(), "x": n.ravel() / 3.0}
    ceil_div = get_op("ceil_div")
    outs = [N // M, N % M, ceil_div(N, M), ceil_div(N, X), X // N]
    model = _check(outs, [N, M, X], env, exact=True)
    # no integer division by 0 or -1 reaches the runtime (its C code would trap there)
    divisors = {node.input[1] for node in model.graph.node if node.op_type == "Div"}
    assert divisors and all(name not in ("m",) for name in divisors)
    with pytest.raises(ConversionError, match="ceil_div of a bool"):
        to_onnx(ceil_div(B, N))


def test_powers_as_evaluate_computes_them():
    # a**0.5 is sqrt(a): nan at -inf, where ONNX's Pow gives inf; odd int64 powers keep the sign
    x = np.array([-np.inf, -4.0, -0.0, 0.0, 2.0, -1.0, -1.0, -1.0, -0.0])
    e = np.array([0.5, 0.5, 0.5, 1.5, 0.5, 3.0, 2.0, 0.5, -1.0])
    n = np.array([2**53 + 1, 2**63 - 1, -(2**63) + 1, 2**53 + 2, 3, 2, 1, 0, -(2**63) + 1])
    f32 = Symbol("f", "float32")
    outs = [X**Y, X**N, X**0.5, f32**N, X**B]
    env = {"x": x, "y": e, "n": n, "f": x.astype(np.float32), "b": n % 2 == 1}
    _check(outs, [X, Y, N, f32, B], env, exact=True)
    assert np.isnan(_run(to_onnx(X**0.5), {"x": -np.inf})[0])


def test_variadic_sums_fold_step_by_step_as_evaluate():
    # add(-1, -2**63, x) wraps around in int64 before it meets x; casting every operand first did not
    f32 = Symbol("f", "float32")
    add, mul = get_op("add"), get_op("mul")
    outs = [add(-1, -(2**63), X), mul(N, N, X), add(f32, B, N), add(B, B, B), mul(f32, f32, N)]
    env = {"x": np.array([0.0, 1.5]), "n": np.array([2**40, 3]), "b": np.array([True, False])}
    _check(outs, [X, N, B, f32], {**env, "f": np.array([1e30, 2.0], np.float32)}, exact=True)


def _vector_terms():
    v, m = Symbol("v", shape=(5,)), Symbol("m", shape=(3, 4))
    amax, amin, prod, mean = (get_op(n) for n in ("amax", "amin", "prod", "mean"))
    scatter = get_op("scatter_add")
    return (
        [
            v[1:4] * v[::-2],
            v[4:0:-3] + v[-1],
            m[:, ::-1][1] * m[2, :],
            m[[2, 0, 2]][:, np.array([[3, 0], [1, 1]])],
            scatter(reshape(m, (3, 2, 2)), np.array([[0, 0], [2, 1]]), spec=(1, 3)),
            scatter(m[:, :2], np.array([2, 2]), spec=(1, 5)),
            concat([m, m[:1] * 2.0, m[::-1]]),
            stack([v, v * v], axis=1),
            reshape(m, (2, -1)),
            broadcast_to(v[:1], (3, 5)) * broadcast_to(m[1:2, :1], (3, 5)),
            amax(m, axis=0) + sum_(amin(m, axis=1)) + mean(m) + prod(m[:, :2], axis=(0, 1)),
            amax(v > 0.0),  # a bool extremum: reduced as int64
        ],
        [v, m],
    )


def test_vector_ops_export_and_compute_our_values():
    terms, inputs = _vector_terms()
    rng = np.random.default_rng(5)
    env = {"v": rng.uniform(-2, 2, 5), "m": rng.uniform(-2, 2, (3, 4))}
    _check(terms, inputs, env)
    ort = pytest.importorskip("onnxruntime")
    model = to_onnx(terms, inputs)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    for got, want in zip(session.run(None, env), evaluate(terms, env), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-12)


def test_trunc_of_a_bool_is_an_int64_as_evaluate():
    # found by the converter fuzzer: the bool came back as a bool
    flag = Symbol("flag", "bool")
    got = _run(to_onnx(get_op("trunc")(flag)), {"flag": np.array([True, False])})[0]
    assert got.dtype == np.int64 and got.tolist() == [1, 0]
