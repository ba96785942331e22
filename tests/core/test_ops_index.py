"""Vector ops: slices, int and array indices, concat, stack, reshape, broadcast_to and the reductions
amax/amin/prod/mean. Values against numpy, gradients against finite differences (hypothesis over
random shapes, programs and values), printing round trips, batch axes and the named errors."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import exprgraph as eg
from exprgraph.compile import compile as compile_terms
from exprgraph.core.ops_index import broadcast_to, concat, reshape, stack, take
from exprgraph.diff import grad
from exprgraph.errors import CompileError, IndexOutOfRangeError, ShapeError
from exprgraph.eval import evaluate

AMAX, AMIN, PROD, MEAN, SUM = (eg.get_op(n) for n in ("amax", "amin", "prod", "mean", "sum"))
X = eg.Symbol("x", shape=(5,))
M = eg.Symbol("m", shape=(3, 4))
XV = np.array([0.5, -1.25, 2.0, 3.5, -0.75])
MV = np.arange(12.0).reshape(3, 4) / 7.0 - 0.5
ENV = {"x": XV, "m": MV}


@pytest.mark.parametrize(
    ("build", "want"),
    [
        (lambda: X[1:3], XV[1:3]),
        (lambda: X[-1], XV[-1]),
        (lambda: X[::-2], XV[::-2]),
        (lambda: X[4:0:-3], XV[4:0:-3]),
        (lambda: X[3:1], XV[3:1]),
        (lambda: M[:, 2], MV[:, 2]),
        (lambda: M[1], MV[1]),
        (lambda: M[-2:, ::2], MV[-2:, ::2]),
        (lambda: M[..., 1], MV[..., 1]),
        (lambda: M[None, 1, :], MV[None, 1, :]),
        (lambda: X[[0, 4, -1, 0]], XV[[0, 4, -1, 0]]),
        (lambda: M[np.array([[2, 0], [1, 1]])], MV[np.array([[2, 0], [1, 1]])]),
        (lambda: M[:, [3, 0]], MV[:, [3, 0]]),
        (lambda: M[1, [3, 0]], MV[1, [3, 0]]),
        (lambda: concat([X, X[1:3] * 2.0]), np.concatenate([XV, XV[1:3] * 2.0])),
        (lambda: concat([M, M[:, :1]], axis=1), np.concatenate([MV, MV[:, :1]], axis=1)),
        (lambda: stack([M[0], M[2]], axis=1), np.stack([MV[0], MV[2]], axis=1)),
        (lambda: stack([X, X]), np.stack([XV, XV])),
        (lambda: reshape(M, (2, -1)), MV.reshape(2, -1)),
        (lambda: reshape(M, ()), None),
        (lambda: broadcast_to(X, (2, 5)), np.broadcast_to(XV, (2, 5))),
        (lambda: AMAX(M, axis=1), MV.max(axis=1)),
        (lambda: AMIN(M), MV.min()),
        (lambda: PROD(M, axis=(0, 1)), MV.prod()),
        (lambda: MEAN(M, axis=-1), MV.mean(axis=-1)),
        (lambda: MEAN(X), XV.mean()),
    ],
)
def test_values_are_numpys_and_text_reads_back(build, want):
    if want is None:
        with pytest.raises(ShapeError, match="reshape"):
            build()
        return
    t = build()
    got = evaluate(t, ENV)
    assert np.shape(got) == np.shape(want) and t.shape == np.shape(want)
    np.testing.assert_array_equal(got, want)
    assert eg.parse(str(t), symbols={"x": X, "m": M}) is t
    names = {**{op.name: op for op in eg.core.ops()}, **vars(eg), "array": np.array}  # ops by name until re-exported
    assert eval(repr(t), names) is t  # our own repr: the constructor form


@pytest.mark.parametrize(
    ("build", "match"),
    [
        (lambda: X[5], "index 5 is out of range for axis 0 of length 5"),
        (lambda: X[-6], "index -6 is out of range for axis 0"),
        (lambda: M[:, 4], "index 4 is out of range for axis 1 of length 4"),
        (lambda: X[[0, 7]], "index 7 is out of range for axis 0"),
        (lambda: take(M, [1, -4], axis=0), "index -4 is out of range for axis 0 of length 3"),
    ],
)
def test_out_of_range_indices_are_named_at_construction(build, match):
    with pytest.raises(IndexOutOfRangeError, match=match) as info:
        build()
    assert isinstance(info.value, IndexError) and isinstance(info.value, ShapeError)
    assert info.value.axis is not None and info.value.index is not None


def test_ops_built_directly_check_their_operands():
    with pytest.raises(IndexOutOfRangeError):
        eg.get_op("slice_axis")(X, spec=(0, 3, 3, 1))
    with pytest.raises(IndexOutOfRangeError):
        eg.get_op("take")(X, eg.const(np.array([9])), axis=0)
    with pytest.raises(ShapeError, match="int64 constant"):
        eg.get_op("take")(X, eg.Symbol("i", "int64"), axis=0)
    with pytest.raises(ShapeError, match="concat"):
        concat([X, M])
    with pytest.raises(ShapeError, match="broadcast"):
        broadcast_to(M, (4, 3))
    with pytest.raises(ShapeError, match="empty"):
        AMAX(eg.Symbol("empty", shape=(0,)))
    with pytest.raises(ShapeError, match="known length"):
        eg.Symbol("v", shape=("n",))[1:]
    with pytest.raises(IndexError, match="two steps"):
        M[[0, 1], [1, 2]]
    with pytest.raises(IndexError, match="mask"):
        X[np.array([True, False, True, False, True])]
    with pytest.raises(TypeError, match="no axes"):
        eg.Symbol("s")[0]


def test_a_whole_axis_is_the_term_itself_and_access_still_reads_symbols():
    assert X[:] is X and M[...] is M and M[:, ::1] is M
    i, j = eg.Symbol("i", "int64"), eg.Symbol("j", "int64")
    assert M[i, j].op.name == "access"
    assert evaluate(M[i, j], {"m": MV, "i": 2, "j": -1}) == MV[2, -1]


def _consts(t: eg.Term) -> list:
    return [n for n in eg.core.postorder([t]) if n.op.name == "const" and n.shape]


@pytest.mark.parametrize("reduce", [SUM, MEAN, AMAX, PROD, eg.get_op("logsumexp")])
def test_gradients_of_reductions_hold_no_array_of_ones(reduce):
    v = eg.Symbol("v", shape=(1000,))
    g = grad(reduce(v * v), v)
    assert g.shape == (1000,)
    assert _consts(g) == []  # a broadcast of the upstream, not a constant array
    w = np.linspace(-1, 1, 1000)
    assert np.all(np.isfinite(evaluate(g, {"v": w})))


def test_the_gradient_of_a_product_is_exact_at_zeros():
    v = eg.Symbol("v", shape=(4,))
    g = grad(PROD(v), v)
    for point in ([2.0, 3.0, 0.5, -1.0], [2.0, 0.0, 0.5, -1.0], [0.0, 3.0, 0.0, -1.0]):
        p = np.array(point)
        want = [np.prod(np.delete(p, i)) for i in range(4)]
        np.testing.assert_array_equal(evaluate(g, {"v": p}), want)


def test_ties_of_a_maximum_share_the_upstream():
    v = eg.Symbol("v", shape=(4,))
    g = evaluate(grad(AMAX(v), v), {"v": np.array([1.0, 3.0, 3.0, 0.0])})
    np.testing.assert_array_equal(g, [0.0, 0.5, 0.5, 0.0])


def test_leading_batch_axes_evaluate_each_point():
    a = eg.Symbol("a")
    c = eg.const(np.arange(12.0).reshape(3, 4))
    points = np.linspace(-1.0, 2.0, 5)
    ca = c * a
    terms = [
        concat([ca[1:], ca[:1], c[:1]], axis=0)[[2, 0]],
        AMAX(ca, axis=1),
        MEAN(ca),
        PROD(ca[:, ::3], axis=0),
        reshape(ca, (4, 3)),
        broadcast_to(ca[0], (2, 4)),
        eg.get_op("scatter_add")(ca[[0, 0]], eg.const(np.array([1, 1])), spec=(0, 3)),
        ca[::-1, 2],
    ]
    for t in terms:
        got = evaluate(t, {"a": points[:, None, None]})  # a batch axis in front of c's two axes
        want = np.stack([evaluate(t, {"a": p}) for p in points])
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want)


# -- random programs: values against numpy, gradients against finite differences ---------------------------


def _step(draw, t: eg.Term, a: np.ndarray) -> tuple[eg.Term, np.ndarray]:
    """One random vector op applied to the term ``t`` and to its numpy value ``a``."""
    kinds = ["slice", "int", "array", "concat", "stack", "reshape", "broadcast", "reduce"]
    kind = draw(st.sampled_from(kinds if a.ndim else ["stack", "broadcast"]))
    if kind in ("slice", "int", "array"):
        axis = draw(st.integers(0, a.ndim - 1))
        n = a.shape[axis]
        lead = (slice(None),) * axis
        if kind == "slice" or n == 0:  # an empty axis has no entry to index
            bounds = st.one_of(st.none(), st.integers(-n - 1, n + 1))
            step = draw(st.one_of(st.none(), st.integers(-3, 3).filter(bool)))
            key = (*lead, slice(draw(bounds), draw(bounds), step))
        elif kind == "int":
            key = (*lead, draw(st.integers(-n, n - 1)))
        else:
            key = (*lead, draw(st.lists(st.integers(-n, n - 1), min_size=1, max_size=4)))
        return t[key], a[key]
    if kind == "concat":
        axis = draw(st.integers(0, a.ndim - 1))
        return concat([t, eg.sin(t)], axis=axis), np.concatenate([a, np.sin(a)], axis=axis)
    if kind == "stack":
        axis = draw(st.integers(0, a.ndim))
        return stack([t, t * t], axis=axis), np.stack([a, a * a], axis=axis)
    if kind == "reshape":
        return reshape(t, (-1,)), a.reshape(-1)
    if kind == "broadcast":
        return broadcast_to(t, (2, *a.shape)), np.broadcast_to(a, (2, *a.shape))
    name = draw(st.sampled_from(["amax", "amin", "prod", "mean", "sum"]))
    axes = draw(st.one_of(st.none(), st.integers(0, a.ndim - 1)))
    if 0 in a.shape:
        return t, a
    fn = {"amax": np.max, "amin": np.min, "prod": np.prod, "mean": np.mean, "sum": np.sum}[name]
    return eg.get_op(name)(t, axis=axes), fn(a, axis=axes)


@st.composite
def programs(draw):
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=2)))
    values = np.random.default_rng(draw(st.integers(0, 2**32 - 1))).uniform(-2.0, 2.0, shape)
    v = eg.Symbol("v", shape=shape)
    t, a = v, values
    for _ in range(draw(st.integers(1, 3))):
        t, a = _step(draw, t, a)
    return v, values, t, a


def _fd(f: eg.Term, v: eg.Term, values: np.ndarray, h: float = 1e-6) -> np.ndarray:
    out = np.zeros_like(values)
    for index in np.ndindex(values.shape):
        up, down = values.copy(), values.copy()
        up[index] += h
        down[index] -= h
        out[index] = (evaluate(f, {v: up}) - evaluate(f, {v: down})) / (2 * h)
    return out


@settings(max_examples=60, deadline=None)
@given(programs())
def test_random_programs_evaluate_as_numpy_and_differentiate_as_finite_differences(program):
    v, values, t, a = program
    got = evaluate(t, {v: values})
    assert t.shape == np.shape(a)
    np.testing.assert_allclose(got, a, rtol=1e-13, atol=1e-13)
    f = SUM(eg.sin(t) * t) if t.ndim else eg.sin(t) * t
    g = grad(f, v)
    assert g.shape == v.shape
    assert not [c for c in _consts(g) if c.dtype != "int64"]  # vector-shaped: no constant float arrays
    np.testing.assert_allclose(evaluate(g, {v: values}), _fd(f, v, values), rtol=1e-5, atol=1e-6)


@settings(max_examples=25, deadline=None)
@given(programs())
def test_second_derivatives_are_the_jacobian_of_the_gradient(program):
    v, values, t, _ = program
    f = SUM(eg.sin(t) * t) if t.ndim else eg.sin(t) * t
    g = grad(f, v)
    u = np.random.default_rng(1).normal(size=v.shape)
    # grad <grad f, u> = H u (H symmetric), against central differences of the gradient along u
    hu = grad(SUM(g * eg.const(u)), v)
    h = 1e-6
    fd = (evaluate(g, {v: values + h * u}) - evaluate(g, {v: values - h * u})) / (2 * h)
    np.testing.assert_allclose(evaluate(hu, {v: values}), fd, rtol=1e-4, atol=1e-5)


def test_jacobian_of_a_vector_function():
    v = eg.Symbol("v", shape=(4,))
    (row,) = eg.jacobian([SUM(v[1:] * v[:-1])], [v])
    p = np.array([1.0, 2.0, -1.0, 0.5])
    np.testing.assert_allclose(evaluate(row[0], {"v": p}), [2.0, 0.0, 2.5, -1.0])


def test_the_c_backend_compiles_vector_ops_of_constant_shape_and_refuses_the_rest_by_name():
    s = eg.Symbol("s")
    with pytest.raises(CompileError, match="amax"):  # a scalar program: no scalar form to take
        compile_terms(AMAX(s), [s], backend="c")
    with pytest.raises(CompileError, match="constant length"):
        compile_terms(SUM(eg.Symbol("v", shape=("n",))), [eg.Symbol("v", shape=("n",))], backend="c")
    t = SUM(X[1:4] * X[[0, 0, 2]]) + MEAN(concat([X, X[::-1]]))
    for backend in ("numpy", "c"):
        assert compile_terms(t, [X], backend=backend)(XV) == pytest.approx(evaluate(t, ENV), rel=1e-15)


def test_negative_axes_built_directly_read_the_trailing_axes_of_batched_values():
    a = eg.Symbol("a")
    c = eg.const(np.arange(12.0).reshape(3, 4)) * a
    points = np.array([1.0, -2.0])
    terms = [
        eg.get_op("slice_axis")(c, spec=(-1, 3, 2, -2)),
        eg.get_op("take")(c, eg.const(np.array([0, 2])), axis=-1),
        eg.get_op("concat")(c, c, axis=-1),
    ]
    for t in terms:
        want = np.stack([evaluate(t, {"a": p}) for p in points])
        np.testing.assert_array_equal(evaluate(t, {"a": points[:, None, None]}), want)
        assert t.shape == want.shape[1:]


def test_vector_gradients_do_not_grow_with_the_length():
    # sum((v[1:] - v[:-1])**2) + amax(v): the same few nodes whatever the length of v
    sizes = []
    for n in (10, 100_000):
        v = eg.Symbol("v", shape=(n,))
        f = SUM((v[1:] - v[:-1]) ** 2) + AMAX(v)
        g = grad(f, v)
        sizes.append(g.size)
        p = np.linspace(-1.0, 1.0, n) ** 3
        want = np.zeros(n)
        d = 2 * (p[1:] - p[:-1])
        want[1:] += d
        want[:-1] -= d
        want[np.argmax(p)] += 1.0
        np.testing.assert_allclose(evaluate(g, {"v": p}), want, rtol=1e-12, atol=1e-15)
    assert sizes[0] == sizes[1] < 40


def test_equal_lengths_above_256_agree_however_they_were_made():
    # dims_equal compares ints by value: 1000 parsed twice is two objects
    n, m = int("1000"), int("1000")
    a, b = eg.Symbol("a", shape=(n,)), eg.Symbol("b", shape=(m,))
    assert eg.get_op("dot")(a, b).shape == ()
    assert concat([reshape(a, (1, n)), reshape(b, (1, m))]).shape == (2, 1000)
    with pytest.raises(ShapeError, match="differ"):
        eg.get_op("dot")(a, eg.Symbol("c", shape=(999,)))
