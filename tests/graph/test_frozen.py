"""FunctionGraph.freeze() and FrozenFunctionGraph (exprgraph.graph.frozen): a graph as a hashable value."""

from __future__ import annotations

import copy
import pickle

import pytest

from exprgraph import Symbol, const, exp, get_op, sin, symbols
from exprgraph.errors import MissingInputError
from exprgraph.graph import OUTPUT, FrozenFunctionGraph, FunctionGraph, History, ReplaceValidate

x, y, a, b = symbols("x y a b")
add, mul = get_op("add"), get_op("mul")


def test_frozen_graphs_are_equal_by_structure_whatever_the_input_names():
    f1 = FunctionGraph([x, y], [add(x, y)]).freeze()
    f2 = FunctionGraph([a, b], [add(a, b)]).freeze()
    assert f1 == f2 and hash(f1) == hash(f2)
    assert {f1: "value"}[f2] == "value" and len({f1, f2}) == 1
    assert f1 != FunctionGraph([y, x], [add(x, y)]).freeze()  # the inputs' order matters
    assert f1 != FunctionGraph([x, y], [mul(x, y)]).freeze()
    assert FunctionGraph([x], [sin(x)]).freeze() != FunctionGraph([x, y], [sin(x)]).freeze()  # arity differs
    i = Symbol("i", "int64")
    assert FunctionGraph([x], [sin(x)]).freeze() != FunctionGraph([i], [sin(i)]).freeze()  # input types differ


def test_frozen_graph_contents():
    frozen = FunctionGraph([x, y], [mul(add(x, y), y)]).freeze()
    i0, i1 = frozen.inputs
    assert (i0.name, i1.name) == ("i0", "i1") and frozen.outputs == (mul(add(i0, i1), i1),)
    assert frozen.toposort() == [add(i0, i1), mul(add(i0, i1), i1)]
    assert frozen.apply_nodes == {add(i0, i1), mul(add(i0, i1), i1)}
    assert frozen.variables == {i0, i1, add(i0, i1), mul(add(i0, i1), i1)}
    assert frozen.clients[i1] == [(add(i0, i1), 1), (mul(add(i0, i1), i1), 1)]
    assert frozen.clients[frozen.outputs[0]] == [(OUTPUT, 0)]
    assert repr(frozen) == "FrozenFunctionGraph([i0, i1], mul(add(i0, i1), i1))"
    identity = FunctionGraph([x], [x]).freeze()
    assert identity.apply_nodes == set() and identity.outputs == identity.inputs
    with pytest.raises(AttributeError, match="unfreeze"):
        frozen.outputs = ()  # type: ignore[misc]
    assert copy.copy(frozen) is frozen and copy.deepcopy(frozen) is frozen


def test_freeze_unfreeze_and_bind():
    fg = FunctionGraph([x, y], [mul(add(x, y), y)])
    frozen = fg.freeze()
    fg.replace(add(x, y), x)
    assert frozen.outputs[0].op is mul and frozen.outputs[0].args[0].op is add  # a snapshot
    thawed = frozen.unfreeze()
    assert isinstance(thawed, FunctionGraph) and thawed.inputs == frozen.inputs and thawed.features == []
    thawed.replace(thawed.outputs[0], const(1.0))  # mutable again
    assert thawed.outputs == [const(1.0)] and frozen.unfreeze().freeze() == frozen
    i0, i1 = frozen.inputs
    assert frozen.bind({i0: a, i1: exp(b)}) == [mul(add(a, exp(b)), exp(b))]
    with pytest.raises(KeyError, match="i1"):
        frozen.bind({i0: a})


def test_frozen_graphs_pickle_to_equal_values():
    shared = add(x, y)
    for outputs in ([mul(shared, y)], [mul(shared, x), add(shared, y)], [x], [add(x, const(3.14))]):
        frozen = FunctionGraph([x, y], outputs).freeze()
        back = pickle.loads(pickle.dumps(frozen))
        assert back == frozen and hash(back) == hash(frozen)
        assert all(p is q for p, q in zip(back.outputs, frozen.outputs, strict=True))  # terms re-intern


def test_freezing_needs_every_symbol_as_an_input():
    with pytest.raises(MissingInputError, match="orphan"):
        FrozenFunctionGraph([x], [add(x, Symbol("orphan"))])
    with pytest.raises(MissingInputError, match="disconnected"):
        FrozenFunctionGraph([x], [Symbol("disconnected")])
    with pytest.raises(TypeError):
        FrozenFunctionGraph([x + y], [x])


def test_a_graph_with_features_freezes_without_them():
    fg = FunctionGraph([x, y], [sin(x) + y], features=[ReplaceValidate(), History()])
    assert fg.freeze() == FunctionGraph([a, b], [sin(a) + b]).freeze()


def test_freeze_is_iterative():
    t = x
    for _ in range(100_000):
        t = sin(t)
    frozen = FrozenFunctionGraph([x], [t])
    (out,) = frozen.outputs
    assert out.depth == t.depth and out.free_symbols == {frozen.inputs[0]}
    assert repr(frozen) == "FrozenFunctionGraph([i0], <100000 nodes, 1 outputs>)"
