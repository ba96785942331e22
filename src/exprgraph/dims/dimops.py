"""Arithmetic on dimensions that are ints, expression strings or terms: ``dim_add("batch", 1) -> "batch+1"``.

Two ints give an int (Python's semantics: ``dim_div(7, 2) == 3``). Otherwise the result is
simplified: an int when its value is constant, else text when an operand was text, else a term.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

from ..core.op import get_op
from ..core.term import Term
from .canonicalize import simplify_term
from .parse import parse_expression
from .terms import CONST, SUB, dim_const
from .unparse import unparse

__all__ = [
    "DimType",
    "dim_add",
    "dim_sub",
    "dim_mul",
    "dim_div",
    "dim_mod",
    "dim_max",
    "dim_min",
    "dim_multi_mul",
    "dim_equal",
]

#: a dimension: a concrete size, an expression string or an int64 term
DimType = int | str | Term


def _term(d: Any) -> Term:
    if d.__class__ is Term:
        return d
    if isinstance(d, str):
        return parse_expression(d)
    if isinstance(d, int) and not isinstance(d, bool):
        return dim_const(int(d))
    raise TypeError(f"a dimension must be an int, a string or a term, not {type(d).__name__}")


def _apply(op_name: str, ints: Callable[[int, int], int], dims: tuple) -> DimType:
    if all(d.__class__ is int for d in dims):
        acc = dims[0]
        for d in dims[1:]:
            acc = ints(acc, d)
        return acc
    op = get_op(op_name)
    terms = [_term(d) for d in dims]
    acc_term = terms[0]
    for t in terms[1:]:
        acc_term = Term(op, (acc_term, t))
    top = simplify_term(acc_term)
    if top.op is CONST:
        return int(top.attr)
    if any(isinstance(d, str) for d in dims):
        return unparse(top)
    return top


def dim_add(a: DimType, b: DimType) -> DimType:
    """``a + b``."""
    return _apply("add", operator.add, (a, b))


def dim_sub(a: DimType, b: DimType) -> DimType:
    """``a - b``."""
    return _apply("sub", operator.sub, (a, b))


def dim_mul(a: DimType, b: DimType) -> DimType:
    """``a * b``.

    >>> dim_mul(2, "seq_length")
    '2*seq_length'
    """
    return _apply("mul", operator.mul, (a, b))


def dim_div(a: DimType, b: DimType) -> DimType:
    """``a // b`` (floor division).

    >>> dim_div("2*n", "n")
    2
    """
    return _apply("floordiv", operator.floordiv, (a, b))


def dim_mod(a: DimType, b: DimType) -> DimType:
    """``a % b`` (the sign of the divisor, as in Python)."""
    return _apply("mod", operator.mod, (a, b))


def dim_max(a: DimType, b: DimType) -> DimType:
    """``max(a, b)``, printed ``a^b``."""
    return _apply("maximum", max, (a, b))


def dim_min(a: DimType, b: DimType) -> DimType:
    """``min(a, b)``, printed ``a&b``."""
    return _apply("minimum", min, (a, b))


def dim_multi_mul(*dims: DimType) -> DimType:
    """The product of one or more dimensions.

    >>> dim_multi_mul(2, "n", 3)
    '6*n'
    """
    if not dims:
        raise TypeError("dim_multi_mul() needs at least one dimension")
    if len(dims) == 1:
        return _apply("mul", operator.mul, (dims[0], 1))
    return _apply("mul", operator.mul, dims)


def dim_equal(a: DimType, b: DimType) -> bool | None:
    """True when two dimensions are always equal, False when never (a constant difference), None when it depends.

    This is the test the core's contraction checks (dot, matmul) can use for symbolic dimensions.

    >>> dim_equal("2*(n+1)", "2*n+2"), dim_equal("n+1", "n"), dim_equal("n", "m")
    (True, False, None)
    """
    if a.__class__ is int and b.__class__ is int:
        return a == b
    diff = simplify_term(Term(SUB, (_term(a), _term(b))))
    if diff.op is CONST:
        return diff.attr == 0
    return None
