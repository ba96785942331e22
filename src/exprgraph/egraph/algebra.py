"""Algebra rules for equality saturation: each law written once, both ways where both help.

Unlike the term rewriter's canonical rules, these need no orientation or guard against looping:
the e-graph keeps every form and extraction picks the cheapest. :data:`SAFE` holds laws that keep
every value exactly, rounding and the sign of a zero result included: commutativity, the unit of a product,
negation, doubling and squaring (``a + 0 -> a`` is unsafe: ``-0.0 + 0`` is ``+0.0``, and a division
by it gives inf where ``1/-0.0`` is -inf). :data:`UNSAFE` adds the ones that round differently
(associativity: ``1e16 + (-1e16 + 1)`` is 0.0 where ``(1e16 + -1e16) + 1`` is 1.0; division as a
product rounds twice) and the ones exact only
for finite or non-zero values, as ``simplify(..., unsafe=True)`` does: distributivity (``0*(x - 2x)`` is ``-0.0``
but ``0*x - 0*2x`` is ``+0.0``, and a division by it flips the sign of infinity), ``a**b * a**c
-> a**(b + c)`` (nan for a negative base and fractional exponents), ``x*0 -> 0``, ``x - x -> 0``,
``x/x -> 1``, ``log(exp(x)) -> x`` and ``exp(log(x)) -> x``.
"""

from __future__ import annotations

from ..rules import Rule, parse_rules
from .conditions import FUNCTIONS

__all__ = ["SAFE", "UNSAFE", "SAFE_TEXT", "UNSAFE_TEXT", "algebra_rules"]

SAFE_TEXT = """
comm_add: a + b -> b + a                      # a + b = b + a
comm_mul: a * b -> b * a                      # a*b = b*a
one_mul: a * 1 -> a                           # a*1 = a
sub_add: a - b <-> a + -b                     # subtraction is adding the negation
neg_mul: -a <-> -1*a                          # negation is a product
neg_neg: -(-a) -> a                           # --a = a
double: a + a <-> 2*a                         # a + a = 2a
square: a * a <-> a**2                        # a*a = a**2
pow_one: a**1 -> a                            # a**1 = a
"""

UNSAFE_TEXT = """
zero_add: a + 0 -> a                          # a + 0 = a (not the sign of a zero: -0.0 + 0 is +0.0)
assoc_add: a + (b + c) <-> (a + b) + c        # regroup sums (rounds differently: 1e16 + (-1e16 + 1))
assoc_mul: a * (b * c) <-> (a * b) * c        # regroup products (rounds and overflows differently)
div_mul: a / b <-> a * b**-1 where is_float(b)  # a/b = a * b**-1 (two roundings; an int power -1 is not an int)
distribute: a*(b + c) <-> a*b + a*c           # distributivity, both ways (not for signed zeros, overflow)
pow_mul: a**b * a**c -> a**(b + c)            # a**b * a**c = a**(b + c) (not for a < 0)
zero_mul: a * 0 -> 0                          # a*0 = 0 (not for inf or nan)
sub_self: a - a -> 0                          # a - a = 0 (not for inf or nan)
div_self: a / a -> 1 where not_zero(a)        # a/a = 1 (not for 0, inf or nan)
log_exp: log(exp(a)) -> a                     # log(exp(a)) = a (not where exp overflows)
exp_log: exp(log(a)) -> a                     # exp(log(a)) = a (for a > 0 only)
"""


def algebra_rules(unsafe: bool = False) -> list[Rule]:
    """The rules as Rule objects, parsed afresh: the safe ones, and the unsafe ones too when ``unsafe``."""
    text = SAFE_TEXT + (UNSAFE_TEXT if unsafe else "")
    return parse_rules(text, functions=FUNCTIONS)


#: the safe rules
SAFE: list[Rule] = algebra_rules(unsafe=False)
#: the safe and the unsafe rules
UNSAFE: list[Rule] = SAFE + parse_rules(UNSAFE_TEXT, functions=FUNCTIONS)
