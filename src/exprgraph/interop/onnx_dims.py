"""Dimensions of ONNX shape inference: bounded int64s, ``exprgraph.dims`` terms, or None for unknown.

:class:`~exprgraph.dims.arith.DimArith` (dims' own arithmetic, which keeps each term's polynomial)
computes with them and never lets an int leave int64 (:class:`~exprgraph.errors.DimOverflowError`)
or a term grow past :data:`MAX_TERM_SIZE` nodes (it becomes unknown). :class:`Value` holds the
known entries of a small tensor (a shape computed in the graph; :mod:`.onnx_values` computes them);
the helpers read node attributes, checking their types, and axes. Used by
:mod:`.onnx_shape_rules` and :mod:`.onnx_shapes`. Imports: the core, dims and errors.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any, NamedTuple

from ..core import Symbol, Term
from ..core.tokens import RESERVED_NAMES
from ..dims import DimExpressionError, dim_name, parse_expression, simplify_dim
from ..dims.arith import MAX_TERM_SIZE, Dim, DimArith, Shape, int64
from ..errors import DimOverflowError, ShapeError
from ._optional import require

__all__ = ["Dim", "Shape", "Value", "DimArith", "Node"]
__all__ += ["MAX_PARAM_TEXT", "param_dim", "identifier", "dim_names"]
__all__ += ["INT64_MIN", "INT64_MAX", "MAX_RANK", "MAX_TERM_SIZE", "MAX_VALUE_SIZE", "int64"]


INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
#: most axes a tensor may have (numpy allows 64; ONNX models stay far below either)
MAX_RANK = 256
#: largest integer tensor followed as a symbolic value (shape tensors are short)
MAX_VALUE_SIZE = 64

#: ONNX writes "to the end" as a huge int; anything past this counts as the end of the axis
_BIG = 2**62


class Value(NamedTuple):
    """The known contents of a small tensor: its entries (ints, terms or None), whether it is 0-d, its kind
    (``"int"``, ``"float"`` or ``"bool"``: a float value's entries are integral, or non-integral float
    constants; a bool value's are 0 and 1) and, for a tensor of rank 2 or more, its dims. (A named
    tuple, immutable: values are made for most nodes, and a frozen dataclass costs twice as much.)"""

    entries: tuple[Dim, ...]
    scalar: bool = False
    kind: str = "int"
    dims: tuple[int, ...] | None = None

    @property
    def shape(self) -> tuple[int, ...]:
        """The tensor's shape: ``()``, ``(n,)`` or its dims."""
        if self.dims is not None:
            return self.dims
        return () if self.scalar else (len(self.entries),)


class Node:
    """A NodeProto read once: its fields as plain strings and lists, its attributes found by name.

    Rules read a node's inputs and attributes many times; each read of a protobuf field builds a new
    Python object, so the engine hands rules this instead (the same field names, so a NodeProto
    works wherever a Node does)."""

    __slots__ = ("proto", "op_type", "domain", "input", "output", "_attrs")

    def __init__(self, proto: Any) -> None:
        self.proto = proto
        self.op_type: str = proto.op_type
        self.domain: str = proto.domain
        self.input: list[str] = proto.input[:]  # (a slice copies a repeated field quicker than list() does)
        self.output: list[str] = proto.output[:]
        self._attrs: dict[str, Any] | None = None

    @property
    def name(self) -> str:
        """The node's name."""
        return self.proto.name

    @property
    def overload(self) -> str:
        """The overload of the model-local function the node calls ("" when none)."""
        return getattr(self.proto, "overload", "")

    @property
    def attribute(self) -> Any:
        """The node's AttributeProtos."""
        return self.proto.attribute

    def attr(self, name: str) -> Any:
        """The AttributeProto named ``name`` (the first one, as a scan of ``attribute`` finds), or None."""
        attrs = self._attrs
        if attrs is None:
            attrs = self._attrs = {}
            for a in self.proto.attribute:
                attrs.setdefault(a.name, a)
        return attrs.get(name)


@functools.cache
def _attribute_value() -> Callable[[Any], Any]:
    """onnx's reader of an AttributeProto's value (imported once: attributes are read for every node)."""
    return require("onnx", "onnx").helper.get_attribute_value


def _attr(node: Any, name: str, default: Any = None) -> Any:
    """The value of ``node``'s attribute ``name`` (text decoded), or ``default`` when it has none."""
    if node.__class__ is Node:
        a = node.attr(name)
        return default if a is None else _decoded(a)
    for a in node.attribute:
        if a.name == name:
            return _decoded(a)
    return default


#: AttributeProto's type codes of an int, a list of ints and a tensor
_INT, _INTS, _TENSOR = 2, 7, 4


def _decoded(a: Any) -> Any:
    """An AttributeProto's value, as onnx's reader gives it (bytes decoded as text); the usual types read here."""
    if not a.ref_attr_name:
        kind = a.type
        if kind == _INT:
            return a.i
        if kind == _INTS:
            return a.ints[:]  # a list
        if kind == _TENSOR:
            return a.t
    value = _attribute_value()(a)
    return value.decode(errors="replace") if isinstance(value, bytes) else value


def _int_attr(node: Any, name: str, default: Any = None) -> Any:
    """Attribute ``name`` as an int (``default`` when absent); ShapeError when it is another type."""
    value = _attr(node, name, default)
    if value is default:
        return value
    if value.__class__ is not int:
        raise ShapeError(f"attribute {name!r} must be an int, not {type(value).__name__}")
    return value


def _ints_attr(node: Any, name: str) -> list[int] | None:
    """Attribute ``name`` as a list of ints (None when absent); ShapeError when it is another type."""
    if node.__class__ is Node:
        a = node.attr(name)
        if a is None:
            return None
        if a.type == _INTS and not a.ref_attr_name:
            return a.ints[:]
    value = _attr(node, name)
    if value is None:
        return None
    if not isinstance(value, list) or any(v.__class__ is not int for v in value):
        raise ShapeError(f"attribute {name!r} must be a list of ints, not {type(value).__name__}")
    return value


def _axis(axis: Any, rank: int) -> int:
    if axis.__class__ is not int:
        raise ShapeError(f"axis {axis!r} is not an int")
    if not -rank <= axis < rank:
        raise ShapeError(f"axis {axis} out of range for rank {rank}")
    return axis % rank


def _axes(axes: list, rank: int) -> list[int]:
    """``axes`` resolved against ``rank``; ShapeError when one is out of range or repeated."""
    out = [_axis(a, rank) for a in axes]
    if len(set(out)) < len(out):
        raise ShapeError(f"repeated axis in {list(axes)}")
    return out


# -- names of dimensions --------------------------------------------------------------------------------

#: longest ``dim_param`` text read as a dimension expression
MAX_PARAM_TEXT = 1000


def param_dim(text: str) -> Term | int:
    """The dimension an ONNX ``dim_param`` names: its expression, or a symbol named after the text."""
    if len(text) > MAX_PARAM_TEXT:
        raise ShapeError(f"a dim_param of {len(text)} characters (more than {MAX_PARAM_TEXT})")
    if text.isascii() and text.isidentifier() and text not in RESERVED_NAMES:
        return dim_name(text)  # a plain name (most dim_params): what parsing it gives
    try:
        return simplify_dim(parse_expression(text))
    except DimExpressionError:
        return Symbol(identifier(text), "int64")
    except OverflowError as exc:
        raise DimOverflowError(f"dim_param {text!r}: {exc}") from exc


def dim_names(graph: Any) -> set[str]:
    """The symbol names the declared dims of a graph's inputs, outputs and value_info use."""
    out: set[str] = set()
    for info in [*graph.input, *graph.output, *graph.value_info]:
        if info.type.HasField("tensor_type") and info.type.tensor_type.HasField("shape"):
            for i, dim in enumerate(info.type.tensor_type.shape.dim):
                text = dim.dim_param if dim.HasField("dim_param") else f"{info.name}_{i}"
                out.add(identifier(text[:MAX_PARAM_TEXT]))
    return out


def identifier(text: str) -> str:
    """A symbol name made from any text: other characters become ``_``, never a reserved word."""
    if text.isascii() and text.isidentifier() and text not in RESERVED_NAMES:
        return text  # (an ASCII identifier has no character to replace)
    name = re.sub(r"\W", "_", text)
    if not name.isidentifier() or name in RESERVED_NAMES:
        name = "d_" + name
    return name
