"""The standard table, trigonometric and hyperbolic functions beyond sin, cos, tan and tanh: the
inverse functions, ``sinh``/``cosh`` and their inverses, ``atan2`` and ``hypot``.

Each op is declared next to its numpy evaluation and its gradient rule; importing this module
registers them. Imports the lower core modules and the op-building helpers.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .declare import _call
from .grad_tools import _O, _one, _square, times
from .inference import real
from .llvm_ir import _ir_math, _ir_math2
from .op import ALL_REALS, NONZERO
from .term import Term

#: (-1, 1): where asin, acos and atanh are defined and smooth
_UNIT = ((-1.0, 1.0),)


def _over(g: Any, t: Any) -> Term:
    return Term(_O.truediv, (g, t))


def _grad_asin(node: Any, g: Any) -> tuple:
    # d asin(a) = da / sqrt(1 - a**2)
    (a,) = node.args
    return (_over(g, Term(_O.sqrt, (Term(_O.sub, (_one(node), _square(a))),))),)


def _grad_acos(node: Any, g: Any) -> tuple:
    # d acos(a) = -da / sqrt(1 - a**2)
    (a,) = node.args
    return (Term(_O.neg, (_over(g, Term(_O.sqrt, (Term(_O.sub, (_one(node), _square(a))),))),)),)


def _grad_atan(node: Any, g: Any) -> tuple:
    # d atan(a) = da / (1 + a**2)
    (a,) = node.args
    return (_over(g, Term(_O.add, (_one(node), _square(a)))),)


def _grad_sinh(node: Any, g: Any) -> tuple:
    # d sinh(a) = cosh(a) da
    return (times(g, Term(_O.cosh, node.args)),)


def _grad_cosh(node: Any, g: Any) -> tuple:
    # d cosh(a) = sinh(a) da
    return (times(g, Term(_O.sinh, node.args)),)


def _grad_asinh(node: Any, g: Any) -> tuple:
    # d asinh(a) = da / sqrt(a**2 + 1)
    (a,) = node.args
    return (_over(g, Term(_O.sqrt, (Term(_O.add, (_square(a), _one(node))),))),)


def _grad_acosh(node: Any, g: Any) -> tuple:
    # d acosh(a) = da / sqrt(a**2 - 1)   (a > 1)
    (a,) = node.args
    return (_over(g, Term(_O.sqrt, (Term(_O.sub, (_square(a), _one(node))),))),)


def _grad_atanh(node: Any, g: Any) -> tuple:
    # d atanh(a) = da / (1 - a**2)
    (a,) = node.args
    return (_over(g, Term(_O.sub, (_one(node), _square(a)))),)


def _grad_atan2(node: Any, g: Any) -> tuple:
    # atan2(y, x) = the angle of (x, y): d = (x dy - y dx) / (x**2 + y**2)
    y, x = node.args
    c = _O.const
    r2 = Term(_O.add, (_square(x), _square(y)))
    dy = None if y.op is c else _over(times(g, x), r2)
    dx = None if x.op is c else Term(_O.neg, (_over(times(g, y), r2),))
    return dy, dx


def _grad_hypot(node: Any, g: Any) -> tuple:
    # hypot(a, b) = sqrt(a**2 + b**2): d = (a da + b db) / hypot(a, b)
    a, b = node.args
    c = _O.const
    return (
        None if a.op is c else _over(times(g, a), node),
        None if b.op is c else _over(times(g, b), node),
    )


def _unary(name: str, c: str, ufunc: Any, grad: Any, doc: str, domain: Any = None, libmvec: str | None = None) -> None:
    _call(
        name,
        1,
        real,
        f"{c}({{0}})",
        ufunc,
        domain=None if domain is None else (domain,),
        grad=grad,
        llvm=_ir_math(c),
        float_result=True,
        libmvec=libmvec,
        doc=doc,
    )


_unary("asin", "asin", np.arcsin, _grad_asin, "Inverse sine (nan outside [-1, 1]).", _UNIT, "asin")
_unary("acos", "acos", np.arccos, _grad_acos, "Inverse cosine (nan outside [-1, 1]).", _UNIT, "acos")
_unary("atan", "atan", np.arctan, _grad_atan, "Inverse tangent.", libmvec="atan")
_unary("sinh", "sinh", np.sinh, _grad_sinh, "Hyperbolic sine.", libmvec="sinh")
_unary("cosh", "cosh", np.cosh, _grad_cosh, "Hyperbolic cosine.", libmvec="cosh")
_unary("asinh", "asinh", np.arcsinh, _grad_asinh, "Inverse hyperbolic sine.", libmvec="asinh")
_unary("acosh", "acosh", np.arccosh, _grad_acosh, "Inverse hyperbolic cosine (nan below 1).", ((1.0, np.inf),), "acosh")
_unary("atanh", "atanh", np.arctanh, _grad_atanh, "Inverse hyperbolic tangent (nan outside [-1, 1]).", _UNIT, "atanh")


_call(
    "atan2",
    2,
    real,
    "atan2({0}, {1})",
    np.arctan2,
    domain=(ALL_REALS, NONZERO),
    grad=_grad_atan2,
    llvm=_ir_math2("atan2"),
    float_result=True,
    libmvec="atan2",
    doc="atan2(y, x): the angle of the point (x, y), in [-pi, pi].",
)


_call(
    "hypot",
    2,
    real,
    "hypot({0}, {1})",
    np.hypot,
    domain=(NONZERO, NONZERO),
    commutative=True,
    grad=_grad_hypot,
    llvm=_ir_math2("hypot"),
    float_result=True,
    doc="hypot(a, b) = sqrt(a**2 + b**2) without overflow or underflow in the squares.",
)
