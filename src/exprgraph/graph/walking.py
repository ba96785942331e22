"""Walking rewriters: one pass over the nodes, trying node rewriters on each.

``in2out`` visits nodes children first (inputs to outputs), ``out2in`` outputs first. Each
node is offered only to the rewriters that track its op; the first one that applies wins and
the walk moves on. A node rebuilt because something below it was replaced is visited in its
rebuilt form; with ``ignore_newtrees=False`` the nodes a replacement brings in are visited too
(at the end of the walk for ``in2out``, next for ``out2in``).
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..core import Term
from ..rules.opindex import OpIndex
from .features import Feature
from .interface import GraphRewriter, NodeRewriter, Rewriter
from .profile import RewriterStats, WalkProfile
from .transaction import RewriteDriver

if TYPE_CHECKING:
    from .fgraph import FunctionGraph

__all__ = ["WalkingGraphRewriter", "in2out", "out2in", "Dispatch", "node_pass", "PassResult"]

ORDERS = ("in_to_out", "out_to_in")


class Dispatch(OpIndex):
    """Node rewriters indexed by the ops they track (the drivers' one :class:`OpIndex`), with profile names."""

    def __init__(self, rewriters: Sequence[NodeRewriter]) -> None:
        self.rewriters = list(rewriters)
        for r in self.rewriters:
            if not isinstance(r, NodeRewriter):
                raise TypeError(f"expected a NodeRewriter, not {r!r}")
        super().__init__((r, r.tracks()) for r in self.rewriters)
        # profile names: unique per rewriter
        names: dict[str, int] = {}
        self.names: dict[int, str] = {}
        for r in self.rewriters:
            base = r.name or type(r).__name__
            k = names.get(base, 0)
            names[base] = k + 1
            self.names[id(r)] = base if k == 0 else f"{base}#{k + 1}"

    def stats(self) -> dict[int, RewriterStats]:
        """Fresh counters, keyed by rewriter id."""
        return {id(r): RewriterStats(self.names[id(r)]) for r in self.rewriters}


class _NewNodes(Feature):
    """Queues the nodes replacements bring into the graph (rebuilt parents are not new)."""

    transient = True  # a cache: not pickled with the graph

    def __init__(self, queue: deque) -> None:
        self.queue = queue

    def on_import(self, fgraph: FunctionGraph, node: Term, reason: Any) -> None:
        """Queue a new node."""
        if reason != "rebuild":
            self.queue.append(node)


class _Rebuilt(Feature):
    """Queues again the visited nodes rebuilt since their visit (their operands changed)."""

    transient = True  # a cache: not pickled with the graph

    def __init__(self, queue: deque, visited: set) -> None:
        self.queue = queue
        self.visited = visited

    def on_rebuild(self, fgraph: FunctionGraph, old: Any, new: Any) -> None:
        """Visit again a node whose operands changed after it was visited."""
        if old in self.visited:
            self.queue.append(new)


@dataclass
class PassResult:
    """What one pass over the nodes did."""

    visited: int = 0
    applied: int = 0
    toposort_time: float = 0.0
    stopped: bool = False


def node_pass(
    fgraph: FunctionGraph,
    dispatch: Dispatch,
    driver: RewriteDriver,
    stats: dict[int, RewriterStats],
    *,
    order: str = "in_to_out",
    new_nodes: bool = False,
    revisit: bool = False,
    on_applied: Callable[[RewriterStats], bool] | None = None,
) -> PassResult:
    """One pass over the graph's nodes, children first (``in_to_out``) or outputs first, each once.

    Each node, in its current version, is offered to the rewriters that track its op; the first
    that applies wins (through ``driver``, as a transaction). ``new_nodes`` visits the nodes a
    replacement brings in too (at the end of an ``in_to_out`` pass, next for ``out_to_in``);
    ``revisit`` visits again a visited node whose operands changed since. ``on_applied(stats)``
    runs after each applied rewrite; returning True ends the pass. The one loop of the walking
    and equilibrium rewriters.
    """
    result = PassResult()
    t0 = time.perf_counter()
    queue = deque(fgraph.toposort())
    result.toposort_time = time.perf_counter() - t0
    seen: set = set()
    watchers: list[Feature] = [_NewNodes(queue)] if new_nodes else []
    if revisit:
        watchers.append(_Rebuilt(queue, seen))
    for w in watchers:
        fgraph.attach_feature(w)
    tracker = fgraph.track_rebuilds()
    pop = queue.popleft if order == "in_to_out" else queue.pop
    get, try_rewrite, follow = dispatch.get, driver.try_rewrite, fgraph.follow
    mark = seen.add if revisit else None
    visited = applied = 0
    stopped = False
    try:
        while queue:
            node = follow(pop(), tracker)
            if node is None or (not node.args and node.op.notation == "leaf"):
                continue
            visited += 1
            if mark is not None:
                mark(node)
            for r in get(node.op):
                st = stats[id(r)]
                if try_rewrite(fgraph, r, node, st):
                    applied += 1
                    stopped = on_applied is not None and on_applied(st)
                    break
            if stopped:
                break
    finally:
        fgraph.untrack_rebuilds(tracker)
        for w in watchers:
            fgraph.remove_feature(w)
    result.visited, result.applied, result.stopped = visited, applied, stopped
    return result


def _as_rewriters(rewriters: Any) -> list[NodeRewriter]:
    if isinstance(rewriters, NodeRewriter):
        return [rewriters]
    out = list(rewriters)
    for r in out:
        if not isinstance(r, NodeRewriter):
            raise TypeError(f"expected NodeRewriters, not {r!r}")
    return out


def stats_by_name(stats: dict[int, RewriterStats]) -> dict[str, RewriterStats]:
    """Counters keyed by display name."""
    return {s.name: s for s in stats.values()}


class WalkingGraphRewriter(GraphRewriter):
    """Apply node rewriters to every node once, in topological order (``in_to_out``) or reversed."""

    def __init__(
        self,
        rewriters: NodeRewriter | Iterable[NodeRewriter],
        order: str = "in_to_out",
        ignore_newtrees: bool = True,
        failure_callback: Any = "raise",
        verbose: bool = False,
        name: str | None = None,
    ) -> None:
        if order not in ORDERS:
            raise ValueError(f"order must be one of {ORDERS}, not {order!r}")
        self.node_rewriters = _as_rewriters(rewriters)
        default = self.node_rewriters[0].name if len(self.node_rewriters) == 1 else "WalkingGraphRewriter"
        super().__init__(name or default)
        self.order = order
        self.ignore_newtrees = ignore_newtrees
        self.driver = RewriteDriver(failure_callback, verbose)
        self.dispatch = Dispatch(self.node_rewriters)

    def add_requirements(self, fgraph: FunctionGraph) -> None:
        """The node rewriters' requirements."""
        for r in self.node_rewriters:
            r.add_requirements(fgraph)

    def summary_line(self) -> str:
        """Class, name and walk order."""
        return f"{type(self).__name__} {self.name} ({self.order})"

    def summary_children(self) -> list[Rewriter]:
        """The node rewriters offered each node."""
        return list(self.node_rewriters)

    def apply(self, fgraph: FunctionGraph) -> WalkProfile:
        """One walk over the graph."""
        start = time.perf_counter()
        prof = WalkProfile(self.name, type(self).__name__, nodes_before=fgraph.node_count, order=self.order)
        stats = self.dispatch.stats()
        done = node_pass(
            fgraph, self.dispatch, self.driver, stats, order=self.order, new_nodes=not self.ignore_newtrees
        )
        prof.toposort_time = done.toposort_time
        prof.nodes_visited = done.visited
        prof.applied = done.applied
        prof.rewriters = stats_by_name(stats)
        prof.nodes_after = fgraph.node_count
        prof.time = time.perf_counter() - start
        return prof


def in2out(*rewriters: NodeRewriter, **kwargs: Any) -> WalkingGraphRewriter:
    """A walk from inputs to outputs applying ``rewriters`` (first that applies wins at each node)."""
    return WalkingGraphRewriter(list(_flatten(rewriters)), order="in_to_out", **kwargs)


def out2in(*rewriters: NodeRewriter, **kwargs: Any) -> WalkingGraphRewriter:
    """A walk from outputs to inputs applying ``rewriters``."""
    return WalkingGraphRewriter(list(_flatten(rewriters)), order="out_to_in", **kwargs)


def _flatten(items: Iterable[Any]) -> Iterable[NodeRewriter]:
    for r in items:
        if isinstance(r, (list, tuple)):
            yield from r
        else:
            yield r
