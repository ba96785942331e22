"""Sums of a unit and a trig function as factors: ``(1 - g)*(1 + g)`` and ``sin(u)**2/(1 - cos(u))``.

Two rules of the ``trig`` family (:mod:`.trig`) that read a factor ``1 +- g`` of a product: the difference of
squares, which the relations then finish, and a square over one minus its Pythagorean partner.
"""

from __future__ import annotations

from typing import Any

from ..core import Term, get_op
from .numbers import const_like, number, power, split_coefficient
from .trig_terms import Reading, contains, factor_terms, key_of, monomial, read_term, size

__all__ = ["difference_of_squares", "square_over_one_minus"]

ADD, MUL = get_op("add"), get_op("mul")


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
