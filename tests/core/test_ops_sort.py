"""topk (topk_indices, take_along, scatter_along) and arange: values against numpy (ties in stable
order), gradients against finite differences, printing round trips and the named errors."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import exprgraph as eg
from exprgraph.core.ops_range import arange
from exprgraph.core.ops_sort import take_along, topk, topk_indices, topk_values
from exprgraph.diff import grad
from exprgraph.errors import EvaluationError, ShapeError
from exprgraph.eval import evaluate

SUM = eg.get_op("sum")


def _numpy_topk(v: np.ndarray, k: int, axis: int, largest: bool) -> tuple[np.ndarray, np.ndarray]:
    """The reference: positions ordered by value (largest first when asked), equal values by position."""
    moved = np.moveaxis(v, axis, -1)
    index = np.empty((*moved.shape[:-1], k), np.int64)
    for pos in np.ndindex(*moved.shape[:-1]):
        row = moved[pos]
        order = sorted(range(row.size), key=lambda i: ((-row[i] if largest else row[i]), i))
        index[pos] = order[:k]
    index = np.moveaxis(index, -1, axis)
    return np.take_along_axis(v, index, axis=axis), index


@st.composite
def cases(draw: st.DrawFn) -> tuple:
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=3)))
    axis = draw(st.integers(-len(shape), len(shape) - 1))
    k = draw(st.integers(0, shape[axis]))
    return shape, axis, k, draw(st.booleans()), draw(st.sampled_from(["float64", "int64", "float32"]))


@settings(max_examples=80, deadline=None)
@given(cases(), st.integers(0, 2**32 - 1))
def test_topk_is_the_stable_reference(case, seed):
    shape, axis, k, largest, dtype = case
    v = np.random.default_rng(seed).integers(-2, 3, shape).astype(dtype)  # small ints: many ties
    x = eg.Symbol("x", dtype, shape)
    values, index = topk(x, k, axis, largest)
    want_values, want_index = _numpy_topk(v, k, axis, largest)
    np.testing.assert_array_equal(evaluate(index, {"x": v}), want_index)
    np.testing.assert_array_equal(evaluate(values, {"x": v}), want_values)
    assert values.dtype == dtype and index.dtype == "int64"
    assert eg.parse(str(values), [x]) is values


@settings(max_examples=40, deadline=None)
@given(cases(), st.integers(0, 2**32 - 1))
def test_topk_gradient_is_finite_differences(case, seed):
    shape, axis, k, largest, _ = case
    rng = np.random.default_rng(seed)
    v = rng.permutation(np.prod(shape)).reshape(shape) * 0.5 + rng.uniform(0, 0.1, shape)  # distinct entries
    x = eg.Symbol("x", shape=shape)
    w = rng.uniform(-1, 1, tuple(topk_values(x, k, axis, largest).shape))
    f = SUM(eg.const(w) * topk_values(x, k, axis, largest) ** 2)
    got = evaluate(grad(f, x), {"x": v})
    fd = np.zeros(shape)
    for pos in np.ndindex(*shape):
        for sign in (1, -1):
            moved = v.copy()
            moved[pos] += sign * 1e-6
            fd[pos] += sign * float(evaluate(f, {"x": moved})) / 2e-6
    np.testing.assert_allclose(np.broadcast_to(got, shape), fd, atol=1e-5)


def test_take_along_gradient_adds_repeated_positions():
    x = eg.Symbol("x", shape=(2, 3))
    index = eg.const(np.array([[0, 0, 2, 0], [1, 2, 2, 2]]))
    f = SUM(take_along(x, index, axis=1) * eg.const(np.arange(8.0).reshape(2, 4)))
    np.testing.assert_allclose(evaluate(grad(f, x), {"x": np.zeros((2, 3))}), [[0 + 1 + 3, 0, 2], [0, 4, 5 + 6 + 7]])
    g = grad(f, x)
    assert "scatter_along" in str(g)
    assert eg.parse(str(g), [x]) is g


def test_topk_errors_are_named():
    x = eg.Symbol("x", shape=(3, 4))
    with pytest.raises(ShapeError, match="k=5"):
        topk_indices(x, 5)
    with pytest.raises(TypeError, match="constant int"):
        topk_indices(x, eg.Symbol("k", "int64"))
    with pytest.raises(ShapeError, match="counts from the end"):
        eg.get_op("topk_indices")(x, spec=(2, 1, 1))  # the op stores -1: the builder converts
    with pytest.raises(ShapeError, match="at least one"):
        topk_indices(eg.Symbol("s"), 1)
    with pytest.raises(ShapeError, match="int64"):
        take_along(x, eg.const(np.zeros((3, 2))), axis=1)


def test_bools_sort_as_ints():
    p = eg.Symbol("p", "bool", (5,))
    v = np.array([False, True, False, True, True])
    np.testing.assert_array_equal(evaluate(topk_indices(p, 3), {"p": v}), [1, 3, 4])
    np.testing.assert_array_equal(evaluate(topk_indices(p, 2, largest=False), {"p": v}), [0, 2])


def test_arange_of_numbers_is_a_constant():
    assert arange(5) is eg.const(np.arange(5))
    np.testing.assert_array_equal(evaluate(arange(0.0, 1.0, 0.25), {}), np.arange(0.0, 1.0, 0.25))
    assert arange(2, eg.const(7), 2) is eg.const(np.arange(2, 7, 2))


@pytest.mark.parametrize(("start", "step"), [(0, 1), (2, 3), (10, -2), (-3, 1), (5, 4)])
@pytest.mark.parametrize("stop", [-4, 0, 1, 7, 12])
def test_arange_of_a_term_has_a_dimension_term_length(start, stop, step):
    n = eg.Symbol("n", "int64")
    r = arange(start, n, step)
    env = {"n": np.int64(stop)}
    value = evaluate(r, env)
    np.testing.assert_array_equal(value, np.arange(start, stop, step))
    assert evaluate(r.shape[0], env) == len(value)
    assert eg.parse(str(r), [n]) is r


def test_arange_errors_are_named():
    n = eg.Symbol("n", "int64")
    with pytest.raises(ShapeError, match="start and step"):
        arange(eg.Symbol("m", "int64"), n)
    with pytest.raises(ShapeError, match="nonzero"):
        arange(0, n, 0)
    with pytest.raises(ShapeError, match="int64 scalar"):
        arange(0, eg.Symbol("x"), 1)
    with pytest.raises(EvaluationError, match="differs"):
        evaluate(arange(n), {"n": np.array([3, 4])})
    assert grad(SUM(arange(n) * eg.Symbol("x")), "x") is not None


def test_leading_batch_axes_select_on_the_trailing_axis():
    # the numpy evaluation of many parameter sets: the axes are counted from the end
    x = eg.Symbol("x", shape=(4,))
    values, index = topk(x, 2)
    xv = np.random.default_rng(0).uniform(-1, 1, (3, 4))
    got = index.op.impl(xv, attr=index.attr)
    np.testing.assert_array_equal(got, [np.argsort(-r, kind="stable")[:2] for r in xv])
    np.testing.assert_array_equal(values.op.impl(xv, got, attr=values.attr), [np.sort(r)[::-1][:2] for r in xv])
    back = eg.get_op("scatter_along").impl(np.ones((3, 2)), got[:1], attr=(-1, 4))  # the index broadcasts too
    np.testing.assert_array_equal(back, np.repeat(np.isin(np.arange(4), got[0])[None].astype(float), 3, axis=0))
