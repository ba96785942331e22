"""The standard table, arithmetic: leaves, + - * / // % ** and unary minus, abs, C's truncating division.

Each op is declared next to its numpy evaluation and its gradient rule; importing this module
registers them. Imports the lower core modules and the op-building helpers (inference,
grad_tools, llvm_ir, declare).
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from .declare import _call, _infix, _prefix
from .dtypes import FLOAT32, FLOAT64, INT64
from .grad_tools import _O, _no_grad, _one, negate, product, times
from .inference import arith, real
from .leaves import const, const_infer, const_key, symbol_infer
from .llvm_ir import _ir_arith, _ir_call2, _ir_math
from .op import ALL_REALS, NONZERO, POSITIVE, PREC_ADD, PREC_MUL, PREC_POW, PREC_UNARY, Op, register_op
from .term import Term


def _power(base: Any, exponent: Any) -> Any:
    """numpy's power, with one value for every exponent shape and size.

    numpy computes ``a**0.5`` as ``sqrt(a)`` and ``a**2`` as ``a*a`` for a scalar exponent (nan at
    -inf, -0.0 at -0.0; the rounded square) but with C's pow for an array of exponents (inf and 0.0;
    a square off by an ulp at some points): 0.5 is read as sqrt and 2 as a square everywhere here. A
    float to an odd int64 power keeps the base's sign even above 2**53, where the exponent
    converted to a float would be even. (The C helpers ``eg_pow_dd`` and ``eg_pow_di`` agree.)
    """
    base = np.asarray(base)
    exponent = np.asarray(exponent)
    out = np.power(base, exponent)
    if out.dtype.kind != "f":
        return out
    if exponent.ndim and exponent.dtype.kind in "fiu":
        two = exponent == 2
        if two.any():
            out = np.where(two, np.square(base.astype(out.dtype)), out)  # (in the result's dtype, as sqrt below)
    if exponent.dtype.kind == "f":
        half = exponent == 0.5
        if half.any():
            out = np.where(half, np.sqrt(base.astype(out.dtype)), out)  # a float32 base of a float64 power: in float64
    elif exponent.dtype.kind in "iu" and base.dtype.kind == "f":
        odd = (exponent & 1).astype(bool)
        if odd.any():
            out = np.where(odd, np.copysign(out, base), out)
    return out


def _grad_add(node: Any, g: Any) -> tuple:
    # d(a + b + ...)/da = 1
    c = _O.const
    args = node.args
    if len(args) == 2:
        a, b = args
        return (None if a.op is c else g, None if b.op is c else g)
    return tuple(None if a.op is c else g for a in args)


def _grad_sub(node: Any, g: Any) -> tuple:
    # d(a - b) = da - db
    a, b = node.args
    c = _O.const
    return (None if a.op is c else g, None if b.op is c else negate(g))


def _grad_mul(node: Any, g: Any) -> tuple:
    # d(a*b*c)/da = b*c; prefix and suffix products keep many operands linear in size
    args = node.args
    n = len(args)
    c = _O.const
    if n == 2:
        a, b = args
        return (None if a.op is c else product(g, (b,)), None if b.op is c else product(g, (a,)))
    if n <= 4:
        return tuple(None if a.op is c else product(g, args[:i] + args[i + 1 :]) for i, a in enumerate(args))
    mul = _O.mul
    prefix: list = [None]
    for a in args[:-1]:
        prefix.append(a if prefix[-1] is None else Term(mul, (prefix[-1], a)))
    suffix: list = [None]
    for a in reversed(args[1:]):
        suffix.append(a if suffix[-1] is None else Term(mul, (a, suffix[-1])))
    suffix.reverse()
    out = []
    for i, a in enumerate(args):
        factors = tuple(f for f in (prefix[i], suffix[i]) if f is not None)
        out.append(None if a.op is c else product(g, factors))
    return tuple(out)


def _grad_truediv(node: Any, g: Any) -> tuple:
    # d(a/b)/da = 1/b, d(a/b)/db = -(a/b)/b (a factor that does not depend on g: every user shares it;
    # times folds (-h) * -((a/b)/b) -> h * ((a/b)/b))
    a, b = node.args
    c, truediv = _O.const, _O.truediv
    da = None if a.op is c else Term(truediv, (g, b))
    db = None if b.op is c else times(g, Term(_O.neg, (Term(truediv, (node, b)),)))
    return da, db


def _grad_mod(node: Any, g: Any) -> tuple:
    # a % b = a - b*floor(a/b): d/da = 1 and d/db = -floor(a/b), away from the jumps at multiples of b
    a, b = node.args
    c = _O.const
    return (None if a.op is c else g, None if b.op is c else negate(times(g, Term(_O.floordiv, (a, b)))))


def _grad_pow(node: Any, g: Any) -> tuple:
    # d(a**b)/da = b*a**(b-1), d(a**b)/db = a**b * log(a) (nan for a < 0, as the real power is)
    a, b = node.args
    c = _O.const
    da = db = None
    if a.op is not c:
        if b.op is c and b.attr.__class__ in (bool, int, float, np.float32):
            e = b.attr
            if e != 0:  # a**0 is the constant 1
                e = e - 1
                if e == 0:
                    da = times(g, b)
                else:
                    if e.__class__ is int and e < 0 and a.dtype != FLOAT64:
                        e = float(e)  # an int base to a negative int power is not an int64
                    da = product(g, (b, a if e == 1 else Term(_O.pow, (a, const(e)))))
        else:
            da = product(g, (b, Term(_O.pow, (a, Term(_O.sub, (b, _one(b)))))))
    if b.op is not c:
        db = product(g, (node, Term(_O.log, (a,))))
    return da, db


def _grad_neg(node: Any, g: Any) -> tuple:
    # d(-a) = -da
    return (negate(g),)


def _grad_abs(node: Any, g: Any) -> tuple:
    # d|a|/da = sign(a), taking 1 at a == 0 (a subgradient)
    (a,) = node.args
    return (Term(_O.where, (Term(_O.lt, (a, _O.zero_int)), negate(g), g)),)


def _as_numbers(a: Any, b: Any) -> tuple[Any, Any]:
    """Operands as arrays, bools counted as integers (as ``arith`` types them), or as the other operand's float
    dtype beside a float (as a float32 beside a bool is computed in float32, not widened by an int64)."""
    a, b = np.asarray(a), np.asarray(b)
    return _as_number(a, b), _as_number(b, a)


def _as_number(x: Any, other: Any) -> Any:
    """``x``, a bool array as ``other``'s float dtype or as int64."""
    if x.dtype.kind != "b":
        return x
    return x.astype(other.dtype if other.dtype.kind == "f" else np.int64)


def _truncdiv(a: Any, b: Any) -> Any:
    a, b = _as_numbers(a, b)
    with np.errstate(all="ignore"):  # x/0 is inf or nan for floats, 0 for integers; MIN/-1 wraps
        if np.result_type(a, b).kind == "f":
            return np.trunc(np.true_divide(a, b))
        zero = b == 0
        safe = np.where(zero, 1, b)
        # a - fmod(a, b) is an exact multiple of b, so floor division gives the truncated quotient
        return np.where(zero, 0, (a - np.fmod(a, safe)) // safe)


def _fmod(a: Any, b: Any) -> Any:
    a, b = _as_numbers(a, b)
    with np.errstate(all="ignore"):  # fmod(x, 0) is nan for floats, 0 for integers
        return np.fmod(a, b)


_POSITIVE_LITERAL = re.compile(r"[1-9][0-9]*|INT64_C\([1-9][0-9]*\)")


def _c_truncdiv(a: str, b: str) -> str:
    # a positive integer literal divisor cannot trap: C's own / is the op
    return f"({a} / {b})" if _POSITIVE_LITERAL.fullmatch(b) else f"eg_truncdiv({a}, {b})"


def _c_fmod(a: str, b: str) -> str:
    return f"({a} % {b})" if _POSITIVE_LITERAL.fullmatch(b) else f"eg_fmod({a}, {b})"


def _grad_fmod(node: Any, g: Any) -> tuple:
    # fmod(a, b) = a - b*trunc(a/b): d/da = 1 and d/db = -trunc(a/b), away from the jumps at multiples of b
    a, b = node.args
    c = _O.const
    return (None if a.op is c else g, None if b.op is c else negate(times(g, Term(_O.truncdiv, (a, b)))))


register_op(Op("symbol", 0, symbol_infer, notation="leaf", doc="A named input."))


register_op(Op("const", 0, const_infer, notation="leaf", attr_key=const_key, doc="A constant value."))


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
    grad=_grad_add,
    llvm=_ir_arith("fadd", "add"),
    counts_bools=True,
    doc="Sum; variadic (prints as add(...) with >2 operands).",
)


_infix(
    "sub",
    "-",
    PREC_ADD,
    arith,
    np.subtract,
    "({0} - {1})",
    grad=_grad_sub,
    llvm=_ir_arith("fsub", "sub"),
    counts_bools=True,
    doc="Difference.",
)


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
    grad=_grad_mul,
    llvm=_ir_arith("fmul", "mul"),
    counts_bools=True,
    doc="Product; variadic like add.",
)


_infix(
    "truediv",
    "/",
    PREC_MUL,
    real,
    np.true_divide,
    "({0} / {1})",
    domain=(ALL_REALS, NONZERO),
    grad=_grad_truediv,
    llvm={FLOAT64: "fdiv double {0}, {1}", FLOAT32: "fdiv float {0}, {1}"},
    float_result=True,
    doc="True division (float result).",
)


_infix(
    "floordiv",
    "//",
    PREC_MUL,
    arith,
    np.floor_divide,
    "eg_floordiv({0}, {1})",
    domain=(ALL_REALS, NONZERO),
    grad=_no_grad,
    llvm=_ir_call2("eg_floordiv_d", "eg_floordiv_i"),
    counts_bools=True,
    doc="Floor division (Python semantics).",
)


_infix(
    "mod",
    "%",
    PREC_MUL,
    arith,
    np.mod,
    "eg_mod({0}, {1})",
    domain=(ALL_REALS, NONZERO),
    grad=_grad_mod,
    llvm=_ir_call2("eg_mod_d", "eg_mod_i"),
    counts_bools=True,
    doc="Modulo with the divisor's sign (Python semantics).",
)


register_op(
    Op(
        "truncdiv",
        2,
        arith,
        impl=_truncdiv,
        c_render=_c_truncdiv,
        domain=(ALL_REALS, NONZERO),
        grad=_no_grad,
        llvm=_ir_call2("eg_truncdiv_d", "eg_truncdiv_i"),
        doc="Quotient rounded toward zero (C's integer /): 0 for a zero integer divisor, trunc(a/b) for floats.",
    )
)


register_op(
    Op(
        "fmod",
        2,
        arith,
        impl=_fmod,
        c_render=_c_fmod,
        domain=(ALL_REALS, NONZERO),
        grad=_grad_fmod,
        # frem is libm's fmod (and lowers to it); a call of @fmod with a NaN constant was folded to garbage
        llvm={**_ir_arith("frem", ""), INT64: "call i64 @eg_fmod_i(i64 {0}, i64 {1})"},
        doc="Remainder with the dividend's sign (C's % and fmod): 0 for a zero integer divisor.",
    )
)


_infix(
    "pow",
    "**",
    PREC_POW,
    arith,
    np.power,
    "eg_pow({0}, {1})",
    assoc="right",
    identity=1,
    impl=_power,
    domain=(POSITIVE, ALL_REALS),
    grad=_grad_pow,
    grad_reads_constants=True,
    llvm={
        FLOAT64: "call double @eg_pow_dd(double {0}, double {1})",
        FLOAT32: "call float @eg_pow_ff(float {0}, float {1})",
        "float64,int64": "call double @eg_pow_di(double {0}, i64 {1})",
        INT64: "call i64 @eg_pow_i(i64 {0}, i64 {1}, ptr %errp)",
    },
    counts_bools=True,
    libmvec="pow",
    doc="Power (a**0.5 is sqrt(a); a float to an odd integer power keeps its sign).",
)


_prefix(
    "neg",
    "-",
    PREC_UNARY,
    arith,
    np.negative,
    "(-{0})",
    grad=_grad_neg,
    llvm={FLOAT64: "fneg double {0}", FLOAT32: "fneg float {0}", INT64: "sub i64 0, {0}"},
    counts_bools=True,
    doc="Negation.",
)


_call(
    "abs",
    1,
    arith,
    "eg_abs({0})",
    np.absolute,
    domain=(NONZERO,),
    grad=_grad_abs,
    llvm={
        **_ir_math("llvm.fabs.f64"),
        INT64: "call i64 @llvm.abs.i64(i64 {0}, i1 false)",
    },
    counts_bools=True,
    doc="Absolute value.",
)
