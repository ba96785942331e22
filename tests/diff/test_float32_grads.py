"""Gradients of float32 terms stay float32 (no float64 node creeps in) and agree with float64 ones."""

from __future__ import annotations

import numpy as np
import pytest

import exprgraph as eg
from exprgraph import Symbol
from exprgraph.core import postorder
from exprgraph.diff import grad, hessian, jvp
from exprgraph.eval import evaluate


def _functions(x: eg.Term, y: eg.Term) -> list[eg.Term]:
    """The same formulas whatever the dtype of x and y (Python numbers are weak next to float32)."""
    return [
        x * y + x / y - y,
        x**3 + y**0.5 + x**y,
        eg.exp(-x) * eg.sin(x * y) + eg.cos(y) + eg.tan(x / 4),
        eg.log(y) + eg.sqrt(y) + eg.tanh(x) + eg.sigmoid(x - y),
        abs(x) + eg.maximum(x, y, 0.5) + eg.minimum(x, y) + eg.where(x > y, x * y, y**2) + x % y,
        -x * (1 + x**2) ** -1,
        eg.log1p(y) + eg.expm1(x / 4) + eg.softplus(x) + eg.log_sigmoid(y - x) + eg.logaddexp(x, y),
    ]


X32, Y32 = Symbol("x", "float32"), Symbol("y", "float32")
X64, Y64 = Symbol("x"), Symbol("y")
POINTS = {"x": np.array([-1.3, 0.4, 2.2], np.float32), "y": np.array([0.7, 1.9, 1.1], np.float32)}


@pytest.mark.parametrize("k", range(len(_functions(X32, Y32))))
def test_gradients_of_float32_terms_are_float32(k: int) -> None:
    f32 = _functions(X32, Y32)[k]
    f64 = _functions(X64, Y64)[k]
    assert f32.dtype == "float32" and f64.dtype == "float64"
    g32 = grad(f32, [X32, Y32])
    assert all(g.dtype == "float32" for g in g32)
    assert "float64" not in {t.dtype for t in postorder(g32)}  # every node computes in float32
    got = evaluate(g32, POINTS)
    want = evaluate(grad(f64, [X64, Y64]), {k: v.astype(np.float64) for k, v in POINTS.items()})
    for g, w in zip(got, want, strict=True):
        assert g.dtype == np.float32
        np.testing.assert_allclose(g, w, rtol=2e-5, atol=1e-6)


def test_second_order_and_forward_mode_stay_float32() -> None:
    f = eg.sin(X32 * Y32) + X32**2 * eg.sigmoid(Y32)
    h = hessian(f, [X32, Y32])
    assert {t.dtype for row in h for t in row} == {"float32"}
    tangent = Symbol("t", "float32")
    (value,) = jvp([f], [X32, Y32], [tangent, tangent * 2])
    assert value.dtype == "float32"
    assert "float64" not in {t.dtype for t in postorder(value)}
    # a float32 output's gradient seed is a float32 1.0; zeros for unused variables are float32 too
    assert grad(X32 * 2, Symbol("u", "float32")).dtype == "float32"
