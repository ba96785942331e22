"""The one table of Python operators: terms and match patterns build the op each method names."""

from __future__ import annotations

import pytest

from exprgraph.core import Symbol, Term
from exprgraph.core.operators import COMPARISONS, REFLECTED
from exprgraph.match import V
from exprgraph.match.patterns import OpPattern

x, y = Symbol("x"), Symbol("y")
a = V.a


@pytest.mark.parametrize(("method", "op"), REFLECTED)
def test_term_operators_build_their_op_both_ways(method, op):
    u, v = (Symbol("A", shape=(2, 2)), Symbol("B", shape=(2, 2))) if op == "matmul" else (x, y)
    forward = getattr(u, f"__{method}__")(v)
    reflected = getattr(u, f"__r{method}__")(v)
    assert isinstance(forward, Term) and forward.op.name == op and forward.args == (u, v)
    assert reflected.op.name == op and reflected.args == (v, u)


@pytest.mark.parametrize("method", COMPARISONS)
def test_term_comparisons_build_their_op(method):
    t = getattr(x, f"__{method}__")(2)
    assert t.op.name == method and t.args[0] is x and t.dtype == "bool"


@pytest.mark.parametrize(("method", "op"), REFLECTED)
def test_pattern_operators_build_op_patterns_both_ways(method, op):
    forward = getattr(a, f"__{method}__")(1)
    reflected = getattr(a, f"__r{method}__")(1)
    assert isinstance(forward, OpPattern) and forward.op.name == op
    assert forward.args[0] is a and forward.args[1] == 1
    assert reflected.op.name == op and reflected.args[0] == 1 and reflected.args[1] is a


@pytest.mark.parametrize("method", COMPARISONS)
def test_pattern_comparisons_build_op_patterns(method):
    p = getattr(a, f"__{method}__")(2)
    assert isinstance(p, OpPattern) and p.op.name == method and p.args[0] is a and p.args[1] == 2
