"""Binding inputs: the env's values for the symbols of a DAG, cast to their dtypes and shape-checked.

A scalar symbol takes a value of any shape (that is how many parameter sets are evaluated at
once). A tensor symbol's value must have its declared shape: int entries exactly, symbolic entries
(int64 terms) bound consistently across all inputs. A dimension symbol may also be given in the
env by name or by term, and a dimension symbol used as a value in the expression takes the size
it was bound to when the env does not give it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from ..core.dtypes import BOOL, FLOAT32, FLOAT64, INT64
from ..core.exact import ExactName, Rational
from ..core.term import Term
from ..errors import EvaluationError, MissingValueError

__all__ = ["NUMPY_DTYPES", "SCALAR_TYPES", "MISSING", "lookup", "as_value", "bind_symbols", "const_value"]

#: our dtype names -> numpy dtypes
NUMPY_DTYPES: dict[str, np.dtype] = {
    FLOAT64: np.dtype(np.float64),
    FLOAT32: np.dtype(np.float32),
    INT64: np.dtype(np.int64),
    BOOL: np.dtype(np.bool_),
}
#: a constant's payload class -> the numpy scalar type (or maker) its value becomes
SCALAR_TYPES: dict[type, Any] = {float: np.float64, int: np.int64, bool: np.bool_, np.float32: np.float32}
# exact constants (a Fraction, pi, e) become floats here, where they are evaluated or compiled:
# float() of a Rational (a Fraction) is its correctly rounded float64
SCALAR_TYPES[Rational] = lambda q: np.float64(float(q))
SCALAR_TYPES[ExactName] = lambda n: np.float64(n.value)

#: marks an absent env entry (None could be a user's value)
MISSING = object()


def lookup(env: Mapping[Any, Any], symbol: Term) -> Any:
    """The env's value for ``symbol``, keyed by the term itself or else by its name (or MISSING)."""
    value = env.get(symbol, MISSING)
    if value is MISSING:
        value = env.get(symbol.attr[0], MISSING)
    return value


def _describe(symbol: Term) -> str:
    name, dtype, shape = symbol.attr
    if shape:
        return f"symbol {name!r} ({dtype}, shape {_fmt_shape(shape)})"
    return f"symbol {name!r} ({dtype})"


def _fmt_shape(shape: tuple) -> str:
    inner = ", ".join(str(d) for d in shape)
    return f"({inner},)" if len(shape) == 1 else f"({inner})"


def as_value(raw: Any, symbol: Term) -> tuple[Any, bool]:
    """``raw`` as a numpy value of ``symbol``'s dtype, and whether it is a fresh copy we may overwrite."""
    want = NUMPY_DTYPES[symbol.attr[1]]
    try:
        value = np.asarray(raw, dtype=want)
    except (TypeError, ValueError, OverflowError) as exc:
        raise EvaluationError(f"cannot use a {type(raw).__name__} as the value of {_describe(symbol)}: {exc}") from None
    if value.ndim == 0:
        return value[()], False
    # a fresh array only when numpy had to build one: from a list/tuple, or by casting an ndarray
    fresh = raw.__class__ in (list, tuple) or (isinstance(raw, np.ndarray) and raw.dtype != want)
    return value, fresh and value.flags.owndata


def const_value(node: Term) -> Any:
    """The numpy value of a constant: a numpy scalar of its dtype, or its (read-only) array."""
    attr = node.attr
    scalar = SCALAR_TYPES.get(attr.__class__)
    if scalar is not None:
        return scalar(attr)
    return attr.array


def _dim_from_env(raw: Any, dim: Term) -> int:
    try:
        arr = np.asarray(raw)
    except (TypeError, ValueError) as exc:
        raise EvaluationError(f"the value of dimension {dim.attr[0]!r} must be an integer: {exc}") from None
    if arr.ndim != 0 or arr.dtype.kind not in "iu" or int(arr) < 0:
        raise EvaluationError(
            f"the value of dimension {dim.attr[0]!r} must be a non-negative integer scalar, got {raw!r}"
        )
    return int(arr)


def _bind_dim(dim: Term, size: int, symbol: Term, axis: int, env: Mapping, dims: dict, source: dict) -> None:
    """Bind the dimension symbol ``dim`` to ``size`` (axis ``axis`` of ``symbol``), or check it."""
    if dim not in dims:
        given = lookup(env, dim)
        if given is not MISSING:
            dims[dim] = _dim_from_env(given, dim)
            source[dim] = "the env"
        else:
            dims[dim] = size
            source[dim] = f"axis {axis} of {symbol.attr[0]!r}"
            return
    if dims[dim] != size:
        raise EvaluationError(
            f"the value for {_describe(symbol)} has size {size} on axis {axis}, but dimension "
            f"{dim.attr[0]!r} is {dims[dim]} (from {source[dim]})"
        )


def _check_compound(
    checks: list[tuple[Term, int, Term, int]], env: Mapping, dims: dict[Term, int], evaluate: Any
) -> None:
    """Check dimension expressions like ``n+1`` once their symbols are bound."""
    for dim, size, symbol, axis in checks:
        sub: dict[Term, Any] = {}
        for s in dim.free_symbols:
            if s in dims:
                sub[s] = dims[s]
                continue
            given = lookup(env, s)
            if given is MISSING:
                raise EvaluationError(
                    f"cannot check axis {axis} of {_describe(symbol)}: dimension {dim} needs {s.attr[0]!r}; "
                    "pass it in the env"
                )
            sub[s] = _dim_from_env(given, s)
        expected = int(evaluate(dim, sub))
        if expected != size:
            raise EvaluationError(
                f"the value for {_describe(symbol)} has size {size} on axis {axis}, but dimension {dim} is {expected}"
            )


def bind_symbols(symbols: Iterable[Term], env: Mapping[Any, Any], evaluate: Any) -> tuple[dict, set]:
    """Values for ``symbols`` from ``env``: ``(values by symbol, symbols whose value is a fresh copy)``."""
    values: dict[Term, Any] = {}
    fresh: set[Term] = set()
    scalars: list[Term] = []
    dims: dict[Term, int] = {}
    source: dict[Term, str] = {}
    compound: list[tuple[Term, int, Term, int]] = []
    for symbol in symbols:
        shape = symbol.attr[2]
        if not shape:
            scalars.append(symbol)
            continue
        raw = lookup(env, symbol)
        if raw is MISSING:
            raise MissingValueError(f"no value for {_describe(symbol)}; give it in the env by name or by term")
        value, is_fresh = as_value(raw, symbol)
        got = np.shape(value)
        if len(got) != len(shape):
            raise EvaluationError(
                f"the value for {_describe(symbol)} has shape {_fmt_shape(got)}: "
                f"expected {len(shape)} axes, got {len(got)}"
            )
        for axis, (dim, size) in enumerate(zip(shape, got, strict=True)):
            if dim.__class__ is int:
                if dim != size:
                    raise EvaluationError(
                        f"the value for {_describe(symbol)} has shape {_fmt_shape(got)}: "
                        f"axis {axis} is {size}, expected {dim}"
                    )
            elif dim.op.name == "symbol":
                _bind_dim(dim, size, symbol, axis, env, dims, source)
            else:
                compound.append((dim, size, symbol, axis))
        values[symbol] = value
        if is_fresh:
            fresh.add(symbol)
    if compound:
        _check_compound(compound, env, dims, evaluate)
    for symbol in scalars:
        raw = lookup(env, symbol)
        if raw is MISSING:
            if symbol in dims:
                # a dimension symbol used as a value: the size it was bound to (dims are int64)
                values[symbol] = NUMPY_DTYPES[symbol.attr[1]].type(dims[symbol])
                continue
            raise MissingValueError(f"no value for {_describe(symbol)}; give it in the env by name or by term")
        value, is_fresh = as_value(raw, symbol)
        values[symbol] = value
        if is_fresh:
            fresh.add(symbol)
    return values, fresh
