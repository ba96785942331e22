"""Gradients through dot, matmul, sum, transpose and broadcasting, against finite differences."""

from __future__ import annotations

import numpy as np
import pytest

import exprgraph as eg
from exprgraph.diff import check_grad, grad
from exprgraph.errors import ShapeError

A = eg.Symbol("A", shape=(3, 4))
B = eg.Symbol("B", shape=(4, 2))
C = eg.Symbol("C", shape=(5, 3, 4))
D = eg.Symbol("D", shape=(5, 4, 2))
v = eg.Symbol("v", shape=(4,))
w = eg.Symbol("w", shape=(3,))
r = eg.Symbol("r", shape=(1, 4))
c = eg.Symbol("c", shape=(3, 1))
x, y = eg.symbols("x y")

CASES = {
    "matmul_2d": lambda: eg.sum(eg.sin(A @ B)),
    "dot_2d": lambda: eg.sum(eg.dot(A, B) ** 2),
    "dot_mat_vec": lambda: eg.sum(eg.exp(eg.dot(A, v)) * w),
    "dot_vec_mat": lambda: eg.sum(eg.dot(w, A) * v),
    "dot_vec_vec": lambda: eg.dot(v, v) * x,
    "dot_scalar": lambda: eg.sum(eg.dot(x, A)),
    "matmul_mat_vec": lambda: eg.sum(eg.tanh(A @ v)),
    "matmul_vec_mat": lambda: eg.sum(eg.sin(w @ A)),
    "matmul_vec_vec": lambda: v @ v,
    "matmul_batch": lambda: eg.sum(eg.sin(C @ D)),
    "matmul_batch_broadcast": lambda: eg.sum(eg.sin(C @ B)),
    "matmul_batch_vec": lambda: eg.sum(eg.sin(C @ v)),
    "matmul_vec_batch": lambda: eg.sum(eg.cos(w @ C)),
    "broadcast": lambda: eg.sum(A * r + c * x),
    "broadcast_scalar": lambda: eg.sum(eg.sin(A * x + y)),
    "sum_axis": lambda: eg.sum(eg.sin(eg.sum(A, axis=0)) * v),
    "sum_axes": lambda: eg.sum(eg.sum(C, axis=(0, 2)) * w),
    "sum_negative_axis": lambda: eg.sum(eg.sum(C, axis=-1) ** 2),
    "transpose": lambda: eg.sum(eg.transpose(A) @ w * v),
    "transpose_axes": lambda: eg.sum(eg.sin(eg.transpose(C, axes=(2, 0, 1))) * w),
    "where_max": lambda: eg.sum(eg.where(A > 0, A * x, eg.maximum(A, r, y))),
    "abs_sqrt": lambda: eg.sum(abs(A) @ eg.sqrt(abs(B) + 0.5)),
}


def _env(seed: int = 1) -> dict:
    rng = np.random.default_rng(seed)
    env = {s: rng.standard_normal(s.shape) for s in (A, B, C, D, v, w, r, c)}
    env.update({x: 0.7, y: -0.3})
    return env


@pytest.mark.parametrize("name", sorted(CASES))
def test_tensor_gradient(name: str) -> None:
    f = CASES[name]()
    env = _env()
    result = check_grad(f, env, seed=3)
    assert result.ok, (name, result)
    for s, d in grad(f).items():
        assert d.shape == s.shape


def test_gradient_of_sum_over_a_symbolic_dimension() -> None:
    u = eg.Symbol("u", shape=("n",))
    d = grad(eg.sum(u * u), u)
    assert d.shape == u.shape
    np.testing.assert_allclose(eg.evaluate(d, {u: np.array([1.0, 2.0, 3.0])}), [2.0, 4.0, 6.0])
    d = grad(eg.sum(u) * x, u)
    np.testing.assert_allclose(eg.evaluate(d, {u: np.zeros(4), x: 3.0}), [3.0] * 4)


def test_zero_gradient_has_the_variable_shape() -> None:
    assert eg.evaluate(grad(eg.sum(A), B), {}).shape == (4, 2)
    u = eg.Symbol("u", shape=("n",))
    assert grad(x * 2.0, u).shape == u.shape


def test_unknowable_broadcast_raises() -> None:
    p = eg.Symbol("p", shape=("m",))
    q = eg.Symbol("q", shape=("k",))
    with pytest.raises(ShapeError, match="unknown whether"):
        grad(eg.sum(p + q), p)
