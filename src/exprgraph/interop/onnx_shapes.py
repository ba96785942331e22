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
What is read from the model (opsets, declared shapes, tensors) is in :mod:`.onnx_sources`; each node
is read once into a light :class:`~.onnx_dims.Node`, and its op's rules are looked up once per model.

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

import os
import warnings
from collections.abc import Callable, Generator, Mapping
from typing import Any, NamedTuple

from ..core import Term
from ..dims import DimEnv, unparse
from ..errors import DimOverflowError, ShapeError, ShapeInferenceWarning
from ._optional import require
from .onnx_control import CONTROL_RULES, call_function, drive
from .onnx_dims import INT64_MAX, INT64_MIN, MAX_PARAM_TEXT, MAX_VALUE_SIZE, Node
from .onnx_sequences import SEQUENCE_RULES, Seq, Slot
from .onnx_shape_rules import SHAPE_RULES, Dim, DimArith, Shape, Value, rank
from .onnx_sources import Sources, _blame, _blamed, _quote
from .onnx_values import FROM_SHAPES, VALUE_RULES
from .onnx_values_io import element_types, tensor_dims, tensor_value

__all__ = ["infer_shapes", "annotate_shapes", "dim_text", "Inference", "MAX_VALUE_SIZE", "MAX_PARAM_TEXT"]

#: the domains whose ops the shape rules cover
_STANDARD = ("", "ai.onnx", "ai.onnx.ml")
_MISSING: Any = object()
#: most subgraph nodes one inference walks, counted each time they are walked (nested Ifs double it per level)
MAX_WALKED = 50_000


class OpRules(NamedTuple):
    """What infers an op type: a rule that walks subgraphs, a shape (or sequence) rule, a value rule."""

    walk: Callable[..., Generator[Any, Any, list[Any]]] | None
    rule: Callable[[Any, Any], list[Any]] | None
    value: Callable[[Any, Any], Any] | None
    from_shapes: bool = False  # the value rule reads no input's value (else it is skipped when none has one)


def dim_text(d: Dim) -> str | None:
    """A dimension as ONNX ``dim_param`` text (``"batch"``, ``"(h-3)//2+1"``); None when unknown."""
    if d is None:
        return None
    return str(d) if isinstance(d, int) else unparse(d)


class Inference(Sources):
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
        self.taken: set[str] | None = None  # names taken by declared dims (read at the first fresh dim)
        self.suffixes: dict[str, int] = {}  # the next number to try after a fresh dim's name
        self.bindings = {key: self.binding(key, value) for key, value in (dims or {}).items()}
        self.unknown_ops: set[str] = set()
        self.rules: dict[tuple[str, str], OpRules] = {}  # (domain, op type) -> its rules
        self.unknown: dict[str, set[str]] = {}
        self.node_index = 0
        self.undo: list[dict[str, tuple[Any, Any, Any]]] = []
        self.calling: set[tuple[str, str]] = set()
        self.inlined = 0
        self.walked = 0

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
        """The shapes and (small ones) values of a graph's initializers."""
        for init in graph.initializer:
            try:
                dims = tensor_dims(init)
                self.define(init.name, dims, tensor_value(self, init, dims))
            except Exception as exc:
                raise _blamed(f"ONNX initializer {_quote(init.name)}", exc)  # noqa: B904

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
        """Each node in order, its failure named (control flow and functions walk their subgraphs from the stack)."""
        for index, proto in enumerate(nodes):
            self.node_index = index
            if self.undo:
                self.walked += 1
                if self.walked > MAX_WALKED:
                    raise ShapeError(f"more than {MAX_WALKED} nodes walked (subgraphs count each time they are walked)")
            try:
                node = Node(proto)
                key = (node.domain, node.op_type)
                fn = self.functions.get((*key, node.overload)) if self.functions else None
                if fn is not None:  # a call of a model-local function: values are not propagated through it
                    self.finish(node, (yield from call_function(self, node, fn)))
                    continue
                op = self.rules.get(key) or self.op_rules(key)
                if op.walk is not None:
                    self.finish(node, (yield from op.walk(self, node)))
                else:
                    self.finish(node, op.rule(self, node) if op.rule is not None else self.unknown_op(node))
                if op.value is not None and node.output and (op.from_shapes or self.has_value(node)):
                    self.propagate_value(node, op.value)
            except Exception as exc:
                raise _blamed(f"ONNX node {index} {_quote(proto.name)} ({_quote(proto.op_type)})", exc)  # noqa: B904

    def op_rules(self, key: tuple[str, str]) -> OpRules:
        """The rules of an op type in a domain (looked up once per inference)."""
        domain, op_type = key
        standard = ("" if domain == "ai.onnx" else domain) in _STANDARD
        if not standard:
            out = OpRules(None, None, None)
        else:
            rule = SEQUENCE_RULES.get(op_type) or SHAPE_RULES.get(op_type)
            out = OpRules(CONTROL_RULES.get(op_type), rule, VALUE_RULES.get(op_type), op_type in FROM_SHAPES)
        self.rules[key] = out
        return out

    def unknown_op(self, node: Node) -> list[Any]:
        """No outputs known for an op no rule covers (listed in the warning): declared dims fill them, else fresh."""
        self.unknown_ops.add(node.op_type)
        self.unknown.setdefault("" if node.domain == "ai.onnx" else node.domain, set()).add(node.op_type)
        return []

    def finish(self, node: Any, outs: list[Any]) -> None:
        """Record the outputs: checked, compared with what the model declares, unknown dims made fresh."""
        n = len(outs)
        infos = self.infos
        for i, name in enumerate(node.output):
            if not name:
                continue
            item: Any = outs[i] if i < n else None
            value = None
            if item.__class__ is Slot:
                if item.seq is not None:
                    self.define(name, None, None, item.seq)
                    continue
                item, value = item.shape, item.value
            shape = None if item is None else self.checked(item, i)
            if name in infos or (shape is not None and None in shape):
                shape = self.reconcile(node, name, i, shape)
            self.define(name, shape, value)

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
        if value is None:
            self.values.pop(name, None)
        else:
            self.values[name] = value
        if seq is None:
            if self.sequences:
                self.sequences.pop(name, None)
        else:
            self.sequences[name] = seq

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
        """A rule's output shape checked: its rank, each dim simplified and in [0, 2**63)."""
        rank(len(shape))
        for d in shape:
            if d.__class__ is not int or not 0 <= d <= INT64_MAX:  # (int64 sizes are kept as they are)
                break
        else:
            return shape if shape.__class__ is tuple else tuple(shape)
        out = list(shape)
        simplify = self.d.simplify
        for i, d in enumerate(out):
            if d.__class__ is not int or not 0 <= d <= INT64_MAX:
                try:
                    d = out[i] = simplify(d)
                except DimOverflowError as exc:
                    raise DimOverflowError(f"dim {i} of output {output}: {exc}") from exc
                if d.__class__ is int and d < 0:
                    raise DimOverflowError(f"dim {i} of output {output} is {d}: a dimension is never negative")
        return tuple(out)

    # -- helpers ------------------------------------------------------------------------------------------

    def shape(self, node: Any, i: int) -> Shape:
        """The shape of input ``i``; None when it is absent or unknown."""
        inputs = node.input
        if i >= len(inputs):
            return None
        name = inputs[i]
        return self.shapes.get(name) if name else None

    def tensor(self, node: Any, i: int) -> Value | None:
        """The value of input ``i`` (of any rank), or None."""
        inputs = node.input
        if i >= len(inputs):
            return None
        name = inputs[i]
        return self.values.get(name) if name else None

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

    def has_value(self, node: Node) -> bool:
        """Whether an input of ``node`` has a value (a value rule needs one, except those of FROM_SHAPES)."""
        values = self.values
        for name in node.input:
            if name in values:
                return True
        return False

    def propagate_value(self, node: Any, fn: Callable[[Any, Any], Any] | None = None) -> None:
        """The values of ``node``'s outputs (small tensors) by the op's value rule, and the shapes they pin down."""
        fn = VALUE_RULES.get(node.op_type) if fn is None else fn
        if fn is None or not node.output:
            return
        out = fn(self, node)
        if out is None:
            return
        for name, v in zip(node.output, out if isinstance(out, list) else [out], strict=False):
            if name and v is not None and len(v.entries) <= MAX_VALUE_SIZE:
                for e in v.entries:
                    if e.__class__ is not int or not INT64_MIN <= e <= INT64_MAX:  # (int64s are kept as they are)
                        v = Value(tuple(self.entry(e, v.kind) for e in v.entries), v.scalar, v.kind, v.dims)
                        break
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
        if None in shape or not self.fresh.isdisjoint(shape):
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
