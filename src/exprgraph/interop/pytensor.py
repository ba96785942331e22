"""Convert between terms and PyTensor graphs (elementwise graphs, reductions, products, element access).

``to_pytensor`` turns terms into PyTensor tensor variables (or scalar variables with
``scalar=True``), and an exprgraph ``FunctionGraph`` into a PyTensor ``FunctionGraph``;
``from_pytensor`` goes back, from variables or from a PyTensor ``FunctionGraph``. Both walk the
graph once, children first, with an explicit stack. Needs ``exprgraph[pytensor]``.

One table maps our ops to PyTensor's scalar ops; PyTensor's tensor ops are those scalar ops made
elementwise, so the same table serves both kinds of graph and both directions. PyTensor spells
broadcasting and vector products with explicit ``ExpandDims``/``Squeeze``; they are read back as
the implicit broadcasting and the ``dot``/``matmul`` of our terms. Unknown static dimensions
become symbolic dimensions ``<name>_dim<i>``. Ops PyTensor lacks (``fmod``, ``truncdiv``,
``ceil_div``, ``broadcast_dim``, ``hypot``, ``identity``) go out as their equivalent terms of
:mod:`.equivalents`; ``access(T, i, j)`` is ``T[i, j]``; docs/interop.md has the full table.

Values are evaluate's, in PyTensor's Python code and its compiled C code alike, where PyTensor's op
alone would differ: an int64 meeting a float32 is cast to float64 first (C would compute in
float32), as is the int64 of a float ``//`` or ``%`` (C negates -2**63), an integer ``n // 0`` and
``n % 0`` are 0 (C raises) and ``-2**63 // -1`` is -2**63 (C traps: SIGFPE), int64 ``maximum`` and
``minimum`` are comparisons (C's go through a double), ``a**0.5`` is ``sqrt(a)`` and a float to an
odd int64 power keeps its sign. ``log1p``, ``expm1`` and ``softplus`` are PyTensor scalar ops (its
sigmoid and softplus are within an ulp of ours); ``log_sigmoid`` goes out as ``-softplus(-x)`` and
``logaddexp`` as its stable formula (PyTensor's ``logaddexp`` is the naive ``log(exp(a) +
exp(b))``), ``logsumexp`` as ``m + log(sum(exp(x - m)))`` with ``m`` the maximum (PyTensor's own
overflows until its rewrites run), equal within rounding. Each variable ``to_pytensor`` writes
records the term it computes, so ``from_pytensor`` reads an untouched graph back as the very same
terms; a rewritten or cloned one is read op by op (the formulas as the ops they are made of). Float
``//`` is PyTensor's: its C code computes ``floor(a / b)`` (``inf // 1`` is inf, ``1 // 0.1`` is
10.0; numpy's: nan and 9.0), as docs/interop.md says.

Dtypes: ``float64``, ``float32``, ``int64`` and ``bool`` map to themselves. Inputs and constants
of PyTensor's other dtypes widen exactly (int8... uint32 to int64, float16 to float32; a uint64
constant above 2**63 - 1 and a uint64 input raise :class:`~exprgraph.errors.ConversionError`), but
arithmetic in them does not: an op computing in int8 (which wraps at 2**7), uint64 or float16, a
cast that wraps or rounds, and an op whose numpy dtype differs from ours (int8 + float32 is
float32) raise ``ConversionError``. Selections (``maximum``, ``minimum``, ``switch``) keep values
in any dtype and are read.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..core import BOOL, FLOAT32, FLOAT64, INT64, Term
from ..core.dtypes import is_float, promote
from ..core.ops_einsum import spec_text
from ..core.ops_index import slice_of
from ..core.stdops import bool_casts
from ..core.walk import postorder
from ..errors import ConversionError
from ..graph import FunctionGraph
from ._optional import require
from .equivalents import equivalent
from .registry import Converter, register_converter

__all__ = ["to_pytensor", "SCALAR_OPS"]

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
    "asin": "arcsin",
    "acos": "arccos",
    "atan": "arctan",
    "atan2": "arctan2",
    "sinh": "sinh",
    "cosh": "cosh",
    "asinh": "arcsinh",
    "acosh": "arccosh",
    "atanh": "arctanh",
    "log2": "log2",
    "log10": "log10",
    "erf": "erf",
    "erfc": "erfc",
    "floor": "floor",
    "ceil": "ceil",
    "trunc": "trunc",
    "sign": "sign",
}
#: ops written as an equivalent term of other ops (see :mod:`.equivalents`)
_EQUIVALENT = frozenset({"fmod", "truncdiv", "ceil_div", "broadcast_dim", "hypot", "identity"})
#: rounding functions, which leave integers as they are (PyTensor's would make them floats)
_ROUNDING = frozenset({"floor", "ceil", "trunc"})
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


def slice_key(node: Term) -> tuple:
    """The subscript of a ``slice_axis`` node: ``count`` entries from ``start`` by ``step`` on its axis."""
    axis, start, count, step = node.attr
    return (slice(None),) * (axis % node.ndim) + (slice_of(start, count, step),)


def _scatter_add(w: Any, node: Term, args: list, dtypes: list[str]) -> Any:
    # scatter_add(u, idx) = zeros with u added at idx along the axis (inc_subtensor adds repeated indices)
    axis, _ = node.attr
    zeros = w.pt.zeros(tuple(node.shape), dtype=node.dtype)
    return w.pt.inc_subtensor(zeros[(slice(None),) * axis + (args[1],)], args[0])


#: the vector ops: ``(writer, node, operands, their dtypes) -> PyTensor variable``
_VECTOR: dict[str, Callable[[Any, Term, list, list[str]], Any]] = {
    "amax": lambda w, node, args, _: w.pt.max(args[0], axis=node.attr),
    "amin": lambda w, node, args, _: w.pt.min(args[0], axis=node.attr),
    "prod": lambda w, node, args, _: w.pt.prod(args[0], axis=node.attr),
    "mean": lambda w, node, args, _: w.pt.mean(args[0], axis=node.attr),
    "slice_axis": lambda w, node, args, _: args[0][slice_key(node)],
    "take": lambda w, node, args, _: w.pt.take(args[0], args[1], axis=node.attr or 0),
    "scatter_add": _scatter_add,
    "concat": lambda w, node, args, dtypes: w.pt.concatenate(w.widen(args, dtypes), axis=node.attr or 0),
    "reshape": lambda w, node, args, _: args[0].reshape(node.attr),
    "broadcast_to": lambda w, node, args, _: w.pt.broadcast_to(args[0], node.attr),
}


def _topk_indices(w: Any, node: Term, args: list, dtypes: list[str]) -> Any:
    # a stable argsort of an order-reversing key for the largest (-x for floats, ~x = -x - 1 for
    # ints: equal entries stay equal, the lower index first), cut at k along the axis
    k, axis, largest = node.attr
    x = w.cast(args[0], "int64") if dtypes[0] == BOOL else args[0]
    key = (-x if is_float(dtypes[0]) else -x - 1) if largest else x
    order = w.pt.argsort(key, axis=axis, kind="stable")
    return order[(Ellipsis, slice(0, k)) + (slice(None),) * (-1 - axis)].astype("int64")


def _scatter_along(w: Any, node: Term, args: list, dtypes: list[str]) -> Any:
    # zeros with each entry of u added at its position along the axis (an index grid on the other axes)
    axis = node.ndim + node.attr[0]
    if not all(d.__class__ is int for d in node.shape):
        raise ConversionError("to_pytensor: scatter_along needs known (int) dimensions")
    grid = [w.pt.arange(d).reshape([-1 if i == a else 1 for i in range(node.ndim)]) for a, d in enumerate(node.shape)]
    grid[axis] = args[1]
    zeros = w.pt.zeros(tuple(node.shape), dtype=node.dtype)
    return w.pt.inc_subtensor(zeros[tuple(grid)], w.cast(args[0], node.dtype))


_VECTOR.update(
    einsum=lambda w, node, args, dtypes: w.pt.einsum(spec_text(node.attr), *w.widen(args, dtypes)),
    topk_indices=_topk_indices,
    take_along=lambda w, node, args, _: w.pt.take_along_axis(args[0], args[1], axis=node.attr),
    scatter_along=_scatter_along,
    arange=lambda w, node, args, _: w.pt.arange(node.attr[0], args[0], node.attr[1], dtype="int64"),
)


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

    def constant(self, value: Any, dtype: str) -> Any:
        if hasattr(value, "array"):
            value = value.array
        if self.scalar:
            return self.ps.constant(value, dtype=dtype)
        return self.pt.constant(np.asarray(value, dtype=dtype))

    def cast(self, var: Any, dtype: str) -> Any:
        return self.ps.cast(var, dtype) if self.scalar else self.pt.cast(var, dtype)

    def apply(self, node: Term) -> Any:
        ps, pt = self.ps, self.pt
        name = node.op.name
        args = [self.done[a] for a in node.args]
        dtypes = [a.dtype for a in node.args]
        if node.op.counts_bools or node.op.float_result:
            # our arithmetic counts bools as integers (as float32 next to float32), float functions as floats
            casts = bool_casts(node)
            args = [v if c is None else self.cast(v, c) for v, c in zip(args, casts, strict=True)]
            dtypes = [d if c is None else c for d, c in zip(dtypes, casts, strict=True)]
        for i in _LOGICAL.get(name, ()):
            if node.args[i].dtype != BOOL:
                args[i] = ps.neq(args[i], 0) if self.scalar else pt.neq(args[i], 0)  # truth value
                dtypes[i] = BOOL
        if name in _FORMULAS:
            return _FORMULAS[name](self, node, args, dtypes)
        if name in _ROUNDING and not is_float(dtypes[0]):
            return self.elementwise("identity")(args[0])  # an integer is its own floor (a new variable: its record)
        if name == "sign" and is_float(dtypes[0]):  # numpy's sign: +0.0 for both zeros (C's keeps -0.0)
            e = self.elementwise
            return e("switch")(
                e("eq")(args[0], self.constant(0.0, dtypes[0])), self.constant(0.0, dtypes[0]), e("sign")(args[0])
            )
        if name in SCALAR_OPS:
            return self.fold(name, args, dtypes)
        if self.scalar:
            raise ConversionError(f"to_pytensor(scalar=True): {name} is not a scalar op; leave scalar=False")
        if name in ("dot", "matmul"):
            args = self.widen(args, dtypes)
            return pt.dot(*args) if name == "dot" else pt.matmul(*args)
        if name == "sum":
            return pt.sum(args[0], axis=node.attr)
        if name == "logsumexp":
            return _logsumexp(pt, args[0], node)
        if name == "transpose":
            return pt.transpose(args[0], node.attr)
        if name == "access":  # T[i, j]: PyTensor's Subtensor (a one-element tensor read as a scalar)
            return args[0].reshape((-1,))[0] if len(args) == 1 else args[0][tuple(args[1:])]
        if name in _VECTOR:
            return _VECTOR[name](self, node, args, dtypes)
        raise ConversionError(f"to_pytensor: the op {name!r} has no PyTensor counterpart")

    def widen(self, args: list, dtypes: list[str], name: str = "") -> list:
        """Operands cast to float64 where numpy converts them and PyTensor's C code would not: int64
        with float32 (C computes in float32), and the int64 of a float // or % (C negates -2**63)."""
        if INT64 not in dtypes or (
            FLOAT32 not in dtypes and (name not in ("floordiv", "mod") or FLOAT64 not in dtypes)
        ):
            return args
        return [v if d in (BOOL, FLOAT64) else self.cast(v, FLOAT64) for v, d in zip(args, dtypes, strict=True)]

    def fold(self, name: str, args: list, dtypes: list[str]) -> Any:
        """The elementwise op ``name`` on ``args``, a left fold of binary steps for more than two."""
        if len(args) == 1:
            return self.elementwise(SCALAR_OPS[name])(args[0])
        if name == "where":
            return self.elementwise("switch")(args[0], *self.widen(args[1:], dtypes[1:]))
        out, have = args[0], dtypes[0]
        for v, d in zip(args[1:], dtypes[1:], strict=True):
            if len(args) > 2 or name in _GUARDED:  # a step at a time (one op of all: C promotes as it likes)
                pair = self.widen([out, v], [have, d], name)
                if name == "pow":
                    pair[1] = v  # an int64 exponent stays one: its parity decides the sign
                out = _GUARDED.get(name, _plain)(self, name, pair, [have, d])
            else:
                out = self.elementwise(SCALAR_OPS[name])(*self.widen([out, v], [have, d]))
            have = promote(have, d)
        return out

    def elementwise(self, name: str) -> Any:
        """PyTensor's scalar op ``name`` (of ``pytensor.scalar``), made elementwise unless scalar."""
        op = getattr(self.ps, name)
        return op if self.scalar else self.pt.elemwise.Elemwise(op)

    def convert(self, roots: list[Term]) -> list[Any]:
        for node in postorder(roots):
            if node in self.done:
                continue  # converted before (an operand of an equivalent term)
            if node.op.name == "symbol":
                self.done[node] = self.symbol(node)
            elif node.op.name == "const":
                self.done[node] = self.constant(node.attr, node.dtype)
            elif node.op.name in _EQUIVALENT:
                # an op PyTensor lacks: the term of other ops with its values, converted in its place
                var = self.done[node] = self.convert([equivalent(node)])[0]
                _tag_formula(var, node, [self.done[a] for a in node.args])  # read back as the op itself
            else:
                if self.scalar and node.shape:
                    raise ConversionError(
                        f"to_pytensor(scalar=True) takes scalar terms; {node.op.name} has shape {node.shape}"
                    )
                var = self.done[node] = self.apply(node)
                _tag_formula(var, node, [self.done[a] for a in node.args])
        return [self.done[r] for r in roots]


def _tag_formula(var: Any, node: Term, operands: list) -> None:
    """Record on ``var`` the term it computes, its operands and every PyTensor node in between (with
    their inputs): from_pytensor gives back that very term while those nodes are untouched."""
    if any(var is v for v in operands) or var.owner is None:
        return  # the op passed an operand through (logsumexp over no axis)
    stop = {id(v) for v in operands}
    applies, seen, stack = [], set(), [var]
    while stack:
        owner = stack.pop().owner
        if owner is None or id(owner) in seen:
            continue
        seen.add(id(owner))
        applies.append((owner, tuple(owner.inputs)))
        stack.extend(v for v in owner.inputs if id(v) not in stop)
    var.tag.exprgraph_formula = (node, tuple(operands), tuple(applies))


def _plain(w: _Writer, name: str, args: list, dtypes: list[str]) -> Any:
    return w.elementwise(SCALAR_OPS[name])(*args)


def _int_division(w: _Writer, name: str, args: list, dtypes: list[str]) -> Any:
    """int64 ``x // y`` and ``x % y`` as evaluate computes them: 0 and 0 for ``y == 0``, ``-x`` (wrapping
    at -2**63) and 0 for ``y == -1``. PyTensor's C code raises at 0, kills the process with SIGFPE at
    ``-2**63 // -1`` and negates ``x``, which wraps at -2**63: none of those reach it."""
    if promote(*dtypes) != INT64:
        return _plain(w, name, args, dtypes)
    e, c = w.elementwise, (lambda v: w.constant(v, INT64))
    x, y = args
    zero, minus_one = e("eq")(y, c(0)), e("eq")(y, c(-1))
    safe = e("switch")(e("or_")(zero, minus_one), c(1), y)
    # x = -2**63: (x + |y|) // y - sign(y) is x // y, and x + |y| does not overflow
    lowest = e("eq")(x, c(-(2**63)))
    shifted = e("switch")(lowest, e("add")(x, e("abs")(safe)), x)
    step = e("switch")(lowest, e("switch")(e("lt")(safe, c(0)), c(-1), c(1)), c(0))
    quotient = e("sub")(e("int_div")(shifted, safe), step)
    if name == "mod":  # x - (x // y)*y, exact in wrapping arithmetic (the true value fits)
        return e("sub")(x, e("mul")(quotient, safe))
    return e("switch")(zero, c(0), e("switch")(minus_one, e("neg")(x), quotient))


def _int_extreme(w: _Writer, name: str, args: list, dtypes: list[str]) -> Any:
    # int64 max(a, b) = a if a >= b else b (PyTensor's C maximum goes through a double: wrong above 2**53)
    if promote(*dtypes) != INT64:
        return _plain(w, name, args, dtypes)
    a, b = args
    return w.elementwise("switch")(w.elementwise("ge" if name == "maximum" else "le")(a, b), a, b)


def _power(w: _Writer, name: str, args: list, dtypes: list[str]) -> Any:
    """A float ``a**e`` as our pow: ``a**0.5`` is ``sqrt(a)`` (C's pow gives inf at -inf), and a float
    to an odd int64 power has the sign of the base (above 2**53, the exponent made a float is even)."""
    e = w.elementwise
    out = e("pow")(*args)
    result = promote(*dtypes)
    if result == INT64:
        return out
    base, power = args
    if dtypes[1] != INT64:
        root = e("sqrt")(base if dtypes[0] == result else w.cast(base, result))
        return e("switch")(e("eq")(power, w.constant(0.5, dtypes[1])), root, out)
    zero = w.constant(0.0, result)
    odd = e("neq")(e("mod")(power, w.constant(2, INT64)), w.constant(0, INT64))
    # the sign of the base, -0.0 included (1/-0.0 is -inf)
    negative = e("or_")(e("lt")(base, zero), e("lt")(e("true_div")(w.constant(1.0, result), base), zero))
    size = e("abs")(out)
    return e("switch")(odd, e("switch")(negative, e("neg")(size), size), out)


#: binary ops written with more than PyTensor's one scalar op (always folded a step at a time)
_GUARDED = {"floordiv": _int_division, "mod": _int_division, "maximum": _int_extreme, "minimum": _int_extreme}
_GUARDED["pow"] = _power


def _as_result(w: _Writer, node: Term, args: list, dtypes: list[str]) -> list:
    """Operands cast to the node's float dtype (PyTensor would compute int64 arithmetic inside a formula)."""
    return [v if d == node.dtype else w.cast(v, node.dtype) for v, d in zip(args, dtypes, strict=True)]


def _log_sigmoid(w: _Writer, node: Term, args: list, dtypes: list[str]) -> Any:
    # log(sigmoid(x)) = -softplus(-x), x made a float first (-(-2**63) wraps around in int64)
    neg, softplus = w.elementwise("neg"), w.elementwise("softplus")
    return neg(softplus(neg(_as_result(w, node, args, dtypes)[0])))


def _logaddexp(w: _Writer, node: Term, args: list, dtypes: list[str]) -> Any:
    # numpy's logaddexp: a + log(2) where a == b (infinities of one sign), else max(a, b) + softplus(-|a - b|)
    a, b = _as_result(w, node, args, dtypes)
    e = w.elementwise
    ln2 = w.constant(np.log(np.asarray(2.0, dtype=node.dtype)), node.dtype)
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


register_converter(Converter("pytensor", "to", to_pytensor, "pytensor"))
