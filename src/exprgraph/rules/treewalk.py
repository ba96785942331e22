"""The bottom-up walk over any tree that the rule drivers share: children first, then the node.

``walk_up(expr, leave, settle)`` visits ``expr`` with an explicit stack, so deep trees need no
recursion. ``settle(node)`` may give a node's final value without visiting its children (a
memoised term, or a term handed to the term driver); otherwise ``enter(node)`` (top-down
strategies rewrite the node here; by default the node itself) is the node whose children are
walked, it is rebuilt around their values (:func:`~exprgraph.rules.rule.rebuild`, only when one changed) and
``leave(node, rebuilt)`` says what it becomes: ``(value, False)`` delivers the value to the parent,
``(value, True)`` walks ``value`` in the node's place first (a rewrite's result is normalised
in turn). Children come from ``tree_children``: terms, tuples, lists, dicts and registered types.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..core import Term, tree_children
from .rule import rebuild

__all__ = ["walk_up", "UNSETTLED"]

#: what ``settle`` returns for a node that must be walked
UNSETTLED: Any = object()


def _children(node: Any) -> list:
    return list(node.args) if node.__class__ is Term else list(tree_children(node))


def _same(res: list, kids: list) -> bool:
    for r, k in zip(res, kids, strict=True):
        if r is not k:
            return False
    return True


def walk_up(
    expr: Any,
    leave: Callable[[Any, Any], tuple[Any, bool]],
    settle: Callable[[Any], Any] | None = None,
    enter: Callable[[Any], Any] | None = None,
) -> Any:
    """The value of ``expr`` walked bottom-up (see the module docstring)."""
    # frames: [node, children or None, values of the children walked so far, entered node]
    stack: list[list] = [[expr, None, None, None]]
    result: list[Any] = []
    while stack:
        frame = stack[-1]
        node = frame[0]
        if frame[1] is None:
            if settle is not None:
                value = settle(node)
                if value is not UNSETTLED:
                    stack.pop()
                    (stack[-1][2] if stack else result).append(value)
                    continue
            target = frame[3] = node if enter is None else enter(node)
            frame[1] = _children(target)
            frame[2] = []
        kids, res = frame[1], frame[2]
        if len(res) < len(kids):
            stack.append([kids[len(res)], None, None, None])
            continue
        stack.pop()
        target = frame[3]
        cur = target if _same(res, kids) else rebuild(target, res)
        value, again = leave(node, cur)
        if again:
            stack.append([value, None, None, None])  # walked in the node's place: reports to the same parent
        else:
            (stack[-1][2] if stack else result).append(value)
    return result[0]
