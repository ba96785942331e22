"""Dtypes: the element types terms carry, and how they combine.

Promotion follows numpy 2 for arrays: ``bool`` meets anything as that thing; ``int64`` with
``int64`` stays ``int64``; ``float32`` with ``float32`` or ``bool`` stays ``float32``; ``float32``
with ``float64`` is ``float64``, and so is ``float32`` with ``int64`` (a float32 cannot hold every
int64, so numpy takes the float type that can hold both well). Python numbers met by an operator
on a term are *weak*, as numpy 2 treats Python scalars: they take the term's float type
(``x32 + 1.5`` stays float32; see :func:`weak_dtype`).
"""

from __future__ import annotations

from ..errors import DTypeError
from .exact import ExactName, Rational

__all__ = [
    "FLOAT64",
    "FLOAT32",
    "INT64",
    "BOOL",
    "DTYPES",
    "FLOATS",
    "is_float",
    "as_dtype",
    "promote",
    "weak_dtype",
    "dtype_of_value",
    "INT64_MIN",
    "INT64_MAX",
]

#: the range of an int64
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1

FLOAT64 = "float64"
FLOAT32 = "float32"
INT64 = "int64"
BOOL = "bool"

#: every dtype, from the narrowest (bool < int64 < float32 < float64, but int64 with float32 is float64)
DTYPES = (BOOL, INT64, FLOAT32, FLOAT64)
#: the floating dtypes
FLOATS = frozenset({FLOAT32, FLOAT64})
_RANK = {d: i for i, d in enumerate(DTYPES)}
_ALIASES = {
    "float": FLOAT64,
    "f8": FLOAT64,
    "double": FLOAT64,
    "f4": FLOAT32,
    "single": FLOAT32,
    "int": INT64,
    "i8": INT64,
    "bool_": BOOL,
}


def is_float(dtype: str) -> bool:
    """Whether ``dtype`` is a floating dtype (float32 or float64)."""
    return dtype in FLOATS


def as_dtype(dtype: object) -> str:
    """Normalise a dtype spelling (``"float"``, ``float``, ``numpy.float32``...) to one of DTYPES."""
    if isinstance(dtype, str):
        name = _ALIASES.get(dtype, dtype)
        if name in _RANK:
            return name
        raise DTypeError(f"unknown dtype {dtype!r}; use one of {', '.join(DTYPES)}")
    if dtype is float:
        return FLOAT64
    if dtype is int:
        return INT64
    if dtype is bool:
        return BOOL
    label = getattr(dtype, "__name__", None) or getattr(dtype, "name", None)
    if isinstance(label, str):
        return as_dtype(label)
    raise DTypeError(f"unknown dtype {dtype!r}; use one of {', '.join(DTYPES)}")


def promote(*dtypes: str) -> str:
    """The dtype numpy 2 gives arrays of these dtypes combined (bool < int64 < float64; float32 see above)."""
    best = BOOL
    rank = 0
    has_int = False
    for d in dtypes:
        r = _RANK[d]
        if r == 1:
            has_int = True
        if r > rank:
            best, rank = d, r
    if best == FLOAT32 and has_int:
        return FLOAT64  # float32 with int64: numpy 2 takes float64
    return best


def weak_dtype(value: object, context: str) -> str | None:
    """The dtype a Python number ``value`` takes next to operands of dtype ``context`` (numpy 2's weak scalars).

    A Python int or float met with float32 operands becomes a float32 constant (``x32 * 2`` and
    ``x32 + 0.1`` stay float32, the constant rounded to float32 as numpy rounds it); None means the
    value keeps its own dtype (a bool, or any number met with other dtypes).
    """
    if context == FLOAT32 and value.__class__ in (int, float):
        return FLOAT32
    return None


def dtype_of_value(value: object) -> str:
    """The dtype of a Python or numpy scalar/array value (float32 values stay float32; exact ones float64)."""
    if isinstance(value, bool):
        return BOOL
    if isinstance(value, int):
        return INT64
    if isinstance(value, float):
        return FLOAT64
    if value.__class__ is Rational or value.__class__ is ExactName:
        return FLOAT64  # an exact constant is real: float64 for dtype inference
    dtype = getattr(value, "dtype", None)
    kind = getattr(dtype, "kind", None)
    if kind == "b":
        return BOOL
    if kind in ("i", "u"):
        return INT64
    if kind == "f":
        return FLOAT32 if getattr(dtype, "itemsize", 8) == 4 else FLOAT64
    raise DTypeError(f"cannot make a constant of {type(value).__name__} {value!r}")
