"""What ONNX shape inference reads from the model: opsets, declared shapes, tensors, names for fresh dims,
and how a failure names the node, input or initializer at fault.

:class:`Sources` is the part of :class:`~exprgraph.interop.onnx_shapes.Inference` that reads the model
(the engine's walk and rules are in :mod:`.onnx_shapes`). Imports: core, dims, errors, onnx_dims, onnx_values_io.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import Any

from ..core import Symbol, Term
from ..dims import DimEnv, parse_expression, simplify_dim
from ..errors import DimOverflowError, ExternalDataError, ShapeError
from .onnx_dims import Dim, DimArith, Shape, Value, dim_names, identifier, int64, param_dim
from .onnx_rules_common import rank
from .onnx_values_io import tensor_dims, tensor_value

__all__ = ["Sources"]


def _quote(name: str) -> str:
    return repr(name) if len(name) <= 60 else repr(name[:60]) + "..."


def _blamed(where: str, exc: Exception) -> Exception:
    """``exc`` as a ShapeError (its class kept if it is one) that names ``where``, chained from its cause."""
    cls = type(exc) if type(exc) in (ShapeError, DimOverflowError, ExternalDataError) else ShapeError
    detail = str(exc) if isinstance(exc, ShapeError) else f"{type(exc).__name__}: {exc}"
    if len(detail) > 4000:  # blamed by many nested subgraphs: keep the outermost and innermost parts
        detail = detail[:1000] + " ... " + detail[-2000:]
    error = cls(f"{where}: {detail}")
    error.blamed = True  # type: ignore[attr-defined]
    # an error already blamed inside a subgraph is chained from its cause: the chain stays short
    error.__cause__ = exc.__cause__ if getattr(exc, "blamed", False) and exc.__cause__ is not None else exc
    return error


@contextlib.contextmanager
def _blame(where: str) -> Iterator[None]:
    """Turn any exception in the body into a ShapeError (its class kept if it is one) that names ``where``."""
    try:
        yield
    except Exception as exc:
        raise _blamed(where, exc)  # noqa: B904 (the cause is set by _blamed)


class Sources:
    """Reading the model: what an inference knows before it walks a node (set up by ``Inference``)."""

    onnx: Any
    graph: Any
    positive: bool
    env: DimEnv
    d: DimArith
    opsets: dict[str, int]
    base_dir: str | os.PathLike[str] | None
    fresh: set[Term]
    taken: set[str] | None
    suffixes: dict[str, int]
    bindings: dict[str, Dim]
    node_index: int

    def read_opsets(self, model: Any) -> dict[str, int]:
        """The model's opset imports (a bare graph: the newest opsets the onnx package knows)."""
        if not isinstance(model, self.onnx.ModelProto):
            return {"": self.onnx.defs.onnx_opset_version(), "ai.onnx.ml": self.onnx.defs.onnx_ml_opset_version()}
        out: dict[str, int] = {}
        for entry in model.opset_import:
            if entry.version < 0:
                raise ShapeError(f"opset import {entry.domain[:60]!r} has version {entry.version}")
            out["" if entry.domain == "ai.onnx" else entry.domain] = entry.version
        return out

    def opset(self, domain: str = "") -> int:
        """The model's opset version for ``domain`` (``""`` and ``"ai.onnx"`` are the same); 0 when not imported."""
        return self.opsets.get("" if domain == "ai.onnx" else domain, 0)

    @property
    def names(self) -> set[str]:
        """The dimension names taken: by the model's declared dims, then by fresh dims; fresh dims avoid them."""
        if self.taken is None:
            self.taken = dim_names(self.graph)
        return self.taken

    def fresh_dim(self, node: Any, what: str, low: int = 0, high: int | Term | None = None) -> Term:
        """A new int64 dimension named after ``node`` and ``what`` (a size known at run time), in [low, high]."""
        base = node.name or f"{node.op_type.lower()}_{self.node_index}"
        name = identifier(f"{base}_{what}")[:80]
        if name in self.names:
            k = self.suffixes.get(name, 2)
            while f"{name}_{k}" in self.names:
                k += 1
            self.suffixes[name] = k + 1
            name = f"{name}_{k}"
        self.names.add(name)
        top = high if high.__class__ is int else None
        if low != 0 or top is not None:
            self.env.set_range(name, (int64(low), None if top is None else int64(top)))
        dim = Symbol(name, "int64")
        if high.__class__ is Term:
            self.env.declare(dim <= high)
        self.fresh.add(dim)
        return dim

    def at_least_one(self, dims: Any) -> None:
        """Names in declared dims are >= 1 when ``positive``."""
        if not self.positive:
            return
        for d in dims:
            if d.__class__ is Term:
                for s in d.free_symbols:
                    if s.name not in self.env.ranges:
                        self.env.set_range(s.name, (1, None))

    def binding(self, key: str, value: Any) -> Dim:
        """A ``dims=`` entry as a dimension: a non-negative int64, or dimension text parsed and simplified."""
        if value.__class__ is int:
            return self.dim(value, f"dims[{key!r}]")
        if isinstance(value, (str, Term)):
            d = simplify_dim(parse_expression(str(value)))
            self.at_least_one([d])
            return self.dim(d, f"dims[{key!r}]")
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

    def declared(self, info: Any, anonymous: bool = True) -> Shape:
        """A value_info's shape; an anonymous dim is a symbol named after the value (None unless ``anonymous``)."""
        if not info.type.HasField("tensor_type") or not info.type.tensor_type.HasField("shape"):
            return None
        dims = info.type.tensor_type.shape.dim
        rank(len(dims))
        out: list[Dim] = []
        for i, dim in enumerate(dims):
            if dim.HasField("dim_value"):
                negative = dim.dim_value < 0 and not anonymous  # some exporters write -1 for "unknown"
                out.append(None if negative else self.dim(dim.dim_value, f"dim {i}"))
            elif dim.HasField("dim_param"):
                text = dim.dim_param
                out.append(self.bindings[text] if text in self.bindings else self.dim(param_dim(text), f"dim {i}"))
            elif anonymous:
                name = f"{info.name}_{i}"
                out.append(self.bindings.get(name, Symbol(identifier(name), "int64")))
            else:
                out.append(None)
        self.at_least_one(out)
        return tuple(out)

    def tensor_shape(self, proto: Any) -> tuple[int, ...]:
        """The shape of a TensorProto (an initializer or a Constant's value), from its dims."""
        if not isinstance(proto, self.onnx.TensorProto):
            raise ShapeError(f"a tensor was expected, not {type(proto).__name__}")
        return tensor_dims(proto)

    def tensor_value(self, proto: Any) -> Value | None:
        """The entries of a small integer, bool or float TensorProto; None for any other tensor."""
        return tensor_value(self, proto)
