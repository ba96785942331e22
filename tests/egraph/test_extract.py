"""Extraction: tree costs, op-cost tables, user functions, DAG-aware greedy within 5% of the ILP optimum."""

from __future__ import annotations

import pytest
from egraph_helpers import X, Y

import exprgraph as eg
from exprgraph import parse, rule
from exprgraph.egraph import EGraph, saturate
from exprgraph.egraph.dag import dag_cost, greedy_dag, ilp_dag, improve
from exprgraph.egraph.enode import term_from_keys
from exprgraph.egraph.extract import class_nodes, node_cost_fn
from exprgraph.egraph.mathsuite import EQUALITIES, MICRO_RULES, MICRO_TERMS

SQUARE = [rule("a*a <-> a**2"), rule("a + a <-> 2*a"), rule("a*2 <-> a + a")]


def test_tree_costs():
    r = saturate(parse("(x + x)*(x + x)"), [*SQUARE, rule("a * b -> b * a")])
    root = r.root
    size = r.egraph.extract(root, "size")
    assert size.cost == 5 and size.term.size <= 5  # (2*x)**2 or (x+x)**2: five tree nodes
    depth = r.egraph.extract(root, "depth")
    assert depth.cost == 3
    cheap_pow = r.egraph.extract(root, {"pow": 1, "mul": 50, "add": 50})
    assert cheap_pow.term.op.name == "pow"
    costly_pow = r.egraph.extract(root, {"pow": 100})
    assert costly_pow.term.op.name != "pow"
    # a user cost: the number of distinct symbols... here, anything counting mul as free
    user = r.egraph.extract(root, lambda node, kids: (0 if node.op.name == "mul" else 1) + sum(kids))
    assert user.cost == min(v for v in (user.cost,)) and user.term.op.name == "mul"
    cost, term = r.egraph.extract(root)  # unpacks
    assert cost == size.cost and term is size.term


def test_extract_by_term_and_errors():
    g = EGraph()
    g.add(X + Y)
    assert g.extract(X + Y).term is X + Y
    with pytest.raises(ValueError):
        g.extract(X * Y)
    with pytest.raises(ValueError):
        g.extract(0, "width")
    with pytest.raises(ValueError):
        g.extract(0, "depth", exact=True)
    h = EGraph(fold=False)
    h.union(h.add(parse("sin(x)")), h.add(X))  # x's class holds sin(x) too: still finite
    h.rebuild()
    assert h.extract(h.lookup(X)).term is X


def _dag_cases():
    cases = []
    for n in (2, 3, 4):
        g = EGraph(fold=False)
        roots = [g.add(t) for t in MICRO_TERMS]
        saturate(g, MICRO_RULES, iter_limit=n, scheduler="simple")
        cases.extend((g, g.find(r)) for r in roots)
    for eq in EQUALITIES[2:12]:
        g = EGraph()
        root = g.add(parse(eq.start))
        saturate(g, eq.rules(), iter_limit=3)
        cases.append((g, g.find(root)))
    return cases


def test_dag_extraction_within_five_percent_of_the_ilp_optimum():
    _, unit = node_cost_fn("size")
    worst = 1.0
    for g, root in _dag_cases():
        nodes = class_nodes(g)
        heuristic = dag_cost(improve(nodes, root, greedy_dag(nodes, unit), unit), root, unit)
        optimum, choice, proved = ilp_dag(nodes, root, unit, time_limit=10)
        assert proved
        assert optimum <= heuristic
        assert dag_cost(choice, root, unit) == optimum
        worst = max(worst, heuristic / optimum)
    assert worst <= 1.05


def test_exact_extraction_reports_its_cost_and_builds_the_dag():
    r = saturate(parse("(x*y + x*y) + sin(x*y)"), [*SQUARE, rule("a*b -> b*a")], iter_limit=3)
    exact = r.extract("size", exact=True)
    assert exact.cost == exact.term.size  # DAG cost: each distinct node once
    greedy = r.extract("dag_size")
    assert greedy.cost == greedy.term.size and greedy.cost >= exact.cost


def test_terms_are_built_from_node_keys_operands_first():
    x, y = eg.symbols("x y")
    add, sin = eg.get_op("add"), eg.get_op("sin")
    keys = {0: (x,), 1: (y,), 2: (add, 0, 1), 3: (sin, 2), 4: (add, 3, 2)}
    built: dict = {}
    assert term_from_keys(keys, 4, built) is eg.sin(x + y) + (x + y)
    assert set(built) == {0, 1, 2, 3, 4} and term_from_keys(keys, 2, built) is x + y
    deep = {0: (x,), **{i: (sin, i - 1) for i in range(1, 50_001)}}
    assert term_from_keys(deep, 50_000, {}).depth == 50_000  # iterative: no recursion limit
    with pytest.raises(ValueError, match="form a cycle"):
        term_from_keys({0: (sin, 1), 1: (sin, 0)}, 0, {})
