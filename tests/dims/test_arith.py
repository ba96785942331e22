"""DimArith: dimension arithmetic on dims' polynomials gives what simplifying each operation's term gives.

The reference is the road shape inference took before (``interop/onnx_dims.Dims``): build the
operation's term over the operands, then simplify it (``simplify_dim``, or a DimEnv's ``simplify``).
Random chains of operations, each on earlier results, must give the very same canonical terms,
raise the same errors and keep the same limits (int64, MAX_TERM_SIZE).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from exprgraph.core import Term, const
from exprgraph.dims import DimEnv, clear_caches, compiled_modules, dim_name, parse_expression, simplify_dim, unparse
from exprgraph.dims import arith as arith_module
from exprgraph.dims.arith import DimArith
from exprgraph.dims.arith_twin import TermRoad
from exprgraph.errors import DimOverflowError, ShapeError

NAMES = [dim_name(n) for n in ("a", "b", "c", "seq")]
OPS = ["add", "sub", "mul", "floordiv", "mod", "ceildiv", "max", "min", "neg"]


def _outcome(fn, *args):
    try:
        return ("value", fn(*args))
    except (ArithmeticError, ValueError) as exc:
        return ("error", type(exc).__name__)


def _env(kind: str) -> DimEnv | None:
    if kind == "plain":
        return None
    env = DimEnv(default=(1, None) if kind == "env>=1" else (0, None))
    return env.set_range("seq", (2, 4096))


_steps = st.lists(
    st.tuples(st.sampled_from(OPS), st.integers(0, 10**6), st.integers(0, 10**6)), min_size=1, max_size=24
)


@settings(max_examples=150, deadline=None)
@given(
    steps=_steps,
    ints=st.lists(st.integers(-4, 12), min_size=2, max_size=4),
    positive=st.booleans(),
    kind=st.sampled_from(["plain", "env>=1", "env>=0"]),
)
def test_chains_give_the_reference_terms(steps, ints, positive, kind):
    env = _env(kind)
    ref, new = TermRoad(positive, env), DimArith(positive, env)
    pool: list = [*NAMES, *ints]
    for k, (name, i, j) in enumerate(steps):
        if env is not None and i % 7 == 0:
            # a fresh data-dependent size, as ONNX inference makes one: the env moves to a new state
            env.set_range(f"fresh{k}", (0, j % 50 + 1))
            pool.append(dim_name(f"fresh{k}"))
        a, b = pool[i % len(pool)], pool[j % len(pool)]
        expected = _outcome(ref.op, name, a, b)
        got = _outcome(new.neg, a) if name == "neg" else _outcome(getattr(new, name), a, b)
        assert got == expected, (name, a, b)
        if got[0] == "value" and got[1] is not None:
            pool.append(got[1])
        if got[0] == "value" and got[1].__class__ is Term:
            # the size bound that spares counting nodes is a bound indeed
            assert arith_module._size_bound(new._state().polys[got[1]]) >= got[1].size


@settings(max_examples=60, deadline=None)
@given(dims=st.lists(st.one_of(st.sampled_from(NAMES), st.integers(0, 9), st.none()), max_size=8))
def test_prod_and_total_are_the_folds(dims):
    ref, new = TermRoad(True, None), DimArith(True)
    for name, start in (("mul", 1), ("add", 0)):
        expected = start
        for d in dims:
            expected = ref.op(name, expected, d)
        got = new.prod(dims) if name == "mul" else new.total(dims)
        assert got == expected


@pytest.mark.skipif(
    "arith" in compiled_modules(), reason="compiled code calls to_poly directly: a monkeypatch cannot count the calls"
)
def test_results_are_remembered_with_their_polynomials(monkeypatch):
    """An operation reads its operands' polynomials from the table: no result is read back into one."""
    calls: list[Term] = []
    real = arith_module.to_poly
    monkeypatch.setattr(arith_module, "to_poly", lambda t, ctx: calls.append(t) or real(t, ctx))
    d = DimArith(positive=True)
    h, w = dim_name("arith_h"), dim_name("arith_w")
    for _ in range(3):  # three conv layers, then the flattened size and its halves
        h = d.add(d.floordiv(d.sub(d.add(h, 2), 3), 2), 1)
        w = d.add(d.floordiv(d.sub(d.add(w, 2), 3), 2), 1)
    flat = d.prod([8, h, w])
    half = d.ceildiv(flat, 2)
    assert d.sub(d.add(half, d.floordiv(flat, 2)), flat) == 0
    assert calls == [dim_name("arith_h"), dim_name("arith_w")]  # only the two names, once each


def test_a_cleared_context_is_noticed():
    d = DimArith()
    x = d.floordiv(d.add(dim_name("x"), 7), 8)
    clear_caches()
    y = d.max(x, d.floordiv(d.add(dim_name("x"), 7), 8))
    d.context().clear()  # what trimming the caches does
    assert y is x and d.mul(d.sub(x, 1), 8) is simplify_dim(parse_expression("((x+7)//8 - 1)*8"))


def test_int64_bounds():
    d = DimArith()
    assert d.add(2**62, 2**62 - 1) == 2**63 - 1
    with pytest.raises(DimOverflowError):
        d.add(2**62, 2**62)
    with pytest.raises(DimOverflowError):
        d.mul(dim_name("x"), 2**63)  # an operand outside int64
    with pytest.raises(DimOverflowError):
        d.mul(d.mul(dim_name("x"), 2**40), 2**40)  # a coefficient past int64
    with pytest.raises(DimOverflowError):
        d.prod([dim_name("x"), 2**40, 2**40, 0])  # as the steps one at a time would raise
    with pytest.raises(DimOverflowError):
        d.simplify(2**63)
    with pytest.raises(ZeroDivisionError):
        d.floordiv(7, 0)
    assert unparse(d.floordiv(dim_name("x"), 0)) == "x//0"  # a zero divisor leaves the term alone


def test_limits_and_bad_operands():
    d = DimArith()
    big = parse_expression("+".join(f"s{i}*t{i}" for i in range(200)))
    assert d.simplify(big) is None  # more than MAX_TERM_SIZE nodes: unknown
    assert d.add(big, 1) is None and d.add(None, 1) is None and d.max(1, None) is None
    assert d.simplify(dim_name("x")) is dim_name("x") and d.simplify(None) is None
    for bad in (True, 1.5, "x", np.int64(3), const(1.5)):
        with pytest.raises(ShapeError):
            d.add(bad, dim_name("x"))
    with pytest.raises(ShapeError):
        d.simplify(2.0)


def test_compare():
    d = DimArith(positive=True)
    x, y = dim_name("x"), dim_name("y")
    assert d.compare("eq", d.mul(2, d.add(x, 1)), d.add(d.mul(2, x), 2)) is True
    assert d.compare("lt", x, d.add(x, 1)) is True and d.compare("ge", x, d.add(x, 1)) is False
    assert d.compare("ge", x, 1) is True and d.compare("gt", x, 1) is None and d.compare("eq", x, y) is None
    assert d.compare("ne", 3, 4) is True and d.compare("le", None, 4) is None
    assert DimArith().compare("ge", x, 1) is None  # names >= 0 only
    with pytest.raises(ValueError):
        d.compare("approx", x, y)


def test_broadcast_with_unknowns():
    d = DimArith(positive=True)
    x, y = dim_name("x"), dim_name("y")
    assert d.broadcast([(x, 1, None), (1, 8, 8)]) == (x, 8, 8)
    assert d.broadcast([(None, 3), (1, 1)]) == (None, 3)
    assert d.broadcast([(x,), (None,)]) == (None,) and d.broadcast([(1,), (None,)]) == (None,)
    assert d.broadcast([(x, 4), None]) is None and d.broadcast([(), (2,)]) == (2,)
    s = d.sub(d.add(x, y), 1)
    assert d.broadcast([(s,), (x,)]) == (s,)  # max(x+y-1, x) is x+y-1 for sizes >= 1
    assert DimArith().broadcast([(s,), (x,)]) == (DimArith().max(s, x),)  # not for sizes >= 0
    with pytest.raises(ShapeError):
        d.broadcast([(3, None), (4, 1)])  # 3 and 4 never broadcast, whatever the unknown is


@settings(max_examples=80, deadline=None)
@given(
    shapes=st.lists(st.lists(st.sampled_from([1, 1, 2, 3]), min_size=0, max_size=4), min_size=1, max_size=4),
    hide=st.lists(st.booleans(), min_size=16, max_size=16),
)
def test_broadcast_agrees_with_numpy(shapes, hide):
    """Known shapes broadcast as numpy's; an unknown entry gives the same size or an unknown, never another."""
    try:
        expected = np.broadcast_shapes(*[tuple(s) for s in shapes])
    except ValueError:
        expected = None
    flags = iter(hide)
    blurred = [tuple(None if next(flags, False) else n for n in s) for s in shapes]
    for given_shapes in ([tuple(s) for s in shapes], blurred):
        try:
            got = DimArith().broadcast(given_shapes)
        except ShapeError:
            assert expected is None  # (sizes that never broadcast are found with unknowns beside them too)
            continue
        if expected is None:
            assert given_shapes is blurred  # the unknown entry may be the size that did not fit
            continue
        assert len(got) == len(expected)
        assert all(g is None or g == e for g, e in zip(got, expected, strict=True))
