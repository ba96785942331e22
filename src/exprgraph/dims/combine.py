"""Rules across the terms of a sum: ``(x//k)*k + x%k -> x``, ``x - (x//k)*k -> x%k``,
``max(a,b) + min(a,b) -> a + b``. Each holds for every integer value (``x % q == x - q*(x//q)``)."""

from __future__ import annotations

from ..core.term import REGISTRY, Term
from .context import Context
from .division import mod_const
from .normal import ONE, Mono, Poly, mono_div, mono_mul, p_add, p_add_into, p_const_value, p_is_const, p_mul

__all__ = ["combine_terms"]

_FLOORDIV, _MOD = REGISTRY["floordiv"], REGISTRY["mod"]
_MAX, _MIN = REGISTRY["maximum"], REGISTRY["minimum"]
_OPS = (_FLOORDIV, _MOD, _MAX)


def combine_terms(p: Poly, ctx: Context) -> Poly:
    """Apply the cross-term rules to ``p`` (in place) until none applies; returns ``p``."""
    if len(p) < 2:
        return p
    changed = True
    while changed:
        changed = False
        for m, c in list(p.items()):
            if p.get(m) != c:
                continue
            for a, e in m:
                if e != 1 or a.op not in _OPS or a not in ctx.atom_args:
                    continue
                rest = mono_div(m, ((a, 1),))
                if rest is None:  # never: a divides m
                    continue
                if a.op is _MOD:
                    changed = _absorb_mod(p, m, c, a, rest, ctx)
                elif a.op is _FLOORDIV:
                    changed = _form_mod(p, m, c, a, rest, ctx)
                else:
                    changed = _max_plus_min(p, m, c, a, rest, ctx)
                if changed:
                    break
            if changed:
                break
    return p


def _contains(p: Poly, part: Poly) -> bool:
    get = p.get
    return all(get(m) == c for m, c in part.items())


def _absorb_mod(p: Poly, m: Mono, c: int, mod: Term, rest: Mono, ctx: Context) -> bool:
    # c*u*(x%q) + c*u*q*(x//q) -> c*u*x
    x, q = ctx.atom_args[mod]
    if not q:
        return False  # x % 0 stays as it is
    div = Term(_FLOORDIV, mod.args)
    quotient_part = p_mul(q, {mono_mul(rest, ((div, 1),)): c}, ctx.budget)
    if not _contains(p, quotient_part):
        return False
    p_add_into(p, quotient_part, -1)
    p_add_into(p, {m: c}, -1)
    p_add_into(p, p_mul(x, {rest: c}, ctx.budget))
    return True


def _form_mod(p: Poly, m: Mono, a: int, div: Term, rest: Mono, ctx: Context) -> bool:
    # c*u*x - c*u*q*(x//q) -> c*u*(x%q), for a constant q > 0 (a == -c*q)
    x, q = ctx.atom_args[div]
    if not p_is_const(q):
        return False
    qv = p_const_value(q)
    if qv <= 0 or a % qv:
        return False
    c = -a // qv
    x_part = p_mul(x, {rest: c}, ctx.budget)
    if not rest:
        x_part.pop(ONE, None)  # the constant of x may be anything: it only shifts the constant term
    if not x_part or not _contains(p, x_part):
        return False
    p_add_into(p, {m: a}, -1)
    p_add_into(p, p_mul(x, {rest: c}, ctx.budget), -1)
    p_add_into(p, p_mul(mod_const(x, qv, ctx), {rest: c}, ctx.budget))
    return True


def _max_plus_min(p: Poly, m: Mono, c: int, mx: Term, rest: Mono, ctx: Context) -> bool:
    # c*u*max(a, b) + c*u*min(a, b) -> c*u*(a + b)
    args = ctx.atom_args[mx]
    if len(args) != 2:
        return False
    mn = Term(_MIN, mx.args)
    m2 = mono_mul(rest, ((mn, 1),))
    if p.get(m2) != c:
        return False
    del p[m]
    del p[m2]
    p_add_into(p, p_mul(p_add(*args), {rest: c}, ctx.budget))
    return True
