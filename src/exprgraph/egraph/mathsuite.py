"""egg's math test suite, in our own rule syntax: rules, equalities, limits, and the micro-benchmark.

Derivatives and integrals are uninterpreted ops registered in the op table when this module is
imported: ``d(x, e)`` (the derivative of ``e`` in ``x``) and ``i(e, x)`` (an antiderivative of
``e`` in ``x``). Being ordinary ops, they parse by name in terms and rules, print, and take part
in e-matching; they have no numeric evaluation, so nothing folds through them.

- :data:`RULES`: the 36 rules (conditions written with :mod:`.conditions` by name);
- :data:`EQUALITIES`: the 20 equalities with the runner settings of each (one is *not* provable:
  ``x + y`` and ``x / y``); their numbers are floats, as egg's language is f64 throughout;
- :data:`MICRO_RULES` and :data:`MICRO_TERMS`: egglog's math micro-benchmark (the unconditional
  rules, iterated without constant folding);
- :data:`COSTS`: derivatives and integrals cost 100, everything else 1 (so extraction gets rid of
  them when it can).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..core import Op, Term, const, get_op, parse, register_op
from ..core.stdops import real
from ..rules import Rule, bottom_up, parse_rules
from .conditions import FUNCTIONS

__all__ = [
    "D",
    "I",
    "RULES",
    "RULE_TEXT",
    "EQUALITIES",
    "Equality",
    "MICRO_RULES",
    "MICRO_TERMS",
    "COSTS",
    "rules",
    "floats",
]


def _register(name: str, doc: str) -> Op:
    try:
        return get_op(name)
    except KeyError:
        return register_op(Op(name, 2, real, notation="call", doc=doc))


#: ``d(x, e)``: the derivative of ``e`` with respect to the symbol ``x`` (uninterpreted)
D = _register("d", "Derivative d(x, e) of e in x (uninterpreted; egg's math example).")
#: ``i(e, x)``: an antiderivative of ``e`` in ``x`` (uninterpreted)
I = _register("i", "Antiderivative i(e, x) of e in x (uninterpreted; egg's math example).")  # noqa: E741

#: the rule file of the suite (one rule per line; ``where`` conditions use :data:`FUNCTIONS`)
RULE_TEXT = """
# commutativity and associativity
comm_add:  a + b -> b + a
comm_mul:  a * b -> b * a
assoc_add: a + (b + c) -> (a + b) + c
assoc_mul: a * (b * c) -> (a * b) * c
# subtraction and division as sums and products
sub_canon: a - b -> a + -1*b
div_canon: a / b -> a * b**-1 where not_zero(b)
# units and zeros
zero_add: a + 0 -> a
zero_mul: a * 0 -> 0
one_mul:  a * 1 -> a
add_zero: a -> a + 0
mul_one:  a -> a * 1
cancel_sub: a - a -> 0
cancel_div: a / a -> 1 where not_zero(a)
# distributivity
distribute: a * (b + c) -> a*b + a*c
factor:     a*b + a*c -> a * (b + c)
# powers
pow_mul:   a**b * a**c -> a**(b + c)
pow0:      x**0 -> 1 where not_zero(x)
pow1:      x**1 -> x
pow2:      x**2 -> x*x
pow_recip: x**-1 -> 1/x where not_zero(x)
recip_mul_div: x * (1/x) -> 1 where not_zero(x)
# derivatives
d_variable: d(x, x) -> 1 where is_sym(x)
d_constant: d(x, c) -> 0 where is_sym(x) and const_or_distinct_var(c, x)
d_add: d(x, a + b) -> d(x, a) + d(x, b)
d_mul: d(x, a * b) -> a*d(x, b) + b*d(x, a)
d_sin: d(x, sin(x)) -> cos(x)
d_cos: d(x, cos(x)) -> -1*sin(x)
d_ln:  d(x, log(x)) -> 1/x where not_zero(x)
d_power: d(x, f**g) -> f**g * (d(x, f)*(g/f) + d(x, g)*log(f)) where not_zero(f) and not_zero(g)
# integrals
i_one: i(1, x) -> x
i_power_const: i(x**c, x) -> x**(c + 1) / (c + 1) where is_const(c)
i_cos: i(cos(x), x) -> sin(x)
i_sin: i(sin(x), x) -> -1*cos(x)
i_sum: i(f + g, x) -> i(f, x) + i(g, x)
i_dif: i(f - g, x) -> i(f, x) - i(g, x)
i_parts: i(a*b, x) -> a*i(b, x) - i(d(x, a)*i(b, x), x)
"""


def rules() -> list[Rule]:
    """The suite's rules, parsed afresh."""
    return parse_rules(RULE_TEXT, functions=FUNCTIONS)


#: the 36 rules of the suite
RULES: list[Rule] = rules()

#: per-op extraction costs of the suite (derivatives and integrals are expensive)
COSTS = {"d": 100, "i": 100}

_UNCONDITIONAL = {
    "comm_add",
    "comm_mul",
    "assoc_add",
    "assoc_mul",
    "sub_canon",
    "zero_add",
    "zero_mul",
    "one_mul",
    "cancel_sub",
    "distribute",
    "factor",
    "pow_mul",
    "pow1",
    "pow2",
    "d_add",
    "d_mul",
    "d_sin",
    "d_cos",
    "i_one",
    "i_cos",
    "i_sin",
    "i_sum",
    "i_dif",
    "i_parts",
}

#: egglog's math micro-benchmark: the 24 rules without conditions (no constant folding)
MICRO_RULES: list[Rule] = [r for r in RULES if r.name in _UNCONDITIONAL]

#: the terms the micro-benchmark saturates together
MICRO_TERMS = [
    parse(text)
    for text in (
        "i(log(x), x)",
        "i(x + cos(x), x)",
        "i(cos(x)*x, x)",
        "d(x, 1 + 2*x)",
        "d(x, x**3 - 7*x**2)",
        "y*(x + y) + ((x + 2) - (x + x))",
        "1/((1 + sqrt(five))/2 - (1 - sqrt(five))/2)",
    )
]


@dataclass(frozen=True)
class Equality:
    """One equality of the suite: start term, goal term, runner settings, whether it is provable."""

    name: str
    start: str
    goal: str
    settings: dict[str, Any] = field(default_factory=dict)
    provable: bool = True
    #: only these rules (by name), when set
    only: tuple[str, ...] = ()
    #: more terms to add to the e-graph (egg "shows" the goal to one test)
    extra: tuple[str, ...] = ()

    def rules(self) -> list[Rule]:
        """The rules this equality runs with."""
        return [r for r in RULES if not self.only or r.name in self.only]

    @property
    def start_term(self) -> Term:
        """The start term, its numbers as floats (egg's math language is f64 throughout)."""
        return floats(parse(self.start))

    @property
    def goal_term(self) -> Term:
        """The goal term, its numbers as floats."""
        return floats(parse(self.goal))

    @property
    def extra_terms(self) -> list[Term]:
        """The extra terms, their numbers as floats."""
        return [floats(parse(e)) for e in self.extra]


def _float_const(t: Term) -> Term:
    # 2 -> 2.0: an int constant as a float
    return const(float(t.attr)) if t.op.name == "const" and t.attr.__class__ is int else t


def floats(term: Term) -> Term:
    """``term`` with its int constants made float (so that ``2**-1`` is the float 0.5, as in egg)."""
    return bottom_up(_float_const)(term)


#: the 20 equalities of egg's suite (limits as egg's tests set them; egg's defaults otherwise)
EQUALITIES: list[Equality] = [
    Equality(
        "math_associate_adds",
        "1 + (2 + (3 + (4 + (5 + (6 + 7)))))",
        "7 + (6 + (5 + (4 + (3 + (2 + 1)))))",
        {"iter_limit": 7, "scheduler": "simple", "fold": False},
        only=("comm_add", "assoc_add"),
    ),
    Equality("math_fail", "x + y", "x / y", provable=False),
    Equality("math_simplify_add", "x + (x + (x + x))", "4*x"),
    Equality("math_powers", "2**x * 2**y", "2**(x + y)"),
    Equality("math_simplify_const", "1 + (a - (2 - 1)*a)", "1"),
    Equality(
        "math_simplify_root",
        "1/((1 + sqrt(five))/2 - (1 - sqrt(five))/2)",
        "1/sqrt(five)",
        {"node_limit": 75_000},
    ),
    Equality("math_simplify_factor", "(x + 3)*(x + 1)", "(x*x + 4*x) + 3"),
    Equality("math_diff_same", "d(x, x)", "1"),
    Equality("math_diff_different", "d(x, y)", "0"),
    Equality("math_diff_simple1", "d(x, 1 + 2*x)", "2"),
    Equality("math_diff_simple2", "d(x, 1 + y*x)", "y"),
    Equality("math_diff_ln", "d(x, log(x))", "1/x"),
    Equality("diff_power_simple", "d(x, x**3)", "3*x**2"),
    Equality(
        "diff_power_harder",
        "d(x, x**3 - 7*x**2)",
        "x*(3*x - 14)",
        {"time_limit": 10.0, "iter_limit": 60, "node_limit": 100_000},
        extra=("x*(3*x - 14)",),
    ),
    Equality("integ_one", "i(1, x)", "x"),
    Equality("integ_sin", "i(cos(x), x)", "sin(x)"),
    Equality("integ_x", "i(x**1, x)", "x**2/2"),
    Equality("integ_part1", "i(x*cos(x), x)", "x*sin(x) + cos(x)"),
    Equality("integ_part2", "i(cos(x)*x, x)", "x*sin(x) + cos(x)"),
    Equality("integ_part3", "i(log(x), x)", "x*log(x) - x"),
]
