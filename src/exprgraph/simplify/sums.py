"""Canonical sums: flattened, constants folded, like terms collected, cancelling before reordering.

The full canonical sum (:func:`cancel_sum`, and :func:`collect_sum` on integer sums, whose
wrapping arithmetic is associative) is flat and sorted. A float sum of the safe strength is
collected only where the collected form is one rounding of the exact sum (:func:`_exact_sum`);
any other keeps its association (float addition is not associative).
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import partial
from typing import Any

from ..core import Term, const, get_op
from .association import binary_form, gather, in_order, uses_any, what_is_left
from .collect import assemble, canonical_node, collect_like, collected_already, flat_operands, repeats
from .numbers import (
    INT_MAX,
    INT_MIN,
    const_like,
    fold_value,
    number,
    rounded,
    same_dtype,
    scaled,
    split_coefficient,
    times,
)
from .order import in_sort_order, sort_key

__all__ = ["collect_sum", "cancel_sum", "distribute_negation"]

ADD, MUL, DIV = get_op("add"), get_op("mul"), get_op("truediv")


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
            # 1e308*x + 1e308*x: the merged coefficient overflows; equal terms still become one, k*t
            # (t + t = 2*t exactly), or a sum doubling itself n times would hold 2**n terms
            for a, k in repeats(g):
                multiple = a if k == 1 else times(k, a)
                if multiple is None:
                    return None
                out.append(multiple)
            continue
        if total == 0:
            continue  # x + (-1)*x -> 0: only with cancel
        merged = scaled(total, rest)
        if merged is None:
            return None
        out.append(merged)
    return out


def _expose_negated_sums(items: list[Term]) -> list[Term]:
    """Distribute ``c*s`` (c != 0, ``s`` a sum) over ``s`` when a term of ``s`` cancels against the others.

    ``x + 2*y + z - (x + y)`` hides its cancellations inside the negated sum; spelled
    ``x + 2*y + z + (-1)*x + (-1)*y`` the like terms meet and cancel exactly (``z + y + (x - x) + (y - y)``)
    instead of rounding ``x + 2*y + z`` and ``x + y`` apart. Only exact coefficient products are
    used; a negated sum sharing no term with the others stays whole (``y - (x + z)``). A positive
    multiple too, so that a sum and its negation take opposite forms and cancel: ``1.5*(x + z) - x``
    is ``0.5*x + 1.5*z`` as ``-1.5*(x + z) + x`` is ``-0.5*x - 1.5*z`` (their difference was not 0).
    """
    found = False
    for a in items:
        c, rest = split_coefficient(a)
        if rest.op is ADD and c.__class__ in (int, float) and (c < 0 or c > 0):
            found = True
            break
    if not found:
        return items
    out: list[Term] = []
    rests = [split_coefficient(a)[1] for a in items]
    for i, a in enumerate(items):
        c, s = split_coefficient(a)
        if not (s.op is ADD and c.__class__ in (int, float) and (c < 0 or c > 0)):
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


def _rest_key(a: Term) -> tuple[Any, ...] | None:
    """A key equal for two terms exactly when :func:`~.numbers.split_coefficient` gives them one rest, without
    building that rest (a product's other factors as a tuple); None for a quotient (a rest read otherwise)."""
    op = a.op
    if op is DIV:
        return None
    if op is not MUL:
        return ("t", a)
    factors = a.args
    if len(factors) < 2:
        return None
    if number(factors[0]) is None:
        return ("m", factors)
    if len(factors) == 2:  # c*r: the key of r
        r = factors[1]
        return ("m", r.args) if r.op is MUL else ("t", r)
    return ("m", factors[1:])


def _canonical_sum(t: Term) -> bool:
    """Whether :func:`_collect_sum` gives ``t`` itself (:func:`~.collect.collected_already`): terms of distinct
    rests, no quotient nor multiple of a sum, and at most one numeric constant, last and not 0."""
    return collected_already(t, _term_kind, _constant_last)


def _constant_last(i: int, n: int, a: Term, v: Any) -> bool:
    """Whether the numeric term ``a`` (value ``v``) at ``i`` of ``n`` is a constant the full sum keeps: last, not 0."""
    return i == n - 1 and v != 0


def _term_kind(a: Term) -> tuple[Any, ...] | None:
    """The group of the term ``a`` in :func:`_collect_sum` (:func:`_rest_key`); None for ``c*(a + b)``, which
    is distributed where a term cancels (:func:`_expose_negated_sums`)."""
    key = _rest_key(a)
    return None if key is None or (key[0] == "t" and key[1].op is ADD) else key


def _full_sum(t: Term, cancel: bool) -> Term | None:
    # early exit: a flat, sorted sum of unlike terms and one non-zero constant last is its own canonical form
    return None if _canonical_sum(t) else _collect_sum(t, cancel)


def _collect_sum(t: Term, cancel: bool) -> Term | None:
    items = _expose_negated_sums(flat_operands(t, ADD))
    collected = collect_like(items, ADD, split_coefficient, False, _merge_group, cancel)
    if collected is None:
        return None
    terms, c = collected
    parts = [*terms, c] if c is not None and not (number(c) == 0 and terms) else terms  # x + 0 -> x
    return assemble(t, ADD, parts, terms, c, empty=0, constant_first=False)


#: x + x -> 2*x, 2*x + 3*x -> 5*x (coefficients of one sign), x + y - x -> y + (x - x): for floats only
#: where that is one rounding of the whole; integer sums are flattened and sorted
collect_sum = partial(canonical_node, cancel=False, safe=lambda t: _safe_sum(t), full=_full_sum)
#: also 3*x - x -> 2*x and x - x -> 0 (not for infinite x: inf - inf is nan)
cancel_sum = partial(canonical_node, cancel=True, safe=lambda t: _safe_sum(t), full=_full_sum)


def distribute_negation(t: Term) -> Term | None:
    # (-1)*(a + b) -> (-1)*a + (-1)*b (no rounding, but an exactly cancelling sum turns -0.0 into 0.0)
    args = t.args
    if len(args) != 2 or args[1].op is not ADD or number(args[0]) != -1:
        return None
    return ADD(*(MUL(args[0], a) for a in args[1].args))


# -- the safe float sum: collected only where that is one rounding of the whole ----------------------


def _inner_sum(dtype: str) -> Any:
    """What :func:`~.association.gather` looks through in a float sum: its dtype's sums, and ``-1 * sum`` (negated)."""

    def inner(a: Term) -> tuple[tuple[Term, ...], bool] | None:
        if a.op is ADD and a.dtype == dtype:
            return a.args, False
        if a.op is MUL and len(a.args) == 2 and number(a.args[0]) == -1:
            s = a.args[1]
            if s.op is ADD and s.dtype == dtype:
                return s.args, True  # -(a + b) = -a + -b exactly (rounding is symmetric; a zero may change sign)
        return None

    return inner


def _negated(c: Any, rest: Term) -> tuple[Any, Term] | None:
    """The negation of the term ``c*rest``: ``(-c, -c*rest)`` (exact: only the sign changes)."""
    k = -c
    if k.__class__ is int and not INT_MIN <= k <= INT_MAX:
        k = float(k)  # -(-2**63) is no int64: the float is exact
    term = times(k, rest)
    return None if term is None else (k, term)


def _sum_head(a: Term) -> tuple[bool, bool]:
    """The order of the two operands of a safe sum kept binary: a compound operand first, a scalar
    constant last, else the canonical order (``(x + y) + z`` reads as it is computed)."""
    return number(a) is not None, not a.args


def _exact_sum(t: Term, operands: list[tuple[Term, bool]], dissolved: set[Term]) -> Term | None:
    """The collected form of a float sum when it is one rounding of the exact sum of ``operands``, else None.

    Like terms are collected with exact coefficient totals (rounded once); terms of opposite signs
    leave a zero unit ``r - r`` (exactly 0.0, or nan where ``r`` is infinite). What remains may be
    one term (``3*x + x -> 4*x``: fl(4*x) is the exact sum rounded once), or two operands computed
    exactly as they were (``x + y - x -> y + (x - x)``, ``(x + 1) + 2 -> x + 3``), whose one addition
    is then correctly rounded. Three or more would be a reassociation: ``(x + y) + z`` is not
    ``(x + z) + y`` at x = 1e16, z = -1e16, y = 1, so that node keeps its own association.

    The inner sums taken apart (``dissolved``) must not feed a remaining term: in
    ``0.1 + ((x - 0.1) - f(x - 0.1))`` the input subtracts ``f(s)`` from the very ``s = x - 0.1`` it
    was computed from, and ``x - f(s)`` would add the rounding error of ``s`` (all of 0.1 at x = 1e16).
    """
    consts: list[Any] = []
    groups: dict[Term, list[tuple[Any, Term]]] = {}
    for a, neg in operands:
        v = number(a)
        if v is not None:
            consts.append(-v if neg else v)
            continue
        c, rest = split_coefficient(a)
        if neg:
            flipped = _negated(c, rest)
            if flipped is None:
                return None
            c, a = flipped
        groups.setdefault(rest, []).append((c, a))
    c = _constant_total(t, consts)
    constant = None if c is None else c[0]
    zero = constant is not None and number(constant) == 0  # x + 0 -> x, kept only to keep a float dtype
    left = what_is_left(groups, _merge_exactly, (None, True) if zero else c)
    if left is None:
        return None
    kept, units = left
    if dissolved and uses_any(kept, dissolved):
        return None
    terms = in_order(kept, units)
    parts = terms + ([constant] if constant is not None and not zero else [])
    return assemble(t, ADD, parts, terms, constant, empty=0, constant_first=False)


def _merge_exactly(rest: Term, members: list[tuple[Any, Term]], units: list[Term]) -> list[tuple[Term, bool]] | None:
    """The like terms ``c_i * rest`` of a safe sum as ``[(term, exact)]``; a zero unit goes to ``units``.

    One member stays as it is (exact). More merge into ``(sum c_i) * rest``, the coefficients
    added exactly and rounded once: exact when that is +-1, else one rounding. A term whose
    coefficient is 0 or nan (``0*x`` is nan at x = inf) stays apart. None when the total overflows.
    """
    if len(members) == 1:
        return [(members[0][1], True)]
    kept = [(a, True) for c, a in members if not (c > 0 or c < 0)]
    live = [(c, a) for c, a in members if c > 0 or c < 0]
    if len(live) < 2:
        return kept + [(a, True) for _, a in live]
    if not all(math.isfinite(c) for c, _ in live):
        return None
    if any(c > 0 for c, _ in live) and any(c < 0 for c, _ in live):
        # x - x: 0.0, or nan for infinite x; of the smallest coefficient's term, which overflows last
        # (1e-300/x - 1e-300/x is 0.0 at x = 5e-324, where 1/x - 1/x is inf - inf)
        k = min(abs(c) for c, _ in live)
        up, down = times(k, rest), times(-k, rest)
        if up is None or down is None:
            return None
        units.append(ADD(*sorted((up, down), key=sort_key)))
    ints = all(c.__class__ is int for c, _ in live)
    total = sum(c for c, _ in live) if ints else sum(Fraction(c) for c, _ in live)  # exactly
    if total == 0:
        return kept
    if not ints and rest.dtype == "float64" and all(c.__class__ is not float for c, _ in live):
        q = Fraction(total)
        if q.denominator != 1 and Fraction(float(q)) != q:
            term = times(q, rest)  # x/3 + x/3 -> rational(2, 3)*x: an exact total of exact coefficients
            return None if term is None else [*kept, (term, False)]
    r = rounded(Fraction(total), rest, ints)
    if r is None:
        return None
    value, exact = r
    term = times(value, rest)
    if term is None:
        return None
    return [*kept, (term, exact and abs(value) == 1)]


def _constant_total(t: Term, consts: list[Any]) -> tuple[Term | None, bool] | None:
    """The constants of a safe sum as one ``(constant, exact)`` (None for none); None if it overflows."""
    if not consts:
        return None, True
    if len(consts) == 1 and math.isfinite(consts[0]) and INT_MIN <= consts[0] <= INT_MAX:
        k = const_like(consts[0], t, exact=False)  # one constant: exact as it is
        return None if k is None else (k, True)
    if not all(math.isfinite(v) for v in consts):
        folded = fold_value(ADD, [const(v) for v in consts])  # inf or nan whatever the order
        return None if folded is None else (same_dtype(folded, t), False)
    total = sum(Fraction(v) for v in consts)
    if total == 0:  # x + 0 -> x (the sign of a zero is not kept)
        return const_like(0 if all(v.__class__ is int for v in consts) else 0.0, t, exact=False), True
    r = rounded(total, t, all(v.__class__ is int for v in consts))
    if r is None:
        return None
    value, exact = r
    k = const_like(value, t, exact=False)
    return None if k is None else (k, exact)


def _rounds(s: Term) -> bool:
    """Whether the inner sum ``s`` may round: any but a zero unit ``c*r + (-c)*r`` (exactly 0.0, or nan)."""
    if len(s.args) != 2:
        return True
    (ca, ra), (cb, rb) = split_coefficient(s.args[0]), split_coefficient(s.args[1])
    return ra is not rb or ca != -cb


def _safe_sum(t: Term) -> Term | None:
    inner = _inner_sum(t.dtype)
    if len(t.args) == 2:
        a, b = t.args
        for u, v in ((a, b), (b, a)):
            # u + -0.0 -> u, exact for every u (-0.0 + -0.0 is -0.0), whatever sums u holds inside
            w = number(v)
            if w is not None and w == 0 and math.copysign(1.0, w) < 0 and u.dtype == t.dtype and u.shape == t.shape:
                return u
        if number(a) is None is number(b) and inner(a) is None is inner(b):
            if split_coefficient(a)[1] is not split_coefficient(b)[1]:
                return None if in_sort_order(a, b) else ADD(b, a)  # a + b: nothing to collect, sorted
    through: list[Term] = []
    operands = gather(t, inner, through)
    if operands is not None:
        inner_sums = (s.args[1] if s.op is MUL else s for s in through)  # -1*(a + b): the sum a + b
        out = _exact_sum(t, operands, {s for s in inner_sums if _rounds(s)})
        if out is not None:
            return None if out is t else out
    if len(t.args) == 2 and t.args[0] is t.args[1]:
        a = t.args[0]
        return times(2, a)  # a + a = 2*a exactly, for every a
    return binary_form(t, ADD, _sum_head)
