"""Merging equal computations.

PyTensor needs a merge pass because two ``add(y, z)`` nodes built separately are different
objects. Here terms are interned: equal subterms are one object from the moment they are built,
and a parent rebuilt after a replacement merges with an existing equal node by construction.
So common-subexpression elimination and the merging of constants (interned by dtype and value)
are always already done, and :class:`MergeOptimizer` only reports that.

What is left is *commutative* merging, optional: ``add(x, y)`` and ``add(y, x)`` are different
terms but compute the same value. With ``commutative=True`` such nodes (for every op declared
commutative, in any operand order, variadic ones included) are merged into the first one in
topological order, and the merge cascades to their parents. Used as a cleanup rewriter of an
equilibrium, it only looks at the nodes imported since its last run.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from ..core import Term
from .features import Feature
from .interface import GraphRewriter
from .profile import MergeProfile

if TYPE_CHECKING:
    from .fgraph import FunctionGraph

__all__ = ["MergeOptimizer", "MergeTracker"]


class MergeTracker(Feature):
    """Remembers the commutative nodes imported since the last merge, and the nodes seen by key."""

    transient = True  # a cache: not pickled with the graph

    def __init__(self) -> None:
        self.pending: list[Term] = []
        self.table: dict[tuple, Term] = {}
        self.full = True

    def on_import(self, fgraph: FunctionGraph, node: Term, reason: Any) -> None:
        """Queue new commutative nodes."""
        if node.op.commutative:
            self.pending.append(node)


def _key(t: Term) -> tuple:
    return (t.op, t.attr, tuple(sorted(map(id, t.args))))


class MergeOptimizer(GraphRewriter):
    """Merge nodes that compute the same value: a no-op for equal terms (they are one object), and
    with ``commutative=True`` a merge of commutative nodes whose operands differ only in order."""

    def __init__(self, commutative: bool = False, name: str | None = None) -> None:
        super().__init__(name or "MergeOptimizer")
        self.commutative = commutative

    def add_requirements(self, fgraph: FunctionGraph) -> None:
        """A :class:`MergeTracker`, when merging commutative nodes."""
        if self.commutative and self._tracker(fgraph) is None:
            fgraph.attach_feature(MergeTracker())

    @staticmethod
    def _tracker(fgraph: FunctionGraph) -> MergeTracker | None:
        for f in fgraph.features:
            if isinstance(f, MergeTracker):
                return f
        return None

    def apply(self, fgraph: FunctionGraph) -> MergeProfile:
        """Merge; with a tracker attached only the nodes imported since the last run are examined."""
        start = time.perf_counter()
        prof = MergeProfile(self.name, type(self).__name__)
        if not self.commutative:
            # interning already merged every pair of equal nodes and equal constants
            prof.nodes_before = prof.nodes_after = fgraph._n_nodes
            prof.time = time.perf_counter() - start
            return prof
        tracker = self._tracker(fgraph)
        full = tracker is None or tracker.full or len(tracker.table) > 4 * fgraph._n_nodes + 64
        # an incremental run must not bring the whole graph up to date: it reports the live count
        prof.nodes_before = fgraph.node_count if full else fgraph._n_nodes
        if full:
            candidates = fgraph.toposort()
            table: dict[tuple, Term] = {}
            if tracker is not None:
                tracker.pending = []
                tracker.table = table
                tracker.full = False
        else:
            assert tracker is not None  # (not full: there is a tracker)
            candidates = tracker.pending
            tracker.pending = []
            table = tracker.table
        merged = 0
        checked = 0
        current = fgraph.current
        stracker = fgraph.track_rebuilds()
        try:
            while candidates:
                for node in candidates:
                    cur = fgraph.follow(node, stracker)
                    if cur is None or not cur.op.commutative:
                        continue
                    checked += 1
                    key = _key(cur)
                    other = table.get(key)
                    if other is None or other is cur or current(other) is not other:
                        table[key] = cur
                        continue
                    fgraph.replace(cur, other, self)
                    merged += 1
                # parents rebuilt by these merges may now be duplicates too: examine them in turn
                candidates = []
                if full:  # a full run settles the cascade; an incremental one leaves it to the next run
                    fgraph._flush()
                if tracker is not None and tracker.pending:
                    candidates, tracker.pending = tracker.pending, []
        finally:
            fgraph.untrack_rebuilds(stracker)
        prof.merged = prof.commutative_merged = merged
        prof.nodes_checked = checked
        prof.nodes_after = fgraph.node_count if full else fgraph._n_nodes
        prof.time = time.perf_counter() - start
        return prof
