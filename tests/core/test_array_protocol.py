"""The numpy protocol: ufuncs on terms build terms, arrays become constants, ndarray + term is a term."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from exprgraph import Symbol, Term, const, evaluate, get_op, ops, symbols
from exprgraph import sum as sum_

x, y = symbols("x y")
b = Symbol("b", "bool")


def test_every_op_with_a_ufunc_is_reached_from_numpy():
    table = Term.ufunc_builders()
    # the first op to name a ufunc is its builder (other tests register ops that reuse one)
    with_ufunc = list({op.ufunc: op for op in reversed(ops()) if op.ufunc is not None}.values())
    assert with_ufunc  # the table names ufuncs
    for op in with_ufunc:
        assert table[op.ufunc] is op
        args = [Symbol("p", "bool"), Symbol("q", "bool")] if op.name.startswith("logical") else [x, y]
        shape = (3, 3) if op.name == "matmul" else ()
        args = [Symbol(a.name, a.dtype, shape) for a in args][: op.ufunc.nin]
        assert op.ufunc(*args) is op(*args)  # np.<ufunc>(terms) builds the op's term


def test_unary_functions_and_mixed_operands():
    assert np.sin(x) is get_op("sin")(x)
    assert np.exp(x * 2) is get_op("exp")(x * 2)
    assert np.add(x, 2) is x + 2
    assert np.float64(2.5) * x is const(2.5) * x
    arr = np.array([1.0, 2.0, 3.0])
    t = arr + x
    assert isinstance(t, Term) and t.op.name == "add" and t.shape == (3,)
    assert t.args[0].is_const and np.array_equal(t.args[0].value.array, arr)
    assert isinstance(arr * x, Term) and isinstance(x - arr, Term) and isinstance(arr / x, Term)
    assert (arr < x).op.name == "lt" and (arr**x).op.name == "pow"
    assert isinstance(np.ones((2, 3)) @ Symbol("v", shape=(3,)), Term)
    assert np.maximum(x, arr).op.name == "maximum"
    # numpy's == is elementwise: an array compared with a term builds an eq term
    assert (arr == x).op.name == "eq"


def test_ufuncs_spelled_with_other_ops():
    assert np.square(x) is x**2
    assert np.positive(x) is x
    assert np.reciprocal(x) is 1.0 / x
    assert np.logical_xor(b, b) is get_op("ne")(b, b)
    assert np.array([True, False]) & b is get_op("logical_and")(const([True, False]), b)
    assert np.invert(b) is ~b
    with pytest.raises(TypeError, match="bool operands"):
        np.bitwise_and(Symbol("n", "int64"), 3)


def test_reduce_builds_sum_and_the_rest_is_refused():
    A = Symbol("A", shape=(2, 3))
    assert np.add.reduce(A, axis=1) is sum_(A, axis=1)
    assert np.add.reduce(A) is sum_(A, axis=0)
    with pytest.raises(TypeError, match="out="):
        np.sin(x, out=np.empty(()))
    with pytest.raises(TypeError, match="cbrt has no exprgraph op"):
        np.cbrt(x)
    with pytest.raises(TypeError, match=r"multiply\.accumulate"):
        np.multiply.accumulate(A)
    with pytest.raises(TypeError, match="keyword"):
        np.add(x, 1, where=True)
    with pytest.raises(TypeError):
        np.add(x, "text")


@settings(max_examples=50, deadline=None)
@given(
    st.sampled_from([np.add, np.subtract, np.multiply, np.true_divide, np.maximum, np.minimum, np.power]),
    st.lists(st.floats(-3, 3), min_size=1, max_size=5),
    st.floats(0.5, 3),
)
def test_mixed_terms_evaluate_like_numpy(ufunc, values, scalar):
    arr = np.array(values)
    term = ufunc(arr, x)
    with np.errstate(all="ignore"):
        want = ufunc(arr, scalar)
        got = evaluate(term, {"x": scalar})
    np.testing.assert_allclose(got, want, rtol=1e-12, equal_nan=True)


def test_arrays_of_terms_still_work_element_by_element():
    terms = np.array([x, y], dtype=object)
    total = terms + x
    assert total.dtype == object and total[0] is x + x and total[1] is y + x
    assert (x * terms)[1] is x * y
    assert np.add(terms, 1)[0] is x + 1
