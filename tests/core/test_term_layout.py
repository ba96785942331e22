"""The C term's layout (core/_cterm_api.h): the operand count in 26 bits with its cap, the 32-bit
marks of the sweeps and their epoch counter's wrap, the 32-bit stored hash of the intern table."""

from __future__ import annotations

import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import exprgraph as eg
from exprgraph.core import termbase
from exprgraph.diff import sweep
from exprgraph.errors import TooManyOperandsError

needs_native = pytest.mark.skipif(not termbase.native(), reason="the C term base is not built")
needs_sweep = pytest.mark.skipif(not sweep.native(), reason="the C sweeps are not built")

ADD = eg.get_op("add")
#: the most operands a C term holds (TERM_MAX_ARGS)
MAX_ARGS = 2**26 - 1
#: the last epoch before the sweeps' counter wraps (EPOCH_MAX in diff/_csweep.h)
EPOCH_MAX = 2**28 - 1
XS = [eg.Symbol(f"x_lay{i}") for i in range(6)]


@settings(max_examples=25, deadline=None)
@given(picks=st.lists(st.integers(0, len(XS) - 1), min_size=2, max_size=3000))
def test_terms_of_many_operands_keep_them_and_are_found_again(picks: list[int]) -> None:
    operands = tuple(XS[i] for i in picks)
    t = eg.Term(ADD, operands)
    if termbase.native():  # the fixed part and one word an operand (before `args` makes the lazy block)
        assert sys.getsizeof(t) == eg.Term.__basicsize__ + 8 * len(operands)
    assert t.args == operands
    assert eg.Term(ADD, operands) is t
    assert termbase.find_term(ADD, operands) is t


@needs_native
def test_a_term_at_the_operand_cap_is_built_and_one_past_it_is_refused() -> None:
    x = XS[0]
    operands = (x,) * MAX_ARGS
    t = eg.Term(ADD, operands)
    assert sys.getsizeof(t) == eg.Term.__basicsize__ + 8 * MAX_ARGS
    assert t.op is ADD and t.dtype == x.dtype
    assert eg.Term(ADD, operands) is t
    del t
    # concatenated: unpacking would make a list of them first, half a gigabyte more at the peak
    past = operands + (x,)  # noqa: RUF005
    del operands
    with pytest.raises(TooManyOperandsError, match="at most 67108863 operands"):
        eg.Term(ADD, past)
    pair = eg.Term(ADD, (x, x))  # the table is still usable
    assert pair.args == (x, x) and termbase.find_term(ADD, (x, x)) is pair


def _sweep_epoch(value: int | None = None) -> int:
    """The C sweeps' epoch counter (set it when given)."""
    module = sweep.SWEEP
    assert module is not None
    return int(module._epoch() if value is None else module._epoch(value))


def _expression(k: int) -> eg.Term:
    """A small expression over XS, different for each k."""
    x, y, z = XS[k % 6], XS[(k + 1) % 6], XS[(k + 2) % 6]
    return eg.sin(x * y + k) * eg.exp(z - x) + y * (z + 0.5 * k)


@needs_sweep
def test_a_sweep_advances_the_epoch() -> None:
    before = _sweep_epoch()
    eg.grad(_expression(1), XS[:3])
    assert _sweep_epoch() > before


@needs_sweep
def test_marks_of_a_walk_before_the_wrap_never_read_as_a_later_walks() -> None:
    # the stale marks: a walk at epoch 1 leaves g's nodes marked (seen, live); after the counter wraps the
    # next walk takes epoch 1 again, and would skip those nodes as seen were the marks not cleared
    g, h = _expression(7), _expression(8)
    want_g, want_h = eg.grad(g, XS), eg.grad(h, XS)
    saved = _sweep_epoch()
    try:
        _sweep_epoch(0)
        assert eg.grad(g, XS) == want_g
        assert _sweep_epoch() == 1
        _sweep_epoch(EPOCH_MAX - 1)
        assert eg.grad(h, XS) == want_h
        assert _sweep_epoch() == EPOCH_MAX
        assert eg.grad(g, XS) == want_g  # the wrap: epoch 1 again, on nodes that epoch 1 marked
        assert _sweep_epoch() == 1
    finally:
        _sweep_epoch(saved)


@needs_sweep
@settings(max_examples=30, deadline=None)
@given(ks=st.lists(st.integers(0, 40), min_size=1, max_size=6), start=st.integers(0, 8))
def test_gradients_across_the_epoch_wrap_equal_the_reference(ks: list[int], start: int) -> None:
    # reference gradients first, then the same gradients and Hessians again while the counter passes its end
    exprs = [_expression(k) for k in ks]
    want = [eg.grad(f, XS) for f in exprs]
    want_h = eg.hessian(exprs[0], XS[:3])
    saved = _sweep_epoch()
    try:
        _sweep_epoch(EPOCH_MAX - start)
        for f, w in zip(exprs, want, strict=True):
            assert eg.grad(f, XS) == w
        assert eg.hessian(exprs[0], XS[:3]) == want_h
        for f, w in zip(exprs, want, strict=True):
            assert eg.grad(f, XS) == w
    finally:
        _sweep_epoch(saved)


@needs_sweep
def test_an_epoch_past_the_field_is_refused() -> None:
    module = sweep.SWEEP
    assert module is not None
    with pytest.raises(ValueError, match="at most"):
        module._epoch(EPOCH_MAX + 1)
