"""The heuristic gcd (Char, Geddes and Gonnet): gcds of integers at a large evaluation point, lifted back.

For integer polynomials ``a``, ``b`` and an atom ``x``: evaluate both at ``x = xi`` (``xi`` beyond
twice their coefficients), take the gcd of the images (integers, or polynomials in one atom fewer,
the same way), and read the result back in ``xi``-adic digits (each coefficient in the symmetric
range) as a polynomial in ``x``. Its primitive part is the gcd when it divides both ``a`` and ``b``,
which is checked by exact division; after a few larger points the answer is None and the caller
falls back to the subresultant algorithm (:mod:`.gcd`). The depth is the number of atoms.
"""

from __future__ import annotations

import math
from typing import Final

from ..core.term import Term
from .division import p_exact_div
from .monomials import ONE, mono_mul
from .ring import Budget, Poly, p_eval, p_primitive

__all__ = ["heu_gcd"]

#: evaluation points tried before giving up
_TRIES: Final = 6


def _max_norm(p: Poly) -> int:
    return max(abs(int(c)) for c in p.values())


def _lift(h: Poly, x: Term, xi: int) -> Poly:
    """The polynomial in ``x`` whose value at ``xi`` is ``h``, in symmetric ``xi``-adic digits."""
    out: Poly = {}
    half = xi // 2
    k = 0
    rest = {m: int(c) for m, c in h.items()}
    while rest:
        nxt: dict = {}
        power = ((x, k),) if k else ONE
        for m, c in rest.items():
            d = c % xi
            if d > half:
                d -= xi
            if d:
                out[mono_mul(m, power)] = d
            q = (c - d) // xi
            if q:
                nxt[m] = q
        rest = nxt
        k += 1
    return out


def heu_gcd(a: Poly, b: Poly, atoms: list[Term], budget: Budget) -> Poly | None:
    """The gcd of two non-zero integer polynomials over ``atoms`` (up to sign), or None when undecided."""
    if not atoms:
        return {ONE: math.gcd(int(a.get(ONE, 0)), int(b.get(ONE, 0)))}
    x, rest = atoms[-1], atoms[:-1]
    ca, pa = p_primitive(a)
    cb, pb = p_primitive(b)
    content = math.gcd(int(ca), int(cb))
    xi = 2 * min(_max_norm(pa), _max_norm(pb)) + 29
    for _ in range(_TRIES):
        ea, eb = p_eval(pa, {x: xi}), p_eval(pb, {x: xi})
        if ea and eb:
            h = heu_gcd(ea, eb, rest, budget)
            if h is not None:
                g = p_primitive(_lift(h, x, xi))[1]
                if g and _int_quotient(pa, g, budget) and _int_quotient(pb, g, budget):
                    return {m: c * content for m, c in g.items()}
        xi = xi * 73794 // 27011
    return None


def _int_quotient(p: Poly, g: Poly, budget: Budget) -> bool:
    q = p_exact_div(p, g, budget)
    return q is not None and all(c.__class__ is int for c in q.values())
