"""The rewrite driver checks a rule's guard itself (issue 30, cold time): the same normal forms as the long way.

The rule table holds each rule's applier without its guard (:meth:`Rule.bare_applier`) and the guard
beside it; the driver checks the guard on a changed result. The long way wraps each rule's guarded
:meth:`Rule.term_applier` in a plain function rule (no guard): the rewrites must be the same terms.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from exprgraph import Symbol, const, parse
from exprgraph.core import Term, get_op
from exprgraph.rules import Rule, RuleSet, rewrite
from exprgraph.rules.profile import RewriteProfile
from exprgraph.rules.rule import keeps_dtype
from exprgraph.simplify import clear_caches
from exprgraph.simplify.simplify import canonical_ruleset, output_ruleset

X, Y = Symbol("x"), Symbol("y")
N = Symbol("i", dtype="int64")
LEAVES = st.sampled_from([X, Y, N, const(2), const(0.5), const(-1.0), const(0.0), const(1)])
UNARY = [lambda a: -a, lambda a: a**2, lambda a: abs(a), lambda a: a**-1]
BINARY = [lambda a, b: a + b, lambda a, b: a - b, lambda a, b: a * b, lambda a, b: a / b]
FUNCTIONS = ["sin", "cos", "exp", "log", "sqrt"]


@st.composite
def terms(draw: st.DrawFn, depth: int = 4) -> Term:
    """A random scalar term over x, y (float64), i (int64) and a few constants."""
    if depth == 0 or draw(st.integers(0, 4)) == 0:
        return draw(LEAVES)
    kind = draw(st.integers(0, 2))
    if kind == 0:
        return draw(st.sampled_from(UNARY))(draw(terms(depth - 1)))
    if kind == 1:
        return get_op(draw(st.sampled_from(FUNCTIONS)))(draw(terms(depth - 1)))
    return draw(st.sampled_from(BINARY))(draw(terms(depth - 1)), draw(terms(depth - 1)))


def long_way(ruleset: RuleSet) -> RuleSet:
    """Each rule as a guard-free function rule calling the rule's guarded applier (the driver before the change)."""
    made = []
    for r in ruleset:
        apply = r.term_applier()

        def fn(t: Term, apply: Any = apply) -> Term:
            out = apply(t)
            return t if out is None else out

        made.append(Rule.of_function(fn, name=r.name, ops=r.root_ops, leaves=r.leaves))
    return RuleSet(made)


@pytest.mark.parametrize("unsafe", [False, True])
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(t=terms())
def test_canonical_passes_as_before(unsafe: bool, t: Term) -> None:
    for rules in (canonical_ruleset(unsafe), output_ruleset(unsafe)):
        clear_caches()
        fast = rewrite(t, rules)
        clear_caches()
        assert rewrite(t, long_way(rules)) is fast


def _to_float(t: Term) -> Term | None:
    # i + 1 -> i + 1.0 (changes the dtype: the guard declines it)
    return t.args[0] + const(1.0) if t.args[1] is const(1) else None


def _to_two(t: Term) -> Term | None:
    # i + 1 -> i + 2 (same dtype: taken)
    return t.args[0] + const(2) if t.args[1] is const(1) else None


def test_guard_declines_and_the_next_rule_applies() -> None:
    guarded = Rule.of_function(_to_float, ops=("add",), guard=keeps_dtype, name="to_float")
    rules = RuleSet([guarded, Rule.of_function(_to_two, ops=("add",), name="to_two")])
    assert rewrite(N + 1, rules) is N + 2
    profile = RewriteProfile()
    assert rewrite(N + 1, rules, profile=profile) is N + 2
    assert profile.rules["to_float"].tries == 2 and profile.rules["to_float"].matches == 0  # on i + 1, then i + 2
    assert profile.rules["to_two"].rewrites == 1
    assert rewrite(X + 1, RuleSet([guarded])) is X + const(1.0)  # x + 1 is a float already: taken


def test_pattern_rule_guard_and_table() -> None:
    rule = Rule(parse("x + 0"), Symbol("x"), guard=lambda t, out: out.dtype == t.dtype)
    table = RuleSet([rule]).index().table
    ((entry_rule, apply, guard),) = table[get_op("add")]
    assert entry_rule is rule and guard is rule.guard and apply(X + 0) is X
    assert rewrite((X + 0) * 2, RuleSet([rule])) is X * 2
    declining = Rule(parse("x + 0"), Symbol("x"), guard=lambda t, out: False)
    assert rewrite((X + 0) * 2, RuleSet([declining, rule])) is X * 2  # declined by the first, taken by the second
    assert rewrite((X + 0) * 2, RuleSet([declining])) is (X + 0) * 2
    assert RuleSet([rule]).rules_for(get_op("add")) == (rule,)


def test_function_rule_returning_a_number_reads_as_a_term() -> None:
    rules = RuleSet([Rule.of_function(lambda t: 0.0 if t.args[1] is const(0.0) else None, ops=("mul",))])
    assert rewrite(X * 0.0, rules) is const(0.0)


def test_function_rule_returning_junk_names_the_rule() -> None:
    rules = RuleSet([Rule.of_function(lambda t: object(), ops=("mul",), name="junk", guard=keeps_dtype)])
    with pytest.raises(TypeError, match="junk"):
        rewrite(X * 2, rules)
