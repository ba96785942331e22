"""PyTensor's ``equal_computations`` over terms: do two lists of graphs compute the same thing?

Equal terms are one object (interning), so two graphs over the same leaves are equal exactly
when they are the same term; what this function adds is PyTensor's leeway: pairs of terms
declared equivalent (``in_xs[i]`` standing for ``in_ys[i]``), constants compared by value
(across dtypes with ``strict_dtype=False``), and plain numbers and numpy arrays on either side
compared with constants by value. The walk is iterative and visits each pair of nodes once.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..core import Term

__all__ = ["equal_computations"]


def _value(x: Any) -> np.ndarray | None:
    """The value of a constant term, number or numpy array (None for any other term or object)."""
    if x.__class__ is Term:
        if not x.is_const:
            return None
        v = x.value
        return np.asarray(v.array if hasattr(v, "array") else v)
    if isinstance(x, (bool, int, float, complex, np.ndarray, np.generic)):
        return np.asarray(x)
    return None


def _same_values(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal shapes and values (NaN equal to NaN)."""
    if a.shape != b.shape:
        return False
    nan_ok = a.dtype.kind in "fc" and b.dtype.kind in "fc"
    try:
        return bool(np.array_equal(a, b, equal_nan=nan_ok))
    except TypeError:  # values numpy cannot compare
        return False


def _same_type(a: Term, b: Term) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape


def _leaf_equal(a: Any, b: Any, strict_dtype: bool) -> bool | None:
    """The answer for a pair where one side is a raw value or a constant (None: compare structurally)."""
    raw = a.__class__ is not Term or b.__class__ is not Term
    va, vb = _value(a), _value(b)
    if raw:  # a number or an array against anything: values, whatever their dtypes
        return va is not None and vb is not None and _same_values(va, vb)
    if va is None and vb is None:
        return None
    if va is None or vb is None:
        return False
    if strict_dtype and a.dtype != b.dtype:
        return False
    return _same_values(va, vb)


def equal_computations(
    xs: Sequence[Any],
    ys: Sequence[Any],
    in_xs: Sequence[Term] | None = None,
    in_ys: Sequence[Term] | None = None,
    strict_dtype: bool = True,
) -> bool:
    """Whether each ``xs[i]`` computes what ``ys[i]`` computes, ``in_xs[j]`` standing for ``in_ys[j]``.

    ``xs`` and ``ys`` hold terms, numbers or numpy arrays and must have the same length
    (``ValueError`` otherwise); ``in_xs`` and ``in_ys`` of different lengths compare unequal. A
    pair of ``in_xs``/``in_ys`` counts as equal when its dtypes and shapes agree. Constants
    compare by value and dtype (by value only with ``strict_dtype=False``); a number or array
    compares by value with a constant or another number or array.
    """
    if len(xs) != len(ys):
        raise ValueError(f"equal_computations needs as many graphs on each side, not {len(xs)} and {len(ys)}")
    ins_x, ins_y = list(in_xs or ()), list(in_ys or ())
    if len(ins_x) != len(ins_y):
        return False
    given = {(id(a), id(b)) for a, b in zip(ins_x, ins_y, strict=True) if _same_type(a, b)}
    seen: set[tuple[int, int]] = set()
    stack = list(zip(xs, ys, strict=True))
    while stack:
        a, b = stack.pop()
        if a is b and a.__class__ is Term:
            continue
        key = (id(a), id(b))
        if key in seen or key in given:
            continue
        seen.add(key)
        leaf = _leaf_equal(a, b, strict_dtype)
        if leaf is not None:
            if not leaf:
                return False
            continue
        if not (a.args or b.args) or a.op is not b.op or a.attr != b.attr or len(a.args) != len(b.args):
            return False  # different symbols, or different operations
        if strict_dtype and not _same_type(a, b):
            return False
        stack.extend(zip(a.args, b.args, strict=True))
    return True
