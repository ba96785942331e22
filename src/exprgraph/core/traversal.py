"""Traversal: iterative walks over terms, and the single-dispatch tree protocol for any tree.

``tree_children`` and ``tree_map`` are registered for Term, tuple, list, dict and the
:class:`Expression` base class, so rule engines work on plain Python data as on terms.
"""

from __future__ import annotations

from collections.abc import Callable, Container, Iterable, Iterator, Mapping
from functools import singledispatch
from typing import Any

from .op import as_term
from .term import Term
from .walk import postorder as _postorder
from .walk import postorder_until

__all__ = ["postorder", "toposort", "schedule", "preorder", "Expression", "tree_children", "tree_map", "substitute"]


def postorder(term: Term | Iterable[Term]) -> list[Term]:
    """Distinct nodes under ``term`` (or several terms), every child before its parents."""
    if isinstance(term, Term):
        return _postorder((term,))
    return _postorder(term)


def toposort(outputs: Iterable[Term]) -> list[Term]:
    """Distinct nodes of the DAG of ``outputs`` in dependency (topological) order."""
    return _postorder(outputs)


def schedule(outputs: Iterable[Term], leaves: Container[Term] = ()) -> tuple[list[Term], dict[Term, int]]:
    """The DAG's nodes in dependency order and, for each, how many operand slots read it.

    The order is ``toposort(outputs)`` (depth first, operands left to right, so evaluation holds
    about as many arrays as Python would for the same expression); the reads are counted in the
    same iterative walk. Every output counts one extra read that is never released, so outputs
    are neither freed nor overwritten. Terms in ``leaves`` are taken as leaves: nothing below
    them is visited (values given for intermediate nodes).
    """
    reads: dict[Term, int] = {}
    order: list[Term] = []
    append = order.append
    for root in outputs:
        if root in reads:
            reads[root] += 1
            continue
        reads[root] = 1
        if not root.args or root in leaves:
            append(root)
            continue
        path = [root]  # the nodes being visited, each with an iterator over its operands
        pending = [iter(root.args)]
        while pending:
            for child in pending[-1]:
                if child in reads:
                    reads[child] += 1
                    continue
                reads[child] = 1
                if child.args and child not in leaves:
                    path.append(child)
                    pending.append(iter(child.args))
                    break
                append(child)
            else:
                pending.pop()
                append(path.pop())
    return order, reads


def preorder(term: Term) -> Iterator[Term]:
    """Distinct nodes under ``term``, each parent before its children (depth first, left first)."""
    seen: set[Term] = set()
    stack = [term]
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        yield node
        stack.extend(reversed(node.args))


class Expression:
    """Base class for user tree nodes: subclasses define ``tree_children`` and ``tree_map``."""

    def tree_children(self) -> Iterable[Any]:
        """The children of this node, in order."""
        raise NotImplementedError(f"{type(self).__name__} must define tree_children()")

    def tree_map(self, fn: Callable[[Any], Any]) -> Any:
        """A node like this one with ``fn`` applied to each child."""
        raise NotImplementedError(f"{type(self).__name__} must define tree_map()")


@singledispatch
def tree_children(expr: Any) -> Iterator[Any]:
    """The children of ``expr`` (none for atoms); register new types with ``tree_children.register``."""
    return iter(())


@singledispatch
def tree_map(expr: Any, fn: Callable[[Any], Any]) -> Any:
    """``expr`` with ``fn`` applied to each direct child (atoms come back unchanged)."""
    return expr


@tree_children.register
def _(expr: Term) -> Iterator[Any]:
    return iter(expr.args)


@tree_map.register
def _(expr: Term, fn: Callable[[Any], Any]) -> Any:
    if not expr.args:
        return expr
    new = tuple(fn(a) for a in expr.args)
    if all(a is b for a, b in zip(new, expr.args, strict=True)):
        return expr
    return expr.op(*new, attr=expr.attr)


@tree_children.register
def _(expr: tuple) -> Iterator[Any]:
    return iter(expr)


@tree_map.register
def _(expr: tuple, fn: Callable[[Any], Any]) -> Any:
    new = tuple(fn(a) for a in expr)
    if hasattr(expr, "_fields"):  # namedtuple
        return type(expr)(*new)
    return new


@tree_children.register
def _(expr: list) -> Iterator[Any]:
    return iter(expr)


@tree_map.register
def _(expr: list, fn: Callable[[Any], Any]) -> Any:
    return [fn(a) for a in expr]


@tree_children.register
def _(expr: dict) -> Iterator[Any]:
    return iter(expr.values())


@tree_map.register
def _(expr: dict, fn: Callable[[Any], Any]) -> Any:
    return {k: fn(v) for k, v in expr.items()}


@tree_children.register
def _(expr: Expression) -> Iterator[Any]:
    return iter(expr.tree_children())


@tree_map.register
def _(expr: Expression, fn: Callable[[Any], Any]) -> Any:
    return expr.tree_map(fn)


def substitute(term: Term, mapping: Mapping[Term, Any] | Mapping[str, Any] | Mapping[Term | str, Any]) -> Term:
    """``term`` with every occurrence of a key of ``mapping`` replaced by its value (iteratively).

    A key is a term, or (as in ``evaluate``) a name standing for the symbols of ``term`` so named;
    a term key wins over its name. Values are terms or numbers.
    """
    repl: dict[Term, Term] = {}
    names: dict[str, Any] = {}
    for key, value in mapping.items():
        if isinstance(key, str):
            names[key] = value
        else:
            repl[key] = as_term(value)
    if names:
        for sym in term.free_symbols:
            name = sym.attr[0]
            if name in names and sym not in repl:
                repl[sym] = as_term(names[name])
    if term in repl:
        return repl[term]
    done: dict[Term, Term] = dict(repl)
    for node in postorder_until((term,), repl.__contains__):
        if not node.args:
            done[node] = node
            continue
        new = tuple(done[a] for a in node.args)
        changed = any(a is not b for a, b in zip(new, node.args, strict=True))
        done[node] = node.op(*new, attr=node.attr) if changed else node
    return done[term]
