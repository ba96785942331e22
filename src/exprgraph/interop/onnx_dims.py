"""Dimensions of ONNX shape inference: ints, ``exprgraph.dims`` terms, or None for unknown.

:class:`Dims` does arithmetic on them, simplified as it goes; :class:`Value` holds the known
entries of a small integer tensor (a shape computed in the graph); the helpers read node
attributes and axes. Used by the rules of :mod:`.onnx_shape_rules`. Imports: the core and dims.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..core import Term, const, get_op
from ..core.shapes import broadcast_shapes
from ..dims import CEIL_DIV, simplify_dim
from ._optional import require

__all__ = ["Dim", "Shape", "Value", "Dims", "broadcast_with_unknowns"]

Dim = int | Term | None
Shape = tuple[Dim, ...] | None

#: ONNX writes "to the end" as a huge int; anything past this counts as the end of the axis
_BIG = 2**62


@dataclass(frozen=True)
class Value:
    """The known contents of a small integer tensor: its entries (ints, terms or None) and whether it is 0-d."""

    entries: tuple[Dim, ...]
    scalar: bool = False


class Dims:
    """Arithmetic on dimensions (ints, terms or None for unknown), simplified as it goes."""

    def __init__(self, positive: bool) -> None:
        self.positive = positive

    def simplify(self, d: Any) -> Dim:
        if d is None or d.__class__ is int:
            return d
        return simplify_dim(d, positive=self.positive)

    def binary(self, a: Dim, b: Dim, ints: Callable[[int, int], int], terms: Callable[[Any, Any], Any]) -> Dim:
        if a is None or b is None:
            return None
        if a.__class__ is int and b.__class__ is int:
            return ints(a, b)
        return self.simplify(terms(a if a.__class__ is Term else const(a), b if b.__class__ is Term else const(b)))

    def add(self, a: Dim, b: Dim) -> Dim:
        return self.binary(a, b, lambda x, y: x + y, lambda x, y: x + y)

    def sub(self, a: Dim, b: Dim) -> Dim:
        return self.binary(a, b, lambda x, y: x - y, lambda x, y: x - y)

    def mul(self, a: Dim, b: Dim) -> Dim:
        return self.binary(a, b, lambda x, y: x * y, lambda x, y: x * y)

    def floordiv(self, a: Dim, b: Dim) -> Dim:
        return self.binary(a, b, lambda x, y: x // y if y else 0, lambda x, y: x // y)

    def ceildiv(self, a: Dim, b: Dim) -> Dim:
        return self.binary(a, b, lambda x, y: -(-x // y) if y else 0, lambda x, y: CEIL_DIV(x, y))

    def max(self, a: Dim, b: Dim) -> Dim:
        return self.binary(a, b, max, lambda x, y: get_op("maximum")(x, y))

    def min(self, a: Dim, b: Dim) -> Dim:
        return self.binary(a, b, min, lambda x, y: get_op("minimum")(x, y))

    def prod(self, dims: Any) -> Dim:
        out: Dim = 1
        for d in dims:
            out = self.mul(out, d)
        return out

    def total(self, dims: Any) -> Dim:
        out: Dim = 0
        for d in dims:
            out = self.add(out, d)
        return out


def broadcast_with_unknowns(shapes: list) -> tuple:
    rank = max(len(s) for s in shapes)
    out: list[Dim] = []
    for i in range(rank, 0, -1):
        dims = [s[-i] for s in shapes if len(s) >= i]
        known = [d for d in dims if d is not None and not (d.__class__ is int and d == 1)]
        if len(known) == len([d for d in dims if not (d.__class__ is int and d == 1)]) and known:
            out.append(broadcast_shapes(*[(d,) for d in known])[0])
        elif any(d.__class__ is int and d != 1 for d in known):
            out.append(next(d for d in known if d.__class__ is int))
        elif not known and all(d is not None for d in dims):
            out.append(1)
        else:
            out.append(None)
    return tuple(out)


def _attr(node: Any, name: str, default: Any = None) -> Any:
    for a in node.attribute:
        if a.name == name:
            onnx = require("onnx", "onnx")
            value = onnx.helper.get_attribute_value(a)
            return value.decode() if isinstance(value, bytes) else value
    return default


def _axis(axis: int, rank: int) -> int:
    if not -rank <= axis < rank:
        raise ValueError(f"axis {axis} out of range for rank {rank}")
    return axis % rank
