"""Printing a polynomial's canonical text straight from the polynomial, without building its term.

``poly_text(p)`` is ``unparse(top_term(p))``. :func:`.normal.top_term` builds the sum of the
terms in print order, left-nested, the constant last, each term ``c*f1*f2*...`` (``f1*f2`` for
c == 1, ``-f1*f2`` for c == -1), and later terms added or subtracted with a positive coefficient.
The atoms print as :mod:`.unparse` prints them (their cached keys), and each one is bracketed by
the rule :mod:`.unparse` applies at its place in that term: left or right operand of a product,
operand of a unary minus, left or right operand of a sum, or the whole text.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Final

from ..core.op import Op
from ..core.term import Term
from .grammar import CALL_NAMES, INFIX_OPS, P_ADD, P_ATOM, P_MUL, P_UNARY, left_need, right_need
from .normal import ONE, Mono, Poly, atom_key, mono_order
from .terms import INT64_MAX, INT64_MIN, SYMBOL, memo_table, remember
from .unparse import bracket_left, bracket_negated, bracket_right, precedence

__all__ = ["poly_text", "poly_value", "inner_text", "atom_text", "fits_int64"]


def fits_int64(c: int) -> int:
    """``c``, or an OverflowError when it is outside int64 (top_term builds no such constant)."""
    if not INT64_MIN <= c <= INT64_MAX:
        raise OverflowError(f"the dimension constant {c} does not fit in int64")
    return c


def _bracketed(text: str, atom: Term, bracket: Callable[..., bool], *p: int) -> str:
    # a name never needs brackets; another atom when ``bracket(atom, *p)`` says so
    if atom.op is not SYMBOL and bracket(atom, *p):
        return f"({text})"
    return text


#: monomial -> (its key, mono_key; its first factor in print order, and that factor's text; the text
#: "*f2*f3..." of the other factors, which always print as right operands of a product)
_monos: Final[dict[Mono, tuple[str, Term, str, str]]] = memo_table()


def _mono_parts(m: Mono) -> tuple[str, Term, str, str]:
    entry = _monos.get(m)
    if entry is None:
        key, factors = mono_order(m)
        head = factors[0]
        tail = "".join(["*" + _bracketed(atom_key(a), a, bracket_right, P_MUL) for a in factors[1:]])
        entry = remember(_monos, m, (key, head, atom_key(head), tail))
    return entry


def _term(out: list[str], parts: tuple[str, Term, str, str], c: int, first: bool) -> None:
    """``c * m`` as a term of the sum (``first``: its left operand, else a right operand)."""
    _, head, text, tail = parts
    if c == 1 and not tail:
        # the term is the atom itself
        out.append(_bracketed(text, head, bracket_left if first else bracket_right, P_ADD))
        return
    # a product (or a negation) never needs brackets inside the sum: both bind tighter than + and -
    if c == 1:
        out.append(_bracketed(text, head, bracket_left, P_MUL))  # f1*...
    elif c == -1:
        out.append("-" + _bracketed(text, head, bracket_negated))  # -f1*... is (-f1)*...
    else:
        # c*f1*...: a constant, even negative, is a left operand without brackets
        out.append(f"{fits_int64(c)}*{_bracketed(text, head, bracket_right, P_MUL)}")
    out.append(tail)


def _key(item: tuple) -> str:
    return item[0][0]


def poly_text(p: Poly) -> str:
    """``unparse(top_term(p))`` for a polynomial with at least one atom (no term is built)."""
    terms = [(_mono_parts(m), c) for m, c in p.items() if m]
    if len(terms) > 1:
        terms.sort(key=_key)  # by mono_key, the order of top_term's terms
    const = p.get(ONE, 0)
    if len(terms) == 1 and not const:
        ((_, _, text, tail), c) = terms[0]
        if c == 1 and not tail:
            return text  # a lone atom is the whole text: no brackets
    out: list[str] = []
    _signed_terms(out, terms, True)
    if const > 0:
        out.append(f"+{fits_int64(const)}")
    elif const < 0:
        out.append(f"-{fits_int64(-const)}")
    return "".join(out)


def _signed_terms(out: list[str], terms: list, first: bool) -> None:
    """Append the terms of a sum joined by their signs (``first``: nothing stands before them)."""
    for parts, c in terms:
        if first:
            _term(out, parts, c, True)
            first = False
        elif c > 0:
            out.append("+")
            _term(out, parts, c, False)
        else:
            out.append("-")
            _term(out, parts, -c, False)


def inner_text(p: Poly) -> tuple[str, int]:
    """The text of ``inner_term(p)`` (the canonical argument of an atom) and its precedence.

    :func:`.normal.inner_term` puts the constant first, as the left operand of the sum, and the
    terms after it in print order; with no constant the first term is the left operand.
    """
    if len(p) <= 1:
        if not p:
            return "0", P_ATOM
        ((m, c),) = p.items()
        if not m:
            return str(c), (P_ATOM if c >= 0 else P_UNARY)  # a negative constant is unary
        if c == 1 and len(m) == 1 and m[0][1] == 1:
            a = m[0][0]
            return atom_key(a), precedence(a)  # a lone atom
    terms = [(_mono_parts(m), c) for m, c in p.items() if m]
    if len(terms) > 1:
        terms.sort(key=_key)
    const = p.get(ONE, 0)
    out: list[str] = []
    if const:
        out.append(str(const))  # a constant, even negative, is a left operand without brackets
    _signed_terms(out, terms, not const)
    if const or len(terms) > 1:
        prec = P_ADD  # a sum
    else:
        # one term: -f (a negation) or a product (c*f, f*g, -f*g)
        ((_, _, _, tail), c) = terms[0]
        prec = P_UNARY if c == -1 and not tail else P_MUL
    return "".join(out), prec


def atom_text(op: Op, args: Iterable[Poly]) -> str:
    """The text ``unparse`` gives for the atom ``op(inner_term(a) for a in args)``, from the polynomials.

    Infix ops nest to the left (``(a^b)^c``): the first argument is a left operand, the others
    right operands; a call prints its arguments without brackets.
    """
    texts = [inner_text(a) for a in args]
    symbol, p = INFIX_OPS.get(op, (None, 0))
    if symbol is None:  # a call: CeilToInt(n,d)
        return f"{CALL_NAMES.get(op.name, op.name)}({','.join(text for text, _ in texts)})"
    text, q = texts[0]
    out = [f"({text})" if q < left_need(p) else text]  # bracket_left
    for text, q in texts[1:]:
        out.append(symbol)
        out.append(f"({text})" if q < right_need(p) or q == P_UNARY else text)  # bracket_right
    return "".join(out)


def poly_value(p: Poly) -> int | str:
    """What ``simplify_expression`` gives for text with polynomial ``p``: an int if constant, else text."""
    if not p or (len(p) == 1 and ONE in p):
        return fits_int64(p.get(ONE, 0))
    return poly_text(p)
