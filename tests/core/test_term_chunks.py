"""The memory of C terms: exact-size blocks in 2 MiB chunks (``_cterm_alloc.c``), reused and given back."""

from __future__ import annotations

import gc
import tracemalloc

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import exprgraph as eg
from exprgraph.core import termbase

native = termbase.native()
needs_native = pytest.mark.skipif(not native, reason="the C term base is not built")


def chunks() -> tuple[int, int]:
    """(chunks carved so far, chunks empty now) of the C terms' memory; (0, 0) without chunks."""
    stats: tuple[int, int] = termbase._native.memory_chunks()  # type: ignore[union-attr]
    return stats


def needs_chunks() -> None:
    """Skip where the system gives no chunks (no mmap, or a range it refuses to reserve)."""
    if chunks()[0] == 0:
        eg.sin(eg.Symbol("chunk_probe"))  # the first term reserves the range
    if chunks()[0] == 0:
        pytest.skip("no chunks on this system: terms come from CPython's allocator")


# sums of 1..80 operands: blocks of 10..88 words, both sides of the largest chunked block (8 words after the fixed part)
@settings(max_examples=40, deadline=None)
@given(
    counts=st.lists(st.integers(1, 80), min_size=1, max_size=30),
    keep=st.lists(st.booleans(), min_size=30, max_size=30),
)
def test_terms_of_every_size_read_back_and_intern_after_others_are_freed(counts: list, keep: list) -> None:
    xs = [eg.Symbol(f"chunk_x{i}") for i in range(80)]
    made = [eg.add(*xs[:k]) if k > 1 else eg.sin(xs[0]) * eg.const(float(k)) for k in counts]
    kept = [(t, k) for t, k, flag in zip(made, counts, keep, strict=False) if flag]
    del made
    gc.collect()
    churn = [eg.cos(x) * float(i) for i, x in enumerate(xs)]  # reuses the blocks just freed
    for t, k in kept:
        if k > 1:
            assert t.op.name == "add" and t.args == tuple(xs[:k])
            assert eg.add(*xs[:k]) is t
        else:
            assert t.args == (eg.sin(xs[0]), eg.const(float(k)))
            assert eg.sin(xs[0]) * eg.const(float(k)) is t
    assert [c.args[1].value for c in churn] == [float(i) for i in range(80)]


@needs_native
def test_a_dropped_expression_gives_its_chunks_back_and_the_next_build_reuses_them() -> None:
    needs_chunks()
    xs = [eg.Symbol(f"chunk_y{i}") for i in range(300)]

    def build() -> list:
        # 180,000 binary terms of 80 bytes: about seven chunks of one size
        return [x * float(k) for k in range(600) for x in xs]

    big = build()
    carved, empty = chunks()
    del big
    gc.collect()
    carved_after, empty_after = chunks()
    assert carved_after == carved
    assert empty_after >= empty + 2  # the chunks carved to their end and emptied went back
    again = build()
    assert chunks()[0] <= carved + 1  # the empty chunks were taken again (at most one more carved)
    assert again[-1].args == (xs[-1], eg.const(599.0))


@needs_native
def test_making_and_dropping_one_term_over_and_over_stays_on_one_chunk() -> None:
    needs_chunks()
    x = eg.Symbol("chunk_z")
    before = chunks()
    for k in range(50_000):
        t = eg.exp(x) * float(k)  # the constant and the product die at the next round
        del t
    carved, _ = chunks()
    assert carved <= before[0] + 2


@needs_native
def test_tracemalloc_counts_the_blocks_of_terms() -> None:
    xs = [eg.Symbol(f"chunk_t{i}") for i in range(2_000)]
    gc.collect()
    tracemalloc.start()
    try:
        before, _ = tracemalloc.get_traced_memory()
        made = [eg.tanh(x) for x in xs]  # 72 bytes each
        during, _ = tracemalloc.get_traced_memory()
        del made
        after, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert during - before >= 2_000 * 72
    assert after - before < 2_000 * 72  # given back
