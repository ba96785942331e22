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
from .rule import Rule

__all__ = ["relation_rule", "RelationRule", "declare_op_facts"]


class RelationRule(Rule):
    """A :class:`~exprgraph.rules.Rule` without a pattern: a term becomes the first ground ``out`` of
    ``relation(term, out)``.

    Only a constructor over :meth:`Rule.of_function` (so a relation is one more way of writing
    the one rule class); ``relation`` and ``results`` stay readable for the graph's kanren rewriter.
    """

    __slots__ = ("relation", "results")

    def __init__(
        self, relation: Callable[[Any, Any], Any], *, name: str | None = None, ops: Iterable[Any] = (), results: int = 4
    ) -> None:
        if not callable(relation):
            raise TypeError(f"a relation is a callable (in, out) -> goal, not {relation!r}")
        root_ops = tuple(get_op(o) if isinstance(o, str) else o for o in ops)
        super().__init__(
            None,
            _related(relation, root_ops, results),
            name=name or getattr(relation, "__name__", "relation"),
            ops=root_ops,
        )
        self.relation = relation
        self.results = results

    def __repr__(self) -> str:
        return f"<relation rule {self.name}>"


def _related(relation: Callable[[Any, Any], Any], root_ops: tuple[Op, ...], results: int) -> Callable[[Any], Any]:
    """``term -> the first ground related term different from it, or None``."""

    def related(expr: Any) -> Any:
        if root_ops and (expr.__class__ is not Term or expr.op not in root_ops):
            return None
        q = var()
        for res in run(results, q, relation(expr, q)):
            try:
                out = to_term(res)
            except (ValueError, TypeError):
                continue
            if out.__class__ is Term and out is not expr:
                return out
        return None

    return related


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
