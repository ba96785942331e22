"""Walking orders, ignore_newtrees, equilibrium budgets and stop reasons, final and cleanup rewriters."""

from __future__ import annotations

import logging

import pytest

from exprgraph import add, cos, exp, get_op, mul, sin, symbols
from exprgraph.graph import (
    EquilibriumGraphRewriter,
    FunctionGraph,
    GraphRewriter,
    MergeOptimizer,
    NodeRewriter,
    PatternNodeRewriter,
    WalkingGraphRewriter,
    graph_rewriter,
    in2out,
    node_rewriter,
    out2in,
)
from exprgraph.graph.profile import EquilibriumProfile
from exprgraph.graph.transaction import RewriteDriver
from exprgraph.graph.walking import Dispatch, node_pass

x, y, z = symbols("x y z")


class Visits(NodeRewriter):
    """Records the nodes it is offered, changes nothing."""

    def __init__(self):
        super().__init__("visits")
        self.seen = []

    def transform(self, fgraph, node):
        self.seen.append(node)
        return False


def test_orders():
    t = sin(cos(exp(x)))
    v = Visits()
    in2out(v).rewrite(FunctionGraph(outputs=[t]))
    assert [n.op.name for n in v.seen] == ["exp", "cos", "sin"]
    v = Visits()
    out2in(v).rewrite(FunctionGraph(outputs=[t]))
    assert [n.op.name for n in v.seen] == ["sin", "cos", "exp"]
    with pytest.raises(ValueError):
        WalkingGraphRewriter(v, order="random")


def test_tracks_restrict_the_nodes_offered():
    @node_rewriter(["cos"])
    def only_cos(fgraph, node):
        seen.append(node)
        return False

    seen = []
    in2out(only_cos).rewrite(FunctionGraph(outputs=[sin(cos(x)) + cos(y)]))
    assert seen == [cos(x), cos(y)]


sin_to_cos_of_sin = PatternNodeRewriter(("exp", "x"), ("sin", ("exp", ("cos", "x"))), name="grow")


def test_ignore_newtrees():
    # exp(x) -> sin(exp(cos(x))): the new exp node is rewritten again only when new trees are visited
    fg = FunctionGraph(outputs=[exp(x)])
    in2out(sin_to_cos_of_sin, ignore_newtrees=True).rewrite(fg)
    assert fg.outputs == [sin(exp(cos(x)))]
    fg = FunctionGraph(outputs=[exp(x)])
    limited = [0]

    @node_rewriter(["exp"])
    def grow_twice(fgraph, node):
        if limited[0] >= 2:
            return False
        limited[0] += 1
        return [sin(exp(cos(node.args[0])))]

    in2out(grow_twice, ignore_newtrees=False).rewrite(fg)
    assert fg.outputs == [sin(sin(exp(cos(cos(x)))))]


def test_out2in_rewrites_new_trees_first():
    fg = FunctionGraph(outputs=[exp(exp(x))])
    prof = out2in(PatternNodeRewriter(("exp", "x"), ("cos", "x")), ignore_newtrees=False).rewrite(fg)
    assert fg.outputs == [cos(cos(x))] and prof.applied == 2


def test_equilibrium_reaches_a_fixpoint_with_cascades():
    rws = [
        PatternNodeRewriter((add, "x", 0), "x"),
        PatternNodeRewriter((mul, "x", 1), "x"),
        PatternNodeRewriter(("truediv", (mul, "x", "y"), "y"), "x"),
    ]
    t = ((((x + 0) * 1) * y) / y + 0) * 1
    fg = FunctionGraph(outputs=[t])
    prof = EquilibriumGraphRewriter(rws).rewrite(fg)
    assert fg.outputs == [x]
    assert isinstance(prof, EquilibriumProfile) and prof.stop_reason == "fixpoint"
    assert prof.applied == 5 and prof.passes[-1].applied == 0
    assert prof.nodes_before == 6 and prof.nodes_after == 0
    assert prof.max_nodes == 6


def test_equilibrium_budget_stops_a_rewrite_loop(caplog):
    swap = PatternNodeRewriter(("sub", "x", "y"), ("sub", ("neg", ("neg", "x")), "y"), name="wrap")
    unwrap = PatternNodeRewriter(("neg", ("neg", "x")), "x", name="unwrap")
    fg = FunctionGraph(outputs=[x - y])
    eq = EquilibriumGraphRewriter([swap, unwrap], max_use_ratio=3)
    with caplog.at_level(logging.WARNING, logger="exprgraph.graph"):
        prof = eq.rewrite(fg)
    assert prof.stop_reason == "max_use_ratio"
    assert "wrap applied 4 times" in prof.stop_detail
    assert "max_use_ratio" in caplog.text
    assert prof.rewriters["wrap"].applied == 4


def test_other_budgets():
    grow = PatternNodeRewriter(("exp", "x"), ("exp", ("sin", "x")), name="grow")
    fg = FunctionGraph(outputs=[exp(x)])
    prof = EquilibriumGraphRewriter([grow], max_use_ratio=None, max_nodes=5).rewrite(fg)
    assert prof.stop_reason == "max_nodes" and fg.node_count >= 5
    fg = FunctionGraph(outputs=[exp(x)])
    prof = EquilibriumGraphRewriter([grow], max_use_ratio=None, max_passes=3, ignore_newtrees=True).rewrite(fg)
    assert prof.stop_reason == "max_passes" and len(prof.passes) == 3
    fg = FunctionGraph(outputs=[exp(x)])
    prof = EquilibriumGraphRewriter([grow], max_use_ratio=None, time_limit=0.01, ignore_newtrees=True).rewrite(fg)
    assert prof.stop_reason == "time_limit"
    with pytest.raises(ValueError):
        EquilibriumGraphRewriter([grow], max_use_ratio=0)
    with pytest.raises(ValueError):
        EquilibriumGraphRewriter([grow], max_nodes=-1)
    with pytest.raises(TypeError):
        EquilibriumGraphRewriter([42])


def test_graph_final_and_cleanup_rewriters():
    calls = {"global": 0, "final": 0, "cleanup": 0}

    @graph_rewriter
    def count_global(fgraph):
        calls["global"] += 1

    class Final(GraphRewriter):
        def apply(self, fgraph):
            calls["final"] += 1
            # a final rewriter that itself changes the graph once
            for node in fgraph.walk():
                if node.op is get_op("cos"):
                    fgraph.replace(node, node.args[0], self)

    class Cleanup(GraphRewriter):
        def apply(self, fgraph):
            calls["cleanup"] += 1

    rw = PatternNodeRewriter(("sin", "x"), ("cos", "x"))
    fg = FunctionGraph(outputs=[sin(x) + sin(y)])
    prof = EquilibriumGraphRewriter(
        [rw, count_global], final_rewriters=[Final()], cleanup_rewriters=[Cleanup()]
    ).rewrite(fg)
    assert fg.outputs == [x + y]
    assert prof.stop_reason == "fixpoint" and len(prof.passes) == 2
    assert calls["global"] == 2 and calls["final"] == 2
    # cleanup: after each graph rewriter (2 passes x 2) and each applied node rewrite (2)
    assert calls["cleanup"] == 2 + 2 + 2
    assert prof.rewriters["Final"].applied == 1
    with pytest.raises(TypeError):
        EquilibriumGraphRewriter([rw], final_rewriters=[rw])


def test_equilibrium_with_merge_cleanup_merges_commuted_results():
    rws = [PatternNodeRewriter((mul, "x", 1), "x")]
    t = (x * 1 + y) * (y + x)
    fg = FunctionGraph(outputs=[t])
    EquilibriumGraphRewriter(rws, cleanup_rewriters=[MergeOptimizer(commutative=True)]).rewrite(fg)
    (out,) = fg.outputs
    assert out.args[0] is out.args[1]  # x + y and y + x merged into one node
    assert fg.node_count == 2


def test_equilibrium_profile_prints_passes_and_rewriters(capsys):
    rws = [PatternNodeRewriter((add, "x", 0), "x", name="add_zero"), PatternNodeRewriter((mul, "x", 1), "x")]
    fg = FunctionGraph(outputs=[(x + 0) * 1 + (y + 0)])
    prof = EquilibriumGraphRewriter(rws, name="eq").rewrite(fg)
    prof.print_profile()
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0].startswith("EquilibriumGraphRewriter eq:") and "stop: fixpoint" in lines[0]
    assert "nodes (start, end, max) 4 1 4" in lines[0]
    assert lines[2].split() == ["pass", "time", "applied", "nodes", "rewrites"]
    first = lines[3].split()
    assert first[0] == "0" and first[2:5] == ["3", "1", "add_zero"] and "(2)" in lines[3]
    assert lines[4].split()[0::2] == ["1", "0"]
    table = [line.split() for line in lines[6:]]
    assert table[0][1:] == ["2", "0", "4", "0", "add_zero"]  # applied, created, tried, failed, name
    assert table[1][1:4] == ["1", "0", "1"]
    # the columns are aligned: every row of a table has its rewriter name at the same offset
    assert lines[6].index("add_zero") == lines[7].index("e(mul")
    assert repr(prof).startswith("<EquilibriumProfile eq:")


# -- the one node pass of the walking and equilibrium rewriters ----------------------------------------------


def test_one_node_pass_serves_the_walk_and_the_equilibrium():
    mul_one = PatternNodeRewriter((mul, "x", 1), "x", name="mul_one")
    t = sin(x * 1) + cos(y * 1) * 1
    walked = FunctionGraph(outputs=[t])
    wprof = in2out(mul_one).rewrite(walked)
    settled = FunctionGraph(outputs=[t])
    eprof = EquilibriumGraphRewriter([mul_one]).rewrite(settled)
    assert walked.outputs == settled.outputs == [sin(x) + cos(y)]
    assert wprof.applied == eprof.passes[0].applied == 3 and eprof.passes[1].applied == 0
    # the second pass finds no product left to offer: each rewriter tried the three products once
    assert wprof.rewriters["mul_one"].tried == eprof.rewriters["mul_one"].tried == 3


def test_a_node_pass_can_be_stopped_after_a_rewrite():
    mul_one = PatternNodeRewriter((mul, "x", 1), "x", name="mul_one")
    dispatch = Dispatch([mul_one])
    stats = dispatch.stats()
    fg = FunctionGraph(outputs=[sin(x * 1) + cos(y * 1)])
    done = node_pass(fg, dispatch, RewriteDriver(), stats, on_applied=lambda st: st.applied >= 1)
    assert done.stopped and done.applied == 1 and stats[id(mul_one)].applied == 1
    assert fg.outputs == [sin(x) + cos(y * 1)]  # the pass ended after the first rewrite
    assert dispatch.get(mul) == (mul_one,) and dispatch.get(get_op("sin")) == ()
