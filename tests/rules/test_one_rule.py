"""Every spelling of a rule builds the one Rule class, and every engine reads its fields."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from exprgraph.core import Symbol, Term, const, get_op
from exprgraph.egraph.rewrite import ERule
from exprgraph.graph import FunctionGraph, PatternNodeRewriter, optdb
from exprgraph.graph.rewriters import RuleNodeRewriter
from exprgraph.match import V
from exprgraph.rules import RewriteProfile, Rule, RuleSet, make_rule, rewrite, rule
from exprgraph.rules.relations import RelationRule
from exprgraph.rules.rule import as_rule, keeps_dtype
from exprgraph.simplify import CANONICAL_RULES, GuardedRule

MUL, NEG = get_op("mul"), get_op("neg")


def drop_neg_neg(t: Term) -> Term | None:
    # NEG(NEG(x)) -> x
    (a,) = t.args
    return a.args[0] if a.op is NEG else None


def test_every_spelling_is_a_rule() -> None:
    x = Symbol("x")
    text = rule("x*1 -> x")
    built = make_rule(V.x * 1, lambda x: x)
    shifted = V.x * 1 >> V.x
    guarded = GuardedRule("neg_neg", drop_neg_neg, ops=("neg",))
    related = RelationRule(lambda a, b: None, ops=("neg",))
    graph_rule = PatternNodeRewriter((MUL, "x", 1), "x").rule
    for r in (text, built, shifted, guarded, related, graph_rule, as_rule(drop_neg_neg)):
        assert isinstance(r, Rule)
    assert all(isinstance(r, Rule) for r in CANONICAL_RULES)
    assert text(x * 1) is x and built(x * 1) is x and graph_rule(x * 1) is x


def test_tags_guards_and_docs_are_fields() -> None:
    r = rule("x - x -> 0", name="sub_self", tag="unsafe", doc="a - a = 0 for finite a")
    assert (r.name, r.tag, r.unsafe, r.doc) == ("sub_self", "unsafe", True, "a - a = 0 for finite a")
    assert not rule("x*1 -> x").unsafe and rule("x*1 -> x").tag == "safe"
    g = GuardedRule("g", drop_neg_neg, ops=("neg",), unsafe=True, doc="--x = x")
    assert g.tag == "unsafe" and g.guard is keeps_dtype and g.root_ops == (NEG,)
    assert repr(g) == "<rule g (unsafe): --x = x>"
    unsafe_names = {r.name for r in CANONICAL_RULES if r.unsafe}
    assert "cancel_product" in unsafe_names and "collect_sum" not in unsafe_names


def test_a_guard_declines_results_it_rejects() -> None:
    n = Symbol("n", dtype="int64")
    to_float = rule("x + 0 -> x * 1.5", guard=keeps_dtype)
    assert to_float.apply(n + 0) is None  # an int term never becomes a float one
    assert to_float(n + 0) is n + 0
    assert rewrite(n + 0, [to_float]) is n + 0
    unguarded = rule("x + 0 -> x * 1.5")
    assert unguarded.apply(n + 0).dtype == "float64"


def test_a_function_rule_is_tried_on_its_ops_only() -> None:
    x, y = Symbol("x"), Symbol("y")
    seen: list[str] = []

    def spy(t: Term) -> None:
        seen.append(t.op.name)
        return None

    r = Rule.of_function(spy, ops=("neg",))
    assert r.pattern is None and r.root_ops == (NEG,) and r.match(-x) is None
    rewrite(-(x + y) * x, RuleSet([r]))
    assert seen == ["neg"]
    with pytest.raises(TypeError):
        r.build({})
    with pytest.raises(TypeError):
        Rule(None, spy, where="x > 0")
    with pytest.raises(TypeError):
        Rule.of_function(42)  # type: ignore[arg-type]


def test_plain_functions_in_a_rule_set_are_read_as_rules() -> None:
    x = Symbol("x")

    def anywhere(t: Term) -> Term:  # an Oryx-style rule: the term itself when it does not apply
        return drop_neg_neg(t) or t if t.op is NEG else t

    rs = RuleSet([anywhere])
    assert rs[0] is anywhere  # the set keeps what was given
    assert rewrite(NEG(NEG(NEG(NEG(x)))), rs) is x
    prof = RewriteProfile()
    rewrite(NEG(NEG(x)), RuleSet([lambda t: t]), profile=prof)
    (stats,) = prof.rules.values()
    assert stats.tries == 3 and stats.matches == 0 and stats.rewrites == 0


def test_the_graph_reads_the_rule_condition_and_tag() -> None:
    x = Symbol("x")
    positive_only = rule("x*1 -> x where x > 0")
    rw = PatternNodeRewriter(positive_only)
    assert rw.rule is positive_only and rw.name == positive_only.name
    assert rw.transform(FunctionGraph(outputs=[const(2.0) * 1 + x]), const(2.0) * 1) == [const(2.0)]
    assert rw.transform(FunctionGraph(outputs=[const(-2.0) * 1 + x]), const(-2.0) * 1) is False
    spec = optdb["specialize"]
    assert [n for n in spec if "unsafe" in spec.tags_of(n)] == ["sqrt_from_pow_half"]
    assert spec["sqrt_from_pow_half"].rule.tag == "unsafe" and spec["square_to_mul"].rule.tag == "specialize"
    assert "fast_run" not in spec.tags_of("sqrt_from_pow_half")


def test_a_rule_node_rewriter_reads_function_rules() -> None:
    x = Symbol("x")
    rw = RuleNodeRewriter(GuardedRule("neg_neg", drop_neg_neg, ops=("neg",)))
    assert rw.tracks() == [NEG]
    assert rw.transform(FunctionGraph(outputs=[NEG(NEG(x))]), NEG(NEG(x))) == [x]


def test_e_graph_rules_need_a_pattern_and_share_the_condition() -> None:
    with pytest.raises(TypeError, match="needs a pattern"):
        ERule(Rule.of_function(drop_neg_neg))
    r = rule("(x*y)/y -> x", where="y != 0")
    assert ERule(r).where is r.condition


def test_deep_chain_with_a_function_rule() -> None:
    x = Symbol("x")
    t = x
    for _ in range(100_000):
        t = -t
    assert rewrite(t, RuleSet([GuardedRule("neg_neg", drop_neg_neg, ops=("neg",))])) is x


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(["neg", "add0", "mul1"]), min_size=1, max_size=12))
def test_function_and_text_spellings_agree(ops: list[str]) -> None:
    x = Symbol("x")
    t: Term = x
    for name in ops:
        t = -t if name == "neg" else (t + 0 if name == "add0" else t * 1)

    def add_zero(e: Term) -> Term | None:
        # x + 0 -> x
        a, b = e.args
        return a if b.op.name == "const" and b.attr == 0 else None

    def mul_one(e: Term) -> Term | None:
        # x * 1 -> x
        a, b = e.args
        return a if b.op.name == "const" and b.attr == 1 else None

    texts = RuleSet(["-(-x) -> x", "x + 0 -> x", "x*1 -> x"])
    functions = RuleSet(
        [
            Rule.of_function(drop_neg_neg, ops=("neg",)),
            Rule.of_function(add_zero, ops=("add",)),
            Rule.of_function(mul_one, ops=("mul",)),
        ]
    )
    assert rewrite(t, texts) is rewrite(t, functions)
    assert rewrite(t, texts) in (x, -x)
