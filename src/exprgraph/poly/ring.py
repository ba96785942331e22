"""The ring: sparse multivariate polynomials over exact coefficients (ints or Fractions).

A *polynomial* is a dict ``{monomial: coefficient}`` (monomials of :mod:`.monomials`) with no
zero coefficients; a coefficient is an ``int`` or a :class:`fractions.Fraction` whose
denominator is not 1 (a Fraction that comes out whole is stored as its int, so integer
polynomials never carry Fractions and their arithmetic stays on Python ints). Functions
return new dicts and never mutate their arguments, except those named ``*_into``.
Work is budgeted (:class:`Budget`): past it, :class:`~exprgraph.errors.TermTooLargeError`.

This is the one ring of exprgraph: :mod:`exprgraph.dims` computes its integer polynomials with
these functions (adding its own limits and floor division over them), and the build compiles this
module with mypyc (:data:`exprgraph.accel.COMPILED_MODULES`), so dims' compiled modules call it
natively. Imports: the core's terms, the errors and :mod:`.monomials`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from fractions import Fraction
from typing import Any, Final

from ..core.term import Term
from ..errors import TermTooLargeError
from .monomials import ONE, Mono, check_degree, mono_div, mono_gcd, mono_mul, mono_of_powers

__all__ = [
    "Coeff",
    "Poly",
    "PolyIn",
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
    "split_factors",
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
#: a polynomial as the ring's functions take it: a dict read without checking its items (compiled, the
#: ring casts nothing per term; dims' modules type their integer polynomials as plain dicts). Results
#: are :data:`Poly`.
PolyIn = dict[Any, Any]

#: monomial products one computation may spend before giving up with TermTooLargeError
MAX_WORK: Final = 2_000_000
#: bits of a coefficient raised to a power before int_power refuses it
MAX_POWER_BITS: Final = 1 << 16

#: math.gcd as a module constant (the compiled build keeps it in a C static, not a module lookup)
_GCD: Final = math.gcd


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
            raise TermTooLargeError(self.message())

    def message(self) -> str:
        """What the error says when the budget runs out (a client's budget says it in its own words)."""
        return (
            f"this polynomial computation would take more than {self.limit} monomial operations "
            "(a product of large sums?): pass a larger Budget, or keep the expression factored"
        )


def norm(c: Coeff) -> Coeff:
    """``c`` with a whole Fraction made an int."""
    # (type(c), not c.__class__, here and below: compiled, the first reads the object's type field)
    if type(c) is Fraction and c.denominator == 1:
        return c.numerator
    return c


def p_const(c: Coeff) -> Poly:
    """The constant polynomial ``c``."""
    return {ONE: norm(c)} if c else {}


def p_atom(atom: Term) -> Poly:
    """The polynomial made of one atom."""
    return {((atom, 1),): 1}


def p_add_into(acc: PolyIn, p: PolyIn, k: Coeff = 1) -> None:
    """``acc += k * p`` in place."""
    one = k == 1
    for m, c in p.items():
        v = acc.get(m, 0) + (c if one else k * c)
        if v:
            acc[m] = v if type(v) is int else norm(v)
        elif m in acc:
            del acc[m]


def p_add(*polys: PolyIn) -> Poly:
    """Sum of polynomials (a new dict)."""
    acc: Poly = {}
    for p in polys:
        for m, c in p.items():
            v = acc.get(m, 0) + c
            if v:
                acc[m] = v if type(v) is int else norm(v)
            elif m in acc:
                del acc[m]
    return acc


def p_sub(p: PolyIn, q: PolyIn) -> Poly:
    """``p - q`` (a new dict)."""
    acc = dict(p)
    for m, c in q.items():
        v = acc.get(m, 0) - c
        if v:
            acc[m] = v if type(v) is int else norm(v)
        elif m in acc:
            del acc[m]
    return acc


def p_neg(p: PolyIn) -> Poly:
    """``-p`` (a new dict)."""
    return {m: -c for m, c in p.items()}


def p_scale(p: PolyIn, k: Coeff) -> Poly:
    """``k * p`` (a new dict)."""
    if not k:
        return {}
    if k == 1:
        return dict(p)
    if type(k) is int:
        return {m: k * c for m, c in p.items()}
    return {m: norm(k * c) for m, c in p.items()}


def p_mul(p: PolyIn, q: PolyIn, budget: Budget | None = None) -> Poly:
    """Product of two polynomials (a new dict)."""
    if len(p) < len(q):
        p, q = q, p
    if budget is not None:
        budget.spend(len(p) * len(q))
    if len(q) == 1:
        for mq, cq in q.items():
            if not mq:
                return p_scale(p, cq)
            if type(cq) is int and p_is_integral(p):
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
            if type(c) is Fraction:
                acc[m] = norm(c)
    return acc


def int_power(c: Coeff, e: int, max_bits: int = MAX_POWER_BITS) -> Coeff:
    """``c**e``, refused (TermTooLargeError) when ``e`` times the bits of ``c`` pass ``max_bits``.

    The bits of ``c`` are those of its numerator and its denominator less one (an int's own bits);
    0, 1 and -1 are never refused.
    """
    size = abs(c.numerator).bit_length() + c.denominator.bit_length() - 1
    if size > 1 and e * size > max_bits:
        raise TermTooLargeError(
            f"a constant to the power {e} would have more than {max_bits} bits: keep the power unexpanded"
        )
    return norm(c**e)


def p_pow(p: PolyIn, e: int, budget: Budget | None = None) -> Poly:
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


def _check_power_size(p: PolyIn, e: int, budget: Budget | None) -> None:
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


def split_factors(
    factors: Iterable[tuple[PolyIn, int]], max_bits: int = MAX_POWER_BITS
) -> tuple[Coeff, dict[Term, int], list[tuple[Poly, int]]] | None:
    """The single-term factors of the ``(p, e)`` pairs (``e >= 0``) multiplied out, as a coefficient
    and the powers of atoms, and the sums left over (in order); None when a factor is zero.

    A coefficient's power passing ``max_bits`` is refused (:func:`int_power`).
    """
    coef: Coeff = 1
    powers: dict[Term, int] = {}
    sums: list[tuple[Poly, int]] = []
    for p, e in factors:
        if e <= 0:
            if e < 0:
                raise ValueError(f"a product of polynomials takes powers >= 0, not {e}")
            continue  # p**0 -> 1, for p == 0 too (as evaluation has it)
        if not p:
            return None  # a zero factor
        if len(p) == 1:
            for m, c in p.items():
                if c != 1:
                    coef = norm(coef * int_power(c, e, max_bits))
                for a, q in m:
                    # (a**q)**e * a**r -> a**(q*e + r)
                    if e != 1:
                        q = check_degree(q * e)
                    powers[a] = check_degree(powers.get(a, 0) + q)
        else:
            sums.append((p, e))
    return coef, powers, sums


def p_product(
    factors: Iterable[tuple[PolyIn, int]], budget: Budget | None = None, max_bits: int = MAX_POWER_BITS
) -> Poly:
    """Product of ``p**e`` over the ``(p, e)`` pairs (``e >= 0``), multiplied out in the given order.

    The single-term factors are gathered first (:func:`split_factors`) and the sums multiplied in
    after them, one factor at a time, so the work spent (and charged to ``budget``, a new one when
    None) and the order of the terms depend on the order of the sums only.
    """
    split = split_factors(factors, max_bits)
    if split is None:
        return {}  # a zero factor
    coef, powers, sums = split
    if budget is None:
        budget = Budget()
    result: Poly = {mono_of_powers(powers): coef}
    for p, e in sums:
        for _ in range(e):
            result = p_mul(result, p, budget)
    return result


def p_const_value(p: PolyIn) -> Any:
    """The constant term of ``p``: a :data:`Coeff`, an int for an integer polynomial (typed Any so
    that dims' integer code, which types its polynomials as plain dicts, reads it as one)."""
    return p.get(ONE, 0)


def p_is_const(p: PolyIn) -> bool:
    """Whether ``p`` has no atom."""
    return not p or (len(p) == 1 and ONE in p)


def p_content(p: PolyIn) -> Any:
    """The positive rational ``c`` with ``p / c`` integral and primitive (gcd of the ints; 0 for 0).

    A :data:`Coeff`: an int for an integer polynomial (typed Any, as :func:`p_const_value` is).
    """
    num = 0
    den = 1
    for c in p.values():
        if type(c) is int:
            if num != 1:  # (once 1, the gcd of the ints stays 1)
                num = _GCD(num, c)
        else:
            num = _GCD(num, c.numerator)
            den = den * c.denominator // _GCD(den, c.denominator)
    return num if den == 1 else Fraction(num, den)


def p_denominator(p: PolyIn) -> int:
    """The least common multiple of the denominators of the coefficients (1 for an integer polynomial)."""
    den = 1
    for c in p.values():
        if type(c) is Fraction:
            den = den * c.denominator // _GCD(den, c.denominator)
    return den


def p_is_integral(p: PolyIn) -> bool:
    """Whether every coefficient is an int."""
    for c in p.values():
        if type(c) is not int:
            return False
    return True


def p_mono_gcd(*polys: PolyIn) -> Mono:
    """The largest monomial dividing every monomial of the polynomials."""
    g: Mono | None = None
    for p in polys:
        for m in p:
            g = m if g is None else mono_gcd(g, m)
            if not g:
                return ONE
    return g or ONE


def p_div_mono(p: PolyIn, m: Mono, k: Coeff = 1) -> Poly:
    """``p / (k*m)`` for a monomial dividing every term (ValueError otherwise); exact in ``k``."""
    if k == 1 and not m:
        return dict(p)
    whole = type(k) is int
    out: Poly = {}
    for mono, c in p.items():
        q = mono_div(mono, m) if m else mono
        if q is None:
            raise ValueError("p_div_mono: the monomial does not divide every term")
        if k == 1:
            out[q] = c
        elif whole and type(c) is int and c % k == 0:
            out[q] = c // k  # (the integer content of an integer polynomial divides it: dims' case)
        else:
            out[q] = norm(Fraction(c) / k)
    return out


def p_primitive(p: PolyIn) -> tuple[Coeff, Poly]:
    """``(c, q)`` with ``p == c*q``, ``q`` integral and primitive, ``c`` rational (0 and {} for 0)."""
    if not p:
        return 0, {}
    c = p_content(p)
    return c, p_div_mono(p, ONE, c)


def p_atoms(*polys: PolyIn) -> list[Term]:
    """The atoms of the polynomials, in first-seen order."""
    seen: dict[Term, None] = {}
    for p in polys:
        for m in p:
            for a, _ in m:
                seen[a] = None
    return list(seen)


def p_degree(p: PolyIn, atom: Term) -> int:
    """Degree of ``p`` in ``atom`` (-1 for the zero polynomial)."""
    if not p:
        return -1
    best = 0
    for m in p:
        for a, k in m:
            if a is atom and k > best:
                best = k
    return best


def p_total_degree(p: PolyIn) -> int:
    """Total degree of ``p`` (-1 for the zero polynomial)."""
    best = -1
    for m in p:
        d = 0
        for _, k in m:
            d += k
        if d > best:
            best = d
    return best


def p_diff(p: PolyIn, atom: Term) -> Poly:
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


def p_eval(p: PolyIn, values: dict[Term, Coeff]) -> Poly:
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
