"""Relations that hold at some values and fail at others, shown without the polynomials: the quick "undecided".

:func:`~exprgraph.dims.intervals.quick_relation` says ASK when the intervals of the two sides neither decide a
relation nor settle that nothing does; the general path of :class:`~exprgraph.dims.DimEnv` then works on the
sides' polynomials, which costs a hundred times more, and for most of these questions finds that the answer
depends on the values. :func:`sometimes` shows that cheaply, in two sound ways:

- ``a == b`` (``a != b``) for sides over disjoint sets of names with exact intervals (each side reaches its
  ends, independently of the other): both sides reach a common value when an end of one is an end of the other,
  or lies inside the other side's interval while that side takes every integer between its ends (DENSE); they
  differ elsewhere unless both are one and the same number (which the intervals decide before).
- two points of the ranges (every name at its least value, every name at its greatest; an open end replaced by
  a value far inside) where the relation is true at one and false at the other: a witness of each answer.

- ``a == c`` (``a != c``) for a constant ``c`` and a side over one name that only rises (or only falls) with it:
  a value of the name where ``a == c`` found by bisection and checked by evaluation.

Both only ever say "undecided": a wrong True would need a relation that holds everywhere to be evaluated false
at a point of the ranges, or two sides that never meet to reach a common value.

:func:`reached_ends` does the same for a bound: the interval of a term is the answer (nothing is tighter) when the
term reaches both its ends, a finite end as its value at one of the two points, an open end as a polynomial in
one factor (the others held where they are at the least point, over other names) whose leading term grows there.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Final

from ..core.term import Term
from ..core.walk import postorder_until
from .intervals import DEC, DENSE, INC, Interval, _monomials, summands, term_interval
from .ranges import Range
from .terms import (
    ABS,
    ADD,
    CEIL_DIV,
    CONST,
    FLOORDIV,
    INT64_MAX,
    INT64_MIN,
    MAX,
    MIN,
    MOD,
    MUL,
    NEG,
    POW,
    SUB,
    SYMBOL,
    dim_const,
)

__all__ = ["sometimes", "meet", "value_at", "end_values", "reached_ends", "FAR", "MAX_NODES"]

#: how far inside an open range the "far" point lies (from the finite end, or from 0)
FAR: Final = 1 << 20
#: the largest power evaluated at a point (a larger one is not evaluated: no witness)
_MAX_POWER: Final = 64
#: the most distinct nodes of a side evaluated at a point (a larger side is left to the polynomials: a witness is
#: worth looking for only when it costs far less than they do)
MAX_NODES: Final = 40


def meet(op: str, a: Interval, b: Interval) -> bool:
    """Whether ``a == b`` (``op`` eq or ne) holds at some values and fails at others, for exact intervals of sides
    over disjoint names that the intervals alone do not decide (see the module's text)."""
    if op != "eq" and op != "ne":
        return False
    if len(a) < 5 or len(b) < 5 or not (a[2] and b[2]) or a[3] & b[3]:
        return False
    if a[0] == a[1] and b[0] == b[1]:
        return False  # two numbers: never both equal and different
    for x, y in ((a, b), (b, a)):
        for end in (x[0], x[1]):
            if type(end) is not int:
                continue
            if end == y[0] or end == y[1]:
                return True  # both sides reach this value together
            if y[4] & DENSE and y[0] <= end <= y[1]:
                return True  # y takes every integer of its interval: this end of x too
    return False


def _point(name_range: Callable[[str], Range], far: bool) -> Callable[[str], int]:
    """Every name at its least value (``far`` False) or at its greatest (an open end: FAR inside the range)."""

    def at(name: str) -> int:
        lo, hi = name_range(name)
        if far:
            if type(hi) is int:
                return hi
            return lo + FAR if type(lo) is int else FAR
        if type(lo) is int:
            return lo
        return hi - FAR if type(hi) is int else 0

    return at


def value_at(root: Term, point: Callable[[str], int]) -> int | None:
    """The value of an int64 term with each name at ``point(name)`` (Python integers: ``//`` and ``%`` floor, as
    dims' ops), or None when a node is not evaluated here (a divisor below 1, a large or negative power, a call) or
    the term has more than MAX_NODES distinct nodes."""
    vals: dict[Term, int] = {}
    stack = [root]
    while stack:
        node = stack.pop()
        if node in vals:
            continue
        args = node.args
        waiting = False
        for a in args:
            if a not in vals:
                if not waiting:
                    stack.append(node)  # again, once its arguments are done
                    waiting = True
                stack.append(a)
        if waiting:
            continue
        v = _apply(node, [vals[a] for a in args] if args else [], point)
        if v is None or len(vals) >= MAX_NODES:
            return None
        vals[node] = v
    return vals[root]


def _apply(node: Term, a: list[int], point: Callable[[str], int]) -> int | None:
    """The value of one node from its arguments' values (None: not evaluated here)."""
    op = node.op
    if op is CONST:
        return node.attr if type(node.attr) is int else None
    if op is SYMBOL:
        return point(node.attr[0])
    if op is ADD:
        return sum(a)
    if op is MUL:
        out = 1
        for x in a:
            out *= x
        return out
    if op is SUB:  # a - b - ...
        return a[0] - sum(a[1:])
    if op is NEG:
        return -a[0]
    if op is MAX:
        return max(a)
    if op is MIN:
        return min(a)
    if op is ABS:
        return abs(a[0])
    if op is FLOORDIV or op is CEIL_DIV or op is MOD:
        n, d = a
        if d < 1:
            return None  # a divisor below 1: not evaluated here
        if op is FLOORDIV:
            return n // d
        return -((-n) // d) if op is CEIL_DIV else n % d  # ceil(n/d) == -((-n)//d)
    if op is POW:
        base, k = a
        return base**k if 0 <= k <= _MAX_POWER else None
    return None


def _only_name(t: Term) -> str | None:
    """The name of the first name node under ``t`` (None if there is none)."""
    stack = [t]
    while stack:
        node = stack.pop()
        if node.op is SYMBOL:
            return node.attr[0]
        stack.extend(node.args)
    return None


def _attained(t: Term, it: Interval, ic: Interval, name_range: Callable[[str], Range]) -> bool:
    """Whether ``t`` (over one name, nondecreasing or nonincreasing in it) is seen both equal to the constant of
    ``ic`` and different from it, at values of its name found by a search that the direction guides (each is
    checked by evaluation: a witness, whatever the direction)."""
    if len(it) < 5 or ic[3] != 0 or ic[0] != ic[1] or type(ic[0]) is not int:
        return False
    names, flags = it[3], it[4]
    if names == 0 or names & (names - 1) or not flags & 3:  # one name, INC or DEC
        return False
    name = _only_name(t)
    if name is None:
        return False
    lo, hi = name_range(name)
    if type(lo) is not int:
        return False
    c = ic[0]
    sign = 1 if flags & 1 else -1  # search the first x where sign*t(x) >= sign*c
    first = _first_reaching(t, lo, hi, sign, c)
    if first is None or value_at(t, lambda n: first) != c:
        return False
    at_lo = value_at(t, lambda n: lo)
    return (at_lo is not None and at_lo != c) or _differs_after(t, first, hi, c)


def _differs_after(t: Term, x: int, hi: int | float, c: int) -> bool:
    """Whether ``t`` at ``x + 1`` (inside the range) differs from ``c``."""
    return x + 1 <= hi and value_at(t, lambda n: x + 1) not in (None, c)


def _first_reaching(t: Term, lo: int, hi: int | float, sign: int, c: int) -> int | None:
    """The least ``x`` in ``[lo, hi]`` where ``sign * t(x) >= sign * c`` if ``sign * t`` is nondecreasing (by
    galloping then bisection; None when none is found or a value is not evaluated)."""

    def reaches(x: int) -> bool | None:
        v = value_at(t, lambda n: x)
        return None if v is None else sign * v >= sign * c

    r = reaches(lo)
    if r is None:
        return None
    if r:
        return lo
    step = 1
    while True:  # lo fails: find a point that reaches
        x = lo + step
        if x > hi:
            if type(hi) is not int:
                return None
            x = hi
        r = reaches(x)
        if r is None:
            return None
        if r:
            break
        if x == hi or step > 1 << 62:
            return None
        step *= 2
    below = lo + step // 2 if step > 1 else lo  # reaches(below) is False, reaches(x) True
    while x - below > 1:
        mid = (below + x) // 2
        r = reaches(mid)
        if r is None:
            return None
        if r:
            x = mid
        else:
            below = mid
    return x


#: ``x OP y`` for two numbers, by the name of the relation
_HOLDS: Final = {"eq": operator.eq, "ne": operator.ne, "lt": operator.lt, "le": operator.le, "gt": operator.gt}
_HOLDS["ge"] = operator.ge


def sometimes(
    op: str,
    a: Term,
    b: Term,
    name_range: Callable[[str], Range],
    memo: dict[Term, Interval] | None = None,
    ends: dict[Term, tuple[int, int] | None] | None = None,
) -> bool:
    """Whether ``a OP b`` (eq ne lt le gt ge) is shown to hold at some values of the ranges and to fail at others:
    by :func:`meet` on the sides' intervals in ``memo`` (when both are there), or by a witness of each answer at
    the least and the farthest points of the ranges. False: not shown (it may still be undecided). ``ends`` keeps
    each node's values at those two points (kept by the caller for one set of ranges, as ``memo``)."""
    if memo is not None:
        ia, ib = memo.get(a), memo.get(b)
        if ia and ib and meet(op, ia, ib):
            return True
        if ia and ib and (op == "eq" or op == "ne") and _attained(a, ia, ib, name_range):
            return True
        if ia and ib and (op == "eq" or op == "ne") and _attained(b, ib, ia, name_range):
            return True
    table: dict[Term, tuple[int, int] | None] = {} if ends is None else ends
    va = end_values(a, name_range, table)
    if va is None:
        return False
    vb = end_values(b, name_range, table)
    if vb is None:
        return False
    holds = _HOLDS[op]
    return bool(holds(va[0], vb[0])) != bool(holds(va[1], vb[1]))


def end_values(
    root: Term, name_range: Callable[[str], Range], ends: dict[Term, tuple[int, int] | None]
) -> tuple[int, int] | None:
    """The values of an int64 term at the least and the farthest points of the ranges (see :func:`_point`), or None
    (see :func:`value_at`; at most MAX_NODES nodes evaluated in one call); ``ends`` keeps each node's (None: not
    evaluated), so a node shared by questions is evaluated once."""
    if root in ends:
        return ends[root]
    low, far = _point(name_range, False), _point(name_range, True)
    order = postorder_until((root,), ends.__contains__)  # the nodes not evaluated yet, arguments first
    if len(order) > MAX_NODES:
        return None
    for node in order:
        args = node.args
        pair = _pair(node, [ends[x] for x in args] if args else [], low, far)
        ends[node] = pair
        if pair is None:
            return None  # (a node not evaluated: every node above it is not either)
    return ends[root]


def _pair(
    node: Term, a: list[tuple[int, int] | None], low: Callable[[str], int], far: Callable[[str], int]
) -> tuple[int, int] | None:
    """A node's values at the two points from its arguments' (None when one is not evaluated)."""
    lows = []
    fars = []
    for v in a:
        if v is None:
            return None
        lows.append(v[0])
        fars.append(v[1])
    x = _apply(node, lows, low)
    if x is None:
        return None
    y = _apply(node, fars, far)
    return None if y is None else (x, y)


# -- bounds: the ends of an interval that the term reaches ----------------------------------------------


def _unbounded(monos: dict[tuple, int], v: Term, memo: dict[Term, Interval], at_low: dict[Term, int], up: bool) -> bool:
    """Whether the sum of monomials ``monos`` takes values above (``up``) / below every bound as ``v`` runs to an
    open end of its range, every other factor held at its value at the least point of the ranges (``at_low``;
    factors over names ``v`` does not use: they stay put while ``v`` moves): the polynomial in ``v`` left has a
    leading term that grows."""
    iv = memo.get(v)
    if not iv or not iv[2]:
        return False  # not exact: its open end may not be reached
    coefs: dict[int, int] = {}
    for key, c in monos.items():
        k = 0
        for f, e in key:
            if f is v:
                k = e
                continue
            i = memo.get(f)
            if not i or i[3] & iv[3]:
                return False  # no interval, or a name shared with v
            c *= at_low[f] ** e
        coefs[k] = coefs.get(k, 0) + c
    degree = max((k for k, c in coefs.items() if c != 0), default=0)
    if degree == 0:
        return False
    lead = coefs[degree]
    if iv[1] == float("inf") and (lead > 0) == up:
        return True  # v -> +inf: the leading term's sign
    return iv[0] == float("-inf") and ((lead > 0) == (degree % 2 == 0)) == up  # v -> -inf: sign * (-1)**degree


def reached_ends(
    t: Term,
    it: Interval,
    name_range: Callable[[str], Range],
    memo: dict[Term, Interval],
    ends: dict[Term, tuple[int, int] | None],
) -> bool:
    """Whether ``t`` reaches both ends of its interval ``it`` (then no bound is tighter): a finite end as the value
    at the least or the farthest point of the ranges, an open one as a polynomial in one factor that grows without
    bound there (see :func:`_unbounded`), or as a sum that one name alone takes past every bound (:func:`_grows`)."""
    lo, hi = it[0], it[1]
    finite = [e for e in (lo, hi) if type(e) is int]
    if finite:
        at = end_values(t, name_range, ends)
        if at is None or any(e not in at for e in finite):
            return False
    if len(finite) == 2:
        return True
    monos: dict[tuple, int] = {}
    at_low: dict[Term, int] = {}
    if _monomials(t, 1, monos):
        for key in monos:
            for f, _ in key:
                if f not in at_low:
                    pair = end_values(f, name_range, ends)
                    if pair is None:
                        monos.clear()  # (no polynomial argument: the sums below may still do)
                        break
                    at_low[f] = pair[0]
    for up, end in ((False, lo), (True, hi)):
        if type(end) is int:
            continue
        if monos and any(_unbounded(monos, v, memo, at_low, up) for v in at_low):
            continue
        if not any(_grows(t, n, name_range, up) for n in _open_names(t, name_range)):
            return False
    return True


def _open_names(t: Term, name_range: Callable[[str], Range]) -> list[str]:
    """The names under ``t`` whose range has an open end (at most four, in the order met)."""
    names: list[str] = []
    seen: set[Term] = set()
    stack = [t]
    while stack and len(names) < 4:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        if node.op is SYMBOL:
            lo, hi = name_range(node.attr[0])
            if type(lo) is not int or type(hi) is not int:
                names.append(node.attr[0])
        stack.extend(node.args)
    return names


def _pinned(t: Term, keep: str, low: Callable[[str], int]) -> Term | None:
    """``t`` with every name but ``keep`` replaced by its value at the point ``low`` (None past MAX_NODES nodes,
    or for a value that is not an int64)."""
    order = postorder_until((t,), None)  # arguments first
    if len(order) > MAX_NODES:
        return None
    out: dict[Term, Term] = {}
    for node in order:
        args = node.args
        if node.op is SYMBOL and node.attr[0] != keep:
            v = low(node.attr[0])
            if not INT64_MIN <= v <= INT64_MAX:
                return None
            out[node] = dim_const(v)
        elif args:
            new = tuple([out[x] for x in args])
            value = _apply(node, [x.attr for x in new], low) if all([x.op is CONST for x in new]) else None
            if value is not None and INT64_MIN <= value <= INT64_MAX:
                out[node] = dim_const(value)  # a node of numbers: its value (so that like monomials meet)
            else:
                out[node] = node if new == args else Term(node.op, new, node.attr)
        else:
            out[node] = node
    return out[t]


def _grows(t: Term, name: str, name_range: Callable[[str], Range], up: bool) -> bool:
    """Whether ``t`` takes values above (``up``) / below every bound with every name but ``name`` held at the least
    point of the ranges (at those points ``t`` passes every bound, so it does everywhere): by its parts
    (:func:`_parts_grow`), or by its monomials when they all move the same way (:func:`_monotone_grows`)."""
    pinned = _pinned(t, name, _point(name_range, False))
    if pinned is None:
        return False
    memo: dict[Term, Interval] = {}
    if not term_interval(pinned, name_range, memo, {}):
        return False
    parts = summands(pinned, 1, MAX_NODES)  # (more parts than nodes: sums shared in a DAG, not looked at)
    if parts is None:
        return False
    return _parts_grow(parts, memo, up) or _monotone_grows(pinned, memo, up)


def _parts_grow(parts: list[tuple[Term, int]], memo: dict[Term, Interval], up: bool) -> bool:
    """Whether a sum of signed parts passes every bound above (``up``) / below: one part is exact with that end open
    (it passes every bound as the name moves) while every other part is bounded on the other side."""
    grows = False
    for part, sign in parts:
        i = memo[part]
        lo, hi = (i[0], i[1]) if sign > 0 else (-i[1], -i[0])
        far, near = (hi, lo) if up else (-lo, -hi)  # (below: the same test on -t)
        if near == float("-inf"):
            return False  # this part may fall without bound as the other grows
        grows = grows or (far == float("inf") and bool(i[2]))
    return grows


def _monotone_grows(pinned: Term, memo: dict[Term, Interval], up: bool) -> bool:
    """Whether ``pinned`` (over one name) passes every bound above (``up``) / below, as a sum of monomials
    ``c * f**e`` (like ones merged: ``f + 16*(f//3) - 2*(f//3) == f + 14*(f//3)``) that all rise with the name, or
    all fall: then the sum's least upper bound is the sum of theirs (each reaches it at the same end of the range),
    so one term exact with that end open takes the sum past every bound."""
    monos: dict[tuple, int] = {}
    if not _monomials(pinned, 1, monos):
        return False
    rising = falling = True
    grows = False
    for key, c in monos.items():
        if c == 0 or not key:
            continue  # cancelled, or a number
        if len(key) != 1:
            return False  # a product of factors: not looked at
        f, e = key[0]
        i = memo.get(f)
        if not i or len(i) < 5 or not (e == 1 or i[0] >= 0):
            return False  # (f**e for f >= 0 moves as f does)
        inc, dec = (i[4] & INC, i[4] & DEC) if c > 0 else (i[4] & DEC, i[4] & INC)  # c*f**e rises / falls
        rising = rising and bool(inc)
        falling = falling and bool(dec)
        end = i[1] if (c > 0) == up else i[0]  # the end of f that takes c*f**e past the bound sought
        grows = grows or (bool(i[2]) and end in (float("inf"), float("-inf")))
    return (rising or falling) and grows
