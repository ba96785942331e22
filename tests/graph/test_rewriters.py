"""Node rewriters: patterns (tuple and match forms), shortcuts, rules, relations, decorators, the driver."""

from __future__ import annotations

import pytest

from exprgraph import Symbol, const, cos, exp, get_op, sin, symbols
from exprgraph.errors import PatternError, RewriteWarning
from exprgraph.graph import (
    FunctionGraph,
    GraphRewriter,
    NodeRewriter,
    PatternNodeRewriter,
    RemovalNodeRewriter,
    RuleNodeRewriter,
    SequentialGraphRewriter,
    SubstitutionNodeRewriter,
    graph_rewriter,
    in2out,
    node_rewriter,
    rules_to_rewriters,
)
from exprgraph.graph.profile import RewriteProfile, SequenceProfile
from exprgraph.graph.transaction import RewriteDriver, replacement_pairs
from exprgraph.match import V
from exprgraph.rules.algebra import ALGEBRA

add, mul, truediv, sub = (get_op(n) for n in ("add", "mul", "truediv", "sub"))
x, y, z = symbols("x y z")


def run(rewriter, *outputs, **kw):
    fg = FunctionGraph(outputs=list(outputs))
    prof = in2out(rewriter, **kw).rewrite(fg)
    return fg.outputs, prof


def test_repeated_variables_bind_the_same_node():
    r = PatternNodeRewriter((sub, "x", "x"), 0)
    (out,), prof = run(r, sin(x) - sin(x) + (sin(x) - cos(x)))
    assert out is const(0.0) + (sin(x) - cos(x))
    assert prof.applied == 1


def test_constants_match_by_value():
    r = PatternNodeRewriter((mul, "x", 1), "x")
    outs, _ = run(r, x * 1.0, x * const(1), x * 2)
    assert outs == [x, x, x * 2]
    r0 = PatternNodeRewriter((add, "x", const(0.0)), "x")  # a constant term in the pattern: by value too
    outs, _ = run(r0, x + 0, y + 0.0)
    assert outs == [x, y]


def test_commutative_ops_match_either_order():
    r = PatternNodeRewriter((truediv, (mul, "x", "y"), "y"), "x")
    outs, _ = run(r, (x * y) / y, (y * x) / y)
    assert outs == [x, x]


def test_multiple_clients_rejected_unless_allowed():
    shared = x * y
    graph = [shared / y, shared + 1]
    outs, prof = run(PatternNodeRewriter((truediv, (mul, "x", "y"), "y"), "x"), *graph)
    assert outs == graph and prof.applied == 0  # x*y is used elsewhere: the rewrite would not remove it
    outs, prof = run(PatternNodeRewriter((truediv, (mul, "x", "y"), "y"), "x", allow_multiple_clients=True), *graph)
    assert outs == [x, shared + 1]


def test_our_pattern_objects_and_templates():
    r = PatternNodeRewriter((V.x * V.y) / V.y, V.x, name="cancel")
    assert r.name == "cancel" and r.tracks() == [truediv]
    outs, _ = run(r, (x * z) / z)
    assert outs == [x]
    r2 = PatternNodeRewriter(V.x + V.x, 2 * V.x)
    outs, _ = run(r2, sin(x) + sin(x))
    assert outs == [2 * sin(x)]
    r3 = PatternNodeRewriter((add, "x", "x"), (mul, 2, "x"))  # tuple output pattern with a literal
    outs, _ = run(r3, y + y)
    assert outs == [mul(2, y)]


def test_constraints_and_callable_outputs():
    positive = {"pattern": "c", "constraint": lambda e: e.is_const and e.value > 0}
    r = PatternNodeRewriter((mul, "x", positive), (mul, "c", "x"))
    outs, _ = run(r, x * 2.0, x * -2.0)
    assert outs == [2.0 * x, x * -2.0]
    seen = []

    def two_args(fgraph, expr):  # the (fgraph, expr) form of a constraint
        seen.append(fgraph)
        return expr.op is sin

    r = PatternNodeRewriter((exp, {"pattern": (sin, "a"), "constraint": two_args}), (cos, "a"))
    outs, _ = run(r, exp(sin(y)), exp(cos(y)))
    assert outs == [cos(y), exp(cos(y))]
    assert seen and isinstance(seen[0], FunctionGraph)

    def build(fgraph, node, s):
        return None if s["x"] is z else s["x"] * 3

    r = PatternNodeRewriter((add, "x", "x"), build)
    outs, _ = run(r, x + x, z + z)
    assert outs == [x * 3, z + z]


def test_bad_patterns():
    with pytest.raises(PatternError):
        PatternNodeRewriter("x", "x")  # the input must be an op pattern
    with pytest.raises(PatternError):
        PatternNodeRewriter(("nosuchop", "x"), "x")
    with pytest.raises(PatternError):
        PatternNodeRewriter((add, {"pattern": "x", "oops": 1}), "x")


def test_substitution_and_removal(identity):
    outs, _ = run(SubstitutionNodeRewriter("sin", "cos"), sin(sin(x)) + 1)
    assert outs == [cos(cos(x)) + 1]
    outs, _ = run(RemovalNodeRewriter(identity), identity(x) * identity(identity(y)))
    assert outs == [x * y]
    with pytest.raises(ValueError):
        RemovalNodeRewriter(add)


def test_rule_node_rewriters_from_a_rule_set():
    rws = rules_to_rewriters(ALGEBRA)
    assert len(rws) == len(ALGEBRA)
    assert rws[0].name == "add_zero" and rws[0].tracks() == [add]
    outs, _ = run(rws, (x * 1 + 0) * (y - y))
    assert outs == [const(0.0)]
    r = RuleNodeRewriter("x ** 1 -> x")
    outs, _ = run(r, sin(x) ** 1)
    assert outs == [sin(x)]
    # a rule changing the dtype is declined
    n = Symbol("n", "int64")
    r = RuleNodeRewriter(lambda e: const(1.5) if e.op is mul else e)
    outs, _ = run(r, n * 2)
    assert outs == [n * 2]


def test_node_rewriter_decorator():
    @node_rewriter([exp])
    def exp_of_zero(fgraph, node):
        """exp(0) -> 1."""
        (a,) = node.args
        return [const(1.0)] if a is const(0.0) else False

    assert exp_of_zero.name == "exp_of_zero" and exp_of_zero.tracks() == [exp]
    assert exp_of_zero.__doc__ == "exp(0) -> 1."
    outs, _ = run(exp_of_zero, exp(const(0.0)) + exp(x))
    assert outs == [const(1.0) + exp(x)]
    with pytest.raises(TypeError):
        node_rewriter(lambda fg, n: None)


def test_dict_results_replace_other_nodes():
    @node_rewriter(["add"])
    def swap_parent(fgraph, node):
        # on a + b, also replace the output that uses it (through the clients map)
        (client, _), *_ = fgraph.clients[node]
        if client is not None and not isinstance(client, str) and getattr(client, "op", None) is mul:
            return {node: node.args[0], client: client.args[1]}
        return False

    outs, _ = run(swap_parent, (x + y) * z)
    assert outs == [z]


def test_graph_rewriter_decorator_and_sequence():
    calls = []

    @graph_rewriter
    def record(fgraph):
        calls.append(fgraph.node_count)

    prof = record.rewrite(FunctionGraph(outputs=[sin(x) + 1]))
    assert calls == [2] and isinstance(prof, RewriteProfile) and prof.nodes_before == prof.nodes_after == 2
    seq = SequentialGraphRewriter(PatternNodeRewriter((sin, "x"), "x"), record, name="seq")
    fg = FunctionGraph(outputs=[sin(x) + 1])
    prof = seq.rewrite(fg)
    assert isinstance(prof, SequenceProfile) and calls == [2, 1]
    assert [p.name for _, p in prof.children] == ["e(sin, ~x) -> ~x", "record"]  # upstream's default name
    assert fg.outputs == [x + 1]
    with pytest.raises(TypeError):
        SequentialGraphRewriter(42)


def test_base_classes_must_be_subclassed():
    with pytest.raises(NotImplementedError):
        NodeRewriter().transform(None, x)
    with pytest.raises(NotImplementedError):
        GraphRewriter().apply(None)


# -- the transaction driver -------------------------------------------------------------------------------


def test_replacement_pairs():
    assert replacement_pairs(x + y, False) == []
    assert replacement_pairs(x + y, [x]) == [(x + y, x)]
    assert replacement_pairs(x + y, x) == [(x + y, x)]
    assert replacement_pairs(x + y, [None]) == []
    assert replacement_pairs(x + y, {x + y: y, y: y}) == [(x + y, y)]
    assert replacement_pairs(x + y, [0]) == [(x + y, const(0.0))]
    with pytest.raises(ValueError):
        replacement_pairs(x + y, [x, y])
    with pytest.raises(ValueError):
        replacement_pairs(x + y, {"remove": [x]})
    with pytest.raises(TypeError):
        replacement_pairs(x + y, "x")


class Broken(NodeRewriter):
    def transform(self, fgraph, node):
        raise RuntimeError("boom")


class WrongType(NodeRewriter):
    def tracks(self):
        return [sin]

    def transform(self, fgraph, node):
        return [Symbol("k", "int64")]


def test_failure_callbacks():
    with pytest.raises(RuntimeError, match="boom"):
        run(Broken(), sin(x))
    with pytest.warns(RewriteWarning, match="boom"):
        outs, prof = run(Broken(), sin(x), failure_callback="warn")
    assert outs == [sin(x)] and prof.rewriters["Broken"].failed == 1
    outs, _ = run(WrongType(), sin(x), failure_callback="ignore")
    assert outs == [sin(x)]
    got = []
    outs, _ = run(WrongType(), sin(x) + 1, failure_callback=lambda exc, rw, pairs, node: got.append((exc, node)))
    assert outs == [sin(x) + 1]
    assert type(got[0][0]).__name__ == "ReplacementTypeError" and got[0][1] is sin(x)
    with pytest.raises(ValueError):
        RewriteDriver("shout")


def test_verbose_logging(capsys, caplog):
    r = PatternNodeRewriter((mul, "x", 1), "x", name="mul_one")
    with caplog.at_level("DEBUG", logger="exprgraph.graph"):
        run(r, sin(x) * 1, verbose=True)
    out = capsys.readouterr().out
    assert "rewrite mul_one replaces sin(x)*1 with sin(x)" in out
    assert "rewrite mul_one replaces sin(x)*1 with sin(x)" in caplog.text


def test_profiles_count_nodes_created():
    r = PatternNodeRewriter((sin, "x"), (cos, (mul, "x", 2)))
    _, prof = run(r, sin(x) + sin(y))
    st = prof.rewriters[r.name]
    assert st.applied == 2 and st.nodes_created == 4 and st.tried == 2
