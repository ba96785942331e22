"""Division: monomial orders, division with remainder, exact division, the recursive view in one atom.

A *monomial order* is given by a list of atoms (the generators, greatest first) and a name:
``"lex"`` (powers compared in the order of the atoms) or ``"grlex"`` (total degree first, then
lex). Atoms not listed come after the listed ones, in a fixed order of this call. Division works
over the rationals (Fractions where needed); exact division answers None when the divisor does
not divide.
"""

from __future__ import annotations

import heapq
from fractions import Fraction

from ..core.term import Term
from .monomials import Mono, mono_div, mono_mul, mono_of_powers, mono_rank_key
from .ring import Budget, Coeff, Poly, norm, p_atoms

__all__ = [
    "ORDERS",
    "order_key",
    "p_leading",
    "p_divmod",
    "p_exact_div",
    "p_divides",
    "to_univariate",
    "from_univariate",
    "coeff_div",
]

ORDERS = ("lex", "grlex")


def order_key(gens: list[Term], order: str = "lex") -> dict[Term, int]:
    """The rank of each generator (0 is the greatest) for :func:`p_leading`; ``order`` is checked."""
    if order not in ORDERS:
        raise ValueError(f"order must be one of {ORDERS}, not {order!r}")
    return {a: i for i, a in enumerate(gens)}


def _key(m: Mono, rank: dict[Term, int], graded: bool) -> tuple[int, list[tuple[int, int]]]:
    return mono_rank_key(m, rank, graded)


def p_leading(p: Poly, gens: list[Term], order: str = "lex") -> tuple[Mono, Coeff]:
    """The leading monomial and coefficient of a non-zero ``p`` in the order given by ``gens``."""
    rank = _full_rank(gens, [p], order)
    graded = order == "grlex"
    best = max(p, key=lambda m: _key(m, rank, graded))
    return best, p[best]


def _full_rank(gens: list[Term], polys: list[Poly], order: str) -> dict[Term, int]:
    rank = order_key(gens, order)
    for a in p_atoms(*polys):
        if a not in rank:
            rank[a] = len(rank)
    return rank


def coeff_div(c: Coeff, d: Coeff) -> Coeff:
    """``c / d`` exactly (an int when it is whole)."""
    if c.__class__ is int and d.__class__ is int and c % d == 0:
        return c // d
    return norm(Fraction(c) / d)


def p_divmod(
    p: Poly, d: Poly, gens: list[Term] | None = None, order: str = "lex", budget: Budget | None = None
) -> tuple[Poly, Poly]:
    """``(q, r)`` with ``p == q*d + r`` and no term of ``r`` divisible by the leading term of ``d``."""
    if not d:
        raise ZeroDivisionError("polynomial division by zero")
    rank = _full_rank(gens or [], [p, d], order)
    graded = order == "grlex"
    keyed = {m: _key(m, rank, graded) for m in d}
    lead = max(d, key=keyed.__getitem__)
    lead_c = d[lead]
    rem = dict(p)
    quo: Poly = {}
    out: Poly = {}
    budget = budget or Budget()
    while rem:
        m = max(rem, key=lambda mm: _key(mm, rank, graded))
        c = rem.pop(m)
        t = mono_div(m, lead)
        if t is None:
            out[m] = c
            continue
        k = coeff_div(c, lead_c)
        quo[t] = k
        budget.spend(len(d))
        for md, cd in d.items():
            if md is lead:
                continue
            mm = mono_mul(t, md)
            v = rem.get(mm, 0) - k * cd
            if v:
                rem[mm] = norm(v)
            elif mm in rem:
                del rem[mm]
    return quo, out


def p_exact_div(p: Poly, d: Poly, budget: Budget | None = None) -> Poly | None:
    """``p / d`` when ``d`` divides ``p`` exactly (rational coefficients allowed), else None."""
    if not d:
        raise ZeroDivisionError("polynomial division by zero")
    if not p:
        return {}
    if len(d) == 1:
        for md, cd in d.items():
            out: Poly = {}
            for m, c in p.items():
                t = mono_div(m, md)
                if t is None:
                    return None
                out[t] = coeff_div(c, cd)
            return out
    # the leading term of what is left is always a multiple of d's when d divides p: stop at the
    # first that is not. The terms wait in a heap by their lex keys (a stale entry is skipped).
    rank = _full_rank([], [p, d], "lex")
    end = (len(rank), 0)

    def hkey(m: Mono) -> list[tuple[int, int]]:
        # (rank, -power) pairs in rank order, then a sentinel: the least key is the greatest monomial
        return [*sorted([(rank[a], -k) for a, k in m]), end]

    lead = min(d, key=hkey)
    lead_c = d[lead]
    rem = dict(p)
    heap = [(hkey(m), i, m) for i, m in enumerate(rem)]
    heapq.heapify(heap)
    count = len(heap)
    quo: Poly = {}
    budget = budget or Budget()
    while heap:
        m = heapq.heappop(heap)[2]
        if m not in rem:
            continue  # cancelled since it was pushed
        c = rem.pop(m)
        t = mono_div(m, lead)
        if t is None:
            return None
        k = coeff_div(c, lead_c)
        quo[t] = k
        budget.spend(len(d))
        for md, cd in d.items():
            if md is lead:
                continue
            mm = mono_mul(t, md)
            if mm in rem:
                v = rem[mm] - k * cd
                if v:
                    rem[mm] = norm(v)
                else:
                    del rem[mm]
            else:
                rem[mm] = norm(-k * cd)
                heapq.heappush(heap, (hkey(mm), count, mm))
                count += 1
    return quo


def p_divides(d: Poly, p: Poly) -> bool:
    """Whether ``d`` divides ``p`` over the rationals."""
    return p_exact_div(p, d) is not None


def to_univariate(p: Poly, x: Term) -> dict[int, Poly]:
    """``p`` as a polynomial in ``x``: ``{power: coefficient without x}``."""
    out: dict[int, Poly] = {}
    for m, c in p.items():
        k = 0
        rest: list[tuple[Term, int]] = []
        for a, e in m:
            if a is x:
                k = e
            else:
                rest.append((a, e))
        out.setdefault(k, {})[tuple(rest) if k else m] = c
    return out


def from_univariate(u: dict[int, Poly], x: Term) -> Poly:
    """The polynomial ``sum(c * x**k)`` of a ``{power: coefficient}`` dict."""
    out: Poly = {}
    for k, cp in u.items():
        if not k:
            out.update(cp)
            continue
        for m, c in cp.items():
            powers = dict(m)
            powers[x] = k
            out[mono_of_powers(powers) if m else ((x, k),)] = c
    return out
