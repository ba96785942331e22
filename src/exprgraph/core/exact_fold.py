"""Folding exact constants: an op over exact operands folds only when the result is exact.

An *exact* term is a scalar term without symbols whose leaves are int64 or exact constants
(rationals, ``pi``, ``e``): ``sqrt(2)``, ``2**rational(1, 3)``, ``log(3)``, ``pi/2`` are exact
real numbers that stay terms. :func:`fold_exact` folds a float64 op over exact operands into a
constant only when the value is exact: rational arithmetic, integer powers of rationals, roots of
perfect powers (``sqrt(4) -> 2.0``, ``sqrt(rational(1, 4)) -> rational(1, 2)``), square factors taken
out of a root (``sqrt(8) -> 2*sqrt(2)``), ``sqrt(c)**2 -> c`` and the values of the elementary
functions at 0 and 1 (``log(1) -> 0.0``, ``exp(0) -> 1.0``). Sums, products, quotients and integer
powers of square roots of rationals are written in the radical normal form of
:mod:`.exact_radicals` where that is no larger (``1/(1 + sqrt(2))`` is ``sqrt(2) - 1``,
``sqrt(2)*sqrt(6)`` is ``2*sqrt(3)``). A whole result of a float64 op is the float64 constant of
that value (the op's dtype is kept); any other stays as it is.

Ops of int64 or bool dtype are never folded here: their operands are ints folded with numpy's
wrapping semantics (see :mod:`exprgraph.simplify.numbers`). :func:`float_constants` is the
lowering step that replaces every exact constant by its float64 constant, for consumers that
want floats only.

>>> from exprgraph.core import parse
>>> print(fold_exact(parse("rational(1, 3) + rational(1, 6)")))
rational(1, 2)
>>> print(fold_exact(parse("sqrt(8)")))
2*sqrt(2)
>>> fold_exact(parse("log(3)")) is None
True
"""

from __future__ import annotations

from collections.abc import Iterable
from fractions import Fraction

from .dtypes import FLOAT64
from .exact import EULER, MAX_BITS, ExactName, Rational, integer_root, rational_power, square_split
from .exact_radicals import fold_radicals
from .leaves import const
from .op import get_op
from .term import Term
from .traversal import substitute
from .walk import postorder

__all__ = ["exact_value", "is_exact", "fold_exact", "float_constants", "MAX_EXACT_NODES", "EXACT_LEAVES"]

#: an exact term has at most this many distinct nodes (bigger constant subterms are not looked into)
MAX_EXACT_NODES = 64

CONST, SQRT, MUL, POW = get_op("const"), get_op("sqrt"), get_op("mul"), get_op("pow")
HALF = Fraction(1, 2)
#: ops whose zero has the sign of their operands' product: a fold to 0 of exact non-rational operands declines
_SIGNED_ZEROS = frozenset({"mul", "truediv", "neg"})

# the value of an elementary function where it is exact: op name -> {argument: value}
_SPECIAL = {
    "sin": {0: 0},
    "tan": {0: 0},
    "asin": {0: 0},
    "atan": {0: 0},
    "sinh": {0: 0},
    "tanh": {0: 0},
    "asinh": {0: 0},
    "atanh": {0: 0},
    "erf": {0: 0},
    "expm1": {0: 0},
    "log1p": {0: 0},
    "cos": {0: 1},
    "cosh": {0: 1},
    "exp": {0: 1},
    "erfc": {0: 1},
    "acos": {1: 0},
    "log": {1: 0},
    "log2": {1: 0, 2: 1, 4: 2, 8: 3},
    "log10": {1: 0, 10: 1, 100: 2},
}


def exact_value(t: Term) -> Fraction | None:
    """The rational value of an int64 or rational constant (None for anything else: floats, bools, pi)."""
    if t.op is not CONST:
        return None
    cls = t.attr.__class__
    if cls is int or cls is Rational:
        return Fraction(t.attr)
    return None


#: the value classes of exact leaves: ints, rationals, pi and e
EXACT_LEAVES = frozenset({int, Rational, ExactName})


def is_exact(t: Term) -> bool:
    """Whether ``t`` is an exact real number: a scalar without symbols over int64 and exact constants.

    The walk stops at the first leaf that is not exact (a symbol, a float), so it is cheap on
    symbolic terms, and looks at :data:`MAX_EXACT_NODES` nodes at most.
    """
    if not t.args:  # a leaf: no walk
        return not t.shape and t.op is CONST and t.attr.__class__ in EXACT_LEAVES
    stack = [t]
    seen = 0
    while stack:
        node = stack.pop()
        seen += 1
        if seen > MAX_EXACT_NODES or node.shape:
            return False
        args = node.args
        if not args:
            if node.op is not CONST or node.attr.__class__ not in EXACT_LEAVES:
                return False
        else:
            stack.extend(args)
    return True


def _number(value: Fraction) -> Term | None:
    """The float64-typed constant of an exact value: a rational, or the float of a whole value it holds exactly."""
    if value.denominator != 1:
        return const(value)
    v = float(value)
    return const(v) if Fraction(v) == value else None


def _root(q: Fraction) -> Term | None:
    # sqrt(a**2 * b / d**2) -> (a/d) * sqrt(b): the square factors come out; sqrt(4) -> 2.0
    if q < 0:
        return None  # nan, as float64 computes it
    n, d = q.numerator, q.denominator
    whole = integer_root(n, 2)
    root_d = integer_root(d, 2)
    if whole is not None and root_d is not None:
        return _number(Fraction(whole, root_d))
    a, b = square_split(n * d)
    if a == 1 and d == 1:
        return None  # sqrt(2): already its simplest exact form
    out = SQRT(const(b))
    k = Fraction(a, d)
    return out if k == 1 else MUL(const(k), out)


def _arith(name: str, vals: list[Fraction]) -> Fraction | None:
    # rational arithmetic: exact, or None where float64 gives inf or nan (a division by zero)
    if name == "add":
        return sum(vals, Fraction(0))
    if name == "mul":
        out = Fraction(1)
        for v in vals:
            out *= v
        return out
    if name == "neg":
        return -vals[0]
    if name == "abs":
        return abs(vals[0])
    if name == "maximum":
        return max(vals)
    if name == "minimum":
        return min(vals)
    if len(vals) != 2:
        return None
    a, b = vals
    if name == "sub":
        return a - b
    if name == "pow":
        return rational_power(a, b)
    if b == 0:
        return None
    if name == "truediv":
        return a / b
    if name == "floordiv":
        return Fraction(a // b)
    if name == "mod":
        return a % b
    return None


def _fold_values(t: Term, vals: list[Fraction]) -> Term | None:
    """``t`` over rational operands ``vals``, exactly, or None."""
    name = t.op.name
    if name == "sqrt":
        return _root(vals[0])
    if name == "pow" and vals[1] == HALF and vals[0] >= 0:
        return _root(vals[0]) or SQRT(t.args[0])  # q**(1/2) -> sqrt(q), the one spelling of a square root
    if name in ("floor", "ceil", "trunc"):
        q = vals[0]
        whole = q.__floor__() if name == "floor" else q.__ceil__() if name == "ceil" else q.__trunc__()
        return const(-0.0) if whole == 0 and _minus_zero(name, vals) else _number(Fraction(whole))
    special = _SPECIAL.get(name)
    if special is not None:
        v = vals[0]
        return _number(Fraction(special[int(v)])) if v.denominator == 1 and int(v) in special else None
    out = _arith(name, vals)
    if out is None or max(out.numerator.bit_length(), out.denominator.bit_length()) > MAX_BITS:
        return None
    return const(-0.0) if out == 0 and _minus_zero(name, vals) else _number(out)


def _minus_zero(name: str, vals: list[Fraction]) -> bool:
    """Whether float64 gives -0.0 where ``name`` over ``vals`` is exactly 0 (the exact zeros are +0.0)."""
    if name in ("ceil", "trunc"):
        return vals[0] < 0  # ceil(-1/2) and trunc(-1/2) are -0.0
    if name == "mul":
        return sum(v < 0 for v in vals) % 2 == 1  # 0 * (-1/2) is -0.0: the sign of a product of signs
    if name in ("truediv", "floordiv"):
        return vals[0] == 0 and vals[1] < 0  # 0/(-3) is -0.0; (-1/2)//(-3) is +0.0 (floor of 1/6 > 0)
    if name == "mod":
        return vals[1] < 0  # a zero remainder has the divisor's sign: 1 mod (-1/2) is -0.0
    return False


def _fold_symbolic(t: Term) -> Term | None:
    """``t`` over exact operands that are not all rational: the exact identities that remove them."""
    name = t.op.name
    if name == "pow":
        base, ex = t.args
        k = exact_value(ex)
        if base.op is SQRT and k is not None and k.denominator == 1 and k % 2 == 0:
            q = exact_value(base.args[0])
            if q is not None and q >= 0:  # sqrt(c)**(2n) -> c**n, for c >= 0
                out = rational_power(q, k / 2)
                return None if out is None else _number(out)
        return None
    if name == "log" and t.args[0].op is CONST and t.args[0].attr is EULER:
        return const(1.0)  # log(e) -> 1
    if name == "mul" and len(t.args) == 2 and t.args[0] is t.args[1] and t.args[0].op is SQRT:
        q = exact_value(t.args[0].args[0])
        if q is not None and q >= 0:
            return _number(q)  # sqrt(c)*sqrt(c) -> c, for c >= 0
    return None


def fold_exact(t: Term) -> Term | None:
    """The exact constant (or simpler exact term) equal to the float64 term ``t`` over exact operands, or None.

    None when ``t`` is not a float64 op over exact operands, or its value is not exact: the term
    stays (``log(3)``, ``sqrt(2)``, ``pi/2``).
    """
    args = t.args
    if not args or t.dtype != FLOAT64 or t.shape:
        return None
    rational = True
    for a in args:  # every operand an int or rational constant: the rational values (made only then)
        if a.op is not CONST or (a.attr.__class__ is not int and a.attr.__class__ is not Rational):
            rational = False
            break
    if rational:
        return _fold_values(t, [Fraction(a.attr) for a in args])
    for a in args:
        if not is_exact(a):
            return None
    out = _fold_symbolic(t) or fold_radicals(t)
    if out is not None and out.op is CONST and out.attr == 0 and t.op.name in _SIGNED_ZEROS:
        return None  # sqrt(2)*0*(-1) is -0.0 in float64, its radical form 0: the sign of a zero product stays
    return out


def float_constants(terms: Iterable[Term]) -> list[Term]:
    """``terms`` with every exact constant replaced by its float64 constant (the lowering step for floats only)."""
    roots = list(terms)
    table: dict[Term, Term] = {}
    for node in postorder(roots):
        if node.op is CONST and (node.attr.__class__ is Rational or node.attr.__class__ is ExactName):
            table[node] = const(float(node.attr))
    if not table:
        return roots
    return [substitute(r, table) for r in roots]
