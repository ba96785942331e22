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

Structural edits in PyTensor's names (``import_node``, ``import_var``, ``add_input``,
``remove_input``, ``remove_node``, ``change_node_input``, ``dprint``) live in
:mod:`exprgraph.graph.editing`. A node imported on its own, with no client, is *kept*: it stays
in the graph (and in ``toposort()``) until ``remove_node`` removes it.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from ..core import Term, as_term, get_op
from ..core.walk import postorder_until
from ..errors import (
    InconsistencyError,
    MissingInputError,
    NotInGraphError,
    ReplacementTypeError,
)
from . import editing
from .features import CALLBACKS, OUTPUT, Feature

__all__ = ["FunctionGraph", "OUTPUT", "Checkpoint", "short"]

SYMBOL = get_op("symbol")

#: callbacks that are fired with (fgraph, ...) when the graph changes
_EVENTS = CALLBACKS


def short(t: Any, limit: int = 60) -> str:
    """A short text for a term in messages (small terms in infix, big ones summarised)."""
    if t.__class__ is not Term:
        return repr(t)
    if t.args and t.depth > 12:
        return f"<{t.op.name} node of depth {t.depth}>"
    try:
        text = str(t)
    except Exception:  # pragma: no cover - printing limits
        return f"<{t.op.name} node>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


@dataclass(frozen=True)
class Checkpoint:
    """A saved state of a graph: its outputs (terms are immutable, so that is the whole state)."""

    outputs: tuple[Term, ...]
    serial: int


class FunctionGraph:
    """The subgraph between ``inputs`` (symbols) and ``outputs``, with clients, replacement and features.

    ``inputs`` defaults to the free symbols of the outputs (in first-use order); a symbol given
    twice is kept twice, as upstream. ``clone`` is accepted and ignored (terms are immutable).
    Building is one walk over the DAG. See the module docstring for how replacements are propagated.
    """

    # structural edits in PyTensor's names (editing.py): imports, removals, input edits and dprint
    _declare_input = editing._declare_input
    add_input = editing.add_input
    remove_input = editing.remove_input
    import_node = editing.import_node
    import_var = editing.import_var
    remove_node = editing.remove_node
    change_node_input = editing.change_node_input
    dprint = editing.dprint

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
        #: the graph's inputs (symbols); they stay in the graph even when unused
        self.inputs: tuple[Term, ...] = ins
        self._input_set = frozenset(ins)
        self._outputs: list[Term] = outs
        # term -> {(client, operand index): None}; a dict used as an ordered set of positions
        clients: dict[Term, dict] = {t: {} for t in ins}
        missing = []
        input_set = self._input_set
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
        for i, o in enumerate(outs):
            clients[o][(OUTPUT, i)] = None
        self._clients = clients
        self._n_nodes = n
        #: stale nodes: their operands changed and they await a rebuild
        self._stale: set[Term] = set()
        #: stale node -> its current operands (when they differ from its args)
        self._logical: dict[Term, list[Term]] = {}
        self._topo: list[Term] | None = [t for t in order if _is_node(t)]
        self._version = 0
        self._serial = 0
        #: number of nodes imported by replacements (profiles count nodes created from it)
        self.imported = 0
        self._trackers: list[dict] = []
        self._features: list[Feature] = []
        self._callbacks: dict[str, list[Callable]] = {name: [] for name in _EVENTS}
        self._validators: list[Callable] = []
        #: nodes imported on their own (no client): they stay until removed (an ordered set)
        self._kept: dict[Term, None] = {}
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
            topo = self._topo = [t for t in postorder_until(roots, input_set.__contains__) if _is_node(t)]
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
            new = _as_term_like(new, old)
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
        if old.dtype != new.dtype or old.shape != new.shape:
            raise ReplacementTypeError(
                f"cannot replace {short(old)} ({old.dtype}, shape {old.shape}) by {short(new)} "
                f"({new.dtype}, shape {new.shape}): dtype and shape must agree"
            )
        new_nodes = self._plan_import(new, old, import_missing)
        if old not in clients:  # planning brought the graph up to date and ``old`` was rebuilt away
            raise NotInGraphError(f"{short(old)} is no longer a node of this graph")
        pos = clients[old]
        moved = list(pos)
        self._commit_import(new_nodes, reason)
        target = clients[new]
        outputs = self._outputs
        logical = self._logical
        stale = self._stale
        on_change = self._callbacks["on_change_input"]
        for p in moved:
            del pos[p]
            target[p] = None
            c, i = p
            if c is OUTPUT:
                outputs[i] = new
            else:
                la = logical.get(c)
                if la is None:
                    la = logical[c] = list(c.args)
                la[i] = new
                if c not in stale:
                    self._mark_stale(c)
            for cb in on_change:
                cb(self, c, i, old, new, reason)
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
            print(f"rewrite {_reason_name(reason)} replaces {short(old)} with {short(new)}", file=sys.stdout)

    def replace_all(self, pairs: Iterable[tuple[Term, Any]] | Mapping[Term, Any], reason: Any = None) -> None:
        """Replace each ``old`` by its ``new`` in turn (dtypes and shapes are checked first)."""
        items = list(pairs.items()) if isinstance(pairs, Mapping) else list(pairs)
        items = [(o, n if n.__class__ is Term else _as_term_like(n, o)) for o, n in items]
        for old, new in items:
            if old.dtype != new.dtype or old.shape != new.shape:
                raise ReplacementTypeError(
                    f"cannot replace {short(old)} ({old.dtype}, shape {old.shape}) by {short(new)} "
                    f"({new.dtype}, shape {new.shape}): dtype and shape must agree"
                )
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
        fresh = FunctionGraph(self.inputs, self.outputs)
        for k in self._kept:
            fresh.import_node(k)
        return fresh

    # -- features ----------------------------------------------------------------------------------------

    @property
    def features(self) -> list[Feature]:
        """The attached features, in attachment order."""
        return list(self._features)

    def attach_feature(self, feature: Feature) -> None:
        """Attach a feature: run its ``on_attach``, subscribe its callbacks, expose what it ``provides``."""
        from ..errors import FeatureError

        if any(f is feature for f in self._features):
            return
        for name in feature.provides:
            if hasattr(self, name):
                raise FeatureError(f"{type(feature).__name__} provides {name!r}, which this graph already has")
        feature.on_attach(self)
        self._features.append(feature)
        for name in feature.provides:
            setattr(self, name, _bind(getattr(feature, name), self))
        base = Feature
        for name in _EVENTS:
            if name in ("on_attach", "on_detach"):
                continue
            method = getattr(type(feature), name, None)
            if method is not None and method is not getattr(base, name, None):
                self._callbacks[name].append(getattr(feature, name))
        if type(feature).on_validate is not base.on_validate:
            self._validators.append(feature.on_validate)

    def remove_feature(self, feature: Feature) -> None:
        """Detach a feature (its callbacks and provided methods go away)."""
        for i, f in enumerate(self._features):
            if f is feature:
                del self._features[i]
                break
        else:
            return
        for name, cbs in self._callbacks.items():
            self._callbacks[name] = [cb for cb in cbs if getattr(cb, "__self__", None) is not feature]
        self._validators = [v for v in self._validators if getattr(v, "__self__", None) is not feature]
        for name in feature.provides:
            self.__dict__.pop(name, None)
        feature.on_detach(self)

    @property
    def has_validators(self) -> bool:
        """Whether an attached feature validates changes (then rewrites are checked as transactions)."""
        return bool(self._validators)

    def validate(self) -> None:
        """Run every feature's ``on_validate``; raises :class:`InconsistencyError` when one refuses."""
        if self._stale:
            self._flush()
        for v in self._validators:
            ok = v(self)
            if ok is False:
                raise InconsistencyError(f"validator {getattr(v, '__qualname__', v)!r} rejected the graph")

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
        from .printing import format_fgraph

        return format_fgraph(self)

    __str__ = __repr__

    # -- internals: import, prune, stale marking, rebuild -------------------------------------------------

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
        stale = self._stale
        clients = self._clients
        stack = [t]
        while stack:
            t = stack.pop()
            if t in stale:
                continue
            stale.add(t)
            for c, _ in clients[t]:
                if c is not OUTPUT and c not in stale:
                    stack.append(c)

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
        outputs = self._outputs
        logical = self._logical
        for p in pos:
            target[p] = None
            c, j = p
            if c is OUTPUT:
                outputs[j] = new
            else:
                lc = logical.get(c)
                if lc is None:
                    lc = logical[c] = list(c.args)
                lc[j] = new
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


def _is_node(t: Term) -> bool:
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


def _bind(method: Callable, fgraph: FunctionGraph) -> Callable:
    def bound(*args: Any, **kwargs: Any) -> Any:
        return method(fgraph, *args, **kwargs)

    bound.__name__ = getattr(method, "__name__", "provided")
    bound.__doc__ = getattr(method, "__doc__", None)
    return bound


def _as_term_like(value: Any, like: Term) -> Term:
    """A Python number as a constant of ``like``'s dtype; anything else through ``as_term``."""
    if value.__class__ in (int, float, bool):
        from ..core import const

        try:
            return const(value, dtype=like.dtype)
        except (TypeError, ValueError, OverflowError):
            return const(value)
    return as_term(value)


def _reason_name(reason: Any) -> str:
    if reason is None:
        return "<manual>"
    if isinstance(reason, str):
        return reason
    return getattr(reason, "name", None) or type(reason).__name__
