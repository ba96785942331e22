"""PyTensor's graph traversals over terms: walks, topological orders, ancestors and dependency tests.

The functions keep PyTensor's names, arguments and orders (``pytensor.graph.traversal``). A term
is both of PyTensor's graph objects: as a *variable* it is any term, as an *apply node* it is a
node of the graph (a compound term, or a nullary op's term: :func:`is_node`), whose inputs are
its operands and whose one output is itself. Leaves (symbols and constants) are the variables
without an owner. So ``io_toposort`` and ``applys_between`` list nodes, ``ancestors`` and
``vars_between`` list terms of every kind, and ``orphans_between`` and ``graph_inputs`` list
leaves.

Orders are PyTensor's: ``ancestors`` (and the walks built on it) is a depth-first search that
takes the last operand first, ``io_toposort`` a depth-first post-order that does the same, and
``general_toposort`` visits a node once every node it depends on has been visited, sources in
the order a depth-first walk meets them. Every walk here is iterative (an explicit stack or
queue): a chain of 10^5 nodes needs no recursion.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping
from typing import TypeVar, cast

from ..core import Term
from .propagation import is_node

__all__ = [
    "walk",
    "general_toposort",
    "io_toposort",
    "ancestors",
    "graph_inputs",
    "explicit_graph_inputs",
    "vars_between",
    "orphans_between",
    "applys_between",
    "apply_depends_on",
    "variable_depends_on",
    "truncated_graph_inputs",
]

T = TypeVar("T", bound=Hashable)


def _terms(graphs: Term | Iterable[Term] | None) -> list[Term]:
    """A list of terms from one term or an iterable of them (None: no term)."""
    if graphs is None:
        return []
    if isinstance(graphs, Term):
        return [graphs]
    return list(graphs)


def walk(
    nodes: Iterable[T],
    expand: Callable[[T], Iterable[T] | None],
    bfs: bool = True,
    return_children: bool = False,
) -> Iterator[T | tuple[T, Iterable[T] | None]]:
    """Yield each node reachable from ``nodes`` through ``expand`` once: breadth first, or depth first (last first).

    ``expand(node)`` gives the nodes to visit next, or None. With ``return_children`` each node
    comes with what ``expand`` gave for it.
    """
    pending: deque[T] = deque(nodes)
    take = pending.popleft if bfs else pending.pop
    seen: set[T] = set()
    while pending:
        node = take()
        if node not in seen:  # a node queued twice is visited the first time it comes out
            seen.add(node)
            children = expand(node)
            yield (node, children) if return_children else node
            if children is not None:
                pending.extend(children)


def general_toposort(outputs: Iterable[T], deps: Callable[[T], Iterable[T] | None]) -> list[T]:
    """Every node reachable from ``outputs`` through ``deps``, each after all the nodes it depends on.

    ``deps(node)`` gives the nodes ``node`` depends on (None: none). Nodes without dependencies
    start the order in the order a depth-first walk meets them; a node comes as soon as its last
    dependency has. Raises ``ValueError`` when the dependencies make a cycle.
    """
    remaining: dict[T, int] = {}  # node -> how many distinct dependencies are not yet placed
    users: dict[T, list[T]] = {}
    ready: deque[T] = deque()
    for item in walk(outputs, lambda n: list(deps(n) or ()), bfs=False, return_children=True):
        node, children = cast("tuple[T, list[T]]", item)
        distinct = dict.fromkeys(children)
        remaining[node] = len(distinct)
        for child in distinct:
            users.setdefault(child, []).append(node)
        if not distinct:
            ready.append(node)
    order: list[T] = []
    while ready:
        node = ready.popleft()
        order.append(node)
        for user in users.get(node, ()):
            remaining[user] -= 1
            if remaining[user] == 0:
                ready.append(user)
    if len(order) != len(remaining):
        raise ValueError("graph contains cycles: some nodes depend on themselves through their dependencies")
    return order


def _postorder_last_first(outputs: list[Term], stop: set[Term]) -> list[Term]:
    """Distinct terms under ``outputs`` (not entering ``stop``), children first, the last operand (and output) first."""
    seen: set[Term] = set(stop)
    order: list[Term] = []
    for root in reversed(outputs):
        if root in seen:
            continue
        seen.add(root)
        stack = [(root, len(root.args))]
        while stack:
            node, i = stack[-1]
            args = node.args
            while i > 0 and args[i - 1] in seen:
                i -= 1
            if i == 0:
                stack.pop()
                order.append(node)
                continue
            child = args[i - 1]
            stack[-1] = (node, i - 1)
            seen.add(child)
            stack.append((child, len(child.args)))
    return order


def io_toposort(
    inputs: Term | Iterable[Term],
    outputs: Term | Iterable[Term],
    orderings: Mapping[Term, Iterable[Term]] | None = None,
) -> list[Term]:
    """The nodes between ``inputs`` and ``outputs`` in dependency order (a node given as an input cuts the graph there).

    ``orderings`` maps a node to nodes that must come before it besides its operands.
    """
    stop = set(_terms(inputs))
    outs = _terms(outputs)
    if not orderings:
        return [t for t in _postorder_last_first(outs, stop) if is_node(t)]
    extra = {k: list(v) for k, v in orderings.items()}

    def deps(t: Term) -> list[Term]:
        if t in stop:
            return []
        return [*t.args, *extra.get(t, ())]

    return [t for t in general_toposort(outs, deps) if is_node(t) and t not in stop]


def ancestors(graphs: Term | Iterable[Term], blockers: Iterable[Term] | None = None) -> Iterator[Term]:
    """The terms the ``graphs`` are computed from, themselves included, not looking past ``blockers``.

    Depth first, the last operand first (PyTensor's order); a blocker is yielded but not entered.
    """
    stop = set(_terms(blockers))
    return walk(_terms(graphs), lambda t: None if t in stop else t.args, bfs=False)  # type: ignore[return-value]


def graph_inputs(graphs: Term | Iterable[Term], blockers: Iterable[Term] | None = None) -> Iterator[Term]:
    """The leaves (symbols and constants) among the ``ancestors`` of ``graphs``."""
    return (t for t in ancestors(graphs, blockers) if not is_node(t))


def explicit_graph_inputs(graph: Term | Iterable[Term]) -> Iterator[Term]:
    """The symbols among the ``ancestors`` of ``graph`` (the leaves a caller must give values for)."""
    return (t for t in ancestors(graph) if t.is_symbol)


def vars_between(ins: Term | Iterable[Term], outs: Term | Iterable[Term]) -> Iterator[Term]:
    """The terms between ``ins`` and ``outs``: ``outs``, the ``ins`` reached, everything in between, and orphans."""
    return ancestors(outs, ins)


def orphans_between(ins: Term | Iterable[Term], outs: Term | Iterable[Term]) -> Iterator[Term]:
    """The leaves ``outs`` depend on that are not among ``ins`` (nor below them)."""
    cut = set(_terms(ins))
    return (t for t in ancestors(outs, cut) if not is_node(t) and t not in cut)


def applys_between(ins: Term | Iterable[Term], outs: Term | Iterable[Term]) -> Iterator[Term]:
    """The nodes between ``ins`` and ``outs``: those of ``outs`` and in between, not those given as ``ins``."""
    cut = set(_terms(ins))
    return (t for t in ancestors(outs, cut) if is_node(t) and t not in cut)


def variable_depends_on(variable: Term, depends_on: Term | Iterable[Term]) -> bool:
    """Whether one of ``depends_on`` is ``variable`` or among the terms it is computed from."""
    targets = set(_terms(depends_on))
    if not targets:
        return False
    return any(t in targets for t in ancestors([variable]))


def apply_depends_on(apply: Term, depends_on: Term | Iterable[Term]) -> bool:
    """Whether one of the nodes ``depends_on`` is the node ``apply`` or one it is computed from."""
    return variable_depends_on(apply, depends_on)


def _depends_on_any(outputs: list[Term], targets: set[Term]) -> dict[Term, bool]:
    """For every term under ``outputs``: whether it is one of ``targets`` or computed from one."""
    dep: dict[Term, bool] = {}
    for t in _postorder_last_first(outputs, set()):
        dep[t] = t in targets or any(dep[a] for a in t.args)
    return dep


def _clients_of(outputs: list[Term]) -> dict[Term, list[Term]]:
    """The users of every term under ``outputs`` (each user once per term)."""
    users: dict[Term, list[Term]] = {}
    for t in _postorder_last_first(outputs, set()):
        for a in dict.fromkeys(t.args):
            users.setdefault(a, []).append(t)
    return users


def truncated_graph_inputs(
    outputs: Term | Iterable[Term], ancestors_to_include: Iterable[Term] | None = None
) -> list[Term]:
    """The terms closest to ``outputs`` that do not depend on ``ancestors_to_include``, and those ancestors reached.

    Given the returned terms, nothing else is needed to compute ``outputs``. A term of
    ``ancestors_to_include`` is returned when reached (and the walk goes on below it when it
    depends on another of them); without any, the result is the outputs. The walk is
    PyTensor's (depth first, the last operand first), and so is its rule that a term met after
    one it depends on was returned is not returned itself: the search goes on below it.
    """
    outs = _terms(outputs)
    include = set(_terms(ancestors_to_include))
    if not include:
        return list(dict.fromkeys(outs))
    dep = _depends_on_any(outs, include)
    users = _clients_of(outs)
    tainted: set[Term] = set()  # terms computed from a visited term that is not one of ``include``
    seen: set[Term] = set()
    found: list[Term] = []
    stack = list(outs)
    while stack:
        t = stack.pop()
        if t in seen:
            continue
        seen.add(t)
        if t not in include:
            if dep[t] or t in tainted:
                stack.extend(t.args)  # it needs what lies below
            else:
                found.append(t)
            _taint(t, users, tainted)
        else:
            found.append(t)
            if any(dep[a] for a in t.args):  # another ancestor to include lies below
                stack.extend(a for a in t.args if a not in seen)
    return found


def _taint(t: Term, users: dict[Term, list[Term]], tainted: set[Term]) -> None:
    """Mark every term computed from ``t`` (a visited term now blocks the search)."""
    stack = list(users.get(t, ()))
    while stack:
        u = stack.pop()
        if u in tainted:
            continue
        tainted.add(u)
        stack.extend(users.get(u, ()))
