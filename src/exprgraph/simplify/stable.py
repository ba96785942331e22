"""Numerically stable rewrites (PyTensor's stabilize pass): naive spellings into the stable ops.

Each rule replaces a formula that overflows or cancels at extreme inputs by the op of the table
that computes the same value without doing so (``log1p``, ``expm1``, ``softplus``,
``log_sigmoid``, ``logaddexp``, ``logsumexp``). They only ever gain accuracy: where the naive form is exact,
the stable one is too (up to the sign of a zero: ``log(1 + -0.0)`` is 0.0, ``log1p(-0.0)`` is
-0.0, as the safe rules of :mod:`.canonical` allow). So :func:`~exprgraph.simplify.simplify`
applies them by default, with or without the unsafe rules.

The rules read the canonical form: a sum's constant is its last operand (``1 + x`` is
``x + 1``), a difference is a sum with a negated term (``exp(x) - 1`` is ``exp(x) + -1``), a
negation a product with -1 and a quotient a product with a power -1 (float32 terms alike, their
numbers float32). Each declines when the stable op would change the dtype (``log(x32 + 1.0)``
with a float64 1.0 stays).
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction

from ..core import Term, get_op
from ..core.dtypes import is_float
from .numbers import number
from .order import sort_key

__all__ = ["STABLE_REWRITES"]

ADD, MUL, POW = get_op("add"), get_op("mul"), get_op("pow")
EXP, LOG, SIGMOID = get_op("exp"), get_op("log"), get_op("sigmoid")
LOG1P, EXPM1, SOFTPLUS = get_op("log1p"), get_op("expm1"), get_op("softplus")
LOG_SIGMOID, LOGADDEXP = get_op("log_sigmoid"), get_op("logaddexp")
SUM, LOGSUMEXP = get_op("sum"), get_op("logsumexp")


def _without(args: tuple[Term, ...], k: int) -> Term:
    """The sum of ``args`` without operand ``k`` (one term, or a sum)."""
    rest = args[:k] + args[k + 1 :]
    return rest[0] if len(rest) == 1 else ADD(*rest)


def _negate(u: Term) -> Term:
    """``-u`` in canonical form: ``(-1)*u``, or the coefficient negated (``-(-1*x) -> x``).

    The numbers are Python numbers, weak next to a float32 ``u`` (float32 constants there).
    """
    if u.op is MUL:
        c = number(u.args[0])
        if c is not None and c != -(2**63):
            rest = u.args[1:]
            if c == -1:
                return rest[0] if len(rest) == 1 else MUL(*rest)
            return MUL(-c, *rest)
    return MUL(-1, u)


def _coefficient_exp(t: Term) -> tuple[int | float | Fraction, Term] | None:
    """``(c, u)`` for ``exp(u)`` (c = 1) or ``c*exp(u)`` with a number c, else None."""
    if t.op is EXP:
        return 1, t.args[0]
    if t.op is MUL and len(t.args) == 2 and t.args[1].op is EXP:
        c = number(t.args[0])
        if c is not None:
            return c, t.args[1].args[0]
    return None


def log_of_one_plus(t: Term) -> Term | None:
    # log(1 + x) -> log1p(x): log of 1 + x rounds x away below 1e-16; log1p keeps it
    # log(1 + exp(x)) -> softplus(x): exp overflows above 709; softplus(x) = max(x, 0) + log1p(exp(-|x|))
    (s,) = t.args
    if s.op is not ADD:
        return None
    for k, a in enumerate(s.args):
        if number(a) == 1:
            rest = _without(s.args, k)
            if not is_float(rest.dtype):
                return None  # log(i + 1) of an int i wraps at 2**63 - 1; log1p would not
            return SOFTPLUS(rest.args[0]) if rest.op is EXP else LOG1P(rest)
    return None


def log1p_of_exp(t: Term) -> Term | None:
    # log1p(exp(x)) -> softplus(x): the same value without the overflow of exp
    (a,) = t.args
    return SOFTPLUS(a.args[0]) if a.op is EXP else None


def log1p_of_negated_sigmoid(t: Term) -> Term | None:
    # log(1 - sigmoid(x)) = log1p(-sigmoid(x)) -> log_sigmoid(-x), as 1 - sigmoid(x) = sigmoid(-x)
    (a,) = t.args
    if a.op is MUL and len(a.args) == 2 and number(a.args[0]) == -1 and a.args[1].op is SIGMOID:
        return LOG_SIGMOID(_negate(a.args[1].args[0]))
    return None


def log_of_sigmoid(t: Term) -> Term | None:
    # log(sigmoid(x)) -> log_sigmoid(x): sigmoid underflows to 0 below -745 and log(0) is -inf
    (a,) = t.args
    return LOG_SIGMOID(a.args[0]) if a.op is SIGMOID else None


def log_of_exp_sum(t: Term) -> Term | None:
    # log(exp(a) + exp(b)) -> logaddexp(a, b): exp overflows above 709 (and underflows below -745);
    # more exps fold left: log(exp(a) + exp(b) + exp(c)) -> logaddexp(logaddexp(a, b), c)
    (s,) = t.args
    if s.op is not ADD or any(a.op is not EXP for a in s.args):
        return None
    out = s.args[0].args[0]
    for a in s.args[1:]:
        out = LOGADDEXP(out, a.args[0])
    return out


def log_of_sum_of_exp(t: Term) -> Term | None:
    # log(sum(exp(x), axis)) -> logsumexp(x, axis): one entry above 709 overflows the sum to inf
    (s,) = t.args
    if s.op is not SUM or s.args[0].op is not EXP:
        return None
    x = s.args[0].args[0]  # same dtype either way: float32 stays float32, an int's exp is a float64
    return LOGSUMEXP(x, axis=s.attr) if s.attr is not None else LOGSUMEXP(x)


def order_logaddexp(t: Term) -> Term | None:
    # logaddexp(b, a) -> logaddexp(a, b) in the canonical order: numpy's formula gives the same bits both ways
    a, b = t.args
    return LOGADDEXP(b, a) if sort_key(b) < sort_key(a) else None


def exp_minus_one(t: Term) -> Term | None:
    # exp(x) - 1 -> expm1(x), and c*exp(x) - c -> c*expm1(x): the difference cancels near x = 0
    args = t.args
    for k, a in enumerate(args):
        found = _coefficient_exp(a)
        if found is None:
            continue
        c, u = found
        for j, b in enumerate(args):
            if j != k and number(b) == -c and c != 0:
                term = EXPM1(u) if c == 1 else MUL(a.args[0], EXPM1(u))
                rest = [x for i, x in enumerate(args) if i not in (j, k)]
                return ADD(*rest, term) if rest else term
    return None


def reciprocal_of_one_plus_exp(t: Term) -> Term | None:
    # 1/(1 + exp(-x)) -> sigmoid(x): exp(-x) overflows for x below -709, where sigmoid(x) is exp(x)
    base, e = t.args
    if number(e) != -1 or base.op is not ADD or len(base.args) != 2:
        return None
    a, one = base.args
    if number(one) != 1 or a.op is not EXP:
        return None
    return SIGMOID(_negate(a.args[0]))


def negated_softplus(t: Term) -> Term | None:
    # -softplus(-x) -> log_sigmoid(x): log(sigmoid(x)) = -log(1 + exp(-x))
    if len(t.args) != 2 or number(t.args[0]) != -1 or t.args[1].op is not SOFTPLUS:
        return None
    return LOG_SIGMOID(_negate(t.args[1].args[0]))


#: ``(name, handler, root ops, algebra)`` of each stable rewrite: safe (each only gains accuracy), so
#: :func:`~exprgraph.simplify.simplify` applies them by default (:mod:`.canonical` makes them rules)
STABLE_REWRITES: list[tuple[str, Callable[[Term], Term | None], tuple[str, ...], str]] = [
    ("log_one_plus", log_of_one_plus, ("log",), "log(1 + x) -> log1p(x); log(1 + exp(x)) -> softplus(x)"),
    ("log1p_exp", log1p_of_exp, ("log1p",), "log1p(exp(x)) -> softplus(x)"),
    ("log_sigmoid", log_of_sigmoid, ("log",), "log(sigmoid(x)) -> log_sigmoid(x)"),
    ("log_one_minus_sigmoid", log1p_of_negated_sigmoid, ("log1p",), "log(1 - sigmoid(x)) -> log_sigmoid(-x)"),
    ("log_exp_sum", log_of_exp_sum, ("log",), "log(exp(a) + exp(b)) -> logaddexp(a, b) (more exps: nested)"),
    ("log_sum_exp", log_of_sum_of_exp, ("log",), "log(sum(exp(x), axis)) -> logsumexp(x, axis)"),
    ("order_logaddexp", order_logaddexp, ("logaddexp",), "logaddexp(b, a) -> logaddexp(a, b) (sorted operands)"),
    ("exp_minus_one", exp_minus_one, ("add",), "exp(x) - 1 -> expm1(x); c*exp(x) - c -> c*expm1(x)"),
    ("reciprocal_one_plus_exp", reciprocal_of_one_plus_exp, ("pow",), "1/(1 + exp(-x)) -> sigmoid(x)"),
    ("negated_softplus", negated_softplus, ("mul",), "-softplus(-x) -> log_sigmoid(x)"),
]
