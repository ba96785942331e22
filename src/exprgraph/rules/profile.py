"""The one profile class of rewriting: :class:`RewriteProfile`, for rule sets and for graph rewriters.

A profile records one rewriting run (or several, added up): its name and kind, wall time, nodes
before and after and why it stopped, and, for the term rewriter (:func:`~exprgraph.rules.rewrite`),
the tries, matches, rewrites and time of each rule (:class:`RuleStats`). ``RewriteProfile()``
(no arguments) is the profile a ``rewrite(..., profile=...)`` call fills; the graph rewriters
build ``RewriteProfile(name, kind, ...)`` and the subclasses of :mod:`exprgraph.graph.profile`
(walks, merges, equilibria, sequences), which add their own counters. ``str(profile)`` and
``print_profile()`` give the printed report.

Imports nothing of the package: the graph layer imports it, never the reverse.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Any, TextIO

__all__ = ["RewriteProfile", "RuleStats", "format_table", "format_seconds", "RULES_KIND"]

#: the kind of a profile filled by the term rewriter (the default of ``RewriteProfile()``)
RULES_KIND = "rewrite"


@dataclass
class RuleStats:
    """Counters of one rule in a profiled rewrite."""

    tries: int = 0
    matches: int = 0
    rewrites: int = 0
    time: float = 0.0


def format_seconds(seconds: float) -> str:
    """A time as the profiles print it (``0.012s``)."""
    return f"{seconds:.3f}s"


def format_table(
    header: list[str], rows: list[list[Any]], indent: str = "", right: set[int] | None = None
) -> list[str]:
    """Lines of an aligned text table (columns in ``right`` are right-aligned)."""
    right = right if right is not None else set()
    cells = [[str(c) for c in row] for row in [header, *rows]]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    lines = []
    for r in cells:
        parts = [c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths, strict=True))]
        lines.append((indent + "  ".join(parts)).rstrip())
    return lines


@dataclass(repr=False)
class RewriteProfile:
    """The profile of a rewriting run: time, sizes, why it stopped, and per-rule counters.

    ``RewriteProfile()`` is a term-rewriting profile (pass it to :func:`~exprgraph.rules.rewrite`
    to fill ``rules``, ``nodes`` and ``steps``); ``RewriteProfile(name, kind, nodes_before=...)``
    is one graph rewriter's run.
    """

    name: str = RULES_KIND
    kind: str = RULES_KIND
    time: float = 0.0
    nodes_before: int = 0
    nodes_after: int = 0
    #: "done" for single passes, "fixpoint" or a budget for equilibria
    stop_reason: str = "done"
    #: per rule (by name): tries, matches, rewrites and time of the term rewriter
    rules: dict[str, RuleStats] = field(default_factory=dict)
    #: nodes the term rewriter visited, and the rewrites it made
    nodes: int = 0
    steps: int = 0

    def stats(self, name: str) -> RuleStats:
        """The counters of the rule called ``name`` (created on first use)."""
        found = self.rules.get(name)
        if found is None:
            found = self.rules[name] = RuleStats()
        return found

    @property
    def changed(self) -> bool:
        """Whether the run rewrote anything or changed the size (subclasses also count applications)."""
        return self.steps > 0 or self.nodes_before != self.nodes_after

    def report(self) -> str:
        """The term rewriter's counters as a markdown table, slowest rule first."""
        lines = [
            f"rewrite: {self.nodes} nodes visited, {self.steps} rewrites, {self.time * 1e3:.2f} ms",
            "",
            "| rule | tries | matches | rewrites | time (ms) |",
            "|---|---:|---:|---:|---:|",
        ]
        for name, st in sorted(self.rules.items(), key=lambda kv: -kv[1].time):
            lines.append(f"| `{name}` | {st.tries} | {st.matches} | {st.rewrites} | {st.time * 1e3:.3f} |")
        return "\n".join(lines)

    def header(self) -> str:
        """The first line of the printed profile of a graph rewriter."""
        return (
            f"{self.kind} {self.name}: {format_seconds(self.time)}, nodes {self.nodes_before} -> {self.nodes_after}, "
            f"stop: {self.stop_reason}"
        )

    def lines(self, indent: str = "") -> list[str]:
        """The printed profile as lines (the rule table for a term-rewriting profile)."""
        if self.kind == RULES_KIND:
            return [indent + line for line in self.report().split("\n")]
        return [indent + self.header()]

    def format(self) -> str:
        """The printed profile as text."""
        return "\n".join(self.lines())

    def print_profile(self, file: TextIO | None = None) -> None:
        """Print the profile (to stdout by default)."""
        print(self.format(), file=file if file is not None else sys.stdout)

    def __str__(self) -> str:
        return self.format()

    def __repr__(self) -> str:
        return (
            f"<{type(self).__name__} {self.name}: {self.time:.3g}s, nodes {self.nodes_before} -> "
            f"{self.nodes_after}, stop: {self.stop_reason}>"
        )
