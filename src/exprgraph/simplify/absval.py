"""abs, sign, sqrt of a square, max and min decided by the sign analysis (:mod:`.signs`).

Every rule here is safe (the result is the same float, or one rounding of the exact value, for every
value the assumptions allow) except ``sqrt_of_square``, whose square may overflow or underflow.
"""

from __future__ import annotations

from ..core import Term, get_op
from .logs import Family
from .numbers import const_like, number
from .signs import Facts, facts_of

__all__ = [
    "ABS_REWRITES",
    "abs_of_signed",
    "sign_of_signed",
    "sqrt_of_square",
    "sqrt_of_square_safe",
    "sqrt_of_product_of_squares",
    "decide_extremum",
    "sign_times_abs",
    "is_sign_times_abs",
]

NEG, ABS, POW, SQRT, MUL = get_op("neg"), get_op("abs"), get_op("pow"), get_op("sqrt"), get_op("mul")
MAXIMUM, SIGN = get_op("maximum"), get_op("sign")

#: |x| in [2**-511, 2**511]: x*x is a normal float, and sqrt(x*x) rounds back to |x| exactly
SQUARE_SAFE = (2.0**-511, 2.0**511)


def abs_of_signed(t: Term) -> Term | None:
    # abs(x) -> x where x >= 0, abs(x) -> -x where x <= 0 (safe: the same float, but for the sign of a zero)
    (x,) = t.args
    f = facts_of(x)
    if f.nonnegative:
        return x
    return NEG(x) if f.nonpositive else None


def sign_of_signed(t: Term) -> Term | None:
    # sign(x) -> 1 where x > 0, -1 where x < 0, 0 where x is 0 (safe: exact)
    (x,) = t.args
    f = facts_of(x)
    if f.positive:
        value = 1
    elif f.negative:
        value = -1
    elif f.real and f.lower == f.upper == 0:
        value = 0
    else:
        return None
    if t.shape != ():
        return None  # a shaped sign stays: a constant would lose its shape
    return const_like(value if t.dtype != "float64" else float(value), t)


def _root_of_square(a: Term) -> Term | None:
    """``x`` when ``a`` is ``x**2`` or ``x*x``."""
    if a.op is POW and number(a.args[1]) == 2:
        return a.args[0]
    if a.op is MUL and len(a.args) == 2 and a.args[0] is a.args[1]:
        return a.args[0]
    return None


def _square_root_of(t: Term) -> Term | None:
    """``x`` when ``t`` is ``sqrt(x**2)`` or ``sqrt(x*x)``."""
    return _root_of_square(t.args[0])


def sqrt_of_product_of_squares(t: Term) -> Term | None:
    # sqrt(x**2 * y**2) -> abs(x)*abs(y) (unsafe: the squares may overflow or underflow, and abs(x)*abs(y)
    # rounds once where sqrt(x**2 * y**2) rounds three times); abs(x) then goes to x for x >= 0
    (a,) = t.args
    if a.op is not MUL or t.shape != ():
        return None
    roots = [_root_of_square(f) for f in a.args]
    if any(r is None for r in roots):
        return None
    return MUL(*(ABS(r) for r in roots if r is not None))


def _square_safe(f: Facts) -> bool:
    lo, hi = SQUARE_SAFE
    low = f.lower if f.lower > 0 else (-f.upper if f.upper < 0 else 0.0)
    return f.real and low >= lo and max(abs(f.lower), abs(f.upper)) <= hi


def sqrt_of_square_safe(t: Term) -> Term | None:
    # sqrt(x**2) -> abs(x) where |x| lies in [2**-511, 2**511] (safe: sqrt(fl(x*x)) is exactly |x| there)
    x = _square_root_of(t)
    return ABS(x) if x is not None and x.dtype == t.dtype == "float64" and _square_safe(facts_of(x)) else None


def sqrt_of_square(t: Term) -> Term | None:
    # sqrt(x**2) -> abs(x) for any real (float) x (unsafe: x**2 overflows above 1.3e154 and underflows below
    # 1.5e-154, where abs(x) is exact); a nan x gives nan both ways; abs(x) then goes to x for x >= 0
    x = _square_root_of(t)
    return ABS(x) if x is not None and x.dtype == t.dtype else None


def square_of_sqrt(t: Term) -> Term | None:
    # sqrt(x)**2 -> x where x >= 0 (safe: x is the exact value, and sqrt(x)**2 never overflows)
    a, e = t.args
    if a.op is not SQRT or number(e) != 2:
        return None
    x = a.args[0]
    return x if x.dtype == t.dtype and facts_of(x).nonnegative else None


def decide_extremum(t: Term) -> Term | None:
    # max(a, b) -> a where a >= b surely (min: a <= b), by the intervals of a and b (safe: the same float)
    largest = t.op is MAXIMUM
    facts = [facts_of(a) for a in t.args]
    if not all(f.real for f in facts):
        return None  # nan propagates through maximum: keep every operand
    kept = []
    for i, (a, f) in enumerate(zip(t.args, facts, strict=True)):
        dominated = any(
            j != i
            and (g.lower >= f.upper if largest else g.upper <= f.lower)
            and (g.lower, g.upper) != (f.lower, f.upper)
            for j, g in enumerate(facts)
        )
        if not dominated:
            kept.append(a)
    if len(kept) == len(t.args) or not kept:
        return None
    return kept[0] if len(kept) == 1 else t.op(*kept)


def is_sign_times_abs(t: Term) -> bool:
    """Whether ``t`` is ``sign(u)*abs(u)`` (either order): ``u``, but +0.0 where ``u`` is -0.0 (never -0.0)."""
    if t.op is not MUL or len(t.args) != 2:
        return False
    a, b = t.args
    return {a.op, b.op} == {SIGN, ABS} and a.args[0] is b.args[0]


def sign_times_abs(t: Term) -> Term | None:
    # sign(u)*abs(u) -> u: +-1 times |u| is u exactly, inf and nan included (sign(nan) is nan); at u = -0.0 it is
    # +0.0 (sign(-0.0) is +0.0 in numpy and our C), so where that zero reaches a divisor simplify keeps the
    # product never -0.0, as it keeps a sum u + 0.0 (signed_zero.never_minus_zero reads this shape; safe)
    if not is_sign_times_abs(t):
        return None
    u = t.args[0].args[0]
    return u if u.dtype == t.dtype and u.shape == t.shape else None


#: ``(name, handler, root ops, unsafe, algebra)`` of each rule (:mod:`.canonical` makes them rules)
ABS_REWRITES: Family = [
    ("abs_of_signed", abs_of_signed, ("abs",), False, "abs(x) -> x (x >= 0), abs(x) -> -x (x <= 0)"),
    ("sign_of_signed", sign_of_signed, ("sign",), False, "sign(x) -> 1 (x > 0), -1 (x < 0)"),
    ("sqrt_of_square_safe", sqrt_of_square_safe, ("sqrt",), False, "sqrt(x**2) -> abs(x) (2**-511 <= |x| <= 2**511)"),
    ("sqrt_of_square", sqrt_of_square, ("sqrt",), True, "sqrt(x**2) -> abs(x) (x real)"),
    ("sqrt_of_product_of_squares", sqrt_of_product_of_squares, ("sqrt",), True, "sqrt(x**2*y**2) -> abs(x)*abs(y)"),
    ("square_of_sqrt", square_of_sqrt, ("pow",), False, "sqrt(x)**2 -> x (x >= 0)"),
    ("sign_times_abs", sign_times_abs, ("mul",), False, "sign(u)*abs(u) -> u (+0.0 at -0.0: kept by a divisor)"),
    ("decide_extremum", decide_extremum, ("maximum", "minimum"), False, "max(a, b) -> a (a >= b surely)"),
]
