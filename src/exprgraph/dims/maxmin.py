"""Max and min of polynomials (flattening, duplicates, constants, common parts, value ranges), and broadcast."""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from ..core.op import Op
from ..core.term import Term
from .context import Context
from .monomials import Mono
from .normal import atom_key, atom_text, defer_key, inner_term, poly_key
from .ranges import Range
from .ring import Poly, p_add_into, p_const, p_const_value, p_is_const, p_sub
from .terms import BROADCAST, MAX, MIN, SYMBOL, make_term

__all__ = ["maxmin_poly", "broadcast_poly", "MAX_COMPARED"]

#: functions passed as values, as module constants (the compiled build keeps them in C statics)
_POLY_KEY: Final = poly_key
_ATOM_TEXT: Final = atom_text

#: arguments compared pairwise through value ranges (beyond, only exact rules apply)
MAX_COMPARED: Final = 64


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


def _range(a: Poly, ranges: dict, ctx: Context) -> Range:
    # the range of an argument, computed once per call of maxmin_poly (the argument is kept with
    # its range, so its id is not reused while the table lives; arguments are never mutated)
    entry = ranges.get(id(a))
    if entry is None:
        entry = ranges[id(a)] = (a, ctx.range_of(a))
    return entry[1]


def _partners(rest: list[Poly]) -> list[list[int]]:
    """For each argument, the others it has a monomial in common with (through an index of owners)."""
    owners: dict[Mono, list[int]] = {}
    for k, a in enumerate(rest):
        for m in a:
            ks = owners.get(m)
            if ks is None:
                owners[m] = [k]
            else:
                ks.append(k)
    partners: list[list[int]] = [[] for _ in rest]
    for ks in owners.values():
        if len(ks) > 1:
            for x in ks:
                mine = partners[x]
                for y in ks:
                    if y != x and y not in mine:
                        mine.append(y)
    return partners


def _dominated(rest: list[Poly], is_max: bool, ranges: dict, ctx: Context) -> list[bool]:
    # max(a, a+1) -> a+1: drop an argument another one always reaches (value range of the difference).
    # Whether argument i drops argument j depends on those two only, so each i looks at the
    # arguments it shares a term with, and at those a disjoint argument could reach at all.
    n = len(rest)
    keep = [True] * n
    bounds = [_range(a, ranges, ctx) for a in rest]
    partners = _partners(rest)
    # with no term in common the range of a - b is range(a) - range(b) (range_of sums the ranges of
    # the terms): a >= b always when lo(a) >= hi(b), both finite; so only an argument whose upper
    # bound is finite and at most the largest finite lower bound can be dropped that way (for max)
    side = 1 if is_max else 0
    reach = [b[1 - side] for b in bounds if type(b[1 - side]) is not float]
    reachable: list[int] = []
    if reach:
        top = max(reach) if is_max else min(reach)
        for j in range(n):
            other = bounds[j][side]
            if type(other) is not float and ((other <= top) if is_max else (other >= top)):
                reachable.append(j)
    diffs: dict[int, Range] = {}  # i*n + j -> the range of rest[i] - rest[j], for arguments with a common term
    for i in range(n):
        if not keep[i]:
            continue
        mine = bounds[i][1 - side]
        if reachable and type(mine) is not float:
            for j in reachable:
                if j != i and keep[j] and j not in partners[i]:
                    other = bounds[j][side]
                    if (mine >= other) if is_max else (mine <= other):
                        keep[j] = False
        for j in partners[i]:
            if not keep[j]:
                continue
            back = diffs.get(j * n + i)
            if back is None:
                lo, hi = diffs[i * n + j] = ctx.range_of(p_sub(rest[i], rest[j]))  # common terms cancel or merge first
            else:
                lo, hi = -back[1], -back[0]  # the range of b - a, negated (range_of is symmetric under a sign change)
            if (lo >= 0) if is_max else (hi <= 0):
                keep[j] = False
    return keep


def _of_names(args: list[Poly], op: Op, ctx: Context) -> Poly | None:
    """``max`` (``min``) of arguments that are all plain names, or None if one is not.

    For distinct names the rules below change nothing: none is a max (min) to flatten, no two
    share a term, none is a constant, and the difference of two names has the range
    (-INF, INF), so none dominates. What is left: drop repeated names and sort by name.
    """
    if ctx.custom:
        return None  # names with ranges of their own may dominate one another
    named: dict[Term, Poly] = {}
    for a in args:
        if len(a) != 1:
            return None
        ((m, c),) = a.items()
        if c != 1 or len(m) != 1 or m[0][1] != 1 or m[0][0].op is not SYMBOL:
            return None
        named.setdefault(m[0][0], a)  # max(a, a) -> a
    if len(named) == 1:
        return dict(args[0])
    order = sorted(named, key=atom_key)  # as poly_key orders them: by name
    return _atom(op, order, [named[t] for t in order], ctx.name_range, ctx)


def _atom(op: Op, terms: list[Term], args: list[Poly], rng: Range, ctx: Context) -> Poly:
    """The atom ``op(terms)`` (the inner terms of ``args``)."""
    term = make_term(op, (terms[0], terms[1]))
    for t in terms[2:]:
        term = make_term(op, (term, t))  # max(a, b, c) -> (a^b)^c, printed a^b^c
    defer_key(term, _ATOM_TEXT, op, args)  # its text, printed from the polynomials if needed
    return ctx.known_atom(term, tuple(args), rng)


def maxmin_poly(args: list[Poly], is_max: bool, ctx: Context) -> Poly:
    """Polynomial of ``max(*args)`` (or ``min`` when ``is_max`` is false)."""
    op = MAX if is_max else MIN
    names = _of_names(args, op, ctx)
    if names is not None:
        return names
    shared: Poly = {}
    rest = args
    ranges: dict[int, tuple[Poly, Range]] = {}
    changed = True
    while changed:
        rest = _flatten(rest, op, ctx)  # max(max(a, b), c) -> max(a, b, c); max(a, a) -> a
        if len(rest) == 1:
            p_add_into(shared, rest[0])
            return shared
        changed = False
        for rule in MAXMIN_RULES:
            new = rule(rest, shared, is_max, ranges, ctx)
            if new is not None:
                rest = new  # flattened again: an argument may now be a max itself
                changed = True
                break
    rest.sort(key=_POLY_KEY)
    arg_ranges = [_range(a, ranges, ctx) for a in rest]
    pick = max if is_max else min
    rng = (pick(r[0] for r in arg_ranges), pick(r[1] for r in arg_ranges))
    p_add_into(shared, _atom(op, [inner_term(a) for a in rest], rest, rng, ctx))
    return shared


def _common_part(rest: list[Poly], shared: Poly, is_max: bool, ranges: dict, ctx: Context) -> list[Poly] | None:
    # max(a + c, b + c) -> max(a, b) + c, for the terms every argument has with the same coefficient
    common = set(rest[0].items())
    for a in rest[1:]:
        common.intersection_update(a.items())
        if not common:
            return None
    part = dict(common)
    p_add_into(shared, part)
    return [{m: c for m, c in a.items() if part.get(m) != c} for a in rest]


def _fold_constants(rest: list[Poly], shared: Poly, is_max: bool, ranges: dict, ctx: Context) -> list[Poly] | None:
    # max(2, 3, x) -> max(3, x)
    consts = [p_const_value(a) for a in rest if p_is_const(a)]
    if len(consts) < 2:
        return None
    out = [a for a in rest if not p_is_const(a)]
    out.append(p_const(max(consts) if is_max else min(consts)))
    return out


def _drop_dominated(rest: list[Poly], shared: Poly, is_max: bool, ranges: dict, ctx: Context) -> list[Poly] | None:
    # max(a, b) -> a where a >= b for every value (by the ranges of the arguments and of a - b);
    # fewer arguments may then share more: max(a+b, b+4, 4) -> b + max(a, 4)
    if len(rest) > MAX_COMPARED:
        return None
    keep = _dominated(rest, is_max, ranges, ctx)
    if all(keep):
        return None
    return [a for a, k in zip(rest, keep, strict=True) if k]


#: a rule of max (min): ``(arguments, shared, is_max, range table, ctx)`` -> the arguments it leaves,
#: having added to ``shared`` what comes out of the max, or None when it changes nothing
MaxMinRule = Callable[[list[Poly], Poly, bool, dict, Context], list[Poly] | None]

#: THE TABLE of the rules of max and min, tried in order after flattening (``max(max(a, b), c) ->
#: max(a, b, c)``, ``max(a, a) -> a``) until none changes the arguments; the arguments left are
#: sorted into one atom. A new rule of max and min is one function and one entry here.
MAXMIN_RULES: Final[tuple[MaxMinRule, ...]] = (
    _common_part,  # max(a + c, b + c) -> max(a, b) + c
    _fold_constants,  # max(2, 3, x) -> max(3, x)
    _drop_dominated,  # max(a, b) -> a when a >= b for every value
)


def broadcast_poly(a: Poly, b: Poly, ctx: Context) -> Poly:
    """Polynomial of ``broadcast(a, b)``: ``a`` where ``b == 1``, else ``b``.

    Valid operands are equal, or one of them is 1; elsewhere the original fails (as a division
    by zero does), so a rule may answer anything there.
    """
    if a == b:
        return dict(a)  # broadcast(a, a) -> a
    ra, rb = ctx.range_of(a), ctx.range_of(b)
    if rb[0] == 1 and rb[1] == 1:
        return dict(a)  # broadcast(a, 1) -> a
    if rb[0] > 1 or rb[1] < 1:
        return dict(b)  # b is never 1: a is b or 1, so broadcast(a, b) -> b
    if ra[0] == 1 and ra[1] == 1:
        return dict(b)  # broadcast(1, b) -> b
    if ra[0] > 1 or ra[1] < 1:
        return dict(a)  # a is never 1: b is a or 1, so broadcast(a, b) -> a
    # both may be 1: an atom, its operands in a fixed order (the two orders agree where defined)
    args = sorted([a, b], key=_POLY_KEY)
    rng = (min(ra[0], rb[0]), max(ra[1], rb[1]))
    return _atom(BROADCAST, [inner_term(x) for x in args], args, rng, ctx)
