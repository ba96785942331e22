"""Canonical products and powers: flattened, coefficients folded, powers of one base merged exactly.

The full canonical product (:func:`cancel_product`, and :func:`collect_product` on integer
products) is flat and sorted. A float product of the safe strength is collected only where the
collected form is one rounding of the exact product (:func:`_exact_product`); any other keeps
its association, as the order of a float product decides where it overflows or underflows.
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import partial
from typing import Any

from ..core import Term, const, get_op
from ..core.dtypes import FLOAT32, FLOAT64, is_float
from ..core.exact_fold import exact_value, fold_exact, is_exact
from .association import binary_form, gather, in_order, what_is_left
from .collect import assemble, canonical_node, collect_like, collected_already, flat_operands, repeats
from .numbers import (
    INT_MAX,
    INT_MIN,
    TINY,
    TINY32,
    base_exponent,
    const_like,
    exact_total,
    fold_value,
    integral,
    number,
    power,
    rounded,
    same_dtype,
    times,
)
from .order import in_sort_order, sort_key

__all__ = [
    "collect_product",
    "cancel_product",
    "merge_exp_product",
    "power_of_power",
    "reciprocal_of_product",
    "reciprocal_of_power",
    "power_of_exp",
    "abs_of_product",
    "scaled_quotient",
]

ADD, MUL, POW = get_op("add"), get_op("mul"), get_op("pow")
TRUEDIV = get_op("truediv")
EXP = get_op("exp")
_MINUS_ONE = const(-1)


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
            # x**(2**62) * x**(2**62): no int64 exponent; equal factors still become one, f**k (f*f = f**2),
            # or a product squaring itself n times would hold 2**n factors
            return _powers_of_repeats(members)
    out: list[Term] = []
    # x*x * x**-1 -> x**2 * x**-1: integer powers merge within each sign (x/x stays, it is nan at 0)
    for sign in (1, -1):
        part = [(e, a) for e, a in members if integral(e) and e * sign > 0]
        if len(part) == 1:
            out.append(part[0][1])
        elif part:
            total = exact_total([e for e, _ in part])
            merged = None if total is None else power(base, total)
            out.extend([merged] if merged is not None else _powers_of_repeats(part))
    out.extend(a for e, a in members if not (integral(e) and e != 0))
    if len(out) > 1:
        return [MUL(*sorted(out, key=sort_key))]  # a unit: x * x**-1, multiplied first
    return out


def _powers_of_repeats(members: list[tuple[Any, Term]]) -> list[Term]:
    """The factors of ``members`` with each repeated one as its power: ``[f, f, g] -> [f**2, g]``."""
    out = []
    for a, k in repeats(members):
        p = power(a, k) if k > 1 else a
        out.append(a if p is None else p)
    return out


def _canonical_product(t: Term) -> bool:
    """Whether :func:`_collect_product` gives ``t`` itself (:func:`~.collect.collected_already`): factors of
    distinct bases and at most one numeric constant, first and neither 0 nor 1 (-1 the int -1)."""
    return collected_already(t, _base, _coefficient_kept)


def _base(a: Term) -> Term:
    """The base of the factor ``a`` (its group in :func:`_collect_product`)."""
    return base_exponent(a)[0]


def _coefficient_kept(i: int, n: int, a: Term, v: Any) -> bool:
    """Whether the numeric factor ``a`` (value ``v``) at ``i`` (of ``n``) is a coefficient the full product keeps."""
    return i == 0 and v != 0 and v != 1 and (v != -1 or a is _MINUS_ONE)


def _full_product(t: Term, cancel: bool) -> Term | None:
    # early exit: a flat, sorted product of distinct bases and one folded coefficient is its own canonical form
    return None if _canonical_product(t) else _collect_product(t, cancel)


def _collect_product(t: Term, cancel: bool) -> Term | None:
    # a unit (powers of one base that could not merge) is flattened too: regrouping builds it again
    collected = collect_like(flat_operands(t, MUL), MUL, base_exponent, True, _merge_powers, cancel)
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
collect_product = partial(canonical_node, cancel=False, safe=lambda t: _safe_product(t), full=_full_product)
#: also x*x**-1 -> 1, (x*y)/y -> x and x*0 -> 0 (not for x or y zero, infinite or nan)
cancel_product = partial(canonical_node, cancel=True, safe=lambda t: _safe_product(t), full=_full_product)


def merge_exp_product(t: Term) -> Term | None:
    # exp(a)*exp(b) -> exp(a + b) (not when one overflows and the other underflows)
    exps = [a for a in t.args if a.op is EXP]
    if len(exps) < 2:
        return None
    rest = [a for a in t.args if a.op is not EXP]
    merged = EXP(ADD(*(e.args[0] for e in exps)))
    return merged if not rest else MUL(*rest, merged)


def power_of_power(t: Term) -> Term | None:
    # (x**a)**b -> x**(a*b) for integers a, b (b != -1); exp(a)**(2**k) -> exp(2**k * a); x**2.0 -> x**2 for float x
    base, ex = t.args
    e = number(ex)
    if e is None:
        return None
    if base.op is POW and e != -1:
        # not for b = -1: a factor (x**a)**-1 is a division by x**a (the output form), where x**-a would
        # multiply by a power that overflows sooner (reciprocal_of_power, unsafe)
        e2 = number(base.args[1])
        if e2 is not None and integral(e) and integral(e2):
            return power(base.args[0], int(e) * int(e2))  # exact: None beyond int64
    if base.op is EXP and integral(e) and 0 < e <= INT_MAX and _power_of_two(int(e)):
        # exp(a)**2 -> exp(2*a): 2*a is exact; exp(a)**3 -> exp(3*a) rounds 3*a, which exp magnifies
        # (hundreds of ulps near a = 233), and exp(a)**-1 -> exp(-a) would turn a division into a
        # product that overflows sooner: those are unsafe (power_of_exp)
        return _exp_times(t, base.args[0], e)
    if e.__class__ is float and integral(e) and base.dtype == FLOAT64 and INT_MIN <= int(e) <= INT_MAX:
        return POW(base, const(int(e)))
    return None


def reciprocal_of_power(t: Term) -> Term | None:
    # (x**a)**-1 -> x**-a (unsafe: f/x**2 is not f*x**-2 where x**-2 overflows, x = 1e-160), except for
    # a = +-0.5: x**0.5 is sqrt(x), nan at -inf and -0.0 at -0.0, where x**-0.5 is 0.0 and inf
    base, ex = t.args
    if base.op is not POW or number(ex) != -1 or not is_float(t.dtype):
        return None
    e2 = number(base.args[1])
    if e2 is None or abs(e2) == 0.5:
        return None
    return power(base.args[0], -e2)


def _power_of_two(n: int) -> bool:
    """Whether ``n`` is +-2**k: ``n*a`` is then exact (short of overflow, where exp saturates anyway)."""
    n = abs(n)
    return n > 0 and n & (n - 1) == 0


def _exp_times(t: Term, a: Term, e: Any) -> Term | None:
    """``exp(e*a)`` for ``exp(a)**e`` (``e`` an integer, float32 next to float32)."""
    k = const(int(e)) if t.dtype != FLOAT32 else const_like(e, t)
    return None if k is None else EXP(MUL(k, a))


def power_of_exp(t: Term) -> Term | None:
    # exp(a)**n -> exp(n*a) for any integer n (unsafe: n*a rounds, and exp magnifies that error n*a-fold)
    base, ex = t.args
    e = number(ex)
    if base.op is not EXP or e is None or not integral(e) or not INT_MIN <= int(e) <= INT_MAX:
        return None
    return _exp_times(t, base.args[0], e)


def reciprocal_of_product(t: Term) -> Term | None:
    # (a*b)**-1 -> a**-1 * b**-1 (unsafe: a*b may overflow where 1/a * 1/b does not, and the reverse)
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
            positive = times(-c, a.args[1] if len(a.args) == 2 else MUL(*a.args[1:]))
            return None if positive is None else get_op("abs")(positive)
    if a.op is POW:
        e = number(a.args[1])
        if e is not None and integral(e) and int(e) % 2 == 0 and is_float(a.dtype):
            return a
    return None


# -- the safe float product: collected only where that is one rounding of the whole -----------------


def _inner_product(dtype: str) -> Any:
    """What :func:`~.association.gather` looks through in a float product: the products of its dtype."""

    def inner(a: Term) -> tuple[tuple[Term, ...], bool] | None:
        return (a.args, False) if a.op is MUL and a.dtype == dtype else None

    return inner


def _exact_product(t: Term, factors: list[Term]) -> Term | None:
    """The collected form of a float product when it is one rounding of the exact product, else None.

    A factor ``b`` and a factor ``b**-1`` make the unit ``b/b`` (exactly 1.0, or nan at 0, inf and
    nan; repeated units are one: ``(b/b)*(b/b) = b/b``). Powers of one base with integer exponents
    of one sign merge into one power, correctly rounded (``x*x*x -> x**3``); other exponents stay as
    they are (``x*x/x -> x**2/x``). Constants multiply exactly, rounded once, and -1 is a sign,
    exact anywhere. What remains may be one factor, or two computed exactly as they were (``(x*y)*3``
    is not ``3*x*y`` at x = 1e308, y = 1e-308: the order of a product decides where it overflows), so
    ``x/x*(x/x)`` is ``x/x`` and never ``x**2/x**2``, nan at x = 1e200.
    """
    consts: list[Any] = []
    groups: dict[Term, list[tuple[Any, Term]]] = {}
    factors, rational = _exact_constants(factors)
    if rational is not None:
        consts.append(rational)
    for a in factors:
        v = number(a)
        if v is not None:
            consts.append(v)
            continue
        base, e = base_exponent(a)
        groups.setdefault(base, []).append((e, a))
    c = _coefficient(t, consts)
    coefficient = None if c is None else c[0]
    v = None if coefficient is None else number(coefficient)
    # -1 is a sign, exact wherever applied; a 1 is dropped (x*1 -> x), kept only to keep a float dtype
    left = what_is_left(groups, _merge_safely, (None, True) if v == 1 or v == -1 else c)
    if left is None:
        return None
    kept, units = left
    factors_out = in_order(kept, units)
    if coefficient is not None and v != 1 and len(factors_out) > 1:
        # c*(a*b) is c times the product without it, nested: a term's rest is that product again
        # (``-1 * r`` for a zero unit r - r, ``1.5 * r`` for a merged term); the factors are at most one
        # and units (exactly 1.0 or nan), or a sign (exact wherever it is applied)
        return MUL(const(-1) if v == -1 else coefficient, MUL(*factors_out))
    parts = ([const(-1) if v == -1 else coefficient] if coefficient is not None and v != 1 else []) + factors_out
    return assemble(t, MUL, parts, factors_out, coefficient, empty=1, constant_first=True)


def _exact_constants(factors: list[Term]) -> tuple[list[Term], Fraction | None]:
    """The factors without their exact constants when those multiply to a rational (``sqrt(2)*sqrt(8)`` is 4),
    and that rational; else the factors as they are and None."""
    exact = [a for a in factors if a.args and a.dtype == FLOAT64 and is_exact(a)]
    if len(exact) < 2:  # (one exact constant is a factor like any other)
        return factors, None
    # sqrt(2)*sqrt(8) = 4 exactly: a constant the product is then collected with, rounded once like any other
    folded = fold_exact(MUL(*exact))
    if folded is None:
        return factors, None
    value = exact_value(folded)
    if value is None:  # a whole value folds to the float that holds it exactly (2.0)
        v = number(folded)
        if v is None or not math.isfinite(v):
            return factors, None
        value = Fraction(v)
    return [a for a in factors if a not in exact], value


def _merge_safely(base: Term, members: list[tuple[Any, Term]], units: list[Term]) -> list[tuple[Term, bool]] | None:
    """The factors ``base**e_i`` of a safe product as ``[(factor, exact)]``; a unit ``b/b`` goes to ``units``."""
    if len(members) == 1:
        return [(members[0][1], True)]
    ones = [a for e, a in members if e == 1]
    inverses = [a for e, a in members if e == -1]
    pairs = min(len(ones), len(inverses))
    if pairs:
        units.append(MUL(*sorted((ones[0], inverses[0]), key=sort_key)))  # b/b: 1.0, or nan at 0, inf, nan
        ones_left = inverses_left = pairs
        kept = []
        for e, a in members:
            if e == 1 and ones_left:
                ones_left -= 1
            elif e == -1 and inverses_left:
                inverses_left -= 1
            else:
                kept.append((e, a))
        members = kept
    if len(members) <= 1:
        return [(a, True) for _, a in members]
    exps = [e for e, _ in members]
    if all(integral(e) for e in exps) and (all(e > 0 for e in exps) or all(e < 0 for e in exps)):
        total = exact_total(exps)
        merged = None if total is None else power(base, total)
        if merged is None:
            return None  # x**(2**62) * x**(2**62): no int64 exponent; the node keeps its form (f*f -> f**2)
        return [(merged, False)]  # x*x*x -> x**3: pow is correctly rounded
    return [(a, True) for _, a in members]  # x**2 * x**-1, x**0.5 * x**0.5: as they are


def _coefficient(t: Term, consts: list[Any]) -> tuple[Term | None, bool] | None:
    """The constants of a safe product as one ``(constant, exact)`` (None for none); None on overflow or underflow."""
    if not consts:
        return None, True
    if len(consts) == 1 and consts[0] != 0 and math.isfinite(consts[0]):  # one constant: exact as it is
        k = const_like(consts[0], t, exact=False)
        return None if k is None else (k, True)
    if not all(math.isfinite(v) for v in consts):
        folded = fold_value(MUL, [const(v) for v in consts])  # inf*x: where it overflows is not ours to move
        return None if folded is None else (same_dtype(folded, t), False)
    total = Fraction(1)
    for v in consts:
        total *= Fraction(v)
    if total == 0:
        # the sign of a float zero is the product of the signs: 0*y*(-1) is -(0*y), -0.0 at y = 2.0 (not 0*y)
        negative = sum(1 for v in consts if v < 0 or (v.__class__ is float and math.copysign(1.0, v) < 0)) % 2 == 1
        ints = all(v.__class__ is int for v in consts) and not (negative and is_float(t.dtype))
        zero = 0 if ints else -0.0 if negative else 0.0
        k = const_like(zero, t, exact=False)
        return None if k is None else (k, True)  # 0*x stays: nan at x = inf
    r = rounded(total, t, all(v.__class__ is int for v in consts))
    if r is None:
        return None
    value, exact = r
    tiny = TINY32 if t.dtype == FLOAT32 else TINY
    if len(consts) > 1 and value.__class__ is float and abs(value) < tiny:
        return None  # 1e-200 * 1e-200 underflows where x*1e-200*1e-200 need not
    k = const_like(value, t, exact=False)
    return None if k is None else (k, exact)


def _negation_of(a: Term, dtype: str) -> Term | None:
    """``x`` for a factor ``-1 * x`` of the dtype, else None."""
    if a.op is MUL and len(a.args) == 2 and number(a.args[0]) == -1 and a.dtype == dtype:
        return a.args[1]
    return None


def _signed(t: Term) -> Term | None:
    """Signs moved out of a product, exactly (a sign is exact wherever it is applied): ``-1 * (c*r) ->
    (-c)*r``, ``(-a)*b -> -(a*b)``, ``(-a)*(-b) -> a*b``."""
    if len(t.args) != 2:
        return None
    a, b = t.args
    if number(a) == -1:
        c = number(b.args[0]) if b.op is MUL and b.dtype == t.dtype and len(b.args) == 2 else None
        if c is None or (c == 0 and c.__class__ is int and is_float(t.dtype)):
            return None  # -1 * (0*pi) is -0.0, (-0)*pi is +0.0: the product's collection keeps that sign
        return times(-c if c.__class__ is not int or -c <= INT_MAX else float(-c), b.args[1])
    na, nb = _negation_of(a, t.dtype), _negation_of(b, t.dtype)
    if na is not None and nb is not None:
        return MUL(na, nb)
    if na is None and nb is None:
        return None
    return MUL(const(-1), MUL(a if na is None else na, b if nb is None else nb))


def _safe_product(t: Term) -> Term | None:
    signed = _signed(t)
    if signed is not None:
        return signed
    inner = _inner_product(t.dtype)
    if len(t.args) == 2:
        a, b = t.args
        if number(a) is None is number(b) and inner(a) is None is inner(b):
            if base_exponent(a)[0] is not base_exponent(b)[0]:
                return None if in_sort_order(a, b) else MUL(b, a)  # a*b: nothing to collect, sorted
    factors = gather(t, inner)
    if factors is not None:
        out = _exact_product(t, [a for a, _ in factors])
        if out is not None:
            return None if out is t else out
    if len(t.args) == 2 and t.args[0] is t.args[1]:
        a = t.args[0]
        return power(a, 2)  # a*a = a**2 exactly, for every a (evaluated as a square)
    return binary_form(t, MUL, _product_head)


def scaled_quotient(t: Term) -> Term | None:
    # c*(s/d) -> (c/d)*s for numbers c, d != 0 where c/d is a float exactly (3*(x/3) -> x, 6*(x/3) -> 2*x): one
    # rounding of the exact value; s/d may overflow (|d| < 1) where (c/d)*s need not, never the reverse; and
    # inf, nan and the sign of a zero come out alike (c*(s/d) has the sign of s times those of c and d)
    args = t.args
    if len(args) != 2 or (args[0].op is not TRUEDIV and args[1].op is not TRUEDIV):
        return None
    for k, q in (args, args[::-1]):
        c = number(k)
        if c is None or q.op is not TRUEDIV or q.dtype != t.dtype:
            continue
        s, divisor = q.args
        d = number(divisor)
        if d is None or not (math.isfinite(c) and math.isfinite(d)) or c == 0 or d == 0:
            return None
        r = rounded(Fraction(c) / Fraction(d), t, False)
        if r is None or not r[1] or (r[0] != 0 and abs(r[0]) < (TINY32 if t.dtype == FLOAT32 else TINY)):
            return None  # c/d is no float: (c/d)*s would round twice
        if r[0] == 1:
            return s if s.dtype == t.dtype else None
        coefficient = const(-1) if r[0] == -1 else const_like(r[0], t)
        return None if coefficient is None else MUL(coefficient, s)
    return None


def _product_head(a: Term) -> tuple[bool, bool]:
    """The order of the two operands of a safe product kept binary: a scalar constant first, then a
    compound operand, else the canonical order (``2*(x*y)``, ``(x*y)*z``)."""
    return number(a) is None, not a.args
