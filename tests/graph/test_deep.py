"""Deep graphs (chains of 10^5 nodes) at the default recursion limit: every traversal is iterative."""

from __future__ import annotations

import sys

from exprgraph import cos, get_op, sin, symbols
from exprgraph.graph import (
    EquilibriumGraphRewriter,
    FunctionGraph,
    History,
    MergeOptimizer,
    PatternNodeRewriter,
    in2out,
    out2in,
)

N = 100_000
x, y = symbols("x y")
add, mul = get_op("add"), get_op("mul")


def test_recursion_limit_is_the_default():
    assert sys.getrecursionlimit() <= 3000


def _chain(n: int):
    t = x
    for i in range(n):
        t = sin(t) if i % 2 else t * 1
    return t


def test_walks_and_equilibrium_on_a_deep_chain():
    mul_one = PatternNodeRewriter((mul, "x", 1), "x")
    fg = FunctionGraph(outputs=[_chain(N)])
    prof = in2out(mul_one).rewrite(fg)
    assert prof.applied == N // 2 and fg.node_count == N // 2
    (out,) = fg.outputs
    assert out.depth == N // 2 and out.op is get_op("sin")

    n = N // 5  # the other drivers on a shorter chain (the suite stays fast; the code paths are the same)
    fg = FunctionGraph(outputs=[_chain(n)])
    prof = out2in(mul_one, PatternNodeRewriter(("sin", "x"), ("cos", "x"))).rewrite(fg)
    assert prof.applied == n and fg.outputs[0].op is get_op("cos")

    fg = FunctionGraph(outputs=[_chain(n)])
    prof = EquilibriumGraphRewriter([mul_one]).rewrite(fg)
    assert prof.stop_reason == "fixpoint" and fg.node_count == n // 2


def test_merge_and_history_on_a_deep_chain():
    a = x
    b = x
    for _ in range(N // 4):
        a = cos(a + y)
        b = cos(y + b)  # the same computation with commuted operands
    fg = FunctionGraph(outputs=[a - b])
    prof = MergeOptimizer(commutative=True).rewrite(fg)
    assert prof.merged == N // 4  # one commutative merge per level, each found after the one below
    (out,) = fg.outputs
    assert out.args[0] is out.args[1]
    assert fg.node_count == N // 2 + 1

    h = History()
    fg = FunctionGraph(outputs=[_chain(N // 4)], features=[h])
    in2out(PatternNodeRewriter((mul, "x", 1), "x")).rewrite(fg)
    assert len(h) == N // 8
    h.goto(0)
    assert fg.outputs == [_chain(N // 4)]
