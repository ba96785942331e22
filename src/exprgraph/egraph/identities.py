"""Trigonometric, hyperbolic, abs and min/max identities as e-graph rules: what ``simplify`` saturates with.

The rule engine's ``trig`` family (:mod:`exprgraph.simplify.trig`) reads a canonical form with
functions of its own; the e-graph needs patterns. These are the same identities, written once as
rule text over the input's spelling (the e-graph also holds the canonical form, and its algebra
rules give the other arrangements: ``a + b -> b + a``, ``a - b <-> a + -b``). The strengths are
those of the rule engine's table (docs/simplify.md): a safe rule gives the input's value at every
input, nan and the infinities included, no less accurately; an unsafe one holds for finite values
only (``sin(u)**2 + cos(u)**2`` is nan at ``u = inf``, not 1; ``2*u`` overflows where ``u`` does
not; ``inf - inf`` is nan where the identity is a number).
"""

from __future__ import annotations

from ..rules import Rule, parse_rules
from ..simplify.strategy_lifts import CONDITION_FUNCTIONS
from .algebra import SAFE_TEXT, UNSAFE_TEXT
from .conditions import FUNCTIONS

__all__ = ["TRIG_SAFE_TEXT", "TRIG_UNSAFE_TEXT", "LIFTED_TEXT", "MIRRORED", "identity_rules"]

TRIG_SAFE_TEXT = """
sin_odd:      sin(-a) -> -sin(a)                    # sin(-u) = -sin(u) (bit for bit)
tan_odd:      tan(-a) -> -tan(a)                    # tan(-u) = -tan(u)
sinh_odd:     sinh(-a) -> -sinh(a)                  # sinh(-u) = -sinh(u)
tanh_odd:     tanh(-a) -> -tanh(a)                  # tanh(-u) = -tanh(u)
cos_even:     cos(-a) -> cos(a)                     # cos(-u) = cos(u)
cosh_even:    cosh(-a) -> cosh(a)                   # cosh(-u) = cosh(u)
one_minus_sin2: 1 - sin(a)**2 -> cos(a)**2          # 1 - sin(u)**2 = cos(u)**2 (stable near pi/2)
one_minus_cos2: 1 - cos(a)**2 -> sin(a)**2          # 1 - cos(u)**2 = sin(u)**2 (stable near 0)
sin_conj:     (1 - sin(a))*(1 + sin(a)) -> cos(a)**2  # (1 - sin u)(1 + sin u) = cos(u)**2
one_plus_tan2: 1 + tan(a)**2 -> 1/cos(a)**2         # 1 + tan(u)**2 = sec(u)**2
one_minus_tanh2: 1 - tanh(a)**2 -> 1/cosh(a)**2     # 1 - tanh(u)**2 = sech(u)**2 (stable above 19)
cosh2_minus_one: cosh(a)**2 - 1 -> sinh(a)**2       # cosh(u)**2 - 1 = sinh(u)**2
tan_quotient: sin(a)/cos(a) -> tan(a)               # sin/cos = tan (one rounding: cos of a float is never 0)
tan_times_cos: tan(a)*cos(a) -> sin(a)              # tan(u)*cos(u) = sin(u)
tanh_times_cosh: tanh(a)*cosh(a) -> sinh(a)         # tanh(u)*cosh(u) = sinh(u)
sinh_double:  (2*sinh(a))*cosh(a) -> sinh(2*a)      # 2 sinh(u) cosh(u) = sinh(2u) (both overflow from 355)
cosh_double:  cosh(a)**2 + sinh(a)**2 -> cosh(2*a)  # cosh(u)**2 + sinh(u)**2 = cosh(2u)
cosh_exp:     (exp(a) + exp(-a))/2 -> cosh(a)       # (e^u + e^-u)/2 = cosh(u) (stable: exp overflows first)
sinh_exp:     (exp(a) - exp(-a))/2 -> sinh(a)       # (e^u - e^-u)/2 = sinh(u) (stable near 0)
abs_product:  abs(a)*abs(b) -> abs(a*b) where is_float(a)  # |a|*|b| = |a*b| (floats: rounding is symmetric)
max_shift:    maximum(a + c, a) -> a + c where is_float(a) and is_const(c) and c > 0  # a + c >= a, c > 0
min_shift:    minimum(a + c, a) -> a where is_float(a) and is_const(c) and c > 0      # (not for ints: a + c wraps)
max_shift_r:  maximum(a, a + c) -> a + c where is_float(a) and is_const(c) and c > 0  # the same, swapped
min_shift_r:  minimum(a, a + c) -> a where is_float(a) and is_const(c) and c > 0      # the same, swapped
"""

TRIG_UNSAFE_TEXT = """
pythagoras:   sin(a)**2 + cos(a)**2 -> 1            # sin**2 + cos**2 = 1 (nan at u = inf)
pythagoras_h: cosh(a)**2 - sinh(a)**2 -> 1          # cosh**2 - sinh**2 = 1 (inf - inf from u = 355)
sec_tan:      1/cos(a)**2 - tan(a)**2 -> 1          # sec**2 - tan**2 = 1 (nan at u = inf)
sin_double:   (2*sin(a))*cos(a) -> sin(2*a)         # 2 sin u cos u = sin 2u (2u overflows)
cos_double:   cos(a)**2 - sin(a)**2 -> cos(2*a)     # cos**2 - sin**2 = cos 2u
cos_double_c: 2*cos(a)**2 - 1 -> cos(2*a)           # 2cos**2 - 1 = cos 2u
cos_double_s: 1 - 2*sin(a)**2 -> cos(2*a)           # 1 - 2sin**2 = cos 2u
half_sin:     (1 - cos(2*a))/2 -> sin(a)**2         # (1 - cos 2u)/2 = sin(u)**2
half_cos:     (1 + cos(2*a))/2 -> cos(a)**2         # (1 + cos 2u)/2 = cos(u)**2
sin_sum:      sin(a)*cos(b) + cos(a)*sin(b) -> sin(a + b)  # sin(a + b) (a + b rounds)
sin_diff:     sin(a)*cos(b) - cos(a)*sin(b) -> sin(a - b)  # sin(a - b)
cos_sum:      cos(a)*cos(b) - sin(a)*sin(b) -> cos(a + b)  # cos(a + b)
cos_diff:     cos(a)*cos(b) + sin(a)*sin(b) -> cos(a - b)  # cos(a - b)
tanh_quotient: sinh(a)/cosh(a) -> tanh(a)           # sinh/cosh = tanh (inf/inf at u = 800)
cosh_plus_sinh: cosh(a) + sinh(a) -> exp(a)         # cosh + sinh = e^u (inf - inf at u = -inf)
cosh_minus_sinh: cosh(a) - sinh(a) -> exp(-a)       # cosh - sinh = e^-u
cos_from_tan: sin(a)/tan(a) -> cos(a)               # sin/tan = cos (0/0 at u = 0)
sign_abs:     sign(a)*abs(a) -> a                   # sign(a)|a| = a (+0.0 at a = -0.0)
min_of_max:   minimum(a, maximum(a, b)) -> a        # absorption (nan at b = nan)
max_of_min:   maximum(a, minimum(a, b)) -> a        # absorption (nan at b = nan)
"""


#: the safe identities the canonical pass applies itself (the relations and products of
#: :mod:`exprgraph.simplify.trig`, on whole sums and products in either order); the safe algebra only
#: commutes and respells, so at the safe strength a saturation is worth running for the others
MIRRORED = frozenset(
    "sin_odd tan_odd sinh_odd tanh_odd cos_even cosh_even one_minus_sin2 one_minus_cos2 sin_conj one_plus_tan2"
    " one_minus_tanh2 cosh2_minus_one tan_quotient tan_times_cos tanh_times_cosh sinh_double cosh_double"
    " cosh_exp sinh_exp".split()
)

# unsafe rules of the tables above lifted into the safe strength where their condition is proven
# (:mod:`exprgraph.simplify.strategy_lifts` decides, from the symbols' assumptions); a condition sees
# a class through its representative, so it is proven for a class holding a symbol or a constant
LIFTED_TEXT = """
sub_self_finite:   a - a -> 0 where finite(a)                       # lifts sub_self: a - a = 0 for finite a
div_self_finite:   a / a -> 1 where finite_nonzero(a)               # lifts div_self: a/a = 1 for finite a != 0
pythagoras_finite: sin(a)**2 + cos(a)**2 -> 1 where finite(a)       # lifts pythagoras: nan only at u = +-inf
exp_log_nonneg:    exp(log(a)) -> a where nonnegative(a)            # lifts exp_log: nan only for a < 0 (or nan)
"""


def identity_rules(unsafe: bool = False, lifted: bool = False) -> list[Rule]:
    """The e-graph algebra (:mod:`.algebra`) and the identities above, the unsafe ones with ``unsafe``;
    with ``lifted`` (and not ``unsafe``, which has them unconditionally) the lifted ones of LIFTED_TEXT."""
    text = SAFE_TEXT + TRIG_SAFE_TEXT + ((UNSAFE_TEXT + TRIG_UNSAFE_TEXT) if unsafe else "")
    if lifted and not unsafe:
        text += LIFTED_TEXT
    return parse_rules(text, functions={**FUNCTIONS, **CONDITION_FUNCTIONS})
