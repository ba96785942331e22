"""Sums of a unit and a trig function as factors: ``(1 - g)*(1 + g)`` and ``sin(u)**2/(1 - cos(u))``.

Two rules of the ``trig`` family (:mod:`.trig`) that read a factor ``1 +- g`` of a product: the difference of
squares, which the relations then finish, and a square over one minus its Pythagorean partner; and one that
reads the unit ``sin(u)**2 + cos(u)**2`` under a common factor ``sin(u)**n`` (:func:`pythagoras_factor`).
"""

from __future__ import annotations

from typing import Any

from ..core import Term, get_op
from .numbers import const_like, number, power, split_coefficient
from .trig_terms import Reading, contains, factor_terms, key_of, monomial, read_term, size

__all__ = ["difference_of_squares", "square_over_one_minus", "pythagoras_factor"]

ADD, MUL, POW = get_op("add"), get_op("mul"), get_op("pow")
SIN, COS = get_op("sin"), get_op("cos")


def _unit_and_term(s: Term) -> tuple[Any, Any, Term] | None:
    """A two-term sum ``k + c*g`` (k, c = +-1) as ``(k, c, g)``, else None."""
    if s.op is not ADD or len(s.args) != 2:
        return None
    for a, b in (s.args, s.args[::-1]):
        k = number(a)
        c, g = split_coefficient(b)
        if k in (1, -1) and c in (1, -1) and number(g) is None:
            return k, c, g
    return None


def difference_of_squares(t: Term) -> Term | None:
    # (1 - g)*(1 + g) -> 1 - g**2 and (g - 1)*(g + 1) -> -(1 - g**2) for g = sin, cos, tanh or cosh of u,
    # which the relations then finish (cos(u)**2, -sin(u)**2, cosh(u)**-2, sinh(u)**2): the middle terms
    # cancel in the exact product, and the result is a stable form of it (nan or inf where it is)
    if len(t.args) != 2:
        return None
    a, b = (_unit_and_term(f) for f in t.args)
    if a is None or b is None or a[2] is not b[2] or a[2].op.name not in ("sin", "cos", "tanh", "cosh"):
        return None
    (ka, ca, g), (kb, cb, _) = a, b
    if ka * cb + kb * ca != 0:
        return None
    square = power(g, 2)
    one, minus = const_like(1, g), const_like(-1, g)
    if square is None or one is None or minus is None:
        return None
    diff = ADD(one, MUL(minus, square))
    return diff if ka * kb == 1 else MUL(minus, diff)


_OTHER = {"sin": "cos", "cos": "sin"}


def square_over_one_minus(t: Term, read: Reading | None = None) -> Term | None:
    # sin(u)**2/(1 - cos(u)) -> 1 + cos(u), sin(u)**2/(1 + cos(u)) -> 1 - cos(u) (and sin, cos swapped):
    # (1 - g**2)/(1 - g) = 1 + g; unsafe: 0/0 = nan at u = 0, where 1 + cos(u) is 2 (``read``: t read already)
    read = read or read_term(t)
    if read is None:
        return None
    coef, exps, bases = read
    for k, e in exps.items():
        found = _unit_and_term(bases[k]) if e == -1 else None
        if found is None or found[0] != 1 or found[2].op.name not in _OTHER:
            continue
        _, c, g = found
        square = get_op(_OTHER[g.op.name])(g.args[0])
        rest = contains(exps, {k: -1, key_of(square): 2})
        others = None if rest is None else factor_terms(rest, bases)
        minus, one = const_like(-c, g), const_like(1, g)
        if others is None or minus is None or one is None:
            continue
        out = monomial(coef, [*others, ADD(one, MUL(minus, g))], t)
        if out is not None and size(out) <= size(t):
            return out
    return None


def _one_function(reading: Reading) -> tuple[Term, int] | None:
    """``(g, n)`` for a reading of ``g**n`` alone (``g`` a sin or cos, ``n`` a positive int), else None."""
    _, exps, bases = reading
    if len(exps) != 1:
        return None
    ((k, n),) = exps.items()
    g = bases[k]
    return (g, n) if g.op.name in _OTHER and n.__class__ is int and n > 0 else None


def _power_of_function(a: Term) -> bool:
    """Whether ``a`` is ``g**n`` or ``c*g**n`` for a sin or cos ``g`` (a cheap check before reading it)."""
    if a.op is MUL:
        a = a.args[-1]
    if a.op is not POW:
        return False
    op = a.args[0].op
    return op is SIN or op is COS


def pythagoras_factor(t: Term) -> Term | None:
    # c*g(u)**(n + 2) + c*g(u)**n*h(u)**2 -> c*g(u)**n for {g, h} = {sin, cos}, n >= 1: the sum is
    # c*g(u)**n*(sin(u)**2 + cos(u)**2), within a few ulps of c*g(u)**n for every finite u (|sin|, |cos| <= 1:
    # no term overflows that c*g(u)**n does not), whose exact value it is; at u = +-inf or nan both are nan
    # (g(u) is), so unlike sin(u)**2 + cos(u)**2 -> 1 it needs no finite u; u is spelled once (safe)
    args = t.args
    if len(args) != 2 or not (_power_of_function(args[0]) or _power_of_function(args[1])):
        return None  # no operand g(u)**n (or c*g(u)**n): rejected before any reading
    ra, rb = read_term(args[0], strict=True), read_term(args[1], strict=True)
    if ra is None or rb is None or ra[0] != rb[0] or ra[0] == 0:
        return None
    for big, mixed in ((ra, rb), (rb, ra)):
        found = _one_function(big)
        if found is None or len(mixed[1]) != 2:
            continue
        g, n = found
        h = get_op(_OTHER[g.op.name])(g.args[0])
        kg, kh = key_of(g), key_of(h)
        if n < 3 or mixed[1].get(kg) != n - 2 or mixed[1].get(kh) != 2:
            continue
        if mixed[2][kg] is not g or mixed[2][kh] is not h:
            continue  # u spelled twice: not read as one
        p = power(g, n - 2)
        return None if p is None else monomial(big[0], [p], t)
    return None
