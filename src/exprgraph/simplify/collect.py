"""Collecting like operands of a sum or a product: the one skeleton of the canonical sum and product.

A canonical sum and a canonical product are built alike: numeric constants fold into one, the
other operands are grouped by their kind (a sum's term by what its coefficient multiplies, a
product's factor by its base), each group merges into as few operands as it exactly can, and the
result is sorted into the canonical order (:mod:`.order`). :mod:`.sums` and :mod:`.products` say
how their groups merge; :func:`collect_like` and :func:`assemble` are the rest.

That full canonical form reassociates: it serves the unsafe strength and integer terms (whose
wrapping arithmetic is associative). A float sum or product of the safe strength is collected
only where that is one rounding of the whole, and otherwise keeps its association
(:mod:`.association`); :func:`canonical_node` chooses.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..core import Op, Term, const
from ..core.dtypes import is_float
from .budget import check_time
from .numbers import fold_value, number, same_dtype
from .order import in_sort_order, sorted_terms

__all__ = ["collect_like", "assemble", "merge_all", "repeats", "canonical_node", "flat_operands", "collected_already"]

#: ``split(operand)``: its kind and weight as a pair, a term's ``(coefficient, rest)``, a factor's ``(base, exponent)``
Split = Callable[[Term], tuple[Any, Any]]
#: ``merge(kind, [(weight, operand), ...], cancel)`` -> the merged operands, or None to decline the rewrite
Merge = Callable[[Any, list[tuple[Any, Term]], bool], list[Term] | None]


def collect_like(
    items: list[Term], op: Op, split: Split, kind_first: bool, merge: Merge, cancel: bool
) -> tuple[list[Term], Term | None] | None:
    """``(operands, constant)``: ``items`` (the flattened operands of ``op``) collected, or None to decline.

    ``split(a)`` gives an operand's kind and weight, the kind first when ``kind_first``; each
    group of one kind is merged by ``merge(kind, [(weight, operand), ...], cancel)``. The
    operands are the merged groups, sorted; the constant is the fold of the numeric constants
    (None when there are none).
    """
    consts: list[Term] = []
    groups: dict[Term, list[tuple[Any, Term]]] = {}
    for a in items:
        if number(a) is not None:
            consts.append(a)
            continue
        first, second = split(a)
        if kind_first:
            groups.setdefault(first, []).append((second, a))
        else:
            groups.setdefault(second, []).append((first, a))
    others = merge_all(groups, lambda kind, members: merge(kind, members, cancel))
    if others is None:
        return None
    others = sorted_terms(others)
    c = fold_value(op, consts) if consts else None
    if consts and c is None:
        return None
    return others, c


def canonical_node(t: Term, cancel: bool, safe: Callable[[Term], Any], full: Callable[[Term, bool], Any]) -> Any:
    """The rule of a sum or product: ``safe(t)`` for a float node without cancelling, else ``full(t, cancel)``.

    Integer nodes take the full form at either strength (wrapping arithmetic is associative). The
    time budget is checked here, at every sum and product.
    """
    check_time()
    return safe(t) if not cancel and is_float(t.dtype) else full(t, cancel)


def flat_operands(t: Term, op: Op) -> list[Term]:
    """The operands of ``t`` with those that are ``op`` nodes taken apart one level (``(a + b) + c``: a, b, c)."""
    items: list[Term] = []
    for a in t.args:
        items.extend(a.args if a.op is op else (a,))
    return items


def merge_all(groups: dict[Term, list[tuple[Any, Term]]], merge: Callable[[Term, list], list | None]) -> list | None:
    """What ``merge(kind, members)`` makes of every group, concatenated; None when one declines."""
    out: list = []
    for kind, members in groups.items():
        merged = merge(kind, members)
        if merged is None:
            return None
        out.extend(merged)
    return out


def assemble(
    t: Term, op: Op, parts: list[Term], others: list[Term], c: Term | None, *, empty: int, constant_first: bool
) -> Term:
    """``op(*parts)`` in place of ``t``: its one part, or ``empty`` (0 or 1) of ``t``'s dtype when there is none.

    A folded constant ``c`` that was left out of ``parts`` is put back when the result would
    otherwise lose ``t``'s dtype (``x + 2 - x`` is ``2.0`` for a float ``x``; ``i*1.0`` stays a float).
    """
    if not parts:
        return const(empty, dtype=t.dtype)
    out = parts[0] if len(parts) == 1 else op(*parts)
    if out.dtype != t.dtype and c is not None:
        if not others:
            return same_dtype(c, t)
        out = op(c, *others) if constant_first else op(*others, c)
    return out


def repeats(members: list[tuple[Any, Term]]) -> list[tuple[Term, int]]:
    """The distinct operands of ``members`` with how often each occurs, in first-seen order."""
    counts: dict[Term, int] = {}
    for _, a in members:
        counts[a] = counts.get(a, 0) + 1
    return list(counts.items())


def collected_already(t: Term, kind: Callable[[Term], Any], constant_ok: Callable[[int, int, Term, Any], bool]) -> bool:
    """Whether the full canonical form of ``t`` (a sum or product) is ``t`` itself, by an exact check before
    any grouping: two operands or more, none of ``t``'s op, each numeric constant where ``constant_ok(index,
    operand count, constant, value)`` allows it, the others of distinct kinds (``kind(a)``; None: undecided) and in the
    canonical order (the sort is stable: equal keys keep their order)."""
    args = t.args
    n = len(args)
    if n < 2:
        return False
    kinds: set[Any] = set()
    previous: Term | None = None
    for i, a in enumerate(args):
        if a.op is t.op:
            return False
        v = number(a)
        if v is not None:
            if not constant_ok(i, n, a, v):
                return False
            continue
        k = kind(a)
        if k is None or k in kinds:
            return False  # like operands (x*x**2, 2*x + x), or a kind only the full form reads
        kinds.add(k)
        if previous is not None and not in_sort_order(previous, a):
            return False
        previous = a
    return True
