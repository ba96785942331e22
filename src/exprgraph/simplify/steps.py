"""The log ``simplify(explain=True)`` is made of: each rule's rewrites, the driver's memoised reuses included.

An entry is ``(rule name, subterm before, subterm after)``; the explanation replays the entries in
order, each rewriting every occurrence of its subterm (as one call of the memoised driver does).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..core import Term, as_term, postorder, substitute
from ..rules import Rule, RuleSet
from ..rules.rule import as_rule

__all__ = ["LogEntry", "with_reuses", "step", "recording"]

#: a rewrite of the log an explanation is made from: ``(rule name, subterm before, subterm after)``
LogEntry = tuple[str, Term, Term]


def with_reuses(start: Term, entries: list[LogEntry]) -> list[LogEntry]:
    """The log of one ``rewrite`` call from ``start`` with the rewrites its memo reused written out.

    A term already rewritten in the call takes its value from the memo, no rule applied, wherever it
    occurs again: in a rule's result (``2.0/x -> 2.0*x**-1.0``, ``x**-1.0 -> x**-1``, then ``x/x ->
    x*x**-1.0`` meets ``x**-1.0`` again) or rebuilt from rewritten operands (``----x``: ``--x -> x``
    makes the outer ``--x`` again). Each such reuse is logged again where the driver took it."""
    done: dict[Term, LogEntry] = {}
    out: list[LogEntry] = []
    current = start
    for entry in entries:
        out.append(entry)
        done.setdefault(entry[1], entry)
        current = step(current, entry)
        for _ in range(4 * len(done) + 16):  # each reuse rewrites toward a normal form: a few per rewrite
            hit = next((done[t] for t in postorder((current,)) if t in done), None)
            if hit is None:
                break
            out.append(hit)
            current = step(current, hit)
    return out


def step(current: Term, entry: LogEntry) -> Term:
    """``current`` with the rewrite ``entry`` applied wherever its subterm occurs (the memo's reading)."""
    return entry[2] if entry[1] is current else substitute(current, {entry[1]: entry[2]})


def recording(ruleset: RuleSet, log: list[LogEntry]) -> RuleSet:
    """``ruleset`` with each rule wrapped to append its rewrites to ``log`` (same order, same ops)."""
    wrapped = []
    for r in ruleset:
        made = as_rule(r)
        wrapped.append(
            Rule.of_function(
                _logged(made.term_applier(), made.name, log), name=made.name, ops=made.root_ops, tag=made.tag
            )
        )
    return RuleSet(wrapped, name=ruleset.name)


def _logged(apply: Callable[[Term], Any], name: str, log: list[LogEntry]) -> Callable[[Term], Any]:
    """``apply``, appending ``(name, before, after)`` to ``log`` for each rewrite the driver will keep."""

    def logged(t: Term) -> Any:
        out = apply(t)
        if out is None or out is t:
            return out
        out = as_term(out)
        if out is not t and out.shape == t.shape:
            log.append((name, t, out))
        return out

    return logged
