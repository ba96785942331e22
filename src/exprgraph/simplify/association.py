"""Float sums and products keep their association: what the safe strength may collect, and the rest.

Float addition and multiplication are commutative but not associative: ``(x + z) + y`` is 1.0 at
x = 1e16, z = -1e16, y = 1 where ``(x + y) + z`` is 0.0, and the order of a product decides where
it overflows. A safe sum or product is :func:`gather`-ed through its nested sums (products); its
collected form is taken only where it is :func:`one_rounding` of the exact whole (see
:mod:`.sums` and :mod:`.products`), and otherwise the node keeps its own association, binary, its
two operands sorted (:func:`binary_form`: ``a + b`` and ``b + a`` are the same IEEE operation).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..core import Op, Term
from .collect import merge_all
from .order import in_sort_order, sorted_terms

__all__ = ["gather", "binary_form", "what_is_left", "in_order", "one_rounding", "uses_any", "MAX_GATHER", "MAX_LOOK"]

#: the most operands a safe sum or product gathers through nested sums (products) before it keeps its form
MAX_GATHER = 16
#: the most nodes :func:`uses_any` looks at before it answers "perhaps" (True)
MAX_LOOK = 64


def gather(
    t: Term, inner: Callable[[Term], tuple[tuple[Term, ...], bool] | None], through: list[Term] | None = None
) -> list[tuple[Term, bool]] | None:
    """The operands of ``t`` reached through nested nodes, left to right, as ``(operand, negated)``.

    ``inner(a)`` gives ``(operands, negates)`` for a node to look through (a sum inside a sum,
    ``-1 * (a + b)`` negating), or None for an operand; the nodes looked through are appended to
    ``through``. None past MAX_GATHER operands. Iterative; a shared node is read where it occurs,
    so the cap also bounds the work of a DAG whose tree is exponential.
    """
    out: list[tuple[Term, bool]] = []
    stack = [(a, False) for a in reversed(t.args)]
    while stack:
        a, neg = stack.pop()
        found = inner(a)
        if found is None:
            out.append((a, neg))
            if len(out) > MAX_GATHER:
                return None
            continue
        if through is not None:
            through.append(a)
        kids, flip = found
        stack.extend((k, neg ^ flip) for k in reversed(kids))
        if len(stack) + len(out) > MAX_GATHER:
            return None
    return out


def binary_form(t: Term, op: Op, head: Callable[[Term], Any]) -> Term | None:
    """``t`` in its own association: n > 2 operands nested from the left, two operands sorted by ``head``
    and then the canonical order (:func:`~.order.sort_key`, whose digests are worked out only on a tie).

    ``op(a, b, c)`` is computed ``op(op(a, b), c)``, so nesting it keeps every operation; the two
    operands of a commutative IEEE operation swap without changing a bit. None when ``t`` is already so.
    """
    args = t.args
    if len(args) > 2:
        out = op(args[0], args[1])
        for a in args[2:]:
            out = op(out, a)
        return out
    a, b = args
    ha, hb = head(a), head(b)
    if ha != hb:
        return op(b, a) if hb < ha else None
    return None if in_sort_order(a, b) else op(b, a)  # (head, sort_key) compared, the digests only on a tie


def what_is_left(
    groups: dict[Term, list[tuple[Any, Term]]],
    merge: Callable[[Term, list[tuple[Any, Term]], list[Term]], list[tuple[Term, bool]] | None],
    constant: tuple[Term | None, bool] | None,
) -> tuple[list[Term], list[Term]] | None:
    """The operands left of a safe sum or product, and its units, if that is one rounding of the whole.

    ``merge(kind, members, units)`` makes a group ``[(operand, exact)]`` (appending a unit such as
    ``x - x`` to ``units``), or declines with None; ``constant`` is the folded ``(constant, exact)``
    (``(None, True)``: none), or None when the constants cannot fold. None unless
    :func:`one_rounding` holds for the operands and the constant together.
    """
    units: list[Term] = []
    items = merge_all(groups, lambda kind, members: merge(kind, members, units))
    if items is None or constant is None:
        return None
    if constant[0] is not None:
        items.append((constant[0], constant[1]))
    if not one_rounding(items):
        return None
    return [a for a, _ in items if a is not constant[0]], units


def in_order(kept: list[Term], units: list[Term]) -> list[Term]:
    """The operands left of a safe node, sorted, then its units (each once), sorted."""
    if len(kept) > 1:
        kept = sorted_terms(kept)
    if units:
        kept = kept + (sorted_terms(list(dict.fromkeys(units))) if len(units) > 1 else units)
    return kept


def one_rounding(items: list[tuple[Term, bool]]) -> bool:
    """Whether the ``(operand, exact)`` left of a safe sum or product make it one rounding of its exact value:
    one operand (itself one rounding), or two computed exactly as the input computed them."""
    return len(items) <= 1 or (len(items) == 2 and items[0][1] and items[1][1])


def uses_any(terms: list[Term], nodes: set[Term]) -> bool:
    """Whether a term of ``terms`` has one of ``nodes`` among its subterms (True too when that takes
    more than MAX_LOOK nodes to rule out)."""
    if not nodes:
        return False
    seen: set[Term] = set()
    stack = list(terms)
    while stack:
        a = stack.pop()
        if a in seen:
            continue
        if a in nodes:
            return True
        seen.add(a)
        if len(seen) > MAX_LOOK:
            return True
        stack.extend(a.args)
    return False
