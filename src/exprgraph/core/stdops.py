"""The standard op table: every built-in op, declared once with all it means to each layer."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import ShapeError
from .dtypes import BOOL, FLOAT64, INT64, promote
from .leaves import const_infer, const_key, symbol_infer
from .op import (
    PREC_ADD,
    PREC_AND,
    PREC_CMP,
    PREC_MUL,
    PREC_NOT,
    PREC_OR,
    PREC_POW,
    PREC_UNARY,
    Op,
    register_op,
)
from .shapes import broadcast_shapes, dims_equal, normalize_axes

__all__ = ["ARITHMETIC", "FLOAT_FUNCS"]


# -- dtype/shape rules -----------------------------------------------------------------------------


def _shape(args: tuple) -> tuple:
    if len(args) == 1:
        return args[0].shape
    if len(args) == 2:
        a, b = args[0].shape, args[1].shape
        if not a:
            return b
        if not b or a is b:
            return a
    return broadcast_shapes(*(a.shape for a in args))


_ARITH2 = {(a, b): promote(INT64, a, b) for a in (BOOL, INT64, FLOAT64) for b in (BOOL, INT64, FLOAT64)}


def arith(args: tuple, attr: Any) -> tuple[str, tuple]:
    """Elementwise arithmetic: bools count as integers (True + True == 2)."""
    if len(args) == 2:
        a, b = args
        sa, sb = a.shape, b.shape
        return _ARITH2[a.dtype, b.dtype], (sb if not sa else sa if not sb or sa is sb else _shape(args))
    return promote(INT64, *(a.dtype for a in args)), _shape(args)


def same(args: tuple, attr: Any) -> tuple[str, tuple]:
    """Elementwise, result in the promoted operand dtype (max/min keep bools)."""
    return promote(*(a.dtype for a in args)), _shape(args)


def real(args: tuple, attr: Any) -> tuple[str, tuple]:
    """Elementwise with a float64 result (division, transcendental functions)."""
    return FLOAT64, _shape(args)


def boolean(args: tuple, attr: Any) -> tuple[str, tuple]:
    """Elementwise with a bool result (comparisons, logic)."""
    return BOOL, _shape(args)


def where_rule(args: tuple, attr: Any) -> tuple[str, tuple]:
    """``where(cond, a, b)``: the promoted dtype of a and b, all three broadcast."""
    return promote(args[1].dtype, args[2].dtype), _shape(args)


def _contract(a: Any, b: Any, what: str) -> None:
    if dims_equal(a, b) is False:
        raise ShapeError(f"{what}: contracted dimensions differ ({a} vs {b})")


def dot_rule(args: tuple, attr: Any) -> tuple[str, tuple]:
    """numpy ``dot`` for operands of at most two dimensions."""
    a, b = args
    dtype = promote(INT64, a.dtype, b.dtype)
    sa, sb = a.shape, b.shape
    if not sa or not sb:
        return dtype, sa or sb
    if len(sa) > 2 or len(sb) > 2:
        raise ShapeError(f"dot takes operands of at most 2 dimensions, got {sa} and {sb}; use matmul")
    _contract(sa[-1], sb[0], "dot")
    return dtype, sa[:-1] + sb[1:]


def matmul_rule(args: tuple, attr: Any) -> tuple[str, tuple]:
    """numpy ``matmul``: matrix product over the last two axes, leading axes broadcast."""
    a, b = args
    dtype = promote(INT64, a.dtype, b.dtype)
    sa, sb = a.shape, b.shape
    if not sa or not sb:
        raise ShapeError("matmul operands must have at least one dimension; use * for scalars")
    _contract(sa[-1], sb[0] if len(sb) == 1 else sb[-2], "matmul")
    if len(sa) == 1 and len(sb) == 1:
        return dtype, ()
    if len(sa) == 1:
        return dtype, sb[:-2] + sb[-1:]
    if len(sb) == 1:
        return dtype, sa[:-1]
    return dtype, (*broadcast_shapes(sa[:-2], sb[:-2]), sa[-2], sb[-1])


def sum_rule(args: tuple, attr: Any) -> tuple[str, tuple]:
    """``sum(x, axis=...)``: the summed axes disappear (all of them for ``axis=None``)."""
    (x,) = args
    axes = normalize_axes(attr, x.ndim, "sum")
    dtype = FLOAT64 if x.dtype == FLOAT64 else INT64
    return dtype, tuple(d for i, d in enumerate(x.shape) if i not in axes)


def transpose_rule(args: tuple, attr: Any) -> tuple[str, tuple]:
    """``transpose(x, axes=...)``: permuted axes (reversed for ``axes=None``)."""
    (x,) = args
    if attr is None:
        return x.dtype, x.shape[::-1]
    axes = normalize_axes(attr, x.ndim, "transpose")
    if len(axes) != x.ndim:
        raise ShapeError(f"transpose: axes {attr} is not a permutation of {x.ndim} axes")
    return x.dtype, tuple(x.shape[i] for i in axes)


def _axis_key(attr: Any) -> Any:
    if attr is None or isinstance(attr, int):
        return attr
    if isinstance(attr, (tuple, list)):
        return tuple(attr)
    raise TypeError(f"an axis must be None, an int or a tuple of ints, not {attr!r}")


# -- numpy implementations needing more than one ufunc ----------------------------------------------


def _sigmoid(x: Any) -> Any:
    # 1/(1+exp(-x)) = e/(1+e) with e = exp(x) for x < 0: no overflow, full relative precision
    x = np.asarray(x, dtype=np.float64)
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


def _sum(x: Any, attr: Any = None) -> Any:
    return np.sum(x, axis=_axis_key(attr))


def _transpose(x: Any, attr: Any = None) -> Any:
    return np.transpose(x, attr)


def _nary(ufunc: Any) -> Any:
    def apply(*values: Any) -> Any:
        out = ufunc(values[0], values[1])
        for v in values[2:]:
            out = ufunc(out, v)
        return out

    return apply


# -- the table -------------------------------------------------------------------------------------

register_op(Op("symbol", 0, symbol_infer, notation="leaf", doc="A named input."))
register_op(Op("const", 0, const_infer, notation="leaf", attr_key=const_key, doc="A constant value."))


def _infix(name: str, symbol: str, prec: int, infer: Any, ufunc: Any, c: str | None = None, **kw: Any) -> Op:
    assoc = kw.pop("assoc", "left")
    arity = kw.pop("arity", 2)
    impl = _nary(ufunc) if arity != 2 else None
    return register_op(
        Op(
            name,
            arity,
            infer,
            ufunc=ufunc,
            impl=impl,
            notation="infix",
            symbol=symbol,
            precedence=prec,
            assoc=assoc,
            c_render=c,
            **kw,
        )
    )


_infix(
    "add",
    "+",
    PREC_ADD,
    arith,
    np.add,
    "({0} + {1})",
    arity=(2, None),
    commutative=True,
    associative=True,
    identity=0,
    doc="Sum; variadic (prints as add(...) with >2 operands).",
)
_infix("sub", "-", PREC_ADD, arith, np.subtract, "({0} - {1})", doc="Difference.")
_infix(
    "mul",
    "*",
    PREC_MUL,
    arith,
    np.multiply,
    "({0} * {1})",
    arity=(2, None),
    commutative=True,
    associative=True,
    identity=1,
    absorbing=0,
    doc="Product; variadic like add.",
)
_infix("truediv", "/", PREC_MUL, real, np.true_divide, "({0} / {1})", doc="True division (float result).")
_infix(
    "floordiv",
    "//",
    PREC_MUL,
    arith,
    np.floor_divide,
    "eg_floordiv({0}, {1})",
    doc="Floor division (Python semantics).",
)
_infix(
    "mod", "%", PREC_MUL, arith, np.mod, "eg_mod({0}, {1})", doc="Modulo with the divisor's sign (Python semantics)."
)
_infix("matmul", "@", PREC_MUL, matmul_rule, np.matmul, associative=True, doc="Matrix product (numpy matmul).")
_infix("pow", "**", PREC_POW, arith, np.power, "pow({0}, {1})", assoc="right", identity=1, doc="Power.")

_infix("lt", "<", PREC_CMP, boolean, np.less, "({0} < {1})", assoc=None, relational=True, doc="a < b.")
_infix("le", "<=", PREC_CMP, boolean, np.less_equal, "({0} <= {1})", assoc=None, relational=True, doc="a <= b.")
_infix("gt", ">", PREC_CMP, boolean, np.greater, "({0} > {1})", assoc=None, relational=True, doc="a > b.")
_infix("ge", ">=", PREC_CMP, boolean, np.greater_equal, "({0} >= {1})", assoc=None, relational=True, doc="a >= b.")
_infix(
    "eq",
    "==",
    PREC_CMP,
    boolean,
    np.equal,
    "({0} == {1})",
    assoc=None,
    relational=True,
    commutative=True,
    doc="a == b as a term (Python == on terms is identity).",
)
_infix(
    "ne",
    "!=",
    PREC_CMP,
    boolean,
    np.not_equal,
    "({0} != {1})",
    assoc=None,
    relational=True,
    commutative=True,
    doc="a != b as a term.",
)

_infix(
    "logical_and",
    "and",
    PREC_AND,
    boolean,
    np.logical_and,
    "({0} && {1})",
    commutative=True,
    associative=True,
    idempotent=True,
    identity=True,
    absorbing=False,
    doc="Logical and.",
)
_infix(
    "logical_or",
    "or",
    PREC_OR,
    boolean,
    np.logical_or,
    "({0} || {1})",
    commutative=True,
    associative=True,
    idempotent=True,
    identity=False,
    absorbing=True,
    doc="Logical or.",
)

register_op(
    Op(
        "neg",
        1,
        arith,
        ufunc=np.negative,
        notation="prefix",
        symbol="-",
        precedence=PREC_UNARY,
        c_render="(-{0})",
        doc="Negation.",
    )
)
register_op(
    Op(
        "logical_not",
        1,
        boolean,
        ufunc=np.logical_not,
        notation="prefix",
        symbol="not",
        precedence=PREC_NOT,
        c_render="(!{0})",
        doc="Logical not.",
    )
)


def _call(name: str, arity: Any, infer: Any, c: str | None = None, ufunc: Any = None, **kw: Any) -> Op:
    return register_op(Op(name, arity, infer, ufunc=ufunc, notation="call", c_render=c, **kw))


_call("abs", 1, arith, "fabs({0})", np.absolute, doc="Absolute value.")
_call("exp", 1, real, "exp({0})", np.exp, doc="Exponential.")
_call("log", 1, real, "log({0})", np.log, doc="Natural logarithm (nan below 0, -inf at 0).")
_call("sqrt", 1, real, "sqrt({0})", np.sqrt, doc="Square root (nan below 0).")
_call("sin", 1, real, "sin({0})", np.sin, doc="Sine.")
_call("cos", 1, real, "cos({0})", np.cos, doc="Cosine.")
_call("tan", 1, real, "tan({0})", np.tan, doc="Tangent.")
_call("tanh", 1, real, "tanh({0})", np.tanh, doc="Hyperbolic tangent.")
_call("sigmoid", 1, real, "eg_sigmoid({0})", impl=_sigmoid, doc="Logistic function 1/(1+exp(-x)).")
_call(
    "maximum",
    (2, None),
    same,
    "fmax({0}, {1})",
    np.maximum,
    impl=_nary(np.maximum),
    commutative=True,
    associative=True,
    idempotent=True,
    aliases=("max",),
    doc="Elementwise maximum (nan propagates).",
)
_call(
    "minimum",
    (2, None),
    same,
    "fmin({0}, {1})",
    np.minimum,
    impl=_nary(np.minimum),
    commutative=True,
    associative=True,
    idempotent=True,
    aliases=("min",),
    doc="Elementwise minimum (nan propagates).",
)
_call("where", 3, where_rule, "({0} ? {1} : {2})", impl=np.where, doc="where(cond, a, b): a where cond holds, else b.")
_call("dot", 2, dot_rule, impl=np.dot, doc="numpy dot for operands of up to 2 dimensions.")
_call("sum", 1, sum_rule, impl=_sum, attr_name="axis", attr_key=_axis_key, doc="Sum over axes (all by default).")
_call(
    "transpose",
    1,
    transpose_rule,
    impl=_transpose,
    attr_name="axes",
    attr_key=_axis_key,
    doc="Permute axes (reverse by default).",
)

#: ops whose bool operands are counted as integers when evaluated
ARITHMETIC = frozenset({"add", "sub", "mul", "floordiv", "mod", "pow", "neg", "abs", "dot", "matmul", "sum"})
#: ops with a float64 result whatever their operand dtypes
FLOAT_FUNCS = frozenset({"truediv", "exp", "log", "sqrt", "sin", "cos", "tan", "tanh", "sigmoid"})
