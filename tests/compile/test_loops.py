"""Loops over repeated structure: classes, keys, levels, and grouped builds equal to straight-line ones."""

from __future__ import annotations

import pickle
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import exprgraph as eg
from exprgraph.compile import cbuild, lower
from exprgraph.compile import compile as eg_compile
from exprgraph.compile.llvm_backend import llvm_available
from exprgraph.compile.structure import find_structure

HAVE_CC = any(cbuild.shutil.which(c) for c in ("cc", "gcc", "clang"))
needs_cc = pytest.mark.skipif(not HAVE_CC, reason="no C compiler")
needs_llvm = pytest.mark.skipif(not llvm_available(), reason="llvmlite is not installed")
BACKENDS = ["numpy", pytest.param("c", marks=needs_cc), pytest.param("llvm", marks=needs_llvm)]

#: ops whose vector and scalar versions round alike (so grouped and flat builds agree bit for bit)
EXACT = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "div": lambda a, b: a / b,
    "neg": lambda a, b: -a,
    "sqrt": lambda a, b: eg.sqrt(eg.abs(a)),
    "max": lambda a, b: eg.maximum(a, b),
}


@pytest.fixture(autouse=True)
def private_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EXPRGRAPH_CACHE", str(tmp_path_factory.getbasetemp() / "eg-cache"))


def network(n: int, m: int | None = None, flip: bool = False) -> tuple[list[eg.Term], list[eg.Term]]:
    """``n`` branch terms ``v_i*v_j*(g*cos(t_i - t_j) + b*sin(t_i - t_j))`` over ``m`` buses."""
    m = m or max(2, n // 3)
    v = [eg.Symbol(f"v{i}") for i in range(m)]
    t = [eg.Symbol(f"t{i}") for i in range(m)]
    inputs = v + t
    if flip:  # the same network over the buses in the opposite order
        v, t = v[::-1], t[::-1]
    outs = []
    for k in range(n):
        i, j = k % m, (k * 7 + 1) % m
        j = (j + 1) % m if i == j else j
        d = t[i] - t[j]
        outs.append(v[i] * v[j] * (eg.const(1.5 + 0.01 * k) * eg.cos(d) + eg.const(-0.7) * eg.sin(d)))
    return outs, inputs


@st.composite
def programs(draw: st.DrawFn) -> tuple[list[eg.Term], list[eg.Term]]:
    """Outputs of a few repeated shapes over random inputs and constants, irregular ones, and shared ones."""
    xs = [eg.Symbol(f"x{i}") for i in range(draw(st.integers(3, 12)))]
    outs: list[eg.Term] = []
    for _ in range(draw(st.integers(1, 3))):
        recipe = draw(
            st.lists(
                st.tuples(st.sampled_from(sorted(EXACT)), st.integers(0, 9), st.integers(0, 9)), min_size=1, max_size=6
            )
        )
        n_slots = draw(st.integers(1, 3))
        for _ in range(draw(st.integers(2, 30))):
            leaves = [draw(st.sampled_from(xs)) for _ in range(n_slots)]
            leaves.append(eg.const(draw(st.floats(-4, 4, allow_nan=False))))
            for name, i, j in recipe:
                leaves.append(EXACT[name](leaves[i % len(leaves)], leaves[j % len(leaves)]))
            outs.append(leaves[-1])
    for _ in range(draw(st.integers(0, 4))):  # irregular outputs, some reading earlier outputs
        a, b = draw(st.sampled_from(outs + xs)), draw(st.sampled_from(xs))
        outs.append(EXACT[draw(st.sampled_from(sorted(EXACT)))](a, b))
    known = st.sampled_from([*xs, eg.const(1.0), eg.const(-3.0), eg.const(0.25)])
    outs.extend(draw(st.lists(known, max_size=80)))  # outputs known without computing, many positions
    return outs, xs


@pytest.mark.parametrize("backend", BACKENDS)
@settings(max_examples=12, deadline=None)
@given(program=programs(), seed=st.integers(0, 2**16))
def test_grouped_builds_equal_straight_line_bit_for_bit(backend: str, program: tuple, seed: int) -> None:
    outs, xs = program
    grouped = eg_compile(outs, xs, backend, packed=True, loops=2)
    flat = eg_compile(outs, xs, backend, packed=True, loops=False)
    point = np.random.default_rng(seed).uniform(-3, 3, (5, len(xs)))
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(grouped(point), flat(point))
        np.testing.assert_array_equal(grouped(point[0]), flat(point[0]))
        arrays = eg_compile(outs, xs, backend, loops=2)(*point.T)  # arrays in, arrays out
        for got, want in zip(arrays, flat(point).T, strict=True):
            np.testing.assert_array_equal(got, want)
    assert not flat.info["classes"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_network_and_its_jacobian_become_a_few_loops(backend: str) -> None:
    outs, xs = network(300)
    jac = [eg.diff.grad(o, [s for s in xs if s in o.free_symbols])[0] for o in outs[:150]]
    fn = eg_compile(outs + jac, xs, backend, packed=True)
    flat = eg_compile(outs + jac, xs, backend, packed=True, loops=False)
    classes = fn.info["classes"]
    assert fn.info["grouped"] and 3 <= len(classes) <= 20 and fn.info["rest_steps"] < 50
    assert sum(c["members"] for c in classes) >= 450
    point = np.random.default_rng(1).normal(size=(3, len(xs)))
    np.testing.assert_allclose(fn(point), flat(point), rtol=1e-12, atol=1e-12)
    if backend != "numpy":
        assert len(fn.source) < len(flat.source) / 4


@pytest.mark.parametrize("backend", BACKENDS)
def test_grouped_programs_with_every_dtype_in_the_rest(backend: str) -> None:
    outs, xs = network(60, 10)
    i = eg.Symbol("i", "int64")
    flags = [outs[k] < outs[k + 1] for k in range(3)]  # bool outputs read from loop outputs
    mixed = [*outs, *flags, eg.where(flags[0], outs[0], outs[1]), i * 3, i + outs[2], xs[0], eg.const(4.0)]
    inputs = [*xs, i]
    grouped = eg_compile(mixed, inputs, backend, loops=4)
    flat = eg_compile(mixed, inputs, backend, loops=False)
    assert grouped.info["classes"]
    point = [*np.random.default_rng(5).normal(size=(len(xs), 3)), np.array([1, -2, 7])]
    for got, want in zip(grouped(*point), flat(*point), strict=True):
        assert np.asarray(got).dtype == np.asarray(want).dtype
        np.testing.assert_allclose(got, want, rtol=1e-13)
    rows = np.stack(point, 1).astype(float)
    np.testing.assert_allclose(
        eg_compile(mixed, inputs, backend, packed=True, loops=4)(rows),
        eg_compile(mixed, inputs, backend, packed=True, loops=False)(rows),
        rtol=1e-13,
    )


@needs_cc
def test_two_programs_of_one_shape_share_a_library_but_not_tables() -> None:
    a_outs, xs = network(64, 20)
    b_outs, _ = network(64, 20, flip=True)
    fa = eg_compile(a_outs, xs, "c", packed=True)
    fb = eg_compile(b_outs, xs, "c", packed=True)
    assert fa.source == fb.source  # one library from the cache, two tables
    point = np.random.default_rng(2).normal(size=len(xs))
    ref_a = eg_compile(a_outs, xs, "numpy", packed=True, loops=False)(point)
    ref_b = eg_compile(b_outs, xs, "numpy", packed=True, loops=False)(point)
    np.testing.assert_allclose(fa(point), ref_a, rtol=1e-13)
    np.testing.assert_allclose(fb(point), ref_b, rtol=1e-13)


def test_shared_values_are_roots_and_levels_order_them() -> None:
    x, y = eg.symbols("x y")
    xs = [eg.Symbol(f"x{i}") for i in range(20)]
    first = [eg.sin(s * x) for s in xs]
    second = [f * y + f for f in first]  # reads an output: a root of the level below
    s = find_structure(lower(first + second, [x, y, *xs]), threshold=4)
    levels = sorted(c.level for c in s.classes)
    assert levels == [0, 1] and not s.rest
    assert {str(c.body) for c in s.classes} == {"sin(s0*s1)", "s0*s1 + s0"}


def test_a_value_shared_inside_one_output_stays_in_its_region() -> None:
    xs = [eg.Symbol(f"x{i}") for i in range(20)]
    outs = [eg.sin(s * 2.0) * eg.cos(s * 2.0) for s in xs]
    s = find_structure(lower(outs, xs), threshold=4)
    assert len(s.classes) == 1 and s.classes[0].size == 4 and s.roots == set(outs)


def test_the_terms_of_a_long_sum_are_a_class() -> None:
    xs = [eg.Symbol(f"x{i}") for i in range(60)]
    total = eg.add(*(eg.exp(xs[i]) * xs[i + 1] for i in range(59)))
    fn = eg_compile(total, xs, "numpy", packed=True)
    assert [c["members"] for c in fn.info["classes"]] == [59]
    point = np.linspace(-1, 1, 60)
    assert fn(point)[0] == pytest.approx(float(eg.evaluate(total, dict(zip(xs, point, strict=True)))), rel=1e-13)


def test_loops_option_is_checked_and_pickled() -> None:
    outs, xs = network(40)
    with pytest.raises(ValueError, match="loops"):
        eg_compile(outs, xs, loops=1)
    fn = eg_compile(outs, xs, loops=False)
    again = pickle.loads(pickle.dumps(fn))
    assert not again.info["classes"]
    point = np.random.default_rng(3).normal(size=len(xs))
    np.testing.assert_array_equal(again(*point), fn(*point))


def test_structure_is_linear_and_iterative() -> None:
    x = eg.Symbol("x")
    chain = x
    for _ in range(100_000):
        chain = eg.sin(chain) + x  # a 10^5-deep region: no recursion
    s = find_structure(lower([chain], [x]))
    assert not s.classes and len(s.rest) == 200_000
    times = []
    for n in (2_000, 20_000):
        outs, xs = network(n)
        p = lower(outs, xs)
        start = time.process_time()
        found = find_structure(p)
        times.append(time.process_time() - start)
        assert found.grouped == len(found.roots)
    assert times[1] < 25 * max(times[0], 1e-3)


@pytest.mark.parametrize("backend", BACKENDS)
def test_many_outputs_known_without_computing(backend: str) -> None:
    outs, xs = network(40)
    known = [eg.const(1.0), eg.const(-2.5), xs[0], xs[3]] * 40  # 160 positions: copied by table loops
    mixed = [*outs, *known]
    fn = eg_compile(mixed, xs, backend, packed=True)
    point = np.random.default_rng(6).normal(size=(2, len(xs)))
    want = eg_compile(mixed, xs, "numpy", packed=True, loops=False)(point)
    np.testing.assert_allclose(fn(point), want, rtol=1e-13)
    np.testing.assert_array_equal(fn(point)[:, len(outs) :], want[:, len(outs) :])
