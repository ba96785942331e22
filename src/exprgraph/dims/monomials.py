"""Monomials: products of powers of atoms, the terms of the polynomials of :mod:`.normal`.

A monomial is a tuple of ``(atom, power)`` pairs sorted by the atoms' identities (interned
terms, so equal atoms are the same object); ``()`` is the monomial 1. Imports: the core's terms.
"""

from __future__ import annotations

from typing import Final

from ..core.term import Term
from ..errors import TermTooLargeError

__all__ = ["Mono", "ONE", "MAX_DEGREE", "mono_mul", "mono_of_powers", "mono_pow", "mono_div"]

Mono = tuple[tuple[Term, int], ...]
ONE: Final[Mono] = ()

#: largest power of one atom in a monomial
MAX_DEGREE: Final = 100_000


def _by_id(item: tuple) -> int:
    return id(item[0])


#: the sort key, as a module constant (the compiled build keeps it in a C static)
_BY_ID: Final = _by_id


def mono_mul(m1: Mono, m2: Mono) -> Mono:
    """Product of two monomials."""
    if not m1:
        return m2
    if not m2:
        return m1
    if len(m1) == 1 and len(m2) == 1:
        (a, p), (b, q) = m1[0], m2[0]
        if a is b:
            return ((a, _check_degree(p + q)),)
        return (m1[0], m2[0]) if id(a) < id(b) else (m2[0], m1[0])
    powers = dict(m1)
    for a, q in m2:
        powers[a] = _check_degree(powers.get(a, 0) + q)
    return tuple(sorted(powers.items(), key=_BY_ID))


def mono_of_powers(powers: dict[Term, int]) -> Mono:
    """The monomial with these powers of atoms (all > 0)."""
    if len(powers) == 2:
        (a, p), (b, q) = powers.items()  # two atoms: in id order, as sorting them gives
        return ((a, p), (b, q)) if id(a) < id(b) else ((b, q), (a, p))
    if len(powers) > 2:
        return tuple(sorted(powers.items(), key=_BY_ID))
    return tuple(powers.items())


def mono_pow(m: Mono, e: int) -> Mono:
    """``m`` to the power ``e >= 0``."""
    if e == 1 or not m:
        return m
    if e == 0:
        return ONE
    return tuple((a, _check_degree(p * e)) for a, p in m)


def _check_degree(p: int) -> int:
    if p > MAX_DEGREE:
        raise TermTooLargeError(f"a dimension expression with an atom to the power {p} (more than {MAX_DEGREE})")
    return p


def mono_div(m: Mono, d: Mono) -> Mono | None:
    """``m / d`` when ``d`` divides ``m``, else None."""
    if not d:
        return m
    if len(d) == 1:
        # one atom a**q (the commonest divisor): found in place, the rest of m kept in its order
        a, q = d[0]
        for i in range(len(m)):
            if m[i][0] is a:
                p = m[i][1] - q
                if p < 0:
                    return None
                if p:
                    return (*m[:i], (a, p), *m[i + 1 :])
                return m[:i] + m[i + 1 :]
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


def _mono_gcd(m1: Mono, m2: Mono) -> Mono:
    if not m1 or not m2:
        return ONE
    other = dict(m2)
    out = [(a, min(p, other[a])) for a, p in m1 if a in other]
    return tuple(out)
