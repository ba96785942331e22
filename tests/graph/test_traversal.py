"""PyTensor's traversals over terms (exprgraph.graph.traversal): orders, cuts, dependency tests, deep chains.

The small cases are PyTensor's own test graphs written with terms; the property tests check the
defining property of each order on random DAGs, and (when PyTensor is installed) that the orders
are PyTensor's own on the same DAGs built in both.
"""

from __future__ import annotations

import random
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from variadic_ops import variadic

from exprgraph import Symbol, const, exp, get_op, sin, symbols
from exprgraph.graph import (
    ancestors,
    apply_depends_on,
    applys_between,
    explicit_graph_inputs,
    general_toposort,
    graph_inputs,
    io_toposort,
    orphans_between,
    truncated_graph_inputs,
    variable_depends_on,
    vars_between,
    walk,
)

f = variadic("traversal_f")
g = variadic("traversal_g")
r1, r2, r3, r4 = symbols("r1 r2 r3 r4")
x, y, z = symbols("x y z")


def _expand(t):
    return list(t.args) or None


# -- PyTensor's small graphs --------------------------------------------------------------------------


def test_walk_breadth_and_depth_first_with_children():
    o1 = f(r1, r2)
    o2 = f(r3, o1)
    assert list(walk([o2], _expand)) == [o2, r3, o1, r1, r2]
    assert list(walk([o2], _expand, bfs=False)) == [o2, o1, r2, r1, r3]
    assert list(walk([o2], _expand, return_children=True)) == [
        (o2, [r3, o1]),
        (r3, None),
        (o1, [r1, r2]),
        (r1, None),
        (r2, None),
    ]
    assert list(walk([1, 1, 2], {1: [2, 3], 2: [4], 3: [4]}.get)) == [1, 2, 3, 4]  # each node once


def test_ancestors_order_blockers_and_laziness():
    o1 = f(r1, r2)
    o2 = f(r3, o1)
    assert list(ancestors([o2])) == [o2, o1, r2, r1, r3]
    lazy = ancestors([o2])
    assert o1 in lazy and list(lazy) == [r2, r1, r3]  # a generator, as upstream
    assert list(ancestors([o2], blockers=[o1])) == [o2, o1, r3]  # a blocker is listed, not entered
    assert list(ancestors(o2)) == list(ancestors([o2]))  # one term is accepted for a list of one
    assert list(graph_inputs([o2])) == [r2, r1, r3]
    assert list(graph_inputs([o2], blockers=[o1])) == [r3]  # only leaves: the blocked node is not one


def test_explicit_graph_inputs_are_the_symbols():
    a = exp(x + const(2.0)) * x - y
    assert list(explicit_graph_inputs(a)) == [y, x]
    assert list(explicit_graph_inputs([x / const(2.0)])) == [x]


def test_vars_orphans_and_applys_between():
    o1 = f(r1, r2)
    o2 = f(r3, o1)
    assert list(vars_between([r1, r2], [o2])) == [o2, o1, r2, r1, r3]
    assert list(orphans_between([r1, r2], [o2])) == [r3]
    assert list(orphans_between([x], [x + y])) == [y]
    o3 = f(r3, o1, f(r3, r4))
    assert list(applys_between([r1, r2], [o3])) == [o3, f(r3, r4), o1]
    # a node given as an input is a cut: neither it nor what is below it is listed
    assert list(applys_between([o1], [o3])) == [o3, f(r3, r4)]
    assert list(applys_between([o3], [o3])) == []
    assert list(orphans_between([o1], [o3])) == [r4, r3]
    # constants are orphans too; a nullary op's term is a node, not an orphan
    nullary = variadic("traversal_source")()
    assert list(orphans_between([x], [x + const(1.0)])) == [const(1.0)]
    assert list(applys_between([], [f(nullary, x)])) == [f(nullary, x), nullary]


def test_io_toposort_cuts_at_inputs_and_handles_shared_and_unconnected_nodes():
    o = f(r1, r2)
    o2 = f(o, r4)
    assert io_toposort([r4], [o2]) == [o, o2]
    r2b = f(r1, r1)
    assert io_toposort([r2b], [f(r2b, r2b)]) == [f(r2b, r2b)]  # an input with an owner cuts there
    assert io_toposort([r2b], [f(r2b, r4)]) == [f(r2b, r4)]
    o0, o1 = f(r1, r2), f(r3, r4)
    assert io_toposort([r1, r2, r3, r4], [o0, o1]) in ([o1, o0], [o0, o1])
    chain = f(o0, r1)
    assert io_toposort([r1, o0], [o0, chain]) == [chain]  # inputs and outputs mixed in a chain
    assert io_toposort([], [o0]) == [o0]
    assert io_toposort([], o0) == [o0]


def test_io_toposort_orderings_add_dependencies():
    a, b = sin(x), exp(y)
    out = a + b
    assert io_toposort([x, y], [out]) == [b, a, out]  # upstream's order: the last operand first
    assert io_toposort([x, y], [out], orderings={b: [a]}) == [a, b, out]  # b must come after a


def test_general_toposort_order_and_cycles():
    deps = {1: [2, 3], 2: [4], 3: [4], 4: None}
    assert general_toposort([1], deps.get) == [4, 3, 2, 1]
    assert general_toposort([1], {1: [2, 2], 2: []}.get) == [2, 1]  # a repeated dependency counts once
    assert general_toposort([], deps.get) == []
    with pytest.raises(ValueError, match="cycles"):
        general_toposort([1], {1: [2], 2: [1]}.get)
    with pytest.raises(ValueError, match="cycles"):
        general_toposort([1], {1: [1]}.get)
    o = f(r1, r2)
    o2 = f(o, r3)
    assert general_toposort([o2], lambda t: t.args) == [r3, r2, r1, o, o2]


def test_dependency_tests():
    o1 = f(r1, r2)
    o2 = f(r1, o1)
    o3 = f(r3, o1, o2)
    assert apply_depends_on(o2, o1) and apply_depends_on(o2, o2)
    assert apply_depends_on(o3, [o1, o2]) and not apply_depends_on(o1, o2)
    x2, y2 = f(x), f(y)
    o = f(x2, y)
    assert variable_depends_on(o, x) and variable_depends_on(o, [x])
    assert not variable_depends_on(o, [y2]) and variable_depends_on(o, [y2, x])
    assert not variable_depends_on(y, [y2]) and variable_depends_on(y, [y])
    assert not variable_depends_on(o, [])


def test_truncated_graph_inputs_cases():
    # PyTensor's cases: (c) marks ancestors to include, (o) outputs, n other nodes
    x2 = f(x)
    y2 = f(y, x2)
    o = g(y2)
    o2 = g(o)
    assert truncated_graph_inputs([o]) == [o]  # no ancestors to include: the outputs
    assert truncated_graph_inputs([o2], [y2]) == [y2]
    assert truncated_graph_inputs([o], [y2, o]) == [o, y2]  # an output that is an ancestor to include
    assert truncated_graph_inputs([o2], [y2, o]) == [o, y2]  # one ancestor below another: both
    assert truncated_graph_inputs([o], [y]) == [x2, y]  # the independent sibling stops the search
    assert truncated_graph_inputs([o2], [y2, z]) == [y2]  # a disconnected ancestor is not returned
    assert truncated_graph_inputs([o2, z], [y2]) == [z, y2]  # an independent output is
    t = f(x, y)
    assert truncated_graph_inputs([g(t, t, x, x)], [t]) == [x, t]  # each once
    assert truncated_graph_inputs([g(x, x, t, t)], [t]) == [t, x]


def test_truncated_graph_inputs_stops_below_a_term_already_returned():
    # upstream's rule: a term met after one it depends on was returned is searched below, not returned
    u = sin(x)
    w = exp(u)
    assert truncated_graph_inputs([g(w, u, y)], [y]) == [y, u]  # u first (last operand first), then w is cut
    assert truncated_graph_inputs([g(u, w, y)], [y]) == [y, w, u]


# -- properties on random DAGs ---------------------------------------------------------------------------


def _dag(choices: list[int], n_leaves: int = 4) -> list:
    """A random DAG of sin/add/mul/sub over symbols and a constant, from a list of choices."""
    pool = [Symbol(f"v{i}") for i in range(n_leaves)] + [const(2.0)]
    ops = [get_op("add"), get_op("mul"), get_op("sub"), get_op("sin")]
    for k in range(0, len(choices) - 2, 3):
        op = ops[choices[k] % 4]
        a, b = pool[choices[k + 1] % len(pool)], pool[choices[k + 2] % len(pool)]
        pool.append(op(a) if op.name == "sin" else op(a, b))
    return pool


dags = st.lists(st.integers(0, 10**6), min_size=3, max_size=90)


@settings(max_examples=60, deadline=None)
@given(dags, st.lists(st.integers(0, 10**6), max_size=4), st.integers(1, 3))
def test_io_toposort_lists_each_node_between_after_its_operands(choices, cut_picks, n_out):
    pool = _dag(choices)
    outs = pool[-n_out:]
    ins = [pool[c % len(pool)] for c in cut_picks]
    order = io_toposort(ins, outs)
    position = {t: i for i, t in enumerate(order)}
    assert len(position) == len(order)
    expected = {t for t in ancestors(outs, ins) if t.args and t not in ins}
    assert set(order) == expected  # exactly the nodes above the cut
    for t in order:
        for a in t.args:
            if a in position:
                assert position[a] < position[t]  # every operand before its user


@settings(max_examples=60, deadline=None)
@given(dags)
def test_general_toposort_respects_dependencies_and_ancestors_reach_everything(choices):
    pool = _dag(choices)
    out = pool[-1]
    order = general_toposort([out], lambda t: t.args)
    position = {t: i for i, t in enumerate(order)}
    assert set(order) == set(ancestors([out])) == set(walk([out], _expand)) == set(vars_between([], [out]))
    assert all(position[a] < position[t] for t in order for a in t.args)


@settings(max_examples=60, deadline=None)
@given(dags, st.lists(st.integers(0, 10**6), max_size=3))
def test_truncated_graph_inputs_cut_the_outputs_from_the_rest(choices, picks):
    pool = _dag(choices)
    out = pool[-1]
    include = [pool[c % len(pool)] for c in picks]
    found = truncated_graph_inputs([out], include)
    assert len(found) == len(set(found))
    # nothing else is needed: every leaf the output uses is reached only through a returned term
    assert not [t for t in ancestors([out], found) if not t.args and t not in found]
    reached = set(ancestors([out]))
    assert {t for t in include if t in reached} <= set(found)  # connected ancestors to include come back
    for t in found:
        if t not in include:
            assert not variable_depends_on(t, include)  # the others do not depend on them


def test_traversals_agree_with_pytensor_on_random_dags():
    ps = pytest.importorskip("pytensor.scalar")
    pt_traversal = pytest.importorskip("pytensor.graph.traversal")
    rng = random.Random(7)
    for _ in range(120):
        ours, theirs = _twin_dags(ps, rng)
        back = dict(zip(theirs, ours, strict=True))
        outs = rng.sample(range(len(ours)), rng.randint(1, 3))
        cut = [rng.randrange(len(ours)) for _ in range(rng.randint(0, 3))]
        e_out, p_out = [ours[i] for i in outs], [theirs[i] for i in outs]
        e_in, p_in = [ours[i] for i in cut], [theirs[i] for i in cut]
        assert io_toposort(e_in, e_out) == [back[a.outputs[0]] for a in pt_traversal.io_toposort(p_in, p_out)]
        assert list(ancestors(e_out, e_in)) == [back[v] for v in pt_traversal.ancestors(p_out, blockers=p_in)]
        assert list(orphans_between(e_in, e_out)) == [back[v] for v in pt_traversal.orphans_between(p_in, p_out)]
        assert truncated_graph_inputs(e_out, e_in) == [
            back[v] for v in pt_traversal.truncated_graph_inputs(p_out, p_in)
        ]
        for bfs in (True, False):
            theirs_walk = pt_traversal.walk(p_out, lambda v: v.owner.inputs if v.owner else None, bfs=bfs)
            assert list(walk(e_out, _expand, bfs=bfs)) == [back[v] for v in theirs_walk]
        theirs_sorted = pt_traversal.general_toposort(p_out, lambda v: v.owner.inputs if v.owner else None)
        assert general_toposort(e_out, lambda t: t.args) == [back[v] for v in theirs_sorted]


def _twin_dags(ps, rng: random.Random) -> tuple[list, list]:
    """The same random DAG built with terms and with PyTensor scalars (no two nodes alike)."""
    ours = [Symbol(f"v{i}") for i in range(3)] + [const(2.0)]
    theirs = [ps.float64(f"v{i}") for i in range(3)] + [ps.constant(2.0)]
    builders = [("add", ps.add), ("mul", ps.mul), ("sub", ps.sub), ("exp", ps.exp)]
    for _ in range(rng.randint(1, 25)):
        name, build = rng.choice(builders)
        i, j = rng.randrange(len(ours)), rng.randrange(len(ours))
        term = get_op(name)(ours[i]) if name == "exp" else get_op(name)(ours[i], ours[j])
        if term in ours:
            continue  # interning would merge it: keep the twins node for node
        ours.append(term)
        theirs.append(build(theirs[i]) if name == "exp" else build(theirs[i], theirs[j]))
    return ours, theirs


# -- deep chains at the default recursion limit -----------------------------------------------------------


def test_every_traversal_is_iterative_on_a_chain_of_100000_nodes():
    assert sys.getrecursionlimit() <= 3000
    n = 100_000
    t = x
    for i in range(n):
        t = sin(t) if i % 2 else t * y
    mid = t.args[0]
    assert len(io_toposort([x, y], [t])) == n
    assert len(io_toposort([x, y], [t], orderings={t: [mid]})) == n
    assert len(general_toposort([t], lambda u: u.args)) == n + 2
    assert sum(1 for _ in walk([t], _expand)) == n + 2
    assert sum(1 for _ in walk([t], _expand, bfs=False)) == n + 2
    assert sum(1 for _ in vars_between([x], [t])) == n + 2
    assert list(orphans_between([x], [t])) == [y]
    assert sum(1 for _ in applys_between([mid], [t])) == 1
    assert variable_depends_on(t, x) and apply_depends_on(t, [x * y])
    assert truncated_graph_inputs([t], [x * y]) == [y, x * y]  # y: the other operand of every mul above
    assert set(truncated_graph_inputs([t], [x])) == {x, y}
