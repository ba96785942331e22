"""Numbers in canonical forms: constant coefficients and exponents, kept exact or left alone.

A sum's coefficients and a product's exponents are combined in exact arithmetic (Python ints,
fractions for floats); a combination that is not exactly a constant of the term's dtype (an exponent
beyond int64, ``0.1 + 0.2``, a coefficient that overflows) is not made, and the terms stay as they
were. Next to float32 terms the numbers are float32 constants (:func:`const_like`): float32 has no
int exponents or coefficients, as numpy 2 makes Python numbers float32 there. Constants folded out
of their evaluation order must not overflow or underflow where the unfolded form would not.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np

from ..core import Term, const, get_op
from ..core.dtypes import FLOAT32, FLOAT64, INT64_MAX, INT64_MIN
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
    "INT_MIN",
    "INT_MAX",
]

CONST = get_op("const")
MUL, POW = get_op("mul"), get_op("pow")

INT_MIN, INT_MAX = INT64_MIN, INT64_MAX
#: the smallest normal float: a folded product below it has lost precision (or underflowed)
TINY = 2.0**-1022
#: the smallest normal float32
TINY32 = 2.0**-126


def number(t: Term) -> int | float | None:
    """The value of a scalar int or float constant (None for anything else, bools included; float32: a float)."""
    if t.op is CONST:
        cls = t.attr.__class__
        if cls is int or cls is float:
            return t.attr
        if cls is np.float32:
            return float(t.attr)
    return None


def const_like(value: int | float, like: Term, *, exact: bool = True) -> Term | None:
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
    return v.__class__ is int or (v.__class__ is float and v.is_integer())


def exact_total(values: list) -> int | float | None:
    """The exact sum of exponents: an int for integers, a float when the sum is exactly one, else None."""
    if all(integral(v) for v in values):
        return sum(int(v) for v in values)
    if not all(math.isfinite(v) for v in values):
        return None
    total = sum(Fraction(v) for v in values)
    return float(total) if Fraction(float(total)) == total else None


def fold_value(op: Any, consts: list[Term]) -> Term | None:
    """One constant for ``op(*consts)`` (numpy semantics), or None if evaluation fails.

    The constants of a sum or product are folded out of their evaluation order (``x*1e200*1e200``
    folds ``1e200*1e200``), so a fold that overflows, or a product that underflows, from finite
    non-zero operands is declined: the unfolded form may well stay finite (``x = 1e-300``).
    """
    if len(consts) == 1:
        return consts[0]
    try:
        value = evaluate(op(*consts), {})
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
    """``c*rest`` as ``(c, rest)`` (a canonical product has its coefficient first); else ``(1, t)``."""
    if t.op is MUL:
        c = number(t.args[0])
        if c is not None:
            rest = t.args[1:]
            return c, rest[0] if len(rest) == 1 else MUL(*rest)
    return 1, t


def scaled(c: Any, rest: Term) -> Term | None:
    """``c*rest`` in canonical form (``rest`` itself for c == 1)."""
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
    return POW(base, const(float(e)))
