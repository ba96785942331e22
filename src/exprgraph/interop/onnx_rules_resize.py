"""ONNX shape rules of Resize and Upsample, whose output sizes come from float scales or int sizes.

A scale is a float32, whose exact value is a dyadic fraction ``p/q``, so ``floor(n * scale)`` is
``(n*p)//q`` exactly (as ONNX defines it, and as a float64 product gives it for any size below 2**29);
for a known ``n`` the size is given when the float64 product agrees. Float tensors are read from
initializers and ``Constant`` nodes (small ones).
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Callable
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from ..errors import ShapeError
from .onnx_dims import MAX_VALUE_SIZE, Dim, DimArith, _attr, _axes, _ints_attr
from .onnx_rules_common import has_input

if TYPE_CHECKING:
    from .onnx_shapes import Inference

__all__ = ["RESIZE_RULES", "float_entries"]

#: largest denominator of a scale written as an exact fraction (every float32 scale above 2**-8 fits)
MAX_SCALE_DENOMINATOR = 2**32

_TENSORS: weakref.WeakKeyDictionary[Any, dict[str, Any]] = weakref.WeakKeyDictionary()


def _tensors(inf: Inference) -> dict[str, Any]:
    """Name -> TensorProto of the graph's initializers and Constant values (found once per inference)."""
    found = _TENSORS.get(inf)
    if found is None:
        found = {t.name: t for t in inf.graph.initializer}
        for n in inf.graph.node:
            if n.op_type == "Constant" and len(n.output) == 1:
                value = _attr(n, "value")
                if value is not None and not isinstance(value, str):
                    found[n.output[0]] = value
                elif (floats := _attr(n, "value_floats")) is not None:
                    found[n.output[0]] = floats
        _TENSORS[inf] = found
    return found


def float_entries(inf: Inference, node: Any, i: int) -> list[float] | None:
    """The entries of a small constant float (or int) input ``i``; None when computed at run time."""
    if not has_input(node, i):
        return None
    proto = _tensors(inf).get(node.input[i])
    if proto is None:  # computed in the graph: its value, when the engine followed it
        value = inf.value(node, i)
        if value is None or not all(e.__class__ in (int, float) for e in value.entries):
            return None
        return [float(e) for e in value.entries]  # type: ignore[arg-type]
    if isinstance(proto, list):
        return [float(v) for v in proto]
    if not isinstance(proto, inf.onnx.TensorProto) or math.prod(proto.dims) > MAX_VALUE_SIZE:
        return None
    if proto.data_location == inf.onnx.TensorProto.EXTERNAL:
        return None
    try:
        array = inf.numpy_helper.to_array(proto)
    except (ValueError, TypeError) as exc:
        raise ShapeError(f"input {i} holds unreadable data: {exc}") from exc
    if array.dtype.kind not in "fiu":
        return None
    return [float(v) for v in array.reshape(-1)]


def _scaled(d: DimArith, size: Dim, scale: float) -> Dim:
    """``floor(size * scale)`` with the scale's exact value (a dyadic fraction): ``(size*p)//q``."""
    if size is None or not math.isfinite(scale) or scale < 0:
        return None
    frac = Fraction(scale)
    if frac.denominator > MAX_SCALE_DENOMINATOR:
        return None
    if size.__class__ is int:
        exact = math.floor(size * frac)
        return exact if exact == int(size * scale) else None  # float64 agrees (all sizes below 2**29)
    return d.floordiv(d.mul(size, frac.numerator), frac.denominator)


def _kept_ratio(x: tuple, sizes: list[Dim], axes: list[int], policy: str) -> list[Dim]:
    """Sizes under keep_aspect_ratio_policy: one scale (the min or max ratio), ``round(scale*in)``."""
    known = [x[a] for a in axes]
    if not all(e.__class__ is int and e > 0 for e in [*known, *sizes]):
        return [None] * len(axes)
    ratios = [s / n for s, n in zip(sizes, known, strict=True)]
    scale = min(ratios) if policy == "not_larger" else max(ratios)
    return [int(scale * n + 0.5) for n in known]


def _resize(inf: Inference, node: Any) -> list:
    # out[a] = sizes[i], or floor(in[a] * scales[i]) on each resized axis a = axes[i]
    x = inf.shape(node, 0)
    if x is None:
        return [None]
    scales_at = 1 if len(node.input) == 2 else 2  # opset 10: (X, scales); later (X, roi, scales, sizes)
    scales = float_entries(inf, node, scales_at)
    if node.op_type == "Upsample" and len(node.input) == 1:
        given = _attr(node, "scales", [])  # opset 7: an attribute
        if not isinstance(given, list) or not all(isinstance(v, float) for v in given):
            raise ShapeError("attribute 'scales' must be a list of floats")
        scales = given
    axes = _axes(_ints_attr(node, "axes") or list(range(len(x))), len(x))
    out = list(x)
    if has_input(node, 3) and not scales:
        sizes = inf.value(node, 3)
        if sizes is None:
            return [tuple(None if i in axes else e for i, e in enumerate(x))]
        if len(sizes.entries) != len(axes):
            raise ShapeError(f"{len(sizes.entries)} sizes for {len(axes)} axes")
        policy = _attr(node, "keep_aspect_ratio_policy", "stretch")
        found = list(sizes.entries) if policy == "stretch" else _kept_ratio(x, list(sizes.entries), axes, policy)
        for a, size in zip(axes, found, strict=True):
            out[a] = size
        return [tuple(out)]
    if scales is None:
        return [tuple(None if i in axes else e for i, e in enumerate(x))]
    if len(scales) != len(axes):
        raise ShapeError(f"{len(scales)} scales for {len(axes)} axes")
    for a, scale in zip(axes, scales, strict=True):
        out[a] = _scaled(inf.d, x[a], scale)
    return [tuple(out)]


#: ONNX op type -> shape rule, for the ops of this family
RESIZE_RULES: dict[str, Callable[[Inference, Any], list]] = {"Resize": _resize, "Upsample": _resize}
