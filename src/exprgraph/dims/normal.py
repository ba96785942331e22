"""Polynomial normal form: integer polynomials over atoms, and their canonical terms.

An *atom* is a term the polynomial algebra does not look into: a name, or an opaque floordiv,
mod, max, min or call term whose arguments are themselves in normal form. A *monomial* is a
tuple of ``(atom, power)`` pairs sorted by the atoms' identities (interned terms, so equal atoms
are the same object); ``()`` is the monomial 1. A *polynomial* is a dict ``{monomial: coefficient}``
with no zero coefficients. Polynomials handed out by the simplifier's caches are never mutated.

Canonical terms print terms of a sum ordered by their atoms' text; at the top level the constant
comes last (``batch+1``), inside opaque terms it comes first (``(1+b+c)//2``), as in the reference.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from fractions import Fraction
from operator import itemgetter
from typing import Final

from ..core.term import Term
from ..errors import TermTooLargeError
from .monomials import (
    MAX_DEGREE,
    ONE,
    Mono,
    _check_degree,
    _mono_gcd,
    mono_div,
    mono_mul,
    mono_of_powers,
    mono_pow,
)
from .terms import ADD, MUL, NEG, SUB, dim_const, make_term, memo_table, remember
from .unparse import unparse

__all__ = [
    "Mono",
    "Poly",
    "ONE",
    "MAX_WORK",
    "MAX_DEGREE",
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
    "mono_mul",
    "mono_of_powers",
    "split_factors",
    "int_power",
    "mono_div",
    "mono_pow",
    "atom_key",
    "defer_key",
    "mono_key",
    "mono_order",
    "poly_key",
    "mono_factors",
    "top_term",
    "inner_term",
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


# -- keys: the canonical order of atoms and monomials ---------------------------------------------------

_keys: Final[dict[Term, str]] = memo_table()
#: atom -> (function, arguments) that print it (see defer_key)
_deferred: Final[dict[Term, tuple]] = memo_table()


def atom_key(atom: Term) -> str:
    """Sort key of an atom: its name, or its printed text."""
    key = _keys.get(atom)
    if key is None:
        deferred = _deferred.pop(atom, None)
        if atom.op.name == "symbol":
            key = atom.attr[0]
        elif deferred is not None:
            key = deferred[0](*deferred[1])
        else:
            try:
                key = unparse(atom)
            except ValueError:  # an op outside the dimension grammar (x**y): the core's text
                key = str(atom)
        remember(_keys, atom, key, 1 << 17)
    return key


def defer_key(atom: Term, text: Callable[..., str], *args: object) -> None:
    """Let ``atom_key(atom)`` be ``text(*args)``, the text ``unparse`` gives, computed when asked for.

    The builder of an atom knows its canonical arguments as polynomials, and printing them
    from there is quicker than walking the term; most atoms are never printed at all.
    """
    if atom not in _keys:
        remember(_deferred, atom, (text, args), 1 << 17)


#: monomial -> (its key, its factors in print order); see mono_order
_orders: Final[dict[Mono, tuple[str, tuple[Term, ...]]]] = memo_table()


def _factor_key(key: str, p: int) -> str:
    """The key of one factor ``atom**p`` (``key`` the atom's): see mono_key."""
    if p == 1:
        return key + "\x00\x011"
    digits = str(p)
    return f"{key}\x00{chr(len(digits))}{digits}"


def mono_order(m: Mono) -> tuple[str, tuple[Term, ...]]:
    """``(mono_key(m), mono_factors(m))``, computed once per monomial."""
    entry = _orders.get(m)
    if entry is None:
        if len(m) == 1:
            a, p = m[0]
            entry = (_factor_key(atom_key(a), p), (a,) * p)
        elif len(m) == 2 and m[0][1] == 1 and m[1][1] == 1:
            # two atoms (a product of two names, the commonest): in the order of their keys
            a, b = m[0][0], m[1][0]
            ka, kb = atom_key(a), atom_key(b)
            if kb < ka:
                a, b, ka, kb = b, a, kb, ka
            entry = (_factor_key(ka, 1) + _factor_key(kb, 1), (a, b))
        else:
            # atoms have distinct keys, so sorting by (key, power) orders the atoms by key
            keyed = sorted([(atom_key(a), p, a) for a, p in m])
            entry = (
                "".join([_factor_key(k, p) for k, p, _ in keyed]),
                tuple([a for _, p, a in keyed for _ in range(p)]),
            )
        remember(_orders, m, entry, 1 << 17)
    return entry


def mono_key(m: Mono) -> str:
    """Sort key of a monomial: its atoms' keys with their powers, in key order.

    It orders monomials as the tuple ``((key1, power1), (key2, power2), ...)`` would, but as one
    string (compared in one step, where tuples of pairs take three): each factor is its atom's key,
    a NUL (below every character of a key: a key that is a prefix of another sorts first), the
    number of digits of the power as a character, then the digits (so powers compare as numbers).
    """
    return mono_order(m)[0]


def poly_key(p: Poly) -> tuple:
    """Sort key of a polynomial (orders the arguments of max and min): its atoms first, then its constant."""
    if len(p) == 1:
        ((m, c),) = p.items()
        return ((mono_key(m),), (c,), 0) if m else ((), (), c)
    items = [(mono_key(m), c) for m, c in p.items() if m]
    items.sort()
    return (tuple([k for k, _ in items]), tuple([c for _, c in items]), p.get(ONE, 0))


# -- canonical terms -----------------------------------------------------------------------------------


def mono_factors(m: Mono) -> tuple[Term, ...]:
    """The atoms of a monomial in print order (by their keys), each repeated by its power."""
    return mono_order(m)[1]


def _mono_term(factors: tuple[Term, ...], c: int) -> Term:
    """``c * f1*f2...`` as a left-nested product: coefficient first, ``-x*y`` for c == -1."""
    if c == 1:
        acc = factors[0]
    elif c == -1:
        acc = make_term(NEG, (factors[0],))
    else:
        acc = make_term(MUL, (dim_const(c), factors[0]))
    for f in factors[1:]:
        acc = make_term(MUL, (acc, f))
    return acc


_by_key: Final = itemgetter(0)


def _ordered_terms(p: Poly) -> list[tuple[str, tuple[Term, ...], int]]:
    """The non-constant terms of ``p`` in print order, as ``(mono_key, mono_factors, coefficient)``."""
    items: list[tuple[str, tuple[Term, ...], int]] = []
    for m, c in p.items():
        if m:
            key, factors = mono_order(m)
            items.append((key, factors, c))
    if len(items) > 1:
        items.sort(key=_by_key)
    return items


def _sum_term(items: list[tuple[str, tuple[Term, ...], int]], acc: Term | None) -> Term | None:
    for _, factors, c in items:
        if acc is None:
            acc = _mono_term(factors, c)
        elif c > 0:
            acc = make_term(ADD, (acc, _mono_term(factors, c)))
        else:
            acc = make_term(SUB, (acc, _mono_term(factors, -c)))
    return acc


def top_term(p: Poly) -> Term:
    """Canonical term of a whole expression: terms in key order, the constant last (``x-1``)."""
    acc = _sum_term(_ordered_terms(p), None)
    c = p.get(ONE, 0)
    if acc is None:
        return dim_const(c)
    if c > 0:
        return make_term(ADD, (acc, dim_const(c)))
    if c < 0:
        return make_term(SUB, (acc, dim_const(-c)))
    return acc


def inner_term(p: Poly) -> Term:
    """Canonical term of an argument of an opaque term: the constant first (``1+b+c``)."""
    if len(p) <= 1:
        if not p:
            return dim_const(0)
        ((m, c),) = p.items()
        if not m:
            return dim_const(c)  # a constant
        if c == 1 and len(m) == 1 and m[0][1] == 1:
            return m[0][0]  # a lone atom
    c = p.get(ONE, 0)
    term = _sum_term(_ordered_terms(p), dim_const(c) if c else None)
    return dim_const(c) if term is None else term
