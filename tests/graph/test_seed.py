"""Every example of the seed (PyTensor's graph rewriting guide), in our names, with the seed's results."""

from __future__ import annotations

from etuples import etuple
from kanren_examples import dot_distributeo
from seed_rewriters import LocalSimplify

from exprgraph import Symbol, get_op, symbols
from exprgraph.graph import (
    EquilibriumGraphRewriter,
    FunctionGraph,
    GraphRewriter,
    KanrenRelationSub,
    MergeOptimizer,
    PatternNodeRewriter,
    RemovalNodeRewriter,
    ReplaceValidate,
    RewriteDatabaseQuery,
    SubstitutionNodeRewriter,
    WalkingGraphRewriter,
    optdb,
    rewrite_graph,
)
from exprgraph.graph.profile import MergeProfile, WalkProfile
from exprgraph.match.unify import car, cdr, cons, reify, unify, var

add, mul, truediv, matmul = (get_op(n) for n in ("add", "mul", "truediv", "matmul"))


class Simplify(GraphRewriter):
    """The seed's graph rewriter: (a*b)/b -> a and (a*b)/a -> b."""

    def add_requirements(self, fgraph):
        fgraph.attach_feature(ReplaceValidate())

    def apply(self, fgraph):
        for node in fgraph.toposort():
            if node.op == truediv:
                x, y = node.args
                z = node
                if x.op == mul:
                    a, b = x.args
                    if y == a:
                        fgraph.replace_validate(z, b)
                    elif y == b:
                        fgraph.replace_validate(z, a)


def test_graph_rewriter_example():
    x, y, z = symbols("x y z")
    a = add(z, mul(truediv(mul(y, x), y), truediv(z, x)))
    e = FunctionGraph([x, y, z], [a])
    assert repr(e) == "FunctionGraph(add(z, mul(truediv(mul(y, x), y), truediv(z, x))))"
    Simplify().rewrite(e)
    assert repr(e) == "FunctionGraph(add(z, mul(x, truediv(z, x))))"


def test_merge_example_is_already_merged_here():
    x, y, z = symbols("x y z")
    a = truediv(mul(add(y, z), x), add(y, z))
    e = FunctionGraph([x, y, z], [a])
    # the seed's graph needs a merge first (add(y, z) != add(y, z) there); here equal terms are one
    assert repr(e) == "FunctionGraph(truediv(mul(*1 -> add(y, z), x), *1))"
    prof = MergeOptimizer().rewrite(e)
    assert isinstance(prof, MergeProfile) and prof.merged == 0
    assert repr(e) == "FunctionGraph(truediv(mul(*1 -> add(y, z), x), *1))"
    Simplify().rewrite(e)
    assert repr(e) == "FunctionGraph(x)"


def test_simplify_works_without_the_merge():
    x, y, z = symbols("x y z")
    e = FunctionGraph([x, y, z], [truediv(mul(add(y, z), x), add(y, z))])
    Simplify().rewrite(e)
    assert repr(e) == "FunctionGraph(x)"


def test_node_rewriter_example_and_its_profile():
    x, y, z = symbols("x y z")
    a = add(z, mul(truediv(mul(y, x), y), truediv(z, x)))
    e = FunctionGraph([x, y, z], [a])
    simplify = WalkingGraphRewriter(LocalSimplify())
    prof = simplify.rewrite(e)
    assert repr(e) == "FunctionGraph(add(z, mul(x, truediv(z, x))))"
    assert isinstance(prof, WalkProfile)
    # the seed's tuple (rewriter, 1, 5, 3, ...): one replacement, 5 nodes before, 3 after
    assert (prof.applied, prof.nodes_before, prof.nodes_after) == (1, 5, 3)
    st = prof.rewriters["LocalSimplify"]
    assert st.applied == 1 and st.tried == 2


def test_shortcut_rewriters(identity):
    x, y, z = symbols("x y z")
    add_to_mul = SubstitutionNodeRewriter(add, mul)
    e = FunctionGraph([x, y], [add(x, y) * 2])
    WalkingGraphRewriter(add_to_mul).rewrite(e)
    assert e.outputs == [mul(x, y) * 2]

    remove_identity = RemovalNodeRewriter(identity)
    e = FunctionGraph([x, y], [identity(identity(x) + y)])
    WalkingGraphRewriter(remove_identity).rewrite(e)
    assert e.outputs == [x + y]

    local_simplify_1 = PatternNodeRewriter((truediv, (mul, "x", "y"), "y"), "x")
    local_simplify_2 = PatternNodeRewriter((truediv, (mul, "x", "y"), "x"), "y")
    a = add(z, mul(truediv(mul(y, x), y), truediv(z, x)))
    e = FunctionGraph([x, y, z], [a])
    WalkingGraphRewriter([local_simplify_1, local_simplify_2]).rewrite(e)
    assert repr(e) == "FunctionGraph(add(z, mul(x, truediv(z, x))))"


def test_unification_and_reification_examples():
    x, y, z = symbols("x y z")
    y_lv = var()
    s = unify(add(x, y), etuple(add, x, y_lv))
    assert s == {y_lv: y}
    res = reify(etuple(add, y_lv, y_lv), s)
    assert res.evaled_obj is add(y, y)

    op_lv, args_lv = var(), var()
    s = unify(cons(op_lv, args_lv), add(x, y))
    assert s[op_lv] is add and tuple(s[args_lv]) == (x, y)
    s = unify(cons(op_lv, args_lv), add(x, y, z))
    assert s[op_lv] is add and tuple(s[args_lv]) == (x, y, z)
    res = reify(cons(mul, args_lv), s)
    assert res.evaled_obj is mul(x, y, z)
    assert car(add(x, y)) is add and tuple(cdr(add(x, y))) == (x, y)


def test_kanren_relation_examples():
    dot_distribute_rewrite = EquilibriumGraphRewriter([KanrenRelationSub(dot_distributeo)], max_use_ratio=10)
    x, y, z, w = (Symbol(n, shape=(3,)) for n in "xyzw")
    A, B = Symbol("A", shape=(3, 3)), Symbol("B", shape=(3, 3))

    test = A @ (x + y)
    assert str(test) == "A @ (x + y)"
    res = rewrite_graph(test, include=[], custom_rewrite=dot_distribute_rewrite, clone=False)
    assert str(res) == "A @ x + A @ y"

    test = A @ ((x + y) + (z + w))
    assert str(test) == "A @ ((x + y) + (z + w))"
    res = rewrite_graph(test, include=[], custom_rewrite=dot_distribute_rewrite, clone=False)
    assert res is ((A @ x) + (A @ y)) + ((A @ z) + (A @ w))

    test = A @ (x + (y + B @ (z + w)))
    assert str(test) == "A @ (x + (y + B @ (z + w)))"
    res = rewrite_graph(test, include=[], custom_rewrite=dot_distribute_rewrite, clone=False)
    assert res is (A @ x) + ((A @ y) + ((A @ (B @ z)) + (A @ (B @ w))))

    dot_gather_rewrite = EquilibriumGraphRewriter(
        [KanrenRelationSub(lambda x, y: dot_distributeo(y, x))], max_use_ratio=10
    )
    rev_res = rewrite_graph(res, include=[], custom_rewrite=dot_gather_rewrite, clone=False)
    assert rev_res is A @ (x + (y + (B @ (z + w))))


def test_optdb_queries_of_the_seed():
    fast_run = optdb.query(RewriteDatabaseQuery(include=["fast_run"]))
    fast_compile = optdb.query(RewriteDatabaseQuery(include=["fast_compile"]))
    no_unsafe = optdb.query(RewriteDatabaseQuery(include=["fast_run"], exclude=["unsafe"]))
    names = [r.name for r in fast_run.rewriters]
    assert names == ["merge1", "canonicalize", "stabilize", "specialize", "merge2"]
    assert [r.name for r in fast_compile.rewriters] == ["merge1", "canonicalize", "merge2"]
    assert [r.name for r in no_unsafe.rewriters] == names

    x = symbols("x")
    simplify = Simplify()
    from exprgraph.graph import SequenceDB

    db = SequenceDB("mydb")
    db.register("simplify", simplify, "fast_run", position=0.5)
    e = FunctionGraph([x], [truediv(mul(x, x), x)])
    db.query(RewriteDatabaseQuery(include=["fast_run"])).rewrite(e)
    assert e.outputs == [x]
