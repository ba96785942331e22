"""Canonical forms of dimension expressions: a term, a text or an int to its canonical term, text or int.

The entry points of the simplifier (``simplify_term``, ``simplify_dim``, ``simplify_expression``,
``simplify_two_expressions``): the polynomial normal form of a term (:mod:`.regions`) or of a text
(:mod:`.polyparse`), printed back as a canonical term (:mod:`.normal`) or text. Results are cached
per term (terms are interned, so this is always sound), and per text; :func:`.context.clear_caches`
empties them. Stage *print* (:mod:`.stages`): the canonical forms handed out.
"""

from __future__ import annotations

from typing import Any

from ..core.term import Term
from ..errors import DimExpressionError
from .combine import combine_terms
from .context import Context, context
from .normal import atom_key, mono_key, top_term
from .parse import parse_expression
from .polyparse import read_polynomial
from .polyprint import poly_value
from .regions import to_poly
from .ring import p_add, p_scale
from .terms import CONST, is_dim_term
from .unparse import unparse

__all__ = [
    "to_poly",
    "simplify_term",
    "simplify_dim",
    "simplify_expression",
    "simplify_two_expressions",
]


# -- public API --------------------------------------------------------------------------------------------


def _check_term(term: Any) -> Term:
    if not is_dim_term(term):
        raise TypeError(f"a dimension expression must be an int64 scalar term, not {term!r}")
    return term


def simplify_term(term: Term, *, positive: bool = False) -> Term:
    """Canonical form of an int64 scalar term (names are >= 0, or >= 1 when ``positive``)."""
    ctx = context(positive)
    top = ctx.tops.get(term)
    if top is None:
        _check_term(term)
        ctx.maybe_trim()
        top = top_term(to_poly(term, ctx))
        ctx.tops[term] = top
    return top


def simplify_dim(dim: int | Term, *, positive: bool = False) -> int | Term:
    """A shape entry simplified: ints pass through, a term whose value is constant becomes an int.

    This is the hook for the core's shape rules (broadcasting, concatenation, dot).
    """
    if not isinstance(dim, Term):
        return dim
    top = simplify_term(dim, positive=positive)
    if top.op is CONST:
        return int(top.attr)
    return top


def simplify_expression(expr: int | str | Term, *, positive: bool = False) -> int | str | Term:
    """Simplify a dimension expression.

    An int comes back as is; a string gives an int when its value is constant, else the
    canonical text (an unparsable string comes back unchanged, as the reference does); a term
    gives an int or its canonical term.

    >>> simplify_expression("2*batch//batch")
    2
    >>> simplify_expression("(seq+7)//8*8")
    '8*((7+seq)//8)'
    """
    if expr.__class__ is int:
        return expr
    if expr.__class__ is str:
        ctx = context(positive)
        result = ctx.texts.get(expr)
        if result is None:
            ctx.maybe_trim()
            result = _simplify_text(expr, ctx)
            ctx.texts[expr] = result
        return result
    if expr.__class__ is Term:
        return simplify_dim(expr, positive=positive)
    if isinstance(expr, int) and not isinstance(expr, bool):
        return int(expr)
    raise TypeError(f"simplify_expression() takes an int, a string or a term, not {type(expr).__name__}")


def _simplify_text(text: str, ctx: Context) -> int | str:
    """``simplify_expression`` on a text: the fast path of :mod:`.polyparse`, else parse and simplify the term."""
    p = read_polynomial(text, ctx)  # None: declined
    if p is not None:
        try:
            return poly_value(p)
        except OverflowError:
            pass  # a coefficient outside int64: the general path reports it
    try:
        term = parse_expression(text)
    except DimExpressionError:
        return text
    top = simplify_term(term, positive=ctx.positive)
    if top.op is CONST:
        return int(top.attr)
    return unparse(top)


def _as_term(expr: int | str | Term) -> Term:
    if expr.__class__ is Term:
        return _check_term(expr)
    if isinstance(expr, str):
        return parse_expression(expr)
    if isinstance(expr, int) and not isinstance(expr, bool):
        return parse_expression(str(int(expr)))
    raise TypeError(f"expected an int, a string or a term, not {type(expr).__name__}")


def simplify_two_expressions(expr1: int | str | Term, expr2: int | str | Term, *, positive: bool = False) -> dict:
    """The terms of ``expr1 - expr2`` as ``{monomial text: coefficient}``: empty when they are equal.

    The constant difference, when not zero, is listed under ``"1"``.

    >>> simplify_two_expressions("s52+seq_length", "s52+s70")
    {'s70': -1, 'seq_length': 1}
    """
    ctx = context(positive)
    ctx.maybe_trim()
    p1 = to_poly(_as_term(expr1), ctx)
    p2 = to_poly(_as_term(expr2), ctx)
    # the difference, with the rules across terms (products of sums cancel through their expansions)
    diff = ctx.unwrap(combine_terms(p_add(p1, p_scale(p2, -1)), ctx))
    out: dict[str, int] = {}

    def text(a: Term) -> str:
        return f"({atom_key(a)})" if a in ctx.sums else atom_key(a)  # a sum atom in brackets: (a+b)*c

    for m, c in sorted(diff.items(), key=lambda mc: (not mc[0], mono_key(mc[0]))):
        out["*".join(text(a) for a, e in sorted(m, key=lambda ae: atom_key(ae[0])) for _ in range(e)) or "1"] = c
    return out
