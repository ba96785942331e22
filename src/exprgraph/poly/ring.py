"""The ring: sparse multivariate polynomials over exact coefficients (ints or Fractions).

A *polynomial* is a dict ``{monomial: coefficient}`` (monomials of :mod:`.monomials`) with no
zero coefficients; a coefficient is an ``int`` or a :class:`fractions.Fraction` whose
denominator is not 1 (a Fraction that comes out whole is stored as its int, so integer
polynomials never carry Fractions and their arithmetic stays on Python ints). Functions
return new dicts and never mutate their arguments, except those named ``*_into``.
Work is budgeted (:class:`Budget`): past it, :class:`~exprgraph.errors.TermTooLargeError`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from fractions import Fraction
from typing import Final

from ..core.term import Term
from ..errors import TermTooLargeError
from .monomials import ONE, Mono, check_degree, mono_div, mono_gcd, mono_mul, mono_of_powers

__all__ = [
    "Coeff",
    "Poly",
    "MAX_WORK",
    "Budget",
    "norm",
    "p_const",
    "p_atom",
    "p_add_into",
    "p_add",
    "p_sub",
    "p_neg",
    "p_scale",
    "p_mul",
    "p_pow",
    "p_product",
    "p_const_value",
    "p_is_const",
    "p_content",
    "p_mono_gcd",
    "p_div_mono",
    "p_atoms",
    "p_degree",
    "p_total_degree",
    "p_is_integral",
    "p_denominator",
    "p_primitive",
    "p_diff",
    "p_eval",
    "int_power",
]

Coeff = int | Fraction
Poly = dict[Mono, Coeff]

#: monomial products one computation may spend before giving up with TermTooLargeError
MAX_WORK: Final = 2_000_000
#: bits of a coefficient raised to a power before int_power refuses it
MAX_POWER_BITS: Final = 1 << 16


class Budget:
    """Counts the monomial operations of one computation and stops it past its limit."""

    __slots__ = ("left", "limit")

    def __init__(self, limit: int | None = None) -> None:
        self.limit: int = MAX_WORK if limit is None else limit
        self.left: int = self.limit

    def spend(self, n: int) -> None:
        """Spend ``n`` operations; raises TermTooLargeError when the budget runs out."""
        self.left -= n
        if self.left < 0:
            raise TermTooLargeError(
                f"this polynomial computation would take more than {self.limit} monomial operations "
                "(a product of large sums?): pass a larger Budget, or keep the expression factored"
            )


def norm(c: Coeff) -> Coeff:
    """``c`` with a whole Fraction made an int."""
    if c.__class__ is Fraction and c.denominator == 1:
        return c.numerator
    return c


def p_const(c: Coeff) -> Poly:
    """The constant polynomial ``c``."""
    return {ONE: norm(c)} if c else {}


def p_atom(atom: Term) -> Poly:
    """The polynomial made of one atom."""
    return {((atom, 1),): 1}


def p_add_into(acc: Poly, p: Poly, k: Coeff = 1) -> None:
    """``acc += k * p`` in place."""
    for m, c in p.items():
        v = acc.get(m, 0) + (c if k == 1 else k * c)
        if v:
            acc[m] = v if v.__class__ is int else norm(v)
        elif m in acc:
            del acc[m]


def p_add(*polys: Poly) -> Poly:
    """Sum of polynomials (a new dict)."""
    acc: Poly = {}
    for p in polys:
        for m, c in p.items():
            v = acc.get(m, 0) + c
            if v:
                acc[m] = v if v.__class__ is int else norm(v)
            elif m in acc:
                del acc[m]
    return acc


def p_sub(p: Poly, q: Poly) -> Poly:
    """``p - q`` (a new dict)."""
    acc = dict(p)
    for m, c in q.items():
        v = acc.get(m, 0) - c
        if v:
            acc[m] = v if v.__class__ is int else norm(v)
        elif m in acc:
            del acc[m]
    return acc


def p_neg(p: Poly) -> Poly:
    """``-p`` (a new dict)."""
    return {m: -c for m, c in p.items()}


def p_scale(p: Poly, k: Coeff) -> Poly:
    """``k * p`` (a new dict)."""
    if not k:
        return {}
    if k == 1:
        return dict(p)
    if k.__class__ is int:
        return {m: k * c for m, c in p.items()}
    return {m: norm(k * c) for m, c in p.items()}


def p_mul(p: Poly, q: Poly, budget: Budget | None = None) -> Poly:
    """Product of two polynomials (a new dict)."""
    if len(p) < len(q):
        p, q = q, p
    if budget is not None:
        budget.spend(len(p) * len(q))
    if len(q) == 1:
        for mq, cq in q.items():
            if not mq:
                return p_scale(p, cq)
            if cq.__class__ is int and p_is_integral(p):
                return {mono_mul(m, mq): c * cq for m, c in p.items()}
            return {mono_mul(m, mq): norm(c * cq) for m, c in p.items()}
    acc: Poly = {}
    for m1, c1 in p.items():
        for m2, c2 in q.items():
            m = mono_mul(m1, m2)
            v = acc.get(m, 0) + c1 * c2
            if v:
                acc[m] = v
            else:
                del acc[m]
    if not (p_is_integral(p) and p_is_integral(q)):
        for m, c in acc.items():
            if c.__class__ is Fraction:
                acc[m] = norm(c)
    return acc


def int_power(c: Coeff, e: int) -> Coeff:
    """``c**e``, refused (TermTooLargeError) when the result would pass 65536 bits."""
    size = abs(c.numerator).bit_length() + c.denominator.bit_length()
    if size > 2 and e * size > MAX_POWER_BITS:
        raise TermTooLargeError(f"a polynomial with a coefficient to the power {e} (too many digits)")
    return norm(c**e)


def p_pow(p: Poly, e: int, budget: Budget | None = None) -> Poly:
    """``p**e`` for ``e >= 0`` (by repeated squaring; a single term directly)."""
    if e < 0:
        raise ValueError(f"p_pow takes a power >= 0, not {e}")
    if e == 0:
        return {ONE: 1}
    if len(p) == 1:
        for m, c in p.items():
            return {tuple([(a, check_degree(k * e)) for a, k in m]): int_power(c, e)}
    if not p:
        return {}
    _check_power_size(p, e, budget)
    result: Poly = {ONE: 1}
    base = p
    while True:
        if e & 1:
            result = p_mul(result, base, budget)
        e >>= 1
        if not e:
            return result
        base = p_mul(base, base, budget)


def _check_power_size(p: Poly, e: int, budget: Budget | None) -> None:
    """Refuse ``p**e`` up front when even its terms would pass the budget (or an atom its degree).

    The terms of ``p**e`` are at most ``C(n - 1 + e, n - 1)`` for ``n`` terms, and at most the
    product of ``e*deg_a + 1`` over its atoms ``a``: the smaller bound is compared with the budget.
    """
    degrees: dict[Term, int] = {}
    for m in p:
        for a, k in m:
            if k > degrees.get(a, 0):
                degrees[a] = k
    for k in degrees.values():
        check_degree(k * e)
    left = budget.left if budget is not None else MAX_WORK
    box = 1
    for k in degrees.values():
        box *= e * k + 1
        if box > left:
            break
    n = len(p)
    terms = 1
    for i in range(1, n):  # C(n - 1 + e, n - 1), stopped once it passes the budget
        terms = terms * (e + i) // i
        if terms > left:
            break
    if min(box, terms) > left:
        raise TermTooLargeError(
            f"a power of a sum of {n} terms to the {e} could have up to {min(box, terms)} terms "
            f"(more than the budget of {left}): keep it factored, or pass a larger Budget"
        )


def p_product(factors: Iterable[tuple[Poly, int]], budget: Budget | None = None) -> Poly:
    """Product of ``p**e`` over the ``(p, e)`` pairs (``e >= 0``), multiplied out in order."""
    result: Poly = {ONE: 1}
    for p, e in factors:
        result = p_mul(result, p_pow(p, e, budget), budget)
    return result


def p_const_value(p: Poly) -> Coeff:
    """The constant term of ``p``."""
    return p.get(ONE, 0)


def p_is_const(p: Poly) -> bool:
    """Whether ``p`` has no atom."""
    return not p or (len(p) == 1 and ONE in p)


def p_content(p: Poly) -> Coeff:
    """The positive rational ``c`` with ``p / c`` integral and primitive (gcd of the ints; 0 for 0)."""
    num = 0
    den = 1
    for c in p.values():
        if c.__class__ is int:
            num = math.gcd(num, c)
        else:
            num = math.gcd(num, c.numerator)
            den = den * c.denominator // math.gcd(den, c.denominator)
    return num if den == 1 else Fraction(num, den)


def p_denominator(p: Poly) -> int:
    """The least common multiple of the denominators of the coefficients (1 for an integer polynomial)."""
    den = 1
    for c in p.values():
        if c.__class__ is Fraction:
            den = den * c.denominator // math.gcd(den, c.denominator)
    return den


def p_is_integral(p: Poly) -> bool:
    """Whether every coefficient is an int."""
    for c in p.values():
        if c.__class__ is not int:
            return False
    return True


def p_mono_gcd(*polys: Poly) -> Mono:
    """The largest monomial dividing every monomial of the polynomials."""
    g: Mono | None = None
    for p in polys:
        for m in p:
            g = m if g is None else mono_gcd(g, m)
            if not g:
                return ONE
    return g or ONE


def p_div_mono(p: Poly, m: Mono, k: Coeff = 1) -> Poly:
    """``p / (k*m)`` for a monomial dividing every term (ValueError otherwise); exact in ``k``."""
    out: Poly = {}
    for mono, c in p.items():
        q = mono_div(mono, m)
        if q is None:
            raise ValueError("p_div_mono: the monomial does not divide every term")
        if k == 1:
            out[q] = c
        elif k.__class__ is int and c.__class__ is int and c % k == 0:
            out[q] = c // k
        else:
            out[q] = norm(Fraction(c) / k)
    return out


def p_primitive(p: Poly) -> tuple[Coeff, Poly]:
    """``(c, q)`` with ``p == c*q``, ``q`` integral and primitive, ``c`` rational (0 and {} for 0)."""
    if not p:
        return 0, {}
    c = p_content(p)
    return c, p_div_mono(p, ONE, c)


def p_atoms(*polys: Poly) -> list[Term]:
    """The atoms of the polynomials, in first-seen order."""
    seen: dict[Term, None] = {}
    for p in polys:
        for m in p:
            for a, _ in m:
                seen[a] = None
    return list(seen)


def p_degree(p: Poly, atom: Term) -> int:
    """Degree of ``p`` in ``atom`` (-1 for the zero polynomial)."""
    if not p:
        return -1
    best = 0
    for m in p:
        for a, k in m:
            if a is atom and k > best:
                best = k
    return best


def p_total_degree(p: Poly) -> int:
    """Total degree of ``p`` (-1 for the zero polynomial)."""
    best = -1
    for m in p:
        d = 0
        for _, k in m:
            d += k
        if d > best:
            best = d
    return best


def p_diff(p: Poly, atom: Term) -> Poly:
    """The derivative of ``p`` with respect to ``atom``."""
    out: Poly = {}
    for m, c in p.items():
        powers = dict(m)
        k = powers.get(atom, 0)
        if not k:
            continue
        powers[atom] = k - 1
        out[mono_of_powers(powers)] = c * k
    return out


def p_eval(p: Poly, values: dict[Term, Coeff]) -> Poly:
    """``p`` with the given atoms replaced by exact numbers (the others kept)."""
    out: Poly = {}
    for m, c in p.items():
        rest: dict[Term, int] = {}
        v: Coeff = c
        for a, k in m:
            if a in values:
                v = v * int_power(values[a], k)
            else:
                rest[a] = k
        mm = mono_of_powers(rest) if rest else ONE
        s = out.get(mm, 0) + v
        if s:
            out[mm] = norm(s)
        elif mm in out:
            del out[mm]
    return out
