"""Operands held in the term itself (C base): `args` made lazily, sizes, keys, freeing, re-interning."""

from __future__ import annotations

import gc
import math
import sys
import weakref

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import exprgraph as eg
from exprgraph.core import termbase, walk

native = termbase.native()
needs_native = pytest.mark.skipif(not native, reason="the C term base is not built")

#: (builder, arity): unary, binary and variadic constructions
BUILDERS = (
    (eg.sin, 1),
    (eg.exp, 1),
    (lambda a, b: a * b, 2),
    (lambda a, b: a - b, 2),
    (lambda a, b, c: eg.add(a, b, c), 3),
    (lambda a, b, c: eg.where(eg.lt(a, b), b, c), 3),
)

steps_of = st.lists(
    st.tuples(st.integers(0, len(BUILDERS) - 1), st.lists(st.integers(0, 10_000), min_size=3, max_size=3)),
    min_size=1,
    max_size=40,
)


@settings(max_examples=60, deadline=None)
@given(steps=steps_of)
def test_args_read_back_the_operands_and_rebuild_the_same_term(steps: list) -> None:
    # every built term's args are exactly its operands (the same objects, in order), read twice
    # the same, and Term(op, args, attr) / find_term give the term itself
    x, y = eg.Symbol("x_inl"), eg.Symbol("y_inl")
    built = [x, y, eg.const(2.5)]
    for k, picks in steps:
        fn, arity = BUILDERS[k]
        operands = [built[i % len(built)] for i in picks[:arity]]
        t = fn(*operands)
        built.append(t)
        if t.op.name == "where":
            assert t.args[1:] == tuple(operands[1:]) and t.args[0].args == (operands[0], operands[1])
        else:
            assert t.args == tuple(operands)
        assert all(a is b for a, b in zip(t.args, t.args, strict=True))
        assert eg.Term(t.op, t.args, t.attr) is t
        assert termbase.find_term(t.op, t.args, t.attr) is t
        assert eg.Term(t.op, list(t.args), t.attr) is t  # type: ignore[arg-type]  # a list is taken too


def test_args_of_a_term_never_read_before_are_made_once_and_kept() -> None:
    x = eg.Symbol("x_once")
    t = eg.cos(x) * x
    first = t.args
    assert first == (eg.cos(x), x)
    assert t.args is first  # cached: read again, the same tuple
    assert x.args == () and eg.const(1.5).args == ()
    if native:
        assert not gc.is_tracked(first)  # a tuple of untracked terms


@needs_native
def test_sizes_count_the_operands_in_the_node() -> None:
    x, y, z = (eg.Symbol(n) for n in ("x_sz", "y_sz", "z_sz"))
    # the fixed part is 64 bytes; a word per operand; a word for an attr (a leaf's name, a constant's value)
    assert sys.getsizeof(x) == 72  # a leaf: its name is its key (no own word)
    assert sys.getsizeof(eg.sin(x)) == 72
    assert sys.getsizeof(x * y) == 80
    assert sys.getsizeof(eg.add(x, y, z)) == 88
    many = [eg.Symbol(f"w_sz{i}") for i in range(50)]
    assert sys.getsizeof(eg.add(*many)) == 64 + 8 * 50
    assert sys.getsizeof(eg.const(2.515625)) == 72  # a plain float is its own key
    # a key that is another object than the attr (a zero is keyed by its bits) takes one word more
    # (the constant may be shared with other tests: its lazy block made first, two words more, three
    # when another test cached its size)
    zero = eg.const(-0.0)
    assert zero.args == ()
    block = 24 if hasattr(zero, "_size") else 16
    assert sys.getsizeof(zero) == 80 + block
    vec = eg.Symbol("v_sz", shape=(3,))
    assert sys.getsizeof(vec) == 72 + 8  # a shape that is not () takes a word
    assert sys.getsizeof(eg.sin(vec)) == 72 + 8
    xy = x * y
    xy.args  # the lazily made tuple is its own object; the block that keeps it (two words) is the node's
    assert sys.getsizeof(xy) == 80 + 16


def test_constants_keyed_apart_stay_apart_and_are_found_again() -> None:
    values = [0.0, -0.0, math.nan, 1, 1.0, True, 2.5, -3, 2**62]
    terms = [eg.const(v) for v in values]
    assert len({id(t) for t in terms}) == len(values)
    gc.collect()
    for v, t in zip(values, terms, strict=True):
        assert eg.const(v) is t
        assert termbase.find_term(t.op, (), t.attr) is t
    products = [eg.Symbol("x_k") * eg.const(v) for v in values]
    assert len({id(t) for t in products}) == len(values)
    assert [t.args[1] for t in products] == terms


def test_a_chain_of_a_hundred_thousand_builds_walks_and_drops() -> None:
    x = eg.Symbol("x_chain5")
    f = x
    for _ in range(100_000):
        f = eg.sin(f) * f + x
    assert f.depth == 300_000  # three levels a step (add, mul, sin); a leaf's depth is 0
    assert len(eg.postorder(f)) == 300_001
    g = f
    for _ in range(1000):  # walking down by args gives the operands back
        g = g.args[0].args[1]
    assert g.depth == f.depth - 3000
    ref = weakref.ref(f)
    del f, g
    assert ref() is None


@needs_native
def test_dropping_a_deep_chain_and_a_wide_fan_needs_no_deep_recursion() -> None:
    # a million nodes freed from the root: the node releases its operands without one C frame per node
    x = eg.Symbol("x_deep")
    f = x
    for _ in range(1_000_000):
        f = eg.exp(f)
    wide = eg.add(*(eg.sin(eg.Symbol(f"v_wide{i}")) for i in range(20_000)))
    refs = [weakref.ref(f), weakref.ref(wide)]
    del f, wide
    assert [r() for r in refs] == [None, None]
    assert eg.exp(x).depth == 1


def test_terms_are_found_again_after_many_builds_and_drops() -> None:
    x, y = eg.Symbol("x_churn"), eg.Symbol("y_churn")
    kept = [eg.sin(x * k) + y for k in range(200)]
    for round_ in range(5):
        chain = x
        for k in range(40_000):
            chain = eg.cos(chain) * (y + k + round_)
        del chain
        gc.collect()
        for k, t in enumerate(kept):
            assert eg.sin(x * k) + y is t
    assert all(t.args[1] is y for t in kept)


@settings(max_examples=60, deadline=None)
@given(steps=steps_of, stops=st.sets(st.integers(0, 60), max_size=8), nroots=st.integers(1, 4))
def test_the_c_walk_lists_what_the_python_walk_lists(steps: list, stops: set, nroots: int) -> None:
    # postorder_until over random DAGs, with a stop predicate on some nodes: the C walk (or the
    # pure base's walk) gives the Python twin's list, node for node, and calls stop as often
    x, y = eg.Symbol("x_walk"), eg.Symbol("y_walk")
    built = [x, y, eg.const(1.5)]
    for k, picks in steps:
        fn, arity = BUILDERS[k]
        built.append(fn(*(built[i % len(built)] for i in picks[:arity])))
    roots = built[-nroots:] + built[:1]
    stopped = {built[i % len(built)] for i in stops}
    calls: list[list] = [[], []]
    for side, walker in enumerate((walk.postorder_until, walk._postorder_py)):
        seen = calls[side]

        def stop(t: eg.Term, seen: list = seen) -> bool:
            seen.append(t)
            return t in stopped

        seen.append(walker(roots, stop))
        seen.append(walker(iter(roots), None))
    got, want = calls
    assert got == want
    assert walk.postorder(roots) == walk._postorder_py(roots, None)


def test_the_walk_takes_other_nodes_in_python_and_stops_on_errors() -> None:
    class Node:
        def __init__(self, *args: object) -> None:
            self.args = args

    a = Node()
    b = Node(a, a)
    assert walk.postorder([b, Node(b)])[:2] == [a, b]
    x = eg.Symbol("x_err")

    def boom(t: object) -> bool:
        raise RuntimeError("stop")

    with pytest.raises(RuntimeError, match="stop"):
        walk.postorder_until([eg.sin(x) * x], boom)
