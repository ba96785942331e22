"""Explanations: each step is one rule application (replayed) and keeps the value (checked numerically)."""

from __future__ import annotations

import pytest
from egraph_helpers import X, agree, evaluable, points, run_equality

from exprgraph import const, parse, rule
from exprgraph.egraph import EGraph, saturate
from exprgraph.egraph.explain import FOLD, check_step, match_syntactic, subterm_at
from exprgraph.egraph.mathsuite import EQUALITIES
from exprgraph.errors import SizeLimitError

PROVABLE = [e for e in EQUALITIES if e.provable]


@pytest.mark.parametrize("eq", PROVABLE, ids=[e.name for e in PROVABLE])
def test_every_step_replays_and_keeps_the_value(eq):
    egraph, _ = run_equality(eq, explanations=True)
    start = eq.start_term
    proof = egraph.explain(start, eq.goal_term)
    assert proof.start is start
    env = points()
    previous = start
    for step in proof:
        assert check_step(step), (eq.name, str(step))
        assert subterm_at(step.term, step.position) is step.after
        assert subterm_at(previous, step.position) is step.before
        if evaluable(previous) and evaluable(step.term):
            assert agree(previous, step.term, env), (eq.name, str(previous), str(step.term))
        previous = step.term
    assert egraph.equivalent(proof.end, eq.goal_term)


def test_explanation_mode_reaches_the_same_saturation():
    eq = next(e for e in EQUALITIES if e.name == "diff_power_harder")
    plain, r1 = run_equality(eq)
    explained, r2 = run_equality(eq, explanations=True)
    assert [it.nodes for it in r1.iterations] == [it.nodes for it in r2.iterations]
    assert plain.number_of_classes() == explained.number_of_classes()


def test_a_small_explanation_reads_as_rules():
    g = EGraph(explanations=True)
    start = parse("(x*1)*(2 - 1)")
    g.add(start)
    saturate(g, ["a*1 -> a"])
    proof = g.explain(start, X)
    assert [s.name for s in proof] == ["constant folding", "a*1 -> a", "a*1 -> a"]
    assert proof.steps[0].before is parse("2 - 1") and proof.steps[0].after is const(1)
    assert str(proof).splitlines()[0].strip() == str(start)
    assert "a*1 -> a at root" in str(proof)


def test_backward_steps_and_user_unions():
    g = EGraph(explanations=True)
    g.add(parse("x + 0"))
    saturate(g, ["a -> a + 0"], iter_limit=1)
    proof = g.explain(X, parse("x + 0"))
    assert [(s.name, s.forward) for s in proof] == [("a -> a + 0", True)]
    back = g.explain(parse("x + 0"), X)
    assert [(s.name, s.forward) for s in back] == [("a -> a + 0", False)] and check_step(back.steps[0])
    g.union(g.add(X), g.add(parse("y")))
    u = g.explain(X, parse("y"))
    assert [s.name for s in u] == ["union"] and not check_step(u.steps[0])


def test_explain_errors():
    with pytest.raises(ValueError):
        EGraph().explain(X, X)
    g = EGraph(explanations=True)
    g.add(X)
    with pytest.raises(ValueError):
        g.explain(X, parse("y"))
    assert len(g.explain(X, X)) == 0
    h = EGraph(explanations=True, fold=False)
    chain = parse("1 + (2 + (3 + (4 + 5)))")
    h.add(chain)
    saturate(h, [rule("a + b -> b + a"), rule("a + (b + c) -> (a + b) + c")])
    with pytest.raises(SizeLimitError):
        from exprgraph.egraph.explain import explain

        explain(h, chain, parse("5 + (4 + (3 + (2 + 1)))"), max_steps=3)


def test_fold_steps_and_the_syntactic_matcher():
    assert FOLD.name == "constant folding"
    assert match_syntactic(rule("a*1 -> a").pattern, parse("x*1.0")) == {"a": X}
    assert match_syntactic(rule("a + b -> a").pattern, parse("x*1")) is None
    assert match_syntactic(rule("a - a -> a").pattern, parse("x - y")) is None
