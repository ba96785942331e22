"""Rule combinators: build rules from rules (after Radul's *rules* library and Oryx's port of it).

A rule is any function ``expr -> expr`` that returns its input unchanged when it does not apply.
"Unchanged" is decided by ``==`` (identity on terms, which for interned terms is structural
equality; value equality on plain Python data).

Differences from the seed, all where it would hang or fail: ``iterated`` and ``top_down`` stop
with :class:`~exprgraph.errors.RewriteLimitError` (naming the rule and the step count) instead
of looping forever, and ``iterated`` reports a cycle as soon as a value comes back; every
traversal is iterative, so deep trees work at the default recursion limit; lists and dicts are
accepted wherever the seed needs hashable values; terms are memoised per call.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..core import Term, tree_children, tree_map
from ..errors import RewriteLimitError
from ..match.matcher import values_equal
from .ruleset import RuleSet, make_rule, rule_name
from .treewalk import walk_up

__all__ = [
    "make_rule",
    "rule_list",
    "in_order",
    "iterated",
    "rewrite_subexpressions",
    "bottom_up",
    "top_down",
    "term_rewriter",
    "tree_map",
    "tree_children",
    "Combinator",
]

RuleFn = Callable[[Any], Any]

#: default budget of ``iterated`` (rule applications) and ``top_down`` (nodes visited)
DEFAULT_ITERATIONS = 100_000
DEFAULT_TOP_DOWN_STEPS = 1_000_000


def changed(new: Any, old: Any) -> bool:
    """Whether a rule changed its input, by ``==`` (identity for terms)."""
    return new is not old and not values_equal(new, old)


class Combinator:
    """A rule built by a combinator: callable, with a readable ``name``."""

    __slots__ = ("fn", "name", "parts")

    def __init__(self, fn: RuleFn, name: str, parts: tuple = ()) -> None:
        self.fn = fn
        self.name = name
        self.parts = parts

    def __call__(self, expr: Any) -> Any:
        return self.fn(expr)

    def __repr__(self) -> str:
        return f"<rule {self.name}>"


def _label(kind: str, rules: tuple) -> str:
    return f"{kind}({', '.join(rule_name(r) for r in rules)})"


def rule_list(*rules: RuleFn) -> Combinator:
    """Try the rules in order; return the first result that differs from the input (else the input)."""

    def apply(expr: Any) -> Any:
        for r in rules:
            out = r(expr)
            if changed(out, expr):
                return out
        return expr

    return Combinator(apply, _label("rule_list", rules), rules)


def in_order(*rules: RuleFn) -> Combinator:
    """Apply every rule in turn, each to the previous one's result."""

    def apply(expr: Any) -> Any:
        for r in rules:
            expr = r(expr)
        return expr

    return Combinator(apply, _label("in_order", rules), rules)


def _hashable(x: Any) -> bool:
    try:
        hash(x)
    except TypeError:
        return False
    return True


def iterated(rule: RuleFn, max_steps: int = DEFAULT_ITERATIONS) -> Combinator:
    """Apply ``rule`` until the expression stops changing.

    Raises :class:`RewriteLimitError` when a value comes back (a cycle) or after ``max_steps``
    changes.
    """
    name = f"iterated({rule_name(rule)})"

    def apply(expr: Any) -> Any:
        seen: set[Any] = set()
        steps = 0
        while True:
            out = rule(expr)
            if not changed(out, expr):
                return expr
            steps += 1
            if _hashable(expr):
                seen.add(expr)
                if _hashable(out) and out in seen:
                    raise RewriteLimitError(
                        f"{name} cycles: {_show(out)} came back after {steps} steps",
                        rule_name(rule),
                        steps,
                    )
            if steps >= max_steps:
                raise RewriteLimitError(f"{name} did not converge within {max_steps} steps", rule_name(rule), steps)
            expr = out

    return Combinator(apply, name, (rule,))


def _show(x: Any) -> str:
    if x.__class__ is Term and x.size > 40:
        return f"a {x.op.name} term of {x.size} nodes"
    text = repr(x) if x.__class__ is not Term else str(x)
    return text if len(text) <= 80 else text[:80] + "..."


def rewrite_subexpressions(rule: RuleFn) -> Combinator:
    """Apply ``rule`` to each direct child of the expression (atoms come back unchanged)."""

    def apply(expr: Any) -> Any:
        return tree_map(expr, rule)

    return Combinator(apply, f"rewrite_subexpressions({rule_name(rule)})", (rule,))


def bottom_up(rule: RuleFn) -> Combinator:
    """Rewrite the children first (recursively), then apply ``rule`` once to the rebuilt node."""

    def leave(node: Any, cur: Any) -> tuple[Any, None]:
        return rule(cur), None

    def apply(expr: Any) -> Any:
        return walk_up(expr, leave, memo={})  # terms memoised per call

    return Combinator(apply, f"bottom_up({rule_name(rule)})", (rule,))


def top_down(rule: RuleFn, max_steps: int = DEFAULT_TOP_DOWN_STEPS) -> Combinator:
    """Apply ``rule`` to the expression, then (recursively) to the children of the result.

    A rule that keeps creating new redexes below itself would descend forever: after
    ``max_steps`` nodes this raises :class:`RewriteLimitError`.
    """
    name = f"top_down({rule_name(rule)})"

    def leave(node: Any, cur: Any) -> tuple[Any, None]:
        return cur, None

    def apply(expr: Any) -> Any:
        steps = 0

        def enter(node: Any) -> Any:
            nonlocal steps
            steps += 1
            if steps > max_steps:
                raise RewriteLimitError(
                    f"{name} visited {max_steps} nodes without finishing: the rule keeps creating "
                    "new subexpressions to rewrite (raise max_steps if the tree is that large)",
                    rule_name(rule),
                    steps,
                )
            return rule(node)

        return walk_up(expr, leave, memo={}, enter=enter)  # terms memoised per call

    return Combinator(apply, name, (rule,))


def term_rewriter(*rules: RuleFn, max_steps: int | None = None) -> Combinator:
    """Rewrite to a fixpoint: bottom-up, trying ``rule_list(*rules)`` at each node until nothing changes.

    Uses the :func:`~exprgraph.rules.rewrite` driver (memoised on terms, rules indexed by op).
    """
    from .rewrite import DEFAULT_MAX_STEPS, rewrite

    ruleset = RuleSet(rules)
    budget = DEFAULT_MAX_STEPS if max_steps is None else max_steps

    def apply(expr: Any) -> Any:
        return rewrite(expr, ruleset, max_steps=budget)

    return Combinator(apply, _label("term_rewriter", rules), rules)
