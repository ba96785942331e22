"""Result dtype and shape rules (``infer(args, attr) -> (dtype, shape)``) of the standard ops.

Imports dtypes, shapes and term only.
"""

from __future__ import annotations

from typing import Any

from ..errors import ShapeError
from .dtypes import BOOL, DTYPES, FLOAT32, FLOAT64, INT64, promote
from .shapes import broadcast_shapes, dims_equal, normalize_axes

#: numeric result dtype of binary arithmetic on each pair of operand dtypes

__all__ = ["arith", "same", "real", "boolean", "where_rule", "dot_rule", "matmul_rule", "sum_rule", "transpose_rule"]


def _shape(args: tuple) -> tuple:
    if len(args) == 1:
        return args[0].shape
    if len(args) == 2:
        a, b = args[0].shape, args[1].shape
        if not a:
            return b
        if not b or a is b:
            return a
    return broadcast_shapes(*(a.shape for a in args))


def _numeric(dtype: str) -> str:
    """Arithmetic counts bools as integers: a bool result is an int64 one."""
    return INT64 if dtype == BOOL else dtype


_ARITH2 = {(a, b): _numeric(promote(a, b)) for a in DTYPES for b in DTYPES}


def arith(args: tuple, attr: Any) -> tuple[str, tuple]:
    """Elementwise arithmetic: bools count as integers (True + True == 2)."""
    if len(args) == 2:
        a, b = args
        sa, sb = a.shape, b.shape
        return _ARITH2[a.dtype, b.dtype], (sb if not sa else sa if not sb or sa is sb else _shape(args))
    scalar = True
    for a in args:
        if a.shape:
            scalar = False
    return _numeric(promote(*(a.dtype for a in args))), (() if scalar else _shape(args))


def same(args: tuple, attr: Any) -> tuple[str, tuple]:
    """Elementwise, result in the promoted operand dtype (max/min keep bools)."""
    return promote(*(a.dtype for a in args)), _shape(args)


def real(args: tuple, attr: Any) -> tuple[str, tuple]:
    """Elementwise with a float result (division, transcendental functions): float32 for float32
    operands (with bools), float64 otherwise."""
    return (FLOAT32 if promote(*(a.dtype for a in args)) == FLOAT32 else FLOAT64), _shape(args)


def boolean(args: tuple, attr: Any) -> tuple[str, tuple]:
    """Elementwise with a bool result (comparisons, logic)."""
    return BOOL, _shape(args)


def where_rule(args: tuple, attr: Any) -> tuple[str, tuple]:
    """``where(cond, a, b)``: the promoted dtype of a and b, all three broadcast."""
    return promote(args[1].dtype, args[2].dtype), _shape(args)


def _contract(a: Any, b: Any, what: str) -> None:
    if dims_equal(a, b) is False:
        raise ShapeError(f"{what}: contracted dimensions differ ({a} vs {b})")


def dot_rule(args: tuple, attr: Any) -> tuple[str, tuple]:
    """numpy ``dot`` for operands of at most two dimensions."""
    a, b = args
    dtype = _numeric(promote(a.dtype, b.dtype))
    sa, sb = a.shape, b.shape
    if not sa or not sb:
        return dtype, sa or sb
    if len(sa) > 2 or len(sb) > 2:
        raise ShapeError(f"dot takes operands of at most 2 dimensions, got {sa} and {sb}; use matmul")
    _contract(sa[-1], sb[0], "dot")
    return dtype, sa[:-1] + sb[1:]


def matmul_rule(args: tuple, attr: Any) -> tuple[str, tuple]:
    """numpy ``matmul``: matrix product over the last two axes, leading axes broadcast."""
    a, b = args
    dtype = _numeric(promote(a.dtype, b.dtype))
    sa, sb = a.shape, b.shape
    if not sa or not sb:
        raise ShapeError("matmul operands must have at least one dimension; use * for scalars")
    _contract(sa[-1], sb[0] if len(sb) == 1 else sb[-2], "matmul")
    if len(sa) == 1 and len(sb) == 1:
        return dtype, ()
    if len(sa) == 1:
        return dtype, sb[:-2] + sb[-1:]
    if len(sb) == 1:
        return dtype, sa[:-1]
    return dtype, (*broadcast_shapes(sa[:-2], sb[:-2]), sa[-2], sb[-1])


def sum_rule(args: tuple, attr: Any) -> tuple[str, tuple]:
    """``sum(x, axis=...)``: the summed axes disappear (all of them for ``axis=None``)."""
    (x,) = args
    axes = normalize_axes(attr, x.ndim, "sum")
    return _numeric(x.dtype), tuple(d for i, d in enumerate(x.shape) if i not in axes)


def transpose_rule(args: tuple, attr: Any) -> tuple[str, tuple]:
    """``transpose(x, axes=...)``: permuted axes (reversed for ``axes=None``)."""
    (x,) = args
    if attr is None:
        return x.dtype, x.shape[::-1]
    axes = normalize_axes(attr, x.ndim, "transpose")
    if len(axes) != x.ndim:
        raise ShapeError(f"transpose: axes {attr} is not a permutation of {x.ndim} axes")
    return x.dtype, tuple(x.shape[i] for i in axes)


def _axis_key(attr: Any) -> Any:
    if attr is None or isinstance(attr, int):
        return attr
    if isinstance(attr, (tuple, list)):
        return tuple(attr)
    raise TypeError(f"an axis must be None, an int or a tuple of ints, not {attr!r}")
