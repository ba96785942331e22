"""Export terms as an ONNX model (needs ``exprgraph[onnx]``).

``to_onnx(outputs, inputs)`` writes one ONNX node (or a few) per distinct term, children first,
with the symbols as graph inputs (symbolic dimensions become ``dim_param`` text) and the constants
as initializers. The model passes ``onnx.checker`` and computes what ``exprgraph.evaluate``
computes, bit for bit on the same numpy operations: ONNX wants operands of one dtype, so operands
are cast the way our dtype rules promote them (a sum or product of more than two, folded, at each
step: ``-1 + -2**63 + x`` wraps around in int64 before it meets the float), and Python's floor
semantics of ``//`` and ``%`` are spelled out with ONNX's truncating ops exactly as numpy computes
them, the int64 limits included: an integer ``n // 0`` and ``n % 0`` are 0 and ``-2**63 // -1`` is
-2**63, with no ONNX division by 0 or -1 (a runtime's C code would trap there). ``a**0.5`` is
``sqrt(a)`` (ONNX's Pow gives inf at -inf) and a float to an odd int64 power keeps its sign, as in
our pow; an int64 to a negative power, which evaluate refuses, is whatever the runtime's Pow gives.
float32 terms are ONNX ``FLOAT`` tensors. ``softplus`` is ONNX's ``Softplus``, ``log_sigmoid``
``-Softplus(-x)`` and ``logaddexp`` numpy's formula on ``Softplus``, all exact. ONNX has no
``log1p`` nor ``expm1``: they are written with Goldberg's and Kahan's corrections (``u = 1 + x``,
``log(u)*x/(u - 1)``; ``u = exp(x)``, ``(u - 1)*x/log(u)``), within a few units in the last place
and free of the cancellation of ``log(1 + x)`` and ``exp(x) - 1``, but not bit for bit.
``logsumexp`` is ONNX's ``ReduceLogSumExp`` (shifted by the maximum where ours folds ``logaddexp``:
equal within rounding; where every entry is ``-inf`` the reference evaluator gives nan, ours
``-inf``). The inverse and hyperbolic functions, ``erf``, ``sign``, ``floor`` and ``ceil`` are ONNX's
operators, ``erfc`` is ``1 - Erf``, ``access`` a ``GatherND``; the vector ops are ``Slice``, ``Gather``,
``Concat``, ``Reshape``, ``Expand`` and ``Reduce*``, ``scatter_add`` a ``ScatterND`` adding into zeros;
``einsum``, ``topk`` and ``arange`` are ``Einsum``, one ``TopK`` and ``Range`` (:mod:`.onnx_select`);
the ops ONNX lacks (``fmod``, ``truncdiv``, ``trunc``, ``atan2``, ``hypot``, ``log2``, ``log10``,
``broadcast_dim``) go out as their equivalent terms of :mod:`.equivalents`. A symbol that is a
dimension of an input's shape, and no input itself, is read from that input (``Gather(Shape(input), axis)``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from ..core import BOOL, FLOAT32, FLOAT64, INT64, Term, promote
from ..core.stdops import bool_casts
from ..core.walk import postorder
from ..errors import ConversionError
from ._optional import require
from .equivalents import equivalent
from .onnx_select import SELECT_OPS, lower_select
from .registry import Converter, register_converter

__all__ = ["to_onnx", "OPSET"]

#: the ONNX operator set the exported models use
OPSET = 18

#: ops that are one ONNX operator of the same meaning (variadic ones are folded pairwise)
SIMPLE = {
    "add": "Add",
    "sub": "Sub",
    "mul": "Mul",
    "truediv": "Div",
    "pow": "Pow",
    "neg": "Neg",
    "abs": "Abs",
    "exp": "Exp",
    "log": "Log",
    "sqrt": "Sqrt",
    "sin": "Sin",
    "cos": "Cos",
    "tan": "Tan",
    "tanh": "Tanh",
    "sigmoid": "Sigmoid",
    "softplus": "Softplus",
    "maximum": "Max",
    "minimum": "Min",
    "lt": "Less",
    "le": "LessOrEqual",
    "gt": "Greater",
    "ge": "GreaterOrEqual",
    "eq": "Equal",
    "logical_and": "And",
    "logical_or": "Or",
    "logical_not": "Not",
    "matmul": "MatMul",
    "asin": "Asin",
    "acos": "Acos",
    "atan": "Atan",
    "sinh": "Sinh",
    "cosh": "Cosh",
    "asinh": "Asinh",
    "acosh": "Acosh",
    "atanh": "Atanh",
    "erf": "Erf",
    "sign": "Sign",
    "identity": "Identity",
}
#: ops ONNX has no operator for, exported as the equivalent term of :mod:`.equivalents`
_EQUIVALENT = frozenset({"fmod", "truncdiv", "broadcast_dim", "hypot", "log2", "log10", "trunc", "atan2"})


class _Builder:
    """Collects ONNX nodes and initializers; names values ``v0``, ``v1``... (symbols keep their names)."""

    def __init__(self) -> None:
        self.onnx = require("onnx", "onnx")
        self.helper = self.onnx.helper
        self.nodes: list[Any] = []
        self.initializers: list[Any] = []
        self.count = 0
        self.consts: dict[tuple, str] = {}

    def fresh(self) -> str:
        self.count += 1
        return f"v{self.count}"

    def op(self, op_type: str, inputs: Sequence[str], **attrs: Any) -> str:
        out = self.fresh()
        self.nodes.append(self.helper.make_node(op_type, list(inputs), [out], **attrs))
        return out

    def const(self, value: Any, dtype: str) -> str:
        array: np.ndarray = np.asarray(value, dtype=_NUMPY[dtype])
        key = (dtype, array.shape, array.tobytes())
        name = self.consts.get(key)
        if name is None:
            name = self.consts[key] = self.fresh()
            self.initializers.append(self.onnx.numpy_helper.from_array(array, name))
        return name

    def cast(self, name: str, have: str, want: str) -> str:
        if have == want:
            return name
        return self.op("Cast", [name], to=_ONNX_TYPE(self.onnx, want))


_NUMPY = {FLOAT64: np.float64, FLOAT32: np.float32, INT64: np.int64, BOOL: np.bool_}


def _ONNX_TYPE(onnx: Any, dtype: str) -> int:  # noqa: N802 - reads as the ONNX enum it returns
    types = onnx.TensorProto
    return {FLOAT64: types.DOUBLE, FLOAT32: types.FLOAT, INT64: types.INT64, BOOL: types.BOOL}[dtype]


def _numbers(dtypes: list[str]) -> str:
    """The promoted dtype of ``dtypes``, bools counted as int64 (ONNX computes on numbers, not bools)."""
    p = promote(*dtypes)
    return INT64 if p == BOOL else p


def _operand_dtype(node: Term) -> str:
    """The dtype every operand of ``node`` is cast to before its ONNX operator runs."""
    name = node.op.name
    dtypes = [a.dtype for a in node.args]
    if node.op.float_result:
        return node.dtype  # float32 for float32 operands, else float64
    if node.op.counts_bools:
        return _numbers(dtypes)
    if node.op.logical:
        return BOOL
    if name in ("lt", "le", "gt", "ge"):
        return _numbers(dtypes)  # ONNX orders numbers, not bools
    return promote(*dtypes)


def _int_floor_parts(b: _Builder, x: str, y: str) -> tuple[str, str]:
    """Names of int64 ``x // y`` and ``x % y`` as numpy computes them: 0 and 0 for ``y == 0``,
    ``-x`` (wrapping at -2**63) and 0 for ``y == -1``, with no ONNX division that could trap or overflow."""
    zero, one = b.const(0, INT64), b.const(1, INT64)
    by_zero = b.op("Equal", [y, zero])
    by_minus_one = b.op("Equal", [y, b.const(-1, INT64)])
    # divide by 1 where y is 0 or -1 (C's MIN / -1 and x / 0 trap): those quotients are set below
    safe = b.op("Where", [b.op("Or", [by_zero, by_minus_one]), one, y])
    trunc = b.op("Div", [x, safe])  # rounded toward zero, |trunc * safe| <= |x|
    rem = b.op("Sub", [x, b.op("Mul", [trunc, safe])])  # C's remainder: the sign of x, |rem| < |safe|
    # floor = trunc - 1 and mod = rem + y where the remainder and the divisor differ in sign
    shift = b.op(
        "And",
        [
            b.op("Not", [b.op("Equal", [rem, zero])]),
            b.op("Xor", [b.op("Less", [rem, zero]), b.op("Less", [safe, zero])]),
        ],
    )
    floor = b.op("Sub", [trunc, b.cast(shift, BOOL, INT64)])
    mod = b.op("Where", [shift, b.op("Add", [rem, safe]), rem])  # 0 where y is 0 or -1 (rem is 0 there)
    floor = b.op("Where", [by_minus_one, b.op("Neg", [x]), b.op("Where", [by_zero, zero, floor])])
    return floor, mod


def _floor_parts(b: _Builder, x: str, y: str, dtype: str) -> tuple[str, str]:
    """Names of ``x // y`` and ``x % y`` with Python's floor semantics, computed as numpy does."""
    if dtype == INT64:
        return _int_floor_parts(b, x, y)
    # floats, as numpy's divmod: m = fmod(x, y); shift m (and the quotient) by y when their signs differ
    zero, one, half = b.const(0.0, dtype), b.const(1.0, dtype), b.const(0.5, dtype)
    m = b.op("Mod", [x, y], fmod=1)
    differ = b.op("Xor", [b.op("Less", [y, zero]), b.op("Less", [m, zero])])
    shift = b.op("And", [b.op("Not", [b.op("Equal", [m, zero])]), differ])
    mod = b.op("Where", [shift, b.op("Add", [m, y]), m])
    # a zero remainder takes the divisor's sign (copysign(0, y); y == 0 is handled below)
    signed_zero = b.op("Where", [b.op("Less", [y, zero]), b.const(-0.0, dtype), zero])
    mod = b.op("Where", [b.op("Equal", [m, zero]), signed_zero, mod])
    div = b.op("Div", [b.op("Sub", [x, m]), y])
    div = b.op("Where", [shift, b.op("Sub", [div, one]), div])
    floor = b.op("Floor", [div])
    floor = b.op("Where", [b.op("Greater", [b.op("Sub", [div, floor]), half]), b.op("Add", [floor, one]), floor])
    # a zero quotient takes the sign of x / y (copysign(0, x/y); 0 * q keeps the sign for finite q)
    floor = b.op("Where", [b.op("Equal", [div, zero]), b.op("Mul", [zero, b.op("Div", [x, y])]), floor])
    # a zero divisor gives x / 0 (inf or nan), as numpy does
    floor = b.op("Where", [b.op("Equal", [y, zero]), b.op("Div", [x, y]), floor])
    return floor, mod


def _lower(b: _Builder, node: Term, args: list[str]) -> str:
    """ONNX nodes computing ``node`` from its operands' value names; returns the result's name."""
    name = node.op.name
    if name == "where":
        out = node.dtype
        cond = b.cast(args[0], node.args[0].dtype, BOOL)
        return b.op("Where", [cond, b.cast(args[1], node.args[1].dtype, out), b.cast(args[2], node.args[2].dtype, out)])
    want = _operand_dtype(node)
    if name == "ceil_div":
        if node.args[0].dtype == BOOL:
            raise ConversionError("to_onnx: ceil_div of a bool has no value (-True is refused, as by evaluate)")
        x, y = b.cast(args[0], node.args[0].dtype, want), b.cast(args[1], node.args[1].dtype, want)
        if want == INT64:  # a // b + (a % b != 0): -a would wrap at -2**63
            floor, mod = _floor_parts(b, x, y, want)
            inexact = b.op("Not", [b.op("Equal", [mod, b.const(0, INT64)])])
            return b.op("Add", [floor, b.cast(inexact, BOOL, INT64)])
        floor, _ = _floor_parts(b, b.op("Neg", [x]), y, want)  # floats: ceil(a/b) = -((-a) // b)
        return b.op("Neg", [floor])
    if name in ("floor", "ceil"):  # an integer is its own floor (ONNX's Floor takes floats only)
        return (
            b.op(name.capitalize(), [args[0]])
            if want in (FLOAT64, FLOAT32)
            else b.cast(args[0], node.args[0].dtype, want)
        )
    if name == "erfc":  # 1 - erf(x): absolute error of an ulp, so relative precision fades for x > 1
        return b.op("Sub", [b.const(1.0, want), b.op("Erf", [b.cast(args[0], node.args[0].dtype, want)])])
    if name == "access":
        return _gather_element(b, args)
    if name in SELECT_OPS:  # einsum, topk, arange (onnx_select.py)
        return lower_select(b, node, args)
    if name in _INDEX_OPS:
        return _index_op(b, node, [b.cast(v, a.dtype, node.dtype) for v, a in zip(args, node.args, strict=True)])
    if name in SIMPLE and len(args) > 2 and node.op.counts_bools:
        return _fold(b, SIMPLE[name], node, args)
    raw = args
    args = [b.cast(v, a.dtype, want) for v, a in zip(args, node.args, strict=True)]
    if name == "pow" and want != INT64:
        return _power(b, node, args, raw[1], want)
    if name in ("maximum", "minimum") and want == BOOL:
        name = "logical_or" if name == "maximum" else "logical_and"  # max/min of bools
    if name in SIMPLE:
        op_type = SIMPLE[name]
        out = b.op(op_type, args[:2]) if len(args) > 1 else b.op(op_type, args)
        for extra in args[2:]:
            out = b.op(op_type, [out, extra])
        return out
    if name == "ne":
        return b.op("Not", [b.op("Equal", args)])
    if name in _FORMULAS:
        return _FORMULAS[name](b, args, want)
    if name in ("floordiv", "mod"):
        floor, mod = _floor_parts(b, args[0], args[1], want)
        return floor if name == "floordiv" else mod
    if name in ("dot", "transpose") or name in _REDUCE:
        return _tensor_op(b, node, args, want)
    raise ConversionError(f"to_onnx: the op {name!r} has no ONNX counterpart")


def _tensor_op(b: _Builder, node: Term, args: list[str], want: str) -> str:
    """``dot``, the reductions over axes and ``transpose``."""
    name = node.op.name
    if name == "dot":
        a, c = node.args
        return b.op("Mul" if not a.ndim or not c.ndim else "MatMul", args)
    if name == "transpose":
        perm = list(range(node.ndim))[::-1] if node.attr is None else [a % node.ndim for a in node.attr]
        return b.op("Transpose", args, perm=perm)
    # ReduceSum...; ONNX's ReduceLogSumExp is max-shifted, as ours: within a few units in the last place
    op_type = _REDUCE[name]
    if not node.args[0].ndim:
        return b.op("Identity", args)  # the sum (logsumexp, max...) of one number is the number
    if want == BOOL:  # the extremum of bools: of their int64 values (opset 18 reduces numbers)
        return b.cast(_tensor_op(b, node, [b.cast(args[0], BOOL, INT64)], INT64), INT64, BOOL)
    if node.attr is None:
        return b.op(op_type, args, keepdims=0)
    axes = [node.attr] if isinstance(node.attr, int) else list(node.attr)
    return b.op(op_type, [args[0], b.const(axes, INT64)], keepdims=0)


_REDUCE = {
    "sum": "ReduceSum",
    "logsumexp": "ReduceLogSumExp",
    "amax": "ReduceMax",
    "amin": "ReduceMin",
    "prod": "ReduceProd",
    "mean": "ReduceMean",
}


def _index_op(b: _Builder, node: Term, args: list[str]) -> str:
    """Slice, Gather, its adjoint (ScatterND adding into zeros), Concat, Reshape and Expand."""
    name, attr, x = node.op.name, node.attr, node.args[0]
    if name == "slice_axis":  # count entries from start by step; past index 0 backwards is -(n+1)
        axis, start, count, step = attr
        end = start + count * step if count else start
        ends = end if end >= 0 else -(x.shape[axis % x.ndim] + 1)
        spec = [b.const([v], INT64) for v in (start, ends, axis % x.ndim, step)]
        return b.op("Slice", [args[0], *spec])
    if name == "take":
        return b.op("Gather", [args[0], b.const(_values(node.args[1]), INT64)], axis=(attr or 0) % x.ndim)
    if name == "concat":
        return b.op("Concat", args, axis=(attr or 0) % x.ndim)
    if name in ("reshape", "broadcast_to"):
        return b.op("Reshape" if name == "reshape" else "Expand", [args[0], b.const(list(attr), INT64)])
    return _scatter_add(b, node, args[0])


def _values(t: Term) -> Any:
    return t.attr.array if hasattr(t.attr, "array") else t.attr


_INDEX_OPS = frozenset({"slice_axis", "take", "concat", "reshape", "broadcast_to", "scatter_add"})


def _scatter_add(b: _Builder, node: Term, update: str) -> str:
    """``scatter_add(u, idx, spec=(axis, n))``: the index's axes of u moved first, ScatterND adding into zeros."""
    u, index = node.args
    axis, k = node.attr[0], index.ndim
    if not all(d.__class__ is int for d in node.shape):
        raise ConversionError("to_onnx: scatter_add needs known (int) dimensions")
    perm = [*range(axis, axis + k), *range(axis), *range(axis + k, u.ndim)]
    moved = b.op("Transpose", [update], perm=perm) if perm != list(range(u.ndim)) else update
    shape = [node.shape[axis], *node.shape[:axis], *node.shape[axis + 1 :]]
    zero = b.onnx.numpy_helper.from_array(np.zeros(1, _NUMPY[node.dtype]))
    zeros = b.op("ConstantOfShape", [b.const(shape, INT64)], value=zero)
    positions = b.const(np.asarray(_values(index)).reshape(*index.shape, 1), INT64)
    out = b.op("ScatterND", [zeros, positions, moved], reduction="add")
    back = [*range(1, axis + 1), 0, *range(axis + 1, node.ndim)]
    return b.op("Transpose", [out], perm=back) if back != list(range(node.ndim)) else out


def _gather_element(b: _Builder, args: list[str]) -> str:
    """``T[i, j, ...]``: GatherND at the stacked indices (negative ones count from the end, as numpy's)."""
    if len(args) == 1:  # a one-element tensor read as a scalar
        return b.op("Squeeze", [b.op("Reshape", [args[0], b.const([-1], INT64)]), b.const([0], INT64)])
    axis0 = b.const([0], INT64)
    stacked = b.op("Concat", [b.op("Unsqueeze", [i, axis0]) for i in args[1:]], axis=0)
    return b.op("GatherND", [args[0], stacked])


def _fold(b: _Builder, op_type: str, node: Term, args: list[str]) -> str:
    """A variadic sum or product as evaluate folds it: each step in the dtype of its two operands
    (``add(-1, -2**63, x)`` wraps around in int64 before it meets the float ``x``)."""
    counted = [c or a.dtype for c, a in zip(bool_casts(node), node.args, strict=True)]
    have = _numbers([counted[0]])
    out = b.cast(args[0], node.args[0].dtype, have)
    for value, arg, dtype in zip(args[1:], node.args[1:], counted[1:], strict=True):
        step = _numbers([have, dtype])
        out = b.op(op_type, [b.cast(out, have, step), b.cast(value, arg.dtype, step)])
        have = step
    return out


def _power(b: _Builder, node: Term, args: list[str], exponent: str, dtype: str) -> str:
    """A float ``a**e`` as our pow: ``a**0.5`` is ``sqrt(a)`` (nan at -inf, where Pow gives inf), and
    ``a**n`` for an odd int64 ``n`` has the sign of ``a`` (above 2**53, ``n`` made a float is even)."""
    base, power = args
    out = b.op("Pow", args)
    e = node.args[1]
    if e.dtype in (FLOAT64, FLOAT32):
        if e.is_const and not hasattr(e.attr, "array"):
            return b.op("Sqrt", [base]) if e.attr == 0.5 else out
        return b.op("Where", [b.op("Equal", [power, b.const(0.5, dtype)]), b.op("Sqrt", [base]), out])
    if e.dtype != INT64 or (e.is_const and not hasattr(e.attr, "array") and abs(e.attr) <= 2**53):
        return out  # a bool, or an int that is exact as a float (its parity kept)
    zero = b.const(0.0, dtype)
    odd = b.op("Not", [b.op("Equal", [b.op("Mod", [exponent, b.const(2, INT64)], fmod=1), b.const(0, INT64)])])
    # the sign of the base, -0.0 included: 1/-0.0 is -inf
    negative = b.op("Or", [b.op("Less", [base, zero]), b.op("Less", [b.op("Div", [b.const(1.0, dtype), base]), zero])])
    size = b.op("Abs", [out])
    return b.op("Where", [odd, b.op("Where", [negative, b.op("Neg", [size]), size]), out])


def _log_sigmoid(b: _Builder, args: list[str], dtype: str) -> str:
    # log(sigmoid(x)) = -softplus(-x), with ONNX's Softplus (numpy's logaddexp(0, x))
    return b.op("Neg", [b.op("Softplus", [b.op("Neg", args)])])


def _logaddexp(b: _Builder, args: list[str], dtype: str) -> str:
    # numpy's logaddexp: a + log(2) where a == b (infinities of one sign), else max(a, b) + softplus(-|a - b|)
    x, y = args
    spread = b.op("Softplus", [b.op("Neg", [b.op("Abs", [b.op("Sub", [x, y])])])])
    same = b.op("Add", [x, b.const(np.log(np.asarray(2.0, dtype=_NUMPY[dtype])), dtype)])
    return b.op("Where", [b.op("Equal", [x, y]), same, b.op("Add", [b.op("Max", [x, y]), spread])])


def _log1p(b: _Builder, args: list[str], dtype: str) -> str:
    # Goldberg: u = 1 + x; log1p(x) = x where u == 1, else log(u) * (x / (u - 1)); x itself at +inf
    (x,) = args
    one = b.const(1.0, dtype)
    u = b.op("Add", [one, x])
    fixed = b.op("Mul", [b.op("Log", [u]), b.op("Div", [x, b.op("Sub", [u, one])])])
    out = b.op("Where", [b.op("Equal", [u, one]), x, fixed])
    return b.op("Where", [b.op("IsInf", [x], detect_negative=0), x, out])


def _expm1(b: _Builder, args: list[str], dtype: str) -> str:
    # Kahan: u = exp(x); expm1(x) = x where u == 1, -1 where u - 1 == -1, else (u - 1) * (x / log(u)); inf at +inf
    (x,) = args
    one = b.const(1.0, dtype)
    u = b.op("Exp", [x])
    um1 = b.op("Sub", [u, one])
    fixed = b.op("Mul", [um1, b.op("Div", [x, b.op("Log", [u])])])
    out = b.op("Where", [b.op("Equal", [um1, b.const(-1.0, dtype)]), um1, fixed])
    out = b.op("Where", [b.op("Equal", [u, one]), x, out])
    return b.op("Where", [b.op("IsInf", [u], detect_negative=0), u, out])


#: ops with no ONNX operator of their own, written with several
_FORMULAS = {"log_sigmoid": _log_sigmoid, "logaddexp": _logaddexp, "log1p": _log1p, "expm1": _expm1}


def _emit(b: _Builder, order: list[Term], value: dict[Term, str]) -> None:
    """ONNX nodes for the terms of ``order`` (children first) not in ``value``; ops ONNX lacks as their equivalents."""
    for node in order:
        if node in value:
            continue
        if node.op.name == "const":
            data = node.attr.array if hasattr(node.attr, "array") else node.attr
            value[node] = b.const(data, node.dtype)
        elif node.op.name in _EQUIVALENT:
            same = equivalent(node)
            _emit(b, postorder([same]), value)  # nested once or twice at most (the table's own entries)
            value[node] = value[same]
        else:
            value[node] = _lower(b, node, [value[a] for a in node.args])


def _dimensions_of(inputs: list[Term], symbols: list[Term]) -> dict[Term, tuple[Term, int]]:
    """The ``symbols`` that are a dimension of an input's shape -> (that input, the axis)."""
    found: dict[Term, tuple[Term, int]] = {}
    for s in inputs:
        for axis, d in enumerate(s.shape):
            if d in symbols and d not in found:
                found[d] = (s, axis)
    return found


def _value_info(b: _Builder, name: str, term: Term) -> Any:
    dims = [d if d.__class__ is int else str(d) for d in term.shape]
    return b.helper.make_tensor_value_info(name, _ONNX_TYPE(b.onnx, term.dtype), dims)


def to_onnx(
    outputs: Term | Sequence[Term],
    inputs: Iterable[Any] | None = None,
    *,
    output_names: Sequence[str] | None = None,
    name: str = "exprgraph",
) -> Any:
    """An ONNX ``ModelProto`` computing ``outputs`` from ``inputs`` (symbols or names).

    ``inputs`` defaults to the outputs' free symbols sorted by name; graph inputs take the
    symbols' names, outputs are ``output_0``, ``output_1``... unless ``output_names`` says.
    """
    b = _Builder()
    outs: list[Term] = [outputs] if isinstance(outputs, Term) else list(outputs)
    order = postorder(outs)
    symbols = {n.name: n for n in order if n.op.name == "symbol"}
    if inputs is None:
        ins = [symbols[k] for k in sorted(symbols)]
    else:
        ins = [s if s.__class__ is Term else symbols.get(s) for s in inputs]
        if any(s is None or s.op.name != "symbol" for s in ins):
            raise ConversionError("to_onnx: every input must be a symbol of the outputs (or its name)")
    missing_dims = _dimensions_of(ins, [symbols[k] for k in set(symbols) - {s.name for s in ins}])
    missing = sorted(set(symbols) - {s.name for s in ins} - {s.name for s in missing_dims})
    if missing:
        raise ConversionError(f"to_onnx: the outputs use symbols not in inputs: {missing}")
    names = list(output_names) if output_names is not None else [f"output_{i}" for i in range(len(outs))]
    if len(names) != len(outs) or len(set(names)) != len(names) or set(names) & set(symbols):
        raise ConversionError("to_onnx: output_names must be distinct names, one per output, unlike the inputs")
    value: dict[Term, str] = {s: s.name for s in ins}
    for s in missing_dims:  # a dimension of an input: Shape, then Gather of its entry
        owner, axis = missing_dims[s]
        value[s] = b.op("Gather", [b.op("Shape", [owner.name]), b.const(axis, INT64)], axis=0)
    _emit(b, order, value)
    for term, out in zip(outs, names, strict=True):
        b.nodes.append(b.helper.make_node("Identity", [value[term]], [out]))
    graph = b.helper.make_graph(
        b.nodes,
        name,
        [_value_info(b, s.name, s) for s in ins],
        [_value_info(b, out, term) for term, out in zip(outs, names, strict=True)],
        initializer=b.initializers,
    )
    opset = [b.helper.make_opsetid("", OPSET)]
    model = b.helper.make_model(graph, opset_imports=opset, producer_name="exprgraph")
    model.ir_version = b.helper.find_min_ir_version_for(opset)
    return model


register_converter(Converter("onnx", "to", to_onnx, "onnx"))
