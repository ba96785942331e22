"""Reverse mode: the wrt forms, fan-in, linear size, deep chains, errors."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import exprgraph as eg
from exprgraph.core import Op, register_op
from exprgraph.core.grad_tools import product
from exprgraph.core.op import get_op
from exprgraph.core.stdops import real
from exprgraph.diff import DifferentiationError, backprop, grad, sparse_hessian

x, y, z = eg.symbols("x y z")


def test_wrt_forms() -> None:
    f = x * y + eg.sin(z)
    one = grad(f, x)
    assert one is y
    assert grad(f, [z, x]) == [eg.cos(z), y]
    assert grad(f, (y,)) == [x]
    assert grad(f, "y") is x
    d = grad(f)
    assert list(d) == [x, y, z]  # every free symbol, by name
    assert d[z] is eg.cos(z)


def test_variable_not_in_f_gives_zero() -> None:
    assert grad(x * 2.0, y) is eg.const(0.0)
    assert grad(x * 2.0, "w") is eg.const(0.0)


def test_fan_in_is_summed_once() -> None:
    f = x * x * x
    d = grad(f, x)
    assert float(eg.evaluate(d, {x: 2.0})) == 12.0
    # a node reached along several paths gets one variadic add of its contributions
    assert d.op.name == "add"


def test_gradient_with_respect_to_an_intermediate_node() -> None:
    u = x * y
    f = eg.sin(u) + u
    d = grad(f, [u, x])
    assert float(eg.evaluate(d[0], {x: 0.0, y: 1.0})) == 2.0
    assert float(eg.evaluate(d[1], {x: 0.0, y: 1.0})) == 2.0


def test_non_scalar_f_raises() -> None:
    v = eg.Symbol("v", shape=(3,))
    with pytest.raises(DifferentiationError, match="scalar"):
        grad(v * 2.0, v)


def test_op_without_gradient_rule_raises() -> None:
    name = "test_nograd_op"
    op = eg.core.op.REGISTRY.get(name) if hasattr(eg.core, "op") else None
    if op is None:
        op = register_op(Op(name, 1, real, impl=np.sin, doc="an op without a gradient rule"), replace=True)
    with pytest.raises(DifferentiationError, match="no gradient rule"):
        grad(op(x) * y, x)
    # not on a path to the variable: fine
    assert grad(op(x) * y, y) is op(x)


def test_backprop_with_seeds_and_several_outputs() -> None:
    v = eg.Symbol("v", shape=(2,))
    adj = backprop([v * 3.0, eg.sum(v)], [eg.const(np.array([1.0, 2.0])), 1.0], [v])
    np.testing.assert_allclose(eg.evaluate(adj[v], {v: np.zeros(2)}), [4.0, 7.0])


def _bench_f(n: int) -> tuple[eg.Term, list[eg.Term]]:
    xs = [eg.Symbol(f"x{i}") for i in range(n + 1)]
    return eg.add(*(eg.sin(xs[i] * xs[i + 1]) + eg.exp(xs[i]) / (1 + xs[i] ** 2) for i in range(n))), xs


def test_all_partials_are_at_most_twice_the_size_of_f() -> None:
    f, xs = _bench_f(300)
    d = grad(f, xs)
    assert len(eg.postorder(d)) <= 2 * f.size
    rng = np.random.default_rng(0)
    env = {s: rng.uniform(-1, 1) for s in xs}
    i = 7
    expected = (
        np.cos(env[xs[i]] * env[xs[i + 1]]) * env[xs[i + 1]]
        + np.cos(env[xs[i - 1]] * env[xs[i]]) * env[xs[i - 1]]
        + np.exp(env[xs[i]]) * (1 - env[xs[i]]) ** 2 / (1 + env[xs[i]] ** 2) ** 2
    )
    assert float(eg.evaluate(d[i], env)) == pytest.approx(expected, rel=1e-12)


def _chain(k: int) -> eg.Term:
    f = x
    for _ in range(k):
        f = eg.sin(f) * f + x
    return f


def test_deep_chain_size_is_linear_in_k() -> None:
    sizes = [grad(_chain(k), x).size for k in (10, 20, 40)]
    assert sizes[1] - sizes[0] == (sizes[2] - sizes[1]) // 2  # a constant number of nodes per level
    assert sizes[2] < 10 * 40


def test_deep_chain_value_matches_forward_recurrence() -> None:
    k, x0 = 30, 0.3
    f, df = x0, 1.0
    for _ in range(k):  # d(sin(f)*f + x) = (cos(f)*f + sin(f)) df + 1
        f, df = np.sin(f) * f + x0, (np.cos(f) * f + np.sin(f)) * df + 1.0
    assert float(eg.evaluate(grad(_chain(k), x), {x: x0})) == pytest.approx(df, rel=1e-12)


def test_chain_of_100k_nodes_at_the_default_recursion_limit() -> None:
    assert sys.getrecursionlimit() <= 10_000
    f = x
    for i in range(50_000):
        f = eg.tanh(f) + (0.5 if i % 2 else y)
    d = grad(f, [x, y])
    assert d[0].size > 100_000
    values = eg.evaluate(d, {x: 0.1, y: 0.2})
    assert all(np.isfinite(values))


def test_the_collector_is_paused_during_a_sweep_and_restored() -> None:
    import gc

    seen = []

    def spy(node: eg.Term, g: eg.Term) -> tuple:
        seen.append(gc.isenabled())
        return (g,)

    op = register_op(Op("test_spy_op", 1, real, ufunc=np.negative, grad=spy), replace=True)
    assert gc.isenabled()
    grad(op(x) * y, x)
    assert seen == [False] and gc.isenabled()
    bad = register_op(Op("test_spy_bad", 1, real, ufunc=np.negative, grad=lambda n, g: 1 / 0), replace=True)
    with pytest.raises(ZeroDivisionError):
        grad(bad(x), x)
    assert gc.isenabled()  # restored after an error too
    gc.disable()
    try:
        grad(op(x), x)
        assert not gc.isenabled()  # a caller's own pause is left alone
    finally:
        gc.enable()


def _products_by_one(terms: list[eg.Term]) -> list[eg.Term]:
    """The products by the float constant 1.0 or -1.0 among the nodes of ``terms``."""
    seen: set[eg.Term] = set()
    stack = list(terms)
    out = []
    while stack:
        t = stack.pop()
        if t in seen:
            continue
        seen.add(t)
        stack.extend(t.args)
        if t.op.name == "mul" and any(
            a.op.name == "const" and a.attr.__class__ is float and abs(a.attr) == 1.0 for a in t.args
        ):
            out.append(t)
    return out


def test_a_product_by_minus_one_is_a_negation() -> None:
    m = eg.const(-1.0)
    neg = get_op("neg")
    for t in (x * y, eg.sin(x), 2.5 * x):
        # (-1.0)*t -> -t: one neg node (no new constant: -(2.5*x) is not rebuilt as (-2.5)*x)
        assert product(m, (t,)) is eg.Term(neg, (t,)) and product(t, (m,)) is eg.Term(neg, (t,))
    assert product(m, (-x,)) is x and product(-x, (m,)) is x  # -(-x) -> x
    assert product(m, (eg.const(2.0),)) is eg.const(-2.0)  # constants multiply
    # another dtype: the product decides the dtype, so it stays a product
    x32, i = eg.Symbol("x32", "float32"), eg.Symbol("i", "int64")
    assert product(m, (x32,)).op.name == "mul" and product(m, (i,)).op.name == "mul"


def test_minus_one_times_t_and_minus_t_have_the_same_bits() -> None:
    m = eg.const(-1.0)
    folded = product(m, (x * y,))
    kept = eg.Term(get_op("mul"), (m, x * y))  # what the sweeps built before the fold
    values = np.array([0.0, -0.0, 1.0, -1.5, 5e-324, 1e308, np.inf, -np.inf, np.nan, 3.25])
    with np.errstate(all="ignore"):
        a = np.asarray(eg.evaluate(folded, {x: values, y: values[::-1]}), dtype=np.float64)
        b = np.asarray(eg.evaluate(kept, {x: values, y: values[::-1]}), dtype=np.float64)
    nan = np.isnan(b)  # (a nan's sign is the processor's choice)
    assert np.array_equal(nan, np.isnan(a)) and a[~nan].tobytes() == b[~nan].tobytes()


@settings(max_examples=60, deadline=None)
@given(st.floats(-3.0, 3.0), st.floats(-3.0, 3.0))
def test_second_derivatives_build_no_product_by_one(a: float, b: float) -> None:
    f = x * y * eg.cos(x - y) + x * x
    h = sparse_hessian(f, [x, y])
    assert _products_by_one(h.values) == []
    # the numbers: the Hessian by hand (u = x - y)
    su, cu = np.sin(a - b), np.cos(a - b)
    want = {
        (0, 0): -2.0 * b * su - a * b * cu + 2.0,
        (1, 0): cu + b * su - a * su + a * b * cu,
        (1, 1): 2.0 * a * su - a * b * cu,
    }
    want[0, 1] = want[1, 0]
    got = [float(v) for v in eg.evaluate(h.values, {x: a, y: b})]
    for (r, c), v in zip(zip(h.rows, h.cols, strict=True), got, strict=True):
        assert v == pytest.approx(want[r, c], rel=1e-12, abs=1e-12)
