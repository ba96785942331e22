"""from_jax reads lax.top_k (two outputs) as our topk values and indices; sort stays refused by name."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from exprgraph import evaluate, grad
from exprgraph.errors import ConversionError

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402

from exprgraph.interop.jax_read import from_jax  # noqa: E402


@pytest.fixture(autouse=True)
def _x64():
    before = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    yield
    jax.config.update("jax_enable_x64", before)


@settings(max_examples=30, deadline=None)
@given(
    st.lists(st.integers(-3, 3), min_size=12, max_size=12),  # small ints: many ties
    st.integers(0, 4),
    st.sampled_from([0, 1]),
)
def test_top_k_reads_both_outputs_with_jaxs_tie_order(entries: list[int], k: int, axis: int) -> None:
    x = np.asarray(entries, dtype=np.float64).reshape(3, 4)
    k = min(k, x.shape[axis])

    def fn(v):
        return jax.lax.top_k(jnp.moveaxis(v, axis, -1), k)

    values, index = from_jax(fn, x)
    want_values, want_index = fn(x)
    assert index.dtype == "int64"
    np.testing.assert_array_equal(evaluate(values, {"v": x}), np.asarray(want_values))
    np.testing.assert_array_equal(evaluate(index, {"v": x}), np.asarray(want_index))


def test_top_k_values_carry_gradients_and_indices_feed_other_ops() -> None:
    x = np.array([0.5, 2.0, -1.0, 3.0, 2.5])
    t = from_jax(lambda v: jax.lax.top_k(v, 2)[0].sum() * 2.0 + jax.lax.top_k(-v, 1)[1][0], x)
    assert evaluate(t, {"v": x}) == pytest.approx((3.0 + 2.5) * 2.0 + 2)
    (v,) = t.free_symbols
    np.testing.assert_array_equal(evaluate(grad(t, v), {"v": x}), [0, 0, 0, 2.0, 2.0])


def test_top_k_of_integers_reads_too() -> None:
    x = np.array([4, 1, 4, 9], dtype=np.int64)
    values, index = from_jax(lambda v: jax.lax.top_k(v, 3), x)
    np.testing.assert_array_equal(evaluate([values, index], {"v": x})[1], [3, 0, 2])


def test_sort_is_still_refused_by_name() -> None:
    with pytest.raises(ConversionError, match="sort"):
        from_jax(lambda v: jnp.sort(v), np.array([2.0, 1.0]))
