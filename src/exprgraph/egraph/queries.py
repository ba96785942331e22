"""Read-only questions about an e-graph: lookups, equivalence, classes and their nodes, representatives.

:class:`Queries` is mixed into :class:`~exprgraph.egraph.EGraph`; it reads the structure (the
hashcons ``memo``, the union-find, the op index) and never changes it, except that asking for
a representative may create a placeholder leaf (a term, not an e-node).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any, cast

from ..core import Term, as_term, postorder
from .dot import to_dot
from .ematch import const_candidates
from .enode import CONST, ENode, attr_of, head_of, op_of, placeholder
from .explain import Explanation, explain
from .extract import Extracted, extract

if TYPE_CHECKING:
    from .egraph import EGraph

__all__ = ["Queries"]

_NUMBERS = (bool, int, float)


def _same_constants(node: Term) -> list[Term]:
    """The constants of ``node``'s value, ``node`` first (so an exact spelling wins) and zeros of its sign only."""
    sign = _sign(node.attr)
    return [node, *(c for c in const_candidates(node.attr) if c is not node and _sign(c.attr) == sign)]


def _sign(v: Any) -> float:
    """The sign of a constant's value, -1.0 for -0.0."""
    return math.copysign(1.0, v) if isinstance(v, float) else (-1.0 if v < 0 else 1.0)


class Queries:
    """Lookups and views of an e-graph (see the module docstring)."""

    if TYPE_CHECKING:  # the structure these methods read, held by EGraph (which mixes this class in)
        parent: list[int]
        memo: dict[tuple, int]
        consts: list[Term | None]
        fold: bool
        analysis: Any
        data: list[Any]
        _placeholders: dict[Term, int]

        def find(self, x: int) -> int: ...
        def rebuild(self) -> int: ...
        def _dtype_of(self, nid: int) -> str: ...
        def _index(self) -> tuple[dict, dict]: ...

    def lookup(self, term: Any) -> int | None:
        """The class of ``term`` if the e-graph represents it, else None (nothing is added)."""
        term = as_term(term)
        ids: dict[Term, int] = {}
        memo, find = self.memo, self.find
        for node in postorder((term,)):
            if node.args:
                key = (head_of(node), *[ids[a] for a in node.args])
            else:
                key = (node,)
            nid = memo.get(key)
            if nid is None:
                return None
            ids[node] = find(nid)
        return ids[term]

    def spellings(self, term: Any) -> dict[int, Term]:
        """``{class: term}`` for the represented terms equal to ``term`` with constants matched by value.

        ``1`` also finds ``1.0`` (and ``0`` finds ``0.0`` but not ``-0.0``: ``x/-0.0`` is not ``x/0.0``); one
        spelling per class reached, ``term`` itself where it is represented.
        """
        term = as_term(term)
        found: dict[Term, dict[int, Term]] = {}
        memo, find = self.memo, self.find
        for node in postorder((term,)):
            here: dict[int, Term] = {}
            if not node.args:
                cands = _same_constants(node) if node.op is CONST and node.attr.__class__ in _NUMBERS else (node,)
                for t in cands:
                    nid = memo.get((t,))
                    if nid is not None:
                        here.setdefault(find(nid), t)
            else:
                head = head_of(node)
                options = [list(found[a].items()) for a in node.args]
                for combo in itertools.product(*options):
                    nid = memo.get((head, *[c for c, _ in combo]))
                    if nid is not None:
                        here.setdefault(find(nid), Term(node.op, tuple(t for _, t in combo), node.attr))
            if not here:
                return {}
            found[node] = here
        return found[term]

    def lookup_by_value(self, term: Any) -> set[int]:
        """The classes representing ``term`` when its constants match by value (``1`` finds ``1.0`` too)."""
        return set(self.spellings(term))

    def equivalent(self, t1: Any, t2: Any) -> bool:
        """Whether the e-graph has proved ``t1 == t2`` (both represented; constants compared by value)."""
        self.rebuild()
        a = self.lookup_by_value(t1)
        return bool(a) and not a.isdisjoint(self.lookup_by_value(t2))

    def constant(self, c: int) -> Term | None:
        """The constant class ``c`` folded to (None when none is known)."""
        return self.consts[self.find(c)] if self.fold else None

    def get_data(self, c: int) -> Any:
        """The user analysis data of class ``c``."""
        if self.analysis is None:
            raise ValueError("this e-graph has no analysis")
        return self.data[self.find(c)]

    def dtype(self, c: int) -> str:
        """The dtype of the terms of class ``c``."""
        return self._dtype_of(self.find(c))

    def enode(self, key: tuple) -> ENode:
        """The readable view of an e-node tuple."""
        head = key[0]
        return ENode(op_of(head), attr_of(head), key[1:])

    def classes(self) -> dict[int, list[ENode]]:
        """Every class with its e-nodes (readable views), after a rebuild."""
        self.rebuild()
        out: dict[int, list[ENode]] = {}
        for table in self._index()[0].values():
            for c, nodes in table.items():
                out.setdefault(c, []).extend(self.enode(k) for k in nodes)
        return out

    def nodes(self, c: int) -> list[ENode]:
        """The e-nodes of class ``c`` (pruned nodes left out), after a rebuild."""
        self.rebuild()
        c = self.find(c)
        return [self.enode(k) for table in self._index()[0].values() for k in table.get(c, ())]

    def class_ids(self) -> list[int]:
        """The ids of all classes."""
        parent = self.parent
        return [i for i in range(len(parent)) if parent[i] == i]

    # -- representatives (what conditions and Python appliers see of a class) -------------------------

    def representative(self, c: int) -> Term:
        """A term standing for class ``c``: its constant, else a symbol it holds, else a placeholder leaf."""
        c = self.find(c)
        if self.fold:
            k = self.consts[c]
            if k is not None:
                return k
        for key in self._index()[1].get(c, ()):
            head = key[0]
            if head.op.name == "symbol" or head.op.name == "const":
                return head
        return self._placeholder(c)

    def _placeholder(self, c: int) -> Term:
        p = placeholder(c, self.dtype(c))
        self._placeholders[p] = c
        return p

    def bind_of(self, reps: Iterable[Term]) -> dict[Term, int]:
        """Map placeholder representatives back to their classes (for terms built from them)."""
        out = {}
        for r in reps:
            c = self._placeholders.get(r)
            if c is not None:
                out[r] = c
        return out

    # -- extraction, explanation, pictures --------------------------------------------------------------

    def extract(self, c: int | Any, cost: Any = "size", *, exact: bool = False) -> Extracted:
        """The cheapest term of class ``c`` (or of a term's class): ``(cost, term)``; see :mod:`.extract`."""
        return extract(cast("EGraph", self), c, cost, exact=exact)

    def explain(self, t1: Any, t2: Any) -> Explanation:
        """The rule applications proving ``t1 == t2`` (needs ``EGraph(explanations=True)``); see :mod:`.explain`."""
        return explain(cast("EGraph", self), t1, t2)

    def to_dot(self, **kwargs: Any) -> str:
        """Graphviz source of the e-graph, one cluster per class; see :func:`.dot.to_dot`."""
        return to_dot(cast("EGraph", self), **kwargs)

    def iter_nodes(self) -> Iterator[tuple[int, tuple]]:
        """``(class, e-node tuple)`` for every stored node (rebuilt; pruned nodes left out)."""
        for table in self._index()[0].values():
            for c, nodes in table.items():
                for k in nodes:
                    yield c, k
