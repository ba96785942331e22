"""The term base: the C one (when built) and the pure Python one intern alike and type alike."""

from __future__ import annotations

import gc
import itertools
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import exprgraph as eg
from exprgraph.core import termbase
from exprgraph.core.inference import arith, boolean, real, same, where_rule
from exprgraph.core.op import ops
from exprgraph.diff import sweep

native = termbase.native()
needs_native = pytest.mark.skipif(not native, reason="the C term base is not built")


@pytest.mark.skipif(not os.environ.get("EXPRGRAPH_EXPECT_COMPILED"), reason="only where the build must be compiled")
def test_the_build_has_the_c_term_base() -> None:
    # `make test` sets EXPRGRAPH_EXPECT_COMPILED: a build that fell back to pure Python fails here
    assert native and sweep.native()


SCALARS = [eg.Symbol("b", "bool"), eg.Symbol("i", "int64"), eg.Symbol("f", "float32"), eg.Symbol("d", "float64")]


@pytest.mark.parametrize(
    "op",
    [op for op in ops() if op.infer in (arith, real, same, boolean, where_rule)],
    ids=lambda op: op.name,
)
def test_dtypes_of_scalar_operands_are_the_rules_dtypes(op: eg.Op) -> None:
    lo, hi = op.arity
    for n in range(lo, min(hi if hi is not None else 3, 3) + 1):
        for args in itertools.product(SCALARS, repeat=n):
            try:
                expected = op.infer(args, None)
            except (TypeError, ValueError) as exc:
                with pytest.raises(type(exc)):
                    eg.Term(op, args)
                continue
            t = eg.Term(op, args)
            assert (t.dtype, t.shape) == expected, args


def test_construction_errors_say_what_is_wrong() -> None:
    x = eg.Symbol("x")
    with pytest.raises(TypeError, match=r"sin takes 1 operands, got 2"):
        eg.Term(eg.get_op("sin"), (x, x))
    with pytest.raises(TypeError, match=r"add takes 2\.\. operands, got 1"):
        eg.Term(eg.get_op("add"), (x,))
    with pytest.raises(TypeError, match="operands of mul must be terms, got float"):
        eg.Term(eg.get_op("mul"), (x, 2.0))
    with pytest.raises(TypeError, match="sin takes no attribute"):
        eg.Term(eg.get_op("sin"), (x,), 3)
    with pytest.raises(KeyError):
        eg.Term("no_such_op", (x,))
    assert eg.Term("sin", [x]) is eg.sin(x)  # an op name and a list of operands are accepted


def test_find_term_finds_live_terms_only() -> None:
    x, y = eg.symbols("x_found y_found")  # names no other test builds products of
    mul = eg.get_op("mul")
    t = x * y
    assert termbase.find_term(mul, (x, y)) is t
    assert termbase.find_term(mul, (y, x)) is None
    const = eg.get_op("const")
    for v in (2.5, -7, 3, float("inf"), -0.0, float("nan"), True, np.float32(1.5)):
        c = eg.const(v)
        assert termbase.find_term(const, (), v) is c, v  # the attr key agrees with how it was interned


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.floats(), st.integers(-(2**63), 2**63 - 1), st.booleans()))
def test_constants_are_found_again_by_value(v: float | int | bool) -> None:
    c = eg.const(v)
    assert eg.const(v) is c
    assert eg.Term(eg.get_op("const"), (), v) is c
    assert termbase.find_term(eg.get_op("const"), (), v) is c


@needs_native
def test_c_terms_are_not_tracked_by_the_cyclic_collector() -> None:
    x = eg.Symbol("x")
    assert not gc.is_tracked(eg.sin(x) + x)


@needs_native
def test_operand_tuples_of_c_terms_leave_the_collector_at_once() -> None:
    # a tuple of untracked terms can never be part of a cycle: no collection has to walk it
    x, y = eg.Symbol("x"), eg.Symbol("y")
    t = eg.Term(eg.get_op("add"), tuple([x, eg.sin(y)]))
    assert not gc.is_tracked(t.args)


def test_every_way_of_calling_term_gives_the_same_term() -> None:
    # the C base takes Term(op, args[, attr]) without packing its arguments; other calls take the tuple way
    x, y = eg.Symbol("x"), eg.Symbol("y")
    add = eg.get_op("add")
    t = eg.Term(add, (x, y))
    assert eg.Term(add, [x, y]) is t
    assert eg.Term("add", (x, y)) is t
    assert eg.Term(op=add, args=(x, y)) is t
    assert eg.Term(add, (x, y), None) is t
    assert eg.Term(add, (x, y), attr=None) is t
    c = eg.Term(eg.get_op("const"), (), 2.5)
    assert c is eg.const(2.5)
    with pytest.raises(TypeError):
        eg.Term()
    with pytest.raises(TypeError):
        eg.Term(add, (x, y), None, None)
    with pytest.raises(TypeError):
        eg.Term(add, (x, 1.0))


def test_the_intern_table_forgets_dead_terms() -> None:
    x = eg.Symbol("x_forgotten")
    before = eg.intern_table_size()
    chain = x
    for _ in range(1000):
        chain = eg.sin(chain)
    assert eg.intern_table_size() >= before + 1000
    del chain
    gc.collect()
    assert eg.intern_table_size() < before + 10


_SCRIPT = textwrap.dedent(
    """
    import exprgraph as eg
    from exprgraph.core import termbase
    from exprgraph.diff import grad, hessian, jvp
    xs = [eg.Symbol(f"x{i}") for i in range(9)]
    x32 = eg.Symbol("w", "float32")
    f = eg.add(*(eg.sin(xs[i] * xs[i + 1]) + eg.exp(xs[i]) / (1 + xs[i] ** 2) for i in range(8)))
    g = f * eg.cos(x32) + eg.tanh(xs[0] - 2.0) ** 3 - eg.log1p(eg.sqrt(xs[1]) / xs[2])
    print(termbase.native())
    for d in grad(g, [*xs, x32]):
        print(d)
    h = hessian(f, xs, sparse=True)
    print(h.rows, h.cols)
    print([str(v) for v in h.values])
    print(jvp(g, xs[:2], [1.0, xs[3]]))
    print(eg.simplify(grad(g, xs[0])))
    """
)


def test_the_pure_and_the_c_base_build_the_same_terms() -> None:
    runs = []
    for pure in (False, True):
        env = dict(os.environ)
        env.pop("EXPRGRAPH_PURE_PYTHON", None)
        if pure:
            env["EXPRGRAPH_PURE_PYTHON"] = "1"
        done = subprocess.run([sys.executable, "-c", _SCRIPT], capture_output=True, text=True, env=env, timeout=300)
        assert done.returncode == 0, done.stderr
        runs.append(done.stdout.splitlines())
    assert runs[1][0] == "False"
    assert runs[0][1:] == runs[1][1:]
