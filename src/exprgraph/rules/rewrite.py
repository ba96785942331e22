"""The rewrite driver every layer reuses: ``rewrite(term, rules)`` to a normal form.

Strategy: innermost, bottom-up, to a fixpoint. Children are normalised before their parent;
at a node the first rule (in rule-set order) whose result differs wins, and that result is
normalised in turn (its new subterms first), until no rule applies anywhere. On terms the walk
is iterative and memoised per call: interned terms make a dict keyed by term a complete memo,
so a shared subterm is normalised once however often it occurs. Each node tries only the rules
indexed under its op (see :class:`~exprgraph.rules.RuleSet`).

Termination is not assumed. A term whose normal form is needed while it is being computed is a
cycle (``x + y -> y + x`` and back): it raises :class:`~exprgraph.errors.RewriteLimitError` at
once, naming the rule. Rewrites that keep growing the term stop at ``max_steps`` rule
applications with the same error. A rewrite that would change a term's shape is declined.

Plain Python trees (tuples, lists, dicts, :class:`~exprgraph.core.Expression` nodes) are
rewritten the same way through ``tree_children``/``tree_map``, with ``==`` deciding "changed".
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any

from ..core import Term, as_term
from ..errors import RewriteLimitError
from ..match.matcher import values_equal
from . import ruleset as _ruleset
from .profile import RewriteProfile, RuleStats
from .rule import Rule, rule_name
from .ruleset import RuleSet
from .treewalk import UNSETTLED, walk_up

__all__ = ["rewrite", "RewriteProfile", "RuleStats", "DEFAULT_MAX_STEPS"]

#: default budget of rule applications for one ``rewrite`` call
DEFAULT_MAX_STEPS = 1_000_000


def as_ruleset(rules: Any) -> RuleSet:
    """``rules`` as a RuleSet (a RuleSet, one rule, or an iterable of rules)."""
    if isinstance(rules, RuleSet):
        return rules
    if isinstance(rules, (Rule, str)) or (callable(rules) and not isinstance(rules, Iterable)):
        return RuleSet([rules])
    return RuleSet(rules)


def rewrite(
    expr: Any,
    rules: Any,
    *,
    max_steps: int = DEFAULT_MAX_STEPS,
    profile: RewriteProfile | None = None,
) -> Any:
    """Rewrite ``expr`` bottom-up to a normal form of ``rules`` (a RuleSet, rules, rule strings).

    Raises :class:`~exprgraph.errors.RewriteLimitError` on a cycle or after ``max_steps``
    rewrites. Pass a :class:`RewriteProfile` to count tries, matches and time per rule.
    """
    ruleset = as_ruleset(rules)
    if max_steps < 0:
        raise ValueError("max_steps must be >= 0")
    start = time.perf_counter() if profile is not None else 0.0
    budget = _Budget(max_steps)
    memo: dict[Term, Term] = {}
    if expr.__class__ is Term:
        out = _rewrite_term(expr, ruleset, budget, profile, memo)
    else:
        out = _rewrite_tree(expr, ruleset, budget, profile, memo)
    if profile is not None:
        profile.time += time.perf_counter() - start
        profile.steps += budget.steps
    return out


class _Budget:
    __slots__ = ("steps", "limit")

    def __init__(self, limit: int) -> None:
        self.steps = 0
        self.limit = limit

    def spend(self, rule: Any) -> None:
        self.steps += 1
        if self.steps > self.limit:
            raise RewriteLimitError(
                f"rewriting did not terminate within {self.limit} steps (last rule applied: {rule_name(rule)!r}); "
                "the rules may grow the term forever: raise max_steps or fix the rules",
                rule_name(rule),
                self.steps,
            )


def _cycle(rule: Any, term: Any, steps: int) -> RewriteLimitError:
    shown = str(term) if term.__class__ is not Term or term.size <= 40 else f"a {term.op.name} term"
    return RewriteLimitError(
        f"rule {rule_name(rule)!r} cycles: rewriting {shown} leads back to itself after {steps} steps",
        rule_name(rule),
        steps,
    )


def _profiled_table(ruleset: RuleSet, profile: RewriteProfile) -> tuple[dict, tuple]:
    table, wild = ruleset.table()
    wrapped: dict[int, tuple] = {}
    clock = time.perf_counter

    def wrap(entry: tuple) -> tuple:
        key = id(entry[0])
        if key in wrapped:
            return wrapped[key]
        rule, applier = entry
        st = profile.stats(rule_name(rule))
        if isinstance(rule, Rule) and rule.compiled is not None and rule.guard is None:

            def apply(e: Term) -> Any:  # matches and results timed apart from the tries
                st.tries += 1
                t0 = clock()
                b = rule.match(e)
                out = None
                if b is not None:
                    st.matches += 1
                    out = rule.build(b, e)
                st.time += clock() - t0
                return out

        else:

            def apply(e: Term) -> Any:
                st.tries += 1
                t0 = clock()
                out = applier(e)
                st.time += clock() - t0
                if out is None or out is e:
                    return None
                st.matches += 1
                return out

        wrapped[key] = (rule, apply)
        return wrapped[key]

    new_table = {op: tuple(wrap(e) for e in entries) for op, entries in table.items()}
    return new_table, tuple(wrap(e) for e in wild)


def _dispatch(ruleset: RuleSet, profile: RewriteProfile | None) -> tuple[Any, tuple, bool]:
    """``(get, wild, leaves_final)``: the rule lookup by op, the rules for every op, and whether
    leaves are their own normal form (no rule can touch them: they are settled without a visit)."""
    table, wild = ruleset.table() if profile is None else _profiled_table(ruleset, profile)
    return table.get, wild, not wild and all(op.arity[1] != 0 for op in table)


def _first_rewrite(cur: Term, entries: tuple, profile: RewriteProfile | None, budget: _Budget) -> tuple[Any, Any]:
    """``(rule, result)`` of the first rule of ``entries`` that rewrites ``cur``, or ``(None, None)``."""
    for rule, apply in entries:
        res = apply(cur)
        if res is None or res is cur:
            continue
        if res.__class__ is not Term:
            try:
                res = as_term(res)
            except TypeError:
                raise TypeError(f"rule {rule_name(rule)!r} returned {type(res).__name__}, not a term") from None
            if res is cur:
                continue
        if res.shape != cur.shape:
            continue  # a rewrite must not change the shape: decline it
        if profile is not None:
            profile.stats(rule_name(rule)).rewrites += 1
        budget.spend(rule)
        return rule, res
    return None, None


def _rewrite_term(
    root: Term, ruleset: RuleSet, budget: _Budget, profile: RewriteProfile | None, done: dict[Term, Term]
) -> Term:
    if root in done:
        return done[root]
    get, wild, leaves_final = _dispatch(ruleset, profile)
    pending: set[Term] = set()
    stack: list[Any] = [root]
    push, pop = stack.append, stack.pop
    visited = 0
    while stack:
        node = stack[-1]
        if node.__class__ is tuple:  # (node, cur, out, rule): out's normal form is node's
            node, cur, out, _rule = pop()
            done[node] = done[cur] = done[out]
            pending.difference_update((node, cur))
            continue
        if node in done:
            pop()
            continue
        args, waiting = node.args, False
        for a in args:
            if a not in done:
                if leaves_final and not a.args:
                    done[a] = a
                    continue
                if pending and a in pending:
                    raise _cycle(_culprit(stack, a), a, budget.steps)
                push(a)
                waiting = True
        if waiting:
            continue
        pop()
        visited += 1
        cur = node
        if args:
            new = tuple([done[a] for a in args])
            if new != args:
                cur = Term(node.op, new, node.attr)
                known = done.get(cur)
                if known is not None:
                    done[node] = known
                    continue
                if pending and cur in pending:
                    raise _cycle(_culprit(stack, cur), cur, budget.steps)
        rule, out = _first_rewrite(cur, get(cur.op, wild), profile, budget)
        if out is None:
            done[node] = done[cur] = cur
            continue
        known = done.get(out)
        if known is not None:
            done[node] = done[cur] = known
            continue
        if out is node or out in pending:
            raise _cycle(rule, cur, budget.steps)
        pending.update((node, cur))
        stack += ((node, cur, out, rule), out)  # out's normal form, then node's
    if profile is not None:
        profile.nodes += visited
    return done[root]


def _culprit(stack: list, term: Term) -> Any:
    """The rule whose pending result needs ``term`` while ``term`` is being rewritten."""
    for item in reversed(stack):
        if item.__class__ is tuple:
            return item[3]
    return "?"


def _changed(new: Any, old: Any) -> bool:
    return new is not old and not values_equal(new, old)


def _rewrite_tree(
    expr: Any, ruleset: RuleSet, budget: _Budget, profile: RewriteProfile | None, memo: dict[Term, Term]
) -> Any:
    """The same strategy on any tree (``tree_children``/``tree_map``); term subtrees use the term driver."""
    rules = list(ruleset)
    stats = [profile.stats(rule_name(r)) for r in rules] if profile is not None else None
    clock = time.perf_counter

    def settle(node: Any) -> Any:
        if node.__class__ is Term:
            return _rewrite_term(node, ruleset, budget, profile, memo)
        return UNSETTLED

    def leave(node: Any, cur: Any) -> tuple[Any, bool]:
        for i, r in enumerate(rules):
            if stats is not None:
                stats[i].tries += 1
                t0 = clock()
                cand = r(cur)
                stats[i].time += clock() - t0
            else:
                cand = r(cur)
            if _changed(cand, cur):
                if stats is not None:
                    stats[i].matches += 1
                    stats[i].rewrites += 1
                budget.spend(r)
                return cand, True  # normalise the result in the node's place
        return cur, False

    return walk_up(expr, leave, settle)


_ruleset.rewriter = rewrite
