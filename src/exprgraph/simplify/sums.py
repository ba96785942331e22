"""Canonical sums: flattened, constants folded, like terms collected, cancelling before reordering."""

from __future__ import annotations

import math
from fractions import Fraction
from functools import partial
from typing import Any

from ..core import Term, get_op
from .collect import assemble, collect_like
from .numbers import number, scaled, split_coefficient
from .order import sort_key

__all__ = ["collect_sum", "cancel_sum", "distribute_negation"]

ADD, MUL = get_op("add"), get_op("mul")


def _merge_group(rest: Term, members: list[tuple[Any, Term]], cancel: bool) -> list[Term] | None:
    """Like terms ``c_i * rest`` summed: ``(sum c_i) * rest``, cancelling before anything is reordered.

    With ``cancel``, ``3*x - x -> 2*x`` and ``x - x -> 0``. Without it (inf - inf is nan), the
    terms of opposite signs cancel into their total and a *zero unit* ``rest - rest``, an inner sum
    that is exactly +0.0 for a finite ``rest`` and nan for an infinite one: ``3*x - x -> 2*x + (x - x)``
    and ``y - y - z`` stays ``(y - y) - z``. The cancellation is exact and comes first; never
    ``y - z - y``, which loses everything to rounding at ``y = 1e16``. Flattening takes the unit
    apart and regrouping builds the same unit again, so the form is a fixpoint.
    """
    if len(members) == 1:
        return [members[0][1]]
    coefs = [c for c, _ in members]
    if cancel and all(c == c for c in coefs):
        groups = [members]
    else:
        pos = [m for m in members if m[0] > 0]
        neg = [m for m in members if m[0] < 0]
        other = [[m] for m in members if not (m[0] > 0 or m[0] < 0)]
        if pos and neg:
            # x + 2*x - x -> 2*x + (x - x): the total, and a zero that is nan where rest is infinite
            total = sum(c for c, _ in pos) + sum(c for c, _ in neg)
            if math.isfinite(total):
                negated = scaled(-1, rest)
                if negated is None:
                    return None
                zero = ADD(*sorted((rest, negated), key=sort_key))
                if total == 0:
                    return [zero] + [g[0][1] for g in other]
                merged = scaled(total, rest)
                if merged is None:
                    return None
                return [merged, zero] + [g[0][1] for g in other]
        groups = [g for g in (pos, neg) if g] + other
    out: list[Term] = []
    for g in groups:
        if len(g) == 1:
            out.append(g[0][1])
            continue
        total = sum(c for c, _ in g)
        if total.__class__ is float and not math.isfinite(total) and all(math.isfinite(c) for c, _ in g):
            out.extend(a for _, a in g)  # 1e308*x + 1e308*x: the merged coefficient overflows
            continue
        if total == 0:
            continue  # x + (-1)*x -> 0: only with cancel
        merged = scaled(total, rest)
        if merged is None:
            return None
        out.append(merged)
    return out


def _expose_negated_sums(items: list[Term]) -> list[Term]:
    """Distribute ``c*s`` (c < 0, ``s`` a sum) over ``s`` when a term of ``s`` cancels against the others.

    ``x + 2*y + z - (x + y)`` hides its cancellations inside the negated sum; spelled
    ``x + 2*y + z + (-1)*x + (-1)*y`` the like terms meet and cancel exactly (``z + y + (x - x) + (y - y)``)
    instead of rounding ``x + 2*y + z`` and ``x + y`` apart. Only exact coefficient products are
    used; a negated sum sharing no term with the others stays whole (``y - (x + z)``).
    """
    found = False
    for a in items:
        c, rest = split_coefficient(a)
        if rest.op is ADD and c.__class__ in (int, float) and c < 0:
            found = True
            break
    if not found:
        return items
    out: list[Term] = []
    rests = [split_coefficient(a)[1] for a in items]
    for i, a in enumerate(items):
        c, s = split_coefficient(a)
        if not (s.op is ADD and c.__class__ in (int, float) and c < 0):
            out.append(a)
            continue
        others = {r for j, r in enumerate(rests) if j != i}
        parts = [split_coefficient(b) for b in s.args]
        if not any(r in others for _, r in parts) or any(number(b) is not None for b in s.args):
            out.append(a)
            continue
        spread: list[Term] | None = []
        for k, r in parts:
            ck = _exact_coefficient(c, k)
            term = None if ck is None else scaled(ck, r)
            if term is None or spread is None:
                spread = None
                break
            spread.append(term)
        out.extend([a] if spread is None else spread)
    return out


def _exact_coefficient(c: Any, k: Any) -> Any:
    """``c*k`` when it is exact (ints, or floats whose product rounds nothing), else None."""
    if c.__class__ is int and k.__class__ is int:
        return c * k
    if not (math.isfinite(c) and math.isfinite(k)):
        return None
    p = Fraction(c) * Fraction(k)
    return float(p) if Fraction(float(p)) == p else None


def _canonical_sum(t: Term, cancel: bool) -> Term | None:
    items: list[Term] = []
    for a in t.args:
        items.extend(a.args if a.op is ADD else (a,))
    collected = collect_like(_expose_negated_sums(items), ADD, split_coefficient, False, _merge_group, cancel)
    if collected is None:
        return None
    terms, c = collected
    parts = [*terms, c] if c is not None and not (number(c) == 0 and terms) else terms  # x + 0 -> x
    return assemble(t, ADD, parts, terms, c, empty=0, constant_first=False)


#: flatten, fold constants, sort; x + x -> 2*x, 2*x + 3*x -> 5*x (coefficients of one sign)
collect_sum = partial(_canonical_sum, cancel=False)
#: also 3*x - x -> 2*x and x - x -> 0 (not for infinite x: inf - inf is nan)
cancel_sum = partial(_canonical_sum, cancel=True)


def distribute_negation(t: Term) -> Term | None:
    # (-1)*(a + b) -> (-1)*a + (-1)*b (no rounding, but an exactly cancelling sum turns -0.0 into 0.0)
    args = t.args
    if len(args) != 2 or args[1].op is not ADD or number(args[0]) != -1:
        return None
    return ADD(*(MUL(args[0], a) for a in args[1].args))
