"""FrozenFunctionGraph: a graph as a value (hashable, comparable), made by ``FunctionGraph.freeze()``.

As in PyTensor, freezing renames the inputs by position: input ``k`` becomes the symbol ``ik``
(same dtype and shape), so two graphs computing the same thing from their inputs in the same
order are equal, whatever the inputs were called. Terms are interned, so the frozen graph is
just its inputs and outputs tuples: equality is identity of those tuples, the hash is computed
once, pickling round-trips to an equal value, and no feature or history comes along.
``unfreeze()`` makes a mutable :class:`~exprgraph.graph.FunctionGraph` of it again and ``bind``
substitutes values for the inputs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from ..core import Symbol, Term, as_term
from ..core.pack import TermPack
from ..core.walk import postorder
from ..errors import MissingInputError
from .features import OUTPUT
from .printing import MAX_REPR_NODES, format_terms
from .propagation import index_clients, is_node
from .replace import graph_replace

if TYPE_CHECKING:
    from .fgraph import FunctionGraph

__all__ = ["FrozenFunctionGraph", "freeze", "nominal_input"]

#: the mutable graph class :meth:`FrozenFunctionGraph.unfreeze` builds; :mod:`exprgraph.graph.fgraph`
#: (which imports this module to bind ``freeze``) sets it to ``FunctionGraph``
graph_class: Callable[..., Any] | None = None


def nominal_input(position: int, like: Term) -> Term:
    """The symbol standing for input ``position`` in a frozen graph: ``i<position>`` with ``like``'s dtype and shape."""
    return Symbol(f"i{position}", like.dtype, like.shape)


class FrozenFunctionGraph:
    """An immutable, hashable graph: nominal inputs ``i0, i1, ...`` and the outputs over them.

    ``FrozenFunctionGraph(inputs, outputs)`` freezes directly; every symbol the outputs use must
    be one of ``inputs`` (:class:`~exprgraph.errors.MissingInputError`, a ``ValueError``).
    """

    __slots__ = ("inputs", "outputs", "_hash")

    inputs: tuple[Term, ...]
    outputs: tuple[Term, ...]
    _hash: int

    def __init__(self, inputs: Iterable[Term], outputs: Iterable[Any]) -> None:
        ins = tuple(inputs)
        outs = [as_term(o) for o in outputs]
        for t in ins:
            if t.__class__ is not Term or not t.is_symbol:
                raise TypeError(f"graph inputs must be symbols, not {t!r}")
        mapping: dict[Term, Term] = {}
        for k, t in enumerate(ins):
            mapping.setdefault(t, nominal_input(k, t))  # a symbol given twice stands for its first slot
        orphans = sorted({t.name for t in postorder(outs) if t.is_symbol and t not in mapping})
        if orphans:
            raise MissingInputError(f"the outputs use symbols that are not inputs of the graph: {', '.join(orphans)}")
        object.__setattr__(self, "inputs", tuple(nominal_input(k, t) for k, t in enumerate(ins)))
        new = graph_replace(outs, mapping, strict=False) if outs else []
        object.__setattr__(self, "outputs", tuple(new))
        object.__setattr__(self, "_hash", hash((FrozenFunctionGraph, self.inputs, self.outputs)))

    @classmethod
    def _restore(cls, pack: TermPack, n_inputs: int) -> FrozenFunctionGraph:
        """Rebuild from already nominal parts (unpickling: inputs then outputs, in one flat pack)."""
        obj = cls.__new__(cls)
        object.__setattr__(obj, "inputs", pack.terms[:n_inputs])
        object.__setattr__(obj, "outputs", pack.terms[n_inputs:])
        object.__setattr__(obj, "_hash", hash((FrozenFunctionGraph, obj.inputs, obj.outputs)))
        return obj

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"a FrozenFunctionGraph cannot be changed (setting {name!r}); unfreeze() it first")

    def __reduce__(self) -> tuple:
        return (FrozenFunctionGraph._restore, (TermPack((*self.inputs, *self.outputs)), len(self.inputs)))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, FrozenFunctionGraph):
            return NotImplemented
        return self._hash == other._hash and self.inputs == other.inputs and self.outputs == other.outputs

    def __hash__(self) -> int:
        return self._hash

    def __copy__(self) -> FrozenFunctionGraph:
        return self

    def __deepcopy__(self, memo: dict) -> FrozenFunctionGraph:
        return self

    def unfreeze(self) -> FunctionGraph:
        """A mutable FunctionGraph over the nominal inputs (no features)."""
        if graph_class is None:  # pragma: no cover - importing exprgraph.graph sets it
            raise RuntimeError("import exprgraph.graph before unfreezing a graph")
        graph: FunctionGraph = graph_class(self.inputs, list(self.outputs))
        return graph

    def bind(self, replace: Mapping[Term, Any]) -> list[Term]:
        """The outputs with ``replace[i]`` put for each nominal input ``i`` (``KeyError`` for an input left out)."""
        for t in self.inputs:
            if t not in replace:
                raise KeyError(f"missing replacement for input {t.name}")
        return list(graph_replace(list(self.outputs), {t: replace[t] for t in self.inputs}, strict=False))

    def toposort(self) -> list[Term]:
        """The nodes in dependency order."""
        return [t for t in postorder(self.outputs) if is_node(t)]

    @property
    def apply_nodes(self) -> set[Term]:
        """The set of nodes (compound terms)."""
        return set(self.toposort())

    @property
    def variables(self) -> set[Term]:
        """Every term of the graph: inputs, constants and nodes."""
        return set(self.inputs) | set(postorder(self.outputs))

    @property
    def clients(self) -> dict[Term, list[tuple[Any, int]]]:
        """``clients[t]``: the ``(node, operand index)`` and ``(OUTPUT, output index)`` positions using ``t``."""
        table, _ = index_clients(postorder(self.outputs), self.inputs)
        for i, o in enumerate(self.outputs):
            table[o][(OUTPUT, i)] = None
        return {t: list(pos) for t, pos in table.items()}

    def __iter__(self) -> Iterator[Term]:
        return iter(self.toposort())

    def __repr__(self) -> str:
        ins = ", ".join(t.name for t in self.inputs)
        n = sum(1 for t in postorder(self.outputs) if is_node(t))
        if n > MAX_REPR_NODES:
            return f"FrozenFunctionGraph([{ins}], <{n} nodes, {len(self.outputs)} outputs>)"
        return f"FrozenFunctionGraph([{ins}], {format_terms(list(self.outputs))})"


def freeze(fgraph: FunctionGraph) -> FrozenFunctionGraph:
    """``fgraph.freeze()``: the graph's inputs and outputs as a hashable, comparable value."""
    return FrozenFunctionGraph(fgraph.inputs, fgraph.outputs)
