"""Floor division, modulo and ceiling division of polynomials, never changing their meaning.

Every rule holds for all integer values under Python's floor semantics, for any non-zero divisor
(a divisor that is the constant 0 leaves the term alone; a symbolic divisor is assumed non-zero,
as the original expression would fail there anyway). Rules that need a sign use value ranges.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from math import lcm
from typing import Final

from .context import Context
from .factored import exact_quotient
from .monomials import ONE, mono_div
from .ranges import UNBOUNDED, Range, fdiv, r_floordiv, r_mod
from .ring import (
    Poly,
    p_add,
    p_add_into,
    p_const,
    p_const_value,
    p_content,
    p_div_mono,
    p_is_const,
    p_mono_gcd,
    p_mul,
    p_scale,
    p_sub,
)
from .terms import CEIL_DIV, FLOORDIV, INT64_MAX, MOD

__all__ = [
    "floordiv_poly",
    "mod_poly",
    "ceil_poly",
    "floordiv_const",
    "mod_const",
    "monomial_quotient",
    "coefficient_gcd",
]

#: math.gcd as a module constant (the compiled build keeps it in a C static)
_GCD: Final = math.gcd

#: a closing rule of ``s // q`` or ``s % q`` for a polynomial ``q >= 0`` (what the reductions leave):
#: ``(s, q, range of s, range of q, ctx)`` -> the result, or None to leave it to the next rule
PolyRule = Callable[[Poly, Poly, Range, Range, Context], Poly | None]
#: a closing rule for an integer ``q > 1``: ``(s, p, q, range of s, ctx)``, ``p`` the dividend as
#: written before its coefficients were reduced (``s``) -> the result, or None
ConstRule = Callable[[Poly, Poly, int, Range, Context], Poly | None]


def _finite(x: object) -> bool:
    return type(x) is int


def _all_negative(q: Poly) -> bool:
    return all(c < 0 for c in q.values())


# -- floor division ------------------------------------------------------------------------------------


def monomial_quotient(p: Poly, q: Poly) -> Poly | None:
    """``p / q`` when ``q`` is one term ``cq*mq`` (not a constant) dividing every term of ``p``, else None.

    The rules below come to the same: the sign of q moves to p, the common factor g of all the
    terms is then cq*mq (with q among them), and p/g divided by 1 is p/g, term by term, in order.
    """
    if len(q) != 1:
        return None
    ((mq, cq),) = q.items()
    if not mq:
        return None
    out: Poly = {}
    for m, c in p.items():
        d = mono_div(m, mq)
        if d is None or c % cq:
            return None
        out[d] = c // cq
    return out


def floordiv_poly(p: Poly, q: Poly, ctx: Context) -> Poly:
    """Polynomial of ``p // q``."""
    if p_is_const(q):
        return floordiv_const(p, p_const_value(q), ctx)
    r = monomial_quotient(p, q)
    if r is not None:
        return r  # (q*r)//q -> r
    if not p:
        return {}  # 0//q -> 0
    if _all_negative(q):
        p, q = p_scale(p, -1), p_scale(q, -1)  # p//q -> (-p)//(-q)
    # (g*a)//(g*b) -> a//b for a common integer and monomial factor g
    g = _GCD(p_content(p), p_content(q))
    m = p_mono_gcd(p, q)
    if g > 1 or m:
        # (a lone sum atom left by the division is written as its sum, for the rules below)
        p, q = ctx.unwrap(p_div_mono(p, m, g)), ctx.unwrap(p_div_mono(q, m, g))
        if p_is_const(q):
            return floordiv_const(p, p_const_value(q), ctx)
    out: Poly = {}
    if len(q) > 1:
        r = exact_quotient(p, q, ctx)
        if r is not None:
            return _floor_of_quotient(r, ctx)  # p == q*r: p//q -> r
        s = p
    else:
        out, s = _split_multiples(p, q)
        if not s:
            return out
    qr = ctx.range_of(q)
    rng = UNBOUNDED
    if qr[0] >= 0:  # the rules of the table need q >= 0
        sr = ctx.range_of(s)
        for rule in FLOORDIV_RULES:
            result = rule(s, q, sr, qr, ctx)
            if result is not None:
                p_add_into(out, result)
                return out
        rng = r_floordiv(sr, qr)
    p_add_into(out, ctx.atom(FLOORDIV, (s, q), rng))
    return out


def _below_divisor(s: Poly, q: Poly, sr: Range, qr: Range, ctx: Context) -> Poly | None:
    # 0 <= s < q: s//q -> 0
    return {} if sr[0] >= 0 and ctx.range_of(p_sub(q, s))[0] >= 1 else None


def _quotient_of_ranges(s: Poly, q: Poly, sr: Range, qr: Range, ctx: Context) -> Poly | None:
    # the ranges of s and q leave one value k for s//q: s//q -> k
    lo, hi = r_floordiv(sr, qr)
    return p_const(lo) if lo == hi and _finite(lo) else None


def _nested_division(s: Poly, q: Poly, sr: Range, qr: Range, ctx: Context) -> Poly | None:
    # (x//r + c)//q -> (x + c*r)//(r*q) for q > 0
    atom, c = ctx.single_atom(s)
    if atom is None or atom.op is not FLOORDIV or atom not in ctx.atom_args:
        return None
    x, r = ctx.atom_args[atom]
    return floordiv_poly(p_add(x, p_scale(r, c)), p_mul(r, q, ctx.budget), ctx)


def _floor_of_quotient(r: Poly, ctx: Context) -> Poly:
    """``floor(r)`` of an exact quotient: ``r`` itself, or ``n//d`` when its coefficients are rationals ``n/d``."""
    d = 1
    for c in r.values():
        if type(c) is not int:
            d = lcm(d, c.denominator)
    if d == 1:
        return r
    return floordiv_const({mm: int(c * d) for mm, c in r.items()}, d, ctx)


def _split_multiples(p: Poly, q: Poly) -> tuple[Poly, Poly]:
    """For a one-term divisor ``q``: the quotient of the terms of ``p`` it divides, and the other terms."""
    ((mq, cq),) = q.items()
    # (cq*mq*a + b)//(cq*mq) -> a + b//(cq*mq): exact multiples of the divisor leave the division
    out: Poly = {}
    s: Poly = {}
    for mono, c in p.items():
        quotient = mono_div(mono, mq)
        if quotient is not None and c % cq == 0:
            out[quotient] = out.get(quotient, 0) + c // cq
        else:
            s[mono] = c
    return {k: v for k, v in out.items() if v}, s


def coefficient_gcd(s: Poly, q: int) -> int:
    """The gcd of ``q`` and the coefficients of the non-constant terms of ``s`` (1 as soon as it is)."""
    g = q
    for m, c in s.items():
        if m:
            g = _GCD(g, c)
            if g == 1:
                break
    return g


def _divided_terms(s: Poly, g: int, const: int) -> Poly:
    """The non-constant terms of ``s`` divided by ``g`` (which divides them), plus the constant ``const``."""
    p = {m: c // g for m, c in s.items() if m}
    if const:
        p[ONE] = const
    return p


def floordiv_const(p: Poly, q: int, ctx: Context) -> Poly:
    """Polynomial of ``p // q`` for an integer ``q``."""
    if q == 0:
        return ctx.atom(FLOORDIV, (p, {}), UNBOUNDED)  # a zero divisor leaves the term alone
    if q < 0:
        p, q = p_scale(p, -1), -q  # p//(-q) -> (-p)//q
    out: Poly = {}
    while True:
        if q == 1:
            p_add_into(out, p)  # p//1 -> p
            return out
        # (q*a + b)//q -> a + b//q: multiples of q leave; the constant c splits into q*(c//q) + c%q
        s: Poly = {}
        quotient: Poly = {}
        for m, c in p.items():
            if not m:
                k, r = divmod(c, q)
                if k:
                    quotient[ONE] = k
                if r:
                    s[ONE] = r
            elif c % q == 0:
                quotient[m] = c // q
            else:
                s[m] = c
        if quotient:
            p_add_into(out, quotient)
        if p_is_const(s):
            return out  # 0 <= constant < q
        g = coefficient_gcd(s, q)  # (g*y + c)//(g*h) -> (y + c//g)//h
        if g == 1:
            break
        p = _divided_terms(s, g, s.get(ONE, 0) // g)
        q //= g
    r = ctx.range_of(s)
    for rule in FLOORDIV_CONST_RULES:
        result = rule(s, p, q, r, ctx)
        if result is not None:
            p_add_into(out, result)
            return out
    p_add_into(out, ctx.atom(FLOORDIV, (s, p_const(q)), (fdiv(r[0], q), fdiv(r[1], q))))
    return out


def _known_quotient(s: Poly, p: Poly, q: int, r: Range, ctx: Context) -> Poly | None:
    # every value of s lies in [k*q, k*q + q): s//q -> k
    k1, k2 = fdiv(r[0], q), fdiv(r[1], q)
    return p_const(int(k1)) if k1 == k2 and _finite(k1) else None


def _two_valued_quotient(s: Poly, p: Poly, q: int, r: Range, ctx: Context) -> Poly | None:
    # x in {lo, lo+1}: (c*x + c0)//q -> f(lo) + (f(lo+1) - f(lo))*(x - lo)
    return _two_points(s, q, True, ctx)


def _nested_quotient(s: Poly, p: Poly, q: int, r: Range, ctx: Context) -> Poly | None:
    # (x//d + c)//q -> (x + c*d)//(d*q) for q > 0
    atom, c = ctx.single_atom(s)
    if atom is None or atom.op is not FLOORDIV or atom not in ctx.atom_args:
        return None
    x, d = ctx.atom_args[atom]
    if not p_is_const(d):
        return floordiv_poly(p_add(x, p_scale(d, c)), p_scale(d, q), ctx)
    dv = p_const_value(d)
    if 0 < dv and dv * q <= INT64_MAX:
        return floordiv_const(p_add(x, p_const(c * dv)), dv * q, ctx)
    return None


# -- modulo ---------------------------------------------------------------------------------------------


def mod_poly(p: Poly, q: Poly, ctx: Context) -> Poly:
    """Polynomial of ``p % q``."""
    if p_is_const(q):
        return mod_const(p, p_const_value(q), ctx)
    if monomial_quotient(p, q) is not None:
        return {}  # (q*r) % q -> 0
    if not p:
        return {}  # 0 % q -> 0
    if _all_negative(q):
        return p_scale(mod_poly(p_scale(p, -1), p_scale(q, -1), ctx), -1)  # p % q -> -((-p) % (-q))
    # (g*a) % (g*b) -> g*(a % b) for a common integer and monomial factor g
    g = _GCD(p_content(p), p_content(q))
    m = p_mono_gcd(p, q)
    if g > 1 or m:
        inner = mod_poly(ctx.unwrap(p_div_mono(p, m, g)), ctx.unwrap(p_div_mono(q, m, g)), ctx)
        return p_mul(inner, {m: g}, ctx.budget)
    if len(q) > 1:
        r = exact_quotient(p, q, ctx)
        if r is not None and all(type(c) is int for c in r.values()):
            return {}  # (q*r) % q -> 0
        s = p
    else:
        ((mq, cq),) = q.items()
        # (q*a + b) % q -> b % q
        s = {mono: c for mono, c in p.items() if mono_div(mono, mq) is None or c % cq}
        if not s:
            return {}
    qr = ctx.range_of(q)
    rng = UNBOUNDED
    if qr[0] >= 0:  # the rules of the table need q >= 0
        sr = ctx.range_of(s)
        for rule in MOD_RULES:
            result = rule(s, q, sr, qr, ctx)
            if result is not None:
                return result
        rng = r_mod(sr, qr)
    return ctx.atom(MOD, (s, q), rng)


def _below_modulus(s: Poly, q: Poly, sr: Range, qr: Range, ctx: Context) -> Poly | None:
    # 0 <= s < q: s % q -> s
    return dict(s) if sr[0] >= 0 and ctx.range_of(p_sub(q, s))[0] >= 1 else None


def _repeated_modulus(s: Poly, q: Poly, sr: Range, qr: Range, ctx: Context) -> Poly | None:
    # (x % q) % q -> x % q
    atom, c = ctx.single_atom(s)
    if atom is not None and c == 0 and atom.op is MOD and atom in ctx.atom_args and ctx.atom_args[atom][1] == q:
        return dict(s)
    return None


def _reduce_nested_mods(p: Poly, q: int, ctx: Context) -> Poly | None:
    """``p`` with each ``x % r`` (r a multiple of q) replaced by ``x``: congruent modulo q. None if none."""
    out: Poly | None = None
    for m, c in p.items():
        for a, e in m:
            if e == 1 and a.op is MOD and a in ctx.atom_args:
                x, r = ctx.atom_args[a]
                if p_is_const(r) and p_const_value(r) % q == 0 and p_const_value(r) > 0:
                    if out is None:
                        out = dict(p)
                    rest = mono_div(m, ((a, 1),))
                    p_add_into(out, {m: c}, -1)
                    p_add_into(out, p_mul(x, {rest: c}, ctx.budget))
                    break
    return out


def mod_const(p: Poly, q: int, ctx: Context) -> Poly:
    """Polynomial of ``p % q`` for an integer ``q``."""
    if q == 0:
        return ctx.atom(MOD, (p, {}), UNBOUNDED)  # a zero divisor leaves the term alone
    if q < 0:
        return p_scale(mod_const(p_scale(p, -1), -q, ctx), -1)  # p % (-q) -> -((-p) % q)
    out: Poly = {}
    scale = 1
    while True:
        if q == 1:
            return out  # p % 1 -> 0
        # (x % r) % q -> x % q when q divides r (and so for x % r inside any sum)
        reduced = _reduce_nested_mods(p, q, ctx)
        if reduced is not None:
            p = reduced
            continue
        # (q*a + b) % q -> b % q: every coefficient reduces modulo q
        s = {m: c % q for m, c in p.items() if c % q}
        if p_is_const(s):
            p_add_into(out, s, scale)
            return out
        g = coefficient_gcd(s, q)
        if g == 1:
            break
        # before dividing out g, a spelling in one period of q (lost once divided: with v in [0, 0]
        # and w in [1, 2], (2*v - 2*w) % 4 is 2*v - 2*w + 4, but 2*((v + w) % 2) spans two periods of 2)
        whole = _one_period_respelled(s, p, q, ctx.range_of(s), ctx)
        if whole is not None:
            p_add_into(out, whole, scale)
            return out
        # (g*y + c) % (g*h) -> g*((y + c//g) % h) + c%g
        c1, c0 = divmod(s.get(ONE, 0), g)
        if c0:
            p_add_into(out, {ONE: c0}, scale)
        scale *= g
        p = _divided_terms(s, g, c1)
        q //= g
    r = ctx.range_of(s)
    result = None
    for rule in MOD_CONST_RULES:
        result = rule(s, p, q, r, ctx)
        if result is not None:
            break
    if result is None:
        result = ctx.atom(MOD, (s, p_const(q)), r_mod(r, (q, q)))
    p_add_into(out, result, scale)
    return out


def _one_period(s: Poly, p: Poly, q: int, r: Range, ctx: Context) -> Poly | None:
    # every value of s lies in [k*q, k*q + q): s % q -> s - k*q
    return _in_one_period(s, r[0], r[1], q)


def _one_period_respelled(s: Poly, p: Poly, q: int, r: Range, ctx: Context) -> Poly | None:
    # the same for a spelling congruent to s, which may stay in one period where s does not: with u
    # in [0, 3], (11 - u) % 12 is 11 - u though 11 + 11*u spans two periods (p as written, then the
    # coefficients nearest 0)
    if not _finite(r[0]) or not _finite(r[1]):
        return None
    centered = {m: (c - q if 2 * c > q else c) if m else c for m, c in s.items()}
    for spelling in (p, centered):
        if spelling != s:
            slo, shi = ctx.range_of(spelling)
            result = _in_one_period(spelling, slo, shi, q)
            if result is not None:
                return result
    return None


def _two_valued_remainder(s: Poly, p: Poly, q: int, r: Range, ctx: Context) -> Poly | None:
    # x in {lo, lo+1}: (c*x + c0) % q -> f(lo) + (f(lo+1) - f(lo))*(x - lo)
    return _two_points(s, q, False, ctx)


def _in_one_period(v: Poly, lo: int | float, hi: int | float, q: int) -> Poly | None:
    """``v - k*q`` when every value of ``v`` (in ``[lo, hi]``) lies in ``[k*q, k*q + q)``, else None:
    then ``u % q`` is that for any ``u`` congruent to ``v`` modulo ``q``."""
    k1, k2 = fdiv(lo, q), fdiv(hi, q)
    if k1 != k2 or not _finite(k1):
        return None
    result = dict(v)
    p_add_into(result, {ONE: k1 * q}, -1)
    return result


def _two_points(s: Poly, q: int, floor: bool, ctx: Context) -> Poly | None:
    """``s//q`` (``s%q`` when not ``floor``) as ``a*x + b`` when ``s`` is ``c*x + c0`` for an atom ``x``
    that takes two values only (any function of such an ``x`` is affine in it), else None."""
    if len(s) > 2:
        return None
    atom, c = None, 0
    for m, k in s.items():
        if m:
            if len(m) != 1 or m[0][1] != 1 or atom is not None:
                return None
            atom, c = m[0][0], k
    if atom is None:
        return None
    lo, hi = ctx.atom_range(atom)
    if not _finite(lo) or hi != lo + 1:
        return None
    c0 = s.get(ONE, 0)
    v0, v1 = (c * lo + c0, c * hi + c0)
    f0, f1 = (v0 // q, v1 // q) if floor else (v0 % q, v1 % q)
    # x in {lo, lo+1}: f(x) == f(lo) + (f(lo+1) - f(lo))*(x - lo)
    line: Poly = {((atom, 1),): f1 - f0, ONE: f0 - (f1 - f0) * lo}
    return {m: k for m, k in line.items() if k}


# -- ceiling division -------------------------------------------------------------------------------


def ceil_poly(p: Poly, q: Poly, ctx: Context) -> Poly:
    """Polynomial of ``CeilToInt(p, q)``, the ceiling of ``p/q``."""
    if p_is_const(q):
        qv = p_const_value(q)
        if qv == 0:
            return ctx.atom(CEIL_DIV, (p, {}), UNBOUNDED)  # a zero divisor leaves the term alone
        if qv > 0:
            return floordiv_const(p_add(p, {ONE: qv - 1}), qv, ctx)  # CeilToInt(p, q) -> (p + q - 1)//q
        return p_scale(floordiv_const(p_scale(p, -1), qv, ctx), -1)  # CeilToInt(p, q) -> -((-p)//q)
    if ctx.range_of(q)[0] >= 0:
        # q >= 0 (and non-zero where defined): CeilToInt(p, q) -> (p + q - 1)//q
        return floordiv_poly(p_add(p, q, {ONE: -1}), q, ctx)
    return p_scale(floordiv_poly(p_scale(p, -1), q, ctx), -1)


# -- THE TABLES: the closing rules, tried in order (the first that answers wins) -----------------------
#
# Before a table is reached, the reductions above have run: a constant divisor goes to the rules for
# an integer q; (q*r)//q -> r and (q*r)%q -> 0; p//(-q) -> (-p)//q; (g*a)//(g*b) -> a//b and
# (g*a)%(g*b) -> g*(a%b) for a common factor g; exact multiples of q leave the division
# ((q*a + b)//q -> a + b//q, (q*a + b)%q -> b%q); (x%r)%q -> x%q when q divides r; p//1 -> p,
# p%1 -> 0. When no rule of its table answers, the division stays an atom with its range.
# A new rule of this kind is one function and one entry (with its algebra) in its table.

#: s//q for a polynomial q >= 0
FLOORDIV_RULES: Final[tuple[PolyRule, ...]] = (
    _below_divisor,  # 0 <= s < q: s//q -> 0
    _quotient_of_ranges,  # the ranges leave one value k: s//q -> k
    _nested_division,  # (x//r + c)//q -> (x + c*r)//(r*q)
)
#: s//q for an integer q > 1
FLOORDIV_CONST_RULES: Final[tuple[ConstRule, ...]] = (
    _known_quotient,  # s in [k*q, k*q + q): s//q -> k
    _two_valued_quotient,  # x in {lo, lo+1}: (c*x + c0)//q is affine in x
    _nested_quotient,  # (x//d + c)//q -> (x + c*d)//(d*q)
)
#: s%q for a polynomial q >= 0
MOD_RULES: Final[tuple[PolyRule, ...]] = (
    _below_modulus,  # 0 <= s < q: s%q -> s
    _repeated_modulus,  # (x%q)%q -> x%q
)
#: s%q for an integer q > 1
MOD_CONST_RULES: Final[tuple[ConstRule, ...]] = (
    _one_period,  # s in [k*q, k*q + q): s%q -> s - k*q
    _one_period_respelled,  # the same for p as written, or with the coefficients nearest 0
    _two_valued_remainder,  # x in {lo, lo+1}: (c*x + c0)%q is affine in x
)
