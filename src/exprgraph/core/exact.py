"""Exact numbers: the values of exact constants, and exact arithmetic on them.

An exact constant is a constant term whose value is a :class:`Rational` (a
:class:`fractions.Fraction` with a denominator above 1: a whole one is an int64 constant) or an
:class:`ExactName` (``pi``, ``e``): real, float64-typed for dtype inference, and a float only
when evaluated or compiled. Code that does not know exact values reads them as it reads array
constants, through ``.array``: a read-only 0-d float64 array of the value, rounded once. This
module knows values only (no terms): :mod:`.exact_fold` folds terms with it.

Roots are exact or refused: :func:`integer_root` is the k-th root of a perfect k-th power and
None otherwise; :func:`square_split` takes the square factors out of an integer (``8 = 2**2 * 2``).
Every result is bounded (:data:`MAX_BITS`), so exact arithmetic never runs away on big powers.

>>> integer_root(27, 3), integer_root(28, 3)
(3, None)
>>> square_split(72)
(6, 2)
>>> rational_power(Fraction(4, 9), Fraction(3, 2))
Fraction(8, 27)
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import lru_cache
from typing import Any

import numpy as np

__all__ = [
    "Rational",
    "ExactName",
    "PI",
    "EULER",
    "EXACT_NAMES",
    "MAX_BITS",
    "exact_name",
    "is_exact_value",
    "integer_root",
    "rational_root",
    "rational_power",
    "square_split",
    "TRIAL_BOUND",
    "prime_factors",
    "squarefree_split",
    "exact_latex",
]

#: the largest numerator or denominator (in bits) an exact fold makes; beyond it the term stays
MAX_BITS = 4096
#: square factors are looked for among the integers up to this bound
_SQUARE_TRIALS = 1000
#: radicands are factored by trial division up to this bound (a cofactor below its square is a prime)
TRIAL_BOUND = 10_000


def _float_view(value: float) -> np.ndarray:
    """A read-only 0-d float64 array of ``value``."""
    out = np.array(value, dtype=np.float64)
    out.flags.writeable = False
    return out


class Rational(Fraction):
    """The value of a rational constant: a Fraction that also shows its float64 value as ``.array``."""

    __slots__ = ()

    @property
    def array(self) -> np.ndarray:
        """The value rounded once to float64, as a read-only 0-d array."""
        return _float_view(float(self))


class ExactName:
    """An exact symbolic constant (``pi``, ``e``): one instance per name, a float only when evaluated."""

    __slots__ = ("name", "value")

    def __init__(self, name: str, value: float) -> None:
        self.name = name
        self.value = value

    @property
    def array(self) -> np.ndarray:
        """The value rounded to float64, as a read-only 0-d array."""
        return _float_view(self.value)

    def __repr__(self) -> str:
        return self.name

    def __float__(self) -> float:
        return self.value

    def __int__(self) -> int:
        return int(self.value)  # truncated, as int() of its float

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        return exact_name, (self.name,)


#: Archimedes' constant, printed and parsed as ``pi``
PI = ExactName("pi", math.pi)
#: Euler's number, printed and parsed as ``e`` (SymPy's ``E``)
EULER = ExactName("e", math.e)
#: the exact names by their spelling
EXACT_NAMES = {"pi": PI, "e": EULER}


def exact_name(name: str) -> ExactName:
    """The exact constant spelled ``name`` (``"pi"`` or ``"e"``)."""
    try:
        return EXACT_NAMES[name]
    except KeyError:
        raise ValueError(f"no exact constant is called {name!r}; use one of {', '.join(EXACT_NAMES)}") from None


def is_exact_value(value: Any) -> bool:
    """Whether ``value`` is the value of an exact constant (a Rational or an ExactName)."""
    cls = value.__class__
    return cls is Rational or cls is ExactName


def _small(q: Fraction) -> bool:
    return q.numerator.bit_length() <= MAX_BITS and q.denominator.bit_length() <= MAX_BITS


def integer_root(n: int, k: int) -> int | None:
    """The exact ``k``-th root of the integer ``n >= 0``, or None when ``n`` is no perfect ``k``-th power."""
    if n < 0 or k < 1 or n.bit_length() > MAX_BITS:
        return None
    if k == 1 or n < 2:
        return n
    if k == 2:
        r = math.isqrt(n)
        return r if r * r == n else None
    if k > n.bit_length():
        return None  # 2**k > n > 1: no integer root
    lo, hi = 1, 1 << (n.bit_length() // k + 1)
    while lo < hi:  # the largest r with r**k <= n, by bisection
        mid = (lo + hi + 1) // 2
        if mid**k <= n:
            lo = mid
        else:
            hi = mid - 1
    return lo if lo**k == n else None


def rational_root(q: Fraction, k: int) -> Fraction | None:
    """The exact ``k``-th root of the rational ``q >= 0``, or None when it is irrational."""
    num = integer_root(q.numerator, k)
    if num is None:
        return None
    den = integer_root(q.denominator, k)
    return None if den is None else Fraction(num, den)


def rational_power(base: Fraction, exponent: Fraction) -> Fraction | None:
    """``base**exponent`` when it is rational and small (``(4/9)**(3/2) = 8/27``), else None.

    A negative base takes integer exponents only (a real root of it is nan in float64); a zero
    base a positive exponent only (``0**-1`` is inf).
    """
    p, q = exponent.numerator, exponent.denominator
    if base == 0:
        return Fraction(0) if exponent > 0 else (Fraction(1) if exponent == 0 else None)
    if base < 0 and q != 1:
        return None
    root = base if q == 1 else rational_root(base, q)
    if root is None:
        return None
    size = max(root.numerator.bit_length(), root.denominator.bit_length())
    if size * abs(p) > MAX_BITS:
        return None
    out = root**p
    return out if _small(out) else None


def square_split(n: int) -> tuple[int, int]:
    """``(a, b)`` with ``n = a**2 * b``, the square factors below a trial bound taken out of ``n >= 1``."""
    a, b = 1, n
    root = integer_root(b, 2)
    if root is not None:
        return root, 1
    f = 2
    while f <= _SQUARE_TRIALS and f * f <= b:
        while b % (f * f) == 0:
            a, b = a * f, b // (f * f)
        f += 1
    return a, b


@lru_cache(maxsize=4096)
def prime_factors(n: int) -> tuple[tuple[int, int], ...] | None:
    """The prime factorisation of ``n >= 1`` as ``((p, k), ...)``, or None when trial division cannot finish it."""
    out: list[tuple[int, int]] = []
    p = 2
    while p <= TRIAL_BOUND and p * p <= n:
        k = 0
        while n % p == 0:
            n //= p
            k += 1
        if k:
            out.append((p, k))
        p += 1 if p == 2 else 2
    if n > 1:
        if n < TRIAL_BOUND * TRIAL_BOUND:
            out.append((n, 1))  # no factor up to its square root: a prime
        else:
            r = math.isqrt(n)
            if r * r != n or r >= TRIAL_BOUND * TRIAL_BOUND:
                return None  # a cofactor with no factor up to the bound, no prime square: unknown
            out.append((r, 2))  # the square of a number with no factor up to its square root: of a prime
    return tuple(out)


def squarefree_split(n: int) -> tuple[int, int] | None:
    """``(a, m)`` with ``n = a**2 * m`` and ``m`` square-free, for ``n >= 1``; None when ``n`` cannot be factored."""
    if n < 1 or n.bit_length() > MAX_BITS:
        return None
    found = prime_factors(n)
    if found is None:
        return None
    a = m = 1
    for p, k in found:
        a *= p ** (k // 2)
        if k % 2:
            m *= p
    return a, m


def exact_latex(value: Rational | ExactName) -> str:
    """LaTeX of an exact value: ``\\frac{1}{3}``, ``-\\frac{1}{3}``, ``\\pi``, ``\\mathrm{e}``.

    Euler's number is upright (ISO 80000-2), so it never reads as a symbol named ``e`` (italic ``e``).
    """
    if isinstance(value, ExactName):
        return "\\pi" if value is PI else "\\mathrm{e}"
    q = Fraction(value)
    sign = "-" if q < 0 else ""
    return f"{sign}\\frac{{{abs(q.numerator)}}}{{{q.denominator}}}"
