"""One sign and interval analysis of terms: what is known of a term's value from its symbols' assumptions.

:func:`facts_of` gives a term's :class:`Facts`: an interval ``[lower, upper]`` holding its value,
whether it is surely not nan (``real``), not zero, an integer. The facts describe the value the
term *evaluates to* in floating point, so they account for rounding: a product of two positive
numbers may underflow to 0 (``x*y`` with positive ``x``, ``y`` is only nonnegative), ``exp(x)`` may
be 0, and ``x*y`` of finite values may overflow. Bounds of ``+``, ``-``, ``*``, ``/`` are computed with
the same IEEE operations (rounding is monotonic, so they bound every result); bounds of library
functions (``exp``, ``log``, ``sin``...) are widened by two ulps. A claim is never false for values
satisfying the assumptions; ``unknown`` is always a correct answer.

The analysis walks the term once, iteratively, and keeps each node's facts in a weak cache (terms
are immutable, so a term's facts never change). float32 terms are bounded in float64 and then
widened to the float32 range (overflow to inf, underflow to 0 included).
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import numpy as np

from ..core import Term
from ..core.assumptions import assumptions_of
from ..core.dtypes import BOOL, FLOAT32, FLOAT64, INT64
from ..core.walk import postorder_until

__all__ = ["Facts", "facts_of", "is_positive", "is_nonnegative", "is_negative", "is_nonpositive", "is_real"]

_INF = math.inf
_F32_MAX = 3.4028234663852886e38
_F32_TINY = 1.401298464324817e-45  # the smallest float32 subnormal
_I64 = 2.0**63
_F32 = np.float32


class Facts:
    """What is known of a value: ``lower <= v <= upper``, and whether it is surely not nan, nonzero, an integer."""

    __slots__ = ("lower", "upper", "real", "nonzero", "integer")

    def __init__(self, lower: float, upper: float, real: bool, nonzero: bool = False, integer: bool = False) -> None:
        self.lower, self.upper, self.real = float(lower), float(upper), real
        self.nonzero = nonzero or lower > 0 or upper < 0
        self.integer = integer

    @property
    def positive(self) -> bool:
        """Surely ``v > 0``."""
        return self.real and self.lower >= 0 and self.nonzero

    @property
    def nonnegative(self) -> bool:
        """Surely ``v >= 0`` (-0.0 included)."""
        return self.real and self.lower >= 0

    @property
    def negative(self) -> bool:
        """Surely ``v < 0``."""
        return self.real and self.upper <= 0 and self.nonzero

    @property
    def nonpositive(self) -> bool:
        """Surely ``v <= 0``."""
        return self.real and self.upper <= 0

    @property
    def finite(self) -> bool:
        """Surely a finite number."""
        return self.real and -_INF < self.lower and self.upper < _INF

    @property
    def interval(self) -> tuple[float, float] | None:
        """``(lower, upper)`` when the value is surely not nan, else None."""
        return (self.lower, self.upper) if self.real else None

    def __repr__(self) -> str:
        flags = [n for n in ("real", "nonzero", "integer") if getattr(self, n)]
        return f"Facts([{self.lower}, {self.upper}]{', ' if flags else ''}{', '.join(flags)})"


#: nothing known (a float that may be nan)
UNKNOWN = Facts(-_INF, _INF, False)
_INT_UNKNOWN = Facts(-_I64, _I64, True, integer=True)
_BOOL_FACTS = Facts(0.0, 1.0, True, integer=True)


def _down(v: float) -> float:
    return math.nextafter(math.nextafter(v, -_INF), -_INF) if math.isfinite(v) else v


def _up(v: float) -> float:
    return math.nextafter(math.nextafter(v, _INF), _INF) if math.isfinite(v) else v


def _bound(v: Any, up: bool) -> float:
    """A bound as a float on the safe side (a Fraction rounds outward)."""
    f = float(v)
    if isinstance(v, Fraction) and Fraction(f) != v:
        return math.nextafter(f, _INF if up else -_INF)
    return f


def _leaf(t: Term) -> Facts:
    """Facts of a symbol (its dtype and assumptions) or a constant."""
    if t.is_const:
        v = t.value
        if v.__class__ is _F32:
            v = float(v)
        arr = getattr(v, "array", None)
        if not isinstance(v, (int, float, Fraction)) and arr is not None and arr.shape == () and arr == arr:
            f = float(arr)  # an exact symbolic constant (pi): its value rounded once, so within an ulp
            return Facts(math.nextafter(f, -_INF), math.nextafter(f, _INF), True, f != 0)
        if not isinstance(v, (int, float, Fraction)) or v != v:
            return _default(t.dtype)  # an array, nan
        whole = math.isfinite(v) and float(v).is_integer()
        return Facts(_bound(v, False), _bound(v, True), True, v != 0, whole and v == int(v))
    a = assumptions_of(t)
    base = _default(t.dtype)
    if a is None:
        return base
    lo, hi = max(_bound(a.lower, False), base.lower), min(_bound(a.upper, True), base.upper)
    if a.finite:
        lo, hi = max(lo, -1.7976931348623157e308), min(hi, 1.7976931348623157e308)
    return Facts(lo, hi, a.real or base.real, a.nonzero, a.integer or base.integer)


def _default(dtype: str) -> Facts:
    if dtype == INT64:
        return _INT_UNKNOWN
    if dtype == BOOL:
        return _BOOL_FACTS
    return UNKNOWN


def _mul2(a: Facts, b: Facts) -> Facts:
    may_zero = lambda f: not f.nonzero and f.lower <= 0 <= f.upper
    may_inf = lambda f: f.lower == -_INF or f.upper == _INF
    nan = not (a.real and b.real) or (may_zero(a) and may_inf(b)) or (may_zero(b) and may_inf(a))
    ends = [_times(p, q) for p in (a.lower, a.upper) for q in (b.lower, b.upper)]
    low_a = a.lower if a.lower > 0 else (-a.upper if a.upper < 0 else 0.0)
    low_b = b.lower if b.lower > 0 else (-b.upper if b.upper < 0 else 0.0)
    nonzero = a.nonzero and b.nonzero and low_a * low_b > 0  # else the product may underflow to 0
    lo, hi = min(ends), max(ends)
    return Facts(lo, hi, not nan, nonzero, a.integer and b.integer and -_INF < lo and hi < _INF)


def _times(p: float, q: float) -> float:
    return 0.0 if p == 0 or q == 0 else p * q  # a bound 0 times a bound inf: the limit is 0


def _add2(a: Facts, b: Facts) -> Facts:
    nan = not (a.real and b.real) or (a.upper == _INF and b.lower == -_INF) or (a.lower == -_INF and b.upper == _INF)
    lo, hi = a.lower + b.lower, a.upper + b.upper
    # a sum of a positive and a nonnegative is positive: no rounding reaches 0 from there
    nonzero = (a.positive and b.nonnegative) or (a.nonnegative and b.positive)
    nonzero = nonzero or (a.negative and b.nonpositive) or (a.nonpositive and b.negative)
    integer = a.integer and b.integer and -_INF < lo and hi < _INF
    return Facts(lo if lo == lo else -_INF, hi if hi == hi else _INF, not nan, nonzero, integer)


def _neg(a: Facts) -> Facts:
    return Facts(-a.upper, -a.lower, a.real, a.nonzero, a.integer)


def _fold(step: Callable[[Facts, Facts], Facts], items: list[Facts]) -> Facts:
    acc = items[0]
    for f in items[1:]:
        acc = step(acc, f)
    return acc


def _magnitudes(f: Facts) -> tuple[float, float]:
    """Least and greatest ``|v|`` over the interval."""
    low = f.lower if f.lower > 0 else (-f.upper if f.upper < 0 else 0.0)
    return low, max(abs(f.lower), abs(f.upper))


def _div(a: Facts, b: Facts) -> Facts:
    if not b.nonzero or (b.lower < 0 < b.upper):
        return UNKNOWN  # a divisor that may be 0, or of either sign: anything up to +-inf
    (low_a, high_a), (low_b, high_b) = _magnitudes(a), _magnitudes(b)
    nan = not (a.real and b.real) or (high_a == _INF and high_b == _INF)
    # |a/b| <= max|a| / min|b| (division is monotonic); inf/inf is no bound (the quotient is nan there)
    top = high_a / low_b if low_b > 0 and not (high_a == _INF and low_b == _INF) else _INF
    nonzero = a.nonzero and high_b < _INF and low_a / high_b > 0  # else it may underflow to 0
    if (a.nonnegative and b.lower >= 0) or (a.nonpositive and b.upper <= 0):
        return Facts(0.0, top, not nan, nonzero)
    if (a.nonnegative and b.upper <= 0) or (a.nonpositive and b.lower >= 0):
        return Facts(-top, 0.0, not nan, nonzero)
    return Facts(-top, top, not nan, nonzero)


def _monotone(fn: Callable[[float], float], a: Facts, lo_dom: float) -> Facts:
    """``fn`` (a library function, increasing on ``[lo_dom, inf]``) of ``a``: nan where ``a`` may leave the domain."""
    if not a.real or a.lower < lo_dom:
        return UNKNOWN
    return Facts(_down(_call(fn, a.lower)), _up(_call(fn, a.upper)), True)


def _call(fn: Callable[[float], float], v: float) -> float:
    try:
        return fn(v)
    except OverflowError:
        return _INF
    except ValueError:  # log(0)
        return -_INF


def _exp(a: Facts) -> Facts:
    if not a.real:
        return Facts(0.0, _INF, False)
    f = _monotone(math.exp, a, -_INF)
    # exp(a) > 0 unless it underflows: surely so when its lower bound is above 0
    return Facts(max(f.lower, 0.0), f.upper, True, f.lower > 0)


def _log(a: Facts) -> Facts:
    if a.positive and a.lower == 0.0:  # a positive float is at least 5e-324: its log is above -745, finite
        a = Facts(math.ulp(0.0), a.upper, True, True, a.integer)
    f = _monotone(math.log, a, 0.0)
    if not f.real:
        return f
    return Facts(f.lower, f.upper, True, a.lower > 1 or a.upper < 1)


def _log1p(a: Facts) -> Facts:
    f = _monotone(math.log1p, a, -1.0)  # log1p(x) is about x near 0: its own bounds, not log's of 1 + x
    return Facts(f.lower, f.upper, True, a.nonzero) if f.real else f


def _sqrt(a: Facts) -> Facts:
    if not a.real or a.lower < 0:
        return UNKNOWN if not a.nonnegative else Facts(0.0, _INF, False)
    # IEEE sqrt is correctly rounded, so monotonic: its bounds are exact; sqrt of a positive subnormal is > 0
    return Facts(math.sqrt(a.lower), math.sqrt(a.upper), True, a.nonzero)


def _abs(a: Facts) -> Facts:
    low, high = _magnitudes(a)
    return Facts(low, high, a.real, a.nonzero, a.integer)


def _sign(a: Facts) -> Facts:
    lo = 1.0 if a.positive else (0.0 if a.nonnegative else -1.0)
    hi = -1.0 if a.negative else (0.0 if a.nonpositive else 1.0)
    return Facts(lo, hi, a.real, a.nonzero, True)


def _pow(a: Facts, b: Facts, k: Any) -> Facts:
    """``a**b``; ``k`` is the exponent's value when it is a constant."""
    if isinstance(k, (int, float)) and k == k:
        if k == 0:
            return Facts(1.0, 1.0, True, True, True)  # x**0 is 1, nan and inf included
        if float(k).is_integer() and abs(k) < 2**53:
            return _integer_pow(a, int(k))
    if not (a.real and b.real and a.nonnegative):
        return UNKNOWN  # a negative base with a fractional exponent is nan
    if isinstance(k, (int, float)) and a.lower > 0:
        ends = sorted((_call(lambda v: v**k, a.lower), _call(lambda v: v**k, a.upper)))
        return Facts(max(_down(ends[0]), 0.0), _up(ends[1]), True, _down(ends[0]) > 0)
    if a.positive or b.nonnegative:
        return Facts(0.0, _INF, True)  # a nonnegative base: the power is >= 0 (nan only for a nan operand)
    return Facts(-_INF, _INF, True)  # (-0.0)**-1 is -inf: a zero base and an odd negative exponent


def _integer_pow(a: Facts, k: int) -> Facts:
    if k < 0:
        return _div(Facts(1.0, 1.0, True, True, True), _integer_pow(a, -k))
    low, high = _magnitudes(a)
    if k == 2:  # numpy squares by one correctly rounded multiplication: monotonic, exact bounds
        mag = (low * low, high * high)
    else:
        mag = (max(_down(_call(lambda v: v**k, low)), 0.0), _up(_call(lambda v: v**k, high)))
    nonzero = a.nonzero and mag[0] > 0
    integer = a.integer and mag[1] < _INF
    if k % 2 == 0 or a.nonnegative:
        return Facts(mag[0], mag[1], a.real, nonzero, integer)
    if a.nonpositive:
        return Facts(-mag[1], -mag[0], a.real, nonzero, integer)
    return Facts(-mag[1], mag[1], a.real, nonzero, integer)


def _bounded(lo: float, hi: float, keep_sign: bool = False, needs_finite: bool = False) -> Callable[[Facts], Facts]:
    """A function with values in ``[lo, hi]`` (of the operand's sign when ``keep_sign``: odd and increasing)."""

    def facts(a: Facts) -> Facts:
        real = a.real and (not needs_finite or a.finite)
        if keep_sign and real:
            return Facts(lo if not a.nonnegative else 0.0, hi if not a.nonpositive else 0.0, True, a.nonzero)
        return Facts(lo, hi, real)

    return facts


def _extremum(items: list[Facts], largest: bool) -> Facts:
    real = all(f.real for f in items)
    pick = max if largest else min
    lo, hi = pick(f.lower for f in items), pick(f.upper for f in items)
    if largest:
        nonzero = any(f.positive for f in items) or all(f.negative for f in items)
    else:
        nonzero = any(f.negative for f in items) or all(f.positive for f in items)
    return Facts(lo, hi, real, nonzero, all(f.integer for f in items))


def _union(a: Facts, b: Facts) -> Facts:
    lo, hi = min(a.lower, b.lower), max(a.upper, b.upper)
    return Facts(lo, hi, a.real and b.real, a.nonzero and b.nonzero, a.integer and b.integer)


_HALF_PI = _up(math.pi / 2)
#: facts of one-operand ops from their operand's
_UNARY: dict[str, Callable[[Facts], Facts]] = {
    "neg": _neg,
    "exp": _exp,
    "log": _log,
    "sqrt": _sqrt,
    "abs": _abs,
    "sign": _sign,
    "sin": _bounded(-1.0, 1.0, needs_finite=True),
    "cos": _bounded(-1.0, 1.0, needs_finite=True),
    "tanh": _bounded(-1.0, 1.0, keep_sign=True),
    "erf": _bounded(-1.0, 1.0, keep_sign=True),
    "atan": _bounded(-_HALF_PI, _HALF_PI, keep_sign=True),
    "erfc": _bounded(0.0, 2.0),
    "sigmoid": _bounded(0.0, 1.0),
    "sinh": _bounded(-_INF, _INF, keep_sign=True),
    "cosh": lambda a: Facts(1.0, _INF, a.real, True),
    "softplus": lambda a: Facts(0.0, _INF, a.real),
    "expm1": lambda a: Facts(-1.0, _INF, a.real) if not a.real else _bounded(-1.0, _INF, keep_sign=True)(a),
    "log1p": lambda a: _log1p(a),
}


def _node(t: Term, get: Callable[[Term], Facts]) -> Facts:
    """Facts of ``t`` from its operands' (``get``)."""
    if not t.args:
        return _leaf(t)
    name, args = t.op.name, t.args
    if name in _UNARY and len(args) == 1:
        return _UNARY[name](get(args[0]))
    if name == "mul" and len(args) == 2 and args[0] is args[1]:
        return _integer_pow(get(args[0]), 2)  # x*x is a square: >= 0 whatever the sign of x
    if name in ("add", "mul") and args:
        return _fold(_add2 if name == "add" else _mul2, [get(a) for a in args])
    if name == "sub" and len(args) == 2:
        return _add2(get(args[0]), _neg(get(args[1])))
    if name == "truediv" and len(args) == 2:
        return _div(get(args[0]), get(args[1]))
    if name == "pow" and len(args) == 2:
        e = args[1]
        k = e.value if e.is_const and isinstance(e.value, (int, float)) and not isinstance(e.value, bool) else None
        return _pow(get(args[0]), get(e), k)
    if name in ("maximum", "minimum") and args:
        return _extremum([get(a) for a in args], name == "maximum")
    if name == "where" and len(args) == 3:
        return _union(get(args[1]), get(args[2]))
    return _default(t.dtype)


def _widen(t: Term, f: Facts) -> Facts:
    """The facts of a float32 or int64 result, from facts worked out in float64."""
    dtype = t.dtype
    if dtype == FLOAT64 or not t.args:
        return f
    if dtype == INT64:  # int64 arithmetic wraps: the bounds hold only inside its range
        if f.real and -(2.0**53) < f.lower and f.upper < 2.0**53:
            return Facts(f.lower, f.upper, True, f.nonzero, True)
        return _INT_UNKNOWN
    if dtype == FLOAT32:  # float32 rounds, overflows and underflows sooner: keep signs, widen ends by an ulp
        lo = -_INF if f.lower < -_F32_MAX else f.lower - abs(f.lower) * 2.0**-22
        hi = _INF if f.upper > _F32_MAX else f.upper + abs(f.upper) * 2.0**-22
        low, _ = _magnitudes(f)
        lo, hi = (max(lo, 0.0) if f.lower >= 0 else lo), (min(hi, 0.0) if f.upper <= 0 else hi)
        return Facts(lo, hi, f.real, f.nonzero and low > 2 * _F32_TINY * 2.0**24, f.integer)
    return _default(dtype)


_CACHE: weakref.WeakKeyDictionary[Term, Facts] = weakref.WeakKeyDictionary()


def clear_facts() -> None:
    """Forget the facts worked out so far (they never go stale: this only frees memory, or times a cold call)."""
    _CACHE.clear()


def facts_of(t: Term) -> Facts:
    """The :class:`Facts` of a term's value (every subterm's are worked out once and cached)."""
    found = _CACHE.get(t)
    if found is not None:
        return found
    get = _CACHE.__getitem__
    for node in postorder_until((t,), _CACHE.__contains__):
        if node.args and node.shape != () and node.op.name not in _ELEMENTWISE:
            _CACHE[node] = _default(node.dtype)
            continue
        _CACHE[node] = _widen(node, _node(node, get))
    return _CACHE[t]


#: ops whose facts hold elementwise for shaped operands
_ELEMENTWISE = frozenset(_UNARY) | {"add", "mul", "sub", "truediv", "pow", "maximum", "minimum", "where"}


def is_positive(t: Term) -> bool:
    """Whether ``t`` is surely > 0."""
    return facts_of(t).positive


def is_nonnegative(t: Term) -> bool:
    """Whether ``t`` is surely >= 0."""
    return facts_of(t).nonnegative


def is_negative(t: Term) -> bool:
    """Whether ``t`` is surely < 0."""
    return facts_of(t).negative


def is_nonpositive(t: Term) -> bool:
    """Whether ``t`` is surely <= 0."""
    return facts_of(t).nonpositive


def is_real(t: Term) -> bool:
    """Whether ``t`` is surely not nan."""
    return facts_of(t).real
