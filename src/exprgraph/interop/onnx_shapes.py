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

A model is untrusted input. It is read from memory only: tensor data a model stores in another
file (``external_data``) is read only when the caller names ``base_dir``, only from a regular file
inside it, and only for the small integer tensors followed as values. Every dimension is an int64
(:class:`~exprgraph.errors.DimOverflowError` otherwise); anything malformed raises a
:class:`~exprgraph.errors.ShapeError` naming the node, graph input or initializer; onnx's own
(C++) shape inference is never run.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from ..core import Symbol, Term
from ..core.shapes import broadcast_shapes
from ..core.tokens import RESERVED_NAMES
from ..dims import DimExpressionError, parse_expression, simplify_dim, unparse
from ..errors import DimOverflowError, ExternalDataError, ShapeError
from ._optional import require
from .onnx_dims import MAX_VALUE_SIZE, VALUE_RULES, _attr, _int_attr, _or_unknown
from .onnx_shape_rules import SHAPE_RULES, Dim, Dims, Shape, Value, broadcast_with_unknowns, rank

__all__ = ["infer_shapes", "annotate_shapes", "dim_text", "Inference", "MAX_VALUE_SIZE", "MAX_PARAM_TEXT"]

#: longest ``dim_param`` text read as a dimension expression
MAX_PARAM_TEXT = 1000

#: ONNX integer element types (TensorProto enum) -> bytes per entry: the tensors followed as values
_INT_ITEM_SIZES = {2: 1, 3: 1, 4: 2, 5: 2, 6: 4, 7: 8, 12: 4, 13: 8}


def dim_text(d: Dim) -> str | None:
    """A dimension as ONNX ``dim_param`` text (``"batch"``, ``"(h-3)//2+1"``); None when unknown."""
    if d is None:
        return None
    return str(d) if isinstance(d, int) else unparse(d)


def _param_dim(text: str) -> Term | int:
    """The dimension an ONNX ``dim_param`` names: its expression, or a symbol named after the text."""
    if len(text) > MAX_PARAM_TEXT:
        raise ShapeError(f"a dim_param of {len(text)} characters (more than {MAX_PARAM_TEXT})")
    try:
        return simplify_dim(parse_expression(text))
    except DimExpressionError:
        return Symbol(_identifier(text), "int64")
    except OverflowError as exc:
        raise DimOverflowError(f"dim_param {text!r}: {exc}") from exc


def _quote(name: str) -> str:
    return repr(name) if len(name) <= 60 else repr(name[:60]) + "..."


@contextlib.contextmanager
def _blame(where: str) -> Iterator[None]:
    """Turn any exception in the body into a ShapeError (its class kept if it is one) that names ``where``."""
    try:
        yield
    except Exception as exc:
        cls = type(exc) if type(exc) in (ShapeError, DimOverflowError, ExternalDataError) else ShapeError
        detail = str(exc) if isinstance(exc, ShapeError) else f"{type(exc).__name__}: {exc}"
        raise cls(f"{where}: {detail}") from exc


class Inference:
    """One pass over an ONNX graph's nodes in order, filling shapes and symbolic values."""

    def __init__(
        self,
        model: Any,
        positive: bool,
        dims: Mapping[str, Any] | None,
        base_dir: str | os.PathLike[str] | None = None,
    ) -> None:
        self.onnx = require("onnx", "onnx")
        self.numpy_helper = self.onnx.numpy_helper
        self.d = Dims(positive)
        if isinstance(model, self.onnx.ModelProto):
            model = model.graph
        if not isinstance(model, self.onnx.GraphProto):
            raise TypeError(f"an onnx.ModelProto or GraphProto is needed (onnx.load reads a file), not {type(model)}")
        self.graph = model
        self.base_dir = base_dir
        self.shapes: dict[str, Shape] = {}
        self.values: dict[str, Value] = {}
        self.bindings = {key: self.binding(key, value) for key, value in (dims or {}).items()}
        self.unknown_ops: set[str] = set()

    # -- sources -----------------------------------------------------------------------------------------

    def binding(self, key: str, value: Any) -> Dim:
        """A ``dims=`` entry as a dimension: a non-negative int64, or dimension text parsed and simplified."""
        if value.__class__ is int:
            return self.dim(value, f"dims[{key!r}]")
        if isinstance(value, (str, Term)):
            return self.dim(simplify_dim(parse_expression(str(value))), f"dims[{key!r}]")
        raise ShapeError(f"dims[{key!r}] must be an int or dimension text, not {type(value).__name__}")

    def dim(self, d: Any, what: str) -> Dim:
        """``d`` simplified and checked: an int in [0, 2**63), a dimension term, or None."""
        try:
            d = self.d.simplify(d)
        except DimOverflowError as exc:
            raise DimOverflowError(f"{what}: {exc}") from exc
        if isinstance(d, int) and d < 0:
            raise DimOverflowError(f"{what} is {d}: a dimension is never negative")
        return d

    def declared(self, info: Any) -> Shape:
        if not info.type.HasField("tensor_type") or not info.type.tensor_type.HasField("shape"):
            return None
        dims = info.type.tensor_type.shape.dim
        rank(len(dims))
        out: list[Dim] = []
        for i, dim in enumerate(dims):
            if dim.HasField("dim_value"):
                out.append(self.dim(dim.dim_value, f"dim {i}"))
            elif dim.HasField("dim_param"):
                text = dim.dim_param
                out.append(self.bindings[text] if text in self.bindings else self.dim(_param_dim(text), f"dim {i}"))
            else:
                name = f"{info.name}_{i}"
                out.append(self.bindings.get(name, Symbol(_identifier(name), "int64")))
        return tuple(out)

    def tensor_shape(self, proto: Any) -> tuple[int, ...]:
        """The shape of a TensorProto (an initializer or a Constant's value), from its dims."""
        if not isinstance(proto, self.onnx.TensorProto):
            raise ShapeError(f"a tensor was expected, not {type(proto).__name__}")
        rank(len(proto.dims))
        dims = tuple(int(n) for n in proto.dims)
        for i, n in enumerate(dims):
            if n < 0:
                raise DimOverflowError(f"dim {i} is {n}: a dimension is never negative")
        return dims

    def tensor_value(self, proto: Any) -> Value | None:
        """The entries of a small 0-d or 1-d integer TensorProto; None for any other tensor."""
        item_size = _INT_ITEM_SIZES.get(proto.data_type)
        dims = self.tensor_shape(proto)
        count = dims[0] if dims else 1
        if item_size is None or len(dims) > 1 or count > MAX_VALUE_SIZE:
            return None
        if proto.data_location == self.onnx.TensorProto.EXTERNAL:
            if self.base_dir is None:
                return None  # data in another file is read only from a base directory the caller names
            proto = self.loaded(proto, count * item_size, self.base_dir)
        array = self.numpy_helper.to_array(proto)
        if array.size != count:
            raise ShapeError(f"holds {array.size} entries for dims {list(dims)}")
        entries = tuple(int(v) for v in array.reshape(-1))
        if any(v > 2**63 - 1 for v in entries):
            return None  # a uint64 past int64: not a shape
        return Value(entries, not dims)

    def loaded(self, proto: Any, nbytes: int, base_dir: str | os.PathLike[str]) -> Any:
        """A copy of ``proto`` holding its external data, read from inside ``base_dir``."""
        copy = self.onnx.TensorProto()
        copy.CopyFrom(proto)
        copy.raw_data = _read_external(proto, Path(base_dir), nbytes)
        copy.data_location = self.onnx.TensorProto.DEFAULT
        del copy.external_data[:]
        return copy

    def run(self) -> dict[str, Shape]:
        for init in self.graph.initializer:
            with _blame(f"ONNX initializer {_quote(init.name)}"):
                self.shapes[init.name] = self.tensor_shape(init)
                value = self.tensor_value(init)
                if value is not None:
                    self.values[init.name] = value
        for info in self.graph.input:
            if info.name not in self.shapes:
                with _blame(f"ONNX graph input {_quote(info.name)}"):
                    self.shapes[info.name] = self.declared(info)
        for index, node in enumerate(self.graph.node):
            with _blame(f"ONNX node {index} {_quote(node.name)} ({_quote(node.op_type)})"):
                self.infer_node(node)
        return self.shapes

    def infer_node(self, node: Any) -> None:
        """Shapes (and, for small integer tensors, values) of ``node``'s outputs."""
        for name in node.output:
            self.values.pop(name, None)
        rule = SHAPE_RULES.get(node.op_type)
        if rule is None:
            self.unknown_ops.add(node.op_type)
        outs = [None] * len(node.output) if rule is None else rule(self, node)
        for i, (name, shape) in enumerate(zip(node.output, outs, strict=False)):
            if name:
                self.shapes[name] = None if shape is None else self.checked(shape, i)
        self.propagate_value(node)

    def checked(self, shape: tuple, output: int) -> tuple:
        rank(len(shape))
        return tuple(self.dim(d, f"dim {i} of output {output}") for i, d in enumerate(shape))

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
        if fn is None or not node.output or not node.output[0]:
            return
        out = fn(self, node)
        if out is not None and len(out.entries) <= MAX_VALUE_SIZE:
            entries = tuple(_or_unknown(self.d.simplify, e) for e in out.entries)
            self.values[node.output[0]] = Value(entries, out.scalar)


def _identifier(text: str) -> str:
    """A symbol name made from any text: other characters become ``_``, never a reserved word."""
    name = re.sub(r"\W", "_", text)
    if not name.isidentifier() or name in RESERVED_NAMES:
        name = "d_" + name
    return name


def _read_external(proto: Any, base_dir: Path, nbytes: int) -> bytes:
    """The ``nbytes`` bytes of ``proto``'s external data, from a regular file inside ``base_dir``."""
    info = {entry.key: entry.value for entry in proto.external_data}
    location = info.get("location", "")
    where = f"external data at {location[:200]!r}"
    parts = Path(location.replace("\\", "/")).parts
    if not location or "\0" in location or os.path.isabs(location) or ".." in parts or ":" in location:
        raise ExternalDataError(f"{where}: a location must be a relative path inside the base directory")
    try:
        offset, length = int(info.get("offset", "0")), int(info.get("length", str(nbytes)))
    except ValueError as exc:
        raise ExternalDataError(f"{where}: offset and length must be integers") from exc
    if offset < 0 or length != nbytes:
        raise ExternalDataError(f"{where}: offset {offset} and length {length} (expected {nbytes} bytes)")
    try:
        base = base_dir.resolve(strict=True)
        path = (base / location).resolve(strict=True)
    except (OSError, RuntimeError) as exc:
        raise ExternalDataError(f"{where}: {exc}") from exc
    if not path.is_relative_to(base):
        raise ExternalDataError(f"{where}: resolves outside the base directory {str(base)!r} (through a symlink)")
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise ExternalDataError(f"{where}: {exc}") from exc
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise ExternalDataError(f"{where}: not a regular file")
        if offset + length > st.st_size:
            raise ExternalDataError(f"{where}: bytes {offset}..{offset + length} past the end of the file")
        os.lseek(fd, offset, os.SEEK_SET)
        data = b""
        while len(data) < length:
            chunk = os.read(fd, length - len(data))
            if not chunk:
                break
            data += chunk
    finally:
        os.close(fd)
    if len(data) != length:
        raise ExternalDataError(f"{where}: the file changed while it was read")
    return data


def infer_shapes(
    model: Any,
    *,
    positive: bool = True,
    dims: Mapping[str, int | str] | None = None,
    base_dir: str | os.PathLike[str] | None = None,
) -> dict[str, Shape]:
    """Shapes of every value in an ONNX model (or graph): name -> tuple of ints, dimension terms or None.

    ``dims`` binds ``dim_param`` names to ints or expressions before inference (``{"batch": 8}``).
    ``base_dir`` is the directory small integer tensors stored as external data are read from;
    without it their values are unknown (their shapes still come from the model).
    """
    return Inference(model, positive, dims, base_dir).run()


def annotate_shapes(
    model: Any,
    *,
    positive: bool = True,
    dims: Mapping[str, int | str] | None = None,
    base_dir: str | os.PathLike[str] | None = None,
) -> Any:
    """A copy of ``model`` whose ``value_info`` records the inferred shapes (symbolic ones as ``dim_param``)."""
    onnx = require("onnx", "onnx")
    if not isinstance(model, onnx.ModelProto):
        raise TypeError(f"annotate_shapes needs an onnx.ModelProto, not {type(model).__name__}")
    out = onnx.ModelProto()
    out.CopyFrom(model)
    shapes = infer_shapes(out, positive=positive, dims=dims, base_dir=base_dir)
    elem_types = _element_types(out.graph, onnx.TensorProto)
    known = {i.name for i in out.graph.input} | {o.name for o in out.graph.output}
    del out.graph.value_info[:]
    for node in out.graph.node:
        for name in node.output:
            shape = shapes.get(name)
            if not name or name in known or shape is None:
                continue
            dims_out = [d if d.__class__ is int else dim_text(d) for d in shape]  # ints as dim_value
            elem = elem_types.get(name, onnx.TensorProto.UNDEFINED)
            out.graph.value_info.append(onnx.helper.make_tensor_value_info(name, elem, dims_out))
    return out


# -- element types, for annotate_shapes (onnx's own inference is C++ that a hostile model can abort) ----------

_INT64_OUT = {"Shape", "Size", "NonZero", "ArgMax", "ArgMin"}
_BOOL_OUT = {"Equal", "Greater", "GreaterOrEqual", "Less", "LessOrEqual", "And", "Or", "Xor", "Not", "IsInf", "IsNaN"}


def _element_types(graph: Any, tensor: Any) -> dict[str, int]:
    """Element type of every value: declared for inputs and initializers, propagated through the nodes."""
    types = {v.name: v.type.tensor_type.elem_type for v in graph.value_info if v.type.tensor_type.elem_type}
    types.update({i.name: i.type.tensor_type.elem_type for i in graph.input})
    types.update({t.name: t.data_type for t in graph.initializer})
    for node in graph.node:
        ins = [types.get(name, 0) for name in node.input]
        try:
            outs = _output_types(node, ins, tensor)
        except ShapeError:
            outs = []
        for name, elem in zip(node.output, outs, strict=False):
            if name and elem:
                types[name] = elem
    return types


def _output_types(node: Any, ins: list[int], tensor: Any) -> list[int]:
    op, first = node.op_type, ins[0] if ins else 0
    if op in _INT64_OUT:
        return [tensor.INT64]
    if op in _BOOL_OUT:
        return [tensor.BOOL]
    if op == "Cast":
        return [_int_attr(node, "to", 0)]
    if op in ("CastLike", "Where"):
        return [ins[1] if len(ins) > 1 else 0]
    if op in ("ConvInteger", "MatMulInteger"):
        return [tensor.INT32]
    if op == "QLinearConv":
        return [ins[7] if len(ins) > 7 else 0]
    if op in ("Constant", "ConstantOfShape"):
        value = _attr(node, "value")
        if isinstance(value, tensor):
            return [value.data_type]
        if op == "ConstantOfShape":
            return [tensor.FLOAT]
        kinds = {"value_int": tensor.INT64, "value_ints": tensor.INT64}
        kinds |= {"value_float": tensor.FLOAT, "value_floats": tensor.FLOAT}
        return [next((t for name, t in kinds.items() if _attr(node, name) is not None), tensor.STRING)]
    if op in ("MaxPool", "Dropout"):
        return [first, tensor.INT64 if op == "MaxPool" else tensor.BOOL]
    return [first] if op in SHAPE_RULES else []  # the other ops we know keep their first input's type
