"""Rational functions: pairs ``(numerator, denominator)`` of polynomials, and their algebra.

A *ratio* ``(n, d)`` stands for ``n / d`` with ``d != 0``. :func:`r_normal` puts it in the form
every function here returns: ``d`` integral, primitive and with a positive leading coefficient
(:func:`~.gcd.normal_sign`), the constant factors moved into ``n``. Sums are taken over the
least common multiple of the denominators (``together``); :func:`r_cancel` divides out the gcd
(``cancel``); :func:`apart` gives the partial fractions of a univariate ratio over Q.
"""

from __future__ import annotations

from fractions import Fraction

from ..core.term import Term
from .dense import Dense, d_divmod, d_mul, d_scale, d_sub, d_trim
from .division import p_exact_div
from .factor_univariate import d_factor
from .gcd import normal_sign, p_gcd
from .monomials import ONE
from .ring import Budget, Poly, norm, p_add, p_atoms, p_degree, p_mul, p_neg, p_pow, p_primitive, p_scale

__all__ = [
    "Ratio",
    "r_normal",
    "r_add",
    "r_sub",
    "r_mul",
    "r_div",
    "r_pow",
    "r_cancel",
    "to_dense",
    "from_dense",
    "d_gcdex",
    "r_apart",
]

Ratio = tuple[Poly, Poly]


def _is_one(p: Poly) -> bool:
    return len(p) == 1 and p.get(ONE) == 1


def r_normal(n: Poly, d: Poly) -> Ratio:
    """``n / d`` with ``d`` primitive, integral, of positive leading coefficient (ZeroDivisionError for ``d == 0``)."""
    if not d:
        raise ZeroDivisionError("a rational function with a zero denominator")
    if not n:
        return {}, {ONE: 1}
    c, pd = p_primitive(d)
    signed = normal_sign(pd)
    if signed is not pd:
        c = -c
    return (n if c == 1 else p_scale(n, norm(Fraction(1) / c))), signed


def _exact(p: Poly, d: Poly, budget: Budget) -> Poly:
    q = p_exact_div(p, d, budget)
    if q is None:
        raise ArithmeticError("rational functions: an inexact division (a bug)")
    return q


def r_add(a: Ratio, b: Ratio, budget: Budget | None = None) -> Ratio:
    """``a + b`` over the lcm of the denominators."""
    budget = budget or Budget()
    (an, ad), (bn, bd) = a, b
    if ad == bd:
        return r_normal(p_add(an, bn), ad)
    if _is_one(ad):
        return r_normal(p_add(p_mul(an, bd, budget), bn), bd)
    if _is_one(bd):
        return r_normal(p_add(an, p_mul(bn, ad, budget)), ad)
    g = p_gcd(ad, bd, budget)
    ca, cb = _exact(bd, g, budget), _exact(ad, g, budget)  # cofactors: a takes bd/g, b takes ad/g
    num = p_add(p_mul(an, ca, budget), p_mul(bn, cb, budget))
    return r_normal(num, p_mul(ad, ca, budget))


def r_sub(a: Ratio, b: Ratio, budget: Budget | None = None) -> Ratio:
    """``a - b``."""
    return r_add(a, (p_neg(b[0]), b[1]), budget)


def r_mul(a: Ratio, b: Ratio, budget: Budget | None = None) -> Ratio:
    """``a * b`` (no gcd taken: see :func:`r_cancel`)."""
    return r_normal(p_mul(a[0], b[0], budget), p_mul(a[1], b[1], budget))


def r_div(a: Ratio, b: Ratio, budget: Budget | None = None) -> Ratio:
    """``a / b`` (ZeroDivisionError when ``b`` is zero)."""
    if not b[0]:
        raise ZeroDivisionError("division by a zero rational function")
    return r_normal(p_mul(a[0], b[1], budget), p_mul(a[1], b[0], budget))


def r_pow(a: Ratio, e: int, budget: Budget | None = None) -> Ratio:
    """``a**e`` for any integer ``e`` (ZeroDivisionError for ``0**-k``)."""
    n, d = a
    if e < 0:
        n, d, e = d, n, -e
    return r_normal(p_pow(n, e, budget), p_pow(d, e, budget))


def r_cancel(a: Ratio, budget: Budget | None = None) -> Ratio:
    """``a`` in lowest terms: numerator and denominator divided by their gcd."""
    budget = budget or Budget()
    n, d = a
    if not n:
        return {}, {ONE: 1}
    g = p_gcd(n, d, budget)
    if not _is_one(g):
        n, d = _exact(n, g, budget), _exact(d, g, budget)
    return r_normal(n, d)


def to_dense(p: Poly, x: Term) -> Dense:
    """A polynomial in ``x`` alone as a dense list (ValueError if another atom occurs)."""
    if any(a is not x for a in p_atoms(p)):
        raise ValueError("not a polynomial in one variable")
    out: Dense = [0] * (p_degree(p, x) + 1)
    for m, c in p.items():
        out[m[0][1] if m else 0] = c
    return d_trim(out)


def from_dense(a: Dense, x: Term) -> Poly:
    """The polynomial of a dense list in ``x``."""
    return {(((x, k),) if k else ONE): norm(c) for k, c in enumerate(a) if c}


def d_gcdex(a: Dense, b: Dense) -> tuple[Dense, Dense, Dense]:
    """``(s, t, g)`` with ``s*a + t*b == g``, ``g`` the monic gcd over Q."""
    r0, r1 = a, b
    s0: Dense = [1]
    s1: Dense = []
    t0: Dense = []
    t1: Dense = [1]
    while r1:
        q, r = d_divmod(r0, r1)
        r0, r1 = r1, r
        s0, s1 = s1, d_sub(s0, d_mul(q, s1))
        t0, t1 = t1, d_sub(t0, d_mul(q, t1))
    inv = Fraction(1) / r0[-1]
    return d_scale(s0, inv), d_scale(t0, inv), d_scale(r0, inv)


def r_apart(a: Ratio, x: Term) -> tuple[Dense, list[tuple[Dense, Dense, int]]]:
    """Partial fractions over Q of a ratio in ``x`` alone: ``(polynomial part, [(A, f, j), ...])``.

    ``a == poly + sum(A / f**j)`` with each ``f`` irreducible over Q (primitive, integral), ``1 <= j``
    up to its multiplicity in the denominator and ``deg A < deg f``. ValueError if another atom occurs.
    """
    n, d = r_cancel(a)
    num, den = to_dense(n, x), to_dense(d, x)
    poly, rem = d_divmod(num, den)
    out: list[tuple[Dense, Dense, int]] = []
    if not rem:
        return poly, out
    consts, factors = d_factor(den)
    c = consts[0]
    rem = d_scale(rem, Fraction(1) / c)  # rem / den == rem' / prod f**e
    for i, (f, e) in enumerate(factors):
        part = _dpow(f, e)
        other: Dense = [1]
        for j, (g, k) in enumerate(factors):
            if j != i:
                other = d_mul(other, _dpow(g, k))
        s, _, _ = d_gcdex(other, part)
        # rem/(other*part) = (rem*s mod part)/part + (...)/other, as s*other == 1 mod part
        b = d_divmod(d_mul(rem, s), part)[1]
        # b / f**e in base f: b = a0 + a1*f + ...; b/f**e = sum a_k / f**(e-k)
        k = 0
        while b:
            b, digit = d_divmod(b, f)
            if digit:
                out.append((digit, f, e - k))
            k += 1
    return poly, out


def _dpow(a: Dense, e: int) -> Dense:
    out: Dense = [1]
    for _ in range(e):
        out = d_mul(out, a)
    return out
