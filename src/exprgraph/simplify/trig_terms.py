"""Reading canonical sums and products as monomials, for the trigonometric family (:mod:`.trig`).

A term of a sum is read as ``coefficient * prod(base**exponent)``: nested products are flattened
(the safe canonical form keeps them binary), ``(b**k)**-1`` is ``b**-k``, numeric factors go into
the coefficient (an exact :class:`~fractions.Fraction`, or the reading fails). Each base has a
*key*: a trigonometric or exponential base ``f(w)`` is keyed by ``f`` and the linear form of ``w``
(``{x: 2}`` for ``2*x``, ``{x: -1, y: -1}`` for ``-1*(x + y)`` or ``-1*x + -1*y``), so the rules
find ``cos(2*u)`` or ``exp(-u)`` from ``u`` however the canonical pass spells them; any other base
is keyed by itself.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

from ..core import Term, get_op
from ..core.dtypes import is_float
from .numbers import const_like, cost, number, power, scaled, split_coefficient

__all__ = [
    "FUNCTIONS",
    "Key",
    "Monomial",
    "Reading",
    "read_term",
    "sum_operands",
    "product_factors",
    "linear",
    "key_of",
    "size",
    "scale",
    "plus",
    "contains",
    "with_factors",
    "coefficient",
    "monomial",
    "factor_terms",
    "half",
]

ADD, MUL, POW = get_op("add"), get_op("mul"), get_op("pow")
CONST = get_op("const")
#: the ops whose bases are keyed by their argument's linear form
FUNCTIONS = frozenset({"sin", "cos", "tan", "sinh", "cosh", "tanh", "exp"})

#: a linear form: ``frozenset({(term, coefficient)})`` (the constant under None)
Linear = frozenset
#: a base's key: ``(op name, linear form)``, or ``(None, base)`` for any other base
Key = tuple
#: factors of a term: key -> exponent
Monomial = dict
#: a term read: its coefficient, its factors by key, and the base term of each key
Reading = tuple[Fraction, dict[Key, Any], dict[Key, Term]]


#: distinct nodes of a term other than scalar constants, n-ary nodes as n - 1: the simplifier's measure (cached)
size = cost


def _exact(v: Any) -> Fraction | None:
    """``v`` as an exact fraction (None for nan and inf)."""
    if v.__class__ is float and not math.isfinite(v):
        return None
    return Fraction(v)


_ONE = Fraction(1)


def linear(t: Term) -> Linear | None:
    """The linear form of ``t`` over its non-sum, non-numeric parts (None past 64 parts or for nan/inf)."""
    if t.op is not ADD and t.op is not MUL and number(t) is None:
        return frozenset(((t, _ONE),))  # one part (a symbol, a function): the common case, without a walk
    total: dict[Term | None, Fraction] = {}
    stack: list[tuple[Fraction, Term]] = [(Fraction(1), t)]
    while stack:
        c, a = stack.pop()
        v = number(a)
        if v is not None:
            f = _exact(v)
            if f is None:
                return None
            total[None] = total.get(None, Fraction(0)) + c * f
        elif a.op is ADD:
            stack.extend((c, b) for b in a.args)
        elif a.op is MUL and len(a.args) >= 2 and number(a.args[0]) is not None:
            f = _exact(number(a.args[0]))
            if f is None:
                return None
            rest = a.args[1:]
            stack.append((c * f, rest[0] if len(rest) == 1 else MUL(*rest)))
        else:
            total[a] = total.get(a, Fraction(0)) + c
        if len(total) > 64:
            return None
    return frozenset((k, v) for k, v in total.items() if v != 0)


def key_of(base: Term) -> Key:
    """The key of a base: ``(op, linear form of its argument)`` for the FUNCTIONS, else ``(None, base)``."""
    if base.op.name in FUNCTIONS and len(base.args) == 1:
        lin = linear(base.args[0])
        if lin is not None:
            return (base.op.name, lin)
    return (None, base)


def _flattened(t: Term, op: Any) -> list[Term]:
    """The operands of ``t`` under nested nodes of ``op``, left to right (iteratively)."""
    out: list[Term] = []
    stack = [t]
    while stack:
        a = stack.pop()
        if a.op is op:
            stack.extend(reversed(a.args))
        else:
            out.append(a)
    return out


def sum_operands(t: Term) -> list[Term]:
    """The operands of a sum, nested sums flattened."""
    return _flattened(t, ADD)


def product_factors(t: Term) -> list[Term]:
    """The factors of a product, nested products flattened."""
    return _flattened(t, MUL)


def _base_exponent(f: Term) -> tuple[Term, Any]:
    """``b**e`` as ``(b, e)`` for a numeric e, ``(b**k)**-1`` as ``(b, -k)``; else ``(f, 1)``."""
    if f.op is POW:
        e = number(f.args[1])
        if e is not None:
            inner = f.args[0]
            if e == -1 and inner.op is POW and number(inner.args[1]) is not None:
                return inner.args[0], -number(inner.args[1])  # type: ignore[operator]
            return inner, e
    return f, 1


def read_term(t: Term, strict: bool = False) -> Reading | None:
    """``t`` as ``(coefficient, {key: exponent}, {key: base})``; None when a coefficient is not exact, or
    (``strict``, the safe strength) when powers of one base with exponents of opposite signs meet."""
    coef = Fraction(1)
    exps: dict[Key, Any] = {}
    bases: dict[Key, Term] = {}
    for f in product_factors(t):
        v = number(f)
        if v is not None:
            c = _exact(v)
            if c is None:
                return None
            coef *= c
            continue
        b, e = _base_exponent(f)
        k = key_of(b)
        if k in bases and bases[k] is not b:
            return None  # two spellings of one base (a sum's association): not read as one
        bases[k] = b
        if strict and k in exps and (exps[k] > 0) != (e > 0):
            return None  # b**m * b**-n is nan where b is 0 or inf; b**(m - n) need not be (y*sin(x)/y)
        exps[k] = exps.get(k, 0) + e
        if exps[k] == 0:
            del exps[k]
    return coef, exps, bases


# -- linear forms and monomials --------------------------------------------------------------------


def scale(lin: frozenset, c: int | Fraction) -> frozenset:
    return frozenset((k, v * c) for k, v in lin)


def plus(a: frozenset, b: frozenset, sign: int) -> frozenset:
    total: dict[Any, Fraction] = dict(a)
    for k, v in b:
        total[k] = total.get(k, Fraction(0)) + sign * v
    return frozenset((k, v) for k, v in total.items() if v != 0)


def contains(exps: dict[Key, Any], want: dict[Key, int]) -> dict[Key, Any] | None:
    """``exps`` without ``want`` (each exponent of the same sign, no smaller), or None."""
    rest = dict(exps)
    for k, e in want.items():
        have = rest.get(k)
        if have is None or (have > 0) != (e > 0) or abs(have) < abs(e):
            return None
        rest[k] = have - e
        if rest[k] == 0:
            del rest[k]
    return rest


def with_factors(exps: dict[Key, Any], more: dict[Key, int]) -> dict[Key, Any]:
    out = dict(exps)
    for k, e in more.items():
        out[k] = out.get(k, 0) + e
        if out[k] == 0:
            del out[k]
    return out


def coefficient(c: Fraction, like: Term, lone: bool = False) -> Term | None:
    """The coefficient ``c`` as a constant next to ``like`` (None when no float holds it exactly); a ``lone``
    constant of a float term is a float (``sin(x)**2 + cos(x)**2 -> 1.0``), a coefficient an int where it can be."""
    whole = c.denominator == 1 and abs(c) <= 2**53 and not (lone and is_float(like.dtype))
    v: int | float = int(c) if whole else float(c)
    if Fraction(v) != c:
        return None
    return const_like(v, like)


def monomial(c: Fraction, factors: list[Term], like: Term) -> Term | None:
    """``c * prod(factors)`` (``c`` alone for no factors, the product alone for c == 1)."""
    if not factors:
        return coefficient(c, like, lone=True)
    body = factors[0] if len(factors) == 1 else MUL(*factors)
    if c == 1:
        return body
    k = coefficient(c, like)
    return None if k is None else MUL(k, body)


def factor_terms(exps: dict[Key, Any], bases: dict[Key, Term]) -> list[Term] | None:
    out = []
    for k, e in exps.items():
        p = power(bases[k], e)
        if p is None:
            return None
        out.append(p)
    return out


def half(w: Term) -> Term | None:
    """``w/2`` spelled as the canonical pass would (``2*x -> x``, ``2*x + 2*y -> x + y``), or ``0.5*w``."""
    if w.op is ADD:
        parts = [half(a) for a in w.args]
        return None if any(p is None for p in parts) else ADD(*parts)
    c, rest = split_coefficient(w)
    if number(w) is not None or c.__class__ not in (int, float) or c != c:
        return None
    if c == 1:
        k = const_like(0.5, w)
        return None if k is None else MUL(k, w)
    h = c // 2 if c.__class__ is int and c % 2 == 0 else c / 2
    return None if Fraction(h) * 2 != Fraction(c) else scaled(h, rest)
