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

Each rule is a :class:`GuardedRule`: it never changes a term's dtype (and the driver declines
any change of shape). Rules tagged *unsafe* hold for finite values only, or need a non-zero
operand (``x*0 -> 0`` is nan for infinite x, ``x/x -> 1`` for zero x); ``simplify(...,
unsafe=False)`` leaves them out. "Safe" rules are exact, or differ by rounding only.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..core import Term, as_term, const, get_op
from ..core.dtypes import FLOAT64
from ..errors import EvaluationError
from ..eval import evaluate
from ..match import P, V
from ..rules import Rule, make_rule, rule
from .order import sort_key

__all__ = ["GuardedRule", "CANONICAL_RULES", "number"]

CONST = get_op("const")
ADD, MUL, POW = get_op("add"), get_op("mul"), get_op("pow")
EXP = get_op("exp")
MAXIMUM, MINIMUM = get_op("maximum"), get_op("minimum")
AND, OR = get_op("logical_and"), get_op("logical_or")
TRANSPOSE, SUM, WHERE = get_op("transpose"), get_op("sum"), get_op("where")

#: exponents up to this size are turned into ints (beyond, floats are not exact integers)
_EXACT = 2**53


class GuardedRule:
    """A named rule (a handler ``term -> term | None`` or a textual :class:`~exprgraph.rules.Rule`).

    ``unsafe`` tags rules that hold for finite (or non-zero) values only. A result of another
    dtype is declined, so a rule never turns an int expression into a float one.
    """

    __slots__ = ("name", "root_ops", "unsafe", "doc", "_apply")

    def __init__(
        self, name: str, body: Rule | Callable[[Term], Any], *, ops: tuple = (), unsafe: bool = False, doc: str = ""
    ) -> None:
        self.name = name
        self.unsafe = unsafe
        self.doc = doc
        if isinstance(body, Rule):
            self.root_ops = (body.root_op,) if body.root_op is not None else ()
            self._apply = body.apply
            self.doc = doc or body.name
        else:
            self.root_ops = tuple(get_op(o) for o in ops)
            self._apply = body

    def apply(self, term: Term) -> Term | None:
        """The rewritten term, or None when the rule does not apply (or would change the dtype)."""
        out = self._apply(term)
        if out is None or out is term:
            return None
        if out.__class__ is not Term:
            out = as_term(out)
        if out.dtype != term.dtype:
            return None
        return out

    def __call__(self, term: Term) -> Term:
        out = self.apply(term)
        return term if out is None else out

    def __repr__(self) -> str:
        tag = " (unsafe)" if self.unsafe else ""
        return f"<rule {self.name}{tag}: {self.doc}>"


def number(t: Term) -> int | float | None:
    """The value of a scalar int or float constant (None for anything else, bools included)."""
    if t.op is CONST and t.attr.__class__ in (int, float):
        return t.attr
    return None


def _integral(v: Any) -> bool:
    return v.__class__ is int or (v.__class__ is float and v.is_integer() and abs(v) < _EXACT)


def _fold_value(op: Any, consts: list[Term]) -> Term | None:
    """One constant for ``op(*consts)`` (numpy semantics), or None if evaluation fails."""
    if len(consts) == 1:
        return consts[0]
    try:
        value = evaluate(op(*consts), {})
    except (EvaluationError, ArithmeticError, ValueError, TypeError):
        return None
    return const(value)


def _same_dtype(result: Term, t: Term) -> Term:
    """``result``, a lone scalar constant cast to ``t``'s dtype (``x + 2 - x`` is 2.0 for a float x)."""
    v = number(result)
    if v is None or result.dtype == t.dtype:
        return result
    try:
        return const(v, dtype=t.dtype)
    except (OverflowError, ValueError, TypeError):
        return result


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


# -- sums -----------------------------------------------------------------------------------------


def _split_coefficient(t: Term) -> tuple[Any, Term]:
    """``c*rest`` as ``(c, rest)`` (a canonical product has its coefficient first); else ``(1, t)``."""
    if t.op is MUL:
        c = number(t.args[0])
        if c is not None:
            rest = t.args[1:]
            return c, rest[0] if len(rest) == 1 else MUL(*rest)
    return 1, t


def _scaled(c: Any, rest: Term) -> Term | None:
    """``c*rest`` in canonical form (``rest`` itself for c == 1)."""
    if c == 1 and c.__class__ is int:
        return rest
    try:
        k = const(c)
    except (OverflowError, ValueError):
        return None
    if rest.op is MUL:
        return MUL(k, *rest.args)
    return MUL(k, rest)


def _merge_group(members: list[tuple[Any, Term]], cancel: bool) -> list[Term] | None:
    """Like terms ``c_i * rest`` summed: ``(sum c_i) * rest`` (same signs; any signs when ``cancel``)."""
    if len(members) == 1:
        return [members[0][1]]
    coefs = [c for c, _ in members]
    rest = _split_coefficient(members[0][1])[1]
    if cancel and all(c == c for c in coefs):
        groups = [members]
    else:
        # x + x -> 2*x is exact for inf too; 3*x - x -> 2*x is not (inf - inf is nan): keep signs apart
        pos = [m for m in members if m[0] > 0]
        neg = [m for m in members if m[0] < 0]
        other = [m for m in members if not (m[0] > 0 or m[0] < 0)]
        groups = [g for g in (pos, neg) if g] + [[m] for m in other]
    out = []
    for g in groups:
        if len(g) == 1:
            out.append(g[0][1])
            continue
        total = sum(c for c, _ in g)
        if total == 0:
            continue  # x + (-1)*x -> 0: only with cancel
        scaled = _scaled(total, rest)
        if scaled is None:
            return None
        out.append(scaled)
    return out


def _canonical_sum(t: Term, cancel: bool) -> Term | None:
    items: list[Term] = []
    for a in t.args:
        items.extend(a.args if a.op is ADD else (a,))
    consts = [a for a in items if number(a) is not None]
    groups: dict[Term, list[tuple[Any, Term]]] = {}
    for a in items:
        if number(a) is None:
            c, rest = _split_coefficient(a)
            groups.setdefault(rest, []).append((c, a))
    terms: list[Term] = []
    for members in groups.values():
        merged = _merge_group(members, cancel)
        if merged is None:
            return None
        terms.extend(merged)
    terms.sort(key=sort_key)
    c = _fold_value(ADD, consts) if consts else None
    if consts and c is None:
        return None
    parts = [*terms, c] if c is not None and not (number(c) == 0 and terms) else terms  # x + 0 -> x
    if not parts:
        return const(0, dtype=t.dtype)
    out = parts[0] if len(parts) == 1 else ADD(*parts)
    if out.dtype != t.dtype and c is not None:
        # x + 2 - x -> 2.0 for a float x; i + 0.0 keeps its 0.0 (without it, the sum would be an int)
        out = ADD(*terms, c) if terms else _same_dtype(c, t)
    return out


def collect_sum(t: Term) -> Term | None:
    # flatten, fold constants, sort; x + x -> 2*x, 2*x + 3*x -> 5*x (coefficients of one sign)
    return _canonical_sum(t, cancel=False)


def cancel_sum(t: Term) -> Term | None:
    # also 3*x - x -> 2*x and x - x -> 0 (not for infinite x: inf - inf is nan)
    return _canonical_sum(t, cancel=True)


# -- products -------------------------------------------------------------------------------------


def _power(base: Term, e: Any) -> Term:
    """``base**e`` in canonical form (``base`` for e == 1; ints for integral exponents of floats)."""
    if e == 1:
        return base
    if _integral(e) and (base.dtype == FLOAT64 or e > 0):
        return POW(base, const(int(e)))
    return POW(base, const(float(e)))


def _canonical_product(t: Term, cancel: bool) -> Term | None:
    items: list[Term] = []
    for a in t.args:
        items.extend(a.args if a.op is MUL else (a,))
    consts = [a for a in items if number(a) is not None]
    groups: dict[Term, list[tuple[Any, Term]]] = {}
    for a in items:
        if number(a) is not None:
            continue
        e = number(a.args[1]) if a.op is POW else None
        base, e = (a.args[0], e) if e is not None else (a, 1)
        groups.setdefault(base, []).append((e, a))
    factors: list[Term] = []
    for base, members in groups.items():
        if len(members) == 1:
            factors.append(members[0][1])
            continue
        exps = [e for e, _ in members]
        integral = all(_integral(e) for e in exps)
        same_sign = all(e > 0 for e in exps) or all(e < 0 for e in exps)
        if (integral and same_sign) or (cancel and all(e == e for e in exps)):
            # x*x -> x**2, x**2 * x**-2 -> 1 (cancel: not for x = 0 or inf)
            total = sum(exps)
            if total != 0:
                factors.append(_power(base, total))
        else:
            # x*x * x**-1 -> x**2 * x**-1: integer powers merge within each sign (x/x stays, it is nan at 0)
            for sign in (1, -1):
                part = [(e, a) for e, a in members if _integral(e) and e * sign > 0]
                if part:
                    factors.append(part[0][1] if len(part) == 1 else _power(base, sum(e for e, _ in part)))
            factors.extend(a for e, a in members if not (_integral(e) and e != 0))
    factors.sort(key=sort_key)
    c = _fold_value(MUL, consts) if consts else None
    if consts and c is None:
        return None
    parts = factors
    if c is not None:
        v = number(c)
        if v == 0 and cancel and factors:
            return const(0, dtype=t.dtype)  # x*0 -> 0 (not for infinite or nan x)
        if not (v == 1 and factors):  # x*1 -> x
            parts = [const(-1) if v == -1 else c, *factors]  # -1.0*x -> -1*x: one spelling of the sign
    if not parts:
        return const(1, dtype=t.dtype)
    out = parts[0] if len(parts) == 1 else MUL(*parts)
    if out.dtype != t.dtype and c is not None:
        # x*2/x -> 2.0 for a float x; i*1.0 and -1.0*i keep their float constant (else an int product)
        out = MUL(c, *factors) if factors else _same_dtype(c, t)
    return out


def collect_product(t: Term) -> Term | None:
    # flatten, fold the coefficient, sort; x*x -> x**2, x**2*x**3 -> x**5 (integer powers of one sign)
    return _canonical_product(t, cancel=False)


def cancel_product(t: Term) -> Term | None:
    # also x*x**-1 -> 1, (x*y)/y -> x and x*0 -> 0 (not for x or y zero, infinite or nan)
    return _canonical_product(t, cancel=True)


def distribute_negation(t: Term) -> Term | None:
    # (-1)*(a + b) -> (-1)*a + (-1)*b (no rounding, but an exactly cancelling sum turns -0.0 into 0.0)
    args = t.args
    if len(args) != 2 or args[1].op is not ADD or number(args[0]) != -1:
        return None
    return ADD(*(MUL(args[0], a) for a in args[1].args))


def merge_exp_product(t: Term) -> Term | None:
    # exp(a)*exp(b) -> exp(a + b) (not when one overflows and the other underflows)
    exps = [a for a in t.args if a.op is EXP]
    if len(exps) < 2:
        return None
    rest = [a for a in t.args if a.op is not EXP]
    merged = EXP(ADD(*(e.args[0] for e in exps)))
    return merged if not rest else MUL(*rest, merged)


# -- powers ---------------------------------------------------------------------------------------


def power_of_power(t: Term) -> Term | None:
    # (x**a)**b -> x**(a*b) for integers a, b; exp(a)**n -> exp(n*a); x**2.0 -> x**2 for float x
    base, ex = t.args
    e = number(ex)
    if e is None:
        return None
    if base.op is POW:
        e2 = number(base.args[1])
        if e2 is not None and _integral(e) and _integral(e2):
            return _power(base.args[0], e * e2)
    if base.op is POW and e == -1 and t.dtype == FLOAT64:
        e2 = number(base.args[1])
        if e2 is not None:  # (x**a)**-1 -> x**-a for any a (to rounding; the output form writes x**-a as 1/x**a)
            return _power(base.args[0], -e2)
    if base.op is EXP and _integral(e):
        return EXP(MUL(const(int(e)), base.args[0]))
    if e.__class__ is float and _integral(e) and base.dtype == FLOAT64:
        return POW(base, const(int(e)))
    return None


def reciprocal_of_product(t: Term) -> Term | None:
    # (a*b)**-1 -> a**-1 * b**-1 (to rounding): a quotient's denominators are factors like any other
    base, ex = t.args
    if base.op is not MUL or number(ex) != -1 or t.dtype != FLOAT64:
        return None
    factors = []
    for a in base.args:
        if number(a) is not None:
            a = const(float(a.attr))  # an int constant to the power -1 would not fold
        factors.append(POW(a, ex if a.dtype == FLOAT64 else const(-1.0)))  # i**-1 is not defined for ints
    return MUL(*factors)


def abs_of_product(t: Term) -> Term | None:
    # abs((-c)*x) -> abs(c*x), abs(x**(2k)) -> x**(2k)
    (a,) = t.args
    if a.op is MUL:
        c = number(a.args[0])
        if c is not None and c < 0:
            scaled = _scaled(-c, a.args[1] if len(a.args) == 2 else MUL(*a.args[1:]))
            return None if scaled is None else get_op("abs")(scaled)
    if a.op is POW:
        e = number(a.args[1])
        if e is not None and _integral(e) and int(e) % 2 == 0 and a.dtype == FLOAT64:
            return a
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
            c = _fold_value(op, consts)
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

_TEXT_SAFE = [
    ("sub_to_add", "x - y -> x + (-1)*y", "a - b = a + (-1)*b (exact)"),
    ("neg_to_mul", "-x -> (-1)*x", "-a = (-1)*a (exact)"),
    ("div_to_pow", "x / y -> x * y**(-1.0)", "a/b = a * b**-1 (to rounding; int b gives a float power)"),
    ("pow_one", "x**1 -> x", "a**1 = a"),
    ("pow_zero", "x**0 -> 1", "a**0 = 1 (nan**0 and 0**0 are 1 too)"),
    ("abs_abs", "abs(abs(x)) -> abs(x)", "||a|| = |a|"),
    ("abs_exp", "abs(exp(x)) -> exp(x)", "exp(a) >= 0"),
    ("abs_sqrt", "abs(sqrt(x)) -> sqrt(x)", "sqrt(a) >= 0"),
    ("log_sqrt", "log(sqrt(x)) -> 0.5*log(x)", "log(sqrt(a)) = log(a)/2 (nan below 0, -inf at 0 both ways)"),
    ("not_not", "not (not x) -> x where is_bool(x)", "not not b = b for bools"),
    ("lt_self", "x < x -> False", "a < a is false (nan too)"),
    ("gt_self", "x > x -> False", "a > a is false (nan too)"),
]

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

_TEXT_UNSAFE = [
    ("log_exp", "log(exp(x)) -> x", "log(exp(a)) = a (not when exp(a) overflows, a > 709)"),
]


def _rules() -> list[GuardedRule]:
    made = [GuardedRule("fold_constants", fold_constants, doc="f(c1, c2) -> c")]
    for name, text, doc in _TEXT_UNSAFE:
        made.append(GuardedRule(name, rule(text, name=name), unsafe=True, doc=doc))
    for name, text, doc in _TEXT_SAFE:
        made.append(GuardedRule(name, rule(text, name=name), doc=doc))
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
    return made


#: every canonical-form rule, in precedence order (unsafe variants before the safe ones they extend)
CANONICAL_RULES: list[GuardedRule] = _rules()
