"""The canonical-form rules of :func:`~exprgraph.simplify.simplify`, run by the rewrite driver.

The canonical form is a sum of products of powers with numeric coefficients:

- ``a - b`` becomes ``a + (-1)*b``, ``-a`` becomes ``(-1)*a``, ``a/b`` becomes ``a * b**-1``,
  ``(a*b)**-1`` becomes ``a**-1 * b**-1``, and (unsafe) ``(-1)*(a + b)`` becomes ``(-1)*a + (-1)*b``;
- sums and products are flat, their numeric constants folded into one (a sum's constant last,
  a product's coefficient first, -1.0 spelled -1, a lone constant of the term's dtype) and their
  other operands in a fixed order (:mod:`.order`);
- like terms are collected (``x + x -> 2*x``, ``3*x + (-1)*x -> 2*x``) and equal bases
  merged (``x*x -> x**2``, ``x**2 * x**-1 -> x``; without cancelling, ``x*x*x**-1 -> x**2 * x**-1``);
- subterms of constants are folded to one constant.

The output form (:mod:`.output`) reads back through these rules into the same canonical form, so
``simplify`` is idempotent: ``simplify(simplify(t)) is simplify(t)``.

Each rule is a :class:`~exprgraph.rules.Rule` (built by :class:`GuardedRule`): it never changes a
term's dtype (and the driver declines any change of shape). Rules tagged *unsafe* hold for finite
values only, or need a non-zero operand (``x*0 -> 0`` is nan for infinite x, ``x/x -> 1`` for
zero x); ``simplify`` uses them only with ``unsafe=True``. "Safe" rules are exact, or differ by rounding only.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..core import Term, const, get_op
from ..errors import EvaluationError
from ..eval import evaluate
from ..match import P, V
from ..rules import Rule, make_rule, parse_rules
from ..rules.rule import keeps_dtype
from .numbers import fold_value, number
from .order import sort_key
from .products import (
    abs_of_product,
    cancel_product,
    collect_product,
    merge_exp_product,
    power_of_power,
    reciprocal_of_product,
)
from .stable import STABLE_REWRITES
from .sums import cancel_sum, collect_sum, distribute_negation

__all__ = ["GuardedRule", "CANONICAL_RULES", "number"]

CONST = get_op("const")
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
    """

    __slots__ = ()

    def __init__(
        self, name: str, body: Rule | Callable[[Term], Any], *, ops: tuple = (), unsafe: bool = False, doc: str = ""
    ) -> None:
        tag = "unsafe" if unsafe else "safe"
        if isinstance(body, Rule) and body.pattern is not None:
            doc = doc or body.name
            super().__init__(body.pattern, body.rhs, name=name, where=body.where, tag=tag, guard=keeps_dtype, doc=doc)
        else:
            super().__init__(None, body, name=name, ops=ops, tag=tag, guard=keeps_dtype, doc=doc)

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
    try:
        value = evaluate(t, {})
    except (EvaluationError, ArithmeticError, ValueError, TypeError):
        return None
    try:
        return const(value, dtype=t.dtype)
    except (OverflowError, ValueError, TypeError):
        return None


# -- max/min and logic ----------------------------------------------------------------------------


def _flat_idempotent(t: Term, fold: bool) -> Term | None:
    op = t.op
    items: list[Term] = []
    for a in t.args:
        items.extend(a.args if a.op is op else (a,))
    items = list(dict.fromkeys(items))  # max(x, x) -> x: the op is idempotent
    if fold:
        consts = [a for a in items if number(a) is not None]
        if len(consts) > 1:
            c = fold_value(op, consts)
            if c is None:
                return None
            items = [a for a in items if number(a) is None] + [c]
    items.sort(key=sort_key)
    return items[0] if len(items) == 1 else op(*items)


def flatten_extremum(t: Term) -> Term | None:
    # max(max(a, b), c) -> max(a, b, c); max(x, x) -> x; max(x, 1, 2) -> max(x, 2); sorted
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
    kept = sorted(dict.fromkeys(kept), key=sort_key)
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


# -- the table ------------------------------------------------------------------------------------

# one rule a line, ``name: lhs -> rhs``, its algebra in the comment (the rule's doc)
_TEXT_SAFE = """
sub_to_add:  x - y -> x + (-1)*y             # a - b = a + (-1)*b (exact)
neg_to_mul:  -x -> (-1)*x                    # -a = (-1)*a (exact)
div_to_pow:  x / y -> x * y**(-1.0)          # a/b = a * b**-1 (to rounding; int b gives a float power)
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


def _rules() -> list[GuardedRule]:
    made = [GuardedRule("fold_constants", fold_constants, doc="f(c1, c2) -> c")]
    made += [GuardedRule(r.name, r, unsafe=True, doc=r.doc) for r in parse_rules(_TEXT_UNSAFE)]
    made += [GuardedRule(r.name, r, doc=r.doc) for r in parse_rules(_TEXT_SAFE)]
    for name, r, doc in _PATTERN_SAFE:
        made.append(GuardedRule(name, r, doc=doc))
    made += [
        GuardedRule("cancel_sum", cancel_sum, ops=("add",), unsafe=True, doc="3*x - x -> 2*x, x - x -> 0"),
        GuardedRule("collect_sum", collect_sum, ops=("add",), doc="flatten, sort, x + x -> 2*x"),
        GuardedRule("merge_exp_product", merge_exp_product, ops=("mul",), unsafe=True, doc="exp(a)*exp(b) -> exp(a+b)"),
        GuardedRule("cancel_product", cancel_product, ops=("mul",), unsafe=True, doc="(x*y)/y -> x, x*0 -> 0"),
        GuardedRule("collect_product", collect_product, ops=("mul",), doc="flatten, sort, x*x -> x**2"),
        GuardedRule(
            "distribute_negation",
            distribute_negation,
            ops=("mul",),
            unsafe=True,
            doc="-(a + b) -> (-1)*a + (-1)*b (a zero sum changes sign: -(x - x) is -0.0, -x + x is 0.0)",
        ),
        GuardedRule(
            "power_of_power",
            power_of_power,
            ops=("pow",),
            doc="(x**a)**b -> x**(a*b), integers a, b; (x**a)**-1 -> x**-a",
        ),
        GuardedRule("reciprocal_of_product", reciprocal_of_product, ops=("pow",), doc="1/(a*b) -> a**-1 * b**-1"),
        GuardedRule("abs_of_product", abs_of_product, ops=("abs",), doc="abs(-x) -> abs(x), abs(x**2) -> x**2"),
        GuardedRule(
            "flatten_extremum", flatten_extremum, ops=("maximum", "minimum"), doc="max(x, max(x, y)) -> max(x, y)"
        ),
        GuardedRule("flatten_logic", flatten_logic, ops=("logical_and", "logical_or"), doc="a and (a and True) -> a"),
        GuardedRule("transpose_of_transpose", transpose_of_transpose, ops=("transpose",), doc="x.T.T -> x"),
        GuardedRule("sum_of_scalar", sum_of_scalar, ops=("sum",), doc="sum(scalar) -> scalar"),
    ]
    # numerically stable forms (log1p, expm1, softplus, log_sigmoid, logaddexp): safe, they only gain accuracy
    made += [GuardedRule(name, fn, ops=ops, doc=doc) for name, fn, ops, doc in STABLE_REWRITES]
    return made


#: every canonical-form rule, in precedence order (unsafe variants before the safe ones they extend)
CANONICAL_RULES: list[GuardedRule] = _rules()
