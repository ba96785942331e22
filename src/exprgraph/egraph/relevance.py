"""Which rules can act on a term: a cheap reachability check over op names, before any e-graph is built.

A rule's left-hand side needs some ops (``sin(a)**2 + cos(a)**2`` needs ``add``, ``pow``, ``sin`` and
``cos``); its right-hand side adds some (``cosh(a)**2 - 1 -> sinh(a)**2`` adds ``sinh``). Starting
from the ops of a term, the rules whose needs are met add what they produce, until nothing changes:
a rule outside that closure can never match anywhere in an e-graph grown from the term (the e-graph
holds the term's nodes, what rules add, and folded constants). :func:`active_rules` keeps the rules
inside the closure, in their order, so a saturation searches only those; the answer is cached per
set of ops (terms are interned, their op sets few).

Needs are read conservatively: only op patterns count (a variable, a constant, a wildcard or an
alternative needs nothing), and a rule whose right-hand side is not a pattern (a handler) or builds
an op bound by a variable may produce any op, which makes every rule active.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable, Sequence
from functools import lru_cache

from ..core import Op, Term, postorder
from ..match.patterns import OpPattern, Pattern, Var
from ..rules import Rule

__all__ = ["rule_ops", "term_ops", "active_rules"]

#: ops an e-graph can always hold: leaves, and the constants folding and templates make
_ALWAYS = frozenset({"const", "symbol"})
#: what an unreadable right-hand side may produce: every op
_ANY = "*"


def _ops_of(pattern: object, needs: bool) -> frozenset[str]:
    """The op names of a pattern tree (iterative); with ``needs``, only those every match must have."""
    out: set[str] = set()
    stack = [pattern]
    while stack:
        p = stack.pop()
        if p.__class__ is OpPattern:
            assert isinstance(p, OpPattern)
            if isinstance(p.op, Op):
                out.add(p.op.name)
            elif not needs:
                out.add(_ANY)  # an op bound by a variable: anything may be built
            stack.extend(p.args)
        elif isinstance(p, Term):
            out.update(t.op.name for t in postorder((p,)))
        elif isinstance(p, Pattern) and not isinstance(p, Var) and not needs:
            out.add(_ANY)  # an alternative or a segment on the right: unknown
    return frozenset(out)


#: each rule's ``(needs, gives)``, read once (a rule's pattern and right-hand side never change)
_RULE_OPS: weakref.WeakKeyDictionary[Rule, tuple[frozenset[str], frozenset[str]]] = weakref.WeakKeyDictionary()


def rule_ops(rule: Rule) -> tuple[frozenset[str], frozenset[str]]:
    """``(needs, gives)``: the ops every match of ``rule`` needs, and those its result may add (``"*"``: any)."""
    found = _RULE_OPS.get(rule)
    if found is None:
        found = _RULE_OPS[rule] = _read_rule_ops(rule)
    return found


def _read_rule_ops(rule: Rule) -> tuple[frozenset[str], frozenset[str]]:
    """The ``(needs, gives)`` of :func:`rule_ops`, read from the rule's pattern and right-hand side."""
    if rule.pattern is None:
        return frozenset(), frozenset({_ANY})  # a function of the whole term: tried everywhere, builds anything
    needs = _ops_of(rule.pattern, needs=True) - _ALWAYS
    gives = _ops_of(rule.rhs, needs=False) if rule.template is not None else frozenset({_ANY})
    return needs, gives


def term_ops(terms: Iterable[Term]) -> frozenset[str]:
    """The op names of the nodes of ``terms``."""
    return frozenset(t.op.name for t in postorder(tuple(terms)))


def active_rules(rules: Sequence[Rule], ops: frozenset[str]) -> tuple[Rule, ...]:
    """The rules of ``rules`` that can match in an e-graph grown from a term of ``ops`` (their order kept)."""
    return _active(tuple(rules), ops)


@lru_cache(maxsize=512)
def _active(rules: tuple[Rule, ...], ops: frozenset[str]) -> tuple[Rule, ...]:
    """The cached closure behind :func:`active_rules` (keyed by the rule tuple and the op set)."""
    read = [(r, *rule_ops(r)) for r in rules]
    have = set(ops | _ALWAYS)
    changed = True
    while changed and _ANY not in have:
        changed = False
        for _, needs, gives in read:
            if needs <= have and not gives <= have:
                have |= gives
                changed = True
    if _ANY in have:
        return rules
    return tuple(r for r, needs, _ in read if needs <= have)
