"""Dtypes: the three element types terms carry, and how they combine."""

from __future__ import annotations

from ..errors import DTypeError

__all__ = ["FLOAT64", "INT64", "BOOL", "DTYPES", "as_dtype", "promote", "dtype_of_value"]

FLOAT64 = "float64"
INT64 = "int64"
BOOL = "bool"

#: dtypes ordered by promotion rank (bool < int64 < float64)
DTYPES = (BOOL, INT64, FLOAT64)
_RANK = {d: i for i, d in enumerate(DTYPES)}
_ALIASES = {"float": FLOAT64, "f8": FLOAT64, "double": FLOAT64, "int": INT64, "i8": INT64, "bool_": BOOL}


def as_dtype(dtype: object) -> str:
    """Normalise a dtype spelling (``"float"``, ``float``, ``numpy.int64``...) to one of DTYPES."""
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
    """The smallest dtype that holds every argument's values (bool < int64 < float64)."""
    best = BOOL
    rank = 0
    for d in dtypes:
        r = _RANK[d]
        if r > rank:
            best, rank = d, r
    return best


def dtype_of_value(value: object) -> str:
    """The dtype of a Python or numpy scalar/array value."""
    if isinstance(value, bool):
        return BOOL
    if isinstance(value, int):
        return INT64
    if isinstance(value, float):
        return FLOAT64
    kind = getattr(getattr(value, "dtype", None), "kind", None)
    if kind == "b":
        return BOOL
    if kind in ("i", "u"):
        return INT64
    if kind == "f":
        return FLOAT64
    raise DTypeError(f"cannot make a constant of {type(value).__name__} {value!r}")
