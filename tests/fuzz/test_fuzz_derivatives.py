"""Fuzzing the derivatives of random DAGs: gradients, second derivatives, Jacobians and the C sweeps.

Each example is a random DAG (diff_oracles.dag_outputs: shared subterms; smooth, partial and
piecewise ops; the int symbol k) checked at 24 random points at once: the gradient against
five-point differences along a random direction (points near a kink or a jump, or with huge or
non-finite intermediates, are left out), numeric_gradient against the gradient's terms, the Hessian
against differences of the gradient, dense against sparse, forward against reverse, block Hessians
against the Lagrangian's, and the C sweeps against their Python twins term for term.
"""

from __future__ import annotations

import numpy as np
import pytest
from diff_oracles import (
    FLOATS,
    assert_matches_differences,
    close,
    dag_outputs,
    dags,
    directional,
    finite_everywhere,
    python_sweeps,
    random_points,
    steady,
    stencil_env,
    values_at,
)
from eg_strategies import intermediate_scale
from fuzz_support import FUZZ
from hypothesis import given
from hypothesis import strategies as st

import exprgraph as eg
from exprgraph.diff import (
    block_hessian,
    hessian,
    hvp,
    jacobian,
    jacobian_and_block_hessian,
    jvp,
    numeric_gradient,
    sparse_hessian,
    sparse_jacobian,
    sweep,
    vjp,
)

POINTS = 24
SEEDS = st.integers(0, 2**32 - 1)
#: symbols standing for a direction's entries (tangents as terms, evaluated per point)
DX, DY, DZ = eg.symbols("dx dy dz")
TANGENTS = [DX, DY, DZ]


def _tangent_env(direction: dict) -> dict:
    return {t: direction[s] for t, s in zip(TANGENTS, FLOATS, strict=True)}


@FUZZ
@given(dags(), SEEDS)
def test_gradients_match_finite_differences_and_numeric_gradient(f: eg.Term, seed: int) -> None:
    center, direction, extra = random_points(seed, POINTS)
    env = {**center, **extra}
    g = eg.grad(f, list(FLOATS))
    partials = values_at(g, env, (POINTS,))
    # numeric_gradient: the same partials, without the user building the gradient
    numeric = numeric_gradient(f, env, list(FLOATS))
    for p, n in zip(partials, numeric, strict=True):
        assert np.all(close(np.broadcast_to(n, (POINTS,)), p, rtol=1e-12, atol=0.0)), f
    stencil = stencil_env(center, direction, extra)
    ok = steady([f, *g], stencil)
    (values,) = values_at([f], stencil, (POINTS, 7))
    assert_matches_differences(directional(partials, direction, FLOATS), values, ok, f)


@FUZZ
@given(dags(), SEEDS)
def test_partials_by_inner_nodes_are_the_gradients_by_them(f: eg.Term, seed: int) -> None:
    center, _, extra = random_points(seed, POINTS)
    env = {**center, **extra}
    inner = [n for n in eg.postorder(f) if n.args and n.dtype == "float64"][-4:]
    every = numeric_gradient(f, env, nodes=True)
    by_grad = values_at(eg.grad(f, inner), env, (POINTS,))
    for node, want in zip(inner, by_grad, strict=True):
        got = np.broadcast_to(np.asarray(every[node], dtype=np.float64), (POINTS,))
        assert np.all(close(got, want, rtol=1e-12, atol=0.0)), (f, node)
    assert np.all(close(np.broadcast_to(every[f], (POINTS,)), 1.0))  # df/df = 1


@FUZZ
@given(dags(10), SEEDS)
def test_second_derivatives_match_differences_of_the_gradient(f: eg.Term, seed: int) -> None:
    center, direction, extra = random_points(seed, POINTS)
    env = {**center, **extra}
    H = hessian(f, list(FLOATS))
    assert isinstance(H, list)
    g = eg.grad(f, list(FLOATS))
    entries = [e for row in H for e in row]
    numbers = values_at(entries, env, (POINTS,))
    dense = np.stack(numbers).reshape(3, 3, POINTS)
    stencil = stencil_env(center, direction, extra)
    ok = steady([f, *g, *entries], stencil)
    scale = intermediate_scale(entries, env)
    # symmetric, to the rounding of the intermediates
    with np.errstate(all="ignore"):
        sym = np.abs(dense - dense.transpose(1, 0, 2)) <= 1e-9 * scale
    assert np.all(sym[:, :, ok]), f
    # u^T H d against differences of <grad, u> along d
    rng = np.random.default_rng(seed + 1)
    u = rng.standard_normal((3, POINTS))
    along = np.einsum("ip,ijp,jp->p", u, dense, np.stack([direction[s] for s in FLOATS]))
    grads = values_at(g, stencil, (POINTS, 7))
    projected = sum(gi * u[i][:, None] for i, gi in enumerate(grads))
    assert_matches_differences(along, projected, ok, f"the Hessian of {f}", rtol=1e-5)
    # hvp (forward over reverse) is H d
    tangents = {**env, **_tangent_env(direction)}
    by_hvp = hvp(f, list(FLOATS), TANGENTS)
    products = values_at(by_hvp, tangents, (POINTS,))
    finite = ok & finite_everywhere([f, *entries, *by_hvp], tangents, POINTS)
    want = np.einsum("ijp,jp->ip", dense, np.stack([direction[s] for s in FLOATS]))
    for i in range(3):
        assert np.all(close(products[i], want[i], rtol=1e-8, atol=1e-9 * scale)[finite]), (f, i)
    # sparse: the same entries; every entry left out is zero at every point
    sparse = hessian(f, list(FLOATS), sparse=True)
    assert isinstance(sparse, eg.diff.SparseMatrix)
    stored = np.zeros((3, 3), dtype=bool)
    for (i, j, _), number in zip(sparse, values_at(sparse.values, env, (POINTS,)), strict=True):
        stored[i, j] = True
        assert np.all(close(number, dense[i, j], rtol=1e-9, atol=1e-9 * scale)[ok]), (f, i, j)
    for i, j in zip(*np.nonzero(~stored), strict=True):
        assert np.all(dense[i, j][ok] == 0.0), (f, i, j, "non-zero outside the sparse pattern")


@FUZZ
@given(dag_outputs(3), SEEDS)
def test_jacobians_dense_sparse_forward_and_reverse_agree(fs: list[eg.Term], seed: int) -> None:
    center, direction, extra = random_points(seed, POINTS)
    env = {**center, **extra, **_tangent_env(direction)}
    J = jacobian(fs, list(FLOATS))
    assert isinstance(J, list)
    dense = np.stack(values_at([e for row in J for e in row], env, (POINTS,))).reshape(len(fs), 3, POINTS)
    by_forward = jvp(fs, list(FLOATS), TANGENTS)
    ok = finite_everywhere([*fs, *(e for row in J for e in row), *by_forward], env, POINTS)
    scale = intermediate_scale([e for row in J for e in row], env)
    sparse = jacobian(fs, list(FLOATS), sparse=True)
    assert isinstance(sparse, eg.diff.SparseMatrix)
    stored = np.zeros((len(fs), 3), dtype=bool)
    for (i, j, _), number in zip(sparse, values_at(sparse.values, env, (POINTS,)), strict=True):
        stored[i, j] = True
        assert np.all(close(number, dense[i, j], rtol=1e-9, atol=1e-9 * scale)[ok]), (fs[i], j)
    for i, j in zip(*np.nonzero(~stored), strict=True):
        assert np.all(dense[i, j][ok] == 0.0), (fs[i], j, "non-zero outside the sparse pattern")
    d = np.stack([direction[s] for s in FLOATS])
    # forward (jvp) against the rows times the direction; reverse (vjp) against a row scaled
    forward = values_at(by_forward, env, (POINTS,))
    for i, f in enumerate(fs):
        want = np.einsum("jp,jp->p", dense[i], d)
        assert np.all(close(forward[i], want, rtol=1e-8, atol=1e-9 * scale)[ok]), f
        back = values_at(vjp(f, list(FLOATS), DX), env, (POINTS,))
        for j in range(3):
            assert np.all(close(back[j], dense[i, j] * direction[FLOATS[0]], rtol=1e-9, atol=1e-9 * scale)[ok]), f


@FUZZ
@given(dag_outputs(3, max_steps=10), SEEDS)
def test_block_hessians_add_up_to_the_lagrangians_hessian(fs: list[eg.Term], seed: int) -> None:
    center, _, extra = random_points(seed, 6)
    env = {**center, **extra}
    weights = np.random.default_rng(seed).uniform(-2.0, 2.0, len(fs))
    blocks = block_hessian(fs, list(FLOATS))
    lagrangian = eg.add(*(eg.const(float(w)) * f for w, f in zip(weights, fs, strict=True)))
    whole = sparse_hessian(lagrangian, list(FLOATS))
    numbers = values_at(blocks.values, env, (6,)) if blocks.values else []
    whole_numbers = values_at(whole.values, env, (6,)) if whole.values else []
    scale = intermediate_scale([lagrangian, *whole.values], env)
    for p in range(6):
        assembled = blocks.assemble(np.array([n[p] for n in numbers]), weights)
        got = np.zeros((3, 3))
        got[blocks.rows, blocks.cols] = assembled
        want = np.zeros((3, 3))
        want[whole.rows, whole.cols] = [n[p] for n in whole_numbers]
        want = np.tril(want)
        if np.all(np.isfinite(want)) and np.all(np.isfinite(got)):
            assert np.all(close(got, want, rtol=1e-8, atol=1e-9 * scale[p])), (fs, p, got, want)
    # the Jacobian that comes with them: sparse_jacobian's terms, entry for entry
    J, again = jacobian_and_block_hessian(fs, list(FLOATS), 1)
    alone = sparse_jacobian(fs[1:], list(FLOATS))
    assert (J.rows, J.cols, J.values) == (alone.rows, alone.cols, alone.values)
    assert (again.rows, again.cols, again.values) == (blocks.rows, blocks.cols, blocks.values)
    assert again.term.tolist() == blocks.term.tolist() and again.position.tolist() == blocks.position.tolist()


def _everything(fs: list[eg.Term]) -> list[object]:
    """Every derivative diff builds of ``fs`` (terms, and sparse matrices as their fields)."""
    f = fs[0]
    sj = sparse_jacobian(fs, list(FLOATS))
    sh = sparse_hessian(f, list(FLOATS))
    bh = block_hessian(fs, list(FLOATS))
    return [
        eg.grad(f, list(FLOATS)),
        eg.grad(f, [n for n in eg.postorder(f) if n.args][-3:]),
        jacobian(fs, list(FLOATS)),
        (sj.rows, sj.cols, sj.values),
        (sh.rows, sh.cols, sh.values),
        (bh.rows, bh.cols, bh.values, bh.term.tolist(), bh.position.tolist()),
        jvp(fs, list(FLOATS), TANGENTS),
        hvp(f, list(FLOATS), TANGENTS),
        vjp(f, list(FLOATS), DX),
    ]


@pytest.mark.skipif(not sweep.native(), reason="the C sweeps are not built (or EXPRGRAPH_PURE_PYTHON is set)")
@FUZZ
@given(dag_outputs(3))
def test_the_c_sweeps_build_the_python_twins_terms(fs: list[eg.Term]) -> None:
    in_c = _everything(fs)
    with python_sweeps():
        in_python = _everything(fs)
    for got, want in zip(in_c, in_python, strict=True):
        assert got == want, fs


def test_partials_by_a_constant_are_the_partials_by_a_symbol_in_its_place() -> None:
    # regression: the sweeps found no adjoint at a constant node (rules send constants nothing), so
    # grad(sin(x*2.0)*y + 2.0*2.0, const(2.0)) read 0.0, and so did jacobian, hessian, jvp and hvp
    x, y = FLOATS[:2]
    c, s = eg.const(2.0), eg.Symbol("s")
    f = eg.sin(x * c) * y + c * c
    env = {x: 0.3, y: 0.7, s: 2.0}
    want = eg.evaluate([x * eg.cos(x * s) * y + 2 * s, 2.0 - x * x * y * eg.sin(2 * x)], env)
    assert np.isclose(eg.evaluate(eg.grad(f, c), env), want[0], rtol=1e-14)
    assert np.isclose(eg.evaluate(jvp(f, [c, x], [1.0, 0.0]), env), want[0], rtol=1e-14)
    assert np.isclose(eg.evaluate(hvp(f, [c, x], [1.0, 0.0])[0], env), want[1], rtol=1e-14)
    assert np.isclose(eg.evaluate(hessian(f, [c, x], sparse=True).to_dense()[0][0], env), want[1], rtol=1e-14)
    assert np.isclose(eg.evaluate(jacobian([f], [c, x])[0][0], env), want[0], rtol=1e-14)
    # the block Hessian read 1/x for d2(c/x)/dc2 (its sweeps took the constant's column for x's)
    blocks = block_hessian([c / x, f], [c, x])
    summed = blocks.summed([1.0, 0.0])
    entries = dict(zip(zip(summed.rows, summed.cols, strict=True), eg.evaluate(summed.values, env), strict=True))
    assert entries.get((0, 0), 0.0) == 0.0 and np.isclose(entries[(1, 0)], -1.0 / 0.3**2, rtol=1e-14)
    # an int constant: a float partial, put back as the float of its value
    three = eg.const(3)
    by_three = eg.grad(x**three * three, three)
    assert by_three.dtype == "float64"
    assert np.isclose(eg.evaluate(by_three, {x: 1.5}), 1.5**3 * (1 + 3 * np.log(1.5)), rtol=1e-14)


@FUZZ
@given(dags(), SEEDS)
def test_partials_by_constants_match_partials_by_stand_in_symbols(f: eg.Term, seed: int) -> None:
    consts = [n for n in eg.postorder(f) if n.is_const and n.dtype == "float64"]
    center, direction, extra = random_points(seed, POINTS)
    wrt = [*consts, *FLOATS]
    symbols = [eg.Symbol(f"c{k}") for k in range(len(consts))]
    g = eg.substitute(f, dict(zip(consts, symbols, strict=True)))
    env = {**center, **extra, **{s: c.value for s, c in zip(symbols, consts, strict=True)}}
    got = values_at(eg.grad(f, wrt), env, (POINTS,))
    want = values_at(eg.grad(g, [*symbols, *FLOATS]), env, (POINTS,))
    for a, b in zip(got, want, strict=True):
        assert np.all(close(a, b, rtol=1e-12, atol=1e-300)), f
    numeric = numeric_gradient(f, env, wrt)
    for a, b in zip(numeric, want, strict=True):
        assert np.all(close(np.broadcast_to(a, (POINTS,)), b, rtol=1e-12, atol=1e-300)), f
    tangent = {**env, **_tangent_env(direction)}
    along = values_at([jvp(f, [*consts, FLOATS[0]], [*([1.0] * len(consts)), DX])], tangent, (POINTS,))[0]
    by_symbols = jvp(g, [*symbols, FLOATS[0]], [*([1.0] * len(symbols)), DX])
    assert np.all(close(along, values_at([by_symbols], tangent, (POINTS,))[0], rtol=1e-12, atol=1e-300)), f
    # second derivatives by constants: the sparse Hessian and the block Hessian's entries, as by the symbols
    n = len(wrt)
    for by_constants, by_symbols_ in (
        (sparse_hessian(f, wrt), sparse_hessian(g, [*symbols, *FLOATS])),
        (block_hessian([f], wrt).summed([1.0]), block_hessian([g], [*symbols, *FLOATS]).summed([1.0])),
    ):
        got_matrix, want_matrix = np.zeros((n, n, POINTS)), np.zeros((n, n, POINTS))
        for (i, j, _), v in zip(by_constants, values_at(by_constants.values, env, (POINTS,)), strict=True):
            got_matrix[i, j] = v
        for (i, j, _), v in zip(by_symbols_, values_at(by_symbols_.values, env, (POINTS,)), strict=True):
            want_matrix[i, j] = v
        assert np.all(close(got_matrix, want_matrix, rtol=1e-12, atol=1e-300)), f
