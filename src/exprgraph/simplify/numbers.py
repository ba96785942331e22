"""Numbers in canonical forms: constant coefficients and exponents, kept exact or left alone.

A sum's coefficients and a product's exponents are combined in exact arithmetic (Python ints,
fractions for floats); a combination that is not exactly a constant of the term's dtype (an exponent
beyond int64, ``0.1 + 0.2``, a coefficient that overflows) is not made, and the terms stay as they
were. Next to float32 terms the numbers are float32 constants (:func:`const_like`): float32 has no
int exponents or coefficients, as numpy 2 makes Python numbers float32 there. Constants folded out
of their evaluation order must not overflow or underflow where the unfolded form would not.

Exact constants (:mod:`exprgraph.core.exact`) are numbers too: a rational constant's value is a
``Fraction`` (:func:`number`), combined exactly with ints and other rationals, and an op over exact
operands folds only to an exact value (:func:`exact_first`, :func:`fold_value`): ``x/3 + x/6 ->
rational(1, 2)*x``, ``1/3 + 1/6 -> rational(1, 2)``, ``sqrt(2)*sqrt(2) -> 2.0``; ``log(3)`` stays.
Mixed with a float, they fold to a float.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import numpy as np

from ..core import Term, const, get_op, postorder
from ..core.dtypes import FLOAT32, FLOAT64, INT64, INT64_MAX, INT64_MIN
from ..core.exact import Rational
from ..core.exact_fold import EXACT_LEAVES, exact_value, fold_exact, is_exact
from ..errors import EvaluationError
from ..eval import evaluate

__all__ = [
    "number",
    "integral",
    "exact_total",
    "fold_value",
    "same_dtype",
    "split_coefficient",
    "scaled",
    "times",
    "rounded",
    "power",
    "base_exponent",
    "one_base",
    "const_like",
    "exact_first",
    "plain_value",
    "cost",
    "INT_MIN",
    "INT_MAX",
]

CONST = get_op("const")
MUL, POW, DIV = get_op("mul"), get_op("pow"), get_op("truediv")
ADD, SUB, NEG = get_op("add"), get_op("sub"), get_op("neg")

INT_MIN, INT_MAX = INT64_MIN, INT64_MAX
#: the smallest normal float: a folded product below it has lost precision (or underflowed)
TINY = 2.0**-1022
#: the smallest normal float32
TINY32 = 2.0**-126
#: ints up to this magnitude convert to float64 exactly
_EXACT_INT = 2**53


def number(t: Term) -> int | float | Fraction | None:
    """The value of a scalar int, float or rational constant (None for anything else, bools and pi included;
    float32: a float; a rational: a Fraction)."""
    if t.op is CONST:
        cls = t.attr.__class__
        if cls is int or cls is float or cls is Rational:
            return t.attr
        if cls is np.float32:
            return float(t.attr)
    return None


def _whole(v: Any) -> Any:
    """A whole Fraction as an int (the coefficient 1 of ``x/2 + x/2`` is the int 1)."""
    return int(v) if isinstance(v, Fraction) and v.denominator == 1 else v


def const_like(value: int | float | Fraction, like: Term, *, exact: bool = True) -> Term | None:
    """The number ``value`` as a constant next to ``like``: float32 for a float32 ``like``, else
    ``const(value)`` as ever. None when float32 cannot hold it exactly (``exact``), or else when
    rounding it to float32 overflows."""
    if like.dtype != FLOAT32:
        return const(value)
    c = const(value, FLOAT32)
    v = float(c.attr)
    if v == value or (not exact and math.isfinite(v)):
        return c
    return None


def integral(v: Any) -> bool:
    """Whether ``v`` is an integer: an int, or a float with an integer value (every float from 2**53 up)."""
    cls = v.__class__
    return cls is int or (cls is float and v.is_integer()) or (isinstance(v, Fraction) and v.denominator == 1)


def exact_total(values: list) -> int | float | Fraction | None:
    """The exact sum of exponents: an int for integers, a Fraction when a rational was summed with no
    float, a float when the sum is exactly one, else None."""
    if all(integral(v) for v in values):
        return sum(int(v) for v in values)
    if not all(math.isfinite(v) for v in values):
        return None
    total = sum(Fraction(v) for v in values)
    if all(v.__class__ is not float for v in values):
        return _whole(total)  # x**rational(1, 3) * x**rational(1, 6) -> x**rational(1, 2)
    return float(total) if Fraction(float(total)) == total else None


def fold_value(op: Any, consts: list[Term]) -> Term | None:
    """One constant for ``op(*consts)`` (numpy semantics), or None if evaluation fails.

    The constants of a sum or product are folded out of their evaluation order (``x*1e200*1e200``
    folds ``1e200*1e200``), so a fold that overflows, or a product that underflows, from finite
    non-zero operands is declined: the unfolded form may well stay finite (``x = 1e-300``).
    """
    if len(consts) == 1:
        return consts[0]
    term = op(*consts)
    if term.dtype == FLOAT64 and all(exact_value(c) is not None for c in consts):
        return fold_exact(term)  # rational(1, 3) + rational(1, 6) -> rational(1, 2): exact, or kept apart
    value: Any = plain_value(term)
    if value is None:
        try:
            value = evaluate(term, {})
        except (EvaluationError, ArithmeticError, ValueError, TypeError):
            return None
    folded = const(value)
    v = number(folded)
    if v.__class__ is float:
        given = [float(c.attr) for c in consts if number(c) is not None]
        if not math.isfinite(v) and all(math.isfinite(g) for g in given):
            return None  # 1e308 + 1e308 -> inf: keep the constants apart
        tiny = TINY32 if folded.dtype == FLOAT32 else TINY
        if op is MUL and abs(v) < tiny and all(g != 0 and abs(g) >= tiny for g in given):
            return None  # 1e-200 * 1e-200 -> 0.0: keep the constants apart
    return folded


def plain_value(t: Term) -> int | float | None:
    """The value of ``t``, a binary add, sub or mul or a neg of scalar int64 and float64 constants, computed in
    Python as numpy computes it (an int64 in range, a finite float: IEEE arithmetic on exactly converted
    operands), else None (``evaluate`` it): the common folds without numpy's evaluation."""
    op, args = t.op, t.args
    n = len(args)
    if not ((n == 2 and (op is ADD or op is SUB or op is MUL)) or (n == 1 and op is NEG)):
        return None
    floats = False
    for a in args:
        if a.op is not CONST:
            return None
        cls = a.attr.__class__
        if cls is float and a.dtype == FLOAT64:
            floats = True
        elif cls is not int or a.dtype != INT64 or abs(a.attr) > _EXACT_INT:
            return None
    if t.dtype != (FLOAT64 if floats else INT64) or t.shape:
        return None
    x = float(args[0].attr) if floats else args[0].attr
    if op is NEG:
        out = -x
    else:
        y = float(args[1].attr) if floats else args[1].attr
        out = x + y if op is ADD else x - y if op is SUB else x * y
    if floats:
        return out if math.isfinite(out) else None  # inf and nan: numpy's (and its warnings) decide
    return out if INT_MIN <= out <= INT_MAX else None  # beyond int64 numpy wraps


def same_dtype(result: Term, t: Term) -> Term:
    """``result``, a lone scalar constant cast to ``t``'s dtype (``x + 2 - x`` is 2.0 for a float x)."""
    v = number(result)
    if v is None or result.dtype == t.dtype:
        return result
    try:
        return const(v, dtype=t.dtype)
    except (OverflowError, ValueError, TypeError):
        return result


def split_coefficient(t: Term) -> tuple[Any, Term]:
    """``c*rest`` as ``(c, rest)`` (a canonical product has its coefficient first); ``x/3`` as
    ``(Fraction(1, 3), x)`` for a float64 ``x`` and an exact divisor; else ``(1, t)``."""
    if t.op is MUL:
        c = number(t.args[0])
        if c is not None:
            rest = t.args[1:]
            return c, rest[0] if len(rest) == 1 else MUL(*rest)
    elif t.op is DIV and t.dtype == FLOAT64:
        q = exact_value(t.args[1])
        if q:  # x/3 = rational(1, 3)*x and (2*x)/4 = rational(1, 2)*x, exactly (x/3 + x/6 -> rational(1, 2)*x)
            num = t.args[0]
            if num.op is MUL:
                c = exact_value(num.args[0])
                if c is not None:
                    rest = num.args[1:]
                    return c / q, rest[0] if len(rest) == 1 else MUL(*rest)
            return 1 / q, num
    return 1, t


def scaled(c: Any, rest: Term) -> Term | None:
    """``c*rest`` in canonical form (``rest`` itself for c == 1)."""
    c = _whole(c)
    if c == 1 and (c.__class__ is int or rest.dtype == FLOAT32):
        return rest
    try:
        k = const_like(c, rest, exact=False)  # a float32 coefficient rounds as float64's do
    except (OverflowError, ValueError):
        return None
    if k is None:
        return None
    if rest.op is MUL and number(rest.args[0]) is None and not one_base(rest.args):
        return MUL(k, *rest.args)
    # a plain factor, a unit of powers of one base (x * x**-1) kept whole, or a product with its own
    # coefficient that could not fold (2 * (1e308*x): 2e308 would overflow where the product need not)
    return MUL(k, rest)


def times(c: Any, t: Term) -> Term | None:
    """``c*t`` as one new product around ``t`` (``t`` itself for c == 1): ``t`` is computed first, as it was.

    Unlike :func:`scaled`, the factors of ``t`` are not spliced in: ``2 * (x*y)`` stays that, where
    ``2*x*y`` would compute ``2*x`` first (and overflow at x = 1e308, y = 1e-300).
    """
    c = _whole(c)
    if c == 1 and (c.__class__ is int or t.dtype in (FLOAT32, FLOAT64)):
        return t  # 1.0*i would make an int i a float: kept
    if c == -1 and (c.__class__ is int or t.dtype in (FLOAT32, FLOAT64)):
        return MUL(const(-1), t)  # -1.0*x -> -1*x: one spelling of the sign, as in a canonical product
    try:
        k = const_like(c, t, exact=False)
    except (OverflowError, ValueError):
        return None
    return None if k is None else MUL(k, t)


def rounded(total: Fraction, like: Term, ints: bool) -> tuple[int | float, bool] | None:
    """An exact total (of coefficients or constants) as one number next to ``like``, and whether it is exact.

    An int when every number summed was an int and the total fits int64; else the float (float32
    next to a float32 ``like``) nearest the total, rounded once. None when it overflows.
    """
    if ints and total.denominator == 1 and INT_MIN <= total <= INT_MAX:
        return int(total), True
    try:
        v = float(total)
    except OverflowError:
        return None
    if like.dtype == FLOAT32:
        v = float(np.float32(v))
    if not math.isfinite(v):
        return None
    return v, Fraction(v) == total


def base_exponent(a: Term) -> tuple[Term, Any]:
    """``a`` as ``(base, exponent)``: ``x**3`` gives ``(x, 3)``, anything else ``(a, 1)``."""
    if a.op is POW:
        e = number(a.args[1])
        if e is not None:
            return a.args[0], e
    return a, 1


def one_base(factors: tuple[Term, ...]) -> bool:
    """Whether ``factors`` are powers of one base (a product unit such as ``x * x**-1``)."""
    first = None
    for f in factors:
        if number(f) is not None:
            return False
        base = base_exponent(f)[0]
        if first is None:
            first = base
        elif base is not first:
            return False
    return True


def power(base: Term, e: Any) -> Term | None:
    """``base**e`` in canonical form (``base`` for e == 1; ints for integral exponents of floats).

    None when an integer exponent does not fit in int64 (``x**(2**62) * x**(2**62)`` keeps its two
    factors).
    """
    if e == 1:
        return base
    if base.dtype == FLOAT32:  # float32 ** int64 would be a float64: the exponent is a float32
        exponent = const_like(float(e), base)
        return None if exponent is None else POW(base, exponent)
    if integral(e) and (base.dtype == FLOAT64 or e > 0):
        k = int(e)
        return POW(base, const(k)) if INT_MIN <= k <= INT_MAX else None
    if isinstance(e, Fraction):
        return POW(base, const(e))  # an exact exponent stays exact: x**rational(1, 3)
    return POW(base, const(float(e)))


def exact_first(fallback: Callable[[Term], Term | None]) -> Callable[[Term], Term | None]:
    """The constant-folding rule: exact over exact operands (:func:`~exprgraph.core.exact_fold.fold_exact`),
    else ``fallback(t)`` (numpy's value); a float mixed with exact terms folds to a float."""

    def fold_constants(t: Term) -> Term | None:
        # f(c1, c2) -> c; exact operands give an exact value or stay: 1/3 -> rational(1, 3), log(3) stays
        args = t.args
        for a in args:
            if a.op is not CONST:
                break
        else:  # every operand a constant (or none): exact when every one is exact
            if not args:
                return None
            if t.dtype == FLOAT64 and not t.shape and all(a.attr.__class__ in EXACT_LEAVES for a in args):
                return fold_exact(t)
            return fallback(t)
        for a in args:
            if a.op is not CONST and not a.args:  # a leaf other than a constant: a symbol
                return None
        for a in args:
            if a.args and not is_exact(a):
                return None  # an operand with symbols, or one that could not be folded (an error where it is evaluated)
        if (
            t.dtype == FLOAT64
            and not t.shape
            and all(a.op is not CONST or a.attr.__class__ in EXACT_LEAVES for a in args)
        ):
            return fold_exact(t) or _exact_zero(t)  # sqrt(2)**2 -> 2.0; sqrt(2) + 1 stays
        return _float_fold(t)  # sqrt(2) + 0.5 -> 1.9142135623730951: mixed with a float

    return fold_constants


def _exact_zero(t: Term) -> Term | None:
    """``0.0`` for ``c*r + (-c)*r`` or ``c*r - c*r`` over a finite exact ``r`` (``sqrt(12) - 2*sqrt(3)``), else None."""
    if len(t.args) != 2 or t.op not in (ADD, SUB):
        return None
    (ca, ra), (cb, rb) = split_coefficient(t.args[0]), split_coefficient(t.args[1])
    if ra is not rb or (ca + cb if t.op is ADD else ca - cb) != 0:
        return None
    value = _float_fold(ra)  # an exact real that is finite as a float is finite: r - r is exactly 0
    v = None if value is None else number(value)
    return const(0.0) if v is not None and math.isfinite(v) else None


def _float_fold(t: Term) -> Term | None:
    """The constant of ``t``'s value (numpy semantics), or None when evaluation fails."""
    try:
        return const(evaluate(t, {}), dtype=t.dtype)
    except (EvaluationError, ArithmeticError, ValueError, TypeError):
        return None


#: each term's cost, worked out once (terms are immutable and interned, so it never changes)
_COSTS: weakref.WeakKeyDictionary[Term, int] = weakref.WeakKeyDictionary()


def clear_costs() -> None:
    """Forget the costs worked out so far."""
    _COSTS.clear()


def cost(term: Term) -> int:
    """Distinct nodes of ``term`` other than scalar constants (operations, symbols, array constants).

    A node of n > 2 operands counts n - 1, the binary operations it stands for, so a flat
    ``x + y + x`` (as parsed) costs what ``(x + y) + x`` does. Cached per term.
    """
    found = _COSTS.get(term)
    if found is None:
        found = _COSTS[term] = sum(
            len(t.args) - 1 if len(t.args) > 2 else 1
            for t in postorder(term)
            if not (t.op.name == "const" and not t.shape)
        )
    return found
