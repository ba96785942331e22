"""The standard op table: every built-in op, declared once with all it means to each layer."""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from ..errors import ShapeError
from .dtypes import BOOL, DTYPES, FLOAT32, FLOAT64, INT64, is_float, promote
from .leaves import const, const_infer, const_key, symbol_infer
from .op import (
    ALL_REALS,
    NONZERO,
    POSITIVE,
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
from .term import REGISTRY, Term

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


def _numeric(dtype: str) -> str:
    """Arithmetic counts bools as integers: a bool result is an int64 one."""
    return INT64 if dtype == BOOL else dtype


_ARITH2 = {(a, b): _numeric(promote(a, b)) for a in DTYPES for b in DTYPES}


def arith(args: tuple, attr: Any) -> tuple[str, tuple]:
    """Elementwise arithmetic: bools count as integers (True + True == 2)."""
    if len(args) == 2:
        a, b = args
        sa, sb = a.shape, b.shape
        return _ARITH2[a.dtype, b.dtype], (sb if not sa else sa if not sb or sa is sb else _shape(args))
    scalar = True
    for a in args:
        if a.shape:
            scalar = False
    return _numeric(promote(*(a.dtype for a in args))), (() if scalar else _shape(args))


def same(args: tuple, attr: Any) -> tuple[str, tuple]:
    """Elementwise, result in the promoted operand dtype (max/min keep bools)."""
    return promote(*(a.dtype for a in args)), _shape(args)


def real(args: tuple, attr: Any) -> tuple[str, tuple]:
    """Elementwise with a float result (division, transcendental functions): float32 for float32
    operands (with bools), float64 otherwise."""
    return (FLOAT32 if promote(*(a.dtype for a in args)) == FLOAT32 else FLOAT64), _shape(args)


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
    dtype = _numeric(promote(a.dtype, b.dtype))
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
    dtype = _numeric(promote(a.dtype, b.dtype))
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
    return _numeric(x.dtype), tuple(d for i, d in enumerate(x.shape) if i not in axes)


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


def _power(base: Any, exponent: Any) -> Any:
    """numpy's power, with one value for every exponent shape and size.

    numpy computes ``a**0.5`` as ``sqrt(a)`` for a scalar exponent (nan at -inf, -0.0 at -0.0) but
    with C's pow for an array of exponents (inf and 0.0): 0.5 is read as sqrt everywhere here. A
    float to an odd int64 power keeps the base's sign even above 2**53, where the exponent
    converted to a float would be even. (The C helpers ``eg_pow_dd`` and ``eg_pow_di`` agree.)
    """
    base = np.asarray(base)
    exponent = np.asarray(exponent)
    out = np.power(base, exponent)
    if out.dtype.kind != "f":
        return out
    if exponent.dtype.kind == "f":
        half = exponent == 0.5
        if half.any():
            out = np.where(half, np.sqrt(base.astype(out.dtype)), out)  # a float32 base of a float64 power: in float64
    elif exponent.dtype.kind in "iu" and base.dtype.kind == "f":
        odd = (exponent & 1).astype(bool)
        if odd.any():
            out = np.where(odd, np.copysign(out, base), out)
    return out


def _sum(x: Any, attr: Any = None) -> Any:
    return np.sum(x, axis=_axis_key(attr))


def _batch_axes(attr: Any, ndim: int, value_ndim: int) -> Any:
    """Axes of a term with ``ndim`` axes, read on a value with leading batch axes: the trailing ones."""
    lead = value_ndim - ndim
    axes = range(ndim) if attr is None else ((attr,) if isinstance(attr, int) else attr)
    return tuple(lead + a % ndim for a in axes) if ndim else ()


def _batch_perm(attr: Any, ndim: int, value_ndim: int) -> Any:
    """A permutation of a term's axes, extended to leave the leading batch axes in place."""
    lead = value_ndim - ndim
    perm = range(ndim - 1, -1, -1) if attr is None else attr
    return (*range(lead), *(lead + a % ndim for a in perm))


def _transpose(x: Any, attr: Any = None) -> Any:
    return np.transpose(x, attr)


def _nary(ufunc: Any) -> Any:
    def apply(*values: Any) -> Any:
        out = ufunc(values[0], values[1])
        for v in values[2:]:
            out = ufunc(out, v)
        return out

    return apply


# -- gradient rules ----------------------------------------------------------------------------------
#
# ``grad(node, g)`` gets ``g = df/dnode`` (a term of the node's shape) and returns one contribution
# per operand: a term for that operand's share of ``df/doperand``, or None where it is zero (and for
# constant operands, which are never differentiated). A contribution may keep the node's broadcast
# shape: reverse mode (``exprgraph.diff``) sums it back to the operand's shape with :func:`sum_to`.
# Rules are written with the ops of this table, so gradients are terms like any other: they can be
# simplified, differentiated again and compiled. Derivatives at kinks and jumps are one-sided
# choices, stated on each rule. Rules build terms with ``Term(op, args)`` directly (no wrapping of
# Python numbers to do) and fold the identities a sweep meets at every node (``1*t``, ``t*1.0``,
# ``c1*c2``, ``(1/b)*t``, ``-(-t)``, ``-(c*t)``; see product and negate). A factor that does not
# depend on ``g`` is built on its own (``g * -sin(a)``, not ``-(g*sin(a))``), so that the users of a
# node in second and later sweeps share it.


_NUMBERS = {
    "one": 1.0,
    "one_int": 1,
    "zero": 0.0,
    "zero_int": 0,
    "two": 2.0,
    "two_int": 2,
    "one32": np.float32(1.0),
    "zero32": np.float32(0.0),
    "two32": np.float32(2.0),
}


class _Lazy:
    """Ops and constants of the table, looked up on first use (the table is complete by then)."""

    def __getattr__(self, name: str) -> Any:
        value = const(_NUMBERS[name]) if name in _NUMBERS else REGISTRY[name]
        setattr(self, name, value)  # later reads find the instance attribute: no lookup
        return value


_O = _Lazy()


def _one(like: Any) -> Any:
    """1.0 in ``like``'s float dtype (float32 terms keep their gradients float32), else float64."""
    return _O.one32 if like.dtype == FLOAT32 else _O.one


def _zero(like: Any) -> Any:
    """0.0 in ``like``'s float dtype (float32 for float32 terms, else float64)."""
    return _O.zero32 if like.dtype == FLOAT32 else _O.zero


def _two(like: Any) -> Any:
    """2.0 in ``like``'s float dtype (float32 for float32 terms, else float64)."""
    return _O.two32 if like.dtype == FLOAT32 else _O.two


def product(g: Any, factors: Any) -> Any:
    """``g * factors[0] * ...`` as one mul; folds ``c1*c2``, ``1*t``, ``t*1.0`` and ``(1/b)*t -> t/b`` when float."""
    first = factors[0]
    k = _O.const
    if g.op is k and first.op is k:
        a, b = g.attr, first.attr
        if (a.__class__ is float and b.__class__ in (int, float)) or (b.__class__ is float and a.__class__ is int):
            g = const(a * b)  # c1*c2 -> c: the same rounding as evaluating the product left to right
            factors = factors[1:]
            if not factors:
                return g
            first = factors[0]
    one = _one(g)
    if one in factors and is_float(g.dtype):  # t*1.0 -> t: exact for a float product of g's dtype
        factors = tuple(f for f in factors if f is not one)
        if not factors:
            return g
        first = factors[0]
    if g is _O.one or g is _O.one_int or g is _O.one32:
        # 1*t -> t when the product of the factors is a float that g does not widen (else g decides the dtype)
        dt = first.dtype if len(factors) == 1 else _numeric(promote(*(f.dtype for f in factors)))
        if is_float(dt) and _ARITH2[g.dtype, dt] == dt:
            return first if len(factors) == 1 else Term(_O.mul, tuple(factors))
    elif len(factors) == 1 and is_float(g.dtype) and g.dtype == first.dtype:
        if g.op is _O.truediv and g.args[0] is one:
            return Term(_O.truediv, (first, g.args[1]))  # (1/b)*t -> t/b: one rounding fewer
        if first.op is _O.truediv and first.args[0] is one:
            return Term(_O.truediv, (g, first.args[1]))  # g*(1/b) -> g/b
    return Term(_O.mul, (g, *factors))


def times(g: Any, t: Any) -> Any:
    """``g * t`` with the folds of :func:`product`."""
    return product(g, (t,))


def negate(g: Any) -> Any:
    """``-g``: a constant for a scalar number, ``-(-t) -> t``, ``-(c*t) -> (-c)*t``, else a neg term."""
    op = g.op
    cls = g.attr.__class__
    if op is _O.const and (cls is float or cls is np.float32 or (cls is int and g.attr != -(2**63))):
        return const(-g.attr)
    if op is _O.neg:
        return g.args[0]
    if op is _O.mul:
        first = g.args[0]
        if first.op is _O.const and first.attr.__class__ is float:  # -(c*t) -> (-c)*t: exact
            return Term(_O.mul, (const(-first.attr), *g.args[1:]))
    return Term(_O.neg, (g,))


#: numpy type of the ones that widen a term of each dtype (multiplying by them changes no value or dtype)
_ONES = {FLOAT64: np.float64, FLOAT32: np.float32}


def _same_shape(a: tuple, b: tuple) -> bool:
    # ints compare by value, symbolic dimensions by identity (Term == is identity)
    return a is b or a == b


def insert_axes(t: Any, positions: Any) -> Any:
    """``t`` with axes of length 1 inserted so that they sit at ``positions`` of the result."""
    positions = sorted(set(positions))
    k = len(positions)
    if not k:
        return t
    r = t.ndim + k
    ones = const(np.ones((1,) * r, dtype=_ONES.get(t.dtype, np.int64)))
    widened = Term(_O.mul, (ones, t))  # shape (1,)*k + t.shape: multiplying by 1 changes no value
    perm, next_one, next_t = [], 0, k
    for j in range(r):
        if j in positions:
            perm.append(next_one)
            next_one += 1
        else:
            perm.append(next_t)
            next_t += 1
    if perm == list(range(r)):
        return widened
    return _O.transpose(widened, axes=tuple(perm))


def broadcast_like(t: Any, like: Any) -> Any:
    """``t`` broadcast to the shape of ``like`` (whose values are not used, only its shape)."""
    if _same_shape(t.shape, like.shape):
        return t
    target = like.shape
    lead = len(target) - t.ndim
    if lead >= 0 and all(d.__class__ is int for d in target):
        # multiply by ones of shape (1, .., d, .., 1) for each axis to widen: small constants, no values
        out = t
        dtype = _ONES.get(t.dtype, np.int64)
        for i, d in enumerate(target):
            have = out.shape[i - len(target) + out.ndim] if i - len(target) + out.ndim >= 0 else 1
            if have != d:
                shape = [1] * len(target)
                shape[i] = d
                out = Term(_O.mul, (out, const(np.ones(shape, dtype=dtype))))
        return out
    # symbolic dimensions: where(c, t, t) is t everywhere and c = (like == like) lends its shape
    return Term(_O.where, (Term(_O.eq, (like, like)), t, t))


def sum_to(t: Any, like: Any) -> Any:
    """``t`` summed over the axes along which ``like`` was broadcast, so it gets ``like``'s shape."""
    target, shape = like.shape, t.shape
    if _same_shape(shape, target):
        return t
    lead = len(shape) - len(target)
    if lead < 0:
        return broadcast_like(t, like)
    axes = list(range(lead))
    kept = []
    for i, d in enumerate(target):
        td = shape[lead + i]
        if d is td or d == td:
            continue
        if d.__class__ is int and d == 1:
            axes.append(lead + i)  # like had length 1 here and was broadcast: sum, keep a length-1 axis
            kept.append(i)
        elif not (td.__class__ is int and td == 1):
            raise ShapeError(
                f"cannot sum a gradient of shape {shape} back to shape {target}: it is unknown whether "
                f"dimension {d} was broadcast against {td}"
            )
    out = t
    if axes:
        out = _O.sum(t, axis=None if len(axes) == len(shape) else tuple(axes))
        out = insert_axes(out, kept)
    if not _same_shape(out.shape, target):
        out = broadcast_like(out, like)
    return out


def no_grad(node: Any, g: Any) -> tuple:
    """Comparisons, logic, floordiv: piecewise constant, so the gradient is zero wherever it exists."""
    return (None,) * len(node.args)


_no_grad = no_grad


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
    # d(a/b)/da = 1/b, d(a/b)/db = -(a/b)/b (a factor that does not depend on g: every user shares it)
    a, b = node.args
    c, truediv = _O.const, _O.truediv
    da = None if a.op is c else Term(truediv, (g, b))
    if b.op is c:
        db = None
    elif g.op is _O.neg:  # (-h) * -((a/b)/b) -> h * ((a/b)/b)
        db = times(g.args[0], Term(truediv, (node, b)))
    else:
        db = times(g, Term(_O.neg, (Term(truediv, (node, b)),)))
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


def _grad_exp(node: Any, g: Any) -> tuple:
    # d exp(a) = exp(a) da
    return (times(g, node),)


def _grad_log(node: Any, g: Any) -> tuple:
    # d log(a) = da / a
    return (Term(_O.truediv, (g, node.args[0])),)


def _grad_sqrt(node: Any, g: Any) -> tuple:
    # d sqrt(a) = da / (2 sqrt(a))
    return (Term(_O.truediv, (g, Term(_O.mul, (_two(node), node)))),)


def _grad_sin(node: Any, g: Any) -> tuple:
    # d sin(a) = cos(a) da
    return (times(g, Term(_O.cos, node.args)),)


def _grad_cos(node: Any, g: Any) -> tuple:
    # d cos(a) = -sin(a) da (the factor -sin(a) does not depend on g: every user shares it)
    if g.op is _O.neg:  # (-h) * -sin(a) -> h * sin(a)
        return (times(g.args[0], Term(_O.sin, node.args)),)
    return (times(g, Term(_O.neg, (Term(_O.sin, node.args),))),)


def _square(t: Any) -> Any:
    return Term(_O.pow, (t, _O.two32 if t.dtype == FLOAT32 else _O.two_int))


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


def _grad_extremum(node: Any, g: Any) -> tuple:
    # d max(a, b, ...) flows to the first operand equal to the result (ties: the leftmost one)
    where, eq = _O.where, _O.eq
    zero = _zero(node)
    args = node.args
    out: list[Term | None] = []
    taken: Term | None = None  # "an earlier operand was the extremum"
    for i, a in enumerate(args):
        if i == len(args) - 1 and taken is not None:
            # the last operand takes g wherever no earlier one was the extremum
            out.append(None if a.op is _O.const else Term(where, (taken, zero, g)))
            break
        hit = Term(eq, (a, node))
        if a.op is _O.const:
            out.append(None)
        elif taken is None:
            out.append(Term(where, (hit, g, zero)))
        else:
            out.append(Term(where, (taken, zero, Term(where, (hit, g, zero)))))
        taken = hit if taken is None else Term(_O.logical_or, (taken, hit))
    return tuple(out)


def _grad_where(node: Any, g: Any) -> tuple:
    # where(c, a, b): the gradient goes to a where c holds, to b elsewhere (none to c)
    c, a, b = node.args
    where, zero, k = _O.where, _zero(node), _O.const
    return (None, None if a.op is k else Term(where, (c, g, zero)), None if b.op is k else Term(where, (c, zero, g)))


def _swap_last(t: Any) -> Any:
    """``t`` with its last two axes exchanged (the matrix transpose of each batch entry)."""
    if t.ndim == 2:
        return _O.transpose(t)
    return _O.transpose(t, axes=(*range(t.ndim - 2), t.ndim - 1, t.ndim - 2))


def _grad_matprod(node: Any, g: Any, prod: Op) -> tuple:
    # C = A @ B: dA = dC @ B^T, dB = A^T @ dC; vectors as in numpy (batch axes summed by sum_to)
    a, b = node.args
    if a.ndim <= 1 and b.ndim <= 1:  # dot of vectors or with a scalar: an elementwise product
        return (None if a.is_const else times(g, b), None if b.is_const else times(g, a))
    if a.ndim >= 2 and b.ndim >= 2:
        da = prod(g, _swap_last(b))
        db = prod(_swap_last(a), g)
    elif b.ndim == 1:  # (..., m, n) @ (n,) -> (..., m)
        da = insert_axes(g, [g.ndim]) * b
        if a.ndim == 2:
            db = prod(_swap_last(a), g)
        else:
            db = _O.sum(prod(_swap_last(a), insert_axes(g, [g.ndim])), axis=-1)
    else:  # (n,) @ (..., n, k) -> (..., k)
        da = prod(b, g) if b.ndim == 2 else _O.sum(prod(b, insert_axes(g, [g.ndim])), axis=-1)
        db = insert_axes(a, [1]) * (g if b.ndim == 2 else insert_axes(g, [g.ndim - 1]))
    return (None if a.is_const else da, None if b.is_const else db)


def _grad_dot(node: Any, g: Any) -> tuple:
    # dot with a scalar operand is a product; otherwise the matrix product rule
    a, b = node.args
    if not a.ndim or not b.ndim:
        return (None if a.is_const else times(g, b), None if b.is_const else times(g, a))
    return _grad_matprod(node, g, _O.dot)


def _grad_matmul(node: Any, g: Any) -> tuple:
    return _grad_matprod(node, g, _O.matmul)


def _grad_sum(node: Any, g: Any) -> tuple:
    # every summed entry gets the upstream value: put the summed axes back, then broadcast
    (x,) = node.args
    if node.attr is not None and x.ndim:
        axes = normalize_axes(node.attr, x.ndim, "sum")
        if len(axes) < x.ndim:
            g = insert_axes(g, axes)
    return (broadcast_like(g, x),)


def _grad_transpose(node: Any, g: Any) -> tuple:
    # the inverse permutation
    if node.attr is None:
        return (_O.transpose(g),)
    axes = normalize_axes(node.attr, node.args[0].ndim, "transpose")
    inverse = tuple(int(i) for i in np.argsort(axes))
    return (_O.transpose(g, axes=inverse),)


# -- LLVM IR templates (exprgraph.compile.llvm_emit puts the operands, cast to the compute dtype, in) ---


def _ir_single(fn: str) -> str:
    """The single precision name of a double function: ``llvm.exp.f32``, ``eg_mod_f``, ``eg_pow_ff``, ``tanf``."""
    if fn.endswith(".f64"):
        return fn[:-4] + ".f32"
    if fn.startswith("eg_"):
        return re.sub(r"_d(d?)$", lambda m: "_f" + ("f" if m.group(1) else ""), fn)
    return fn + "f"


def _ir_arith(float_op: str, int_op: str) -> dict[str, str]:
    """``a OP b`` on doubles, floats and int64 (bools are counted as integers, as ``arith`` types them)."""
    return {
        FLOAT64: f"{float_op} double {{0}}, {{1}}",
        FLOAT32: f"{float_op} float {{0}}, {{1}}",
        INT64: f"{int_op} i64 {{0}}, {{1}}",
    }


def _ir_compare(ordered: str, signed: str, unsigned: str) -> dict[str, str]:
    """A comparison of doubles or floats (ordered: false with nan, but ``ne``), int64s and bools."""
    return {
        FLOAT64: f"fcmp {ordered} double {{0}}, {{1}}",
        FLOAT32: f"fcmp {ordered} float {{0}}, {{1}}",
        INT64: f"icmp {signed} i64 {{0}}, {{1}}",
        BOOL: f"icmp {unsigned} i1 {{0}}, {{1}}",
    }


def _ir_call2(float_fn: str, int_fn: str) -> dict[str, str]:
    """A call of a two-operand helper or libm function, for doubles, floats and int64s."""
    return {
        FLOAT64: f"call double @{float_fn}(double {{0}}, double {{1}})",
        FLOAT32: f"call float @{_ir_single(float_fn)}(float {{0}}, float {{1}})",
        INT64: f"call i64 @{int_fn}(i64 {{0}}, i64 {{1}})",
    }


def _ir_math(fn: str) -> dict[str, str]:
    """A call of a one-operand function of a double, and of its single precision twin for a float."""
    return {FLOAT64: f"call double @{fn}(double {{0}})", FLOAT32: f"call float @{_ir_single(fn)}(float {{0}})"}


def _ir_math2(fn: str) -> dict[str, str]:
    """A call of a two-operand function of doubles, and of its single precision twin for floats."""
    return {
        FLOAT64: f"call double @{fn}(double {{0}}, double {{1}})",
        FLOAT32: f"call float @{_ir_single(fn)}(float {{0}}, float {{1}})",
    }


def _ir_each(template: str) -> dict[str, str]:
    """One template for every dtype, ``{t}`` standing for the LLVM type."""
    types = ((FLOAT64, "double"), (FLOAT32, "float"), (INT64, "i64"), (BOOL, "i1"))
    return {d: template.replace("{t}", t) for d, t in types}


# -- the table -------------------------------------------------------------------------------------

register_op(Op("symbol", 0, symbol_infer, notation="leaf", doc="A named input."))
register_op(Op("const", 0, const_infer, notation="leaf", attr_key=const_key, doc="A constant value."))


def _infix(name: str, symbol: str, prec: int, infer: Any, ufunc: Any, c: str | None = None, **kw: Any) -> Op:
    assoc = kw.pop("assoc", "left")
    arity = kw.pop("arity", 2)
    impl = kw.pop("impl", _nary(ufunc) if arity != 2 else None)
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
    grad=_grad_add,
    llvm=_ir_arith("fadd", "add"),
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
    doc="Modulo with the divisor's sign (Python semantics).",
)


# -- C's division and remainder, and indexed access (the ops tensor kernels add to the table) ---------


def _as_numbers(a: Any, b: Any) -> tuple[Any, Any]:
    """Operands as arrays, bools counted as integers (as ``arith`` types them)."""
    a, b = np.asarray(a), np.asarray(b)
    return (a.astype(np.int64) if a.dtype.kind == "b" else a), (b.astype(np.int64) if b.dtype.kind == "b" else b)


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
        llvm=_ir_call2("fmod", "eg_fmod_i"),
        doc="Remainder with the dividend's sign (C's % and fmod): 0 for a zero integer divisor.",
    )
)


def _access_rule(args: tuple, attr: Any) -> tuple[str, tuple]:
    """``access(T, i, j, ...)``: one element of the tensor symbol ``T`` (int64 scalar indices, one per axis)."""
    tensor, index = args[0], args[1:]
    if tensor.op.name != "symbol" or not tensor.shape:
        raise ShapeError("access reads an element of a tensor: its first operand must be a symbol with a shape")
    shape = tensor.shape
    if len(index) != len(shape) and not (not index and tuple(shape) == (1,)):
        raise ShapeError(f"{tensor.name} has {len(shape)} dimension(s) but {len(index)} index(es)")
    for t in index:
        if t.dtype != INT64 or t.shape:
            raise ShapeError(f"an index of {tensor.name} must be an int64 scalar, not {t.dtype}{list(t.shape)}")
    return tensor.dtype, ()


def _access(tensor: Any, *index: Any) -> Any:
    arr = np.asarray(tensor)
    if not index:
        return arr.reshape(-1)[0]  # a tensor of one element read as a scalar
    return arr[tuple(np.asarray(i, np.intp) for i in index)]


register_op(
    Op(
        "access",
        (1, None),
        _access_rule,
        impl=_access,
        notation="index",
        doc="T[i, j]: the element of the tensor symbol T at int64 indices (index arrays broadcast together).",
    )
)
_infix(
    "matmul",
    "@",
    PREC_MUL,
    matmul_rule,
    np.matmul,
    associative=True,
    grad=_grad_matmul,
    doc="Matrix product (numpy matmul).",
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
    llvm={
        FLOAT64: "call double @eg_pow_dd(double {0}, double {1})",
        FLOAT32: "call float @eg_pow_ff(float {0}, float {1})",
        "float64,int64": "call double @eg_pow_di(double {0}, i64 {1})",
        INT64: "call i64 @eg_pow_i(i64 {0}, i64 {1}, ptr %errp)",
    },
    doc="Power (a**0.5 is sqrt(a); a float to an odd integer power keeps its sign).",
)

_infix(
    "lt",
    "<",
    PREC_CMP,
    boolean,
    np.less,
    "({0} < {1})",
    assoc=None,
    relational=True,
    grad=_no_grad,
    llvm=_ir_compare("olt", "slt", "ult"),
    doc="a < b.",
)
_infix(
    "le",
    "<=",
    PREC_CMP,
    boolean,
    np.less_equal,
    "({0} <= {1})",
    assoc=None,
    relational=True,
    grad=_no_grad,
    llvm=_ir_compare("ole", "sle", "ule"),
    doc="a <= b.",
)
_infix(
    "gt",
    ">",
    PREC_CMP,
    boolean,
    np.greater,
    "({0} > {1})",
    assoc=None,
    relational=True,
    grad=_no_grad,
    llvm=_ir_compare("ogt", "sgt", "ugt"),
    doc="a > b.",
)
_infix(
    "ge",
    ">=",
    PREC_CMP,
    boolean,
    np.greater_equal,
    "({0} >= {1})",
    assoc=None,
    relational=True,
    grad=_no_grad,
    llvm=_ir_compare("oge", "sge", "uge"),
    doc="a >= b.",
)
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
    grad=_no_grad,
    llvm=_ir_compare("oeq", "eq", "eq"),
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
    grad=_no_grad,
    llvm=_ir_compare("une", "ne", "ne"),
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
    grad=_no_grad,
    llvm={BOOL: "and i1 {0}, {1}"},
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
    grad=_no_grad,
    llvm={BOOL: "or i1 {0}, {1}"},
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
        grad=_grad_neg,
        llvm={FLOAT64: "fneg double {0}", FLOAT32: "fneg float {0}", INT64: "sub i64 0, {0}"},
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
        grad=_no_grad,
        llvm={BOOL: "xor i1 {0}, true"},
        doc="Logical not.",
    )
)


def _call(name: str, arity: Any, infer: Any, c: str | None = None, ufunc: Any = None, **kw: Any) -> Op:
    return register_op(Op(name, arity, infer, ufunc=ufunc, notation="call", c_render=c, **kw))


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
    doc="Absolute value.",
)
_call("exp", 1, real, "exp({0})", np.exp, grad=_grad_exp, llvm=_ir_math("llvm.exp.f64"), doc="Exponential.")
_call(
    "log",
    1,
    real,
    "log({0})",
    np.log,
    domain=(POSITIVE,),
    grad=_grad_log,
    llvm=_ir_math("llvm.log.f64"),
    doc="Natural logarithm (nan below 0, -inf at 0).",
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
    doc="Square root (nan below 0).",
)
_call("sin", 1, real, "sin({0})", np.sin, grad=_grad_sin, llvm=_ir_math("llvm.sin.f64"), doc="Sine.")
_call("cos", 1, real, "cos({0})", np.cos, grad=_grad_cos, llvm=_ir_math("llvm.cos.f64"), doc="Cosine.")
_call(
    "tan",
    1,
    real,
    "tan({0})",
    np.tan,
    domain=(((-np.pi / 2, np.pi / 2),),),
    grad=_grad_tan,
    llvm=_ir_math("tan"),
    doc="Tangent.",
)
_call("tanh", 1, real, "tanh({0})", np.tanh, grad=_grad_tanh, llvm=_ir_math("tanh"), doc="Hyperbolic tangent.")
_call(
    "sigmoid",
    1,
    real,
    "eg_sigmoid({0})",
    impl=_sigmoid,
    grad=_grad_sigmoid,
    llvm=_ir_math("eg_sigmoid_d"),
    doc="Logistic function 1/(1+exp(-x)).",
)
# -- numerically stable forms (simplify rewrites the naive spellings into them: see simplify/stable.py)
_call(
    "log1p",
    1,
    real,
    "log1p({0})",
    np.log1p,
    domain=(((-1.0, np.inf),),),
    grad=_grad_log1p,
    llvm=_ir_math("log1p"),
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
    doc="log(exp(a) + exp(b)) without overflow: max(a, b) + log1p(exp(-|a - b|)) (numpy's logaddexp).",
)
_call(
    "maximum",
    (2, None),
    same,
    "eg_max({0}, {1})",
    np.maximum,
    impl=_nary(np.maximum),
    grad=_grad_extremum,
    commutative=True,
    associative=True,
    idempotent=True,
    aliases=("max",),
    llvm={
        **_ir_math2("eg_max_d"),
        INT64: "call i64 @llvm.smax.i64(i64 {0}, i64 {1})",
        BOOL: "or i1 {0}, {1}",
    },
    doc="Elementwise maximum (nan propagates).",
)
_call(
    "minimum",
    (2, None),
    same,
    "eg_min({0}, {1})",
    np.minimum,
    impl=_nary(np.minimum),
    grad=_grad_extremum,
    commutative=True,
    associative=True,
    idempotent=True,
    aliases=("min",),
    llvm={
        **_ir_math2("eg_min_d"),
        INT64: "call i64 @llvm.smin.i64(i64 {0}, i64 {1})",
        BOOL: "and i1 {0}, {1}",
    },
    doc="Elementwise minimum (nan propagates).",
)
_call(
    "where",
    3,
    where_rule,
    "({0} ? {1} : {2})",
    impl=np.where,
    grad=_grad_where,
    llvm=_ir_each("select i1 {0}, {t} {1}, {t} {2}"),
    doc="where(cond, a, b): a where cond holds, else b.",
)
_call("dot", 2, dot_rule, impl=np.dot, grad=_grad_dot, doc="numpy dot for operands of up to 2 dimensions.")
_call(
    "sum",
    1,
    sum_rule,
    impl=_sum,
    batch_attr=_batch_axes,
    attr_name="axis",
    attr_key=_axis_key,
    grad=_grad_sum,
    doc="Sum over axes (all by default).",
)
_call(
    "transpose",
    1,
    transpose_rule,
    impl=_transpose,
    batch_attr=_batch_perm,
    attr_name="axes",
    attr_key=_axis_key,
    grad=_grad_transpose,
    doc="Permute axes (reverse by default).",
)

#: ops whose bool operands are counted as integers when evaluated
ARITHMETIC = frozenset({"add", "sub", "mul", "floordiv", "mod", "pow", "neg", "abs", "dot", "matmul", "sum"})
#: ops with a float result whatever their operand dtypes (float32 for float32 operands, else float64)
FLOAT_FUNCS = frozenset(
    {"truediv", "exp", "log", "sqrt", "sin", "cos", "tan", "tanh", "sigmoid"}
    | {"log1p", "expm1", "softplus", "log_sigmoid", "logaddexp"}
)


def bool_casts(node: Term) -> tuple[str | None, ...]:
    """The dtype each bool operand of ``node`` is evaluated as (None for other operands).

    Arithmetic counts a bool as an int64, or as a float32 where it meets a float32 (numpy's
    ``float32 + bool`` is a float32); a variadic op is a left fold, so each bool is counted as the
    step that meets it computes (``add(x32, b, i)`` adds ``b`` to ``x32`` in float32). Float
    functions read a bool as their result's float dtype (numpy would compute them in float16).
    """
    args = node.args
    name = node.op.name
    if name in FLOAT_FUNCS:
        return tuple(node.dtype if a.dtype == BOOL else None for a in args)
    if name not in ARITHMETIC:
        return (None,) * len(args)
    if len(args) <= 2 or node.dtype == FLOAT32:  # a float32 result: no int64 operand, every step is float32
        cast = FLOAT32 if node.dtype == FLOAT32 else INT64
        return tuple(cast if a.dtype == BOOL else None for a in args)
    out: list[str | None] = [None] * len(args)
    have = args[0].dtype
    for k in range(1, len(args)):
        step = _ARITH2[have, args[k].dtype]
        cast = FLOAT32 if step == FLOAT32 else INT64
        if args[k].dtype == BOOL:
            out[k] = cast
        if k == 1 and have == BOOL:
            out[0] = cast
        have = step
    return tuple(out)


def _identity(x: Any) -> Any:
    # a copy: evaluation may reuse the result's buffer in place, and the operand's must survive
    return np.array(x, copy=True)


def _grad_identity(node: Any, g: Any) -> tuple:
    # d(identity(a)) = da
    return (g,)


_call(
    "identity",
    1,
    same,
    "({0})",
    impl=_identity,
    grad=_grad_identity,
    llvm=_ir_each("select i1 true, {t} {0}, {t} {0}"),
    doc="The operand itself (rewrites remove it).",
)
