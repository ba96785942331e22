"""Terms to polynomials and rational functions, and back.

:func:`to_poly` reads a term as a polynomial: ``+``, ``-``, ``*``, negation, division by a constant
and powers by a non-negative integer constant are the ring's operations; an int constant is its
value and a finite float constant its exact value as a Fraction. Everything else is an *atom*,
opaque to the algebra (``sin(x)``, ``exp(y)``, ``x**0.5``, a symbol), its arguments read the same
way first (``sin((x + 1)**2)`` is the atom ``sin(x**2 + 2*x + 1)``); a division by a polynomial
``b`` is the atom ``1/b`` (``x**-2`` is ``(1/x)**2``). :func:`to_ratio` reads divisions and
negative powers as the field's operations instead. Traversals are iterative, work is budgeted.

Back to terms (:func:`from_poly`, :func:`from_ratio`): terms by decreasing degree, atoms in
:func:`~.gcd.atom_order`, ``c*m`` for an int ``c``; a rational coefficient ``p/q`` is written as
the int ``p`` times the monomial, divided by the int ``q`` (``2*x/3``, and a constant ``1/3`` as
``const(1)/const(3)``): true division of exact ints, so evaluating gives the float nearest the
value. An int coefficient beyond int64 is written exactly in base ``2**62`` (``(d1*B + d2)*B + d3``,
each digit an int64 constant: exact in Python ints, the same wrapped value in int64 arithmetic);
beyond :data:`MAX_COEFF_BITS` bits it is refused (TermTooLargeError).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction
from typing import Any

from ..core import Term, const, get_op, postorder
from ..core.dtypes import INT64_MAX, INT64_MIN
from ..core.exact import Rational
from ..errors import TermTooLargeError
from .gcd import atom_order
from .monomials import ONE, Mono, mono_rank_key
from .rational import Ratio, r_add, r_div, r_mul, r_normal, r_pow, r_sub
from .ring import Budget, Coeff, Poly, p_add_into, p_atom, p_const, p_mul, p_neg, p_pow, p_scale

__all__ = [
    "to_poly",
    "to_ratio",
    "from_poly",
    "from_ratio",
    "coeff_term",
    "reciprocal_atom",
    "sum_term",
    "product_term",
    "same_kind",
    "negated",
]

ADD, SUB, MUL, NEG = get_op("add"), get_op("sub"), get_op("mul"), get_op("neg")
TRUEDIV, POW, CONST = get_op("truediv"), get_op("pow"), get_op("const")
_RING_OPS = frozenset({ADD, SUB, MUL, NEG, TRUEDIV, POW})
#: bits of the largest coefficient written back as a term
MAX_COEFF_BITS = 4096
_BASE = 1 << 62


def _number(t: Term) -> Coeff | None:
    """The exact value of an int or finite float scalar constant (None otherwise)."""
    if t.op is not CONST:
        return None
    v = t.attr
    if v.__class__ is int:
        return int(v)
    if v.__class__ is Rational:  # an exact rational constant
        return Fraction(v)
    if v.__class__ is float and math.isfinite(v):
        f = Fraction(v)
        return f.numerator if f.denominator == 1 else f
    return None


def _int_exponent(t: Term) -> int | None:
    v = _number(t)
    return v if isinstance(v, int) else None


def reciprocal_atom(base: Term) -> Term:
    """The atom ``1/base`` (how a division by a non-constant polynomial is read)."""
    return TRUEDIV(const(1), base)


def _rebuilt(node: Term, terms: dict[Term, Term], back: Callable[[Term], Term | None]) -> Term:
    """``node`` with its arguments replaced by their converted terms (the same term when none changed).

    ``back(arg)`` writes a converted argument back as a term (None: it is an atom, kept in ``terms``);
    it runs only for the arguments of atoms, so a long chain of sums is never printed back node by node.
    """
    args_list: list[Term] = []
    for a in node.args:
        t = terms.get(a)
        if t is None:
            t = back(a)
            terms[a] = a if t is None else t
        args_list.append(terms[a])
    args = tuple(args_list)
    if all(a is b for a, b in zip(args, node.args, strict=True)):
        return node
    return Term(node.op, args, node.attr)


def _walk(term: Term, visit: Callable[[Term], None], single: set[Term]) -> None:
    """Visit the nodes of ``term`` children first, having put in ``single`` those read by one parent only."""
    order = postorder([term])
    seen_twice: set[Term] = set()
    for node in order:
        for a in node.args:
            if a in single:
                single.discard(a)
                seen_twice.add(a)
            elif a not in seen_twice:
                single.add(a)
    for node in order:
        visit(node)


def to_poly(term: Term, budget: Budget | None = None) -> Poly:
    """``term`` as a polynomial over its atoms (see the module docstring)."""
    budget = budget or Budget()
    polys: dict[Term, Poly] = {}
    terms: dict[Term, Term] = {}
    single: set[Term] = set()

    def back(arg: Term) -> Term | None:
        return same_kind(from_poly(polys[arg], like=arg), arg) if arg.args else None

    def visit(node: Term) -> None:
        got = _poly_node(node, polys, budget, single)
        if got is None:
            atom = _rebuilt(node, terms, back)
            got = p_atom(atom)
            terms[node] = atom
        polys[node] = got

    _walk(term, visit, single)
    return polys[term]


def _poly_node(node: Term, polys: dict[Term, Poly], budget: Budget, single: set[Term]) -> Poly | None:
    """The polynomial of a ring node from its arguments' (None: the node is an atom)."""
    op = node.op
    if op is CONST:
        v = _number(node)
        return None if v is None or node.shape else p_const(v)
    if op not in _RING_OPS:
        return None
    args = [polys[a] for a in node.args]
    if op is ADD or op is SUB:
        # a sum reuses the dict of its first operand when nothing else reads it: a chain of n
        # additions costs n steps, not n**2/2 copies
        first = node.args[0]
        acc = args[0] if first in single and first is not node.args[1] else dict(args[0])
        for p in args[1:]:
            p_add_into(acc, p, 1 if op is ADD else -1)
        return acc
    if op is NEG:
        return p_neg(args[0])
    if op is MUL:
        out = args[0]
        for p in args[1:]:
            out = p_mul(out, p, budget)
        return out
    if op is TRUEDIV:
        den = args[1]
        if len(den) == 1 and ONE in den:
            return p_scale(args[0], Fraction(1) / den[ONE])
        if not den:
            return None
        recip = reciprocal_atom(from_poly(den, like=node.args[1]))
        return p_mul(args[0], p_atom(recip), budget)
    e = _int_exponent(node.args[1])
    if e is None:
        return None
    if e >= 0:
        return p_pow(args[0], e, budget)
    if not args[0]:
        return None
    return p_pow(p_atom(reciprocal_atom(from_poly(args[0], like=node.args[0]))), -e, budget)


def to_ratio(term: Term, budget: Budget | None = None) -> Ratio:
    """``term`` as a rational function over its atoms (a zero divisor leaves that division an atom)."""
    budget = budget or Budget()
    ratios: dict[Term, Ratio] = {}
    terms: dict[Term, Term] = {}
    single: set[Term] = set()

    def back(arg: Term) -> Term | None:
        return same_kind(from_ratio(ratios[arg], like=arg), arg) if arg.args else None

    def visit(node: Term) -> None:
        got = _ratio_node(node, ratios, budget, single)
        if got is None:
            atom = _rebuilt(node, terms, back)
            got = ({((atom, 1),): 1}, {ONE: 1})
            terms[node] = atom
        ratios[node] = got

    _walk(term, visit, single)
    return ratios[term]


def _ratio_sum(node: Term, args: list[Ratio], budget: Budget, single: set[Term]) -> Ratio:
    """A sum or difference; polynomial parts are added in place into a numerator nothing else reads."""
    out = args[0]
    owned = node.args[0] in single and node.args[0] is not node.args[1]
    added = False  # a flag, not ``out is args[0]``: compiled code does not keep a tuple's identity
    for r in args[1:]:
        if not r[0]:
            continue
        added = True
        if _is_one(out[1]) and _is_one(r[1]):
            num = out[0] if owned else dict(out[0])
            add = dict(r[0]) if r[0] is num else r[0]  # x - x: the same dict on both sides
            p_add_into(num, add, 1 if node.op is ADD else -1)
            out, owned = (num, out[1]), True
        else:
            out = r_add(out, r, budget) if node.op is ADD else r_sub(out, r, budget)
            owned = True
    if not added and not owned:
        return dict(out[0]), out[1]  # only zeros added: a copy, never the dict of an operand others read
    return out


def _is_one(p: Poly) -> bool:
    return len(p) == 1 and p.get(ONE) == 1


def _ratio_node(node: Term, ratios: dict[Term, Ratio], budget: Budget, single: set[Term]) -> Ratio | None:
    """The rational function of a field node from its arguments' (None: the node is an atom)."""
    op = node.op
    if op is CONST:
        v = _number(node)
        return None if v is None or node.shape else (p_const(v), {ONE: 1})
    if op not in _RING_OPS:
        return None
    args = [ratios[a] for a in node.args]
    if op is ADD or op is SUB:
        return _ratio_sum(node, args, budget, single)
    if op is NEG:
        return p_neg(args[0][0]), args[0][1]
    if op is MUL:
        out = args[0]
        for r in args[1:]:
            out = r_mul(out, r, budget)
        return out
    if op is TRUEDIV:
        return r_div(args[0], args[1], budget) if args[1][0] else None
    e = _int_exponent(node.args[1])
    if e is None or (e < 0 and not args[0][0]):
        return None
    return r_pow(args[0], e, budget)


# -- back to terms -----------------------------------------------------------------------------------


def _int_const(c: int) -> Term:
    """An int constant; beyond int64, the exact Horner form ``(d1*B + d2)*B + ...`` in base ``B = 2**62``."""
    if INT64_MIN <= c <= INT64_MAX:
        return const(c)
    if c.bit_length() > MAX_COEFF_BITS:
        raise TermTooLargeError(f"a coefficient of {c.bit_length()} bits (more than {MAX_COEFF_BITS})")
    digits: list[int] = []
    rest = abs(c)
    while rest:
        digits.append(rest & (_BASE - 1))
        rest >>= 62
    base = const(_BASE)
    out = const(digits[-1])
    for d in reversed(digits[:-1]):
        out = MUL(out, base)
        if d:
            out = ADD(out, const(d))
    return NEG(out) if c < 0 else out


def coeff_term(c: Coeff) -> Term:
    """The exact number ``c`` as a term: an int constant, or ``p/q`` as a true division of int constants."""
    if c.__class__ is int:
        return _int_const(int(c))
    f = Fraction(c)
    return TRUEDIV(_int_const(f.numerator), _int_const(f.denominator))


def product_term(factors: list[Term]) -> Term:
    """One flat product of the factors (the factor itself when there is one), as the parser reads ``a*b*c``."""
    return factors[0] if len(factors) == 1 else MUL(*factors)


def negated(t: Term) -> Term:
    """``-t`` as the parser reads it: the sign on the first factor (``-2*x``, ``-x*y``, ``-x/3``)."""
    if t.op is CONST and t.attr.__class__ is int and -t.attr >= INT64_MIN:
        return const(-t.attr)
    if t.op is MUL:
        return MUL(negated(t.args[0]), *t.args[1:])
    if t.op is TRUEDIV:
        return TRUEDIV(negated(t.args[0]), t.args[1])
    return NEG(t)


def sum_term(parts: list[tuple[bool, Term]]) -> Term:
    """The sum of ``(negative, term)`` parts as the parser reads ``a + b - c + d``: runs of ``+`` flat."""
    run: list[Term] = []
    for negative, t in parts:
        if not run:
            run.append(negated(t) if negative else t)
        elif negative:
            run = [SUB(run[0] if len(run) == 1 else ADD(*run), t)]
        else:
            run.append(t)
    if not run:
        return const(0)
    return run[0] if len(run) == 1 else ADD(*run)


def _power(a: Term, k: int) -> Term:
    return a if k == 1 else POW(a, const(k))


def _mono_term(m: Mono, c: Coeff, rank: dict[Term, int]) -> Term:
    """``|c| * m`` (the sign is the sum's): numerator factors, then a division by the denominator ones."""
    num: list[Term] = []
    den: list[Term] = []
    for a, k in sorted(m, key=lambda ak: rank[ak[0]]):
        if a.op is TRUEDIV and _number(a.args[0]) == 1:
            den.append(_power(a.args[1], k))
        else:
            num.append(_power(a, k))
    f = abs(Fraction(c))
    if f.numerator != 1 or not num:
        num.insert(0, _int_const(f.numerator))
    if f.denominator != 1:
        den.insert(0, _int_const(f.denominator))
    top = product_term(num)
    return TRUEDIV(top, product_term(den)) if den else top


def _ordered(p: Poly) -> tuple[list[Mono], dict[Term, int]]:
    atoms = atom_order(list({a: None for m in p for a, _ in m}))
    rank = {a: i for i, a in enumerate(atoms)}

    return sorted(p, key=lambda m: mono_rank_key(m, rank, True), reverse=True), rank


def from_poly(p: Poly, like: Term | None = None) -> Term:
    """The term of a polynomial (terms by decreasing degree); a constant takes ``like``'s dtype."""
    if not p:
        return _cast(const(0), like)
    monos, rank = _ordered(p)
    return _cast(sum_term([(p[m] < 0, _mono_term(m, p[m], rank)) for m in monos]), like)


def same_kind(result: Term, original: Term) -> Term:
    """``result`` when it has ``original``'s dtype and shape, else ``original`` (nothing is rewritten).

    The algebra does not see dtypes or shapes: ``A - A`` of a vector ``A`` is the scalar 0, and
    int coefficients next to a float32 symbol would promote it to float64. Such a rewrite is not made.
    """
    if result.dtype == original.dtype and result.shape == original.shape:
        return result
    return original


def _cast(t: Term, like: Term | None) -> Term:
    """A lone constant in ``like``'s dtype (``x - x + 1.0`` is the float 1.0)."""
    if like is not None and t.op is CONST and t.dtype != like.dtype and like.dtype in ("float64", "float32"):
        v: Any = t.attr
        return const(float(v), like.dtype)
    return t


def from_ratio(r: Ratio, like: Term | None = None) -> Term:
    """The term ``n/d`` of a rational function (``n`` alone when ``d`` is 1)."""
    n, d = r_normal(*r)
    if len(d) == 1 and d.get(ONE) == 1:
        return from_poly(n, like)
    if len(d) == 1 and ONE in d:
        return from_poly(p_scale(n, Fraction(1) / d[ONE]), like)
    return TRUEDIV(from_poly(n), from_poly(d))
