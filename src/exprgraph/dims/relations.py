"""Relations and ranges written as text, and a tight cheap bound of a polynomial (for :mod:`.queries`).

A relation is ``(op, left, right)`` with op one of lt, le, gt, ge, eq, ne: text such as
``"s0 + 1 >= 2**4"`` or torch's ``"Eq(s0, 1)"``, or a core relational term. Bounds of ranges may
be written with powers of integer literals (``2**31-1``) and infinities (``inf``, ``oo``, ``int_oo``).

When the ranges of a difference leave its sign open, :func:`factored_range` bounds it by its factors: the linear
factors ``x - end`` that vanish at an end of an atom's range (``s*k**2 + 2*s*k + 3 - 3*s - 3*k`` is
``(k - 1)*(s*(k + 3) - 3)``, ``>= 0`` for ``k >= 1, s >= 1``) are taken out by
:func:`exprgraph.poly.factor.p_root_factors`, and the range of the product is that of the factors' ranges.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable
from typing import Any, Final

from ..core.term import Term
from ..errors import DimExpressionError, TermTooLargeError
from ..poly.factor import p_root_factors
from .context import CACHE_LIMIT, CLEAR_HOOKS, Context, context
from .intervals import Interval, _monomials, summands
from .monomials import Mono, mono_div
from .normal import top_term
from .parse import parse_expression
from .ranges import INF, UNBOUNDED, Range, ceil_div, floor_div, r_add, r_mul, r_pow
from .regions import to_poly
from .ring import Budget, Poly, p_add, p_atoms, p_degree, p_eval, p_mono_gcd, p_scale, p_sub
from .terms import CONST, FN, MOD, TERM, dim_const, is_dim_term

__all__ = [
    "Relation",
    "RANGE_TEXT",
    "parse_relation",
    "split_comparison",
    "constant_powers",
    "as_term",
    "int_term",
    "query_side",
    "bound_from_text",
    "open_bound",
    "range_pair",
    "meet",
    "ceil_bound",
    "floor_bound",
    "sign_known",
    "tight_range",
    "factored_range",
    "quick_factored",
    "MAX_FACTOR_TERMS",
    "MAX_FACTOR_ATOMS",
    "narrowings",
]

#: a relation: (op name, left side, right side); op names: lt, le, gt, ge, eq, ne
Relation = tuple[str, Term, Term]

_RELATIONS: Final = ("lt", "le", "gt", "ge", "eq", "ne")
#: comparison operators of relation text, longest first
_COMPARATORS: Final = (("<=", "le"), (">=", "ge"), ("==", "eq"), ("!=", "ne"), ("<", "lt"), (">", "gt"))
#: sympy's and torch's relation calls: Eq(a, b) ...
_RELATION_CALLS: Final = {"Eq": "eq", "Ne": "ne", "Lt": "lt", "Le": "le", "Gt": "gt", "Ge": "ge"}
#: factored_range tries differences of at most this many terms, over at most this many atoms, and spends at
#: most FACTOR_WORK monomial operations (a larger difference keeps the sign its ranges give)
MAX_FACTOR_TERMS: Final = 16
MAX_FACTOR_ATOMS: Final = 4
FACTOR_WORK: Final = 4096
_POWER: Final = re.compile(r"(\d+)\s*\*\*\s*(\d+)")
RANGE_TEXT: Final = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s+in\s*[\[(](.*),(.*)[\])]\s*\Z", re.S)
_INFINITE: Final = frozenset(["inf", "oo", "int_oo", "+inf", "+oo", "+int_oo", "-inf", "-oo", "-int_oo", "None", ""])


def constant_powers(text: str) -> str:
    """``2**31`` -> ``2147483648`` (integer literals only): the bounds torch and users write."""

    def power(m: re.Match) -> str:
        base, exponent = int(m.group(1)), int(m.group(2))
        if exponent > 256:
            raise DimExpressionError("a power beyond 2**256 in a bound", text, m.start())
        return str(base**exponent)

    return _POWER.sub(power, text)


def split_comparison(text: str) -> tuple[str, str, str] | None:
    """``(left, op name, right)`` at the comparison operator outside brackets, or None if there is none."""
    depth = 0
    i = 0
    n = len(text)
    while i < n:
        ch = text[i]
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif depth == 0 and ch in "<>=!":
            for symbol, name in _COMPARATORS:
                if text.startswith(symbol, i):
                    return text[:i], name, text[i + len(symbol) :]
        i += 1
    return None


def parse_relation(rel: str | Term) -> Relation:
    """A relation as ``(op, left, right)``: text ``"a >= b"``, ``"Eq(a, b)"``, or a core relational term.

    >>> from exprgraph.dims import unparse
    >>> op, left, right = parse_relation("s0 + 1 >= 2**4")
    >>> op, unparse(left), unparse(right)
    ('ge', 's0+1', '16')
    """
    if type(rel) is TERM:
        term: Term = rel
        if term.op.name in _RELATIONS:
            left, right = term.args
            return term.op.name, int_term(left), int_term(right)
        if term.op is FN and term.attr in _RELATION_CALLS and len(term.args) == 2:
            return _RELATION_CALLS[term.attr], term.args[0], term.args[1]
        raise ValueError(f"not a relation: {term!r} (use <, <=, >, >=, eq() or ne())")
    if not isinstance(rel, str):
        raise TypeError(f"a relation is a string or a relational term, not {type(rel).__name__}")
    text = constant_powers(rel)
    split = split_comparison(text)
    if split is None:
        term = parse_expression(text)  # (no comparison outside brackets: a relation only as Eq(a, b)...)
        if term.op is not FN or term.attr not in _RELATION_CALLS or len(term.args) != 2:
            raise DimExpressionError("not a relation: expected <, <=, >, >=, ==, != or Eq(a, b), Ne, Lt...", text, 0)
        return parse_relation(term)
    left_text, op, right_text = split
    try:
        return op, parse_expression(left_text), parse_expression(right_text)
    except DimExpressionError as err:
        offset = 0 if err.text == left_text else len(text) - len(right_text)
        raise DimExpressionError(str(err.msg), text, offset + err.pos) from None


def int_term(t: Any) -> Term:
    """``t`` as an int64 dimension term (an int constant of another dtype is made int64); TypeError otherwise."""
    if type(t) is TERM and t.op is CONST and t.shape == () and type(t.attr) is int:
        return dim_const(t.attr)
    if not is_dim_term(t):
        raise TypeError(f"a dimension expression must be an int64 scalar term, not {t!r}")
    return t


def as_term(expr: int | str | Term) -> Term:
    """The term of an int, a text (powers of literals allowed) or a term."""
    if type(expr) is TERM:
        return int_term(expr)
    if isinstance(expr, str):
        return parse_expression(constant_powers(expr) if "**" in expr else expr)
    if isinstance(expr, int) and not isinstance(expr, bool):
        return dim_const(int(expr))
    raise TypeError(f"expected an int, a string or a term, not {type(expr).__name__}")


def sign_known(op: str, r: Range) -> bool | None:
    """Whether ``d >= 0`` (op ``ge``) or ``d > 0`` (``gt``) for every ``d`` in ``r``: True, False (for none) or None."""
    lo, hi = r
    if op == "ge":
        return True if lo >= 0 else False if hi < 0 else None
    return True if lo > 0 else False if hi <= 0 else None


def query_side(expr: int | str | Term) -> str | Term:
    """A side of a query as its memo key: text as it is (read into a polynomial later), else a term."""
    return expr if isinstance(expr, str) else as_term(expr)


def bound_from_text(text: str, where: str) -> int | float:
    """A bound of a range written as text: a constant expression or an infinity."""
    t = text.strip()
    if t in _INFINITE:
        return -INF if t.startswith("-") else INF
    value = top_term(to_poly(parse_expression(constant_powers(t)), context(False)))  # its canonical term
    if value.op is not CONST:
        raise DimExpressionError(f"the {where} bound of a range must be a constant", text, 0)
    return int(value.attr)


def open_bound(x: Any, lower: bool) -> int | float:
    """A bound given as a number: None and the infinities are open ends."""
    if x is None:
        return -INF if lower else INF
    if isinstance(x, float) and x in (INF, -INF):
        return x
    try:  # an integer of any kind (bool and numpy's too); never a float, a fraction or text rounded to one
        return operator.index(x)
    except TypeError:
        raise DimExpressionError("a bound must be an integer, None or infinite", repr(x), 0) from None


def range_pair(r: Any) -> Range:
    """A range given as a pair ``(lo, hi)`` of integers, None or infinities; DimExpressionError otherwise."""
    message = "a range must be a pair (lo, hi) or text such as [2, 2**31-1]"
    if isinstance(r, (str, bytes)):
        raise DimExpressionError(message, repr(r), 0)
    try:
        lo, hi = r
    except (TypeError, ValueError):
        raise DimExpressionError(message, repr(r), 0) from None
    return open_bound(lo, True), open_bound(hi, False)


def meet(r1: Range, r2: Range) -> Range:
    """The intersection of two ranges."""
    return (max(r1[0], r2[0]), min(r1[1], r2[1]))


def ceil_bound(a: int | float, b: int) -> int | float:
    """``ceil(a / b)`` for a bound ``a`` and ``b > 0`` (an infinity stays)."""
    return a if isinstance(a, float) else ceil_div(a, b)


def floor_bound(a: int | float, b: int) -> int | float:
    """``floor(a / b)`` for a bound ``a`` and ``b > 0`` (an infinity stays)."""
    return a if isinstance(a, float) else floor_div(a, b)


def tight_range(p: Poly, ctx: Context, known: Range | None = None) -> Range:
    """A range of ``p``'s value, the tightest of a few sound ways to bound it.

    The terms one by one (Context.range_of, or ``known`` when that was worked out already); with
    the common monomial factored out (``s0*s1 - s0 = s0*(s1-1)``); and grouped by the atom in most
    terms (``x*(a+b) + c``).
    """
    r = ctx.range_of(p) if known is None else known
    if len(p) < 2 or len(p) > 64:
        return r
    g = p_mono_gcd(p)
    if g:
        # p == g * (p/g)
        rest = {mono_div(m, g): c for m, c in p.items()}
        r = meet(r, r_mul(ctx.range_of({g: 1}), ctx.range_of(rest)))
    counts: dict[Term, int] = {}
    m: Mono  # (typed, so the compiled build reads its pairs as a tuple's)
    for m in p:
        for a, _ in m:
            counts[a] = counts.get(a, 0) + 1
    if counts:
        atom, most = _most_common(counts)
        if atom is not None and most >= 2:
            inside: Poly = {}
            outside: Poly = {}
            one = ((atom, 1),)
            for m, c in p.items():
                x = mono_div(m, one)
                if x is None:
                    outside[m] = c
                else:
                    inside[x] = c
            # p == atom*inside + outside
            grouped = r_add(r_mul(ctx.atom_range(atom), ctx.range_of(inside)), ctx.range_of(outside))
            r = meet(r, grouped)
    for m, c in p.items():
        if len(m) != 1 or m[0][1] != 1 or m[0][0].op is not MOD:
            continue
        args = ctx.atom_args.get(m[0][0])
        if args is None or ctx.range_of(args[1])[0] < 1:
            continue
        # 0 <= x%q <= q - 1 for q >= 1: p == rest + c*(x%q) lies above rest + c*(q - 1) when c < 0,
        # below it when c > 0 (s1 - s0%s1 >= 1)
        rest = dict(p)
        del rest[m]
        lo, hi = ctx.range_of(p_add(rest, p_scale(args[1], c), {(): -c}))
        r = meet(r, (lo, INF) if c < 0 else (-INF, hi))
    return r


def factored_range(p: Poly, ctx: Context) -> Range | None:
    """A range of ``p`` from its factors ``p == q * prod (x - e)**k``, ``e`` an end of the range of the atom ``x``
    (so ``x - e`` keeps one sign): the product of the factors' ranges (``q``'s tight range). None when no such
    factor divides ``p``, or ``p`` is past the limits (MAX_FACTOR_TERMS, MAX_FACTOR_ATOMS, FACTOR_WORK)."""
    return _by_factors(p, ctx.atom_range, lambda q: tight_range(q, ctx))


def quick_factored(op: str, a: Term, b: Term, memo: dict[Term, Interval]) -> bool | None:
    """``a OP b`` (lt le gt ge) for every value, from the factors of ``a - b`` written over the nodes that the
    intervals in ``memo`` bound (the monomials of :func:`.intervals.difference`): True, False, or None when they do
    not decide it. No polynomial of the DimEnv is made (torch's quick path asks this before the DimEnv)."""
    if op == "eq" or op == "ne":
        return None
    ma, mb = _side_monomials(a), _side_monomials(b)
    if ma is None or mb is None:
        return None
    d = p_sub(ma, mb)  # a - b (monomials keyed by factors sorted by identity: the ring's)

    def atom_range(x: Term) -> Range:
        i = memo.get(x)
        return (i[0], i[1]) if i else UNBOUNDED

    def poly_range(q: Poly) -> Range:
        r: Range = (0, 0)
        for m, c in q.items():
            mr: Range = (c, c)
            for x, e in m:
                xr = atom_range(x)
                mr = r_mul(mr, r_pow(xr, e) if e > 1 else xr)
            r = r_add(r, mr)
        return r

    r = _by_factors(d, atom_range, poly_range)
    if r is None:
        return None
    if op == "lt" or op == "le":  # d < 0 is -d > 0
        return sign_known("gt" if op == "lt" else "ge", (-r[1], -r[0]))
    return sign_known(op, r)


#: the monomials of each side quick_factored met (None: too many parts); sides recur across questions and ranges
_SIDES: Final[dict[Term, Poly | None]] = {}


def _side_monomials(t: Term) -> Poly | None:
    """The monomials of ``t`` over the nodes the intervals bound (None past MAX_FACTOR_TERMS parts), cached."""
    if t in _SIDES:
        return _SIDES[t]
    out: Poly | None = None
    monos: dict[tuple, int] = {}
    if summands(t, 1, MAX_FACTOR_TERMS) is not None and _monomials(t, 1, monos):
        out = {m: c for m, c in monos.items() if c}
    if len(_SIDES) > CACHE_LIMIT:
        _SIDES.clear()
    _SIDES[t] = out
    return out


CLEAR_HOOKS.append(_SIDES.clear)


def _by_factors(p: Poly, atom_range: Callable[[Term], Range], poly_range: Callable[[Poly], Range]) -> Range | None:
    """:func:`factored_range` with the ranges of atoms and of polynomials given."""
    if len(p) < 3 or len(p) > MAX_FACTOR_TERMS:
        return None  # (a difference of two terms is bounded exactly by tight_range's common factor)
    atoms = p_atoms(p)
    if len(atoms) > MAX_FACTOR_ATOMS:
        return None
    roots: dict[Term, list[int]] = {}
    for a in atoms:
        if p_degree(p, a) < 2 and len(atoms) == 1:
            return None  # linear in its only atom: no factor but itself
        lo, hi = atom_range(a)
        ends = [e for e in (lo, hi) if type(e) is int and not p_eval(p, {a: e})]  # the ends where p is 0
        if ends:
            roots[a] = ends
    if not roots:
        return None
    try:
        found, q = p_root_factors(p, roots, Budget(FACTOR_WORK))
    except TermTooLargeError:
        return None
    if not found:
        return None
    r = poly_range(q)
    for a, e, k in found:
        # x - e for x in [lo, hi]: [lo - e, hi - e], one sign as e is an end
        shifted = r_add(atom_range(a), (-e, -e))
        r = r_mul(r, r_pow(shifted, k) if k > 1 else shifted)
    return r


def _most_common(counts: dict[Term, int]) -> tuple[Term | None, int]:
    """The atom counted most (the first of them, as ``max`` picks it) and its count."""
    atom = None
    most = 0
    for a, n in counts.items():
        if n > most:
            atom, most = a, n
    return atom, most


def narrowings(op: str, d: Poly, ctx: Context) -> list[tuple[str, Range]]:
    """The ranges that ``d OP 0`` gives the names that appear in ``d`` once, as ``c*name`` alone in a term."""
    counts: dict[Term, int] = {}
    for m in d:
        for a, _ in m:
            counts[a] = counts.get(a, 0) + 1
    narrowed: list[tuple[str, Range]] = []
    for m, c in d.items():
        if len(m) != 1 or m[0][1] != 1 or m[0][0].op.name != "symbol" or counts[m[0][0]] != 1:
            continue
        # c*x + rest OP 0, so c*x OP -rest, with -rest in [-hi, -lo]
        rest = dict(d)
        del rest[m]
        lo, hi = tight_range(rest, ctx)
        lower: int | float = -INF
        upper: int | float = INF
        if op in ("ge", "gt", "eq"):
            lower = -hi if type(hi) is int else -INF  # c*x >= -rest >= -hi
            if op == "gt" and type(lower) is int:
                lower += 1
        if op in ("le", "lt", "eq"):
            upper = -lo if type(lo) is int else INF  # c*x <= -rest <= -lo
            if op == "lt" and type(upper) is int:
                upper -= 1
        if c < 0:
            lower, upper, c = -upper, -lower, -c  # divided by c < 0, the bounds swap
        narrowed.append((m[0][0].name, (ceil_bound(lower, c), floor_bound(upper, c))))
    return narrowed
