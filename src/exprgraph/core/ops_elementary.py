"""The standard table, elementary functions: exp, log (and log2, log10), sqrt, sin, cos, tan, tanh,
sigmoid, the error function, and the numerically stable forms (log1p, expm1, softplus, log_sigmoid,
logaddexp).

Each op is declared next to its numpy evaluation and its gradient rule; importing this module
registers them. Imports the lower core modules and the op-building helpers.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .declare import _call
from .dtypes import FLOAT32
from .grad_tools import _O, _one, _square, _two, times
from .inference import real
from .leaves import const
from .llvm_ir import _ir_math, _ir_math2
from .op import POSITIVE
from .term import Term


def _floats(x: Any) -> Any:
    """``x`` as a float array: float32 stays float32, anything else is float64."""
    x = np.asarray(x)
    return x if x.dtype == np.float32 else x.astype(np.float64)


def _sigmoid(x: Any) -> Any:
    # 1/(1+exp(-x)) = e/(1+e) with e = exp(x) for x < 0: no overflow, full relative precision
    x = _floats(x)
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


def _softplus(x: Any) -> Any:
    # log(1 + exp(x)) = max(x, 0) + log1p(exp(-|x|)): numpy's logaddexp(0, x), no overflow
    x = _floats(x)
    return np.logaddexp(x.dtype.type(0), x)


def _log_sigmoid(x: Any) -> Any:
    # log(sigmoid(x)) = log(1/(1 + exp(-x))) = -softplus(-x)
    x = _floats(x)
    return -np.logaddexp(x.dtype.type(0), -x)


def _libm(fn: Any) -> Any:
    """A numpy function from a scalar libm function (numpy has no erf): the C library's own values."""
    each = np.frompyfunc(fn, 1, 1)

    def apply(x: Any) -> Any:
        x = _floats(x)
        return each(x).astype(x.dtype) if x.ndim else x.dtype.type(fn(float(x)))

    return apply


def _like(value: float, like: Any) -> Term:
    """The constant ``value`` in ``like``'s float dtype (float32 gradients stay float32)."""
    return const(np.float32(value) if like.dtype == FLOAT32 else float(value))


def _grad_exp(node: Any, g: Any) -> tuple:
    # d exp(a) = exp(a) da
    return (times(g, node),)


def _grad_log(node: Any, g: Any) -> tuple:
    # d log(a) = da / a
    return (Term(_O.truediv, (g, node.args[0])),)


def _grad_log_base(base: float) -> Any:
    def rule(node: Any, g: Any) -> tuple:
        # d log_b(a) = da / (a log(b))
        return (Term(_O.truediv, (g, Term(_O.mul, (node.args[0], _like(math.log(base), node))))),)

    return rule


def _grad_error_function(sign: float) -> Any:
    def rule(node: Any, g: Any) -> tuple:
        # d erf(a) = 2/sqrt(pi) exp(-a**2) da;  d erfc(a) = -2/sqrt(pi) exp(-a**2) da
        (a,) = node.args
        gauss = Term(_O.exp, (Term(_O.neg, (_square(a),)),))
        return (times(g, Term(_O.mul, (_like(sign * 2 / math.sqrt(math.pi), node), gauss))),)

    return rule


_grad_erf = _grad_error_function(1.0)
_grad_erfc = _grad_error_function(-1.0)


def _grad_sqrt(node: Any, g: Any) -> tuple:
    # d sqrt(a) = da / (2 sqrt(a))
    return (Term(_O.truediv, (g, Term(_O.mul, (_two(node), node)))),)


def _grad_sin(node: Any, g: Any) -> tuple:
    # d sin(a) = cos(a) da
    return (times(g, Term(_O.cos, node.args)),)


def _grad_cos(node: Any, g: Any) -> tuple:
    # d cos(a) = -sin(a) da (the factor -sin(a) does not depend on g: every user shares it;
    # times folds (-h) * -sin(a) -> h * sin(a))
    return (times(g, Term(_O.neg, (Term(_O.sin, node.args),))),)


def _grad_tan(node: Any, g: Any) -> tuple:
    # d tan(a) = (1 + tan(a)**2) da
    return (times(g, Term(_O.add, (_one(node), _square(node)))),)


def _grad_tanh(node: Any, g: Any) -> tuple:
    # d tanh(a) = (1 - tanh(a)**2) da
    return (times(g, Term(_O.sub, (_one(node), _square(node)))),)


def _grad_sigmoid(node: Any, g: Any) -> tuple:
    # d s(a) = s(a) (1 - s(a)) da
    return (times(g, Term(_O.mul, (node, Term(_O.sub, (_one(node), node))))),)


def _grad_log1p(node: Any, g: Any) -> tuple:
    # d log1p(a) = da / (1 + a)
    (a,) = node.args
    return (Term(_O.truediv, (g, Term(_O.add, (_one(node), a)))),)


def _grad_expm1(node: Any, g: Any) -> tuple:
    # d expm1(a) = exp(a) da
    return (times(g, Term(_O.exp, node.args)),)


def _grad_softplus(node: Any, g: Any) -> tuple:
    # d log(1 + exp(a)) = exp(a)/(1 + exp(a)) da = sigmoid(a) da
    return (times(g, Term(_O.sigmoid, node.args)),)


def _grad_log_sigmoid(node: Any, g: Any) -> tuple:
    # d log(sigmoid(a)) = (1 - sigmoid(a)) da = sigmoid(-a) da
    return (times(g, Term(_O.sigmoid, (Term(_O.neg, node.args),))),)


def _grad_logaddexp(node: Any, g: Any) -> tuple:
    # d log(exp(a) + exp(b)) = (exp(a) da + exp(b) db)/(exp(a) + exp(b)) = sigmoid(a - b) da + sigmoid(b - a) db
    a, b = node.args
    c, sig, sub = _O.const, _O.sigmoid, _O.sub
    da = None if a.op is c else times(g, Term(sig, (Term(sub, (a, b)),)))
    db = None if b.op is c else times(g, Term(sig, (Term(sub, (b, a)),)))
    return da, db


_call(
    "exp",
    1,
    real,
    "exp({0})",
    np.exp,
    grad=_grad_exp,
    llvm=_ir_math("llvm.exp.f64"),
    float_result=True,
    libmvec="exp",
    doc="Exponential.",
)


_call(
    "log",
    1,
    real,
    "log({0})",
    np.log,
    domain=(POSITIVE,),
    grad=_grad_log,
    llvm=_ir_math("llvm.log.f64"),
    float_result=True,
    libmvec="log",
    doc="Natural logarithm (nan below 0, -inf at 0).",
)


for _name, _ufunc, _base in (("log2", np.log2, 2.0), ("log10", np.log10, 10.0)):
    _call(
        _name,
        1,
        real,
        f"{_name}({{0}})",
        _ufunc,
        domain=(POSITIVE,),
        grad=_grad_log_base(_base),
        llvm=_ir_math(_name),
        float_result=True,
        libmvec=_name,
        doc=f"Logarithm to base {int(_base)} (nan below 0, -inf at 0).",
    )


for _name, _fn, _grad, _doc in (
    ("erf", math.erf, _grad_erf, "The error function 2/sqrt(pi) * integral of exp(-t**2) from 0 to x."),
    ("erfc", math.erfc, _grad_erfc, "The complementary error function 1 - erf(x), accurate where erf(x) is near 1."),
):
    _call(
        _name,
        1,
        real,
        f"{_name}({{0}})",
        impl=_libm(_fn),
        grad=_grad,
        llvm=_ir_math(_name),
        float_result=True,
        libmvec=_name,
        doc=_doc,
    )


_call(
    "sqrt",
    1,
    real,
    "sqrt({0})",
    np.sqrt,
    domain=(POSITIVE,),
    grad=_grad_sqrt,
    llvm=_ir_math("llvm.sqrt.f64"),
    float_result=True,
    doc="Square root (nan below 0).",
)


_call(
    "sin",
    1,
    real,
    "sin({0})",
    np.sin,
    grad=_grad_sin,
    llvm=_ir_math("llvm.sin.f64"),
    float_result=True,
    libmvec="sin",
    doc="Sine.",
)


_call(
    "cos",
    1,
    real,
    "cos({0})",
    np.cos,
    grad=_grad_cos,
    llvm=_ir_math("llvm.cos.f64"),
    float_result=True,
    libmvec="cos",
    doc="Cosine.",
)


_call(
    "tan",
    1,
    real,
    "tan({0})",
    np.tan,
    domain=(((-np.pi / 2, np.pi / 2),),),
    grad=_grad_tan,
    llvm=_ir_math("tan"),
    float_result=True,
    libmvec="tan",
    doc="Tangent.",
)


_call(
    "tanh",
    1,
    real,
    "tanh({0})",
    np.tanh,
    grad=_grad_tanh,
    llvm=_ir_math("tanh"),
    float_result=True,
    libmvec="tanh",
    doc="Hyperbolic tangent.",
)


_call(
    "sigmoid",
    1,
    real,
    "eg_sigmoid({0})",
    impl=_sigmoid,
    grad=_grad_sigmoid,
    llvm=_ir_math("eg_sigmoid_d"),
    float_result=True,
    doc="Logistic function 1/(1+exp(-x)).",
)


_call(
    "log1p",
    1,
    real,
    "log1p({0})",
    np.log1p,
    domain=(((-1.0, np.inf),),),
    grad=_grad_log1p,
    llvm=_ir_math("log1p"),
    float_result=True,
    libmvec="log1p",
    doc="log(1 + x), accurate for small x (nan below -1, -inf at -1).",
)


_call(
    "expm1",
    1,
    real,
    "expm1({0})",
    np.expm1,
    grad=_grad_expm1,
    llvm=_ir_math("expm1"),
    float_result=True,
    libmvec="expm1",
    doc="exp(x) - 1, accurate for small x.",
)


_call(
    "softplus",
    1,
    real,
    "eg_softplus({0})",
    impl=_softplus,
    grad=_grad_softplus,
    llvm=_ir_math("eg_softplus_d"),
    float_result=True,
    doc="log(1 + exp(x)) without overflow: max(x, 0) + log1p(exp(-|x|)).",
)


_call(
    "log_sigmoid",
    1,
    real,
    "eg_log_sigmoid({0})",
    impl=_log_sigmoid,
    grad=_grad_log_sigmoid,
    llvm=_ir_math("eg_log_sigmoid_d"),
    float_result=True,
    doc="log(sigmoid(x)) = -softplus(-x), without overflow or log(0).",
)


_call(
    "logaddexp",
    2,
    real,
    "eg_logaddexp({0}, {1})",
    np.logaddexp,
    commutative=True,
    grad=_grad_logaddexp,
    llvm=_ir_math2("eg_logaddexp_d"),
    float_result=True,
    doc="log(exp(a) + exp(b)) without overflow: max(a, b) + log1p(exp(-|a - b|)) (numpy's logaddexp).",
)
