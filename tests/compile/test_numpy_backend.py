"""The numpy backend agrees with evaluate; in-place reuse never touches inputs; the source is ours."""

from __future__ import annotations

import numpy as np
import pytest
from eg_strategies import SYMBOLS, X, Y, Z, assert_same, special_points, terms
from hypothesis import given, settings

import exprgraph as eg
from exprgraph.compile import CompileError
from exprgraph.compile import compile as eg_compile
from exprgraph.errors import EvaluationError

x, y, z = X, Y, Z


@settings(max_examples=60, deadline=None)
@given(f=terms(smooth=False, max_depth=4), g=terms(smooth=False, max_depth=3))
def test_agrees_with_evaluate_on_special_values(f: eg.Term, g: eg.Term) -> None:
    fn = eg_compile([f, g, f * g], SYMBOLS)
    values = special_points()
    env = dict(zip(SYMBOLS, values, strict=True))
    with np.errstate(all="raise"):  # the compiled code must not warn either
        got = fn(*values)
    for a, b in zip(got, eg.evaluate([f, g, f * g], env), strict=True):
        assert_same(a, b)
    # one point (scalars: the generic, allocating version) and broadcasting shapes
    for point in ([0.5, -1.0, 2.0], [np.array([[1.0], [2.0]]), np.array([0.5, -0.5, 3.0]), 1.5]):
        env = dict(zip(SYMBOLS, point, strict=True))
        for a, b in zip(fn(*point), eg.evaluate([f, g, f * g], env), strict=True):
            assert_same(a, b)


def test_inputs_are_never_overwritten() -> None:
    f = eg.exp(eg.sin(x * y) + x) * 2.0 + y
    fn = eg_compile(f, [x, y])
    assert "out=" in fn.source
    a, b = np.linspace(0, 1, 100), np.linspace(1, 2, 100)
    a0, b0 = a.copy(), b.copy()
    out = fn(a, b)
    assert np.array_equal(a, a0) and np.array_equal(b, b0)
    assert out is not a and out is not b
    np.testing.assert_allclose(out, eg.evaluate(f, {x: a0, y: b0}), rtol=1e-15)
    # the same array passed twice
    np.testing.assert_allclose(fn(a, a), eg.evaluate(f, {x: a0, y: a0}), rtol=1e-15)


def test_shared_nodes_are_computed_once() -> None:
    u = eg.sin(x * y)
    fn = eg_compile([u + u * u, u * 2.0], [x, y])
    assert fn.source.count("np.sin(") == 2  # once in each version of the function
    assert fn.source.count("np.multiply(a0, a1") == 2


def test_int_and_bool_dtypes() -> None:
    i, j = eg.symbols("i j", dtype="int64")
    b = eg.Symbol("b", "bool")
    outs = [
        i // j,
        i % j,
        i**2,
        -(i * j),
        abs(i - j),
        (i < j) & b,
        b + b,
        eg.maximum(i, j, b),
        i / j,
        eg.where(b, i, j),
    ]
    fn = eg_compile(outs, [i, j, b])
    iv = np.array([7, -7, 3, 0, -9, 2**62])
    jv = np.array([2, 2, 0, -3, -2, 4])
    bv = np.array([True, False, True, True, False, True])
    for a, c in zip(fn(iv, jv, bv), eg.evaluate(outs, {i: iv, j: jv, b: bv}), strict=True):
        assert_same(a, c)
    with pytest.raises(EvaluationError, match="negative"):
        eg_compile(i**j, [i, j])(np.array([2, 3]), np.array([1, -1]))


def test_tensors() -> None:
    a = eg.Symbol("A", shape=("m", "n"))
    v = eg.Symbol("v", shape=("n",))
    outs = [a @ v, eg.sum(a, axis=0), eg.transpose(a) * 2.0, eg.sum(eg.sin(a)), eg.dot(v, v)]
    fn = eg_compile(outs, [a, v])
    av, vv = np.arange(6.0).reshape(2, 3), np.array([1.0, -1.0, 0.5])
    for got, want in zip(fn(av, vv), eg.evaluate(outs, {a: av, v: vv}), strict=True):
        assert_same(got, want)
    with pytest.raises(EvaluationError):
        fn(av, np.ones(4))


def test_constant_subterms_are_folded() -> None:
    f = x * (eg.sin(eg.const(0.5)) + 2.0)
    fn = eg_compile(f, [x])
    assert "sin" not in fn.source
    assert float(fn(2.0)) == float(eg.evaluate(f, {x: 2.0}))
    assert float(eg_compile(eg.const(2.0) * 3.0, [])()) == 6.0


def test_signature_checks() -> None:
    with pytest.raises(CompileError, match="not among the inputs"):
        eg_compile(x * y, [x])
    with pytest.raises(TypeError):
        eg_compile(x * y, [x, x * y])
    with pytest.raises(CompileError, match="twice"):
        eg_compile(x, [x, x])
    fn = eg_compile(x * 2.0, [x, y])  # unused inputs are allowed
    assert float(fn(1.0, 5.0)) == 2.0
    with pytest.raises(TypeError, match="takes 2 inputs"):
        fn(1.0)
    with pytest.raises(ValueError, match="backend"):
        eg_compile(x, [x], backend="fortran")


def test_generated_names_only() -> None:
    weird = eg.Symbol("import_os")
    fn = eg_compile(eg.sin(weird) + 1.0, [weird])
    assert "import_os" not in fn.source
    assert "def generic(a0)" in fn.source
    assert repr(fn) == "<CompiledFunction numpy (import_os) -> 1 output(s)>"


def test_long_chain() -> None:
    f = x
    for i in range(5000):
        f = eg.tanh(f) + (y if i % 2 else 0.5)
    fn = eg_compile(f, [x, y])
    xs = np.linspace(-1, 1, 11)
    np.testing.assert_allclose(fn(xs, 0.25), eg.evaluate(f, {x: xs, y: 0.25}), rtol=1e-12)


def test_blocked_evaluation_of_large_arrays() -> None:
    from exprgraph.compile.numpy_backend import CHUNK

    outs = [eg.exp(eg.sin(x * y) + x) * 2.0 + y, x, eg.const(3.0) * 2.0, x > y, (x * y) // 0.25]
    fn = eg_compile(outs, [x, y, z])
    rng = np.random.default_rng(0)
    n = 2 * CHUNK + 123  # several blocks and a partial one
    a = rng.uniform(-2, 2, (n, 2))
    b = rng.uniform(-2, 2, (n, 2))[:, ::-1]  # not contiguous
    a[5, 1], b[7, 0] = np.nan, np.inf
    got = fn(a, b, 0.0)
    want = eg.evaluate(outs, {x: a, y: b})
    for g, w in zip(got, want, strict=True):
        assert_same(g, w)
    assert got[0].shape == (n, 2) and np.ndim(got[2]) == 0
