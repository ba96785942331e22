"""A FunctionGraph pickles with its features and works after loading (PyTensor's behaviour)."""

from __future__ import annotations

import pickle

import pytest

from exprgraph import cos, exp, get_op, sin, symbols
from exprgraph.errors import InconsistencyError
from exprgraph.graph import (
    Feature,
    FunctionGraph,
    History,
    MergeOptimizer,
    PatternNodeRewriter,
    ReplaceValidate,
    Validator,
    in2out,
    optdb,
)

x, y = symbols("x y")
mul = get_op("mul")


def no_exp(fgraph: FunctionGraph) -> bool:
    """A module-level check, so the validator pickles."""
    return all(n.op.name != "exp" for n in fgraph.toposort())


class Counter(Feature):
    """A feature with state and a callback."""

    def __init__(self) -> None:
        self.replaced = 0

    def on_replace(self, fgraph, old, new, reason):
        self.replaced += 1


def test_a_graph_with_replace_validate_pickles_and_validates_after_loading():
    fg = FunctionGraph([x, y], [sin(x) + y], features=[ReplaceValidate(), Validator(no_exp), Counter()])
    back = pickle.loads(pickle.dumps(fg))
    assert repr(back) == repr(fg) and back.inputs == fg.inputs
    assert [type(f).__name__ for f in back.features] == ["ReplaceValidate", "Validator", "Counter"]
    with pytest.raises(InconsistencyError):
        back.replace_validate(sin(x), exp(x))  # the provided method is back, and so is the validator
    assert back.outputs == [sin(x) + y]
    back.replace_validate(sin(x), cos(x))
    assert back.outputs == [cos(x) + y] and back.features[2].replaced == 2  # the callback is subscribed
    back.check_integrity()
    assert fg.outputs == [sin(x) + y]  # the original is untouched


def test_a_history_whose_reasons_are_rewriters_pickles_them_by_name():
    h = History()
    fg = FunctionGraph([x, y], [sin(x * 1.0) * y], features=[h])
    mul_one = PatternNodeRewriter((mul, "x", 1.0), "x", name="mul_one")
    in2out(mul_one).rewrite(fg)
    fg.replace(y, x, reason="manual")
    assert h.steps[0].reason is mul_one
    back = pickle.loads(pickle.dumps(fg))
    (h2,) = back.features
    assert [s.reason for s in h2.steps] == ["mul_one", "manual"]  # rewriters by name, strings as they are
    assert [str(s) for s in h2.steps] == [str(s) for s in h.steps]
    h2.undo(2)
    assert back.outputs == [sin(x * 1.0) * y]
    h2.redo()
    assert back.outputs == [sin(x) * y]
    back.replace(sin(x), cos(x), reason="after loading")  # still recording
    assert len(h2) == 2 and h2.steps[-1].reason == "after loading"
    assert h.steps[0].reason is mul_one  # the live history keeps the rewriter itself


def test_caches_of_rewriters_are_left_out_and_rewriting_works_after_loading():
    fg = FunctionGraph([x, y], [(sin(x) * 1.0 + y * 1.0) + (y + x)], features=[ReplaceValidate()])
    optdb.query("fast_run").rewrite(fg)
    MergeOptimizer(commutative=True).rewrite(fg)
    assert any(f.transient for f in fg.features)  # region and merge caches are attached
    back = pickle.loads(pickle.dumps(fg))
    assert not any(f.transient for f in back.features) and repr(back) == repr(fg)
    back.check_integrity()
    optdb.query("fast_run").rewrite(back)
    assert repr(back) == repr(fg)


def test_a_deep_graph_pickles_in_linear_time():
    t = x
    for _ in range(100_000):
        t = sin(t)
    fg = FunctionGraph([x], [t], features=[ReplaceValidate()])
    back = pickle.loads(pickle.dumps(fg))
    assert back.outputs == [t] and back.node_count == 100_000
