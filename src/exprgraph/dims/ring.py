"""The polynomial ring of dims: sparse integer polynomials over atoms, and their arithmetic.

A *polynomial* is a dict ``{monomial: coefficient}`` (monomials of :mod:`.monomials`) with no
zero coefficients; coefficients are ints (rationals only in the quotients of :func:`p_exact_div`).
Functions return new dicts and never mutate their arguments, except ``p_add_into``. Work is
budgeted (:class:`Budget`, ``MAX_WORK``): past it, :class:`~exprgraph.errors.TermTooLargeError`.

Stage *normalise* (:mod:`.stages`). Imports nothing from dims but :mod:`.monomials`, so the ring
can come from another package by changing import lines only.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from fractions import Fraction
from typing import Final

from ..core.term import Term
from ..errors import TermTooLargeError
from .monomials import ONE, Mono, _check_degree, _mono_gcd, mono_div, mono_mul, mono_of_powers

__all__ = [
    "Poly",
    "MAX_WORK",
    "Budget",
    "p_const",
    "p_atom",
    "p_add_into",
    "times",
    "p_add",
    "p_sub",
    "p_scale",
    "p_mul",
    "p_const_value",
    "p_is_const",
    "p_content",
    "p_mono_gcd",
    "p_div_mono",
    "p_exact_div",
    "p_product",
    "split_factors",
    "int_power",
]

Poly = dict

#: monomial operations one simplification may spend before giving up with TermTooLargeError
MAX_WORK = 1_000_000

#: math.gcd as a module constant (the compiled build keeps it in a C static)
_GCD: Final = math.gcd


class Budget:
    """Counts the monomial operations of one simplification and stops it past ``MAX_WORK``."""

    __slots__ = ("left",)

    def __init__(self, limit: int | None = None) -> None:
        self.left = MAX_WORK if limit is None else limit

    def spend(self, n: int) -> None:
        """Spend ``n`` operations; raises TermTooLargeError when the budget runs out."""
        self.left -= n
        if self.left < 0:
            raise TermTooLargeError(
                "simplifying this dimension expression would expand it beyond "
                f"{MAX_WORK} monomial operations (products of large sums?)"
            )


# -- polynomials -------------------------------------------------------------------------------------


def p_const(c: int) -> Poly:
    """The constant polynomial ``c``."""
    return {ONE: c} if c else {}


def p_atom(atom: Term) -> Poly:
    """The polynomial made of one atom."""
    return {((atom, 1),): 1}


def times(k: int, c: int) -> int:
    """``k*c``, with no product for the commonest factors, 1 and -1 (the compiled build multiplies in C
    only ints in ``[0, 2**30)``; ``-1*c`` or ``k*(2**31-1)`` would take Python's long product)."""
    if k == 1:
        return c
    if k == -1:
        return -c
    return k * c


def p_add_into(acc: Poly, p: Poly, k: int = 1) -> None:
    """``acc += k * p`` in place."""
    for m, c in p.items():
        v = acc.get(m, 0) + times(k, c)
        if v:
            acc[m] = v
        elif m in acc:
            del acc[m]


def p_add(*polys: Poly) -> Poly:
    """Sum of polynomials (a new dict)."""
    acc: Poly = {}
    for p in polys:
        for m, c in p.items():  # acc += p (p_add_into, inlined: sums are added everywhere)
            v = acc.get(m, 0) + c
            if v:
                acc[m] = v
            elif m in acc:
                del acc[m]
    return acc


def p_sub(p: Poly, q: Poly) -> Poly:
    """``p - q`` (a new dict, in the order ``p_add(p, p_scale(q, -1))`` gives)."""
    acc = dict(p)
    for m, c in q.items():
        v = acc.get(m, 0) - c
        if v:
            acc[m] = v
        elif m in acc:
            del acc[m]
    return acc


def p_scale(p: Poly, k: int) -> Poly:
    """``k * p`` (a new dict)."""
    if not k:
        return {}
    if k == 1:
        return dict(p)
    return {m: k * c for m, c in p.items()}


def p_mul(p: Poly, q: Poly, budget: Budget | None = None) -> Poly:
    """Product of two polynomials (a new dict)."""
    if len(p) < len(q):
        p, q = q, p
    if budget is not None:
        budget.spend(len(p) * len(q))
    if len(q) == 1:
        ((mq, cq),) = q.items()
        if not mq:
            return p_scale(p, cq)
        return {mono_mul(m, mq): c * cq for m, c in p.items()}
    acc: Poly = {}
    for m1, c1 in p.items():
        for m2, c2 in q.items():
            m = mono_mul(m1, m2)
            v = acc.get(m, 0) + c1 * c2
            if v:
                acc[m] = v
            else:
                del acc[m]
    return acc


def p_const_value(p: Poly) -> int:
    """The constant term of ``p``."""
    return p.get(ONE, 0)


def p_is_const(p: Poly) -> bool:
    """Whether ``p`` has no atom."""
    return not p or (len(p) == 1 and ONE in p)


def p_content(p: Poly) -> int:
    """gcd of the coefficients (0 for the zero polynomial)."""
    g = 0
    for c in p.values():
        g = _GCD(g, c)
        if g == 1:
            break
    return g


def p_mono_gcd(*polys: Poly) -> Mono:
    """The largest monomial dividing every monomial of the polynomials."""
    g: Mono | None = None
    for p in polys:
        for m in p:
            g = m if g is None else _mono_gcd(g, m)
            if not g:
                return ONE
    return g or ONE


def p_div_mono(p: Poly, m: Mono, k: int = 1) -> Poly:
    """``p / (k*m)`` for a monomial and integer dividing every term exactly."""
    if not m:
        return {mono: c // k for mono, c in p.items()} if k != 1 else dict(p)
    out: Poly = {}
    for mono, c in p.items():
        out[mono_div(mono, m)] = c // k
    return out


def _grevlex(m: Mono) -> tuple:
    # graded lexicographic order (total degree, then exponents with the atoms ordered by identity):
    # comparing (-id, power) pairs in id order is comparing exponent vectors lexicographically
    return (sum(p for _, p in m), tuple((-id(a), p) for a, p in m))


def split_factors(factors: Iterable[tuple[Poly, int]]) -> tuple[int, dict[Term, int], list[tuple[Poly, int]]] | None:
    """The single-term factors of the ``(p, e)`` pairs multiplied out, as a coefficient and the powers
    of atoms, and the sums left over (in order); None when a factor is zero."""
    coef = 1
    powers: dict[Term, int] = {}
    sums: list[tuple[Poly, int]] = []
    for p, e in factors:
        if e == 0:
            continue  # p**0 -> 1, for p == 0 too (as evaluation has it)
        if not p:
            return None  # a zero factor
        if len(p) == 1:
            ((m, c),) = p.items()
            if c != 1:
                coef *= int_power(c, e)
            for a, q in m:
                # (a**q)**e * a**r -> a**(q*e + r)
                if e != 1:
                    q = _check_degree(q * e)
                powers[a] = _check_degree(powers.get(a, 0) + q)
        else:
            sums.append((p, e))
    return coef, powers, sums


def int_power(c: int, e: int) -> int:
    """``c**e``, refused (TermTooLargeError) when the result would pass 4096 bits."""
    if abs(c) > 1 and e * abs(c).bit_length() > 4096:
        raise TermTooLargeError(f"a dimension expression with a constant to the power {e}")
    return c**e


def p_product(factors: Iterable[tuple[Poly, int]], budget: Budget | None = None) -> Poly:
    """Product of ``p**e`` over the ``(p, e)`` pairs (``e >= 0``), multiplied out in the given order.

    The single-term factors are gathered first (their coefficients multiplied, the powers of their
    atoms added up) and the sums multiplied in after them, one at a time, so the work spent (and
    charged to ``budget``) depends on the order of the sums only.
    """
    split = split_factors(factors)
    if split is None:
        return {}  # a zero factor
    coef, powers, sums = split
    result: Poly = {mono_of_powers(powers): coef}
    for p, e in sums:
        for _ in range(e):
            result = p_mul(result, p, budget)
    return result


def p_exact_div(p: Poly, q: Poly, budget: Budget | None = None, max_steps: int = 2000) -> Poly | None:
    """``p / q`` with rational coefficients when ``q`` divides ``p`` exactly, else None."""
    lead_q = max(q, key=_grevlex)
    lead_c = q[lead_q]
    rem: dict = dict(p)
    out: dict = {}
    for _ in range(max_steps):
        if not rem:
            return out
        lead = max(rem, key=_grevlex)
        m = mono_div(lead, lead_q)
        if m is None:
            return None
        q_c = Fraction(rem[lead], lead_c)
        c: int | Fraction = q_c.numerator if q_c.denominator == 1 else q_c
        out[m] = c
        if budget is not None:
            budget.spend(len(q))
        for mq, cq in q.items():
            mm = mono_mul(m, mq)
            v = rem.get(mm, 0) - c * cq
            if v:
                rem[mm] = v
            else:
                del rem[mm]
    return None
