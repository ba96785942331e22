"""Factorisation of univariate integer polynomials (Zassenhaus): mod p, Hensel lifting, recombination.

For a square-free primitive ``f``: choose a small odd prime ``p`` keeping ``f`` square-free and its
degree (the one with the fewest factors of a few tried), factor ``f`` mod ``p``
(:mod:`.modular`: distinct-degree then Cantor-Zassenhaus), lift the factors to ``p**k`` beyond
twice Mignotte's bound on the coefficients of any factor, then try products of subsets of the
lifted factors, smallest first, as true factors by exact division. Every factor returned divides
``f`` (checked by division); the recombination stops after :data:`MAX_SUBSETS` subsets, and
what is left then is returned as one factor, correct but perhaps reducible (never a wrong factor).
A square-free part above degree :data:`MAX_FACTOR_DEGREE` is not split, a polynomial above
:data:`MAX_SQF_DEGREE` not even into square-free parts: never a hang.
"""

from __future__ import annotations

import math
from itertools import combinations
from typing import Final

from .dense import Dense, d_diff, d_exact_div, d_primitive, d_sqf
from .modular import Modp, hensel_lift, m_factor_squarefree, m_gcd, m_monic, m_reduce

__all__ = ["MAX_SUBSETS", "MAX_FACTOR_DEGREE", "MAX_SQF_DEGREE", "factor_squarefree", "d_factor"]

#: subsets of modular factors tried in recombination before the rest is kept as one factor
MAX_SUBSETS: Final = 50_000
#: largest degree of a square-free part factored (a higher one is kept whole: about 1.5 s at this degree)
MAX_FACTOR_DEGREE: Final = 200
#: largest degree given a square-free decomposition (a higher polynomial is kept whole)
MAX_SQF_DEGREE: Final = 2000
_PRIMES: Final = (3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67, 71, 73, 79, 83, 89, 97)
#: good primes compared (the fewest modular factors wins)
_TRIES: Final = 3


def _choose_prime(f: Dense) -> tuple[int, list[Modp]] | None:
    """A prime keeping ``f`` square-free and its degree, and ``f``'s monic factors mod that prime."""
    best: tuple[int, list[Modp]] | None = None
    tried = 0
    ints = [int(c) for c in f]
    for p in _PRIMES:
        if ints[-1] % p == 0:
            continue
        fp = m_reduce(ints, p)
        if len(m_gcd(fp, m_reduce([int(c) for c in d_diff(f)], p), p)) > 1:
            continue
        factors = m_factor_squarefree(m_monic(fp, p), p)
        if best is None or len(factors) < len(best[1]):
            best = (p, factors)
        tried += 1
        if tried >= _TRIES or len(factors) == 1:
            break
    return best


def _bound(f: Dense) -> int:
    """Twice Mignotte's bound times the leading coefficient: coefficients of ``lc * g`` for any factor ``g``."""
    norm2 = math.isqrt(sum(int(c) * int(c) for c in f)) + 1
    return 2 * abs(int(f[-1])) * (2 ** (len(f) - 1)) * norm2 + 1


def _symmetric(a: Modp, m: int) -> Dense:
    half = m // 2
    return [c - m if c > half else c for c in a]


def _candidate(lc: int, subset: tuple[Modp, ...], m: int) -> Dense:
    prod: list[int] = [lc % m]
    for g in subset:
        out = [0] * (len(prod) + len(g) - 1)
        for i, c in enumerate(prod):
            for j, d in enumerate(g):
                out[i + j] += c * d
        prod = [c % m for c in out]
    return _symmetric(prod, m)


def _recombine(f: Dense, lifted: list[Modp], m: int) -> list[Dense]:
    """True factors of ``f`` from the lifted modular factors (the rest kept whole past MAX_SUBSETS)."""
    found: list[Dense] = []
    tried = 0
    size = 1
    while 2 * size <= len(lifted):
        hit = False
        for subset in combinations(lifted, size):
            tried += 1
            if tried > MAX_SUBSETS:
                found.append(f)
                return found
            lc = int(f[-1])
            cand = _candidate(lc, subset, m)
            # cheap test first: the constant term of a factor of lc*f divides lc*f(0)
            if cand[0] and (lc * int(f[0])) % cand[0]:
                continue
            g = d_primitive(cand)[1]
            q = d_exact_div(f, g)
            if q is None or any(c.__class__ is not int for c in q):
                continue
            found.append(g)
            f = q
            lifted = [h for h in lifted if not any(h is s for s in subset)]
            hit = True
            break
        if not hit:
            size += 1
    found.append(d_primitive(f)[1] if len(f) > 1 else f)
    return found


def _quadratic(f: Dense) -> list[Dense]:
    """The factors of a primitive square-free ``c*x**2 + b*x + a`` with ``c > 0``: two linear ones when its
    discriminant ``d = b**2 - 4*a*c`` is a square ``s**2`` (roots ``(-b -+ s)/(2*c)``), else itself."""
    a, b, c = (int(k) for k in f)
    d = b * b - 4 * a * c
    s = math.isqrt(d) if d > 0 else -1
    if s * s != d:
        return [f]  # no rational root (d is not 0: f is square-free)
    # c*x**2 + b*x + a == (2*c*x + b - s)*(2*c*x + b + s)/(4*c), each factor made primitive
    return [d_primitive([b - s, 2 * c])[1], d_primitive([b + s, 2 * c])[1]]


def factor_squarefree(f: Dense) -> list[Dense]:
    """The irreducible factors over Z of a primitive square-free ``f`` of degree > 0 with ``lc > 0``."""
    if len(f) <= 2 or len(f) - 1 > MAX_FACTOR_DEGREE:
        return [f]
    if len(f) == 3:
        return _quadratic(f)
    chosen = _choose_prime(f)
    if chosen is None:
        return [f]  # no small prime fits (a huge leading coefficient or discriminant): kept whole
    p, factors = chosen
    if len(factors) == 1:
        return [f]
    bound = _bound(f)
    k = 1
    while p**k <= bound:
        k += 1
    lifted = hensel_lift([int(c) for c in f], factors, p, k)
    return _recombine(f, lifted, p**k)


def d_factor(a: Dense) -> tuple[Dense, list[tuple[Dense, int]]]:
    """``([c], [(f, e), ...])`` with ``a == c * prod f**e``, ``c`` rational, the ``f`` irreducible over Z.

    Each ``f`` is primitive with a positive leading coefficient; factors come in increasing degree,
    then by coefficients.
    """
    if len(a) <= 1:
        return list(a), []
    c, prim = d_primitive(a)
    out: list[tuple[Dense, int]] = []
    # x**k first: the square-free decomposition and the modular steps want f(0) != 0
    k = 0
    while not prim[k]:
        k += 1
    if k:
        out.append(([0, 1], k))
        prim = prim[k:]
    if len(prim) - 1 > MAX_SQF_DEGREE:
        return [c], [*out, (prim, 1)]
    for part, e in d_sqf(prim):
        for g in factor_squarefree(part):
            out.append((g, e))
    out.sort(key=lambda fe: (len(fe[0]), [int(x) for x in reversed(fe[0])], fe[1]))
    return [c], out
