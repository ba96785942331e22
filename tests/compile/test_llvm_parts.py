"""The LLVM backend in bounded-size parts: values crossing parts, every dtype, and a build linear in size."""

from __future__ import annotations

import time

import numpy as np
import pytest
from eg_strategies import SYMBOLS, terms
from hypothesis import given, settings
from hypothesis import strategies as st

import exprgraph as eg
from exprgraph.compile import compile as eg_compile
from exprgraph.compile import llvm_emit
from exprgraph.compile.llvm_backend import llvm_available

pytestmark = pytest.mark.skipif(not llvm_available(), reason="llvmlite is not installed")


@settings(max_examples=15, deadline=None)
@given(outs=st.lists(terms(smooth=False), min_size=1, max_size=4), seed=st.integers(0, 2**16))
def test_parts_of_three_steps_equal_one_part(outs: list, seed: int) -> None:
    x, y, z = SYMBOLS
    extra = [eg.where(x < y, outs[0], z), (x < y) & (y < z), x, eg.const(2.5)]  # bools cross parts
    outs = [*outs, *extra]
    whole = eg_compile(outs, SYMBOLS, "llvm", packed=True)
    old = llvm_emit.PART
    llvm_emit.PART = 3
    try:
        cut = eg_compile(outs, SYMBOLS, "llvm", packed=True)
        cut_arrays = eg_compile(outs, SYMBOLS, "llvm")
    finally:
        llvm_emit.PART = old
    assert "noinline" in cut.source  # at least five steps: two parts or more
    point = np.random.default_rng(seed).uniform(-2, 2, (7, 3))
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(cut(point), whole(point))
        for got, want in zip(
            cut_arrays(*point.T), eg.evaluate(outs, dict(zip(SYMBOLS, point.T, strict=True))), strict=True
        ):
            np.testing.assert_allclose(np.asarray(got, dtype=float), np.asarray(want, dtype=float), rtol=1e-12, atol=0)


def test_the_build_grows_linearly() -> None:
    def build(n: int) -> float:
        xs = [eg.Symbol(f"x{i}") for i in range(n + 1)]
        outs = [eg.sin(xs[i] * xs[i + 1]) * xs[i] + eg.exp(xs[i + 1]) for i in range(n)]
        start = time.process_time()
        fn = eg_compile(outs, xs, "llvm", packed=True, loops=False)
        spent = time.process_time() - start
        assert fn(np.ones(n + 1))[0] == pytest.approx(np.sin(1.0) + np.e)
        return spent

    small, large = build(300), build(1200)
    assert large < 8 * max(small, 0.05)  # once 4x per doubling: 16x here would be n^2


def test_fmod_by_a_nan_constant_is_nan() -> None:
    # a call of libm's @fmod with a NaN constant gave garbage (4.6e-310, the bits of an int) once LLVM optimised it;
    # frem is the same function and is folded right (found by tests/fuzz/test_fuzz_compile.py)
    fmod = eg.get_op("fmod")
    n, x = eg.Symbol("n", "int64"), eg.Symbol("x")
    y = eg.Symbol("y", "float32")
    outs = [fmod(n, eg.const(float("nan"))), fmod(x, eg.const(float("nan"))), fmod(y, eg.const(np.float32(np.nan)))]
    outs += [fmod(x, eg.const(2.5)), fmod(n, eg.const(0)), fmod(n, eg.const(-3)), fmod(n, x), fmod(y, y * 0.25)]
    env = {n: np.array([3, -7, 0]), x: np.array([-7.5, np.inf, -0.0]), y: np.array([2.0, -5.0, np.nan], np.float32)}
    got = eg_compile(outs, [n, x, y], backend="llvm")(*env.values())
    for g, w, t in zip(got, eg.evaluate(outs, env), outs, strict=True):
        assert g.dtype == w.dtype and np.array_equal(g, w, equal_nan=True), (t, g, w)
        assert np.array_equal(np.signbit(g), np.signbit(w)), t
