"""Extraction: the cheapest term of an e-class under a cost function.

Cost functions (the ``cost=`` argument):

- ``"size"``: one per node of the tree (egg's ``AstSize``);
- ``"depth"``: the nodes on the longest path down to a leaf (egg's ``AstDepth``: a leaf is 1);
- a dict ``{op name: cost}``: the op's cost (default 1, ``"symbol"``/``"const"`` for leaves) plus
  the operands' costs, so ``{"d": 100, "i": 100}`` steers away from derivatives as egg's math
  example does;
- a callable ``cost(node, child_costs) -> number`` on :class:`~exprgraph.egraph.enode.ENode`;
- ``"dag_size"``: distinct nodes of the extracted DAG (shared subterms count once).

*Greedy* extraction (the default) gives each class the cheapest node given its operands' cheapest
costs. For the tree costs it is a Dijkstra-like sweep (Knuth's generalisation): a class is settled
when its cheapest node is popped from a heap, which is exact for costs that never decrease from an
operand to its user; a user callable is iterated to a fixpoint instead, as egg does. DAG costs
(``"dag_size"``, or any additive cost with ``exact=True``) count shared nodes once: see
:mod:`.dag` (a greedy heuristic, and an exact integer program solved by HiGHS).
"""

from __future__ import annotations

import heapq
from collections import defaultdict, deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

from ..core import Term, as_term
from .dag import dag_extract, greedy_dag
from .enode import ENode, attr_of, op_of, term_from_keys

if TYPE_CHECKING:
    from .egraph import EGraph

__all__ = ["Extracted", "extract", "node_cost_fn", "build_term", "class_nodes"]


class Extracted(NamedTuple):
    """An extraction result: its cost and the term (unpacks as ``cost, term``)."""

    cost: float
    term: Term


def node_cost_fn(cost: Any) -> tuple[str, Callable[[tuple], float] | None]:
    """``(kind, per-node cost)`` for a cost spec: kind "sum" (additive), "depth" or "user"."""
    if cost == "size" or cost == "dag_size":
        return "sum", lambda key: 1.0
    if cost == "depth":
        return "depth", lambda key: 1.0
    if isinstance(cost, dict):
        table = {str(k): float(v) for k, v in cost.items()}
        default = table.get("*", 1.0)

        def op_cost(key: tuple) -> float:
            return table.get(op_of(key[0]).name, default)

        return "sum", op_cost
    if callable(cost):
        return "user", None
    raise ValueError(f"cost must be 'size', 'depth', 'dag_size', a dict of op costs or a callable, not {cost!r}")


def class_nodes(egraph: EGraph) -> dict[int, list[tuple]]:
    """``{class: [node keys]}`` of the rebuilt e-graph (pruned nodes left out)."""
    out: dict[int, list[tuple]] = {}
    for table in egraph._index()[0].values():
        for c, nodes in table.items():
            lst = out.get(c)
            if lst is None:
                out[c] = list(nodes)
            else:
                lst.extend(nodes)
    return out


def _greedy(egraph: EGraph, kind: str, node_cost: Callable[[tuple], float]) -> dict[int, tuple[float, tuple]]:
    """Cheapest ``(cost, node)`` per class by a heap sweep (operands settle before their users)."""
    users: defaultdict[int, list[int]] = defaultdict(list)  # class -> the nodes using it
    flat: list[tuple[int, tuple]] = []
    waiting: list[int] = []
    heap: list[tuple[float, int]] = []
    for c, key in egraph.iter_nodes():
        j = len(flat)
        flat.append((c, key))
        n = len(key)
        if n == 1:
            waiting.append(0)
            heap.append((node_cost(key), j))
            continue
        kids = (key[1],) if n == 2 else set(key[1:])
        waiting.append(len(kids))
        for d in kids:
            users[d].append(j)
    heapq.heapify(heap)
    best: dict[int, tuple[float, tuple]] = {}
    additive = kind == "sum"
    pop, push = heapq.heappop, heapq.heappush
    while heap:
        cost, j = pop(heap)
        c, key = flat[j]
        if c in best:
            continue
        best[c] = (cost, key)
        for u in users.get(c, ()):
            waiting[u] -= 1
            if waiting[u] == 0:
                uc, ukey = flat[u]
                if uc in best:
                    continue
                costs = [best[d][0] for d in ukey[1:]]
                push(heap, (node_cost(ukey) + (sum(costs) if additive else max(costs)), u))
    return best


def _fixpoint(egraph: EGraph, fn: Callable[[ENode, list], float]) -> dict[int, tuple[float, tuple]]:
    """Cheapest ``(cost, node)`` per class for a user cost function, iterated until nothing improves.

    A worklist: a node is costed again only when one of its operands' classes got cheaper (passes
    over every node made it quadratic in the e-graph's depth: 20 s for a chain of 4,000 classes).
    A cost function that keeps decreasing still stops, after as many costings as that many passes.
    """
    nodes = class_nodes(egraph)
    views = {key: ENode(op_of(key[0]), attr_of(key[0]), key[1:]) for keys in nodes.values() for key in keys}
    users: defaultdict[int, list[tuple[int, tuple]]] = defaultdict(list)  # class -> the nodes using it
    todo: deque[tuple[int, tuple]] = deque()
    rank: dict[tuple, int] = {}
    for c, keys in nodes.items():
        for i, key in enumerate(keys):
            rank[key] = i
            if len(key) == 1:
                todo.append((c, key))
            for d in set(key[1:]):
                users[d].append((c, key))
    best: dict[int, tuple[float, tuple]] = {}
    budget = (len(nodes) + 1) * len(views)
    while todo and budget > 0:
        budget -= 1
        c, key = todo.popleft()
        kids = []
        for d in key[1:]:
            found = best.get(d)
            if found is None:
                break
            kids.append(found[0])
        else:
            cost = fn(views[key], kids)
            old = best.get(c)
            if old is None or cost < old[0]:
                best[c] = (cost, key)
                todo.extend(users.get(c, ()))
            elif cost == old[0] and rank[key] < rank[old[1]]:
                best[c] = (cost, key)  # a tie goes to the class's first node, whatever the order of costing
    return best


def _cost_key(cost: Any) -> Any:
    if isinstance(cost, dict):
        return tuple(sorted((str(k), float(v)) for k, v in cost.items()))
    if isinstance(cost, str):
        return cost
    return ("callable", id(cost))


def build_term(egraph: EGraph, root: int, choice: dict[int, tuple]) -> Term:
    """The term of ``root`` following one chosen node per class (iteratively, children first)."""
    return term_from_keys(choice, root, {})


def extract(egraph: EGraph, c: Any, cost: Any = "size", *, exact: bool = False) -> Extracted:
    """The cheapest term of class ``c`` (an id, or a term of the e-graph) under ``cost``: ``(cost, term)``."""
    egraph.rebuild()
    if isinstance(c, int) and not isinstance(c, bool):
        root = egraph.find(c)
    else:
        found = egraph.lookup(as_term(c))
        if found is None:
            raise ValueError(f"{c} is not in the e-graph")
        root = found
    kind, node_cost = node_cost_fn(cost)
    if exact or cost == "dag_size":
        if kind != "sum":
            raise ValueError("DAG extraction needs an additive cost: 'size', 'dag_size' or a dict of op costs")
        assert node_cost is not None
        nodes = class_nodes(egraph)
        key = (egraph._version, "dag", _cost_key(cost))
        start = egraph.extraction_cache.get(key)
        if start is None:
            start = greedy_dag(nodes, node_cost)
            egraph.extraction_cache.clear()
            egraph.extraction_cache[key] = start
        total, choice = dag_extract(nodes, root, node_cost, exact=exact, start=start)
        return Extracted(total, build_term(egraph, root, choice))
    key = (egraph._version, kind, _cost_key(cost))
    best = egraph.extraction_cache.get(key)
    if best is None:
        if kind == "user":
            best = _fixpoint(egraph, cost)
        else:
            assert node_cost is not None
            best = _greedy(egraph, kind, node_cost)
        egraph.extraction_cache.clear()  # one version at a time
        egraph.extraction_cache[key] = best
    if root not in best:
        raise ValueError("no finite term in this class (every node depends on itself)")
    choice = {k: v[1] for k, v in best.items()}
    return Extracted(best[root][0], build_term(egraph, root, choice))
