"""The op reachability check (egraph.relevance) and the saturation gate of simplify's strategy."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

import exprgraph as eg
from exprgraph.egraph import EGraph, saturate
from exprgraph.egraph.identities import MIRRORED, identity_rules
from exprgraph.egraph.relevance import active_rules, rule_ops, term_ops
from exprgraph.egraph.rewrite import compile_rules
from exprgraph.egraph.saturation import binarize
from exprgraph.egraph.strategy import rules_for

x, y = eg.symbols("x y")
_UNARY = [eg.sin, eg.cos, eg.tan, eg.sinh, eg.cosh, eg.tanh, eg.exp, eg.log, abs, lambda a: -a, lambda a: a**2]
_BINARY = [
    lambda a, b: a + b,
    lambda a, b: a - b,
    lambda a, b: a * b,
    lambda a, b: a / b,
    eg.maximum,
    eg.minimum,
]


@st.composite
def _terms(draw: st.DrawFn, depth: int = 4) -> eg.Term:
    if depth == 0 or draw(st.integers(0, 3)) == 0:
        return draw(st.sampled_from([x, y, eg.const(1.0), eg.const(2.0), eg.const(-1.0)]))
    if draw(st.booleans()):
        return draw(st.sampled_from(_UNARY))(draw(_terms(depth - 1)))
    return draw(st.sampled_from(_BINARY))(draw(_terms(depth - 1)), draw(_terms(depth - 1)))


@settings(max_examples=120, deadline=None)
@given(t=_terms(), unsafe=st.booleans())
def test_a_rule_outside_the_closure_never_matches(t: eg.Term, unsafe: bool) -> None:
    rules = identity_rules(unsafe)
    active = set(active_rules(rules, term_ops((t,))))
    g = EGraph()
    g.add(binarize(t))
    saturate(g, rules, iter_limit=3, node_limit=2_000, time_limit=5.0)
    for r in compile_rules([r for r in rules if r not in active]):
        assert not r.search(g), (str(t), r.name)


def test_needs_and_gives_are_read_from_the_rule_text() -> None:
    by_name = {r.name: r for r in identity_rules(True)}
    needs, gives = rule_ops(by_name["pythagoras"])
    assert needs == {"add", "pow", "sin", "cos"} and gives <= {"const"}
    needs, gives = rule_ops(by_name["cosh2_minus_one"])
    assert needs == {"sub", "pow", "cosh"} and gives - {"const"} == {"pow", "sinh"}
    needs, _ = rule_ops(by_name["comm_add"])
    assert needs == {"add"}


def test_the_gate_skips_what_no_identity_can_reach() -> None:
    assert rules_for(x**2 + 2 * x * y, False) == ()  # no function the identities are about
    assert rules_for(x**2 + 2 * x * y, True) == ()
    assert rules_for(eg.sin(x) + x, True) != ()  # unsafe: the algebra regroups, the sum formulas may act
    assert rules_for(eg.sin(x) + y, True) == ()  # a tree: nothing to share, cancel or fold (strategy.repeats)
    # safe: sin_odd may act once a negation appears, but the canonical pass applies it itself (MIRRORED)
    assert rules_for(eg.sin(x) + y, False) == ()
    assert "abs_product" in {r.name for r in rules_for(abs(x) * abs(y), False)}
    assert "max_shift" in {r.name for r in rules_for(eg.maximum(x + 1.0, x), False)}
    assert rules_for(eg.tan(x), True) == ()  # tan alone: nothing builds a negation or a product of it
    assert rules_for(abs(x + y), True) != ()  # x + x -> 2*x makes a product: abs_product may act
    assert MIRRORED <= {r.name for r in identity_rules(False)}


def test_the_lifted_identities_join_where_a_symbol_has_assumptions() -> None:
    q = eg.Symbol("q", nonnegative=True)
    assert "exp_log_nonneg" in {r.name for r in rules_for(eg.exp(eg.log(q)), False)}
    assert rules_for(eg.exp(eg.log(x)), False) == ()  # no assumption: nothing to prove
