"""The matching machine: :func:`solve` enumerates the bindings of every match, without recursion.

Imports core, :mod:`.patterns`, :mod:`.values`, :mod:`.goals` and :mod:`.cuts`; the public
functions over it are in :mod:`.matcher`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..core import Expression, Term, tree_children, tree_map
from ..errors import PatternError
from .cuts import NO_CUTS, Cuts
from .goals import (
    _CUT,
    _FAIL,
    _Acc,
    _alternatives,
    _Apply,
    _Bind,
    _branch,
    _Check,
    _Comm,
    _compositions,
    _CutMark,
    _operand_goals,
    _quick_reject,
    _runs,
    _seq_goals,
    _SeqRest,
)
from .patterns import Choice, Not, OpPattern, Pattern, Star, Var, Where, _DotType
from .values import CONST, const_value_equal, literal_matches, same_value, values_equal

__all__ = ["solve"]


def _head_equal(p: Any, e: Any, np_: int, ne: int) -> bool:
    """Whether two Expression nodes of one type have equal heads (all but their children).

    A class may define ``match_head()``; otherwise the nodes with every child replaced by a
    placeholder are compared with ``==`` (only possible when the child counts agree; with a run
    in the pattern the counts may differ, and then the type alone decides).
    """
    head = getattr(type(p), "match_head", None)
    if head is not None:
        return values_equal(head(p), head(e))
    if vars(object)["__eq__"] is type(p).__eq__ or np_ != ne:  # no __eq__ of its own
        return True
    hole = _Hole()
    try:
        return values_equal(tree_map(p, lambda _: hole), tree_map(e, lambda _: hole))
    except Exception:
        return False


class _Hole:
    __slots__ = ()


def solve(pattern: Any, expr: Any, init: dict | None = None, first: bool = False, cuts: Cuts = NO_CUTS):
    """Generate the binding dicts of every match of ``pattern`` against ``expr`` (the engine).

    With ``first``, stop after the first match and cut where ``cuts`` allows.
    """
    b: dict[str, Any] = dict(init) if init else {}
    trail: list[str] = []
    choices: list[tuple[Iterator[Any], int]] = []
    goals: Any = (pattern, expr, None)
    cut_all = first and cuts.all
    cut_ids = cuts.ids if first else frozenset()
    use_cuts = first
    # independent sub-matches in progress (height, key) and those known to fail: an independent
    # sub-pattern fails against a value whatever the other bindings, so it is tried only once
    attempts: list[tuple[int, tuple[Any, Any]]] = []  # (choice depth, (pattern, term)) of each cut
    failed: set[tuple[Any, Any]] = set()
    while True:
        while goals is not None:
            p, e, goals = goals
            cls = p.__class__
            # --- variables ------------------------------------------------------------------
            if cls is Var:
                name = p.name
                if name in b:
                    if not same_value(b[name], e):
                        goals = _FAIL
                        break
                    continue
                ok = True
                for r in p.restrictions:
                    if not r(e):
                        ok = False
                        break
                if not ok:
                    goals = _FAIL
                    break
                b[name] = e
                if choices:
                    trail.append(name)
                continue
            # --- op patterns ------------------------------------------------------------------
            if cls is OpPattern:
                if e.__class__ is not Term or e.op is not p.op:
                    if p.op.__class__ is Var and e.__class__ is Term:
                        # a variable op: bind it, then match as the pattern of the term's op
                        bound = p.for_op(e.op)
                        if bound is not None:
                            goals = (p.op, e.op, (bound, e, goals))
                            continue
                    goals = _FAIL
                    break
                pargs = p.args
                eargs = e.args
                attr = p.attr
                if not p.branchy and attr is e.attr and len(pargs) == len(eargs):
                    # the common case: a fixed-order op with a plain attr, matched operand by operand
                    if len(pargs) == 2:
                        goals = (pargs[0], eargs[0], (pargs[1], eargs[1], goals))
                    else:
                        for i in range(len(pargs) - 1, -1, -1):
                            goals = (pargs[i], eargs[i], goals)
                    continue
                if p.branchy and (cut_all or id(p) in cut_ids):
                    key = (p, e)
                    if failed and key in failed:
                        goals = _FAIL
                        break
                    attempts.append((len(choices), key))
                    goals = (_CUT, len(choices), goals)
                n = len(pargs)
                if n == len(eargs) and not p.has_star and attr.__class__ is not Var:
                    if attr is not e.attr and attr != e.attr:
                        goals = _FAIL
                        break
                    if not p.op.commutative:
                        for i in range(n - 1, -1, -1):
                            goals = (pargs[i], eargs[i], goals)
                        continue
                    if n == 2:
                        # both operand orders, pruned by a cheap test; cut once both were offered
                        p0, p1 = pargs
                        e0, e1 = eargs
                        q0, q1 = p.arg_ops
                        ok1 = (q0 is None or (e0.op is q0 if q0 is not False else not _quick_reject(p0, e0))) and (
                            q1 is None or (e1.op is q1 if q1 is not False else not _quick_reject(p1, e1))
                        )
                        ok2 = (
                            e0 is not e1
                            and (q0 is None or (e1.op is q0 if q0 is not False else not _quick_reject(p0, e1)))
                            and (q1 is None or (e0.op is q1 if q1 is not False else not _quick_reject(p1, e0)))
                        )
                        if ok1:
                            if ok2:
                                choices.append((iter(((p0, e1, (p1, e0, goals)),)), len(trail)))
                            goals = (p0, e0, (p1, e1, goals))
                            continue
                        if ok2:
                            goals = (p0, e1, (p1, e0, goals))
                            continue
                        goals = _FAIL
                        break
                if isinstance(attr, Pattern):
                    goals = (attr, e.attr, goals)
                elif attr != e.attr:
                    goals = _FAIL
                    break
                goals = _operand_goals(p.op, e.attr, pargs, eargs, goals, choices, len(trail))
                if goals is _FAIL:
                    break
                continue
            if cls is _DotType:
                continue
            # --- structural term patterns -------------------------------------------------------
            if cls is Term:
                if p is e:
                    continue
                if e.__class__ is not Term:
                    if p.op is CONST and const_value_equal(e, p.attr):
                        continue
                    goals = _FAIL
                    break
                if p.op is not e.op:
                    goals = _FAIL
                    break
                if p.op is CONST:
                    if not const_value_equal(p.attr, e.attr):
                        goals = _FAIL
                        break
                    continue
                if not p.args or not values_equal(p.attr, e.attr) or len(p.args) != len(e.args):
                    goals = _FAIL
                    break
                if use_cuts:  # a term binds nothing: its alternatives never matter once it matched
                    key = (p, e)
                    if failed and key in failed:
                        goals = _FAIL
                        break
                    attempts.append((len(choices), key))
                    goals = (_CUT, len(choices), goals)
                goals = _operand_goals(p.op, e.attr, p.args, e.args, goals, choices, len(trail))
                if goals is _FAIL:
                    break
                continue
            # --- internal goals -----------------------------------------------------------------
            if cls is _SeqRest:
                goals = _seq_rest(p, b, goals, choices, trail)
                if goals is _FAIL:
                    break
                continue
            if cls is _Comm:
                goals = _comm_step(p, goals, choices, len(trail))
                if goals is _FAIL:
                    break
                continue
            if cls is _CutMark:  # the end of an independent sub-match: it succeeded, drop its alternatives
                del choices[e:]
                attempts.pop()
                continue
            if cls is _Bind:
                name = p.name
                if name in b:
                    if not same_value(b[name], p.value):
                        goals = _FAIL
                        break
                    continue
                b[name] = p.value
                if choices:
                    trail.append(name)
                continue
            if cls is _Check:
                if not p.test(b):
                    goals = _FAIL
                    break
                continue
            if cls is _Acc:
                goals = _acc_step(p, b, goals, choices, len(trail))
                if goals is _FAIL:
                    break
                continue
            if cls is _Apply:
                for name, value in p.solution.items():
                    if name in p.skip or name in b:
                        continue
                    b[name] = value
                    if choices:
                        trail.append(name)
                continue
            # --- pattern combinators ------------------------------------------------------------
            if cls is Choice:
                name = p.name
                if name is not None:
                    if name in b:
                        if not same_value(b[name], e):
                            goals = _FAIL
                            break
                    else:
                        b[name] = e
                        if choices:
                            trail.append(name)
                alts = p.alternatives
                if len(alts) > 1:
                    choices.append((_alternatives(alts[1:], e, goals), len(trail)))
                goals = (alts[0], e, goals)
                continue
            if cls is Not:
                if next(solve(p.pattern, e, b, True), None) is not None:
                    goals = _FAIL
                    break
                continue
            if cls is Where:
                goals = (p.pattern, e, (_Check(p.test), None, goals))
                continue
            if isinstance(p, Star):
                raise PatternError(f"{type(p).__name__} can only stand among the children of a sequence or an op")
            # --- containers and plain values -------------------------------------------------------
            if cls is tuple or cls is list:
                if cls is tuple:
                    ok = isinstance(e, tuple)
                else:
                    ok = isinstance(e, (list, tuple, str))
                if not ok:
                    goals = _FAIL
                    break
                goals = _seq_goals(p, e, isinstance(e, str), goals)
                if goals is _FAIL:
                    break
                continue
            if cls is dict:
                if not isinstance(e, dict) or len(e) != len(p) or any(k not in e for k in p):
                    goals = _FAIL
                    break
                for k in reversed(list(p)):
                    goals = (p[k], e[k], goals)
                continue
            if isinstance(p, tuple):  # namedtuples and other tuple subclasses: same type
                if type(e) is not type(p):
                    goals = _FAIL
                    break
                goals = _seq_goals(tuple(p), tuple(e), False, goals)
                if goals is _FAIL:
                    break
                continue
            if isinstance(p, Expression):
                if type(e) is not type(p):
                    goals = _FAIL
                    break
                pk, ek = tuple(tree_children(p)), tuple(tree_children(e))
                if not _head_equal(p, e, len(pk), len(ek)):
                    goals = _FAIL
                    break
                goals = _seq_goals(pk, ek, False, goals)
                if goals is _FAIL:
                    break
                continue
            if isinstance(p, Pattern):
                raise PatternError(f"unknown pattern node {p!r}")
            if not literal_matches(p, e):
                goals = _FAIL
                break
        if goals is None:
            yield dict(b) if not first else b
            if first:
                return
        # backtrack to the newest choice point that still has an alternative
        while True:
            if not choices:
                return
            resume = len(choices) - 1
            while attempts and attempts[-1][0] > resume:
                failed.add(attempts.pop()[1])
            alts, tl = choices[-1]
            while len(trail) > tl:
                del b[trail.pop()]
            goals = next(alts, None)
            if goals is None:
                choices.pop()
                continue
            break


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


def _acc_step(g: _Acc, b: dict, goals: Any, choices: list, trail_len: int) -> Any:
    star = g.star
    names = star.accumulate
    if g.idx == len(g.run):
        cols = tuple(tuple(v[t] for v in g.values) for t in range(len(names)))
        nxt = goals
        for t in range(len(names) - 1, -1, -1):
            nxt = (_Bind(names[t], cols[t]), None, nxt)
        return nxt
    outer = {k: v for k, v in b.items() if k not in names}
    elem = g.run[g.idx]

    def continuations() -> Iterator[Any]:
        for sol in solve(star.pattern, elem, outer):
            vals = tuple(sol.get(nm) for nm in names)
            nxt = (_Acc(star, g.run, g.idx + 1, (*g.values, vals)), None, goals)
            yield (_Apply(sol, names), None, nxt)

    return _branch(continuations(), choices, trail_len)
