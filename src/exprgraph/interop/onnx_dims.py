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
from dataclasses import dataclass
from typing import Any

from ..core import Symbol, Term
from ..core.tokens import RESERVED_NAMES
from ..dims import DimExpressionError, parse_expression, simplify_dim
from ..dims.arith import MAX_TERM_SIZE, Dim, DimArith, Shape, int64
from ..errors import DimOverflowError, ShapeError
from ._optional import require

__all__ = ["Dim", "Shape", "Value", "DimArith"]
__all__ += ["MAX_PARAM_TEXT", "param_dim", "identifier", "dim_names"]
__all__ += ["INT64_MIN", "INT64_MAX", "MAX_RANK", "MAX_TERM_SIZE", "MAX_VALUE_SIZE", "int64"]


INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
#: most axes a tensor may have (numpy allows 64; ONNX models stay far below either)
MAX_RANK = 256
#: largest integer tensor followed as a symbolic value (shape tensors are short)
MAX_VALUE_SIZE = 64

#: ONNX writes "to the end" as a huge int; anything past this counts as the end of the axis
_BIG = 2**62


@dataclass(frozen=True)
class Value:
    """The known contents of a small tensor: its entries (ints, terms or None), whether it is 0-d, its kind
    (``"int"``, ``"float"`` or ``"bool"``: a float value's entries are integral, or non-integral float
    constants; a bool value's are 0 and 1) and, for a tensor of rank 2 or more, its dims."""

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


@functools.cache
def _attribute_value() -> Callable[[Any], Any]:
    """onnx's reader of an AttributeProto's value (imported once: attributes are read for every node)."""
    return require("onnx", "onnx").helper.get_attribute_value


def _attr(node: Any, name: str, default: Any = None) -> Any:
    for a in node.attribute:
        if a.name == name:
            value = _attribute_value()(a)
            return value.decode(errors="replace") if isinstance(value, bytes) else value
    return default


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
    name = re.sub(r"\W", "_", text)
    if not name.isidentifier() or name in RESERVED_NAMES:
        name = "d_" + name
    return name
