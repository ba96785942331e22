"""The op index every rewriting driver dispatches through: a node tries only what can apply to its op.

:class:`OpIndex` holds entries (rules with their appliers, node rewriters) in their given order,
each with the ops it applies to. The term rewriter's rule table (:meth:`RuleSet.table`), the
graph walkers' dispatch and :class:`~exprgraph.graph.SequentialNodeRewriter` are all one.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..core import Op

__all__ = ["OpIndex"]


class OpIndex:
    """Entries indexed by op, in their given order: ``get(op)`` is what a node of ``op`` tries.

    ``entries`` are ``(entry, ops)`` pairs: ``ops`` None means every op, otherwise the entry is
    tried on nodes of those ops only (none, for an empty collection). An op no entry names gets
    :attr:`wild`, the entries for every op. ``leafless`` names (by identity) entries of every op
    that never apply to a leaf (a term without operands): they alone do not make the index reach leaves.
    """

    __slots__ = ("table", "wild", "reaches_leaves")

    def __init__(self, entries: Iterable[tuple[Any, Iterable[Op] | None]], *, leafless: Iterable[Any] = ()) -> None:
        made = [(e, None if ops is None else frozenset(ops)) for e, ops in entries]
        named = {op for _, ops in made if ops for op in ops}
        #: op -> the entries a node of that op tries, in order
        self.table: dict[Op, tuple] = {op: tuple(e for e, ops in made if ops is None or op in ops) for op in named}
        #: the entries tried on every op
        self.wild: tuple = tuple(e for e, ops in made if ops is None)
        #: whether an entry may apply to a leaf (it names a nullary op, or applies to every op)
        skipped = {id(e) for e in leafless}
        self.reaches_leaves = any(id(e) not in skipped for e in self.wild) or any(op.arity[1] == 0 for op in named)

    def get(self, op: Op) -> tuple:
        """The entries a node of ``op`` tries, in order."""
        return self.table.get(op, self.wild)
