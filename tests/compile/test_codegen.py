"""The one lowering and the C generator built on it: parts, units, packed calls, pickling, linear codegen."""

from __future__ import annotations

import itertools
import pickle
import re
import time

import numpy as np
import pytest
from eg_strategies import SYMBOLS, X, Y, Z, assert_close_conditioned, random_terms, special_points, terms
from hypothesis import given, settings
from hypothesis import strategies as st

import exprgraph as eg
from exprgraph.compile import cbuild, lower
from exprgraph.compile import compile as eg_compile
from exprgraph.compile.c_emit import FOLD_WIDTH, PART_SIZE, emit_c
from exprgraph.compile.llvm_backend import llvm_available
from exprgraph.compile.lower import chain_folds, plan_rows
from exprgraph.diff import grad
from exprgraph.errors import CompileError, EvaluationError

x, y, z = X, Y, Z
HAVE_CC = any(cbuild.shutil.which(c) for c in ("cc", "gcc", "clang"))
needs_cc = pytest.mark.skipif(not HAVE_CC, reason="no C compiler")
needs_llvm = pytest.mark.skipif(not llvm_available(), reason="llvmlite is not installed")
NATIVE = [pytest.param("c", marks=needs_cc), pytest.param("llvm", marks=needs_llvm)]


@pytest.fixture(autouse=True)
def private_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EXPRGRAPH_CACHE", str(tmp_path_factory.getbasetemp() / "eg-cache"))


def chain_sum(n: int) -> tuple[eg.Term, list[eg.Term]]:
    xs = [eg.Symbol(f"x{i}") for i in range(n + 1)]
    return eg.add(*(eg.sin(xs[i] * xs[i + 1]) + eg.exp(xs[i]) / (1 + xs[i] ** 2) for i in range(n))), xs


# -- the lowering ------------------------------------------------------------------------------------


def test_lowering_folds_constants_once_and_keeps_order() -> None:
    c = eg.const(2.0)
    f = eg.sin(x * y) * eg.exp(c * 3.0) + eg.sin(x * y)
    p = lower([f, x * y], [x, y, z])
    assert [str(t) for t in p.steps] == ["x*y", "sin(x*y)", "sin(x*y)*exp(2.0*3.0)", str(f)]
    folded = [t for t in p.values if t.args]
    assert [str(t) for t in folded] == ["exp(2.0*3.0)"] and float(p.values[folded[0]]) == pytest.approx(np.exp(6.0))
    assert p.used_inputs == (0, 1) and p.pointwise
    last = p.last_use()
    assert last[p.steps[1]] == 3 and last[p.steps[0]] == len(p.steps)  # x*y is an output: read to the end
    assert p.reads[p.steps[0]] == 1 + 1  # read by the shared sin(x*y) once, and as an output


def test_a_fold_that_fails_stays_a_run_time_step() -> None:
    i = eg.Symbol("i", "int64")
    bad = eg.const(2) ** eg.const(-1)  # an int64 power with a negative exponent raises when evaluated
    p = lower([i + bad], [i])
    assert bad in p.steps
    for backend in ("numpy", *(("c",) if HAVE_CC else ())):
        with pytest.raises(EvaluationError, match="negative"):
            eg_compile(i + bad, [i], backend=backend)(np.array([1, 2]))


def test_row_plan_reuses_rows_after_the_last_reader() -> None:
    f, xs = chain_sum(40)
    p = lower([f, *grad(f, xs)], xs)
    part_of = {node: k // 16 for k, node in enumerate(p.steps)}
    plan = plan_rows(p, part_of, fixed=xs)
    crossing = {t for t in p.steps if t in plan.row}
    assert plan.count["float64"] < len(crossing) + len(xs)  # some rows serve several values
    # no two values share a row while both are live
    last = p.last_use()
    live: dict[int, list[tuple[int, int]]] = {}
    for t in crossing:
        first = part_of[t]
        end = part_of[p.steps[last[t]]] if last[t] < len(p.steps) else 10**9
        live.setdefault(plan.row[t], []).append((first, end))
    for spans in live.values():
        spans.sort()
        for (_, a1), (b0, _) in itertools.pairwise(spans):
            assert b0 > a1, spans


def test_the_numpy_backend_generates_code_linear_in_the_operands() -> None:
    # 20x the operands must not take 400x the time (it used to be quadratic)
    def gen_time(n: int) -> float:
        xs = [eg.Symbol(f"s{i}") for i in range(n)]
        total = eg.add(*xs) * eg.mul(*xs[: n // 2])
        start = time.process_time()
        fn = eg_compile(total, xs)
        elapsed = time.process_time() - start
        values = np.linspace(0.5, 1.5, n)
        assert float(fn(*values)) == pytest.approx(float(np.sum(values) * np.prod(values[: n // 2])), rel=1e-12)
        return elapsed

    small, large = gen_time(250), gen_time(5000)
    assert large < 60 * max(small, 1e-3)


# -- the C generator ------------------------------------------------------------------------------------


@needs_cc
def test_parts_and_units_agree_with_evaluate() -> None:
    f, xs = chain_sum(60)
    outs = [f, *grad(f, xs)]
    p = lower(outs, xs)
    src = emit_c(p, part_size=16, units=3)
    assert len(src.units) == 3 and src.text.count("void eg_part") >= 2 * (len(p.steps) // 16)
    lib, _ = cbuild.build_library(src.units, opt="-O1")
    from exprgraph.compile.c_backend import CRunner

    runner = CRunner(p, src, lib)
    rng = np.random.default_rng(3)
    point = rng.uniform(-1.5, 1.5, (37, len(xs)))  # not a multiple of the block
    got = runner.packed(point)
    want = np.array(eg.evaluate(outs, {s: point[:, k] for k, s in enumerate(xs)})).T
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)
    one = runner.run(*point[0])
    np.testing.assert_allclose([float(v) for v in one], want[0], rtol=1e-12, atol=1e-14)


@needs_cc
def test_big_programs_are_cut_into_parts_and_units() -> None:
    f, xs = chain_sum(400)
    fn = eg_compile([f, *grad(f, xs)], xs, backend="c", packed=True, loops=False)
    assert fn.source.count("#define EG_B 8") >= 2  # several translation units
    assert fn.source.count("void eg_part") > 50
    point = np.random.default_rng(0).uniform(-1, 1, len(xs))
    want = np.array(eg.evaluate([f, *grad(f, xs)], {s: point[k] for k, s in enumerate(xs)}), dtype=float)
    np.testing.assert_allclose(fn(point), want, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("backend", NATIVE)
@settings(max_examples=15, deadline=None)
@given(outs=st.lists(terms(smooth=False), min_size=1, max_size=4), seed=st.integers(0, 2**16))
def test_random_terms_agree_with_evaluate_on_special_points(backend: str, outs: list[eg.Term], seed: int) -> None:
    fn = eg_compile(outs, SYMBOLS, backend=backend)
    values = special_points(24, seed=seed)
    env = dict(zip(SYMBOLS, values, strict=True))
    for t, a, b in zip(outs, fn(*values), eg.evaluate(outs, env), strict=True):
        assert_close_conditioned(t, a, b, env)


# -- packed calls ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", ["numpy", *NATIVE])
def test_packed_calls(backend: str) -> None:
    i = eg.Symbol("i", "int64")
    outs = [x * y + eg.sin(z), eg.const(2.5), y, (x < y) & (i > 0), i * 3]
    fn = eg_compile(outs, [x, y, z, i], backend=backend, packed=True)
    assert fn.packed and "packed" in repr(fn)
    rows = np.array([[1.0, 2.0, 0.5, 3.0], [2.0, -1.0, 0.0, -1.0], [0.0, 0.0, np.nan, 0.0]])
    got = fn(rows)
    assert got.shape == (3, 5) and got.dtype == np.float64
    want = eg.evaluate(outs, {x: rows[:, 0], y: rows[:, 1], z: rows[:, 2], i: rows[:, 3].astype(int)})
    np.testing.assert_array_equal(got, np.stack(np.broadcast_arrays(*want), 1).astype(float))
    one = fn(rows[0])
    assert one.shape == (5,) and np.array_equal(one, got[0])
    out = np.zeros(5)
    assert fn(rows[1], out=out) is out and np.array_equal(out, got[1])
    with pytest.raises(ValueError, match="shape"):
        fn(np.ones(3))
    with pytest.raises(TypeError, match="one array"):
        fn(1.0, 2.0)
    with pytest.raises(ValueError, match="out"):
        fn(rows, out=np.zeros(5))
    assert fn(np.zeros((0, 4))).shape == (0, 5)


@pytest.mark.parametrize("backend", NATIVE)
def test_packed_negative_integer_power_raises(backend: str) -> None:
    i, j = eg.symbols("i j", dtype="int64")
    fn = eg_compile(i**j, [i, j], backend=backend, packed=True)
    assert fn(np.array([2.0, 3.0])).tolist() == [8.0]
    with pytest.raises(EvaluationError, match="negative"):
        fn(np.array([2.0, -1.0]))


@needs_cc
def test_packed_calls_from_threads_use_their_own_workspace() -> None:
    import threading

    f, xs = chain_sum(30)
    fn = eg_compile([f, *grad(f, xs)], xs, backend="c", packed=True)
    rng = np.random.default_rng(1)
    points = [rng.uniform(-1, 1, (50, len(xs))) for _ in range(4)]
    wants = [fn(p) for p in points]
    errors: list[BaseException] = []

    def work(k: int) -> None:
        try:
            for _ in range(30):
                assert np.array_equal(fn(points[k]), wants[k])
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


# -- pickling -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", ["numpy", *NATIVE])
@pytest.mark.parametrize("packed", [False, True])
def test_compiled_functions_pickle_as_terms_and_options(backend: str, packed: bool) -> None:
    outs = random_terms(6, seed=9)
    fn = eg_compile(outs, SYMBOLS, backend=backend, packed=packed)
    again = pickle.loads(pickle.dumps(fn))
    assert again.backend == backend and again.packed == packed and again.outputs == fn.outputs
    values = special_points(16, seed=4)
    if packed:
        rows = np.stack(values, 1)
        np.testing.assert_array_equal(again(rows), fn(rows))
    else:
        for a, b in zip(again(*values), fn(*values), strict=True):
            np.testing.assert_array_equal(a, b)


# -- the LLVM backend ------------------------------------------------------------------------------------


@needs_llvm
def test_llvm_gradients_agree_with_the_c_backend_and_evaluate() -> None:
    f, xs = chain_sum(50)
    outs = [f, *grad(f, xs)]
    fn = eg_compile(outs, xs, backend="llvm", packed=True)
    assert "define i32 @eg_run" in fn.source and "@llvm.sin.f64" in fn.source
    point = np.random.default_rng(2).uniform(-1.5, 1.5, (19, len(xs)))
    want = np.array(eg.evaluate(outs, {s: point[:, k] for k, s in enumerate(xs)})).T
    np.testing.assert_allclose(fn(point), want, rtol=1e-12, atol=1e-14)
    if HAVE_CC:
        np.testing.assert_allclose(fn(point), eg_compile(outs, xs, backend="c", packed=True)(point), rtol=1e-12)


@needs_llvm
def test_llvm_broadcasts_like_numpy_and_refuses_tensors() -> None:
    fn = eg_compile([x * y + z, x < y], [x, y, z], backend="llvm")
    got = fn(np.array([[1.0], [2.0]]), np.array([10.0, 20.0]), 0.5)
    assert got[0].tolist() == [[10.5, 20.5], [20.5, 40.5]] and got[1].dtype == np.bool_
    a = eg.Symbol("A", shape=("m", "n"))
    with pytest.raises(CompileError, match="constant length"):
        eg_compile(eg.sum(a), [a], backend="llvm")


def test_an_op_without_an_llvm_rendering_is_a_clear_error() -> None:
    op = eg.register_op(
        eg.Op("twice_t", 1, lambda args, attr: (args[0].dtype, ()), impl=lambda v: 2 * v, c_render="(2 * {0})"),
        replace=True,
    )
    if not llvm_available():
        pytest.skip("llvmlite is not installed")
    with pytest.raises(CompileError, match="no LLVM rendering"):
        eg_compile(op(x), [x], backend="llvm")


@pytest.mark.parametrize("backend", ["numpy", *NATIVE])
def test_a_sparse_hessian_compiles_to_one_packed_output(backend: str) -> None:
    from exprgraph.diff import hessian

    f, xs = chain_sum(12)
    h = hessian(f, xs, sparse=True)
    fn = eg_compile(h, xs, backend=backend, packed=True)
    point = np.random.default_rng(5).uniform(-1, 1, len(xs))
    got = fn(point)
    assert got.shape == (h.nnz,)
    dense = np.array(
        [[float(eg.evaluate(t, dict(zip(xs, point, strict=True)))) for t in row] for row in hessian(f, xs)]
    )
    np.testing.assert_allclose(h.to_dense(got), dense, rtol=1e-12, atol=1e-14)


@needs_cc
def test_a_long_fold_is_written_a_few_operands_per_statement() -> None:
    # one expression nesting 10^5 folds deep crashed the C compiler's parser; numpy's fold order is kept
    xs = [eg.Symbol(f"s{i}") for i in range(3000)]
    ints = [eg.Symbol(f"n{i}", "int64") for i in range(3)]
    total = eg.add(*ints, *xs)  # the ints are added first, in int64, as numpy's left fold does
    fn = eg_compile(total, [*ints, *xs], backend="c", packed=True)
    assert max(len(line) for line in fn.source.splitlines()) < 400
    row = np.concatenate([[2.0**62, 2.0**62, 1.0], np.linspace(0.0, 1.0, 3000)])
    want = eg.evaluate(
        total, {**{s: int(v) for s, v in zip(ints, row, strict=False)}, **dict(zip(xs, row[3:], strict=True))}
    )
    assert fn(row)[0] == float(want)


def test_a_fold_longer_than_a_part_is_a_chain_of_parts() -> None:
    # one C function per part: a fold of 10^5 operands in one function took gcc minutes and 7 GB
    xs = [eg.Symbol(f"s{i}") for i in range(2000)]
    total = eg.add(*xs)
    program = chain_folds(lower([total], xs), 1 + PART_SIZE * (FOLD_WIDTH - 1))
    assert all(len(program.args_of(node)) <= 1 + PART_SIZE * (FOLD_WIDTH - 1) for node in program.steps)
    assert program.steps[-1] is total and len(program.steps) == -(-2000 // (1 + PART_SIZE * (FOLD_WIDTH - 1)))
    source = emit_c(lower([total], xs))
    bodies = re.findall(r"void eg_part\d+\(int nb[^;]*?\)\n\{.*?\n\}", "\n".join(source.units), re.S)
    assert len(bodies) == len(program.steps)
    assert max(body.count("const double") for body in bodies) <= PART_SIZE
    fn = eg_compile(total, xs, backend="c", packed=True)
    row = np.random.default_rng(3).uniform(-1.0, 1.0, 2000)
    assert fn(row)[0] == float(eg.evaluate(total, dict(zip(xs, row, strict=True))))  # the same left-to-right order
