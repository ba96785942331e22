"""The shape rules of ONNX operators, on dimensions that are ints or ``exprgraph.dims`` terms.

Each rule maps an ONNX node to the shapes of its outputs, given the shapes (and, for small
integer tensors, the symbolic values) of its inputs that :mod:`exprgraph.interop.onnx_shapes`
has found so far. Dimension arithmetic goes through :class:`Dims`, which simplifies as it goes
and keeps every int in int64. A rule returns None for what it cannot know (a shape computed at
run time) and raises ``ShapeError`` for what is malformed (an axis out of range, a ``perm`` that
is not a permutation, split sizes that do not add up); the caller names the node.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..errors import DimOverflowError, ShapeError
from .onnx_dims import (
    _BIG,
    MAX_RANK,
    Dim,
    Dims,
    Shape,
    Value,
    _attr,
    _axes,
    _axis,
    _int_attr,
    _ints_attr,
    broadcast_with_unknowns,
)

if TYPE_CHECKING:
    from .onnx_shapes import Inference

__all__ = ["Dim", "Shape", "Value", "Dims", "SHAPE_RULES", "broadcast_with_unknowns", "rank"]


def rank(n: int) -> int:
    """``n`` as a tensor rank; DimOverflowError past :data:`MAX_RANK`."""
    if n > MAX_RANK:
        raise DimOverflowError(f"rank {n} is more than the limit {MAX_RANK}")
    return n


def _known_ints(dims: Any) -> bool:
    return all(e.__class__ is int for e in dims)


# -- shape rules: (inference, node) -> list of output shapes --------------------------------------------


def _same(inf: Inference, node: Any) -> list:
    # the first output has the input's shape (Dropout's mask too); other outputs (statistics) are not followed
    x = inf.shape(node, 0)
    return [x] * len(node.output) if node.op_type == "Dropout" else [x] + [None] * (len(node.output) - 1)


def _broadcasting(inf: Inference, node: Any) -> list:
    shapes = [inf.shape(node, i) for i in range(len(node.input)) if node.input[i]]
    if not shapes:
        raise ShapeError("no inputs")
    return [inf.broadcast(shapes)]


def _sizes(node: Any, name: str, n: int, default: int, low: int) -> list[int]:
    """Attribute ``name``: ``n`` ints of at least ``low`` (``default`` each when absent or empty)."""
    values = _ints_attr(node, name)
    if not values:
        return [default] * n
    if len(values) != n:
        raise ShapeError(f"attribute {name!r} has {len(values)} entries, not {n}")
    if min(values) < low:
        raise ShapeError(f"attribute {name!r} has an entry below {low}: {values}")
    return values


def _conv_pool(inf: Inference, node: Any) -> list:
    """Conv and the pools: each spatial axis maps ``in`` to ``(in + pads - (d*(k-1)+1))//s + 1``."""
    d = inf.d
    x = inf.shape(node, 0)
    if x is None:
        return [None] * len(node.output)
    if len(x) < 3:
        raise ShapeError(f"input of rank {len(x)} has no spatial axis")
    n_spatial = len(x) - 2
    is_conv = node.op_type in ("Conv", "ConvInteger", "QLinearConv")
    w = inf.shape(node, 3 if node.op_type == "QLinearConv" else 1) if is_conv else None
    if node.op_type.startswith("Global"):
        return [(x[0], x[1], *([1] * n_spatial))]
    kernel: list[Dim] | None = list(_ints_attr(node, "kernel_shape") or []) or None
    if kernel is None and w is not None:
        kernel = list(w[2:])  # the weights' spatial dims
    if kernel is None:
        return [None] * len(node.output)
    if len(kernel) != n_spatial or any(k.__class__ is int and k < 1 for k in kernel):
        raise ShapeError(f"kernel {kernel} does not fit an input of {n_spatial} spatial axes")
    strides = _sizes(node, "strides", n_spatial, 1, 1)
    dilations = _sizes(node, "dilations", n_spatial, 1, 1)
    pads = _sizes(node, "pads", 2 * n_spatial, 0, 0)
    auto_pad = _attr(node, "auto_pad", "NOTSET")
    if auto_pad not in ("NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"):
        raise ShapeError(f"unknown auto_pad {auto_pad!r}")
    ceil_mode = bool(_int_attr(node, "ceil_mode", 0)) and not is_conv
    out: list[Dim] = [x[0], (w[0] if w is not None else None) if is_conv else x[1]]
    for i in range(n_spatial):
        size, s = x[2 + i], strides[i]
        window = d.add(d.mul(dilations[i], d.sub(kernel[i], 1)), 1)  # d*(k-1)+1
        if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
            same = d.ceildiv(size, s)  # ceil(in / s)
            if not ceil_mode:
                out.append(same)
                continue
            # with ceil_mode, ONNX pads as SAME asks, then rounds the window count up
            padding = d.max(d.sub(d.add(d.mul(d.sub(same, 1), s), window), size), 0)
        elif auto_pad == "VALID":
            padding = 0
        else:
            padding = d.add(pads[i], pads[i + n_spatial])
        span = d.sub(d.add(size, padding), window)  # positions the window can start at, minus one
        steps = d.ceildiv(span, s) if ceil_mode else d.floordiv(span, s)
        out.append(d.add(steps, 1))
    return [tuple(out)] * len(node.output)


def _reshape(inf: Inference, node: Any) -> list:
    d = inf.d
    x, target = inf.shape(node, 0), inf.value(node, 1)
    if target is None:
        shape_of_shape = inf.shape(node, 1)
        if shape_of_shape is None or len(shape_of_shape) != 1 or not isinstance(shape_of_shape[0], int):
            return [None]
        return [(None,) * rank(shape_of_shape[0])]
    allow_zero = _int_attr(node, "allowzero", 0)
    out: list[Dim] = []
    infer_at = None
    for i, e in enumerate(target.entries):
        if e.__class__ is int and e == 0 and not allow_zero:  # 0 copies the input's dimension
            if x is not None and i >= len(x):
                raise ShapeError(f"target entry {i} is 0 (copy) but the input has rank {len(x)}")
            out.append(x[i] if x is not None else None)
        elif e.__class__ is int and e == -1:
            if infer_at is not None:
                raise ShapeError("the target shape has more than one -1")
            infer_at = i
            out.append(None)
        elif isinstance(e, int) and e < 0:
            raise ShapeError(f"target entry {i} is {e} (only -1 may be negative)")
        else:
            out.append(e)
    total = d.prod(x) if x is not None else None
    if infer_at is not None:
        if allow_zero and 0 in [e for e in target.entries if e.__class__ is int]:
            raise ShapeError("with allowzero the target shape may not hold both 0 and -1")
        rest = d.prod(e for i, e in enumerate(out) if i != infer_at)
        out[infer_at] = _quotient(d, total, rest)  # the total size is unchanged
    elif total.__class__ is int and _known_ints(out) and d.prod(out) != total:
        raise ShapeError(f"cannot reshape {x} ({total} elements) to {tuple(out)}")
    return [tuple(out)]


def _quotient(d: Dims, total: Dim, rest: Dim) -> Dim:
    """The dimension that -1 stands for: ``total // rest`` (unknown next to a zero-size dimension)."""
    if rest.__class__ is int and rest == 0:
        return None
    if isinstance(total, int) and isinstance(rest, int) and total % rest:
        raise ShapeError(f"cannot reshape {total} elements into a multiple of {rest}")
    return d.floordiv(total, rest)


def _flatten(inf: Inference, node: Any) -> list:
    x = inf.shape(node, 0)
    if x is None:
        return [None]
    axis = _int_attr(node, "axis", 1)
    if not -len(x) <= axis <= len(x):
        raise ShapeError(f"axis {axis} out of range for rank {len(x)}")
    axis = axis + len(x) if axis < 0 else axis
    return [(inf.d.prod(x[:axis]), inf.d.prod(x[axis:]))]


def _concat(inf: Inference, node: Any) -> list:
    found = [inf.shape(node, i) for i in range(len(node.input))]
    shapes = [s for s in found if s is not None]
    if not found:
        raise ShapeError("no inputs")
    if len(shapes) < len(found):
        return [None]
    if len({len(s) for s in shapes}) > 1:
        raise ShapeError(f"inputs of different ranks: {[len(s) for s in shapes]}")
    axis = _axis(_int_attr(node, "axis"), len(shapes[0]))
    out = list(shapes[0])
    for i in range(len(out)):
        if i == axis:
            out[i] = inf.d.total(s[i] for s in shapes)
            continue
        ints = {d for s in shapes if isinstance(d := s[i], int)}
        if len(ints) > 1:
            raise ShapeError(f"inputs differ on axis {i}: {sorted(ints)}")
        out[i] = ints.pop() if ints else next((s[i] for s in shapes if s[i] is not None), None)
    return [tuple(out)]


def _split(inf: Inference, node: Any) -> list:
    d = inf.d
    x, n = inf.shape(node, 0), len(node.output)
    if x is None or n == 0:
        return [None] * n
    axis = _axis(_int_attr(node, "axis", 0), len(x))
    size = x[axis]
    given = _optional_ints(inf, node, 1, _ints_attr(node, "split"))
    if given is None and len(node.input) > 1 and node.input[1]:  # sizes computed at run time
        return [(*x[:axis], None, *x[axis + 1 :])] * n
    sizes: list[Dim]
    if given is not None:
        if len(given) != n or min(given) < 0 or (isinstance(size, int) and sum(given) != size):
            raise ShapeError(f"split sizes {given} do not cut an axis of size {size} into {n} outputs")
        sizes = list(given)
    elif (num_outputs := _int_attr(node, "num_outputs")) is not None:
        if num_outputs != n:
            raise ShapeError(f"num_outputs is {num_outputs} but the node has {n} outputs")
        chunk = d.ceildiv(size, n)  # equal chunks, the last one smaller when it does not divide
        sizes = [chunk] * (n - 1) + [d.sub(size, d.mul(chunk, n - 1))]
    else:
        if isinstance(size, int) and size % n:
            raise ShapeError(f"axis of size {size} does not split into {n} equal parts")
        sizes = [d.floordiv(size, n)] * n
    return [(*x[:axis], s, *x[axis + 1 :]) for s in sizes]


def _matmul(inf: Inference, node: Any) -> list:
    a, b = inf.shape(node, 0), inf.shape(node, 1)
    if a is None or b is None:
        return [None]
    if not a or not b:
        raise ShapeError("MatMul of a 0-d tensor")
    a1, b1 = len(a) == 1, len(b) == 1
    a2 = (1, *a) if a1 else a
    b2 = (*b, 1) if b1 else b
    _same_inner(a2[-1], b2[-2])
    batch = inf.broadcast([a2[:-2], b2[:-2]])
    if batch is None:  # pragma: no cover - both batch shapes are known here
        return [None]
    out = (*batch, *(() if a1 else (a2[-2],)), *(() if b1 else (b2[-1],)))
    return [out]


def _same_inner(k: Dim, k2: Dim) -> None:
    if k.__class__ is int and k2.__class__ is int and k != k2:
        raise ShapeError(f"inner dimensions differ: {k} vs {k2}")


def _gemm(inf: Inference, node: Any) -> list:
    a, b = inf.shape(node, 0), inf.shape(node, 1)
    if a is None or b is None:
        return [None]
    if len(a) != 2 or len(b) != 2:
        raise ShapeError(f"Gemm of ranks {len(a)} and {len(b)} (needs 2 and 2)")
    m, ka = (a[1], a[0]) if _int_attr(node, "transA", 0) else a
    kb, n = (b[1], b[0]) if _int_attr(node, "transB", 0) else b
    _same_inner(ka, kb)
    return [(m, n)]


def _gather(inf: Inference, node: Any) -> list:
    data, indices = inf.shape(node, 0), inf.shape(node, 1)
    if data is None or indices is None:
        return [None]
    axis = _axis(_int_attr(node, "axis", 0), len(data))
    return [(*data[:axis], *indices, *data[axis + 1 :])]


def _slice_length(d: Dims, size: Dim, start: Dim, end: Dim, step: int) -> Dim:
    """Length of ``range(size)[start:end:step]`` (ONNX clamps starts and ends into the axis)."""
    if step > 0:
        lo = _clamp(d, start, size, 0)
        hi = _clamp(d, end, size, 0)
        return d.max(d.ceildiv(d.sub(hi, lo), step), 0)
    lo = _clamp(d, start, size, -1)
    hi = _clamp(d, end, size, -1)
    return d.max(d.ceildiv(d.sub(lo, hi), -step), 0)


def _clamp(d: Dims, index: Dim, size: Dim, low: int) -> Dim:
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


def _optional_ints(inf: Inference, node: Any, i: int, default: list[int] | None) -> list[int] | None:
    """The ints of input ``i``; ``default`` when it is absent, None when computed at run time."""
    return inf.ints(node, i) if len(node.input) > i and node.input[i] else default


def _slice(inf: Inference, node: Any) -> list:
    x = inf.shape(node, 0)
    if x is None:
        return [None]
    starts, ends = inf.value(node, 1), inf.value(node, 2)
    if starts is None or ends is None:
        return [(None,) * len(x)]
    n = len(starts.entries)
    axes = _optional_ints(inf, node, 3, list(range(n)))
    steps = _optional_ints(inf, node, 4, [1] * n)
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


def _transpose(inf: Inference, node: Any) -> list:
    x = inf.shape(node, 0)
    if x is None:
        return [None]
    perm = _ints_attr(node, "perm") or list(range(len(x)))[::-1]
    if sorted(perm) != list(range(len(x))):
        raise ShapeError(f"perm {perm} is not a permutation of the {len(x)} axes")
    return [tuple(x[p] for p in perm)]


def _axes_input_or_attr(inf: Inference, node: Any) -> list[int] | None:
    if len(node.input) > 1 and node.input[1]:
        return inf.ints(node, 1)
    return _ints_attr(node, "axes")


def _unsqueeze(inf: Inference, node: Any) -> list:
    x, axes = inf.shape(node, 0), _axes_input_or_attr(inf, node)
    if x is None or axes is None:
        return [None]
    out_rank = rank(len(x) + len(axes))
    new = set(_axes(axes, out_rank))
    it = iter(x)
    return [tuple(1 if i in new else next(it) for i in range(out_rank))]


def _squeeze(inf: Inference, node: Any) -> list:
    x, axes = inf.shape(node, 0), _axes_input_or_attr(inf, node)
    if x is None:
        return [None]
    if axes is None:
        if (len(node.input) > 1 and node.input[1]) or not _known_ints(x):
            return [None]  # axes computed at run time, or which dims are 1 is unknown
        return [tuple(e for e in x if e != 1)]
    drop = set(_axes(axes, len(x)))
    wrong = [i for i in drop if x[i].__class__ is int and x[i] != 1]
    if wrong:
        raise ShapeError(f"cannot squeeze axes {wrong} of {x}: not of size 1")
    return [tuple(e for i, e in enumerate(x) if i not in drop)]


def _shape_op(inf: Inference, node: Any) -> list:
    x = inf.shape(node, 0)
    if x is None:
        return [None]
    return [(len(x[_int_attr(node, "start", 0) : _int_attr(node, "end", len(x))]),)]


def _reduce(inf: Inference, node: Any) -> list:
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
            return [None]  # axes computed at run time
    if not axes:
        axes = [] if _int_attr(node, "noop_with_empty_axes", 0) else list(range(len(x)))
    drop = set(_axes(axes, len(x)))
    return [tuple((1 if i in drop else e) for i, e in enumerate(x) if keep or i not in drop)]


def _expand(inf: Inference, node: Any) -> list:
    x, target = inf.shape(node, 0), inf.value(node, 1)
    if target is None:
        return [None]
    return [inf.broadcast([x, target.entries])]


def _constant_of_shape(inf: Inference, node: Any) -> list:
    target = inf.value(node, 0)
    return [None if target is None else target.entries]


def _constant(inf: Inference, node: Any) -> list:
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
    x = inf.shape(node, 0)
    pads = _optional_ints(inf, node, 1, _ints_attr(node, "pads"))  # an attribute before opset 11
    if x is None or pads is None:
        return [None]
    axes = _optional_ints(inf, node, 3, list(range(len(x))))
    if axes is None:  # axes computed at run time
        return [(None,) * len(x)]
    if len(pads) != 2 * len(axes):
        raise ShapeError(f"{len(pads)} pads for {len(axes)} axes")
    out = list(x)
    for j, axis in enumerate(_axes(axes, len(x))):
        out[axis] = inf.d.add(out[axis], inf.d.add(pads[j], pads[j + len(axes)]))
    return [tuple(out)]


def _tile(inf: Inference, node: Any) -> list:
    x, repeats = inf.shape(node, 0), inf.value(node, 1)
    if x is None or repeats is None:
        return [None]
    if len(repeats.entries) != len(x):
        raise ShapeError(f"{len(repeats.entries)} repeats for rank {len(x)}")
    return [tuple(inf.d.mul(a, r) for a, r in zip(x, repeats.entries, strict=True))]


_UNARY = (
    "Abs Acos Acosh Asin Asinh Atan Atanh BatchNormalization Cast CastLike Ceil Celu Clip Cos Cosh Dropout Elu Erf "
    "Exp Floor Gelu HardSigmoid HardSwish Hardmax Identity InstanceNormalization IsInf IsNaN LayerNormalization "
    "LeakyRelu Log LogSoftmax LRN Mish Neg Not Reciprocal Relu Round Selu Shrink Sigmoid Sign Sin Sinh Softmax "
    "Softplus Softsign Sqrt Tan Tanh ThresholdedRelu Trilu"
).split()
_BROADCASTING = (
    "Add And BitShift BitwiseAnd BitwiseOr BitwiseXor Div Equal Greater GreaterOrEqual Less LessOrEqual Max Mean "
    "Min Mod Mul Or Pow PRelu Sub Sum Where Xor"
).split()
_CONV_POOL = (
    "Conv ConvInteger QLinearConv MaxPool AveragePool LpPool GlobalAveragePool GlobalMaxPool GlobalLpPool".split()
)
_REDUCE = (
    "ReduceL1 ReduceL2 ReduceLogSum ReduceLogSumExp ReduceMax ReduceMean ReduceMin ReduceProd ReduceSum "
    "ReduceSumSquare ArgMax ArgMin"
).split()

#: ONNX op type -> shape rule
SHAPE_RULES: dict[str, Callable[[Inference, Any], list]] = {
    **dict.fromkeys(_UNARY, _same),
    **dict.fromkeys(_BROADCASTING, _broadcasting),
    **dict.fromkeys(_REDUCE, _reduce),
    **dict.fromkeys(_CONV_POOL, _conv_pool),
    "Reshape": _reshape,
    "Flatten": _flatten,
    "Concat": _concat,
    "Split": _split,
    "MatMul": _matmul,
    "MatMulInteger": _matmul,
    "Gemm": _gemm,
    "Gather": _gather,
    "GatherElements": lambda inf, node: [inf.shape(node, 1)],
    "Slice": _slice,
    "Transpose": _transpose,
    "Unsqueeze": _unsqueeze,
    "Squeeze": _squeeze,
    "Shape": _shape_op,
    "Size": lambda inf, node: [()],
    "Expand": _expand,
    "ConstantOfShape": _constant_of_shape,
    "Constant": _constant,
    "Pad": _pad,
    "Tile": _tile,
}
