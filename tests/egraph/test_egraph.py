"""The e-graph structure: hashconsing, union-find, rebuilding with congruence, analyses, deep terms."""

from __future__ import annotations

import sys

import pytest
from egraph_helpers import X, Y

import exprgraph as eg
from exprgraph import const, parse, rational
from exprgraph.egraph import EGraph, Intervals
from exprgraph.egraph.analysis import Analysis, fold_node
from exprgraph.egraph.enode import head_of

f = eg.get_op("sin")


def test_add_is_hashconsed():
    g = EGraph()
    a = g.add(X + Y)
    assert g.add(X + Y) == a
    assert g.number_of_nodes() == 3 and g.number_of_classes() == 3
    assert g.lookup(X + Y) == a and g.lookup(Y + X) is None


def test_union_find_and_congruence_closure():
    g = EGraph(fold=False)
    fx, fy = g.add(f(X)), g.add(f(Y))
    ffx, ffy = g.add(f(f(X))), g.add(f(f(Y)))
    assert len({fx, fy, ffx, ffy}) == 4
    assert g.union(g.add(X), g.add(Y)) is True
    assert g.union(g.add(X), g.add(Y)) is False  # already one class
    assert g.find(fx) != g.find(fy)  # deferred: congruence waits for rebuild
    g.rebuild()
    assert g.find(fx) == g.find(fy) and g.find(ffx) == g.find(ffy)
    assert g.number_of_classes() == 3  # {x, y}, {sin x, sin y}, {sin sin x, sin sin y}
    assert g.number_of_nodes() == 4  # x, y, and sin(c) and sin(sin(c)) stored once each
    assert g.equivalent(f(f(X)), f(f(Y)))
    # every stored node is keyed by canonical children, each key once
    assert all(g._canonical(k) == k for k in g.memo)


def test_number_of_nodes_after_merging_sums():
    g = EGraph(fold=False)
    g.add(X + Y)
    g.add(Y + X)
    g.union(g.lookup(X + Y), g.lookup(Y + X))
    g.rebuild()
    assert g.number_of_classes() == 3 and g.number_of_nodes() == 4


def test_constant_folding_keeps_only_the_constant():
    g = EGraph()
    c = g.add(parse("2*3 + 1"))
    assert g.constant(c) is const(7)
    assert [n.op.name for n in g.nodes(c)] == ["const"]  # pruned: only the leaf shows
    assert g.total_size() > g.number_of_nodes()
    assert g.extract(c).term is const(7)
    # folding goes through the op table's evaluation and keeps the dtype
    assert fold_node(head_of(X / 2), (const(1), const(2))) is rational(1, 2)  # exact over exact stays exact
    assert fold_node(head_of(X / 2), (const(1.0), const(2))) is const(0.5)
    assert fold_node(eg.get_op("pow"), (const(2), const(-1))) is None  # int ** -1 is not an int64
    assert fold_node(eg.get_op("truediv"), (const(1.0), const(0.0))) is None  # inf is not folded
    assert fold_node(eg.get_op("truediv"), (const(1.0), const(0.0)), nonfinite=True) is const(float("inf"))


def test_folding_propagates_when_a_class_becomes_constant():
    g = EGraph()
    s = g.add(X * 2 + 1)
    assert g.constant(s) is None
    g.union(g.add(X), g.add(const(3)))
    g.rebuild()
    assert g.constant(s) is const(7)
    assert g.equivalent(X * 2 + 1, 7)


def test_conflicting_constants_are_counted_not_fatal():
    g = EGraph()
    g.union(g.add(const(1)), g.add(const(2)))
    g.rebuild()
    assert g.conflicts == 1


def test_equivalent_matches_constants_by_value():
    g = EGraph()
    g.add(parse("x*(2 - 1.0)"))
    g.union(g.add(parse("x*(2 - 1.0)")), g.add(X))
    g.rebuild()
    assert g.equivalent(X * 1.0, X)
    assert g.equivalent(X * 1, X)  # the int 1 finds the class holding 1.0
    assert g.lookup(X * 1) is None  # while the exact term is not there
    assert not g.equivalent(X * 2, X)
    assert g.lookup_by_value(const(1)) == g.lookup_by_value(const(1.0))


def test_dtypes_of_classes():
    g = EGraph()
    assert g.dtype(g.add(parse("x + 1"))) == "float64"
    assert g.dtype(g.add(eg.Symbol("n", "int64") + 1)) == "int64"
    assert g.dtype(g.add(X < Y)) == "bool"


def test_deep_chain_at_default_recursion_limit():
    assert sys.getrecursionlimit() <= 10_000
    t = X
    for _ in range(100_000):
        t = f(t)
    g = EGraph()
    c = g.add(t)
    assert g.number_of_nodes() == 100_001
    assert g.lookup(t) == c
    assert g.extract(c, "depth") == (100_001, t)  # nodes on the longest path, as egg counts
    g.union(g.add(X), g.add(f(X)))  # every level collapses into one class
    g.rebuild()
    assert g.number_of_classes() == 1
    assert g.extract(c).term is X


class Parity(Analysis):
    """Whether a class is known to hold an even integer (a toy user analysis)."""

    def make(self, egraph, node):
        if node.op.name == "const" and isinstance(node.attr, int):
            return node.attr % 2 == 0
        if node.op.name == "mul":
            kids = [egraph.get_data(c) for c in node.children]
            return True if True in kids else None
        return None

    def merge(self, a, b):
        return a if a is not None else b


def test_user_analysis_make_merge_and_propagation():
    n = eg.Symbol("n", "int64")
    g = EGraph(analysis=Parity(), fold=False)
    c = g.add(n * 2)
    assert g.get_data(c) is True
    m = g.add(n * eg.Symbol("k", "int64"))
    assert g.get_data(m) is None
    g.union(g.add(eg.Symbol("k", "int64")), g.add(const(4)))
    g.rebuild()
    assert g.get_data(m) is True  # re-made when an operand's class learnt something


def test_intervals_analysis():
    g = EGraph(analysis=Intervals())
    c = g.add(parse("exp(x) + 2"))
    assert g.get_data(c) == (2.0, float("inf"))
    d = g.add(parse("abs(y) * 3"))
    assert g.get_data(d) == (0.0, float("inf"))
    with pytest.raises(ValueError):
        EGraph().get_data(0)


def test_classes_and_repr():
    g = EGraph()
    g.add(X + Y)
    assert sorted(len(v) for v in g.classes().values()) == [1, 1, 1]
    assert "3 classes" in repr(g) and len(g) == 3
