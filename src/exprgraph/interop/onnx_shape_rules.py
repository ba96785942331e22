"""The shape rules of ONNX operators, on dimensions that are ints or ``exprgraph.dims`` terms.

Each rule maps an ONNX node to the shapes of its outputs, given the shapes (and, for small
integer tensors, the symbolic values) of its inputs that :mod:`exprgraph.interop.onnx_shapes`
has found so far. Dimension arithmetic goes through :class:`DimArith`, which simplifies as it goes
and keeps every int in int64. A rule returns None for what it cannot know (a shape computed at
run time) and raises ``ShapeError`` for what is malformed (an axis out of range, a ``perm`` that
is not a permutation, split sizes that do not add up); the caller names the node.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..errors import ShapeError
from .onnx_dims import (
    Dim,
    DimArith,
    Shape,
    Value,
    _attr,
    _axis,
    _int_attr,
    _ints_attr,
)
from .onnx_rules_attention import ATTENTION_RULES
from .onnx_rules_axes import AXES_RULES
from .onnx_rules_common import known_ints, optional_ints, rank, sizes_attr
from .onnx_rules_conv import CONV_RULES
from .onnx_rules_index import INDEX_RULES
from .onnx_rules_misc import MISC_RULES
from .onnx_rules_ml import ML_RULES
from .onnx_rules_resize import RESIZE_RULES

if TYPE_CHECKING:
    from .onnx_shapes import Inference

__all__ = ["Dim", "Shape", "Value", "DimArith", "SHAPE_RULES", "rank"]


# -- shape rules: (inference, node) -> list of output shapes --------------------------------------------


def _same(inf: Inference, node: Any) -> list:
    # the first output has the input's shape (Dropout's mask too); other outputs (statistics) are not followed
    x = inf.shape(node, 0)
    return [x] * len(node.output) if node.op_type == "Dropout" else [x] + [None] * (len(node.output) - 1)


def _broadcasting(inf: Inference, node: Any) -> list:
    # out = the inputs broadcast together (numpy rules)
    shapes = [inf.shape(node, i) for i in range(len(node.input)) if node.input[i]]
    if not shapes:
        raise ShapeError("no inputs")
    return [inf.broadcast(shapes)]


def _conv_pool(inf: Inference, node: Any) -> list:
    """Conv and the pools: each spatial axis maps ``in`` to ``(in + pads - (d*(k-1)+1))//s + 1``."""
    d = inf.d
    x = inf.shape(node, 0)
    if x is None:
        return [None] * len(node.output)
    if len(x) < 3:
        raise ShapeError(f"input of rank {len(x)} has no spatial axis")
    n_spatial = len(x) - 2
    is_conv = node.op_type in ("Conv", "ConvInteger", "QLinearConv", "DeformConv")
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
    strides = sizes_attr(node, "strides", n_spatial, 1, 1)
    dilations = sizes_attr(node, "dilations", n_spatial, 1, 1)
    pads = sizes_attr(node, "pads", 2 * n_spatial, 0, 0)
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
        if not ceil_mode:
            out.append(d.add(d.floordiv(span, s), 1))  # out = (in + pads - window)//s + 1
            continue
        # ceil_mode: out = min(ceil(span/s), (in + pad_begin - 1)//s) + 1, as no window starts in the end padding
        begin = _pad_begin(d, auto_pad, padding, pads[i] if auto_pad == "NOTSET" else 0)
        last = d.floordiv(d.sub(d.add(size, begin), 1), s)
        # both are floors of in + const over s: the one with the smaller constant is the min, whatever in is
        gap = d.sub(d.add(d.sub(padding, begin), s), window)  # (span + s - 1) - (in + pad_begin - 1)
        if gap.__class__ is int:
            out.append(d.add(last if gap >= 0 else d.ceildiv(span, s), 1))
        else:
            out.append(d.add(d.min(d.ceildiv(span, s), last), 1))
    return [tuple(out)] * len(node.output)


def _pad_begin(d: DimArith, auto_pad: str, padding: Dim, explicit: int) -> Dim:
    """The padding before an axis: the attribute's, or SAME's share (LOWER puts the odd one first)."""
    if auto_pad == "SAME_UPPER":
        return d.floordiv(padding, 2)
    if auto_pad == "SAME_LOWER":
        return d.sub(padding, d.floordiv(padding, 2))
    return explicit


def _reshape(inf: Inference, node: Any) -> list:
    # out = target, 0 copying the input's dim (unless allowzero), -1 = total // (product of the others)
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
    elif total.__class__ is int and known_ints(out) and d.prod(out) != total:
        raise ShapeError(f"cannot reshape {x} ({total} elements) to {tuple(out)}")
    return [tuple(out)]


def _quotient(d: DimArith, total: Dim, rest: Dim) -> Dim:
    """The dimension that -1 stands for: ``total // rest`` (unknown next to a zero-size dimension)."""
    if rest.__class__ is int and rest == 0:
        return None
    if isinstance(total, int) and isinstance(rest, int) and total % rest:
        raise ShapeError(f"cannot reshape {total} elements into a multiple of {rest}")
    return d.floordiv(total, rest)


def _flatten(inf: Inference, node: Any) -> list:
    # out = (prod(x[:axis]), prod(x[axis:]))
    x = inf.shape(node, 0)
    if x is None:
        return [None]
    axis = _int_attr(node, "axis", 1)
    if not -len(x) <= axis <= len(x):
        raise ShapeError(f"axis {axis} out of range for rank {len(x)}")
    axis = axis + len(x) if axis < 0 else axis
    return [(inf.d.prod(x[:axis]), inf.d.prod(x[axis:]))]


def _concat(inf: Inference, node: Any) -> list:
    # out[axis] = sum of the inputs' dims on axis; the other axes agree
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
    # out_i[axis] = split[i], or ceil(size/n) (the last: the rest) with num_outputs, or size/n
    d = inf.d
    x, n = inf.shape(node, 0), len(node.output)
    if x is None or n == 0:
        return [None] * n
    axis = _axis(_int_attr(node, "axis", 0), len(x))
    size = x[axis]
    given = optional_ints(inf, node, 1, _ints_attr(node, "split"))
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
    # out = broadcast(batch dims) + (m, n) for (..., m, k) @ (..., k, n); a 1-d side loses its axis
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
    """The contracted dims of a matrix product agree (when both are known)."""
    if k.__class__ is int and k2.__class__ is int and k != k2:
        raise ShapeError(f"inner dimensions differ: {k} vs {k2}")


def _gemm(inf: Inference, node: Any) -> list:
    # out = (m, n) for op(A) (m, k) times op(B) (k, n), op a transpose when transA/transB
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
    # out = data[:axis] + indices + data[axis+1:]
    data, indices = inf.shape(node, 0), inf.shape(node, 1)
    if data is None or indices is None:
        return [None]
    axis = _axis(_int_attr(node, "axis", 0), len(data))
    return [(*data[:axis], *indices, *data[axis + 1 :])]


_UNARY = (
    "Abs Acos Acosh Asin Asinh Atan Atanh Cast CastLike Ceil Celu Clip Cos Cosh Dropout Elu Erf Exp Floor Gelu "
    "HardSigmoid HardSwish Hardmax Identity InstanceNormalization IsInf IsNaN LeakyRelu Log LogSoftmax LRN Mish Neg "
    "Not Reciprocal Relu Round Selu Shrink Sigmoid Sign Sin Sinh Softmax Softplus Softsign Sqrt Tan Tanh "
    "ThresholdedRelu"
).split()
_BROADCASTING = (
    "Add And BitShift BitwiseAnd BitwiseOr BitwiseXor Div Equal Greater GreaterOrEqual Less LessOrEqual Max Mean "
    "Min Mod Mul Or Pow PRelu Sub Sum Where Xor"
).split()
_CONV_POOL = (
    "Conv ConvInteger QLinearConv DeformConv MaxPool AveragePool LpPool GlobalAveragePool GlobalMaxPool GlobalLpPool"
).split()

#: ONNX op type -> shape rule (ai.onnx and ai.onnx.ml; control flow and sequences are the engine's)
SHAPE_RULES: dict[str, Callable[[Inference, Any], list]] = {
    **dict.fromkeys(_UNARY, _same),
    **dict.fromkeys(_BROADCASTING, _broadcasting),
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
    "Size": lambda inf, node: [()],
    **AXES_RULES,
    **CONV_RULES,
    **INDEX_RULES,
    **RESIZE_RULES,
    **ATTENTION_RULES,
    **MISC_RULES,
    **ML_RULES,
}
