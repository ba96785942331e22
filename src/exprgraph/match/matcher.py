"""The matcher: ``match``, ``match_all`` and ``is_match`` over patterns, terms and plain Python data.

The engine is an explicit goal machine, never recursion over the data: a goal is a pair
(pattern, value) on a persistent linked list, bindings live in one dict with an undo trail, and
every place with alternatives (a :class:`Choice`, a run length of a :class:`Star`, an operand
order of a commutative op, a grouping of an associative op) pushes a choice point holding an
iterator of continuations. Failing pops the newest choice point, undoes the bindings made since
and resumes with its next continuation; exhausting all choice points ends the enumeration.

So a 10^5-node tree matches at the default recursion limit in time linear in its size. When
only the first match is wanted, a sub-pattern whose variables occur nowhere else is *cut* once
it has matched (its alternatives could never repair a later failure), which keeps matching
big commutative trees linear too.

Matching rules:

- plain values match by ``==``; constants of terms compare by value (a pattern ``1`` matches
  ``const(1.0)``), but booleans only match booleans;
- tuples match tuples, lists match lists and tuples (and strings, character-wise), dicts need
  the same keys; runs (:class:`Star`, :class:`Plus`, :class:`Segment`) may appear in any of
  these sequences and in the operands of an op pattern;
- terms match structurally (op, attr, then operands), so do :class:`Expression` nodes (same
  type, equal heads, then children);
- commutative ops try every operand order (fixed operands first, in order, then any runs take
  the rest in their original order);
- associative ops regroup when the pattern has fewer operands than the term (``V.x + 0``
  matches ``add(a, 0, b)`` with ``x = a + b``; variables take runs, other sub-patterns one
  operand) and flatten nested operands of the same op when it has more.
"""

from __future__ import annotations

import reprlib
from collections.abc import Iterator
from typing import Any

import numpy as np

from ..core import Expression, Term, get_op, tree_children, tree_map
from ..core.leaves import ConstArray
from ..errors import MatchError, PatternError
from .patterns import Choice, Not, OpPattern, Pattern, Star, Var, Where, _DotType, pattern_children

__all__ = ["match", "match_all", "is_match", "first_match", "MatchError"]

CONST = get_op("const")
_BOOLS = (bool, np.bool_)
_NUMBERS = (int, float, bool, np.number, np.bool_)


# -- value comparisons ------------------------------------------------------------------------------


def values_equal(a: Any, b: Any) -> bool:
    """Python ``==`` made total: numpy arrays compare whole (shape and values), errors mean "not equal"."""
    if a is b:
        return True
    if a.__class__ is np.ndarray or b.__class__ is np.ndarray:  # arrays equal arrays only
        return a.__class__ is b.__class__ and _arrays_equal(a, b, False)
    try:
        r = a == b
    except Exception:
        return False
    if r.__class__ is bool:
        return r
    try:
        return bool(r)
    except Exception:
        return False


def _arrays_equal(a: Any, b: Any, numeric: bool) -> bool:
    """Same shape and equal values; with ``numeric``, numbers only, and booleans only equal booleans."""
    try:
        a, b = np.asarray(a), np.asarray(b)
        if a.shape != b.shape:
            return False
        if numeric:
            ka, kb = a.dtype.kind, b.dtype.kind
            if ka not in "biuf" or kb not in "biuf" or (ka == "b") != (kb == "b"):
                return False
        return bool(np.array_equal(a, b))
    except Exception:
        return False


def const_value_equal(v: Any, c: Any) -> bool:
    """Whether the number or array ``v`` equals the constant value ``c`` (booleans only equal booleans)."""
    if v.__class__ is ConstArray or v.__class__ is np.ndarray or c.__class__ is ConstArray:
        return _arrays_equal(getattr(v, "array", v), getattr(c, "array", c), True)
    if (v.__class__ in _BOOLS) != (c.__class__ in _BOOLS):
        return False
    if not isinstance(v, _NUMBERS) or not isinstance(c, _NUMBERS):
        return False
    return bool(v == c)


def same_value(a: Any, b: Any) -> bool:
    """Equality of two bound values: identity for terms (constants by value), ``==`` for plain data."""
    if a is b:
        return True
    if a.__class__ is Term or b.__class__ is Term:
        return (
            a.__class__ is Term
            and b.__class__ is Term
            and a.op is CONST
            and b.op is CONST
            and const_value_equal(a.attr, b.attr)
        )
    return values_equal(a, b)


def literal_matches(p: Any, e: Any) -> bool:
    """A non-pattern, non-container value ``p`` against ``e`` (constants compare by value)."""
    if p is e:
        return True
    if e.__class__ is Term:
        if p.__class__ is Term:
            return False  # structural term patterns are handled by the machine
        return e.op is CONST and const_value_equal(p, e.attr)
    if p.__class__ is Term:
        return p.op is CONST and const_value_equal(e, p.attr)
    return values_equal(p, e)


def _short(x: Any) -> str:
    if x.__class__ is Term:
        if x.args and x.size > 40:
            return f"<{x.op.name} term of {x.size} nodes>"
        return str(x)
    if isinstance(x, Pattern):
        text = str(x)
        return text if len(text) <= 200 else text[:200] + "..."
    return reprlib.repr(x)


# -- internal goals -----------------------------------------------------------------------------------


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
                if ok1:
                    if ok2:
                        choices.append((iter(((p0, e1, (p1, e0, goals)),)), trail_len))
                    return (p0, e0, (p1, e1, goals))
                if ok2:
                    return (p0, e1, (p1, e0, goals))
                return _FAIL
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


# -- pattern analysis: where a cut is safe -------------------------------------------------------------


def _names_of(p: Any) -> tuple:
    cls = p.__class__
    if cls is Var:
        return (p.name,)
    if cls is OpPattern:
        return (p.op.name,) if p.op.__class__ is Var else ()
    if cls is Choice:
        return (p.name,) if p.name else ()
    if isinstance(p, Star):
        return ((p.name,) if p.name else ()) + p.accumulate
    return ()


class Cuts:
    """Where the matcher may cut: ``all`` means at every branching op pattern, else the ids in ``ids``."""

    __slots__ = ("all", "ids")

    def __init__(self, all_: bool, ids: frozenset) -> None:
        self.all = all_
        self.ids = ids

    def __bool__(self) -> bool:
        return self.all or bool(self.ids)


NO_CUTS = Cuts(False, frozenset())


def cut_points(pattern: Any) -> Cuts:
    """Where the first-match machine may cut (discard the alternatives of a finished sub-match).

    An op pattern qualifies when every name inside it occurs nowhere else, it is not inside a run
    (matched repeatedly), and, if it holds names, the pattern has no :class:`Where` test (which
    reads every binding). Structural term patterns bind nothing and always qualify. The common
    case, every name used once and no runs or tests, needs no further analysis.
    """
    # first pass: is any name repeated, is there a run or a test? (usually not: then cut everywhere)
    seen: set[str] = set()
    repeated = False
    special = False
    stack: list[Any] = [pattern]
    pop, extend = stack.pop, stack.extend
    while stack:
        node = pop()
        cls = node.__class__
        if cls is Var:
            if node.name in seen:
                repeated = True
            else:
                seen.add(node.name)
        elif cls is OpPattern:
            extend(node.args)
            if isinstance(node.attr, Pattern):
                stack.append(node.attr)
            if node.op.__class__ is Var:
                stack.append(node.op)
        elif cls is Term or cls is _DotType:
            continue
        else:
            if cls is Where or isinstance(node, Star):
                special = True
            for name in _names_of(node):
                if name in seen:
                    repeated = True
                seen.add(name)
            extend(pattern_children(node))
    if not repeated and not special:
        return Cuts(True, frozenset())
    # second pass: the pattern as a tree with parent links, name occurrences, runs and tests
    nodes: list[Any] = []
    parents: list[int] = []
    occurrences: dict[str, list[int]] = {}
    runs: list[int] = []
    has_where = False
    stack2: list[tuple[Any, int]] = [(pattern, -1)]
    while stack2:
        node, par = stack2.pop()
        idx = len(nodes)
        nodes.append(node)
        parents.append(par)
        cls = node.__class__
        if cls is Term:
            continue
        if cls is Where:
            has_where = True
        elif isinstance(node, Star):
            runs.append(idx)
        for name in _names_of(node):
            occurrences.setdefault(name, []).append(idx)
        stack2.extend((k, idx) for k in pattern_children(node))
    n = len(nodes)
    size = [1] * n
    for i in range(n - 1, 0, -1):
        size[parents[i]] += size[i]
    bad = [False] * n

    def mark_up(i: int, lo: int, hi: int) -> None:
        # mark i and its ancestors bad until one whose subtree holds every position in [lo, hi]
        while i >= 0 and not bad[i]:
            if i <= lo and hi < i + size[i]:
                return
            bad[i] = True
            i = parents[i]

    for occ in occurrences.values():
        if has_where:
            for i in occ:
                mark_up(i, -1, n)  # every holder of a name is bad: the test reads it
        elif len(occ) > 1:
            lo, hi = min(occ), max(occ)
            for i in occ:
                mark_up(i, lo, hi)
    for r in runs:  # everything inside a run is matched repeatedly
        for i in range(r + 1, r + size[r]):
            bad[i] = True
    good: dict[int, bool] = {}
    for i in range(n):
        node = nodes[i]
        if node.__class__ is OpPattern and node.branchy:
            good[id(node)] = good.get(id(node), True) and not bad[i]
    return Cuts(False, frozenset(k for k, v in good.items() if v))


# -- the machine -----------------------------------------------------------------------------------------


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


# -- public API ----------------------------------------------------------------------------------------


def _compiled_for(pattern: Any) -> Any:
    if pattern.__class__ is OpPattern:
        comp = pattern._compiled
        if comp is None:
            from .compile import compile_pattern

            comp = compile_pattern(pattern)
            pattern._compiled = comp
        return comp
    return None


def first_match(pattern: Any, expr: Any, bindings: dict | None = None) -> dict | None:
    """The first match's bindings, or None (the fast path rules use)."""
    comp = _compiled_for(pattern)
    if comp is not None:
        return comp.first(expr, bindings)
    return next(solve(pattern, expr, bindings, True, cut_points(pattern)), None)


def match(pattern: Any, expr: Any, bindings: dict[str, Any] | None = None) -> dict[str, Any]:
    """Match ``pattern`` against ``expr``: the bindings of the first match, or raise :class:`MatchError`."""
    found = first_match(pattern, expr, bindings)
    if found is None:
        raise MatchError(f"{_short(pattern)} does not match {_short(expr)}")
    return found


def match_all(pattern: Any, expr: Any, bindings: dict[str, Any] | None = None) -> Iterator[dict[str, Any]]:
    """Lazily enumerate the bindings of every match, in the order the alternatives are tried."""
    return solve(pattern, expr, bindings, False)


def is_match(pattern: Any, expr: Any, bindings: dict[str, Any] | None = None) -> bool:
    """Whether ``pattern`` matches ``expr``."""
    return first_match(pattern, expr, bindings) is not None
