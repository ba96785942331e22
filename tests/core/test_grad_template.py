"""Recorded gradient rules (core.grad_template) and the C sweep: the same terms as the rules and the Python loop."""

from __future__ import annotations

import importlib
import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import exprgraph as eg
from exprgraph.core import grad_tools, termbase
from exprgraph.core.grad_template import MAX_OPERANDS, record, replay, signature
from exprgraph.core.op import ops
from exprgraph.diff import pattern, reverse
from exprgraph.diff.reverse import backprop, live_order

native = termbase.native_sweep()
forward_mode = importlib.import_module("exprgraph.diff.forward")  # the module (the package exports its function)
needs_native = pytest.mark.skipif(native is None, reason="the C term base is not built")

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


# -- the C folds and sweep against the Python ones ---------------------------------------------------

TERMS = [*OPERANDS, *ADJOINTS, -x, -(x * y), 2.0 * x, -2.0 * x, 1.0 / y, x / y, eg.const(2.0) * x * y, -x32]


@needs_native
def test_the_c_folds_are_grad_tools_folds() -> None:
    for g in TERMS:
        assert native.negate(g) is grad_tools.negate(g), g
        for n in (1, 2):
            for factors in itertools.product(TERMS, repeat=n):
                try:
                    expected = grad_tools.product(g, factors)
                except (TypeError, ValueError) as exc:
                    with pytest.raises(type(exc)):
                        native.product(g, tuple(factors))
                    continue
                assert native.product(g, tuple(factors)) is expected, (g, factors)


@needs_native
def test_the_c_fan_in_is_the_python_one() -> None:
    floats = [eg.const(0.1), eg.const(0.2), eg.const(0.3)]
    assert native.fan_in(floats) is reverse._fan_in(floats) is eg.const(0.1 + 0.2 + 0.3)
    mixed = [eg.const(0.1), x, eg.const(2)]
    assert native.fan_in(mixed) is reverse._fan_in(mixed)


def _python_backprop(outputs, seeds, targets, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    with monkeypatch.context() as m:
        m.setattr(reverse, "_native", None)
        return backprop(outputs, seeds, targets)


_LEAVES = [x, y, z, x32, i, eg.const(2.0), eg.const(3), eg.const(0.5)]
_UNARY = ["sin", "cos", "exp", "log", "sqrt", "tanh", "neg", "abs", "sigmoid", "log1p", "softplus", "tan"]
_BINARY = ["add", "sub", "mul", "truediv", "pow", "maximum", "minimum", "logaddexp"]


@st.composite
def expressions(draw: st.DrawFn) -> eg.Term:
    """Random scalar DAGs over a few symbols of several dtypes, with shared nodes."""
    pool = list(_LEAVES)
    for _ in range(draw(st.integers(1, 25))):
        kind = draw(st.sampled_from(["unary", "binary", "nary"]))
        if kind == "unary":
            t = eg.get_op(draw(st.sampled_from(_UNARY)))(draw(st.sampled_from(pool)))
        elif kind == "binary":
            op = eg.get_op(draw(st.sampled_from(_BINARY)))
            t = op(draw(st.sampled_from(pool)), draw(st.sampled_from(pool)))
        else:
            op = eg.get_op(draw(st.sampled_from(["add", "mul"])))
            t = op(*draw(st.lists(st.sampled_from(pool), min_size=3, max_size=10)))
        pool.append(t)
    return pool[-1]


@needs_native
@settings(max_examples=150, deadline=None)
@given(expressions(), st.sampled_from([1.0, 2.0, -1.0]))
def test_the_c_sweep_builds_what_the_python_sweep_builds(f: eg.Term, seed: float) -> None:
    targets = [x, y, z, x32, i]
    monkeypatch = pytest.MonkeyPatch()
    expected = _python_backprop([f], [seed], targets, monkeypatch)
    assert backprop([f], [seed], targets) == expected  # the marked sweep
    order, live = live_order([f], set(targets))
    assert (order, live) == _python_live_order([f], set(targets), monkeypatch)
    columns = {t: k for k, t in enumerate(targets)}
    with monkeypatch.context() as m:
        m.setattr(pattern, "_native", None)
        python_sets = pattern.dependency_sets([f, *expected.values()], columns)
    assert pattern.dependency_sets([f, *expected.values()], columns) == python_sets


def _python_live_order(outputs, targets, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    with monkeypatch.context() as m:
        m.setattr(reverse, "_native", None)
        return live_order(outputs, targets)


@needs_native
@settings(max_examples=150, deadline=None)
@given(expressions(), st.sampled_from([1.0, -1.0, 0.5]))
def test_the_c_forward_sweep_builds_what_the_python_one_builds(f: eg.Term, c: float) -> None:
    u = eg.Symbol("u")
    seeds = {x: eg.const(c), y: u, x32: eg.const(np.float32(2.0)), i: eg.const(1.0)}
    outputs = [f, f * f]
    expected = forward_mode._sweep(outputs, seeds)
    assert native.forward(outputs, seeds, forward_mode._push) == expected


@needs_native
def test_the_c_sweep_calls_rules_of_tensor_nodes_and_reports_missing_rules() -> None:
    v = eg.Symbol("v", shape=(3,))
    f = eg.sum(v * v) + eg.sin(x) * eg.sum(v)
    monkeypatch = pytest.MonkeyPatch()
    assert backprop([f], [1.0], [v, x]) == _python_backprop([f], [1.0], [v, x], monkeypatch)
    bare = eg.register_op(eg.Op("test_template_bare", 1, eg.core.stdops.real, impl=np.sin), replace=True)
    with pytest.raises(eg.errors.DifferentiationError, match="no gradient rule"):
        backprop([bare(x) * y], [1.0], [x])


@needs_native
def test_a_sweep_started_inside_a_sweep_uses_the_set_based_one() -> None:
    seen: list[eg.Term] = []

    def nested(node: eg.Term, g: eg.Term) -> tuple:
        inner = backprop([node.args[0] * node.args[0]], [1.0], [node.args[0]])  # a sweep in a rule
        seen.append(inner[node.args[0]])
        return (grad_tools.times(g, eg.cos(node.args[0])),)

    # ops are read-only: an unregistered twin of sin whose gradient rule runs a sweep
    sin = eg.get_op("sin")
    nested_sin = eg.Op("nested_sin", 1, sin.infer, impl=sin.impl, ufunc=sin.ufunc, grad=nested)
    v = eg.Symbol("v", shape=(2,))  # a tensor node: its rule is called, not replayed
    assert backprop([eg.sum(nested_sin(v))], [1.0], [v])[v] is not None
    assert seen and seen[0] is backprop([v * v], [1.0], [v])[v]


def test_dependency_sets_limits_hold_in_both_forms(monkeypatch: pytest.MonkeyPatch) -> None:
    f = eg.add(*(a * b for a in (x, y, z) for b in (x, y, z)))
    columns = {x: 0, y: 1, z: 2}
    for m in (None, native):
        with monkeypatch.context() as ctx:
            ctx.setattr(pattern, "_native", m)
            with pytest.raises(eg.errors.SizeLimitError):
                pattern.dependency_sets([f, f], columns, max_pattern=4)
            assert pattern.dependency_sets([f], columns) == [frozenset({0, 1, 2})]


@needs_native
def test_a_template_is_recorded_per_op_not_per_dtype_rule() -> None:
    # ops are read-only, so a rule never changes under its template; a twin of sin with another
    # rule (same dtype rule, same operands) is recorded on its own
    sin = eg.get_op("sin")
    before = backprop([eg.sin(x)], [1.0], [x])[x]
    assert before is eg.cos(x)
    twin = eg.Op(
        "sin_twin",
        1,
        sin.infer,
        impl=sin.impl,
        ufunc=sin.ufunc,
        grad=lambda node, g: (grad_tools.times(g, eg.sin(node.args[0])),),
    )
    assert backprop([twin(x)], [1.0], [x])[x] is eg.sin(x)
    assert backprop([eg.sin(x)], [1.0], [x])[x] is eg.cos(x)
