"""Core broadcasting with unknown (None) sizes and a caller's maximum: the one broadcasting rule."""

from __future__ import annotations

import pytest

from exprgraph import Symbol
from exprgraph.core.shapes import broadcast_dim, broadcast_shapes
from exprgraph.errors import ShapeError

N, M = Symbol("n", "int64"), Symbol("m", "int64")


def test_unknown_sizes():
    assert broadcast_dim([None, 3, 1]) == 3  # the unknown one is 1 or 3
    assert broadcast_dim([None, 1]) is None and broadcast_dim([None, N]) is None and broadcast_dim([None]) is None
    assert broadcast_dim([N, 1, N]) is N and broadcast_dim([1, 1]) == 1
    with pytest.raises(ShapeError, match="3 vs 4"):
        broadcast_dim([3, None, 4])
    assert broadcast_shapes((N, None, 1), (4, 5)) == (N, 4, 5)
    assert broadcast_shapes((None, 2)) == (None, 2) and broadcast_shapes((), ()) == ()


def test_the_maximum_of_two_symbolic_sizes():
    calls = []

    def maximum(a, b):
        calls.append((a, b))
        return None  # too large to follow, say

    assert broadcast_dim([N, M], maximum=maximum) is None and calls == [(N, M)]
    assert str(broadcast_shapes((N,), (N + 1,))[0]) == "n + 1"  # the dimension algebra's max(n, n+1)
