"""PyTensor behaviours of issue 31: verbose validated replacement, segment arity, database errors, reprs."""

from __future__ import annotations

import pytest

from exprgraph import cos, get_op, sin, symbols
from exprgraph.errors import RewriteDatabaseError, RewritePositionError
from exprgraph.graph import (
    FunctionGraph,
    GraphRewriter,
    LocalGroupDB,
    PatternNodeRewriter,
    ReplaceValidate,
    SequenceDB,
    SequentialNodeRewriter,
    SubstitutionNodeRewriter,
    in2out,
    node_rewriter,
)
from exprgraph.match import Dot, Plus, Segment, V

x, y, z = symbols("x y z")
add, mul, sub, truediv = (get_op(n) for n in ("add", "mul", "sub", "truediv"))


class Blah(GraphRewriter):
    def apply(self, fgraph):
        return None


def test_replace_all_validate_prints_each_replacement_with_verbose(capsys):
    fg = FunctionGraph([x, y], [sin(x) * y + cos(y)], features=[ReplaceValidate()])
    fg.replace_all_validate([(sin(x), cos(x)), (cos(y), y)], reason="swap", verbose=True)
    lines = capsys.readouterr().out.splitlines()
    assert lines == ["rewrite swap replaces sin(x) with cos(x)", "rewrite swap replaces cos(y) with y"]
    fg.replace_validate(y, x, reason="quiet")
    fg.replace_all_validate([(cos(x), sin(x))], verbose=False)
    assert capsys.readouterr().out == ""  # off by default and with verbose=False
    fg.replace_validate(sin(x) * x, x, verbose=True)
    assert capsys.readouterr().out == "rewrite <manual> replaces sin(x)*x with x\n"
    assert fg.outputs == [x + x]


def test_a_pattern_with_a_run_and_too_many_fixed_operands_never_matches():
    for pattern in [
        (sin, "x", Segment("rest"), "y"),  # sin takes one operand: two fixed ones can never fit
        (sin, Plus(Dot), "y"),
        (sub, "x", Segment("r"), "y", "z"),
        (sub, Plus(Dot), Plus(Dot), "z"),
    ]:
        rewriter = PatternNodeRewriter(pattern, "x")  # built, as upstream: it just never applies
        for node in (sin(x), x - y, sin(x - y)):
            assert rewriter.transform(None, node) is False
        fg = FunctionGraph(outputs=[sin(x) - sin(y)])
        assert in2out(rewriter).rewrite(fg).applied == 0
    fits = PatternNodeRewriter((sub, Segment("r"), "y"), "y")  # the run may be empty: it matches
    assert fits.transform(None, x - z) == [z]
    with_var_op = PatternNodeRewriter((V.f, "x", Segment("r"), "y"), "x")  # a variable op: each op decides
    assert with_var_op.transform(None, sin(x)) is False and with_var_op.transform(None, x - y) == [x]


def test_a_non_numeric_position_is_a_type_error():
    for db in (SequenceDB(), LocalGroupDB()):
        for bad in ("soon", object(), [1]):
            with pytest.raises(TypeError, match="numeric"):
                db.register("b", Blah(), position=bad)
            with pytest.raises(RewriteDatabaseError):  # and still our database error
                db.register("b", Blah(), position=bad)
        assert "b" not in db
    assert issubclass(RewritePositionError, TypeError) and issubclass(RewritePositionError, RewriteDatabaseError)


def test_a_number_given_after_the_rewriter_is_its_position():
    lg = LocalGroupDB()
    lg.register("a", Blah(), 1)  # accepted, as upstream accepts it
    assert "a" in lg and lg.positions["a"] == 1.0
    seq = SequenceDB("s")
    seq.register("late", Blah(), 5, "fast_run")
    seq.register("early", Blah(), 0.5, "fast_run")
    seq.register("last", Blah(), "fast_run")
    assert [r.name for r in seq.query("fast_run").rewriters] == ["Blah", "Blah", "Blah"]
    assert seq.positions == {"late": 5.0, "early": 0.5, "last": 6.0}
    assert seq.tags_of("late") == {"late", "fast_run", "s"}
    with pytest.raises(RewriteDatabaseError, match="tags"):
        seq.register("kw", Blah(), 7, position=2)  # with position= given, 7 would be a tag: tags are strings


def test_node_rewriters_repr_as_upstream():
    cancel = PatternNodeRewriter((truediv, (mul, "x", "y"), "y"), "x")
    assert repr(cancel) == str(cancel) == cancel.name == "e(truediv, e(mul, ~x, ~y), ~y) -> ~x"
    named = PatternNodeRewriter((truediv, (mul, "x", "y"), "y"), "x", name="cancel")
    assert repr(named) == str(named) == "cancel"
    assert repr(PatternNodeRewriter((add, "x", 2.5), (mul, "x", 2))) == "e(add, ~x, 2.5) -> e(mul, ~x, 2)"
    positive = {"pattern": "c", "constraint": lambda e: True}
    assert repr(PatternNodeRewriter((add, positive, "y"), "c")) == "e(add, ~c [<lambda>], ~y) -> ~c"
    assert repr(PatternNodeRewriter(("sin", "x"), ("cos", "x"))) == "e(sin, ~x) -> e(cos, ~x)"

    @node_rewriter([mul, add])
    def local_rewriter_1(fgraph, node):
        return False

    assert str(local_rewriter_1) == "local_rewriter_1"
    text = repr(local_rewriter_1)
    assert text.startswith("FromFunctionNodeRewriter(<function ") and "local_rewriter_1 at 0x" in text
    assert text.endswith(", [mul, add], ())")
    substitution = SubstitutionNodeRewriter(add, mul)
    assert str(substitution) == "add -> mul"
    assert str(SequentialNodeRewriter(cancel, substitution)) == (
        "SequentialNodeRewriter(e(truediv, e(mul, ~x, ~y), ~y) -> ~x,add -> mul)"
    )
