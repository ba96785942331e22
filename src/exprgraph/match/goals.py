"""The goals of the matching machine and the helpers that push them.

A goal is a ``(pattern, value, rest)`` link of a persistent list; besides the pattern nodes the
machine meets internal goals (the rest of a sequence, a commutative operand set, a binding, a
test, a run accumulation). This module builds those goals, in particular the operand goals of
op patterns (commutative orders, associative groupings). Imports core, :mod:`.patterns` and
:mod:`.values`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..core import Term
from .patterns import OpPattern, Pattern, Star, Var, _DotType
from .values import CONST, literal_matches, same_value


class _Goal:
    __slots__ = ()


class _SeqRest(_Goal):
    """Match ``pats[i:]`` against ``elems[j:]`` (pats holds runs)."""

    __slots__ = ("pats", "i", "elems", "j", "minrest", "as_str")

    def __init__(self, pats: tuple, i: int, elems: Any, j: int, minrest: tuple, as_str: bool) -> None:
        self.pats, self.i, self.elems, self.j, self.minrest, self.as_str = pats, i, elems, j, minrest, as_str


class _Comm(_Goal):
    """Assign pattern operand ``fixed[i]`` to an unused term operand, then the rest to ``rest``."""

    __slots__ = ("fixed", "i", "eargs", "used", "rest", "group")

    def __init__(self, fixed: tuple, i: int, eargs: tuple, used: int, rest: tuple, group: Any) -> None:
        self.fixed, self.i, self.eargs, self.used, self.rest, self.group = fixed, i, eargs, used, rest, group


class _Bind(_Goal):
    __slots__ = ("name", "value")

    def __init__(self, name: str, value: Any) -> None:
        self.name, self.value = name, value


class _CutMark(_Goal):
    """Goal ``(_CUT, height, rest)``: an independent sub-match ended; its choice points go."""

    __slots__ = ()


_CUT = _CutMark()


class _Check(_Goal):
    __slots__ = ("test",)

    def __init__(self, test: Any) -> None:
        self.test = test


class _Acc(_Goal):
    """Match the elements of a run one by one with fresh accumulated names, collecting their values."""

    __slots__ = ("star", "run", "idx", "values")

    def __init__(self, star: Star, run: tuple, idx: int, values: tuple) -> None:
        self.star, self.run, self.idx, self.values = star, run, idx, values


class _Apply(_Goal):
    __slots__ = ("solution", "skip")

    def __init__(self, solution: dict, skip: tuple) -> None:
        self.solution, self.skip = solution, skip


class _Group:
    """How to rebuild a run of operands of an associative op as one term."""

    __slots__ = ("op", "attr")

    def __init__(self, op: Any, attr: Any) -> None:
        self.op, self.attr = op, attr

    def build(self, run: tuple) -> Any:
        if len(run) == 1:
            return run[0]
        return Term(self.op, run, self.attr)


_FAIL = object()


def _min_lengths(pats: tuple) -> tuple:
    """``out[i]`` = least number of elements ``pats[i:]`` can match."""
    out = [0] * (len(pats) + 1)
    for i in range(len(pats) - 1, -1, -1):
        p = pats[i]
        out[i] = out[i + 1] + (p.min_count if isinstance(p, Star) else 1)
    return tuple(out)


def _seq_goals(pats: tuple, elems: Any, as_str: bool, goals: Any) -> Any:
    """Goals matching the sequence pattern ``pats`` against ``elems``, or _FAIL."""
    if any(isinstance(p, Star) for p in pats):
        minrest = _min_lengths(pats)
        if minrest[0] > len(elems):
            return _FAIL
        return (_SeqRest(pats, 0, elems, 0, minrest, as_str), None, goals)
    n = len(pats)
    if n != len(elems):
        return _FAIL
    for k in range(n - 1, -1, -1):
        goals = (pats[k], elems[k], goals)
    return goals


def _quick_reject(p: Any, e: Any) -> bool:
    """Cheap necessary test used to prune operand orders: True means ``p`` can never match ``e``."""
    cls = p.__class__
    if cls is Var:
        return False
    if cls is OpPattern:
        return e.__class__ is not Term or (e.op is not p.op and p.op.__class__ is not Var)
    if cls is _DotType or isinstance(p, Pattern):
        return False
    if cls is Term:
        if p is e:
            return False
        if e.__class__ is not Term:
            return p.op is not CONST
        return e.op is not p.op
    if cls in (tuple, list, dict):
        return e.__class__ is Term
    return not literal_matches(p, e)


def _flatten_same(op: Any, attr: Any, args: tuple) -> tuple:
    """Operands of nested ``op`` terms (same attr) inlined, left to right, without recursion."""
    out: list = []
    stack = list(reversed(args))
    while stack:
        a = stack.pop()
        if a.__class__ is Term and a.op is op and a.attr == attr and a.args:
            stack.extend(reversed(a.args))
        else:
            out.append(a)
    return tuple(out)


def _compositions(n: int, k: int) -> Iterator[tuple[int, ...]]:
    """Cut points splitting ``n`` items into ``k`` non-empty consecutive runs, earlier runs shortest first."""
    if k == 0:
        if n == 0:
            yield ()
        return
    # iterative odometer over the first k-1 run lengths
    lengths = [1] * k
    while True:
        used = sum(lengths[:-1])
        if n - used >= 1:
            lengths[-1] = n - used
            cuts = []
            acc = 0
            for ln in lengths:
                acc += ln
                cuts.append(acc)
            yield tuple(cuts)
        # advance (last free position first)
        pos = k - 2
        while pos >= 0:
            lengths[pos] += 1
            if sum(lengths[:-1]) <= n - 1:
                break
            lengths[pos] = 1
            pos -= 1
        if pos < 0:
            return


def _runs(items: tuple, cuts: tuple) -> list[tuple]:
    out = []
    start = 0
    for c in cuts:
        out.append(items[start:c])
        start = c
    return out


def _is_var_like(p: Any) -> bool:
    return p.__class__ is Var or p.__class__ is _DotType


# -- operand matching for op patterns and structural term patterns -----------------------------------


def _operand_goals(op: Any, attr: Any, pargs: tuple, eargs: tuple, goals: Any, choices: list, trail_len: int) -> Any:
    """Goals matching the operands of an op pattern against a term's operands (may push choice points)."""
    n, k = len(eargs), len(pargs)
    has_run = any(isinstance(p, Star) for p in pargs)
    if op.commutative and (k >= 2 or has_run):
        return _commutative_goals(op, attr, pargs, eargs, has_run, goals, choices, trail_len)
    if has_run:
        return _seq_goals(pargs, eargs, False, goals)
    if n == k:
        for i in range(k - 1, -1, -1):
            goals = (pargs[i], eargs[i], goals)
        return goals
    if not op.associative:
        return _FAIL
    if k > n:
        eargs = _flatten_same(op, attr, eargs)
        n = len(eargs)
        if n == k:
            for i in range(k - 1, -1, -1):
                goals = (pargs[i], eargs[i], goals)
            return goals
        if n < k:
            return _FAIL
    group = _Group(op, attr)

    def alternatives() -> Iterator[Any]:
        for cuts in _compositions(n, k):
            try:
                parts = [group.build(run) for run in _runs(eargs, cuts)]
            except Exception:
                continue
            g = goals
            for i in range(k - 1, -1, -1):
                g = (pargs[i], parts[i], g)
            yield g

    return _branch(alternatives(), choices, trail_len)


def pair_goals(ok1: bool, ok2: bool, pargs: tuple, eargs: tuple, goals: Any, choices: list, trail_len: int) -> Any:
    """Goals for the two operands of a commutative pair: in order where ``ok1``, swapped where ``ok2``.

    When both orders are possible the swapped one is left as a choice to backtrack into.
    """
    p0, p1 = pargs
    e0, e1 = eargs
    if ok1:
        if ok2:
            choices.append((iter(((p0, e1, (p1, e0, goals)),)), trail_len))
        return (p0, e0, (p1, e1, goals))
    if ok2:
        return (p0, e1, (p1, e0, goals))
    return _FAIL


def _commutative_goals(
    op: Any, attr: Any, pargs: tuple, eargs: tuple, has_run: bool, goals: Any, choices: list, trail_len: int
) -> Any:
    """Operand goals of a commutative op: any operand order, and regrouping when it is associative too."""
    n, k = len(eargs), len(pargs)
    fixed = tuple(p for p in pargs if not isinstance(p, Star))
    rest = tuple(p for p in pargs if isinstance(p, Star))
    if has_run:
        if len(fixed) > n:
            return _FAIL
        return (_Comm(fixed, 0, eargs, 0, rest, None), None, goals)
    if n == k:
        if k == 2:
            p0, p1 = pargs
            e0, e1 = eargs
            ok1 = not (_quick_reject(p0, e0) or _quick_reject(p1, e1))
            ok2 = e0 is not e1 and not (_quick_reject(p0, e1) or _quick_reject(p1, e0))
            return pair_goals(ok1, ok2, pargs, eargs, goals, choices, trail_len)
        return (_Comm(pargs, 0, eargs, 0, (), None), None, goals)
    if not op.associative:
        return _FAIL
    if k > n:
        flat = _flatten_same(op, attr, eargs)
        if len(flat) < k:
            return _FAIL
        if len(flat) == k:
            return (_Comm(pargs, 0, flat, 0, (), None), None, goals)
        eargs, n = flat, len(flat)
    # regroup: fixed sub-patterns take one operand each, variables share the rest in runs
    fixed = tuple(p for p in pargs if not _is_var_like(p))
    varlike = tuple(p for p in pargs if _is_var_like(p))
    if not varlike or len(fixed) + len(varlike) > n:
        return _FAIL
    return (_Comm(fixed, 0, eargs, 0, varlike, _Group(op, attr)), None, goals)


def _alternatives(alts: tuple, e: Any, goals: Any) -> Iterator[Any]:
    for a in alts:
        yield (a, e, goals)


def _branch(alts: Iterator[Any], choices: list, trail_len: int) -> Any:
    """Continue with the first alternative; leave the others on a choice point."""
    first = next(alts, None)
    if first is None:
        return _FAIL
    choices.append((alts, trail_len))
    return first


def _seq_rest(g: _SeqRest, b: dict, goals: Any, choices: list, trail: list) -> Any:
    pats, i, elems, j = g.pats, g.i, g.elems, g.j
    n, m = len(pats), len(elems)
    # consume plain elements up to the next run in one go
    k = i
    while k < n and not isinstance(pats[k], Star):
        k += 1
    if k > i:
        cnt = k - i
        if k == n:
            if j + cnt != m:
                return _FAIL
            rest = goals
        else:
            if j + cnt + g.minrest[k] > m:
                return _FAIL
            rest = (_SeqRest(pats, k, elems, j + cnt, g.minrest, g.as_str), None, goals)
        for t in range(k - 1, i - 1, -1):
            rest = (pats[t], elems[j + (t - i)], rest)
        return rest
    if i == n:
        return goals if j == m else _FAIL
    star = pats[i]
    remaining = m - j
    hi = remaining - g.minrest[i + 1]
    lo = star.min_count
    if hi < lo:
        return _FAIL
    name = star.name
    as_str = g.as_str
    if name is not None and name in b:
        run = b[name]
        c = len(run) if isinstance(run, (tuple, list, str)) else -1
        if c < lo or c > hi:
            return _FAIL
        got = elems[j : j + c]
        if not as_str:
            got = tuple(got)
        if not same_value(got, run if as_str or isinstance(run, tuple) else tuple(run)):
            return _FAIL
        return (_SeqRest(pats, i + 1, elems, j + c, g.minrest, as_str), None, goals)

    def continuation(c: int) -> Any:
        run = elems[j : j + c]
        if not as_str:
            run = tuple(run)
        nxt: Any = (_SeqRest(pats, i + 1, elems, j + c, g.minrest, as_str), None, goals)
        if name is not None:
            nxt = (_Bind(name, run), None, nxt)
        inner = star.pattern
        if star.accumulate:
            return (_Acc(star, tuple(run), 0, ()), None, nxt)
        if inner.__class__ is not _DotType:
            for t in range(c - 1, -1, -1):
                nxt = (inner, run[t], nxt)
        return nxt

    counts = range(hi, lo - 1, -1) if star.greedy else range(lo, hi + 1)
    return _branch((continuation(c) for c in counts), choices, len(trail))


def _comm_step(g: _Comm, goals: Any, choices: list, trail_len: int) -> Any:
    fixed, i, eargs, used = g.fixed, g.i, g.eargs, g.used
    if i == len(fixed):
        rest_elems = tuple(a for t, a in enumerate(eargs) if not used >> t & 1)
        if g.group is None:
            if not g.rest:
                return goals if not rest_elems else _FAIL
            return _seq_goals(g.rest, rest_elems, False, goals)
        # regrouping: the variables share the remaining operands in consecutive runs
        k = len(g.rest)
        if len(rest_elems) < k:
            return _FAIL
        group, rest = g.group, g.rest

        def regroupings() -> Iterator[Any]:
            for cuts in _compositions(len(rest_elems), k):
                try:
                    parts = [group.build(run) for run in _runs(rest_elems, cuts)]
                except Exception:
                    continue
                nxt = goals
                for t in range(k - 1, -1, -1):
                    nxt = (rest[t], parts[t], nxt)
                yield nxt

        return _branch(regroupings(), choices, trail_len)
    p = fixed[i]
    cands = [t for t in range(len(eargs)) if not used >> t & 1 and not _quick_reject(p, eargs[t])]
    if not cands:
        return _FAIL
    # identical operands give identical matches: try each distinct one once
    seen: set[int] = set()
    uniq = []
    for t in cands:
        key = id(eargs[t])
        if key not in seen:
            seen.add(key)
            uniq.append(t)

    def assign(t: int) -> Any:
        return (p, eargs[t], (_Comm(fixed, i + 1, eargs, used | (1 << t), g.rest, g.group), None, goals))

    return _branch((assign(t) for t in uniq), choices, trail_len)
