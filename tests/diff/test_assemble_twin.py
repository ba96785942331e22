"""The C scatter-add of BlockHessian.assemble (diff/_csweep_assemble.c) gives numpy's bincount bits."""

from __future__ import annotations

from collections.abc import Callable
from unittest.mock import patch

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from exprgraph.diff import blocks as blocks_module
from exprgraph.diff import sweep
from exprgraph.diff.blocks import BlockHessian

pytestmark = pytest.mark.skipif(sweep.SWEEP is None, reason="the C sweeps are not built")

SPECIAL = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e308, -1e308, 5e-324, 1.0, -3.5]


def by_bincount(h: BlockHessian, numbers: np.ndarray, weights: np.ndarray) -> np.ndarray:
    return np.bincount(h.position, weights=numbers * weights[h.term], minlength=h.nnz)


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal bits, signs of zero included; a nan is a nan whatever its sign bit (the processor picks it)."""
    nan = np.isnan(a)
    return bool(np.array_equal(nan, np.isnan(b)) and a[~nan].tobytes() == b[~nan].tobytes())


def random_blocks(test: Callable[..., None]) -> Callable[..., None]:
    """The examples of both bit-for-bit tests: a seed, the sizes of a block Hessian, special values or not."""
    examples = given(
        seed=st.integers(0, 2**32 - 1),
        n_entries=st.integers(1, 300),
        nnz=st.integers(1, 40),
        n_terms=st.integers(1, 12),
        special=st.booleans(),
    )
    return settings(max_examples=200, deadline=None)(examples(test))


def blocks(rng: np.random.Generator, n_entries: int, nnz: int, n_terms: int) -> BlockHessian:
    position = rng.integers(0, nnz, n_entries).astype(np.int64)
    term = np.sort(rng.integers(0, n_terms, n_entries)).astype(np.int64)
    cells = list(range(nnz))
    return BlockHessian(cells, cells, [], term, position, (nnz, nnz), n_terms)


def values(rng: np.random.Generator, n: int, special: bool) -> np.ndarray:
    with np.errstate(all="ignore"):
        out = rng.normal(scale=1e3, size=n) * rng.choice([1e-200, 1.0, 1e200], size=n)
    if special:
        picks = rng.random(n) < 0.2
        out[picks] = rng.choice(SPECIAL, size=int(picks.sum()))
    return out


@random_blocks
def test_the_c_sum_is_bincounts_bit_for_bit(seed: int, n_entries: int, nnz: int, n_terms: int, special: bool) -> None:
    rng = np.random.default_rng(seed)
    h = blocks(rng, n_entries, nnz, n_terms)
    numbers, weights = values(rng, n_entries, special), values(rng, n_terms, special)
    out = np.full(nnz, 7.0)  # stale numbers in out are overwritten
    sweep.SWEEP.assemble(h.position, h.term, weights, numbers, out)
    with np.errstate(all="ignore"):  # inf * 0 on purpose
        want = by_bincount(h, numbers, weights)
    assert same_bits(out, want)
    # and assemble takes the C road for its own arrays: the same bits again
    h.values.extend([None] * n_entries)  # type: ignore[list-item]
    assert same_bits(h.assemble(numbers, weights), want)


def test_bad_arrays_are_refused_never_read_outside() -> None:
    pos, term = np.array([0, 1], dtype=np.int64), np.array([0, 0], dtype=np.int64)
    w, num, out = np.ones(1), np.ones(2), np.zeros(2)
    c = sweep.SWEEP
    with pytest.raises(IndexError, match="entry 1"):
        c.assemble(np.array([0, 2], dtype=np.int64), term, w, num, out)
    with pytest.raises(IndexError):
        c.assemble(pos, np.array([0, -1], dtype=np.int64), w, num, out)
    with pytest.raises(ValueError, match="one length"):
        c.assemble(pos, term, w, np.ones(3), out)
    with pytest.raises(TypeError, match="int64"):
        c.assemble(pos.astype(np.int32), term, w, num, out)
    with pytest.raises(TypeError, match="float64"):
        c.assemble(pos, term, w.astype(np.float32), num, out)
    with pytest.raises((TypeError, ValueError, BufferError)):  # not contiguous
        c.assemble(pos, term, w, np.ones(4)[::2], out)
    ro = np.zeros(2)
    ro.flags.writeable = False
    with pytest.raises((TypeError, BufferError, ValueError)):
        c.assemble(pos, term, w, num, ro)
    with pytest.raises(TypeError):
        c.assemble(pos, term, w, num)
    assert not out.any()  # nothing written by the refused calls


@random_blocks
def test_signed_weights_read_in_place_are_the_built_ones_bit_for_bit(
    seed: int, n_entries: int, nnz: int, n_terms: int, special: bool
) -> None:
    rng = np.random.default_rng(seed)
    h = blocks(rng, n_entries, nnz, n_terms)
    negated = rng.random(n_entries) < 0.5
    h = BlockHessian(h.rows, h.cols, [None] * n_entries, h.term, h.position, h.shape, n_terms, negated)  # type: ignore[list-item]
    numbers, weights = values(rng, n_entries, special), values(rng, n_terms, special)
    index = h.term + n_terms * negated.astype(np.int64)
    with np.errstate(all="ignore"):  # the generic road: [w, -w] built, then bincount
        want = np.bincount(h.position, weights=numbers * np.concatenate([weights, -weights])[index], minlength=nnz)
    out = np.full(nnz, 7.0)
    c = sweep.SWEEP
    assert c is not None
    c.assemble(h.position, index, weights, numbers, out, True)
    assert same_bits(out, want)
    assert same_bits(h.assemble(numbers, weights), want)
    with patch.object(blocks_module, "SWEEP", None), np.errstate(all="ignore"):  # assemble's numpy road
        assert same_bits(h.assemble(numbers, weights), want)
        assert same_bits(h.assemble(numbers, weights, np.empty(n_entries)), want)


def test_a_signed_index_past_both_halves_is_refused() -> None:
    pos, w, num, out = np.array([0, 1], dtype=np.int64), np.ones(2), np.ones(2), np.zeros(2)
    c = sweep.SWEEP
    assert c is not None
    c.assemble(pos, np.array([0, 3], dtype=np.int64), w, num, out, True)
    assert out.tolist() == [1.0, -1.0]
    with pytest.raises(IndexError, match="entry 1"):
        c.assemble(pos, np.array([0, 4], dtype=np.int64), w, num, out, True)
    with pytest.raises(IndexError, match="entry 1"):
        c.assemble(pos, np.array([0, 2], dtype=np.int64), w, num, out)  # unsigned: 2 is past the weights
    assert not out.any()
