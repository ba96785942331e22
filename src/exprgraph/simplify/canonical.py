"""The canonical-form rules of :func:`~exprgraph.simplify.simplify`, run by the rewrite driver.

The canonical form spells ``a - b`` as ``a + (-1)*b``, ``-a`` as ``(-1)*a`` and ``a/b`` as
``a * b**-1`` (the output form, :mod:`.output`, spells them back). With the unsafe rules, and for
integer terms, it is a sum of products of powers with numeric coefficients:

- sums and products are flat, their numeric constants folded into one (a sum's constant last,
  a product's coefficient first, -1.0 spelled -1, a lone constant of the term's dtype) and their
  other operands in a fixed order (:mod:`.order`); ``(a*b)**-1`` becomes ``a**-1 * b**-1`` and
  ``(-1)*(a + b)`` becomes ``(-1)*a + (-1)*b``;
- like terms are collected (``x + x -> 2*x``, ``3*x + (-1)*x -> 2*x``) and equal bases
  merged (``x*x -> x**2``, ``x**2 * x**-1 -> x``);
- subterms of constants are folded to one constant.

Float arithmetic is not associative, so the safe rules collect a float sum or product only where
the collected form is one rounding of the exact value (``x + x + x -> 3*x``, ``x + y - x -> y +
(x - x)``, ``x*x*x -> x**3``); any other keeps its association, each operation's two operands
sorted (``y + x -> x + y``; ``(x + y) + z`` is not ``x + (y + z)``).

The output form reads back through these rules into the same canonical form, so ``simplify`` is
idempotent: ``simplify(simplify(t)) is simplify(t)``.

Each rule is a :class:`~exprgraph.rules.Rule` (built by :class:`GuardedRule`): it never changes a
term's dtype (and the driver declines any change of shape). Rules tagged *unsafe* hold for finite
values only, or need a non-zero operand (``x*0 -> 0`` is nan for infinite x, ``x/x -> 1`` for
zero x), or may round, overflow or cancel where their input does not (reassociation); ``simplify``
uses them only with ``unsafe=True``. Safe rules compute the same IEEE operations, or replace some
by one rounding of their exact value (docs/simplify.md states the contract).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction
from typing import Any

from ..core import Term, const, get_op
from ..core.dtypes import FLOAT32, FLOAT64, is_float
from ..core.exact_fold import is_exact
from ..errors import EvaluationError
from ..eval import evaluate
from ..match import P, V
from ..rules import Rule, make_rule, parse_rules
from ..rules.rule import keeps_dtype
from .numbers import const_like, exact_first, fold_value, number, plain_value
from .order import sorted_terms
from .polynomial import collapse_to_power
from .powers import ASSUMPTION_REWRITES
from .products import (
    abs_of_product,
    cancel_product,
    collect_product,
    merge_exp_product,
    power_of_exp,
    power_of_power,
    reciprocal_of_power,
    reciprocal_of_product,
    scaled_quotient,
)
from .stable import STABLE_REWRITES
from .strategy_lifts import LIFTS
from .sums import cancel_sum, collect_sum, distribute_negation
from .trig import TRIG_REWRITES

__all__ = ["GuardedRule", "CANONICAL_RULES", "SAFE_ONLY", "SUBSUMED", "number"]

CONST = get_op("const")
MUL, POW = get_op("mul"), get_op("pow")
MAXIMUM, MINIMUM = get_op("maximum"), get_op("minimum")
AND, OR = get_op("logical_and"), get_op("logical_or")
TRANSPOSE, SUM, WHERE = get_op("transpose"), get_op("sum"), get_op("where")


class GuardedRule(Rule):
    """A simplifier rule: a :class:`~exprgraph.rules.Rule` guarded by :func:`~exprgraph.rules.rule.keeps_dtype`.

    Only a constructor (``GuardedRule(name, body, ops=..., unsafe=..., doc=...)``, the simplifier's
    table spelling): ``body`` is a textual :class:`~exprgraph.rules.Rule` (its pattern, result and
    condition are taken) or a function ``term -> term | None`` tried on terms of ``ops``.
    ``unsafe`` gives the tag ``"unsafe"`` (rules that hold for finite, or non-zero, values only).
    A result of another dtype is declined, so a rule never turns an int expression into a float one.
    ``leaves=False``: a function never tried on a term without operands (it declines there).
    """

    __slots__ = ()

    def __init__(
        self,
        name: str,
        body: Rule | Callable[[Term], Any],
        *,
        ops: tuple = (),
        unsafe: bool = False,
        doc: str = "",
        leaves: bool = True,
    ) -> None:
        tag = "unsafe" if unsafe else "safe"
        if isinstance(body, Rule) and body.pattern is not None:
            doc = doc or body.name
            super().__init__(body.pattern, body.rhs, name=name, where=body.where, tag=tag, guard=keeps_dtype, doc=doc)
        else:
            super().__init__(None, body, name=name, ops=ops, tag=tag, guard=keeps_dtype, doc=doc, leaves=leaves)

    def __repr__(self) -> str:
        tag = " (unsafe)" if self.unsafe else ""
        return f"<rule {self.name}{tag}: {self.doc}>"


# -- constants ------------------------------------------------------------------------------------


def fold_constants(t: Term) -> Term | None:
    # f(c1, c2, ...) -> c: an op of constants is evaluated once (numpy semantics, nan and inf kept)
    args = t.args
    if not args:
        return None
    for a in args:
        if a.op is not CONST:
            return None
    plain = plain_value(t)  # -1*2 -> -2 in Python, as numpy computes it
    if plain is not None:
        return const(plain, dtype=t.dtype)
    try:
        value = evaluate(t, {})
    except (EvaluationError, ArithmeticError, ValueError, TypeError):
        return None
    try:
        return const(value, dtype=t.dtype)
    except (OverflowError, ValueError, TypeError):
        return None


# -- max/min and logic ----------------------------------------------------------------------------


def _flat_idempotent(t: Term, fold: bool, ordered: bool = False) -> Term | None:
    op = t.op
    items: list[Term] = []
    for a in t.args:
        items.extend(a.args if a.op is op else (a,))
    if ordered:  # max(x, y, x) -> max(y, x): of equal values the last comes back, so the last copy stays
        items = list(dict.fromkeys(reversed(items)))[::-1]
    else:
        items = list(dict.fromkeys(items))  # max(x, x) -> x: the op is idempotent
    if fold:
        consts = [a for a in items if number(a) is not None]
        if len(consts) > 1:
            c = fold_value(op, consts)
            if c is None:
                return None
            items = [a for a in items if number(a) is None] + [c]
    if not ordered:
        items = sorted_terms(items)
    return items[0] if len(items) == 1 else op(*items)


def flatten_extremum(t: Term) -> Term | None:
    # max(max(a, b), c) -> max(a, b, c); max(x, x) -> x; max(x, 1, 2) -> max(x, 2); sorted where no
    # zero has a sign (integers): of equal operands maximum returns the second, max(-0.0, 0.0) is 0.0
    # and max(0.0, -0.0) is -0.0, so float operands keep their order (safe)
    return _flat_idempotent(t, fold=True, ordered=is_float(t.dtype))


def sort_extremum(t: Term) -> Term | None:
    # max(max(a, b), c) -> max(a, b, c), operands sorted (unsafe for floats: the sign of a zero result)
    return _flat_idempotent(t, fold=True)


def flatten_logic(t: Term) -> Term | None:
    # (a and b) and a -> a and b; a and True -> a; a and False -> False (likewise for or)
    op = t.op
    identity, absorbing = op.identity, op.absorbing
    items: list[Term] = []
    for a in t.args:
        items.extend(a.args if a.op is op else (a,))
    kept = []
    for a in items:
        if a.op is CONST and a.attr.__class__ is bool:
            if a.attr is absorbing:
                return const(absorbing)
            if a.attr is identity:
                continue
        kept.append(a)
    kept = sorted_terms(list(dict.fromkeys(kept)))
    if not kept:
        return const(identity)
    return kept[0] if len(kept) == 1 else op(*kept)


# -- tensors --------------------------------------------------------------------------------------


def transpose_of_transpose(t: Term) -> Term | None:
    # transpose(transpose(x, p), q) -> transpose(x, p[q]), and x itself for the identity
    (a,) = t.args
    if a.op is not TRANSPOSE:
        return None
    x = a.args[0]
    n = x.ndim
    p = tuple(reversed(range(n))) if a.attr is None else tuple(i % n for i in a.attr)
    q = tuple(reversed(range(n))) if t.attr is None else tuple(i % n for i in t.attr)
    composed = tuple(p[i] for i in q)
    if composed == tuple(range(n)):
        return x
    return TRANSPOSE(x, axes=composed)


def sum_of_scalar(t: Term) -> Term | None:
    # sum(x) -> x for a scalar x
    (a,) = t.args
    return a if not a.ndim and t.attr in (None, ()) else None


# -- quotients -----------------------------------------------------------------------------------


def _reciprocal_rounds(b: Term) -> bool:
    """Whether ``b`` is a scalar constant whose reciprocal is no float (1/3): ``a * (1/b)`` then rounds twice."""
    c = number(b)
    if c is None or c == 0 or not math.isfinite(c):
        return False  # a symbol's b**-1 stays a power (printed back as a division); 1/0 and 1/inf are exact
    inverse = 1 / Fraction(c)
    try:
        k = const_like(float(inverse), b)
    except OverflowError:
        return True  # 1/5e-324 overflows: a/5e-324 is finite where a * inf is not
    v = None if k is None else number(k)
    return v is None or Fraction(v) != inverse


def _as_factor(t: Term) -> Term:
    """``a/b`` as ``a * b**-1.0`` (a float32 exponent for a float32 b: no int ** -1)."""
    a, b = t.args
    if b.dtype == FLOAT64 and is_exact(b):  # pi too: pi**-1.0 would fold to a float, 1/pi reads back as pi**-1
        return MUL(a, POW(b, const(-1)))  # a/b = a * b**-1 exactly for an exact b (b**-1.0 would fold to a float)
    return MUL(a, POW(b, const_like(-1.0, b) if b.dtype == FLOAT32 else const(-1.0)))


def div_to_pow(t: Term) -> Term | None:
    # a/b -> a * b**-1: the same division spelled as a factor (the output form writes it back), but not for
    # a constant b whose reciprocal rounds: x/3 is not x * 0.3333333333333333 (two roundings)
    return None if _reciprocal_rounds(t.args[1]) else _as_factor(t)


def div_by_constant(t: Term) -> Term | None:
    # a/c -> a * (1/c) for a constant c whose reciprocal rounds (unsafe: x/3 -> 0.3333333333333333*x), but
    # not past the float range (1/5e-324 overflows: x/5e-324 is finite for x = 1e-300)
    c = number(t.args[1])
    if not _reciprocal_rounds(t.args[1]) or c is None or abs(float(c)) < 2.0**-1022:
        return None
    return _as_factor(t)


def unit_coefficient(t: Term) -> Term | None:
    # -1.0*a*b -> (-1)*a*b for float64 a, b: the same value (the product is float64 either way, and -1 becomes
    # -1.0 exactly), and the one spelling of a negation: the output writes both as -(a*b), read back as (-1)*(a*b)
    first = t.args[0]
    if first.op is not CONST or first.attr.__class__ is not float or first.attr != -1.0:
        return None
    rest = t.args[1:]
    return MUL(const(-1), *rest) if all(a.dtype == FLOAT64 for a in rest) else None


# -- the table ------------------------------------------------------------------------------------

# one rule a line, ``name: lhs -> rhs``, its algebra in the comment (the rule's doc)
_TEXT_SAFE = """
sub_to_add:  x - y -> x + (-1)*y             # a - b = a + (-1)*b (exact)
neg_to_mul:  -x -> (-1)*x                    # -a = (-1)*a (exact)
pow_one:     x**1 -> x                       # a**1 = a
pow_zero:    x**0 -> 1                       # a**0 = 1 (nan**0 and 0**0 are 1 too)
abs_abs:     abs(abs(x)) -> abs(x)           # ||a|| = |a|
abs_exp:     abs(exp(x)) -> exp(x)           # exp(a) >= 0
abs_sqrt:    abs(sqrt(x)) -> sqrt(x)         # sqrt(a) >= 0
log_sqrt:    log(sqrt(x)) -> 0.5*log(x)      # log(sqrt(a)) = log(a)/2 (nan below 0, -inf at 0 both ways)
not_not:     not (not x) -> x where is_bool(x)  # not not b = b for bools
lt_self:     x < x -> False                  # a < a is false (nan too)
gt_self:     x > x -> False                  # a > a is false (nan too)
"""

# ``where`` is a keyword of the textual rule language, so the where-rules are written as patterns
_PATTERN_SAFE = [
    ("where_same", make_rule(P.where(V.c, V.x, V.x), lambda c, x: x), "where(c, x, x) -> x"),
    ("where_true", make_rule(P.where(True, V.x, V.y), lambda x, y: x), "where(True, x, y) -> x"),
    ("where_false", make_rule(P.where(False, V.x, V.y), lambda x, y: y), "where(False, x, y) -> y"),
    (
        "where_not",
        make_rule(P.where(P.logical_not(V.c), V.x, V.y), lambda c, x, y: WHERE(c, y, x)),
        "where(not c, x, y) -> where(c, y, x)",
    ),
]

_TEXT_UNSAFE = """
log_exp:  log(exp(x)) -> x   # log(exp(a)) = a (not when exp(a) overflows, a > 709)
"""


_POWER_OF_POWER = "(x**a)**b -> x**(a*b), integers a, b, b != -1; exp(a)**2 -> exp(2*a)"
_SORTED_EXTREMUM = "max(y, max(x, y)) -> max(x, y), sorted (max(-0.0, 0.0) is 0.0, max(0.0, -0.0) is -0.0)"
_RECIPROCAL = "1/(a*b) -> a**-1 * b**-1 (a*b may overflow where 1/a * 1/b does not)"


def _rules() -> list[GuardedRule]:
    # every op with operands (a leaf has none to fold: the driver then skips the leaves)
    fold = exact_first(fold_constants)
    made = [GuardedRule("fold_constants", fold, leaves=False, doc="f(c1, c2) -> c, exact over exact")]
    made += [GuardedRule(r.name, r, unsafe=True, doc=r.doc) for r in parse_rules(_TEXT_UNSAFE)]
    made += [GuardedRule(r.name, r, doc=r.doc) for r in parse_rules(_TEXT_SAFE)]
    for name, r, doc in _PATTERN_SAFE:
        made.append(GuardedRule(name, r, doc=doc))
    made += [
        GuardedRule("div_by_constant", div_by_constant, ops=("truediv",), unsafe=True, doc="a/3 -> a * (1/3) (rounds)"),
        GuardedRule("div_to_pow", div_to_pow, ops=("truediv",), doc="a/b = a * b**-1 (b not a constant like 3)"),
        GuardedRule("cancel_sum", cancel_sum, ops=("add",), unsafe=True, doc="3*x - x -> 2*x, x - x -> 0"),
        GuardedRule("collect_sum", collect_sum, ops=("add",), doc="flatten, sort, x + x -> 2*x"),
        GuardedRule("collapse_to_power", collapse_to_power, ops=("add",), doc="(x + 2)*(x - 2) + 4 -> x**2, exactly"),
        GuardedRule("merge_exp_product", merge_exp_product, ops=("mul",), unsafe=True, doc="exp(a)*exp(b) -> exp(a+b)"),
        GuardedRule("cancel_product", cancel_product, ops=("mul",), unsafe=True, doc="(x*y)/y -> x, x*0 -> 0"),
        GuardedRule("collect_product", collect_product, ops=("mul",), doc="flatten, sort, x*x -> x**2"),
        GuardedRule("unit_coefficient", unit_coefficient, ops=("mul",), doc="-1.0*a -> (-1)*a for float64 a"),
        GuardedRule("scaled_quotient", scaled_quotient, ops=("mul",), doc="c*(s/d) -> (c/d)*s, c/d a float exactly"),
        GuardedRule(
            "distribute_negation",
            distribute_negation,
            ops=("mul",),
            unsafe=True,
            doc="-(a + b) -> (-1)*a + (-1)*b (a zero sum changes sign: -(x - x) is -0.0, -x + x is 0.0)",
        ),
        GuardedRule("power_of_exp", power_of_exp, ops=("pow",), unsafe=True, doc="exp(a)**n -> exp(n*a), any n"),
        GuardedRule("reciprocal_of_power", reciprocal_of_power, ops=("pow",), unsafe=True, doc="(x**a)**-1 -> x**-a"),
        GuardedRule("power_of_power", power_of_power, ops=("pow",), doc=_POWER_OF_POWER),
        GuardedRule("reciprocal_of_product", reciprocal_of_product, ops=("pow",), unsafe=True, doc=_RECIPROCAL),
        GuardedRule("abs_of_product", abs_of_product, ops=("abs",), doc="abs(-x) -> abs(x), abs(x**2) -> x**2"),
        GuardedRule("sort_extremum", sort_extremum, ops=("maximum", "minimum"), unsafe=True, doc=_SORTED_EXTREMUM),
        GuardedRule(
            "flatten_extremum", flatten_extremum, ops=("maximum", "minimum"), doc="max(x, max(x, y)) -> max(x, y)"
        ),
        GuardedRule("flatten_logic", flatten_logic, ops=("logical_and", "logical_or"), doc="a and (a and True) -> a"),
        GuardedRule("transpose_of_transpose", transpose_of_transpose, ops=("transpose",), doc="x.T.T -> x"),
        GuardedRule("sum_of_scalar", sum_of_scalar, ops=("sum",), doc="sum(scalar) -> scalar"),
    ]
    # numerically stable forms (log1p, expm1, softplus, log_sigmoid, logaddexp): safe, they only gain accuracy
    made += [GuardedRule(name, fn, ops=ops, doc=doc) for name, fn, ops, doc in STABLE_REWRITES]
    # trigonometric and hyperbolic identities (:mod:`.trig`): the safe ones are stable forms or exact
    made += [GuardedRule(name, fn, ops=ops, unsafe=u, doc=doc) for name, fn, ops, u, doc in TRIG_REWRITES]
    # exp/log/power/abs laws under the symbols' assumptions (:mod:`.powers`): conditions read :mod:`.signs`
    made += [GuardedRule(name, fn, ops=ops, unsafe=u, doc=doc) for name, fn, ops, u, doc in ASSUMPTION_REWRITES]
    # unsafe rules lifted where their condition is proven from the assumptions (:mod:`.strategy_lifts`)
    made += [GuardedRule(lift.name, lift, ops=lift.ops, doc=f"{lift.doc} (lifts {lift.lifts})") for lift in LIFTS]
    return made


#: every canonical-form rule, in precedence order (unsafe variants before the safe ones they extend)
CANONICAL_RULES: list[GuardedRule] = _rules()

#: safe rules the unsafe strength also leaves out because an unsafe rule tried before them at the same node makes
#: each of their rewrites first: the lifts are their unsafe rule's rewrite under a proven condition
#: (``zero_unit_finite`` after cancel_sum: c*r + (-c)*r -> 0; ``pythagoras_finite`` after trig_sum:
#: c*sin(u)**2 + c*cos(u)**2 -> c), the safe trig rules the safe directions of the relations ``trig_sum`` and
#: ``trig_product`` apply both ways (``sin(u)/cos(u) -> tan(u)``). They were tried at every sum and product of an
#: unsafe pass and never acted (the corpus of issue 30, and random terms: tests/simplify/test_unsafe_subsumed.py).
#: Not ``one_unit_finite``: cancel_product leaves ``3**-1 * (3**-1)**-1.0`` (an int power it cannot fold), the lift not
SUBSUMED = frozenset(
    {"zero_unit_finite", "pythagoras_finite", "trig_sum_safe", "trig_product_safe"}
    | {"trig_pythagoras_factor", "exp_of_scaled_log"}  # after trig_sum; after exp_of_log_sum (y**c for y > 0)
)
#: safe rules the unsafe strength leaves out: their unsafe variants (cancel_sum, cancel_product,
#: sort_extremum) flatten and sort every sum, product, max and min, where these keep a float node's
#: association or order (the two would undo each other); and the SUBSUMED ones
SAFE_ONLY = frozenset({"collect_sum", "collect_product", "flatten_extremum"}) | SUBSUMED
