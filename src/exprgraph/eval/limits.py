"""Size limits for evaluation: the largest array a broadcast may create, checked before allocating.

Inputs given as a column ``(n, 1)`` and a row ``(1, m)`` broadcast to an ``(n, m)`` grid; with
large ``n`` and ``m`` numpy fails with a MemoryError, or first pushes the machine into swap.
Evaluation checks the size of every array it is about to create against :func:`limit_in_force`
and raises :class:`~exprgraph.errors.SizeLimitError` (which says how to raise the limit) instead.
"""

from __future__ import annotations

import math
import os

from ..errors import SizeLimitError

__all__ = ["DEFAULT_MAX_ELEMENTS", "ENV_MAX_ELEMENTS", "limit_in_force", "positive_limit", "check_elements"]

#: elements of one array (2**28: 2 GiB of float64) unless the caller or the environment says otherwise
DEFAULT_MAX_ELEMENTS = 2**28
#: environment variable that sets the limit for every evaluation
ENV_MAX_ELEMENTS = "EXPRGRAPH_MAX_ELEMENTS"


def limit_in_force(limit: int | None = None) -> int:
    """The limit in force: ``limit`` when given, else ``$EXPRGRAPH_MAX_ELEMENTS``, else the default."""
    return positive_limit(limit, ENV_MAX_ELEMENTS, DEFAULT_MAX_ELEMENTS, "max_elements")


def positive_limit(value: int | None, env: str, default: int, what: str) -> int:
    """``value`` when given, else the environment variable ``env`` (``_`` allowed), else ``default``.

    Each must be a positive int; anything else raises ValueError naming ``what`` or ``$env``.
    """
    if value is not None:
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{what} must be a positive int, not {value!r}")
        return value
    text = os.environ.get(env)
    if not text:
        return default
    try:
        parsed = int(text.replace("_", ""))
    except ValueError:
        parsed = 0
    if parsed < 1:
        raise ValueError(f"${env} must be a positive integer, not {text!r}")
    return parsed


def check_elements(shape: tuple[int, ...], limit: int, what: str) -> None:
    """Raise SizeLimitError when an array of ``shape`` would hold more than ``limit`` elements."""
    size = math.prod(shape)
    if size > limit:
        raise SizeLimitError(
            f"{what} would create an array of shape {tuple(shape)} ({size:,} elements), more than the limit "
            f"of {limit:,}: pass max_elements=N or set ${ENV_MAX_ELEMENTS}=N to allow more",
            size=size,
            limit=limit,
            setting=f"max_elements / ${ENV_MAX_ELEMENTS}",
        )
