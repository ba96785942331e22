"""numpy ufuncs on terms: each builds a term that evaluates as numpy computes, or raises a named error."""

from __future__ import annotations

import hypothesis.strategies as st
import numpy as np
import pytest
from hypothesis import given, settings

from exprgraph import Symbol, Term, symbols
from exprgraph.core.operators import UFUNC_SPELLINGS
from exprgraph.errors import UnsupportedUfuncError
from exprgraph.eval import evaluate

x, y = symbols("x y")
s = Symbol("s", "float32")
n = Symbol("n", "int64")

#: every numpy ufunc
UFUNCS = sorted(
    {getattr(np, name) for name in dir(np) if isinstance(getattr(np, name), np.ufunc)}, key=lambda u: u.__name__
)
floats = st.floats(allow_nan=True, allow_infinity=True, width=64)
values = st.lists(floats, min_size=1, max_size=8).map(lambda v: np.array([*v, 0.0, -0.0, np.inf, -np.inf, np.nan]))


def _same(got: np.ndarray, want: np.ndarray) -> None:
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape
    # equal values (signed zeros equal), nan where numpy has nan
    assert np.array_equal(got, want, equal_nan=True), (got, want)


SPELLED_UNARY = [getattr(np, name) for name in UFUNC_SPELLINGS if getattr(np, name).nin == 1]


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(SPELLED_UNARY), values)
def test_ufuncs_spelled_with_other_ops_evaluate_as_numpy(ufunc: np.ufunc, v: np.ndarray) -> None:
    for symbol, arr in ((x, v), (s, v.astype(np.float32))):
        if ufunc.__name__ in ("invert",):
            continue  # bools only (below)
        with np.errstate(all="ignore"):
            want = ufunc(arr)
            got = evaluate(ufunc(symbol), {symbol: arr})
        _same(np.asarray(got), want)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(-(2**40), 2**40), min_size=1, max_size=8))
def test_spelled_ufuncs_on_integers(ints: list[int]) -> None:
    arr = np.array(ints, dtype=np.int64)
    for name in ("isnan", "isinf", "isfinite", "fabs", "sign", "deg2rad", "rad2deg", "square", "positive"):
        ufunc = getattr(np, name)
        with np.errstate(all="ignore"):
            _same(np.asarray(evaluate(ufunc(n), {n: arr})), ufunc(arr))


def test_bool_spellings() -> None:
    p, q = symbols("p q", "bool")
    a, b = np.array([True, True, False, False]), np.array([True, False, True, False])
    for ufunc in (np.bitwise_and, np.bitwise_or, np.bitwise_xor, np.logical_xor):
        _same(np.asarray(evaluate(ufunc(p, q), {p: a, q: b})), ufunc(a, b))
    _same(np.asarray(evaluate(np.invert(p), {p: a})), np.invert(a))
    with pytest.raises(TypeError, match="bool"):
        np.sign(p)


def test_the_issues_ufuncs_build_terms_or_name_the_missing_op() -> None:
    assert str(np.isnan(x)) == "x != x"
    assert str(np.isinf(x)) == "abs(x) == inf"
    assert str(np.clip(x, 0, 1)) == "minimum(maximum(x, 0), 1)"
    assert str(np.clip(x, None, 1.5)) == "minimum(x, 1.5)"
    assert x.clip(y) is np.maximum(x, y)
    assert np.clip(s, 0, 1).dtype == "float32"  # bounds made as the operators make numbers
    # (the table is read when a ufunc is applied: a test that registers an op with one of these makes it build)
    registered = Term.ufunc_builders()
    for ufunc in (np.floor, np.ceil, np.log10, np.log2, np.hypot, np.arctan2):
        if ufunc in registered:
            continue
        args = (x, y)[: ufunc.nin]
        with pytest.raises(UnsupportedUfuncError, match=rf"numpy\.{ufunc.__name__} has no exprgraph op") as info:
            ufunc(*args)
        assert info.value.ufunc == ufunc.__name__ and isinstance(info.value, TypeError)
    with pytest.raises(UnsupportedUfuncError, match=r"multiply\.accumulate") as info:
        np.multiply.accumulate(Symbol("A", shape=(3,)))
    assert info.value.ufunc == "multiply.accumulate"
    with pytest.raises(TypeError, match="out="):
        x.clip(0, 1, out=np.empty(()))
    with pytest.raises(TypeError):  # (numpy retries a method's TypeError on an object array: still refused)
        np.clip(x, 0, 1, out=np.empty(()))


@settings(max_examples=40, deadline=None)
@given(values, st.floats(-3, 3), st.floats(-3, 3))
def test_clip_evaluates_as_numpy(v: np.ndarray, lo: float, hi: float) -> None:
    _same(np.asarray(evaluate(np.clip(x, lo, hi), {x: v})), np.clip(v, lo, hi))
    v32 = v.astype(np.float32)
    _same(np.asarray(evaluate(np.clip(s, lo, hi), {s: v32})), np.clip(v32, lo, hi))


def test_every_numpy_ufunc_builds_a_term_or_raises_the_named_error() -> None:
    supported = Term.ufunc_builders()
    built = 0
    for ufunc in UFUNCS:
        bools = (np.bitwise_and, np.bitwise_or, np.bitwise_xor, np.invert, np.logical_xor)
        kind = "bool" if ufunc in bools else "float64"
        args = [Symbol(f"a{i}", kind, (2, 2) if ufunc.signature else ()) for i in range(ufunc.nin)]
        try:
            out = ufunc(*args)
        except UnsupportedUfuncError as exc:
            assert ufunc not in supported and exc.ufunc == ufunc.__name__
            continue
        assert ufunc in supported and isinstance(out, Term)
        built += 1
    assert built == len(supported) >= 50
