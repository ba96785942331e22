"""Value comparisons of the matcher: plain values by ``==`` made total, constants by value.

Imports core only.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core import ConstArray, Term, get_op

__all__ = ["values_equal", "const_value_equal", "same_value", "literal_matches"]

CONST = get_op("const")
_BOOLS = (bool, np.bool_)
_NUMBERS = (int, float, bool, np.number, np.bool_)


def values_equal(a: Any, b: Any) -> bool:
    """Python ``==`` made total: numpy arrays compare whole (shape and values), errors mean "not equal"."""
    if a is b:
        return True
    if a.__class__ is np.ndarray or b.__class__ is np.ndarray:  # arrays equal arrays only
        return a.__class__ is b.__class__ and _arrays_equal(a, b, False)
    try:
        r = a == b
    except Exception:
        return False
    if r.__class__ is bool:
        return r
    try:
        return bool(r)
    except Exception:
        return False


def _arrays_equal(a: Any, b: Any, numeric: bool) -> bool:
    """Same shape and equal values; with ``numeric``, numbers only, and booleans only equal booleans."""
    try:
        a, b = np.asarray(a), np.asarray(b)
        if a.shape != b.shape:
            return False
        if numeric:
            ka, kb = a.dtype.kind, b.dtype.kind
            if ka not in "biuf" or kb not in "biuf" or (ka == "b") != (kb == "b"):
                return False
        return bool(np.array_equal(a, b))
    except Exception:
        return False


def const_value_equal(v: Any, c: Any) -> bool:
    """Whether the number or array ``v`` equals the constant value ``c`` (booleans only equal booleans)."""
    if v.__class__ is ConstArray or v.__class__ is np.ndarray or c.__class__ is ConstArray:
        return _arrays_equal(getattr(v, "array", v), getattr(c, "array", c), True)
    if (v.__class__ in _BOOLS) != (c.__class__ in _BOOLS):
        return False
    if not isinstance(v, _NUMBERS) or not isinstance(c, _NUMBERS):
        return False
    return bool(v == c)


def same_value(a: Any, b: Any) -> bool:
    """Equality of two bound values: identity for terms (constants by value), ``==`` for plain data."""
    if a is b:
        return True
    if a.__class__ is Term or b.__class__ is Term:
        return (
            a.__class__ is Term
            and b.__class__ is Term
            and a.op is CONST
            and b.op is CONST
            and const_value_equal(a.attr, b.attr)
        )
    return values_equal(a, b)


def literal_matches(p: Any, e: Any) -> bool:
    """A non-pattern, non-container value ``p`` against ``e`` (constants compare by value)."""
    if p is e:
        return True
    if e.__class__ is Term:
        if p.__class__ is Term:
            return False  # structural term patterns are handled by the machine
        return e.op is CONST and const_value_equal(p, e.attr)
    if p.__class__ is Term:
        return p.op is CONST and const_value_equal(e, p.attr)
    return values_equal(p, e)
