"""Polynomial algebra on terms: ``expand``, ``collect`` and ``factor``, by :mod:`exprgraph.poly`.

A term is read as a polynomial over its *atoms* (:func:`exprgraph.poly.to_poly`): sums, products,
negations, divisions by constants and integer powers are algebra; ``sin(x)``, ``exp(y)``, ``x**0.5``
and symbols are opaque atoms, their arguments treated the same way first. Results are built back
with exact coefficients (a rational ``p/q`` as a true division of two int constants); their
value equals the input's exactly, up to the roundings of evaluating either in floats. ``factor``
reads divisions too (a rational function is factored above and below the line), so, like
:func:`~exprgraph.simplify.rational.cancel`, its result equals the input wherever the input's
denominators are non-zero. Work is budgeted (:class:`~exprgraph.poly.Budget`):
:class:`~exprgraph.errors.TermTooLargeError` past it, never a hang.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from ..core import Term, as_term, const, get_op, postorder
from ..core.dtypes import FLOAT64
from ..errors import ExprgraphError
from ..eval import evaluate
from ..poly import (
    ONE,
    Budget,
    Poly,
    Ratio,
    coeff_term,
    from_poly,
    negated,
    p_atoms,
    p_factor,
    product_term,
    r_cancel,
    same_kind,
    sum_term,
    to_poly,
    to_ratio,
    to_univariate,
)

__all__ = ["expand", "collect", "factor", "factored", "collapse_to_power"]

ADD, SUB, MUL, NEG = get_op("add"), get_op("sub"), get_op("mul"), get_op("neg")
TRUEDIV, POW = get_op("truediv"), get_op("pow")


def expand(term: Term | float, budget: Budget | None = None) -> Term:
    """``term`` multiplied out: a sum of monomials with like terms collected, by decreasing degree.

    >>> from exprgraph import symbols
    >>> x = symbols("x")
    >>> print(expand((x + 1)*(x + 1) - x*x))
    2*x + 1
    """
    term = as_term(term)
    return same_kind(from_poly(to_poly(term, budget), like=term), term)


def _atom_of(x: Term, budget: Budget | None) -> Term:
    """The atom ``x`` stands for (a symbol, or an opaque term such as ``sin(y)``)."""
    p = to_poly(x, budget)
    if len(p) == 1:
        for m, c in p.items():
            if c == 1 and len(m) == 1 and m[0][1] == 1:
                return m[0][0]
    raise ValueError(f"collect: {x} is not an atom (a symbol or an opaque term such as sin(y))")


def collect(term: Term | float, x: Term, budget: Budget | None = None) -> Term:
    """``term`` expanded and grouped by the powers of ``x``: ``sum(c_k * x**k)``, highest power first.

    >>> from exprgraph import symbols
    >>> a, b, x = symbols("a b x")
    >>> print(collect(a*x + b*x + x**2 + 1, x))
    x**2 + (a + b)*x + 1
    """
    term = as_term(term)
    atom = _atom_of(as_term(x), budget)
    groups = to_univariate(to_poly(term, budget), atom)
    if not groups:
        return same_kind(from_poly({}, like=term), term)
    parts: list[tuple[bool, Term]] = []
    for k in sorted(groups, reverse=True):
        coef = groups[k]
        negative = len(coef) == 1 and next(iter(coef.values())) < 0
        if negative:
            coef = {m: -c for m, c in coef.items()}
        parts.append((negative, _times_power(coef, atom, k)))
    return same_kind(sum_term(parts), term)


def _times_power(coef: Poly, atom: Term, k: int) -> Term:
    """``coef * atom**k`` (``coef`` a non-zero polynomial without ``atom``)."""
    if not k:
        return from_poly(coef)
    power = atom if k == 1 else POW(atom, const(k))
    if len(coef) == 1 and () in coef:
        f = Fraction(coef[()])
        top = power if f.numerator == 1 else product_term([coeff_term(f.numerator), power])
        return top if f.denominator == 1 else TRUEDIV(top, coeff_term(f.denominator))
    if len(coef) == 1:
        # one monomial: c*m*x**k, flat
        c_term = from_poly(coef)
        if c_term.op is MUL:
            return MUL(*c_term.args, power)
        if c_term.op is not TRUEDIV:
            return MUL(c_term, power)
    return MUL(from_poly(coef), power)


def _product_term(c: int, factors: list[tuple[Poly, int]]) -> Term | None:
    """``|c| * prod f**e`` as one flat product (None for an empty product with ``|c| == 1``)."""
    terms: list[Term] = []
    for f, e in factors:
        base = from_poly(f)
        terms.append(base if e == 1 else POW(base, const(e)))
    if abs(c) != 1:
        terms.insert(0, coeff_term(abs(c)))
    return product_term(terms) if terms else None


def factor(term: Term | float, budget: Budget | None = None) -> Term:
    """``term`` as a product of irreducible polynomials over the integers (above and below a division line).

    >>> from exprgraph import symbols
    >>> x, y = symbols("x y")
    >>> print(factor(x**4 - 1))
    (x - 1)*(x + 1)*(x**2 + 1)
    >>> print(factor(x**2 - y**2))
    (x - y)*(x + y)
    """
    term = as_term(term)
    return same_kind(factored(r_cancel(to_ratio(term, budget), budget), term, budget), term)


def factored(ratio: Ratio, like: Term, budget: Budget | None = None) -> Term:
    """:func:`factor` of a term whose rational function in lowest terms is ``ratio`` (a constant takes
    ``like``'s dtype; :func:`~exprgraph.poly.same_kind` is the caller's)."""
    num, den = ratio
    cn, fn = p_factor(num, budget)
    # p_factor(1) == (1, []): the content 1, no factors (nothing to factor below a line of 1)
    cd, fd = (1, []) if len(den) == 1 and den.get(ONE) == 1 else p_factor(den, budget)
    if not num:
        return from_poly({}, like=like)
    c = Fraction(cn) / Fraction(cd)
    top = _product_term(c.numerator, fn)
    bottom = _product_term(c.denominator, fd)
    out = top if top is not None else const(1)
    if c < 0:
        out = negated(out)  # -(x - 1)*(x + 1): the sign on the first factor
    if bottom is not None:
        out = TRUEDIV(out, bottom)
    return from_poly(to_poly(out), like=like) if not p_atoms(num, den) else out


#: the ops of a polynomial :func:`collapse_to_power` reads, and the most nodes it reads
_POLY_OPS = frozenset({"add", "sub", "mul", "neg", "pow", "truediv", "const", "symbol"})
_COLLAPSE_NODES = 40
#: the points where a polynomial's float value may not be its exact one rounded: infinities, nan, zeros
_EDGE_VALUES = (float("inf"), float("-inf"), float("nan"), 0.0, -0.0)


def _polynomial(t: Term) -> bool:
    """Whether ``t`` is a small polynomial of constants and sums, products, natural powers and divisions by
    constants."""
    nodes = postorder((t,))
    if len(nodes) > _COLLAPSE_NODES:
        return False
    for n in nodes:
        name = n.op.name
        if name not in _POLY_OPS or n.shape:
            return False
        k = n.args[1] if name == "pow" else None
        if k is not None and (k.op.name != "const" or k.attr.__class__ is not int or k.attr < 0):
            return False  # a power with an exponent other than a natural number: not a polynomial's
        if name == "truediv" and n.args[1].op.name != "const":
            return False
    return True


def _reshapes(t: Term) -> bool:
    """Whether an operand of ``t`` is a product or a power of a sum (a form :func:`expand` reshapes; else it has
    nothing to do at ``t``)."""
    for a in t.args:
        op = a.op
        if op is MUL or op is POW:
            for b in a.args:
                if b.op is ADD or b.op is SUB:
                    return True
    return False


def _same_at_edges(t: Term, out: Term, x: Term) -> bool:
    """Whether ``t`` and ``out`` have the same value, bit for bit (two nans alike), at every edge value of ``x``."""
    with np.errstate(all="ignore"):
        for v in _EDGE_VALUES:
            a, b = np.float64(evaluate(t, {x: v})), np.float64(evaluate(out, {x: v}))
            if not ((a != a and b != b) or (a == b and np.signbit(a) == np.signbit(b))):
                return False
    return True


def collapse_to_power(t: Term) -> Term | None:
    # p(x) -> x**k (or -x**k, or c*x) where the float64 polynomial p of one symbol x is exactly x**k (c*x):
    # ((x + 2)*(x - 2) + 4 -> x**2). x**k is one rounding of the exact value (pow is correctly rounded): it
    # overflows only where that value does, and where p's intermediates overflow or cancel p is the less
    # accurate; at x = +-inf, nan, +-0.0 (where p may be nan, or a zero of another sign) p's values are checked
    # to be x**k's, bit for bit, so the rewrite is safe
    if not _reshapes(t) or t.dtype != FLOAT64 or len(t.free_symbols) != 1 or not _polynomial(t):
        return None
    (x,) = t.free_symbols
    if not x.is_symbol or x.dtype != FLOAT64:
        return None
    try:
        p = to_poly(t, Budget(2_000))
    except (ExprgraphError, ValueError, ZeroDivisionError, ArithmeticError):
        return None
    if len(p) != 1:
        return None
    ((m, c),) = p.items()
    if len(m) != 1 or m[0][0] is not x:
        return None
    k = m[0][1]
    c = Fraction(c)
    if k == 1 and c != 0 and Fraction(float(c)) == c:
        out = x if c == 1 else MUL(const(-1) if c == -1 else const(float(c)), x)
    elif c in (1, -1):
        out = POW(x, const(k)) if c == 1 else MUL(const(-1), POW(x, const(k)))
    else:
        return None
    return out if _same_at_edges(t, out, x) else None
