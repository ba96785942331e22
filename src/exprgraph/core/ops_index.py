"""The standard table, index ops: slices, gathers (``take``) and their scatter-add, concatenation,
reshape and broadcast; and ``x[...]`` on shaped terms.

Each op is declared next to its numpy evaluation and its gradient rule; importing this module
registers them and gives terms their ``[]``. Indices are constants known at construction, checked
there (:class:`~exprgraph.errors.IndexOutOfRangeError` names the index and the axis), and the axes
they read need known (int) lengths. Evaluation with leading batch axes (many parameter sets) reads
every axis attr on the trailing axes, as the reductions do.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from ..errors import IndexOutOfRangeError, ShapeError
from .declare import _call
from .dtypes import INT64, promote
from .grad_tools import _O
from .inference import _axis_key, _numeric
from .leaves import ConstArray, const
from .op import get_op
from .shapes import broadcast_shapes, dims_equal, normalize_axes
from .term import Term, hooks

__all__ = ["getitem", "take", "concat", "stack", "reshape", "broadcast_to", "slice_axis", "slice_of"]


class _Lead(NamedTuple):
    """An op's attr read on a value with ``lead`` leading batch axes."""

    lead: int
    attr: Any


def _batch_lead(attr: Any, ndim: int, value_ndim: int) -> _Lead:
    """The attr of a term with ``ndim`` axes read on a value with leading batch axes."""
    return _Lead(value_ndim - ndim, attr)


def _split(attr: Any) -> tuple[int, Any]:
    return (attr.lead, attr.attr) if attr.__class__ is _Lead else (0, attr)


def _value_axis(axis: Any, lead: int, value: Any) -> int:
    """Axis ``axis`` of a term (negative: from the end) on its value with ``lead`` leading batch axes."""
    axis = axis or 0
    return axis if axis < 0 else lead + axis


def _ints(attr: Any, n: int | None, what: str) -> tuple[int, ...]:
    """``attr`` as a tuple of ``n`` ints (any length for None), else a TypeError naming ``what``."""
    if not isinstance(attr, tuple) or any(not isinstance(v, int) or isinstance(v, bool) for v in attr):
        raise TypeError(f"{what} takes a tuple of ints, not {attr!r}")
    if n is not None and len(attr) != n:
        raise TypeError(f"{what} takes {n} ints, not {attr!r}")
    return attr


def _known(x: Term, axis: int, what: str) -> int:
    """The int length of ``x`` along ``axis`` (a ShapeError for a symbolic one)."""
    d = x.shape[axis]
    if d.__class__ is not int:
        raise ShapeError(f"{what} needs a known length along axis {axis}, not {d}")
    return d


def _known_shape(x: Term, what: str) -> tuple[int, ...]:
    for i in range(x.ndim):
        _known(x, i, what)
    return tuple(x.shape)


# -- slice: (axis, start, count, step), the entries start, start+step, ... (count of them) --------------


def _slice_rule(args: tuple, attr: Any) -> tuple[str, tuple]:
    """``slice_axis(x, spec=(axis, start, count, step))``: ``count`` entries from ``start`` by ``step``."""
    (x,) = args
    axis, start, count, step = _ints(attr, 4, "slice_axis spec")
    axis = normalize_axes(axis, x.ndim, "slice_axis")[0]
    n = _known(x, axis, "slice_axis")
    if step == 0 or count < 0:
        raise ShapeError(f"slice_axis: step must be nonzero and count nonnegative, not {attr!r}")
    if count:
        for index in (start, start + (count - 1) * step):
            if not 0 <= index < n:
                raise IndexOutOfRangeError(
                    f"slice_axis: index {index} is out of range for axis {axis} of length {n}", index=index, axis=axis
                )
    return x.dtype, (*x.shape[:axis], count, *x.shape[axis + 1 :])


def slice_of(start: int, count: int, step: int) -> slice:
    """The Python slice of ``count`` entries from ``start`` by ``step`` (the attr of ``slice_axis``)."""
    if not count:
        return slice(0, 0, 1)
    stop = start + count * step
    return slice(start, stop if stop >= 0 else None, step)  # a backward slice that reaches index 0: None


def _slice(x: Any, attr: Any) -> Any:
    lead, (axis, start, count, step) = _split(attr)
    x = np.asarray(x)
    return x[(slice(None),) * (_value_axis(axis, lead, x) % x.ndim) + (slice_of(start, count, step),)]


def _grad_slice(node: Any, g: Any) -> tuple:
    # dx = g scattered back to the positions read (zero elsewhere): a scatter-add at those indices
    (x,) = node.args
    axis, start, count, step = node.attr
    axis %= x.ndim
    index = const(np.arange(start, start + count * step, step, dtype=np.int64)[:count])
    return (_O.scatter_add(g, index, spec=(axis, x.shape[axis])),)


# -- take (gather) and its adjoint scatter_add ----------------------------------------------------------------


def _index_values(index: Term, what: str) -> np.ndarray:
    """The int64 values of a constant index operand."""
    if index.op.name != "const" or index.dtype != INT64:
        raise ShapeError(f"{what}: the index must be an int64 constant, not {index}")
    attr = index.attr
    return attr.array if attr.__class__ is ConstArray else np.asarray(attr)


def _check_range(values: np.ndarray, n: int, axis: int, what: str) -> None:
    bad = (values < -n) | (values >= n)
    if bad.any():
        first = int(values[bad].reshape(-1)[0])
        raise IndexOutOfRangeError(
            f"{what}: index {first} is out of range for axis {axis} of length {n}", index=first, axis=axis
        )


def _take_rule(args: tuple, attr: Any) -> tuple[str, tuple]:
    """``take(x, idx, axis=k)``: entries of ``x`` at the int64 constant ``idx`` along axis ``k`` (numpy take)."""
    x, index = args
    if not x.ndim:
        raise ShapeError("take reads entries of a term with at least one axis")
    axis = normalize_axes(0 if attr is None else attr, x.ndim, "take")[0]
    values = _index_values(index, "take")
    _check_range(values, _known(x, axis, "take"), axis, "take")
    return x.dtype, (*x.shape[:axis], *index.shape, *x.shape[axis + 1 :])


def _take(x: Any, index: Any, attr: Any = None) -> Any:
    lead, axis = _split(attr)
    return np.take(x, index, axis=_value_axis(axis, lead, x))


def _grad_take(node: Any, g: Any) -> tuple:
    # dx = sum over the read positions of g: entry j of x gets the upstream of every read of j
    x, index = node.args
    axis = 0 if node.attr is None else node.attr % x.ndim
    return (_O.scatter_add(g, index, spec=(axis, x.shape[axis])), None)


def _scatter_rule(args: tuple, attr: Any) -> tuple[str, tuple]:
    """``scatter_add(u, idx, spec=(axis, n))``: zeros of length ``n`` along ``axis``, ``u`` added at ``idx``."""
    u, index = args
    axis, n = _ints(attr, 2, "scatter_add spec")
    k = index.ndim
    if not 0 <= axis <= u.ndim - k or n < 0:
        raise ShapeError(f"scatter_add: spec {attr!r} does not fit an update of {u.ndim} axes and an index of {k}")
    _check_range(_index_values(index, "scatter_add"), n, axis, "scatter_add")
    for want, have in zip(index.shape, u.shape[axis : axis + k], strict=True):
        if dims_equal(want, have) is False:
            raise ShapeError(f"scatter_add: the update's axes {u.shape[axis : axis + k]} differ from the index's")
    return _numeric(u.dtype), (*u.shape[:axis], n, *u.shape[axis + k :])


def _scatter_add(u: Any, index: Any, attr: Any) -> Any:
    lead, (axis, n) = _split(attr)
    u = np.asarray(u)
    at = lead + axis
    dtype = np.result_type(u.dtype, np.int64) if u.dtype.kind == "b" else u.dtype
    out = np.zeros((*u.shape[:at], n, *u.shape[at + np.ndim(index) :]), dtype=dtype)
    np.add.at(out, (slice(None),) * at + (np.asarray(index),), u)
    return out


def _grad_scatter(node: Any, g: Any) -> tuple:
    # scatter_add is linear in u and its adjoint is the gather at the same indices: du = take(g, idx)
    index = node.args[1]
    return (_O.take(g, index, axis=node.attr[0]), None)


# -- concat, reshape, broadcast_to ------------------------------------------------------------------------


def _concat_rule(args: tuple, attr: Any) -> tuple[str, tuple]:
    """``concat(a, b, ..., axis=k)``: operands of equal rank joined along axis ``k`` (its lengths known)."""
    first = args[0]
    if not first.ndim:
        raise ShapeError("concat joins terms with at least one axis")
    axis = normalize_axes(0 if attr is None else attr, first.ndim, "concat")[0]
    total = 0
    for a in args:
        if a.ndim != first.ndim:
            raise ShapeError(f"concat: operands of {first.ndim} and {a.ndim} axes")
        for i in range(a.ndim):
            if i != axis and dims_equal(a.shape[i], first.shape[i]) is False:
                raise ShapeError(f"concat: axis {i} has lengths {first.shape[i]} and {a.shape[i]}")
        total += _known(a, axis, "concat")
    return promote(*(a.dtype for a in args)), (*first.shape[:axis], total, *first.shape[axis + 1 :])


def _concat(*values: Any, attr: Any = None) -> Any:
    lead, axis = _split(attr)
    ndim = np.ndim(values[0]) - lead  # the term's axes; an operand may have other leading batch axes
    arrays = [np.asarray(v) for v in values]
    batch = broadcast_shapes(*(a.shape[: a.ndim - ndim] for a in arrays))
    arrays = [np.broadcast_to(a, (*batch, *a.shape[a.ndim - ndim :])) for a in arrays]
    return np.concatenate(arrays, axis=len(batch) + (axis or 0) % ndim)


def _grad_concat(node: Any, g: Any) -> tuple:
    # d concat(a, b)/da is the slice of g where a sits, and so for every operand
    axis = 0 if node.attr is None else node.attr % node.ndim
    out: list = []
    offset = 0
    for a in node.args:
        n = a.shape[axis]
        out.append(None if a.is_const else _O.slice_axis(g, spec=(axis, offset, n, 1)))
        offset += n
    return tuple(out)


def _reshape_rule(args: tuple, attr: Any) -> tuple[str, tuple]:
    """``reshape(x, shape=(...))``: the same entries in row-major order, in a shape of as many."""
    (x,) = args
    shape = _ints(attr, None, "reshape shape")
    size = math.prod(_known_shape(x, "reshape"))
    if any(d < 0 for d in shape) or math.prod(shape) != size:
        raise ShapeError(f"reshape: cannot put the {size} entries of shape {tuple(x.shape)} in shape {shape}")
    return x.dtype, shape


def _reshape(x: Any, attr: Any) -> Any:
    lead, shape = _split(attr)
    x = np.asarray(x)
    return x.reshape((*x.shape[:lead], *shape))


def _grad_reshape(node: Any, g: Any) -> tuple:
    # reshaping moves no entry: dx is g read back in x's shape
    return (_O.reshape(g, shape=tuple(node.args[0].shape)),)


def _broadcast_rule(args: tuple, attr: Any) -> tuple[str, tuple]:
    """``broadcast_to(x, shape=(...))``: numpy broadcasting of ``x`` to ``shape``."""
    (x,) = args
    shape = _ints(attr, None, "broadcast_to shape")
    lead = len(shape) - x.ndim
    ok = lead >= 0 and all(d >= 0 for d in shape)
    for i in range(x.ndim if ok else 0):
        d = x.shape[i]
        if not (d.__class__ is int and d in (1, shape[lead + i])):
            ok = False
    if not ok:
        raise ShapeError(f"broadcast_to: shape {tuple(x.shape)} does not broadcast to {shape}")
    return x.dtype, shape


def _broadcast(x: Any, attr: Any) -> Any:
    lead, shape = _split(attr)
    x = np.asarray(x)
    batch = x.shape[:lead]
    x = x.reshape((*batch, *(1,) * (len(shape) - (x.ndim - lead)), *x.shape[lead:]))
    return np.broadcast_to(x, (*batch, *shape))


def _grad_broadcast(node: Any, g: Any) -> tuple:
    # each entry of x is read at every position it was broadcast to: dx sums g over those axes
    (x,) = node.args
    lead = g.ndim - x.ndim
    axes = tuple(range(lead)) + tuple(lead + i for i in range(x.ndim) if x.shape[i] == 1 and g.shape[lead + i] != 1)
    if not axes:
        return (g,)
    summed = _O.sum(g, axis=None if len(axes) == g.ndim else axes)
    return (summed if summed.shape == x.shape else _O.reshape(summed, shape=tuple(x.shape)),)


_spec: dict[str, Any] = {"attr_key": _axis_key, "batch_attr": _batch_lead}
_call("slice_axis", 1, _slice_rule, impl=_slice, attr_name="spec", grad=_grad_slice, **_spec,
      doc="x[start:stop:step] along one axis: slice_axis(x, spec=(axis, start, count, step)).")  # fmt: skip
_call("take", 2, _take_rule, impl=_take, attr_name="axis", grad=_grad_take, **_spec,
      doc="Entries at an int64 constant index along an axis (numpy take): x[i], x[idx].")  # fmt: skip
_call("scatter_add", 2, _scatter_rule, impl=_scatter_add, attr_name="spec", grad=_grad_scatter, **_spec,
      doc="Zeros of length n along an axis, u added at the index: scatter_add(u, idx, spec=(axis, n)).")  # fmt: skip
_call("concat", (1, None), _concat_rule, impl=_concat, attr_name="axis", grad=_grad_concat, **_spec,
      doc="Operands joined along an axis (numpy concatenate).")  # fmt: skip
_call("reshape", 1, _reshape_rule, impl=_reshape, attr_name="shape", grad=_grad_reshape, **_spec,
      doc="The entries in row-major order in another shape of as many.")  # fmt: skip
_call("broadcast_to", 1, _broadcast_rule, impl=_broadcast, attr_name="shape", grad=_grad_broadcast, **_spec,
      doc="numpy broadcasting to a shape.")  # fmt: skip


# -- builders and x[...] ------------------------------------------------------------------------------------


def _term(x: Any) -> Term:
    return x if x.__class__ is Term else const(x)


def slice_axis(x: Any, axis: int, start: int | None = None, stop: int | None = None, step: int | None = None) -> Term:
    """``x[start:stop:step]`` along ``axis`` (Python's slice rules; the whole axis gives ``x`` itself)."""
    x = _term(x)
    axis = normalize_axes(axis, x.ndim, "slice")[0]
    n = _known(x, axis, "slice")
    first, last, by = slice(start, stop, step).indices(n)
    count = len(range(first, last, by))
    if count == n and by == 1:
        return x
    return _O.slice_axis(x, spec=(axis, first if count else 0, count, by if count else 1))


def take(x: Any, index: Any, axis: int = 0) -> Term:
    """The entries of ``x`` at ``index`` (ints, negative from the end) along ``axis``, as numpy ``take``."""
    x = _term(x)
    axis = normalize_axes(axis, x.ndim, "take")[0]
    n = _known(x, axis, "take")
    values = _index_values(index, "take") if isinstance(index, Term) else np.asarray(index)
    if values.dtype.kind not in "iu":
        raise TypeError(f"an index must be an int or an array of ints, not {values.dtype} ({index!r})")
    _check_range(values, n, axis, "take")
    values = (values % n).astype(np.int64) if n else values.astype(np.int64)
    return _O.take(x, const(values if values.ndim else int(values)), axis=axis)


def concat(terms: Any, axis: int = 0) -> Term:
    """The terms joined along ``axis`` (numpy ``concatenate``)."""
    terms = [_term(t) for t in terms]
    if not terms:
        raise ValueError("concat needs at least one term")
    first = terms[0]
    axis = normalize_axes(axis, first.ndim, "concat")[0] if first.ndim else axis
    return terms[0] if len(terms) == 1 else _O.concat(*terms, axis=axis)


def reshape(x: Any, shape: Any) -> Term:
    """``x`` in ``shape`` (an int, or a tuple of ints with at most one -1 for the rest)."""
    x = _term(x)
    shape = (shape,) if isinstance(shape, int) else tuple(int(d) for d in shape)
    size = math.prod(_known_shape(x, "reshape"))
    if shape.count(-1) > 1:
        raise ShapeError(f"reshape: at most one -1 in {shape}")
    if -1 in shape:
        rest = math.prod(d for d in shape if d != -1)
        if rest == 0 or size % rest:
            raise ShapeError(f"reshape: cannot put the {size} entries of shape {tuple(x.shape)} in shape {shape}")
        shape = tuple(size // rest if d == -1 else d for d in shape)
    return x if shape == tuple(x.shape) else _O.reshape(x, shape=shape)


def broadcast_to(x: Any, shape: Any) -> Term:
    """``x`` broadcast to ``shape`` (numpy ``broadcast_to``)."""
    x = _term(x)
    shape = (shape,) if isinstance(shape, int) else tuple(int(d) for d in shape)
    return x if shape == tuple(x.shape) else _O.broadcast_to(x, shape=shape)


def stack(terms: Any, axis: int = 0) -> Term:
    """The terms (of one shape) stacked along a new axis ``axis`` (numpy ``stack``)."""
    terms = [_term(t) for t in terms]
    if not terms:
        raise ValueError("stack needs at least one term")
    ndim = terms[0].ndim
    axis = normalize_axes(axis, ndim + 1, "stack")[0]
    widened = []
    for t in terms:
        shape = list(_known_shape(t, "stack"))
        if t.ndim != ndim:
            raise ShapeError(f"stack: terms of {ndim} and {t.ndim} axes")
        widened.append(reshape(t, (*shape[:axis], 1, *shape[axis:])))
    return concat(widened, axis=axis)


def _expand_key(key: tuple, ndim: int) -> list:
    """``key`` with its Ellipsis replaced by full slices, padded with full slices to ``ndim`` axes."""
    dots = [i for i, k in enumerate(key) if k is Ellipsis]
    if len(dots) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    used = sum(0 if k is None or k is Ellipsis else 1 for k in key)
    if used > ndim:
        raise IndexError(f"too many indices: {used} for a term of {ndim} axes")
    fill = [slice(None)] * (ndim - used)
    if dots:
        return [*key[: dots[0]], *fill, *key[dots[0] + 1 :]]
    return [*key, *fill]


def _check_advanced(items: list) -> None:
    """numpy moves the axes of separated array/int indices to the front: refuse what we would place elsewhere."""
    arrays = [i for i, k in enumerate(items) if isinstance(k, (list, np.ndarray)) or (isinstance(k, Term))]
    if len(arrays) > 1:
        raise IndexError("one index array per indexing (several broadcast together in numpy): index in two steps")
    if arrays:
        advanced = [i for i, k in enumerate(items) if i in arrays or isinstance(k, (int, np.integer))]
        if advanced[-1] - advanced[0] + 1 != len(advanced):
            raise IndexError("an index array with an int index on another side of a slice: index in two steps")


def getitem(x: Term, key: Any) -> Term:
    """``x[key]``: ints, slices, ``...``, ``None`` and one int index array, with numpy's meaning."""
    if not x.ndim:
        raise TypeError(f"the term {x} has no axes to index")
    key = key if isinstance(key, tuple) else (key,)
    if key and all(isinstance(k, Term) for k in key) and x.op.name == "symbol":
        return get_op("access")(x, *key)  # T[i, j] with int64 terms: one element of a tensor symbol
    items = _expand_key(key, x.ndim)
    _check_advanced(items)
    out, axis = x, 0
    for k in items:
        if k is None:
            shape = _known_shape(out, "a new axis")
            out = reshape(out, (*shape[:axis], 1, *shape[axis:]))
            axis += 1
        elif isinstance(k, slice):
            out = slice_axis(out, axis, k.start, k.stop, k.step)
            axis += 1
        elif isinstance(k, (bool, np.bool_)) or (isinstance(k, (list, np.ndarray)) and np.asarray(k).dtype == bool):
            raise IndexError("boolean masks give shapes known only from values: use where()")
        elif isinstance(k, (int, np.integer, list, np.ndarray, Term)):
            out = take(out, k, axis)
            axis += _idx_ndim(k)  # an int removes the axis, an index array puts its own axes there
        else:
            raise IndexError(f"cannot index a term with {type(k).__name__} {k!r}")
    return out


def _idx_ndim(k: Any) -> int:
    return k.ndim if isinstance(k, Term) else np.ndim(k)


# ``Term.__getitem__`` calls this (term.py never imports upward)
hooks.getitem = getitem
