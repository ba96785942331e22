"""ONNX shape rules of the indexing ops: Einsum, GatherND, the scatters, OneHot, Range, TopK, and the ops
whose sizes depend on the data (Compress, NonZero, Unique, NonMaxSuppression), which get a fresh named
dimension with the range that is known.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import ShapeError
from .onnx_dims import Dim, _attr, _axis, _int_attr, _ints_attr
from .onnx_rules_common import fresh, has_input, need, nones, rank

if TYPE_CHECKING:
    from .onnx_shapes import Inference

__all__ = ["INDEX_RULES"]

_TERM = re.compile(r"(?:[A-Za-z]|\.\.\.)*")


def _first_input(inf: Inference, node: Any) -> list:
    # out = data (the scatters, CumSum, ReverseSequence, EyeLike, ...)
    return [inf.shape(node, 0)]


def _einsum_terms(equation: str, n_inputs: int) -> tuple[list[str], str | None]:
    """The input terms and the output term (None when implicit) of an einsum equation, checked."""
    text = equation.replace(" ", "")
    left, arrow, right = text.partition("->")
    terms = left.split(",")
    if len(terms) != n_inputs:
        raise ShapeError(f"equation {equation!r} names {len(terms)} inputs, the node has {n_inputs}")
    for term in [*terms, right]:
        if not _TERM.fullmatch(term) or term.count("...") > 1:
            raise ShapeError(f"equation {equation!r}: bad term {term!r}")
    return terms, right if arrow else None


def _einsum(inf: Inference, node: Any) -> list:
    # each letter names one size; the output takes its letters' sizes, '...' the broadcast of the ellipses
    terms, output = _einsum_terms(str(_get_equation(node)), len(node.input))
    sizes: dict[str, Dim] = {}
    ellipses: list[Any] = []
    counts: dict[str, int] = {}
    for i, term in enumerate(terms):
        x = inf.shape(node, i)
        head, dots, tail = term.partition("...")
        letters = head + tail
        for c in letters:
            counts[c] = counts.get(c, 0) + 1
        if x is None:
            if dots:
                ellipses.append(None)
            continue
        if (len(x) < len(letters)) if dots else (len(x) != len(letters)):
            raise ShapeError(f"input {i} of rank {len(x)} does not fit the term {term!r}")
        n_dots = len(x) - len(letters)
        dims = list(x[: len(head)]) + list(x[len(head) + n_dots :])
        if dots:
            ellipses.append(tuple(x[len(head) : len(head) + n_dots]))
        for c, d in zip(letters, dims, strict=True):
            sizes[c] = _merge(sizes.get(c), d, c)
    if output is None:
        output = ("..." if ellipses else "") + "".join(sorted(c for c, k in counts.items() if k == 1))
    head, dots, tail = output.partition("...")
    for c in head + tail:
        if c not in counts:
            raise ShapeError(f"output letter {c!r} names no input axis")
    middle: tuple = ()
    if dots:
        if any(e is None for e in ellipses):
            return [None]
        middle = inf.broadcast(ellipses) or ()
    return [(*(sizes.get(c) for c in head), *middle, *(sizes.get(c) for c in tail))]


def _get_equation(node: Any) -> str:
    """The einsum equation attribute, checked to be text."""
    equation = _attr(node, "equation")
    if not isinstance(equation, str):
        raise ShapeError("Einsum needs an equation")
    return equation


def _merge(old: Dim, new: Dim, letter: str) -> Dim:
    """One letter's size seen twice: a known int wins; two different ints are an error (1 broadcasts)."""
    if old is None or (old.__class__ is int and old == 1 and new is not None):
        return new
    if new is None or (new.__class__ is int and new == 1):
        return old
    if old.__class__ is int and new.__class__ is int and old != new:
        raise ShapeError(f"letter {letter!r} has sizes {old} and {new}")
    return old if old.__class__ is int else new


def _gather_nd(inf: Inference, node: Any) -> list:
    # out = indices[:-1] + data[batch_dims + indices[-1]:]
    data, idx = inf.shape(node, 0), inf.shape(node, 1)
    if data is None or idx is None:
        return [None]
    b = _int_attr(node, "batch_dims", 0)
    depth = need(idx, 1, "indices")[-1]
    if depth.__class__ is not int:
        return [None]
    if b < 0 or b + depth > len(data):
        raise ShapeError(f"indices of depth {depth} with {b} batch dims index data of rank {len(data)}")
    return [(*idx[:-1], *data[b + depth :])]


def _one_hot(inf: Inference, node: Any) -> list:
    # out = indices with depth inserted at axis
    idx, depth = inf.shape(node, 0), inf.value(node, 1)
    if idx is None:
        return [None]
    axis = _axis(_int_attr(node, "axis", -1), len(idx) + 1)
    size = depth.entries[0] if depth is not None and len(depth.entries) == 1 else None
    if size.__class__ is float:
        size = None  # a fractional depth: left to run time
    if size is not None and size.__class__ is int and size < 0:
        raise ShapeError(f"depth {size} is negative")
    return [(*idx[:axis], size, *idx[axis:])]


def _range(inf: Inference, node: Any) -> list:
    # out = max(ceil((limit - start)/delta), 0)
    d = inf.d
    values = [inf.value(node, i) for i in range(3)]
    if any(v is None or len(v.entries) != 1 for v in values):
        return [(fresh(inf, node, "range length"),)]
    start, limit, delta = (v.entries[0] for v in values)  # type: ignore[union-attr]
    if any(e.__class__ is float for e in (start, limit, delta)):
        return [(_float_range_length(inf, node, start, limit, delta),)]
    if delta.__class__ is not int:
        return [(fresh(inf, node, "range length"),)]
    if delta == 0:
        raise ShapeError("Range with delta 0")
    if delta > 0:
        return [(d.max(d.ceildiv(d.sub(limit, start), delta), 0),)]
    return [(d.max(d.ceildiv(d.sub(start, limit), -delta), 0),)]


def _float_range_length(inf: Inference, node: Any, start: Any, limit: Any, delta: Any) -> Dim:
    """Range over float constants: ``ceil((limit - start)/delta)`` when float32 and float64 agree, else fresh."""
    if not all(isinstance(e, (int, float)) for e in (start, limit, delta)) or delta == 0:
        return fresh(inf, node, "range length")
    wide = math.ceil((limit - start) / delta)
    f32 = np.float32
    narrow = math.ceil(float((f32(limit) - f32(start)) / f32(delta)))
    return max(wide, 0) if wide == narrow else fresh(inf, node, "range length")


def _top_k(inf: Inference, node: Any) -> list:
    # values and indices: the input with axis of size k
    x = inf.shape(node, 0)
    if x is None:
        return nones(node)
    axis = _axis(_int_attr(node, "axis", -1), len(x))
    if has_input(node, 1):
        k_value = inf.value(node, 1)
        k = k_value.entries[0] if k_value is not None and len(k_value.entries) == 1 else None
        if k is None:
            k = fresh(inf, node, "top k", 0, x[axis])
    else:
        k = _int_attr(node, "k")  # opset 1: an attribute
    size = x[axis]
    if isinstance(k, int) and (k < 0 or (isinstance(size, int) and k > size)):
        raise ShapeError(f"k = {k} for an axis of size {x[axis]}")
    out = (*x[:axis], k, *x[axis + 1 :])
    return [out] * len(node.output)


def _compress(inf: Inference, node: Any) -> list:
    # out = the selected entries along axis (all entries flattened without one): a fresh size
    x, cond = inf.shape(node, 0), inf.shape(node, 1)
    if x is None:
        return [None]
    axis = _int_attr(node, "axis")
    whole = inf.d.prod(x) if axis is None else x[_axis(axis, len(x))]
    high = inf.d.min(whole, cond[0]) if cond is not None and len(cond) == 1 else whole
    kept = fresh(inf, node, "compressed length", 0, high)
    if axis is None:
        return [(kept,)]
    a = _axis(axis, len(x))
    return [(*x[:a], kept, *x[a + 1 :])]


def _non_zero(inf: Inference, node: Any) -> list:
    # out = (rank, number of non-zero entries)
    x = inf.shape(node, 0)
    if x is None:
        return [None]
    return [(len(x) if x else 1, fresh(inf, node, "non-zero count", 0, inf.d.prod(x)))]


def _unique(inf: Inference, node: Any) -> list:
    # Y: (U,) or the input with axis of size U; indices, counts: (U,); inverse: (size,) or (x[axis],)
    x = inf.shape(node, 0)
    if x is None:
        return nones(node)
    axis = _int_attr(node, "axis")
    whole = inf.d.prod(x) if axis is None else x[_axis(axis, len(x))]
    count = fresh(inf, node, "unique count", 0, whole)
    if axis is None:
        y: tuple = (count,)
    else:
        a = _axis(axis, len(x))
        y = (*x[:a], count, *x[a + 1 :])
    return [y, (count,), (whole,), (count,)][: len(node.output)]


def _non_max_suppression(inf: Inference, node: Any) -> list:
    # out = (selected boxes, 3): at most batches * classes * max_output_boxes_per_class
    scores, limit = inf.shape(node, 1), inf.value(node, 2)
    high = None
    if scores is not None and len(scores) == 3 and limit is not None and len(limit.entries) == 1:
        per_class = limit.entries[0]
        if per_class.__class__ is int:
            high = inf.d.mul(inf.d.mul(scores[0], scores[1]), inf.d.min(max(per_class, 0), scores[2]))
    return [(fresh(inf, node, "selected boxes", 0, high), 3)]


def _det(inf: Inference, node: Any) -> list:
    # out = x[:-2]: one determinant per square matrix
    x = inf.shape(node, 0)
    if x is None:
        return [None]
    need(x, 2)
    return [tuple(x[:-2])]


def _eye_like(inf: Inference, node: Any) -> list:
    # out = the input's shape (a matrix)
    x = inf.shape(node, 0)
    if x is not None and len(x) != 2:
        raise ShapeError(f"EyeLike of rank {len(x)} (needs 2)")
    return [x]


def _shape_value(inf: Inference, node: Any) -> list:
    # out = the values of the shape input (RandomNormal*: its shape attribute)
    attr = _ints_attr(node, "shape")
    if attr is not None:
        rank(len(attr))
        return [tuple(attr)]
    v = inf.value(node, 0)
    return [None if v is None else v.entries]


#: ONNX op type -> shape rule, for the ops of this family
INDEX_RULES: dict[str, Callable[[Inference, Any], list]] = {
    **dict.fromkeys(
        "Scatter ScatterND ScatterElements TensorScatter CumSum CumProd ReverseSequence Trilu".split(),
        _first_input,
    ),
    "Einsum": _einsum,
    "GatherND": _gather_nd,
    "OneHot": _one_hot,
    "Range": _range,
    "TopK": _top_k,
    "Compress": _compress,
    "NonZero": _non_zero,
    "Unique": _unique,
    "NonMaxSuppression": _non_max_suppression,
    "Det": _det,
    "EyeLike": _eye_like,
    "RandomNormal": _shape_value,
    "RandomUniform": _shape_value,
}
