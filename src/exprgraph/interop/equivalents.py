"""Ops written with other ops, for the converters whose other side lacks them (PyTensor, ONNX).

Each entry builds, from a node's operands, a term of more common ops with the same values as the
node: exactly (the integer division family, ``broadcast_dim``, ``ceil_div``, the rounding of
integers) or within rounding (``hypot``, scaled so that it does not overflow). A converter asks
:func:`equivalent` for an op it has no counterpart for, converts the result, and so needs no code
of its own for the op. Imports only the core.
"""

from __future__ import annotations

from collections.abc import Callable

from ..core import BOOL, FLOAT32, INT64, Term, const, get_op
from ..core.dtypes import is_float

__all__ = ["EQUIVALENTS", "equivalent"]


def _zero(t: Term) -> Term:
    return const(0.0 if is_float(t.dtype) else 0, t.dtype if t.dtype != BOOL else INT64)


def _negative(a: Term) -> Term:
    """``a < 0``, and for floats ``-0.0`` too (``1/a`` is ``-inf`` there)."""
    below = get_op("lt")(a, _zero(a))
    if not is_float(a.dtype):
        return below
    return get_op("logical_or")(below, get_op("lt")(const(1.0, a.dtype) / a, _zero(a)))


def _fmod(a: Term, b: Term) -> Term:
    if not (is_float(a.dtype) or is_float(b.dtype)):
        # integers: r = a mod b has b's sign; where it is non-zero and differs from a's, fmod = r - b
        # (exact: r and b share a sign and |r| < |b|, and n mod 0 is 0)
        r = a % b
        lt, ne = get_op("lt"), get_op("ne")
        differ = get_op("logical_and")(ne(r, const(0)), ne(lt(r, const(0)), lt(a, const(0))))
        return get_op("where")(differ, r - b, r)
    # floats: fmod(a, b) = sign(a) * (|a| mod |b|): the floor remainder of non-negative operands is C's, exactly;
    # an int operand becomes a float first (x*1.0 is exact), as |-2**63| wraps in int64
    abs_ = get_op("abs")
    a, b = (x if is_float(x.dtype) else x * const(1.0) for x in (a, b))
    rem = abs_(a) % abs_(b)
    return get_op("where")(_negative(a), -rem, rem)


def _truncdiv(a: Term, b: Term) -> Term:
    # floats: trunc(a / b); integers: (a - fmod(a, b)) // b, an exact multiple (n // 0 is 0)
    if is_float(a.dtype) or is_float(b.dtype):
        return get_op("trunc")(a / b)
    return (a - _fmod(a, b)) // b


def _ceil_div(a: Term, b: Term) -> Term:
    # floats: ceil(a / b) = -((-a) // b); integers: a // b + (a % b != 0), as -a wraps at -2**63
    if a.dtype not in (INT64, BOOL) or b.dtype not in (INT64, BOOL):
        return -((-a) // b)
    up = get_op("where")(get_op("ne")(a % b, const(0, INT64)), const(1, INT64), const(0, INT64))
    return a // b + up


def _broadcast_dim(a: Term, b: Term) -> Term:
    # a where b == 1, else b
    return get_op("where")(get_op("eq")(b, const(1, b.dtype)), a, b)


def _hypot(a: Term, b: Term) -> Term:
    # m * sqrt(1 + (n/m)**2) with m = max(|a|, |b|), n = min(...): no overflow; 0 where m is 0, inf where m is
    dtype = FLOAT32 if FLOAT32 in (a.dtype, b.dtype) and not {a.dtype, b.dtype} & {INT64} else "float64"
    one, zero = const(1.0, dtype), const(0.0, dtype)
    abs_ = get_op("abs")
    big, small = get_op("maximum")(abs_(a), abs_(b)), get_op("minimum")(abs_(a), abs_(b))
    ratio = small / get_op("where")(get_op("eq")(big, zero), one, big)
    scaled = big * get_op("sqrt")(one + ratio * ratio)
    inf = const(float("inf"), dtype)
    # an infinite leg gives inf, even next to nan (C's hypot(inf, nan) is inf)
    infinite = get_op("logical_or")(get_op("eq")(abs_(a), inf), get_op("eq")(abs_(b), inf))
    return get_op("where")(infinite, inf, scaled)


def _log_base(base: float) -> Callable[[Term], Term]:
    # log_b(x) = log(x) / log(b): within an ulp or two of the C library's log2 and log10
    def build(x: Term) -> Term:
        dtype = FLOAT32 if x.dtype == FLOAT32 else "float64"
        return get_op("log")(x) / get_op("log")(const(base, dtype))

    return build


def _trunc(x: Term) -> Term:
    # trunc(x) = ceil(x) below 0, floor(x) elsewhere (-0.5 -> -0.0, as C's trunc); integers unchanged
    if x.dtype == BOOL:
        return get_op("where")(x, const(1, INT64), const(0, INT64))  # trunc of a bool is an int64 (as evaluate)
    if not is_float(x.dtype):
        return x
    return get_op("where")(get_op("lt")(x, _zero(x)), get_op("ceil")(x), get_op("floor")(x))


def _atan2(y: Term, x: Term) -> Term:
    # atan(y/x), moved by pi toward y's side where x is negative (-0.0 too); atan2(+-0, +0) = y;
    # two infinities: +-pi/4 or +-3pi/4
    dtype = FLOAT32 if y.dtype == FLOAT32 and x.dtype == FLOAT32 else "float64"
    pi = const(3.141592653589793, dtype)
    where, eq, both = get_op("where"), get_op("eq"), get_op("logical_and")
    q = get_op("atan")(y / x)
    neg_x, neg_y = _negative(x), _negative(y)
    turned = where(neg_x, where(neg_y, q - pi, q + pi), q)
    at_origin = where(neg_x, where(neg_y, -pi, pi), y * const(1.0, dtype))
    corner = where(neg_x, const(2.356194490192345, dtype), const(0.7853981633974483, dtype))
    inf = const(float("inf"), dtype)
    abs_ = get_op("abs")
    out = where(both(eq(y, _zero(y)), eq(x, _zero(x))), at_origin, turned)
    return where(both(eq(abs_(y), inf), eq(abs_(x), inf)), where(neg_y, -corner, corner), out)


#: op name -> builder of an equivalent term from the node's operands
EQUIVALENTS: dict[str, Callable[..., Term]] = {
    "fmod": _fmod,
    "truncdiv": _truncdiv,
    "ceil_div": _ceil_div,
    "broadcast_dim": _broadcast_dim,
    "hypot": _hypot,
    "log2": _log_base(2.0),
    "log10": _log_base(10.0),
    "identity": lambda a: a,
    "trunc": _trunc,
    "atan2": _atan2,
}


def _as_dtype(x: Term, dtype: str) -> Term:
    """``x`` with the values it has as an operand of a node of ``dtype``: a bool or an int64 that the node
    computes with as a float is converted first (``x*1.0``, exact for a bool and as numpy rounds an int64), a
    bool that it computes with as an int64 becomes 0 or 1."""
    if x.dtype == dtype or is_float(x.dtype):
        return x
    if is_float(dtype):
        return x * const(1.0, dtype)
    if dtype == INT64 and x.dtype == BOOL:
        return get_op("where")(x, const(1, INT64), const(0, INT64))
    return x


def equivalent(node: Term) -> Term:
    """A term with the values and the dtype of ``node``, of ops other than its own (KeyError: no entry for the
    op). Operands are first converted to the dtype the node computes in, so that each builder's own dtype rules
    cannot widen a float32 (``fmod`` of a bool and a float32 is a float32) or keep a bool."""
    build = EQUIVALENTS[node.op.name]
    return build(*(_as_dtype(a, node.dtype) for a in node.args))
