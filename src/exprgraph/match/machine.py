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
    _comm_step,
    _CutMark,
    _operand_goals,
    _quick_reject,
    _seq_goals,
    _seq_rest,
    _SeqRest,
    pair_goals,
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


class _Search:
    """The cut bookkeeping of one :func:`solve` call.

    With ``first``, an independent sub-match (a branching op pattern in ``cuts``, or a structural
    term pattern) is cut once it has matched. ``attempts`` holds the sub-matches in progress as
    ``(choice depth, (pattern, value))`` and ``failed`` those known to fail: an independent
    sub-pattern fails against a value whatever the other bindings, so it is tried only once.
    """

    __slots__ = ("cut_all", "cut_ids", "use_cuts", "attempts", "failed")

    def __init__(self, first: bool, cuts: Cuts) -> None:
        self.cut_all = first and cuts.all
        self.cut_ids = cuts.ids if first else frozenset()
        self.use_cuts = first
        self.attempts: list[tuple[int, tuple[Any, Any]]] = []
        self.failed: set[tuple[Any, Any]] = set()

    def cut_after(self, key: tuple[Any, Any], goals: Any, depth: int) -> Any:
        """``goals`` behind a cut mark for the sub-match ``key`` (or _FAIL when it is known to fail)."""
        if self.failed and key in self.failed:
            return _FAIL
        self.attempts.append((depth, key))
        return (_CUT, depth, goals)


#: the search of every match: no cuts, so nothing to record (shared by every such call)
_ALL_MATCHES = _Search(False, NO_CUTS)


def solve(pattern: Any, expr: Any, init: dict | None = None, first: bool = False, cuts: Cuts = NO_CUTS):
    """Generate the binding dicts of every match of ``pattern`` against ``expr`` (the engine).

    With ``first``, stop after the first match and cut where ``cuts`` allows.
    """
    b: dict[str, Any] = dict(init) if init else {}
    trail: list[str] = []
    choices: list[tuple[Iterator[Any], int]] = []
    goals: Any = (pattern, expr, None)
    search = _Search(first, cuts) if first else _ALL_MATCHES
    while True:
        while goals is not None:
            p, e, goals = goals
            cls = p.__class__
            if cls is Var:  # the hot cases inline: variables and plain op patterns
                name = p.name
                if name in b:
                    if not same_value(b[name], e):
                        goals = _FAIL
                        break
                    continue
                if p.restrictions and not all(r(e) for r in p.restrictions):
                    goals = _FAIL
                    break
                b[name] = e
                if choices:
                    trail.append(name)
                continue
            if cls is OpPattern:
                pargs = p.args
                if (
                    e.__class__ is Term
                    and e.op is p.op
                    and not p.branchy
                    and p.attr is e.attr
                    and len(pargs) == len(e.args)
                ):
                    # a fixed-order op with a plain attr, matched operand by operand
                    eargs = e.args
                    for i in range(len(pargs) - 1, -1, -1):
                        goals = (pargs[i], eargs[i], goals)
                    continue
                goals = _op_goals(p, e, goals, choices, len(trail), search)
            elif cls is _DotType:
                continue
            elif cls is Term:
                goals = _term_goals(p, e, goals, choices, len(trail), search)
            else:
                goals = _other_goals(p, e, goals, b, choices, trail, search)
            if goals is _FAIL:
                break
        if goals is None:
            yield dict(b) if not first else b
            if first:
                return
        goals = _backtrack(b, trail, choices, search)
        if goals is None:
            return


def _backtrack(b: dict, trail: list, choices: list, search: _Search) -> Any:
    """The goals of the newest choice point that still has an alternative, bindings made since it undone.

    None when every choice point is exhausted (the enumeration ends).
    """
    attempts = search.attempts
    while choices:
        resume = len(choices) - 1
        while attempts and attempts[-1][0] > resume:
            search.failed.add(attempts.pop()[1])
        alts, tl = choices[-1]
        while len(trail) > tl:
            del b[trail.pop()]
        goals = next(alts, None)
        if goals is not None:
            return goals
        choices.pop()
    return None


def _bind(name: str, value: Any, b: dict, trail: list, choices: list) -> bool:
    """Bind ``name`` to ``value``, or check it against its binding; False when they disagree."""
    if name in b:
        return same_value(b[name], value)
    b[name] = value
    if choices:
        trail.append(name)
    return True


def _op_goals(p: OpPattern, e: Any, goals: Any, choices: list, trail_len: int, search: _Search) -> Any:
    """The goals of an op pattern off the plain path: variable ops, branching (commutative,
    associative, runs), attributes that are patterns; _FAIL when it cannot match."""
    if e.__class__ is not Term or e.op is not p.op:
        if p.op.__class__ is Var and e.__class__ is Term:
            # a variable op: bind it, then match as the pattern of the term's op
            bound = p.for_op(e.op)
            if bound is not None:
                return (p.op, e.op, (bound, e, goals))
        return _FAIL
    pargs, eargs, attr = p.args, e.args, p.attr
    if not p.branchy and attr is e.attr and len(pargs) == len(eargs):
        for i in range(len(pargs) - 1, -1, -1):
            goals = (pargs[i], eargs[i], goals)
        return goals
    if p.branchy and (search.cut_all or id(p) in search.cut_ids):
        goals = search.cut_after((p, e), goals, len(choices))
        if goals is _FAIL:
            return goals
    n = len(pargs)
    if n == len(eargs) and not p.has_star and attr.__class__ is not Var:
        if attr is not e.attr and attr != e.attr:
            return _FAIL
        if not p.op.commutative:
            for i in range(n - 1, -1, -1):
                goals = (pargs[i], eargs[i], goals)
            return goals
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
            return pair_goals(ok1, ok2, pargs, eargs, goals, choices, trail_len)
    if isinstance(attr, Pattern):
        goals = (attr, e.attr, goals)
    elif attr != e.attr:
        return _FAIL
    return _operand_goals(p.op, e.attr, pargs, eargs, goals, choices, trail_len)


def _term_goals(p: Term, e: Any, goals: Any, choices: list, trail_len: int, search: _Search) -> Any:
    """The goals of a structural term pattern: constants by value, other terms op by op."""
    if p is e:
        return goals
    if e.__class__ is not Term:
        return goals if p.op is CONST and const_value_equal(e, p.attr) else _FAIL
    if p.op is not e.op:
        return _FAIL
    if p.op is CONST:
        return goals if const_value_equal(p.attr, e.attr) else _FAIL
    if not p.args or not values_equal(p.attr, e.attr) or len(p.args) != len(e.args):
        return _FAIL
    if search.use_cuts:  # a term binds nothing: its alternatives never matter once it matched
        goals = search.cut_after((p, e), goals, len(choices))
        if goals is _FAIL:
            return goals
    return _operand_goals(p.op, e.attr, p.args, e.args, goals, choices, trail_len)


def _other_goals(p: Any, e: Any, goals: Any, b: dict, choices: list, trail: list, search: _Search) -> Any:
    """The goals of the machine's own goals, the pattern combinators, containers and plain values."""
    cls = p.__class__
    if cls is _SeqRest:
        return _seq_rest(p, b, goals, choices, trail)
    if cls is _Comm:
        return _comm_step(p, goals, choices, len(trail))
    if cls is _CutMark:  # the end of an independent sub-match: it succeeded, drop its alternatives
        del choices[e:]
        search.attempts.pop()
        return goals
    if cls is _Bind:
        return goals if _bind(p.name, p.value, b, trail, choices) else _FAIL
    if cls is _Check:
        return goals if p.test(b) else _FAIL
    if cls is _Acc:
        return _acc_step(p, b, goals, choices, len(trail))
    if cls is _Apply:
        for name, value in p.solution.items():
            if name not in p.skip and name not in b:
                b[name] = value
                if choices:
                    trail.append(name)
        return goals
    if cls is Choice:
        if p.name is not None and not _bind(p.name, e, b, trail, choices):
            return _FAIL
        alts = p.alternatives
        if len(alts) > 1:
            choices.append((_alternatives(alts[1:], e, goals), len(trail)))
        return (alts[0], e, goals)
    if cls is Not:
        return _FAIL if next(solve(p.pattern, e, b, True), None) is not None else goals
    if cls is Where:
        return (p.pattern, e, (_Check(p.test), None, goals))
    if isinstance(p, Star):
        raise PatternError(f"{type(p).__name__} can only stand among the children of a sequence or an op")
    return _data_goals(p, e, goals)


def _data_goals(p: Any, e: Any, goals: Any) -> Any:
    """The goals of a plain Python pattern: tuples, lists, dicts, Expression nodes and literals."""
    cls = p.__class__
    if cls is tuple or cls is list:
        if not isinstance(e, tuple if cls is tuple else (list, tuple, str)):
            return _FAIL
        return _seq_goals(p, e, isinstance(e, str), goals)
    if cls is dict:
        if not isinstance(e, dict) or len(e) != len(p) or any(k not in e for k in p):
            return _FAIL
        for k in reversed(list(p)):
            goals = (p[k], e[k], goals)
        return goals
    if isinstance(p, tuple):  # namedtuples and other tuple subclasses: same type
        if type(e) is not type(p):
            return _FAIL
        return _seq_goals(tuple(p), tuple(e), False, goals)
    if isinstance(p, Expression):
        if type(e) is not type(p):
            return _FAIL
        pk, ek = tuple(tree_children(p)), tuple(tree_children(e))
        if not _head_equal(p, e, len(pk), len(ek)):
            return _FAIL
        return _seq_goals(pk, ek, False, goals)
    if isinstance(p, Pattern):
        raise PatternError(f"unknown pattern node {p!r}")
    return goals if literal_matches(p, e) else _FAIL


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
