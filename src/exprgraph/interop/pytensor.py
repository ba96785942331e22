"""Convert between terms and PyTensor graphs (scalar and elementwise graphs, dot, matmul, sum, transpose).

``to_pytensor`` turns terms into PyTensor tensor variables (or scalar variables with
``scalar=True``), and an exprgraph ``FunctionGraph`` into a PyTensor ``FunctionGraph``;
``from_pytensor`` goes back, from variables or from a PyTensor ``FunctionGraph``. Both walk the
graph once, children first, with an explicit stack. Needs ``exprgraph[pytensor]``.

One table maps our ops to PyTensor's scalar ops; PyTensor's tensor ops are those scalar ops made
elementwise, so the same table serves both kinds of graph and both directions. PyTensor spells
broadcasting and vector products with explicit ``ExpandDims``/``Squeeze``; they are read back as
the implicit broadcasting and the ``dot``/``matmul`` of our terms. Dtypes: ``float64``,
``float32``, ``int64`` and ``bool`` map to themselves; other PyTensor dtypes widen (float16 to
float32, int8... to int64). Unknown static dimensions become symbolic dimensions ``<name>_dim<i>``.
``log1p``, ``expm1`` and ``softplus`` are PyTensor scalar ops; ``log_sigmoid`` goes out as
``-softplus(-x)`` and ``logaddexp`` as its stable formula (PyTensor's ``logaddexp`` is the naive
``log(exp(a) + exp(b))``), read back as those ops. ``logsumexp`` goes out as ``m + log(sum(exp(x - m)))`` with ``m``
the maximum (PyTensor's own ``logsumexp`` overflows until its rewrites run), equal within rounding;
it is not read back as one op.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

import numpy as np

from ..core import BOOL, FLOAT32, FLOAT64, INT64, Symbol, Term, const, get_op
from ..core.dtypes import is_float
from ..core.stdops import bool_casts, insert_axes
from ..core.tokens import RESERVED_NAMES
from ..core.walk import postorder
from ..errors import ConversionError
from ..graph import FunctionGraph
from ._optional import require

__all__ = ["to_pytensor", "from_pytensor", "SCALAR_OPS"]

#: our op -> the PyTensor scalar op (in ``pytensor.scalar``) computing it elementwise
SCALAR_OPS = {
    "add": "add",
    "sub": "sub",
    "mul": "mul",
    "truediv": "true_div",
    "floordiv": "int_div",
    "mod": "mod",
    "pow": "pow",
    "neg": "neg",
    "abs": "abs",
    "exp": "exp",
    "log": "log",
    "sqrt": "sqrt",
    "sin": "sin",
    "cos": "cos",
    "tan": "tan",
    "tanh": "tanh",
    "sigmoid": "sigmoid",
    "log1p": "log1p",
    "expm1": "expm1",
    "softplus": "softplus",
    "maximum": "scalar_maximum",
    "minimum": "scalar_minimum",
    "lt": "lt",
    "le": "le",
    "gt": "gt",
    "ge": "ge",
    "eq": "eq",
    "ne": "neq",
    "logical_and": "and_",
    "logical_or": "or_",
    "logical_not": "invert",
    "where": "switch",
}
#: ops that take bool operands (conditions), which PyTensor wants as bool
_LOGICAL = {"logical_and": (0, 1), "logical_or": (0, 1), "logical_not": (0,), "where": (0,)}
#: PyTensor ops that pass their input through unchanged
_PASS_THROUGH = {"TensorFromScalar", "ScalarFromTensor", "DeepCopyOp", "OutputGuard", "ViewOp"}


def _modules() -> tuple[Any, Any]:
    require("pytensor", "pytensor")
    import pytensor.scalar as ps
    import pytensor.tensor as pt

    return ps, pt


def _scalar_op(ps: Any, name: str) -> Any:
    return getattr(ps, SCALAR_OPS[name])


# -- to PyTensor ------------------------------------------------------------------------------------------


class _Writer:
    """Builds PyTensor variables for terms, children first."""

    def __init__(self, scalar: bool) -> None:
        self.ps, self.pt = _modules()
        self.scalar = scalar
        self.done: dict[Term, Any] = {}

    def symbol(self, node: Term) -> Any:
        name, dtype, shape = node.attr
        if self.scalar:
            var = self.ps.get_scalar_type(dtype)(name)
        else:
            static = tuple(d if d.__class__ is int else None for d in shape)
            var = self.pt.tensor(name=name, dtype=dtype, shape=static)
        var.tag.exprgraph_term = node  # lets from_pytensor give back this very symbol
        return var

    def constant(self, node: Term) -> Any:
        value = node.attr
        if hasattr(value, "array"):
            value = value.array
        if self.scalar:
            return self.ps.constant(value, dtype=node.dtype)
        return self.pt.constant(np.asarray(value, dtype=node.dtype))

    def cast(self, var: Any, dtype: str) -> Any:
        return self.ps.cast(var, dtype) if self.scalar else self.pt.cast(var, dtype)

    def apply(self, node: Term) -> Any:
        ps, pt = self.ps, self.pt
        name = node.op.name
        args = [self.done[a] for a in node.args]
        if node.op.counts_bools or node.op.float_result:
            # our arithmetic counts bools as integers (as float32 next to float32), float functions as floats
            casts = bool_casts(node)
            args = [v if c is None else self.cast(v, c) for v, c in zip(args, casts, strict=True)]
        for i in _LOGICAL.get(name, ()):
            if node.args[i].dtype != BOOL:
                args[i] = ps.neq(args[i], 0) if self.scalar else pt.neq(args[i], 0)  # truth value
        if name in _FORMULAS:
            return _FORMULAS[name](self, args)
        if name in SCALAR_OPS:
            op = _scalar_op(ps, name)
            if not self.scalar:
                op = pt.elemwise.Elemwise(op)
            if name in ("maximum", "minimum") and len(args) > 2:
                out = op(args[0], args[1])
                for v in args[2:]:
                    out = op(out, v)
                return out
            return op(*args)
        if self.scalar:
            raise ConversionError(f"to_pytensor(scalar=True): {name} is not a scalar op; leave scalar=False")
        if name == "dot":
            return pt.dot(*args)
        if name == "matmul":
            return pt.matmul(*args)
        if name == "sum":
            return pt.sum(args[0], axis=node.attr)
        if name == "logsumexp":
            return _logsumexp(pt, args[0], node)
        if name == "transpose":
            return pt.transpose(args[0], node.attr)
        raise ConversionError(f"to_pytensor: the op {name!r} has no PyTensor counterpart")

    def elementwise(self, name: str) -> Any:
        """PyTensor's scalar op ``name`` (of ``pytensor.scalar``), made elementwise unless scalar."""
        op = getattr(self.ps, name)
        return op if self.scalar else self.pt.elemwise.Elemwise(op)

    def convert(self, roots: list[Term]) -> list[Any]:
        for node in postorder(roots):
            if node.op.name == "symbol":
                self.done[node] = self.symbol(node)
            elif node.op.name == "const":
                self.done[node] = self.constant(node)
            else:
                if self.scalar and node.shape:
                    raise ConversionError(
                        f"to_pytensor(scalar=True) takes scalar terms; {node.op.name} has shape {node.shape}"
                    )
                self.done[node] = self.apply(node)
        return [self.done[r] for r in roots]


def _log_sigmoid(w: _Writer, args: list) -> Any:
    # log(sigmoid(x)) = -softplus(-x)
    neg, softplus = w.elementwise("neg"), w.elementwise("softplus")
    return neg(softplus(neg(args[0])))


def _logaddexp(w: _Writer, args: list) -> Any:
    # numpy's logaddexp: a + log(2) where a == b (infinities of one sign), else max(a, b) + softplus(-|a - b|)
    a, b = args
    e = w.elementwise
    ln2 = np.log(np.asarray(2.0, dtype=a.dtype))
    spread = e("softplus")(e("neg")(e("abs")(e("sub")(a, b))))
    return e("switch")(e("eq")(a, b), e("add")(a, ln2), e("add")(e("scalar_maximum")(a, b), spread))


def _logsumexp(pt: Any, x: Any, node: Term) -> Any:
    # m + log(sum(exp(x - m))) with m the maximum (0 where it is infinite): no overflow in any mode
    # (PyTensor's own logsumexp is the naive formula until its stabilizing rewrites run)
    ndim = node.args[0].ndim
    axes = tuple(range(ndim)) if node.attr is None else (node.attr,) if isinstance(node.attr, int) else node.attr
    axes = tuple(a % ndim for a in axes) if ndim else ()
    if not axes:
        return x
    m = pt.max(x, axis=axes, keepdims=True)
    m = pt.switch(pt.isinf(m), 0.0, m)
    out = pt.log(pt.sum(pt.exp(x - m), axis=axes, keepdims=True)) + m
    return pt.squeeze(out, axis=axes)


#: ops PyTensor has no scalar op for, written with its scalar ops
_FORMULAS = {"log_sigmoid": _log_sigmoid, "logaddexp": _logaddexp}


def to_pytensor(terms: Any, *, scalar: bool = False) -> Any:
    """PyTensor variables for terms (one for a term, a list for a list); a PyTensor FunctionGraph for ours.

    With ``scalar=True`` the graph is built from ``pytensor.scalar`` variables and ops (scalar
    terms only); otherwise from tensor variables and elementwise ops.
    """
    writer = _Writer(scalar)
    if isinstance(terms, FunctionGraph):
        from pytensor.graph.fg import FunctionGraph as PyTensorGraph

        outputs = writer.convert(list(terms.outputs) + list(terms.inputs))
        n = len(terms.outputs)
        return PyTensorGraph(inputs=outputs[n:], outputs=outputs[:n], clone=False)
    if terms.__class__ is Term:
        return writer.convert([terms])[0]
    return writer.convert(list(terms))


# -- from PyTensor ----------------------------------------------------------------------------------------


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
        self.scalar_classes = {type(_scalar_op(self.ps, n)): get_op(n) for n in SCALAR_OPS}

    def full(self, var: Any) -> Term:
        term, virtual = self.done[var]
        return insert_axes(term, virtual) if virtual else term

    def leaf(self, var: Any) -> Term:
        tag_term = getattr(var.tag, "exprgraph_term", None) if hasattr(var, "tag") else None
        if tag_term.__class__ is Term and tag_term.dtype == _our_dtype(var.type.dtype):
            return tag_term
        if hasattr(var, "data"):  # a constant
            data = np.asarray(var.data)
            dtypes = {BOOL: np.bool_, INT64: np.int64, FLOAT64: np.float64, FLOAT32: np.float32}
            return const(data.astype(dtypes[_our_dtype(str(data.dtype))]))
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
        for var in _pytensor_postorder(roots):
            if var.owner is None:
                self.done[var] = (self.leaf(var), ())
            else:
                self.done[var] = self.apply(var)
        return [self.full(r) for r in roots]

    def apply(self, var: Any) -> tuple[Term, tuple[int, ...]]:
        node = var.owner
        op = node.op
        kind = type(op).__name__
        if kind in _PASS_THROUGH:
            return self.done[node.inputs[0]]
        if kind == "Elemwise":
            return self.elemwise(op.scalar_op, var, var.type.ndim)
        if isinstance(op, self.ps.ScalarOp):
            return self.elemwise(op, var, 0)
        if kind == "DimShuffle":
            return self.dimshuffle(op, node.inputs[0])
        if kind == "Dot" or (kind == "Blockwise" and type(op.core_op).__name__ in ("Dot", "Matmul")):
            return self.product(get_op("dot" if kind == "Dot" else "matmul"), node.inputs)
        if kind == "Sum":
            axis = op.axis if op.axis is None or len(op.axis) != 1 else op.axis[0]
            return get_op("sum")(self.full(node.inputs[0]), axis=axis), ()
        raise ConversionError(f"from_pytensor: no exprgraph op for PyTensor's {op}")

    def elemwise(self, scalar_op: Any, var: Any, ndim: int) -> tuple[Term, tuple[int, ...]]:
        inputs = var.owner.inputs
        kind = type(scalar_op).__name__
        if kind == "Composite":
            return self.composite(scalar_op, var, ndim)
        if kind == "Cast":
            return self.cast(inputs[0], scalar_op.o_type.dtype, ndim)
        if kind == "Identity":
            return self.done[inputs[0]]
        op = self.scalar_classes.get(type(scalar_op))
        if op is None:
            raise ConversionError(f"from_pytensor: no exprgraph op for PyTensor's scalar op {scalar_op}")
        args = []
        for v in inputs:
            term, virtual = self.done[v]
            # leading inserted axes are what broadcasting adds anyway; others must be built
            args.append(term if virtual == tuple(range(len(virtual))) else self.full(v))
        if op.counts_bools:
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


def _pytensor_postorder(roots: Iterable[Any]) -> list[Any]:
    """Variables reachable from ``roots`` through their owners' inputs, inputs first (no recursion)."""
    seen: set[int] = set()
    order: list[Any] = []
    for root in roots:
        if id(root) in seen:
            continue
        seen.add(id(root))
        stack = [(root, 0)]
        while stack:
            var, i = stack[-1]
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
