"""Features: listeners attached to a FunctionGraph, and the standard ones.

A :class:`Feature` overrides the callbacks it cares about; the graph calls only those. Names in
``provides`` become methods of the graph while the feature is attached (called with the graph
as first argument), as ``ReplaceValidate`` adds ``fgraph.replace_validate``.

Callbacks (all optional):

- ``on_attach(fgraph)`` / ``on_detach(fgraph)``: when attached or removed (raise to refuse);
- ``on_import(fgraph, node, reason)``: ``node`` entered the graph (``reason`` is ``"rebuild"``
  for a parent rebuilt after a replacement below it);
- ``on_prune(fgraph, node, reason)``: ``node`` left the graph;
- ``on_change_input(fgraph, client, index, old, new, reason)``: a position changed from ``old``
  to ``new`` (``client`` is a node, or ``OUTPUT`` for an output slot);
- ``on_replace(fgraph, old, new, reason)``: one call per :meth:`FunctionGraph.replace`;
- ``on_rebuild(fgraph, old, new)``: a node whose operands changed was rebuilt as ``new``;
- ``on_revert(fgraph, checkpoint)``: the graph went back to a checkpoint;
- ``on_validate(fgraph)``: return False or raise :class:`~exprgraph.errors.InconsistencyError`
  to reject the graph; a graph with validators runs each rewrite as a transaction.

The graph's side (``attach_feature``, ``remove_feature``, ``validate``, and pickling: a graph
pickles with its features, except ``transient`` caches, and re-subscribes them on loading) is
written here too, as functions bound in :class:`~exprgraph.graph.FunctionGraph`'s class body; the recording feature,
:class:`~exprgraph.graph.History`, has its own module. This module imports errors only; it reaches
the graph through the one it is given.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, cast

from ..core.pack import TermPack
from ..errors import FeatureError, InconsistencyError
from .state import GraphState

if TYPE_CHECKING:
    from ..core import Term
    from .fgraph import Checkpoint, FunctionGraph

__all__ = ["Feature", "ReplaceValidate", "Validator", "CALLBACKS", "OUTPUT", "GraphFeatures"]

#: the change callbacks a graph dispatches (``on_attach``/``on_detach``/``on_validate`` are separate)
CALLBACKS = ("on_import", "on_prune", "on_change_input", "on_replace", "on_rebuild", "on_revert")


class _Output:
    """The client marker of output slots: ``clients[t]`` holds ``(OUTPUT, i)`` when ``outputs[i] is t``."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "output"

    def __reduce__(self) -> str:
        return "OUTPUT"


#: the pseudo-client standing for the graph's output slots (in clients and in ``on_change_input``)
OUTPUT = _Output()


class Feature:
    """Base class of graph listeners: override the callbacks you need (see the module docstring)."""

    #: names of methods ``m(fgraph, *args)`` exposed as ``fgraph.m(*args)`` while attached
    provides: tuple[str, ...] = ()
    #: a cache its rewriter re-attaches when needed: left out when the graph is pickled
    transient: bool = False

    def on_attach(self, fgraph: FunctionGraph) -> None:
        """Called when attached; raise to refuse."""

    def on_detach(self, fgraph: FunctionGraph) -> None:
        """Called when removed."""

    def on_import(self, fgraph: FunctionGraph, node: Term, reason: Any) -> None:
        """``node`` entered the graph."""

    def on_prune(self, fgraph: FunctionGraph, node: Term, reason: Any) -> None:
        """``node`` left the graph."""

    def on_change_input(
        self, fgraph: FunctionGraph, client: Any, index: int, old: Term, new: Term, reason: Any
    ) -> None:
        """Position ``(client, index)`` now uses ``new`` instead of ``old``."""

    def on_replace(self, fgraph: FunctionGraph, old: Term, new: Term, reason: Any) -> None:
        """``fgraph.replace(old, new, reason)`` was done."""

    def on_rebuild(self, fgraph: FunctionGraph, old: Term, new: Term) -> None:
        """The node ``old`` was rebuilt with its current operands as ``new``."""

    def on_revert(self, fgraph: FunctionGraph, checkpoint: Checkpoint) -> None:
        """The graph went back to ``checkpoint``."""

    def on_validate(self, fgraph: FunctionGraph) -> bool | None:
        """Return False or raise InconsistencyError to reject the graph."""
        return None


class ReplaceValidate(Feature):
    """Provides ``replace_validate`` and ``replace_all_validate``: replace, validate, revert and raise on failure."""

    provides = ("replace_validate", "replace_all_validate")

    def replace_validate(
        self, fgraph: FunctionGraph, old: Term, new: Any, reason: Any = None, verbose: bool | None = None
    ) -> None:
        """Replace ``old`` by ``new``; if a validator rejects the result, undo it and raise."""
        self.replace_all_validate(fgraph, [(old, new)], reason, verbose)

    def replace_all_validate(
        self,
        fgraph: FunctionGraph,
        pairs: Iterable[tuple[Term, Any]],
        reason: Any = None,
        verbose: bool | None = None,
    ) -> None:
        """Replace each pair in turn, then validate; on any failure the graph is left as it was and the error raised.

        ``verbose=True`` prints each replacement as it is made (as ``fgraph.replace(..., verbose=True)``).
        """
        pairs = list(pairs)
        cp = fgraph.checkpoint()
        try:
            for old, new in pairs:
                fgraph.replace(old, new, reason, verbose=bool(verbose))
            fgraph.validate()
        except Exception:
            fgraph.revert(cp)
            raise


class Validator(Feature):
    """A validator from a function ``check(fgraph) -> bool`` (False rejects the graph)."""

    def __init__(self, check: Callable[[FunctionGraph], Any], name: str | None = None) -> None:
        self.check = check
        self.name = name or getattr(check, "__name__", "validator")

    def on_validate(self, fgraph: FunctionGraph) -> bool | None:
        """Run the check; raise InconsistencyError when it returns False."""
        if self.check(fgraph) is False:
            raise InconsistencyError(f"validator {self.name!r} rejected the graph")
        return None

    def __repr__(self) -> str:
        return f"Validator({self.name!r})"


def _bind(method: Callable, fgraph: FunctionGraph) -> Callable:
    """``method`` with the graph as its first argument (how a feature's ``provides`` become graph methods)."""
    bound = functools.partial(method, fgraph)
    bound.__doc__ = getattr(method, "__doc__", None)
    return bound


#: what a graph rebuilds after unpickling rather than pickles: its features' bound methods, walks in
#: progress, and the clients map (recomputed from the outputs: one term per node, never one per key)
_DERIVED = ("_callbacks", "_validators", "_trackers", "_topo", "_clients", "_n_nodes", "_stale", "_logical")


class GraphFeatures(GraphState):
    """Attaching, detaching and running features; pickling a graph with its features."""

    def attach_feature(self, feature: Feature) -> None:
        """Attach a feature: run its ``on_attach``, subscribe its callbacks, expose what it ``provides``."""
        if any(f is feature for f in self._features):
            return
        for name in feature.provides:
            if hasattr(self, name):
                raise FeatureError(f"{type(feature).__name__} provides {name!r}, which this graph already has")
        feature.on_attach(cast("FunctionGraph", self))
        self._features.append(feature)
        self._subscribe(feature)

    def _subscribe(self, feature: Feature) -> None:
        """Expose what ``feature`` provides and subscribe the callbacks it overrides (an attached feature)."""
        for name in feature.provides:
            setattr(self, name, _bind(getattr(feature, name), cast("FunctionGraph", self)))
        for name in CALLBACKS:
            method = getattr(type(feature), name, None)
            if method is not None and method is not getattr(Feature, name, None):
                self._callbacks[name].append(getattr(feature, name))
        if type(feature).on_validate is not Feature.on_validate:
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
        feature.on_detach(cast("FunctionGraph", self))

    def validate(self) -> None:
        """Run every feature's ``on_validate``; raises :class:`InconsistencyError` when one refuses."""
        if self._stale:
            self._flush()
        for v in self._validators:
            ok = v(self)
            if ok is False:
                raise InconsistencyError(f"validator {getattr(v, '__qualname__', v)!r} rejected the graph")

    def __getstate__(self) -> dict[str, Any]:
        """The graph's pickled state: inputs, outputs, kept nodes, counters and features (not transient caches)."""
        if self._stale:
            self._flush()
        state = dict(self.__dict__)
        for name in _DERIVED:
            state.pop(name, None)
        for f in self._features:
            for name in f.provides:
                state.pop(name, None)
        state["_features"] = [f for f in self._features if not f.transient]
        # the graph's terms in one flat node list: shared nodes once (term by term is quadratic)
        ins, outs, kept = state.pop("inputs"), state.pop("_outputs"), state.pop("_kept")
        state["_terms"] = (TermPack((*ins, *outs, *kept)), len(ins), len(outs))
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        """Restore a pickled graph: rebuild its clients map and re-subscribe its features (no ``on_attach`` again)."""
        pack, n_in, n_out = state.pop("_terms")
        terms = pack.terms
        state["inputs"], state["_outputs"] = terms[:n_in], list(terms[n_in : n_in + n_out])
        state["_kept"] = dict.fromkeys(terms[n_in + n_out :])
        fresh = cast("type[FunctionGraph]", type(self))(state["inputs"], state["_outputs"])
        for k in state["_kept"]:
            fresh.import_node(k)
        self.__dict__.update(state)
        self._clients, self._n_nodes = fresh._clients, fresh._n_nodes
        self._stale, self._logical = set(), {}
        self._callbacks = {name: [] for name in CALLBACKS}
        self._validators = []
        self._trackers = []
        self._topo = None
        for f in self._features:
            self._subscribe(f)
