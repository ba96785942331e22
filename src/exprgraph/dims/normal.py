"""Normal form: the canonical order of atoms and monomials, canonical terms, and their texts.

An *atom* is a term the polynomial algebra (:mod:`.ring`) does not look into: a name, or an opaque
floordiv, mod, max, min or call term whose arguments are themselves in normal form. Atoms are
ordered by their printed text (the reference's order), so the text of an atom is its sort key:
:func:`atom_key` reads it from the atom's term (:mod:`.unparse`) or, for an atom built from
polynomials, prints it straight from them (:func:`atom_text`, no term walked).

Canonical terms print terms of a sum ordered by their atoms' text; at the top level the constant
comes last (``batch+1``), inside opaque terms it comes first (``(1+b+c)//2``), as in the reference.

Stage *normalise* (:mod:`.stages`): imports the ring, the terms and the grammar both ways.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from operator import itemgetter
from typing import Final

from ..core.op import Op
from ..core.term import Term
from ..errors import DimConstantOverflowError
from .grammar import CALL_NAMES, INFIX_OPS, P_ADD, P_ATOM, P_MUL, P_UNARY, left_need, right_need
from .monomials import ONE, Mono
from .ring import Poly
from .terms import ADD, INT64_MAX, INT64_MIN, MUL, NEG, SUB, SYMBOL, dim_const, make_term, memo_table, remember
from .unparse import bracket_left, bracket_negated, bracket_right, precedence, unparse

__all__ = [
    "atom_key",
    "defer_key",
    "mono_key",
    "mono_order",
    "poly_key",
    "mono_factors",
    "top_term",
    "inner_term",
    "fits_int64",
    "mono_parts",
    "signed_terms",
    "text_order",
    "inner_text",
    "atom_text",
]


# -- keys: the canonical order of atoms and monomials ---------------------------------------------------

_keys: Final[dict[Term, str]] = memo_table()
#: atom -> (function, arguments) that print it (see defer_key)
_deferred: Final[dict[Term, tuple]] = memo_table()


def atom_key(atom: Term) -> str:
    """Sort key of an atom: its name, or its printed text."""
    key = _keys.get(atom)
    if key is None:
        deferred = _deferred.pop(atom, None)
        if atom.op.name == "symbol":
            key = atom.attr[0]
        elif deferred is not None:
            key = deferred[0](*deferred[1])
        else:
            try:
                key = unparse(atom)
            except ValueError:  # an op outside the dimension grammar (x**y): the core's text
                key = str(atom)
        remember(_keys, atom, key, 1 << 17)
    return key


def defer_key(atom: Term, text: Callable[..., str], *args: object) -> None:
    """Let ``atom_key(atom)`` be ``text(*args)``, the text ``unparse`` gives, computed when asked for.

    The builder of an atom knows its canonical arguments as polynomials, and printing them
    from there is quicker than walking the term; most atoms are never printed at all.
    """
    if atom not in _keys:
        remember(_deferred, atom, (text, args), 1 << 17)


#: monomial -> (its key, its factors in print order); see mono_order
_orders: Final[dict[Mono, tuple[str, tuple[Term, ...]]]] = memo_table()


def _factor_key(key: str, p: int) -> str:
    """The key of one factor ``atom**p`` (``key`` the atom's): see mono_key."""
    if p == 1:
        return key + "\x00\x011"
    digits = str(p)
    return f"{key}\x00{chr(len(digits))}{digits}"


def mono_order(m: Mono) -> tuple[str, tuple[Term, ...]]:
    """``(mono_key(m), mono_factors(m))``, computed once per monomial."""
    entry = _orders.get(m)
    if entry is None:
        if len(m) == 1:
            a, p = m[0]
            entry = (_factor_key(atom_key(a), p), (a,) * p)
        elif len(m) == 2 and m[0][1] == 1 and m[1][1] == 1:
            # two atoms (a product of two names, the commonest): in the order of their keys
            a, b = m[0][0], m[1][0]
            ka, kb = atom_key(a), atom_key(b)
            if kb < ka:
                a, b, ka, kb = b, a, kb, ka
            entry = (_factor_key(ka, 1) + _factor_key(kb, 1), (a, b))
        else:
            # atoms have distinct keys, so sorting by (key, power) orders the atoms by key
            keyed = sorted([(atom_key(a), p, a) for a, p in m])
            entry = (
                "".join([_factor_key(k, p) for k, p, _ in keyed]),
                tuple([a for _, p, a in keyed for _ in range(p)]),
            )
        remember(_orders, m, entry, 1 << 17)
    return entry


def mono_key(m: Mono) -> str:
    """Sort key of a monomial: its atoms' keys with their powers, in key order.

    It orders monomials as the tuple ``((key1, power1), (key2, power2), ...)`` would, but as one
    string (compared in one step, where tuples of pairs take three): each factor is its atom's key,
    a NUL (below every character of a key: a key that is a prefix of another sorts first), the
    number of digits of the power as a character, then the digits (so powers compare as numbers).
    """
    return mono_order(m)[0]


def poly_key(p: Poly) -> tuple:
    """Sort key of a polynomial (orders the arguments of max and min): its atoms first, then its constant."""
    if len(p) == 1:
        ((m, c),) = p.items()
        return ((mono_key(m),), (c,), 0) if m else ((), (), c)
    items = [(mono_key(m), c) for m, c in p.items() if m]
    items.sort()
    return (tuple([k for k, _ in items]), tuple([c for _, c in items]), p.get(ONE, 0))


# -- canonical terms -----------------------------------------------------------------------------------


def mono_factors(m: Mono) -> tuple[Term, ...]:
    """The atoms of a monomial in print order (by their keys), each repeated by its power."""
    return mono_order(m)[1]


def _mono_term(factors: tuple[Term, ...], c: int) -> Term:
    """``c * f1*f2...`` as a left-nested product: coefficient first, ``-x*y`` for c == -1."""
    if c == 1:
        acc = factors[0]
    elif c == -1:
        acc = make_term(NEG, (factors[0],))
    else:
        acc = make_term(MUL, (dim_const(c), factors[0]))
    for f in factors[1:]:
        acc = make_term(MUL, (acc, f))
    return acc


_by_key: Final = itemgetter(0)


def _ordered_terms(p: Poly) -> list[tuple[str, tuple[Term, ...], int]]:
    """The non-constant terms of ``p`` in print order, as ``(mono_key, mono_factors, coefficient)``."""
    items: list[tuple[str, tuple[Term, ...], int]] = []
    for m, c in p.items():
        if m:
            key, factors = mono_order(m)
            items.append((key, factors, c))
    if len(items) > 1:
        items.sort(key=_by_key)
    return items


def _sum_term(items: list[tuple[str, tuple[Term, ...], int]], acc: Term | None) -> Term | None:
    for _, factors, c in items:
        if acc is None:
            acc = _mono_term(factors, c)
        elif c > 0:
            acc = make_term(ADD, (acc, _mono_term(factors, c)))
        else:
            acc = make_term(SUB, (acc, _mono_term(factors, -c)))
    return acc


def top_term(p: Poly) -> Term:
    """Canonical term of a whole expression: terms in key order, the constant last (``x-1``)."""
    acc = _sum_term(_ordered_terms(p), None)
    c = p.get(ONE, 0)
    if acc is None:
        return dim_const(c)
    if c > 0:
        return make_term(ADD, (acc, dim_const(c)))
    if c < 0:
        return make_term(SUB, (acc, dim_const(-c)))
    return acc


def inner_term(p: Poly) -> Term:
    """Canonical term of an argument of an opaque term: the constant first (``1+b+c``)."""
    if len(p) <= 1:
        if not p:
            return dim_const(0)
        ((m, c),) = p.items()
        if not m:
            return dim_const(c)  # a constant
        if c == 1 and len(m) == 1 and m[0][1] == 1:
            return m[0][0]  # a lone atom
    c = p.get(ONE, 0)
    term = _sum_term(_ordered_terms(p), dim_const(c) if c else None)
    return dim_const(c) if term is None else term


# -- texts: what unparse prints for canonical terms, printed from their polynomials ---------------------


def fits_int64(c: int) -> int:
    """``c``, or DimConstantOverflowError (an OverflowError) outside int64 (top_term builds no such constant)."""
    if not INT64_MIN <= c <= INT64_MAX:
        raise DimConstantOverflowError(f"the dimension constant {c} does not fit in int64")
    return c


def _bracketed(text: str, atom: Term, bracket: Callable[..., bool], *p: int) -> str:
    # a name never needs brackets; another atom when ``bracket(atom, *p)`` says so
    if atom.op is not SYMBOL and bracket(atom, *p):
        return f"({text})"
    return text


#: monomial -> (its key, mono_key; its first factor in print order, and that factor's text; the text
#: "*f2*f3..." of the other factors, which always print as right operands of a product)
_monos: Final[dict[Mono, tuple[str, Term, str, str]]] = memo_table()


def mono_parts(m: Mono) -> tuple[str, Term, str, str]:
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


def text_order(item: tuple) -> str:
    return item[0][0]


def signed_terms(out: list[str], terms: list, first: bool) -> None:
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
    terms = [(mono_parts(m), c) for m, c in p.items() if m]
    if len(terms) > 1:
        terms.sort(key=text_order)
    const = p.get(ONE, 0)
    out: list[str] = []
    if const:
        out.append(str(const))  # a constant, even negative, is a left operand without brackets
    signed_terms(out, terms, not const)
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
