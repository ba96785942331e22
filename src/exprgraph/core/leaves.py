"""Leaves: symbols and constants, and the shape entries (ints or integer terms) they carry."""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from typing import Any

import numpy as np

from ..errors import AssumptionError, ShapeError
from . import shapes
from .assumptions import SymbolAttr, make_assumptions
from .dtypes import BOOL, FLOAT32, FLOAT64, INT64, INT64_MAX, INT64_MIN, as_dtype, dtype_of_value
from .exact import ExactName, Rational, exact_name
from .term import REGISTRY, Term, hooks
from .termbase import native_leaf_rules
from .tokens import MAX_TOKEN, RESERVED_NAMES, check_name

__all__ = [
    "Symbol",
    "symbols",
    "const",
    "rational",
    "exact_constant",
    "ConstArray",
    "as_dim",
    "as_shape",
]


class ConstArray:
    """An immutable numpy array held by an array constant; equal by dtype, shape and exact bits."""

    __slots__ = ("array", "_hash")

    def __init__(self, array: np.ndarray) -> None:
        array = np.array(array, copy=True)
        array.flags.writeable = False
        self.array = array
        self._hash = hash((array.dtype.str, array.shape, array.tobytes()))

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ConstArray):
            return NotImplemented
        a, b = self.array, other.array
        return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()

    def __repr__(self) -> str:
        return f"array({self.array.tolist()!r})"


def const_key(value: Any) -> tuple:
    """Intern key of a constant: by dtype and exact bits (1, 1.0 and True differ; -0.0 is not 0.0)."""
    cls = value.__class__
    if cls is float:
        return ("f", value) if value == value and value != 0.0 else ("f", value.hex())
    if cls is int:
        return ("i", value)
    if cls is bool:
        return ("b", value)
    if cls is _F32:
        return ("f32", float(value).hex())
    if cls is Rational:
        return ("q", value.numerator, value.denominator)  # exact: never equal to the float 0.5
    if cls is ExactName:
        return ("x", value.name)
    return ("a", value)


_F32 = np.float32
#: our dtype names -> numpy scalar types of array constants
_ARRAY_TYPES = {FLOAT64: np.float64, FLOAT32: np.float32, INT64: np.int64, BOOL: np.bool_}


def _exact_scalar(value: Fraction | ExactName, dtype: str) -> Any:
    """An exact value as a constant of ``dtype``: itself for float64, else cast as numpy casts its float."""
    if dtype == FLOAT64 and (value.__class__ is ExactName or value.denominator != 1):  # type: ignore[union-attr]
        return value if value.__class__ is not Fraction else Rational(value)  # an exact constant stays exact
    if dtype == INT64:
        return _scalar(int(value), dtype)  # truncated, as numpy casts 3.5 to 3
    if dtype == BOOL:
        return value != 0 if value.__class__ is not ExactName else True
    return _scalar(float(value), dtype)  # rounded once


def _scalar(value: Any, dtype: str) -> Any:
    if dtype == FLOAT64:
        return float(value)
    if dtype == FLOAT32:
        with np.errstate(over="ignore"):  # 1e300 as a float32 is inf, as numpy casts it
            return _F32(value)
    if dtype == BOOL:
        return bool(value)
    v = int(value)
    if not INT64_MIN <= v <= INT64_MAX:
        raise OverflowError(f"integer constant {v} does not fit in int64")
    return v


def const(value: Any, dtype: Any = None) -> Term:
    """A constant term; Python and numpy scalars and arrays are accepted (``dtype`` casts).

    A float32 constant (``const(np.float32(1.5))`` or ``const(1.5, "float32")``) holds a
    ``numpy.float32`` value; other scalars hold Python numbers. A ``Fraction`` is an exact rational
    constant (float64-typed; a whole one is an int64 constant), as is an :class:`~.exact.ExactName`.
    """
    cls = value.__class__
    if dtype is None and (cls is float or cls is int):  # the common case first
        return Term(REGISTRY["const"], (), _scalar(value, FLOAT64 if cls is float else INT64))
    if cls is Term:
        if value.is_const and (dtype is None or as_dtype(dtype) == value.dtype):
            return value
        raise TypeError(f"const() takes a value, not the term {value}")
    if isinstance(value, (list, tuple, np.ndarray)) and np.ndim(value) > 0:
        arr = np.asarray(value)
        kind = as_dtype(dtype) if dtype is not None else dtype_of_value(arr)
        with np.errstate(over="ignore"):
            arr = arr.astype(_ARRAY_TYPES[kind])
        return Term(REGISTRY["const"], (), ConstArray(arr))
    if isinstance(value, np.ndarray) or isinstance(value, np.generic):
        value = value.item() if value.dtype != _F32 else np.asarray(value)[()]
    cls = value.__class__
    if cls is not float and cls is not int and (cls is ExactName or isinstance(value, Fraction)):
        if dtype is not None or cls is ExactName or value.denominator != 1:
            kind = FLOAT64 if dtype is None else as_dtype(dtype)
            return Term(REGISTRY["const"], (), _exact_scalar(value, kind))
        value = value.numerator  # a whole rational is an int64 constant
    kind = as_dtype(dtype) if dtype is not None else dtype_of_value(value)
    return Term(REGISTRY["const"], (), _scalar(value, kind))


def rational(numerator: int, denominator: int = 1) -> Term:
    """The exact rational constant ``numerator/denominator`` (printed ``rational(1, 3)``; whole: an int64)."""
    for part in (numerator, denominator):
        if not isinstance(part, (int, np.integer)) or isinstance(part, bool):
            raise TypeError(f"rational() takes two ints, not {part!r}: write rational(1, 3)")
    if denominator == 0:
        raise ZeroDivisionError("rational() needs a non-zero denominator: rational(1, 3), say")
    return const(Fraction(int(numerator), int(denominator)))


def exact_constant(name: str) -> Term:
    """The exact symbolic constant ``pi`` or ``e`` (what ``parse("pi")`` reads): a float only when evaluated."""
    return const(exact_name(name))


def const_infer(args: tuple, attr: Any) -> tuple[str, tuple]:
    """dtype and shape of a constant's value."""
    if attr.__class__ is ConstArray:
        return dtype_of_value(attr.array), attr.array.shape
    return dtype_of_value(attr), ()


def symbol_infer(args: tuple, attr: Any) -> tuple[str, tuple]:
    """dtype and shape a symbol was declared with."""
    return attr[1], attr[2]


def as_dim(entry: Any) -> int | Term:
    """A shape entry: a non-negative int, or an int64 scalar term (a name or ``"seq+1"`` is parsed)."""
    if isinstance(entry, (bool, np.bool_)):
        raise ShapeError(f"a shape entry must be an int or an integer term, not {entry!r}")
    if isinstance(entry, (int, np.integer)):
        if entry < 0:
            raise ShapeError(f"a dimension cannot be negative: {entry}")
        return int(entry)
    if isinstance(entry, str):
        if entry.isidentifier() and entry not in RESERVED_NAMES:
            return Symbol(entry, INT64)
        if shapes.parse_dim_hook is not None:
            return as_dim(shapes.parse_dim_hook(entry))
        entry = hooks.parse(entry, dtype=INT64)
    if entry.__class__ is Term:
        if entry.dtype != INT64 or entry.shape != ():
            raise ShapeError(f"a symbolic dimension must be an int64 scalar term, not {entry!r}")
        if entry.is_const:
            return as_dim(entry.value)
        return entry
    raise ShapeError(f"a shape entry must be an int or an integer term, not {entry!r}")


def as_shape(shape: Any) -> tuple:
    """Normalise a shape: an int, or a sequence of ints, names and integer terms."""
    if isinstance(shape, (int, str, Term)) and not isinstance(shape, bool):
        shape = (shape,)
    return tuple(as_dim(e) for e in shape)


#: the C base's maker of plain symbols (see the end of this module); None for the pure base
_plain: Callable[[str], Any] | None = None


def Symbol(name: str, dtype: Any = FLOAT64, shape: Any = (), **assumptions: Any) -> Term:  # noqa: N802 - a type
    """A named leaf of the given dtype and shape (``Symbol("A", shape=("m", "n"))``).

    Keywords are assumptions, part of the symbol's identity (SymPy's names: ``positive``,
    ``nonnegative``, ``negative``, ``nonpositive``, ``nonzero``, ``real``, ``finite``, ``integer``,
    and the bounds ``lower=``, ``upper=``): ``Symbol("x", positive=True)`` is not ``Symbol("x")``.
    """
    if dtype is FLOAT64 and shape.__class__ is tuple and not shape and not assumptions and _plain is not None:
        made = _plain(name)  # the C base: a plain name's float64 scalar, the term the code below builds
        if made is not None:
            return made
    # an ASCII identifier that is short and not reserved passes check_name (which says why any other fails);
    # tested inline, as a large model makes a symbol per parameter
    if not (name.__class__ is str and name.isascii() and name.isidentifier() and len(name) <= MAX_TOKEN) or (
        name in RESERVED_NAMES
    ):
        check_name(name)
    if dtype is not FLOAT64:  # the default needs no normalising
        dtype = as_dtype(dtype)
    shape = () if shape.__class__ is tuple and not shape else as_shape(shape)  # a scalar: nothing to normalise
    if assumptions and any(v is not None for v in assumptions.values()):
        if dtype == INT64 and assumptions.get("integer") is False:
            raise AssumptionError(f"an int64 symbol's values are integers: drop integer=False from {name!r}")
        if dtype == INT64 and assumptions.get("integer") is None:
            assumptions["integer"] = True  # an int64 symbol's values are integers: one symbol for both spellings
        return Term(REGISTRY["symbol"], (), SymbolAttr(name, dtype, shape, make_assumptions(assumptions)))
    return Term(REGISTRY["symbol"], (), (name, dtype, shape))


def symbols(names: str, dtype: Any = FLOAT64, shape: Any = (), **assumptions: Any) -> Any:
    """Symbols from a space- or comma-separated string: one name gives a term, several a tuple.

    Keywords are assumptions given to every one (``symbols("x y", positive=True)``), as for :func:`Symbol`.
    """
    parts = names.replace(",", " ").split()
    if not parts:
        raise ValueError("symbols() needs at least one name")
    made = tuple(Symbol(p, dtype, shape, **assumptions) for p in parts)
    return made[0] if len(made) == 1 else made


hooks.const = const
# the C base answers the plain cases of these two rules itself (an exact tuple attr, a float or an int),
# and builds the symbols of plain names (its twin: the rest of Symbol, which builds them when this is None)
_plain = native_leaf_rules(symbol_infer, const_infer, RESERVED_NAMES, MAX_TOKEN)
