"""Printing dimension expressions with exactly the parentheses they need, and no spaces.

Max and min print as ``^`` and ``&`` (the loosest operators, so ``(a^b)+1`` keeps its
brackets), and ``-(a//2)`` is never printed as ``-a//2`` (which means ``(-a)//2``). Terms built
by the dimension parser or the simplifier print back to text that parses to the same term.
The printer is iterative: million-node chains print at the default recursion limit.
"""

from __future__ import annotations

from ..core.term import Term

__all__ = [
    "unparse",
    "clear_unparse_cache",
    "precedence",
    "bracket_left",
    "bracket_right",
    "bracket_negated",
    "P_MAX",
    "P_MIN",
    "P_ADD",
    "P_MUL",
    "P_UNARY",
    "P_ATOM",
    "INFIX",
    "CALL_NAMES",
]

# precedence levels, loosest first (Python's order for ^ & + - * // % and unary minus)
_P_MAX, _P_MIN, _P_ADD, _P_MUL, _P_UNARY, _P_ATOM = 1, 2, 3, 4, 5, 6
#: precedence levels of ^, &, + and -, * // and %, unary minus, and a name, a number or a call
P_MAX, P_MIN, P_ADD, P_MUL, P_UNARY, P_ATOM = _P_MAX, _P_MIN, _P_ADD, _P_MUL, _P_UNARY, _P_ATOM

#: op name -> (symbol, precedence) of the infix operators of the grammar
INFIX = _INFIX = {
    "maximum": ("^", _P_MAX),
    "minimum": ("&", _P_MIN),
    "add": ("+", _P_ADD),
    "sub": ("-", _P_ADD),
    "mul": ("*", _P_MUL),
    "floordiv": ("//", _P_MUL),
    "mod": ("%", _P_MUL),
}
#: op name -> the name its calls print with, when not its own
CALL_NAMES = _CALL_NAMES = {"ceil_div": "CeilToInt", "broadcast_dim": "broadcast"}

_cache: dict[Term, str] = {}
_CACHE_LIMIT = 1 << 16


def clear_unparse_cache() -> None:
    """Forget cached texts."""
    _cache.clear()


def precedence(node: Term) -> int:
    """Binding level of a term's printed form (1 for ``^`` ... 6 for a name or a call)."""
    name = node.op.name
    entry = _INFIX.get(name)
    if entry is not None:
        return entry[1]
    if name == "neg":
        return _P_UNARY
    if name == "const" and node.attr < 0:
        return _P_UNARY
    return _P_ATOM


def bracket_left(node: Term, p: int) -> bool:
    """Whether ``node`` needs brackets as the left operand of an infix operator of precedence ``p``."""
    return precedence(node) < p


def bracket_right(node: Term, p: int) -> bool:
    """Whether ``node`` needs brackets as a right operand of an infix operator of precedence ``p``."""
    # same level needs brackets (the grammar is left-associative), and so does a unary operand,
    # for readability (a-(-2), not a--2)
    ap = precedence(node)
    return ap <= p or ap == _P_UNARY


def bracket_negated(node: Term) -> bool:
    """Whether ``node`` needs brackets under a unary minus (``-(a//2)``, ``-(-2)``)."""
    return precedence(node) <= _P_UNARY or node.op.name == "const"


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
    entry = _INFIX.get(name)
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
        parts.append((node.attr if name == "dim_fn" else _CALL_NAMES.get(name, name)) + "(")
        return parts
    raise ValueError(f"the op {name!r} has no notation in dimension expressions")


def unparse(term: Term) -> str:
    """Text of a dimension term: ``^``/``&`` for max/min, no spaces, only the brackets needed."""
    if term.__class__ is not Term:
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
        if item.__class__ is str:
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
