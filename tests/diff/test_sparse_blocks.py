"""Block Hessians of weighted sums: the per-term blocks scatter-added equal the summed sparse Hessian."""

from __future__ import annotations

import numpy as np
import pytest
from eg_strategies import X, Y, Z, random_terms
from hypothesis import given, settings
from hypothesis import strategies as st

import exprgraph as eg
from exprgraph.diff import SparseMatrix, sparse_hessian, sparse_jacobian
from exprgraph.diff.blocks import BlockHessian, block_hessian, jacobian_and_block_hessian
from exprgraph.diff.reverse import backprop, one_like
from exprgraph.errors import DifferentiationError

N_VARS = 7
VS = [eg.Symbol(f"w{i}") for i in range(N_VARS)]


def local_terms(seed: int, count: int) -> list[eg.Term]:
    """Random smooth terms, each over three of the variables (some shared, some repeated)."""
    rng = np.random.default_rng(seed)
    out = []
    for t in random_terms(count, seed=seed, smooth=True, max_depth=3):
        a, b, c = (VS[int(k)] for k in rng.integers(0, N_VARS, 3))
        out.append(eg.substitute(t, {X: a, Y: b, Z: c}))
    return out


def numbers(terms: list[eg.Term], env: dict) -> np.ndarray:
    with np.errstate(all="ignore"):
        got = eg.evaluate(terms, env) if terms else []
    return np.array([float(v) for v in got])


def lower_dense(h: BlockHessian, assembled: np.ndarray) -> np.ndarray:
    out = np.zeros(h.shape)
    out[h.rows, h.cols] = assembled
    return out


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), count=st.integers(1, 9), wseed=st.integers(0, 1000))
def test_blocks_assemble_to_the_summed_hessian(seed: int, count: int, wseed: int) -> None:
    terms = local_terms(seed, count)
    h = block_hessian(terms, VS)
    rng = np.random.default_rng(wseed)
    weights = rng.normal(size=count)
    env = {v: rng.uniform(-1.2, 1.2) for v in VS}
    weighted = [float(w) * t for w, t in zip(weights, terms, strict=True)]
    summed = sparse_hessian(weighted[0] if count == 1 else eg.add(*weighted), VS)
    want = np.tril(summed.to_dense(numbers(summed.values, env)))
    got = lower_dense(h, h.assemble(numbers(h.values, env), weights))
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-10)
    # every stored entry lies in the lower triangle, in order, and each block entry is one term's
    assert all(r >= c for r, c in zip(h.rows, h.cols, strict=True))
    assert list(zip(h.rows, h.cols, strict=True)) == sorted(zip(h.rows, h.cols, strict=True))
    for e, k in enumerate(h.term.tolist()):
        assert h.values[e].free_symbols <= terms[k].free_symbols
    # the symbolic sum of the blocks gives the same numbers
    flat = h.summed([float(w) for w in weights])
    np.testing.assert_allclose(lower_dense(h, numbers(flat.values, env)), want, rtol=1e-9, atol=1e-10)


def test_blocks_repeat_where_the_terms_repeat() -> None:
    xs = [eg.Symbol(f"q{i}") for i in range(6)]
    terms = [eg.sin(xs[i] - xs[i + 1]) * xs[i] for i in range(5)]
    h = block_hessian(terms, xs)
    assert h.n_terms == 5 and h.nnz == 6 + 5  # the diagonal and the band below it
    per_term = [[str(v) for v, k in zip(h.values, h.term.tolist(), strict=True) if k == j] for j in range(5)]
    shapes = {tuple(s.replace(f"q{j}", "A").replace(f"q{j + 1}", "B") for s in per_term[j]) for j in range(5)}
    assert len(shapes) == 1  # one shape of block, five times


def test_linear_terms_and_duplicates() -> None:
    x, y = eg.symbols("x y")
    h = block_hessian([x + y, x * y, x * y, 2.0 * x], [x, y])
    assert h.n_terms == 4 and h.nnz == 1
    assert h.assemble(numbers(h.values, {x: 1.0, y: 2.0}), [5.0, 1.0, 2.0, 7.0]).tolist() == [3.0]
    empty = block_hessian([x + y], [x, y])
    assert empty.nnz == 0 and empty.assemble([], [1.0]).tolist() == []


def test_bad_input() -> None:
    x, y = eg.symbols("x y")
    h = block_hessian([x * y], [x, y])
    with pytest.raises(ValueError, match="weights"):
        h.assemble([1.0], [1.0, 2.0])
    with pytest.raises(ValueError, match="block numbers"):
        h.assemble([1.0, 2.0], [1.0])
    with pytest.raises(DifferentiationError, match="twice"):
        block_hessian([x * y], [x, x])
    with pytest.raises(DifferentiationError, match="scalar"):
        block_hessian([eg.Symbol("v", shape=(2,))], [x])
    sp = h.to_scipy(h.assemble([1.0], [1.0]))
    assert sp.toarray().tolist() == [[0.0, 1.0], [1.0, 0.0]]


def assert_same_matrix(a: SparseMatrix, b: SparseMatrix) -> None:
    assert (a.rows, a.cols, a.shape) == (b.rows, b.cols, b.shape)
    assert len(a.values) == len(b.values) and all(x is y for x, y in zip(a.values, b.values, strict=True))


def assert_same_blocks(a: BlockHessian, b: BlockHessian) -> None:
    assert (a.rows, a.cols, a.shape, a.n_terms) == (b.rows, b.cols, b.shape, b.n_terms)
    assert len(a.values) == len(b.values) and all(x is y for x, y in zip(a.values, b.values, strict=True))
    assert a.term.tolist() == b.term.tolist() and a.position.tolist() == b.position.tolist()


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), count=st.integers(1, 9), first=st.integers(0, 9))
def test_jacobian_with_the_blocks_is_sparse_jacobians(seed: int, count: int, first: int) -> None:
    terms = local_terms(seed, count)
    first = min(first, count)
    jacobian, h = jacobian_and_block_hessian(terms, VS, first)
    assert_same_matrix(jacobian, sparse_jacobian(terms[first:], VS))  # the very same terms, in the same order
    assert_same_blocks(h, block_hessian(terms, VS))


def test_jacobian_with_the_blocks_edge_cases() -> None:
    x, y = eg.symbols("x y")
    half = eg.Symbol("h", dtype="float32")
    terms = [x + y, x * y, x * y, 2.0 * x, eg.const(3.0), half * half * x]
    for first in range(len(terms) + 1):
        jacobian, h = jacobian_and_block_hessian(terms, [x, y, half], first)
        assert_same_matrix(jacobian, sparse_jacobian(terms[first:], [x, y, half]))
        assert_same_blocks(h, block_hessian(terms, [x, y, half]))
    jacobian, h = jacobian_and_block_hessian(terms, [x, y], len(terms))
    assert jacobian.shape == (0, 2) and jacobian.nnz == 0 and h.n_terms == len(terms)
    with pytest.raises(ValueError, match="first_row"):
        jacobian_and_block_hessian(terms, [x, y], len(terms) + 1)
    with pytest.raises(ValueError, match="first_row"):
        jacobian_and_block_hessian(terms, [x, y], -1)


def test_float32_terms_keep_their_blocks_in_any_company() -> None:
    x, y = eg.symbols("x y")
    h, k = eg.Symbol("h", dtype="float32"), eg.Symbol("k", dtype="float32")
    alone = block_hessian([h * h * k], [h, k])
    mixed = block_hessian([h * h * k, x * y * x], [h, k, x, y])  # one colour: the terms share no variable
    own = [v for v, t in zip(mixed.values, mixed.term.tolist(), strict=True) if t == 0]
    assert len(own) == len(alone.values) and all(a is b for a, b in zip(own, alone.values, strict=True))
    assert all(v.dtype == "float32" for v in own)
    env = {h: 1.5, k: -2.0, x: 0.5, y: 3.0}
    got = lower_dense(mixed, mixed.assemble(numbers(mixed.values, env), [1.0, 1.0]))
    assert got[1, 0] == 2 * 1.5 and got[0, 0] == 2 * -2.0 and got[3, 2] == 2 * 0.5 and got[2, 2] == 2 * 3.0


def per_term_lower(h: BlockHessian, k: int, env: dict) -> dict[tuple[int, int], float]:
    """Term ``k``'s block entries evaluated at ``env``, by (row, column)."""
    mine = [e for e, t in enumerate(h.term.tolist()) if t == k]
    got = numbers([h.values[e] for e in mine], env) * h.signs()[mine]  # a negated entry: -value, exactly
    return {(h.rows[h.position[e]], h.cols[h.position[e]]): float(v) for e, v in zip(mine, got, strict=True)}


def own_sweeps(term: eg.Term, env: dict) -> dict[tuple[int, int], float]:
    """The term's lower-triangle Hessian, one sweep per column of each non-constant partial (no mirrors)."""
    jacobian = sparse_jacobian([term], VS)
    keys, found = [], []
    for c, partial in zip(jacobian.cols, jacobian.values, strict=True):
        if partial.args or partial.is_symbol:
            for v, adjoint in backprop([partial], [one_like(partial)], set(VS[c:])).items():
                keys.append((VS.index(v), c))
                found.append(adjoint)
    return dict(zip(keys, (float(v) for v in numbers(found, env)), strict=True))


def difference_terms(seed: int, count: int) -> list[eg.Term]:
    """Random smooth terms of ``a - b``, ``c * a`` and ``b - a`` (partials ``Q`` and ``-Q`` side by side)."""
    rng = np.random.default_rng(seed)
    out = []
    for t in random_terms(count, seed=seed, smooth=True, max_depth=3):
        a, b, c = (VS[int(k)] for k in rng.choice(N_VARS, 3, replace=False))
        out.append(eg.substitute(t, {X: a - b, Y: c * a, Z: b - a}))
    return out


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), count=st.integers(1, 6), pseed=st.integers(0, 1000))
def test_mirrored_columns_give_their_own_sweeps_numbers(seed: int, count: int, pseed: int) -> None:
    terms = difference_terms(seed, count)
    h = block_hessian(terms, VS)
    rng = np.random.default_rng(pseed)
    env = {v: float(rng.uniform(-1.2, 1.2)) for v in VS}
    for k, term in enumerate(terms):
        got, want = per_term_lower(h, k, env), own_sweeps(term, env)
        assert got.keys() == want.keys()
        keys = sorted(want)
        # bit for bit but where a sweep folds (1/b)*t into t/b for one sign of its seed only: a rounding
        np.testing.assert_allclose([got[q] for q in keys], [want[q] for q in keys], rtol=1e-13, atol=1e-300)
        if "/" not in str(term) and "sigmoid" not in str(term) and "tanh" not in str(term):
            assert all(got[q] == want[q] or (np.isnan(got[q]) and np.isnan(want[q])) for q in keys)


def test_a_function_of_a_difference_sweeps_one_column_of_the_pair() -> None:
    a, b, c = VS[:3]
    term = c * c * eg.sin(a - b) + c * eg.cos(a - b)  # d/db: -(d/da)
    h = block_hessian([term], [a, b, c])
    at = [(h.rows[p], h.cols[p]) for p in h.position.tolist()]
    entries = dict(zip(at, h.values, strict=True))
    assert set(entries) == {(0, 0), (1, 0), (1, 1), (2, 0), (2, 1), (2, 2)}
    # b's column is a's, negated: the same terms, marked negated (not swept again, no -v built)
    assert entries[(1, 1)] is entries[(1, 0)] and entries[(2, 1)] is entries[(2, 0)]
    signs = dict(zip(at, h.signs().tolist(), strict=True))
    assert signs[(1, 1)] == -signs[(1, 0)] and signs[(2, 1)] == -signs[(2, 0)]
    assert not any(v.op.name == "neg" for v in h.values)  # a -v entry is v, negated
    env = {a: 0.3, b: -0.8, c: 1.7}
    assert per_term_lower(h, 0, env) == own_sweeps(term, env)
    # the Lagrangian's numbers too
    flat = sparse_hessian(2.0 * term, [a, b, c])
    want = np.tril(flat.to_dense(numbers(flat.values, env)))
    np.testing.assert_allclose(lower_dense(h, h.assemble(numbers(h.values, env), [2.0])), want, rtol=1e-13)


@settings(max_examples=40, deadline=None)
@given(seeds=st.tuples(st.integers(0, 10_000), st.integers(0, 1000)))
def test_negated_entries_assemble_as_their_negations_bit_for_bit(seeds: tuple[int, int]) -> None:
    count = 1 + seeds[0] % 6
    h = block_hessian(difference_terms(seeds[0], count), VS)
    rng = np.random.default_rng(seeds[1])
    specials = np.array([0.0, -0.0, 1.0, -2.5, np.inf, -np.inf, np.nan, 1e300, -1e-300])
    weights = np.where(rng.random(count) < 0.5, rng.choice(specials, size=count), rng.normal(size=count))
    env = {v: float(rng.uniform(-1.2, 1.2)) for v in VS}
    got = h.assemble(numbers(h.values, env), weights)
    # the same blocks with each negated entry built as the term -v (as the sweeps built them before)
    signs = h.signs().tolist()
    explicit = [-v if s < 0 else v for v, s in zip(h.values, signs, strict=True)]
    plain = BlockHessian(h.rows, h.cols, explicit, h.term, h.position, h.shape, h.n_terms)
    want = plain.assemble(numbers(explicit, env), weights)
    nan = np.isnan(want)  # (a nan's sign is the processor's choice)
    assert np.array_equal(nan, np.isnan(got)) and got[~nan].tobytes() == want[~nan].tobytes()
    # fewer negations to evaluate than entries that are negations
    assert sum(v.op.name == "neg" for v in h.values) <= sum(v.op.name == "neg" for v in explicit)
