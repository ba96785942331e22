"""to_jax / from_jax on every op of the table: JAX computes our values, and the jaxpr read back does too."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from interop_strategies import float_env, float_terms, int_env, int_terms
from test_convert_every_op import EINSUM_SPECS, NO_VALUE, PACKAGE_OPS, TIES, assert_values, case, check_table

from exprgraph import Symbol, evaluate
from exprgraph.core.ops_einsum import einsum
from exprgraph.core.ops_sort import topk
from exprgraph.errors import ConversionError

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402

from exprgraph.interop.jax import to_jax  # noqa: E402
from exprgraph.interop.jax_read import from_jax  # noqa: E402

#: ops JAX has no counterpart for, with the reason (none: every op with a value is written)
NOT_THERE: dict[str, str] = {}
#: ops to_jax writes with a primitive from_jax cannot read, with the reason
NOT_READ_BACK: dict[str, str] = {
    "take_along": "a gather at positions computed from the inputs (no constant index)",
    "scatter_along": "a scatter-add at positions computed from the inputs (no constant index)",
    "arange": "its length is the value of its stop: JAX cannot trace it",
}
#: the name each refusal of NOT_READ_BACK gives
REFUSED_AS = {"take_along": "sort|gather", "scatter_along": "scatter", "arange": "arange"}
#: the vector ops written by hand in JAX (as a JAX user would): read by from_jax, each gives our case's values
JAX_FORMS = {
    "amax": lambda a, c, t: jnp.max(c, axis=1),
    "amin": lambda a, c, t: jnp.min(a),
    "prod": lambda a, c, t: jnp.prod(c),
    "mean": lambda a, c, t: jnp.mean(c, axis=-1),  # a sum and a division, read as those
    "slice_axis": lambda a, c, t: c[:, 3:0:-2],
    "take": lambda a, c, t: c[np.array([[2, 0], [-1, 1]])],
    "concat": lambda a, c, t: jnp.concatenate([c, t], axis=0),
    "reshape": lambda a, c, t: c.reshape(2, 6),
    "broadcast_to": lambda a, c, t: jnp.broadcast_to(a, (2, 2, 3)),
    "scatter_add": lambda a, c, t: jnp.zeros((2, 5)).at[:, np.array([1, 1, 3])].add(a),
}
ALL = sorted(o.name for o in PACKAGE_OPS if o.name not in NO_VALUE)


@pytest.fixture(autouse=True)
def _x64():
    before = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)  # int64 and float64, as evaluate
    yield
    jax.config.update("jax_enable_x64", before)


@pytest.mark.parametrize("name", ALL)
def test_every_op_converts_both_ways(name):
    term, env = case(name, (8,))
    values = env(1, np.random.default_rng(len(name)))
    want = evaluate(term, values)
    f = to_jax(term)
    args = [values[s.name] for s in f.inputs]
    assert_values(f(*args), want, term.dtype)
    if name in NOT_READ_BACK:
        with pytest.raises(ConversionError, match=REFUSED_AS.get(name, "reduce_max")):
            from_jax(f, *args)
        return
    back = from_jax(f, *args)
    assert back.free_symbols <= term.free_symbols  # to_jax's own input symbols come back
    assert_values(evaluate(back, values), want, term.dtype)


def test_no_op_is_left_unaccounted():
    assert check_table(NOT_THERE, lambda name: name in ALL) == []


@pytest.mark.parametrize("name", sorted(JAX_FORMS))
def test_vector_ops_written_in_jax_read_back(name):
    term, env = case(name)
    values = env(1, np.random.default_rng(len(name)))
    full = {"a": np.ones((2, 3)), "c": np.ones((3, 4)), "t": np.ones((3, 4)), **values}
    back = from_jax(JAX_FORMS[name], full["a"], full["c"], full["t"])
    assert_values(evaluate(back, full), evaluate(term, values), term.dtype)


@pytest.mark.parametrize(
    "fn",
    [
        lambda x: x[1:3] + x[::-2][:2],
        lambda x: x[2] * x[np.array([0, -1, 3])],
        lambda x: jnp.max(x) + jnp.min(x) * jnp.prod(x[:2]),
        lambda x: jnp.concatenate([x, x[:1] * 2.0]).reshape(2, 3)[:, 1],
        lambda x: jnp.stack([x[:2], x[3:]], axis=1).sum(axis=0),
        lambda x: jax.lax.dynamic_slice(x, (jnp.int64(3),), (2,)) + jnp.flip(x)[:2],
        lambda x: jnp.squeeze(x[None, 1:2]) * jnp.expand_dims(x[:2], 1).sum(),
        lambda x: jnp.asarray(x).at[np.array([0, 4, 0])].add(x[1:4] * 2.0) + jnp.zeros((2, 5)).at[1].add(x),
        lambda x: jnp.pad(x, (2, 1), constant_values=3.0)[1:] * jnp.tile(x[:2], 3)[:7].sum(),
        lambda x: jnp.tile(x[1:3], (2, 2)) + jnp.pad(x[None, :4], ((1, 0), (0, 0))).T.sum(axis=1)[None, :],
    ],
)
def test_vector_code_reads_into_terms(fn):
    x = np.array([0.5, -1.25, 2.0, 3.5, -0.75])
    t = from_jax(fn, x)
    np.testing.assert_allclose(evaluate(t, {"x": x}), np.asarray(fn(x)), rtol=1e-14)


def test_a_users_function_reads_into_terms():
    def f(x, y):
        return jnp.round(x) + jnp.where(x > y, x, 1.0) + jax.nn.relu(y) + jnp.clip(x, 0, 1) + jnp.sum(x * y)

    x, y = np.array([0.5, 1.5, -2.5, 0.2]), np.array([1.0, -1.0, 0.3, 0.2])
    t = from_jax(f, x, y)
    assert {s.name for s in t.free_symbols} == {"x", "y"}
    np.testing.assert_allclose(evaluate(t, {"x": x, "y": y}), np.asarray(f(x, y)))


def test_a_jaxpr_with_matrix_products_and_integer_division():
    def f(a, b, n):
        return jnp.transpose(a @ b).sum(axis=0) + (n // 3) + (n % 3) + jnp.floor_divide(n, -2)

    a, b, n = np.ones((2, 3)), np.arange(12.0).reshape(3, 4), np.arange(-5, 3)[:2]
    jaxpr = jax.make_jaxpr(f)(a, b, n)
    t = from_jax(jaxpr, names=["a", "b", "n"])
    np.testing.assert_allclose(evaluate(t, {"a": a, "b": b, "n": n}), np.asarray(f(a, b, n)))


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(-1e6, 1e6), min_size=3, max_size=3), st.sampled_from([0, 1]))
def test_round_reads_as_jax_rounds(values, method):
    x = np.asarray([*values, 0.5, 1.5, -2.5, -0.5, 2.4999999999999996])
    t = from_jax(lambda v: jax.lax.round(v, method), x)
    np.testing.assert_array_equal(evaluate(t, {"v": x}), np.asarray(jax.lax.round(x, method)))


@pytest.mark.parametrize(
    ("fn", "primitive"),
    [
        (lambda x: jnp.cumsum(x), "cumsum"),
        (lambda x: x[(x > 0).astype(int)], "gather at positions computed from the inputs"),
        (lambda x: jnp.sort(x), "sort"),
        (lambda x: jax.lax.pad(x, 0.0, ((1, -1, 0),)), "pad with interior padding or a negative"),
    ],
)
def test_unsupported_primitives_raise_naming_them(fn, primitive):
    with pytest.raises(ConversionError, match=primitive):
        from_jax(fn, np.ones(4))


def test_deeply_nested_jit_reads_without_recursion():
    f = jax.jit(lambda x: x + 1.0)
    for _ in range(60):
        f = jax.jit(lambda x, g=f: g(x) * 1.0)
    t = from_jax(f, 1.0)
    assert evaluate(t, {"x": 2.0}) == 3.0
    assert Symbol("x") in t.free_symbols


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(float_terms(), int_terms())
def test_random_terms_read_back_from_their_jaxpr(ft, it):
    for t, env in ((ft, float_env(8)), (it, int_env(8))):
        f = to_jax(t)
        args = [env[s.name] for s in f.inputs]
        back = from_jax(f, *args)
        with np.errstate(all="ignore"):
            want = np.broadcast_to(evaluate(t, env), (8,))
            got = np.broadcast_to(evaluate(back, env), (8,))
        assert_values(got, want, t.dtype)


@pytest.mark.parametrize(("spec", "shapes"), EINSUM_SPECS)
def test_einsum_converts_both_ways(spec, shapes):
    rng = np.random.default_rng(len(spec))
    ops = [Symbol(f"a{n}", shape=s) for n, s in enumerate(shapes)]
    values = [rng.uniform(-1, 1, s) for s in shapes]
    t = einsum(spec, *ops)
    want = evaluate(t, dict(zip(ops, values, strict=True)))
    assert_values(to_jax(t, ops)(*values), want, "float64")
    names = [s.name for s in ops]
    back = from_jax(lambda *xs: jnp.einsum(spec, *xs), *values, names=names)  # dot_general (and transposes)
    assert_values(evaluate(back, dict(zip(names, values, strict=True))), want, "float64")


@pytest.mark.parametrize("largest", [True, False])
@pytest.mark.parametrize("axis", [0, 1])
def test_topk_agrees_with_ties(axis, largest):
    x = Symbol("x", shape=TIES.shape)
    values, index = topk(x, 3, axis, largest)
    got = to_jax([values, index], [x])(TIES)
    assert_values(got[0], evaluate(values, {"x": TIES}), "float64")
    assert_values(got[1], evaluate(index, {"x": TIES}), "int64")
