"""float32 terms compiled: single precision values and math in C and LLVM, float32 numpy code, packed float64 rows."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from eg_strategies import compiled_backends

import exprgraph as eg
from exprgraph import Symbol
from exprgraph.compile import compile as eg_compile
from exprgraph.eval import evaluate

BACKENDS = compiled_backends()
x, y = Symbol("x", "float32"), Symbol("y", "float32")
F = eg.sin(x * y) * eg.exp(-x) / (1 + x**2) + eg.sqrt(y) + eg.tanh(x) - eg.log(y) + eg.sigmoid(x) + x // y
SPECIAL = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 1e-45, 3.4e38, -1.5, 0.5], np.float32)


def _close(got: np.ndarray, want: np.ndarray, tol: float) -> bool:
    """Equal nan/inf/zero signs; finite values within ``tol``, relative to the value (or 1 near 0).

    float32 tolerances: the libm functions of the paths (numpy's, glibc's scalar and vector ones)
    round each in their own way, by a few units in the last place, and a composite term adds those.
    """
    got, want = np.asarray(got), np.asarray(want)
    same = (np.isnan(got) & np.isnan(want)) | ((got == want) & (np.signbit(got) == np.signbit(want)))
    with np.errstate(invalid="ignore"):
        gap = np.abs(got.astype(np.float64) - want.astype(np.float64))
        near = np.isfinite(want) & (gap <= tol * np.maximum(1.0, np.abs(want.astype(np.float64))))
    return bool(np.all(same | near))


@pytest.mark.parametrize("backend", BACKENDS)
def test_float32_terms_compile_to_float32(backend: str) -> None:
    rng = np.random.default_rng(0)
    xs = np.concatenate([rng.uniform(-4, 4, 500), SPECIAL]).astype(np.float32)
    ys = np.concatenate([rng.uniform(0.1, 4, 500), SPECIAL[::-1]]).astype(np.float32)
    outputs = [F, x * y, -x, eg.maximum(x, y), eg.where(x > 0, x, y), x < y]
    fn = eg_compile(outputs, [x, y], backend=backend)
    with np.errstate(all="ignore"):
        want = evaluate(outputs, {x: xs, y: ys})
    got = fn(xs, ys)
    for k, (term, g, w) in enumerate(zip(outputs, got, want, strict=True)):
        assert g.dtype == w.dtype == np.dtype(term.dtype)
        # the sum of ten functions within 1e-5; the single exact operations exactly
        assert _close(g, w, 1e-5 if k == 0 else 0.0), (term, g[np.flatnonzero(~np.isclose(g, w, equal_nan=True))[:4]])
    # every input is cast to float32 first: a float64 value is rounded as numpy rounds it
    assert fn(np.float64(0.1), 1.0)[1] == np.float32(0.1)


@pytest.mark.parametrize("backend", BACKENDS)
def test_packed_calls_keep_float64_rows(backend: str) -> None:
    # the packed contract is unchanged: rows of float64 in, rows of float64 out, whatever the term dtypes
    z = Symbol("z")
    fn = eg_compile([x * 3, x + z, x], [x, z], backend=backend, packed=True)
    out = fn(np.array([[0.1, 0.1], [2.0, -1.0]]))
    assert out.dtype == np.float64 and out.shape == (2, 3)
    x32 = float(np.float32(0.1))
    assert out[0].tolist() == [float(np.float32(x32) * np.float32(3)), x32 + 0.1, x32]
    assert out[1].tolist() == [6.0, 1.0, 2.0]


def _c_only() -> None:
    if "c" not in BACKENDS:
        pytest.skip("no C compiler")


def test_c_computes_in_single_precision() -> None:
    _c_only()
    fn = eg_compile(F, [x, y], backend="c")
    src = fn.source
    assert "const float v" in src and "wf[b]" in src and "#include <tgmath.h>" in src
    assert "(0x1.0000000000000p+0f)" in src  # the weak 1 of 1 + x**2 is a float literal
    assert "#define EG_B 16" in src  # all values float: twice the lanes of doubles
    # a float64 program is written as before: no float workspace, no type-generic math
    plain = eg_compile(eg.sin(Symbol("a")) * 2.0, [Symbol("a")], backend="c").source
    assert "tgmath" not in plain and "wf[" not in plain and "#define EG_B 8" in plain
    mixed = eg_compile(x * Symbol("a"), [x, Symbol("a")], backend="c").source
    assert "wf[b]" in mixed and "#define EG_B 8" in mixed


def test_c_double_power_of_an_infinite_constant() -> None:
    # INFINITY is a float literal in C: typed as a double, the double power is chosen (it was powf)
    _c_only()
    a = Symbol("a")
    term = a ** eg.const(float("inf"))
    values = np.array([1.0 + 2.0**-30, 0.99999999, 0.5])
    got = eg_compile(term, [a], backend="c")(values)
    assert got.tolist() == evaluate(term, {a: values}).tolist() == [np.inf, 0.0, 0.0]


@pytest.mark.parametrize("backend", BACKENDS)
def test_float32_functions_pickle(backend: str) -> None:
    fn = eg_compile([F, x + y], [x, y], backend=backend)
    again = pickle.loads(pickle.dumps(fn))
    a, b = np.float32([0.5, 1.5]), np.float32([2.0, 0.25])
    for g, w in zip(again(a, b), fn(a, b), strict=True):
        assert g.dtype == np.float32 and np.array_equal(g, w)
