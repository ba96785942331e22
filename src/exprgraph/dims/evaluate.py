"""Evaluating dimension expressions with Python integers (exact, floor semantics)."""

from __future__ import annotations

import operator
from collections.abc import Mapping
from typing import Any

from ..core.term import Term
from ..core.walk import postorder
from ..errors import EvaluationError
from .parse import parse_expression
from .terms import broadcast_value
from .unparse import unparse

__all__ = ["evaluate_expression"]


def _floordiv(a: int, b: int) -> int:
    return a // b


def _ceil_div(a: int, b: int) -> int:
    return -((-a) // b)


def _fold(fn: Any) -> Any:
    def apply(*values: int) -> int:
        acc = values[0]
        for v in values[1:]:
            acc = fn(acc, v)
        return acc

    return apply


#: op name -> Python function over ints
_IMPL = {
    "add": _fold(operator.add),
    "sub": operator.sub,
    "mul": _fold(operator.mul),
    "neg": operator.neg,
    "floordiv": _floordiv,
    "mod": operator.mod,
    "ceil_div": _ceil_div,
    "maximum": max,
    "minimum": min,
    "abs": abs,
    "broadcast_dim": broadcast_value,
}
_DIVISIONS = {"floordiv": "//", "mod": "%", "ceil_div": "CeilToInt"}


def _int_value(name: str, value: Any) -> int:
    try:
        return operator.index(value)
    except TypeError:
        raise EvaluationError(f"the value of {name!r} must be an integer, not {value!r}") from None


def evaluate_expression(expr: str | Term | int, values: Mapping[Any, Any] | None = None) -> int:
    """Value of a dimension expression for integer ``values`` of its names (by name or symbol).

    ``//`` and ``%`` follow Python (floor) semantics, ``^``/``&`` are max/min and
    ``CeilToInt(n, d)`` is the ceiling of n/d, ``broadcast(a, b)`` the broadcast size. An opaque
    function ``f(...)`` takes its value from a callable given as ``values["f"]``. An unknown name
    or function, a division by zero or dimensions that do not broadcast raise
    :class:`~exprgraph.errors.EvaluationError`; bad syntax raises DimExpressionError.

    >>> evaluate_expression("CeilToInt(n, 8) * 8 - n % 3", {"n": 13})
    15
    """
    if isinstance(expr, int) and not isinstance(expr, bool):
        return int(expr)
    term = parse_expression(expr) if isinstance(expr, str) else expr
    if term.__class__ is not Term:
        raise TypeError(f"evaluate_expression() takes a string, a term or an int, not {type(expr).__name__}")
    env: dict[str, int] = {}
    functions: dict[str, Any] = {}
    for key, value in (values or {}).items():
        name = key.name if key.__class__ is Term else key
        if callable(value):
            functions[name] = value
        else:
            env[name] = _int_value(name, value)
    vals: dict[Term, int] = {}
    for node in postorder((term,)):
        name = node.op.name
        if name == "const":
            vals[node] = _int_value("a constant", node.attr)
        elif name == "symbol":
            sym = node.attr[0]
            if sym not in env:
                raise EvaluationError(f"no value for the name {sym!r}: pass it in values, e.g. {{{sym!r}: 4}}")
            vals[node] = env[sym]
        elif name == "pow":
            base, exponent = (vals[a] for a in node.args)
            if exponent < 0:
                raise EvaluationError("a negative power of an integer is not an integer")
            vals[node] = base**exponent
        elif name == "dim_fn":
            fn = functions.get(node.attr)
            if fn is None:
                name = node.attr
                raise EvaluationError(
                    f"the function {name!r} is opaque: pass a callable for it in values, e.g. {{{name!r}: max}}"
                )
            vals[node] = _int_value(f"{node.attr}(...)", fn(*[vals[a] for a in node.args]))
        else:
            fn = _IMPL.get(name)
            if fn is None:
                raise EvaluationError(f"the op {name!r} has no meaning in dimension expressions")
            args = [vals[a] for a in node.args]
            if name in _DIVISIONS and args[1] == 0:
                raise EvaluationError(f"division by zero in {unparse(node)} (its divisor is 0)")
            try:
                vals[node] = fn(*args)
            except ValueError as err:  # dimensions that do not broadcast
                raise EvaluationError(f"{err} in {unparse(node)}") from None
    return vals[term]
