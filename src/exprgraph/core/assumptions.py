"""Assumptions a symbol carries (SymPy's names: ``positive``, ``real``, ``integer``...) and bounds.

``Symbol("x", positive=True)`` is another symbol than ``Symbol("x")``: the assumptions are part of
its identity. Its attr is then a :class:`SymbolAttr`, a tuple ``(name, dtype, shape)`` like a plain
symbol's (every reader that unpacks three fields keeps working) that also holds an
:class:`Assumptions` and compares and hashes with it. A symbol without assumptions keeps the plain
tuple, so nothing changes for it.

The facts are closed under implication when they are made (``positive`` gives ``nonnegative``,
``nonzero``, ``real``), so two spellings of the same facts make the same symbol, and facts that
contradict each other raise :class:`~exprgraph.errors.AssumptionError`. Their meaning, for a value
``v`` bound to the symbol (elementwise for a shaped one):

- ``real``: ``v`` is not nan (an extended real: +-inf allowed unless ``finite``);
- ``finite``: ``v`` is a finite real number; ``integer``: a finite integer value;
- ``positive`` ``v > 0``, ``nonnegative`` ``v >= 0``, ``negative`` ``v < 0``, ``nonpositive``
  ``v <= 0``, ``nonzero`` ``v != 0`` (each also gives ``real``, as in SymPy);
- ``lower=a`` ``v >= a``, ``upper=b`` ``v <= b`` (closed bounds; they give ``real``).

A fact given as ``False`` is recorded as denied (``integer=False``): it never adds a fact, and a
denied fact that the others imply is a contradiction.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

from ..errors import AssumptionError

__all__ = ["FACTS", "Assumptions", "SymbolAttr", "make_assumptions", "assumptions_of"]

#: SymPy's names of the facts a symbol may carry
FACTS = ("positive", "nonnegative", "negative", "nonpositive", "nonzero", "real", "finite", "integer")
_BOUNDS = ("lower", "upper")
_INF = math.inf

Number = int | float | Fraction


class Assumptions:
    """The closed facts of a symbol: an interval ``[lower, upper]`` (ends open or closed) and flags."""

    __slots__ = ("lower", "lower_open", "upper", "upper_open", "real", "finite", "integer", "nonzero", "denied", "_key")

    def __init__(
        self,
        lower: Number = -_INF,
        lower_open: bool = False,
        upper: Number = _INF,
        upper_open: bool = False,
        *,
        real: bool = False,
        finite: bool = False,
        integer: bool = False,
        nonzero: bool = False,
        denied: frozenset[str] = frozenset(),
    ) -> None:
        self.lower, self.lower_open, self.upper, self.upper_open = lower, lower_open, upper, upper_open
        self.real, self.finite, self.integer, self.nonzero, self.denied = real, finite, integer, nonzero, denied
        self._key = (lower, lower_open, upper, upper_open, real, finite, integer, nonzero, denied)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Assumptions) and self._key == other._key

    def __hash__(self) -> int:
        return hash(self._key)

    def __reduce__(self) -> tuple:
        return (_rebuild, (self._key,))

    def facts(self) -> frozenset[str]:
        """The names of every fact that holds (implied ones included)."""
        lo, hi = self.lower, self.upper
        held = {"real"} if self.real else set()
        held |= {"finite"} if self.finite else set()
        held |= {"integer"} if self.integer else set()
        held |= {"nonzero"} if self.nonzero else set()
        held |= {"nonnegative"} if lo >= 0 else set()
        held |= {"positive"} if lo > 0 or (lo == 0 and self.lower_open) else set()
        held |= {"nonpositive"} if hi <= 0 else set()
        held |= {"negative"} if hi < 0 or (hi == 0 and self.upper_open) else set()
        return frozenset(held)

    def keywords(self) -> dict[str, Any]:
        """A smallest set of keywords that makes these assumptions again (``Symbol(name, **kw)``)."""
        kw: dict[str, Any] = {}
        lo, hi = self.lower, self.upper
        if lo == 0:
            kw["positive" if self.lower_open else "nonnegative"] = True
        elif lo != -_INF:
            kw["lower"] = lo
        if hi == 0:
            kw["negative" if self.upper_open else "nonpositive"] = True
        elif hi != _INF:
            kw["upper"] = hi
        implied = Assumptions.from_keywords(kw).facts() if kw else frozenset()
        for name in ("integer", "finite", "nonzero", "real"):
            if getattr(self, name) and name not in implied:
                kw[name] = True
                implied = Assumptions.from_keywords(kw).facts()
        for name in sorted(self.denied):
            kw[name] = False
        return kw

    def __repr__(self) -> str:
        return ", ".join(f"{k}={v!r}" for k, v in self.keywords().items())

    @staticmethod
    def from_keywords(given: dict[str, Any]) -> Assumptions:
        """The closed assumptions of SymPy-style keywords; contradictions raise AssumptionError."""
        return make_assumptions(given)


def _rebuild(key: tuple) -> Assumptions:
    """Assumptions from their pickled key."""
    lo, lo_open, hi, hi_open, real, finite, integer, nonzero, denied = key
    return Assumptions(
        lo, lo_open, hi, hi_open, real=real, finite=finite, integer=integer, nonzero=nonzero, denied=denied
    )


def _number(name: str, value: Any) -> Number:
    """A bound as an exact number (an integral float becomes an int, so 1.0 and 1 are one bound)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, Fraction)):
        raise AssumptionError(f"{name}= takes a real number, not {value!r}", facts=(name,))
    if value != value:
        raise AssumptionError(f"{name}= cannot be nan: give a real number or leave it out", facts=(name,))
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    if isinstance(value, Fraction) and value.denominator == 1:
        return int(value)
    return value


def _clash(message: str, *names: str) -> AssumptionError:
    return AssumptionError(f"contradictory assumptions: {message}; remove one of them", facts=names)


def _interval(given: dict[str, Any]) -> tuple[Number, bool, Number, bool]:
    """The interval of the sign facts and the bounds (the tightest of each end)."""
    lows: list[tuple[Number, bool]] = [(-_INF, False)]
    highs: list[tuple[Number, bool]] = [(_INF, False)]
    if given.get("positive"):
        lows.append((0, True))
    if given.get("nonnegative"):
        lows.append((0, False))
    if given.get("negative"):
        highs.append((0, True))
    if given.get("nonpositive"):
        highs.append((0, False))
    if given.get("lower") is not None:
        lows.append((_number("lower", given["lower"]), False))
    if given.get("upper") is not None:
        highs.append((_number("upper", given["upper"]), False))
    lo, lo_open = max(lows, key=lambda e: (e[0], e[1]))
    hi, hi_open = min(highs, key=lambda e: (e[0], not e[1]))
    return lo, lo_open, hi, hi_open


def _tighten_integer(lo: Number, lo_open: bool, hi: Number, hi_open: bool) -> tuple[Number, bool, Number, bool]:
    """An integer's interval with integer closed ends (``n > 0`` is ``n >= 1``)."""
    if lo != -_INF:
        c = math.ceil(lo)
        lo, lo_open = (c + 1 if lo_open and c == lo else c), False
    if hi != _INF:
        f = math.floor(hi)
        hi, hi_open = (f - 1 if hi_open and f == hi else f), False
    return lo, lo_open, hi, hi_open


def make_assumptions(given: dict[str, Any]) -> Assumptions:
    """The closed :class:`Assumptions` of keywords (``positive=True``, ``lower=0``...), checked for contradictions."""
    try:
        key = tuple(sorted((k, v.__class__, v) for k, v in given.items()))
        hash(key)
    except TypeError:
        return _make(given)  # an unhashable value: _make names it
    found = _MADE.get(key)
    if found is None:
        if len(_MADE) >= _MADE_LIMIT:
            _MADE.clear()
        found = _MADE[key] = _make(given)
    return found


#: assumptions made from each spelling of keywords (symbols are made in bulk with the same ones)
_MADE: dict[tuple, Assumptions] = {}
_MADE_LIMIT = 4096


def _make(given: dict[str, Any]) -> Assumptions:
    """:func:`make_assumptions` without its cache."""
    for name, value in given.items():
        if name not in FACTS and name not in _BOUNDS:
            known = ", ".join(FACTS + _BOUNDS)
            raise AssumptionError(f"unknown assumption {name!r}: use one of {known}", facts=(name,))
        if name in FACTS and value is not None and not isinstance(value, bool):
            raise AssumptionError(f"{name}= takes True or False, not {value!r}", facts=(name,))
    asserted = {k: v for k, v in given.items() if v is not None and v is not False}
    lo, lo_open, hi, hi_open = _interval(asserted)
    integer = bool(asserted.get("integer"))
    finite = integer or bool(asserted.get("finite"))
    if finite and (lo == _INF or hi == -_INF):
        raise _clash("a finite value cannot be infinite", *sorted(asserted))
    if integer:
        lo, lo_open, hi, hi_open = _tighten_integer(lo, lo_open, hi, hi_open)
    if lo > hi or (lo == hi and (lo_open or hi_open)):
        raise _clash(f"no value satisfies {', '.join(sorted(asserted))} (between {lo} and {hi})", *sorted(asserted))
    excludes_zero = lo > 0 or hi < 0 or (lo == 0 and lo_open) or (hi == 0 and hi_open)
    nonzero = bool(asserted.get("nonzero")) or excludes_zero
    if nonzero and lo == 0 == hi:
        raise _clash("a nonzero value cannot be 0", *sorted(asserted))
    bounded = lo != -_INF or hi != _INF or lo_open or hi_open
    real = (
        bool(asserted.get("real"))
        or finite
        or nonzero
        or bounded
        or any(asserted.get(k) for k in ("positive", "nonnegative", "negative", "nonpositive"))
    )
    made = Assumptions(lo, lo_open, hi, hi_open, real=real, finite=finite, integer=integer, nonzero=nonzero)
    denied = frozenset(k for k, v in given.items() if v is False)
    held = made.facts()
    if denied & held:
        raise _clash(f"{', '.join(sorted(denied & held))} is both given False and implied", *sorted(denied & held))
    if denied:
        made = Assumptions(
            lo, lo_open, hi, hi_open, real=real, finite=finite, integer=integer, nonzero=nonzero, denied=denied
        )
    return made


class SymbolAttr(tuple):
    """The attr ``(name, dtype, shape)`` of a symbol with assumptions; compares and hashes with them."""

    assumptions: Assumptions

    def __new__(cls, name: str, dtype: str, shape: tuple, assumptions: Assumptions) -> SymbolAttr:
        self = tuple.__new__(cls, (name, dtype, shape))
        self.assumptions = assumptions
        return self

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SymbolAttr):
            return False  # a plain (name, dtype, shape): the symbol without assumptions
        return tuple.__eq__(self, other) and self.assumptions == other.assumptions

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    def __hash__(self) -> int:
        return hash((tuple(self), self.assumptions))

    def __reduce__(self) -> tuple:
        return (SymbolAttr, (self[0], self[1], self[2], self.assumptions))

    def __repr__(self) -> str:
        return f"SymbolAttr({self[0]!r}, {self[1]!r}, {self[2]!r}, {self.assumptions!r})"


def assumptions_of(symbol: Any) -> Assumptions | None:
    """The assumptions of a symbol term (None for a symbol without any, and for other terms)."""
    attr = symbol.attr
    return attr.assumptions if attr.__class__ is SymbolAttr else None


def assumptions_text(attr: Any) -> str:
    """The keywords of a symbol's attr for its repr (``", positive=True"``; empty without assumptions)."""
    if attr.__class__ is not SymbolAttr:
        return ""
    return "".join(f", {k}={v!r}" for k, v in attr.assumptions.keywords().items())


#: our sign facts; SymPy's names of the same facts allow +-oo under ``extended_`` (ours do unless ``finite``)
_SIGNS = ("positive", "nonnegative", "negative", "nonpositive", "nonzero", "real")


def to_sympy_keywords(symbol: Any) -> dict[str, bool]:
    """Keywords of ``sympy.Symbol`` with this symbol's facts (bounds have no SymPy spelling and are left out).

    SymPy's ``positive`` (``real``, ...) implies finite: a fact of ours without ``finite`` is its
    ``extended_positive`` (``extended_real``...), so a round trip gives the same symbol back.
    """
    a = assumptions_of(symbol)
    if a is None:
        return {}
    held = a.facts()
    out: dict[str, bool] = {}
    for name in _SIGNS:
        if name in held:
            out[name if a.finite else f"extended_{name}"] = True
    if a.integer:
        out["integer"] = True
    elif a.finite:
        out["finite"] = True
    for name in sorted(a.denied):
        out[name] = False
    return out


def from_sympy_keywords(assumptions0: dict[str, Any], integer_dtype: bool) -> dict[str, Any]:
    """Our keywords for a SymPy symbol's ``assumptions0`` (empty for what the dtype already says).

    A SymPy ``Symbol("x", real=True)`` is how ``to_sympy`` writes a plain float symbol, and
    ``integer=True`` an int64 one, so those give no keywords: a round trip keeps the plain symbol.
    """
    given = {k: v for k, v in assumptions0.items() if v is True}
    kw: dict[str, Any] = {}
    for name in _SIGNS:
        if given.get(name) or given.get(f"extended_{name}"):
            kw[name] = True
    if given.get("integer"):
        kw["integer"] = True
    if given.get("finite"):
        kw["finite"] = True
    minimal = make_assumptions(kw).keywords() if kw else {}
    if integer_dtype and set(minimal) <= {"real", "finite", "integer"}:
        return {}
    if not integer_dtype and set(minimal) <= {"real", "finite"} and "finite" in minimal:
        return {}  # SymPy's real: what to_sympy writes for a plain float symbol
    if integer_dtype:
        minimal.pop("integer", None)
    return minimal
