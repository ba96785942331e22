"""Value rules: the entries of small tensors followed through the ops exporters compute shapes with.

``Reshape(x, Concat(Shape(x)[:1], [-1]))``, ``Expand(x, Where(Equal(s, -1), 1, s))`` and pads written
as ``(7 - W//4 % 7) % 7`` are only exact if the tensors holding shapes are known entry by entry: this
module moves entries (``Shape``, ``Gather*``, ``Slice``, ``Concat``, ``Reshape``, ``Expand``, ``Range``,
``Split``, ``Scatter*``, ...); :mod:`.onnx_values_math` computes them. A rule maps ``(inference, node)``
to the Value of the first output, a list of Values (one per output), or None. Imports: core, errors,
onnx_dims, onnx_values_io, onnx_values_math.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import ShapeError
from .onnx_dims import MAX_VALUE_SIZE, Dim, Value, _attr, _axes, _axis, _int_attr, _ints_attr
from .onnx_values_io import normal
from .onnx_values_math import MATH_RULES, array, as_value

if TYPE_CHECKING:
    from .onnx_shapes import Inference

__all__ = ["VALUE_RULES", "FROM_SHAPES"]

Rule = Callable[["Inference", Any], "Value | list[Value | None] | None"]


def _index(i: Any, n: int) -> int | None:
    """An index into ``n`` entries (negatives count from the end); None when computed at run time."""
    if i.__class__ is not int:
        return None
    if not -n <= i < n:
        raise ShapeError(f"index {i} out of range for {n} entries")
    return i % n


def _shape(inf: Inference, node: Any) -> Value | None:
    # Shape(x)[start:end]: the dims of x (ONNX clamps start and end as Python slicing does)
    x = inf.shape(node, 0)
    if x is None:
        return None
    return Value(tuple(x[_int_attr(node, "start", 0) : _int_attr(node, "end", len(x))]))


def _size(inf: Inference, node: Any) -> Value | None:
    # Size(x) = the product of x's dims
    x = inf.shape(node, 0)
    return None if x is None else Value((_or_none(inf.d.prod, x),), True)


def _or_none(fn: Callable[..., Dim], *args: Any) -> Dim:
    try:
        return fn(*args)
    except (ArithmeticError, ShapeError):
        return None


def _constant(inf: Inference, node: Any) -> Value | None:
    # Constant: its tensor, int(s) or float(s)
    value = _attr(node, "value")
    if value is not None:
        return inf.tensor_value(value)
    scalar = _int_attr(node, "value_int")
    if scalar is not None:
        return Value((scalar,), True)
    ints = _ints_attr(node, "value_ints")
    if ints is not None:
        return Value(tuple(ints)) if len(ints) <= MAX_VALUE_SIZE else None
    real = _attr(node, "value_float")
    if isinstance(real, float):
        return Value((normal(real),), True, "float")
    reals = _attr(node, "value_floats")
    if isinstance(reals, list) and len(reals) <= MAX_VALUE_SIZE:
        return Value(tuple(normal(float(r)) for r in reals), False, "float")
    return None


def _gather(inf: Inference, node: Any) -> Value | None:
    # Gather(data, idx) along axis 0 of a 1-d data: data[idx], of idx's shape
    data, idx = inf.tensor(node, 0), inf.tensor(node, 1)
    if data is None or idx is None or data.dims is not None or data.scalar:
        return None
    if node.op_type == "Gather" and _axis(_int_attr(node, "axis", 0), 1) != 0:
        return None
    picked = [_index(i, len(data.entries)) for i in idx.entries]
    if any(p is None for p in picked):
        return None  # an index computed at run time
    return Value(tuple(data.entries[p] for p in picked if p is not None), idx.scalar, data.kind, idx.dims)


def _gather_nd(inf: Inference, node: Any) -> Value | None:
    # GatherND(data, idx) of a 1-d data: idx[..., 0] picks entries
    data, idx = inf.tensor(node, 0), inf.tensor(node, 1)
    if data is None or idx is None or data.dims is not None or data.scalar or _int_attr(node, "batch_dims", 0):
        return None
    if idx.shape[-1:] != (1,):
        return None
    picked = array(idx).reshape(idx.shape[:-1])
    out = np.empty(picked.size, dtype=object)
    for k, i in enumerate(picked.reshape(-1)):
        p = _index(i, len(data.entries))
        if p is None:
            return None
        out[k] = data.entries[p]
    return as_value(out.reshape(picked.shape), data.kind)


def _slice(inf: Inference, node: Any) -> Value | None:
    # Slice(v, starts, ends, axes, steps): v[start:end:step] on each axis, ONNX clamping as Python's
    v = inf.tensor(node, 0)
    starts, ends = inf.ints(node, 1), inf.ints(node, 2)
    if v is None or v.scalar or starts is None or ends is None or len(starts) != len(ends):
        return None
    has = [len(node.input) > i and bool(node.input[i]) for i in (3, 4)]
    axes = inf.ints(node, 3) if has[0] else list(range(len(starts)))
    steps = inf.ints(node, 4) if has[1] else [1] * len(starts)
    if axes is None or steps is None or not len(axes) == len(steps) == len(starts) or 0 in steps:
        return None
    cut = [slice(None)] * len(v.shape)
    for axis, start, end, step in zip(_axes(axes, len(v.shape)), starts, ends, steps, strict=True):
        n = v.shape[axis]
        cut[axis] = slice(max(-n - 1, min(start, n)), max(-n - 1, min(end, n)), step)
    if len(cut) == 1:  # a 1-d value: numpy slices as Python does
        return Value(v.entries[cut[0]], False, v.kind)
    return as_value(array(v)[tuple(cut)], v.kind)


def _concat(inf: Inference, node: Any) -> Value | None:
    # Concat of 1-d values: their entries one after the other
    parts = [inf.value(node, i) for i in range(len(node.input))]
    known = [p for p in parts if p is not None and not p.scalar]
    if not parts or len(known) < len(parts) or sum(len(p.entries) for p in known) > MAX_VALUE_SIZE:
        return None
    return Value(tuple(e for p in known for e in p.entries), False, known[0].kind)


def _same(inf: Inference, node: Any) -> Value | None:
    # Identity (and a 1-d Transpose): the same entries
    v = inf.tensor(node, 0)
    if v is None or (node.op_type == "Transpose" and v.dims is not None):
        return _transpose(inf, node, v)
    return v


def _transpose(inf: Inference, node: Any, v: Value | None) -> Value | None:
    # Transpose of an n-d value: its entries permuted
    if v is None:
        return None
    perm = _ints_attr(node, "perm") or list(range(len(v.shape)))[::-1]
    if sorted(perm) != list(range(len(v.shape))):
        raise ShapeError(f"perm {perm} is not a permutation of the {len(v.shape)} axes")
    return as_value(np.transpose(array(v), perm), v.kind)


def _reshaped(v: Value, shape: tuple[int, ...]) -> Value | None:
    """``v``'s entries in row-major order, as a tensor of ``shape``."""
    if math.prod(shape) != len(v.entries):
        raise ShapeError(f"cannot reshape a value of {len(v.entries)} entries to {shape}")
    return Value(v.entries, not shape, v.kind, shape if len(shape) > 1 else None)


def _reshape(inf: Inference, node: Any) -> Value | None:
    # Reshape: the same entries, in the output's shape (when it is known as numbers)
    return _moved(inf, node)


def _moved(inf: Inference, node: Any) -> Value | None:
    """The input's entries in the output's shape (Reshape, Flatten, Squeeze, Unsqueeze)."""
    v, out = inf.tensor(node, 0), inf.shapes.get(node.output[0])
    if v is None or out is None or not all(d.__class__ is int for d in out):
        return None
    return _reshaped(v, tuple(out))  # type: ignore[arg-type]


def _expand(inf: Inference, node: Any) -> Value | None:
    # Expand(v, shape): v broadcast to the output's shape
    v, out = inf.tensor(node, 0), inf.shapes.get(node.output[0])
    if v is None or out is None or not all(d.__class__ is int for d in out) or math.prod(out) > MAX_VALUE_SIZE:  # type: ignore[arg-type]
        return None
    return as_value(np.broadcast_to(array(v), tuple(out)), v.kind)  # type: ignore[arg-type]


def _tile(inf: Inference, node: Any) -> Value | None:
    # Tile of an n-d value: numpy's tile
    v, reps = inf.tensor(node, 0), inf.ints(node, 1)
    if v is None or reps is None or len(reps) != len(v.shape) or min(reps, default=1) < 0:
        return None
    if len(v.entries) * math.prod(reps) > MAX_VALUE_SIZE:
        return None
    return as_value(np.tile(array(v), reps), v.kind)


def _constant_of_shape(inf: Inference, node: Any) -> Value | None:
    # ConstantOfShape(shape, value): value repeated over a small shape
    target = inf.ints(node, 0)
    if target is None or min(target, default=1) < 0 or math.prod(target) > MAX_VALUE_SIZE:
        return None  # (the fill is read only for a value that is followed)
    fill = _attr(node, "value")
    v = Value((0,), False, "float") if fill is None else inf.tensor_value(fill)
    if v is None or len(v.entries) != 1:
        return None
    shape = tuple(target)
    return Value(v.entries * math.prod(shape), not shape, v.kind, shape if len(shape) > 1 else None)


def _range(inf: Inference, node: Any) -> Value | None:
    # Range(start, limit, delta): start + i*delta for i < max(ceil((limit - start)/delta), 0)
    parts = [inf.value(node, i) for i in range(3)]
    if any(p is None or len(p.entries) != 1 for p in parts):
        return None
    start, limit, delta = (p.entries[0] for p in parts)  # type: ignore[union-attr]
    if delta.__class__ not in (int, float) or delta == 0:
        return None
    span: Any = None
    if start.__class__ is float or limit.__class__ is float:
        span = limit - start if isinstance(start, (int, float)) and isinstance(limit, (int, float)) else None
    else:
        span = inf.d.sub(limit, start)
    if span.__class__ not in (int, float):
        return None  # a length that depends on the dims
    n = max(math.ceil(span / delta), 0)
    if n > MAX_VALUE_SIZE:
        return None
    kind = parts[0].kind  # type: ignore[union-attr]
    if delta.__class__ is float or start.__class__ is float:
        return Value(tuple(normal(start + i * delta) for i in range(n)), False, kind)  # type: ignore[operator]
    return Value(tuple(_or_none(inf.d.add, start, i * delta) for i in range(n)), False, kind)


def _split(inf: Inference, node: Any) -> list[Value | None] | None:
    # Split of a 1-d value: consecutive runs of the output sizes
    v = inf.value(node, 0)
    if v is None or v.scalar:
        return None
    sizes = [inf.shapes.get(name) for name in node.output]
    if any(s is None or len(s) != 1 or s[0].__class__ is not int for s in sizes):
        return None
    out: list[Value | None] = []
    at = 0
    for s in sizes:
        n: int = s[0]  # type: ignore[index,assignment]
        out.append(Value(v.entries[at : at + n], False, v.kind))
        at += n
    return out


def _cumsum(inf: Inference, node: Any) -> Value | None:
    # CumSum of a 1-d value: running totals (exclusive: shifted by one; reverse: from the end)
    v, axis = inf.value(node, 0), inf.ints(node, 1)
    if v is None or v.scalar or axis is None or len(axis) != 1 or _axis(axis[0], 1) != 0:
        return None
    entries = list(v.entries[::-1] if _int_attr(node, "reverse", 0) else v.entries)
    acc: Dim = 0
    out: list[Dim] = []
    for e in entries:
        nxt = None if acc is None or e is None else _or_none(inf.d.add, acc, e)
        out.append(acc if _int_attr(node, "exclusive", 0) else nxt)
        acc = nxt
    return Value(tuple(out[::-1] if _int_attr(node, "reverse", 0) else out), False, v.kind)


def _scatter(inf: Inference, node: Any) -> Value | None:
    # Scatter(Elements/ND) into a 1-d value: data with entries at the indices replaced (or combined)
    data, idx, upd = inf.value(node, 0), inf.tensor(node, 1), inf.tensor(node, 2)
    if data is None or data.scalar or idx is None or upd is None:
        return None
    indices = list(idx.entries)
    if node.op_type == "ScatterND":
        if idx.shape[-1:] != (1,):
            return None
    elif _axis(_int_attr(node, "axis", 0), 1) != 0:
        return None
    if len(indices) != len(upd.entries):
        raise ShapeError(f"{len(indices)} indices for {len(upd.entries)} updates")
    out = list(data.entries)
    combine = _COMBINE.get(_attr(node, "reduction", "none"))
    for i, u in zip(indices, upd.entries, strict=True):
        p = _index(i, len(out))
        if p is None:
            return None
        out[p] = u if combine is None else _or_none(getattr(inf.d, combine), out[p], u)
    return Value(tuple(out), False, data.kind)


_COMBINE = {"add": "add", "mul": "mul", "max": "max", "min": "min"}


def _unsqueeze_or_squeeze(inf: Inference, node: Any) -> Value | None:
    # Squeeze/Unsqueeze: the same entries, in the output's shape
    v = inf.tensor(node, 0)
    if v is not None and node.op_type == "Unsqueeze" and v.scalar and inf.shapes.get(node.output[0]) is None:
        axes = inf.ints(node, 1) if len(node.input) > 1 and node.input[1] else _ints_attr(node, "axes")
        if axes is not None and len(axes) == 1 and _axes(axes, 1):
            return Value(v.entries, False, v.kind)
    return _moved(inf, node)


def _non_zero(inf: Inference, node: Any) -> Value | None:
    # NonZero of a known 1-d value: the indices of its nonzero entries, as a [1, n] tensor
    v = inf.value(node, 0)
    if v is None or v.scalar or any(e.__class__ not in (int, float) for e in v.entries):
        return None
    picked = tuple(i for i, e in enumerate(v.entries) if e != 0)
    return Value(picked, False, "int", (1, len(picked))) if picked else None


#: the ops whose value rule reads no input's value (every other rule gives None when no input has one)
FROM_SHAPES = frozenset({"Shape", "Size", "Constant"})

VALUE_RULES: dict[str, Rule] = {
    **MATH_RULES,
    "Shape": _shape,
    "Size": _size,
    "Constant": _constant,
    "Gather": _gather,
    "GatherElements": _gather,
    "GatherND": _gather_nd,
    "Slice": _slice,
    "Concat": _concat,
    "Identity": _same,
    "Transpose": _same,
    "Reshape": _reshape,
    "Flatten": _moved,
    "Squeeze": _unsqueeze_or_squeeze,
    "Unsqueeze": _unsqueeze_or_squeeze,
    "Expand": _expand,
    "Tile": _tile,
    "ConstantOfShape": _constant_of_shape,
    "Range": _range,
    "Split": _split,
    "CumSum": _cumsum,
    "Scatter": _scatter,
    "ScatterElements": _scatter,
    "ScatterND": _scatter,
    "NonZero": _non_zero,
}
