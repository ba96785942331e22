"""Rational-function algebra on terms: ``cancel``, ``together`` and ``apart``, by :mod:`exprgraph.poly`.

A term is read as a rational function over its atoms (:func:`exprgraph.poly.to_ratio`: divisions
and integer powers are field operations, ``sin(x)`` and the like opaque atoms). The results equal
the input exactly wherever the input's denominators are non-zero (``(x**2 - 1)/(x + 1) -> x - 1``
is -2 at ``x = -1``, where the input is nan), as cancelling a fraction always is. Rational
coefficients are written as true divisions of int constants. Work is budgeted
(:class:`~exprgraph.poly.Budget`): :class:`~exprgraph.errors.TermTooLargeError` past it.
"""

from __future__ import annotations

from fractions import Fraction

from ..core import Term, as_term, const, get_op
from ..poly import (
    Budget,
    Poly,
    Ratio,
    coeff_term,
    from_dense,
    from_poly,
    negated,
    normal_sign,
    p_primitive,
    p_scale,
    r_apart,
    r_cancel,
    same_kind,
    sum_term,
    to_ratio,
)
from .polynomial import _atom_of

__all__ = ["cancel", "together", "apart", "fraction_term"]

ADD, SUB, MUL, NEG = get_op("add"), get_op("sub"), get_op("mul"), get_op("neg")
TRUEDIV, POW = get_op("truediv"), get_op("pow")


def fraction_term(r: Ratio, like: Term) -> Term:
    """``n/d`` with both sides integral (the content of ``n`` split into its numerator and denominator)."""
    n, d = r
    if len(d) == 1 and d.get((), 0) == 1:
        return from_poly(n, like=like)
    c, prim = p_primitive(n)
    f = Fraction(c)
    top: Poly = p_scale(prim, f.numerator)
    bottom = p_scale(d, f.denominator)
    return TRUEDIV(from_poly(top), from_poly(bottom))


def cancel(term: Term | float, budget: Budget | None = None) -> Term:
    """``term`` as one fraction ``p/q`` in lowest terms, ``p`` and ``q`` expanded.

    >>> from exprgraph import symbols
    >>> x = symbols("x")
    >>> print(cancel((x**2 - 1)/(x + 1)))
    x - 1
    """
    term = as_term(term)
    return same_kind(fraction_term(r_cancel(to_ratio(term, budget), budget), term), term)


def together(term: Term | float, budget: Budget | None = None) -> Term:
    """``term`` as one fraction over the least common multiple of its denominators (common factors kept).

    >>> from exprgraph import symbols
    >>> x, y = symbols("x y")
    >>> print(together(1/x + 1/y))
    (x + y)/(x*y)
    """
    term = as_term(term)
    return same_kind(fraction_term(to_ratio(term, budget), term), term)


def apart(term: Term | float, x: Term, budget: Budget | None = None) -> Term:
    """Partial fractions in ``x`` over Q: a polynomial plus ``A/f**j`` with ``f`` irreducible, ``deg A < deg f``.

    ``term`` must be a rational function of ``x`` alone (ValueError otherwise).

    >>> from exprgraph import symbols
    >>> x = symbols("x")
    >>> print(apart(1/(x**2 - 1), x))
    1/(2*(x - 1)) - 1/(2*(x + 1))
    """
    term = as_term(term)
    atom = _atom_of(as_term(x), budget)
    poly, parts = r_apart(to_ratio(term, budget), atom)
    terms: list[tuple[bool, Term]] = []
    if poly:
        terms.append((False, from_poly(from_dense(poly, atom))))
    for num, f, j in parts:
        fc, prim = p_primitive(from_dense(num, atom))
        if normal_sign(prim) is not prim:  # num == fc * prim with prim's leading coefficient positive
            fc, prim = -fc, normal_sign(prim)
        c = Fraction(fc)
        top = from_poly(p_scale(prim, abs(c.numerator)))
        base = from_poly(from_dense(f, atom))
        den = base if j == 1 else POW(base, const(j))
        bottom = den if c.denominator == 1 else MUL(coeff_term(c.denominator), den)
        terms.append((c < 0, TRUEDIV(top, bottom)))
    if not terms:
        return same_kind(from_poly({}, like=term), term)
    if len(terms) == 1 and terms[0][0]:
        return same_kind(negated(terms[0][1]), term)
    return same_kind(sum_term(terms), term)
