"""logsumexp over axes: its values (no overflow, against mpmath), shapes, dtypes, gradient, the rewrite."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import exprgraph as eg
from exprgraph.diff import grad
from exprgraph.errors import ShapeError
from exprgraph.eval import evaluate
from exprgraph.simplify import simplify

mpmath.mp.dps = 50
X = eg.Symbol("X", "float64", (3, 4))
AXES = [None, 0, 1, -1, (0, 1)]


def _exact(v: np.ndarray, axis) -> np.ndarray:
    """log(sum(exp(v))) along ``axis`` at 50 digits, rounded to float64."""
    axes = tuple(range(v.ndim)) if axis is None else ((axis,) if isinstance(axis, int) else axis)
    moved = np.moveaxis(v, [a % v.ndim for a in axes], list(range(-len(axes), 0)))
    flat = moved.reshape((*moved.shape[: v.ndim - len(axes)], -1))
    out = np.empty(flat.shape[:-1])
    for index in np.ndindex(out.shape):
        out[index] = float(mpmath.log(mpmath.fsum(mpmath.exp(mpmath.mpf(float(e))) for e in flat[index])))
    return out


def _lse(axis) -> eg.Term:
    return eg.logsumexp(X) if axis is None else eg.logsumexp(X, axis=axis)


@settings(max_examples=40, deadline=None)
@given(
    v=hnp.arrays(np.float64, (3, 4), elements=st.floats(-1000.0, 1000.0, allow_nan=False)),
    axis=st.sampled_from(AXES),
)
def test_values_match_the_exact_sum_without_overflow(v: np.ndarray, axis) -> None:
    got = np.asarray(evaluate(_lse(axis), {"X": v}), dtype=float)
    np.testing.assert_allclose(got, _exact(v, axis), rtol=4e-15, atol=4e-15)


def test_huge_and_tiny_entries_stay_finite() -> None:
    v = np.array([[1000.0, 1000.0, -1e300, 999.0]] * 3)
    got = evaluate(eg.logsumexp(X, axis=1), {"X": v})
    assert np.all(np.isfinite(got))
    np.testing.assert_allclose(got, 1000.0 + math.log(2.0 + math.exp(-1.0)), rtol=1e-15)
    # all entries -inf: log(0) = -inf, as numpy's fold gives
    assert evaluate(eg.logsumexp(X), {"X": np.full((3, 4), -np.inf)}) == -np.inf


def test_shapes_dtypes_and_printing() -> None:
    assert [_lse(a).shape for a in AXES] == [(), (4,), (3,), (3,), ()]
    assert eg.logsumexp(eg.Symbol("n", "int64", (5,))).dtype == "float64"
    f32 = eg.Symbol("s", "float32", (5,))
    assert eg.logsumexp(f32).dtype == "float32"
    assert evaluate(eg.logsumexp(f32), {"s": np.ones(5, np.float32)}).dtype == np.float32
    assert str(eg.logsumexp(X, axis=1)) == "logsumexp(X, axis=1)"
    with pytest.raises(ShapeError, match="logsumexp"):
        eg.logsumexp(X, axis=2)


@settings(max_examples=25, deadline=None)
@given(
    v=hnp.arrays(np.float64, (3, 4), elements=st.floats(-30.0, 30.0, allow_nan=False)),
    axis=st.sampled_from(AXES),
)
def test_gradient_is_the_softmax_and_matches_finite_differences(v: np.ndarray, axis) -> None:
    w = np.arange(1.0, 1.0 + np.prod(_lse(axis).shape or (1,))).reshape(_lse(axis).shape)
    f = eg.sum(_lse(axis) * eg.const(w))
    (d,) = grad(f, [X])
    got = np.asarray(evaluate(d, {"X": v}), dtype=float)
    # the softmax along the reduced axes, weighted by each result's weight
    lse = np.asarray(evaluate(_lse(axis), {"X": v}), dtype=float)
    axes = tuple(range(2)) if axis is None else ((axis % 2,) if isinstance(axis, int) else axis)
    want = np.exp(v - np.expand_dims(lse, axes)) * np.expand_dims(w, axes)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    assert eg.check_grad(f, {"X": v}).ok


def test_simplify_turns_log_of_a_sum_of_exps_into_logsumexp() -> None:
    for axis in AXES:
        naive = eg.log(eg.sum(eg.exp(X)) if axis is None else eg.sum(eg.exp(X), axis=axis))
        assert simplify(naive) is _lse(axis) and simplify(naive, unsafe=False) is _lse(axis)
        v = np.full((3, 4), 800.0)
        with np.errstate(over="ignore"):
            assert np.all(np.isinf(evaluate(naive, {"X": v})))  # the naive form overflows here
        np.testing.assert_allclose(evaluate(simplify(naive), {"X": v}), _exact(v, axis), rtol=1e-15)


def test_jax_computes_logsumexp_over_the_same_axes() -> None:
    jax = pytest.importorskip("jax")
    from exprgraph.interop.jax import to_jax

    before = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)  # float64, as evaluate computes
    try:
        v = np.random.default_rng(1).uniform(-800.0, 800.0, (3, 4))
        for axis in AXES:
            fn = to_jax([_lse(axis)], [X])
            np.testing.assert_allclose(np.asarray(fn(v)[0]), _exact(v, axis), rtol=1e-14)
    finally:
        jax.config.update("jax_enable_x64", before)
