"""Vector and matrix code in the C and LLVM backends: the same values as the numpy backend, loops found."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import exprgraph as eg
from exprgraph import Symbol, evaluate, get_op, grad
from exprgraph.compile import compile as eg_compile
from exprgraph.compile.llvm_backend import llvm_available
from exprgraph.core.ops_einsum import einsum
from exprgraph.core.ops_index import broadcast_to, concat, reshape, take
from exprgraph.core.ops_sort import topk
from exprgraph.core.scalarise import entry_symbols, scalarise
from exprgraph.errors import CompileError, IndexOutOfRangeError, ScalariseError

BACKENDS = ["c", pytest.param("llvm", marks=pytest.mark.skipif(not llvm_available(), reason="no llvmlite"))]
N = 7
x = Symbol("x", shape=(N,))
y = Symbol("y", shape=(N,))
A = Symbol("A", shape=(3, N))
s = Symbol("s")
SUM, AMAX, AMIN, PROD, MEAN, LSE = (get_op(n) for n in ("sum", "amax", "amin", "prod", "mean", "logsumexp"))


def _model(v: eg.Term) -> eg.Term:
    # the vector model: sum(sin(x[1:]*x[:-1]) + exp(x)/(1+x**2)) (the exp term on x[1:])
    return SUM(eg.sin(v[1:] * v[:-1]) + eg.exp(v[1:]) / (1 + v[1:] ** 2))


def _point(seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {"x": rng.uniform(-1, 1, N), "y": rng.uniform(0.5, 2, N), "A": rng.uniform(-1, 1, (3, N)), "s": 0.7}


def _vector(draw: st.DrawFn, depth: int) -> eg.Term:
    """A random vector term of length N over x, y, A and s (elementwise ops, moves, contractions)."""
    kinds = ["x", "y"] if depth == 0 else ["unary", "binary", "slice", "take", "concat", "matvec", "broadcast"]
    kind = draw(st.sampled_from(kinds))
    if kind in ("x", "y"):
        return x if kind == "x" else y
    a, b = _vector(draw, depth - 1), _vector(draw, draw(st.integers(0, depth - 1)))
    if kind == "unary":
        return draw(st.sampled_from([eg.sin, eg.exp, eg.tanh, lambda t: t**2, lambda t: -t]))(a)
    if kind == "binary":
        return draw(st.sampled_from([a + b, a * b, a / (1 + b**2), a * s, get_op("maximum")(a, b)]))
    if kind == "slice":
        start = draw(st.integers(0, N - 1))
        return concat([a[start:], a[:start][::-1]])  # all N entries, moved
    if kind == "take":
        index = draw(st.lists(st.integers(-N, N - 1), min_size=N, max_size=N))
        return take(a, np.array(index, dtype=np.int64))
    if kind == "concat":
        cut = draw(st.integers(1, N - 1))
        return concat([a[:cut], b[cut:]])
    if kind == "matvec":
        m = reshape(concat([a, b]), (2, N))
        return einsum("ij,i->j", m, m @ x) * 0.1 + get_op("dot")(A, y)[[0, 1, 2, 0, 1, 2, 0]]
    return broadcast_to(a[2:3], (N,)) + b


@st.composite
def _programs(draw: st.DrawFn) -> list[eg.Term]:
    v = _vector(draw, draw(st.integers(1, 3)))
    m = reshape(concat([v, _vector(draw, 1), v * 2.0]), (3, N))
    return [
        *(v, SUM(v), AMAX(m, axis=1), AMIN(m, axis=0), MEAN(v), PROD(m[:, :2], axis=0), reshape(m, (N, 3))[1:3]),
        *(LSE(v), LSE(m, axis=0)),
    ]


@pytest.mark.parametrize("backend", BACKENDS)
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(program=_programs(), seed=st.integers(0, 2**16))
def test_random_vector_programs_agree_with_numpy(backend: str, program: list[eg.Term], seed: int) -> None:
    inputs = [x, y, A, s]
    point = _point(seed)
    args = [point[t.name] for t in inputs]
    want = eg_compile(program, inputs, backend="numpy")(*args)
    got = eg_compile(program, inputs, backend=backend)(*args)
    for w, g, t in zip(want, got, program, strict=True):
        assert np.shape(g) == tuple(t.shape)
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_vector_model_and_its_gradient_run_as_loops(backend: str) -> None:
    n = 200
    v = Symbol("x", shape=(n,))
    f = _model(v)
    g = grad(f, v)  # vector-shaped: slices, scatter-adds and broadcasts of the upstream
    point = np.random.default_rng(1).uniform(-1, 1, n)
    fn = eg_compile([f, g], [v], backend=backend)
    value, gradient = fn(point)
    want_f, want_g = evaluate([f, g], {"x": point})
    assert gradient.shape == (n,)
    np.testing.assert_allclose(value, want_f, rtol=1e-13)
    np.testing.assert_allclose(gradient, want_g, rtol=1e-12, atol=1e-14)
    # one loop per vector node (fused chains fewer): the count does not grow with n
    assert 0 < fn.info["vector_loops"] < 30
    assert ("i0 < 199;" if backend == "c" else "icmp slt i64 %v") in fn.source


@pytest.mark.parametrize("backend", BACKENDS)
def test_packed_calls_take_the_flattened_entries(backend: str) -> None:
    fn = eg_compile([A @ x, SUM(x) * s], [A, x, s], backend=backend, packed=True)
    point = _point(3)
    row = np.concatenate([point["A"].reshape(-1), point["x"], [point["s"]]])
    out = fn(row)
    assert out.shape == (4,)
    np.testing.assert_allclose(out[:3], point["A"] @ point["x"], rtol=1e-13)
    np.testing.assert_allclose(out[3], point["x"].sum() * 0.7, rtol=1e-13)
    many = fn(np.stack([row, 2 * row]))
    np.testing.assert_allclose(many[1, :3], 4 * (point["A"] @ point["x"]), rtol=1e-13)


@pytest.mark.parametrize("backend", BACKENDS)
def test_integer_and_boolean_vectors_keep_their_dtypes(backend: str) -> None:
    k = Symbol("k", "int64", shape=(5,))
    b = Symbol("b", "bool", shape=(5,))
    # numpy sums bools as counts and means ints as floats (an int64 sum of these would wrap)
    outs = [k[::2] * 3, SUM(k[1:]), k > 2, AMAX(k), MEAN(k), SUM(b), PROD(b), einsum("i,i->", b, k > 0)]
    fn = eg_compile(outs, [k, b], backend=backend)
    values = np.array([2**62, -1, 2**62, 2**62, 9], dtype=np.int64)
    flags = np.array([True, False, True, True, True])
    got = fn(values, flags)
    for g, w in zip(got, evaluate(outs, {"k": values, "b": flags}), strict=True):
        assert np.asarray(g).dtype == np.asarray(w).dtype
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_scalar_input_broadcast_over_points_with_a_vector(backend: str) -> None:
    fn = eg_compile(x[:3] * s, [x, s], backend=backend)
    point = _point(4)["x"]
    got = fn(point, np.array([1.0, 2.0]))  # two values of s: two rows of the vector output
    np.testing.assert_allclose(got, np.stack([point[:3], 2 * point[:3]]), rtol=1e-15)


@pytest.mark.parametrize("backend", BACKENDS)
def test_logsumexp_entry_by_entry_is_the_ops_own_fold(backend: str) -> None:
    # logsumexp(v) = logaddexp(logaddexp(v0, v1), v2)...: the steps numpy takes, so the same bits, and no overflow
    k = Symbol("k", "int64", shape=(3,))
    program = [LSE(x * 2.0), LSE(A, axis=1), LSE(A[:, :1], axis=1), LSE(k)]
    f = eg_compile(program, [x, A, k], backend=backend)
    rng = np.random.default_rng(5)
    for v in (rng.uniform(-1, 1, N), np.array([800.0, -np.inf, 1e-300, -800.0, 3.0, np.inf, 0.0])):
        a, ints = rng.uniform(-5, 5, (3, N)), np.array([2, -7, 40], dtype=np.int64)
        a[1] = -np.inf  # a row of -inf: -inf, as numpy's fold gives
        env = {"x": v, "A": a, "k": ints}
        for got, t in zip(f(v, a, ints), program, strict=True):
            want = np.asarray(evaluate(t, env))
            assert got.dtype == np.float64 and np.array_equal(got, want, equal_nan=True), (t, got, want)


@pytest.mark.parametrize("backend", BACKENDS)
def test_ops_with_value_dependent_positions_are_refused_by_name(backend: str) -> None:
    values, _ = topk(x, 2)
    with pytest.raises(CompileError, match="topk_indices"):
        eg_compile(SUM(values), [x], backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_symbolic_lengths_are_refused(backend: str) -> None:
    v = Symbol("v", shape=("n",))
    with pytest.raises(CompileError, match="constant length"):
        eg_compile(SUM(v), [v], backend=backend)


def test_an_index_out_of_range_is_named() -> None:
    with pytest.raises(IndexOutOfRangeError, match="7") as info:
        x[7]
    assert info.value.index == 7
    # and again where entries are read: a shorter array of entries than the index needs
    short = {x: entry_symbols([Symbol("z", shape=(3,))])[Symbol("z", shape=(3,))]}
    with pytest.raises(IndexOutOfRangeError, match="index 5") as info:
        scalarise([x[5]], short)
    assert info.value.index == 5 and info.value.axis == 0


def test_scalarise_names_entries_apart_from_the_inputs() -> None:
    taken = Symbol("x_0")
    entries = entry_symbols([x], {taken.name})
    names = [e.name for e in entries[x]]
    assert "x_0" not in names and len(set(names)) == N
    with pytest.raises(ScalariseError, match="not among the inputs"):
        scalarise([SUM(y)], entries)
