"""MergeOptimizer, rewrite databases (queries, registration), profiles."""

from __future__ import annotations

import io

import pytest

from exprgraph import const, cos, exp, get_op, sin, symbols
from exprgraph.errors import RewriteDatabaseError
from exprgraph.graph import (
    EquilibriumDB,
    EquilibriumGraphRewriter,
    FunctionGraph,
    MergeOptimizer,
    PatternNodeRewriter,
    RewriteDatabaseQuery,
    SequenceDB,
    SequentialGraphRewriter,
    graph_rewriter,
)
from exprgraph.graph.db import parse_query
from exprgraph.graph.profile import RewriterStats, WalkProfile

add, mul = get_op("add"), get_op("mul")
x, y, z = symbols("x y z")


# -- merge ------------------------------------------------------------------------------------------------


def test_equal_subterms_and_constants_are_merged_at_construction():
    a = add(y, z)
    b = add(y, z)
    assert a is b
    assert const(2.0) is const(2.0) and const(2) is not const(2.0) and const(-0.0) is not const(0.0)
    fg = FunctionGraph(outputs=[a * x + b, const(2.0) * x + const(2.0)])
    prof = MergeOptimizer().rewrite(fg)
    assert prof.merged == 0 and prof.nodes_before == prof.nodes_after == fg.node_count == 5


def test_commutative_merge_cascades():
    left = sin(x + y) * z
    right = sin(y + x) * z
    fg = FunctionGraph(outputs=[left - right, cos(mul(z, x, y)) + cos(mul(y, z, x))])
    assert fg.node_count == 12
    assert MergeOptimizer().rewrite(fg).merged == 0  # commuted operands are different terms
    prof = MergeOptimizer(commutative=True).rewrite(fg)
    # y + x merges into x + y; then sin(...), *z and the variadic products follow by interning
    assert prof.merged == 2 and prof.commutative_merged == 2
    (d, c) = fg.outputs
    assert d is left - left
    assert c.args[0] is c.args[1]
    assert fg.node_count == 7
    fg.check_integrity()


def test_commutative_merge_incremental_cleanup():
    m = MergeOptimizer(commutative=True)
    fg = FunctionGraph(outputs=[(x + y) * 2, (y + z) * 3])
    m.add_requirements(fg)
    assert m.apply(fg).merged == 0  # first run: a full scan
    fg.replace(y + z, y + x)  # brings in a commuted copy of x + y
    prof = m.apply(fg)  # later runs look only at new nodes
    assert prof.merged == 1 and prof.nodes_checked <= 3
    assert fg.outputs == [(x + y) * 2, (x + y) * 3]


# -- databases --------------------------------------------------------------------------------------------


def _pattern(name, lhs, rhs):
    return PatternNodeRewriter(lhs, rhs, name=name)


def make_db():
    eq = EquilibriumDB("algebra")
    eq.register("add_zero", _pattern("add_zero", (add, "x", 0), "x"), "fast_run", "safe")
    eq.register("mul_one", _pattern("mul_one", (mul, "x", 1), "x"), "fast_run", "safe")
    eq.register("mul_zero", _pattern("mul_zero", (mul, "x", 0), 0), "fast_run", "unsafe")
    db = SequenceDB("top")
    db.register("algebra", eq, "fast_run", position=1)

    @graph_rewriter(name="first")
    def noop(fgraph):
        pass

    db.register("first", noop, "fast_run", "cheap", position=0)
    db.register("last", MergeOptimizer(name="last"), "merge", position=5)
    return db, eq


def test_query_algebra():
    db, eq = make_db()
    names = lambda r: [c.name for c in r.rewriters]
    assert names(db.query(RewriteDatabaseQuery(include=["fast_run"]))) == ["first", "algebra"]
    assert names(db.query("fast_run", "merge")) == ["first", "algebra", "last"]
    assert names(db.query("fast_run", "-cheap")) == ["algebra"]
    assert names(db.query("fast_run", "&cheap")) == ["first"]
    q = RewriteDatabaseQuery(include=["fast_run"])
    assert names(db.query(q.excluding("cheap").including("last"))) == ["algebra", "last"]
    assert names(db.query(q.requiring("cheap"))) == ["first"]
    assert names(db.query(RewriteDatabaseQuery(include=["fast_run"], position_cutoff=1))) == ["first"]
    # the sub-database is queried with the same query, or its subquery
    algebra = db.query(q).rewriters[1]
    assert isinstance(algebra, EquilibriumGraphRewriter) and algebra.name == "algebra"
    assert [r.name for r in algebra.node_rewriters] == ["add_zero", "mul_one", "mul_zero"]
    algebra = db.query(q.excluding("unsafe")).rewriters[1]
    assert [r.name for r in algebra.node_rewriters] == ["add_zero", "mul_one"]
    sub = RewriteDatabaseQuery(include=["fast_run"], subquery={"algebra": RewriteDatabaseQuery(include=["mul_one"])})
    algebra = db.query(sub).rewriters[1]
    assert [r.name for r in algebra.node_rewriters] == ["mul_one"]
    # a name is a tag, and so is the database's name
    assert [r.name for r in eq.query("add_zero").node_rewriters] == ["add_zero"]
    assert len(eq.query("algebra").node_rewriters) == 3
    assert eq.tags_of("mul_zero") == {"mul_zero", "fast_run", "unsafe", "algebra"}


def test_query_runs():
    db, _ = make_db()
    fg = FunctionGraph(outputs=[(x + 0) * 1 * 0])
    db.query("fast_run", "-unsafe").rewrite(fg)
    assert fg.outputs == [x * 0]
    db.query("fast_run").rewrite(fg)
    assert fg.outputs == [const(0.0)]


def test_registration_errors_and_overwrite():
    db, eq = make_db()
    r = _pattern("other", (mul, "x", 1), "x")
    with pytest.raises(RewriteDatabaseError, match="already registered"):
        eq.register("mul_one", r)
    with pytest.raises(RewriteDatabaseError, match="tag"):
        eq.register("safe", r)  # a name clashing with a tag
    with pytest.raises(RewriteDatabaseError, match="name"):
        eq.register("fresh", r, "mul_one")  # a tag clashing with a name
    with pytest.raises(TypeError):
        eq.register("bad", 42)  # not a rewriter: a TypeError, as upstream
    with pytest.raises(RewriteDatabaseError):
        eq.register("", r)
    with pytest.raises(RewriteDatabaseError):
        eq.register("f", r, final_rewriter=True)  # final rewriters are graph rewriters
    with pytest.raises(RewriteDatabaseError):
        db.register("p", MergeOptimizer(), position="soon")
    eq.register("mul_one", r, "fast_run", overwrite_existing=True)
    assert eq["mul_one"] is r and "safe" not in eq.tags_of("mul_one")
    eq.remove("mul_one")
    assert "mul_one" not in eq and len(eq) == 2
    with pytest.raises(RewriteDatabaseError):
        eq.remove("mul_one")
    with pytest.raises(KeyError):
        eq["mul_one"]
    with pytest.raises(RewriteDatabaseError):
        RewriteDatabaseQuery(include=["a"], subquery={"x": 1})
    with pytest.raises(RewriteDatabaseError):
        parse_query("")


def test_positions_and_equilibrium_roles():
    order = []

    def make(name):
        @graph_rewriter(name=name)
        def step(fgraph):
            order.append(name)

        return step

    db = SequenceDB()
    db.register("c", make("c"), "t", position=2)
    db.register("a", make("a"), "t", position=1)
    db.register("b", make("b"), "t", position=1)  # ties broken by name
    db.register("d", make("d"), "t")  # default: last
    assert db.positions["d"] == 3
    seq = db.query("t")
    assert isinstance(seq, SequentialGraphRewriter)
    seq.rewrite(FunctionGraph(outputs=[x]))
    assert order == ["a", "b", "c", "d"]

    eq = EquilibriumDB("e")
    eq.register("main", _pattern("main", ("sin", "x"), ("cos", "x")), "t")
    eq.register("fin", make("fin"), "t", final_rewriter=True)
    eq.register("clean", make("clean"), "t", cleanup=True)
    rw = eq.query("t")
    assert [r.name for r in rw.final_rewriters] == ["fin"] and [r.name for r in rw.cleanup_rewriters] == ["clean"]
    order.clear()
    fg = FunctionGraph(outputs=[sin(x)])
    rw.rewrite(fg)
    assert fg.outputs == [cos(x)] and order.count("fin") == 2 and "clean" in order


def test_query_repr_and_equality():
    q = RewriteDatabaseQuery(include=["a"], exclude="b")
    assert q == RewriteDatabaseQuery(include={"a"}, exclude=["b"])
    assert hash(q) == hash(RewriteDatabaseQuery(include={"a"}, exclude=["b"]))
    assert repr(q) == "RewriteDatabaseQuery(include=['a'], exclude=['b'])"
    assert parse_query("a", "+b", "-c", "&d") == RewriteDatabaseQuery(["a", "b"], require=["d"], exclude=["c"])


# -- profiles ----------------------------------------------------------------------------------------------


def test_profile_tables_are_sorted_by_time():
    prof = WalkProfile("w", "WalkingGraphRewriter", time=1.0, nodes_before=10, nodes_after=7, applied=3)
    prof.rewriters = {
        "fast": RewriterStats("fast", time=0.1, tried=5, applied=1),
        "slow": RewriterStats("slow", time=0.5, tried=5, applied=2, nodes_created=4),
        "idle": RewriterStats("idle", time=0.2, tried=9),
    }
    buf = io.StringIO()
    prof.print_profile(file=buf)
    lines = buf.getvalue().splitlines()
    assert lines[0] == "WalkingGraphRewriter w: 1.000s, nodes 10 -> 7, stop: done"
    names = [line.split()[-1] for line in lines[3:5]]
    assert names == ["slow", "fast"]
    assert "0.200s in 1 rewriter(s) tried but never applied:" in buf.getvalue()
    assert lines[-1].split() == ["0.200s", "9", "idle"]


def test_sequence_profile_nests_children():
    seq = SequentialGraphRewriter(PatternNodeRewriter(("exp", "x"), "x", name="drop_exp"), MergeOptimizer())
    prof = seq.rewrite(FunctionGraph(outputs=[exp(x) + 1]))
    text = prof.format()
    assert text.splitlines()[0].startswith("SequentialGraphRewriter SequentialGraphRewriter:")
    assert "(0, drop_exp, WalkingGraphRewriter)" in text and "(1, MergeOptimizer, MergeOptimizer)" in text
    assert "    WalkingGraphRewriter drop_exp:" in text
    assert prof.changed
