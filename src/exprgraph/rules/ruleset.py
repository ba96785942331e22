"""Rules and rule sets.

A :class:`Rule` pairs a pattern with a right-hand side: a handler called with the bindings as
keyword arguments, or a *template* (a pattern-like tree such as ``V.x`` or ``2 * V.x``) filled in
with the bindings. Calling a rule on an expression returns the rewritten expression, or the input
unchanged when the pattern does not match (or the handler returns ``None`` to decline).

A :class:`RuleSet` is an ordered table of rules indexed by the root op of their patterns, so a
term only tries the rules that can match it, and each rule rejects on op and arity before it
binds anything. ``rewrite(term, ruleset)`` (:mod:`exprgraph.rules.rewrite`) drives it.

This module holds :class:`RuleSet` and re-exports the rule (:mod:`.rule`) and template
(:mod:`.template`) names. It imports :mod:`.rule` and :mod:`.textual`; the driver
(:mod:`.rewrite`) sits above it and registers itself in :data:`rewriter` on import.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from ..core import Op
from .opindex import OpIndex
from .rule import Rule, as_rule, make_rule, rule_name
from .rule import rebuild as rebuild
from .template import Template
from .textual import parse_rules
from .textual import rule as text_rule

__all__ = ["Rule", "RuleSet", "make_rule", "Template"]

#: ``rewrite(expr, ruleset, **options)``; set by :mod:`exprgraph.rules.rewrite` on import
rewriter: Callable[..., Any] | None = None


class RuleSet:
    """An ordered collection of rules, indexed by the root op of their patterns.

    Rules may be :class:`Rule` objects, rule strings (``"x*1 -> x"``) or any callable
    ``expr -> expr``, which the table reads as a Rule without a pattern (:func:`~.rule.as_rule`:
    tried on every node, or on the ops of its ``root_ops``). Earlier rules take precedence.
    """

    def __init__(self, rules: Iterable[Any] = (), *, name: str | None = None) -> None:
        self.name = name
        self._rules: list[Any] = []
        self._index: OpIndex | None = None
        self.extend(rules)

    @classmethod
    def parse(cls, text: str, *, name: str | None = None, functions: dict[str, Callable] | None = None) -> RuleSet:
        """A rule set from text: one ``lhs -> rhs [where cond]`` per line, ``#`` comments."""
        return cls(parse_rules(text, functions=functions), name=name)

    def add(self, rule: Any) -> RuleSet:
        """Append a rule (a Rule, a rule string or a callable); returns the set."""
        if isinstance(rule, str):
            rule = text_rule(rule)
            if isinstance(rule, tuple):  # "a <-> b": the rule and its reverse
                return self.extend(rule)
        if not callable(rule):
            raise TypeError(f"a rule must be a Rule, a rule string or a callable, not {rule!r}")
        self._rules.append(rule)
        self._index = None
        return self

    def extend(self, rules: Iterable[Any]) -> RuleSet:
        """Append several rules; returns the set."""
        if isinstance(rules, (str, Rule)):
            rules = [rules]
        for r in rules:
            self.add(r)
        return self

    def __iter__(self) -> Iterator[Any]:
        return iter(self._rules)

    def __len__(self) -> int:
        return len(self._rules)

    def __getitem__(self, key: int | str) -> Any:
        if isinstance(key, str):
            for r in self._rules:
                if rule_name(r) == key:
                    return r
            raise KeyError(key)
        return self._rules[key]

    def __add__(self, other: Iterable[Any]) -> RuleSet:
        return RuleSet([*self._rules, *other], name=self.name)

    def __repr__(self) -> str:
        label = f" {self.name!r}" if self.name else ""
        return f"<RuleSet{label} of {len(self._rules)} rules>"

    def rules_for(self, op: Op) -> tuple:
        """The rules a term with root op ``op`` tries, in order."""
        table, wild = self.table()
        return tuple(entry[0] for entry in table.get(op, wild))

    def index(self) -> OpIndex:
        """The rules indexed by op, each entry ``(rule, applier, guard)``: what the driver dispatches through
        (the applier without the guard, :meth:`Rule.bare_applier`: the driver checks ``guard`` on a changed result)."""
        if self._index is None:
            entries, leafless = [], []
            for r in self._rules:
                made = as_rule(r)  # plain functions (and relation rules) are rules without a pattern
                entry = (r, made.bare_applier(), made.guard)
                entries.append((entry, made.root_ops or None))
                if not made.leaves:
                    leafless.append(entry)
            self._index = OpIndex(entries, leafless=leafless)
        return self._index

    def table(self) -> tuple[dict, tuple]:
        """``({op: ((rule, applier, guard), ...)}, wildcard entries)``: the dispatch table of the driver."""
        index = self.index()
        return index.table, index.wild

    def __call__(self, expr: Any, **kwargs: Any) -> Any:
        """``rewrite(expr, self, **kwargs)``."""
        if rewriter is None:
            raise TypeError("calling a rule set needs exprgraph.rules.rewrite (import exprgraph.rules)")
        return rewriter(expr, self, **kwargs)
