"""Iterative DAG walks over anything with an ``args`` tuple (no recursion, each node once).

Over C terms the walk runs in C (``_cterm_walk.c``): the same list, without making the ``args``
tuple of every node that a walk in Python reads (a C term holds its operands in itself).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from .termbase import native_postorder

__all__ = ["postorder", "postorder_until"]


def postorder(roots: Iterable[Any]) -> list[Any]:
    """Distinct nodes reachable from ``roots``, children before parents, left to right."""
    return postorder_until(roots, None)


def postorder_until(roots: Iterable[Any], stop: Callable[[Any], bool] | None) -> list[Any]:
    """Like :func:`postorder`, but do not enter (or list) nodes for which ``stop(node)`` is true."""
    if _c_walk is not None:
        if not isinstance(roots, (list, tuple)):
            roots = list(roots)
        found = _c_walk(roots, stop)
        if found is not None:
            return found
    return _postorder_py(roots, stop)


def _postorder_py(roots: Iterable[Any], stop: Callable[[Any], bool] | None) -> list[Any]:
    """The walk in Python (the twin of the C walk; any node with an ``args`` tuple)."""
    seen: set[Any] = set()
    order: list[Any] = []
    append = order.append
    add = seen.add
    for root in roots:
        if root in seen or (stop is not None and stop(root)):
            continue
        stack = [(root, 0)]
        while stack:
            node, i = stack[-1]
            args = node.args
            n = len(args)
            while i < n:
                child = args[i]
                if child in seen or (stop is not None and stop(child)):
                    i += 1
                    continue
                break
            if i < n:
                stack[-1] = (node, i + 1)
                stack.append((args[i], 0))
            else:
                stack.pop()
                add(node)
                append(node)
    return order


#: the C walk (None: the pure base); it answers None when a root is not a C term
_c_walk = native_postorder()
