"""The range of a dimension term by interval arithmetic on its nodes: the quick answer before any polynomial.

Each node of an int64 term gets an interval ``(lo, hi)`` (open ends ``-INF``/``INF``, see :mod:`.ranges`) from
its arguments' intervals, children first and without recursion, with three more facts:

- ``exact``: ``lo`` and ``hi`` are the least and the greatest value the node takes (an infinite end: it takes
  values beyond every bound). A name is exact; a constant is; a sum, a product, a max or a min of exact operands
  over disjoint sets of names is (its extremes are reached at extremes of its operands, which vary independently);
  so is a monotone function of an exact operand (``x//k``, ``ceil(x/k)`` for a constant ``k >= 1``, ``-x``, an
  odd power); so is a node that is monotone in every name (below) over exact operands, names shared or not (each
  operand reaches its least value where every name is at its least, and its greatest where every name is at its
  greatest, so all reach them together); so is ``x % k`` of a dense ``x`` and a constant ``k >= 1``.
- ``names``: the set of names under the node, as a bit mask (the bits numbered by a table the caller keeps).
- ``flags``: ``INC`` (the node is nondecreasing in each of its names), ``DEC`` (nonincreasing in each), ``DENSE``
  (it takes every integer between its ends). A name is INC and DENSE, a constant all three; a sum keeps the
  directions its operands share (a difference flips its right side's), a product of operands that are constants
  or ``>= 0`` keeps theirs (a negative constant flips it), as do max, min, ``x//k``, ``ceil(x/k)`` and powers
  (even ones of operands ``>= 0``); a sum (max, min) of dense operands over disjoint names is dense, and so is
  ``-x``, ``x//k``, ``ceil(x/k)`` and ``x % k`` of a dense ``x`` (``k >= 1`` constant, its range not wrapping).

An interval is always sound: every value of the node lies in it. A floor division, ceiling division or modulo
whose divisor may be below 1 is not evaluated here (the general path of :class:`~exprgraph.dims.DimEnv` decides
what it means), nor is an op this module does not know: the term then has no interval (``()``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from ..core.term import Term
from .ranges import Range, _neg, r_add, r_floordiv, r_mod, r_mul, r_pow
from .terms import ABS, ADD, CEIL_DIV, CONST, FLOORDIV, MAX, MIN, MOD, MUL, NEG, POW, SUB, SYMBOL, is_leaf

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
    "INC",
    "DEC",
    "DENSE",
    "difference",
    "summands",
]

#: ``(lo, hi, exact, names, flags)``: the bounds, whether they are the least and greatest values, the names' bit
#: mask, the facts INC / DEC / DENSE (bits)
Interval = tuple
#: the node is nondecreasing in each of its names
INC: Final = 1
#: the node is nonincreasing in each of its names
DEC: Final = 2
#: the node takes every integer between its ends
DENSE: Final = 4
#: a constant: monotone both ways, and dense
_CONSTANT: Final = INC | DEC | DENSE
#: the most monomials a side of ``a < q`` is expanded into (a larger one is not compared monomial by monomial)
MAX_MONOMIALS: Final = 64
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
        waiting = False
        for a in args:
            if a not in memo:
                stack.append(a)  # (the node stays below its arguments)
                waiting = True
        if waiting:
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
        return (v, v, True, 0, _CONSTANT) if type(v) is int else NO_INTERVAL
    if op is not SYMBOL:
        return NO_INTERVAL
    name = node.attr[0]  # (a name's attr is (name, dtype, shape): read directly, the property costs a call)
    bit = bits.get(name)
    if bit is None:
        bit = bits[name] = 1 << len(bits)
    lo, hi = name_range(name)
    return (lo, hi, True, bit, INC | DENSE)


def _independent(vals: list[Interval]) -> tuple[bool, int]:
    """Whether every operand is exact and no name is under two of them, and the union of their names."""
    exact = True
    names = 0
    for v in vals:
        if not v[2] or names & v[3]:
            exact = False
        names |= v[3]
    return exact, names


def _disjoint(vals: list[Interval]) -> bool:
    """Whether no name is under two of the operands."""
    names = 0
    for v in vals:
        if names & v[3]:
            return False
        names |= v[3]
    return True


def _flip(f: int) -> int:
    """The flags of ``-x`` from those of ``x``: nondecreasing and nonincreasing swapped."""
    return ((f & INC) << 1) | ((f & DEC) >> 1) | (f & DENSE)


def _call(node: Term, vals: list[Interval], memo: dict[Term, Interval]) -> Interval:
    """The interval of a node from its arguments' (NO_INTERVAL for an op not evaluated here)."""
    op = node.op
    if op is MOD:
        a, q = vals
        if q[0] == q[1] and q[3] == 0 and type(q[0]) is int and q[0] >= 1 and a[4] & DENSE:
            return _mod_dense(a, q[0])
        if a[0] >= 0 and q[0] >= 1 and _below(node.args[0], node.args[1], memo):
            return (a[0], a[1], a[2], a[3] | q[3], a[4])  # 0 <= a < q: a % q == a
    base = _base(node, vals, memo)
    if not base:
        return NO_INTERVAL
    lo, hi, exact, names = base
    flags = _flags(node, vals)
    if flags & DENSE or (not exact and flags & (INC | DEC) and all(v[2] for v in vals)):
        exact = True  # monotone in every name over exact operands: all reach their ends together
    return (lo, hi, exact, names, flags)


def _mod_dense(a: Interval, k: int) -> Interval:
    """``x % k`` for an ``x`` that takes every integer of its interval ``a`` and a constant ``k >= 1``: exact."""
    lo, hi, _, names, flags = a
    if type(lo) is int and type(hi) is int and lo // k == hi // k:  # no wrap: x % k == x - c*k, dense
        return (lo % k, hi % k, True, names, flags)
    if type(lo) is float or type(hi) is float or hi - lo + 1 >= k:  # k consecutive integers: every residue
        return (0, k - 1, True, names, DENSE)
    return (0, k - 1, True, names, 0)  # a wrap: lo%k..k-1 and 0..hi%k, both ends reached


def _flags(node: Term, vals: list[Interval]) -> int:
    """INC / DEC / DENSE of a node from its operands' (see the module's text)."""
    op = node.op
    if op is ADD or op is SUB or op is MAX or op is MIN:  # the directions the operands share (b flipped in a - b)
        d = INC | DEC
        dense = True
        for i, v in enumerate(vals):
            f = _flip(v[4]) if op is SUB and i > 0 else v[4]
            d &= f
            dense = dense and bool(f & DENSE)
        return d | (DENSE if dense and _disjoint(vals) else 0)
    if op is MUL:  # constants and operands >= 0: their shared direction, flipped by a negative constant
        d = INC | DEC
        negative = False
        for v in vals:
            if v[3] == 0 and v[0] == v[1]:
                if v[0] == 0:
                    return _CONSTANT  # x*0 == 0
                if v[0] < 0:
                    negative = not negative
            elif v[0] >= 0:
                d &= v[4]
            else:
                return 0
        return _flip(d & (INC | DEC)) if negative else d & (INC | DEC)
    a = vals[0][4]
    if op is NEG:
        return _flip(a)
    if op is FLOORDIV or op is CEIL_DIV:  # x//k, ceil(x/k) for a constant k >= 1: nondecreasing in x, dense if x is
        return a if vals[1][0] == vals[1][1] and vals[1][3] == 0 else 0
    if op is POW:
        k = vals[1][0]
        if k == 0:
            return _CONSTANT  # x**0 == 1
        if k > _MAX_EXACT_POWER or (k % 2 == 0 and vals[0][0] < 0):
            return 0
        return a if k == 1 else a & (INC | DEC)
    if op is ABS:  # |x| = x for x >= 0, -x for x <= 0
        return a if vals[0][0] >= 0 else _flip(a) if vals[0][1] <= 0 else 0
    return 0


def _base(node: Term, vals: list[Interval], memo: dict[Term, Interval]) -> Interval:
    """``(lo, hi, exact, names)`` of a node from its arguments' (NO_INTERVAL for an op not evaluated here)."""
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
    if op is FLOORDIV or op is CEIL_DIV or op is MOD:
        return _division(op, vals[0], vals[1])
    if op is POW:
        return _power(vals[0], vals[1])
    if op is ABS:  # |x| = x for x >= 0, -x for x <= 0, else within [0, max(-lo, hi)]
        lo, hi, exact, names = vals[0][:4]
        if lo >= 0:
            return (lo, hi, exact, names)
        if hi <= 0:
            return (_neg(hi), _neg(lo), exact, names)
        return (0, max(_neg(lo), hi), False, names)
    return NO_INTERVAL


#: the greatest power whose ends r_pow computes (a greater one may get an open end)
_MAX_EXACT_POWER: Final = 64

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
    return (r[0], r[1], exact, names, 0)


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
    if rest is not None and rest[0][1] < rest[1][0]:
        return True
    d = difference(q, a, memo)  # q - a >= 1, monomial by monomial
    return d is not None and d[0] >= 1


def _node_key(f: tuple[Term, int]) -> int:
    return id(f[0])


def summands(t: Term, sign: int, limit: int) -> list[tuple[Term, int]] | None:
    """``sign * t`` as a sum of signed parts ``(part, +1 or -1)``, through sums, differences and negations (each
    part is another node), or None past ``limit`` parts (a DAG of shared sums is a tree far larger than itself)."""
    parts: list[tuple[Term, int]] = []
    stack = [(t, sign)]
    while stack:
        node, c = stack.pop()
        op = node.op
        if op is ADD:  # (a + b + ...) * c == a*c + b*c + ...
            stack.extend([(x, c) for x in node.args])
        elif op is SUB:  # (a - b - ...) * c == a*c + b*(-c) + ...
            stack.append((node.args[0], c))
            stack.extend([(x, -c) for x in node.args[1:]])
        elif op is NEG:  # (-a) * c == a*(-c)
            stack.append((node.args[0], -c))
        else:
            parts.append((node, c))
        if len(parts) + len(stack) > limit:
            return None
    return parts


def _monomials(t: Term, sign: int, out: dict[tuple, int]) -> bool:
    """Add ``sign * t`` to ``out`` as a sum of ``c * f1**e1 * f2**e2 ...`` (its :func:`summands` as products by
    constants), keyed by the sorted factors (the other nodes) with their powers; False past MAX_MONOMIALS parts."""
    parts = summands(t, sign, MAX_MONOMIALS)
    if parts is None:
        return False
    for node, c in parts:
        fs = _factors(node)
        if fs is None:
            return False
        key = tuple(sorted(fs[1].items(), key=_node_key))
        out[key] = out.get(key, 0) + c * fs[0]
    return True


def difference(a: Term, b: Term, memo: dict[Term, Interval]) -> Range | None:
    """An interval holding every value of ``a - b`` from the monomials left once common ones cancel (``64*f*f + 128*f
    + 64 - (64*f + 64) = 64*f*f + 64*f``), factors' intervals in ``memo``; None past MAX_MONOMIALS or without one."""
    monos: dict[tuple, int] = {}
    if not (_monomials(a, 1, monos) and _monomials(b, -1, monos)):
        return None
    r: Range = (0, 0)
    for key, c in monos.items():
        if c == 0:
            continue  # cancelled
        m: Range = (c, c)
        for f, e in key:
            i = memo.get(f)
            if not i:
                return None
            m = r_mul(m, r_pow(i[:2], e) if e > 1 else i[:2])
        r = r_add(r, m)
    return r


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
    r = r_pow(a[:2], k[0])  # (past _MAX_EXACT_POWER an end may be left open: not exact)
    return (r[0], r[1], a[2] and k[0] <= _MAX_EXACT_POWER and (k[0] % 2 == 1 or a[0] >= 0), a[3])


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
    if (is_leaf(a) and is_leaf(b) and a is not b) or settled(op, ia, ib):
        return SOMETIMES
    rest = cancelled(a, b, memo)  # s0*s1 == s0 where s1 == 1 (s0 >= 1)
    if rest is not None:
        v = relation_of_intervals(op, rest[0], rest[1])
        if v is not None:
            return ALWAYS if v else NEVER
        if settled(op, rest[0], rest[1]):
            return SOMETIMES
    if not ia[3] & ib[3]:
        return ASK  # no name on both sides: nothing cancels between them (their intervals were the difference's)
    d = difference(a, b, memo)  # a OP b  <=>  a - b OP 0
    if d is not None:
        v = relation_of_intervals(op, d, (0, 0))
        if v is not None:
            return ALWAYS if v else NEVER
    return ASK


def quick_bound(
    t: Term, name_range: Callable[[str], Range], memo: dict[Term, Interval], bits: dict[str, int]
) -> Range | None:
    """The least and the greatest value of ``t`` (or its only value) from its interval, or None when the interval
    is not known to be that (the sides' polynomials may give a tighter bound)."""
    i = term_interval(t, name_range, memo, bits)
    if i and (i[2] or i[0] == i[1]):
        return (i[0], i[1])
    return None
