"""Monomials: products of powers of atoms, the terms of the polynomials of :mod:`.ring`.

A monomial is a tuple of ``(atom, power)`` pairs, powers > 0, sorted by the atoms' identities
(interned terms, so equal atoms are the same object); ``()`` is the monomial 1. This is the
representation :mod:`exprgraph.dims` uses, so its polynomials and ours are the same dicts.
Imports: the core's terms and the errors.
"""

from __future__ import annotations

from typing import Final

from ..core.term import Term
from ..errors import TermTooLargeError

__all__ = [
    "Mono",
    "ONE",
    "MAX_DEGREE",
    "mono_mul",
    "mono_div",
    "mono_pow",
    "mono_gcd",
    "mono_lcm",
    "mono_of_powers",
    "mono_degree",
    "mono_rank_key",
    "mono_power_of",
    "check_degree",
]

Mono = tuple[tuple[Term, int], ...]
ONE: Final[Mono] = ()

#: largest power of one atom in a monomial
MAX_DEGREE: Final = 100_000


def _by_id(item: tuple[Term, int]) -> int:
    return id(item[0])


#: the sort key as a module constant (the compiled build keeps it in a C static, not a module lookup)
_BY_ID: Final = _by_id


def check_degree(p: int) -> int:
    """``p``, refused (TermTooLargeError) when it passes :data:`MAX_DEGREE`."""
    if p > MAX_DEGREE:
        raise TermTooLargeError(f"a polynomial with an atom to the power {p} (more than {MAX_DEGREE})")
    return p


def mono_mul(m1: Mono, m2: Mono) -> Mono:
    """Product of two monomials."""
    if not m1:
        return m2
    if not m2:
        return m1
    if len(m1) == 1 and len(m2) == 1:
        a, p = m1[0]
        b, q = m2[0]
        if a is b:
            return ((a, check_degree(p + q)),)
        return (m1[0], m2[0]) if id(a) < id(b) else (m2[0], m1[0])
    powers = dict(m1)
    for a, q in m2:
        powers[a] = check_degree(powers.get(a, 0) + q)
    return tuple(sorted(powers.items(), key=_BY_ID))


def mono_of_powers(powers: dict[Term, int]) -> Mono:
    """The monomial with these powers of atoms (zero powers dropped)."""
    if len(powers) == 1:
        for a, p in powers.items():
            return ((a, p),) if p else ONE
    if len(powers) == 2:
        (a, p), (b, q) = powers.items()
        if p and q:
            return ((a, p), (b, q)) if id(a) < id(b) else ((b, q), (a, p))
    return tuple(sorted([(a, p) for a, p in powers.items() if p], key=_BY_ID))


def mono_pow(m: Mono, e: int) -> Mono:
    """``m`` to the power ``e >= 0``."""
    if e == 1 or not m:
        return m
    if e == 0:
        return ONE
    return tuple([(a, check_degree(p * e)) for a, p in m])


def mono_div(m: Mono, d: Mono) -> Mono | None:
    """``m / d`` when ``d`` divides ``m``, else None."""
    if not d:
        return m
    if len(d) == 1:
        # one atom (the commonest divisor): found in place, the rest of m kept in its order
        a, q = d[0]
        for i in range(len(m)):
            if m[i][0] is a:
                p = m[i][1] - q
                if p < 0:
                    return None
                return (*m[:i], (a, p), *m[i + 1 :]) if p else m[:i] + m[i + 1 :]
        return None
    powers = dict(m)
    for a, q in d:
        p = powers.get(a, 0) - q
        if p < 0:
            return None
        if p:
            powers[a] = p
        else:
            del powers[a]
    # m is in id order, and lowering or removing powers keeps the order of the rest
    return tuple(powers.items())


def mono_gcd(m1: Mono, m2: Mono) -> Mono:
    """The largest monomial dividing both."""
    if not m1 or not m2:
        return ONE
    other = dict(m2)
    return tuple([(a, min(p, other[a])) for a, p in m1 if a in other])


def mono_lcm(m1: Mono, m2: Mono) -> Mono:
    """The smallest monomial both divide."""
    powers = dict(m1)
    for a, q in m2:
        powers[a] = max(powers.get(a, 0), q)
    return tuple(sorted(powers.items(), key=_BY_ID))


def mono_rank_key(m: Mono, rank: dict[Term, int], graded: bool = False) -> tuple[int, list[tuple[int, int]]]:
    """Sort key of ``m`` in the lex (or graded lex) order of atoms ranked by ``rank`` (0 greatest).

    Comparing the ``(-rank, power)`` pairs in rank order compares the exponent vectors
    lexicographically, without building vectors as long as the number of atoms.
    """
    pairs = sorted([(-rank[a], k) for a, k in m], reverse=True)
    return (mono_degree(m) if graded else 0, pairs)


def mono_degree(m: Mono) -> int:
    """Total degree of a monomial."""
    total = 0
    for _, p in m:
        total += p
    return total


def mono_power_of(m: Mono, atom: Term) -> int:
    """The power of ``atom`` in ``m`` (0 when absent)."""
    for a, p in m:
        if a is atom:
            return p
    return 0
