"""The C sweeps of diff (diff._csweep) against their Python twins: the same terms on random inputs."""

from __future__ import annotations

import importlib
import itertools
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import exprgraph as eg
from exprgraph.core import grad_template, grad_tools
from exprgraph.diff import pattern, reverse, sweep
from exprgraph.diff.reverse import backprop, backprop_groups, live_order

native = sweep.SWEEP
forward_mode = importlib.import_module("exprgraph.diff.forward")  # the module (the package exports its function)
needs_native = pytest.mark.skipif(native is None, reason="the C sweeps are not built")

x, y, z = eg.symbols("x y z")
x32 = eg.Symbol("x32", "float32")
i = eg.Symbol("i", "int64")
h = eg.Symbol("h")

#: terms the folds look at: the ones of each dtype, negations, reciprocals, constant factors
FOLDED = [
    x,
    x32,
    i,
    eg.Symbol("b", "bool"),
    *(eg.const(v) for v in (1.0, -1.0, 0.0, 2.5, 1, -3, 0, np.float32(1.0), np.float32(2.0), True)),
    -x,
    -h,
    -(x * y),
    1.0 / h,
    2.0 * x,
    -2.0 * x,
    x / y,
    eg.const(2.0) * x * y,
    -x32,
]


@needs_native
def test_the_c_folds_are_grad_tools_folds() -> None:
    for g in FOLDED:
        assert native.negate(g) is grad_tools.negate(g), g
        for n in (1, 2):
            for factors in itertools.product(FOLDED, repeat=n):
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


def _in_python(monkeypatch: pytest.MonkeyPatch, module: object, fn, *args):  # type: ignore[no-untyped-def]
    """``fn(*args)`` with ``module``'s C sweep switched off (its Python twin runs)."""
    with monkeypatch.context() as m:
        m.setattr(module, "_native", None)
        return fn(*args)


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
    expected = _in_python(monkeypatch, reverse, backprop, [f], [seed], targets)
    assert backprop([f], [seed], targets) == expected  # the marked sweep
    found = live_order([f], set(targets))
    assert found == _in_python(monkeypatch, reverse, live_order, [f], set(targets))
    columns = {t: k for k, t in enumerate(targets)}
    outputs = [f, *expected.values()]
    python_sets = _in_python(monkeypatch, pattern, pattern.dependency_sets, outputs, columns)
    assert pattern.dependency_sets(outputs, columns) == python_sets


def _items(found: list[dict[eg.Term, eg.Term]]) -> list[list[tuple[eg.Term, eg.Term]]]:
    return [list(d.items()) for d in found]


_GROUPS = st.lists(
    st.tuples(st.lists(st.integers(0, 7), max_size=4), st.sets(st.integers(0, 6), max_size=5)), max_size=5
)


@needs_native
@settings(max_examples=150, deadline=None)
@given(expressions(), expressions(), _GROUPS)
def test_the_grouped_sweep_builds_what_one_sweep_per_group_builds(
    f: eg.Term, g: eg.Term, groups: list[tuple[list[int], set[int]]]
) -> None:
    # groups share nodes; inner nodes are targets too; an output may repeat, or be a target itself
    inner = [t for t in eg.postorder(f) if t.args][:2]
    names = [x, y, z, x32, i, *inner]
    made = [f, g, f * g, f + x, eg.sin(g) * y, *inner, x]
    outputs = [[made[k % len(made)] for k in outs] for outs, _ in groups]
    seeds = [[eg.const(0.5) if k % 3 else -2.0 for k in outs] for outs, _ in groups]
    targets = [{names[k % len(names)] for k in ts} for _, ts in groups]
    found = backprop_groups(outputs, seeds, targets)
    one_by_one = [backprop(o, s, t) for o, s, t in zip(outputs, seeds, targets, strict=True)]
    assert _items(found) == _items(one_by_one)  # the same terms, found in the same order
    assert found == _in_python(pytest.MonkeyPatch(), reverse, backprop_groups, outputs, seeds, targets)


@needs_native
def test_nodes_of_many_operands_are_swept_alike_in_both_forms(monkeypatch: pytest.MonkeyPatch) -> None:
    # up to MAX_RECORDED (16) operands are replayed once core records them; past 64 every contribution is asked for
    assert native is not None
    monkeypatch.setattr(grad_template, "MAX_OPERANDS", 16)
    w = [eg.Symbol(f"w{k}") for k in range(70)]
    parts = [w[k] * (x if k % 3 else y) for k in range(70)]
    for n in (9, 12, 16, 17, 70):
        f = eg.sin(eg.add(*parts[:n])) * eg.mul(*parts[: min(n, 16)], eg.const(2.0))
        expected = _in_python(monkeypatch, reverse, backprop, [f], [1.0], [x, y, w[1]])
        assert backprop([f], [1.0], [x, y, w[1]]) == expected
        grouped = backprop_groups([[f], [f, f * x]], [[1.0], [1.0, 2.0]], [{x}, {y, w[1]}])
        assert _items(grouped) == _items([backprop([f], [1.0], [x]), backprop([f, f * x], [1.0, 2.0], [y, w[1]])])
        seeds = {x: eg.const(1.0), y: z}
        assert native.forward([f], seeds, forward_mode._push) == forward_mode._sweep([f], seeds)


@needs_native
def test_the_grouped_sweep_checks_its_groups() -> None:
    for bad in (([[x]], [[1.0], [1.0]], [{x}]), ([[x, y]], [[1.0]], [{x}])):
        with pytest.raises(ValueError):
            backprop_groups(*bad)
    assert backprop_groups([], [], []) == []
    assert backprop_groups([[x * y], []], [[1.0], []], [set(), {x}]) == [{}, {}]


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
    expected = _in_python(pytest.MonkeyPatch(), reverse, backprop, [f], [1.0], [v, x])
    assert backprop([f], [1.0], [v, x]) == expected
    bare = eg.register_op(eg.Op("test_csweep_bare", 1, eg.core.stdops.real, impl=np.sin), replace=True)
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
    nested_sin = eg.Op("nested_sin_csweep", 1, sin.infer, impl=sin.impl, ufunc=sin.ufunc, grad=nested)
    v = eg.Symbol("v", shape=(2,))  # a tensor node: its rule is called, not replayed
    assert backprop([eg.sum(nested_sin(v))], [1.0], [v])[v] is not None
    assert seen and seen[0] is backprop([v * v], [1.0], [v])[v]
    grouped = backprop_groups([[eg.sum(nested_sin(v))], [eg.sum(v * v)]], [[1.0], [1.0]], [{v}, {v}])
    assert len(seen) == 2 and seen[1] is seen[0]  # the rule's sweep ran inside the grouped one
    assert grouped == [backprop([eg.sum(nested_sin(v))], [1.0], [v]), backprop([eg.sum(v * v)], [1.0], [v])]


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
    # a twin of sin with another rule (same dtype rule, same operands) is recorded on its own
    sin = eg.get_op("sin")
    assert backprop([eg.sin(x)], [1.0], [x])[x] is eg.cos(x)
    twin = eg.Op(
        "sin_twin_csweep",
        1,
        sin.infer,
        impl=sin.impl,
        ufunc=sin.ufunc,
        grad=lambda node, g: (grad_tools.times(g, eg.sin(node.args[0])),),
    )
    before = native.template_count()
    assert backprop([twin(x)], [1.0], [x])[x] is eg.sin(x)
    assert native.template_count() == before + 1
    assert backprop([eg.sin(x)], [1.0], [x])[x] is eg.cos(x)


def test_the_sweeps_load_only_over_the_c_terms() -> None:
    assert sweep.native() == (native is not None)
    if native is not None:
        assert eg.core.termbase.native()


@needs_native
@pytest.mark.parametrize(
    "name", ["live_order", "product", "negate", "fan_in", "backprop", "backprop_groups", "forward", "dependency_sets"]
)
@pytest.mark.parametrize(
    "args",
    [
        (),
        (None,),
        (x, 1),
        ((x,), {}, 1),
        ([x], [1.0], {x}, None),
        ("add", (), (), 1, 2),
        ([x], [[1.0]], [{x}], {x}, None),
        ([[x, 1]], [[1.0, 1.0]], [{x}], {x}, None),
        ([[x]], [[1.0]], [{x}, {y}], {x}, None),
    ],
)
def test_careless_calls_of_the_c_functions_are_errors(name: str, args: tuple) -> None:
    try:
        getattr(native, name)(*args)
    except (TypeError, ValueError, KeyError, AttributeError, eg.errors.DifferentiationError):
        pass
    assert x * y is eg.Term("mul", (x, y))  # and the term base still works


def _sets_or_limit(fn: Callable[..., Any], outputs: list[eg.Term], columns: dict[eg.Term, int], limit: int) -> Any:
    """``fn``'s dependency sets, or the size its SizeLimitError reports."""
    try:
        return fn(outputs, columns, limit)
    except eg.errors.SizeLimitError as e:
        return ("too dense", e.size)


@needs_native
@settings(max_examples=200, deadline=None)
@given(expressions(), expressions(), st.permutations(range(9)), st.integers(0, 3), st.integers(1, 40))
def test_the_c_dependency_sets_are_the_python_ones(
    f: eg.Term, g: eg.Term, order: list[int], gap: int, limit: int
) -> None:
    # inner nodes are columns too, numbered in any order with gaps; comparisons send nothing down
    inner = [t for t in eg.postorder(f) if t.args][:4]
    targets = list(dict.fromkeys([x, y, z, x32, i, *inner]))
    columns = {t: order[k] * (gap + 1) for k, t in enumerate(targets)}
    outputs = [f, g, f * g, eg.lt(f, g) + x, *inner]
    monkeypatch = pytest.MonkeyPatch()
    expected = _in_python(monkeypatch, pattern, _sets_or_limit, pattern.dependency_sets, outputs, columns, limit)
    assert _sets_or_limit(pattern.dependency_sets, outputs, columns, limit) == expected


@needs_native
def test_dependency_sets_of_columns_the_c_sets_cannot_hold_are_the_python_ones() -> None:
    f = eg.sin(x * y) + z * x
    odd: list[dict[Any, Any]] = [{x: -1, y: 5, z: 2}, {x: 0, y: 2**40, z: 1}, {x: "a", y: "b", z: 1.5}, {x: True, y: 3}]
    for columns in odd:
        expected = _in_python(pytest.MonkeyPatch(), pattern, pattern.dependency_sets, [f, x * y], columns)
        found = pattern.dependency_sets([f, x * y], columns)
        assert found == expected
        assert [sorted(map(type, s), key=str) for s in found] == [sorted(map(type, s), key=str) for s in expected]
