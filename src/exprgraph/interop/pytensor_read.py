"""Read PyTensor graphs into terms: ``from_pytensor`` (the writer, ``to_pytensor``, is in :mod:`.pytensor`).

A PyTensor variable or ``FunctionGraph`` is walked once, children first, with an explicit stack;
its scalar and elementwise ops are read through the one table of :data:`.pytensor.SCALAR_OPS`;
subtensors with constant ints, slices and index arrays, the reductions (Sum, Prod, Max, Min over
axes), Join and Reshape through the vector ops of :mod:`exprgraph.core.ops_index`.
A variable that ``to_pytensor`` wrote, and whose PyTensor nodes are untouched, is read back as the
very term it computes; anything else op by op. The dtype rules (what widens, what is refused) are
in :mod:`.pytensor`'s docstring. Needs ``exprgraph[pytensor]``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

import numpy as np

from ..core import BOOL, FLOAT32, FLOAT64, INT64, Symbol, Term, const, get_op
from ..core.dtypes import is_float
from ..core.ops_einsum import einsum
from ..core.ops_index import broadcast_to, concat, getitem, reshape
from ..core.ops_range import arange
from ..core.stdops import insert_axes
from ..core.tokens import RESERVED_NAMES
from ..errors import ConversionError, ShapeError
from ..graph import FunctionGraph
from .pytensor import _PASS_THROUGH, SCALAR_OPS, _modules, _scalar_op
from .pytensor_read_sort import cut_topk, read_sort
from .registry import Converter, register_converter

__all__ = ["from_pytensor"]


def _our_dtype(dtype: str) -> str:
    if dtype == "bool":
        return BOOL
    if dtype.startswith(("int", "uint")):
        return INT64
    if dtype in ("float32", "float16"):
        return FLOAT32
    if dtype.startswith("float"):
        return FLOAT64
    raise ConversionError(f"from_pytensor: the dtype {dtype} has no exprgraph counterpart")


#: PyTensor dtypes that are exprgraph dtypes; the others (int8, uint64, float16...) widen on reading
_OURS = frozenset({BOOL, INT64, FLOAT64, FLOAT32})
_NUMPY = {BOOL: np.bool_, INT64: np.int64, FLOAT64: np.float64, FLOAT32: np.float32}


def _formula(var: Any) -> tuple[Term, tuple] | None:
    """``(term, operand variables)`` recorded by to_pytensor on ``var``, if the PyTensor nodes between
    them are untouched (a clone, a replacement or a rewrite makes new nodes or changes their inputs)."""
    info = getattr(var.tag, "exprgraph_formula", None) if hasattr(var, "tag") else None
    if info is None:
        return None
    term, operands, applies = info
    if var.owner is not applies[0][0] or var.type.dtype != term.dtype:
        return None
    for apply, inputs in applies:
        if len(apply.inputs) != len(inputs) or any(a is not b for a, b in zip(apply.inputs, inputs, strict=True)):
            return None
    return term, operands


class _Reader:
    """Reads PyTensor variables into terms.

    Each variable maps to ``(term, virtual)``: ``virtual`` lists the axes of the PyTensor variable
    that are length-1 axes PyTensor inserted (ExpandDims, the vector forms of Dot) and that the term
    leaves out. Elementwise ops broadcast leading ones implicitly and Squeeze removes them, so they
    never need to be built; any other use builds them (:meth:`full`).
    """

    def __init__(self) -> None:
        self.ps, self.pt = _modules()
        self.done: dict[Any, tuple[Term, tuple[int, ...]]] = {}
        self.names: dict[str, Any] = {}
        #: shape vectors read (Shape(x), cast or not) -> (x's dimensions, the dtype)
        self.shapes: dict[Any, tuple[tuple, str]] = {}
        self.scalar_classes = {type(_scalar_op(self.ps, n)): get_op(n) for n in SCALAR_OPS}

    def full(self, var: Any) -> Term:
        term, virtual = self.done[var]
        return _with_axes(term, virtual) if virtual else term

    def leaf(self, var: Any) -> Term:
        tag_term = getattr(var.tag, "exprgraph_term", None) if hasattr(var, "tag") else None
        if tag_term.__class__ is Term and tag_term.dtype == _our_dtype(var.type.dtype):
            return tag_term
        if hasattr(var, "data"):  # a constant
            data = np.asarray(var.data)
            if data.dtype.kind == "u" and data.size and int(data.max()) >= 2**63:
                raise ConversionError(
                    f"from_pytensor: the {data.dtype} constant {int(data.max())} does not fit in int64"
                )
            return const(data.astype(_NUMPY[_our_dtype(str(data.dtype))]))  # int8, float16...: exact
        if var.type.dtype == "uint64":
            raise ConversionError(f"from_pytensor: the uint64 input {var.name} holds values beyond int64")
        name = self.unique_name(var)
        shape = getattr(var.type, "shape", ())
        dims = tuple(d if d is not None else f"{name}_dim{i}" for i, d in enumerate(shape))
        return Symbol(name, _our_dtype(var.type.dtype), dims)

    def unique_name(self, var: Any) -> str:
        base = re.sub(r"\W", "_", var.name) if var.name else "input"
        if not base.isidentifier() or base in RESERVED_NAMES:
            base = "v_" + base
        name, k = base, 0
        while name in self.names and self.names[name] is not var:
            k += 1
            name = f"{base}_{k}"
        self.names[name] = var
        return name

    def convert(self, roots: list[Any]) -> list[Term]:
        for var in _pytensor_postorder(roots, _children):
            formula = _formula(var)
            if var.owner is None:
                self.done[var] = (self.leaf(var), ())
            elif formula is not None and all(
                self.full(v) is a for v, a in zip(formula[1], formula[0].args, strict=True)
            ):
                self.done[var] = (formula[0], ())  # what to_pytensor wrote, read back as that term
            elif self.read_shape(var):
                continue  # a shape vector: only its entries (Subtensor{i}) are read, as dimensions
            else:
                if formula is not None:  # operands read differently: read the nodes in between
                    self.convert(list(var.owner.inputs))
                self.done[var] = self.apply(var)
        return [self.full(r) for r in roots]

    def apply(self, var: Any) -> tuple[Term, tuple[int, ...]]:
        node = var.owner
        op = node.op
        kind = type(op).__name__
        if kind in _PASS_THROUGH:
            return self.done[node.inputs[0]]
        if kind == "DimShuffle":
            return self.dimshuffle(op, node.inputs[0])
        if any(v in self.shapes for v in node.inputs) and kind != "Subtensor":
            raise ConversionError(
                f"from_pytensor: PyTensor's {op} computes with a shape vector; only its entries are read"
            )
        if kind == "Elemwise":
            out = self.elemwise(op.scalar_op, var, var.type.ndim)
        elif isinstance(op, self.ps.ScalarOp):
            out = self.elemwise(op, var, 0)
        elif kind == "Dot" or (kind == "Blockwise" and type(op.core_op).__name__ in ("Dot", "Matmul")):
            out = self.product(get_op("dot" if kind == "Dot" else "matmul"), node.inputs)
        elif kind in ("Sum", "Prod", "Max", "Min", "CAReduce") and type(op.scalar_op).__name__ in _REDUCE:
            axis = op.axis if op.axis is None or len(op.axis) != 1 else op.axis[0]
            out = get_op(_REDUCE[type(op.scalar_op).__name__])(self.full(node.inputs[0]), axis=axis), ()
        elif kind in ("Subtensor", "AdvancedSubtensor", "AdvancedSubtensor1"):
            out = self.subtensor(op, node), ()
        elif kind == "Join":  # the axis: a property of the op (PyTensor 3.3), or its first input (before)
            if isinstance(getattr(op, "axis", None), int):
                axis, parts = op.axis, node.inputs
            else:
                axis, parts = self.constant(node.inputs[0], op), node.inputs[1:]
            out = concat([self.full(v) for v in parts], axis=axis), ()
        elif kind == "Reshape":
            out = reshape(self.full(node.inputs[0]), self.constant(node.inputs[1], op)), ()
        elif kind == "Alloc":  # pt.zeros, pt.broadcast_to: the value broadcast to a constant shape
            shape = tuple(self.constant(v, op) for v in node.inputs[1:])
            out = broadcast_to(self.full(node.inputs[0]), shape), ()
        elif kind in ("IncSubtensor", "AdvancedIncSubtensor", "AdvancedIncSubtensor1"):
            out = self.inc_subtensor(op, node), ()
        elif kind == "Einsum":  # pt.einsum: its subscripts (with the output named) are our spec
            out = einsum(op.subscripts, *(self.full(v) for v in node.inputs)), ()
        elif kind == "ARange":  # pt.arange: constant start and step, a term for the stop
            ends = (self.constant(node.inputs[0], op), self.constant(node.inputs[2], op))
            out = arange(ends[0], self.full(node.inputs[1]), ends[1]), ()
        elif kind in ("ArgSortOp", "SortOp"):  # pt.argsort, pt.sort: the top-k of all entries, smallest first
            if len(node.inputs) > 1:  # PyTensor 3.0: the axis is an input (None: flattened)
                axis = None if _is_none(node.inputs[1]) else self.constant(node.inputs[1], op)
            else:  # PyTensor 3.3: a property of the op (a flattening reshape comes before it)
                axis = op.axis
            out = read_sort(self.full(node.inputs[0]), axis, kind == "ArgSortOp", op), ()
        elif kind in ("Softmax", "LogSoftmax"):
            out = _softmax(self.full(node.inputs[0]), op.axis, kind == "LogSoftmax"), ()
        else:
            raise ConversionError(f"from_pytensor: no exprgraph op for PyTensor's {op}")
        _check_dtype(var, out[0], op)
        return out

    def read_shape(self, var: Any) -> bool:
        """Record ``var`` if it is a shape vector (``Shape(x)``, maybe cast): its dimensions and dtype."""
        owner = var.owner
        kind = type(owner.op).__name__
        if kind == "Shape":
            self.shapes[var] = (tuple(self.full(owner.inputs[0]).shape), INT64)
            return True
        scalar_op: Any = getattr(owner.op, "scalar_op", None)
        if type(scalar_op).__name__ == "Cast" and owner.inputs[0] in self.shapes:
            self.shapes[var] = (self.shapes[owner.inputs[0]][0], _our_dtype(scalar_op.o_type.dtype))
            return True
        return False

    def subtensor(self, op: Any, node: Any) -> Term:
        """``x[key]``: constant ints, slices and index arrays through ``[]``; int64 terms, one per axis of a
        tensor symbol, as ``access``; a shape's entry as the dimension."""
        source = node.inputs[0]
        if source in self.shapes:  # mean's count: a dimension of a tensor, int or symbolic
            dims, dtype = self.shapes[source]
            index = self.full(node.inputs[1])
            if not index.is_const:
                raise ConversionError(f"from_pytensor: {op} reads a shape at a computed position")
            dim = dims[int(index.value)]
            dim = const(dim) if dim.__class__ is int else dim
            return dim if dtype == INT64 else dim * const(1.0, dtype)
        key = self.index_key(op, node)
        tensor = self.full(source)
        cut = cut_topk(tensor, key)  # argsort(x)[:k]: the top-k of k entries; x[argsort(x)[:k]] its values
        if cut is not None:
            return cut
        if (
            all(k.__class__ is Term and not k.shape for k in key)
            and tensor.op.name == "symbol"
            and len(key) == tensor.ndim
        ):
            return get_op("access")(tensor, *key)  # int64 terms: one element of a tensor symbol
        if any(k.__class__ is Term for k in key):
            raise ConversionError(
                f"from_pytensor: PyTensor's {op} indexes at a computed position; exprgraph slices and gathers at"
                " constant ones (access reads one element of a tensor symbol, an index per axis)"
            )
        try:
            return getitem(tensor, key)
        except (IndexError, ShapeError) as exc:
            raise ConversionError(f"from_pytensor: PyTensor's {op}: {exc}") from None

    def inc_subtensor(self, op: Any, node: Any) -> Term:
        """``inc_subtensor(x[key], y)`` with ``key`` cutting one axis: ``x + scatter_add(y, positions)``."""
        if getattr(op, "set_instead_of_inc", False):
            raise ConversionError(f"from_pytensor: PyTensor's {op} sets entries; exprgraph adds them (scatter_add)")
        base, update = self.full(node.inputs[0]), self.full(node.inputs[1])
        key = self.index_key(op, node, 2)
        cut = [i for i, k in enumerate(key) if not (isinstance(k, slice) and k == slice(None))]
        if len(cut) != 1 or any(k.__class__ is Term for k in key):
            raise ConversionError(f"from_pytensor: PyTensor's {op} adds at constant positions of one axis only")
        (axis,) = cut
        n = base.shape[axis]
        if n.__class__ is not int:
            raise ConversionError(f"from_pytensor: PyTensor's {op} adds along an axis of unknown length")
        where = np.arange(n)[key[axis]] if isinstance(key[axis], slice) else np.asarray(key[axis]) % n
        target = getitem(base, key).shape
        update = update if tuple(update.shape) == tuple(target) else broadcast_to(update, target)
        return base + get_op("scatter_add")(update, const(where.astype(np.int64)), spec=(axis, n))

    def index_key(self, op: Any, node: Any, first: int = 1) -> tuple:
        """The index of a (advanced) subtensor: ints, slices of ints, arrays, or int64 terms where computed."""
        inputs = iter(node.inputs[first:])
        one = type(op).__name__ in ("AdvancedSubtensor1", "AdvancedIncSubtensor1")
        entries = [0] if one else list(op.idx_list)

        def value(entry: Any, bound: bool) -> Any:
            if entry is None:
                return None
            term = self.full(next(inputs))
            if not term.is_const:
                if bound:
                    raise ConversionError(f"from_pytensor: PyTensor's {op} slices at a computed position")
                return term
            data = np.asarray(term.attr.array if hasattr(term.attr, "array") else term.attr)
            return int(data) if not data.ndim else data

        key = []
        for e in entries:
            if isinstance(e, slice):
                key.append(slice(value(e.start, True), value(e.stop, True), value(e.step, True)))
            else:
                key.append(value(e, False))
        return tuple(key)

    def constant(self, var: Any, op: Any) -> Any:
        """The value of a constant operand (an axis, a shape) as an int or a tuple of ints."""
        term = self.full(var)
        if not term.is_const:
            raise ConversionError(
                f"from_pytensor: PyTensor's {op} takes a computed axis or shape; exprgraph takes constants"
            )
        data = np.asarray(term.attr.array if hasattr(term.attr, "array") else term.attr)
        return int(data) if not data.ndim else tuple(int(v) for v in data)

    def elemwise(self, scalar_op: Any, var: Any, ndim: int) -> tuple[Term, tuple[int, ...]]:
        inputs = var.owner.inputs
        kind = type(scalar_op).__name__
        if kind == "Composite":
            return self.composite(scalar_op, var, ndim)
        if kind == "Cast":
            return self.cast(inputs[0], scalar_op.o_type.dtype, ndim)
        if kind == "Identity":
            return self.done[inputs[0]]
        op: Any = self.scalar_classes.get(type(scalar_op), _SPELLED.get(kind))
        if op is None:
            raise ConversionError(f"from_pytensor: no exprgraph op for PyTensor's scalar op {scalar_op}")
        args = []
        for v in inputs:
            term, virtual = self.done[v]
            # leading inserted axes are what broadcasting adds anyway; others must be built
            args.append(term if virtual == tuple(range(len(virtual))) else self.full(v))
        if getattr(op, "counts_bools", False):
            args = [self.uncast(v, a) for v, a in zip(inputs, args, strict=True)]
        term = op(*args)
        return term, tuple(range(ndim - term.ndim))

    def composite(self, scalar_op: Any, var: Any, ndim: int) -> tuple[Term, tuple[int, ...]]:
        """A fused elementwise op (PyTensor's Composite): its inner scalar graph, on our operands."""
        args = []
        for v in var.owner.inputs:
            term, virtual = self.done[v]
            args.append(term if virtual == tuple(range(len(virtual))) else self.full(v))
        inner = scalar_op.fgraph
        for v, term in zip(inner.inputs, args, strict=True):
            self.done[v] = (term, ())
        for v in _pytensor_postorder(inner.outputs):
            if v not in self.done:
                self.done[v] = (self.leaf(v), ()) if v.owner is None else self.apply(v)
        term = self.done[inner.outputs[var.owner.outputs.index(var)]][0]
        return term, tuple(range(ndim - term.ndim))

    def uncast(self, var: Any, term: Term) -> Term:
        """A bool cast to int64 for arithmetic is the bool itself: our arithmetic counts bools as ints."""
        owner = var.owner
        if owner is not None and type(owner.op).__name__ in ("Elemwise", "Cast"):
            scalar_op = getattr(owner.op, "scalar_op", owner.op)
            if type(scalar_op).__name__ == "Cast" and scalar_op.o_type.dtype.startswith("int"):
                inner, virtual = self.done[owner.inputs[0]]
                if inner.dtype == BOOL and virtual == tuple(range(len(virtual))):
                    return inner
        return term

    def cast(self, var: Any, dtype: str, ndim: int) -> tuple[Term, tuple[int, ...]]:
        term, virtual = self.done[var]
        src, dst = term.dtype, _our_dtype(dtype)
        if dtype not in _OURS and not np.can_cast(var.type.dtype, dtype, "safe"):
            # int64 -> int8 wraps around, float32 -> float16 rounds: no exprgraph op does that
            raise ConversionError(f"from_pytensor: a cast of {var.type.dtype} to {dtype} changes values")
        if src == dst:
            out = term
        elif dst == BOOL:
            out = get_op("ne")(term, const(0.0 if src == FLOAT64 else 0))  # truth value
        elif src == BOOL:
            out = get_op("where")(term, const(1, dst), const(0, dst))
        elif dst == FLOAT64:
            out = term * const(1.0)  # int64 or float32 -> float64: exact (int64 up to 2**53)
        else:
            what = "rounding" if is_float(dst) else "truncation"
            raise ConversionError(f"from_pytensor: a cast of {src} to {dtype} ({what}) has no exprgraph op")
        return out, virtual

    def dimshuffle(self, op: Any, source: Any) -> tuple[Term, tuple[int, ...]]:
        term, virtual = self.done[source]
        order = tuple(op.new_order)
        in_ndim = len(virtual) + term.ndim
        real = [i for i in range(in_ndim) if i not in virtual]  # input axis -> its axis in term
        kept = [i for i in order if i != "x"]
        dropped = [real.index(i) for i in range(in_ndim) if i not in kept and i in real]
        if dropped:  # a dropped axis has length 1: summing over it removes it
            if all(d.__class__ is int for d in term.shape):
                term = reshape(term, tuple(d for i, d in enumerate(term.shape) if i not in dropped))
            else:
                term = get_op("sum")(term, axis=tuple(dropped) if len(dropped) < term.ndim else None)
            real = [i for i in real if i in kept]
        perm = [real.index(i) for i in kept if i in real]
        if perm != sorted(perm):
            reverse = perm == list(range(len(perm) - 1, -1, -1)) and len(perm) == 2
            term = get_op("transpose")(term, axes=None if reverse else tuple(perm))
        new_virtual = tuple(j for j, i in enumerate(order) if i == "x" or i in virtual)
        return term, new_virtual

    def product(self, op: Any, inputs: list) -> tuple[Term, tuple[int, ...]]:
        (a, va), (b, vb) = self.done[inputs[0]], self.done[inputs[1]]
        if inputs[0].type.ndim == 2 and inputs[1].type.ndim == 2 and va in ((), (0,)) and vb in ((), (1,)):
            # a row vector (x[None, :]) times a column vector (y[:, None]): the vector products
            return op(a, b), tuple(i for i, v in ((0, va), (1, vb)) if v)
        return op(self.full(inputs[0]), self.full(inputs[1])), ()


def _with_axes(term: Term, positions: tuple[int, ...]) -> Term:
    """``term`` with length-1 axes at ``positions`` of the result: a reshape (symbolic shapes: times ones)."""
    if not all(d.__class__ is int for d in term.shape):
        return insert_axes(term, positions)
    rest = iter(term.shape)
    return reshape(term, tuple(1 if i in positions else next(rest) for i in range(term.ndim + len(positions))))


def _reciprocal(a: Term) -> Term:
    return const(1.0, a.dtype if is_float(a.dtype) else FLOAT64) / a  # 1/x (float32 stays float32)


def _clip(x: Term, low: Term, high: Term) -> Term:
    # PyTensor's clip: low where x < low, else high where x > high, else x (nan stays nan)
    where = get_op("where")
    return where(get_op("lt")(x, low), low, where(get_op("gt")(x, high), high, x))


def _softmax(x: Term, axis: Any, log: bool) -> Term:
    # softmax(x) = exp(x - logsumexp(x)) over the axes (log_softmax: without the exp), the sums kept as axes
    axes = None if axis is None else tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    lse = get_op("logsumexp")(x, axis=axes)
    if axes is not None and len(axes) < x.ndim:
        lse = _with_axes(lse, tuple(a % x.ndim for a in axes))
    shifted = x - lse
    return shifted if log else get_op("exp")(shifted)


#: PyTensor reductions (their scalar op) -> ours
_REDUCE = {"Add": "sum", "Mul": "prod", "Maximum": "amax", "Minimum": "amin"}

#: scalar ops PyTensor's rewrites bring in (compiled graphs), and clip, spelled with ours
_SPELLED = {
    "Reciprocal": _reciprocal,
    "Sqr": lambda a: a * a,
    "Clip": _clip,
    "IsInf": lambda a: get_op("eq")(get_op("abs")(a), const(np.inf)),  # |x| == inf (never for an int)
    "IsNan": lambda a: get_op("ne")(a, a),  # nan is the one value unequal to itself
}


def _check_dtype(var: Any, term: Term, op: Any) -> None:
    """Refuse PyTensor arithmetic whose dtype or promotion is not ours (int8 wraps at 2**7, uint64
    at 2**64, float16 rounds; numpy's int8 + float32 is float32, ours float64)."""
    dtype = var.type.dtype
    if dtype not in _OURS and term.op.name not in _SELECTIONS:
        raise ConversionError(
            f"from_pytensor: PyTensor's {op} computes in {dtype}, which exprgraph does not (its {term.dtype}"
            " neither wraps around nor rounds there): cast the operands to an exprgraph dtype first"
        )
    if term.dtype != _our_dtype(dtype):
        raise ConversionError(
            f"from_pytensor: PyTensor's {op} gives {dtype} where the same op on exprgraph's dtypes gives"
            f" {term.dtype}: cast the operands to one dtype first"
        )


#: ops whose value is one of their operands': exact in any dtype
_SELECTIONS = frozenset({"maximum", "minimum", "where", "symbol", "const"})


def _children(var: Any) -> tuple:
    """What a variable is computed from: its owner's inputs, or the operands to_pytensor recorded."""
    formula = _formula(var)
    if formula is not None:
        return formula[1]
    return tuple(var.owner.inputs) if var.owner is not None else ()


def _pytensor_postorder(roots: Iterable[Any], children: Any = None) -> list[Any]:
    """Variables reachable from ``roots`` through their owners' inputs (or ``children``), inputs first."""
    seen: set[int] = set()
    order: list[Any] = []
    for root in roots:
        if id(root) in seen:
            continue
        seen.add(id(root))
        stack = [(root, 0)]
        while stack:
            var, i = stack[-1]
            if children is not None:
                inputs = children(var)
            else:
                inputs = var.owner.inputs if var.owner is not None else ()
            while i < len(inputs) and id(inputs[i]) in seen:
                i += 1
            if i < len(inputs):
                stack[-1] = (var, i + 1)
                seen.add(id(inputs[i]))
                stack.append((inputs[i], 0))
            else:
                stack.pop()
                order.append(var)
    return order


def from_pytensor(graph: Any) -> Any:
    """Terms for PyTensor variables (a term for one, a list for a list); our FunctionGraph for theirs."""
    reader = _Reader()
    if hasattr(graph, "outputs") and hasattr(graph, "inputs") and not hasattr(graph, "owner"):
        outputs = reader.convert(list(graph.outputs) + list(graph.inputs))
        n = len(graph.outputs)
        inputs = [t for t in outputs[n:] if t.op.name == "symbol"]
        return FunctionGraph(inputs, outputs[:n])
    if isinstance(graph, (list, tuple)):
        return reader.convert(list(graph))
    return reader.convert([graph])[0]


register_converter(Converter("pytensor", "from", from_pytensor, "pytensor"))


def _is_none(var: Any) -> bool:
    """Whether a PyTensor input is the constant None (``axis=None``)."""
    return getattr(var, "data", 0) is None or type(var.type).__name__ == "NoneTypeT"
