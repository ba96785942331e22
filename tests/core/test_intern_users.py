"""The intern table's user bits and tombstones (``_cterm_table.c``), against its plain lookup.

A lookup of ``(op, args)`` skips the slots when an operand has no user of ``op``'s bit in a slot
(8 bits, shared once more than 8 ops are met), and a term that dies leaves a tombstone. The
plain lookup ``_cterm.find`` always reads the slots: whatever the bits and tombstones, a
construction must give the term it finds, and every live term must be found by both.
"""

from __future__ import annotations

import gc
import itertools
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import exprgraph as eg
from exprgraph.core import termbase
from exprgraph.core.op import get_op

needs_native = pytest.mark.skipif(termbase._native is None, reason="the C term base is not built")

_names = itertools.count()
#: more ops than user bits: some share a bit
UNARY = ["sin", "cos", "exp", "tanh", "log", "sqrt", "neg", "abs", "cosh", "sinh"]
BINARY = ["mul", "add", "sub", "truediv"]


def fresh_symbol() -> eg.Term:
    """A symbol no other test uses (so that its terms are new)."""
    return eg.Symbol(f"users_{next(_names)}")


def found(t: eg.Term) -> bool:
    """Whether the plain lookup (every slot of the run read) and a construction both give t."""
    native = termbase._native
    assert native is not None
    return native.find(t.op, t.args, t.attr) is t and eg.Term(t.op, t.args, t.attr) is t


_STEP = st.tuples(
    st.sampled_from(["symbol", "unary", "binary", "drop", "again"]),
    st.integers(0, 9),
    st.integers(0, 200),
    st.integers(0, 200),
)


@needs_native
@settings(max_examples=40, deadline=None)
@given(st.lists(_STEP, min_size=1, max_size=150))
def test_a_construction_gives_what_the_plain_lookup_finds(steps: list) -> None:
    native = termbase._native
    assert native is not None
    pool: list[eg.Term] = [fresh_symbol()]
    for kind, k, i, j in steps:
        a, b = pool[i % len(pool)], pool[j % len(pool)]
        if kind == "symbol":
            pool.append(fresh_symbol())
            continue
        if kind == "drop":
            if len(pool) > 1:
                pool.pop(i % len(pool))
            continue
        if kind == "again" and a.args:  # a term that exists, built once more
            op, args = a.op, a.args
        elif kind == "binary" or kind == "again":
            op, args = get_op(BINARY[k % len(BINARY)]), (a, b)
        else:
            op, args = get_op(UNARY[k]), (a,)
        before = native.find(op, args)
        made = eg.Term(op, args)
        assert before is None or made is before  # the generic road's answer
        assert native.find(op, args) is made
        pool.append(made)
    assert all(found(t) for t in pool)


@needs_native
def test_live_terms_are_found_through_waves_of_deaths_and_rehashes() -> None:
    gc.collect()
    rng = random.Random(29)
    start = eg.intern_table_size()
    x = fresh_symbol()
    keep: list[eg.Term] = []
    for wave in range(12):  # deaths in the middle of runs leave tombstones; a full table drops them
        made = [get_op(UNARY[rng.randrange(len(UNARY))])(x) * (10**9 + wave * 100_000 + k) for k in range(6_000)]
        rng.shuffle(made)
        keep += made[:500]
        del made
        gc.collect()
        assert all(found(t) for t in keep[-500:])
    assert all(found(t) for t in keep)
    live = len(keep) + len({t.args[0] for t in keep}) + len({t.args[1] for t in keep})
    assert eg.intern_table_size() == start + 1 + live
    del keep
    gc.collect()
    assert eg.intern_table_size() == start + 1


@needs_native
def test_writing_the_cached_depth_keeps_the_user_bits() -> None:
    a = fresh_symbol()
    b = eg.sin(a)
    t = fresh_symbol()
    for _ in range(40):  # b takes its slot: a has a user of sin's bit there
        t = eg.cos(t)
    assert a.depth == 0 and b.depth == 1
    object.__setattr__(a, "_depth", 7)
    assert a._depth == 7
    assert eg.sin(a) is b
    object.__setattr__(a, "_depth", 2**24)  # too large for the 24 bits of the word: not cached
    assert not hasattr(a, "_depth")
    assert eg.sin(a) is b
    object.__setattr__(a, "_depth", 2**24 - 2)  # the largest that fits
    assert a._depth == 2**24 - 2
    object.__delattr__(a, "_depth")
    assert not hasattr(a, "_depth")
    assert eg.sin(a) is b and found(b)
    assert a.depth == 0
