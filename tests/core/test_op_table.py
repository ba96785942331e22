"""The op table: declared properties, and a new op registered in one call reaches every layer."""

from __future__ import annotations

import numpy as np
import pytest

import exprgraph as eg
from exprgraph import Op, Symbol, register_op
from exprgraph.core.stdops import real

REQUIRED = ["add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "neg", "abs", "exp", "log", "sqrt",
            "sin", "cos", "tan", "tanh", "sigmoid", "maximum", "minimum", "where", "lt", "le", "gt", "ge",
            "eq", "ne", "logical_and", "logical_or", "logical_not", "dot", "matmul", "sum", "transpose"]  # fmt: skip


@pytest.mark.parametrize("name", REQUIRED)
def test_every_op_is_declared_completely(name):
    op = eg.get_op(name)
    assert op.name == name
    assert op.impl is not None or op.ufunc is not None
    assert op.notation in ("infix", "prefix", "call")
    assert op.doc


def test_algebraic_properties():
    add, mul, sub = eg.get_op("add"), eg.get_op("mul"), eg.get_op("sub")
    assert add.commutative and add.associative and add.identity == 0
    assert mul.absorbing == 0 and mul.identity == 1
    assert not sub.commutative
    assert eg.get_op("maximum").idempotent
    assert eg.get_op("max") is eg.get_op("maximum")
    assert eg.get_op("lt").relational


def test_registering_a_new_op_reaches_printing_and_parsing():
    op = register_op(Op("softplus_t", 1, real, impl=lambda v: np.log1p(np.exp(v)), doc="log(1+exp(x))."))
    x = Symbol("x")
    t = op(x) * 2
    assert str(t) == "softplus_t(x)*2"
    assert eg.parse("softplus_t(x)*2") is t
    assert op in eg.ops()
    with pytest.raises(ValueError, match="already registered"):
        register_op(Op("softplus_t", 1, real))
    assert register_op(Op("softplus_t", 1, real, impl=op.impl, doc="again"), replace=True).doc == "again"


def test_op_validation():
    with pytest.raises(ValueError):
        Op("bad name", 1, real)
    with pytest.raises(ValueError):
        Op("x1", 1, real, notation="postfix")
    with pytest.raises(KeyError):
        eg.get_op("nope")
