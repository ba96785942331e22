"""The vm backend: the register machine gives the numpy backend's values (C's semantics on integers)."""

from __future__ import annotations

import gc
import importlib
import pickle
import re
import sys
import warnings
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import exprgraph as eg
from exprgraph.compile import cbuild, vm
from exprgraph.compile import compile as eg_compile
from exprgraph.compile.backends import get_backend
from exprgraph.compile.vm_ops import CLASS_FIELDS, OPCODES, WORDS
from exprgraph.core import Term, ops
from exprgraph.errors import CompileError, EvaluationError, VMUnsupportedError

needs_vm = pytest.mark.skipif(vm._native is None, reason="the vm extension is not built")
lower = importlib.import_module("exprgraph.compile.lower").lower
encode = importlib.import_module("exprgraph.compile.vm_encode").encode
HAVE_CC = any(cbuild.shutil.which(c) for c in ("cc", "gcc", "clang"))
needs_cc = pytest.mark.skipif(not HAVE_CC, reason="no C compiler")

F, INT, B = "float64", "int64", "bool"
XS = [eg.Symbol(f"x{i}") for i in range(3)]
NS = [eg.Symbol(f"n{i}", INT) for i in range(2)]
BS = [eg.Symbol("b0", B)]
INPUTS = [*XS, *NS, *BS]
#: every op the C backend renders, by arity
C_OPS = [op for op in ops() if op.c_render is not None]
UNARY_OPS = [op for op in C_OPS if op.arity[0] == 1]
BINARY_OPS = [op for op in C_OPS if op.arity[0] == 2]
WHERE = next(op for op in C_OPS if op.name == "where")


@pytest.fixture(autouse=True)
def private_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EXPRGRAPH_CACHE", str(tmp_path_factory.getbasetemp() / "eg-cache"))


def _make(op: object, args: tuple[Term, ...]) -> Term | None:
    """``op`` applied to ``args``, or None when its dtype rule refuses them."""
    try:
        return Term(op, args, None)
    except Exception:  # a dtype the op refuses (sqrt of a bool...): draw another
        return None


@st.composite
def expressions(draw: st.DrawFn) -> list[Term]:
    """A few outputs built from random ops of the C backend over float, int and bool inputs and constants."""
    pool: list[Term] = [*INPUTS]
    pool += [eg.const(draw(st.sampled_from([0.5, -2.0, 3.0, 0.0]))), eg.const(draw(st.sampled_from([2, -3, 7, 0])))]
    pool.append(eg.const(draw(st.booleans())))
    for _ in range(draw(st.integers(1, 14))):
        kind = draw(st.sampled_from(["unary", "binary", "binary", "fold", "where"]))
        pick = st.sampled_from(pool)
        if kind == "unary":
            t = _make(draw(st.sampled_from(UNARY_OPS)), (draw(pick),))
        elif kind == "binary":
            t = _make(draw(st.sampled_from(BINARY_OPS)), (draw(pick), draw(pick)))
        elif kind == "fold":
            op = draw(st.sampled_from([op for op in BINARY_OPS if op.arity[1] is None]))
            t = _make(op, tuple(draw(pick) for _ in range(draw(st.integers(3, 5)))))
        else:
            t = _make(WHERE, (draw(pick), draw(pick), draw(pick)))
        if t is not None:
            pool.append(t)
    computed = pool[len(INPUTS) + 3 :] or [pool[0] + 1.0]
    return computed[-draw(st.integers(1, len(computed))) :]


def _points(n: int, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    floats = [rng.choice([-2.5, -1.0, -0.0, 0.0, 0.5, 1.0, 2.0, 3.5], n) * rng.uniform(0.5, 1.5, n) for _ in XS]
    ints = [rng.choice([-7, -2, -1, 0, 1, 2, 3, 9, 2**62, -(2**63)], n).astype(np.int64) for _ in NS]
    return [*floats, *ints, rng.integers(0, 2, n).astype(bool)]


def _same(got: object, want: object) -> None:
    g, w = np.asarray(got), np.asarray(want)
    assert g.dtype == w.dtype and g.shape == w.shape
    if g.dtype.kind == "f":
        assert np.array_equal(np.isnan(g), np.isnan(w))
        # libm's vector variants (at most 4 ulp, as in the C backend) can differ by a few ulp of a
        # cancelled intermediate that a product then scales up (y*y*(0.5*cos(d) + sin(d)) with y*y
        # near 1e4: 2e-12 apart): 1e-9 on values of inputs of order one to a hundred
        np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-9, equal_nan=True)
    else:
        assert np.array_equal(g, w)


def _outcome(f: object, args: list) -> Any:
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            return f(*args)  # type: ignore[operator]
        except EvaluationError:
            return EvaluationError


@needs_vm
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(expressions(), st.integers(0, 2**31), st.sampled_from([1, 7, 300]))
def test_the_vm_gives_the_numpy_backends_values(outs: list[Term], seed: int, n: int) -> None:
    """Random expressions of every op, at random points (one, a partial block, more than a block)."""
    want = _outcome(eg_compile(outs, INPUTS, "numpy", loops=False), _points(n, seed))
    got = _outcome(eg_compile(outs, INPUTS, "vm"), _points(n, seed))
    if want is EvaluationError or got is EvaluationError:
        assert got is want
        return
    for g, w in zip(got, want, strict=True):
        _same(g, w)


@needs_vm
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(expressions(), st.integers(0, 2**31), st.sampled_from([1, 7, 300]))
def test_a_machine_holding_its_codes_bytes_gives_a_copying_machines_bits(outs: list[Term], seed: int, n: int) -> None:
    """The straight-line code comes as bytes, which the machine holds instead of copying: the same bits as a
    machine given a private copy, once every other reference to the bytes is gone."""
    program = lower(outs, INPUTS)
    try:
        encoded = encode(program)
    except VMUnsupportedError:
        return
    held = encoded.code.base
    assert type(held) is bytes  # (the straight-line road gives its code as bytes)
    before = sys.getrefcount(held)
    holding = vm.VMRunner(program, encoded)
    assert sys.getrefcount(held) == before + 1  # held by the machine, not copied
    copying = vm.VMRunner(program, replace(encoded, code=np.array(encoded.code)))  # (a copy: the machine copies it)
    assert sys.getrefcount(held) == before + 1
    del held, encoded
    gc.collect()
    x = np.column_stack(_points(n, seed)).astype(np.float64)
    for rows in (x, x[:1], x[0]):  # blocks of points, then one point (the dense code)
        got, want = _outcome(holding.packed, [rows]), _outcome(copying.packed, [rows])
        if got is EvaluationError or want is EvaluationError:
            assert got is want
            continue
        assert np.asarray(got).tobytes() == np.asarray(want).tobytes()


@st.composite
def repeated(draw: st.DrawFn) -> tuple[list[Term], list[Term]]:
    """Outputs of a few repeated shapes (loops), irregular ones, and outputs reading earlier outputs."""
    xs = [eg.Symbol(f"y{i}") for i in range(draw(st.integers(3, 10)))]
    shapes = [
        lambda a, b, c: a * b * (c * eg.cos(a - b) + eg.sin(a - b)),
        lambda a, b, c: eg.exp(a) / (c + b**2),
        lambda a, b, c: eg.maximum(a, c) - eg.floor(b * c),
        lambda a, b, c: eg.where(a < b, a * c, b),
    ]
    outs: list[Term] = []
    for shape in draw(st.lists(st.sampled_from(shapes), min_size=1, max_size=3)):
        for _ in range(draw(st.integers(2, 40))):
            a, b = draw(st.sampled_from(xs)), draw(st.sampled_from(xs))
            outs.append(shape(a, b, eg.const(draw(st.sampled_from([0.5, 1.5, -2.0, 3.0])))))
    for _ in range(draw(st.integers(0, 20))):  # second level: reads earlier outputs
        outs.append(eg.sin(draw(st.sampled_from(outs))) * draw(st.sampled_from(xs)))
    outs.extend(draw(st.lists(st.sampled_from([*xs, eg.const(2.0)]), max_size=5)))
    return outs, xs


@needs_vm
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(repeated(), st.integers(0, 2**31), st.sampled_from([1, 5, 600]), st.sampled_from([2, 4, 16]))
def test_loops_on_the_vm_give_the_numpy_backends_values(
    case: tuple[list[Term], list[Term]], seed: int, n: int, threshold: int
) -> None:
    """Classes of repeated structure run as VM loops: same values, in the run and the packed call."""
    outs, xs = case
    f = eg_compile(outs, xs, "vm", loops=threshold)
    want = eg_compile(outs, xs, "numpy", loops=False)
    args = list(np.random.default_rng(seed).uniform(-2, 2, (len(xs), n)))
    for g, w in zip(_outcome(f, args), _outcome(want, args), strict=True):
        _same(g, w)
    packed = eg_compile(outs, xs, "vm", loops=threshold, packed=True)
    rows = np.array(args).T.copy()
    expect = np.column_stack([np.broadcast_to(np.asarray(w, dtype=float), (n,)) for w in _outcome(want, args)])
    np.testing.assert_allclose(packed(rows), expect, rtol=1e-9, atol=1e-9)


@needs_vm
def test_loops_are_encoded_as_loops() -> None:
    """A network of one repeated shape becomes one LOOP: the code does not grow with the members."""
    xs = [eg.Symbol(f"v{i}") for i in range(200)]
    outs = [xs[i] * xs[(i * 7 + 1) % 200] * eg.cos(xs[i] - xs[(i + 3) % 200]) for i in range(200)]
    f = eg_compile(outs, xs, "vm")
    assert f.info["grouped"] and f.info["classes"][0]["members"] >= 190
    flat = eg_compile(outs, xs, "vm", loops=False)
    small, big = (int(re.search(r"(\d+) instructions", g.source).group(1)) for g in (f, flat))  # type: ignore[union-attr]
    assert "1 loops" in f.source and small * 4 < big  # the body once, a store per member
    rng = np.random.default_rng(1)
    x = rng.uniform(-1, 1, 200)
    # at one point the loop's members are its lanes: the vector libm (within 4 ulp), as at many points
    np.testing.assert_allclose(np.array(f(*x)), np.array(flat(*x)), rtol=1e-14, atol=1e-15)
    points = rng.uniform(-1, 1, (200, 40))
    np.testing.assert_array_equal(np.array(f(*points)), np.array(flat(*points)))


INT_EDGES = np.array([0, 1, -1, 2, -2, 3, -7, 7, 2**62, -(2**62), 2**63 - 1, -(2**63)], dtype=np.int64)


@needs_vm
@needs_cc
def test_int64_edges_are_the_c_backends() -> None:
    """Floor division, modulo, ceil_div, truncdiv, fmod, wrapping +,-,*, neg, abs, pow on int64 edge values."""
    a, b = NS
    by_name = {op.name: op for op in C_OPS}
    outs = [a // b, a % b, a + b, a - b, a * b, -a, abs(a), eg.maximum(a, b), eg.minimum(a, b), eg.sign(a)]
    outs += [Term(by_name[n], (a, b), None) for n in ("ceil_div", "truncdiv", "fmod", "broadcast_dim")]
    outs += [a < b, eg.where(a < b, a, b), a / b, a * 2.5]
    grid_a, grid_b = (g.ravel() for g in np.meshgrid(INT_EDGES, INT_EDGES))
    got = eg_compile(outs, NS, "vm")(grid_a, grid_b)
    want = eg_compile(outs, NS, "c")(grid_a, grid_b)
    for g, w in zip(got, want, strict=True):
        _same(g, w)
    exponent = np.array([0, 1, 2, 3, 63, 64], dtype=np.int64)
    base = np.array([3, -3, 2, -1, 7, 2**40], dtype=np.int64)
    power = [a**b, eg.Symbol("x0") ** b]
    got = eg_compile(power, [a, b, XS[0]], "vm")(base, exponent, 1.5)
    want = eg_compile(power, [a, b, XS[0]], "c")(base, exponent, 1.5)
    for g, w in zip(got, want, strict=True):
        _same(g, w)


@needs_vm
def test_a_negative_integer_power_raises_at_the_call() -> None:
    a, b = NS
    f = eg_compile(a**b, NS, "vm")
    assert f(2, 3) == 8
    with pytest.raises(EvaluationError, match="negative"):
        f(np.array([2, 2]), np.array([1, -1]))


@needs_vm
def test_a_chain_of_a_hundred_thousand_nodes() -> None:
    """``f_k = sin(f_{k-1}) * 0.5 + x``, 10^5 levels: encoded in linear time, equal to numpy's value."""
    x = eg.Symbol("x")
    f = x
    for k in range(100_000):
        f = eg.sin(f) * 0.5 + x if k % 2 else f * 0.999 + 0.001
    point = np.array([0.3, -1.2])
    compiled = eg_compile(f, [x], "vm")
    got = compiled(point)
    want = point.copy()
    for k in range(100_000):  # the same recurrence in numpy, operation by operation
        want = np.sin(want) * 0.5 + point if k % 2 else want * 0.999 + 0.001
    np.testing.assert_allclose(got, want, rtol=1e-12)
    registers = int(re.search(r"(\d+) double", compiled.source).group(1))  # type: ignore[union-attr]
    assert registers < 20  # registers reused: the chain needs a few, not one per node


@needs_vm
def test_broadcasting_scalars_and_dtypes_are_the_other_backends() -> None:
    x, y = XS[:2]
    n, flag = NS[0], BS[0]
    outs = [x * y, n + 1, flag, eg.logical_not(flag), x, eg.const(4.0), n * x]
    f = eg_compile(outs, [x, y, n, flag], "vm")
    g = eg_compile(outs, [x, y, n, flag], "numpy")
    args = [np.array([[1.0], [2.0]]), np.array([1.0, 2.0, 3.0]), 5, np.array([True, False, True])]
    for got, want in zip(f(*args), g(*args), strict=True):
        _same(got, want)
    p = eg_compile(outs, [x, y, n, flag], "vm", packed=True)
    rows = np.array([[1.0, 2.0, 3.0, 1.0], [0.5, -1.0, -2.0, 0.0]])
    want_rows = np.array([[float(np.asarray(v)) for v in g(*r[:2], int(r[2]), bool(r[3]))] for r in rows])
    np.testing.assert_allclose(p(rows), want_rows)
    np.testing.assert_allclose(p(rows[0]), want_rows[0])


def test_the_vm_refuses_float32_naming_the_op() -> None:
    x = eg.Symbol("x", "float32")
    with pytest.raises(VMUnsupportedError) as caught:
        eg_compile(eg.sin(x) * 2, [x], "vm")
    assert caught.value.op in ("symbol", "sin", "mul")
    assert "float32" in str(caught.value)


def test_the_vm_refuses_tensors() -> None:
    m = eg.Symbol("m", "float64", (3,))
    with pytest.raises(CompileError, match="scalar"):
        eg_compile(m * 2.0, [m], "vm")


def test_the_vm_is_a_backend_on_demand() -> None:
    assert get_backend("vm").loops
    with pytest.raises(ValueError, match="vm"):
        get_backend("no-such-backend")


def test_the_opcodes_are_the_headers() -> None:
    """vm_ops.OPCODES lists the opcodes of _cvm.h in order; the words per instruction and class agree."""
    header = (Path(vm.__file__).parent / "_cvm.h").read_text()
    listing = header[header.index("#define VM_OPCODE_LIST") : header.index("enum vm_opcode")]
    names = re.findall(r"X\(VM_(\w+)\)", listing)
    assert names == list(OPCODES)
    if vm._native is not None:
        assert vm._native.layout() == (len(OPCODES), WORDS, CLASS_FIELDS)


@needs_vm
def test_a_compiled_vm_function_pickles() -> None:
    x, y = XS[:2]
    f = eg_compile([x * y, eg.exp(x)], [x, y], "vm")
    g = pickle.loads(pickle.dumps(f))
    assert g.backend == "vm"
    np.testing.assert_allclose(g(1.5, 2.0), f(1.5, 2.0))
