"""The intern table's shortcuts for new operands (``_cterm_term.c``, ``_cterm_table.c``).

A term with an operand that has no user of its op in a slot of the table is looked for only among
the few terms waiting for their slots, and waits there too (the slots of the set are read
together). Nothing of that may show: every term is found again by its fields, dead terms leave the
table, the table's size counts the waiting terms, and writing ``_size`` changes no lookup (the
user bits live in the word of ``_depth``: see test_intern_users.py).
"""

from __future__ import annotations

import gc
import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

import exprgraph as eg
from exprgraph.core import termbase

_names = itertools.count()


def fresh_symbol() -> eg.Term:
    """A symbol no other test uses (so that its terms are new)."""
    return eg.Symbol(f"pending_{next(_names)}")


def settle() -> None:
    """Make and drop more new terms than wait for their slots: every term made before has its slot."""
    t = fresh_symbol()
    for _ in range(40):
        t = eg.sin(t)


def test_chains_of_new_terms_are_found_again_level_by_level() -> None:
    x = fresh_symbol()
    c = eg.const(2.5)
    before = eg.intern_table_size()
    levels = [x]
    for k in range(100):  # more than the waiting set holds: it fills and empties several times
        levels.append(eg.sin(levels[-1]) if k % 2 else levels[-1] * 2.5)
    assert eg.intern_table_size() == before + 100
    again = [x]
    for k in range(100):
        again.append(eg.sin(again[-1]) if k % 2 else again[-1] * 2.5)
    assert all(a is b for a, b in zip(levels, again, strict=True))
    assert all(eg.Term(t.op, t.args, t.attr) is t for t in levels)
    assert levels[1].args == (x, c)


def test_a_waiting_term_is_found_by_the_tables_find() -> None:
    x = fresh_symbol()
    s = eg.sin(x)  # x had no user: s waits for its slot
    native = termbase._native
    if native is not None:
        assert native.find(s.op, (x,)) is s
    assert eg.sin(x) is s
    assert eg.Term(s.op, (x,)) is s


def test_waiting_terms_that_die_leave_the_table() -> None:
    gc.collect()
    before = eg.intern_table_size()
    x = fresh_symbol()
    made = [eg.cos(x), eg.sin(x), eg.exp(x)]
    made.append(made[0] * made[1])
    assert eg.intern_table_size() == before + 5
    del made
    gc.collect()
    assert eg.intern_table_size() == before + 1  # x itself
    c = eg.cos(x)
    assert eg.cos(x) is c
    del c, x
    gc.collect()
    assert eg.intern_table_size() == before


def test_writing_the_cached_size_keeps_the_operand_flag() -> None:
    a = fresh_symbol()
    b = eg.sin(a)
    settle()  # b has its slot: a has a user in a slot, and a lookup by a must read the slots
    assert a.size == 1 and b.size == 2  # the cached counts read back through the flagged word
    assert a._size == 1
    object.__setattr__(a, "_size", 7)
    assert a._size == 7
    assert eg.sin(a) is b
    object.__delattr__(a, "_size")
    assert not hasattr(a, "_size")
    assert eg.sin(a) is b
    object.__setattr__(a, "_size", 2**70)  # the C base drops a count too large to cache, the flag kept
    assert not termbase.native() or not hasattr(a, "_size")
    assert eg.sin(a) is b
    c = fresh_symbol()
    object.__setattr__(c, "_size", 3)  # a flag never set is not set by a write either
    d = eg.cos(c)
    assert eg.cos(c) is d
    settle()
    assert eg.cos(c) is d
    assert c._size == 3


_STEP = st.tuples(st.sampled_from(["symbol", "sin", "mul", "add", "drop"]), st.integers(0, 63), st.integers(0, 63))


@settings(max_examples=25, deadline=None)
@given(st.lists(_STEP, min_size=1, max_size=90))
def test_every_live_term_is_found_by_its_fields_through_builds_and_drops(steps: list) -> None:
    pool: list[eg.Term] = []
    gc.collect()
    before = eg.intern_table_size()
    for kind, i, j in steps:
        if kind == "symbol" or not pool:
            pool.append(fresh_symbol())
        elif kind == "sin":
            pool.append(eg.sin(pool[i % len(pool)]))
        elif kind == "mul":
            pool.append(pool[i % len(pool)] * pool[j % len(pool)])
        elif kind == "add":
            pool.append(pool[i % len(pool)] + 1.5)
        else:
            pool.pop(i % len(pool))
        for t in pool:
            assert eg.Term(t.op, t.args, t.attr) is t
    del pool, t
    gc.collect()
    assert eg.intern_table_size() <= before + 1  # (the constant 1.5 may stay, held by a cache)
