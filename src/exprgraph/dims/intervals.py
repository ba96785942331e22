"""The range of a dimension term by interval arithmetic on its nodes: the quick answer before any polynomial.

Each node of an int64 term gets an interval ``(lo, hi)`` (open ends ``-INF``/``INF``, see :mod:`.ranges`) from
its arguments' intervals, children first and without recursion, with two more facts:

- ``exact``: ``lo`` and ``hi`` are the least and the greatest value the node takes (an infinite end: it takes
  values beyond every bound). A name is exact (it takes every integer of its range); a constant is; a sum, a
  product, a max or a min of exact operands over disjoint sets of names is (its extremes are reached at
  extremes of its operands, which vary independently); so is a monotone function of an exact operand
  (``x//k``, ``ceil(x/k)`` for a constant ``k >= 1``, ``-x``, an odd power). A modulo is not.
- ``names``: the set of names under the node, as a bit mask (the bits numbered by a table the caller keeps).

An interval is always sound: every value of the node lies in it. A floor division, ceiling division or modulo
whose divisor may be below 1 is not evaluated here (the general path of :class:`~exprgraph.dims.DimEnv` decides
what it means), nor is an op this module does not know: the term then has no interval (``()``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from ..core.term import Term
from .ranges import Range, r_add, r_floordiv, r_mod, r_mul, r_pow
from .terms import ABS, ADD, CEIL_DIV, CONST, FLOORDIV, MAX, MIN, MOD, MUL, NEG, POW, SUB, SYMBOL

__all__ = [
    "Interval",
    "NO_INTERVAL",
    "term_interval",
    "relation_of_intervals",
    "cancelled",
    "settled",
    "quick_relation",
    "quick_bound",
    "NEVER",
    "ALWAYS",
    "SOMETIMES",
    "ASK",
]

#: ``(lo, hi, exact, names)``: the bounds, whether they are the least and greatest values, the names' bit mask
Interval = tuple
#: what a term gets when one of its nodes is not evaluated here
NO_INTERVAL: Final[Interval] = ()


def term_interval(
    root: Term, name_range: Callable[[str], Range], memo: dict[Term, Interval], bits: dict[str, int]
) -> Interval:
    """The interval of an int64 term (``NO_INTERVAL`` if a node is not evaluated here); ``memo`` keeps each node's,
    ``bits`` numbers the names (both kept by the caller for one set of ranges: ``name_range`` gives a name's)."""
    found = memo.get(root)
    if found is not None:
        return found
    stack = [root]
    while stack:
        node = stack[-1]
        if node in memo:
            stack.pop()
            continue
        args = node.args
        missing = [a for a in args if a not in memo]
        if missing:
            stack.extend(missing)
            continue
        stack.pop()
        if not args:
            memo[node] = _leaf(node, name_range, bits)
            continue
        vals = [memo[a] for a in args]
        memo[node] = NO_INTERVAL if NO_INTERVAL in vals else _call(node, vals, memo)
    return memo[root]


def _leaf(node: Term, name_range: Callable[[str], Range], bits: dict[str, int]) -> Interval:
    """A name (its range; exact) or an integer constant (its value)."""
    op = node.op
    if op is CONST:
        v = node.attr
        return (v, v, True, 0) if type(v) is int else NO_INTERVAL
    if op is not SYMBOL:
        return NO_INTERVAL
    name = node.name
    bit = bits.get(name)
    if bit is None:
        bit = bits[name] = 1 << len(bits)
    lo, hi = name_range(name)
    return (lo, hi, True, bit)


def _independent(vals: list[Interval]) -> tuple[bool, int]:
    """Whether every operand is exact and no name is under two of them, and the union of their names."""
    exact = True
    names = 0
    for v in vals:
        if not v[2] or names & v[3]:
            exact = False
        names |= v[3]
    return exact, names


def _call(node: Term, vals: list[Interval], memo: dict[Term, Interval]) -> Interval:
    """The interval of a node from its arguments' (NO_INTERVAL for an op not evaluated here)."""
    op = node.op
    if op is ADD or op is MUL or op is SUB:
        r: Range = vals[0][:2]
        for v in vals[1:]:
            other = (_neg(v[1]), _neg(v[0])) if op is SUB else v[:2]  # a - b = a + (-b)
            r = r_mul(r, other) if op is MUL else r_add(r, other)
        exact, names = _independent(vals)
        return (r[0], r[1], exact, names)
    if op is NEG:  # -x: the bounds swapped and negated
        a = vals[0]
        return (_neg(a[1]), _neg(a[0]), a[2], a[3])
    if op is MAX or op is MIN:  # max: the max of each end; min: the min of each end
        pick = max if op is MAX else min
        exact, names = _independent(vals)
        return (pick([v[0] for v in vals]), pick([v[1] for v in vals]), exact, names)
    if op is MOD and vals[0][0] >= 0 and vals[1][0] >= 1 and _below(node.args[0], node.args[1], memo):
        a = vals[0]  # 0 <= a < q: a % q == a
        return (a[0], a[1], a[2], a[3] | vals[1][3])
    if op is FLOORDIV or op is CEIL_DIV or op is MOD:
        return _division(op, vals[0], vals[1])
    if op is POW:
        return _power(vals[0], vals[1])
    if op is ABS:  # |x| = x for x >= 0, -x for x <= 0, else within [0, max(-lo, hi)]
        lo, hi, exact, names = vals[0]
        if lo >= 0:
            return vals[0]
        if hi <= 0:
            return (_neg(hi), _neg(lo), exact, names)
        return (0, max(_neg(lo), hi), False, names)
    return NO_INTERVAL


#: the most factors a side's product is split into (a larger one is left to the polynomials)
MAX_FACTORS: Final = 32


def _factors(t: Term) -> tuple[int, dict[Term, int]] | None:
    """``t`` as ``k * f1**e1 * f2**e2 ...`` (a product of factors that are not products, by constant powers), or
    None when it has more than MAX_FACTORS factors."""
    coef = 1
    factors: dict[Term, int] = {}
    stack = [(t, 1)]
    while stack:
        node, e = stack.pop()
        op = node.op
        if op is MUL:
            stack.extend([(a, e) for a in node.args])
        elif op is CONST and type(node.attr) is int:
            coef *= node.attr**e
        elif op is POW and node.args[1].op is CONST and type(node.args[1].attr) is int and node.args[1].attr >= 0:
            stack.append((node.args[0], e * node.args[1].attr))
        else:
            factors[node] = factors.get(node, 0) + e
        if len(factors) + len(stack) > MAX_FACTORS:
            return None
    return coef, factors


def _product(coef: int, factors: dict[Term, int], memo: dict[Term, Interval]) -> Interval:
    """The interval of ``coef * prod(f**e)`` from the factors' intervals (all in ``memo``)."""
    r: Range = (coef, coef)
    exact = True
    names = 0
    for f, e in factors.items():
        i = memo[f]
        r = r_mul(r, r_pow(i[:2], e) if e > 1 else i[:2])
        if not i[2] or names & i[3] or (e % 2 == 0 and i[0] < 0):
            exact = False  # (an even power of a factor that changes sign is not monotone)
        names |= i[3]
    return (r[0], r[1], exact, names)


def cancelled(a: Term, b: Term, memo: dict[Term, Interval]) -> tuple[Interval, Interval] | None:
    """The intervals of ``a`` and ``b`` with their common factors that are >= 1 everywhere divided out (``a OP b``
    holds exactly where ``a/P OP b/P`` does, for ``P >= 1``), or None when they have none (or a factor has no
    interval in ``memo``)."""
    fa, fb = _factors(a), _factors(b)
    if fa is None or fb is None:
        return None
    ka, da = fa
    kb, db = fb
    common = False
    for f in list(da):
        if f in db:
            i = memo.get(f)
            if not i:
                return None
            if i[0] >= 1:  # a positive factor: divided out of both sides
                e = min(da[f], db[f])
                da[f] -= e
                db[f] -= e
                common = True
    if not common:
        return None
    for d in (da, db):
        for f in list(d):
            if d[f] == 0:
                del d[f]
            elif not memo.get(f):
                return None
    return _product(ka, da, memo), _product(kb, db, memo)


def _below(a: Term, q: Term, memo: dict[Term, Interval]) -> bool:
    """Whether ``a < q`` everywhere, from the intervals of ``a`` and ``q`` or of what is left of them once their
    common positive factors are divided out (both already in ``memo``)."""
    ia, iq = memo[a], memo[q]
    if ia[1] < iq[0]:
        return True
    rest = cancelled(a, q, memo)
    return rest is not None and rest[0][1] < rest[1][0]


def _division(op: object, a: Interval, q: Interval) -> Interval:
    """``a // q``, ``ceil(a / q) == -((-a) // q)`` or ``a % q`` for a divisor >= 1 (else NO_INTERVAL)."""
    if not q[0] >= 1:
        return NO_INTERVAL  # a divisor that may be 0 or negative: the general path
    names = a[3] | q[3]
    if op is MOD:
        r = r_mod(a[:2], q[:2])
        return (r[0], r[1], r[0] == r[1], names)
    monotone = a[2] and q[0] == q[1]  # x // k, ceil(x / k) for a constant k >= 1: nondecreasing in x
    if op is FLOORDIV:
        r = r_floordiv(a[:2], q[:2])
        return (r[0], r[1], monotone, names)
    r = r_floordiv((_neg(a[1]), _neg(a[0])), q[:2])
    return (_neg(r[1]), _neg(r[0]), monotone, names)


def _power(a: Interval, k: Interval) -> Interval:
    """``a ** k`` for a constant ``k >= 0`` (else NO_INTERVAL); exact for an exact ``a`` when the power is monotone."""
    if not (k[0] == k[1] and type(k[0]) is int and k[0] >= 0):
        return NO_INTERVAL
    if k[0] == 0:
        return (1, 1, True, a[3])  # x**0 == 1
    r = r_pow(a[:2], k[0])
    return (r[0], r[1], a[2] and (k[0] % 2 == 1 or a[0] >= 0), a[3])


def _neg(x: int | float) -> int | float:
    return -x


def relation_of_intervals(op: str, a: Interval, b: Interval) -> bool | None:
    """``x OP y`` (``op``: eq ne lt le gt ge) for every ``x`` in ``a`` and ``y`` in ``b`` (True), for none (False),
    or None when the intervals do not decide it."""
    if op == "gt" or op == "ge":  # x > y is y < x
        a, b = b, a
        op = "lt" if op == "gt" else "le"
    if op == "lt":
        return True if a[1] < b[0] else False if a[0] >= b[1] else None
    if op == "le":
        return True if a[1] <= b[0] else False if a[0] > b[1] else None
    if a[1] < b[0] or b[1] < a[0]:  # disjoint: never equal
        return op == "ne"
    if a[0] == a[1] == b[0] == b[1]:  # one and the same number
        return op == "eq"
    return None


def settled(op: str, a: Interval, b: Interval) -> bool:
    """Whether ``relation_of_intervals`` saying None is the answer, for exact intervals of sides over disjoint names
    (each side reaches both its ends, independently of the other): an order (lt le gt ge) then holds at some
    values and fails at others; so does ``==`` (``!=``) when an end of one side is an end of the other (both sides
    reach that value there, and differ elsewhere: the intervals are not one and the same number)."""
    if not (a[2] and b[2]) or a[3] & b[3]:
        return False
    if op != "eq" and op != "ne":
        return True
    return (type(a[0]) is int and a[0] == b[1]) or (type(a[1]) is int and a[1] == b[0])


#: what quick_relation says: the relation holds for no value, for every value, for some only, or ask the DimEnv
NEVER: Final = 0
ALWAYS: Final = 1
SOMETIMES: Final = 2
ASK: Final = 3


def _is_leaf(t: Term) -> bool:
    """Whether ``t`` is a name or an integer constant."""
    return t.op is SYMBOL or (t.op is CONST and type(t.attr) is int)


def quick_relation(
    op: str, a: Term, b: Term, name_range: Callable[[str], Range], memo: dict[Term, Interval], bits: dict[str, int]
) -> int:
    """``a OP b`` by the intervals of its sides: NEVER, ALWAYS, SOMETIMES (decided: it depends on the values), or
    ASK when the intervals leave it open (the sides' polynomials may decide it). SOMETIMES for two different names
    or numbers (each takes every integer of its range, independently) and for an order between exact sides over
    different names (see :func:`settled`)."""
    ia = term_interval(a, name_range, memo, bits)
    if not ia:
        return ASK
    ib = term_interval(b, name_range, memo, bits)
    if not ib:
        return ASK
    v = relation_of_intervals(op, ia, ib)
    if v is not None:
        return ALWAYS if v else NEVER
    if (_is_leaf(a) and _is_leaf(b) and a is not b) or settled(op, ia, ib):
        return SOMETIMES
    rest = cancelled(a, b, memo)  # s0*s1 == s0 where s1 == 1 (s0 >= 1)
    if rest is None:
        return ASK
    v = relation_of_intervals(op, rest[0], rest[1])
    if v is not None:
        return ALWAYS if v else NEVER
    return SOMETIMES if settled(op, rest[0], rest[1]) else ASK


def quick_bound(
    t: Term, name_range: Callable[[str], Range], memo: dict[Term, Interval], bits: dict[str, int]
) -> Range | None:
    """The least and the greatest value of ``t`` (or its only value) from its interval, or None when the interval
    is not known to be that (the sides' polynomials may give a tighter bound)."""
    i = term_interval(t, name_range, memo, bits)
    if i and (i[2] or i[0] == i[1]):
        return (i[0], i[1])
    return None
