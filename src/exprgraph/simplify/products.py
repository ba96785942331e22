"""Canonical products and powers: flattened, coefficients folded, powers of one base merged exactly."""

from __future__ import annotations

from functools import partial
from typing import Any

from ..core import Term, const, get_op
from ..core.dtypes import FLOAT32, FLOAT64, is_float
from .collect import assemble, collect_like
from .numbers import (
    INT_MAX,
    INT_MIN,
    base_exponent,
    const_like,
    exact_total,
    integral,
    number,
    power,
    scaled,
)
from .order import sort_key

__all__ = [
    "collect_product",
    "cancel_product",
    "merge_exp_product",
    "power_of_power",
    "reciprocal_of_product",
    "abs_of_product",
]

ADD, MUL, POW = get_op("add"), get_op("mul"), get_op("pow")
EXP = get_op("exp")


def _merge_powers(base: Term, members: list[tuple[Any, Term]], cancel: bool) -> list[Term] | None:
    """Powers of one base multiplied: exponents added exactly (integers of one sign; any when ``cancel``).

    What cannot merge (without ``cancel``, ``x * x**-1``: nan at x = 0) stays together as one inner
    product, a unit evaluated first: ``x/x*y`` does not become ``x*y/x``, which overflows sooner.
    """
    if len(members) == 1:
        return [members[0][1]]
    exps = [e for e, _ in members]
    whole = all(integral(e) for e in exps)
    same_sign = all(e > 0 for e in exps) or all(e < 0 for e in exps)
    if (whole and same_sign) or (cancel and all(e == e for e in exps)):
        # x*x -> x**2, x**2 * x**-2 -> 1 (cancel: not for x = 0 or inf)
        total = exact_total(exps)
        if total is not None:
            if total == 0:
                return []
            merged = power(base, total)
            if merged is not None:
                return [merged]
        if whole and same_sign:
            return [a for _, a in members]  # x**(2**62) * x**(2**62): no int64 exponent, keep both
    out: list[Term] = []
    # x*x * x**-1 -> x**2 * x**-1: integer powers merge within each sign (x/x stays, it is nan at 0)
    for sign in (1, -1):
        part = [(e, a) for e, a in members if integral(e) and e * sign > 0]
        if len(part) == 1:
            out.append(part[0][1])
        elif part:
            total = exact_total([e for e, _ in part])
            merged = None if total is None else power(base, total)
            out.extend([merged] if merged is not None else [a for _, a in part])
    out.extend(a for e, a in members if not (integral(e) and e != 0))
    if len(out) > 1:
        return [MUL(*sorted(out, key=sort_key))]  # a unit: x * x**-1, multiplied first
    return out


def _canonical_product(t: Term, cancel: bool) -> Term | None:
    items: list[Term] = []
    for a in t.args:
        # a unit (powers of one base that could not merge) is flattened too: regrouping builds it again
        items.extend(a.args if a.op is MUL else (a,))
    collected = collect_like(items, MUL, base_exponent, True, _merge_powers, cancel)
    if collected is None:
        return None
    factors, c = collected
    parts = factors
    if c is not None:
        v = number(c)
        if v == 0 and cancel and factors:
            return const(0, dtype=t.dtype)  # x*0 -> 0 (not for infinite or nan x)
        if not (v == 1 and factors):  # x*1 -> x
            parts = [const(-1) if v == -1 else c, *factors]  # -1.0*x -> -1*x: one spelling of the sign
    return assemble(t, MUL, parts, factors, c, empty=1, constant_first=True)


#: flatten, fold the coefficient, sort; x*x -> x**2, x**2*x**3 -> x**5 (integer powers of one sign)
collect_product = partial(_canonical_product, cancel=False)
#: also x*x**-1 -> 1, (x*y)/y -> x and x*0 -> 0 (not for x or y zero, infinite or nan)
cancel_product = partial(_canonical_product, cancel=True)


def merge_exp_product(t: Term) -> Term | None:
    # exp(a)*exp(b) -> exp(a + b) (not when one overflows and the other underflows)
    exps = [a for a in t.args if a.op is EXP]
    if len(exps) < 2:
        return None
    rest = [a for a in t.args if a.op is not EXP]
    merged = EXP(ADD(*(e.args[0] for e in exps)))
    return merged if not rest else MUL(*rest, merged)


def power_of_power(t: Term) -> Term | None:
    # (x**a)**b -> x**(a*b) for integers a, b; exp(a)**n -> exp(n*a); x**2.0 -> x**2 for float x
    base, ex = t.args
    e = number(ex)
    if e is None:
        return None
    if base.op is POW:
        e2 = number(base.args[1])
        if e2 is not None and integral(e) and integral(e2):
            return power(base.args[0], int(e) * int(e2))  # exact: None beyond int64
    if base.op is POW and e == -1 and is_float(t.dtype):
        e2 = number(base.args[1])
        # (x**a)**-1 -> x**-a (to rounding; the output form writes x**-a as 1/x**a), except for
        # a = +-0.5: x**0.5 is sqrt(x), nan at -inf and -0.0 at -0.0, where x**-0.5 is 0.0 and inf
        if e2 is not None and abs(e2) != 0.5:
            return power(base.args[0], -e2)
    if base.op is EXP and integral(e) and INT_MIN <= int(e) <= INT_MAX:
        k = const(int(e)) if t.dtype != FLOAT32 else const_like(e, t)
        return None if k is None else EXP(MUL(k, base.args[0]))
    if e.__class__ is float and integral(e) and base.dtype == FLOAT64 and INT_MIN <= int(e) <= INT_MAX:
        return POW(base, const(int(e)))
    return None


def reciprocal_of_product(t: Term) -> Term | None:
    # (a*b)**-1 -> a**-1 * b**-1 (to rounding): a quotient's denominators are factors like any other
    base, ex = t.args
    if base.op is not MUL or number(ex) != -1 or not is_float(t.dtype):
        return None
    if t.dtype == FLOAT32:  # float32 factors (and bools) to a float32 power -1
        return MUL(*(POW(a, ex) for a in base.args))
    factors = []
    for a in base.args:
        if number(a) is not None:
            a = const(float(a.attr))  # an int constant to the power -1 would not fold
        factors.append(POW(a, ex if a.dtype == FLOAT64 else const(-1.0)))  # i**-1 is not defined for ints
    return MUL(*factors)


def abs_of_product(t: Term) -> Term | None:
    # abs((-c)*x) -> abs(c*x), abs(x**(2k)) -> x**(2k)
    (a,) = t.args
    if a.op is MUL:
        c = number(a.args[0])
        if c is not None and c < 0:
            positive = scaled(-c, a.args[1] if len(a.args) == 2 else MUL(*a.args[1:]))
            return None if positive is None else get_op("abs")(positive)
    if a.op is POW:
        e = number(a.args[1])
        if e is not None and integral(e) and int(e) % 2 == 0 and is_float(a.dtype):
            return a
    return None
