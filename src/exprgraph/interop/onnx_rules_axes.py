"""ONNX shape rules that move, add, drop or resize axes: Slice, Transpose, Squeeze, Unsqueeze, the reductions,
Expand, Pad, Tile, Shape and the constants.

Axes and sizes that arrived as attributes in older opsets (Slice-1's starts/ends/axes, Pad-2's pads,
Squeeze/Unsqueeze/Reduce* axes before opsets 13 and 18) are read from the attribute when the input is absent.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..errors import ShapeError
from .onnx_dims import _BIG, Dim, DimArith, Shape, Value, _attr, _axes, _int_attr, _ints_attr
from .onnx_rules_common import has_input, known_ints, optional_ints, rank

if TYPE_CHECKING:
    from .onnx_shapes import Inference

__all__ = ["AXES_RULES"]


def _slice_length(d: DimArith, size: Dim, start: Dim, end: Dim, step: int) -> Dim:
    """Length of ``range(size)[start:end:step]`` (ONNX clamps starts and ends into the axis)."""
    if step > 0:
        lo = _clamp(d, start, size, 0)
        hi = _clamp(d, end, size, 0)
        return d.max(d.ceildiv(d.sub(hi, lo), step), 0)
    lo = _clamp(d, start, size, -1)
    hi = _clamp(d, end, size, -1)
    return d.max(d.ceildiv(d.sub(lo, hi), -step), 0)


def _clamp(d: DimArith, index: Dim, size: Dim, low: int) -> Dim:
    """An ONNX slice bound resolved against ``size``: negatives count from the end, then clamped."""
    if index is None or size is None:
        return None
    if isinstance(index, int):
        if index >= _BIG:
            return size if low == 0 else d.sub(size, 1)
        if index <= -_BIG:
            return low
        if index < 0:
            return d.max(d.add(size, index), low)
        return d.min(index, size if low == 0 else d.sub(size, 1))
    return d.min(index, size if low == 0 else d.sub(size, 1))


def _slice(inf: Inference, node: Any) -> list:
    # out[axis] = max(ceil((end - start)/step), 0), start and end clamped into the axis (opset 1: attributes)
    x = inf.shape(node, 0)
    if x is None:
        return [None]
    starts, ends = inf.value(node, 1), inf.value(node, 2)
    if len(node.input) == 1:  # opset 1: starts, ends and axes are attributes
        starts, ends = _ints_value(node, "starts"), _ints_value(node, "ends")
    if starts is None or ends is None:
        return [(None,) * len(x)]
    n = len(starts.entries)
    axes = optional_ints(inf, node, 3, _ints_attr(node, "axes") or list(range(n)))
    steps = optional_ints(inf, node, 4, [1] * n)
    if axes is None or steps is None:  # axes or steps computed at run time
        return [(None,) * len(x)]
    if not len(ends.entries) == len(axes) == len(steps) == n:
        raise ShapeError("starts, ends, axes and steps of different lengths")
    if 0 in steps:
        raise ShapeError("a slice step is 0")
    out = list(x)
    for start, end, axis, step in zip(starts.entries, ends.entries, _axes(axes, len(x)), steps, strict=True):
        out[axis] = _slice_length(inf.d, x[axis], start, end, step)
    return [tuple(out)]


def _ints_value(node: Any, name: str) -> Value | None:
    """An ints attribute as a Value (Slice-1's starts and ends)."""
    ints = _ints_attr(node, name)
    return None if ints is None else Value(tuple(ints))


def _transpose(inf: Inference, node: Any) -> list:
    # out[i] = x[perm[i]] (perm defaults to the axes reversed)
    x = inf.shape(node, 0)
    if x is None:
        return [None]
    perm = _ints_attr(node, "perm") or list(range(len(x)))[::-1]
    if sorted(perm) != list(range(len(x))):
        raise ShapeError(f"perm {perm} is not a permutation of the {len(x)} axes")
    return [tuple(x[p] for p in perm)]


def _axes_input_or_attr(inf: Inference, node: Any) -> list[int] | None:
    """The axes: input 1 when given (None when computed at run time), else the attribute (older opsets)."""
    if len(node.input) > 1 and node.input[1]:
        return inf.ints(node, 1)
    return _ints_attr(node, "axes")


def _unsqueeze(inf: Inference, node: Any) -> list:
    # out: x with a 1 inserted at each axis (rank + len(axes)); axes an attribute before opset 13
    x, axes = inf.shape(node, 0), _axes_input_or_attr(inf, node)
    if x is not None and axes is None and len(node.input) > 1:  # axes computed at run time: the rank is known
        count = inf.shape(node, 1)
        n = count[0] if count is not None and len(count) == 1 else None
        return [(None,) * rank(len(x) + n) if isinstance(n, int) else None]
    if x is None or axes is None:
        return [None]
    out_rank = rank(len(x) + len(axes))
    new = set(_axes(axes, out_rank))
    it = iter(x)
    return [tuple(1 if i in new else next(it) for i in range(out_rank))]


def _squeeze(inf: Inference, node: Any) -> list:
    # out: x without the named axes of size 1 (without any axis of size 1 when none is named)
    x, axes = inf.shape(node, 0), _axes_input_or_attr(inf, node)
    if x is None:
        return [None]
    if axes is None:
        if (len(node.input) > 1 and node.input[1]) or not known_ints(x):
            return [None]  # axes computed at run time, or which dims are 1 is unknown
        return [tuple(e for e in x if e != 1)]
    drop = set(_axes(axes, len(x)))
    wrong = [i for i in drop if x[i].__class__ is int and x[i] != 1]
    if wrong:
        raise ShapeError(f"cannot squeeze axes {wrong} of {x}: not of size 1")
    return [tuple(e for i, e in enumerate(x) if i not in drop)]


def _shape_op(inf: Inference, node: Any) -> list:
    # out = (len(x[start:end]),)
    x = inf.shape(node, 0)
    if x is None:
        return [None]
    return [(len(x[_int_attr(node, "start", 0) : _int_attr(node, "end", len(x))]),)]


def _reduce(inf: Inference, node: Any) -> list:
    # out: x with each reduced axis 1 (keepdims) or dropped; no axes: all (or none with noop_with_empty_axes)
    x = inf.shape(node, 0)
    if x is None:
        return [None]
    keep = _int_attr(node, "keepdims", 1)
    axes: list[int] | None
    if node.op_type in ("ArgMax", "ArgMin"):
        axes = [_int_attr(node, "axis", 0)]
    else:
        axes = _axes_input_or_attr(inf, node)
        if axes is None and len(node.input) > 1 and node.input[1]:
            return [_reduce_unknown_axes(inf, node, x, keep)]  # axes computed at run time
    if not axes:
        axes = [] if _int_attr(node, "noop_with_empty_axes", 0) else list(range(len(x)))
    drop = set(_axes(axes, len(x)))
    return [tuple((1 if i in drop else e) for i, e in enumerate(x) if keep or i not in drop)]


def _reduce_unknown_axes(inf: Inference, node: Any, x: tuple, keep: int) -> Shape:
    """A reduction over axes known at run time: with keepdims each dim is itself or 1 (so 1 stays 1);
    without, the rank drops by the number of axes."""
    if keep:
        return tuple(1 if e.__class__ is int and e == 1 else None for e in x)
    count = inf.shape(node, 1)
    if count is None or len(count) != 1 or count[0].__class__ is not int or count[0] > len(x):
        return None
    if count[0] == 0:  # empty axes: all axes, or none with noop_with_empty_axes
        return x if _int_attr(node, "noop_with_empty_axes", 0) else ()
    return (None,) * (len(x) - count[0])


def _expand(inf: Inference, node: Any) -> list:
    # out = broadcast(x, target)
    x, target = inf.shape(node, 0), inf.value(node, 1)
    if target is None:
        return [None]
    return [inf.broadcast([x, target.entries])]


def _constant_of_shape(inf: Inference, node: Any) -> list:
    # out = the values of the shape input
    target = inf.value(node, 0)
    return [None if target is None else target.entries]


def _constant(inf: Inference, node: Any) -> list:
    # out = the value's shape: a tensor's dims, () for a scalar, (n,) for a list
    value = _attr(node, "value")
    if value is not None:
        return [inf.tensor_shape(value)]
    if _int_attr(node, "value_int") is not None or _attr(node, "value_float") is not None:
        return [()]
    for name in ("value_ints", "value_floats", "value_strings"):
        values = _attr(node, name)
        if values is not None:
            return [(len(values),)]
    return [None]


def _pad(inf: Inference, node: Any) -> list:
    # out[axis] = x[axis] + pad_begin + pad_end (pads an attribute before opset 11)
    x = inf.shape(node, 0)
    attr = _ints_attr(node, "pads")  # an attribute before opset 11
    pads: list[Dim] | None = None if attr is None else list(attr)
    if has_input(node, 1):  # computed pads may be symbolic (Swin pads up to a multiple of its window)
        value = inf.value(node, 1)
        pads = None if value is None else list(value.entries)
    if x is None or pads is None:
        return [None]
    axes = optional_ints(inf, node, 3, list(range(len(x))))
    if axes is None:  # axes computed at run time
        return [(None,) * len(x)]
    if len(pads) != 2 * len(axes):
        raise ShapeError(f"{len(pads)} pads for {len(axes)} axes")
    out = list(x)
    for j, axis in enumerate(_axes(axes, len(x))):
        out[axis] = inf.d.add(out[axis], inf.d.add(pads[j], pads[j + len(axes)]))
    return [tuple(out)]


def _tile(inf: Inference, node: Any) -> list:
    # out[i] = x[i] * repeats[i]
    x, repeats = inf.shape(node, 0), inf.value(node, 1)
    if x is None or repeats is None:
        return [None]
    if len(repeats.entries) != len(x):
        raise ShapeError(f"{len(repeats.entries)} repeats for rank {len(x)}")
    return [tuple(inf.d.mul(a, r) for a, r in zip(x, repeats.entries, strict=True))]


_REDUCE = (
    "ReduceL1 ReduceL2 ReduceLogSum ReduceLogSumExp ReduceMax ReduceMean ReduceMin ReduceProd ReduceSum "
    "ReduceSumSquare ArgMax ArgMin"
).split()

#: ONNX op type -> shape rule, for the ops of this family
AXES_RULES: dict[str, Callable[[Inference, Any], list]] = {
    **dict.fromkeys(_REDUCE, _reduce),
    "Slice": _slice,
    "Transpose": _transpose,
    "Unsqueeze": _unsqueeze,
    "Squeeze": _squeeze,
    "Shape": _shape_op,
    "Expand": _expand,
    "ConstantOfShape": _constant_of_shape,
    "Constant": _constant,
    "Pad": _pad,
    "Tile": _tile,
}
