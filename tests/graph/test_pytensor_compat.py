"""Code moved over from PyTensor runs as written: the compatibility items of issue 15, one test group each."""

from __future__ import annotations

import io
import sys

import numpy as np
import pytest
from seed_rewriters import LocalSimplify
from variadic_ops import variadic

from exprgraph import Symbol, const, exp, get_op, log, parse, sin, symbols
from exprgraph.errors import (
    MissingInputError,
    NotInGraphError,
    PatternError,
    ReplacementTypeError,
    RewriteDatabaseError,
    RewriteLimitError,
)
from exprgraph.graph import (
    OUTPUT,
    EquilibriumDB,
    EquilibriumGraphRewriter,
    Feature,
    FunctionGraph,
    KanrenRelationSub,
    LocalGroupDB,
    PatternNodeRewriter,
    ProxyDB,
    RemovalNodeRewriter,
    SequenceDB,
    SequentialNodeRewriter,
    SubstitutionNodeRewriter,
    WalkingGraphRewriter,
    in2out,
    node_rewriter,
)
from exprgraph.match import OpPattern, V

add, mul, sub, lt, truediv = (get_op(n) for n in ("add", "mul", "sub", "lt", "truediv"))
x, y, z, w = symbols("x y z w")


op1, op2, op3, op4 = (variadic(f"compat_op{i}") for i in range(1, 5))


def walk(rewriter, *outputs, **kw):
    fg = FunctionGraph(outputs=list(outputs))
    prof = WalkingGraphRewriter(rewriter, **kw).rewrite(fg)
    return fg, prof


class Log(Feature):
    """Records the prune and import callbacks."""

    def __init__(self) -> None:
        self.pruned: list = []
        self.imported: list = []

    def on_prune(self, fgraph, node, reason):
        self.pruned.append(node)

    def on_import(self, fgraph, node, reason):
        self.imported.append(node)


# -- PatternNodeRewriter declines a replacement of another type ------------------------------------------


def test_a_result_of_another_dtype_is_declined_not_raised():
    to_bool = PatternNodeRewriter((sub, "x", "y"), (lt, "x", "y"))  # float64 -> bool
    fg = FunctionGraph(outputs=[(x - y) * 2])
    prof = EquilibriumGraphRewriter([to_bool]).rewrite(fg)
    assert fg.outputs == [(x - y) * 2]
    assert prof.stop_reason == "fixpoint" and prof.rewriters[to_bool.name].applied == 0
    assert to_bool.transform(fg, x - y) is False


def test_a_result_of_another_shape_is_declined():
    v = Symbol("v", shape=(3,))
    keep_left = PatternNodeRewriter((add, "a", "b"), "a")  # x + v has shape (3,), x has shape ()
    fg, _ = walk(keep_left, x + v, x + y)
    assert fg.outputs == [x + v, x]
    handler = PatternNodeRewriter((add, "a", "b"), lambda fg, node, b: Symbol("n", "int64"))
    assert handler.transform(FunctionGraph(outputs=[x + y]), x + y) is False


def test_a_numeric_result_takes_the_node_dtype_and_is_kept():
    zero = PatternNodeRewriter((sub, "x", "x"), 0)
    fg, _ = walk(zero, sin(x) - sin(x) + 1)
    assert fg.outputs == [const(0.0) + 1]


# -- pattern variables are any string ----------------------------------------------------------------------


def test_numbered_string_variables_unify_like_upstream():
    rw = PatternNodeRewriter((op1, (op2, "1", "1"), "2"), (op4, "2"))
    fg, _ = walk(rw, op1(op2(x, x), z), op1(op2(x, y), z))
    assert fg.outputs == [op4(z), op1(op2(x, y), z)]  # "1" must bind one node in both places


def test_string_variables_reach_a_callable_output_by_their_names():
    seen = {}

    def build(fgraph, node, s):
        seen.update(s)
        return s["2"]

    fg, _ = walk(PatternNodeRewriter((op1, "1", "2"), build), op1(x, y))
    assert fg.outputs == [y] and seen == {"1": x, "2": y}


def test_a_variable_repeated_in_output_expands():
    rw = PatternNodeRewriter((op1, "a"), (op2, (op1, "a"), "a"))
    fg, _ = walk(rw, op1(x))
    assert fg.outputs == [op2(op1(x), x)]


def test_a_constraint_on_the_root_pattern():
    only_scalars = {"pattern": (mul, "a", "b"), "constraint": lambda fgraph, e: e.ndim == 0}
    swap = PatternNodeRewriter(only_scalars, (mul, "b", "a"))
    v = Symbol("v", shape=(2,))
    assert swap.tracks() == [mul]
    fg, _ = walk(swap, x * y, v * y)
    assert fg.outputs == [y * x, v * y]


# -- nullary ops ------------------------------------------------------------------------------------------


def test_nullary_ops_print_repr_and_parse_back():
    t = op1()
    assert str(t) == "compat_op1()" and repr(t) == "compat_op1()"
    nested = op2(x, op1())
    assert str(nested) == "compat_op2(x, compat_op1())"
    assert parse(str(t)) is t and parse(str(nested)) is nested


def test_a_graph_of_a_nullary_op_has_one_node():
    fg = FunctionGraph([], [op1()])
    assert repr(fg) == "FunctionGraph(compat_op1())"
    assert fg.toposort() == [op1()] and fg.node_count == 1 and fg.inputs == ()
    fg.check_integrity()
    walk_sub = in2out(SubstitutionNodeRewriter(op1, op2))
    walk_sub.rewrite(fg)
    assert fg.outputs == [op2()]
    fg.check_integrity()
    assert fg.dprint(file="str") == "compat_op2 float64"


# -- FunctionGraph structure ------------------------------------------------------------------------------


def test_duplicate_inputs_are_kept():
    fg = FunctionGraph([x, x, y], [x * y])
    assert fg.inputs == (x, x, y)
    assert fg.remove_input(0) is x
    assert fg.inputs == (x, y) and fg.outputs == [x * y]  # x is still an input
    fg.check_integrity()


def test_remove_input_removes_what_depends_on_it():
    log_ = Log()
    fg = FunctionGraph([x, y, z], [exp(x + y), sin(y)], features=[log_])
    fg.remove_input(0)
    assert fg.inputs == (y, z) and fg.outputs == [sin(y)]
    assert x not in fg and x + y not in fg and fg.node_count == 1
    assert set(log_.pruned) == {exp(x + y), x + y}
    fg.check_integrity()


def test_remove_node_removes_its_users_outputs_and_orphans():
    shared = x * y
    fg = FunctionGraph([x, y, z], [sin(shared) + z, exp(y), shared])
    fg.remove_node(shared)
    assert fg.outputs == [exp(y)]
    assert shared not in fg and sin(shared) not in fg and fg.node_count == 1
    assert x in fg and z in fg  # inputs stay, used or not
    fg.check_integrity()
    fg.remove_node(log(w))  # not in the graph: nothing happens, as upstream
    assert fg.outputs == [exp(y)]


def test_import_node_needs_its_inputs_or_import_missing():
    fg = FunctionGraph([x], [exp(x)])
    with pytest.raises(MissingInputError, match="w"):
        fg.import_node(w * x)
    assert fg.inputs == (x,) and w * x not in fg
    fg.import_node(w * x, import_missing=True)
    assert fg.inputs == (x, w)
    assert w * x in fg and fg.client_count(w * x) == 0 and fg.node_count == 2
    assert fg.outputs == [exp(x)]
    assert w * x in fg.toposort()
    fg.check_integrity()
    copied = fg.copy()
    assert w * x in copied


def test_an_imported_node_stays_through_replacements_until_removed():
    fg = FunctionGraph([x, y], [exp(x)])
    fg.import_node(sin(x) * y)
    fg.replace(x, y)  # the kept node is rebuilt and still kept
    assert sin(y) * y in fg and sin(x) * y not in fg
    fg.check_integrity()
    fg.replace(sin(y) * y, sin(y))  # replaced: its replacement is kept in its place
    assert sin(y) in fg
    fg.remove_node(sin(y))
    assert sin(y) not in fg and fg.node_count == 1
    fg.check_integrity()


def test_import_var_symbols_constants_and_terms():
    fg = FunctionGraph([x], [sin(x)])
    with pytest.raises(MissingInputError):
        fg.import_var(y)
    fg.import_var(y, import_missing=True)
    assert fg.inputs == (x, y)
    fg.import_var(x)  # already an input: nothing to do
    assert fg.inputs == (x, y)
    fg.import_var(2.5)
    assert const(2.5) in fg
    fg.import_var(x * y)
    assert x * y in fg
    fg.check_integrity()


def test_add_input_and_replace_with_import_missing():
    fg = FunctionGraph([x], [sin(x)])
    fg.add_input(y)
    fg.add_input(y)  # checked: once
    assert fg.inputs == (x, y)
    fg.add_input(y, check=False)
    assert fg.inputs == (x, y, y)
    with pytest.raises(TypeError):
        fg.add_input(x + 1)
    with pytest.raises(MissingInputError):
        fg.replace(x, z)
    fg.replace(x, z, import_missing=True)
    assert fg.outputs == [sin(z)] and z in fg.inputs
    fg.add_output(w, import_missing=True)
    assert fg.inputs[-1] is w
    fg.check_integrity()


def test_dprint_prints_the_outputs():
    fg = FunctionGraph([x, y], [sin(x) * y, sin(x)])
    out = io.StringIO()
    fg.dprint(file=out)
    text = out.getvalue()
    assert text.splitlines()[0] == "mul float64" and "[id A]" in text and text == fg.dprint(file="str") + "\n"
    with pytest.raises(ValueError):
        fg.dprint(file="nowhere")


def test_change_node_input_is_a_replacement_by_the_rebuilt_node():
    node = sin(x) * y
    fg = FunctionGraph([x, y], [node + 1, exp(node)])
    expected = FunctionGraph([x, y], [node + 1, exp(node)])
    fg.change_node_input(node, 1, x)
    expected.replace(node, mul(sin(x), x))
    assert fg.outputs == expected.outputs == [sin(x) * x + 1, exp(sin(x) * x)]
    fg.check_integrity()
    fg.change_node_input(OUTPUT, 0, y)
    fg.change_node_input("output", 1, x)
    assert fg.outputs == [y, x]
    with pytest.raises(ReplacementTypeError):
        FunctionGraph([x, y], [node]).change_node_input(node, 0, Symbol("n", "int64"))
    with pytest.raises(NotInGraphError):
        fg.change_node_input(sin(z) * y, 0, x)


# -- node rewriter and database details --------------------------------------------------------------------


def test_node_rewriter_of_an_empty_list_is_refused():
    with pytest.raises(ValueError, match="None"):
        node_rewriter([])
    with pytest.raises(ValueError, match="in-place"):
        node_rewriter([mul], True)
    seen = []
    rw = node_rewriter([mul], False, [seen.append])(lambda fgraph, node: False)  # upstream's positions
    fg = FunctionGraph(outputs=[x * y])
    in2out(rw).rewrite(fg)
    assert seen == [fg]


def test_a_function_rewriter_only_sees_tracked_ops():
    calls = []

    @node_rewriter([truediv])
    def local_cancel(fgraph, node):
        calls.append(node)
        return False

    assert local_cancel.transform(None, x * y) is False and calls == []
    local_cancel.transform(None, x / y)
    assert calls == [x / y]
    text = repr(local_cancel)  # upstream's: FromFunctionNodeRewriter(<function local_cancel at 0x...>, [truediv], ())
    assert text.startswith("FromFunctionNodeRewriter(<function ") and text.endswith(", [truediv], ())")
    assert "local_cancel at 0x" in text and str(local_cancel) == "local_cancel"

    @node_rewriter(None)
    def anything(fgraph, node):
        return False

    assert "anything" in repr(anything) and repr(anything).endswith(", None, ())")  # None: every node


def test_registering_a_non_rewriter_is_a_type_error():
    for db in (SequenceDB("s"), EquilibriumDB("e"), LocalGroupDB(name="g")):
        with pytest.raises(TypeError):
            db.register("bad", lambda fg: None)


# -- variadic patterns --------------------------------------------------------------------------------------


def test_a_tuple_pattern_with_too_many_operands_never_matches():
    too_many = PatternNodeRewriter((sub, "a", "b", "c"), "a")  # sub takes 2
    fg, prof = walk(too_many, x - y)
    assert prof.applied == 0
    assert fg.outputs == [x - y] and too_many.tracks() == [sub]
    inner = PatternNodeRewriter((add, (sin, "a", "b"), "c"), "c")
    fg, _ = walk(inner, sin(x) + y)
    assert fg.outputs == [sin(x) + y]
    with pytest.raises(PatternError):  # our own pattern objects refuse it (almost always a typo)
        OpPattern(sub, (V.a, V.b, V.c))


def test_variadic_ops_take_any_count():
    rw = PatternNodeRewriter((op1, "a", "b", "c"), (op1, "c", "b", "a"))
    fg, _ = walk(rw, op1(x, y, z), op1(x, y))
    assert fg.outputs == [op1(z, y, x), op1(x, y)]


# -- LocalGroupDB, ProxyDB, print_summary, SequentialNodeRewriter, KanrenRelationSub -------------------------

add_zero = PatternNodeRewriter((add, "x", 0), "x", name="add_zero")
mul_one = PatternNodeRewriter((mul, "x", 1), "x", name="mul_one")


def test_sequential_node_rewriter_first_result_wins():
    seq = SequentialNodeRewriter(add_zero, mul_one)
    assert seq.tracks() == [add, mul]
    fg = FunctionGraph(outputs=[x * 1 + 0])
    assert seq.transform(fg, x * 1 + 0) == [x * 1]
    assert seq.transform(fg, x - y) is False
    fg2, _ = walk(seq, (x * 1 + 0) * 1)
    assert fg2.outputs == [x]


def test_sequential_node_rewriter_apply_all_follows_the_chain():
    seq = SequentialNodeRewriter(add_zero, mul_one, apply_all_rewrites=True)
    fg = FunctionGraph(outputs=[x * 1 + 0])
    assert seq.transform(fg, x * 1 + 0) == [x]
    grow = PatternNodeRewriter((sin, "a"), (sin, (sin, "a")), name="grow")
    with pytest.raises(RewriteLimitError):
        SequentialNodeRewriter(grow, apply_all_rewrites=True, max_steps=20).transform(fg, sin(x))

    @node_rewriter(None)
    def untracked(fgraph, node):
        return False

    assert SequentialNodeRewriter(add_zero, untracked).tracks() is None
    with pytest.raises(TypeError):
        SequentialNodeRewriter(add_zero, in2out(mul_one))


def test_local_group_db_gives_one_node_rewriter():
    group = LocalGroupDB()  # upstream's signature: the name comes with the registration
    group.register("add_zero", add_zero, "basic", position=2)
    group.register("mul_one", mul_one, "basic", position=1)
    rw = group.query("basic")
    assert isinstance(rw, SequentialNodeRewriter)
    assert [r.name for r in rw.rewriters] == ["mul_one", "add_zero"]
    eq_db = EquilibriumDB("eq")
    eq_db.register("group", group, "basic")
    fg = FunctionGraph(outputs=[(x + 0) * 1 + (y * 1 + 0)])
    eq_db.query("basic").rewrite(fg)
    assert fg.outputs == [x + y]
    assert group.name == "group" and eq_db.query("basic").node_rewriters[0].name == "group"
    group.register("walker", in2out(add_zero), "basic")
    with pytest.raises(TypeError):
        group.query("basic")


def test_local_group_db_arguments_follow_upstream():
    chain = LocalGroupDB(True)  # apply_all_rewrites, positionally
    chain.register("add_zero", add_zero, "basic")
    chain.register("mul_one", mul_one, "basic")
    rw = chain.query("basic")
    assert rw.apply_all_rewrites and rw.transform(None, x * 1 + 0) == [x]

    class Mine(SequentialNodeRewriter):
        pass

    assert isinstance(LocalGroupDB(node_rewriter=Mine).query("basic"), Mine)
    with pytest.raises(TypeError, match="name="):
        LocalGroupDB("group")


def test_proxy_db_registers_one_database_in_two_places():
    inner = EquilibriumDB("inner")
    inner.register("add_zero", add_zero, "basic")
    top = SequenceDB("top")
    top.register("first", inner, "basic", position=1)
    top.register("again", ProxyDB(inner), "basic", position=3)
    seq = top.query("basic")
    assert len(seq.rewriters) == 2 and all(r.name == "inner" for r in seq.rewriters)
    proxy = top["again"]
    proxy.register("mul_one", mul_one, "basic")  # goes to the wrapped database
    assert "mul_one" in inner and len(proxy) == 2 and proxy.tags_of("mul_one") >= {"basic"}
    with pytest.raises(TypeError):
        ProxyDB("not a db")
    with pytest.raises(RewriteDatabaseError):
        proxy.remove("nothing")


def test_print_summary_of_rewriters_and_databases():
    eq = EquilibriumGraphRewriter([SequentialNodeRewriter(add_zero, mul_one), in2out(add_zero)], name="eq")
    out = io.StringIO()
    eq.print_summary(stream=out)
    assert out.getvalue().splitlines() == [
        "EquilibriumGraphRewriter eq",
        "  WalkingGraphRewriter add_zero (in_to_out)",
        "    PatternNodeRewriter add_zero",
        "  SequentialNodeRewriter",
        "    PatternNodeRewriter add_zero",
        "    PatternNodeRewriter mul_one",
    ]
    out = io.StringIO()
    eq.print_summary(stream=out, depth=1)
    assert len(out.getvalue().splitlines()) == 3
    db = SequenceDB("top")
    group = LocalGroupDB()
    db.register("group", group, "basic", position=2)  # named first: its name tags what it holds
    group.register("mul_one", mul_one, "basic")
    out = io.StringIO()
    db.print_summary(stream=out)
    assert out.getvalue().splitlines() == [
        "SequenceDB top (1 entry)",
        "  group: LocalGroupDB group (1 entry)  [position 2; tags: basic, top]",
        "    mul_one: PatternNodeRewriter mul_one  [position 1; tags: basic, group]",
    ]


def _log_to_exp(in_lv, out_lv):
    from kanren import conso, lall

    from exprgraph.match.unify import var

    rest = var()
    return lall(conso(log, rest, in_lv), conso(exp, rest, out_lv))


def test_kanren_relation_sub_filters():
    plain = KanrenRelationSub(_log_to_exp)
    fg, _ = walk(plain, log(x) + log(y))
    assert fg.outputs == [exp(x) + exp(y)]
    only_x = KanrenRelationSub(_log_to_exp, node_filter=lambda node: node.args[0] is x)
    fg, _ = walk(only_x, log(x) + log(y))
    assert fg.outputs == [exp(x) + log(y)]
    streams = []

    def first(results):
        streams.append(results)
        return next(iter(results), None)

    picky = KanrenRelationSub(_log_to_exp, first)  # positional, as upstream
    fg, _ = walk(picky, log(x) * 2)
    assert fg.outputs == [exp(x) * 2] and streams and not isinstance(streams[0], (list, tuple))
    as_list = KanrenRelationSub(_log_to_exp, lambda results: list(results))
    fg, _ = walk(as_list, log(y))
    assert fg.outputs == [exp(y)]
    nothing = KanrenRelationSub(_log_to_exp, lambda results: None)
    fg, _ = walk(nothing, log(y))
    assert fg.outputs == [log(y)]
    with pytest.raises(TypeError):
        KanrenRelationSub(_log_to_exp, node_filter="no")


# -- numpy arrays in tuple patterns and the identity op -------------------------------------------------------


def test_numpy_arrays_match_constants_by_value():
    double = PatternNodeRewriter((mul, "x", np.float64(2.0)), (add, "x", "x"))
    zero_d = PatternNodeRewriter((mul, "x", np.array(2)), (add, "x", "x"))
    for rw in (double, zero_d):
        fg, _ = walk(rw, x * 2, x * 2.0, x * 3)
        assert fg.outputs == [x + x, x + x, x * 3]
    v = Symbol("v", shape=(2,))
    ones = PatternNodeRewriter((mul, "x", np.array([1, 1])), "x")
    fg, _ = walk(ones, v * const(np.array([1.0, 1.0])), v * const(np.array([1.0, 2.0])), v * const(np.ones(3)[:2]))
    assert fg.outputs == [v, v * const(np.array([1.0, 2.0])), v]
    b = Symbol("b", "bool", shape=(2,))
    truth = PatternNodeRewriter((get_op("logical_and"), "x", np.array([True, True])), "x")
    fg, _ = walk(truth, b & const(np.array([True, True])), b & const(np.array([1, 1])) > 0)
    assert fg.outputs[0] is b


def test_the_seeds_identity_removal_runs_as_written():
    identity = get_op("identity")
    remove_identity = RemovalNodeRewriter(identity)
    fg, _ = walk(remove_identity, identity(x) * identity(identity(y)) + 1)
    assert fg.outputs == [x * y + 1]
    assert str(identity(x)) == "identity(x)" and parse("identity(x)") is identity(x)
    b = Symbol("b", "bool")
    assert identity(b).dtype == "bool" and identity(Symbol("v", shape=(3,))).shape == (3,)


def test_a_node_rewriter_class_written_for_pytensor():
    # the seed's LocalSimplify: PyTensor's transform/tracks protocol, ops compared with ==
    fg, prof = walk(LocalSimplify(), z + (y * x) / y * (z / x))
    assert fg.outputs == [z + x * (z / x)]
    assert (prof.applied, prof.nodes_before, prof.nodes_after) == (1, 5, 3)


# -- deep graphs: the new edits are iterative ------------------------------------------------------------------


def test_structural_edits_on_a_deep_chain():
    assert sys.getrecursionlimit() <= 3000
    n = 100_000
    t = x
    for i in range(n):
        t = sin(t) if i % 2 else t * 1
    fg = FunctionGraph([x, y], [exp(y)])
    fg.import_node(t)  # kept, with the whole chain below it
    assert fg.node_count == n + 1 and fg.toposort()[-1] is t
    fg.remove_node(x * 1)  # the bottom node: everything above it goes
    assert fg.node_count == 1 and t not in fg and x in fg
    fg.check_integrity()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__, "-q"]))
