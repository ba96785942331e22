"""The sign of a zero: which subterms' zeros reach a divisor, and which terms are never -0.0.

A float sum with a constant operand (``c*x + 0``, ``(x + 1) - 1``) is never -0.0; its simplified
form (``c*x``, ``x``) is -0.0 where the input's zero was +0.0, and a division by it turns inf into
-inf. :func:`exprgraph.simplify.simplify.simplify` keeps such a sum never -0.0 where its zero can
reach a division (:func:`sign_sensitive`, :func:`never_minus_zero`); the graph's region rewriter
reads the same tables. A sum that may be -0.0 is simplified there only where its simplified form is
-0.0 at the same points (:func:`same_minus_zero`): ``-(x - x)`` is -0.0, its spread form ``x - x`` is not.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from ..core import Symbol, Term, const, postorder
from ..core.dtypes import is_float
from ..errors import ExprgraphError
from ..eval import evaluate
from .absval import is_sign_times_abs
from .numbers import number, split_coefficient

__all__ = [
    "SIGNLESS_OPS",
    "zero_reaches",
    "sign_sensitive",
    "may_lose_its_zero",
    "never_minus_zero",
    "same_minus_zero",
    "KeptSum",
    "placeholder",
    "exponent_value",
]

#: ops whose value is the same for a -0.0 and a +0.0 operand: a zero's sign goes no further (not floor
#: and ceil: floor(-0.0) is -0.0)
SIGNLESS_OPS = frozenset(
    "abs exp cos cosh log log2 log10 sigmoid softplus log_sigmoid erfc acos hypot logaddexp".split()
    + "lt le gt ge eq ne logical_and logical_or logical_not".split()
)
#: ops that are never -0.0 (cos and cosh are never 0 at all; exp underflows to +0.0; log(1.0) is +0.0)
_NEVER_MINUS_ZERO = frozenset("abs exp cos cosh sigmoid softplus erfc hypot log log2 log10".split())
#: ops whose operand ``i`` in the set tells the sign of a zero apart (1/-0.0 is -inf, atan2(0.0, -0.0) is pi)
_SENSITIVE_SLOTS = {"truediv": {1}, "floordiv": {1}, "mod": {1}, "fmod": {1}, "truncdiv": {1}, "atan2": {0, 1}}


def zero_reaches(node: Term, i: int) -> bool:
    """Whether operand ``i`` of ``node`` decides a value by the sign of a zero: a divisor, a power's
    base under a negative odd or symbolic exponent (``(-0.0)**-1`` is -inf), atan2's operands."""
    name = node.op.name
    if name == "pow":
        k = exponent_value(node.args[1])
        return i == 0 and (k is None or (k < 0 and _passes_sign(k)))
    return i in _SENSITIVE_SLOTS.get(name, ())


def sign_sensitive(term: Term) -> set[Term]:
    """The subterms of ``term`` whose zero's sign can reach a divisor (through sums, products, negations...)."""
    reach: set[Term] = set()
    for node in reversed(postorder((term,))):  # every user before its operands
        if node.op.name in SIGNLESS_OPS:
            continue
        live = node in reach
        for i, a in enumerate(node.args):
            if (live and (i or not _signless_base(node))) or zero_reaches(node, i):
                reach.add(a)
    return reach


def exponent_value(k: Term) -> float | None:
    """The value of a scalar exponent of constants alone (``2.0``, ``tanh(0.5)``), else None."""
    if k.shape or k.free_symbols:
        return None
    values: dict[Term, Any] = {}
    for node in (k,) if k.is_const else postorder((k,)):  # operands first
        value = _constant_value(node, values)
        if value is None:
            return None
        values[node] = value
    v = values[k]
    if isinstance(v, (int, np.integer)) and abs(int(v)) > 2**53:
        return None  # an odd integer no float holds: its parity is lost when the power converts it
    try:
        return float(v)
    except (TypeError, ValueError, OverflowError):
        return None


def _passes_sign(k: float) -> bool:
    """Whether ``u**k`` tells ``u = -0.0`` from ``u = +0.0``: for an odd integer ``k`` (``(-0.0)**3`` is -0.0,
    ``(-0.0)**-1`` is -inf) and ``k = 0.5`` (``u**0.5`` is ``sqrt(u)``, -0.0 at -0.0, in numpy and in our C);
    any other ``k`` gives the same at both zeros (C99 pow: +0.0, +inf, 1, or nan)."""
    return k == 0.5 or (math.isfinite(k) and k == int(k) and int(k) % 2 == 1)


def _signless_base(node: Term) -> bool:
    """Whether ``node`` is a power whose value is the same at a -0.0 and a +0.0 base (a constant exponent
    other than an odd integer and 0.5: ``(-0.0)**0.46`` and ``0.0**0.46`` are both 0.0)."""
    if node.op.name != "pow":
        return False
    k = exponent_value(node.args[1])
    return k is not None and not _passes_sign(k)


#: the ops of terms whose simplified forms may be -0.0 where they are not: a sum (``x + 0 -> x``), a term
#: never -0.0 (``abs(x) -> x``, ``exp(log(x)) -> x``, ``sqrt(x)**2 -> x`` for x >= 0, which may be -0.0;
#: ``log(exp(x)) -> x``), an extremum (``max(q, 0.0) -> q`` for q >= 0: q may be -0.0)
_ZERO_LOSERS = frozenset({"add", "sub", "abs", "exp", "pow", "log", "log2", "log10", "maximum", "minimum"})


def may_lose_its_zero(t: Term) -> bool:
    """Whether ``t``'s simplified form may be -0.0 where ``t`` is not: a sum, abs, exp, a log, a power, an
    extremum, ``sign(x)*abs(x)``, a product with a repeated factor (``sqrt(q)*sqrt(q) -> q``, +0.0 at q = -0.0)."""
    name = t.op.name
    if name == "mul":
        return is_sign_times_abs(t) or len(set(t.args)) < len(t.args)
    return name in _ZERO_LOSERS


def never_minus_zero(t: Term) -> bool:
    """Whether ``t`` is never -0.0: a constant other than -0.0, exp, abs, x**2 or x**0.46, a sum with such an operand.

    A subterm of constants alone (``0.0/0.5``, ``0.5*0.0``) answers for its value: ``0.0/0.5 + y`` is +0.0
    at y = -0.0, as ``0.0 + y`` is.
    """
    known: dict[Term, bool] = {}
    values: dict[Term, Any] = {}  # the scalar subterms of constants alone, and their values
    for node in postorder((t,)):  # operands first
        value = _constant_value(node, values)
        if value is None:
            known[node] = _never_minus_zero_node(node, known, values)
        else:
            values[node] = value
            known[node] = _positive_or_nonzero(float(value))
    return known[t]


def _constant_value(node: Term, values: dict[Term, Any]) -> Any:
    """The value of a scalar ``node`` whose operands are constants alone (their values in ``values``), else None."""
    if node.shape:
        return None
    if node.op.name == "const":
        return node.value
    if not node.args or any(a not in values for a in node.args):
        return None
    folded = Term(node.op, tuple(a if a.is_const else const(values[a], a.dtype) for a in node.args), node.attr)
    try:
        with np.errstate(all="ignore"):
            value = np.asarray(evaluate(folded))
    except (ExprgraphError, ArithmeticError, TypeError, ValueError):
        return None
    return value[()] if value.shape == () else None


def _never_minus_zero_node(t: Term, known: dict[Term, bool], values: dict[Term, Any]) -> bool:
    """Whether ``t`` is never -0.0, its operands' answers in ``known`` (the values of constant ones in ``values``)."""
    name = t.op.name
    if name == "const":
        return not t.shape and _positive_or_nonzero(float(t.value))
    if name in _NEVER_MINUS_ZERO:
        return True
    if name == "pow":  # x**2 and x**0.46 are +0.0 at x = -0.0, x**-2 is never 0 short of underflow to +0.0
        k = exponent_value(t.args[1])
        return k is not None and not _passes_sign(k)
    if name == "add":  # a + b is -0.0 only when both are
        return any(known[a] for a in t.args) or _zero_unit(t)
    if name == "mul":  # sign(u)*abs(u) is +0.0 at both zeros
        return is_sign_times_abs(t)
    if name == "sub":  # a - b is -0.0 only for a = -0.0, b = +0.0
        b = values.get(t.args[1])
        return known[t.args[0]] or (b is not None and _positive_or_nonzero(-float(b))) or t.args[0] is t.args[1]
    return False


def _zero_unit(t: Term) -> bool:
    """Whether the sum ``t`` is ``c*r + (-c)*r``: +0.0 (the two are exact negations), or nan; never -0.0."""
    if len(t.args) != 2:
        return False
    a, b = t.args
    if (b.op.name == "neg" and b.args[0] is a) or (a.op.name == "neg" and a.args[0] is b):
        return True  # r + -r
    (ca, ra), (cb, rb) = split_coefficient(t.args[0]), split_coefficient(t.args[1])
    return ra is rb and ca.__class__ in (int, float) and cb.__class__ in (int, float) and ca == -cb


def _positive_or_nonzero(v: float) -> bool:
    """Whether the number ``v`` is not -0.0 (+0.0, nan and every non-zero number are not)."""
    return v != 0.0 or math.copysign(1.0, v) > 0


# -- where a term is -0.0: a conjunction of signed zeros of its operands -------------------------------

#: the condition that a term is a zero of a sign: False (never), None (undecided), or the atoms
#: ``(u, negative)`` that must all hold, each "``u`` is -0.0" (negative) or "``u`` is +0.0"
_Cond = frozenset[tuple[Term, bool]] | Literal[False] | None


def same_minus_zero(before: Term, after: Term) -> bool:
    """Whether ``after`` is -0.0 at exactly the points where ``before`` is (False when undecided).

    A sum is -0.0 exactly when all its operands are (``r - r`` is +0.0 or nan, never -0.0); a
    negation or a multiple ``c*u`` (``|c| >= 1``: no underflow) is -0.0 where ``u`` is a zero of the
    sign ``c`` gives; any other term is an atom. Equal conditions over the same atoms are the same set
    of points; the values at the other points are the simplifier's to keep.
    """
    minus: dict[Term, _Cond] = {}
    plus: dict[Term, _Cond] = {}
    for node in postorder((before, after)):  # operands first
        minus[node], plus[node] = _zero_conditions(node, minus, plus)
    a, b = minus[before], minus[after]
    return a is not None and b is not None and a == b


def _zero_conditions(t: Term, minus: dict[Term, _Cond], plus: dict[Term, _Cond]) -> tuple[_Cond, _Cond]:
    """``t`` is -0.0, ``t`` is +0.0: the conditions, its operands' in ``minus`` and ``plus``."""
    name, args = t.op.name, t.args
    if not is_float(t.dtype):  # an int or a bool is no -0.0
        return False, frozenset({(t, False)})
    v = number(t) if not t.shape else None
    if v is not None:  # a constant: that zero always, or never
        z = float(v) == 0
        negative = math.copysign(1.0, float(v)) < 0
        return (frozenset() if z and negative else False), (frozenset() if z and not negative else False)
    if name == "add":  # -0.0 + -0.0 is -0.0; any other sum of zeros is +0.0, a sum that cancels too
        return _all(minus[a] for a in args), None
    if name == "sub":  # a - b = a + (-b)
        return _all((minus[args[0]], plus[args[1]])), None
    if name == "neg":
        return plus[args[0]], minus[args[0]]
    if name == "mul" and len(args) == 2:
        for c, u in ((args[0], args[1]), (args[1], args[0])):
            k = number(c) if not c.shape else None
            if k is not None and math.isfinite(float(k)) and abs(float(k)) >= 1 and u.dtype == t.dtype:
                return (minus[u], plus[u]) if float(k) > 0 else (plus[u], minus[u])  # no underflow at |c| >= 1
    if name in _NEVER_MINUS_ZERO:
        return False, frozenset({(t, False)})
    return frozenset({(t, True)}), frozenset({(t, False)})


def _all(conds: Any) -> _Cond:
    """The conjunction of ``conds``: False if one is False (or two atoms contradict), None if one is undecided."""
    atoms: set[tuple[Term, bool]] = set()
    undecided = False
    for c in conds:
        if c is False:
            return False
        if c is None:
            undecided = True
            continue
        atoms |= c
    if undecided:
        return None
    if any((u, not neg) in atoms for u, neg in atoms):  # u is -0.0 and +0.0: never
        return False
    return frozenset(atoms)


@dataclass(frozen=True)
class KeptSum:
    """A sum ``simplify`` keeps with the sign of its zero: ``inner`` (the sum, the sums kept inside it as their
    symbols), ``start`` (``inner``, or ``u`` of an ``inner = u + 0.0`` simplify wrote), ``form`` (``start``
    simplified, plus 0.0; or ``inner`` itself when kept as written), ``written`` (``form`` with those symbols
    written out), ``symbol`` (it stands for the sum)."""

    inner: Term
    start: Term
    form: Term
    written: Term
    symbol: Term


def placeholder(form: Term, like: Term) -> Term:
    """The symbol standing for a kept sum: named by a digest of its form's text, the same in every call."""
    name = "_signed_zero_" + hashlib.blake2s(str(form).encode(), digest_size=6).hexdigest()
    return Symbol(name, like.dtype, like.shape)
