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
from ..match.matcher import values_equal
from . import ruleset as _ruleset
from .profile import RewriteProfile, RuleStats
from .rule import Rule, _guarded_applier, rule_name
from .ruleset import RuleSet
from .treewalk import Walk

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
    memo: dict[Term, Term] | None = None,
) -> Any:
    """Rewrite ``expr`` bottom-up to a normal form of ``rules`` (a RuleSet, rules, rule strings).

    Raises :class:`~exprgraph.errors.RewriteLimitError` on a cycle or after ``max_steps``
    rewrites. Pass a :class:`RewriteProfile` to count tries, matches and time per rule.
    ``memo`` (terms only) carries normal forms from call to call: pass the same dict to rewrites
    with the same ``rules`` and a subterm normalised before is not walked again (it holds only
    finished normal forms, each a function of its term alone, so it stays valid after an error).
    """
    ruleset = as_ruleset(rules)
    if max_steps < 0:
        raise ValueError("max_steps must be >= 0")
    start = time.perf_counter() if profile is not None else 0.0

    if expr.__class__ is Term:
        get, wild, final = _dispatch(ruleset, profile)
        leave = _term_leave(get, wild, profile)
        memo = {} if memo is None else memo
        walk = Walk(leave=_no_tree, leave_term=leave, memo=memo, fixpoint=True, leaves_final=final, max_steps=max_steps)
    else:  # the rule table is built when the walk meets its first term
        walk = Walk(leave=_tree_leave(ruleset, profile), memo={}, fixpoint=True, max_steps=max_steps)
        walk.prepare = _preparer(ruleset, profile)
    out = walk.run(expr)
    if profile is not None:
        profile.time += time.perf_counter() - start
        profile.steps += walk.steps
        profile.nodes += walk.visited
    return out


def _profiled_table(ruleset: RuleSet, profile: RewriteProfile) -> tuple[dict, tuple]:
    table, wild = ruleset.table()
    wrapped: dict[int, tuple] = {}
    clock = time.perf_counter

    def wrap(entry: tuple) -> tuple:
        key = id(entry[0])
        if key in wrapped:
            return wrapped[key]
        rule, bare, guard = entry
        applier = bare if guard is None else _guarded_applier(bare, guard)  # the guard inside the timed call
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

        wrapped[key] = (rule, apply, None)
        return wrapped[key]

    new_table = {op: tuple(wrap(e) for e in entries) for op, entries in table.items()}
    return new_table, tuple(wrap(e) for e in wild)


def _dispatch(ruleset: RuleSet, profile: RewriteProfile | None) -> tuple[Any, tuple, bool]:
    """``(get, wild, leaves_final)``: the rule lookup by op, the rules for every op, and whether
    leaves are their own normal form (no rule can touch them: they are settled without a visit)."""
    index = ruleset.index()
    table, wild = (index.table, index.wild) if profile is None else _profiled_table(ruleset, profile)
    return table.get, wild, not index.reaches_leaves


def _term_leave(get: Any, wild: tuple, profile: RewriteProfile | None) -> Any:
    """The step at a term: the first rule (in rule-set order) whose result differs, walked again."""

    def leave_term(  # the defaults make the captured values locals: this runs once per node
        node: Term, cur: Term, get: Any = get, wild: tuple = wild, profile: Any = profile
    ) -> tuple[Term, Any]:
        for rule, apply, guard in get(cur.op, wild):
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
            if guard is not None and not guard(cur, res):
                continue  # the rule's guard declines the result (here rather than in a wrapper: one call less a try)
            if res.shape != cur.shape:
                continue  # a rewrite must not change the shape: decline it
            if profile is not None:
                profile.stats(rule_name(rule)).rewrites += 1
            return res, rule
        return cur, None  # a normal form

    return leave_term


def _preparer(ruleset: RuleSet, profile: RewriteProfile | None) -> Any:
    """What sets a walk's term step and leaf rule from the rule table (when its first term is met)."""

    def prepare(walk: Walk) -> None:
        get, wild, walk.leaves_final = _dispatch(ruleset, profile)
        walk.leave_term = _term_leave(get, wild, profile)

    return prepare


def _no_tree(node: Any, cur: Any) -> tuple[Any, Any]:  # pragma: no cover - a term has only terms below it
    return cur, None


def _changed(new: Any, old: Any) -> bool:
    return new is not old and not values_equal(new, old)


def _tree_leave(ruleset: RuleSet, profile: RewriteProfile | None) -> Any:
    """The step at a node of a plain tree: the first rule whose result differs (by ``==``), walked again."""
    rules = list(ruleset)
    stats = [profile.stats(rule_name(r)) for r in rules] if profile is not None else None
    clock = time.perf_counter

    def leave(node: Any, cur: Any) -> tuple[Any, Any]:
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
                return cand, r  # normalise the result in the node's place
        return cur, None

    return leave


_ruleset.rewriter = rewrite
