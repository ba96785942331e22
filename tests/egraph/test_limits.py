"""Resource limits of the e-graph: time, e-nodes and matches are checked inside an iteration, not only between;
DAG extraction's work and explanations' positions are bounded.

The explosive runs grow a sum of symbols under associativity and commutativity: one iteration of
them takes many seconds, so a limit checked only between iterations is overshot by that much.
"""

from __future__ import annotations

import math
import time
from functools import reduce

import pytest

from exprgraph import const, rule, sin, symbols
from exprgraph.egraph import EGraph, StopReason, explain, extract, saturate
from exprgraph.egraph.budget import APPLY_CHUNK, Budget, running
from exprgraph.egraph.dag import dag_cost, greedy_dag, improve
from exprgraph.egraph.ematch import EPattern
from exprgraph.egraph.extract import build_term, class_nodes, node_cost_fn
from exprgraph.egraph.mathsuite import MICRO_RULES, MICRO_TERMS

#: commutativity and both directions of associativity: the classic explosion
AC = [rule("a + b -> b + a"), rule("a + (b + c) -> (a + b) + c"), rule("(a + b) + c -> a + (b + c)")]


def _sum(n: int):
    """``x0 + (x1 + (... + x{n-1}))`` as nested binary adds."""
    xs = symbols(" ".join(f"x{i}" for i in range(n)))
    return reduce(lambda acc, x: x + acc, reversed(xs[:-1]), xs[-1])


def _grown(n: int, iterations: int) -> EGraph:
    """The e-graph of ``_sum(n)`` after a few iterations of AC (tens of thousands of e-nodes)."""
    g = EGraph(fold=False)
    g.add(_sum(n))
    saturate(g, AC, iter_limit=iterations, scheduler="simple", node_limit=10**8, time_limit=60.0)
    return g


def _busy(seconds: float) -> None:
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


def test_time_limit_is_checked_inside_a_search():
    g = _grown(24, 4)  # associativity has 3.5 million matches in it: seconds to find them all
    start = time.process_time()
    report = saturate(g, AC[1:2], scheduler="simple", time_limit=0.1, match_limit=10**8, node_limit=10**8)
    cpu = time.process_time() - start
    assert report.stop_reason is StopReason.TIME_LIMIT
    assert cpu < 0.6, f"{cpu:.2f} s of CPU for a 0.1 s limit"


def test_time_limit_is_checked_while_matches_are_applied():
    g = _grown(12, 3)  # over 1,000 sums: as many matches of commutativity, each 2 ms to apply
    slow = rule("a + b -> b + a", where=lambda a, b: _busy(0.002) is None)
    start = time.process_time()
    report = saturate(g, [slow], scheduler="simple", time_limit=0.2, node_limit=10**8)
    cpu = time.process_time() - start
    assert report.stop_reason is StopReason.TIME_LIMIT
    assert report.iterations[0].n_matches > 1_000
    # chunks shrink to a few matches when each takes milliseconds: the clock is read every ~5 ms
    assert cpu < 0.6, f"{cpu:.2f} s of CPU for a 0.2 s limit"


def test_time_limit_ends_an_explosive_run():
    # a sum of 16 symbols under AC: the fifth iteration takes over ten seconds unchecked
    start = time.process_time()
    report = saturate(_sum(16), AC, scheduler="simple", time_limit=0.5, node_limit=10**8, match_limit=10**8)
    cpu = time.process_time() - start
    assert report.stop_reason is StopReason.TIME_LIMIT
    assert cpu < 2.0, f"{cpu:.2f} s of CPU for a 0.5 s limit"
    # the e-graph is left rebuilt and usable: extraction finds a sum of the same 16 symbols
    assert len(report.best().free_symbols) == 16


def test_node_limit_is_checked_while_matches_are_applied():
    # before, one rule's 1.5 million matches were applied before the node count was looked at
    report = saturate(_sum(16), AC, scheduler="simple", node_limit=20_000, time_limit=60.0, match_limit=10**8)
    assert report.stop_reason is StopReason.NODE_LIMIT
    # at most one chunk of matches past the limit, each adding at most the right-hand side's two nodes
    # (the rebuild after it may merge a few)
    assert report.egraph.total_size() <= 20_000 + 2 * APPLY_CHUNK


def test_match_limit_bounds_the_matches_an_iteration_holds():
    report = saturate(_sum(16), AC, scheduler="simple", match_limit=5_000, node_limit=10**8, time_limit=60.0)
    assert report.stop_reason is StopReason.MATCH_LIMIT
    assert report.iterations[-1].n_matches == 5_000
    assert all(it.n_matches <= 5_000 for it in report.iterations)
    with pytest.raises(ValueError, match="match_limit"):
        saturate(_sum(3), AC, match_limit=0)


def test_a_nan_time_limit_is_refused():
    # a nan deadline compares false with every time: it meant no limit at all
    with pytest.raises(ValueError, match="nan"):
        saturate(_sum(3), AC, time_limit=math.nan)
    with pytest.raises(ValueError, match="negative"):
        saturate(_sum(3), AC, time_limit=-1.0)


@pytest.mark.parametrize("machine", ["compiled", "vm"])
def test_searches_stop_at_the_deadline_and_at_the_matches_left(machine: str):
    g = EGraph(fold=False)
    g.add(_sum(8))
    saturate(g, AC, iter_limit=3, scheduler="simple")
    pattern = EPattern(rule("a + (b + c) -> a").pattern, machine)
    every = pattern.search(g)
    assert len(every) > 100
    with running(Budget(deadline=time.perf_counter() - 1.0)):
        assert pattern.search(g) == []  # the deadline has passed: the first clock reading stops it
    with running(Budget(matches=7)):
        assert pattern.search(g) == every[:7]
        assert pattern.search(g, 3) == every[:3]  # the smaller of the two
    with running(Budget(matches=0)):
        assert pattern.search(g) == []
    assert pattern.search(g) == every  # no run in progress: no budget


def _chain(n: int):
    """``(...((x*x + 0)*x + 1)...)*x + (n-1)``: an e-graph n classes deep (a DAG's sets grow with depth)."""
    x = symbols("x")
    t = x
    for i in range(n):
        t = t * x + const(i)
    return t


def test_dag_extraction_of_a_deep_egraph_is_bounded():
    # the sets of classes below each class took 1.8 GB for 4,000 classes (quadratic in the depth)
    t = _chain(4_000)
    g = EGraph(fold=False)
    root = g.add(t)
    start = time.process_time()
    found = extract(g, root, "dag_size")
    assert time.process_time() - start < 2.0
    assert found.term is t and found.cost == t.size  # one node per class: the term itself


def test_dag_local_search_is_bounded():
    # each swap tried copies the whole choice: 5 s for 1,000 classes, quadratic
    g = EGraph(fold=False)
    root = g.add(_chain(1_500))
    saturate(g, [rule("a + b -> b + a"), rule("a * b -> b * a")], iter_limit=1, scheduler="simple")
    nodes = class_nodes(g)
    _, size = node_cost_fn("size")
    start_choice = greedy_dag(nodes, size)
    start = time.process_time()
    choice = improve(nodes, g.find(root), start_choice, size)
    assert time.process_time() - start < 4.0
    assert dag_cost(choice, g.find(root), size) <= dag_cost(start_choice, g.find(root), size)


@pytest.mark.parametrize("max_work", [0, 10, 1_000])
def test_greedy_dag_past_its_work_limit_still_chooses_an_acyclic_term_of_each_class(max_work: int):
    g = EGraph(fold=False)
    roots = [g.add(t) for t in MICRO_TERMS]
    saturate(g, MICRO_RULES, iter_limit=5, scheduler="simple")
    nodes = class_nodes(g)
    _, size = node_cost_fn("size")
    choice = greedy_dag(nodes, size, max_work=max_work)
    assert set(choice) == set(nodes)
    for r in roots:
        term = build_term(g, g.find(r), choice)
        assert g.lookup(term) == g.find(r)  # a term of the root's class, built without a cycle


def test_explaining_a_rewrite_deep_in_a_term_is_linear_in_its_depth():
    # each level of congruence copied the position tuple: 5 s at depth 50,000, quadratic
    x = symbols("x")
    t, goal = x * 1, x
    for _ in range(50_000):
        t, goal = sin(t), sin(goal)
    g = EGraph(explanations=True, fold=False)
    g.add(t)
    saturate(g, [rule("a*1 -> a")], iter_limit=2, node_limit=10**7)
    start = time.process_time()
    proof = explain(g, t, goal)
    assert time.process_time() - start < 3.0
    assert len(proof) == 1 and proof.steps[0].position == (0,) * 50_000
    assert proof.end is goal


def test_extraction_with_a_user_cost_does_not_pass_over_every_node_per_level():
    # one pass over every node per level of depth: 8 s for a chain of 2,000 classes, quadratic
    x = symbols("x")
    t = x
    for i in range(2_000):
        t = const(i) + x * t
    g = EGraph(fold=False)
    root = g.add(t)
    saturate(g, [rule("a + b -> b + a"), rule("a * b -> b * a")], iter_limit=2, node_limit=10**8)
    start = time.process_time()
    found = extract(g, root, lambda node, kids: 1 + sum(kids))
    assert time.process_time() - start < 1.5
    assert found.cost == 4 * 2_000 + 1  # the tree size, whichever spelling is chosen
    assert g.lookup(found.term) == g.find(root)
