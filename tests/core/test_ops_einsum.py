"""einsum: values against numpy on random specs and shapes, gradients against finite differences,
printing round trips, the spec's named errors, and the contraction builder (dot_general's order)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import exprgraph as eg
from exprgraph.core.ops_einsum import contraction, einsum, einsum_spec
from exprgraph.diff import grad, jacobian
from exprgraph.errors import EinsumSpecError, ShapeError
from exprgraph.eval import evaluate

SUM = eg.get_op("sum")
SIZES = {"i": 2, "j": 3, "k": 4, "l": 1, "m": 2}


@st.composite
def specs(draw: st.DrawFn) -> tuple[str, list[tuple[int, ...]]]:
    """A random explicit spec over i..m (no index repeated within an operand) and the operands' shapes."""
    letters = list(SIZES)
    n = draw(st.integers(1, 3))
    subs = []
    for _ in range(n):
        order = draw(st.permutations(letters))
        subs.append("".join(order[: draw(st.integers(0, 3))]))
    used = sorted(set("".join(subs)))
    out = "".join(draw(st.permutations(used))[: draw(st.integers(0, len(used)))]) if used else ""
    return ",".join(subs) + "->" + out, [tuple(SIZES[c] for c in s) for s in subs]


def _operands(shapes: list[tuple[int, ...]]) -> list[eg.Term]:
    return [eg.Symbol(f"a{n}", shape=s) for n, s in enumerate(shapes)]


@settings(max_examples=60, deadline=None)
@given(specs(), st.integers(0, 2**32 - 1))
def test_values_are_numpys_and_text_reads_back(spec_shapes, seed):
    spec, shapes = spec_shapes
    rng = np.random.default_rng(seed)
    ops = _operands(shapes)
    values = [rng.uniform(-2, 2, s) for s in shapes]
    t = einsum(spec, *ops)
    assert einsum_spec(t) == spec
    np.testing.assert_allclose(evaluate(t, dict(zip(ops, values, strict=True))), np.einsum(spec, *values), atol=1e-12)
    assert eg.parse(str(t), ops) is t
    names = {**vars(eg), "einsum": eg.get_op("einsum")}
    assert eval(repr(t), names) is t  # the repr of our own term: the constructors' syntax


@settings(max_examples=40, deadline=None)
@given(specs(), st.integers(0, 2**32 - 1))
def test_gradients_are_finite_differences(spec_shapes, seed):
    # f = sum(w * einsum(...)) with random weights w: d f / d a_n against central differences
    spec, shapes = spec_shapes
    rng = np.random.default_rng(seed)
    ops = _operands(shapes)
    values = [rng.uniform(-2, 2, s) for s in shapes]
    t = einsum(spec, *ops)
    w = eg.const(rng.uniform(-1, 1, tuple(t.shape))) if t.shape else eg.const(1.5)
    f = SUM(w * t) if t.shape else w * t
    env = dict(zip(ops, values, strict=True))
    for op, g in zip(ops, grad(f, ops), strict=True):
        got = np.broadcast_to(evaluate(g, env), op.shape)
        value = env[op]
        fd = np.zeros(value.shape)
        for pos in np.ndindex(*value.shape):
            for sign in (1, -1):
                moved = value.copy()
                moved[pos] += sign * 1e-6
                fd[pos] += sign * float(evaluate(f, {**env, op: moved})) / 2e-6
        np.testing.assert_allclose(got, fd, atol=1e-6)


def test_a_summed_index_of_one_operand_gets_the_upstream_broadcast():
    a, b = eg.Symbol("a", shape=(2, 3)), eg.Symbol("b", shape=(4,))
    f = SUM(einsum("ij,k->ik", a, b))
    env = {"a": np.ones((2, 3)), "b": np.arange(4.0)}
    np.testing.assert_allclose(evaluate(grad(f, a), env), np.full((2, 3), 6.0))
    np.testing.assert_allclose(evaluate(grad(f, b), env), np.full(4, 6.0))


def test_second_derivatives_are_einsums_too():
    x = eg.Symbol("x", shape=(3,))
    f = einsum("i,i->", x, x) * einsum("i->", x)  # |x|^2 * sum(x)
    xv = np.array([1.0, -2.0, 0.5])
    rows = jacobian(grad(f, x), [x])
    got = np.array([np.asarray(evaluate(row[0], {"x": xv})) for row in rows])
    want = 2 * np.eye(3) * xv.sum() + 2 * (xv[:, None] + xv[None, :])
    np.testing.assert_allclose(got.reshape(3, 3), want)


def test_bools_count_as_ints_and_symbolic_sizes_match_when_equal():
    p = eg.Symbol("p", "bool", (3,))
    t = einsum("i,i->", p, p)
    assert t.dtype == "int64" and evaluate(t, {"p": np.array([True, True, False])}) == 2
    n = eg.Symbol("n", "int64")
    a, b = eg.Symbol("a", shape=(n, 2)), eg.Symbol("b", shape=(2, n))
    assert einsum("ij,jk->ik", a, b).shape == (n, n)
    with pytest.raises(ShapeError, match="sizes"):
        einsum("ij,jk->ik", a, eg.Symbol("c", shape=(3, n)))


@pytest.mark.parametrize(
    ("spec", "pos", "what"),
    [
        ("ij,jk", 5, "'->'"),
        ("ij->i->j", 5, "'->'"),
        ("ii->i", 1, "repeated within one operand"),
        ("ij,jk->ikk", 9, "repeated in the output"),
        ("ij,jk->q", 7, "in no operand"),
        ("i j,jk->ik", 1, "not a letter"),
    ],
)
def test_a_bad_spec_names_the_position(spec, pos, what):
    a, b = eg.Symbol("a", shape=(2, 2)), eg.Symbol("b", shape=(2, 2))
    with pytest.raises(EinsumSpecError, match=what) as info:
        einsum(spec, a, b)
    assert info.value.pos == pos and isinstance(info.value, ValueError)


def test_operands_must_match_the_spec():
    a = eg.Symbol("a", shape=(2, 3))
    with pytest.raises(ShapeError, match="2 axes but 3"):
        einsum("ijk->i", a)
    with pytest.raises(ShapeError, match="names 2 operand"):
        einsum("ij,jk->ik", a)
    with pytest.raises(ShapeError, match="sizes 2 and 3"):
        einsum("ij,ij->", a, eg.Symbol("b", shape=(3, 3)))


@pytest.mark.parametrize(
    ("ashape", "bshape", "contract", "batch"),
    [((2, 3), (3, 4), ((1,), (0,)), ((), ())), ((5, 2, 3), (5, 4, 3), ((2,), (2,)), ((0,), (0,))),
     ((2, 3, 4), (4, 3), ((1, 2), (1, 0)), ((), ())), ((3, 2), (2, 3), ((), ()), ((0,), (1,)))],
)  # fmt: skip
def test_contraction_has_dot_generals_order(ashape, bshape, contract, batch):
    a, b = eg.Symbol("a", shape=ashape), eg.Symbol("b", shape=bshape)
    av, bv = np.random.default_rng(1).uniform(-1, 1, ashape), np.random.default_rng(2).uniform(-1, 1, bshape)
    t = contraction(a, b, contract, batch)
    (ca, cb), (ba, bb) = contract, batch
    want = np.tensordot(av, bv, (ca, cb)) if not ba else None
    if want is None:  # batch axes first, then a's free axes, then b's
        want = np.stack([np.tensordot(np.take(av, n, ba[0]), np.take(bv, n, bb[0]),
                                      ([c - (c > ba[0]) for c in ca], [c - (c > bb[0]) for c in cb]))
                         for n in range(ashape[ba[0]])])  # fmt: skip
    np.testing.assert_allclose(evaluate(t, {"a": av, "b": bv}), want, atol=1e-12)


def test_leading_batch_axes_are_numpys_ellipsis():
    # the numpy evaluation of many parameter sets: leading axes on any operand broadcast together
    t = einsum("i,ij->j", eg.Symbol("v", shape=(3,)), eg.Symbol("m", shape=(3, 2)))
    vv, mv = np.random.default_rng(0).uniform(-1, 1, (4, 3)), np.arange(6.0).reshape(3, 2)
    got = t.op.impl(vv, mv, attr=t.attr)
    np.testing.assert_allclose(got, np.stack([np.einsum("i,ij->j", row, mv) for row in vv]))
