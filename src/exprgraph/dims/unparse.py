"""Printing dimension expressions with exactly the parentheses they need, and no spaces.

Max and min print as ``^`` and ``&`` (the loosest operators, so ``(a^b)+1`` keeps its
brackets), and ``-(a//2)`` is never printed as ``-a//2`` (which means ``(-a)//2``). Terms built
by the dimension parser or the simplifier print back to text that parses to the same term.
The operators, their binding powers and the call names are those of the parser (:mod:`.grammar`),
and the bracketing rule is the core printer's (:func:`~exprgraph.core.notation.operand_need`), plus
brackets around a unary right operand for readability (``a-(-2)``). The printer is iterative:
million-node chains print at the default recursion limit.
"""

from __future__ import annotations

from typing import Final

from ..core.term import Term
from .grammar import CALL_NAMES, INFIX_OPS, P_ATOM, P_UNARY, left_need, right_need

__all__ = ["unparse", "clear_unparse_cache", "precedence", "bracket_left", "bracket_right", "bracket_negated"]

#: op name -> (symbol, binding power) of the infix operators of the grammar (see :mod:`.grammar`)
INFIX: Final[dict[str, tuple[str, int]]] = {op.name: entry for op, entry in INFIX_OPS.items()}

_cache: Final[dict[Term, str]] = {}
_CACHE_LIMIT: Final = 1 << 16


def clear_unparse_cache() -> None:
    """Forget cached texts."""
    _cache.clear()


def precedence(node: Term) -> int:
    """Binding power of a term's printed form (from P_MAX for ``^`` to P_ATOM for a name or a call)."""
    name = node.op.name
    entry = INFIX.get(name)
    if entry is not None:
        return entry[1]
    if name == "neg":
        return P_UNARY
    if name == "const" and node.attr < 0:
        return P_UNARY
    return P_ATOM


def bracket_left(node: Term, p: int) -> bool:
    """Whether ``node`` needs brackets as the left operand of an infix operator of precedence ``p``."""
    return precedence(node) < left_need(p)


def bracket_right(node: Term, p: int) -> bool:
    """Whether ``node`` needs brackets as a right operand of an infix operator of precedence ``p``."""
    # same level needs brackets (the grammar is left-associative), and so does a unary operand,
    # for readability (a-(-2), not a--2)
    ap = precedence(node)
    return ap < right_need(p) or ap == P_UNARY


def bracket_negated(node: Term) -> bool:
    """Whether ``node`` needs brackets under a unary minus (``-(a//2)``, ``-(-2)``)."""
    return precedence(node) <= P_UNARY or node.op.name == "const"


def _parts(node: Term) -> list:
    """Pieces (strings, or ``(term, parenthesise)`` pairs) that print ``node``, in reverse order."""
    op = node.op
    name = op.name
    args = node.args
    if not args:
        if name == "symbol":
            return [node.attr[0]]
        if name == "const":
            return [str(int(node.attr))]
        return [name + "()"]
    entry = INFIX.get(name)
    if entry is not None:
        symbol, p = entry
        parts: list = []
        for i in range(len(args) - 1, 0, -1):
            parts.append((args[i], bracket_right(args[i], p)))
            parts.append(symbol)
        parts.append((args[0], bracket_left(args[0], p)))
        return parts
    if name == "neg":
        (arg,) = args
        return [(arg, bracket_negated(arg)), "-"]
    if op.notation == "call":
        parts = [")"]
        for i in range(len(args) - 1, -1, -1):
            parts.append((args[i], False))
            if i:
                parts.append(",")
        # an opaque function (dim_fn) prints its own name, kept in its attr
        parts.append((node.attr if name == "dim_fn" else CALL_NAMES.get(name, name)) + "(")
        return parts
    raise ValueError(f"the op {name!r} has no notation in dimension expressions")


def unparse(term: Term) -> str:
    """Text of a dimension term: ``^``/``&`` for max/min, no spaces, only the brackets needed."""
    if type(term) is not Term:
        if isinstance(term, int) and not isinstance(term, bool):
            return str(term)
        raise TypeError(f"unparse() takes a term, not {type(term).__name__}")
    if not term.args:
        return _parts(term)[0]
    text = _cache.get(term)
    if text is not None:
        return text
    out: list[str] = []
    stack: list = [(term, False)]
    while stack:
        item = stack.pop()
        if type(item) is str:
            out.append(item)
            continue
        node, par = item
        piece = _parts(node)[0] if not node.args else _cache.get(node)
        if piece is not None:
            # a leaf, or a subterm printed before (atoms inside atoms): its text as it is
            out.append(f"({piece})" if par else piece)
            continue
        if par:
            stack.append(")")
        stack.extend(_parts(node))
        if par:
            stack.append("(")
    text = "".join(out)
    if len(_cache) >= _CACHE_LIMIT:
        _cache.clear()
    _cache[term] = text
    return text
