"""The sign of a zero: which subterms' zeros reach a divisor, and which terms are never -0.0.

A float sum with a constant operand (``c*x + 0``, ``(x + 1) - 1``) is never -0.0; its simplified
form (``c*x``, ``x``) is -0.0 where the input's zero was +0.0, and a division by it turns inf into
-inf. :func:`exprgraph.simplify.simplify.simplify` keeps such a sum never -0.0 where its zero can
reach a division (:func:`sign_sensitive`, :func:`never_minus_zero`); the graph's region rewriter
reads the same tables.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..core import Term, const, postorder
from ..errors import ExprgraphError
from ..eval import evaluate

__all__ = ["SIGNLESS_OPS", "zero_reaches", "sign_sensitive", "never_minus_zero"]

#: ops whose value is the same for a -0.0 and a +0.0 operand: a zero's sign goes no further
SIGNLESS_OPS = frozenset(
    "abs exp cos cosh log log2 log10 sigmoid softplus log_sigmoid erfc acos hypot logaddexp".split()
    + "lt le gt ge eq ne logical_and logical_or logical_not floor ceil".split()
)
#: ops that are never -0.0 (cos and cosh are never 0 at all; exp underflows to +0.0)
_NEVER_MINUS_ZERO = frozenset({"abs", "exp", "cos", "cosh", "sigmoid", "softplus", "erfc", "hypot"})
#: ops whose operand ``i`` in the set tells the sign of a zero apart (1/-0.0 is -inf, atan2(0.0, -0.0) is pi)
_SENSITIVE_SLOTS = {"truediv": {1}, "floordiv": {1}, "mod": {1}, "fmod": {1}, "truncdiv": {1}, "atan2": {0, 1}}


def zero_reaches(node: Term, i: int) -> bool:
    """Whether operand ``i`` of ``node`` decides a value by the sign of a zero: a divisor, a power's
    base under a negative or symbolic exponent (``(-0.0)**-1`` is -inf), atan2's operands."""
    name = node.op.name
    if name == "pow":
        k = node.args[1]
        return i == 0 and not (k.is_const and not k.shape and float(k.value) > 0)
    return i in _SENSITIVE_SLOTS.get(name, ())


def sign_sensitive(term: Term) -> set[Term]:
    """The subterms of ``term`` whose zero's sign can reach a divisor (through sums, products, negations...)."""
    reach: set[Term] = set()
    for node in reversed(postorder((term,))):  # every user before its operands
        if node.op.name in SIGNLESS_OPS:
            continue
        live = node in reach
        for i, a in enumerate(node.args):
            if live or zero_reaches(node, i):
                reach.add(a)
    return reach


def never_minus_zero(t: Term) -> bool:
    """Whether ``t`` is never -0.0: a constant other than -0.0, exp, abs, an even power, a sum with such an operand.

    A subterm of constants alone (``0.0/0.5``, ``0.5*0.0``) answers for its value: ``0.0/0.5 + y`` is +0.0
    at y = -0.0, as ``0.0 + y`` is.
    """
    known: dict[Term, bool] = {}
    values: dict[Term, Any] = {}  # the scalar subterms of constants alone, and their values
    for node in postorder((t,)):  # operands first
        value = _constant_value(node, values)
        if value is None:
            known[node] = _never_minus_zero_node(node, known, values)
        else:
            values[node] = value
            known[node] = _positive_or_nonzero(float(value))
    return known[t]


def _constant_value(node: Term, values: dict[Term, Any]) -> Any:
    """The value of a scalar ``node`` whose operands are constants alone (their values in ``values``), else None."""
    if node.shape:
        return None
    if node.op.name == "const":
        return node.value
    if not node.args or any(a not in values for a in node.args):
        return None
    folded = Term(node.op, tuple(a if a.is_const else const(values[a], a.dtype) for a in node.args), node.attr)
    try:
        with np.errstate(all="ignore"):
            value = np.asarray(evaluate(folded))
    except (ExprgraphError, ArithmeticError, TypeError, ValueError):
        return None
    return value[()] if value.shape == () else None


def _never_minus_zero_node(t: Term, known: dict[Term, bool], values: dict[Term, Any]) -> bool:
    """Whether ``t`` is never -0.0, its operands' answers in ``known`` (the values of constant ones in ``values``)."""
    name = t.op.name
    if name == "const":
        return not t.shape and _positive_or_nonzero(float(t.value))
    if name in _NEVER_MINUS_ZERO:
        return True
    if name == "pow":  # x**2 is +0.0 at x = -0.0
        k = t.args[1]
        return k.is_const and not k.shape and float(k.value) % 2 == 0
    if name == "add":  # a + b is -0.0 only when both are
        return any(known[a] for a in t.args)
    if name == "sub":  # a - b is -0.0 only for a = -0.0, b = +0.0
        b = values.get(t.args[1])
        return known[t.args[0]] or (b is not None and _positive_or_nonzero(-float(b)))
    return False


def _positive_or_nonzero(v: float) -> bool:
    """Whether the number ``v`` is not -0.0 (+0.0, nan and every non-zero number are not)."""
    return v != 0.0 or math.copysign(1.0, v) > 0
