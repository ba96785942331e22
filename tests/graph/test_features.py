"""Features: callbacks, provided methods, ReplaceValidate, Validator, History stepping."""

from __future__ import annotations

import random

import pytest

from exprgraph import const, exp, get_op, sin, substitute, symbols
from exprgraph.errors import FeatureError, InconsistencyError, ReplacementTypeError
from exprgraph.graph import (
    OUTPUT,
    Feature,
    FunctionGraph,
    History,
    PatternNodeRewriter,
    ReplaceValidate,
    Validator,
    in2out,
)

x, y, z = symbols("x y z")


class Recorder(Feature):
    def __init__(self):
        self.events = []

    def on_attach(self, fgraph):
        self.events.append(("attach",))

    def on_detach(self, fgraph):
        self.events.append(("detach",))

    def on_import(self, fgraph, node, reason):
        self.events.append(("import", node, reason))

    def on_prune(self, fgraph, node, reason):
        self.events.append(("prune", node, reason))

    def on_change_input(self, fgraph, client, index, old, new, reason):
        self.events.append(("change", client, index, old, new, reason))

    def on_replace(self, fgraph, old, new, reason):
        self.events.append(("replace", old, new, reason))

    def on_rebuild(self, fgraph, old, new):
        self.events.append(("rebuild", old, new))


def test_callbacks_describe_a_replacement():
    rec = Recorder()
    fg = FunctionGraph([x, y], [sin(x) * y], features=[rec])
    assert rec.events == [("attach",)]
    fg.replace(sin(x), exp(x), reason="test")
    assert ("import", exp(x), "test") in rec.events
    assert ("change", sin(x) * y, 0, sin(x), exp(x), "test") in rec.events
    assert ("prune", sin(x), "test") in rec.events
    assert rec.events[-1] == ("replace", sin(x), exp(x), "test")
    rec.events.clear()
    assert fg.outputs == [exp(x) * y]  # reading brings the parent up to date
    assert ("rebuild", sin(x) * y, exp(x) * y) in rec.events
    assert ("import", exp(x) * y, "rebuild") in rec.events and ("prune", sin(x) * y, "rebuild") in rec.events
    rec.events.clear()
    fg.replace(exp(x) * y, y, reason="r2")
    assert ("change", OUTPUT, 0, exp(x) * y, y, "r2") in rec.events
    fg.remove_feature(rec)
    assert rec.events[-1] == ("detach",)
    fg.replace(y, x)
    assert rec.events[-1] == ("detach",)  # no longer listening


def test_provides_and_clashes():
    class Provider(Feature):
        provides = ("shout",)

        def shout(self, fgraph, word):
            return f"{word.upper()} {len(fgraph.outputs)}"

    fg = FunctionGraph([x], [x + 1])
    p = Provider()
    fg.attach_feature(p)
    assert fg.shout("hi") == "HI 1"
    fg.attach_feature(p)  # attaching twice is a no-op
    with pytest.raises(FeatureError):
        fg.attach_feature(Provider())  # the name is taken
    fg.remove_feature(p)
    assert not hasattr(fg, "shout")

    class Clash(Feature):
        provides = ("replace",)

        def replace(self, fgraph):
            pass

    with pytest.raises(FeatureError):
        fg.attach_feature(Clash())


def test_replace_validate_reverts_and_raises():
    only_sin = Validator(lambda fg: all(n.op.name != "exp" for n in fg.toposort()), name="no_exp")
    fg = FunctionGraph([x, y], [sin(x) + y], features=[ReplaceValidate(), only_sin])
    assert fg.has_validators
    fg.replace_validate(sin(x), sin(y))
    assert fg.outputs == [sin(y) + y]
    with pytest.raises(InconsistencyError, match="no_exp"):
        fg.replace_validate(sin(y), exp(y))
    assert fg.outputs == [sin(y) + y]  # reverted
    with pytest.raises(InconsistencyError):
        fg.replace_all_validate([(y, x), (sin(x), exp(x))])
    assert fg.outputs == [sin(y) + y]  # both pairs undone
    with pytest.raises(ReplacementTypeError):
        fg.replace_validate(sin(y), const(1))
    fg.check_integrity()


def test_validator_raising_its_own_error_is_reverted_too():
    class Strict(Feature):
        def on_validate(self, fgraph):
            if fgraph.node_count < 2:
                raise InconsistencyError("too small")

    fg = FunctionGraph([x], [sin(x) + 1], features=[ReplaceValidate(), Strict()])
    with pytest.raises(InconsistencyError, match="too small"):
        fg.replace_validate(sin(x) + 1, x)
    assert fg.outputs == [sin(x) + 1]


def test_rewrites_run_as_transactions_under_validators():
    # a validator forbids graphs without a sin; the rewrite that would remove it is reverted and skipped
    keep_sin = Validator(lambda fg: any(n.op.name == "sin" for n in fg.toposort()), name="keep_sin")
    fg = FunctionGraph([x, y], [sin(x) * 1 + y * 1], features=[keep_sin])
    mul_one = PatternNodeRewriter(("mul", "x", 1), "x")
    drop_sin = PatternNodeRewriter(("sin", "x"), "x")
    with pytest.warns(Warning, match="keep_sin"):
        in2out(drop_sin, mul_one, failure_callback="warn").rewrite(fg)
    assert fg.outputs == [sin(x) + y]


def test_history_steps_back_and_forward():
    h = History()
    fg = FunctionGraph([x, y, z], [sin(x) * y + 1], features=[h])
    states = [tuple(fg.outputs)]
    for old, new in [(sin(x), exp(x)), (y, x), (exp(x) * x, x)]:
        fg.replace(old, new, reason="step")
        states.append(tuple(fg.outputs))
    assert len(h) == 3 and h.position == 3
    assert str(h.steps[0]) == "step: sin(x) -> exp(x)"
    for k in range(4):
        assert h.state(k) == states[k]
    h.undo()
    assert tuple(fg.outputs) == states[2] and h.position == 2
    h.undo(2)
    assert tuple(fg.outputs) == states[0]
    h.redo()
    assert tuple(fg.outputs) == states[1]
    h.goto(3)
    assert tuple(fg.outputs) == states[3]
    h.goto(1)
    fg.replace(y, z)  # a new step after stepping back drops the steps ahead
    assert len(h) == 2 and h.position == 2
    assert tuple(fg.outputs) == (exp(x) * z + 1,)
    h.undo()
    assert tuple(fg.outputs) == states[1]
    with pytest.raises(IndexError):
        h.state(5)
    fg.check_integrity()


def test_history_and_checkpoint_revert():
    h = History()
    fg = FunctionGraph([x, y], [sin(x) + y], features=[h])
    fg.replace(y, x)
    cp = fg.checkpoint()
    fg.replace(sin(x), exp(x))
    fg.replace(x, y)
    assert len(h) == 3
    fg.revert(cp)
    assert len(h) == 1 and h.position == 1
    assert fg.outputs == [sin(x) + x]
    h.undo()
    assert fg.outputs == [sin(x) + y]
    with pytest.raises(FeatureError):
        FunctionGraph([x], [x], features=[h])  # one graph per History


def test_history_replays_a_lazy_rewrite_session_exactly():
    rng = random.Random(3)
    terms = [x, y, z]
    for _ in range(40):
        terms.append(rng.choice([get_op("add"), get_op("mul")])(rng.choice(terms), rng.choice(terms)))
    h = History()
    fg = FunctionGraph([x, y, z], terms[-3:], features=[h])
    expected = [tuple(terms[-3:])]
    outs = list(terms[-3:])
    # replacements made during a walk (the graph is never brought up to date in between)
    for node in fg.walk():
        if rng.random() < 0.3:
            new = rng.choice(node.args)
            fg.replace(node, new, reason="walk")
            outs = [substitute(o, {node: new}) for o in outs]
            expected.append(tuple(outs))
    assert len(h) == len(expected) - 1
    for k, state in enumerate(expected):
        assert h.state(k) == state
    h.goto(0)
    assert tuple(fg.outputs) == expected[0]
    h.goto(len(h))
    assert tuple(fg.outputs) == expected[-1]
    fg.check_integrity()


def test_replace_validate_refuses_a_cycle():
    fg = FunctionGraph([x, y], [sin(x) + y], features=[ReplaceValidate()])
    with pytest.raises(InconsistencyError, match="cycle"):
        fg.replace_validate(x, sin(x) + y)
    assert fg.outputs == [sin(x) + y]
