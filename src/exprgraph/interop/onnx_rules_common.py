"""Helpers shared by the ONNX shape-rule families: ranks, attribute lists, input presence, opsets, fresh dims.

Rules get an :class:`~exprgraph.interop.onnx_shapes.Inference` and a node; these helpers read what every
family needs the same way (an optional input that is present, an attribute of ``n`` sizes, the opset
the model imports, a new named dimension for a size only known at run time). Imports: onnx_dims, errors.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..errors import DimOverflowError, ShapeError
from .onnx_dims import MAX_RANK, Dim, _ints_attr

if TYPE_CHECKING:
    from .onnx_shapes import Inference

__all__ = ["rank", "known_ints", "sizes_attr", "has_input", "optional_ints", "opset", "fresh", "need", "nones"]


def rank(n: int) -> int:
    """``n`` as a tensor rank; DimOverflowError past :data:`MAX_RANK`."""
    if n > MAX_RANK:
        raise DimOverflowError(f"rank {n} is more than the limit {MAX_RANK}")
    return n


def known_ints(dims: Any) -> bool:
    """Whether every entry of ``dims`` is a known int."""
    return all(e.__class__ is int for e in dims)


def sizes_attr(node: Any, name: str, n: int, default: int, low: int) -> list[int]:
    """Attribute ``name``: ``n`` ints of at least ``low`` (``default`` each when absent or empty)."""
    values = _ints_attr(node, name)
    if not values:
        return [default] * n
    if len(values) != n:
        raise ShapeError(f"attribute {name!r} has {len(values)} entries, not {n}")
    if min(values) < low:
        raise ShapeError(f"attribute {name!r} has an entry below {low}: {values}")
    return values


def has_input(node: Any, i: int) -> bool:
    """Whether optional input ``i`` is given (present and not the empty name)."""
    return len(node.input) > i and bool(node.input[i])


def optional_ints(inf: Inference, node: Any, i: int, default: list[int] | None) -> list[int] | None:
    """The ints of input ``i``; ``default`` when it is absent, None when computed at run time."""
    return inf.ints(node, i) if has_input(node, i) else default


def opset(inf: Inference, domain: str = "") -> int:
    """The opset the model imports for ``domain`` (the newest when the engine does not say)."""
    fn = getattr(inf, "opset", None)
    return 10**6 if fn is None else int(fn(domain))


def fresh(inf: Inference, node: Any, what: str, low: int = 0, high: Dim = None) -> Dim:
    """A new named dimension for a size known only at run time, in [low, high]; None without engine support."""
    fn = getattr(inf, "fresh_dim", None)
    if fn is None:
        return None
    return fn(node, what, low, high)


def need(shape: Any, low: int, what: str = "input") -> tuple:
    """``shape`` checked to have at least ``low`` axes."""
    if len(shape) < low:
        raise ShapeError(f"{what} of rank {len(shape)} (needs at least {low})")
    return tuple(shape)


def nones(node: Any) -> list:
    """Every output unknown."""
    return [None] * len(node.output)
