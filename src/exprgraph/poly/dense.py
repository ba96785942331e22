"""Dense univariate polynomials: lists of exact coefficients, lowest degree first.

``[c0, c1, ..., cn]`` is ``c0 + c1*x + ... + cn*x**n`` with ``cn != 0``; ``[]`` is zero. The
coefficients are ints (the integer path: no Fraction is made) or Fractions (over Q). These are the
workhorses of the univariate GCD, square-free decomposition, factorisation and partial fractions.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Final

from .ring import Coeff, norm

__all__ = [
    "Dense",
    "d_trim",
    "d_deg",
    "d_lc",
    "d_add",
    "d_sub",
    "d_neg",
    "d_scale",
    "d_mul",
    "d_pow",
    "d_diff",
    "d_eval",
    "d_content",
    "d_primitive",
    "d_divmod",
    "d_exact_div",
    "d_gcd",
    "heu_gcd_dense",
    "d_sqf",
    "d_monic",
    "d_clear_denominators",
]

Dense = list[Coeff]
#: evaluation points the heuristic gcd tries before the remainder sequence
_HEU_TRIES: Final = 6


def d_trim(a: Dense) -> Dense:
    """``a`` without its zero leading coefficients (in place; returned)."""
    while a and not a[-1]:
        a.pop()
    return a


def d_deg(a: Dense) -> int:
    """Degree (-1 for zero)."""
    return len(a) - 1


def d_lc(a: Dense) -> Coeff:
    """Leading coefficient (0 for zero)."""
    return a[-1] if a else 0


def d_add(a: Dense, b: Dense) -> Dense:
    """``a + b``."""
    if len(a) < len(b):
        a, b = b, a
    out = list(a)
    for i, c in enumerate(b):
        out[i] = norm(out[i] + c)
    return d_trim(out)


def d_sub(a: Dense, b: Dense) -> Dense:
    """``a - b``."""
    return d_add(a, d_neg(b))


def d_neg(a: Dense) -> Dense:
    """``-a``."""
    return [-c for c in a]


def d_scale(a: Dense, k: Coeff) -> Dense:
    """``k * a``."""
    if not k:
        return []
    return [norm(k * c) for c in a]


def d_mul(a: Dense, b: Dense) -> Dense:
    """``a * b``."""
    if not a or not b:
        return []
    out: Dense = [0] * (len(a) + len(b) - 1)
    for i, c in enumerate(a):
        if c:
            for j, d in enumerate(b):
                out[i + j] += c * d
    return [norm(c) for c in out]


def d_pow(a: Dense, e: int) -> Dense:
    """``a**e`` for ``e >= 0``."""
    out: Dense = [1]
    for _ in range(e):
        out = d_mul(out, a)
    return out


def d_diff(a: Dense) -> Dense:
    """The derivative."""
    return [norm(i * a[i]) for i in range(1, len(a))]


def d_eval(a: Dense, x: Coeff) -> Coeff:
    """``a(x)`` (Horner)."""
    v: Coeff = 0
    for c in reversed(a):
        v = v * x + c
    return norm(v)


def d_content(a: Dense) -> int:
    """gcd of the coefficients of an integer polynomial (0 for zero)."""
    g = 0
    for c in a:
        g = math.gcd(g, int(c))
        if g == 1:
            break
    return g


def d_clear_denominators(a: Dense) -> tuple[int, Dense]:
    """``(d, b)``: ``b == d*a`` with integer coefficients, ``d`` the lcm of the denominators."""
    den = 1
    for c in a:
        if c.__class__ is Fraction:
            den = den * c.denominator // math.gcd(den, c.denominator)
    return den, [int(c * den) for c in a]


def d_primitive(a: Dense) -> tuple[Coeff, Dense]:
    """``(c, b)``: ``a == c*b``, ``b`` integral, primitive, with a positive leading coefficient."""
    if not a:
        return 0, []
    den, ints = d_clear_denominators(a)
    g = d_content(ints)
    if ints[-1] < 0:
        g = -g
    return norm(Fraction(g, den)), [c // g for c in ints]


def d_monic(a: Dense) -> Dense:
    """``a`` divided by its leading coefficient (over Q)."""
    lc = a[-1]
    if lc == 1:
        return list(a)
    return [norm(Fraction(c) / lc) for c in a]


def d_divmod(a: Dense, b: Dense) -> tuple[Dense, Dense]:
    """``(q, r)`` with ``a == q*b + r`` and ``deg r < deg b``, over Q (ints where exact)."""
    if not b:
        raise ZeroDivisionError("polynomial division by zero")
    r = list(a)
    db = len(b) - 1
    lc = b[-1]
    if len(r) <= db:
        return [], r
    q: Dense = [0] * (len(r) - db)
    for k in range(len(r) - 1 - db, -1, -1):
        c = r[k + db]
        if not c:
            continue
        if lc == 1:
            t = c
        elif c.__class__ is int and lc.__class__ is int and c % lc == 0:
            t = c // lc
        else:
            t = norm(Fraction(c) / lc)
        q[k] = t
        for j in range(db + 1):
            r[k + j] = norm(r[k + j] - t * b[j])
    return d_trim(q), d_trim(r[:db])


def d_exact_div(a: Dense, b: Dense) -> Dense | None:
    """``a / b`` when ``b`` divides ``a`` (over Q), else None."""
    q, r = d_divmod(a, b)
    return None if r else q


def _digits(gamma: int, xi: int) -> list[int]:
    """The symmetric ``xi``-adic digits of ``gamma``, lowest first."""
    out: list[int] = []
    half = xi // 2
    while gamma:
        d = gamma % xi
        if d > half:
            d -= xi
        out.append(d)
        gamma = (gamma - d) // xi
    return out


def heu_gcd_dense(a: Dense, b: Dense) -> Dense | None:
    """The gcd of two primitive integer polynomials (positive leading coefficient), or None when undecided."""
    xi = 2 * min(max(abs(int(c)) for c in a), max(abs(int(c)) for c in b)) + 29
    for _ in range(_HEU_TRIES):
        va, vb = _horner(a, xi), _horner(b, xi)
        if va and vb:
            g = _digits(math.gcd(va, vb), xi)
            if g:
                content = 0
                for c in g:
                    content = math.gcd(content, c)
                if g[-1] < 0:
                    content = -content
                g = [c // content for c in g]
                if _divides(g, a) and _divides(g, b):
                    return list(g)
        xi = xi * 73794 // 27011
    return None


def _horner(a: Dense, x: int) -> int:
    v = 0
    for c in reversed(a):
        v = v * x + int(c)
    return v


def _divides(g: list[int], a: Dense) -> bool:
    q = d_exact_div(a, list(g))
    return q is not None and all(c.__class__ is int for c in q)


def _prim(a: Dense) -> Dense:
    return d_primitive(a)[1]


def _prem(a: Dense, b: Dense) -> Dense:
    """Pseudo-remainder of integer polynomials: ``lc(b)**(deg a - deg b + 1) * a mod b``, over Z."""
    r = list(a)
    db = len(b) - 1
    lc = b[-1]
    while r and len(r) - 1 >= db:
        shift = len(r) - 1 - db
        c = r[-1]
        r = [x * lc for x in r]
        for j in range(db + 1):
            r[shift + j] -= c * b[j]
        d_trim(r)
    return r


def d_gcd(a: Dense, b: Dense) -> Dense:
    """The gcd over Q as a primitive integer polynomial with a positive leading coefficient ([] for 0, 0)."""
    pa = _prim(a)
    pb = _prim(b)
    if not pa:
        return pb
    if not pb:
        return pa
    if len(pa) == 1 or len(pb) == 1:
        return [1]
    heu = heu_gcd_dense(pa, pb)
    if heu is not None:
        return heu
    if len(pa) < len(pb):
        pa, pb = pb, pa
    # primitive remainder sequence: each remainder made primitive keeps the coefficients small
    while pb:
        if len(pb) == 1:
            return [1]
        r = _prem(pa, pb)
        pa, pb = pb, _prim(r)
    return pa


def d_sqf(a: Dense) -> list[tuple[Dense, int]]:
    """Yun's square-free decomposition of a primitive integer polynomial: ``[(f_i, i), ...]``, ``a == prod f_i**i``.

    Each ``f_i`` is primitive with a positive leading coefficient and of degree > 0 (the sign or
    content of ``a`` is not in the list).
    """
    out: list[tuple[Dense, int]] = []
    if len(a) <= 1:
        return out
    da = d_diff(a)
    g = d_gcd(a, da)
    b = d_exact_div(a, g) or []
    c = d_exact_div(da, g) or []
    i = 1
    while len(b) > 1:
        d = d_sub(c, d_diff(b))
        h = d_gcd(b, d)
        if len(h) > 1:
            out.append((h, i))
        b2 = d_exact_div(b, h)
        c2 = d_exact_div(d, h)
        if b2 is None or c2 is None:
            raise ArithmeticError("square-free decomposition: an inexact division (a bug)")
        b, c = b2, c2
        i += 1
    return out
