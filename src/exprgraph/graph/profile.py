"""Profiles: what every graph rewriter returns (dataclasses, printed as aligned tables).

Each graph rewriter's ``rewrite(fgraph)`` returns a :class:`RewriteProfile` (the one profile class
of :mod:`exprgraph.rules.profile`, re-exported here) or one of the subclasses below:
wall time, nodes before and after, why it stopped, and per node rewriter the time, the number of
tries and applications and the nodes created. ``print_profile()`` renders them like the seed's
profiler output, slowest first; sequences print their children indented.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..rules.profile import RewriteProfile, format_seconds, format_table

__all__ = [
    "RewriterStats",
    "RewriteProfile",
    "WalkProfile",
    "MergeProfile",
    "PassProfile",
    "EquilibriumProfile",
    "SequenceProfile",
    "format_table",
]


@dataclass
class RewriterStats:
    """Counters of one node rewriter within a graph rewriter run."""

    name: str
    time: float = 0.0
    tried: int = 0
    applied: int = 0
    nodes_created: int = 0
    failed: int = 0

    def merge(self, other: RewriterStats) -> None:
        """Add ``other``'s counters to these."""
        self.time += other.time
        self.tried += other.tried
        self.applied += other.applied
        self.nodes_created += other.nodes_created
        self.failed += other.failed


_t = format_seconds


def _stats_lines(stats: dict[str, RewriterStats], indent: str) -> list[str]:
    used = sorted((s for s in stats.values() if s.applied), key=lambda s: (-s.time, s.name))
    unused = sorted((s for s in stats.values() if not s.applied and s.tried), key=lambda s: (-s.time, s.name))
    lines: list[str] = []
    if used:
        rows = [[_t(s.time), s.applied, s.nodes_created, s.tried, s.failed, s.name] for s in used]
        lines += format_table(["time", "applied", "created", "tried", "failed", "rewriter"], rows, indent, {1, 2, 3, 4})
    if unused:
        total = sum(s.time for s in unused)
        lines.append(f"{indent}{_t(total)} in {len(unused)} rewriter(s) tried but never applied:")
        rows = [[_t(s.time), s.tried, s.name] for s in unused]
        lines += format_table(["time", "tried", "rewriter"], rows, indent + "  ", {1})
    return lines


@dataclass(repr=False)
class WalkProfile(RewriteProfile):
    """A walking rewriter's run: one pass over the nodes in a fixed order."""

    order: str = "in_to_out"
    nodes_visited: int = 0
    applied: int = 0
    toposort_time: float = 0.0
    rewriters: dict[str, RewriterStats] = field(default_factory=dict)

    @property
    def changed(self) -> bool:
        """Whether any node rewrite was applied."""
        return self.applied > 0

    def lines(self, indent: str = "") -> list[str]:
        """Header, visit counts, then the per-rewriter table."""
        out = [
            indent + self.header(),
            f"{indent}  order {self.order}, {self.nodes_visited} nodes visited, {self.applied} rewrites applied, "
            f"toposort {_t(self.toposort_time)}",
        ]
        return out + _stats_lines(self.rewriters, indent + "  ")


@dataclass(repr=False)
class MergeProfile(RewriteProfile):
    """A merge run: how many nodes were merged into an equal one."""

    merged: int = 0
    commutative_merged: int = 0
    nodes_checked: int = 0

    @property
    def changed(self) -> bool:
        """Whether anything was merged."""
        return self.merged > 0

    def lines(self, indent: str = "") -> list[str]:
        """Header and merge counts."""
        return [
            indent + self.header(),
            f"{indent}  {self.nodes_checked} nodes checked, {self.merged} merged "
            f"({self.commutative_merged} by commuted operands); equal subterms are shared at construction",
        ]


@dataclass
class PassProfile:
    """One pass of an equilibrium rewriter."""

    index: int
    time: float = 0.0
    applied: int = 0
    nodes: int = 0
    graph_rewriter_time: float = 0.0
    toposort_time: float = 0.0
    counts: dict[str, int] = field(default_factory=dict)


@dataclass(repr=False)
class EquilibriumProfile(RewriteProfile):
    """An equilibrium run: passes until nothing applies (or a budget runs out, see ``stop_reason``)."""

    passes: list[PassProfile] = field(default_factory=list)
    max_nodes: int = 0
    node_rewriter_time: float = 0.0
    graph_rewriter_time: float = 0.0
    toposort_time: float = 0.0
    rewriters: dict[str, RewriterStats] = field(default_factory=dict)
    graph_profiles: list[RewriteProfile] = field(default_factory=list)
    stop_detail: str = ""

    @property
    def applied(self) -> int:
        """Total node rewrites applied over all passes."""
        return sum(p.applied for p in self.passes)

    @property
    def changed(self) -> bool:
        """Whether any rewrite was applied."""
        return self.applied > 0 or any(g.changed for g in self.graph_profiles)

    def lines(self, indent: str = "") -> list[str]:
        """Header, totals, one row per pass, then the per-rewriter table."""
        detail = f" ({self.stop_detail})" if self.stop_detail else ""
        out = [
            f"{indent}{self.kind} {self.name}: {_t(self.time)} for {len(self.passes)} passes, "
            f"nodes (start, end, max) {self.nodes_before} {self.nodes_after} {self.max_nodes}, "
            f"stop: {self.stop_reason}{detail}",
            f"{indent}  time in node rewriters {_t(self.node_rewriter_time)}, graph rewriters "
            f"{_t(self.graph_rewriter_time)}, toposort {_t(self.toposort_time)}",
        ]
        rows = []
        for p in self.passes:
            top = sorted(p.counts.items(), key=lambda kv: (-kv[1], kv[0]))
            shown = " ".join(f"{name} ({n})" for name, n in top[:5]) + (" ..." if len(top) > 5 else "")
            rows.append([p.index, _t(p.time), p.applied, p.nodes, shown])
        out += format_table(["pass", "time", "applied", "nodes", "rewrites"], rows, indent + "  ", {0, 2, 3})
        return out + _stats_lines(self.rewriters, indent + "  ")


@dataclass(repr=False)
class SequenceProfile(RewriteProfile):
    """A sequence of graph rewriters: each child's profile with its position in the sequence."""

    children: list[tuple[int, RewriteProfile]] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        """Whether any child changed the graph."""
        return any(p.changed for _, p in self.children)

    def lines(self, indent: str = "") -> list[str]:
        """Header, then the children (slowest first), each indented."""
        out = [indent + self.header()]
        if self.children:
            out.append(f"{indent}  time - (index, name, kind):")
        for i, p in sorted(self.children, key=lambda c: -c[1].time):
            out.append(f"{indent}  {_t(p.time)} - ({i}, {p.name}, {p.kind})")
            out += p.lines(indent + "    ")
        return out
