"""The vm's register allocation: the extension's pass and its Python twin give the same code, and it runs right."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import exprgraph as eg
from exprgraph.compile import compile as eg_compile
from exprgraph.compile import lower, vm, vm_alloc
from exprgraph.compile.vm_alloc import UNUSED, allocate, allocate_py
from exprgraph.compile.vm_encode import encode
from exprgraph.compile.vm_ops import OPCODE, WORDS
from exprgraph.core import Term
from exprgraph.errors import CompileError

needs_vm = pytest.mark.skipif(vm._native is None, reason="the vm extension is not built")
needs_native_alloc = pytest.mark.skipif(vm_alloc._native is None, reason="the extension's allocate is not built")

XS = [eg.Symbol(f"x{i}") for i in range(4)]
N = eg.Symbol("n", "int64")
UNARY: list[Callable[[Term], Term]] = [eg.sin, eg.cos, eg.exp, lambda t: -t, eg.sqrt, abs]
BINARY: list[Callable[[Term, Term], Term]] = [
    lambda a, b: a + b,
    lambda a, b: a * b,
    lambda a, b: a - b,
    lambda a, b: a / b,
    lambda a, b: a**2,
    lambda a, b: eg.where(a < b, a, b),
    lambda a, b: a * N,
]


@st.composite
def programs(draw: st.DrawFn) -> list[Term]:
    """Outputs of a random DAG: float ops, folds, integer powers, comparisons, an int64 input, constants, repeats."""
    pool: list[Term] = [*XS, eg.const(draw(st.sampled_from([0.5, -2.0, 3.0])))]
    for _ in range(draw(st.integers(1, 30))):
        kind = draw(st.sampled_from(["unary", "binary", "binary", "fold"]))
        picks = [draw(st.sampled_from(pool)) for _ in range(draw(st.integers(3, 5)) if kind == "fold" else 2)]
        if kind == "unary":
            pool.append(draw(st.sampled_from(UNARY))(picks[0]))
        elif kind == "binary":
            pool.append(draw(st.sampled_from(BINARY))(picks[0], picks[1]))
        else:
            pool.append(eg.add(*picks))
    outs = [t for t in pool[len(XS) :] if t.free_symbols]
    k = draw(st.integers(1, max(1, len(outs))))
    return [*outs[-k:], outs[-1], XS[0]] if outs else [XS[0]]  # a repeated output and an input as outputs


def _virtual(outs: list[Term]) -> tuple[np.ndarray, ...]:
    """The virtual code and value tables the straight-line encoder hands to allocate (captured)."""
    seen: list[tuple[np.ndarray, ...]] = []

    def capture(code: np.ndarray, kinds: np.ndarray, pinned: np.ndarray, inputs: np.ndarray) -> vm_alloc.Allocation:
        seen.append((code.copy(), kinds.copy(), pinned.copy(), inputs.copy()))
        return allocate(code, kinds, pinned, inputs)

    saved = vm_alloc.allocate
    vm_alloc.allocate = capture  # both encodings call it from vm_alloc's finishers
    try:
        encode(lower(outs, [*XS, N]))
    finally:
        vm_alloc.allocate = saved
    return seen[0]


@needs_native_alloc
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs())
def test_the_extension_and_its_twin_allocate_alike(outs: list[Term]) -> None:
    code, kinds, pinned, inputs = _virtual(outs)
    native = allocate(code, kinds, pinned, inputs)
    twin = allocate_py(code, kinds, pinned, inputs)
    np.testing.assert_array_equal(native[0], twin[0])
    np.testing.assert_array_equal(native[1], twin[1])
    assert native[2:] == twin[2:]
    # registers follow the program's width: never more than one per value, fewer when values die
    assert native[2] + native[3] <= len(kinds)


@needs_vm
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs(), st.integers(0, 2**31), st.sampled_from([1, 9, 300]))
def test_straight_line_vm_code_gives_numpy_values(outs: list[Term], seed: int, n: int) -> None:
    rng = np.random.default_rng(seed)
    args = [*rng.uniform(0.1, 2.0, (len(XS), n)), rng.integers(-3, 4, n)]
    got = eg_compile(outs, [*XS, N], "vm", loops=False)(*args)
    want = eg_compile(outs, [*XS, N], "numpy", loops=False)(*args)
    for a, b in zip(got, want, strict=True):
        # libmvec and numpy's libm may differ by an ulp, which a cancelling sum turns into a larger relative
        # difference of a small value: an absolute allowance at the scale of the intermediates (inputs <= 2)
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-13, equal_nan=True)


def test_a_wide_program_reuses_registers() -> None:
    x = eg.Symbol("x")
    outs = [eg.sin(x * float(k)) * eg.cos(x + float(k)) for k in range(200)]
    encoded = encode(lower(outs, [x]))
    # the width is a few values, not 200 outputs (each of the 200 constants keeps a register of its own)
    assert len(encoded.const_d_reg) == 200 and encoded.nd - 200 < 8


@pytest.mark.parametrize("impl", [allocate_py, pytest.param(allocate, marks=needs_native_alloc)])
def test_bad_code_is_refused(impl: object) -> None:
    add = OPCODE["ADD_D"]
    kinds, pinned, none = np.zeros(2, np.int32), np.zeros(2, np.int32), np.zeros(0, np.int32)
    reads_nothing = np.array([add, 1, 5, UNUSED, UNUSED], dtype=np.int32)  # value 5 of 2
    loop = np.array([OPCODE["LOOP"], 0, 0, 0, 0], dtype=np.int32)
    for code in (reads_nothing, loop):
        with pytest.raises(CompileError, match="vm allocat"):
            impl(code, kinds, pinned, none)  # type: ignore[operator]
    with pytest.raises(CompileError, match="input"):
        impl(np.zeros(0, np.int32), kinds, pinned, np.array([7], np.int32))  # type: ignore[operator]
    assert len(np.array([add] * WORDS)) == WORDS
