"""The straight-line road in C (``_cvm.walk``, ``_cvm.encode_flat``, ``_cvm.encode_walked``) against its Python
twins (``lower_py``, ``_encode_flat_py``): the same program, the same encoding word for word, the same bits at run
time."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import exprgraph as eg
from exprgraph.compile import compile as eg_compile
from exprgraph.compile import vm
from exprgraph.compile.vm_ops import Encoded
from exprgraph.core import Term
from exprgraph.core.op import get_op
from exprgraph.errors import VMUnsupportedError

lower_mod = importlib.import_module("exprgraph.compile.lower")
vm_encode = importlib.import_module("exprgraph.compile.vm_encode")

needs_c = pytest.mark.skipif(
    lower_mod._native is None or vm_encode._native is None, reason="the vm extension's walk and encoding are not built"
)

XS = [eg.Symbol(f"x{i}") for i in range(4)]
N = eg.Symbol("n", "int64")
INPUTS = [*XS, N]
SPECIAL = [0.5, -2.0, 3.0, -0.0, float("nan"), float("inf")]
UNARY: list[Callable[[Term], Term]] = [eg.sin, eg.cos, eg.exp, lambda t: -t, eg.sqrt, abs, eg.log]
BINARY: list[Callable[[Term, Term], Term]] = [
    lambda a, b: a + b,
    lambda a, b: a * b,
    lambda a, b: a - b,
    lambda a, b: a / b,
    lambda a, b: a**2,  # a float64 to an int64 power
    lambda a, b: a**b,
    lambda a, b: eg.maximum(a, b),
    lambda a, b: eg.where(a < b, a, b),  # the Python road only
    lambda a, b: a * N,  # int64 operand: the Python road only
]
FOLDS = ["add", "mul", "maximum"]


@st.composite
def programs(draw: st.DrawFn) -> list[Term]:
    """Outputs of a random DAG: float ops, folds, powers, constants (nan, inf, -0.0), sometimes a subterm to fold."""
    pool: list[Term] = [*XS, *(eg.const(draw(st.sampled_from(SPECIAL))) for _ in range(2))]
    if draw(st.booleans()):
        pool.append(eg.const(2.0) * eg.const(draw(st.sampled_from(SPECIAL))))  # no symbol: lower_py folds it
    for _ in range(draw(st.integers(1, 30))):
        kind = draw(st.sampled_from(["unary", "binary", "binary", "binary", "fold"]))
        picks = [draw(st.sampled_from(pool)) for _ in range(draw(st.integers(3, 5)) if kind == "fold" else 2)]
        if kind == "unary":
            pool.append(draw(st.sampled_from(UNARY))(picks[0]))
        elif kind == "binary":
            pool.append(draw(st.sampled_from(BINARY[: draw(st.sampled_from([7, len(BINARY)]))]))(picks[0], picks[1]))
        else:
            pool.append(get_op(draw(st.sampled_from(FOLDS)))(*picks))
    outs = [t for t in pool[len(XS) :] if t.free_symbols]
    k = draw(st.integers(1, max(1, len(outs))))
    # inputs (an int64 one too) and constants as outputs, repeated: stored before anything runs
    extra = draw(st.sampled_from([[], [XS[0]], [pool[len(XS)]], [XS[1], pool[len(XS)], XS[1]], [N, eg.const(7)]]))
    return [*outs[-k:], *outs[-1:], *extra] if outs else [XS[0], *extra]


@contextmanager
def python_only() -> Iterator[None]:
    """The twins alone: the extension's walk and encoding switched off."""
    saved = lower_mod._native, vm_encode._native
    for module in (lower_mod, vm_encode):
        setattr(module, "_native", None)  # noqa: B010
    try:
        yield
    finally:
        for module, native in zip((lower_mod, vm_encode), saved, strict=True):
            setattr(module, "_native", native)  # noqa: B010


def _same_value(a: Any, b: Any) -> bool:
    return type(a) is type(b) and np.array_equal(np.asarray(a), np.asarray(b), equal_nan=True)


def assert_same_program(got: Any, want: Any) -> None:
    for name in ("inputs", "outputs", "steps", "used_inputs", "pointwise", "symbols", "fixed", "operands"):
        assert getattr(got, name) == getattr(want, name), name
    assert list(got.reads.items()) == list(want.reads.items())
    assert list(got.values) == list(want.values)
    assert all(_same_value(got.values[t], want.values[t]) for t in want.values)


def assert_same_encoding(got: Encoded, want: Encoded) -> None:
    for name, value in vars(want).items():
        mine = getattr(got, name)
        if isinstance(value, np.ndarray):
            assert mine.dtype == value.dtype and mine.shape == value.shape, name
            assert mine.tobytes() == value.tobytes(), name  # bit for bit (nan and -0.0 constants too)
        else:
            assert mine == value, name


@needs_c
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs())
def test_the_c_walk_lowers_what_lower_py_lowers(outs: list[Term]) -> None:
    walked = lower_mod._native.walk(tuple(outs), "symbol", "const")
    want = lower_mod.lower_py(outs, INPUTS)
    assert_same_program(lower_mod.lower(outs, INPUTS), want)
    if walked is None:  # declined: only for something to fold (the strategy makes no tensors or other leaves)
        assert any(t.args for t in want.values) or any(t.args for t in want.fixed)
    # the walk left no stamp behind: walking again, or a part of the program, gives the same
    assert_same_program(lower_mod.lower(outs[::-1], INPUTS), lower_mod.lower_py(outs[::-1], INPUTS))
    assert_same_program(lower_mod.lower(outs[:1], INPUTS), lower_mod.lower_py(outs[:1], INPUTS))


def _encode_both(outs: list[Term]) -> tuple[Any, Any]:
    """(encoding or error) of the extension's road and of the twin's, on the twin's lowering."""
    program = lower_mod.lower_py(outs, INPUTS)
    found = []
    for road in (vm_encode._encode_flat, lambda p: (vm_encode.check_supported(p), vm_encode._encode_flat_py(p))[1]):
        try:
            found.append(road(program))
        except VMUnsupportedError as e:
            found.append(type(e))
    return found[0], found[1]


@needs_c
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs())
def test_the_c_encoding_is_the_python_encoding(outs: list[Term]) -> None:
    got, want = _encode_both(outs)
    if isinstance(want, Encoded):
        assert isinstance(got, Encoded)
        assert_same_encoding(got, want)
    else:
        assert got is want


@needs_c
def test_the_c_walk_gives_each_constant_the_value_const_value_gives() -> None:
    x, y = XS[:2]
    kinds = [
        eg.const(1.5),
        eg.const(-0.0),
        eg.const(float("nan")),
        eg.const(3),
        eg.const(True),
        eg.const(np.float32(0.1)),
        eg.const(Fraction(1, 3)),
    ]
    outs = [x * k for k in kinds]  # each kind of scalar constant (numpy scalars of its dtype, a rational's float)
    got = lower_mod.lower([*outs, y], [y, *XS[2:], x])
    want = lower_mod.lower_py([*outs, y], [y, *XS[2:], x])
    assert got.walked is not None  # the extension's walk made it
    assert_same_program(got, want)
    assert got.used_inputs == (0, 3)


def _walked_args(program: Any) -> tuple[Any, ...]:
    inputs = tuple(program.inputs[i] for i in program.used_inputs)
    return (list(program.steps), inputs, program.outputs, program.values, vm_encode.flat_tables())


@needs_c
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs())
def test_the_encoding_from_the_walks_arrays_is_the_encoding_from_the_terms(outs: list[Term]) -> None:
    program = lower_mod.lower(outs, INPUTS)
    if program.walked is None:  # the walk declined: lower_py's program, encoded from its terms only
        return
    arrays, symbols = program.walked
    steps, *rest = _walked_args(program)
    got = vm_encode._native.encode_walked(arrays, steps, symbols, *rest)
    want = vm_encode._native.encode_flat(steps, *rest)
    assert got == want  # word for word (None: both decline, the twin runs)
    encoded = vm_encode._encode_flat(program)  # takes the arrays: the road the vm backend runs
    assert program.walked is None
    try:
        twin: Any = (vm_encode.check_supported(program), vm_encode._encode_flat_py(program))[1]
    except VMUnsupportedError:
        return
    assert_same_encoding(encoded, twin)


@needs_c
def test_the_walks_arrays_answer_for_their_own_program_only() -> None:
    x, y = XS[:2]
    one = lower_mod.lower([x * y + eg.sin(x), x * 2.0], INPUTS)
    other = lower_mod.lower([x * y - eg.cos(y), y * 2.0], INPUTS)
    steps, *rest = _walked_args(other)
    assert vm_encode._native.encode_walked(one.walked[0], steps, other.walked[1], *rest) is None
    assert vm_encode._native.encode_walked(object(), steps, other.walked[1], *rest) is None
    fewer = dict(list(other.values.items())[:-1])  # a program changed after its walk: the terms' road
    assert vm_encode._native.encode_walked(other.walked[0], steps, other.walked[1], *rest[:2], fewer, rest[3]) is None
    assert vm_encode._native.encode_walked(other.walked[0], steps[:-1], other.walked[1], *rest) is None
    assert vm_encode._native.encode_walked(other.walked[0], steps, other.walked[1], *rest) == (
        vm_encode._native.encode_flat(steps, *rest)
    )


@needs_c
def test_the_c_road_takes_float_programs() -> None:
    x, y = XS[:2]
    outs = [eg.add(x * y, eg.sin(x), x**2, eg.const(float("nan"))), x / y - eg.const(-0.0), eg.const(1.5), x]
    program = lower_mod.lower_py(outs, INPUTS)
    assert lower_mod._native.walk(tuple(outs), "symbol", "const") is not None
    found = vm_encode._native.encode_flat(
        program.steps, (x, y), program.outputs, program.values, vm_encode.flat_tables()
    )
    assert found is not None
    assert_same_encoding(vm_encode._encode_flat(program), vm_encode._encode_flat_py(program))


def _points(seed: int, n: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = rng.uniform(-2.0, 2.0, (n, len(INPUTS)))
    x[:, -1] = rng.integers(-3, 4, n)
    specials = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0])
    mask = rng.random((n, len(XS))) < 0.1
    x[:, : len(XS)][mask] = rng.choice(specials, mask.sum())
    return x


@needs_c
@pytest.mark.skipif(vm._native is None, reason="the vm extension is not built")
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs(), st.integers(0, 2**31), st.sampled_from([1, 7, 200]))
def test_both_roads_run_to_the_same_bits(outs: list[Term], seed: int, n: int) -> None:
    x = _points(seed, n)
    with np.errstate(all="ignore"):
        got = eg_compile(outs, INPUTS, "vm", packed=True, loops=False)(x)
        with python_only():
            want = eg_compile(outs, INPUTS, "vm", packed=True, loops=False)(x)
    assert got.tobytes() == want.tobytes()


def _walked_in_c(outs: list[Term]) -> bool:
    return lower_mod._native.walk(tuple(outs), "symbol", "const") is not None  # (the walk does not decline)


@st.composite
def wide_programs(draw: st.DrawFn) -> list[Term]:
    """Several random programs' outputs and many constants' products: more outputs and constants than the walk
    reads ahead (16), its reading ahead met at every position, to the last output and constant."""
    outs = [t for part in draw(st.lists(programs().filter(_walked_in_c), min_size=2, max_size=6)) for t in part]
    numbers = draw(st.lists(st.sampled_from([*SPECIAL, 1.25, -7.5, 1e-300]) | st.floats(-1e3, 1e3), min_size=20))
    scaled = [eg.const(v) * XS[i % len(XS)] for i, v in enumerate(numbers)]  # (a repeated value: one constant)
    cut = draw(st.integers(0, len(outs)))
    return [*outs[:cut], *scaled, *outs[cut:]]


@needs_c
@pytest.mark.skipif(vm._native is None, reason="the vm extension is not built")
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(wide_programs(), st.integers(0, 2**31))
def test_wide_programs_are_walked_as_lower_py_lowers_them_and_run_to_the_same_bits(outs: list[Term], seed: int) -> None:
    assert_same_program(lower_mod.lower(outs, INPUTS), lower_mod.lower_py(outs, INPUTS))
    x = _points(seed, 7)
    with np.errstate(all="ignore"):
        got = eg_compile(outs, INPUTS, "vm", packed=True, loops=False)(x)
        with python_only():
            want = eg_compile(outs, INPUTS, "vm", packed=True, loops=False)(x)
    assert got.tobytes() == want.tobytes()


@needs_c
def test_a_million_node_chain_is_walked_and_encoded() -> None:
    x = XS[0]
    t: Term = x
    for _ in range(500_000):  # t*0.5 + x: a chain of 10^6 nodes
        t = t * 0.5 + x
    program = lower_mod.lower([t], [x])
    assert len(program.steps) == 10**6 and program.reads[x] == 500_001
    value, want = 0.75, 0.75
    for _ in range(500_000):
        want = want * 0.5 + value
    f = eg_compile([t], [x], "vm", packed=True, loops=False)
    assert f(np.array([value]))[0] == want


@needs_c
def test_the_twin_still_refuses_what_the_machine_cannot_run() -> None:
    x, h = XS[0], eg.Symbol("h", "float32")
    with pytest.raises(VMUnsupportedError):
        eg_compile([h + 1], [h], "vm")
    with pytest.raises(VMUnsupportedError):  # a float32 constant under a float64 step
        eg_compile([x * eg.const(np.float32(2.0))], [x, h], "vm", loops=False)
