"""The vm at one point (``_cvm_one.c``): the dense scalar code gives the lane interpreter's bits, and libm's.

A packed call at one point runs the main program transcoded once into dense code: fused stores,
pairs of instructions under one dispatch, constants of products inline, and sin and cos of one
register computed by one ``sincos``. Its twin is the lane interpreter at one point (switched by
``exprgraph.compile.vm.ONE_POINT``): the two must give the same bits on every program, special
values included, and sin and cos must be libm's (Python's ``math`` calls the same libm).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import exprgraph as eg
from exprgraph.compile import vm
from exprgraph.compile.lower import lower
from exprgraph.compile.vm_ops import OPCODES
from exprgraph.core import Term
from exprgraph.errors import EvaluationError

needs_vm = pytest.mark.skipif(vm._native is None, reason="the vm extension is not built")

XS = [eg.Symbol(f"x{i}") for i in range(4)]
N = eg.Symbol("n", "int64")
SPECIAL = [0.0, -0.0, 1.0, -1.0, 0.5, 2.0, -3.5, 1e-300, 1e300, -1e300, math.inf, -math.inf, math.nan, 1e22, 7.0e15]
UNARY: list[Callable[[Term], Term]] = [
    eg.sin,
    eg.cos,
    eg.exp,
    eg.log,
    eg.sqrt,
    abs,
    lambda t: -t,
    lambda t: t**2,
    lambda t: t**3,
    lambda t: t**0.5,
]
BINARY: list[Callable[[Term, Term], Term]] = [
    lambda a, b: a + b,
    lambda a, b: a - b,
    lambda a, b: a * b,
    lambda a, b: a / b,
    lambda a, b: a**b,
]


def _machines(outs: list[Term], inputs: list[Term], loops: int = 0) -> tuple[vm.VMRunner, vm.VMRunner]:
    """The same program loaded with the dense one-point code and without it (the lane interpreter)."""
    program = lower(outs, inputs)
    old = vm.ONE_POINT
    try:
        vm.ONE_POINT = True
        dense = vm.build_vm(program, loops=loops)
        vm.ONE_POINT = False
        lanes = vm.build_vm(program, loops=loops)
    finally:
        vm.ONE_POINT = old
    assert dense.machine.one_words > 0 and lanes.machine.one_words == -1
    return dense, lanes


def _same_bits(got: np.ndarray, want: np.ndarray) -> None:
    """Equal bit for bit (a nan is any nan: its payload is the processor's choice)."""
    assert got.shape == want.shape
    nan = np.isnan(want)
    assert np.array_equal(np.isnan(got), nan)
    assert np.array_equal(got[~nan].view(np.int64), want[~nan].view(np.int64))


def _at(runner: vm.VMRunner, x: np.ndarray) -> np.ndarray:
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return runner.packed(x)


@st.composite
def programs(draw: st.DrawFn) -> list[Term]:
    """Float programs of the dense code's ops (and a few it runs through the lane interpreter)."""
    pool: list[Term] = [*XS, eg.const(draw(st.sampled_from([2.0, -0.5, 3.0, 0.0, -0.0])))]
    outs: list[Term] = []
    for _ in range(draw(st.integers(1, 30))):
        kind = draw(st.sampled_from(["unary", "binary", "binary", "const", "sincos", "other"]))
        a, b = draw(st.sampled_from(pool)), draw(st.sampled_from(pool))
        if kind == "unary":
            t = draw(st.sampled_from(UNARY))(a)
        elif kind == "binary":
            t = draw(st.sampled_from(BINARY))(a, b)
        elif kind == "const":  # a product by a constant, either side
            k = eg.const(draw(st.sampled_from([1.5, -2.0, 1e-3, 0.0])))
            t = k * a if draw(st.booleans()) else a * k
        elif kind == "sincos":  # the two functions of one value, other work between
            t = eg.sin(a) * b + eg.cos(a) if draw(st.booleans()) else eg.cos(a) - eg.sin(a) * a
        else:  # ops the dense code leaves to the lane interpreter
            t = draw(st.sampled_from([eg.tanh(a), eg.maximum(a, b), eg.where(a < b, a, b), eg.floor(a)]))
        pool.append(t)
        if draw(st.booleans()):
            outs.append(t)
    outs += draw(st.lists(st.sampled_from(pool), max_size=4))  # repeats, inputs and constants as outputs
    return outs or [pool[-1]]


@needs_vm
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs(), st.lists(st.sampled_from(SPECIAL), min_size=4, max_size=4), st.integers(0, 2**31))
def test_the_dense_code_gives_the_lane_interpreters_bits(outs: list[Term], special: list[float], seed: int) -> None:
    """Random programs at special and random points: the same bits through both interpreters."""
    dense, lanes = _machines(outs, XS)
    rng = np.random.default_rng(seed)
    for x in (np.array(special), rng.uniform(-3, 3, 4), rng.uniform(-1e6, 1e6, 4)):
        _same_bits(_at(dense, x), _at(lanes, x))


@needs_vm
def test_sin_and_cos_of_one_value_are_libms() -> None:
    """sin and cos of one register (fused into one sincos) are math.sin and math.cos, bit for bit."""
    x = XS[0]
    d = x - XS[1]
    outs = [eg.sin(d), XS[2] * eg.cos(d), eg.cos(x) * 2.0, XS[3] + eg.sin(x)]
    dense, lanes = _machines(outs, XS)
    rng = np.random.default_rng(7)
    values = [*SPECIAL, *rng.uniform(-10, 10, 200), *rng.uniform(-1e12, 1e12, 50)]
    values += list(10.0 ** rng.uniform(-300, 300, 50))
    for v in values:
        point = np.array([v, 0.25, 1.5, -0.75])
        got = _at(dense, point)
        diff = v - 0.25
        if math.isfinite(v):
            want = [math.sin(diff), 1.5 * math.cos(diff), math.cos(v) * 2.0, -0.75 + math.sin(v)]
            _same_bits(got, np.array(want))
        else:  # math refuses infinities; libm gives nan, as for nan
            assert np.isnan(got).all()
        _same_bits(got, _at(lanes, point))


@needs_vm
def test_loops_integers_and_stores_through_the_dense_code() -> None:
    """Class loops, int64 and bool work, outputs stored twice, inputs and constants as outputs: the same bits."""
    xs = [eg.Symbol(f"v{i}") for i in range(30)]
    outs: list[Term] = [xs[i] * xs[(i + 1) % 30] * eg.cos(xs[i] - xs[(i + 5) % 30]) for i in range(30)]
    outs += [eg.where(xs[0] < xs[1], xs[2] * 3.0, -xs[3]), (N * 3 + 1) * xs[4], N // 2 + N, xs[5] ** N]
    outs += [outs[0], xs[6], eg.const(-0.0), eg.sin(xs[7]) * eg.cos(xs[7])]
    rng = np.random.default_rng(3)
    for loops in (0, 2):
        dense, lanes = _machines(outs, [*xs, N], loops=loops)
        for _ in range(20):
            point = np.append(rng.uniform(-2, 2, 30), float(rng.integers(-5, 6)))
            got = _at(dense, point)
            _same_bits(got, _at(lanes, point))
            if loops == 0:  # many points: the dense code is for one point only, the lanes give the same
                np.testing.assert_allclose(got, _at(dense, np.stack([point, point]))[0], rtol=1e-15)


@needs_vm
def test_a_call_at_one_point_uses_the_dense_code_and_the_switch_turns_it_off() -> None:
    x, y = XS[:2]
    f = eg.compile([x * y + 1.0, eg.sin(x)], [x, y], "vm", packed=True)
    assert f.library.one_words > 0
    np.testing.assert_array_equal(f(np.array([2.0, 3.0])), [7.0, math.sin(2.0)])
    dense, lanes = _machines([x * y], [x, y])
    assert lanes.machine.one_words == -1
    _same_bits(_at(dense, np.array([1.5, -2.0])), np.array([-3.0]))


@needs_vm
def test_a_call_on_arrays_at_one_point_and_its_general_road() -> None:
    """Float64 rows go to the machine as buffers; anything else takes the general road, with the same values."""
    x, y = XS[:2]
    f = eg.compile([x * y + 1.0, eg.sin(x), y], [x, y], "vm", packed=True)
    want = np.array([7.0, math.sin(2.0), 3.0])
    row = np.array([2.0, 3.0])
    out = np.full(3, np.nan)
    assert f(row, out=out) is out
    _same_bits(out, want)
    _same_bits(f(row), want)
    _same_bits(f([2.0, 3.0]), want)  # a list: converted
    _same_bits(f(np.array([2, 3])), want)  # int64: converted
    _same_bits(f(np.array([2.0, 0.0, 3.0])[::2]), want)  # not contiguous: copied
    _same_bits(f(np.array([[2.0, 3.0]]))[0], want)  # one row as a matrix: a matrix back
    assert f(np.array([[2.0, 3.0]])).shape == (1, 3)
    frozen = np.empty(3)
    frozen.flags.writeable = False
    with pytest.raises(ValueError, match="writeable"):
        f(row, out=frozen)
    with pytest.raises(ValueError, match="shape"):
        f(np.array([2.0, 3.0, 4.0]))
    with pytest.raises(ValueError, match="out"):
        f(row, out=np.empty(3, dtype=np.float32))
    n = eg.Symbol("k", "int64")
    g = eg.compile([n**n], [n], "vm", packed=True)
    assert g(np.array([3.0]))[0] == 27.0
    with pytest.raises(EvaluationError, match="negative"):
        g(np.array([-1.0]))


def _machine(code: list[list[int]], nd: int, n_in: int, n_pk: int, one_point: bool) -> object:
    """A machine on hand-written straight-line code over doubles: input k in register k, column k."""
    assert vm._native is not None
    i32, f64 = np.int32, np.float64
    return vm._native.Machine(
        code=np.array(code, dtype=i32).ravel(),
        main_len=len(code),
        ints=np.zeros(1, i32),
        doubles=np.zeros(1, f64),
        nd=nd,
        ni=0,
        block=16,
        const_d_reg=np.zeros(0, i32),
        const_d_val=np.zeros(0, f64),
        const_i_reg=np.zeros(0, i32),
        const_i_val=np.zeros(0, i32).astype(np.int64),
        in_store=np.zeros(n_in, i32),
        in_reg=np.arange(n_in, dtype=i32),
        in_col=np.arange(n_in, dtype=i32),
        n_cols=n_in,
        n_out=0,
        n_pk=n_pk,
        one_point=one_point,
    )


@needs_vm
def test_sin_and_cos_are_not_joined_across_a_write_of_their_operand() -> None:
    """cos(r0); r0 = sin(r1) or r1; sin(r0): the last sin reads the new value (hand-written: no encoder does it)."""
    op = {name: k for k, name in enumerate(OPCODES)}
    by_sin = [[op["COS_D"], 2, 0, 0, 0], [op["SIN_D"], 0, 1, 1, 0], [op["SIN_D"], 3, 0, 0, 0]]
    moved = [[op["COS_D"], 2, 0, 0, 0], [op["MOV_D"], 0, 1, 1, 0], [op["SIN_D"], 3, 0, 0, 0]]
    kept = [[op["COS_D"], 2, 0, 0, 0], [op["MUL_D"], 4, 1, 1, 0], [op["SIN_D"], 3, 0, 0, 0]]
    stores = [[op["STORE_D"], -1, 2, 0, 0], [op["STORE_D"], -1, 3, 1, 0]]
    x = np.array([0.7, -2.1])
    cases = [
        (by_sin, [math.cos(0.7), math.sin(math.sin(-2.1))]),
        (moved, [math.cos(0.7), math.sin(-2.1)]),
        (kept, [math.cos(0.7), math.sin(0.7)]),
    ]
    for code, want in cases:
        for one_point in (True, False):
            m = _machine(code + stores, 5, 2, 2, one_point)
            out = np.zeros(2)
            assert m.one(x, out) == 0  # type: ignore[attr-defined]
            _same_bits(out, np.array(want))
