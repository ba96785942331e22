"""The safe rules the unsafe strength leaves out (``canonical.SUBSUMED``) would never act there.

Each is tried after an unsafe rule at the same node that makes its rewrites first (a lift after the
rule it lifts, a safe trig rule after the unsafe one applying its relations both ways). On random
terms over symbols with and without assumptions (a lift acts only where its condition is proven),
the unsafe canonical pass with those rules in their places never applies one of them, so leaving
them out gives the same normal form, term for term.
"""

from __future__ import annotations

from hypothesis import example, given, settings
from test_forms_gates import _terms
from test_trig import trig_sums

import exprgraph as eg
from exprgraph import Symbol, const
from exprgraph.rules import RewriteProfile, RuleSet, rewrite
from exprgraph.simplify.canonical import CANONICAL_RULES, SAFE_ONLY, SUBSUMED
from exprgraph.simplify.simplify import canonical_ruleset, rules, simplify

xf = Symbol("x", finite=True)
nz = Symbol("n", finite=True, nonzero=True)
bx = Symbol("b", lower=-10.0, upper=10.0)
plain = Symbol("y")
#: leaves of the random terms: symbols with and without assumptions, constants, and trigonometric,
#: hyperbolic and exp functions of them (the sums, products and powers of test_forms_gates' terms combine them)
LEAVES = [xf, nz, bx, plain, const(1.0), const(2.0), const(-1.0), const(3)] + [
    f(a) for f in (eg.sin, eg.cos, eg.tan, eg.sinh, eg.cosh, eg.exp) for a in (xf, bx, plain)
]


#: the unsafe canonical rules with the SUBSUMED ones in their places (the rule set before they were left out)
_WITH_SUBSUMED = RuleSet([r for r in CANONICAL_RULES if r.name not in SAFE_ONLY - SUBSUMED], name="with-subsumed")


def test_the_subsumed_rules_are_safe_and_left_out_of_the_unsafe_pass_only() -> None:
    safe = {r.name for r in rules()}
    unsafe = {r.name for r in rules(unsafe=True)}
    assert SUBSUMED <= safe and not SUBSUMED & unsafe
    assert all(not r.unsafe for r in CANONICAL_RULES if r.name in SUBSUMED)


def _never_act(t: eg.Term) -> None:
    """The unsafe pass with the SUBSUMED rules in their places applies none of them and ends where the pass does."""
    profile = RewriteProfile()
    full = rewrite(t, _WITH_SUBSUMED, profile=profile)
    acted = {name for name, s in profile.rules.items() if name in SUBSUMED and s.rewrites}
    assert not acted, (str(t), acted)
    assert rewrite(t, canonical_ruleset(True)) is full


S, C = eg.sin(xf), eg.cos(xf)
POS = Symbol("p", positive=True)


@settings(max_examples=300, deadline=None)
@given(_terms(LEAVES))
@example(S**2 + C**2)  # each SUBSUMED rule's own shape, where the safe pass applies it
@example(2.0 * eg.sin(bx) ** 2 + 2.0 * eg.cos(bx) ** 2)
@example(xf - xf)
@example(1.0 - S**2)
@example(S / C)
@example(eg.exp(xf) + eg.exp(-xf))
@example(S**3 + S * C**2)
@example(3.0 * eg.cos(plain) ** 3 + 3.0 * eg.cos(plain) * eg.sin(plain) ** 2)
@example(eg.exp(2 * eg.log(POS)))
@example(eg.exp(const(-0.5) * eg.log(POS)) + eg.exp(3.0 * eg.log(POS * POS)))
def test_the_subsumed_rules_never_act_in_the_unsafe_pass(t: eg.Term) -> None:
    _never_act(t)


@settings(max_examples=200, deadline=None)
@given(trig_sums())
def test_the_subsumed_rules_never_act_on_trig_sums(t: eg.Term) -> None:
    _never_act(t)


def test_textbook_cases_of_the_subsumed_rules_still_simplify_unsafe() -> None:
    # each SUBSUMED rule's own shape, simplified at the unsafe strength by the rule tried before it
    assert str(simplify(xf - xf, unsafe=True)) == "0.0"
    assert str(simplify(nz / nz, unsafe=True)) == "1.0"
    assert str(simplify(S**2 + C**2, unsafe=True)) == "1.0"
    assert str(simplify(S / C, unsafe=True)) == "tan(x)"
    assert str(simplify(1 - S**2, unsafe=True)) == "cos(x)**2"
    assert str(simplify(S**3 + S * C**2, unsafe=True)) == "sin(x)"
    assert str(simplify(eg.exp(2 * eg.log(POS)), unsafe=True)) == "p**2"


def test_one_unit_finite_stays_in_the_unsafe_pass() -> None:
    # cancel_product leaves 3**-1 * (3**-1)**-1.0 (an int power it cannot fold); the lift proves 3**-1 finite, non-zero
    third = const(3) ** const(-1)
    t = third * third ** const(-1.0)
    assert "one_unit_finite" not in SUBSUMED
    assert str(rewrite(t, canonical_ruleset(True))) == "1.0"
