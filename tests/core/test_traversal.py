"""Traversal: postorder/toposort/preorder, substitution, and the tree protocol on any tree."""

from __future__ import annotations

from collections import namedtuple

import exprgraph as eg
from exprgraph import Expression, Symbol, symbols, tree_children, tree_map

x, y = symbols("x y")


def test_postorder_lists_distinct_nodes_children_first():
    s = x * y
    t = s + eg.sin(s)
    order = eg.postorder(t)
    assert order[-1] is t
    assert len(order) == len(set(order)) == t.size
    pos = {n: i for i, n in enumerate(order)}
    assert all(pos[a] < pos[n] for n in order for a in n.args)
    assert [n for n in order if not n.args] == [x, y]


def test_toposort_of_several_outputs():
    a, b = x + y, (x + y) * 2
    order = eg.toposort([b, a])
    assert order.index(a) < order.index(b)
    assert len(order) == 5


def test_preorder_parents_first():
    t = (x + 1) * y
    order = list(eg.preorder(t))
    assert order[0] is t and order[1] is x + 1 and order[-1] is y


def test_substitute():
    t = eg.sin(x * y) + x
    assert eg.substitute(t, {x: y}) is eg.sin(y * y) + y
    assert eg.substitute(t, {x * y: 2}) is eg.sin(eg.const(2)) + x
    assert eg.substitute(t, {t: x}) is x
    assert eg.substitute(t, {Symbol("q"): 1}) is t


def test_tree_protocol_on_terms():
    t = x + y
    assert list(tree_children(t)) == [x, y]
    assert tree_map(t, lambda a: a * 2) is x * 2 + y * 2
    assert tree_map(t, lambda a: a) is t
    assert tree_map(x, lambda a: 1) is x
    assert tree_map(eg.sum(Symbol("v", shape=(3,)), axis=0), lambda a: a * 2).attr == 0


def test_tree_protocol_on_python_data():
    assert list(tree_children((1, 2))) == [1, 2]
    assert list(tree_children([1, 2])) == [1, 2]
    assert list(tree_children({"a": 1, "b": 2})) == [1, 2]
    assert list(tree_children(5)) == []
    assert list(tree_children("ab")) == []
    assert tree_map((1, 2), lambda v: v + 1) == (2, 3)
    assert tree_map([1, 2], lambda v: v + 1) == [2, 3]
    assert tree_map({"a": 1}, lambda v: v + 1) == {"a": 2}
    assert tree_map(7, lambda v: v + 1) == 7
    Pair = namedtuple("Pair", "left right")
    assert tree_map(Pair(1, 2), lambda v: v * 10) == Pair(10, 20)


class Node(Expression):
    def __init__(self, name, *kids):
        self.name, self.kids = name, kids

    def tree_children(self):
        return self.kids

    def tree_map(self, fn):
        return Node(self.name, *(fn(k) for k in self.kids))

    def __eq__(self, other):
        return isinstance(other, Node) and (self.name, self.kids) == (other.name, other.kids)

    __hash__ = None


def test_tree_protocol_on_expression_subclasses():
    n = Node("f", 1, Node("g", 2))
    assert list(tree_children(n)) == [1, Node("g", 2)]
    assert tree_map(n, lambda k: k + 1 if isinstance(k, int) else k) == Node("f", 2, Node("g", 2))


def test_expression_base_requires_methods():
    import pytest

    with pytest.raises(NotImplementedError):
        tree_children(Expression())
