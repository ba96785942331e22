"""Vector programs built as loops over their vector nodes (compile/vloop*.py): values, gradients, scale."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import exprgraph as eg
from exprgraph import Symbol, evaluate, get_op, grad
from exprgraph.compile import compile as eg_compile
from exprgraph.compile.llvm_backend import llvm_available
from exprgraph.compile.lower import lower
from exprgraph.compile.vloop import FUSE_LIMIT, plan_loops
from exprgraph.compile.vloop_c import emit_vector_loops
from exprgraph.compile.vloop_ir import LoopPlan
from exprgraph.compile.vloop_llvm import emit_vector_ir
from exprgraph.core.ops_einsum import einsum
from exprgraph.core.ops_index import broadcast_to, concat, reshape, take

BACKENDS = ["c", pytest.param("llvm", marks=pytest.mark.skipif(not llvm_available(), reason="no llvmlite"))]
SUM, MEAN, PROD, AMAX, AMIN, TRANSPOSE = (get_op(n) for n in ("sum", "mean", "prod", "amax", "amin", "transpose"))
SMOOTH_UNARY = [eg.sin, eg.tanh, eg.cos, lambda t: t * t * 0.5, lambda t: -t]
KINKED_UNARY = [abs]
SMOOTH_BINARY = [
    lambda a, b: a + b,
    lambda a, b: a - b,
    lambda a, b: a * b,
    lambda a, b: a / (1 + b * b),
]
KINKED_BINARY = [get_op("maximum"), get_op("minimum"), lambda a, b: eg.where(a > b, a, b * 2.0)]


def _broadcasts(a: tuple, b: tuple) -> bool:
    try:
        np.broadcast_shapes(a, b)
    except ValueError:
        return False
    return True


@st.composite
def _programs(draw: st.DrawFn, smooth: bool = False) -> tuple[list[eg.Term], list[eg.Term]]:
    """A random vector program over x (n,), y (n,), m (r, n) and s (): a pool grown by random ops."""
    n, r = draw(st.integers(1, 7)), draw(st.integers(1, 7))
    x, y, m, s = Symbol("x", shape=(n,)), Symbol("y", shape=(n,)), Symbol("m", shape=(r, n)), Symbol("s")
    pool: list[eg.Term] = [x, y, m, s]
    unary = SMOOTH_UNARY + ([] if smooth else KINKED_UNARY)
    binary = SMOOTH_BINARY + ([] if smooth else KINKED_BINARY)
    for _ in range(draw(st.integers(1, 7))):
        a = draw(st.sampled_from(pool))
        kind = draw(st.sampled_from(["unary", "binary", "slice", "take", "concat", "reduce", "contract", "move"]))
        if kind == "binary":
            b = draw(st.sampled_from([t for t in pool if _broadcasts(tuple(t.shape), tuple(a.shape))]))
            out = draw(st.sampled_from(binary))(a, b)
        elif kind == "slice" and a.ndim:
            axis = draw(st.integers(0, a.ndim - 1))
            start = draw(st.integers(0, a.shape[axis] - 1))
            step = draw(st.sampled_from([1, 2, -1]))
            cut = [slice(None)] * a.ndim
            cut[axis] = slice(start, None, step) if step > 0 else slice(start, None, -1)
            out = a[tuple(cut)]
        elif kind == "take" and a.ndim:
            axis = draw(st.integers(0, a.ndim - 1))
            k = a.shape[axis]
            index = draw(st.lists(st.integers(-k, k - 1), min_size=1, max_size=7))
            out = take(a, np.array(index, dtype=np.int64), axis=axis)
        elif kind == "concat" and a.ndim:
            out = concat([a, a[::-1] * 0.5], axis=0)
        elif kind == "reduce" and a.ndim:
            op = draw(st.sampled_from([SUM, MEAN, PROD] + ([] if smooth else [AMAX, AMIN])))
            out = op(a, axis=draw(st.sampled_from([None, *range(a.ndim)])))
        elif kind == "contract" and a.ndim:
            if a.ndim == 2:
                out = draw(st.sampled_from([a @ TRANSPOSE(a), get_op("dot")(a, a[0]), einsum("ij,ij->j", a, a)]))
            else:
                out = draw(st.sampled_from([get_op("dot")(a, a), einsum("i,j->ij", a, a[::-1])]))
        elif kind == "move" and a.ndim:
            out = draw(
                st.sampled_from(
                    [reshape(a, (-1,)), broadcast_to(a, (2, *a.shape)), TRANSPOSE(a) if a.ndim == 2 else a[None]]
                )
            )
        else:
            out = draw(st.sampled_from(unary))(a)
        pool.append(out)
    outputs = pool[4:][-3:]
    return outputs, [x, y, m, s]


def _assert_live_buffers_apart(plan: LoopPlan) -> None:
    """No two work buffers named by one nest share a byte (buffers share bytes only across nests)."""
    for names in plan.names:
        spans = sorted((plan.arrays[n][2], plan.arrays[n][2] + plan.sizes[n]) for n in names if n in plan.sizes)
        for (_, end), (start, _) in itertools.pairwise(spans):
            assert end <= start
        assert all(0 <= a and b <= plan.work_bytes for a, b in spans)


def _values(inputs: list[eg.Term], seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.uniform(-1, 1, tuple(t.shape)) for t in inputs]


@pytest.mark.parametrize("backend", BACKENDS)
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(case=_programs(), seed=st.integers(0, 2**16))
def test_random_vector_programs_equal_numpy(backend: str, case: tuple, seed: int) -> None:
    outputs, inputs = case
    plan = plan_loops(lower(outputs, inputs))
    assert plan is not None  # built as loops, not scalarised
    _assert_live_buffers_apart(plan)
    values = _values(inputs, seed)
    got = eg_compile(outputs, inputs, backend=backend)(*values)
    want = evaluate(outputs, dict(zip(inputs, values, strict=True)))
    for g, w, t in zip(got, want, outputs, strict=True):
        assert np.shape(g) == tuple(t.shape)
        scale = max(1.0, float(np.max(np.abs(w), initial=0.0)))
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12 * scale)


@pytest.mark.parametrize("backend", BACKENDS)
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(case=_programs(smooth=True), seed=st.integers(0, 2**16))
def test_gradients_of_random_programs_equal_finite_differences(backend: str, case: tuple, seed: int) -> None:
    outputs, inputs = case
    x, y, m, _ = inputs
    # a scalar of every output: the gradient reads slices, scatter-adds and broadcasts of the upstream
    f = SUM(get_op("add")(*(SUM(t * 0.7) for t in outputs), SUM(x * y)))
    wrt = [x, m]
    grads = [grad(f, v) for v in wrt]
    fn = eg_compile([f, *grads], inputs, backend=backend)
    values = _values(inputs, seed)
    _, *got = fn(*values)
    env = dict(zip(inputs, values, strict=True))
    for g, w in zip(got, evaluate(grads, env), strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-11)
    h = 1e-6
    for v, g in zip(wrt, got, strict=True):
        k = inputs.index(v)
        for pos in np.ndindex(*v.shape):
            up, down = [a.copy() for a in values], [a.copy() for a in values]
            up[k][pos] += h
            down[k][pos] -= h
            numeric = (fn(*up)[0] - fn(*down)[0]) / (2 * h)
            assert abs(numeric - g[pos]) <= 1e-5 * max(1.0, abs(numeric)), (v.name, pos, numeric, g[pos])


@pytest.mark.parametrize("backend", BACKENDS)
def test_reductions_keep_numpy_edge_values(backend: str) -> None:
    v = Symbol("v", shape=(3,))
    z = Symbol("z", shape=(0,))
    outs = [SUM(v), AMAX(v), AMIN(v), PROD(v), SUM(z), PROD(z), MEAN(v)]
    fn = eg_compile(outs, [v, z], backend=backend)
    for row in ([-0.0, -0.0, -0.0], [1.0, np.nan, 2.0], [np.inf, -np.inf, 1.0], [0.0, -0.0, 0.0]):
        values = np.array(row)
        got = fn(values, np.zeros(0))
        want = evaluate(outs, {"v": values, "z": np.zeros(0)})
        for g, w in zip(got, want, strict=True):
            np.testing.assert_array_equal(g, w)
            assert np.signbit(g) == np.signbit(w)  # numpy's signs of zeros: a sum starts from +0.0


@pytest.mark.parametrize("backend", BACKENDS)
def test_integer_sums_wrap_and_bools_count(backend: str) -> None:
    k = Symbol("k", "int64", shape=(2, 3))
    b = Symbol("b", "bool", shape=(3,))
    outs = [
        SUM(k, axis=0),
        SUM(b),
        AMAX(k, axis=1),
        concat([k[0], b * 1]),
        TRANSPOSE(k) > 0,
        take(k, np.array([1, 1, 0]), axis=0),
    ]
    fn = eg_compile(outs, [k, b], backend=backend)
    kv = np.array([[2**62, 3, -1], [2**62, 5, 7]], dtype=np.int64)
    bv = np.array([True, False, True])
    for g, w in zip(fn(kv, bv), evaluate(outs, {"k": kv, "b": bv}), strict=True):
        assert np.asarray(g).dtype == np.asarray(w).dtype
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("backend", BACKENDS)
def test_batches_of_points_and_packed_rows(backend: str) -> None:
    x, m, s = Symbol("x", shape=(4,)), Symbol("m", shape=(2, 4)), Symbol("s")
    outs = [m @ x * s, SUM(x[1:] * x[:-1])]
    fn = eg_compile(outs, [x, m, s], backend=backend)
    rng = np.random.default_rng(5)
    xv, mv, sv = rng.uniform(-1, 1, 4), rng.uniform(-1, 1, (2, 4)), np.array([1.0, 2.0, -3.0])
    got = fn(xv, mv, sv)  # three values of the scalar s: three points, each with the same x and m
    assert got[0].shape == (3, 2) and got[1].shape == ()
    np.testing.assert_allclose(got[0], sv[:, None] * (mv @ xv), rtol=1e-13)
    packed = eg_compile(outs, [x, m, s], backend=backend, packed=True)
    xs = rng.uniform(-1, 1, (3, 4))
    rows = np.concatenate([xs, np.tile(mv.reshape(-1), (3, 1)), sv[:, None]], axis=1)
    out = packed(rows)
    assert out.shape == (3, 3)
    np.testing.assert_allclose(out[:, :2], sv[:, None] * (xs @ mv.T), rtol=1e-13)
    np.testing.assert_allclose(out[:, 2], (xs[:, 1:] * xs[:, :-1]).sum(axis=1), rtol=1e-13)


def test_views_and_fusion_make_few_loops() -> None:
    x = Symbol("x", shape=(100,))
    chain = x
    for _ in range(FUSE_LIMIT - 1):
        chain = eg.sin(chain) * 0.5  # single-use elementwise nodes: one loop body
    f = SUM(chain[::-1][10:90] + x[5:85])  # slices are views: no loop of their own
    plan = plan_loops(lower([f], [x]))
    assert plan is not None
    assert len(plan.loops) <= 4  # the fused chain, the sum (fusing the add) and the copy out


def test_work_buffers_are_reused_once_dead() -> None:
    x = Symbol("x", shape=(1000,))
    t = x
    for _ in range(40):
        t = eg.sin(t)[::-1] * 0.5 + x  # each step's buffer is dead two nests later
    plan = plan_loops(lower([SUM(t)], [x]))
    assert plan is not None
    assert sum(plan.sizes.values()) > 10 * plan.work_bytes  # 40 buffers of 8 KB in the bytes of two
    _assert_live_buffers_apart(plan)


def test_unreadable_programs_fall_back_to_scalarising() -> None:
    x = Symbol("x", shape=(3,))
    three = einsum("i,i,i->", x, x, x)  # three operands: the scalarised path
    assert plan_loops(lower([three], [x])) is None
    fn = eg_compile(three, [x], backend="c")
    np.testing.assert_allclose(fn(np.array([1.0, 2.0, 3.0])), 36.0)


def test_a_long_chain_is_planned_without_recursion() -> None:
    x = Symbol("x", shape=(5,))
    t = x
    for k in range(50_000):  # 10^5 vector nodes, alternating elementwise ops and reversing views
        t = eg.sin(t)[::-1] if k % 2 else t * 0.999 + x
    program = lower([SUM(t)], [x])
    assert len(program.steps) > 100_000
    plan = plan_loops(program)
    assert plan is not None and len(plan.loops) > 10_000
    assert len(emit_vector_loops(plan).units) >= 2
    assert "define i32 @eg_vrun" in emit_vector_ir(plan)[0]


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_chain_of_thousands_of_nodes_builds_and_runs(backend: str) -> None:
    x = Symbol("x", shape=(5,))
    t = x
    for k in range(1000):
        t = eg.sin(t)[::-1] if k % 2 else t * 0.999 + x
    f = SUM(t)
    value = np.linspace(0.0, 1.0, 5)
    np.testing.assert_allclose(eg_compile(f, [x], backend=backend)(value), evaluate(f, {"x": value}), rtol=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
def test_single_precision_inputs_constants_and_input_outputs(backend: str) -> None:
    x, y = Symbol("x", "float32", shape=(4,)), Symbol("y", "float32", shape=(3, 4))
    c32 = eg.const(0.1, "float32")
    table = eg.const(np.array([1.0, 2.0, 3.0]))
    outs = [SUM(eg.sin(x) * x), MEAN(y, axis=0), AMAX(y, axis=1) + c32, x[::-1], table * 2.0, y]
    fn = eg_compile(outs, [x, y], backend=backend)
    xv = np.linspace(-1, 1, 4).astype(np.float32)
    yv = (np.arange(12, dtype=np.float32) / 7).reshape(3, 4)
    for g, w in zip(fn(xv, yv), evaluate(outs, {"x": xv, "y": yv}), strict=True):
        assert np.asarray(g).dtype == np.asarray(w).dtype
        np.testing.assert_allclose(g, w, rtol=1e-6)


def _moves_and_contractions() -> list[eg.Term]:
    """Programs reaching every kind of loop: strided gathers, 2-d index tables, axis tuples, broadcasts."""
    a, b, v = Symbol("a", shape=(2, 3, 4)), Symbol("b", shape=(3, 1)), Symbol("v", shape=(4,))
    m = a[1]  # (3, 4), a view
    index = np.array([[0, 2], [1, 1]], dtype=np.int64)
    return [
        get_op("transpose")(a, axes=(2, 0, 1)) * 2.0,  # a strided view read by a loop
        reshape(get_op("transpose")(m), (12,)),  # reshape of a strided view: gathered
        take(m, index, axis=1),  # a 2-d index table
        take(m, np.array([3, 1]), axis=1),  # evenly spaced: a view
        concat([m, m * 2.0], axis=1),
        b * v + m,  # (3, 1) with (4,): both broadcast
        SUM(a, axis=(0, 2)),
        MEAN(a, axis=(1,)),
        AMAX(a, axis=(0, 1)),
        einsum("ij->ji", m),
        einsum("ijk,k->ij", a, v),
        v @ get_op("transpose")(m),  # vector @ matrix
        get_op("dot")(v, v),
        grad(SUM(eg.sin(take(m, index, axis=1))), a),  # scatter_add with a 2-d index
        grad(SUM(get_op("dot")(m, v) ** 2), v),
    ]


@pytest.mark.parametrize("backend", BACKENDS)
def test_every_kind_of_loop_equals_numpy(backend: str) -> None:
    outs = _moves_and_contractions()
    inputs = [Symbol("a", shape=(2, 3, 4)), Symbol("b", shape=(3, 1)), Symbol("v", shape=(4,))]
    assert plan_loops(lower(outs, inputs)) is not None
    values = _values(inputs, 11)
    got = eg_compile(outs, inputs, backend=backend)(*values)
    for g, w, t in zip(got, evaluate(outs, dict(zip(inputs, values, strict=True))), outs, strict=True):
        assert np.shape(g) == tuple(t.shape)
        np.testing.assert_allclose(g, w, rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("backend", BACKENDS)
def test_packed_rows_of_integer_programs(backend: str) -> None:
    k, x = Symbol("k", "int64", shape=(3,)), Symbol("x", shape=(3,))
    outs = [SUM(k * 2), x * k, k > 1]  # no float64-only entry point: rows go through the typed call
    fn = eg_compile(outs, [k, x], backend=backend, packed=True)
    rows = np.array([[1.0, 2.0, 3.0, 0.5, 0.25, 2.0], [4.0, -1.0, 0.0, 1.0, 1.0, 1.0]])
    want = np.array([[12.0, 0.5, 0.5, 6.0, 0.0, 1.0, 1.0], [6.0, 4.0, -1.0, 0.0, 1.0, 0.0, 0.0]])
    np.testing.assert_array_equal(fn(rows), want)
    np.testing.assert_array_equal(fn(rows[0]), want[0])
