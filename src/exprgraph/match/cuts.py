"""Where the first-match machine may cut: sub-patterns whose alternatives can never matter.

Imports core and :mod:`.patterns`.
"""

from __future__ import annotations

from typing import Any

from ..core import Term
from .patterns import Choice, OpPattern, Pattern, Star, Var, Where, _DotType, pattern_children

__all__ = ["Cuts", "NO_CUTS", "cut_points"]


def _names_of(p: Any) -> tuple:
    cls = p.__class__
    if cls is Var:
        return (p.name,)
    if cls is OpPattern:
        return (p.op.name,) if p.op.__class__ is Var else ()
    if cls is Choice:
        return (p.name,) if p.name else ()
    if isinstance(p, Star):
        return ((p.name,) if p.name else ()) + p.accumulate
    return ()


class Cuts:
    """Where the matcher may cut: ``all`` means at every branching op pattern, else the ids in ``ids``."""

    __slots__ = ("all", "ids")

    def __init__(self, all_: bool, ids: frozenset) -> None:
        self.all = all_
        self.ids = ids

    def __bool__(self) -> bool:
        return self.all or bool(self.ids)


NO_CUTS = Cuts(False, frozenset())


def cut_points(pattern: Any) -> Cuts:
    """Where the first-match machine may cut (discard the alternatives of a finished sub-match).

    An op pattern qualifies when every name inside it occurs nowhere else, it is not inside a run
    (matched repeatedly), and, if it holds names, the pattern has no :class:`Where` test (which
    reads every binding). Structural term patterns bind nothing and always qualify. The common
    case, every name used once and no runs or tests, needs no further analysis.
    """
    if _simple(pattern):
        return Cuts(True, frozenset())
    nodes, parents, occurrences, runs, has_where = _pattern_tree(pattern)
    bad = _unsafe(parents, occurrences, runs, has_where)
    good: dict[int, bool] = {}
    for i, node in enumerate(nodes):
        if node.__class__ is OpPattern and node.branchy:
            good[id(node)] = good.get(id(node), True) and not bad[i]
    return Cuts(False, frozenset(k for k, v in good.items() if v))


def _simple(pattern: Any) -> bool:
    """Whether every name of ``pattern`` occurs once and it has no run and no test (cut everywhere)."""
    seen: set[str] = set()
    stack: list[Any] = [pattern]
    pop, extend = stack.pop, stack.extend
    while stack:
        node = pop()
        cls = node.__class__
        if cls is Var:
            if node.name in seen:
                return False
            seen.add(node.name)
        elif cls is OpPattern:
            extend(node.args)
            if isinstance(node.attr, Pattern):
                stack.append(node.attr)
            if node.op.__class__ is Var:
                stack.append(node.op)
        elif cls is Term or cls is _DotType:
            continue
        else:
            if cls is Where or isinstance(node, Star):
                return False
            for name in _names_of(node):
                if name in seen:
                    return False
                seen.add(name)
            extend(pattern_children(node))
    return True


def _pattern_tree(pattern: Any) -> tuple[list[Any], list[int], dict[str, list[int]], list[int], bool]:
    """The pattern as a tree in preorder: nodes, parent indices, where each name occurs, runs, any test."""
    nodes: list[Any] = []
    parents: list[int] = []
    occurrences: dict[str, list[int]] = {}
    runs: list[int] = []
    has_where = False
    stack: list[tuple[Any, int]] = [(pattern, -1)]
    while stack:
        node, par = stack.pop()
        idx = len(nodes)
        nodes.append(node)
        parents.append(par)
        cls = node.__class__
        if cls is Term:
            continue
        if cls is Where:
            has_where = True
        elif isinstance(node, Star):
            runs.append(idx)
        for name in _names_of(node):
            occurrences.setdefault(name, []).append(idx)
        stack.extend((k, idx) for k in pattern_children(node))
    return nodes, parents, occurrences, runs, has_where


def _unsafe(parents: list[int], occurrences: dict[str, list[int]], runs: list[int], has_where: bool) -> list[bool]:
    """Per node of the tree, whether a cut there could lose a match (see :func:`cut_points`)."""
    n = len(parents)
    size = [1] * n
    for i in range(n - 1, 0, -1):
        size[parents[i]] += size[i]
    bad = [False] * n

    def mark_up(i: int, lo: int, hi: int) -> None:
        # mark i and its ancestors bad until one whose subtree holds every position in [lo, hi]
        while i >= 0 and not bad[i]:
            if i <= lo and hi < i + size[i]:
                return
            bad[i] = True
            i = parents[i]

    for occ in occurrences.values():
        if has_where:
            for i in occ:
                mark_up(i, -1, n)  # every holder of a name is bad: the test reads it
        elif len(occ) > 1:
            lo, hi = min(occ), max(occ)
            for i in occ:
                mark_up(i, lo, hi)
    for r in runs:  # everything inside a run is matched repeatedly
        for i in range(r + 1, r + size[r]):
            bad[i] = True
    return bad
