"""Max and min of polynomials: flattening, duplicates, constants, common parts, value ranges."""

from __future__ import annotations

from ..core.term import REGISTRY, Term
from .context import Context
from .normal import Poly, inner_term, p_add, p_add_into, p_const, p_const_value, p_is_const, p_scale, poly_key

__all__ = ["maxmin_poly", "MAX_COMPARED"]

_MAX, _MIN = REGISTRY["maximum"], REGISTRY["minimum"]

#: arguments compared pairwise through value ranges (beyond, only exact rules apply)
MAX_COMPARED = 64


def _flatten(args: list[Poly], op: object, ctx: Context) -> list[Poly]:
    # max(max(a, b), c) -> max(a, b, c); max(a, a) -> a
    flat: list[Poly] = []
    seen: set = set()
    stack = list(reversed(args))
    while stack:
        a = stack.pop()
        atom, c = ctx.single_atom(a)
        if atom is not None and c == 0 and atom.op is op and atom in ctx.atom_args:
            stack.extend(reversed(ctx.atom_args[atom]))
            continue
        key = frozenset(a.items())
        if key not in seen:
            seen.add(key)
            flat.append(a)
    return flat


def _dominated(rest: list[Poly], is_max: bool, ctx: Context) -> list[bool]:
    # max(a, a+1) -> a+1: drop an argument another one always reaches (value range of the difference)
    n = len(rest)
    keep = [True] * n
    for i in range(n):
        if not keep[i]:
            continue
        for j in range(n):
            if i == j or not keep[j]:
                continue
            lo, hi = ctx.range_of(p_add(rest[i], p_scale(rest[j], -1)))
            if (lo >= 0) if is_max else (hi <= 0):
                keep[j] = False
    return keep


def maxmin_poly(args: list[Poly], is_max: bool, ctx: Context) -> Poly:
    """Polynomial of ``max(*args)`` (or ``min`` when ``is_max`` is false)."""
    op = _MAX if is_max else _MIN
    shared: Poly = {}
    rest = args
    while True:
        rest = _flatten(rest, op, ctx)
        if len(rest) == 1:
            p_add_into(shared, rest[0])
            return shared
        # max(a + c, b + c) -> max(a, b) + c, for the terms every argument has with the same coefficient
        common = set(rest[0].items())
        for a in rest[1:]:
            common.intersection_update(a.items())
            if not common:
                break
        if common:
            part = dict(common)
            p_add_into(shared, part)
            rest = [{m: c for m, c in a.items() if part.get(m) != c} for a in rest]
            continue  # an argument may now be a max itself
        # max(2, 3, x) -> max(3, x)
        consts = [p_const_value(a) for a in rest if p_is_const(a)]
        if len(consts) > 1:
            rest = [a for a in rest if not p_is_const(a)]
            rest.append(p_const(max(consts) if is_max else min(consts)))
            continue
        if len(rest) <= MAX_COMPARED:
            keep = _dominated(rest, is_max, ctx)
            if not all(keep):
                rest = [a for a, k in zip(rest, keep, strict=True) if k]
                continue  # fewer arguments may share more: max(a+b, b+4, 4) -> b + max(a, 4)
        break
    rest.sort(key=poly_key)
    ranges = [ctx.range_of(a) for a in rest]
    pick = max if is_max else min
    rng = (pick(r[0] for r in ranges), pick(r[1] for r in ranges))
    terms = [inner_term(a) for a in rest]
    term = Term(op, (terms[0], terms[1]))
    for t in terms[2:]:
        term = Term(op, (term, t))  # max(a, b, c) -> (a^b)^c, printed a^b^c
    p_add_into(shared, ctx.known_atom(term, tuple(rest), rng))
    return shared
