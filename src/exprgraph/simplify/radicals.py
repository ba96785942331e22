"""Radicals of exact integers: simple denesting, ``sqrt(a + b*sqrt(c)) -> sqrt(p) + sqrt(q)``.

``sqrt(a + b*sqrt(c))`` with integers ``a > 0``, ``b``, ``c > 0`` denests when ``a**2 - b**2*c`` is
a perfect square ``d**2``: it is ``sqrt((a + d)/2) + sign(b)*sqrt((a - d)/2)`` (square both sides:
``a + 2*sign(b)*sqrt((a**2 - d**2)/4) = a + b*sqrt(c)``; ``a >= |b|*sqrt(c)`` makes both sides
real and ``a + d >= a - d`` makes the right side nonnegative). Only integer halves are taken, and a
half that is itself a square becomes its root (``sqrt(3 + 2*sqrt(2)) -> sqrt(2) + 1``). Exact
constants are exact values, so the rule is safe: both sides are the same number until evaluated.
Rationalised denominators (``1/(1 + sqrt(2))``) are not done here: constant folding turns such a
term into a float before a rule sees it.
"""

from __future__ import annotations

import math

from ..core import Term, const, get_op
from .logs import Family

__all__ = ["RADICAL_REWRITES", "denest_sqrt"]

ADD, MUL, SQRT, NEG = get_op("add"), get_op("mul"), get_op("sqrt"), get_op("neg")
CONST = get_op("const")


def _int(t: Term) -> int | None:
    """The value of an int64 constant (None for anything else)."""
    return t.attr if t.op is CONST and t.attr.__class__ is int else None


def _surd(t: Term) -> tuple[int, int] | None:
    """``b*sqrt(c)`` (or ``sqrt(c)``, ``-sqrt(c)``) as ``(b, c)`` for int constants; else None."""
    if t.op is SQRT and _int(t.args[0]) is not None:
        return 1, t.args[0].attr
    if t.op is NEG and t.args[0].op is SQRT:
        inner = _surd(t.args[0])
        return None if inner is None else (-inner[0], inner[1])
    if t.op is MUL and len(t.args) == 2:
        for k, s in (t.args, tuple(reversed(t.args))):
            b = _int(k)
            if b is not None and s.op is SQRT and _int(s.args[0]) is not None:
                return b, s.args[0].attr
    return None


def _root(n: int) -> Term:
    """``sqrt(n)`` of a nonnegative int, as an int constant when ``n`` is a square."""
    r = math.isqrt(n)
    return const(r) if r * r == n else SQRT(const(n))


def denest_sqrt(t: Term) -> Term | None:
    # sqrt(a + b*sqrt(c)) -> sqrt((a + d)/2) + sign(b)*sqrt((a - d)/2) where d**2 = a**2 - b**2*c (ints, a > 0)
    (s,) = t.args
    if s.op is not ADD or len(s.args) != 2 or t.shape != ():
        return None
    for x, y in (s.args, tuple(reversed(s.args))):
        a, surd = _int(x), _surd(y)
        if a is None or surd is None:
            continue
        b, c = surd
        square = a * a - b * b * c
        if a <= 0 or c <= 0 or b == 0 or square < 0 or abs(a) > 2**31 or abs(b) > 2**31 or c > 2**31:
            continue
        d = math.isqrt(square)
        if d * d != square or (a + d) % 2:
            continue
        p, q = _root((a + d) // 2), _root((a - d) // 2)
        return ADD(p, q) if b > 0 else ADD(p, NEG(q))
    return None


#: ``(name, handler, root ops, unsafe, algebra)`` of each rule
RADICAL_REWRITES: Family = [
    (
        "denest_sqrt",
        denest_sqrt,
        ("sqrt",),
        False,
        "sqrt(a + b*sqrt(c)) -> sqrt(p) + sqrt(q) (ints, a**2 - b**2*c square)",
    ),
]
