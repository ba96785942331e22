"""Exp and log laws under assumptions: each rule reads the sign analysis (:mod:`.signs`) for its condition.

Safe rules replace a term by one rounding of its exact value for every value the assumptions
allow, infinities included, and never turn a finite value into an overflow or back (docs/simplify.md's
contract); the others are tagged unsafe (they round differently, or hold for finite values only).
"""

from __future__ import annotations

import math
from collections.abc import Callable

from ..core import Term, get_op
from .numbers import number
from .signs import facts_of

__all__ = [
    "LOG_REWRITES",
    "log_of_product",
    "log_of_power",
    "exp_of_log",
    "exp_of_log_sum",
    "exp_of_scaled_log",
    "log_of_exp",
]

ADD, MUL, LOG, EXP = get_op("add"), get_op("mul"), get_op("log"), get_op("exp")
POW = get_op("pow")

#: exp(a) is finite for every a <= this (math.log of the largest float, rounded down)
EXP_FINITE_BELOW = 709.78


def _positive_factor(f: Term) -> bool:
    """``f > 0``, or ``f`` is ``x**a`` with ``x > 0`` and real ``a`` (> 0 but where it under- or overflows)."""
    if facts_of(f).positive:
        return True
    return f.op is POW and facts_of(f.args[0]).positive and facts_of(f.args[1]).real


def log_of_product(t: Term) -> Term | None:
    # log(x*y) -> log(x) + log(y) where x, y > 0 (unsafe: two roundings and a sum; x*y may overflow or underflow)
    (a,) = t.args
    if a.op is not MUL or a.shape != () or not all(_positive_factor(f) for f in a.args):
        return None
    return ADD(*(LOG(f) for f in a.args))


def _log_part(u: Term) -> tuple[Term, Term | None] | None:
    """``log(y)`` as ``(y, None)`` and ``c*log(y)`` as ``(y, c)`` for ``y > 0`` and a real ``c``; else None."""
    if u.op is LOG and facts_of(u.args[0]).positive:
        return u.args[0], None
    if u.op is MUL and len(u.args) == 2:
        c, g = u.args
        if g.op is LOG and facts_of(g.args[0]).positive and facts_of(c).real:
            return g.args[0], c
    return None


def exp_of_log_sum(t: Term) -> Term | None:
    # exp(a + log(y)) -> y*exp(a), exp(c*log(y)) -> y**c where y > 0, c real
    # (unsafe: rounds differently, and exp(a)*y may overflow where exp(a + log(y)) does not)
    (s,) = t.args
    terms = s.args if s.op is ADD else (s,)
    factors: list[Term] = []
    rest: list[Term] = []
    for u in terms:
        part = _log_part(u)
        if part is None:
            rest.append(u)
        else:
            y, c = part
            factors.append(y if c is None else POW(y, c))
    if not factors or t.shape != ():
        return None
    if rest:
        factors.append(EXP(rest[0] if len(rest) == 1 else ADD(*rest)))
    return factors[0] if len(factors) == 1 else MUL(*factors)


def log_of_power(t: Term) -> Term | None:
    # log(x**a) -> a*log(x) where x > 0 and a is real (unsafe: x**a may overflow; a*log(x) is nan at x = 1, a = inf)
    (p,) = t.args
    if p.op is not POW or p.shape != ():
        return None
    x, a = p.args
    if not facts_of(x).positive or not facts_of(a).real:
        return None
    return MUL(a, LOG(x))  # an int exponent promotes: the product is of log's dtype (the guard checks)


def exp_of_log(t: Term) -> Term | None:
    # exp(log(x)) -> x where x >= 0 (safe: x is the exact value; exp(log(0)) = 0 and exp(log(inf)) = inf)
    (a,) = t.args
    if a.op is not LOG:
        return None
    x = a.args[0]
    return x if x.dtype == t.dtype and facts_of(x).nonnegative else None


def exp_of_scaled_log(t: Term) -> Term | None:
    # exp(c*log(y)) -> y**c for y > 0 (+inf included, never nan nor a zero: (-0.0)**-1 is -inf, exp(inf) is not)
    # and a number c, finite and non-zero: y**c is one rounding of the exact value (pow is correctly rounded),
    # exp magnifies log's rounding; both overflow or underflow where y**c does, and at y = inf both are 0 or inf
    # as c's sign says (safe)
    (u,) = t.args
    if u.op is not MUL or len(u.args) != 2 or t.shape != ():
        return None
    for k, g in (u.args, u.args[::-1]):
        c = number(k)
        if c is None or g.op is not LOG or not facts_of(g.args[0]).positive:
            continue
        if c == 0 or not math.isfinite(c):
            return None
        y = g.args[0]
        out = POW(y, k)
        return out if out.dtype == t.dtype else None
    return None


def log_of_exp(t: Term) -> Term | None:
    # log(exp(x)) -> x where x is real and exp(x) cannot overflow (x <= 709.78): the exact value, so safe
    # (for any real x the unsafe rule log_exp of the canonical form applies)
    (a,) = t.args
    if a.op is not EXP:
        return None
    x = a.args[0]
    f = facts_of(x)
    return x if x.dtype == t.dtype and f.real and f.upper <= EXP_FINITE_BELOW else None


Family = list[tuple[str, Callable[[Term], Term | None], tuple[str, ...], bool, str]]

#: ``(name, handler, root ops, unsafe, algebra)`` of each rule (:mod:`.canonical` makes them rules)
LOG_REWRITES: Family = [
    ("log_of_product", log_of_product, ("log",), True, "log(x*y) -> log(x) + log(y) (x, y > 0)"),
    ("log_of_power", log_of_power, ("log",), True, "log(x**a) -> a*log(x) (x > 0, a real)"),
    ("exp_of_log", exp_of_log, ("exp",), False, "exp(log(x)) -> x (x >= 0)"),
    ("exp_of_log_sum", exp_of_log_sum, ("exp",), True, "exp(a + c*log(y)) -> y**c*exp(a) (y > 0, c real)"),
    ("exp_of_scaled_log", exp_of_scaled_log, ("exp",), False, "exp(c*log(y)) -> y**c (y > 0, c a number)"),
    ("log_of_exp", log_of_exp, ("log",), False, "log(exp(x)) -> x (x real, x <= 709.78)"),
]
