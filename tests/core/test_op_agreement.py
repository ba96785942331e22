"""Every op of the table gives one value on every path: evaluate, the numpy, C and LLVM backends.

The operands run over the edges of each dtype (nan, +-inf, -0.0, subnormals, huge values, the int64
extremes, odd exponents above 2**53; float32's own subnormals and largest values) in every
combination of dtypes, and the three paths must agree exactly, down to the sign of a zero (a nan's
sign is not compared). Only a libm function (sin, exp, pow...) of float32 operands may differ, by at
most :data:`ULPS` units in the last place: numpy, glibc's scalar and its vector math library each
round those in their own way (numpy's float64 power of a float32 subnormal, for one, is a unit off
where C's pow is correctly rounded). So may the stable functions (log1p, expm1 and the functions
made of them) at every dtype: numpy computes them with its own vector code on this CPU
(``log1p(2.0)`` and ``expm1(1.0)`` are a unit off glibc's correctly rounded values). One C library
holds every elementwise op for every dtype combination, so the test builds once.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import exprgraph.dims  # noqa: F401 - completes the op table (ceil_div)
from exprgraph.compile import compile as compile_terms
from exprgraph.compile.cbuild import find_compiler
from exprgraph.core import Symbol, Term, get_op, ops
from exprgraph.errors import CompilerNotFoundError
from exprgraph.eval import evaluate
from package_ops import PACKAGE_OPS

FLOATS = [np.nan, np.inf, -np.inf, -0.0, 0.0, 1.0, -1.0, 0.5, -2.5, 3.0, 1e308, -5e-324, 2.0**60, -7.0, 1e-310, -3.0]
#: float32's edges: its largest value, its subnormals, 2**30 (beyond float32's exact integers)
SINGLES = [np.nan, np.inf, -np.inf, -0.0, 0.0, 1.0, -1.0, 0.5, -2.5, 3.0, 3.4e38, -1e-45, 2.0**30, -7.0, 1e-40, -3.0]
INTS = [0, 1, -1, 2, -3, 7, 2**63 - 1, -(2**63), 5, -7, 2**53 + 1, -(2**53 + 1), 2**62]
#: int64 exponents must not be negative (an int to a negative int power is an error, on every path)
EXPONENTS = [0, 1, 2, 3, 7, 2**53 + 1, 2**62 + 1, 2**63 - 1]
BOOLS = [False, True]
VALUES = {"float64": FLOATS, "float32": SINGLES, "int64": INTS, "bool": BOOLS}
NP_DTYPES = {"float64": np.float64, "float32": np.float32, "int64": np.int64, "bool": np.bool_}
DTYPES = tuple(VALUES)
SIDE = max(len(v) for v in VALUES.values())
#: positions 0..2 enumerate every combination of operand values: position p steps every SIDE**p points
POINTS = SIDE**3
#: ops that are not elementwise (the C backend compiles scalar-shaped terms only)
TENSOR_OPS = {"dot", "matmul", "sum", "transpose", "logsumexp", "amax", "amin", "prod", "mean"}
#: the index ops (their attrs need shapes: tests/core/test_ops_index.py compares them with numpy)
INDEX_OPS = {"slice_axis", "take", "scatter_add", "concat", "reshape", "broadcast_to"}
INDEX_OPS |= {"einsum", "topk_indices", "take_along", "scatter_along", "arange"}  # tests/core/test_ops_einsum.py
#: ops defined on integers only (their dtype rule accepts more, but they are dimension arithmetic)
INT_ONLY = {"ceil_div"}


#: ops computed by libm-like functions, whose results on float32 operands may differ by ULPS between the paths
LIBM = {"exp", "log", "sin", "cos", "tan", "tanh", "sigmoid", "pow", "log1p", "expm1", "softplus", "log_sigmoid"}
LIBM |= {"logaddexp", "log2", "log10", "erf", "erfc", "asin", "acos", "atan", "atan2", "hypot"}
LIBM |= {"sinh", "cosh", "asinh", "acosh", "atanh"}
#: of those, the ones whose float64 values numpy rounds in its own way too (its vector code for the
#: inverse and hyperbolic functions is a unit off glibc's at some points: acos(0.5), sinh(2))
STABLE = {"log1p", "expm1", "softplus", "log_sigmoid", "logaddexp"}
STABLE |= {"acos", "acosh", "asinh", "atanh", "sinh", "cosh", "atan2"}
#: most units in the last place a float32 libm result may differ by
ULPS = 4


def _symbol(position: int, dtype: str, exponent: bool = False) -> Term:
    return Symbol(f"{'e' if exponent else 'p'}{position}_{dtype[0]}{dtype[-1]}", dtype)


def _values(position: int, dtype: str, exponent: bool = False) -> np.ndarray:
    pool = EXPONENTS if exponent and dtype == "int64" else VALUES[dtype]
    index = (np.arange(POINTS) // SIDE**position) % SIDE % len(pool)
    return np.array(pool, dtype=NP_DTYPES[dtype])[index]


def _elementwise_ops() -> list:
    out = []
    for op in ops():
        if op.name not in PACKAGE_OPS:
            continue  # registered by another test module (collected first): not the package's table
        if op.notation in ("leaf", "index") or op.name in TENSOR_OPS | INDEX_OPS:  # reads of tensors: not elementwise
            continue
        if op.impl is None and op.ufunc is None:
            continue  # an uninterpreted function: nothing to evaluate
        out.append(op)
    return out


def _cases() -> list[tuple[Term, tuple[Term, ...]]]:
    """``(term, its operand symbols)`` for every op and dtype combination its dtype rule accepts."""
    cases = []
    for op in ELEMENTWISE:
        lo, hi = op.arity
        for n in range(lo, min(hi if hi is not None else 3, 3) + 1):
            for dts in itertools.product(DTYPES, repeat=n):
                if op.name in INT_ONLY and set(dts) != {"int64"}:
                    continue
                syms = tuple(_symbol(p, d, exponent=op.name == "pow" and p == 1) for p, d in enumerate(dts))
                try:
                    term = op(*syms)
                except (TypeError, ValueError):
                    continue  # a dtype combination the op refuses when built
                cases.append((term, syms))
    return cases


ELEMENTWISE = _elementwise_ops()  # the package's table (tests may register more)
CASES = _cases()
TERMS = [t for t, _ in CASES]
INPUTS = tuple(dict.fromkeys(s for _, syms in CASES for s in syms))
ARGS = [_values(int(s.name[1]), s.dtype, exponent=s.name[0] == "e") for s in INPUTS]
SINGLE_TERMS = [t for t in TERMS if any(a.dtype == "float32" for a in t.args)]
ENV = dict(zip(INPUTS, ARGS, strict=True))


def _same(a: object, b: object, ulps: int = 0) -> np.ndarray:
    """Elementwise: equal values of equal dtype, zeros with the same sign, nan against nan.

    ``ulps``: finite non-zero values may differ by that many units in the last place.
    """
    x, y = np.asarray(a), np.asarray(b)
    assert x.dtype == y.dtype and x.shape == y.shape
    if x.dtype.kind != "f":
        return x == y
    both_nan = np.isnan(x) & np.isnan(y)
    ok = both_nan | ((x == y) & (np.signbit(x) == np.signbit(y)))
    if ulps:
        near = np.abs(_ordered(x) - _ordered(y)) <= ulps
        ok |= near & np.isfinite(x) & np.isfinite(y) & (x != 0) & (y != 0) & (np.signbit(x) == np.signbit(y))
    return ok


def _ordered(x: np.ndarray) -> np.ndarray:
    """Float values as integers in the order of the values (neighbours differ by one)."""
    if x.dtype == np.float32:
        bits = x.view(np.int32).astype(np.int64)
        return np.where(bits < 0, -(bits & 0x7FFFFFFF), bits)
    bits = x.view(np.int64)
    return np.where(bits < 0, -(bits & 0x7FFFFFFFFFFFFFFF), bits)


def _mismatches(term: Term, got: object, want: object, vector_math: bool = False) -> list:
    single = any(a.dtype == "float32" for a in term.args)
    # vector_math: the C loop is vectorised, and each libm call (exp inside sigmoid too) may then be
    # glibc's vector variant (at most 4 ulp, docs/compile.md), whatever the dtype
    loose = ((single or vector_math) and term.op.name in LIBM) or term.op.name in STABLE
    ok = _same(got, want, ULPS if loose else 0)
    if ok.all():
        return []
    bad = np.flatnonzero(~ok.reshape(-1))[:3]
    syms = [a for a in term.args]
    return [
        (str(term), tuple(ENV[s].reshape(-1)[i].item() for s in syms), np.ravel(want)[i], np.ravel(got)[i]) for i in bad
    ]


@pytest.fixture(scope="module")
def reference() -> list:
    with np.errstate(all="ignore"):
        return evaluate(TERMS, ENV)


def test_the_edges_are_covered() -> None:
    # every op of the table with a numpy implementation is tested, on nan, both infinities and -0.0
    names = {t.op.name for t in TERMS}
    assert {"add", "mul", "pow", "truediv", "floordiv", "mod", "maximum", "where", "sigmoid", "ceil_div"} <= names
    assert {op.name for op in ELEMENTWISE} == names
    # and on float32 operands: every op but the integer-only ones, in single precision where all are float32
    singles = {t.op.name for t in SINGLE_TERMS}
    assert singles == names - INT_ONLY
    assert {t.op.name for t in SINGLE_TERMS if t.dtype == "float32"} >= {"add", "sin", "pow", "sigmoid", "where"}
    for dtype in ("float64", "float32"):
        floats = ENV[_symbol(0, dtype)]
        assert np.isnan(floats).any() and np.isposinf(floats).any() and np.isneginf(floats).any()
        assert (np.signbit(floats) & (floats == 0)).any()
        assert floats.dtype == NP_DTYPES[dtype]


def test_c_backend_agrees_with_evaluate(reference: list) -> None:
    try:
        find_compiler()
    except CompilerNotFoundError:
        pytest.skip("no C compiler")
    got = compile_terms(TERMS, list(INPUTS), backend="c")(*ARGS)
    bad = [m for t, g, w in zip(TERMS, got, reference, strict=True) for m in _mismatches(t, g, w, vector_math=True)]
    assert not bad, bad[:10]


def test_llvm_backend_agrees_with_evaluate(reference: list) -> None:
    pytest.importorskip("llvmlite")
    got = compile_terms(TERMS, list(INPUTS), backend="llvm")(*ARGS)
    bad = [m for t, g, w in zip(TERMS, got, reference, strict=True) for m in _mismatches(t, g, w)]
    assert not bad, bad[:10]


def test_every_elementwise_op_has_an_llvm_rendering() -> None:
    # a new op without one compiles with numpy and C but not with LLVM: the table entry should say how
    missing = sorted(op.name for op in ELEMENTWISE if op.llvm is None and op.c_render is not None)
    assert missing == [], missing


def _numpy_pow_gap(term: Term) -> bool:
    # numpy's power gives C's pow for an array of exponents (see the change request in issue 12)
    return term.op.name == "pow" and term.args[0].dtype in ("float64", "float32") and term.args[1].dtype != "bool"


def test_numpy_backend_agrees_with_evaluate(reference: list) -> None:
    keep = [i for i, t in enumerate(TERMS) if not _numpy_pow_gap(t)]
    got = compile_terms([TERMS[i] for i in keep], list(INPUTS), backend="numpy")(*ARGS)
    bad = [m for i, g in zip(keep, got, strict=True) for m in _mismatches(TERMS[i], g, reference[i])]
    assert not bad, bad[:10]


def test_numpy_backend_power_agrees_with_evaluate(reference: list) -> None:
    keep = [i for i, t in enumerate(TERMS) if _numpy_pow_gap(t)]
    got = compile_terms([TERMS[i] for i in keep], list(INPUTS), backend="numpy")(*ARGS)
    bad = [m for i, g in zip(keep, got, strict=True) for m in _mismatches(TERMS[i], g, reference[i])]
    assert not bad, bad[:10]


def test_power_edges_in_evaluate() -> None:
    # a**0.5 is sqrt(a) whatever the exponent's shape; odd int powers keep the sign above 2**53
    x, y = Symbol("x"), Symbol("y")
    i = Symbol("i", "int64")
    base = np.array([-np.inf, -0.0, 4.0])
    half = evaluate(x**y, {x: base, y: np.full(3, 0.5)})
    assert np.isnan(half[0]) and half[1] == 0.0 and np.signbit(half[1]) and half[2] == 2.0
    assert np.array_equal(evaluate(x**y, {x: base, y: 0.5}), half, equal_nan=True)
    odd = evaluate(x**i, {x: np.array([-1.0, -2.0, -0.0, 3.0]), i: 2**53 + 1})
    assert odd.tolist() == [-1.0, -np.inf, -0.0, np.inf] and np.signbit(odd[2])
    assert evaluate(x ** (2**62), {x: -1.0}) == 1.0


def test_c_fold_follows_numpy_steps() -> None:
    # add(i, j, x) adds the ints in int64 first (wrapping), as numpy's left fold does
    try:
        find_compiler()
    except CompilerNotFoundError:
        pytest.skip("no C compiler")
    i, j = Symbol("i", "int64"), Symbol("j", "int64")
    x = Symbol("x")
    terms = [get_op("add")(i, j, x), get_op("mul")(i, j, x)]
    args = (np.array([1, 0]), np.array([2**63 - 1, -1]), np.array([0.5, -0.0]))
    want = evaluate(terms, dict(zip((i, j, x), args, strict=True)))
    got = compile_terms(terms, [i, j, x], backend="c")(*args)
    for g, w in zip(got, want, strict=True):
        assert _same(g, w).all(), (g, w)


@pytest.mark.parametrize("name", sorted(TENSOR_OPS))
def test_tensor_ops_agree_on_special_values(name: str) -> None:
    a = Symbol("A", shape=(3, 3))
    b = Symbol("B", shape=(3, 3))
    op = get_op(name)
    term = op(a, b) if op.arity[0] == 2 else op(a)
    rng = np.random.default_rng(0)
    values = {a: rng.choice(FLOATS, (3, 3)), b: rng.choice(FLOATS, (3, 3))}
    with np.errstate(all="ignore"):
        want = evaluate(term, values)
    got = compile_terms(term, [a, b], backend="numpy")(values[a], values[b])
    assert _same(got, want).all()
