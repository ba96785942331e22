"""The converters on float32 terms and on the stable ops (log1p, expm1, softplus, log_sigmoid, logaddexp)."""

from __future__ import annotations

import numpy as np
import pytest

import exprgraph as eg
from exprgraph import Symbol
from exprgraph.eval import evaluate
from exprgraph.simplify import simplify

x, y = Symbol("x"), Symbol("y")
a, c = Symbol("a", "float32"), Symbol("c", "float32")
b = Symbol("b", "bool")

#: the stable ops at the inputs where their naive forms fail (overflow, log(0), 1 + x rounding x away)
STABLE = [eg.log1p(x), eg.expm1(x), eg.softplus(x), eg.log_sigmoid(x), eg.logaddexp(x, y)]
EDGES = np.array([1e-20, -3e-17, 800.0, -800.0, 0.5, -0.0, np.inf, -np.inf, np.nan, -1.0, 40.0, -40.0])
#: float32 terms mixing the dtype rules: weak Python numbers, bools, the stable ops
SINGLE = [
    a * 0.1 + 1,
    eg.sin(a) / (c + b),
    eg.log1p(a) + eg.expm1(c) - eg.softplus(a) + eg.log_sigmoid(c) * eg.logaddexp(a, c),
    eg.where(a < c, a**2, c * a) + eg.maximum(a, c, 0.5),
]
VALUES = np.array([0.5, 1e-9, -1e-9, 95.0, -95.0, 2.5, -0.0, np.inf, -np.inf, np.nan, -3.0, 7.0], np.float32)


def _env(term: eg.Term) -> dict:
    env = {}
    for s in term.free_symbols:
        if s.dtype == "bool":
            env[s.name] = np.arange(len(VALUES)) % 2 == 0
        elif s.dtype == "float32":
            env[s.name] = VALUES if s.name == "a" else VALUES[::-1].copy()
        else:
            env[s.name] = EDGES if s.name == "x" else EDGES[::-1] * 0.75
    return env


def _agree(got: object, want: object, rtol: float) -> None:
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=0, equal_nan=True)


def test_onnx_exports_float32_and_the_stable_ops() -> None:
    onnx = pytest.importorskip("onnx")
    from onnx.reference import ReferenceEvaluator

    from exprgraph.interop import to_onnx

    for term in STABLE + SINGLE:
        model = to_onnx(term)
        onnx.checker.check_model(model, full_check=True)
        env = _env(term)
        with np.errstate(all="ignore"):
            (got,) = ReferenceEvaluator(model).run(None, {k: np.asarray(v) for k, v in env.items()})
            want = evaluate(term, env)
        # softplus, log_sigmoid and logaddexp exactly; log1p and expm1 by Goldberg's and Kahan's formulas
        _agree(got, want, 2e-16 if want.dtype == np.float64 else 1e-6)
    assert to_onnx(a + c).graph.input[0].type.tensor_type.elem_type == onnx.TensorProto.FLOAT


def test_jax_computes_float32_and_the_stable_ops() -> None:
    jax = pytest.importorskip("jax")
    from exprgraph.interop import to_jax

    before = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)  # float64 like evaluate; float32 terms stay float32
    try:
        for term in STABLE + SINGLE:
            fn = to_jax(term)
            env = _env(term)
            got = np.asarray(jax.jit(fn)(*(env[s.name] for s in fn.inputs)))
            with np.errstate(all="ignore"):
                want = evaluate(term, env)
            _agree(got, want, 1e-15 if want.dtype == np.float64 else 1e-6)
        # gradients through the stable ops stay finite where the naive forms overflow
        assert float(jax.grad(to_jax(eg.softplus(x)))(1000.0)) == 1.0
        assert abs(float(jax.grad(to_jax(eg.logaddexp(x, y)), argnums=0)(1000.0, 1000.0)) - 0.5) < 1e-12
    finally:
        jax.config.update("jax_enable_x64", before)


def test_pytensor_computes_float32_and_the_stable_ops() -> None:
    pytensor = pytest.importorskip("pytensor")
    from exprgraph.interop import from_pytensor, to_pytensor

    for term in STABLE + SINGLE:
        inputs = sorted(term.free_symbols, key=lambda s: s.name)
        out, *variables = to_pytensor([term, *inputs])
        assert out.dtype == term.dtype
        fn = pytensor.function(variables, out)
        env = _env(term)
        with np.errstate(all="ignore"):
            # our scalar symbols are PyTensor scalars: one point at a time
            got = np.array([fn(*(env[s.name][k] for s in inputs)) for k in range(len(VALUES))])
            want = evaluate(term, env)
            back = evaluate(from_pytensor(out), env)
        _agree(got, want, 1e-15 if want.dtype == np.float64 else 1e-6)
        _agree(back, want, 1e-15 if want.dtype == np.float64 else 1e-6)


def test_sympy_round_trips_the_stable_ops() -> None:
    sp = pytest.importorskip("sympy")
    from sympy.codegen.cfunctions import expm1, log1p

    from exprgraph.interop import from_sympy, to_sympy

    s = sp.Symbol("x", real=True)
    assert to_sympy(eg.log1p(x)) == log1p(s) and to_sympy(eg.expm1(x)) == expm1(s)
    assert from_sympy(log1p(s)) is eg.log1p(x) and from_sympy(expm1(s)) is eg.expm1(x)
    for term in STABLE:
        back = from_sympy(to_sympy(term))
        env = {"x": np.array([0.5, -2.0, 3.0]), "y": np.array([1.0, 0.25, -4.0])}
        np.testing.assert_allclose(evaluate(back, env), evaluate(term, env), rtol=1e-14)
        # what SymPy writes naively, simplify makes stable again
        assert simplify(back) is simplify(term)
    # a float32 constant is its exact value; float32 symbols are real symbols
    assert to_sympy(a * 0.1) == sp.Float(float(np.float32(0.1))) * sp.Symbol("a", real=True)
