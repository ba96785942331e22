"""The one bottom-up traversal the rewriting drivers share: children first, then the node.

A :class:`Walk` visits a tree with an explicit stack, so deep trees need no recursion. At each
node, once its children have their values, the node is rebuilt around them (only when one
changed: :func:`~exprgraph.rules.rule.rebuild`) and ``leave(node, rebuilt)`` says what it becomes:
``(value, None)`` is the node's value; ``(value, cause)`` walks ``value`` in the node's place
first (a rewrite's result is normalised in turn; ``cause`` is the rule, named in errors).

Interned terms are walked as a DAG when a ``memo`` dict is given: each distinct term is visited
once and its value kept in the memo (a shared subterm costs one visit however often it occurs),
without a frame. With ``fixpoint=True`` values are normal forms: a rebuilt term shares its
node's value, a rebuilt term already known takes that value at once, and a result that leads
back to a term whose normal form is still being computed is a cycle. A cycle, or more than
``max_steps`` results walked again, raises :class:`~exprgraph.errors.RewriteLimitError` naming
the rule. Other nodes (tuples, lists, dicts and registered types, through ``tree_children``;
terms too when ``enter`` is given) get a frame each. ``enter(node)`` (top-down strategies)
rewrites a node before its children are walked.

Who walks here: the term rewriter (:func:`~exprgraph.rules.rewrite`, hence ``simplify``), the
combinators ``bottom_up`` and ``top_down``, and the e-graph's term conversions. The graph
rewriters (:func:`exprgraph.graph.walking.node_pass`) visit a FunctionGraph's nodes in the same
children-first order (its ``toposort``), each in its current version, and dispatch through the
same op index (:class:`~exprgraph.rules.opindex.OpIndex`) as the term rewriter.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..core import Term, tree_children
from ..errors import RewriteLimitError
from .rule import rebuild, rule_name

__all__ = ["Walk", "walk_up"]

Leave = Callable[[Any, Any], tuple[Any, Any]]

#: the target of a frame that only waits for a term's value from the memo
_FROM_MEMO: Any = object()


def _same(res: list, kids: list) -> bool:
    for r, k in zip(res, kids, strict=True):
        if r is not k:
            return False
    return True


@dataclass(eq=False, slots=True, kw_only=True)
class Walk:
    """One bottom-up walk (see the module docstring); ``run(expr)`` returns the root's value.

    ``leave_term`` (None: ``leave``) is called for terms, ``leave`` for the other nodes;
    ``leaves_final`` says that leaf terms are their own value (they are not visited). A walk
    that walks results again stops after ``max_steps`` of them, or at a cycle (with
    ``fixpoint``), with :class:`~exprgraph.errors.RewriteLimitError` naming the cause.
    ``prepare(walk)`` runs once, before the first term is walked (it may set ``leave_term`` and
    ``leaves_final``). ``visited`` counts the distinct terms visited, ``steps`` the results
    walked again.
    """

    leave: Leave
    leave_term: Leave | None = None
    enter: Callable[[Any], Any] | None = None
    memo: dict | None = None
    fixpoint: bool = False
    leaves_final: bool = False
    max_steps: int = sys.maxsize
    prepare: Callable[[Walk], None] | None = None
    visited: int = 0
    steps: int = 0

    def run(self, expr: Any) -> Any:
        """The value of ``expr``."""
        memo = self.memo
        if memo is not None and self.enter is None and expr.__class__ is Term:
            if expr not in memo:
                if self.prepare is not None:
                    self._ready()
                self._loop([expr], [])
            return memo[expr]
        result: list[Any] = []
        stack: list = [[expr, None, None, None]]
        self._frames(stack, result)
        if stack:  # a term of the DAG walk is on top
            self._loop(stack, result)
        return result[0]

    # Walk the items of ``stack``: terms (the memoised DAG walk, inline: it is the hot loop of every
    # rewrite), frames (lists, stepped by _frames) and markers (tuples: a result's normal form is
    # its node's). ``prepare`` has run: the first item is a term, and _frames readies the walk
    # before it pushes one.
    def _loop(self, stack: list, result: list) -> None:
        memo: dict = self.memo if self.memo is not None else {}
        leave_term, fixpoint, leaves_final = self.leave_term or self.leave, self.fixpoint, self.leaves_final
        pending: set[Term] = set()  # terms whose normal form waits for a result's
        push, pop, value_of = stack.append, stack.pop, memo.__getitem__
        term, visited = Term, 0
        while stack:
            node = stack[-1]
            if node.__class__ is not term:
                if node.__class__ is tuple:  # (node, cur, out, cause): out's value is node's and cur's
                    node, cur, out, _ = pop()
                    memo[node] = memo[cur] = memo[out]
                    pending.difference_update((node, cur))
                else:
                    self._frames(stack, result)
                continue
            if node in memo:
                pop()
                continue
            args, waiting = node.args, False
            for a in args:
                if a not in memo:
                    if leaves_final and not a.args:
                        memo[a] = a
                        continue
                    if pending and a in pending:
                        raise self._cycle(_culprit(stack), a)
                    push(a)
                    waiting = True
            if waiting:
                continue
            pop()
            visited += 1
            cur = node
            if args:
                new = tuple(map(value_of, args))
                if new != args:
                    cur = term(node.op, new, node.attr)
                    if fixpoint and cur in memo:
                        memo[node] = memo[cur]
                        continue
                    if pending and cur in pending:
                        raise self._cycle(_culprit(stack), cur)
            value, cause = leave_term(node, cur)
            if cause is None:
                memo[node] = value
                if fixpoint:
                    memo[cur] = value
                continue
            self.steps += 1
            if self.steps > self.max_steps:
                raise self._too_many(cause)
            if value in memo:  # a known normal form
                memo[node] = memo[cur] = memo[value]
            elif value is node or value in pending:
                raise self._cycle(cause, cur)
            else:
                pending.update((node, cur))
                stack += ((node, cur, value, cause), value)  # value's normal form, then node's
        self.visited += visited

    def _ready(self) -> None:
        """Run ``prepare`` before the first term is walked."""
        prepare = self.prepare
        if prepare is not None:
            self.prepare = None
            prepare(self)

    def _too_many(self, cause: Any) -> RewriteLimitError:
        """The error for a walk past ``max_steps`` results walked again (``cause`` the last)."""
        name = rule_name(cause)
        return RewriteLimitError(
            f"rewriting did not terminate within {self.max_steps} steps (last rule applied: {name!r}); "
            "the rules may grow the term forever: raise max_steps or fix the rules",
            name,
            self.steps,
        )

    def _cycle(self, cause: Any, term: Any) -> RewriteLimitError:
        """The error for a term whose normal form is needed while it is being computed."""
        shown = str(term) if term.__class__ is not Term or term.size <= 40 else f"a {term.op.name} term"
        name = rule_name(cause)
        return RewriteLimitError(
            f"rule {name!r} cycles: rewriting {shown} leads back to itself after {self.steps} steps", name, self.steps
        )

    def _frames(self, stack: list, result: list) -> None:
        """Step the frames ``[node, children, their values, target]`` on top of the stack (start, walk the
        children, finish), until the stack is empty or a term of the DAG walk is on top."""
        memo, enter, leave = self.memo, self.enter, self.leave
        light = memo is not None and enter is None  # terms take the DAG walk (term frames only wait for it)
        leave_term = self.leave_term or leave
        while stack:
            frame = stack[-1]
            if frame.__class__ is not list:
                return
            node, kids, res, target = frame
            if kids is None:
                if memo is not None and node.__class__ is Term:
                    if node in memo:
                        stack.pop()
                        (stack[-1][2] if stack else result).append(memo[node])
                        continue
                    if light:  # a term inside a tree: the DAG walk gives its value
                        kids, res = (node,), []
                        frame[1], frame[2], frame[3] = kids, res, _FROM_MEMO
                if kids is None:
                    target = frame[3] = node if enter is None else enter(node)
                    frame[1] = kids = list(target.args) if target.__class__ is Term else list(tree_children(target))
                    frame[2] = res = []
            n = len(res)
            if n < len(kids):
                kid = kids[n]
                if not light or kid.__class__ is not Term:
                    stack.append([kid, None, None, None])
                elif kid in memo:  # type: ignore[operator]
                    res.append(memo[kid])  # type: ignore[index]
                else:
                    self._ready()
                    stack.append(kid)
                continue
            stack.pop()
            if target is _FROM_MEMO:
                (stack[-1][2] if stack else result).append(res[0])
                continue
            cur = target if _same(res, kids) else rebuild(target, res)
            if node.__class__ is Term:
                value, cause = leave_term(node, cur)
                if cause is None and memo is not None:
                    memo[node] = value
            else:
                value, cause = leave(node, cur)
            if cause is None:
                (stack[-1][2] if stack else result).append(value)
                continue
            self.steps += 1
            if self.steps > self.max_steps:
                raise self._too_many(cause)
            stack.append([value, None, None, None])  # walked in the node's place: reports to the same parent


def _culprit(stack: list) -> Any:
    """The cause of the innermost pending result (the rule whose result needs the term at hand)."""
    for item in stack[::-1]:  # a reversed copy (an error's path): mypyc fails on reversed() of a list[Any]
        if item.__class__ is tuple:
            return item[3]
    return "?"


def walk_up(
    expr: Any,
    leave: Leave,
    *,
    memo: dict | None = None,
    enter: Callable[[Any], Any] | None = None,
) -> Any:
    """The value of ``expr`` walked bottom-up by ``leave`` (see the module docstring)."""
    return Walk(leave=leave, memo=memo, enter=enter).run(expr)
