"""Relations as rules: a miniKanren relation ``rel(in, out)`` used as a rewrite rule on terms.

``relation_rule(rel)`` asks kanren for an ``out`` related to the input term and rewrites to the
first one that is a complete term different from the input. Relations run in both directions,
so ``relation_rule(lambda a, b: rel(b, a))`` is the inverse rewrite. Apply it over a whole term
with :func:`~exprgraph.rules.rewrite` (bottom-up to a fixpoint), as with any rule.

:func:`declare_op_facts` tells kanren which ops of the table are commutative and associative
(the ``commutative``/``associative`` facts of ``kanren.assoccomm``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from kanren import run
from kanren.assoccomm import associative, commutative
from kanren.facts import fact

from ..core import Op, Term, get_op, ops
from ..match.unify import to_term, var

__all__ = ["relation_rule", "RelationRule", "declare_op_facts"]


class RelationRule:
    """A rule that rewrites a term to the first ground ``out`` of ``relation(term, out)``."""

    __slots__ = ("relation", "name", "results", "root_ops", "__weakref__")

    def __init__(
        self, relation: Callable[[Any, Any], Any], *, name: str | None = None, ops: Iterable[Any] = (), results: int = 4
    ) -> None:
        if not callable(relation):
            raise TypeError(f"a relation is a callable (in, out) -> goal, not {relation!r}")
        self.relation = relation
        self.name = name or getattr(relation, "__name__", "relation")
        self.results = results
        self.root_ops = tuple(get_op(o) if isinstance(o, str) else o for o in ops)

    def apply(self, expr: Any) -> Any:
        """The related term, or None when the relation gives none (or only the input back)."""
        if self.root_ops and (expr.__class__ is not Term or expr.op not in self.root_ops):
            return None
        q = var()
        for res in run(self.results, q, self.relation(expr, q)):
            try:
                out = to_term(res)
            except (ValueError, TypeError):
                continue
            if out.__class__ is Term and out is not expr:
                return out
        return None

    def term_applier(self) -> Callable[[Term], Any]:
        """The ``term -> result or None`` function the rewrite driver calls."""
        return self.apply

    def __call__(self, expr: Any) -> Any:
        """Rewrite ``expr`` once at its root (unchanged when the relation gives nothing new)."""
        out = self.apply(expr)
        return expr if out is None else out

    def __repr__(self) -> str:
        return f"<relation rule {self.name}>"


def relation_rule(
    relation: Callable[[Any, Any], Any], *, name: str | None = None, ops: Iterable[Op | str] = (), results: int = 4
) -> RelationRule:
    """A rewrite rule from a kanren relation ``relation(in, out)``; ``ops`` limits it to terms of those ops."""
    return RelationRule(relation, name=name, ops=ops, results=results)


def declare_op_facts(op_list: Iterable[Op] | None = None) -> None:
    """Declare the commutative and associative ops of the table as kanren facts."""
    for op in ops() if op_list is None else op_list:
        if op.commutative:
            fact(commutative, op)
        if op.associative:
            fact(associative, op)
