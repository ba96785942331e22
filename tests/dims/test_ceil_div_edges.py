"""ceil_div at the edges of int64: numpy evaluation, C and LLVM agree with the exact value modulo 2**64."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from exprgraph import Symbol, evaluate
from exprgraph.compile import compile as eg_compile
from exprgraph.dims.terms import CEIL_DIV

LO, HI = -(2**63), 2**63 - 1
a, d = Symbol("a", "int64"), Symbol("d", "int64")
TERM = CEIL_DIV(a, d)
EDGES = [LO, LO + 1, -3, -1, 0, 1, 3, HI - 1, HI]


def _exact(x: int, y: int) -> int:
    """ceil(x/y) wrapped to int64 (0 for y = 0, as numpy's integer division by zero)."""
    if y == 0:
        return 0
    q = -((-x) // y)
    return (q - LO) % 2**64 + LO


ints = st.one_of(st.sampled_from(EDGES), st.integers(LO, HI))


@settings(max_examples=300, deadline=None)
@given(ints, ints)
def test_ceil_div_evaluates_to_the_exact_value(x, y):
    with np.errstate(all="ignore"):
        got = evaluate(TERM, {"a": np.int64(x), "d": np.int64(y)})
    assert int(got) == _exact(x, y)


@pytest.mark.parametrize("backend", ["c", "llvm"])
def test_compiled_ceil_div_agrees_at_the_edges(backend):
    if backend == "llvm":
        pytest.importorskip("llvmlite")
    try:
        fn = eg_compile(TERM, [a, d], backend)
    except Exception as exc:  # no C compiler on this machine
        pytest.skip(f"{backend} backend unavailable: {exc}")
    xs, ys = np.meshgrid(np.array(EDGES, dtype=np.int64), np.array([v for v in EDGES if v], dtype=np.int64))
    got = fn(xs.ravel(), ys.ravel())
    want = [_exact(int(x), int(y)) for x, y in zip(xs.ravel(), ys.ravel(), strict=True)]
    assert [int(v) for v in np.asarray(got)] == want
