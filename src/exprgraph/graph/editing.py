"""Structural edits of a FunctionGraph, in PyTensor's names.

- ``import_node(t)`` / ``import_var(v)``: bring a term (and the DAG below it) into the graph
  without making it an output. With no client it is *kept*: it stays in the graph, and in
  ``toposort()``, until ``remove_node`` removes it. ``import_missing=True`` declares the symbols
  it uses that are not inputs yet as new inputs (else :class:`~exprgraph.errors.MissingInputError`).
- ``add_input(s)`` / ``remove_input(i)``: inputs are a tuple of symbols, duplicates allowed as
  upstream. Removing the last occurrence of a symbol removes every node that uses it, and every
  output that depends on it.
- ``remove_node(t)``: removes ``t``, everything that uses it (outputs included) and what is left
  without a user.
- ``change_node_input(node, i, new)``: terms are immutable, so operand ``i`` of ``node`` cannot be
  changed in place; the node is *replaced* by the same op applied to the new operands, which is
  what every user of the node sees in PyTensor too. ``node`` may be :data:`OUTPUT` (or
  ``"output"``) to set output ``i``.
- ``dprint()``: the DAG listing of the outputs (``file="str"`` returns it).

Every traversal here is iterative. :class:`GraphEditing` is a base class of
:class:`~exprgraph.graph.FunctionGraph` (its fields: :class:`~exprgraph.graph.state.GraphState`).
"""

from __future__ import annotations

from typing import Any, TextIO

from ..core import Term, as_term, dprint, get_op
from ..errors import MissingInputError, NotInGraphError, ReplacementTypeError
from .features import OUTPUT
from .state import GraphState

__all__ = ["GraphEditing"]

SYMBOL = get_op("symbol")


# -- inputs ------------------------------------------------------------------------------------------


# -- imports -----------------------------------------------------------------------------------------


# -- removal -----------------------------------------------------------------------------------------


# -- operands ----------------------------------------------------------------------------------------


# -- printing ----------------------------------------------------------------------------------------


class GraphEditing(GraphState):
    """The structural edits of a graph, in PyTensor's names."""

    def _declare_input(self, var: Term) -> None:
        self.inputs = (*self.inputs, var)
        self._input_set = self._input_set | {var}
        self._clients.setdefault(var, {})

    def add_input(self, var: Term, check: bool = True) -> None:
        """Add the symbol ``var`` as an input (with ``check``, nothing happens when it is one already)."""
        if var.__class__ is not Term or var.op is not SYMBOL:
            raise TypeError(f"graph inputs must be symbols, not {var!r}")
        if check and var in self._input_set:
            return
        self._declare_input(var)
        self._version += 1

    def remove_input(self, index: int, reason: Any = None) -> Term:
        """Remove the input at ``index``; if the symbol is no input any more, remove what uses it. Returns it."""
        ins = list(self.inputs)
        var = ins.pop(index)
        self.inputs = tuple(ins)
        self._version += 1
        if var in self.inputs:  # a duplicate: the symbol is still an input
            return var
        self._input_set = frozenset(self.inputs)
        if var in self._clients:
            self.remove_node(var, reason)
            if var in self._clients and not self._clients[var]:
                del self._clients[var]
        return var

    def import_node(self, node: Term, check: bool = True, reason: Any = None, import_missing: bool = False) -> None:
        """Bring ``node`` and the DAG below it into the graph; with no client it is kept until removed.

        Symbols that are not inputs raise :class:`MissingInputError` unless ``import_missing``
        (or ``check=False``): then they become inputs.
        """
        if node.__class__ is not Term:
            raise TypeError(f"import_node takes a term, not {node!r}")
        if self._stale:
            self._flush()
        if node in self._clients:
            return
        nodes = self._plan_import(node, None, import_missing or not check)
        self._commit_import(nodes, reason)
        if not self._clients[node]:
            self._kept[node] = None
        self._version += 1
        self._topo = None

    def import_var(self, var: Any, reason: Any = None, import_missing: bool = False) -> None:
        """Bring a term into the graph: a symbol must be an input (or ``import_missing`` makes it one)."""
        var = as_term(var)
        if var.op is SYMBOL:
            if var in self._input_set:
                return
            if not import_missing:
                raise MissingInputError(f"{var.name} is not an input of the graph (pass import_missing=True to add it)")
            self.add_input(var)
            return
        self.import_node(var, reason=reason, import_missing=import_missing)

    def remove_node(self, node: Term, reason: Any = None) -> None:
        """Remove ``node``, every node and output that uses it, and what is left without a user."""
        if self._stale:
            self._flush()
        clients = self._clients
        if node not in clients:
            return
        # everything above ``node``: its users, their users... (explicit stack)
        above = {node}
        stack = [node]
        doomed_outputs: list[int] = []
        while stack:
            t = stack.pop()
            for c, i in clients[t]:
                if c is OUTPUT:
                    doomed_outputs.append(i)
                elif c not in above:
                    above.add(c)
                    stack.append(c)
        for i in sorted(set(doomed_outputs), reverse=True):
            self.remove_output(i, reason)
        kept = self._kept
        for k in [k for k in kept if k in above]:
            del kept[k]
            if k in clients and not clients[k]:
                self._prune(k, reason)
        self._version += 1
        self._topo = None

    def change_node_input(
        self,
        node: Any,
        i: int,
        new_var: Any,
        reason: Any = None,
        import_missing: bool = False,
        check: bool = True,
    ) -> None:
        """Make operand ``i`` of ``node`` be ``new_var``: ``node`` is replaced by its op applied to the new operands.

        ``node`` may be :data:`OUTPUT` or ``"output"``: then output ``i`` becomes ``new_var``.
        The operand must keep its dtype and shape (with ``check``); the rebuilt node must have
        the node's dtype and shape in any case.
        """
        if node is OUTPUT or (isinstance(node, str) and node == "output"):
            outs = self.outputs
            new = as_term(new_var)
            if check and (new.dtype != outs[i].dtype or new.shape != outs[i].shape):
                raise ReplacementTypeError(f"output {i} cannot become {new}: dtype and shape must agree")
            if import_missing:
                self.import_var(new, reason, import_missing=True)
            outs[i] = new
            self.set_outputs(outs, reason)
            return
        if node.__class__ is not Term or not node.args:
            raise TypeError(f"change_node_input takes a node (a compound term) or OUTPUT, not {node!r}")
        cur = self.current(node)
        if cur is None:
            raise NotInGraphError(f"{node} is not a node of this graph")
        args = list(cur.args)
        old = args[i]
        new = as_term(new_var)
        if check and (new.dtype != old.dtype or new.shape != old.shape):
            raise ReplacementTypeError(
                f"operand {i} of {cur} is {old.dtype} of shape {old.shape}; {new} is {new.dtype} of shape {new.shape}"
            )
        args[i] = new
        self.replace(cur, Term(cur.op, tuple(args), cur.attr), reason, import_missing=import_missing)

    def dprint(self, file: TextIO | str | None = None, *, max_indent: int = 32) -> str | None:
        """Print the DAG listing of the outputs (``file="str"``: return it instead)."""
        return dprint(self.outputs, file, max_indent=max_indent)  # type: ignore[arg-type]  # "str" or a stream
