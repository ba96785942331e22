"""The C backend: agreement with evaluate (nan/inf, ints, bools), broadcasting, the disk cache, errors."""

from __future__ import annotations

import os
import weakref

import numpy as np
import pytest
from eg_strategies import SYMBOLS, X, Y, Z, assert_close_conditioned, assert_same, random_terms, special_points

import exprgraph as eg
from exprgraph.compile import CompileError, CompilerNotFoundError, cbuild
from exprgraph.compile import compile as eg_compile
from exprgraph.compile.c_backend import c_literal
from exprgraph.errors import EvaluationError

x, y, z = X, Y, Z

pytestmark = pytest.mark.skipif(not any(cbuild.shutil.which(c) for c in ("cc", "gcc", "clang")), reason="no C compiler")


@pytest.fixture(autouse=True)
def private_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EXPRGRAPH_CACHE", str(tmp_path_factory.getbasetemp() / "eg-cache"))


def test_random_terms_agree_with_evaluate_including_nan_and_inf() -> None:
    outs = random_terms(120, seed=5)
    fn = eg_compile(outs, SYMBOLS, backend="c")
    values = special_points(200, seed=1)
    got = fn(*values)
    env = dict(zip(SYMBOLS, values, strict=True))
    want = eg.evaluate(outs, env)
    for t, a, b in zip(outs, got, want, strict=True):
        try:
            assert_close_conditioned(t, a, b, env)
        except AssertionError as exc:
            raise AssertionError(f"{t}: {exc}") from None


def test_floor_division_and_modulo_special_values() -> None:
    specials = [0.0, -0.0, 1.0, -1.0, 2.5, -2.5, 7.0, -7.0, 1e300, -1e300, np.inf, -np.inf, np.nan, 3e-320]
    a, b = np.meshgrid(specials, specials)
    outs = [x // y, x % y]
    fn = eg_compile(outs, [x, y], backend="c")
    for got, want in zip(fn(a.ravel(), b.ravel()), eg.evaluate(outs, {x: a.ravel(), y: b.ravel()}), strict=True):
        assert_same(got, want)
        assert np.array_equal(np.signbit(got), np.signbit(want))


def test_int_and_bool_semantics() -> None:
    i, j = eg.symbols("i j", dtype="int64")
    b = eg.Symbol("b", "bool")
    outs = [
        i // j, i % j, i**2, -(i * j), abs(i), (i < j) & b, b + b, eg.maximum(i, j, b), eg.minimum(i, b),
        i / j, eg.where(b, i, j), i + 2**62, eg.logical_not(b) | (i >= j), i**abs(j),
    ]  # fmt: skip
    fn = eg_compile(outs, [i, j, b], backend="c")
    big = 2**63 - 1
    iv = np.array([7, -7, 3, 0, -9, big, -big - 1, -big - 1, 5])
    jv = np.array([2, 2, 0, -3, -2, 4, -1, 1, 3])
    bv = np.array([True, False, True, True, False, True, False, True, False])
    with np.errstate(all="ignore"):
        want = eg.evaluate(outs, {i: iv, j: jv, b: bv})
    for t, got, w in zip(outs, fn(iv, jv, bv), want, strict=True):
        assert got.dtype == w.dtype, t
        np.testing.assert_array_equal(got, w, err_msg=str(t))
    with pytest.raises(EvaluationError, match="negative"):
        eg_compile(i**j, [i, j], backend="c")(iv, -jv)


def test_broadcasting_and_output_shapes() -> None:
    outs = [x * y + z, x + 1.0, eg.sin(z), eg.const(2.0) * 3.0]
    fn = eg_compile(outs, [x, y, z], backend="c")
    xv, yv, zv = np.array([[1.0], [2.0]]), np.array([0.5, -0.5, 3.0]), 2.0
    got = fn(xv, yv, zv)
    want = eg.evaluate(outs, {x: xv, y: yv, z: zv})
    for a, b in zip(got, want, strict=True):
        assert_same(a, b)
    assert got[1].shape == (2, 1) and np.ndim(got[2]) == 0
    # scalars only, non-contiguous input, empty input
    assert_same(fn(1.0, 2.0, 3.0)[0], 5.0)
    col = np.arange(12.0).reshape(3, 4)[:, 1]
    assert_same(fn(col, 1.0, 0.0)[0], col)
    assert fn(np.zeros(0), 1.0, 0.0)[0].shape == (0,)


def test_source_cache_and_reuse(monkeypatch: pytest.MonkeyPatch) -> None:
    f = eg.exp(x) * y - eg.sigmoid(x / y)
    fn = eg_compile(f, [x, y], backend="c")
    assert "eg_run" in fn.source and "eg_packed" in fn.source and "exp(" in fn.source
    files = sorted(os.listdir(cbuild.cache_dir()))
    assert any(n.endswith(".so") for n in files) and any(n.endswith(".sha256") for n in files)
    assert not any(n.endswith(".c") for n in files)  # sources live in a build directory removed after the build
    # a new process (simulated: nothing loaded) finds the library on disk and does not compile again
    monkeypatch.setattr(cbuild, "_loaded", weakref.WeakValueDictionary())
    monkeypatch.setattr(cbuild, "_compile", lambda *a, **k: pytest.fail("compiled again"))
    again = eg_compile(f, [x, y], backend="c")
    assert float(again(0.5, 2.0)) == pytest.approx(float(eg.evaluate(f, {x: 0.5, y: 2.0})), rel=1e-13)


def test_no_compiler_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CC", "/nonexistent/cc-for-test")
    monkeypatch.setattr(cbuild, "_chosen", {})
    with pytest.raises(CompilerNotFoundError, match="CC"):
        eg_compile(x * 2.1234567, [x], backend="c")
    monkeypatch.delenv("CC")
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(CompilerNotFoundError, match="no C compiler"):
        eg_compile(x * 2.1234567, [x], backend="c")


def test_tensor_terms_are_refused() -> None:
    a = eg.Symbol("A", shape=("m", "n"))  # constant shapes compile (scalarised); symbolic ones are refused
    with pytest.raises(CompileError, match="constant length"):
        eg_compile(eg.sum(a), [a], backend="c")


def test_literals_are_exact() -> None:
    assert c_literal(0.1, "float64") == f"({(0.1).hex()})"
    # typed like the value, so type-generic helpers pick the double version (x**inf in double, not float)
    assert c_literal(float("-inf"), "float64") == "(-(double)INFINITY)"
    assert c_literal(float("nan"), "float64") == "((double)NAN)"
    assert c_literal(float("-inf"), "float32") == "(-INFINITY)"
    assert c_literal(0.5, "float32") == "(0x1.0000000000000p-1f)"
    assert c_literal(-(2**63), "int64").startswith("(-INT64_C")
    assert c_literal(True, "bool") == "1"
    weird = eg.Symbol("system")
    fn = eg_compile(weird * 0.1, [weird], backend="c")
    assert "system" not in fn.source.split("eg_part0")[1]
    assert float(fn(3.0)) == 3.0 * 0.1
