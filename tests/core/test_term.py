"""Interning, immutability, identity equality, caches, pickling and copying of terms."""

from __future__ import annotations

import copy
import gc
import math
import pickle
import threading

import pytest

import exprgraph as eg
from exprgraph import Symbol, Term, const, symbols


def test_equal_construction_gives_the_same_object():
    x, y = symbols("x y")
    assert (x * y + 3) is (x * y + 3)
    assert Symbol("x") is x
    assert eg.parse("x*y + 3") is x * y + 3
    assert Term(eg.get_op("add"), (x, y)) is x + y


def test_operand_order_and_op_matter():
    x, y = symbols("x y")
    assert (x + y) is not (y + x)  # constructors never canonicalise
    assert (x - y) is not (x + y)


def test_constructors_never_simplify():
    x = Symbol("x")
    t = x * 1
    assert t.op.name == "mul"
    assert t.args == (x, const(1))
    assert (x + 0).args[1].value == 0


def test_equality_is_identity_and_terms_are_dict_keys():
    x, y = symbols("x y")
    d = {x + y: "a", x * y: "b"}
    assert d[x + y] == "a"
    assert d[eg.parse("x*y")] == "b"
    assert (x == y) is False
    assert (x == Symbol("x")) is True
    assert len({x + 1, x + 1, 1 + x}) == 2


def test_constants_intern_by_dtype_and_exact_bits():
    assert const(1) is not const(1.0)
    assert const(1) is not const(True)
    assert const(1.0) is not const(True)
    assert const(-0.0) is not const(0.0)
    assert math.copysign(1, const(-0.0).value) == -1
    assert const(float("nan")) is const(float("nan"))
    assert const(2) is const(2)
    assert const(1, dtype="float64") is const(1.0)
    assert const(1).dtype == "int64" and const(1.0).dtype == "float64" and const(True).dtype == "bool"


def test_array_constants_intern_by_content():
    a = const([1.0, 2.0])
    assert a is const([1.0, 2.0])
    assert a is not const([1, 2])
    assert a.shape == (2,)
    assert a.dtype == "float64"
    with pytest.raises(ValueError):
        a.value.array[0] = 5.0  # read-only


def test_numpy_scalars_become_python_constants():
    import numpy as np

    assert const(np.float64(2.5)) is const(2.5)
    assert const(np.int32(3)) is const(3)
    assert const(np.bool_(True)) is const(True)


def test_int_overflow_is_rejected():
    with pytest.raises(OverflowError):
        const(2**64)


def test_python_numbers_are_wrapped():
    x = Symbol("x")
    assert (x + 2).args[1] is const(2)
    assert (2 + x).args[0] is const(2)
    assert (2.5 * x).args[0] is const(2.5)
    with pytest.raises(TypeError):
        x + "a"


def test_terms_are_immutable():
    x = Symbol("x")
    with pytest.raises(AttributeError):
        x.op = None
    with pytest.raises(AttributeError):
        del x.args
    with pytest.raises(AttributeError):
        x.anything = 1


def test_copy_and_deepcopy_return_the_term():
    x, y = symbols("x y")
    t = x * y
    assert copy.copy(t) is t
    assert copy.deepcopy(t) is t
    assert copy.deepcopy([t, {"k": t}])[1]["k"] is t


def test_pickle_reinterns():
    x, y = symbols("x y")
    t = eg.sin(x * y) / (x + 2.5) + eg.sum(Symbol("A", shape=(3, "n")), axis=0)
    assert pickle.loads(pickle.dumps(t)) is t
    assert pickle.loads(pickle.dumps([t, x])) == [t, x]


def test_pickle_of_a_deep_chain_does_not_recurse():
    x = Symbol("x")
    t = x
    for _ in range(100_000):
        t = t + 1
    back = pickle.loads(pickle.dumps(t))
    assert back is t


def test_dead_terms_leave_the_intern_table():
    x = Symbol("x")
    before = eg.intern_table_size()
    t = x
    for i in range(1000):
        t = t * (i + 0.5)
    assert eg.intern_table_size() >= before + 1000
    del t
    gc.collect()
    assert eg.intern_table_size() < before + 10


def test_interning_across_threads():
    barrier = threading.Barrier(8)
    results: list[list[Term]] = [[] for _ in range(8)]

    def work(slot: int) -> None:
        barrier.wait()
        x, y = symbols("tx ty")
        out = results[slot]
        for i in range(300):
            out.append(eg.exp(x * i) + y / (i + 1))

    threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    for other in results[1:]:
        assert all(a is b for a, b in zip(results[0], other, strict=True))


def test_cached_properties():
    x, y, z = symbols("x y z")
    shared = x * y
    t = shared + shared * z
    assert t.free_symbols == frozenset({x, y, z})
    assert t.size == 6  # x, y, x*y, z, (x*y)*z, +
    assert t.depth == 3
    assert x.depth == 0 and x.size == 1
    assert const(1).free_symbols == frozenset()
    assert (x + 1).free_symbols is x.free_symbols  # chains share one set


def test_leaf_accessors():
    x = Symbol("x")
    assert x.name == "x" and x.is_symbol and not x.is_const
    assert const(3).value == 3 and const(3).is_const
    with pytest.raises(AttributeError):
        (x + 1).name
    with pytest.raises(AttributeError):
        x.value


def test_truth_value_of_comparisons_is_an_error():
    x, y = symbols("x y")
    with pytest.raises(TypeError, match="truth value"):
        bool(x < y)
    with pytest.raises(TypeError):
        if eg.eq(x, y):
            pass
    assert bool(x + y) is True


def test_terms_are_not_iterable():
    with pytest.raises(TypeError):
        list(Symbol("x") + 1)


def test_symbol_names_are_checked():
    for bad in ["", "1x", "x y", "inf", "nan", "and", "True", "a-b"]:
        with pytest.raises(ValueError):
            Symbol(bad)
    assert symbols("a, b c") == (Symbol("a"), Symbol("b"), Symbol("c"))
    assert symbols("a") is Symbol("a")
    with pytest.raises(ValueError):
        symbols("  ")


def test_symbols_differ_by_dtype_and_shape():
    assert Symbol("n", "int64") is not Symbol("n")
    assert Symbol("A", shape=(2,)) is not Symbol("A", shape=(3,))
    assert Symbol("A", shape=(2,)) is Symbol("A", shape=[2])
