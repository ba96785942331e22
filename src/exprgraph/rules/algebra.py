"""A small standard algebra rule set, written as textual rules.

``ALGEBRA`` holds identities that hold for every finite value (so rewriting never changes the
value of an expression whose value is finite); ``CANCELLATION`` adds the division rules, which
need a non-zero divisor and therefore fire only when it is a non-zero constant. Both are
:class:`~exprgraph.rules.RuleSet` objects for :func:`~exprgraph.rules.rewrite`.

>>> from exprgraph import parse
>>> from exprgraph.rules import rewrite
>>> print(rewrite(parse("(a*1 + 0) * (b - b) + c**1"), ALGEBRA))
c
"""

from __future__ import annotations

from .ruleset import RuleSet

__all__ = ["ALGEBRA_TEXT", "CANCELLATION_TEXT", "ALGEBRA", "CANCELLATION", "algebra_rules"]

ALGEBRA_TEXT = """
add_zero:  x + 0 -> x          # x + 0 = x
sub_zero:  x - 0 -> x          # x - 0 = x
sub_self:  x - x -> 0          # x - x = 0
mul_one:   x * 1 -> x          # x * 1 = x
mul_zero:  x * 0 -> 0          # x * 0 = 0 (x finite)
div_one:   x / 1 -> x          # x / 1 = x
neg_neg:   -(-x) -> x          # -(-x) = x
pow_one:   x ** 1 -> x         # x ** 1 = x
pow_zero:  x ** 0 -> 1         # x ** 0 = 1
add_self:  x + x -> 2 * x      # x + x = 2x
abs_neg:   abs(-x) -> abs(x)   # |-x| = |x|
"""

CANCELLATION_TEXT = """
div_self:  x / x -> 1          where x != 0   # x / x = 1 (x != 0)
mul_div:   (x * y) / y -> x    where y != 0   # (x y) / y = x (y != 0)
"""

#: the eleven identities above, in this order of precedence
ALGEBRA = RuleSet.parse(ALGEBRA_TEXT, name="algebra")
#: the division rules (guarded: the divisor must be a non-zero constant)
CANCELLATION = RuleSet.parse(CANCELLATION_TEXT, name="cancellation")


def algebra_rules(*, cancellation: bool = True) -> RuleSet:
    """A fresh rule set of the algebra rules (and the cancellation rules unless told otherwise)."""
    rules = RuleSet.parse(ALGEBRA_TEXT, name="algebra")
    if cancellation:
        rules.extend(RuleSet.parse(CANCELLATION_TEXT))
    return rules
