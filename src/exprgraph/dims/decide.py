"""Answering the queries of :mod:`.queries` from the polynomials of their sides.

Each answer is worked out under one assumption about names (a :class:`~.context.Context`) and is
never wrong: a relation is decided from a sound range of the difference of its sides (after the
rules across its terms, then a tighter range), equality
from a difference that cancels (products of sums through their expansions) or never reaches zero,
divisibility from the remainder. Imports the polynomial algebra of this package.
"""

from __future__ import annotations

from ..core.term import Term
from .combine import combine_terms, may_combine
from .context import Context
from .division import coefficient_gcd, mod_poly, monomial_quotient
from .factored import exact_quotient, expand, has_sums
from .normal import top_term
from .ranges import Range
from .relations import factored_range, meet, sign_known, tight_range
from .ring import Poly, p_const_value, p_is_const, p_sub

__all__ = [
    "difference",
    "is_zero",
    "never_zero",
    "decide",
    "decide_difference",
    "factored",
    "compare",
    "divides",
    "exact_quotient_term",
]


def difference(lp: Poly, rp: Poly, ctx: Context, raw: Poly | None = None) -> Poly:
    """``lp - rp`` (``raw`` if given) after the rules across its terms (the same dict when none applies)."""
    d = p_sub(lp, rp) if raw is None else raw
    return ctx.unwrap(combine_terms(d, ctx))


def is_zero(d: Poly, ctx: Context) -> bool:
    """Whether ``d`` is zero for every value (products of sums: their expansions cancel)."""
    if not d:
        return True
    if has_sums(d, ctx):
        e = expand(d, ctx, 1 << 16)
        return e is not None and not e
    return False


def never_zero(d: Poly, ctx: Context, r: Range | None = None) -> bool:
    """Whether ``d`` is zero for no value (``r``: its quick range, when known)."""
    lo, hi = ctx.range_of(d) if r is None else r
    if lo <= 0 <= hi:
        lo, hi = tight_range(d, ctx, (lo, hi))
    if lo > 0 or hi < 0:
        return True
    # the non-constant terms are multiples of g: a constant that g does not divide is never cancelled
    g = coefficient_gcd(d, 0)
    c0 = p_const_value(d)
    return g > 1 and c0 % g != 0


def decide(op: str, lp: Poly, rp: Poly, ctx: Context) -> bool | None:
    """``left OP right`` for every value (op: lt, le, gt, ge, eq, ne), from the sides' polynomials."""
    return decide_difference(op, lp, rp, ctx)[0]


def decide_difference(op: str, lp: Poly, rp: Poly, ctx: Context) -> tuple[bool | None, Poly]:
    """``decide``, and the difference of the sides it worked on (after the rules across its terms)."""
    raw = p_sub(lp, rp)
    r = ctx.range_of(raw)
    d = raw
    if may_combine(raw, ctx):
        d = difference(lp, rp, ctx, raw)  # the rules may change it (in place): its own quick range
        r = ctx.range_of(d)
    if op in ("eq", "ne"):
        if is_zero(d, ctx):
            return op == "eq", d
        if never_zero(d, ctx, r):
            return op == "ne", d
        return None, d
    # left <= right is right - left >= 0: the ranges of -d are those of d negated (each bound is
    # worked out term by term, and every step is symmetric under a change of sign)
    flip = op in ("le", "lt")
    if flip:
        op = "ge" if op == "le" else "gt"
        r = (-r[1], -r[0])
    answer = sign_known(op, r)  # the quick range first, the tighter one if needed
    if answer is not None:
        return answer, d
    lo, hi = tight_range(d, ctx, (-r[1], -r[0]) if flip else r)
    answer = sign_known(op, (-hi, -lo) if flip else (lo, hi))
    if answer is None:
        lo, hi = factored(d, ctx, (lo, hi))
        answer = sign_known(op, (-hi, -lo) if flip else (lo, hi))
    return answer, d


def factored(d: Poly, ctx: Context, r: Range) -> Range:
    """``r`` (a range of ``d``) met with the range of ``d``'s factors (see :func:`.relations.factored_range`)."""
    f = factored_range(d, ctx)
    return r if f is None else meet(r, f)


def compare(lp: Poly, rp: Poly, ctx: Context) -> str | None:
    """The strongest of ``== < <= > >= !=`` that always holds between the sides, or None."""
    d = difference(lp, rp, ctx)
    if is_zero(d, ctx):
        return "=="
    lo, hi = tight_range(d, ctx)
    if lo <= 0 <= hi:
        lo, hi = factored(d, ctx, (lo, hi))
    if lo > 0:
        return ">"
    if hi < 0:
        return "<"
    if lo >= 0:
        return ">="
    if hi <= 0:
        return "<="
    if never_zero(d, ctx):
        return "!="
    return None


def divides(p: Poly, q: Poly, ctx: Context) -> bool | None:
    """Whether ``q`` divides ``p`` for every value: True, False (for none) or None."""
    if not q:
        return None  # x % 0 is undefined
    r = ctx.unwrap(mod_poly(p, q, ctx))
    if is_zero(r, ctx):
        return True
    if never_zero(r, ctx):
        return False
    return None


def exact_quotient_term(p: Poly, q: Poly, ctx: Context) -> Term | None:
    """The canonical term of ``p/q`` when ``q`` divides ``p`` for every value, else None."""
    if not q:
        return None
    if p_is_const(q):
        k = p_const_value(q)
        if any(c % k for c in p.values()):
            return None
        return top_term({m: c // k for m, c in p.items()})
    if len(q) == 1:
        out = monomial_quotient(p, q)
        return None if out is None else top_term(ctx.unwrap(out))
    r = exact_quotient(p, q, ctx)
    if r is None or any(type(c) is not int for c in r.values()):
        return None
    return top_term(ctx.unwrap(r))
