"""Sparse Jacobians and Hessians with vector variables: each entry a column, the pattern found on entries."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import exprgraph as eg
from exprgraph import Symbol, evaluate, get_op, symbols
from exprgraph.compile import compile as eg_compile
from exprgraph.core.ops_index import concat, reshape
from exprgraph.core.ops_sort import topk
from exprgraph.diff import hessian, jacobian, sparse_hessian, sparse_jacobian
from exprgraph.errors import DifferentiationError

SUM = get_op("sum")
N = 6
x = Symbol("x", shape=(N,))
p = Symbol("p")


def _model(v: eg.Term, scale: eg.Term) -> eg.Term:
    # sum(sin(x[1:]*x[:-1]) + exp(x[1:])/(1+x[1:]**2)) * p: a banded Hessian plus the p row and column
    return SUM(eg.sin(v[1:] * v[:-1]) + eg.exp(v[1:]) / (1 + v[1:] ** 2)) * scale


def _scalar_model(xs: list[eg.Term], scale: eg.Term) -> eg.Term:
    # the same model written with N scalar symbols, as a user without vectors writes it
    return (
        sum((eg.sin(xs[i + 1] * xs[i]) + eg.exp(xs[i + 1]) / (1 + xs[i + 1] ** 2) for i in range(N - 1)), eg.const(0.0))
        * scale
    )


def _numbers(m, env):
    return m.to_dense(evaluate(m.values, env))


points = st.lists(st.floats(-1.5, 1.5), min_size=N + 1, max_size=N + 1).map(np.array)


@settings(max_examples=25, deadline=None)
@given(points)
def test_the_hessian_of_a_vector_model_matches_finite_differences(values: np.ndarray) -> None:
    H = sparse_hessian(_model(x, p), [x, p])
    assert H.shape == (N + 1, N + 1)
    got = _numbers(H, {"x": values[:N], "p": values[N]})
    grad = eg.grad(_model(x, p), [x, p])
    h = 1e-6
    for j in range(N + 1):
        up, down = values.copy(), values.copy()
        up[j] += h
        down[j] -= h
        gu = np.concatenate([np.ravel(v) for v in evaluate(grad, {"x": up[:N], "p": up[N]})])
        gd = np.concatenate([np.ravel(v) for v in evaluate(grad, {"x": down[:N], "p": down[N]})])
        np.testing.assert_allclose(got[:, j], (gu - gd) / (2 * h), rtol=1e-5, atol=1e-6)


def test_the_hessian_equals_the_scalarised_one_entry_for_entry() -> None:
    xs = list(symbols(" ".join(f"s{i}" for i in range(N))))
    H = sparse_hessian(_model(x, p), [x, p])
    Hs = sparse_hessian(_scalar_model(xs, p), [*xs, p])
    assert (H.rows, H.cols) == (Hs.rows, Hs.cols)
    values = np.random.default_rng(2).uniform(-1, 1, N)
    env = {"x": values, "p": 0.8}
    scalar_env = {f"s{i}": values[i] for i in range(N)} | {"p": 0.8}
    np.testing.assert_allclose(evaluate(H.values, env), evaluate(Hs.values, scalar_env), rtol=1e-14)


def test_the_pattern_is_banded_not_dense() -> None:
    n = 400
    v = Symbol("v", shape=(n,))
    H = sparse_hessian(SUM(eg.sin(v[1:] * v[:-1])) + SUM(v**3), v)
    assert H.nnz == 3 * n - 2  # the diagonal and the two next to it, found without a dense matrix
    assert set(zip(H.rows, H.cols, strict=True)) == {
        (i, j) for i in range(n) for j in range(max(i - 1, 0), min(i + 2, n))
    }


@settings(max_examples=20, deadline=None)
@given(points)
def test_the_jacobian_of_vector_outputs_matches_finite_differences(values: np.ndarray) -> None:
    m = reshape(concat([x[1:] * x[:-1], x[:2] * p]), (N + 1,))
    outputs = [m, SUM(eg.exp(x)) + p, x[::2] ** 2]
    J = jacobian(outputs, [x, p], sparse=True)
    assert J.shape == (N + 1 + 1 + (N + 1) // 2, N + 1)
    got = _numbers(J, {"x": values[:N], "p": values[N]})

    def f(v: np.ndarray) -> np.ndarray:
        return np.concatenate([np.ravel(o) for o in evaluate(outputs, {"x": v[:N], "p": v[N]})])

    h = 1e-6
    for j in range(N + 1):
        up, down = values.copy(), values.copy()
        up[j] += h
        down[j] -= h
        np.testing.assert_allclose(got[:, j], (f(up) - f(down)) / (2 * h), rtol=1e-5, atol=1e-6)


def test_each_row_reads_only_its_entries() -> None:
    J = sparse_jacobian([x[1:] * x[:-1]], x)
    assert list(zip(J.rows, J.cols, strict=True)) == [(i, j) for i in range(N - 1) for j in (i, i + 1)]
    assert [str(v) for v in J.values[:2]] == ["take(x, 1, axis=0)", "take(x, 0, axis=0)"]


@pytest.mark.parametrize("backend", ["numpy", "c"])
def test_a_vector_hessian_compiles_over_the_vector_symbol(backend: str) -> None:
    H = hessian(_model(x, p), [x, p], sparse=True)
    fn = eg_compile(H, [x, p], backend=backend)
    values = np.random.default_rng(5).uniform(-1, 1, N)
    np.testing.assert_allclose(
        np.asarray(fn(values, 0.8), dtype=float).ravel(),
        np.asarray(evaluate(H.values, {"x": values, "p": 0.8}), dtype=float),
        rtol=1e-13,
    )


def test_matrix_variables_index_their_entries_in_c_order() -> None:
    a = Symbol("a", shape=(2, 3))
    H = sparse_hessian(SUM(a[0] * a[1]) + SUM(a**2), a)
    assert H.shape == (6, 6)
    assert (0, 3) in set(zip(H.rows, H.cols, strict=True)) and (0, 1) not in set(zip(H.rows, H.cols, strict=True))


def test_value_dependent_positions_are_refused_by_name() -> None:
    values, _ = topk(x, 2)
    with pytest.raises(DifferentiationError, match="topk_indices"):
        sparse_hessian(SUM(values**2), x)


def test_the_hessian_of_logsumexp_is_the_softmax_covariance() -> None:
    # d2/dx2 logsumexp(2x) = 4*(diag(s) - s s^T), s = softmax(2x): the sparse Hessian and the dense one
    f = get_op("logsumexp")(x * 2.0) + p * SUM(x)
    v = np.array([0.3, -1.2, 40.0, 2.0, -np.inf, 39.5])
    s = np.exp(2 * v - np.logaddexp.reduce(2 * v))
    want = 4 * (np.diag(s) - np.outer(s, s))
    env = {x: v, p: 0.5}
    sparse = sparse_hessian(f, [x])
    dense = np.array(evaluate([e for row in hessian(f, [x]) for e in row], env), dtype=float).reshape(N, N)
    for got in (_numbers(sparse, env), dense):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)
    assert np.all(_numbers(sparse, env)[4] == 0.0)  # a -inf entry carries no weight: its row and column are 0
