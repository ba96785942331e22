"""The C fast paths of building (core/_cterm_ops.c) give the terms the Python methods give.

With the C base, ``x + y``, ``x * 2.5``, ``1.0 - x`` and ``sin(x)`` intern in C; term.py's ``_binary``
methods and ``Op.__call__`` stay the definition and are called for every other operand. Each test
compares the two ways (interned terms: ``is``); the last one compares both bases in fresh processes.
"""

from __future__ import annotations

import gc
import math
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
from exprgraph.core.leaves import const_infer, symbol_infer
from exprgraph.core.operators import REFLECTED
from exprgraph.core.term import Term, _binary
from exprgraph.core.tokens import check_name
from exprgraph.match.patterns import V

x, y = eg.Symbol("x"), eg.Symbol("y")
i, b = eg.Symbol("i", "int64"), eg.Symbol("b", "bool")
h = eg.Symbol("h", "float32")

#: operator method -> the Python operator applying it
APPLY = {
    "add": lambda p, q: p + q,
    "sub": lambda p, q: p - q,
    "mul": lambda p, q: p * q,
    "truediv": lambda p, q: p / q,
    "floordiv": lambda p, q: p // q,
    "mod": lambda p, q: p % q,
    "pow": lambda p, q: p**q,
    "matmul": lambda p, q: p @ q,
    "and": lambda p, q: p & q,
    "or": lambda p, q: p | q,
}


def outcome(fn: object) -> object:
    """The term ``fn()`` builds, or the class of the error it raises."""
    try:
        return fn()  # type: ignore[operator]
    except Exception as exc:  # the class is what both ways must agree on
        return type(exc)


def test_every_reflected_method_has_an_operator() -> None:
    assert [m for m, _ in REFLECTED] == list(APPLY)


@pytest.mark.parametrize(("method", "name"), REFLECTED, ids=[m for m, _ in REFLECTED])
@pytest.mark.parametrize("other", [y, i, b, h, 2.5, 3, -0.0, math.nan, 0, True, 2**70, np.float64(2.0), np.int64(4)])
@pytest.mark.parametrize("term", [x, i, b, h])
def test_operators_give_the_python_methods_terms(method: str, name: str, term: Term, other: object) -> None:
    forward, reflected = _binary(name)
    op = APPLY[method]
    want = outcome(lambda: forward(term, other))
    got = outcome(lambda: op(term, other))
    if want is NotImplemented:
        assert got is TypeError
    else:
        assert got is want
    if other.__class__ in (float, int, bool):  # a Python number on the left: the reflected method
        # (a numpy scalar on the left decides first, through its ufunc: not the term's operator)
        want = outcome(lambda: reflected(term, other))
        got = outcome(lambda: op(other, term))
        assert got is (TypeError if want is NotImplemented else want)


def test_numbers_become_the_constants_const_makes() -> None:
    assert (x * 2.5).args[1] is eg.const(2.5)
    assert (1 - x).args[0] is eg.const(1)
    assert (x + 1).args[1] is not (x + 1.0).args[1]  # 1 and 1.0 are different constants
    assert (x + 0.0).args[1] is not (x + -0.0).args[1]
    assert (x + math.nan).args[1] is (x + math.nan).args[1]  # a nan constant is found again
    assert (h * 2.0).args[1].dtype == "float32"  # a weak number next to float32 (Python's way)
    assert (x + True).args[1].dtype == "bool"


def test_operands_that_are_not_numbers_go_to_python() -> None:
    assert str(x + V.a) == "add(x, V.a)"  # the pattern's reflected method builds a pattern
    assert (x + V.a).__class__ is not Term
    with pytest.raises(OverflowError, match="does not fit in int64"):
        _ = x + 2**70
    with pytest.raises(TypeError):
        pow(x, 2, 3)  # type: ignore[call-overload]
    with pytest.raises(TypeError):
        _ = x + "a"
    assert str(x * np.array([1.0, 2.0])) == "x*array([1.0, 2.0])"


def test_op_calls_give_op_call_terms() -> None:
    sin, add = eg.get_op("sin"), eg.get_op("add")
    assert sin(x) is Term(sin, (x,))
    assert add(x, y, x) is Term(add, (x, y, x))
    assert add(x, 2.0) is Term(add, (x, eg.const(2.0)))  # a number: Op.__call__ wraps it
    assert eg.get_op("sum")(eg.Symbol("v", shape=(3,)), axis=0) is not None  # a keyword: Op.__call__
    with pytest.raises(TypeError, match="sin takes 1 operands, got 2"):
        sin(x, y)
    with pytest.raises(TypeError, match="takes no keyword arguments"):
        sin(x, scale=2)


@pytest.mark.parametrize("value", [0.5, -3.0, 7, -(2**63), 2**63 - 1, 0, 0.0, -0.0, math.inf, math.nan, True])
def test_constants_have_their_rules_dtype(value: object) -> None:
    t = eg.const(value)
    assert (t.dtype, t.shape) == const_infer((), value)


@pytest.mark.parametrize(("dtype", "shape"), [("float64", ()), ("int64", ()), ("float32", (2, 3)), ("bool", ("n",))])
def test_symbols_have_their_rules_dtype(dtype: str, shape: tuple) -> None:
    s = eg.Symbol("s", dtype, shape)
    assert (s.dtype, s.shape) == symbol_infer((), s.attr)


def test_symbol_names_checked_quickly_are_the_names_checked_fully() -> None:
    for good in ("x", "x0", "_a", "abc_DEF_9", "\u00e9t\u00e9"):
        assert check_name(good) == good
    for bad in ("None", "inf", "lambda", "0x", "a b", "", "a" * 513, "e\u0301"):
        with pytest.raises(ValueError):
            check_name(bad)


# operators and numbers, as a tree: a list [method, left, right] or a leaf
_leaf = st.sampled_from([x, y, i, 2.5, 3, -1.0, 0.5])
_tree = st.recursive(
    _leaf, lambda kids: st.tuples(st.sampled_from(["add", "sub", "mul", "truediv", "pow"]), kids, kids), max_leaves=12
)


def _by_operators(tree: object) -> object:
    if not isinstance(tree, tuple):
        return tree
    method, left, right = tree
    return APPLY[method](_by_operators(left), _by_operators(right))


def _by_methods(tree: object) -> object:
    if not isinstance(tree, tuple):
        return tree
    method, left, right = tree
    p, q = _by_methods(left), _by_methods(right)
    forward, reflected = _binary(method)
    return forward(p, q) if p.__class__ is Term else reflected(q, p) if q.__class__ is Term else APPLY[method](p, q)


@settings(max_examples=150, deadline=None)
@given(_tree)
def test_random_expressions_are_the_same_terms_both_ways(tree: object) -> None:
    want = outcome(lambda: _by_methods(tree))
    got = outcome(lambda: _by_operators(tree))
    if want is NotImplemented:  # a method declined (a complex number): the operator raises
        assert got is TypeError
    elif isinstance(want, (Term, type)):
        assert got is want
    else:  # two numbers only: Python's own arithmetic
        assert got == want or got != got


_SCRIPT = textwrap.dedent(
    """
    import math
    import exprgraph as eg
    from exprgraph.core import termbase
    print(termbase.native())
    x, i, h = eg.Symbol("x"), eg.Symbol("i", "int64"), eg.Symbol("h", "float32")
    for t in (x, i, h):
        for v in (2.5, 3, -0.0, math.nan, True, 0):
            for e in (t + v, v - t, t * v, v / t, t ** v, v ** t, t // v, v % t):
                print(repr(e), e.dtype, [a.dtype for a in e.args])
    print(repr(eg.sin(x) * eg.cos(i) + eg.add(x, i, h)))
    """
)


def test_the_pure_and_the_c_base_build_the_same_terms_with_numbers() -> None:
    runs = []
    for pure in (False, True):
        env = dict(os.environ)
        env.pop(termbase.PURE_ENV, None)
        if pure:
            env[termbase.PURE_ENV] = "1"
        done = subprocess.run([sys.executable, "-c", _SCRIPT], capture_output=True, text=True, env=env, timeout=300)
        assert done.returncode == 0, done.stderr
        runs.append(done.stdout.splitlines())
    assert runs[1][0] == "False"
    assert runs[0][1:] == runs[1][1:]


@pytest.mark.skipif(not termbase.native(), reason="the C term base is not built")
def test_terms_are_found_again_once_the_table_is_mapped_on_its_own() -> None:
    # from 2 MiB of slots (262,144) the table is mapped apart (huge pages where Linux allows them)
    z = eg.Symbol("z_mapped")
    terms = [z * float(k) for k in range(200_000)]
    assert (termbase.intern_table_capacity() or 0) * 8 >= 2 << 20
    assert all(z * float(k) is t for k, t in zip(range(0, 200_000, 997), terms[::997], strict=True))
    del terms
    gc.collect()
    assert (z * 3.0).args == (z, eg.const(3.0))
