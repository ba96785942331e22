"""The fields a FunctionGraph's parts share: declared once here, set by ``FunctionGraph.__init__``.

:class:`~exprgraph.graph.FunctionGraph` is one class written as a few concepts, each a base class
in its own module: :class:`~exprgraph.graph.propagation.GraphPropagation` (importing, pruning,
the lazy rebuild), :class:`~exprgraph.graph.editing.GraphEditing` (PyTensor's structural edits)
and :class:`~exprgraph.graph.features.GraphFeatures` (listeners, validation, pickling). They all
derive from :class:`GraphState`, which names the fields and, for the type checker only, the
methods one part calls on another.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from ..core import Term

if TYPE_CHECKING:
    from .features import Feature
    from .propagation import ClientsView

__all__ = ["GraphState"]


class GraphState:
    """The state of a function graph (see the module docstring); it holds no code."""

    #: the graph's inputs (symbols); they stay in the graph even when unused
    inputs: tuple[Term, ...]
    _input_set: frozenset[Term]
    _outputs: list[Term]
    #: term -> {(client, operand index): None}; a dict used as an ordered set of positions
    _clients: dict[Term, dict[tuple[Any, int], None]]
    _n_nodes: int
    #: stale nodes: their operands changed and they await a rebuild
    _stale: set[Term]
    #: stale node -> its current operands (when they differ from its args)
    _logical: dict[Term, list[Term]]
    _topo: list[Term] | None
    _version: int
    _serial: int
    #: number of nodes imported by replacements (profiles count nodes created from it)
    imported: int
    _trackers: list[dict]
    _features: list[Feature]
    _callbacks: dict[str, list[Callable]]
    _validators: list[Callable]
    #: nodes imported on their own (no client): they stay until removed (an ordered set)
    _kept: dict[Term, None]

    if TYPE_CHECKING:  # what the parts call on one another (defined by FunctionGraph and the parts)

        @property
        def outputs(self) -> list[Term]: ...
        @property
        def clients(self) -> ClientsView: ...
        def replace(
            self, old: Term, new: Any, reason: Any = None, *, verbose: bool = False, import_missing: bool = False
        ) -> None: ...
        def current(self, t: Term) -> Term | None: ...
        def remove_output(self, index: int, reason: Any = None) -> Term: ...
        def set_outputs(self, outputs: Iterable[Any], reason: Any = None) -> None: ...
        def toposort(self) -> list[Term]: ...
        def import_node(
            self, node: Any, check: bool = True, reason: Any = None, import_missing: bool = False
        ) -> None: ...
        def _flush(self) -> None: ...
        def _declare_input(self, var: Term) -> None: ...
        def _plan_import(self, new: Term, old: Term | None, import_missing: bool = False) -> list[Term]: ...
        def _commit_import(self, nodes: list[Term], reason: Any) -> None: ...
        def _prune(self, t: Term, reason: Any) -> None: ...
        def _refresh(self, t: Term) -> Term: ...
