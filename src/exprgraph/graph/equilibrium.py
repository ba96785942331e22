"""EquilibriumGraphRewriter: apply rewriters until none applies, within a budget.

Each pass runs the graph rewriters, then walks the nodes from inputs to outputs offering each
to the node rewriters that track its op (nodes brought in by a replacement are visited in the
same pass unless ``ignore_newtrees``), then runs the final rewriters. Cleanup rewriters (cheap,
incremental ones such as a commutative :class:`~exprgraph.graph.MergeOptimizer`) run after every
graph rewriter and every applied node rewrite. The loop ends at a fixpoint (a pass that changes
nothing) or when a budget runs out; the profile's ``stop_reason`` says which:

- ``"fixpoint"``: nothing applies any more;
- ``"max_use_ratio"``: one rewriter was applied more than ``max_use_ratio`` times the number of
  nodes the graph started with (a likely rewrite loop; ``stop_detail`` names it);
- ``"max_nodes"``: the graph grew beyond ``max_nodes`` nodes;
- ``"max_passes"`` / ``"time_limit"``: the pass count or the wall-time budget ran out.

A budget stop is also logged as a warning on the ``exprgraph.graph`` logger.

A node is visited once per pass, in the pass's initial topological order; a replacement may
reuse a node that comes later in that order, so a node visited earlier can have its operands
change afterwards. The next pass handles it; ``revisit_rebuilt=True`` instead visits such nodes
again within the pass (PyTensor's ``tracks_on_change_inputs``).
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any

from .interface import GraphRewriter, NodeRewriter, Rewriter
from .profile import EquilibriumProfile, PassProfile, RewriteProfile, RewriterStats
from .transaction import RewriteDriver, logger
from .walking import Dispatch, node_pass, stats_by_name

if TYPE_CHECKING:
    from .fgraph import FunctionGraph

__all__ = ["EquilibriumGraphRewriter", "Limits", "STOP_REASONS"]

STOP_REASONS = ("fixpoint", "max_use_ratio", "max_nodes", "max_passes", "time_limit")


@dataclass(frozen=True)
class Limits:
    """The budgets of an equilibrium run, each positive or None (no limit); see the module docstring."""

    max_use_ratio: float | None = 8.0
    max_nodes: int | None = None
    max_passes: int | None = None
    time_limit: float | None = None

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if value is not None and not value > 0:
                raise ValueError(f"{f.name} must be positive (or None for no limit), not {value!r}")

    def after_pass(self, nodes: int, npass: int, seconds: float) -> tuple[str | None, str]:
        """The budget stop reason after a pass that changed the graph (None to go on), and its detail."""
        if self.max_nodes is not None and nodes > self.max_nodes:
            return "max_nodes", f"{nodes} nodes, limit {self.max_nodes}"
        if self.max_passes is not None and npass >= self.max_passes:
            return "max_passes", f"{npass} passes"
        if self.time_limit is not None and seconds > self.time_limit:
            return "time_limit", f"{seconds:.3f}s, limit {self.time_limit}s"
        return None, ""


class EquilibriumGraphRewriter(GraphRewriter):
    """Apply node and graph rewriters in passes until a fixpoint or a budget (see the module docstring)."""

    def __init__(
        self,
        rewriters: Iterable[Rewriter],
        *,
        max_use_ratio: float | None = 8.0,
        max_nodes: int | None = None,
        max_passes: int | None = None,
        time_limit: float | None = None,
        final_rewriters: Iterable[GraphRewriter] = (),
        cleanup_rewriters: Iterable[GraphRewriter] = (),
        ignore_newtrees: bool = False,
        revisit_rebuilt: bool = False,
        failure_callback: Any = "raise",
        verbose: bool = False,
        name: str | None = None,
    ) -> None:
        super().__init__(name or "EquilibriumGraphRewriter")
        rewriters = list(rewriters)
        self.node_rewriters: list[NodeRewriter] = [r for r in rewriters if isinstance(r, NodeRewriter)]
        self.graph_rewriters: list[GraphRewriter] = [r for r in rewriters if isinstance(r, GraphRewriter)]
        for r in rewriters:
            if not isinstance(r, (NodeRewriter, GraphRewriter)):
                raise TypeError(f"EquilibriumGraphRewriter takes node and graph rewriters, not {r!r}")
        self.final_rewriters = list(final_rewriters)
        self.cleanup_rewriters = list(cleanup_rewriters)
        for r in (*self.final_rewriters, *self.cleanup_rewriters):
            if not isinstance(r, GraphRewriter):
                raise TypeError(f"final and cleanup rewriters are graph rewriters, not {r!r}")
        #: the budgets (PyTensor's keyword arguments, checked together)
        self.limits = Limits(max_use_ratio, max_nodes, max_passes, time_limit)
        self.ignore_newtrees = ignore_newtrees
        self.revisit_rebuilt = revisit_rebuilt
        self.driver = RewriteDriver(failure_callback, verbose)
        self.dispatch = Dispatch(self.node_rewriters)

    def add_requirements(self, fgraph: FunctionGraph) -> None:
        """Requirements of every rewriter involved."""
        for r in (*self.node_rewriters, *self.graph_rewriters, *self.final_rewriters, *self.cleanup_rewriters):
            r.add_requirements(fgraph)

    def summary_children(self) -> list[Rewriter]:
        """Graph rewriters, node rewriters, then the final and cleanup rewriters."""
        return [*self.graph_rewriters, *self.node_rewriters, *self.final_rewriters, *self.cleanup_rewriters]

    def _run_graph(self, g: GraphRewriter, fgraph: FunctionGraph, prof: EquilibriumProfile) -> bool:
        version = fgraph.version
        start = time.perf_counter()
        child = g.timed_apply(fgraph)
        prof.graph_rewriter_time += time.perf_counter() - start
        _merge_graph_profile(prof, child)
        return fgraph.version != version

    def _cleanup(self, fgraph: FunctionGraph, prof: EquilibriumProfile) -> None:
        for g in self.cleanup_rewriters:
            version = fgraph.version
            start = time.perf_counter()
            child = g.apply(fgraph)
            prof.graph_rewriter_time += time.perf_counter() - start
            if isinstance(child, RewriteProfile) and (fgraph.version != version or child.changed):
                _merge_graph_profile(prof, child)

    def apply(self, fgraph: FunctionGraph) -> EquilibriumProfile:
        """Run passes until a fixpoint or a budget; returns the profile with the stop reason."""
        start = time.perf_counter()
        prof = EquilibriumProfile(self.name, type(self).__name__)
        n0 = fgraph.node_count
        prof.nodes_before = prof.max_nodes = n0
        ratio = self.limits.max_use_ratio
        max_use = None if ratio is None else ratio * max(n0, 1)
        stats = self.dispatch.stats()
        stop: str | None = None
        detail = ""
        npass = 0
        while stop is None:
            pstart = time.perf_counter()
            pp = PassProfile(npass)
            changed = self._run_graph_rewriters(self.graph_rewriters, fgraph, prof, pp)
            if self.node_rewriters:
                node_changed, stop, detail = self._node_pass(fgraph, prof, pp, stats, max_use)
                changed |= node_changed
            if stop is None:
                changed |= self._run_graph_rewriters(self.final_rewriters, fgraph, prof, pp)
            pp.nodes = fgraph.node_count
            prof.max_nodes = max(prof.max_nodes, pp.nodes)
            pp.time = time.perf_counter() - pstart
            prof.toposort_time += pp.toposort_time
            prof.passes.append(pp)
            npass += 1
            if stop is not None:
                break
            stop, detail = self._end_of_pass(changed, pp.nodes, npass, start)
        self._finish(prof, stop, detail, stats, fgraph, start)
        return prof

    def _run_graph_rewriters(
        self, rewriters: list[GraphRewriter], fgraph: FunctionGraph, prof: EquilibriumProfile, pp: PassProfile
    ) -> bool:
        """Run each graph rewriter once (cleanups after each); whether any changed the graph."""
        changed = False
        for g in rewriters:
            if self._run_graph(g, fgraph, prof):
                changed = True
                pp.counts[g.name] = pp.counts.get(g.name, 0) + 1
            if self.cleanup_rewriters:
                self._cleanup(fgraph, prof)
        return changed

    def _node_pass(
        self, fgraph: FunctionGraph, prof: EquilibriumProfile, pp: PassProfile, stats: dict, max_use: float | None
    ) -> tuple[bool, str | None, str]:
        """Offer every node, inputs first, to the node rewriters; (changed, stop reason or None, detail)."""
        max_nodes = self.limits.max_nodes
        cleanups = bool(self.cleanup_rewriters)
        stop: str | None = None
        detail = ""

        def applied(st: RewriterStats) -> bool:
            nonlocal stop, detail
            pp.applied += 1
            pp.counts[st.name] = pp.counts.get(st.name, 0) + 1
            if max_use is not None and st.applied > max_use:
                stop = "max_use_ratio"
                detail = f"{st.name} applied {st.applied} times, limit {max_use:g}"
            elif max_nodes is not None and fgraph._n_nodes > max_nodes:
                stop = "max_nodes"
                detail = f"{fgraph._n_nodes} nodes, limit {max_nodes}"
            if cleanups:
                self._cleanup(fgraph, prof)
            return stop is not None

        nstart = time.perf_counter()
        done = node_pass(
            fgraph,
            self.dispatch,
            self.driver,
            stats,
            new_nodes=not self.ignore_newtrees,
            revisit=self.revisit_rebuilt,
            on_applied=applied,
        )
        prof.node_rewriter_time += time.perf_counter() - nstart
        pp.toposort_time = done.toposort_time
        return done.applied > 0, stop, detail

    def _end_of_pass(self, changed: bool, nodes: int, npass: int, start: float) -> tuple[str | None, str]:
        """The stop reason after a complete pass (None to go on), and its detail."""
        if not changed:
            return "fixpoint", ""
        return self.limits.after_pass(nodes, npass, time.perf_counter() - start)

    def _finish(
        self, prof: EquilibriumProfile, stop: str, detail: str, stats: dict, fgraph: FunctionGraph, start: float
    ) -> None:
        """Record the stop reason (warning on a budget stop) and the per-rewriter table of node and graph rewriters."""
        prof.stop_reason = stop
        prof.stop_detail = detail
        if stop != "fixpoint":
            logger.warning("%s stopped before a fixpoint: %s (%s)", self.name, stop, detail)
        graph_stats = prof.rewriters
        prof.rewriters = stats_by_name(stats)
        for name, st in graph_stats.items():
            if name in prof.rewriters:
                prof.rewriters[name].merge(st)
            else:
                prof.rewriters[name] = st
        prof.nodes_after = fgraph.node_count
        prof.time = time.perf_counter() - start


def _merge_graph_profile(prof: EquilibriumProfile, child: RewriteProfile) -> None:
    """Fold a graph rewriter's run into the per-rewriter table of an equilibrium profile."""
    st = prof.rewriters.get(child.name)
    if st is None:
        st = prof.rewriters[child.name] = RewriterStats(child.name)
    st.tried += 1
    st.time += child.time
    if child.changed:
        st.applied += 1
