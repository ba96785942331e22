"""A term's values on a grid of two symbols, and values compared bit for bit: the sign-of-zero tests' one helper."""

from __future__ import annotations

import math

import numpy as np

import exprgraph as eg
from exprgraph import evaluate


def grid_values(t: eg.Term, grid: np.ndarray, x: eg.Term, y: eg.Term) -> np.ndarray:
    """``t`` at every point of ``grid x grid`` for ``(x, y)``, flat, float64 (floating-point warnings off)."""
    xs, ys = np.meshgrid(grid, grid)
    with np.errstate(all="ignore"):
        out = evaluate(t, {x: xs.ravel(), y: ys.ravel()})
    return np.broadcast_to(np.asarray(out, dtype=np.float64), (xs.size,))


def same_values(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal values, nan where nan, infinities of the same sign (a zero read by a division shows as an infinity)."""
    return bool(np.array_equal(a, b, equal_nan=True))


def same_float(a: float, b: float) -> bool:
    """The same float, bit for bit but for a nan's payload (a zero's sign counts)."""
    return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1.0, a) == math.copysign(1.0, b))
