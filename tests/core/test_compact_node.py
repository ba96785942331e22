"""The compact C node: the dtype as a code, the lazy caches in one block, weak references kept."""

from __future__ import annotations

import gc
import sys
import weakref

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import exprgraph as eg
from exprgraph.core import termbase
from exprgraph.core.dtypes import DTYPES, promote
from exprgraph.core.op import REGISTRY

native = termbase.native()
needs_native = pytest.mark.skipif(not native, reason="the C term base is not built")

#: the value of each dtype that its constant is built from
VALUES = {"bool": True, "int64": 3, "float32": np.float32(1.5), "float64": 2.25}


@pytest.mark.parametrize("dtype", DTYPES)
def test_every_dtype_reads_back_as_its_name(dtype: str) -> None:
    x = eg.Symbol(f"x_dt_{dtype}", dtype=dtype)
    assert x.dtype == dtype and x.dtype is DTYPES[DTYPES.index(dtype)]
    vec = eg.Symbol(f"v_dt_{dtype}", dtype=dtype, shape=(3,))
    assert vec.dtype == dtype and vec.shape == (3,)
    c = eg.const(VALUES[dtype])
    assert c.dtype == dtype
    assert eg.where(eg.lt(eg.Symbol("p_dt"), 0.0), x, x).dtype == dtype  # where: the dtype of its branches


def test_a_scalar_shape_is_the_empty_tuple() -> None:
    x = eg.Symbol("x_sh")
    for t in (x, x * x, eg.sin(x), eg.const(2.0), eg.const(7)):
        assert t.shape == () and isinstance(t.shape, tuple)


@settings(max_examples=40, deadline=None)
@given(dims=st.lists(st.integers(1, 5), min_size=0, max_size=3), dtype=st.sampled_from(DTYPES))
def test_shapes_and_attrs_read_back_as_built(dims: list, dtype: str) -> None:
    # a shape that is not () and an attr that is not None live in the node's tail: read back equal
    shape = tuple(dims)
    v = eg.Symbol(f"v_tail_{len(dims)}", dtype=dtype, shape=shape)
    assert v.shape == shape and v.dtype == dtype and v.attr == (f"v_tail_{len(dims)}", dtype, shape)
    w = eg.exp(v) if dtype in ("float32", "float64") else v + v
    assert w.shape == shape and w.attr is None
    assert eg.Term(w.op, w.args, w.attr) is w
    c = eg.const(-0.0)  # an attr with a key of its own: both read back
    assert c.attr == 0.0 and str(c.attr) == "-0.0" and c.shape == ()


steps_of = st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3), st.integers(0, 2)), min_size=1, max_size=30)


@settings(max_examples=80, deadline=None)
@given(steps=steps_of)
def test_dtypes_of_built_terms_follow_the_promotion_table(steps: list) -> None:
    # arithmetic promotes (bools count as int64), a real function keeps float32 and makes float64 of the
    # rest, a comparison gives bool: the codes stored in the C node read back as the Python rules say
    leaves = [eg.Symbol(f"d_pr_{d}", dtype=d) for d in DTYPES]
    for i, j, kind in steps:
        a, b = leaves[i], leaves[j]
        if kind == 0:
            t = a + b
            want = promote(a.dtype, b.dtype)
            want = "int64" if want == "bool" else want
        elif kind == 1:
            t = eg.exp(a)
            want = "float32" if a.dtype == "float32" else "float64"
        else:
            t = eg.lt(a, b)
            want = "bool"
        assert t.dtype == want
        assert eg.Term(t.op, t.args, t.attr) is t  # built again from its fields: the same term


class _Name(str):
    """A dtype name that takes weak references (a str does not)."""


def test_a_dtype_outside_the_four_names_is_kept_as_given() -> None:
    name = _Name("complex128")
    t = eg.Term(REGISTRY["symbol"], (), ("x_other_dt", name, ()))
    assert t.dtype == "complex128" and t.dtype is name
    ref = weakref.ref(name)  # the term holds the name; dropping the term drops it
    del name
    assert ref() is t.dtype
    if native:
        assert sys.getsizeof(t) == 64 + 8 + 8  # its attr, and one word more for the dtype
    del t
    gc.collect()
    assert ref() is None


@needs_native
def test_the_lazy_block_is_made_once_and_kept() -> None:
    x, y = eg.Symbol("x_lazy"), eg.Symbol("y_lazy")
    t = eg.sin(x) * y
    assert sys.getsizeof(t) == 80  # two operands, no block yet
    with pytest.raises(AttributeError):
        t._free
    first = t.args
    assert sys.getsizeof(t) == 80 + 16  # the block of two words, made for the tuple
    assert t.args is first
    assert t.free_symbols == frozenset({x, y})
    assert t._free is t.free_symbols  # cached in the same block
    assert t.args is first and sys.getsizeof(t) == 80 + 16  # one block for both caches
    object.__setattr__(t, "_free", frozenset({x}))
    assert t._free == frozenset({x})
    object.__delattr__(t, "_free")
    with pytest.raises(AttributeError):
        t._free
    with pytest.raises(AttributeError):
        object.__delattr__(t, "_free")
    assert t.args is first


def test_the_free_symbols_cache_alone_then_args() -> None:
    x, y = eg.Symbol("x_fa"), eg.Symbol("y_fa")
    t = eg.cos(x) + y
    object.__setattr__(t, "_free", frozenset({x, y}))  # the block made by the cache first
    assert t.args == (eg.cos(x), y)
    assert t._free == frozenset({x, y})


def test_weak_references_to_terms_work_and_die_with_them() -> None:
    x = eg.Symbol("x_wr")
    t = eg.tanh(x) * x
    died: list[int] = []
    ref = weakref.ref(t, lambda r: died.append(1))
    table: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary({t: 5})
    assert ref() is t and table[t] == 5
    t.args  # a block made: weak references are not in it
    del t
    gc.collect()
    assert ref() is None and died == [1] and len(table) == 0


@pytest.mark.parametrize("n", [100_000, 1_000_000])
def test_long_chains_with_their_caches_are_built_and_dropped(n: int) -> None:
    if n > 100_000 and not native:
        pytest.skip("a chain of a million pure-Python terms takes too long")
    x = eg.Symbol(f"x_long{n}")
    t = x
    ref = None
    for i in range(n):
        t = eg.sin(t) if i % 2 else t * x
        if i % 1000 == 0:
            t.args  # some nodes with their lazy block
            if ref is None:
                ref = weakref.ref(t)
    assert t.args[0].dtype == "float64"
    del t
    gc.collect()
    assert ref is not None and ref() is None


def test_the_size_cache_leaves_the_dtype_and_the_tail_alone() -> None:
    # the cached size lives in the block of lazy caches, apart from the dtype's code and the tail's
    # flags: setting, clearing and overflowing it changes neither
    v = eg.Symbol("v_cache", dtype="float32", shape=(2,))
    w = eg.sin(v) * v
    for value in (0, 5, 2**26 - 2, 2**26, 2**40):
        object.__setattr__(w, "_size", value)
        assert w.dtype == "float32" and w.shape == (2,) and w.attr is None
        assert v.attr == ("v_cache", "float32", (2,))
    if native:
        object.__setattr__(w, "_size", 2**40)  # any Py_ssize_t fits
        assert w._size == 2**40
        object.__setattr__(w, "_size", 2**70)  # too large for a Py_ssize_t: not cached
        with pytest.raises(AttributeError):
            w._size
    object.__delattr__(w, "_size")
    assert w.dtype == "float32" and w.shape == (2,)
