"""Printing dimension expressions with exactly the parentheses they need, and no spaces.

Max and min print as ``^`` and ``&`` (the loosest operators, so ``(a^b)+1`` keeps its
brackets), and ``-(a//2)`` is never printed as ``-a//2`` (which means ``(-a)//2``). Terms built
by the dimension parser or the simplifier print back to text that parses to the same term.
The printer is iterative: million-node chains print at the default recursion limit.
"""

from __future__ import annotations

from ..core.term import Term

__all__ = ["unparse", "clear_unparse_cache"]

# precedence levels, loosest first (Python's order for ^ & + - * // % and unary minus)
_P_MAX, _P_MIN, _P_ADD, _P_MUL, _P_UNARY, _P_ATOM = 1, 2, 3, 4, 5, 6

#: op name -> (symbol, precedence) of the infix operators of the grammar
_INFIX = {
    "maximum": ("^", _P_MAX),
    "minimum": ("&", _P_MIN),
    "add": ("+", _P_ADD),
    "sub": ("-", _P_ADD),
    "mul": ("*", _P_MUL),
    "floordiv": ("//", _P_MUL),
    "mod": ("%", _P_MUL),
}
_CALL_NAMES = {"ceil_div": "CeilToInt"}

_cache: dict[Term, str] = {}
_CACHE_LIMIT = 1 << 16


def clear_unparse_cache() -> None:
    """Forget cached texts."""
    _cache.clear()


def _prec(node: Term) -> int:
    name = node.op.name
    entry = _INFIX.get(name)
    if entry is not None:
        return entry[1]
    if name == "neg":
        return _P_UNARY
    if name == "const" and node.attr < 0:
        return _P_UNARY
    return _P_ATOM


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
            ap = _prec(args[i])
            # right operands: same level needs brackets (the grammar is left-associative), and so does
            # a unary operand, for readability (a-(-2), not a--2)
            parts.append((args[i], ap <= p or ap == _P_UNARY))
            parts.append(symbol)
        parts.append((args[0], _prec(args[0]) < p))
        return parts
    if name == "neg":
        (arg,) = args
        return [(arg, _prec(arg) <= _P_UNARY or arg.op.name == "const"), "-"]
    if op.notation == "call":
        parts = [")"]
        for i in range(len(args) - 1, -1, -1):
            parts.append((args[i], False))
            if i:
                parts.append(",")
        parts.append(_CALL_NAMES.get(name, name) + "(")
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
        if not node.args:
            piece = _parts(node)[0]
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
