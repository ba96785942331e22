"""Builders of :mod:`.jax_read` for JAX primitives that take several steps of ours, or give several outputs.

``pad`` and ``tile`` are concatenations; :data:`MULTIPLE` maps a primitive with several outputs to
the builder of all of them (``top_k``: our ``topk`` values and indices, one ``topk_indices`` term
that both read).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..core import Term
from ..core.ops_index import broadcast_to, concat, reshape, slice_axis
from ..core.ops_sort import topk
from ..errors import ConversionError

__all__ = ["MULTIPLE", "pad", "tile"]


def pad(x: Term, value: Term, config: Sequence[Any]) -> Term:
    """``pad`` by ``value`` before and after each axis (no interior padding, no cropping): concatenations."""
    out = x
    for axis, (low, high, interior) in enumerate(config):
        low, high = int(low), int(high)
        if int(interior) or low < 0 or high < 0:
            raise ConversionError("from_jax: pad with interior padding or a negative (cropping) edge is not read")
        side = [*out.shape]
        parts = []
        for width in (low, high):
            side[axis] = width
            parts.append(broadcast_to(value, tuple(side)) if width else None)
        out = concat([t for t in (parts[0], out, parts[1]) if t is not None], axis=axis)
    return out


def tile(x: Term, reps: tuple[int, ...]) -> Term:
    """``tile``: ``x`` repeated ``reps[i]`` times along each axis (extra reps add leading axes), concatenations."""
    reps = (1,) * (x.ndim - len(reps)) + reps
    out = reshape(x, (1,) * (len(reps) - x.ndim) + tuple(x.shape))
    for axis, k in enumerate(reps):
        out = out if k == 1 else concat([out] * k, axis=axis) if k else slice_axis(out, axis, 0, 0)
    return out


def _top_k(x: Term, k: int = 1, axis: int | None = None, **p: Any) -> list[Term]:
    """``lax.top_k``: the ``k`` largest entries along ``axis`` (the last by default) and their positions.

    Both order ties at the lower position first, so the indices are JAX's; JAX's int32 positions
    are read as int64, as every int32 of a jaxpr.
    """
    if x.ndim == 0:
        raise ConversionError("from_jax: top_k of a scalar (JAX needs at least one axis)")
    values, index = topk(x, int(k), -1 if axis is None else int(axis), largest=True)
    return [values, index]


#: JAX primitive with several outputs -> builder of all its outputs' terms, in JAX's order
MULTIPLE: dict[str, Callable[..., list[Term]]] = {"top_k": _top_k}
