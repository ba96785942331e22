"""Printing a polynomial's canonical text straight from the polynomial, without building its term.

``poly_text(p)`` is ``unparse(top_term(p))``. :func:`.normal.top_term` builds the sum of the
terms in print order, left-nested, the constant last, each term ``c*f1*f2*...`` (``f1*f2`` for
c == 1, ``-f1*f2`` for c == -1), and later terms added or subtracted with a positive coefficient.
The atoms print as :mod:`.unparse` prints them (their keys), each bracketed by the rule
:mod:`.unparse` applies at its place in that term (the pieces are :mod:`.normal`'s, which prints
the arguments of atoms the same way).

Stage *print* (:mod:`.stages`).
"""

from __future__ import annotations

from .monomials import ONE
from .normal import fits_int64, mono_parts, signed_terms, text_order
from .ring import Poly

__all__ = ["poly_text", "poly_value", "fits_int64"]


def poly_text(p: Poly) -> str:
    """``unparse(top_term(p))`` for a polynomial with at least one atom (no term is built)."""
    terms = [(mono_parts(m), c) for m, c in p.items() if m]
    if len(terms) > 1:
        terms.sort(key=text_order)  # by mono_key, the order of top_term's terms
    const = p.get(ONE, 0)
    if len(terms) == 1 and not const:
        ((_, _, text, tail), c) = terms[0]
        if c == 1 and not tail:
            return text  # a lone atom is the whole text: no brackets
    out: list[str] = []
    signed_terms(out, terms, True)
    if const > 0:
        out.append(f"+{fits_int64(const)}")
    elif const < 0:
        out.append(f"-{fits_int64(-const)}")
    return "".join(out)


def poly_value(p: Poly) -> int | str:
    """What ``simplify_expression`` gives for text with polynomial ``p``: an int if constant, else text."""
    if not p or (len(p) == 1 and ONE in p):
        return fits_int64(p.get(ONE, 0))
    return poly_text(p)
