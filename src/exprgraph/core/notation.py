"""The precedence table of the text languages: how tightly each operator and piece of syntax binds.

An op's binding power and associativity are fields of its entry in the op table (``precedence``,
``assoc``; :mod:`.op`); :data:`SYNTAX` holds those of the syntax that is no op. The parsers (the
expression parser, rule text, the kernel language) read them to decide what binds first, and the
printers (infix text and LaTeX) read them, through :func:`operand_need`, to decide parentheses:
one rule on both sides is what makes ``parse(str(t)) is t`` hold. Imports :mod:`.op` only.

>>> from exprgraph.core.op import get_op
>>> sub = get_op("sub")
>>> operand_need(sub.precedence, sub.assoc, 0) == sub.precedence  # a - b - c: no parentheses on the left
True
>>> operand_need(sub.precedence, sub.assoc, 1) == sub.precedence + 1  # a - (b - c): they are needed on the right
True
"""

from __future__ import annotations

from .op import PREC_ATOM, PREC_UNARY, Op, ops

__all__ = ["SYNTAX", "infix_ops", "operand_need", "binds_tighter_than_sign"]

#: binding power of the syntax that is no op: calls ``f(x)``, indexing ``T[i]``, brackets and
#: literals bind as atoms; a literal with a minus sign (``-2``) binds as a unary minus
SYNTAX: dict[str, int] = {
    "call": PREC_ATOM,
    "index": PREC_ATOM,
    "bracket": PREC_ATOM,
    "literal": PREC_ATOM,
    "signed literal": PREC_UNARY,
}


def infix_ops() -> dict[str, Op]:
    """Each infix spelling and the op it stands for (the first op registered with it)."""
    table: dict[str, Op] = {}
    for op in ops():
        if op.notation == "infix":
            table.setdefault(op.symbol, op)
    return table


def operand_need(precedence: int, assoc: str | None, side: int) -> int:
    """The least precedence an operand of an infix operator needs to go without parentheses.

    ``side`` is 0 for the left operand, 1 for the right. An operand binding as tightly as the
    operator goes bare on the side the operator associates to (``a - b - c``, ``x**y**z``) and
    in brackets on the other; a non-associative operator brackets it on both (``(a < b) < c``).
    """
    if assoc == ("left", "right")[side]:
        return precedence
    return precedence + 1


def binds_tighter_than_sign(op: Op | None) -> bool:
    """Whether infix ``op`` takes a number before its sign does: ``-2**x`` is ``-(2**x)``."""
    return op is not None and op.precedence > SYNTAX["signed literal"]
