"""Sparse Jacobians and Hessians: the same non-zeros as the dense ones, COO form, limits, scale."""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest
from eg_strategies import X, Y, Z, random_terms
from hypothesis import given, settings
from hypothesis import strategies as st

import exprgraph as eg
from exprgraph.diff import SparseMatrix, grad, hessian, jacobian, sparse_hessian, sparse_jacobian
from exprgraph.diff import sparse as sparse_module
from exprgraph.diff.higher import ENV_MAX_ENTRIES
from exprgraph.diff.pattern import colour_rows, dependency_sets
from exprgraph.errors import DifferentiationError, SizeLimitError

N_VARS = 8
VS = [eg.Symbol(f"v{i}") for i in range(N_VARS)]
ZERO = eg.const(0.0)


def local_sum(seed: int, pieces: int, smooth: bool = True) -> eg.Term:
    """A sum of random pieces, each a random term over three of the variables (a sparse Hessian)."""
    rng = np.random.default_rng(seed)
    parts = []
    for t in random_terms(pieces, seed=seed, smooth=smooth, max_depth=3):
        a, b, c = (VS[int(k)] for k in rng.integers(0, N_VARS, 3))
        parts.append(eg.substitute(t, {X: a, Y: b, Z: c}))
    return parts[0] if len(parts) == 1 else eg.add(*parts)


def values(terms: list[eg.Term], env: dict) -> np.ndarray:
    with np.errstate(all="ignore"):
        got = eg.evaluate(terms, env) if terms else []
    return np.array([float(v) for v in got])


def point(seed: int) -> dict:
    rng = np.random.default_rng(seed)
    return {v: rng.uniform(-1.5, 1.5) for v in VS}


def assert_matches_dense(sparse: SparseMatrix, dense: list[list[eg.Term]], env: dict, symmetric: bool) -> None:
    """Same values; every structural non-zero of the dense matrix is stored in the sparse one.

    For a Hessian, the sparse upper triangle is the mirror of its lower one: it is compared with
    the dense lower triangle, mirrored (the two orders of differentiation agree wherever the
    derivatives exist, but a nan inside a where() branch may show in one and not the other).
    """
    dense_values = np.array([values(row, env) for row in dense]).reshape(sparse.shape)
    if symmetric:
        dense_values = np.where(np.tri(*dense_values.shape, dtype=bool), dense_values, dense_values.T)
    np.testing.assert_allclose(sparse.to_dense(values(sparse.values, env)), dense_values, rtol=1e-9, atol=1e-12)
    stored = set(zip(sparse.rows, sparse.cols, strict=True))
    for i, row in enumerate(dense):
        for j, t in enumerate(row):
            if symmetric and j > i:
                continue
            assert (t is not ZERO) <= ((i, j) in stored), (i, j, str(t))


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), pieces=st.integers(1, 6), smooth=st.booleans())
def test_sparse_hessian_equals_dense_non_zeros(seed: int, pieces: int, smooth: bool) -> None:
    f = local_sum(seed, pieces, smooth)
    h = hessian(f, VS, sparse=True)
    assert_matches_dense(h, hessian(f, VS), point(seed), symmetric=True)
    entries = list(zip(h.rows, h.cols, strict=True))
    assert entries == sorted(entries) and len(set(entries)) == len(entries)
    assert sorted((j, i) for i, j in entries) == entries  # a symmetric pattern


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), pieces=st.integers(1, 6), smooth=st.booleans())
def test_one_shared_walk_and_one_walk_per_colour_give_the_same_terms(seed: int, pieces: int, smooth: bool) -> None:
    # a dense part (every variable under one tanh) makes colours of one row; the local pieces add sparse ones
    f = local_sum(seed, pieces, smooth) + eg.tanh(eg.add(*(v * VS[(k + 1) % N_VARS] for k, v in enumerate(VS))))
    found = []
    for rows in (0, N_VARS):  # no group shares a walk / every group does
        with pytest.MonkeyPatch.context() as m:
            m.setattr(sparse_module, "SHARED_WALK_ROWS", rows)
            found.append(sparse_hessian(f, VS))
    each, shared = found
    assert (each.rows, each.cols) == (shared.rows, shared.cols)
    assert all(a is b for a, b in zip(each.values, shared.values, strict=True))
    dense = hessian(f, VS)
    assert isinstance(dense, list)
    assert_matches_dense(shared, dense, point(seed), symmetric=True)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), outputs=st.integers(1, 5), smooth=st.booleans())
def test_sparse_jacobian_equals_dense_non_zeros(seed: int, outputs: int, smooth: bool) -> None:
    fs = [local_sum(seed + k, 2, smooth) for k in range(outputs)]
    j = jacobian(fs, VS, sparse=True)
    assert j.shape == (outputs, N_VARS)
    assert_matches_dense(j, jacobian(fs, VS), point(seed), symmetric=False)


def test_coo_form_and_conversions() -> None:
    x, y, z = X, Y, Z
    m = sparse_jacobian([x * y, eg.sin(z), eg.const(2.0), x < y], [x, y, z])
    assert (m.rows, m.cols) == ([0, 0, 1], [0, 1, 2])
    assert [str(v) for v in m.values] == ["y", "x", "cos(z)"]  # constants and comparisons have none
    assert m.shape == (4, 3) and m.nnz == len(m) == 3
    assert list(m) == list(zip(m.rows, m.cols, m.values, strict=True))
    numbers = values(m.values, {x: 2.0, y: 3.0, z: 0.0})
    s = m.to_scipy(numbers)
    assert s.shape == (4, 3) and s.nnz == 3
    np.testing.assert_array_equal(s.toarray(), [[3.0, 2.0, 0.0], [0.0, 0.0, 1.0], [0.0] * 3, [0.0] * 3])
    np.testing.assert_array_equal(m.to_dense(numbers), s.toarray())
    terms = m.to_dense()
    assert terms[0][1] is x and terms[2][2] is ZERO
    with pytest.raises(ValueError, match="expected 3 numbers"):
        m.to_scipy([1.0, 2.0])
    h = sparse_hessian(x * y * z + x**3, [x, y, z])
    assert (h.rows, h.cols) == ([0, 0, 0, 1, 1, 2, 2], [0, 1, 2, 0, 2, 0, 1])
    # plain ints and terms (not numpy scalars or object arrays), as the fields say
    assert {type(i) for i in (*m.rows, *m.cols, *h.rows, *h.cols)} == {int}
    assert all(type(v) is eg.Term for v in (*m.values, *h.values)) and h.values[1] is h.values[3] is z


def test_hessian_entries_mirror_the_same_terms() -> None:
    x, y, z = VS[:3]
    h = sparse_hessian(eg.exp(x * y) + z**3, [x, y, z])
    stored = {(i, j): v for i, j, v in h}
    assert set(stored) == {(0, 0), (0, 1), (1, 0), (1, 1), (2, 2)}
    assert stored[0, 1] is stored[1, 0]
    assert str(stored[2, 2]) == "6.0*v2"


def test_wrt_names_and_errors() -> None:
    x, y = VS[:2]
    assert hessian(x * y, ["v0", "v1"], sparse=True).nnz == 2
    assert hessian(x * y, sparse=True).shape == (2, 2)  # every free symbol, by name
    a = eg.Symbol("a", shape=("n",))
    with pytest.raises(DifferentiationError, match="scalar"):
        hessian(eg.sum(a * a), a, sparse=True)
    with pytest.raises(DifferentiationError, match="scalar"):
        jacobian(a * x, [x], sparse=True)
    with pytest.raises(DifferentiationError, match="twice"):
        jacobian([x * y], [x, x], sparse=True)
    with pytest.raises(DifferentiationError, match="scalar f"):
        hessian(a, [x], sparse=True)


def test_dense_size_limit_is_checked_before_building(monkeypatch: pytest.MonkeyPatch) -> None:
    xs = [eg.Symbol(f"big{i}") for i in range(3000)]
    f = eg.add(*(s * s for s in xs))
    with pytest.raises(SizeLimitError, match="sparse=True") as info:
        hessian(f, xs)  # 9e6 entries: refused at once, nothing differentiated
    assert info.value.limit == 2**22 and info.value.size == 9_000_000 and "max_entries" in str(info.value)
    with pytest.raises(SizeLimitError, match="Jacobian"):
        jacobian([f, f], xs, max_entries=5000)
    monkeypatch.setenv(ENV_MAX_ENTRIES, "100")
    with pytest.raises(SizeLimitError, match="100"):
        hessian(f, xs[:20])
    assert len(hessian(xs[0] * xs[1], xs[:2])) == 2
    monkeypatch.setenv(ENV_MAX_ENTRIES, "many")
    with pytest.raises(ValueError, match="positive integer"):
        hessian(f, xs[:2])
    with pytest.raises(ValueError, match="positive int"):
        hessian(f, xs[:2], max_entries=0)
    h = hessian(f, xs, sparse=True)  # the sparse form needs no such limit
    assert h.nnz == 3000 and all(str(v) == "2.0" for v in h.values)


def test_pattern_limit_for_dense_derivatives() -> None:
    xs = [eg.Symbol(f"d{i}") for i in range(60)]
    f = eg.add(*xs) ** 3  # a dense Hessian: every row depends on every variable
    with pytest.raises(SizeLimitError, match="max_pattern"):
        hessian(f, xs, sparse=True, max_pattern=100)
    assert hessian(f, xs, sparse=True).nnz == 3600


def test_colouring_groups_rows_with_disjoint_columns() -> None:
    patterns = [frozenset({0, 1}), frozenset({1, 2}), frozenset({2, 3}), frozenset(), frozenset({4})]
    groups = colour_rows(patterns)
    assert sorted(r for g in groups for r in g) == [0, 1, 2, 4]  # the empty row needs no sweep
    for g in groups:
        cols = [c for r in g for c in patterns[r]]
        assert len(cols) == len(set(cols))
    assert len(groups) == 2


def test_pattern_skips_piecewise_constant_operands() -> None:
    x, y, z = VS[:3]
    cols = {x: 0, y: 1, z: 2}
    deps = dependency_sets([eg.where(x < y, z, 2.0 * z), (x // y) * z, x * y], cols)
    assert deps == [frozenset({2}), frozenset({2}), frozenset({0, 1})]


def test_banded_hessian_needs_three_sweeps_at_any_size() -> None:
    n = 2000
    xs = [eg.Symbol(f"x{i}") for i in range(n + 1)]
    f = eg.add(*(eg.sin(xs[i] * xs[i + 1]) + eg.exp(xs[i]) / (1 + xs[i] ** 2) for i in range(n)))
    cols = {s: j for j, s in enumerate(xs)}
    g = grad(f, xs)
    assert len(colour_rows(dependency_sets(g, cols))) == 3
    h = hessian(f, xs, sparse=True)
    assert h.nnz == 3 * n + 1
    env = {s: v for s, v in zip(xs, np.random.default_rng(0).uniform(-1, 1, n + 1), strict=True)}
    i = 500
    got = dict(((r, c), v) for r, c, v in zip(h.rows, h.cols, values(h.values, env), strict=True))
    a, b = env[xs[i]], env[xs[i + 1]]
    # d2/dx_i dx_{i+1} of sin(x_i x_{i+1}) = cos(ab) - ab sin(ab)
    assert got[i, i + 1] == pytest.approx(np.cos(a * b) - a * b * np.sin(a * b), rel=1e-12)
    assert len(eg.postorder(h.values)) < 40 * n  # f, its gradient and the Hessian


def test_sparse_hessian_of_a_chain_of_100k_nodes() -> None:
    assert sys.getrecursionlimit() <= 10_000
    x, y = VS[:2]
    chain = x
    for _ in range(50_000):
        chain = chain * 1.0 + y  # x + 50000 y, built as 100k nodes
    f = eg.sin(chain) * x
    h = hessian(f, [x, y], sparse=True)
    assert (h.rows, h.cols) == ([0, 0, 1, 1], [0, 1, 0, 1])
    env = {x: 0.3, y: 1e-5}
    got = values(h.values, env)
    c = 0.3 + 0.5
    k = 50_000
    want = [2 * np.cos(c) - 0.3 * np.sin(c), k * np.cos(c) - 0.3 * k * np.sin(c)]
    want = [want[0], want[1], want[1], -0.3 * k * k * np.sin(c)]
    np.testing.assert_allclose(got, want, rtol=1e-9)


@pytest.mark.skipif(os.environ.get("EXPRGRAPH_SLOW_TESTS") != "1", reason="set EXPRGRAPH_SLOW_TESTS=1")
def test_sparse_hessian_at_n_100k() -> None:  # pragma: no cover - minutes on a shared machine
    n = 100_000
    xs = [eg.Symbol(f"x{i}") for i in range(n + 1)]
    f = eg.add(*(eg.sin(xs[i] * xs[i + 1]) + eg.exp(xs[i]) / (1 + xs[i] ** 2) for i in range(n)))
    assert hessian(f, xs, sparse=True).nnz == 3 * n + 1
