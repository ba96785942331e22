"""What a rewriter is: the Rewriter, NodeRewriter and GraphRewriter interfaces, and rewriters made from functions.

A :class:`NodeRewriter` looks at one node (a compound term of the graph) and returns False/None
(nothing to do), a list holding the replacement of the node, or a dict ``{old: new}`` that may
replace other nodes too. ``tracks()`` names the ops it cares about, so drivers only offer it
those nodes. A :class:`GraphRewriter` transforms a whole
:class:`~exprgraph.graph.FunctionGraph`: ``apply`` does the work, ``add_requirements`` attaches
the features it needs, ``rewrite`` does both and returns a profile. ``@node_rewriter`` and
``@graph_rewriter`` make one of a function.

The drivers (:mod:`~exprgraph.graph.walking`, :mod:`~exprgraph.graph.equilibrium`) and the
ready-made rewriters (:mod:`~exprgraph.graph.rewriters`) build on this module; it imports only
core, errors and :mod:`~exprgraph.graph.profile`.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, TextIO

from ..core import Op, Term, get_op
from .profile import RewriteProfile

if TYPE_CHECKING:
    from .fgraph import FunctionGraph

__all__ = [
    "as_op",
    "Rewriter",
    "NodeRewriter",
    "GraphRewriter",
    "FromFunctionNodeRewriter",
    "FromFunctionGraphRewriter",
    "node_rewriter",
    "graph_rewriter",
]


def as_op(op: Any) -> Op:
    """An Op from an Op or an op name."""
    if isinstance(op, Op):
        return op
    if isinstance(op, str):
        return get_op(op)
    raise TypeError(f"expected an Op or an op name, not {op!r}")


def _ops_text(ops: list[Op] | None) -> str:
    return "all ops" if ops is None else "[" + ", ".join(op.name for op in ops) + "]"


class Rewriter:
    """Base of node and graph rewriters: a name and the features a rewriter needs."""

    name: str = ""

    def add_requirements(self, fgraph: FunctionGraph) -> None:
        """Attach the features this rewriter needs to ``fgraph`` (none by default)."""

    def summary_line(self) -> str:
        """This rewriter in one line, for :meth:`print_summary`."""
        cls = type(self).__name__
        return cls if self.name in ("", cls) else f"{cls} {self.name}"

    def summary_children(self) -> list[Rewriter]:
        """The rewriters this one applies, for :meth:`print_summary` (none by default)."""
        return []

    def print_summary(self, stream: TextIO | None = None, level: int = 0, depth: int = -1) -> None:
        """Print this rewriter and the rewriters it applies, ``depth`` levels deep (all when negative)."""
        lines: list[str] = []
        stack: list[tuple[Rewriter, int, int, frozenset]] = [(self, level, 0, frozenset())]
        while stack:
            r, indent, d, path = stack.pop()
            if id(r) in path:
                lines.append(" " * indent + f"{r.summary_line()} (applied by itself: not expanded)")
                continue
            lines.append(" " * indent + r.summary_line())
            if depth < 0 or d < depth:
                inner = path | {id(r)}
                stack.extend((c, indent + 2, d + 1, inner) for c in reversed(r.summary_children()))
        print("\n".join(lines), file=stream if stream is not None else sys.stdout)

    def __str__(self) -> str:
        return self.name or type(self).__name__

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}>" if self.name else f"<{type(self).__name__}>"


class NodeRewriter(Rewriter):
    """Rewrites one node at a time; subclasses define :meth:`transform` (and :meth:`tracks`)."""

    def __init__(self, name: str | None = None) -> None:
        self.name = name or type(self).__name__

    def tracks(self) -> list[Op] | None:
        """The ops of the nodes this rewriter wants (None: every node)."""
        return None

    def transform(self, fgraph: FunctionGraph, node: Term) -> Any:
        """False/None, ``[replacement]``, or ``{old: new, ...}`` for ``node`` of ``fgraph``."""
        raise NotImplementedError(f"{type(self).__name__} must define transform(fgraph, node)")


class FromFunctionNodeRewriter(NodeRewriter):
    """A node rewriter from a function ``fn(fgraph, node)`` (made by :func:`node_rewriter`).

    The function only sees nodes of the tracked ops: ``transform`` returns False for others.
    """

    def __init__(
        self,
        fn: Callable[[FunctionGraph, Term], Any],
        tracks: Iterable[Any] | None,
        name: str,
        requirements: Iterable[Callable[[FunctionGraph], Any]] = (),
    ) -> None:
        super().__init__(name)
        self.fn = fn
        self._tracks = None if tracks is None else [as_op(o) for o in tracks]
        self._tracked = None if self._tracks is None else frozenset(self._tracks)
        self.requirements = tuple(requirements)
        self.__doc__ = fn.__doc__
        self.__name__ = name

    def tracks(self) -> list[Op] | None:
        """The ops given to the decorator."""
        return self._tracks

    def add_requirements(self, fgraph: FunctionGraph) -> None:
        """Call each requirement function with the graph."""
        for req in self.requirements:
            req(fgraph)

    def transform(self, fgraph: FunctionGraph, node: Term) -> Any:
        """Call the function on a node of a tracked op (False for any other node)."""
        tracked = self._tracked
        if tracked is not None and (node.__class__ is not Term or node.op not in tracked):
            return False
        return self.fn(fgraph, node)

    __call__ = transform

    def summary_line(self) -> str:
        """The function's name and the ops it tracks."""
        return f"{type(self).__name__} {self.name} tracks {_ops_text(self._tracks)}"

    def __repr__(self) -> str:
        # upstream's: FromFunctionNodeRewriter(<function f at 0x...>, [mul], ())
        ops = "None" if self._tracks is None else "[" + ", ".join(op.name for op in self._tracks) + "]"
        return f"{type(self).__name__}({self.fn!r}, {ops}, {self.requirements!r})"


def node_rewriter(
    tracks: Iterable[Any] | Op | None,
    inplace: bool = False,
    requirements: Iterable[Callable[[FunctionGraph], Any]] = (),
    *,
    name: str | None = None,
) -> Callable[[Callable[[FunctionGraph, Term], Any]], FromFunctionNodeRewriter]:
    """Decorator: ``@node_rewriter([truediv])`` makes a node rewriter of ``fn(fgraph, node)``.

    ``tracks`` lists the ops (or op names) whose nodes the function sees; ``None`` means every
    node (an empty list is refused: it would track nothing). ``requirements`` are functions
    called with the graph before rewriting; ``inplace=True`` is refused (terms are values).
    """
    if inplace:
        raise ValueError("there are no in-place operations on immutable terms: node_rewriter(inplace=True)")
    if isinstance(tracks, (Op, str)):
        tracks = [tracks]
    elif callable(tracks):
        raise TypeError("node_rewriter takes the tracked ops first: @node_rewriter([op, ...]) or @node_rewriter(None)")
    elif tracks is not None:
        tracks = list(tracks)
        if not tracks:
            raise ValueError("node_rewriter([]) would track no op: pass None to see every node")

    def deco(fn: Callable[[FunctionGraph, Term], Any]) -> FromFunctionNodeRewriter:
        return FromFunctionNodeRewriter(fn, tracks, name or fn.__name__, requirements)

    return deco


class GraphRewriter(Rewriter):
    """Rewrites a whole graph: define :meth:`apply`; :meth:`rewrite` adds requirements, applies, profiles."""

    def __init__(self, name: str | None = None) -> None:
        self.name = name or type(self).__name__

    def apply(self, fgraph: FunctionGraph) -> RewriteProfile | None:
        """Transform ``fgraph`` in place; may return a profile."""
        raise NotImplementedError(f"{type(self).__name__} must define apply(fgraph)")

    def rewrite(self, fgraph: FunctionGraph, *args: Any, **kwargs: Any) -> RewriteProfile:
        """``add_requirements`` then ``apply``; returns the profile (a basic one when ``apply`` gives none)."""
        self.add_requirements(fgraph)
        return self.timed_apply(fgraph, *args, **kwargs)

    def timed_apply(self, fgraph: FunctionGraph, *args: Any, **kwargs: Any) -> RewriteProfile:
        """``apply`` with timing and sizes filled in."""
        before = fgraph.node_count
        start = time.perf_counter()
        prof = self.apply(fgraph, *args, **kwargs)
        elapsed = time.perf_counter() - start
        if not isinstance(prof, RewriteProfile):
            prof = RewriteProfile(self.name or type(self).__name__, type(self).__name__, nodes_before=before)
        prof.time = max(prof.time, elapsed)
        prof.nodes_after = fgraph.node_count
        return prof

    def __call__(self, fgraph: FunctionGraph) -> RewriteProfile:
        return self.rewrite(fgraph)


class FromFunctionGraphRewriter(GraphRewriter):
    """A graph rewriter from a function ``fn(fgraph)`` (made by :func:`graph_rewriter`)."""

    def __init__(
        self, fn: Callable[[FunctionGraph], Any], requirements: Iterable[Callable] = (), name: str = ""
    ) -> None:
        super().__init__(name or fn.__name__)
        self.fn = fn
        self.requirements = tuple(requirements)
        self.__doc__ = fn.__doc__

    def add_requirements(self, fgraph: FunctionGraph) -> None:
        """Call each requirement function with the graph."""
        for req in self.requirements:
            req(fgraph)

    def apply(self, fgraph: FunctionGraph) -> RewriteProfile | None:
        """Call the function."""
        out = self.fn(fgraph)
        return out if isinstance(out, RewriteProfile) else None


def graph_rewriter(
    fn: Callable[[FunctionGraph], Any] | None = None, *, requirements: Iterable[Callable] = (), name: str = ""
) -> Any:
    """Decorator: ``@graph_rewriter`` makes a graph rewriter of ``fn(fgraph)``."""

    def deco(f: Callable[[FunctionGraph], Any]) -> FromFunctionGraphRewriter:
        return FromFunctionGraphRewriter(f, requirements, name)

    return deco(fn) if fn is not None else deco
