"""PyTensor's ``argsort`` and ``sort`` read as our top-k ops (for :mod:`.pytensor_read`).

Sorting ``n`` entries along an axis is the top-k with ``k = n``, smallest first:
``argsort(x) = topk_indices(x, n, largest=False)`` and ``sort(x) = take_along(x, argsort(x))``.
Ties keep the lower position first, which is PyTensor's order for ``kind="stable"`` and a valid
order for the other kinds (numpy's quicksort may order equal entries otherwise; the values of
``sort`` agree whatever the kind). A slice ``[:k]`` of such a sort is cut to the top-k of ``k``
entries (:func:`cut_topk`), so ``argsort(x)[:k]`` is one ``topk_indices(x, k)``.
"""

from __future__ import annotations

from typing import Any

from ..core import Term
from ..core.ops_index import reshape
from ..core.ops_sort import take_along, topk_indices
from ..errors import ConversionError

__all__ = ["read_sort", "cut_topk"]


def read_sort(x: Term, axis: int | None, positions: bool, op: Any) -> Term:
    """``argsort(x, axis)`` (``positions``) or ``sort(x, axis)``; ``axis=None`` sorts the flattened entries."""
    if axis is None:
        if not all(d.__class__ is int for d in x.shape):
            raise ConversionError(f"from_pytensor: PyTensor's {op} flattens a tensor of unknown shape")
        x = reshape(x, (_count(x),))
        axis = 0
    if not x.ndim:
        raise ConversionError(f"from_pytensor: PyTensor's {op} of a scalar: sort along an axis")
    axis %= x.ndim
    n = x.shape[axis]
    if n.__class__ is not int:
        raise ConversionError(
            f"from_pytensor: PyTensor's {op} sorts an axis of unknown length ({n}); exprgraph's top-k needs its "
            "length: give the input a static shape (pt.tensor(shape=(5,)))"
        )
    index = topk_indices(x, n, axis - x.ndim, largest=False)
    return index if positions else take_along(x, index, axis - x.ndim)


def cut_topk(tensor: Term, key: tuple) -> Term | None:
    """``tensor[key]`` as a shorter top-k when ``key`` keeps the first entries along its sorted axis, else None.

    ``x[argsort(x)[:k]]`` of a vector (positions computed by a top-k) is the top-k's values: ``take_along``.
    """
    if len(key) == 1 and key[0].__class__ is Term and key[0].op.name == "topk_indices" and tensor.ndim == 1:
        return take_along(tensor, key[0], -1) if key[0].ndim == 1 else None
    if tensor.op.name == "take_along" and tensor.args[1].op.name == "topk_indices":
        index = cut_topk(tensor.args[1], key)
        return None if index is None else take_along(tensor.args[0], index, tensor.attr)
    if tensor.op.name != "topk_indices" or len(key) != tensor.ndim:
        return None
    k, axis, largest = tensor.attr
    at = axis % tensor.ndim
    for i, entry in enumerate(key):
        if not isinstance(entry, slice) or (i != at and entry != slice(None)):
            return None
    first = key[at]
    if first.start not in (None, 0) or first.step not in (None, 1) or first.stop is None:
        return None
    count = min(max(int(first.stop) if first.stop >= 0 else k + int(first.stop), 0), k)
    return topk_indices(tensor.args[0], count, axis, bool(largest))


def _count(x: Term) -> int:
    total = 1
    for d in x.shape:
        total *= int(d)
    return total
