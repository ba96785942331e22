"""ONNX export of ``einsum``, the top-k selection and ``arange`` (the lowering :mod:`.onnx` calls for them).

``einsum`` is ONNX's ``Einsum`` with our spec as its equation; ``topk_indices`` is the second output
of a ``TopK`` (sorted, ties at the lower index first, as ours), and ``take_along`` of the very
``topk_indices`` of its operand is that ``TopK``'s first output, so ``topk`` exports as one
``TopK`` giving both; any other ``take_along`` is a ``GatherElements``, ``scatter_along`` a
``ScatterElements`` adding into zeros, ``arange`` a ``Range``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core import INT64, Term
from ..core.ops_einsum import einsum_spec
from ..errors import ConversionError

__all__ = ["SELECT_OPS", "lower_select"]

#: the ops this module exports
SELECT_OPS = frozenset({"einsum", "topk_indices", "take_along", "scatter_along", "arange"})


def _topk(b: Any, node: Term, x: str) -> tuple[str, str]:
    """The (values, indices) outputs of the one TopK node of ``node`` (a ``topk_indices`` term)."""
    made: dict[Term, tuple[str, str]] = b.__dict__.setdefault("topk_outputs", {})
    if node not in made:
        k, axis, largest = node.attr
        values, indices = b.fresh(), b.fresh()
        kk = b.const([k], INT64)
        b.nodes.append(b.helper.make_node("TopK", [x, kk], [values, indices], axis=axis, largest=largest, sorted=1))
        made[node] = (values, indices)
    return made[node]


def lower_select(b: Any, node: Term, args: list[str]) -> str:
    """ONNX nodes computing ``node`` (an op of :data:`SELECT_OPS`) from its operands' value names."""
    name = node.op.name
    if name == "einsum":
        cast = [b.cast(v, a.dtype, node.dtype) for v, a in zip(args, node.args, strict=True)]
        return b.op("Einsum", cast, equation=einsum_spec(node))
    if name == "topk_indices":
        if node.args[0].dtype == "bool":
            raise ConversionError("to_onnx: TopK takes numbers: cast the bools to int64 first")
        return _topk(b, node, args[0])[1]
    if name == "take_along":
        x, index = node.args
        if index.op.name == "topk_indices" and index.args[0] is x and index.attr[1] == node.attr:
            return _topk(b, index, args[0])[0]  # the values TopK gives with the indices
        return b.op("GatherElements", args, axis=node.attr)
    if name == "scatter_along":
        if not all(d.__class__ is int for d in node.shape):
            raise ConversionError("to_onnx: scatter_along needs known (int) dimensions")
        zero = b.onnx.numpy_helper.from_array(np.zeros(1, np.dtype(node.dtype)))
        zeros = b.op("ConstantOfShape", [b.const(list(node.shape), INT64)], value=zero)
        update = b.cast(args[0], node.args[0].dtype, node.dtype)
        return b.op("ScatterElements", [zeros, args[1], update], axis=node.attr[0], reduction="add")
    start, step = node.attr
    return b.op("Range", [b.const(start, INT64), args[0], b.const(step, INT64)])
