"""How a FunctionGraph changes: importing and pruning nodes, and the lazy rebuild of stale parents.

The graph keeps a clients map ``term -> {(client, operand index): None}`` (``client`` is a node
or :data:`~exprgraph.graph.features.OUTPUT`). A replacement moves positions to the new term and
marks the parents *stale*; a stale parent is rebuilt (one term construction) when someone needs
it, and :class:`ClientsView` is the read side that rebuilds what a lookup touches. The methods
of :class:`GraphPropagation`, a base class of :class:`~exprgraph.graph.FunctionGraph`, do it; they
are iterative. This module imports core, errors and the graph's features, printing and state
modules, never :mod:`~exprgraph.graph.fgraph` at run time.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from ..core import Term, as_term, const, get_op
from ..core.walk import postorder_until
from ..errors import InconsistencyError, MissingInputError
from .features import OUTPUT
from .printing import short
from .state import GraphState

if TYPE_CHECKING:
    from .fgraph import FunctionGraph

__all__ = ["ClientsView", "is_node", "index_clients", "as_term_like", "GraphPropagation"]

SYMBOL = get_op("symbol")


def index_clients(order: list[Term], inputs: tuple[Term, ...]) -> tuple[dict[Term, dict], int]:
    """The clients map of the terms of ``order`` (a postorder) and the number of nodes among them.

    Raises :class:`MissingInputError` for a symbol that is not one of ``inputs``.
    """
    clients: dict[Term, dict] = {t: {} for t in inputs}
    input_set = frozenset(inputs)
    missing = []
    n = 0
    for t in order:
        if t not in clients:
            clients[t] = {}
            if t.op is SYMBOL and t not in input_set:
                missing.append(t)
        args = t.args
        if args:
            n += 1
            for i, a in enumerate(args):
                clients[a][(t, i)] = None
        elif t.op.notation != "leaf":  # a nullary op is a node too
            n += 1
    if missing:
        names = ", ".join(sorted({m.name for m in missing}))
        raise MissingInputError(f"the outputs use symbols that are not inputs of the graph: {names}")
    return clients, n


def as_term_like(value: Any, like: Term) -> Term:
    """A Python number as a constant of ``like``'s dtype; anything else through ``as_term``."""
    if value.__class__ in (int, float, bool):
        try:
            return const(value, dtype=like.dtype)
        except (TypeError, ValueError, OverflowError):
            return const(value)
    return as_term(value)


def is_node(t: Term) -> bool:
    """Whether ``t`` is a node of a graph: anything but a leaf (a symbol or a constant); nullary ops are nodes."""
    return bool(t.args) or t.op.notation != "leaf"


class ClientsView(Mapping):
    """Read-only mapping ``term -> list of (client, index)`` over a graph, always up to date."""

    __slots__ = ("_fg",)

    def __init__(self, fgraph: FunctionGraph) -> None:
        self._fg = fgraph

    def __getitem__(self, t: Term) -> list[tuple[Any, int]]:
        fg = self._fg
        pos = fg._clients.get(t)
        if pos is None:
            raise KeyError(t)
        stale = fg._stale
        if stale and any(c in stale for c, _ in pos):
            fg._refresh_many([c for c, _ in pos if c in stale])
            pos = fg._clients.get(t)
            if pos is None:
                raise KeyError(t)
        return list(pos)

    def __contains__(self, t: object) -> bool:
        return t in self._fg

    def __iter__(self) -> Iterator[Term]:
        fg = self._fg
        if fg._stale:
            fg._flush()
        return iter(list(fg._clients))

    def __len__(self) -> int:
        fg = self._fg
        if fg._stale:
            fg._flush()
        return len(fg._clients)


class GraphPropagation(GraphState):
    """How the graph changes: importing and pruning nodes, and the lazy rebuild of stale parents."""

    def _plan_import(self, new: Term, old: Term | None, import_missing: bool = False) -> list[Term]:
        """Nodes of ``new`` not yet in the graph (children first), checked; brings stale parts up to date.

        Symbols that are not inputs raise :class:`MissingInputError`, unless ``import_missing``
        (then committing the import declares them inputs).
        """
        for _attempt in range(2):
            clients = self._clients
            if new in clients:
                frontier: Iterable[Term] = (new,)
                nodes: list[Term] = []
            else:
                nodes = postorder_until((new,), clients.__contains__)
                frontier = {a for t in nodes for a in t.args if a in clients}
            stale = self._stale
            if stale and any(f in stale for f in frontier):
                self._flush()  # reusing an out-of-date node: bring the graph up to date, plan again
                continue
            break
        input_set = self._input_set
        missing = [t for t in nodes if t.op is SYMBOL and t not in input_set]
        if missing and not import_missing:
            names = ", ".join(sorted({m.name for m in missing}))
            what = "the replacement" if old is not None else short(new)
            raise MissingInputError(
                f"{what} uses symbols that are not inputs of the graph: {names} (import_missing=True adds them)"
            )
        if old is not None:
            self._check_cycle(old, new, frontier)
        return nodes

    def _check_cycle(self, old: Term, new: Term, frontier: Iterable[Term]) -> None:
        # a reused node above ``old`` that depends on ``old`` would have to use ``new``, which uses it
        args = old.args
        depth = -1
        for f in frontier:
            if f is old or not f.args or f in args:
                continue  # leaves and operands of ``old`` cannot depend on it
            if depth < 0:
                depth = old.depth
            if f.depth <= depth:
                continue
            seen: set[Term] = set()
            stack = [f]
            while stack:
                t = stack.pop()
                for a in t.args:
                    if a is old:
                        raise InconsistencyError(
                            f"replacing {short(old)} by {short(new)} would make a cycle: the replacement "
                            f"uses {short(f)}, which uses the replaced node"
                        )
                    if a.args and a not in seen and a.depth > depth:
                        seen.add(a)
                        stack.append(a)

    def _commit_import(self, nodes: list[Term], reason: Any) -> None:
        if not nodes:
            return
        clients = self._clients
        on_import = self._callbacks["on_import"]
        input_set = self._input_set
        n = 0
        for t in nodes:
            clients[t] = {}
            if t.op is SYMBOL and t not in input_set:  # planned with import_missing: a new input
                self._declare_input(t)
                input_set = self._input_set
            args = t.args
            if args or t.op.notation != "leaf":
                n += 1
                for i, a in enumerate(args):
                    clients[a][(t, i)] = None
                for cb in on_import:
                    cb(self, t, reason)
        self._n_nodes += n
        self.imported += n

    def _prune(self, t: Term, reason: Any) -> None:
        """Remove ``t`` (which has no clients) and, in cascade, operands left without clients."""
        clients = self._clients
        input_set = self._input_set
        logical = self._logical
        stale = self._stale
        on_prune = self._callbacks["on_prune"]
        stack = [t]
        kept = self._kept
        while stack:
            t = stack.pop()
            pos = clients.get(t)
            if pos is None or pos or t in input_set or t in kept:
                continue
            del clients[t]
            la = logical.pop(t, None) or t.args
            if la or t.op.notation != "leaf":
                stale.discard(t)
                self._n_nodes -= 1
                for cb in on_prune:
                    cb(self, t, reason)
                for i, a in enumerate(la):
                    ca = clients[a]
                    del ca[(t, i)]
                    if not ca:
                        stack.append(a)

    def _mark_stale(self, t: Term) -> None:
        """Mark ``t`` and every node above it stale (each once)."""
        stale, clients = self._stale, self._clients
        todo = [t]
        push, mark = todo.append, stale.add
        while todo:
            t = todo.pop()
            if t not in stale:
                mark(t)
                for c, _ in clients[t]:
                    if c is not OUTPUT and c not in stale:
                        push(c)

    def _flush(self) -> None:
        """Rebuild every stale node (children first): the graph is then exactly up to date."""
        if self._stale:
            self._refresh_many(list(self._stale))
            self._topo = None

    def _refresh(self, t: Term) -> Term:
        """Bring the stale node ``t`` up to date; returns its current version."""
        stale = self._stale
        la = self._logical.get(t)
        args = la if la is not None else t.args
        for a in args:
            if a in stale:
                break
        else:  # the usual case: the operands are up to date, one term to build
            if la is None:
                stale.discard(t)
                return t
            cand = Term(t.op, tuple(la), t.attr)
            if cand is t or cand not in stale:
                self._rebuild(t, cand)
                return cand
        tracker: dict[Term, Term] = {}
        self._trackers.append(tracker)
        try:
            self._refresh_many((t,))
        finally:
            self._trackers.remove(tracker)
        while t not in self._clients:
            nxt = tracker.get(t)
            if nxt is None:
                return t
            t = nxt
        return t

    def _refresh_many(self, roots: Iterable[Term]) -> None:
        stale = self._stale
        logical = self._logical
        waiting: set[Term] = set()
        stack = list(roots)
        while stack:
            t = stack[-1]
            if t not in stale:
                stack.pop()
                continue
            la = logical.get(t)
            args = la if la is not None else t.args
            pending = [a for a in args if a in stale]
            if pending:
                stack.extend(pending)
                continue
            cand = None
            if la is not None:
                cand = Term(t.op, tuple(la), t.attr)
                if cand is not t and cand in stale and cand not in waiting:
                    waiting.add(t)  # merging into an out-of-date node: bring that one up to date first
                    stack.append(cand)
                    continue
            stack.pop()
            self._rebuild(t, cand)
        if self._topo is not None:
            self._topo = None

    def _set_position(self, p: tuple[Any, int], new: Term) -> Any:
        """Make the position ``p = (consumer, i)`` read ``new``: an output slot, or operand ``i`` of the
        consumer's logical operands (its pending rebuild); returns the consumer."""
        c, i = p
        if c is OUTPUT:
            self._outputs[i] = new
        else:
            la = self._logical.get(c)
            if la is None:
                la = self._logical[c] = list(c.args)
            la[i] = new
        return c

    def _rebuild(self, t: Term, new: Term | None) -> None:
        """Replace the stale node ``t`` by ``new`` (``t`` with its current operands) in all its positions."""
        stale = self._stale
        stale.discard(t)
        if new is None or new is t:
            self._logical.pop(t, None)
            return
        clients = self._clients
        la = self._logical.pop(t)
        pos = clients[t]
        if new in clients:
            target = clients[new]
        else:
            target = clients[new] = {}
            for i, a in enumerate(la):
                clients[a][(new, i)] = None
            self._n_nodes += 1
            for cb in self._callbacks["on_import"]:
                cb(self, new, "rebuild")
        for p in pos:
            target[p] = None
            self._set_position(p, new)
        pos.clear()
        # drop ``t``: its operand positions are registered under its current operands
        del clients[t]
        self._n_nodes -= 1
        for cb in self._callbacks["on_prune"]:
            cb(self, t, "rebuild")
        for i, a in enumerate(la):
            ca = clients[a]
            del ca[(t, i)]
            if not ca and a not in self._input_set:
                self._prune(a, "rebuild")
        if t in self._kept:
            del self._kept[t]
            self._kept[new] = None
        for tracker in self._trackers:
            tracker[t] = new
        for cb in self._callbacks["on_rebuild"]:
            cb(self, t, new)
        self._version += 1
