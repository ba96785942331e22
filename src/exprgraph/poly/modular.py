"""Polynomials over the integers modulo ``m``: lists of ints in ``[0, m)``, lowest degree first.

The finite-field half of the Zassenhaus factoriser (:mod:`.factor_univariate`): arithmetic,
division, gcd, powers, distinct-degree and equal-degree (Cantor-Zassenhaus) factorisation over
``Z/p`` for an odd prime ``p``, and the quadratic Hensel lift of a factorisation to ``Z/p**k``.
"""

from __future__ import annotations

import random

__all__ = [
    "Modp",
    "m_trim",
    "m_reduce",
    "m_add",
    "m_sub",
    "m_mul",
    "m_divmod",
    "m_monic",
    "m_gcd",
    "m_gcdex",
    "m_powmod",
    "m_factor_squarefree",
    "hensel_lift",
]

Modp = list[int]


def m_trim(a: Modp) -> Modp:
    """``a`` without zero leading coefficients (in place; returned)."""
    while a and not a[-1]:
        a.pop()
    return a


def m_reduce(a: list[int], m: int) -> Modp:
    """The integer polynomial ``a`` modulo ``m``."""
    return m_trim([c % m for c in a])


def m_add(a: Modp, b: Modp, m: int) -> Modp:
    """``a + b`` mod ``m``."""
    if len(a) < len(b):
        a, b = b, a
    out = list(a)
    for i, c in enumerate(b):
        out[i] = (out[i] + c) % m
    return m_trim(out)


def m_sub(a: Modp, b: Modp, m: int) -> Modp:
    """``a - b`` mod ``m``."""
    n = max(len(a), len(b))
    out = [0] * n
    for i in range(n):
        out[i] = ((a[i] if i < len(a) else 0) - (b[i] if i < len(b) else 0)) % m
    return m_trim(out)


def m_mul(a: Modp, b: Modp, m: int) -> Modp:
    """``a * b`` mod ``m``."""
    if not a or not b:
        return []
    if len(a) * len(b) > 64:
        return m_trim([c % m for c in _packed_mul(a, b, m)])
    out = [0] * (len(a) + len(b) - 1)
    for i, c in enumerate(a):
        if c:
            for j, d in enumerate(b):
                out[i + j] += c * d
    return m_trim([c % m for c in out])


def _packed_mul(a: Modp, b: Modp, m: int) -> list[int]:
    """The product of two polynomials with coefficients in ``[0, m)``, by one product of big ints.

    Each coefficient takes a slot of ``bits`` bits, wide enough for any coefficient of the product
    (at most ``min(len) * (m - 1)**2``), so the slots of the packed product are its coefficients.
    """
    bits = 2 * m.bit_length() + min(len(a), len(b)).bit_length() + 1
    pa = 0
    for c in reversed(a):
        pa = (pa << bits) | c
    pb = 0
    for c in reversed(b):
        pb = (pb << bits) | c
    prod = pa * pb
    mask = (1 << bits) - 1
    out = [0] * (len(a) + len(b) - 1)
    for i in range(len(out)):
        out[i] = prod & mask
        prod >>= bits
    return out


def m_divmod(a: Modp, b: Modp, m: int) -> tuple[Modp, Modp]:
    """``(q, r)`` with ``a == q*b + r`` mod ``m``; the leading coefficient of ``b`` must be a unit."""
    if not b:
        raise ZeroDivisionError("polynomial division by zero")
    r = list(a)
    db = len(b) - 1
    inv = pow(b[-1], -1, m)
    if len(r) <= db:
        return [], r
    q = [0] * (len(r) - db)
    for k in range(len(r) - 1 - db, -1, -1):
        c = r[k + db] * inv % m
        q[k] = c
        if c:
            for j in range(db + 1):
                r[k + j] = (r[k + j] - c * b[j]) % m
    return m_trim(q), m_trim(r[:db])


def m_monic(a: Modp, m: int) -> Modp:
    """``a`` divided by its leading coefficient mod ``m``."""
    if not a or a[-1] == 1:
        return list(a)
    inv = pow(a[-1], -1, m)
    return [c * inv % m for c in a]


def m_gcd(a: Modp, b: Modp, p: int) -> Modp:
    """The monic gcd over ``Z/p`` (``p`` prime)."""
    while b:
        a, b = b, m_divmod(a, b, p)[1]
    return m_monic(a, p)


def m_gcdex(a: Modp, b: Modp, p: int) -> tuple[Modp, Modp, Modp]:
    """``(s, t, g)`` with ``s*a + t*b == g``, ``g`` the monic gcd over ``Z/p``."""
    r0, r1 = a, b
    s0: Modp = [1]
    s1: Modp = []
    t0: Modp = []
    t1: Modp = [1]
    while r1:
        q, r = m_divmod(r0, r1, p)
        r0, r1 = r1, r
        s0, s1 = s1, m_sub(s0, m_mul(q, s1, p), p)
        t0, t1 = t1, m_sub(t0, m_mul(q, t1, p), p)
    inv = pow(r0[-1], -1, p)
    return [c * inv % p for c in s0], [c * inv % p for c in t0], [c * inv % p for c in r0]


def m_powmod(a: Modp, e: int, f: Modp, p: int) -> Modp:
    """``a**e`` modulo the polynomial ``f`` over ``Z/p``."""
    result: Modp = [1]
    base = m_divmod(a, f, p)[1]
    while e:
        if e & 1:
            result = m_divmod(m_mul(result, base, p), f, p)[1]
        e >>= 1
        if e:
            base = m_divmod(m_mul(base, base, p), f, p)[1]
    return result


def _distinct_degree(f: Modp, p: int) -> list[tuple[Modp, int]]:
    """Distinct-degree factors of a monic square-free ``f``: ``[(g, d), ...]``, ``g`` of the factors of degree ``d``."""
    out: list[tuple[Modp, int]] = []
    h: Modp = [0, 1]
    d = 0
    while len(f) - 1 >= 2 * (d + 1):
        d += 1
        h = m_powmod(h, p, f, p)  # h = x**(p**d) mod f
        g = m_gcd(f, m_sub(h, [0, 1], p), p)
        if len(g) > 1:
            out.append((g, d))
            f = m_divmod(f, g, p)[0]
            h = m_divmod(h, f, p)[1]
    if len(f) > 1:
        out.append((f, len(f) - 1))
    return out


def _equal_degree(g: Modp, d: int, p: int, rng: random.Random) -> list[Modp]:
    """The monic irreducible factors (each of degree ``d``) of a monic ``g`` (Cantor-Zassenhaus, ``p`` odd)."""
    done: list[Modp] = []
    todo = [g]
    e = (p**d - 1) // 2
    while todo:
        h = todo.pop()
        if len(h) - 1 == d:
            done.append(h)
            continue
        while True:
            a = m_trim([rng.randrange(p) for _ in range(len(h) - 1)])
            if len(a) < 2:
                continue
            b = m_sub(m_powmod(a, e, h, p), [1], p)
            s = m_gcd(h, b, p)
            if 1 < len(s) < len(h):
                todo.append(s)
                todo.append(m_divmod(h, s, p)[0])
                break
    return done


def m_factor_squarefree(f: Modp, p: int, seed: int = 0) -> list[Modp]:
    """The monic irreducible factors over ``Z/p`` (``p`` an odd prime) of a monic square-free ``f``."""
    rng = random.Random(seed)
    out: list[Modp] = []
    for g, d in _distinct_degree(f, p):
        out.extend(_equal_degree(g, d, p, rng))
    return out


def _lift_pair(f: list[int], g: Modp, h: Modp, s: Modp, t: Modp, m: int) -> tuple[Modp, Modp, Modp, Modp]:
    """One quadratic Hensel step: ``f == g*h`` mod ``m`` (``h`` monic, ``s*g + t*h == 1``) to mod ``m**2``."""
    mm = m * m
    e = m_sub(m_reduce(f, mm), m_mul(g, h, mm), mm)
    q, r = m_divmod(m_mul(s, e, mm), h, mm)
    g2 = m_add(g, m_add(m_mul(t, e, mm), m_mul(q, g, mm), mm), mm)
    h2 = m_add(h, r, mm)
    b = m_sub(m_add(m_mul(s, g2, mm), m_mul(t, h2, mm), mm), [1], mm)
    c, d = m_divmod(m_mul(s, b, mm), h2, mm)
    s2 = m_sub(s, d, mm)
    t2 = m_sub(t, m_add(m_mul(t, b, mm), m_mul(c, g2, mm), mm), mm)
    return g2, h2, s2, t2


def hensel_lift(f: list[int], factors: list[Modp], p: int, k: int) -> list[Modp]:
    """Monic factors mod ``p**k`` of ``f`` lifting its monic factors mod ``p`` (``f == lc * prod`` mod ``p``)."""
    target = p**k
    lifted: list[Modp] = []
    cur = list(f)
    for i in range(len(factors) - 1):
        h = factors[i]
        lc = cur[-1] % p
        rest: Modp = [lc]
        for other in factors[i + 1 :]:
            rest = m_mul(rest, other, p)
        s, t, _ = m_gcdex(rest, h, p)
        m = p
        g = rest
        while m < target:
            g, h, s, t = _lift_pair(cur, g, h, s, t, m)
            m = m * m
        lifted.append(m_reduce(h, target))
        g = m_reduce(g, target)
        cur = [c - target if c > target // 2 else c for c in g]
    lifted.append(m_monic(m_reduce(cur, target), target))
    return lifted
