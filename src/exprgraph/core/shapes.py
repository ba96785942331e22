"""Shape rules: broadcasting (symbolic dimensions included) and the tensor ops' shapes."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..errors import ShapeError
from .term import REGISTRY, Term

__all__ = ["broadcast_shapes", "broadcast_dim", "dims_equal", "normalize_axes", "register_dim_algebra"]

#: the dimension algebra, set by :func:`register_dim_algebra` (:mod:`exprgraph.dims` calls it on
#: import): simplify a dimension term (may return an int), and decide equality of two dimensions
#: (True/False, or None when it depends on the names)
simplify_dim_hook: Callable[[Any], Any] | None = None
dims_equal_hook: Callable[[Any, Any], bool | None] | None = None
#: reads a dimension written as text ("seq+1", "CeilToInt(s, 8)"); the core parser when unset
parse_dim_hook: Callable[[str], Any] | None = None


def register_dim_algebra(
    simplify: Callable[[Any], Any],
    equal: Callable[[Any, Any], bool | None],
    parse: Callable[[str], Any],
) -> None:
    """Install the symbolic dimension algebra the shape rules use (called once by ``exprgraph.dims``).

    ``simplify`` tidies the ``maximum`` that broadcasting builds for two symbolic dimensions,
    ``equal`` decides whether two dimensions are equal (``None``: it depends on the names), and
    ``parse`` reads a dimension written as text in a shape (``"seq+1"``).
    """
    global simplify_dim_hook, dims_equal_hook, parse_dim_hook
    simplify_dim_hook = simplify
    dims_equal_hook = equal
    parse_dim_hook = parse


def dims_equal(a: Any, b: Any) -> bool | None:
    """True/False when two dimensions are known equal/different, None when it depends on symbols."""
    if a is b:
        return True
    if a.__class__ is int and b.__class__ is int:
        return a == b  # by value: two equal ints above 256 are distinct objects
    if dims_equal_hook is not None:
        return dims_equal_hook(a, b)
    return None


def broadcast_dim(dims: list, shapes: tuple = (), maximum: Callable[[Any, Any], Any] | None = None) -> Any:
    """The size one axis broadcasts to, from its sizes: ints, integer terms or None (unknown).

    Ints other than 1 must agree (ShapeError); a symbolic or unknown size is 1 or the others' size,
    so an int other than 1 decides the axis; else an unknown size leaves it unknown (None), and two
    different symbolic sizes give their maximum (``maximum``, else the dimension algebra's).
    """
    known: int | None = None
    unknown = False
    symbolic: list[Term] = []
    for d in dims:
        if d is None:
            unknown = True
        elif d.__class__ is int:
            if d == 1:
                continue
            if known is not None and known != d:
                raise ShapeError(f"shapes {_fmt(shapes)} do not broadcast: {known} vs {d}")
            known = d
        elif d not in symbolic:
            symbolic.append(d)
    if known is not None:
        # a symbolic (or unknown) dim against a known size n is either 1 or n: the result is n
        return known
    if unknown:
        return None
    if not symbolic:
        return 1
    result = symbolic[0]
    for d in symbolic[1:]:
        # two different symbolic dims broadcast to their maximum (one of them must be 1 or both equal)
        if maximum is not None:
            result = maximum(result, d)
        else:
            result = REGISTRY["maximum"](result, d)
    return result if maximum is not None or simplify_dim_hook is None else simplify_dim_hook(result)


def _fmt(shapes: tuple) -> str:
    return ", ".join("(" + ", ".join(str(d) for d in s) + ("," if len(s) == 1 else "") + ")" for s in shapes)


def broadcast_shapes(*shapes: tuple, maximum: Callable[[Any, Any], Any] | None = None) -> tuple:
    """numpy broadcasting of shapes whose entries are ints, integer terms or None (see :func:`broadcast_dim`)."""
    nonscalar = [s for s in shapes if s]
    if not nonscalar:
        return ()
    if len(nonscalar) == 1:
        return nonscalar[0]
    first = nonscalar[0]
    if all(s is first or s == first for s in nonscalar):
        return first
    ndim = max(len(s) for s in nonscalar)
    out = []
    for i in range(ndim, 0, -1):
        dims = [s[-i] for s in nonscalar if len(s) >= i]
        out.append(broadcast_dim(dims, shapes, maximum))
    return tuple(out)


def normalize_axes(axis: Any, ndim: int, what: str) -> tuple[int, ...]:
    """Axes as a tuple of non-negative ints (``None`` means all), checked against ``ndim``."""
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    out = []
    for a in axes:
        if not isinstance(a, int) or isinstance(a, bool) or not -ndim <= a < ndim:
            raise ShapeError(f"{what}: axis {a!r} is out of range for {ndim} dimensions")
        a = a % ndim
        if a in out:
            raise ShapeError(f"{what}: repeated axis {a}")
        out.append(a)
    return tuple(out)
