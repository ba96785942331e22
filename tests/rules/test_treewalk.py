"""The one bottom-up walk (rules.treewalk.Walk) and the one op index (rules.opindex.OpIndex)."""

from __future__ import annotations

import sys

import pytest

from exprgraph import Symbol, add, const, get_op, mul, sin, symbols
from exprgraph.errors import RewriteLimitError
from exprgraph.rules.opindex import OpIndex
from exprgraph.rules.treewalk import Walk, walk_up

x, y = symbols("x y")


def keep(node, cur):
    return cur, None


def test_a_dag_is_visited_once_per_distinct_term():
    shared = sin(x) * y
    t = shared + shared * shared
    seen = []

    def leave(node, cur):
        seen.append(node)
        return cur, None

    walk = Walk(leave=leave, memo={})
    assert walk.run(t) is t
    assert len(seen) == len(set(seen)) == t.size == walk.visited


def test_leaves_final_skips_the_leaves():
    seen = []
    walk = Walk(leave=lambda node, cur: (seen.append(node), (cur, None))[1], memo={}, leaves_final=True)
    walk.run(x * y + 1)
    assert all(n.args for n in seen) and len(seen) == 2


def test_results_are_walked_again_to_a_fixpoint():
    # x*1 -> x, walked again until nothing applies: ((x*1)*1)*1 -> x
    mul_op = get_op("mul")

    def leave(node, cur):
        if cur.op is mul_op and cur.args[1] is const(1):
            return cur.args[0], "mul_one"
        return cur, None

    t = x
    for _ in range(5):
        t = t * 1
    walk = Walk(leave=leave, memo={}, fixpoint=True)
    assert walk.run(sin(t) + t) is sin(x) + x
    # one rewrite: each parent, rebuilt around x, is x*1 again, whose normal form is known
    assert walk.steps == 1 and walk.visited == (sin(t) + t).size  # x, 1, five products, sin and the sum


def test_a_cycle_is_reported_at_once_naming_the_cause():
    def swap(node, cur):  # x + y -> y + x and back
        return (add(*reversed(cur.args)), swap) if cur.op is add else (cur, None)

    with pytest.raises(RewriteLimitError, match="'swap' cycles") as err:
        Walk(leave=swap, memo={}, fixpoint=True).run(sin(x + y))
    assert err.value.rule == "swap"

    def wrap(node, cur):  # x -> sin(x): x's normal form would need itself
        return (sin(cur), wrap) if cur is x else (cur, None)

    with pytest.raises(RewriteLimitError, match="'wrap' cycles"):
        Walk(leave=wrap, memo={}, fixpoint=True).run(x)


def test_a_growing_rewrite_stops_at_max_steps():
    def count_up(node, cur):  # n -> n + 1 on int constants, forever
        return (const(cur.value + 1), count_up) if cur.op.name == "const" else (cur, None)

    with pytest.raises(RewriteLimitError, match="within 50 steps") as err:
        Walk(leave=count_up, memo={}, fixpoint=True, max_steps=50).run(const(0) + x)
    assert err.value.rule == "count_up" and err.value.steps == 51


def test_plain_trees_with_terms_inside_use_the_term_walk():
    calls = []

    def leave_term(node, cur):
        calls.append(cur)
        return (cur.args[0], "mul_one") if cur.op is mul and cur.args[1] is const(1) else (cur, None)

    def leave(node, cur):  # ("pair", a, b) -> a tuple walked again as a term: a + b
        if isinstance(cur, tuple) and cur[0] == "pair":
            return add(cur[1], cur[2]), "pair"
        return cur, None

    tree = [("pair", x * 1, y), {"k": (x * 1, "text")}]
    out = Walk(leave=leave, leave_term=leave_term, memo={}, fixpoint=True).run(tree)
    assert out == [x + y, {"k": (x, "text")}]
    assert sum(c is x * 1 for c in calls) == 1  # x*1 met twice, rewritten once


def test_enter_rewrites_before_the_children():
    order = []

    def enter(node):
        order.append(node)
        return node

    t = sin(x) + y
    assert walk_up(t, keep, memo={}, enter=enter) is t
    assert order[0] is t and order[1] is sin(x)  # parents first


def test_deep_trees_need_no_recursion():
    assert sys.getrecursionlimit() <= 3000
    deep: object = 0
    for _ in range(100_000):
        deep = (deep,)
    depth = 0

    def count(node, cur):
        nonlocal depth
        depth += isinstance(cur, tuple)
        return cur, None

    assert walk_up(deep, count) == deep and depth == 100_000
    t = x
    for _ in range(100_000):
        t = sin(t)
    assert walk_up(t, keep, memo={}) is t


def test_the_op_index_keeps_order_and_says_who_reaches_leaves():
    sym, add_op = get_op("symbol"), get_op("add")
    index = OpIndex([("a", [add_op]), ("every", None), ("b", [add_op, mul]), ("never", [])])
    assert index.get(add_op) == ("a", "every", "b")
    assert index.get(mul) == ("every", "b")
    assert index.get(get_op("sin")) == index.wild == ("every",)
    assert index.reaches_leaves
    narrow = OpIndex([("a", [add_op]), ("s", [sym])])
    assert narrow.get(get_op("sin")) == () and narrow.reaches_leaves
    assert not OpIndex([("a", [add_op])]).reaches_leaves
    assert Symbol("z").op is sym
