"""The standard table, selection by order: ``topk_indices``, and the gathers along an axis that take
the values at computed positions (``take_along``) and give their adjoint (``scatter_along``).

``topk(x, k)`` is ``take_along(x, topk_indices(x, k))``: the indices are piecewise constant (no
gradient), the values get the upstream back at the positions selected (a scatter-add), so
gradients flow to the values. Ties keep numpy's stable order: of equal entries the one at the
lower index comes first, for the largest and for the smallest (ONNX's ``TopK`` and
``jax.lax.top_k`` agree); where nan is among the entries the order is unspecified. Axes are stored
counted from the end, so leading batch axes (many parameter sets) need no extra attr. Importing
this module registers the ops.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..errors import ShapeError
from .declare import _call
from .dtypes import BOOL, INT64
from .grad_tools import _O, no_grad
from .op import as_term
from .shapes import dims_equal, normalize_axes
from .term import Term

__all__ = ["topk", "topk_values", "topk_indices", "take_along"]


def _known_axis(x: Term, axis: int, what: str) -> int:
    d = x.shape[axis]
    if d.__class__ is not int:
        raise ShapeError(f"{what} needs a known length along axis {axis - x.ndim}, not {d}")
    return d


def _neg_axis(axis: Any, ndim: int, what: str) -> int:
    """``axis`` counted from the end (-1 is the last), checked against ``ndim``."""
    if not ndim:
        raise ShapeError(f"{what} selects along an axis: its operand needs at least one")
    return normalize_axes(axis, ndim, what)[0] - ndim


def _stored_axis(axis: Any, ndim: int, what: str) -> int:
    """The axis an op stores: counted from the end, so that it reads the same with leading batch axes."""
    if isinstance(axis, int) and axis >= 0:
        raise ShapeError(f"{what}: the op's axis counts from the end ({axis - ndim}, not {axis}); builders convert")
    return _neg_axis(axis, ndim, what)


def _topk_rule(args: tuple, attr: Any) -> tuple[str, tuple]:
    """``topk_indices(x, spec=(k, axis, largest))``: int64 positions of the k largest (smallest) along axis."""
    (x,) = args
    if not (isinstance(attr, tuple) and len(attr) == 3 and all(isinstance(v, int) for v in attr)):
        raise TypeError(f"topk_indices takes spec=(k, axis, largest), three ints, not {attr!r}")
    k, axis, largest = attr
    axis = _stored_axis(axis, x.ndim, "topk")
    n = _known_axis(x, axis, "topk")
    if not 0 <= k <= n or largest not in (0, 1):
        raise ShapeError(f"topk: k={k} must be in 0..{n} (the axis length) and largest 0 or 1, not {largest}")
    return INT64, (*x.shape[: x.ndim + axis], k, *x.shape[x.ndim + axis + 1 :])


def _topk(x: Any, attr: Any) -> Any:
    k, axis, largest = attr
    x = np.asarray(x)
    if x.dtype == np.bool_:
        x = x.astype(np.int8)
    if largest:
        # an order-reversing key that keeps equal entries equal: -x for floats, ~x (= -x - 1) for ints
        x = -x if x.dtype.kind == "f" else ~x
    order = np.argsort(x, axis=axis, kind="stable")
    return np.take(order, np.arange(k), axis=axis).astype(np.int64)


def _along_rule(args: tuple, attr: Any) -> tuple[str, tuple]:
    """``take_along(x, idx, axis=a)``: ``x`` read at the int64 positions ``idx`` along ``a`` (numpy take_along_axis)."""
    x, index = args
    axis = _stored_axis(attr, x.ndim, "take_along")
    _check_index(x, index, axis, "take_along")
    return x.dtype, tuple(index.shape)


def _check_index(x: Term, index: Term, axis: int, what: str) -> None:
    if index.dtype != INT64 or index.ndim != x.ndim:
        raise ShapeError(f"{what}: the index must be int64 with {x.ndim} axes, not {index.dtype}{list(index.shape)}")
    for i, (a, b) in enumerate(zip(x.shape, index.shape, strict=True)):
        if i != x.ndim + axis and dims_equal(a, b) is not True:
            raise ShapeError(f"{what}: axis {i} has lengths {a} and {b} (only the selected axis may differ)")


def _pad(a: np.ndarray, ndim: int) -> np.ndarray:
    return a.reshape((1,) * (ndim - a.ndim) + a.shape)


def _take_along(x: Any, index: Any, attr: Any) -> Any:
    # the batch axes of x and of the index (either may have none) broadcast together
    x, index = np.asarray(x), np.asarray(index)
    ndim = max(x.ndim, index.ndim)
    return np.take_along_axis(_pad(x, ndim), _pad(index, ndim), axis=attr)


def _grad_take_along(node: Any, g: Any) -> tuple:
    # out[..., j, ...] = x[..., idx[j], ...]: dx[..., m, ...] = sum over j with idx[j] = m of g[..., j, ...]
    x, index = node.args
    return (_O.scatter_along(g, index, spec=(node.attr, _known_axis(x, node.attr, "the gradient of take_along"))), None)


def _scatter_rule(args: tuple, attr: Any) -> tuple[str, tuple]:
    """``scatter_along(u, idx, spec=(axis, n))``: zeros of length n along axis, u added at idx."""
    u, index = args
    if not (isinstance(attr, tuple) and len(attr) == 2 and all(isinstance(v, int) for v in attr)) or attr[1] < 0:
        raise TypeError(f"scatter_along takes spec=(axis, n), two ints (n >= 0), not {attr!r}")
    axis = _stored_axis(attr[0], u.ndim, "scatter_along")
    _check_index(u, index, axis, "scatter_along")
    if dims_equal(u.shape[axis], index.shape[axis]) is not True:
        raise ShapeError(f"scatter_along: the update {list(u.shape)} and the index {list(index.shape)} differ")
    dtype = INT64 if u.dtype == BOOL else u.dtype
    return dtype, (*u.shape[: u.ndim + axis], attr[1], *u.shape[u.ndim + axis + 1 :])


def _scatter_along(u: Any, index: Any, attr: Any) -> Any:
    axis, n = attr
    u, index = np.asarray(u), np.asarray(index)
    ndim = max(u.ndim, index.ndim)
    u, index = np.broadcast_arrays(_pad(u, ndim), _pad(index, ndim))
    if u.dtype == np.bool_:
        u = u.astype(np.int64)
    u, index = np.moveaxis(u, axis, -1), np.moveaxis(index, axis, -1)
    rows = u.reshape(math.prod(u.shape[:-1]), u.shape[-1])  # k = 0 too
    out = np.zeros((rows.shape[0], n), dtype=u.dtype)
    np.add.at(out, (np.arange(rows.shape[0])[:, None], index.reshape(rows.shape)), rows)
    return np.moveaxis(out.reshape((*u.shape[:-1], n)), -1, axis)


def _grad_scatter_along(node: Any, g: Any) -> tuple:
    # scatter_along is linear in u, its adjoint the gather at the same positions: du = take_along(g, idx)
    return (_O.take_along(g, node.args[1], axis=node.attr[0]), None)


def _axis_key(attr: Any) -> Any:
    return tuple(attr) if isinstance(attr, list) else attr


_call("topk_indices", 1, _topk_rule, impl=_topk, attr_name="spec", attr_key=_axis_key, grad=no_grad,
      doc="int64 positions of the k largest (largest=1) or smallest entries along an axis, ties stable.")  # fmt: skip
_call("take_along", 2, _along_rule, impl=_take_along, attr_name="axis", grad=_grad_take_along,
      doc="x at computed int64 positions along an axis (numpy take_along_axis).")  # fmt: skip
_call("scatter_along", 2, _scatter_rule, impl=_scatter_along, attr_name="spec", attr_key=_axis_key,
      grad=_grad_scatter_along, doc="Zeros of length n along an axis, u added at the positions.")  # fmt: skip


def topk_indices(x: Any, k: int | None = None, axis: int = -1, largest: bool = True, *, spec: Any = None) -> Term:
    """The int64 positions of the ``k`` largest (or smallest) entries of ``x`` along ``axis``, in order.

    ``spec=(k, axis, largest)`` is the op's own form, as its ``repr`` prints it.
    """
    x = as_term(x)
    if spec is not None:
        return _O.topk_indices(x, spec=spec)
    if not isinstance(k, (int, np.integer)) or isinstance(k, bool):
        raise TypeError(f"topk: k must be a constant int, not {k!r}")
    return _O.topk_indices(x, spec=(int(k), _neg_axis(axis, x.ndim, "topk"), int(bool(largest))))


def take_along(x: Any, index: Term, axis: int = -1) -> Term:
    """``x`` at the int64 positions ``index`` along ``axis`` (numpy ``take_along_axis``)."""
    x = as_term(x)
    return _O.take_along(x, index, axis=_neg_axis(axis, x.ndim, "take_along"))


def topk(x: Any, k: int, axis: int = -1, largest: bool = True) -> tuple[Term, Term]:
    """``(values, indices)`` of the ``k`` largest (or smallest) entries along ``axis``, values first."""
    index = topk_indices(x, k, axis, largest)
    return take_along(x, index, axis), index


def topk_values(x: Any, k: int, axis: int = -1, largest: bool = True) -> Term:
    """The ``k`` largest (or smallest) entries of ``x`` along ``axis``, in order (gradients flow to them)."""
    return topk(x, k, axis, largest)[0]
