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
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from ..core import Op, Term
from .features import Feature
from .interface import GraphRewriter, NodeRewriter, Rewriter
from .profile import RewriterStats, WalkProfile
from .transaction import RewriteDriver

if TYPE_CHECKING:
    from .fgraph import FunctionGraph

__all__ = ["WalkingGraphRewriter", "in2out", "out2in", "Dispatch"]

ORDERS = ("in_to_out", "out_to_in")


class Dispatch:
    """Node rewriters indexed by the ops they track (registration order kept)."""

    def __init__(self, rewriters: Sequence[NodeRewriter]) -> None:
        self.rewriters = list(rewriters)
        tracked: list[tuple[NodeRewriter, frozenset | None]] = []
        for r in self.rewriters:
            if not isinstance(r, NodeRewriter):
                raise TypeError(f"expected a NodeRewriter, not {r!r}")
            ops = r.tracks()
            tracked.append((r, None if ops is None else frozenset(ops)))
        all_ops: set[Op] = set()
        for _, tracked_ops in tracked:
            if tracked_ops is not None:
                all_ops |= tracked_ops
        self.table: dict[Op, tuple[NodeRewriter, ...]] = {
            op: tuple(r for r, ops in tracked if ops is None or op in ops) for op in all_ops
        }
        self.wild: tuple[NodeRewriter, ...] = tuple(r for r, ops in tracked if ops is None)
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

    def get(self, op: Op) -> tuple[NodeRewriter, ...]:
        """The rewriters a node of ``op`` is offered to, in order."""
        return self.table.get(op, self.wild)


class _Importer(Feature):
    """Collects the nodes replacements bring into the graph (rebuilt parents are not new)."""

    def __init__(self, sink: Any) -> None:
        self.sink = sink

    def on_import(self, fgraph: FunctionGraph, node: Term, reason: Any) -> None:
        """Queue a new node."""
        if reason != "rebuild":
            self.sink(node)


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
        t0 = time.perf_counter()
        queue = deque(fgraph.toposort())
        prof.toposort_time = time.perf_counter() - t0
        importer = None
        if not self.ignore_newtrees:
            importer = _Importer(queue.append)
            fgraph.attach_feature(importer)
        tracker = fgraph.track_rebuilds()
        pop = queue.popleft if self.order == "in_to_out" else queue.pop
        get = self.dispatch.get
        stats = self.dispatch.stats()
        try_rewrite = self.driver.try_rewrite
        follow = fgraph.follow
        visited = applied = 0
        try:
            while queue:
                node = follow(pop(), tracker)
                if node is None or (not node.args and node.op.notation == "leaf"):
                    continue
                visited += 1
                for r in get(node.op):
                    if try_rewrite(fgraph, r, node, stats[id(r)]):
                        applied += 1
                        break
        finally:
            fgraph.untrack_rebuilds(tracker)
            if importer is not None:
                fgraph.remove_feature(importer)
        prof.nodes_visited = visited
        prof.applied = applied
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
