"""Memory of terms: the node size, the cached counts, and an intern table that gives memory back."""

from __future__ import annotations

import gc
import pickle
import subprocess
import sys
import weakref

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import exprgraph as eg
from exprgraph.core import termbase

native = termbase.native()
needs_native = pytest.mark.skipif(not native, reason="the C term base is not built")

UNARY = (eg.sin, eg.cos, eg.exp, eg.tanh)


def capacity() -> int:
    """Slots of the C intern table."""
    slots = termbase.intern_table_capacity()
    assert slots is not None
    return slots


@needs_native
def test_a_c_term_holds_its_operands_without_a_collector_header() -> None:
    x = eg.Symbol("x_mem")
    t = eg.sin(x) * x
    assert eg.Term.__basicsize__ == 64  # the fixed part (see _cterm_api.h)
    assert sys.getsizeof(t) == 80  # the fixed part and two operand words, no tuple: an 80-byte block
    assert sys.getsizeof(eg.sin(x)) == 72  # one operand: the same block
    assert sys.getsizeof(x) == 72  # a symbol: its name in the tail, the same block
    assert not eg.Term.__flags__ & (1 << 14)  # Py_TPFLAGS_HAVE_GC
    assert not gc.is_tracked(t)


def test_terms_still_take_weak_references_and_die_with_them() -> None:
    x = eg.Symbol("x_weak")
    t = eg.exp(x) + x
    ref = weakref.ref(t)
    assert ref() is t
    del t
    gc.collect()
    assert ref() is None
    assert termbase.find_term(eg.get_op("add"), (eg.exp(x), x)) is None


def test_cached_depth_and_size_read_back_and_start_unset() -> None:
    x, y = eg.Symbol("x_count"), eg.Symbol("y_count")
    t = eg.sin(x * y) + eg.cos(x)
    assert not hasattr(t, "_depth") and not hasattr(t, "_size")
    assert (t.depth, t.size) == (3, 6)
    assert (t._depth, t._size) == (3, 6)
    object.__delattr__(t, "_size")
    assert not hasattr(t, "_size")
    assert t.size == 6


@needs_native
def test_the_size_grows_the_lazy_block_by_a_word_and_keeps_the_other_caches() -> None:
    x, y = eg.Symbol("x_sized"), eg.Symbol("y_sized")
    t = eg.cos(x) * y
    assert sys.getsizeof(t) == 80  # no block yet
    args, free = t.args, t.free_symbols
    assert sys.getsizeof(t) == 80 + 16  # the block of two words: the tuple and the free symbols
    assert t.size == 4
    assert sys.getsizeof(t) == 80 + 24  # grown by the size's word, the caches moved with it
    assert t.args is args and t._free is free and t._size == 4
    u = eg.sin(x) * y
    assert u.size == 4 and sys.getsizeof(u) == 80 + 24  # the size first: a block of three words at once
    assert u.free_symbols == frozenset({x, y}) and u.args == (eg.sin(x), y)
    object.__delattr__(u, "_size")
    assert not hasattr(u, "_size") and u.size == 4


@needs_native
def test_counts_that_do_not_fit_are_not_cached_and_non_ints_are_refused() -> None:
    t = eg.sin(eg.Symbol("x_big"))
    object.__setattr__(t, "_size", 2**40)  # the size lives in the block of lazy caches: any Py_ssize_t
    assert t._size == 2**40
    object.__setattr__(t, "_size", 2**70)
    assert not hasattr(t, "_size")
    object.__setattr__(t, "_depth", 2**24)  # the depth has 24 bits in the term
    assert not hasattr(t, "_depth")
    object.__setattr__(t, "_depth", -1)
    assert not hasattr(t, "_depth")
    object.__setattr__(t, "_depth", 0)
    assert t._depth == 0
    with pytest.raises(TypeError, match="must be an int"):
        object.__setattr__(t, "_size", "7")


@needs_native
def test_the_intern_table_shrinks_when_terms_die_and_grows_again() -> None:
    gc.collect()
    start = capacity()
    x = eg.Symbol("x_shrink")
    chain = x
    for k in range(300_000):
        chain = eg.sin(chain) + k
    grown = capacity()
    assert grown >= 2 * 300_000
    del chain
    gc.collect()
    assert capacity() == grown  # freeing never rehashes: the next construction shrinks the table
    again = eg.cos(x)
    # (to 2**18 slots at least: the table of an expression of ~100k terms is kept for the next one)
    assert capacity() <= max(start, 2**18, 8 * eg.intern_table_size()) < grown // 4
    for _ in range(999):
        again = eg.cos(again)
    assert again.depth == 1000


def test_a_long_chain_is_freed_without_recursion() -> None:
    x = eg.Symbol("x_free")
    chain = x
    for _ in range(200_000):
        chain = eg.exp(chain) * x
    ref = weakref.ref(chain)
    del chain
    assert ref() is None


def test_pickling_rebuilds_the_same_interned_term() -> None:
    x = eg.Symbol("x_pickle")
    t = eg.tanh(eg.sin(x) * 2.5 + x)
    assert pickle.loads(pickle.dumps(t)) is t


ops_of = st.lists(st.tuples(st.integers(0, 3), st.integers(0, 1_000), st.integers(0, 1_000)), min_size=1)


@settings(max_examples=30, deadline=None)
@given(steps=ops_of, keep=st.integers(1, 7), bulk=st.integers(0, 70_000))
def test_interning_survives_tables_that_grow_and_shrink(steps: list, keep: int, bulk: int) -> None:
    # build terms (unary and binary over earlier ones), keep a few, drop the rest together with a
    # bulk chain that forces the table to grow and then shrink: every kept term is found again
    # by construction, and rebuilding a dropped one gives a term equal to it in structure
    x = eg.Symbol("x_prop")
    built = [x]
    for op, i, j in steps:
        a, b = built[i % len(built)], built[j % len(built)]
        built.append(UNARY[op](a) if op < 2 else a * b if op == 2 else a + b)
    bulk_chain = x
    for k in range(bulk):
        bulk_chain = eg.sin(bulk_chain) - k
    kept = built[::keep]
    shapes = [str(t) for t in built]
    del bulk_chain, built
    gc.collect()
    for t in kept:
        assert eg.Term(t.op, t.args, t.attr) is t
        assert termbase.find_term(t.op, t.args, t.attr) is t
    rebuilt = [x]
    for op, i, j in steps:
        a, b = rebuilt[i % len(rebuilt)], rebuilt[j % len(rebuilt)]
        rebuilt.append(UNARY[op](a) if op < 2 else a * b if op == 2 else a + b)
    assert [str(t) for t in rebuilt] == shapes
    assert all(r is t for r, t in zip(rebuilt[::keep], kept, strict=True))


def _printed_by_fresh_interpreter(script: str) -> list[str]:
    """The words ``script`` prints, run in a fresh interpreter (an intern table no other test has used)."""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=600)
    return out.stdout.split()


# A fresh interpreter (no tombstones left by other tests): fill the C table to 80% of its slots,
# then past 13/16, checking its size and that every term built is found again at each step.
LOAD_SCRIPT = """
import exprgraph as eg
from exprgraph.core import termbase

def chain(name, count):
    out = [eg.Symbol(name)]
    for _ in range(count):
        out.append(eg.sin(out[-1]))
    return out

kept = chain("x_seed", 10)
slots = termbase.intern_table_capacity()
kept += chain("x_fill", int(0.80 * slots) - eg.intern_table_size())
held = termbase.intern_table_capacity()
at_80 = eg.intern_table_size() / slots
kept += chain("x_past", int(0.83 * slots) - eg.intern_table_size())
grown = termbase.intern_table_capacity()
found = all(termbase.find_term(t.op, t.args, t.attr) is t for t in kept)
rebuilt = chain("x_fill", 1000)[-1] is kept[10 + 1 + 1000]
print(slots, held, grown, round(at_80, 3), found, rebuilt)
"""


@needs_native
def test_the_table_fills_to_thirteen_sixteenths_before_it_doubles() -> None:
    slots, held, grown, at_80, found, rebuilt = _printed_by_fresh_interpreter(LOAD_SCRIPT)
    assert float(at_80) >= 0.79  # past three quarters, and still the same table:
    assert int(held) == int(slots)
    assert int(grown) == 2 * int(slots)  # past 13/16 it doubles
    assert found == "True" and rebuilt == "True"


# A fresh interpreter: blocks of terms (new float constants, products and differences of symbols
# that already have users of those ops, as the opf family builds) dropped and built again many
# times, so lookups run over grown tables full of tombstones. Every live term must be found again,
# a term built again must be the live one, and the table's count must come back each time.
CHURN_SCRIPT = """
import gc, random
import exprgraph as eg
from exprgraph.core import termbase

xs = [eg.Symbol(f"x_churn{i}") for i in range(300)]

def block(k):
    out = []
    for i in range(250):
        a, b = xs[(k * 31 + i) % 300], xs[(k * 17 + 3 * i + 1) % 300]
        c = eg.const(k * 1000.0 + i + 0.25)
        out += [a * b, a - b, (a * b) * c - (a - b)]
    return out

def live_terms(blocks):
    return eg.postorder([t for blk in blocks.values() for t in blk])

rng = random.Random(29)
base = eg.intern_table_size()
blocks = {k: block(k) for k in range(120)}
size0, cap0 = eg.intern_table_size() - base, termbase.intern_table_capacity()
ok = True
for cycle in range(8):
    drop = rng.sample(sorted(blocks), 40)
    shapes = {k: [str(t) for t in blocks[k]] for k in drop}
    for k in drop:
        del blocks[k]
    gc.collect()
    for k in drop:
        blocks[k] = block(k)
        ok &= [str(t) for t in blocks[k]] == shapes[k]
    kept = rng.choice(sorted(set(blocks) - set(drop)))
    ok &= all(r is t for r, t in zip(block(kept), blocks[kept]))
    ok &= eg.intern_table_size() - base == size0
    ok &= all(termbase.find_term(t.op, t.args, t.attr) is t for t in live_terms(blocks) if t.args)
print(ok, size0, cap0, termbase.intern_table_capacity())
"""


@needs_native
def test_every_live_term_is_found_after_many_builds_and_drops() -> None:
    ok, size0, cap0, cap = _printed_by_fresh_interpreter(CHURN_SCRIPT)
    assert ok == "True"
    assert int(size0) > 50_000  # past the smallest table: the lookups ran over grown tables
    assert int(cap0) <= int(cap) <= 2 * int(cap0)  # tombstones are reused or dropped, not piled up
