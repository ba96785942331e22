"""Symbolic shape inference for ONNX models, with exprgraph's dimension algebra (needs ``exprgraph[onnx]``).

``infer_shapes(model)`` gives every value of an ONNX graph its shape, each dimension an int or an
int64 term of :mod:`exprgraph.dims` (``batch``, ``(h - 3)//2 + 1``), simplified to the canonical
form. ``onnx.shape_inference`` keeps an input's ``dim_param`` through elementwise ops but loses it
as soon as arithmetic is needed (a convolution, a reshape to a computed shape, a slice); here
every dimension stays an expression. Small integer tensors that hold shapes (``Shape``, constants,
and ``Gather``, ``Slice``, ``Concat``, ``Unsqueeze``, arithmetic on them) are followed as symbolic
values, so ``Reshape(x, Concat(Shape(x)[:1], [-1]))`` gets its exact shape.

Dimensions are taken to be at least 1 (``positive=True``), which lets ``min(1, n)`` be ``1``; an
unknown dimension is ``None``, an unknown shape is ``None``. ``annotate_shapes(model)`` writes the
results back into the model's ``value_info`` as ``dim_value``/``dim_param``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import numpy as np

from ..core import Symbol, Term
from ..core.shapes import broadcast_shapes
from ..core.tokens import RESERVED_NAMES
from ..dims import DimExpressionError, parse_expression, simplify_dim, unparse
from ..errors import ShapeError
from ._optional import require
from .onnx_shape_rules import SHAPE_RULES, VALUE_RULES, Dim, Dims, Shape, Value, broadcast_with_unknowns

__all__ = ["infer_shapes", "annotate_shapes", "dim_text", "Inference"]

#: largest integer tensor followed as a symbolic value (shape tensors are short)
MAX_VALUE_SIZE = 64


def dim_text(d: Dim) -> str | None:
    """A dimension as ONNX ``dim_param`` text (``"batch"``, ``"(h-3)//2+1"``); None when unknown."""
    if d is None:
        return None
    return str(d) if isinstance(d, int) else unparse(d)


def _param_dim(text: str) -> Term | int:
    """The dimension an ONNX ``dim_param`` names: its expression, or a symbol named after the text."""
    try:
        return simplify_dim(parse_expression(text))
    except DimExpressionError:
        return Symbol(_identifier(text), "int64")


class Inference:
    """One pass over an ONNX graph's nodes in order, filling shapes and symbolic values."""

    def __init__(self, model: Any, positive: bool, dims: Mapping[str, Any] | None) -> None:
        self.onnx = require("onnx", "onnx")
        self.numpy_helper = self.onnx.numpy_helper
        self.d = Dims(positive)
        self.graph = model.graph if hasattr(model, "graph") else model
        self.shapes: dict[str, Shape] = {}
        self.values: dict[str, Value] = {}
        self.bindings = dict(dims or {})
        self.unknown_ops: set[str] = set()

    # -- sources -----------------------------------------------------------------------------------------

    def declared(self, info: Any) -> Shape:
        tensor = info.type.tensor_type
        if not tensor.HasField("shape"):
            return None
        out: list[Dim] = []
        for i, dim in enumerate(tensor.shape.dim):
            if dim.HasField("dim_value"):
                out.append(int(dim.dim_value))
            elif dim.HasField("dim_param"):
                text = dim.dim_param
                out.append(self.bound(text, _param_dim(text)))
            else:
                out.append(self.bound(f"{info.name}_{i}", Symbol(_identifier(f"{info.name}_{i}"), "int64")))
        return tuple(out)

    def bound(self, text: str, default: Dim) -> Dim:
        value = self.bindings.get(text)
        if value is None:
            return default
        return value if value.__class__ is int else simplify_dim(parse_expression(str(value)))

    def tensor(self, name: str, array: np.ndarray) -> None:
        self.shapes[name] = tuple(int(n) for n in array.shape)
        if array.dtype.kind in "iu" and array.ndim <= 1 and array.size <= MAX_VALUE_SIZE:
            self.values[name] = Value(tuple(int(v) for v in array.reshape(-1)), array.ndim == 0)

    def run(self) -> dict[str, Shape]:
        for init in self.graph.initializer:
            self.tensor(init.name, self.numpy_helper.to_array(init))
        for info in self.graph.input:
            if info.name not in self.shapes:
                self.shapes[info.name] = self.declared(info)
        for node in self.graph.node:
            rule = SHAPE_RULES.get(node.op_type)
            outs = None
            if rule is not None:
                try:
                    outs = rule(self, node)
                except (ShapeError, ZeroDivisionError, IndexError, ValueError, TypeError):
                    outs = None  # operands whose shapes or values are not known well enough
            else:
                self.unknown_ops.add(node.op_type)
            if outs is None:
                outs = [None] * len(node.output)
            for name, shape in zip(node.output, outs, strict=False):
                if name:
                    self.shapes[name] = None if shape is None else tuple(self.d.simplify(x) for x in shape)
            self.propagate_value(node)
        return self.shapes

    # -- helpers ------------------------------------------------------------------------------------------

    def shape(self, node: Any, i: int) -> Shape:
        if i >= len(node.input) or not node.input[i]:
            return None
        return self.shapes.get(node.input[i])

    def value(self, node: Any, i: int) -> Value | None:
        if i >= len(node.input) or not node.input[i]:
            return None
        return self.values.get(node.input[i])

    def ints(self, node: Any, i: int) -> list[int] | None:
        """The entries of input ``i`` when all are known ints (axes, pads, steps)."""
        v = self.value(node, i)
        if v is None:
            return None
        ints = [e for e in v.entries if type(e) is int]
        return ints if len(ints) == len(v.entries) else None

    def broadcast(self, shapes: list[Shape]) -> Shape:
        known = [s for s in shapes if s is not None]
        if len(known) < len(shapes):
            return None
        if any(d is None for s in known for d in s):
            return broadcast_with_unknowns(known)
        return broadcast_shapes(*known)

    def propagate_value(self, node: Any) -> None:
        fn = VALUE_RULES.get(node.op_type)
        if fn is None:
            return
        try:
            out = fn(self, node)
        except (IndexError, ValueError, TypeError, ZeroDivisionError):
            out = None
        if out is not None and len(out.entries) <= MAX_VALUE_SIZE:
            self.values[node.output[0]] = Value(tuple(self.d.simplify(e) for e in out.entries), out.scalar)


def _identifier(text: str) -> str:
    """A symbol name made from any text: other characters become ``_``, never a reserved word."""
    name = re.sub(r"\W", "_", text)
    if not name.isidentifier() or name in RESERVED_NAMES:
        name = "d_" + name
    return name


def infer_shapes(model: Any, *, positive: bool = True, dims: Mapping[str, int | str] | None = None) -> dict[str, Shape]:
    """Shapes of every value in an ONNX model (or graph): name -> tuple of ints, dimension terms or None.

    ``dims`` binds ``dim_param`` names to ints or expressions before inference (``{"batch": 8}``).
    """
    inference = Inference(model, positive, dims)
    return inference.run()


def annotate_shapes(model: Any, *, positive: bool = True, dims: Mapping[str, int | str] | None = None) -> Any:
    """A copy of ``model`` whose ``value_info`` records the inferred shapes (symbolic ones as ``dim_param``)."""
    onnx = require("onnx", "onnx")
    out = onnx.ModelProto()
    out.CopyFrom(model)
    shapes = infer_shapes(out, positive=positive, dims=dims)
    elem_types = {v.name: v.type.tensor_type.elem_type for v in out.graph.value_info}
    inferred = onnx.shape_inference.infer_shapes(out)
    for v in inferred.graph.value_info:
        elem_types.setdefault(v.name, v.type.tensor_type.elem_type)
    known = {i.name for i in out.graph.input} | {o.name for o in out.graph.output}
    del out.graph.value_info[:]
    for node in out.graph.node:
        for name in node.output:
            shape = shapes.get(name)
            if not name or name in known or shape is None:
                continue
            dims_out = [dim_text(d) for d in shape]
            elem = elem_types.get(name, onnx.TensorProto.UNDEFINED)
            out.graph.value_info.append(onnx.helper.make_tensor_value_info(name, elem, dims_out))
    return out
