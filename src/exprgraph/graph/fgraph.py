"""FunctionGraph: a mutable view over immutable terms, with clients, replacement and features.

Terms are interned and immutable, so a graph cannot be edited in place the way PyTensor edits
its ``Apply`` nodes. A :class:`FunctionGraph` is therefore a *view*: it holds the current
outputs and a clients map (reverse edges) over the DAG below them. Replacing a node ``old`` by
``new`` moves every *position* that held ``old`` (an operand slot of a parent, or an output slot)
to ``new``; the parents themselves must then be rebuilt as new terms, and so must their parents,
up to the outputs.

Rebuilding every ancestor at once would cost the size of the graph per replacement, so the
rebuild is *lazy*: a parent whose operands changed is marked stale and is rebuilt (one term
construction, clients updated incrementally) when someone needs it: a walker reaching it, a
client query, or a read of the outputs. A walk over the graph thus rebuilds each ancestor once
per pass, however many replacements happen below it, and building and replacing stay linear in
the nodes touched. Every public read (``outputs``, ``toposort()``, ``clients``, ``in``) sees the
graph exactly as if each replacement had been propagated at once.

Identity semantics: a node of the graph *is* its term. After a replacement below it, a parent is
a different term (the old one is no longer in the graph); :meth:`FunctionGraph.walk` yields each
node's current version, and equal rebuilt nodes merge by interning (common subexpressions never
need a merge pass).

The class is written in four modules, each a concept and a base class of it (their shared fields
are declared by :class:`~exprgraph.graph.state.GraphState`): this one holds the graph's
construction, its queries and replacement; :class:`~exprgraph.graph.propagation.GraphPropagation`
imports, prunes and lazily rebuilds nodes; :class:`~exprgraph.graph.features.GraphFeatures`
attaches listeners and pickles; and :class:`~exprgraph.graph.editing.GraphEditing` has the
structural edits in PyTensor's names (``import_node``,
``import_var``, ``add_input``, ``remove_input``, ``remove_node``, ``change_node_input``,
``dprint``). A node imported on its own, with no client, is *kept*: it stays in the graph (and in
``toposort()``) until ``remove_node`` removes it. ``freeze()`` (:mod:`exprgraph.graph.frozen`)
gives the graph as a hashable value; a graph pickles with its features (``GraphFeatures.__getstate__``).
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from ..core import Term, as_term, get_op
from ..core.walk import postorder_until
from ..errors import InconsistencyError, NotInGraphError, ReplacementTypeError
from . import frozen as frozen_mod
from .editing import GraphEditing
from .features import CALLBACKS, OUTPUT, Feature, GraphFeatures
from .printing import format_fgraph, reason_name, short
from .propagation import ClientsView, GraphPropagation, as_term_like, index_clients, is_node

__all__ = ["FunctionGraph", "OUTPUT", "Checkpoint", "short"]

SYMBOL = get_op("symbol")


def _check_same_type(old: Term, new: Term) -> None:
    """Raise :class:`ReplacementTypeError` unless ``new`` has the dtype and shape of ``old``."""
    if old.dtype != new.dtype or old.shape != new.shape:
        raise ReplacementTypeError(
            f"cannot replace {short(old)} ({old.dtype}, shape {old.shape}) by {short(new)} "
            f"({new.dtype}, shape {new.shape}): dtype and shape must agree"
        )


@dataclass(frozen=True)
class Checkpoint:
    """A saved state of a graph: its outputs (terms are immutable, so that is the whole state)."""

    outputs: tuple[Term, ...]
    serial: int


class FunctionGraph(GraphEditing, GraphFeatures, GraphPropagation):
    """The subgraph between ``inputs`` (symbols) and ``outputs``, with clients, replacement and features.

    ``inputs`` defaults to the free symbols of the outputs (in first-use order); a symbol given
    twice is kept twice, as upstream. ``clone`` is accepted and ignored (terms are immutable).
    Building is one walk over the DAG. See the module docstring for how replacements are propagated.
    """

    def __init__(
        self,
        inputs: Iterable[Term] | None = None,
        outputs: Term | Iterable[Any] | None = None,
        features: Iterable[Feature] | None = (),
        clone: bool = True,
    ) -> None:
        # ``clone`` is accepted for PyTensor's signature: terms are immutable, there is nothing to copy
        if outputs is None:
            raise TypeError("FunctionGraph needs outputs")
        outs = [outputs] if outputs.__class__ is Term else [as_term(o) for o in outputs]
        order = postorder_until(outs, None)
        if inputs is None:
            ins = tuple(t for t in order if t.op is SYMBOL)
        else:
            ins = tuple(inputs)
            for t in ins:
                if t.__class__ is not Term or t.op is not SYMBOL:
                    raise TypeError(f"graph inputs must be symbols, not {t!r}")
        self.inputs = ins
        self._input_set = frozenset(ins)
        self._outputs = outs
        clients, n = index_clients(order, ins)
        for i, o in enumerate(outs):
            clients[o][(OUTPUT, i)] = None
        self._clients = clients
        self._n_nodes = n
        self._stale = set()
        self._logical = {}
        self._topo = [t for t in order if is_node(t)]
        self._version = 0
        self._serial = 0
        self.imported = 0
        self._trackers = []
        self._features = []
        self._callbacks = {name: [] for name in CALLBACKS}
        self._validators = []
        self._kept = {}
        for f in features or ():
            self.attach_feature(f)

    # -- reading ---------------------------------------------------------------------------------------

    @property
    def outputs(self) -> list[Term]:
        """The current outputs (a copy)."""
        if self._stale:
            self._flush()
        return list(self._outputs)

    @property
    def version(self) -> int:
        """A counter that changes whenever the graph does."""
        return self._version

    @property
    def clients(self) -> ClientsView:
        """``clients[t]``: the ``(client, index)`` positions using ``t`` (``client`` is a node or :data:`OUTPUT`)."""
        return ClientsView(self)

    def toposort(self) -> list[Term]:
        """The graph's nodes (not leaves) in dependency order; cached until the graph changes."""
        if self._stale:
            self._flush()
        topo = self._topo
        if topo is None:
            input_set = self._input_set
            roots = [*self._outputs, *self._kept] if self._kept else self._outputs
            topo = self._topo = [t for t in postorder_until(roots, input_set.__contains__) if is_node(t)]
        return list(topo)

    @property
    def apply_nodes(self) -> set[Term]:
        """The set of nodes (compound terms) of the graph."""
        return set(self.toposort())

    @property
    def variables(self) -> set[Term]:
        """Every term of the graph: inputs, constants and nodes."""
        if self._stale:
            self._flush()
        return set(self._clients)

    @property
    def node_count(self) -> int:
        """Number of nodes (compound terms)."""
        if self._stale:
            self._flush()
        return self._n_nodes

    def __len__(self) -> int:
        return self.node_count

    def __iter__(self) -> Iterator[Term]:
        return iter(self.toposort())

    def __contains__(self, t: object) -> bool:
        clients = self._clients
        if t not in clients:
            if not self._stale:
                return False
            self._flush()  # ``t`` may be a node the pending rebuilds create
            return t in clients
        if isinstance(t, Term) and t in self._stale:
            return self._refresh(t) is t
        return True

    def client_count(self, t: Term) -> int:
        """Number of positions (operand slots and output slots) using ``t``; 0 if ``t`` is not in the graph.

        Counted without rebuilding anything: a parent awaiting a rebuild counts as it is, so two
        parents that will merge into one when rebuilt still count twice until then.
        """
        pos = self._clients.get(t)
        return 0 if pos is None else len(pos)

    def single_client(self, t: Term) -> Any:
        """The one client using ``t`` (a node, possibly awaiting a rebuild, or :data:`OUTPUT`), else None."""
        pos = self._clients.get(t)
        if pos is None or len(pos) != 1:
            return None
        for c, _ in pos:
            return c
        return None  # pragma: no cover

    def current(self, t: Term) -> Term | None:
        """``t`` if it is in the graph (rebuilt first if its operands changed), else None."""
        if t not in self._clients:
            return None
        if t in self._stale:
            t = self._refresh(t)
        return t

    def walk(self, order: str = "in_to_out") -> Iterator[Term]:
        """Yield the nodes in topological order (or reversed), each in its current version.

        Safe while the caller replaces nodes: a node rebuilt meanwhile is yielded as rebuilt,
        a node that left the graph is skipped. New nodes are not visited.
        """
        nodes = self.toposort()
        if order == "out_to_in":
            nodes.reverse()
        elif order != "in_to_out":
            raise ValueError(f"order must be 'in_to_out' or 'out_to_in', not {order!r}")
        tracker = self.track_rebuilds()
        try:
            for node in nodes:
                cur = self.follow(node, tracker)
                if cur is not None:
                    yield cur
        finally:
            self.untrack_rebuilds(tracker)

    def track_rebuilds(self) -> dict[Term, Term]:
        """Start recording rebuilt nodes (old -> new) into a dict; pair with :meth:`untrack_rebuilds`."""
        tracker: dict[Term, Term] = {}
        self._trackers.append(tracker)
        return tracker

    def untrack_rebuilds(self, tracker: dict) -> None:
        """Stop recording into ``tracker``."""
        for i, tr in enumerate(self._trackers):
            if tr is tracker:
                del self._trackers[i]
                return

    def follow(self, t: Term, tracker: dict[Term, Term]) -> Term | None:
        """The current version of ``t`` following the rebuilds in ``tracker``, or None if it left the graph."""
        clients = self._clients
        while t not in clients:
            newer = tracker.get(t)
            if newer is None:
                return None
            t = newer
        if t in self._stale:
            t = self._refresh(t)
        return t

    # -- changing --------------------------------------------------------------------------------------

    def replace(
        self, old: Term, new: Any, reason: Any = None, *, verbose: bool = False, import_missing: bool = False
    ) -> None:
        """Make every position that uses ``old`` use ``new`` instead (same dtype and shape required).

        Raises :class:`NotInGraphError`, :class:`ReplacementTypeError`, :class:`MissingInputError`
        (unless ``import_missing``: then new symbols become inputs) or :class:`InconsistencyError`
        (a cycle: ``new`` uses a node that uses ``old``) before changing anything.
        """
        if new.__class__ is not Term:
            new = as_term_like(new, old)
        clients = self._clients
        pos = clients.get(old)
        if pos is None and self._stale:
            self._flush()  # ``old`` may be a node the pending rebuilds create
            pos = clients.get(old)
        if pos is None:
            raise NotInGraphError(
                f"{short(old)} is not a node of this graph (a node rebuilt after a replacement below it is a "
                "new term: use fgraph.walk() or fgraph.current() to get current nodes)"
            )
        if new is old:
            return
        _check_same_type(old, new)
        new_nodes = self._plan_import(new, old, import_missing)
        if old not in clients:  # planning brought the graph up to date and ``old`` was rebuilt away
            raise NotInGraphError(f"{short(old)} is no longer a node of this graph")
        pos = clients[old]
        moved = list(pos)  # the positions before the import (``new`` may use ``old``)
        self._commit_import(new_nodes, reason)
        self._move_positions(moved, old, new, reason)
        if old in self._kept:  # a kept node's replacement is kept in its place
            del self._kept[old]
            self._kept[new] = None
        if not pos and old not in self._input_set:
            self._prune(old, reason)
        self._version += 1
        self._serial += 1
        self._topo = None
        for cb in self._callbacks["on_replace"]:
            cb(self, old, new, reason)
        if verbose:
            print(f"rewrite {reason_name(reason)} replaces {short(old)} with {short(new)}", file=sys.stdout)

    def _move_positions(self, moved: list[tuple[Any, int]], old: Term, new: Term, reason: Any) -> None:
        """Make the positions ``moved`` use ``new`` instead of ``old`` (parents become stale, output slots change)."""
        pos = self._clients[old]
        target = self._clients[new]
        stale = self._stale
        on_change = self._callbacks["on_change_input"]
        for p in moved:
            del pos[p]
            target[p] = None
            c = self._set_position(p, new)
            if c is not OUTPUT and c not in stale:
                self._mark_stale(c)
            for cb in on_change:
                cb(self, c, p[1], old, new, reason)

    def replace_all(self, pairs: Iterable[tuple[Term, Any]] | Mapping[Term, Any], reason: Any = None) -> None:
        """Replace each ``old`` by its ``new`` in turn (dtypes and shapes are checked first)."""
        items = list(pairs.items()) if isinstance(pairs, Mapping) else list(pairs)
        items = [(o, n if n.__class__ is Term else as_term_like(n, o)) for o, n in items]
        for old, new in items:
            _check_same_type(old, new)
        for old, new in items:
            self.replace(old, new, reason)

    def add_output(self, t: Any, reason: Any = None, import_missing: bool = False) -> int:
        """Append an output (imported with its DAG; new symbols become inputs with ``import_missing``)."""
        t = as_term(t)
        if self._stale:
            self._flush()
        nodes = self._plan_import(t, None, import_missing)
        self._commit_import(nodes, reason)
        i = len(self._outputs)
        self._outputs.append(t)
        self._clients[t][(OUTPUT, i)] = None
        self._version += 1
        self._topo = None
        return i

    def remove_output(self, index: int, reason: Any = None) -> Term:
        """Remove the output at ``index`` (later outputs shift down); returns it."""
        if self._stale:
            self._flush()
        outputs = self._outputs
        old = outputs[index]
        clients = self._clients
        n = len(outputs)
        index %= n
        for j in range(index, n):
            del clients[outputs[j]][(OUTPUT, j)]
        del outputs[index]
        for j in range(index, n - 1):
            clients[outputs[j]][(OUTPUT, j)] = None
        if not clients[old] and old not in self._input_set:
            self._prune(old, reason)
        self._version += 1
        self._topo = None
        return old

    def checkpoint(self) -> Checkpoint:
        """The current state, for :meth:`revert` (cheap: the outputs tuple)."""
        if self._stale:
            self._flush()
        return Checkpoint(tuple(self._outputs), self._serial)

    def revert(self, checkpoint: Checkpoint, reason: Any = "revert") -> None:
        """Go back to a checkpoint's state (only the parts that differ are re-imported)."""
        self.set_outputs(checkpoint.outputs, reason)
        for cb in self._callbacks["on_revert"]:
            cb(self, checkpoint)

    def set_outputs(self, outputs: Iterable[Any], reason: Any = None) -> None:
        """Set every output slot (same count, dtypes and shapes); unchanged slots cost nothing."""
        new = [as_term(o) for o in outputs]
        if self._stale:
            self._flush()
        cur = self._outputs
        if len(new) != len(cur):
            raise ValueError(f"expected {len(cur)} outputs, got {len(new)}")
        clients = self._clients
        changed = False
        on_change = self._callbacks["on_change_input"]
        for i, (old, t) in enumerate(zip(cur, new, strict=True)):
            if old is t:
                continue
            if old.dtype != t.dtype or old.shape != t.shape:
                raise ReplacementTypeError(f"output {i}: {short(t)} does not have the dtype and shape of {short(old)}")
            nodes = self._plan_import(t, None)
            self._commit_import(nodes, reason)
            del clients[old][(OUTPUT, i)]
            clients[t][(OUTPUT, i)] = None
            cur[i] = t
            for cb in on_change:
                cb(self, OUTPUT, i, old, t, reason)
            if not clients[old] and old not in self._input_set:
                self._prune(old, reason)
            changed = True
        if changed:
            self._version += 1
            self._topo = None

    def copy(self) -> FunctionGraph:
        """A graph with the same inputs, outputs and kept nodes and no features (terms are shared, never copied)."""
        fresh = self._fresh(self.outputs)
        for k in self._kept:
            fresh.import_node(k)
        return fresh

    def _fresh(self, outputs: Iterable[Term]) -> FunctionGraph:
        """A new graph on the same inputs with ``outputs`` and no features (History replays steps in one)."""
        return FunctionGraph(self.inputs, outputs)

    def freeze(self) -> frozen_mod.FrozenFunctionGraph:
        """The graph as a hashable, comparable value (see :mod:`exprgraph.graph.frozen`)."""
        return frozen_mod.freeze(self)

    # -- features ----------------------------------------------------------------------------------------

    @property
    def features(self) -> list[Feature]:
        """The attached features, in attachment order."""
        return list(self._features)

    @property
    def has_validators(self) -> bool:
        """Whether an attached feature validates changes (then rewrites are checked as transactions)."""
        return bool(self._validators)

    # -- consistency -------------------------------------------------------------------------------------

    def check_integrity(self) -> None:
        """Recompute the clients map from the outputs and compare (a debugging aid); raises on mismatch."""
        if self._stale:
            self._flush()
        fresh = self.copy()
        if fresh._clients.keys() != self._clients.keys():
            extra = [short(t) for t in self._clients.keys() - fresh._clients.keys()][:5]
            lost = [short(t) for t in fresh._clients.keys() - self._clients.keys()][:5]
            raise InconsistencyError(f"clients map out of date: extra {extra}, missing {lost}")
        for t, pos in fresh._clients.items():
            if set(pos) != set(self._clients[t]):
                raise InconsistencyError(f"clients of {short(t)} out of date")
        if fresh._n_nodes != self._n_nodes:
            raise InconsistencyError(f"node count {self._n_nodes} should be {fresh._n_nodes}")

    # -- printing ----------------------------------------------------------------------------------------

    def __repr__(self) -> str:
        return format_fgraph(self)

    __str__ = __repr__


frozen_mod.graph_class = FunctionGraph  # what FrozenFunctionGraph.unfreeze() builds
