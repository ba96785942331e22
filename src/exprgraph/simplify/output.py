"""The output form: the canonical sums of products turned back into subtraction and division.

The canonical form writes ``a - b`` as ``a + (-1)*b`` and ``a/b`` as ``a * b**-1``, which is
uniform for rules but larger and harder to read. These rules undo that at the end (exactly, but for
the grouped subtraction, tagged unsafe: see ``OUTPUT_RULES``):

- ``a + (-1)*b + (-2)*c + (-3)`` -> ``a - (b + 2*c + 3)``; with no positive term, a negation
  (without the unsafe rules: ``a - b - 2*c - 3``, which the canonical form reads back exactly);
- ``(-1)*a`` -> ``-a``;
- ``a * b**-1`` -> ``a/b`` (one denominator; unsafe: ``a * b**-1 * c**-2`` -> ``a / (b * c**2)``);
  a lone ``b**-1`` -> ``1.0/b``.
"""

from __future__ import annotations

from fractions import Fraction

from ..core import Term, const, get_op
from ..core.dtypes import BOOL, INT64
from ..core.exact_fold import is_exact
from .canonical import GuardedRule, number
from .numbers import const_like

__all__ = ["OUTPUT_RULES"]

CONST = get_op("const")
ADD, SUB, MUL, POW, NEG, DIV = (get_op(n) for n in ("add", "sub", "mul", "pow", "neg", "truediv"))


def _negated(t: Term) -> Term | None:
    """``u`` when ``t`` is ``-u`` in disguise (``-u``, ``(-c)*u...``, a negative constant), else None."""
    if t.op is NEG:
        return t.args[0]
    c = number(t)
    if c is not None:
        return _negative_of(c, t) if c < 0 else None
    if t.op is MUL:
        c = number(t.args[0])
        if c is not None and c < 0:
            rest = t.args[1:]
            if c == -1:
                return rest[0] if len(rest) == 1 else MUL(*rest)
            k = _negative_of(c, t)
            return None if k is None else MUL(k, *rest)
    return None


def _negative_of(c: int | float | Fraction, like: Term) -> Term | None:
    """The constant ``-c`` (float32 next to a float32 ``like``), or None when it does not fit (-(-2**63))."""
    try:
        return const_like(-c, like)
    except OverflowError:
        return None


def _split_signs(t: Term) -> tuple[list[Term], list[Term]]:
    """The operands of a sum as ``(positive, negated)``: ``a + (-2)*b`` gives ``([a], [2*b])``."""
    pos, neg = [], []
    for a in t.args:
        u = _negated(a)
        if u is None:
            pos.append(a)
        else:
            neg.append(u)
    return pos, neg


def sum_to_difference(t: Term) -> Term | None:
    # a + (-1)*b + (-2)*c -> a - (b + 2*c); (-1)*a + (-1)*b -> -(a + b)
    pos, neg = _split_signs(t)
    if not neg:
        return None
    # a negated sum stays whole: a + (-1)*(b + c) -> a - (b + c), never a - (b + c + ...) (sums are flat)
    whole = [u for u in neg if u.op in (ADD, SUB, NEG)]
    neg = [u for u in neg if u.op not in (ADD, SUB, NEG)]
    if neg:
        subtrahend = neg[0] if len(neg) == 1 else ADD(*neg)
        out = NEG(subtrahend) if not pos else SUB(pos[0] if len(pos) == 1 else ADD(*pos), subtrahend)
    else:
        out = (pos[0] if len(pos) == 1 else ADD(*pos)) if pos else NEG(whole.pop(0))
    for u in whole:
        out = SUB(out, u)
    return out


def sum_to_differences(t: Term) -> Term | None:
    # a + (-1)*b + (-2)*c -> a - b - 2*c; (-1)*a + (-1)*b -> -a - b (one subtraction per negative term)
    pos, neg = _split_signs(t)
    if not neg:
        return None
    out = (pos[0] if len(pos) == 1 else ADD(*pos)) if pos else NEG(neg.pop(0))
    for u in neg:
        out = SUB(out, u)
    return out


def _reciprocal(a: Term) -> Term | None:
    """``b`` for a factor ``b**-1``, or ``1/b`` already in output form (``b**-1`` is rewritten first); else None.

    An integer ``b**-1`` is not one: it is an error when evaluated where ``a/b`` is a number.
    """
    if a.op is POW and number(a.args[1]) == -1 and a.dtype not in (INT64, BOOL):
        return a.args[0]
    if a.op is DIV and number(a.args[0]) == 1:
        return a.args[1]
    return None


def product_to_quotient(t: Term) -> Term | None:
    # (-1)*a -> -a; a * b**-1 -> a/b: one denominator, the last (a/b is a * (1/b) rounded once, never
    # worse); 1/a * 1/b -> 1.0/a/b, never 1.0/(a*b), which overflows at a = b = 1e200
    args = t.args
    if number(args[0]) == -1:
        rest = args[1:]
        return NEG(rest[0] if len(rest) == 1 else MUL(*rest))
    for k in range(len(args) - 1, -1, -1):
        den = _reciprocal(args[k])
        if den is None:
            continue
        others = args[:k] + args[k + 1 :]
        return DIV(others[0] if len(others) == 1 else MUL(*others), den)
    return None


def collect_denominators(t: Term) -> Term | None:
    # a * b**-1 * c**-2 -> a/(b*c**2) (unsafe: b*c**2 may overflow where the factors do not)
    args = t.args
    if number(args[0]) == -1:
        return None  # (-1)*a -> -a: product_to_quotient, then the quotient inside
    num, den = [], []
    for a in args:
        e = number(a.args[1]) if a.op is POW else None
        if a.op is DIV and number(a.args[0]) == 1:
            den.append(a.args[1])  # a factor 1/b, already in output form (b**-1 is rewritten first)
        elif e is not None and e < 0 and e != -0.5 and (e == -1 or _negative_of(e, a) is not None):
            # x**-(2**63) stays a factor, and so does x**-0.5: 1/x**0.5 is 1/sqrt(x), nan at -inf
            den.append(a.args[0] if e == -1 else POW(a.args[0], _negative_of(e, a)))
        else:
            num.append(a)
    if not den:
        return None
    numerator = const_like(1.0, t) if not num else num[0] if len(num) == 1 else MUL(*num)
    return DIV(numerator, den[0] if len(den) == 1 else MUL(*den))


def negative_power(t: Term) -> Term | None:
    # b**-1 -> 1.0/b (b**-2 stays: 1.0/b**2 would cost one more operation)
    base, ex = t.args
    if number(ex) != -1:
        return None
    if base.dtype == "float64" and is_exact(base):
        return DIV(const(1), base)  # 1/b for an exact b (pi too): 1.0/b would read back as a float
    return DIV(const_like(1.0, base), base)


#: the output-form rules: the grouped subtraction is unsafe, as ``a - (b + c)`` may overflow where
#: ``a - b - c`` does not, and ``-(a + b)`` is -0.0 where ``-a - b`` is 0.0; so are grouped denominators
#: (``b*c`` may overflow); the exact variant follows each
OUTPUT_RULES: list[GuardedRule] = [
    GuardedRule(
        "sum_to_difference",
        sum_to_difference,
        ops=("add",),
        unsafe=True,
        doc="a + (-1)*b + (-1)*c -> a - (b + c) (to rounding; a zero result may change sign)",
    ),
    GuardedRule("sum_to_differences", sum_to_differences, ops=("add",), doc="a + (-1)*b + (-1)*c -> a - b - c"),
    GuardedRule(
        "collect_denominators", collect_denominators, ops=("mul",), unsafe=True, doc="a * b**-1 * c**-2 -> a/(b*c**2)"
    ),
    GuardedRule("product_to_quotient", product_to_quotient, ops=("mul",), doc="a * b**-1 -> a/b, (-1)*a -> -a"),
    GuardedRule("negative_power", negative_power, ops=("pow",), doc="b**-1 -> 1.0/b"),
]
