"""Building blocks of the gradient rules of the standard ops.

``grad(node, g)`` gets ``g = df/dnode`` (a term of the node's shape) and returns one contribution
per operand: a term for that operand's share of ``df/doperand``, or None where it is zero (and for
constant operands, which are never differentiated). A contribution may keep the node's broadcast
shape: reverse mode (``exprgraph.diff``) sums it back to the operand's shape with :func:`sum_to`.
Rules are written with the ops of this table, so gradients are terms like any other: they can be
simplified, differentiated again and compiled. Derivatives at kinks and jumps are one-sided
choices, stated on each rule. Rules build terms with ``Term(op, args)`` directly (no wrapping of
Python numbers to do) and fold the identities a sweep meets at every node (``1*t``, ``t*1.0``, ``(-1.0)*t``,
``c1*c2``, ``(1/b)*t``, ``-(-t)``, ``-(c*t)``; see product and negate). A factor that does not
depend on ``g`` is built on its own (``g * -sin(a)``, not ``-(g*sin(a))``), so that the users of a
node in second and later sweeps share it.

The ops these helpers build are looked up in the table on first use (``_O``), so this module
imports only dtypes, inference, leaves, op and term.

Tracing (see :mod:`exprgraph.core.grad_template`): a rule may be run once on placeholder operands
(``SLOT`` terms) to record what it builds. :func:`product` and :func:`negate` called on a
placeholder or on a recorded call then build a ``DEFERRED_PRODUCT`` / ``DEFERRED_NEGATE`` node
instead of folding, so that the recording replays them on the real terms, folds included.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import ShapeError
from .dtypes import FLOAT32, FLOAT64, INT64_MIN, is_float, promote
from .inference import _ARITH2, _numeric, arith, same
from .leaves import const
from .op import Op, get_op
from .term import Term

__all__ = [
    "product",
    "times",
    "negate",
    "insert_axes",
    "broadcast_like",
    "sum_to",
    "no_grad",
    "SLOT",
    "DEFERRED_PRODUCT",
    "DEFERRED_NEGATE",
]


def _slot_infer(args: tuple, attr: Any) -> tuple[str, tuple]:
    return attr[1], attr[2]


#: a placeholder operand or adjoint of a traced rule: ``attr = (role, dtype, shape)`` (not in the op table)
SLOT = Op("_slot", 0, _slot_infer, notation="leaf", doc="A placeholder of a traced gradient rule.")
#: a recorded ``product(g, factors)``: args ``(g, *factors)``
DEFERRED_PRODUCT = Op("_product", (2, None), arith, doc="A recorded product() call of a traced gradient rule.")
#: a recorded ``negate(g)``
DEFERRED_NEGATE = Op("_negate", 1, same, doc="A recorded negate() call of a traced gradient rule.")


_NUMBERS = {
    "one": 1.0,
    "minus_one": -1.0,
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
        value = const(_NUMBERS[name]) if name in _NUMBERS else get_op(name)
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
    """``g * factors[0] * ...`` as one mul; folds ``c1*c2``, ``1*t``, ``t*1.0``, ``(-h)*(-t) -> h*t``,
    ``(-1.0)*t -> -t`` and ``(1/b)*t -> t/b`` when float."""
    op = g.op
    if op is SLOT or op is DEFERRED_PRODUCT or op is DEFERRED_NEGATE:
        return Term(DEFERRED_PRODUCT, (g, *factors))  # tracing: replayed on the real terms
    first = factors[0]
    neg = _O.neg
    if op is neg and len(factors) == 1 and first.op is neg:
        g, first = g.args[0], first.args[0]  # (-h) * (-t) -> h * t: negation is exact
        op = g.op
        factors = (first,)
    k = _O.const
    if op is k and first.op is k:
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
        if g is _O.minus_one:
            return _minus(first)  # (-1.0)*t -> -t: exact (a nan's sign aside)
        if first is _O.minus_one:
            return _minus(g)  # t*(-1.0) -> -t
        if g.op is _O.truediv and g.args[0] is one:
            return Term(_O.truediv, (first, g.args[1]))  # (1/b)*t -> t/b: one rounding fewer
        if first.op is _O.truediv and first.args[0] is one:
            return Term(_O.truediv, (g, first.args[1]))  # g*(1/b) -> g/b
    return Term(_O.mul, (g, *factors))


def _minus(t: Any) -> Any:
    """``-t`` as one neg node, ``-(-s) -> s`` (no new constant: ``-(c*s)`` stays a negation, unlike :func:`negate`)."""
    return t.args[0] if t.op is _O.neg else Term(_O.neg, (t,))


def times(g: Any, t: Any) -> Any:
    """``g * t`` with the folds of :func:`product`."""
    return product(g, (t,))


def negate(g: Any) -> Any:
    """``-g``: a constant for a scalar number, ``-(-t) -> t``, ``-(c*t) -> (-c)*t``, else a neg term."""
    op = g.op
    if op is SLOT or op is DEFERRED_PRODUCT or op is DEFERRED_NEGATE:
        return Term(DEFERRED_NEGATE, (g,))  # tracing: replayed on the real term
    cls = g.attr.__class__
    if op is _O.const and (cls is float or cls is np.float32 or (cls is int and g.attr != INT64_MIN)):
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


def _square(t: Any) -> Any:
    return Term(_O.pow, (t, _O.two32 if t.dtype == FLOAT32 else _O.two_int))
