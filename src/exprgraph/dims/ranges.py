"""Value ranges: integer intervals ``(lo, hi)`` whose open ends are ``-INF``/``INF``.

Every rule that needs to know a sign or a bound (``x%8 < 8``, ``max(a, a+1) = a+1``) asks for
the range of a polynomial. Names are ``>= 0`` (``>= 1`` with ``positive=True``); opaque atoms get
their range when they are built. Bounds stay exact Python ints; infinities are floats and only
meet ints through the helpers below (no int-to-float conversion, so huge bounds cannot overflow).
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "INF",
    "Range",
    "UNBOUNDED",
    "floor_div",
    "ceil_div",
    "r_add",
    "r_scale",
    "r_mul",
    "r_pow",
    "r_floordiv",
    "r_mod",
    "fdiv",
]

INF: Final = float("inf")
Range = tuple
UNBOUNDED: Final[Range] = (-INF, INF)


def floor_div(a: int, b: int) -> int:
    """``floor(a / b)`` of integers (Python's ``//``), for any ``b != 0``."""
    return a // b


def ceil_div(a: int, b: int) -> int:
    """``ceil(a / b)`` of integers, for any ``b != 0``: ``-((-a) // b)``."""
    return -((-a) // b)


def _xadd(x: int | float, y: int | float) -> int | float:
    if type(x) is float:
        return x
    if type(y) is float:
        return y
    return x + y


def _xmul(x: int | float, y: int | float) -> int | float:
    if x == 0 or y == 0:
        return 0
    if type(x) is float or type(y) is float:
        return INF if (x > 0) == (y > 0) else -INF
    return x * y


def r_add(a: Range, b: Range) -> Range:
    """Range of a sum."""
    return (_xadd(a[0], b[0]), _xadd(a[1], b[1]))


def r_scale(a: Range, k: int) -> Range:
    """Range of ``k`` times a value in ``a``."""
    if k > 0:
        return (_xmul(a[0], k), _xmul(a[1], k))
    if k < 0:
        return (_xmul(a[1], k), _xmul(a[0], k))
    return (0, 0)


def r_mul(a: Range, b: Range) -> Range:
    """Range of a product (the extremes are among the corner products)."""
    if a[0] >= 0 and b[0] >= 0:
        return (_xmul(a[0], b[0]), _xmul(a[1], b[1]))
    corners = (_xmul(a[0], b[0]), _xmul(a[0], b[1]), _xmul(a[1], b[0]), _xmul(a[1], b[1]))
    return (min(corners), max(corners))


def _pow_bound(x: int | float, p: int, lower: bool) -> int | float:
    if type(x) is float or x <= 1:
        return x if type(x) is float else x**p
    if p <= 64:
        return x**p
    return x**64 if lower else INF  # still a bound, without computing a huge power


def r_pow(a: Range, p: int) -> Range:
    """Range of a value in ``a`` to the power ``p >= 1``."""
    if p == 1:
        return a
    lo, hi = a
    if lo >= 0:
        return (_pow_bound(lo, p, True), _pow_bound(hi, p, False))
    if p % 2:
        # an odd power is increasing: (lo**p, hi**p)
        if hi <= 0:
            n_lo, n_hi = r_pow((-hi, -lo), p)
            return (_neg(n_hi), _neg(n_lo))
        return (_neg(_pow_bound(-lo, p, False)), _pow_bound(hi, p, False))
    # an even power of a value in [lo, hi] with lo < 0 lies in [0, max(-lo, hi)**p]
    m = -lo if -lo > hi else hi
    return (0 if hi >= 0 else _pow_bound(-hi, p, True), _pow_bound(m, p, False))


def _neg(x: int | float) -> int | float:
    return -x


def fdiv(x: int | float, y: int | float) -> int | float:
    """``floor(x / y)`` for a bound ``x`` and a divisor bound ``y >= 1``."""
    if type(x) is float:
        return x
    if type(y) is float:
        return 0 if x >= 0 else -1
    return x // y


def r_floordiv(a: Range, q: Range) -> Range:
    """Range of ``floor(a / q)`` for a divisor that is never negative (zero divides nothing)."""
    qlo, qhi = max(q[0], 1), q[1]
    if qhi < qlo:
        return UNBOUNDED  # the divisor can only be 0
    lo, hi = a
    return (min(fdiv(lo, qlo), fdiv(lo, qhi)), max(fdiv(hi, qlo), fdiv(hi, qhi)))


def r_mod(a: Range, q: Range) -> Range:
    """Range of ``a % q`` for a divisor that is never negative."""
    qhi = q[1]
    if qhi < 1:
        return UNBOUNDED  # the divisor can only be 0
    hi = qhi if type(qhi) is float else qhi - 1
    if a[0] >= 0 and a[1] < hi:
        hi = a[1]
    return (0, hi)
