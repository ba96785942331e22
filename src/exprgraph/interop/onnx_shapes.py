"""Symbolic shape inference for ONNX models, with exprgraph's dimension algebra (needs ``exprgraph[onnx]``).

``infer_shapes(model)`` gives every value of an ONNX graph its shape, each dimension an int or an
int64 term of :mod:`exprgraph.dims` (``batch``, ``(h - 3)//2 + 1``), simplified to the canonical
form. Small tensors that hold shapes are followed entry by entry (:mod:`.onnx_values`), so
``Reshape(x, Concat(Shape(x)[:1], [-1]))`` or ``Expand(x, Where(Equal(s, -1), 1, s))`` get their exact
shapes. A size known only at run time (``NonZero``, a dim a rule cannot decide, an unknown op whose
rank the model declares) is a *fresh* dimension: a new name with the range that is known (as torch's
unbacked sizes), recorded in ``inf.env``, so one unknown never poisons what follows. ``If``, ``Loop``,
``Scan``, model-local functions (:mod:`.onnx_control`) and sequences (:mod:`.onnx_sequences`) are
followed; declared ``value_info`` shapes are checked against what is inferred and fill what is not.

Dimensions of graph inputs are taken to be at least 1 (``positive=True``), which lets ``min(1, n)``
be ``1``; fresh dims are at least 0. An unknown dimension is ``None``, an unknown shape is ``None``.
``annotate_shapes(model)`` writes the results back into the model's ``value_info``.

A model is untrusted input. It is read from memory only: tensor data a model stores in another file
(``external_data``) is read only when the caller names ``base_dir``, only from a regular file inside
it, and only for small tensors followed as values. Every dimension is an int64
(:class:`~exprgraph.errors.DimOverflowError` otherwise); anything malformed raises a
:class:`~exprgraph.errors.ShapeError` naming the node, graph input or initializer; onnx's own (C++)
shape inference is never run, and every walk (subgraphs included) runs from an explicit stack.
"""

from __future__ import annotations

import contextlib
import os
import warnings
from collections.abc import Generator, Iterator, Mapping
from typing import Any

from ..core import Symbol, Term
from ..dims import DimEnv, parse_expression, simplify_dim, unparse
from ..errors import DimOverflowError, ExternalDataError, ShapeError, ShapeInferenceWarning
from ._optional import require
from .onnx_control import CONTROL_RULES, call_function, drive
from .onnx_dims import MAX_PARAM_TEXT, MAX_VALUE_SIZE, dim_names, identifier, int64, param_dim
from .onnx_sequences import SEQUENCE_RULES, Seq, Slot
from .onnx_shape_rules import SHAPE_RULES, Dim, DimArith, Shape, Value, rank
from .onnx_values import VALUE_RULES
from .onnx_values_io import element_types, tensor_dims, tensor_value

__all__ = ["infer_shapes", "annotate_shapes", "dim_text", "Inference", "MAX_VALUE_SIZE", "MAX_PARAM_TEXT"]

#: the domains whose ops the shape rules cover
_STANDARD = ("", "ai.onnx", "ai.onnx.ml")
_MISSING: Any = object()
#: most subgraph nodes one inference walks, counted each time they are walked (nested Ifs double it per level)
MAX_WALKED = 50_000


def dim_text(d: Dim) -> str | None:
    """A dimension as ONNX ``dim_param`` text (``"batch"``, ``"(h-3)//2+1"``); None when unknown."""
    if d is None:
        return None
    return str(d) if isinstance(d, int) else unparse(d)


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
        if len(detail) > 4000:  # blamed by many nested subgraphs: keep the outermost and innermost parts
            detail = detail[:1000] + " ... " + detail[-2000:]
        error = cls(f"{where}: {detail}")
        error.blamed = True  # type: ignore[attr-defined]
        # an error already blamed inside a subgraph is chained from its cause: the chain stays short
        raise error from (exc.__cause__ if getattr(exc, "blamed", False) and exc.__cause__ is not None else exc)


class Inference:
    """One pass over an ONNX graph's nodes in order, filling shapes, symbolic values and sequences."""

    def __init__(
        self,
        model: Any,
        positive: bool,
        dims: Mapping[str, Any] | None,
        base_dir: str | os.PathLike[str] | None = None,
    ) -> None:
        self.onnx = require("onnx", "onnx")
        self.numpy_helper = self.onnx.numpy_helper
        self.positive = positive
        #: ranges of the dimension names: graph inputs' >= 1 (when positive), fresh dims >= 0 or their own
        self.env = DimEnv()
        self.d = DimArith(positive, self.env)
        self.opsets = self.read_opsets(model)
        self.functions = {(f.domain, f.name, getattr(f, "overload", "")): f for f in getattr(model, "functions", ())}
        if isinstance(model, self.onnx.ModelProto):
            model = model.graph
        if not isinstance(model, self.onnx.GraphProto):
            raise TypeError(f"an onnx.ModelProto or GraphProto is needed (onnx.load reads a file), not {type(model)}")
        self.graph = model
        self.base_dir = base_dir
        self.shapes: dict[str, Shape] = {}
        self.values: dict[str, Value] = {}
        self.sequences: dict[str, Seq] = {}
        self.infos: dict[str, Any] = {}  # declared value_info (and graph outputs) by name
        self.fresh: set[Term] = set()
        self.names = dim_names(model)  # names taken by declared dims: fresh dims avoid them
        self.suffixes: dict[str, int] = {}  # the next number to try after a fresh dim's name
        self.bindings = {key: self.binding(key, value) for key, value in (dims or {}).items()}
        self.unknown_ops: set[str] = set()
        self.unknown: dict[str, set[str]] = {}
        self.node_index = 0
        self.undo: list[dict[str, tuple[Any, Any, Any]]] = []
        self.calling: set[tuple[str, str]] = set()
        self.inlined = 0
        self.walked = 0

    # -- sources -----------------------------------------------------------------------------------------

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

    # -- the walk -------------------------------------------------------------------------------------------

    def run(self) -> dict[str, Shape]:
        """Infer every value's shape; returns name -> shape."""
        drive(self.main())
        if self.unknown:
            listed = "; ".join(
                f"{domain or 'ai.onnx'}: {', '.join(sorted(ops)[:20])}" for domain, ops in self.unknown.items()
            )
            warnings.warn(
                f"ONNX shape inference has no rule for these ops: {listed}", ShapeInferenceWarning, stacklevel=3
            )
        return self.shapes

    def main(self) -> Generator[Any, Any, None]:
        """The model's graph: initializers, inputs, then its nodes."""
        self.note_infos(self.graph)
        self.initializers(self.graph)
        for info in self.graph.input:
            if info.name not in self.shapes:
                with _blame(f"ONNX graph input {_quote(info.name)}"):
                    self.define(info.name, self.declared(info))
        yield from self.nodes(self.graph.node)

    def initializers(self, graph: Any) -> None:
        for init in graph.initializer:
            with _blame(f"ONNX initializer {_quote(init.name)}"):
                self.define(init.name, self.tensor_shape(init), self.tensor_value(init))

    def note_infos(self, graph: Any) -> None:
        for info in [*graph.value_info, *graph.output]:
            self.infos.setdefault(info.name, info)

    def subgraph(self, graph: Any, slots: list[Slot], outputs: list[str] | None = None) -> Generator[Any, Any, Any]:
        """A walk of a subgraph (or of inlined nodes) whose inputs hold ``slots``; returns its outputs' slots."""
        self.undo.append({})
        index = self.node_index
        try:
            if isinstance(graph, list):
                nodes, names = graph, outputs or []
            else:
                self.note_infos(graph)
                self.initializers(graph)
                for k, info in enumerate(graph.input):
                    given = slots[k] if k < len(slots) else None
                    if given is None or (given.shape is None and given.seq is None):
                        with _blame(f"ONNX graph input {_quote(info.name)}"):
                            given = Slot(self.declared(info, anonymous=False))
                    self.define(info.name, given.shape, given.value, given.seq)
                nodes, names = graph.node, [o.name for o in graph.output]
            yield from self.nodes(nodes)
            return [self.slot(name) for name in names]
        finally:
            self.node_index = index
            self.restore(self.undo.pop())

    def nodes(self, nodes: Any) -> Generator[Any, Any, None]:
        """Each node in order, its failure named."""
        for index, node in enumerate(nodes):
            self.node_index = index
            self.walked += 1 if self.undo else 0
            if self.walked > MAX_WALKED:
                raise ShapeError(f"more than {MAX_WALKED} nodes walked (subgraphs count each time they are walked)")
            with _blame(f"ONNX node {index} {_quote(node.name)} ({_quote(node.op_type)})"):
                yield from self.infer(node)

    def infer(self, node: Any) -> Generator[Any, Any, None]:
        """Shapes (values, sequences) of ``node``'s outputs."""
        domain = "" if node.domain == "ai.onnx" else node.domain
        fn = self.functions.get((node.domain, node.op_type, getattr(node, "overload", "")))
        standard = domain in _STANDARD
        outs: list[Any]
        if fn is not None:
            outs = yield from call_function(self, node, fn)
        elif standard and node.op_type in CONTROL_RULES:
            outs = yield from CONTROL_RULES[node.op_type](self, node)
        elif standard and node.op_type in SEQUENCE_RULES:
            outs = SEQUENCE_RULES[node.op_type](self, node)
        elif standard and node.op_type in SHAPE_RULES:
            outs = SHAPE_RULES[node.op_type](self, node)
        else:
            self.unknown_ops.add(node.op_type)
            self.unknown.setdefault(domain, set()).add(node.op_type)
            outs = []
        self.finish(node, outs)
        if standard and fn is None:
            self.propagate_value(node)

    def finish(self, node: Any, outs: list[Any]) -> None:
        """Record the outputs: checked, compared with what the model declares, unknown dims made fresh."""
        for i, name in enumerate(node.output):
            if not name:
                continue
            item = outs[i] if i < len(outs) else None
            slot = item if isinstance(item, Slot) else Slot(item)
            if slot.seq is not None:
                self.define(name, None, None, slot.seq)
                continue
            shape = None if slot.shape is None else self.checked(slot.shape, i)
            self.define(name, self.reconcile(node, name, i, shape), slot.value)

    def reconcile(self, node: Any, name: str, output: int, shape: Shape) -> Shape:
        """``shape`` checked against the declared one (which fills dims ours does not know); None dims made fresh."""
        info = self.infos.get(name)
        declared = None if info is None else self.declared(info, anonymous=False)
        if declared is not None:
            if shape is None:
                shape = declared
            elif len(shape) != len(declared):
                raise ShapeError(f"value {_quote(name)} is declared of rank {len(declared)} but has rank {len(shape)}")
            else:
                shape = tuple(
                    self.agree(name, axis, d, t) for axis, (d, t) in enumerate(zip(shape, declared, strict=True))
                )
        if shape is None or all(d is not None for d in shape):
            return shape
        tag = "d" if len(node.output) == 1 else f"{output}_"
        return tuple(self.fresh_dim(node, f"{tag}{axis}") if d is None else d for axis, d in enumerate(shape))

    def agree(self, name: str, axis: int, ours: Dim, theirs: Dim) -> Dim:
        """One dim, ours against the declared one: two ints that differ are an error; a declared dim fills ours."""
        if ours.__class__ is int and theirs.__class__ is int and ours != theirs:
            raise ShapeError(f"value {_quote(name)}: dim {axis} is declared {theirs} but is {ours}")
        if theirs is not None and (ours is None or ours in self.fresh):
            return theirs
        return ours

    def define(self, name: str, shape: Shape, value: Value | None = None, seq: Seq | None = None) -> None:
        """Give ``name`` its shape, value and sequence (remembering the old ones inside a subgraph)."""
        if self.undo and name not in self.undo[-1]:
            old = (self.shapes.get(name, _MISSING), self.values.get(name, _MISSING), self.sequences.get(name, _MISSING))
            self.undo[-1][name] = old
        self.shapes[name] = shape
        tables: list[tuple[dict[str, Any], Any]] = [(self.values, value), (self.sequences, seq)]
        for table, item in tables:
            if item is None:
                table.pop(name, None)
            else:
                table[name] = item

    def restore(self, undo: dict[str, tuple[Any, Any, Any]]) -> None:
        """Put back what a subgraph's names held outside it."""
        for name, old in undo.items():
            tables: tuple[dict[str, Any], ...] = (self.shapes, self.values, self.sequences)
            for table, item in zip(tables, old, strict=True):
                if item is _MISSING:
                    table.pop(name, None)
                else:
                    table[name] = item

    def slot(self, name: str, values: bool = True) -> Slot:
        """What ``name`` holds (without its value unless ``values``)."""
        return Slot(self.shapes.get(name), self.values.get(name) if values else None, self.sequences.get(name))

    def checked(self, shape: tuple, output: int) -> tuple:
        rank(len(shape))
        return tuple(self.dim(d, f"dim {i} of output {output}") for i, d in enumerate(shape))

    # -- helpers ------------------------------------------------------------------------------------------

    def shape(self, node: Any, i: int) -> Shape:
        if i >= len(node.input) or not node.input[i]:
            return None
        return self.shapes.get(node.input[i])

    def tensor(self, node: Any, i: int) -> Value | None:
        """The value of input ``i`` (of any rank), or None."""
        if i >= len(node.input) or not node.input[i]:
            return None
        return self.values.get(node.input[i])

    def value(self, node: Any, i: int) -> Value | None:
        """The value of input ``i`` when it is 0-d or 1-d, or None."""
        v = self.tensor(node, i)
        return None if v is None or v.dims is not None else v

    def ints(self, node: Any, i: int) -> list[int] | None:
        """The entries of input ``i`` when all are known ints (axes, pads, steps)."""
        v = self.value(node, i)
        if v is None:
            return None
        ints = [e for e in v.entries if type(e) is int]
        return ints if len(ints) == len(v.entries) else None

    def broadcast(self, shapes: list[Shape]) -> Shape:
        return self.d.broadcast(shapes)

    def propagate_value(self, node: Any) -> None:
        """The values of ``node``'s outputs (small tensors), and the shapes they pin down."""
        fn = VALUE_RULES.get(node.op_type)
        if fn is None or not node.output:
            return
        out = fn(self, node)
        for name, v in zip(node.output, out if isinstance(out, list) else [out], strict=False):
            if name and v is not None and len(v.entries) <= MAX_VALUE_SIZE:
                v = Value(tuple(self.entry(e, v.kind) for e in v.entries), v.scalar, v.kind, v.dims)
                self.values[name] = v
                self.shape_from_value(name, v)

    def entry(self, e: Any, kind: str) -> Any:
        """A value entry checked: an int64, a simplified term, a float in a float value; else unknown."""
        if e.__class__ is int:
            return e if -(2**63) <= e < 2**63 else None
        if e.__class__ is Term:
            try:
                return self.d.simplify(e)
            except (DimOverflowError, ArithmeticError):
                return None
        return e if e.__class__ is float and kind == "float" else None

    def shape_from_value(self, name: str, v: Value) -> None:
        """A value's shape is a tensor's shape: it replaces dims that are fresh or unknown."""
        shape = self.shapes.get(name)
        if shape is None or len(shape) != len(v.shape):
            self.shapes[name] = v.shape
            return
        if any(d is None or d in self.fresh for d in shape):
            self.shapes[name] = tuple(
                n if d is None or d in self.fresh else d for d, n in zip(shape, v.shape, strict=True)
            )


def infer_shapes(
    model: Any,
    *,
    positive: bool = True,
    dims: Mapping[str, int | str] | None = None,
    base_dir: str | os.PathLike[str] | None = None,
) -> dict[str, Shape]:
    """Shapes of every value in an ONNX model (or graph): name -> tuple of ints, dimension terms or None.

    ``dims`` binds ``dim_param`` names to ints or expressions before inference (``{"batch": 8}``).
    ``base_dir`` is the directory small tensors stored as external data are read from;
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
    elem_types = element_types(out.graph, onnx.TensorProto, lambda op: op in SHAPE_RULES)
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
