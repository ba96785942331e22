"""Recorded gradient rules (core.grad_template) and the C sweep: the same terms as the rules and the Python loop."""

from __future__ import annotations

import importlib
import itertools

import numpy as np
import pytest

import exprgraph as eg
from exprgraph.core.grad_template import MAX_OPERANDS, record, replay, signature
from exprgraph.core.op import ops

forward_mode = importlib.import_module("exprgraph.diff.forward")  # the module (the package exports its function)

x, y, z = eg.symbols("x y z")
x32 = eg.Symbol("x32", "float32")
i, j = eg.Symbol("i", "int64"), eg.Symbol("j", "int64")
p, q = eg.Symbol("p", "bool"), eg.Symbol("q", "bool")

#: operands to try: symbols of each dtype and constants the folds care about
OPERANDS = [
    x,
    y,
    x32,
    i,
    p,
    eg.const(1.0),
    eg.const(-1.0),
    eg.const(0.0),
    eg.const(2.0),
    eg.const(0.5),
    eg.const(1),
    eg.const(2),
    eg.const(-3),
    eg.const(0),
    eg.const(np.float32(1.0)),
    eg.const(np.float32(2.0)),
    eg.const(True),
]
#: adjoints to try: the shapes of g the folds look at
ADJOINTS = [
    eg.Symbol("g"),
    eg.Symbol("g32", "float32"),
    eg.const(1.0),
    eg.const(-2.5),
    eg.const(1),
    eg.const(np.float32(1.0)),
    -eg.Symbol("h"),
    1.0 / eg.Symbol("h"),
    eg.const(2.0) * eg.Symbol("h"),
]


def _scalar_nodes(op: eg.Op) -> list[eg.Term]:
    """Every node of ``op`` over the scalar operands above that the op accepts (up to 3 operands)."""
    lo, hi = op.arity
    counts = [n for n in range(max(lo, 1), (hi if hi is not None else 3) + 1) if n <= 3]
    found = []
    for n in counts:
        for args in itertools.product(OPERANDS, repeat=n):
            if all(a.op.name == "const" for a in args):
                continue
            try:
                found.append(eg.Term(op, tuple(args)))
            except (TypeError, ValueError):
                continue
    return found


SCALAR_OPS = [op for op in ops() if op.grad is not None and op.notation != "leaf" and _scalar_nodes(op)]


@pytest.mark.parametrize("op", SCALAR_OPS, ids=lambda op: op.name)
def test_replaying_a_recorded_rule_builds_what_the_rule_builds(op: eg.Op) -> None:
    nodes = _scalar_nodes(op)
    assert nodes
    for node in nodes:
        for g in ADJOINTS:
            template = record(node, g)
            assert template is not None, node
            expected = tuple(node.op.grad(node, g))
            assert replay(template, node, g) == expected, (node, g)


def test_a_signature_leaves_out_constant_values_unless_the_rule_reads_them() -> None:
    g = eg.Symbol("g")
    assert signature(x * 2.0, g) == signature(x * 3.0, g)  # mul's rule does not read its constants
    assert signature(x**2, g) != signature(x**3, g)  # pow's does (the exponent)
    assert signature(x * 2.0, g) != signature(x * y, g)
    assert signature(x * 2.0, g) != signature(x * 2.0, eg.Symbol("g32", "float32"))


def test_nodes_with_a_shape_or_many_operands_are_not_recorded() -> None:
    v = eg.Symbol("v", shape=(3,))
    g = eg.Symbol("g")
    assert signature(v * 2.0, eg.Symbol("gv", shape=(3,))) is None
    many = eg.add(*eg.symbols(" ".join(f"s{k}" for k in range(MAX_OPERANDS + 1))))
    assert signature(many, g) is None and record(many, g) is None


def test_one_template_serves_every_constant_of_a_rule_that_does_not_read_them() -> None:
    g = eg.Symbol("g")
    template = record(x * 2.0, g)
    assert template is not None
    for c in (3.0, 1.0, -0.0, 1e300):
        node = x * c
        assert replay(template, node, g) == tuple(node.op.grad(node, g))
