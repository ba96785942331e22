"""The grammar of dimension expressions: its tokens, its operators and how tightly they bind, its calls.

One table, read by the parser (:mod:`.parse`), the text reader (:mod:`.polyparse`) and both
printers (:mod:`.unparse`, :mod:`.polyprint`), so that what is printed parses back to the same term:

- the tokens are a :class:`~exprgraph.core.tokens.Lexicon` of the shared tokenizer (integers, ASCII
  names, the operators; ``**`` is a token only so that the parser can reject it by name);
- ``+ - * // %`` and unary minus take their spelling and binding power from the op table, as the
  expression parser and printer do (:mod:`exprgraph.core.notation`); ``^`` (max) and ``&`` (min)
  are syntax of this language only (the core spells max and min as calls), binding more loosely
  than ``+``, as in Python: ``a^b+1`` is ``a^(b+1)``. Every binary operator is left-associative;
- a ``/`` is read only as the whole argument of a rounding call (``floor(a/b)``);
- the calls with a meaning (the rest are opaque functions, see :mod:`.parse`).

Imports the core's op table, notation and tokens, and :mod:`.terms`.
"""

from __future__ import annotations

from typing import Final

from ..core.notation import SYNTAX, operand_need
from ..core.op import Op, get_op
from ..core.tokens import Lexicon
from ..errors import DimExpressionError
from .terms import ADD, BROADCAST, CEIL_DIV, FLOORDIV, MAX, MIN, MOD, MUL, NEG, SUB

__all__ = [
    "LEXICON",
    "P_MAX",
    "P_MIN",
    "P_ADD",
    "P_MUL",
    "P_UNARY",
    "P_ATOM",
    "INFIX_OPS",
    "BINARY",
    "RATIO_OP",
    "UNARY_PREC",
    "CALLS",
    "ROUNDING",
    "CALL_NAMES",
    "left_need",
    "right_need",
]

#: the tokens: integers (any decimal digits, as ``int`` reads them), ASCII names and the operators
LEXICON: Final = Lexicon(
    ("//", "**", *"-+*/%^&(),"),
    kinds=(("num", r"\d+"), ("name", r"[A-Za-z_][A-Za-z0-9_]*")),
    error=DimExpressionError,
)


# binding powers, loosest first: ^, &, + -, * // %, unary minus, a name, a number or a call
P_ADD: Final[int] = ADD.precedence
P_MUL: Final[int] = MUL.precedence
P_UNARY: Final[int] = NEG.precedence
P_ATOM: Final[int] = SYNTAX["call"]
P_MIN: Final[int] = P_ADD - 1
P_MAX: Final[int] = P_ADD - 2

#: op -> (spelling, binding power) of the infix operators
INFIX_OPS: Final[dict[Op, tuple[str, int]]] = {
    **{op: (op.symbol, op.precedence) for op in (ADD, SUB, MUL, FLOORDIV, MOD)},
    MAX: ("^", P_MAX),
    MIN: ("&", P_MIN),
}

#: marks the operator ``/``, read only as the argument of a rounding call (floor(a/b))
RATIO_OP: Final = "ratio"
#: binary operator token -> (binding power, op); all are left-associative
BINARY: Final[dict[str, tuple[int, object]]] = {
    **{symbol: (prec, op) for op, (symbol, prec) in INFIX_OPS.items()},
    "/": (get_op("truediv").precedence, RATIO_OP),
}
#: binding power of a unary minus or plus
UNARY_PREC: Final[int] = P_UNARY

#: calls that fold their arguments with one binary op: name -> (op, min args, max args or None)
CALLS: Final[dict[str, tuple[Op, int, int | None]]] = {
    "CeilToInt": (CEIL_DIV, 2, 2),
    "ceil_div": (CEIL_DIV, 2, 2),
    "CeilDiv": (CEIL_DIV, 2, 2),  # torch
    "Max": (MAX, 1, None),
    "max": (MAX, 1, None),
    "Min": (MIN, 1, None),
    "min": (MIN, 1, None),
    "FloorDiv": (FLOORDIV, 2, 2),  # torch: a//b
    "CleanDiv": (FLOORDIV, 2, 2),  # torch: a/b known to be exact, so a//b
    "PythonMod": (MOD, 2, 2),  # torch: a%b
    "Mod": (MOD, 2, 2),  # torch (for a >= 0, b > 0, where C's and Python's % agree) and sympy: a%b
    "broadcast": (BROADCAST, 2, 2),  # the reference: the broadcast size of two dimensions
}
#: rounding calls of one argument, which may be a ratio a/b: name -> the op of the rounded ratio
#: (the rounding of an integer is the integer itself)
ROUNDING: Final[dict[str, Op]] = {
    "floor": FLOORDIV,
    "FloorToInt": FLOORDIV,
    "ceiling": CEIL_DIV,
    "CeilToInt": CEIL_DIV,
}
#: op name -> the name its calls print with, when not its own
CALL_NAMES: Final[dict[str, str]] = {"ceil_div": "CeilToInt", "broadcast_dim": "broadcast"}


def left_need(p: int) -> int:
    """The least binding power the left operand of a binary operator of power ``p`` needs without brackets."""
    return operand_need(p, "left", 0)


def right_need(p: int) -> int:
    """The least binding power a right operand of a binary operator of power ``p`` needs without brackets."""
    return operand_need(p, "left", 1)
