"""The shape rules of ONNX operators, on dimensions that are ints or ``exprgraph.dims`` terms.

Each rule maps an ONNX node to the shapes of its outputs, given the shapes (and, for small
integer tensors, the symbolic values) of its inputs that :mod:`exprgraph.interop.onnx_shapes`
has found so far. Dimension arithmetic goes through :class:`Dims`, which simplifies as it goes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .onnx_dims import _BIG, Dim, Dims, Shape, Value, _attr, _axis, broadcast_with_unknowns

if TYPE_CHECKING:
    from .onnx_shapes import Inference

__all__ = ["Dim", "Shape", "Value", "Dims", "SHAPE_RULES", "VALUE_RULES", "broadcast_with_unknowns"]

# -- shape rules: (inference, node) -> list of output shapes --------------------------------------------


def _same(inf: Inference, node: Any) -> list:
    return [inf.shape(node, 0)] * len(node.output)


def _broadcasting(inf: Inference, node: Any) -> list:
    return [inf.broadcast([inf.shape(node, i) for i in range(len(node.input)) if node.input[i]])]


def _conv_pool(inf: Inference, node: Any) -> list:
    """Conv and the pools: each spatial axis maps ``in`` to ``(in + pads - (d*(k-1)+1))//s + 1``."""
    d = inf.d
    x = inf.shape(node, 0)
    if x is None or len(x) < 3:
        return [None] * len(node.output)
    n_spatial = len(x) - 2
    is_conv = node.op_type in ("Conv", "ConvInteger", "QLinearConv")
    w = inf.shape(node, 3 if node.op_type == "QLinearConv" else 1) if is_conv else None
    if node.op_type.startswith("Global"):
        return [(x[0], x[1], *([1] * n_spatial))]
    kernel = _attr(node, "kernel_shape") or (list(w[2:]) if w is not None else None)
    if kernel is None:
        return [None] * len(node.output)
    strides = _attr(node, "strides") or [1] * n_spatial
    dilations = _attr(node, "dilations") or [1] * n_spatial
    pads = _attr(node, "pads") or [0] * (2 * n_spatial)
    auto_pad = _attr(node, "auto_pad", "NOTSET")
    ceil_mode = bool(_attr(node, "ceil_mode", 0)) and not is_conv
    out: list[Dim] = [x[0], (w[0] if w is not None else None) if is_conv else x[1]]
    for i in range(n_spatial):
        size, k, s, dil = x[2 + i], kernel[i], strides[i], dilations[i]
        window = dil * (k - 1) + 1
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
            padding = pads[i] + pads[i + n_spatial]
        span = d.sub(d.add(size, padding), window)  # positions the window can start at, minus one
        steps = d.ceildiv(span, s) if ceil_mode else d.floordiv(span, s)
        out.append(d.add(steps, 1))
    return [tuple(out)] * len(node.output)


def _reshape(inf: Inference, node: Any) -> list:
    d = inf.d
    x, target = inf.shape(node, 0), inf.value(node, 1)
    if target is None:
        shape_of_shape = inf.shape(node, 1)
        if shape_of_shape is None or shape_of_shape[0].__class__ is not int:
            return [None]
        return [(None,) * shape_of_shape[0]]
    allow_zero = _attr(node, "allowzero", 0)
    out: list[Dim] = []
    infer_at = None
    for i, e in enumerate(target.entries):
        if e.__class__ is int and e == 0 and not allow_zero:
            out.append(x[i] if x is not None else None)  # 0 copies the input's dimension
        elif e.__class__ is int and e == -1:
            infer_at = i
            out.append(None)
        else:
            out.append(e)
    if infer_at is not None and x is not None:
        rest = [e for i, e in enumerate(out) if i != infer_at]
        out[infer_at] = d.floordiv(d.prod(x), d.prod(rest))  # the total size is unchanged
    return [tuple(out)]


def _flatten(inf: Inference, node: Any) -> list:
    x = inf.shape(node, 0)
    if x is None:
        return [None]
    axis = _attr(node, "axis", 1)
    axis = axis + len(x) if axis < 0 else axis
    return [(inf.d.prod(x[:axis]), inf.d.prod(x[axis:]))]


def _concat(inf: Inference, node: Any) -> list:
    found = [inf.shape(node, i) for i in range(len(node.input))]
    shapes = [s for s in found if s is not None]
    if len(shapes) < len(found):
        return [None]
    axis = _axis(_attr(node, "axis"), len(shapes[0]))
    out = list(shapes[0])
    for i in range(len(out)):
        if i == axis:
            out[i] = inf.d.total(s[i] for s in shapes)
        elif out[i] is None:
            out[i] = next((s[i] for s in shapes if s[i] is not None), None)
    return [tuple(out)]


def _split(inf: Inference, node: Any) -> list:
    d = inf.d
    x = inf.shape(node, 0)
    if x is None:
        return [None] * len(node.output)
    axis = _axis(_attr(node, "axis", 0), len(x))
    sizes = inf.ints(node, 1) if len(node.input) > 1 and node.input[1] else _attr(node, "split")
    n = len(node.output)
    if sizes is None:
        if _attr(node, "num_outputs") is not None:
            chunk = d.ceildiv(x[axis], n)  # equal chunks, the last one smaller when it does not divide
            sizes = [chunk] * (n - 1) + [d.sub(x[axis], d.mul(chunk, n - 1))]
        else:
            sizes = [d.floordiv(x[axis], n)] * n
    return [(*x[:axis], size, *x[axis + 1 :]) for size in sizes]


def _matmul(inf: Inference, node: Any) -> list:
    a, b = inf.shape(node, 0), inf.shape(node, 1)
    if a is None or b is None:
        return [None]
    a1, b1 = len(a) == 1, len(b) == 1
    a2 = (1, *a) if a1 else a
    b2 = (*b, 1) if b1 else b
    batch = inf.broadcast([a2[:-2], b2[:-2]])
    if batch is None:  # pragma: no cover - both batch shapes are known here
        return [None]
    out = (*batch, *(() if a1 else (a2[-2],)), *(() if b1 else (b2[-1],)))
    return [out]


def _gemm(inf: Inference, node: Any) -> list:
    a, b = inf.shape(node, 0), inf.shape(node, 1)
    if a is None or b is None:
        return [None]
    m = a[1] if _attr(node, "transA", 0) else a[0]
    n = b[0] if _attr(node, "transB", 0) else b[1]
    return [(m, n)]


def _gather(inf: Inference, node: Any) -> list:
    data, indices = inf.shape(node, 0), inf.shape(node, 1)
    if data is None or indices is None:
        return [None]
    axis = _axis(_attr(node, "axis", 0), len(data))
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
    if index.__class__ is int:
        if index >= _BIG:
            return size if low == 0 else d.sub(size, 1)
        if index <= -_BIG:
            return low
        if index < 0:
            return d.max(d.add(size, index), low)
        return d.min(index, size if low == 0 else d.sub(size, 1))
    return d.min(index, size if low == 0 else d.sub(size, 1))


def _slice(inf: Inference, node: Any) -> list:
    x = inf.shape(node, 0)
    if x is None:
        return [None]
    starts, ends = inf.value(node, 1), inf.value(node, 2)
    if starts is None or ends is None:
        return [(None,) * len(x)]
    n = len(starts.entries)
    axes = inf.ints(node, 3) if len(node.input) > 3 and node.input[3] else list(range(n))
    steps = inf.ints(node, 4) if len(node.input) > 4 and node.input[4] else [1] * n
    if axes is None or steps is None:  # axes or steps computed at run time
        return [(None,) * len(x)]
    out = list(x)
    for start, end, axis, step in zip(starts.entries, ends.entries, axes, steps, strict=True):
        axis = _axis(axis, len(x))
        out[axis] = _slice_length(inf.d, x[axis], start, end, step)
    return [tuple(out)]


def _transpose(inf: Inference, node: Any) -> list:
    x = inf.shape(node, 0)
    if x is None:
        return [None]
    perm = _attr(node, "perm") or list(range(len(x)))[::-1]
    return [tuple(x[p] for p in perm)]


def _axes_input_or_attr(inf: Inference, node: Any) -> list[int] | None:
    if len(node.input) > 1 and node.input[1]:
        return inf.ints(node, 1)
    return _attr(node, "axes")


def _unsqueeze(inf: Inference, node: Any) -> list:
    x, axes = inf.shape(node, 0), _axes_input_or_attr(inf, node)
    if x is None or axes is None:
        return [None]
    rank = len(x) + len(axes)
    axes = sorted(_axis(a, rank) for a in axes)
    it = iter(x)
    return [tuple(1 if i in axes else next(it) for i in range(rank))]


def _squeeze(inf: Inference, node: Any) -> list:
    x, axes = inf.shape(node, 0), _axes_input_or_attr(inf, node)
    if x is None:
        return [None]
    if axes is None:
        if any(e.__class__ is not int for e in x):
            return [None]
        return [tuple(e for e in x if e != 1)]
    drop = {_axis(a, len(x)) for a in axes}
    return [tuple(e for i, e in enumerate(x) if i not in drop)]


def _shape_op(inf: Inference, node: Any) -> list:
    x = inf.shape(node, 0)
    if x is None:
        return [None]
    return [(len(x[_attr(node, "start", 0) : _attr(node, "end", len(x))]),)]


def _reduce(inf: Inference, node: Any) -> list:
    x = inf.shape(node, 0)
    if x is None:
        return [None]
    keep = _attr(node, "keepdims", 1)
    axes: list[int] | None
    if node.op_type in ("ArgMax", "ArgMin"):
        axes = [_attr(node, "axis", 0)]
    else:
        axes = _axes_input_or_attr(inf, node)
        if axes is None and len(node.input) > 1 and node.input[1]:
            return [None]  # axes computed at run time
    if not axes:
        axes = [] if _attr(node, "noop_with_empty_axes", 0) else list(range(len(x)))
    drop = {_axis(a, len(x)) for a in axes}
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
        inf.tensor(node.output[0], inf.numpy_helper.to_array(value))
        return [inf.shapes[node.output[0]]]
    if _attr(node, "value_int") is not None:
        inf.values[node.output[0]] = Value((int(_attr(node, "value_int")),), True)
        return [()]
    ints = _attr(node, "value_ints")
    if ints is not None:
        inf.values[node.output[0]] = Value(tuple(int(v) for v in ints))
        return [(len(ints),)]
    return [None]


def _pad(inf: Inference, node: Any) -> list:
    x, pads = inf.shape(node, 0), inf.ints(node, 1)
    if x is None or pads is None:
        return [None]
    axes = inf.ints(node, 3) if len(node.input) > 3 and node.input[3] else list(range(len(x)))
    if axes is None:  # axes computed at run time
        return [None]
    out = list(x)
    for j, axis in enumerate(axes):
        axis = _axis(axis, len(x))
        out[axis] = inf.d.add(out[axis], pads[j] + pads[j + len(axes)])
    return [tuple(out)]


def _tile(inf: Inference, node: Any) -> list:
    x, repeats = inf.shape(node, 0), inf.value(node, 1)
    if x is None or repeats is None:
        return [None]
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


# -- symbolic values of small integer tensors ------------------------------------------------------------


def _v_shape(inf: Inference, node: Any) -> Value | None:
    x = inf.shape(node, 0)
    if x is None:
        return None
    return Value(tuple(x[_attr(node, "start", 0) : _attr(node, "end", len(x))]))


def _v_size(inf: Inference, node: Any) -> Value | None:
    x = inf.shape(node, 0)
    return None if x is None else Value((inf.d.prod(x),), True)


def _v_gather(inf: Inference, node: Any) -> Value | None:
    data, idx = inf.value(node, 0), inf.value(node, 1)
    if data is None or idx is None or data.scalar or _attr(node, "axis", 0) != 0:
        return None
    picked = tuple(data.entries[i] for i in idx.entries)  # type: ignore[index]
    return Value(picked, idx.scalar)


def _v_slice(inf: Inference, node: Any) -> Value | None:
    data = inf.value(node, 0)
    starts, ends = inf.ints(node, 1), inf.ints(node, 2)
    if data is None or starts is None or ends is None or len(starts) != 1:
        return None
    steps = inf.ints(node, 4) if len(node.input) > 4 and node.input[4] else [1]
    if steps is None:
        return None
    n = len(data.entries)
    start, end = (max(-n - 1, min(v, n)) for v in (starts[0], ends[0]))
    return Value(tuple(data.entries[start : end : steps[0]]))


def _v_concat(inf: Inference, node: Any) -> Value | None:
    parts = [inf.value(node, i) for i in range(len(node.input))]
    if any(p is None for p in parts):
        return None
    return Value(tuple(e for p in parts for e in p.entries))  # type: ignore[union-attr]


def _v_same(inf: Inference, node: Any) -> Value | None:
    return inf.value(node, 0)


def _v_unsqueeze(inf: Inference, node: Any) -> Value | None:
    v = inf.value(node, 0)
    return None if v is None or not v.scalar else Value(v.entries)


def _v_squeeze(inf: Inference, node: Any) -> Value | None:
    v = inf.value(node, 0)
    return None if v is None or len(v.entries) != 1 else Value(v.entries, True)


def _v_arith(fn_name: str) -> Callable[[Inference, Any], Value | None]:
    def rule(inf: Inference, node: Any) -> Value | None:
        a, b = inf.value(node, 0), inf.value(node, 1)
        if a is None or b is None:
            return None
        fn = getattr(inf.d, fn_name)
        xs, ys = a.entries, b.entries
        if len(xs) == 1 and len(ys) != 1:
            xs = xs * len(ys)
        if len(ys) == 1 and len(xs) != 1:
            ys = ys * len(xs)
        return Value(tuple(fn(x, y) for x, y in zip(xs, ys, strict=True)), a.scalar and b.scalar)

    return rule


VALUE_RULES: dict[str, Callable[[Inference, Any], Value | None]] = {
    "Shape": _v_shape,
    "Size": _v_size,
    "Gather": _v_gather,
    "Slice": _v_slice,
    "Concat": _v_concat,
    "Identity": _v_same,
    "Cast": _v_same,
    "Unsqueeze": _v_unsqueeze,
    "Squeeze": _v_squeeze,
    "Add": _v_arith("add"),
    "Sub": _v_arith("sub"),
    "Mul": _v_arith("mul"),
    "Div": _v_arith("floordiv"),  # dimensions are not negative, where truncation is floor
    "Max": _v_arith("max"),
    "Min": _v_arith("min"),
}
