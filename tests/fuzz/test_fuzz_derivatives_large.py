"""Fuzzing derivatives at scale and off the beaten path: large DAGs, vector symbols, odd variables, long chains.

- large random DAGs (10^3-10^4 nodes built iteratively, each node reading earlier ones): the
  gradient against differences, numeric_gradient, hvp against differences of the gradient, and
  the C sweeps against their Python twins term for term;
- vector symbols (indexing, slicing, sum, dot, reductions, broadcasting with scalars): the
  gradient by a vector against differences, the Hessian against differences of the gradient,
  dense against sparse;
- variables that are not float symbols (inner nodes, int symbols, terms not in f) and chains of
  10^5 nodes (10^6 in a long run) at the default recursion limit.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest
from diff_oracles import (
    FLOATS,
    STEPS,
    H,
    assert_matches_differences,
    close,
    dags,
    directional,
    large_dag,
    python_sweeps,
    random_points,
    steady,
    steady_point,
    stencil_env,
    values_at,
)
from fuzz_support import EXAMPLES, FUZZ
from hypothesis import given, settings
from hypothesis import strategies as st

import exprgraph as eg
from exprgraph.diff import hessian, hvp, jacobian, jvp, numeric_gradient, sparse_jacobian, sweep, vjp
from exprgraph.errors import DifferentiationError

SEEDS = st.integers(0, 2**32 - 1)
#: a few large DAGs in the short run, one per 25 examples in a long one
LARGE = settings(FUZZ, max_examples=max(2, EXAMPLES // 25))
MANY = [eg.Symbol(f"s{k}") for k in range(24)]
POINTS = 8


@LARGE
@given(SEEDS, st.integers(1_000, 10_000))
def test_large_dags_gradients_and_hessian_vector_products(seed: int, nodes: int) -> None:
    f = large_dag(seed, nodes, MANY)
    assert f.size >= nodes, "the output reads every node"
    center, direction, extra = random_points(seed, POINTS, MANY)
    env = {**center, **extra}
    g = eg.grad(f, MANY)
    partials = values_at(g, env, (POINTS,))
    for p, n in zip(partials, numeric_gradient(f, env, MANY), strict=True):
        assert np.all(close(np.broadcast_to(n, (POINTS,)), p, rtol=1e-12, atol=0.0))
    stencil = stencil_env(center, direction, extra)
    ok = steady([f], stencil)
    (values,) = values_at([f], stencil, (POINTS, len(STEPS)))
    assert_matches_differences(directional(partials, direction, MANY), values, ok, f"a DAG of {f.size} nodes")
    # hvp along the direction against differences of <grad, u> along it
    tangents = [eg.Symbol(f"t{k}") for k in range(len(MANY))]
    products = hvp(f, MANY, tangents)
    u = np.random.default_rng(seed + 1).standard_normal((len(MANY), POINTS))
    tangent_env = {**env, **{t: direction[s] for t, s in zip(tangents, MANY, strict=True)}}
    along = sum(p * u[k] for k, p in enumerate(values_at(products, tangent_env, (POINTS,))))
    grads = values_at(g, stencil, (POINTS, len(STEPS)))
    projected = sum(gk * u[k][:, None] for k, gk in enumerate(grads))
    assert_matches_differences(np.asarray(along), projected, ok, "hvp of a large DAG", rtol=1e-5)
    if sweep.native():  # the C sweeps build the very terms of their Python twins
        with python_sweeps():
            assert eg.grad(f, MANY) == g
            assert hvp(f, MANY, tangents) == products


# -- vector symbols ----------------------------------------------------------------------------------------

N = 5
V, W = eg.Symbol("v", shape=(N,)), eg.Symbol("w", shape=(N,))
X, Y = FLOATS[:2]
VARIABLES = [V, W, X, Y]

VECTOR_UNARY = [eg.sin, eg.tanh, eg.sigmoid, abs, lambda a: a**2, lambda a: eg.exp(eg.tanh(a)), lambda a: -a]
VECTOR_BINARY = [
    lambda a, b: a * b,
    lambda a, b: a + b,
    eg.maximum,
    lambda a, b: a / (2.0 + eg.cos(b)),
    lambda a, b: eg.where(a < b, a, b * 0.5),
]
#: vector -> scalar
REDUCE = [
    lambda a, b, i, j: eg.sum(a),
    lambda a, b, i, j: eg.dot(a, b),
    lambda a, b, i, j: a[i],
    lambda a, b, i, j: eg.sum(a[i:j] * b[i:j]) if i < j else a[j] * b[i],
    lambda a, b, i, j: eg.amax(a),
    lambda a, b, i, j: eg.logsumexp(a),
    lambda a, b, i, j: eg.mean(a * b),
    lambda a, b, i, j: eg.sum(a[::2]),
    lambda a, b, i, j: eg.prod(eg.tanh(a[i:]) + 1.5),
]
SCALAR = [lambda s, t: s * t, lambda s, t: eg.sin(s) + t, lambda s, t: eg.maximum(s, t), lambda s, t: s / (2.0 + t * t)]


@st.composite
def vector_terms(draw: st.DrawFn) -> tuple[eg.Term, eg.Term]:
    """A scalar term over the vectors v, w and the scalars x, y (vector nodes, reductions, broadcasts, shared),
    and its last vector node."""
    vectors: list[eg.Term] = [V, W]
    scalars: list[eg.Term] = [X, Y]
    pick_v, pick_s = st.sampled_from(vectors), st.sampled_from(scalars)
    for _ in range(draw(st.integers(1, 10))):
        kind = draw(st.sampled_from(["unary", "binary", "broadcast", "reduce", "scalar"]))
        if kind == "unary":
            vectors.append(draw(st.sampled_from(VECTOR_UNARY))(draw(pick_v)))
        elif kind == "binary":
            vectors.append(draw(st.sampled_from(VECTOR_BINARY))(draw(pick_v), draw(pick_v)))
        elif kind == "broadcast":
            s, v = draw(pick_s), draw(pick_v)
            vectors.append(v * s if draw(st.booleans()) else v + eg.sin(s))
        elif kind == "reduce":
            i, j = draw(st.integers(0, N - 1)), draw(st.integers(0, N))
            scalars.append(draw(st.sampled_from(REDUCE))(draw(pick_v), draw(pick_v), i, j))
        else:
            scalars.append(draw(st.sampled_from(SCALAR))(draw(pick_s), draw(pick_s)))
    return scalars[-1] * 0.5 + eg.sum(eg.sin(vectors[-1])), vectors[-1]


def _flat(values: list) -> np.ndarray:
    return np.concatenate([np.ravel(np.asarray(v, dtype=np.float64)) for v in values])


def _unflat(point: np.ndarray) -> dict:
    return {V: point[:N], W: point[N : 2 * N], X: point[2 * N], Y: point[2 * N + 1]}


def _stencil(center: np.ndarray, d: np.ndarray) -> list[dict]:
    return [_unflat(center + s * H * d) for s in STEPS]


@FUZZ
@given(vector_terms(), SEEDS)
def test_derivatives_by_vector_symbols_match_differences(terms: tuple[eg.Term, eg.Term], seed: int) -> None:
    f, vector = terms
    rng = np.random.default_rng(seed)
    rows = jacobian(vector, VARIABLES)
    assert isinstance(rows, list) and len(rows) == N
    g = eg.grad(f, VARIABLES)
    assert [t.shape for t in g] == [(N,), (N,), (), ()]
    Hs = hessian(f, VARIABLES)  # (vector variables go entry by entry: every reduction has its scalar form)
    assert isinstance(Hs, list) and len(Hs) == 2 * N + 2
    flat_hessian = [e for row in Hs for e in row]
    for _ in range(3):
        center, d, u = rng.uniform(-1.5, 1.5, 2 * N + 2), rng.standard_normal(2 * N + 2), rng.standard_normal(2 * N + 2)
        d /= np.linalg.norm(d)
        envs = _stencil(center, d)
        if not steady_point([f, *g, *flat_hessian], envs):
            continue
        with np.errstate(all="ignore"):
            fs = np.array([[float(eg.evaluate(f, env)) for env in envs]])
            gs = np.array([[_flat(eg.evaluate(g, env)) @ u for env in envs]])
            gradient = _flat(eg.evaluate(g, envs[0]))
        ok = np.array([True])
        assert_matches_differences(np.array([gradient @ d]), fs, ok, f)
        # the vector node's Jacobian (a row per entry) against jvp (forward) and vjp (reverse)
        tangent = [eg.const(d[:N]), eg.const(d[N : 2 * N]), eg.const(d[2 * N]), eg.const(d[2 * N + 1])]
        with np.errstate(all="ignore"):
            jac = np.array([_flat(eg.evaluate(row, envs[0])) for row in rows])
            along = np.asarray(eg.evaluate(jvp(vector, VARIABLES, tangent), envs[0]), dtype=np.float64)
            back = _flat(eg.evaluate(vjp(vector, VARIABLES, eg.const(u[:N])), envs[0]))
        jscale = 1.0 + np.max(np.abs(jac))
        assert np.all(close(along, jac @ d, rtol=1e-9, atol=1e-9 * jscale)), vector
        assert np.all(close(back, u[:N] @ jac, rtol=1e-9, atol=1e-9 * jscale)), vector
        with np.errstate(all="ignore"):
            hess = np.array(eg.evaluate(flat_hessian, envs[0]), dtype=np.float64).reshape(2 * N + 2, 2 * N + 2)
        assert_matches_differences(np.array([u @ hess @ d]), gs, ok, f"the Hessian of {f}", rtol=1e-5)
        scale = 1.0 + np.max(np.abs(hess))
        assert np.all(close(hess, hess.T, rtol=1e-9, atol=1e-9 * scale)), f
        # hvp by vectors, and the vector gradient's sparse Jacobian, against the dense Hessian
        with np.errstate(all="ignore"):
            product = _flat(eg.evaluate(hvp(f, VARIABLES, tangent), envs[0]))
            sparse = sparse_jacobian(g, VARIABLES)
            dense_again = sparse.to_dense(eg.evaluate(sparse.values, envs[0]))
        assert np.all(close(product, hess @ d, rtol=1e-8, atol=1e-9 * scale)), f
        assert np.all(close(dense_again, hess, rtol=1e-9, atol=1e-9 * scale)), f


# -- odd variables ------------------------------------------------------------------------------------------


@FUZZ
@given(dags(), SEEDS)
def test_partials_by_inner_nodes_and_int_symbols_are_those_of_stand_in_symbols(f: eg.Term, seed: int) -> None:
    center, _, extra = random_points(seed, POINTS)
    env = {**center, **extra}
    k = eg.Symbol("k", "int64")
    inner = [n for n in eg.postorder(f) if n.args and n.dtype == "float64" and n is not f][-2:]
    wrt = [*inner, k] if k in f.free_symbols else inner
    if not wrt:
        return
    # the partial by a node is the partial by a symbol put in its place (its other uses unchanged)
    stand = [eg.Symbol(f"u{j}") for j in range(len(wrt))]
    for node, u in zip(wrt, stand, strict=True):
        g = eg.substitute(f, {node: u})
        (value,) = values_at([node], env, (POINTS,))
        want = values_at([eg.grad(g, u)], {**env, u: value}, (POINTS,))[0]
        got = values_at([eg.grad(f, node)], env, (POINTS,))[0]
        assert np.all(close(got, want, rtol=1e-12, atol=1e-300)), (f, node)
    for node in (X * 3.5 + 1.25, eg.Symbol("absent"), eg.Symbol("vec", shape=(2,))):
        zero = eg.grad(f, node)
        assert zero.shape == node.shape and not np.any(eg.evaluate(zero, env))


def test_bad_variables_and_outputs_are_named_errors() -> None:
    x, y = FLOATS[:2]
    f = eg.sin(x) * y
    with pytest.raises(TypeError):
        eg.grad(f, 2.0)  # type: ignore[call-overload]
    with pytest.raises(TypeError):
        eg.grad(f, [x, 1.5])
    with pytest.raises(DifferentiationError):
        eg.grad(V * x, x)  # a vector f: sum it, or take a vjp
    with pytest.raises(DifferentiationError):
        hvp(V * x, [x], [1.0])
    with pytest.raises((DifferentiationError, ValueError)):
        jvp(f, [x, y], [1.0])
    with pytest.raises(DifferentiationError):
        jvp(f, x, [1.0, 2.0])  # a tangent of the wrong shape
    # a bool symbol's partial is a zero, and so are the partials of a comparison
    b = eg.Symbol("b", "bool")
    assert float(eg.evaluate(eg.grad(eg.where(b, x, y), b), {})) == 0.0
    assert eg.evaluate(jacobian([eg.lt(x, y)], [x, y])[0], {}) == [0.0, 0.0]


def test_sparse_derivatives_by_a_vector_constant_are_those_by_a_symbol_in_its_place() -> None:
    # regression: the entry-by-entry form of a sparse Hessian or Jacobian with vector terms read every
    # variable's name, so a constant (or an inner node) as a variable ended in an AttributeError
    A, s = eg.const(np.array([1.0, 2.0, 3.0])), eg.Symbol("s", shape=(3,))
    x = FLOATS[0]
    env = {x: 0.7, s: np.array([1.0, 2.0, 3.0]), V: np.arange(5.0), W: np.ones(5)}
    for f, g, wrt in (
        (eg.sum(A * A * x), eg.sum(s * s * x), [x]),
        (eg.sum(eg.sin(A) * V[:3]) * x, eg.sum(eg.sin(s) * V[:3]) * x, [V, x]),
    ):
        by_constant = hessian(f, [A, *wrt], sparse=True)
        by_symbol = hessian(g, [s, *wrt], sparse=True)
        assert isinstance(by_constant, eg.diff.SparseMatrix) and isinstance(by_symbol, eg.diff.SparseMatrix)
        assert (by_constant.rows, by_constant.cols) == (by_symbol.rows, by_symbol.cols)
        np.testing.assert_array_equal(eg.evaluate(by_constant.values, env), eg.evaluate(by_symbol.values, env))
        jac_c, jac_s = sparse_jacobian([f, f * x], [A, *wrt]), sparse_jacobian([g, g * x], [s, *wrt])
        assert (jac_c.rows, jac_c.cols) == (jac_s.rows, jac_s.cols)
        np.testing.assert_array_equal(eg.evaluate(jac_c.values, env), eg.evaluate(jac_s.values, env))
    with pytest.raises(DifferentiationError, match="by symbols"):
        hessian(eg.sum(V * V) * x, [V, x * 2.0], sparse=True)


#: chain length: 10^5 in the short run, 10^6 in a long one
CHAIN = 1_000_000 if EXAMPLES >= 1_000 else 100_000


def test_chains_of_many_nodes_at_the_default_recursion_limit() -> None:
    x, y = FLOATS[:2]
    c = x
    for step in range(CHAIN):  # steps that always move c up a little: derivatives that neither vanish nor explode
        c = c + 1e-5 * (1.5 + eg.sin(y * c)) if step % 2 else c * 1.0
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(1_000)
    try:
        dx, dy = eg.grad(c, [x, y])
        tangent = jvp(c, [x, y], [1.0, 0.0])
        sparse = hessian(c, [x, y], sparse=True)
        assert isinstance(sparse, eg.diff.SparseMatrix) and sparse.nnz == 4
    finally:
        sys.setrecursionlimit(limit)
    # a chain of adds only: its partials fold to constants, exactly
    s = x
    for _ in range(CHAIN):
        s = s + y
    assert eg.grad(s, [x, y]) == [eg.const(1.0), eg.const(float(CHAIN))]
    if CHAIN <= 100_000:  # values of the sin chain: the gradient against differences
        env = {x: 0.3, y: 0.7}
        values = eg.evaluate([dx, dy, tangent], env)
        h = 1e-5
        moved = eg.evaluate(c, {x: np.array([0.3 + h, 0.3 - h, 0.3, 0.3]), y: np.array([0.7, 0.7, 0.7 + h, 0.7 - h])})
        want = [(moved[0] - moved[1]) / (2 * h), (moved[2] - moved[3]) / (2 * h)]
        np.testing.assert_allclose([values[0], values[1]], want, rtol=1e-5, atol=1e-9)
        assert np.isclose(values[2], values[0], rtol=1e-9)  # forward mode: the same partial
