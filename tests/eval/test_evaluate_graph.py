"""evaluate() over the DAG: shared nodes once, buffers reused safely, memory freed, deep chains."""

from __future__ import annotations

import gc
import sys
import tracemalloc
import uuid

import hypothesis.strategies as st
import numpy as np
import pytest
from hypothesis import given, settings

import exprgraph as eg
from exprgraph import Op, Symbol, Term, get_op, register_op, symbols
from exprgraph.core.traversal import schedule
from exprgraph.eval import evaluate

x, y, z = symbols("x y z")


def counting_op(calls: list) -> Op:
    """A fresh op whose impl appends to ``calls`` each time it runs."""

    def impl(v):
        calls.append(1)
        return np.sin(v)

    name = f"counted_{uuid.uuid4().hex[:10]}"
    return register_op(Op(name, 1, lambda args, attr: ("float64", args[0].shape), impl=impl))


# -- shared nodes ------------------------------------------------------------------------------------


def test_shared_subterm_is_computed_once():
    calls: list = []
    f = counting_op(calls)
    s = f(x * y)
    e = s * s + eg.exp(s) - s / (1 + s)
    got = evaluate(e, {x: np.arange(5.0), y: 2.0})
    assert len(calls) == 1
    v = np.sin(np.arange(5.0) * 2.0)
    np.testing.assert_allclose(got, v * v + np.exp(v) - v / (1 + v))


def test_shared_subterm_across_outputs_is_computed_once():
    calls: list = []
    f = counting_op(calls)
    s = f(x)
    got = evaluate([s + 1, s * 2, s, eg.log(s + 3)], {x: 0.5})
    assert len(calls) == 1
    assert got[2] == np.sin(0.5)
    assert got[0] == np.sin(0.5) + 1


def test_diamond_dag_of_depth_40_is_linear():
    # the tree form has 2**40 leaves; the DAG 40 nodes (only evaluation in DAG order can finish)
    calls: list = []
    f = counting_op(calls)
    t = f(x)
    for _ in range(40):
        t = t * 0.5 + t * 0.5
    assert evaluate(t, {x: 0.25}) == pytest.approx(np.sin(0.25))
    assert len(calls) == 1


def test_schedule_is_toposort_with_read_counts():
    s = x * y
    outputs = (eg.add(s, s, x), eg.sin(s), x, eg.add(s, s, x))
    order, reads = schedule(outputs)
    assert order == eg.toposort(outputs)
    # s: 2 slots in the add + 1 in sin; x: 1 in s, 1 in the add, 1 as an output; outputs +1 per listing
    assert reads[s] == 3
    assert reads[x] == 3
    assert reads[outputs[0]] == 2
    assert reads[outputs[1]] == 1


# -- user buffers are never written --------------------------------------------------------------------


def test_user_inputs_are_never_modified():
    rng = np.random.default_rng(3)
    a, b = rng.normal(size=100), rng.normal(size=100)
    a0, b0 = a.copy(), b.copy()
    terms = [
        eg.sin(x),  # a unary op straight on an input
        x * y,
        eg.exp(eg.sin(x) * y) + x,
        -x,
        abs(y) + eg.sqrt(abs(x)),
        x,  # an output that is an input
        eg.add(x, y, x, y),
    ]
    for t in terms:
        evaluate(t, {x: a, y: b})
    evaluate(terms, {x: a, y: b})
    np.testing.assert_array_equal(a, a0)
    np.testing.assert_array_equal(b, b0)


def test_read_only_inputs_and_array_constants_work():
    a = np.arange(4.0)
    a.flags.writeable = False
    c = eg.const([1.0, 2.0, 3.0, 4.0])
    got = evaluate(eg.exp(eg.sin(x * c) + c), {x: a})
    cv = np.array([1.0, 2.0, 3.0, 4.0])
    np.testing.assert_allclose(got, np.exp(np.sin(a * cv) + cv))
    assert c.value.array.tolist() == [1.0, 2.0, 3.0, 4.0]


def test_output_buffer_is_not_reused_by_a_later_node():
    # t is an output and also read by later nodes: writing into it would corrupt the result
    t = x * 2
    u = eg.sin(t)
    got_t, got_u = evaluate([t, u], {x: np.arange(3.0)})
    np.testing.assert_array_equal(got_t, np.arange(3.0) * 2)
    np.testing.assert_array_equal(got_u, np.sin(np.arange(3.0) * 2))


def test_views_returned_by_impls_are_not_overwritten():
    # transpose(t) is a view of t's buffer: t must not be reused in place while the view lives
    A = Symbol("A", shape=(3, 3))
    a = np.arange(9.0).reshape(3, 3)
    t = A * 2
    e = eg.transpose(t) + eg.sin(t) * 0 + eg.exp(t) * 0
    np.testing.assert_array_equal(evaluate(e, {A: a}), (a * 2).T)
    e2 = eg.sum(eg.transpose(t) - eg.exp(t), axis=0)
    np.testing.assert_allclose(evaluate(e2, {A: a}), np.sum((a * 2).T - np.exp(a * 2), axis=0))


def test_results_of_impls_are_never_overwritten():
    # transpose of an input is a view of the user's array; an identity impl returns it outright
    A = Symbol("A", shape=(2, 2))
    a = np.array([[1.0, 2.0], [3.0, 4.0]])
    a0 = a.copy()
    np.testing.assert_array_equal(evaluate(eg.sin(eg.transpose(A)) + 1, {A: a}), np.sin(a0.T) + 1)
    same = register_op(
        Op(f"same_{uuid.uuid4().hex[:10]}", 1, lambda args, attr: ("float64", args[0].shape), impl=lambda v: v)
    )
    kept = np.arange(3.0)
    keeper = register_op(
        Op(f"keep_{uuid.uuid4().hex[:10]}", 0, lambda args, attr: ("float64", (3,)), impl=lambda: kept)
    )
    b = np.arange(3.0)
    np.testing.assert_array_equal(evaluate(eg.exp(same(x)) * 2, {x: b}), np.exp(np.arange(3.0)) * 2)
    np.testing.assert_array_equal(evaluate(eg.exp(keeper()) - 1, {}), np.exp(np.arange(3.0)) - 1)
    np.testing.assert_array_equal(a, a0)
    np.testing.assert_array_equal(b, np.arange(3.0))
    np.testing.assert_array_equal(kept, np.arange(3.0))


def test_variadic_ops_with_repeated_dead_operand():
    a, b = np.arange(4.0), np.full(4, 10.0)
    t = x * 3
    np.testing.assert_array_equal(evaluate(eg.add(t, y, t), {x: a, y: b}), a * 3 + b + a * 3)
    np.testing.assert_array_equal(evaluate(eg.mul(y, t, t), {x: a, y: b}), b * (a * 3) * (a * 3))
    np.testing.assert_array_equal(evaluate(eg.add(y, t, x * 1), {x: a, y: b}), b + a * 3 + a)
    # broadcasting: the dead operand is smaller than the result, so it cannot hold it
    c = np.arange(8.0).reshape(2, 4)
    np.testing.assert_array_equal(evaluate(eg.add(t, y, z), {x: a, y: b, z: c}), a * 3 + b + c)
    np.testing.assert_array_equal(evaluate(t + z, {x: a, z: c}), a * 3 + c)


# -- random DAGs against a plain reference evaluator ---------------------------------------------------

REFERENCE = {
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "truediv": np.true_divide,
    "maximum": np.maximum,
    "lt": np.less,
    "sin": np.sin,
    "exp": np.exp,
    "neg": np.negative,
    "abs": np.abs,
    "log": np.log,
    "where": np.where,
    "transpose": np.transpose,
}
#: an impl that hands back its operand itself: its result must never be written into
SAME = register_op(
    Op(f"same_{uuid.uuid4().hex[:10]}", 1, lambda args, attr: (args[0].dtype, args[0].shape), impl=lambda v: v)
)
REFERENCE[SAME.name] = lambda v: v
UNARY = ("sin", "exp", "neg", "abs", "log", "sigmoid", SAME.name, SAME.name)
REFERENCE["sigmoid"] = get_op("sigmoid").impl
BINARY = ("add", "sub", "mul", "truediv", "maximum", "lt")


def reference(outputs: list[Term], env: dict) -> list:
    """Plain evaluation: every node a fresh array, nothing freed (all inputs are floats: no casts)."""
    vals: dict[Term, object] = {}
    for node in eg.postorder(outputs):
        if node.is_symbol:
            vals[node] = np.asarray(env[node], dtype=np.float64)
        elif node.is_const:
            vals[node] = np.float64(node.value)
        elif node.op.name == "where":
            c, a, b = (vals[arg] for arg in node.args)
            vals[node] = np.where(c, a, b)
        else:
            args = [vals[a] for a in node.args]
            if node.op.name in ("add", "mul") and len(args) > 2:
                out = REFERENCE[node.op.name](args[0], args[1])
                for v in args[2:]:
                    out = REFERENCE[node.op.name](out, v)
            else:
                out = REFERENCE[node.op.name](*args)
            vals[node] = out
    return [vals[t] for t in outputs]


@st.composite
def programs(draw):
    """A random DAG over x, y, z, many nodes shared, with a few outputs."""
    nodes: list[Term] = [x, y, z, eg.const(0.5)]
    floats: list[Term] = list(nodes)
    for _ in range(draw(st.integers(1, 25))):
        kind = draw(st.sampled_from(("unary", "binary", "binary", "nary", "where")))
        # prefer recent nodes so chains get deep, but reach back for sharing
        pick = st.integers(0, len(floats) - 1).map(lambda k: floats[k])
        if kind == "unary":
            t = get_op(draw(st.sampled_from(UNARY)))(draw(pick))
        elif kind == "binary":
            op = draw(st.sampled_from(BINARY))
            a, b = draw(pick), draw(pick)
            t = get_op(op)(a, b)
            if op == "lt":
                t = eg.where(t, a, b)
        elif kind == "nary":
            t = get_op(draw(st.sampled_from(("add", "mul"))))(*draw(st.lists(pick, min_size=3, max_size=5)))
        else:
            t = eg.where(draw(pick) < draw(pick), draw(pick), draw(pick))
        floats.append(t)
        nodes.append(t)
    outputs = draw(st.lists(st.sampled_from(nodes[4:]), min_size=1, max_size=3))
    return outputs


@settings(max_examples=150, deadline=None)
@given(
    outputs=programs(),
    shape_x=st.sampled_from([(), (5,), (2, 5)]),
    shape_y=st.sampled_from([(), (5,)]),
    seed=st.integers(0, 2**16),
)
def test_random_dags_match_a_plain_reference(outputs, shape_x, shape_y, seed):
    rng = np.random.default_rng(seed)
    env = {x: rng.normal(size=shape_x), y: rng.normal(size=shape_y), z: rng.normal(size=(5,))}
    before = {k: v.copy() for k, v in env.items()}
    with np.errstate(all="ignore"):
        want = reference(outputs, env)
    got = evaluate(outputs, env)
    for g, w, t in zip(got, want, outputs, strict=True):
        assert np.dtype(t.dtype) == g.dtype
        np.testing.assert_array_equal(g, w)
    for k, v in env.items():
        np.testing.assert_array_equal(v, before[k])


# -- memory ---------------------------------------------------------------------------------------------

N = 10**6
ARRAY_BYTES = 8 * N


def _peak(fn) -> int:
    tracemalloc.start()
    try:
        result = fn()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    del result
    return peak


def test_chain_over_a_large_array_does_not_keep_intermediates():
    a = np.random.default_rng(0).normal(size=N)
    t = x
    for k in range(50):
        t = t + float(k)
    peak = _peak(lambda: evaluate(t, {x: a}))
    assert peak < 5 * ARRAY_BYTES, f"peak {peak / ARRAY_BYTES:.1f} arrays"
    np.testing.assert_allclose(evaluate(t, {x: a}), a + sum(range(50)))


def test_intermediates_are_freed_even_without_in_place_ops():
    # an impl op gets no out= buffer, so every node allocates: only freeing keeps the peak low
    op = register_op(
        Op(f"shift_{uuid.uuid4().hex[:10]}", 1, lambda args, attr: ("float64", args[0].shape), impl=lambda v: v + 1.0)
    )
    a = np.zeros(N)
    t = x
    for _ in range(50):
        t = op(t)
    peak = _peak(lambda: evaluate(t, {x: a}))
    assert peak < 5 * ARRAY_BYTES, f"peak {peak / ARRAY_BYTES:.1f} arrays"
    assert evaluate(t, {x: a})[0] == 50.0


def test_unary_chain_reuses_one_buffer():
    a = np.random.default_rng(1).uniform(size=N)
    t = x * 1.0
    for _ in range(30):
        t = eg.sin(eg.exp(t))
    peak = _peak(lambda: evaluate(t, {x: a}))
    assert peak < 2 * ARRAY_BYTES, f"peak {peak / ARRAY_BYTES:.1f} arrays"


# -- deep chains ------------------------------------------------------------------------------------------


def test_million_node_chain_evaluates_at_default_recursion_limit():
    assert sys.getrecursionlimit() <= 10_000
    one, half = eg.const(1.0), eg.const(0.5)
    t = x
    gc.disable()  # building a million nodes is several times faster without collector passes
    try:
        for _ in range(500_000):
            t = t + one
            t = t * half
    finally:
        gc.enable()
    got = evaluate(t, {x: np.array([0.0, 2.0])})
    # the map v -> (v+1)/2 converges to 1
    np.testing.assert_allclose(got, [1.0, 1.0])
