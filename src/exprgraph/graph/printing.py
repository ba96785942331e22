"""The text form of a FunctionGraph: ``FunctionGraph(truediv(mul(*1 -> add(y, z), x), *1))``; short texts for messages.

Nodes print in call form with their op names; a node used in more than one place is tagged
``*k -> ...`` where it first appears and printed as ``*k`` afterwards, so the text stays the size
of the DAG. The format is a table of pieces for the printers' one emitter
(:func:`exprgraph.core.printing.emit`, iterative: any depth); graphs bigger than
:data:`MAX_REPR_NODES` print a summary. :func:`as_string` is PyTensor's text of the subgraph
between inputs and outputs in the same format (a node given as an input printed as a leaf, any
leaf and node formatters). :func:`short` and :func:`reason_name` are the texts of a term and of a
rewrite's reason in messages. This module imports only core.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from ..core import Term
from ..core.printing import emit, format_const
from ..core.walk import postorder_until

if TYPE_CHECKING:
    from .fgraph import FunctionGraph

__all__ = [
    "format_fgraph",
    "format_terms",
    "as_string",
    "default_node_formatter",
    "MAX_REPR_NODES",
    "short",
    "reason_name",
]

#: beyond this many nodes, ``repr(fgraph)`` is a one-line summary
MAX_REPR_NODES = 400


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


def reason_name(reason: Any) -> str:
    """The name of a rewrite's reason in messages (``<manual>`` for none)."""
    if reason is None:
        return "<manual>"
    if isinstance(reason, str):
        return reason
    return getattr(reason, "name", None) or type(reason).__name__


def _leaf(t: Term) -> str:
    op = t.op
    if op.notation != "leaf":  # a nullary op: Op1()
        return f"{op.name}()" if t.attr is None else f"{op.name}({op.attr_name or 'attr'}={t.attr!r})"
    if op.name == "symbol":
        return t.attr[0]
    return format_const(t.attr)


def _uses(outputs: list[Term], cut: frozenset[Term] | set[Term] = frozenset()) -> dict[Term, int]:
    """How many positions (operand slots and outputs) use each compound node above ``cut``."""
    uses: dict[Term, int] = {}
    for o in outputs:
        uses[o] = uses.get(o, 0) + 1
    for t in postorder_until(outputs, cut.__contains__):
        for a in t.args:
            if a.args:
                uses[a] = uses.get(a, 0) + 1
    return uses


class _CallForm:
    """Texts of outputs in call form with ``*k`` tags on shared nodes, the tags shared across outputs.

    A node in ``cut`` (or a leaf) is printed by ``leaf``; ``node_text(node, operand_texts)``, when
    given, spells a node from its operands' texts (built bottom up, as upstream's formatters
    need); otherwise the pieces go to the printers' one emitter, which is linear at any depth.
    """

    def __init__(
        self,
        outputs: list[Term],
        cut: frozenset[Term] | set[Term] = frozenset(),
        leaf: Callable[[Term], str] | None = None,
    ) -> None:
        self.cut = cut
        self.leaf = leaf
        self.uses = _uses(outputs, cut)
        self.tags: dict[Term, int] = {}

    def is_leaf(self, t: Term) -> bool:
        return not t.args or t in self.cut

    def leaf_text(self, t: Term) -> str:
        return self.leaf(t) if self.leaf is not None else _leaf(t)

    def parts(self, t: Term) -> list:
        if self.is_leaf(t):
            return [self.leaf_text(t)]
        k = self.tags.get(t)
        if k is not None:
            return [f"*{k}"]
        args = t.args
        out: list = [")"]  # reversed pieces of name(a, b, attr=...)
        if t.attr is not None:
            out.append(f", {t.op.attr_name or 'attr'}={t.attr!r}")
        for i in range(len(args) - 1, -1, -1):
            out.append((args[i], False))
            if i:
                out.append(", ")
        out.append(f"{t.op.name}(")
        if self.uses.get(t, 0) > 1:
            k = self.tags[t] = len(self.tags) + 1
            out.append(f"*{k} -> ")
        return out

    def text(self, root: Term) -> str:
        """The text of one output (tags continue from the outputs printed before)."""
        return emit([root], self.parts)

    def texts_with(self, outputs: list[Term], node_text: Callable[[Term, list[str]], str]) -> list[str]:
        """The outputs' texts, each node spelled by ``node_text(node, operand_texts)``."""
        first = self._first_positions(outputs)
        body: dict[Term, str] = {}
        for t in postorder_until(outputs, self.cut.__contains__):
            if not self.is_leaf(t):
                body[t] = node_text(t, [self._ref(a, (t, i), first, body) for i, a in enumerate(t.args)])
        return [self._ref(o, (None, i), first, body) for i, o in enumerate(outputs)]

    def _ref(self, t: Term, position: tuple, first: dict[Term, tuple], body: dict[Term, str]) -> str:
        if self.is_leaf(t):
            return self.leaf_text(t)
        k = self.tags.get(t)
        if k is None:
            return body[t]
        return f"*{k} -> {body[t]}" if first[t] == position else f"*{k}"

    def _first_positions(self, outputs: list[Term]) -> dict[Term, tuple]:
        """Tag the shared nodes in reading order; for each, the position where its text is spelled out."""
        first: dict[Term, tuple] = {}
        stack: list[tuple[Term, tuple]] = [(o, (None, i)) for i, o in reversed(list(enumerate(outputs)))]
        while stack:
            t, pos = stack.pop()
            if self.is_leaf(t) or t in first:
                continue
            if self.uses.get(t, 0) > 1:
                first[t] = pos
                self.tags[t] = len(self.tags) + 1
            stack.extend((t.args[i], (t, i)) for i in range(len(t.args) - 1, -1, -1))
        return first


def format_terms(outputs: list[Term]) -> str:
    """Outputs in call form, comma separated, with ``*k`` tags on shared nodes (``*k -> ...`` where first met)."""
    form = _CallForm(outputs)
    return ", ".join(form.text(o) for o in outputs)


def default_node_formatter(node: Term, argstrings: list[str]) -> str:
    """``name(a, b)``, with the node's attribute last (``sum(x, axis=(0,))``): :func:`as_string`'s default."""
    extra = [] if node.attr is None or not node.args else [f"{node.op.attr_name or 'attr'}={node.attr!r}"]
    return f"{node.op.name}({', '.join([*argstrings, *extra])})"


def as_string(
    inputs: Iterable[Term],
    outputs: Iterable[Term],
    leaf_formatter: Callable[[Term], str] = str,
    node_formatter: Callable[[Term, list[str]], str] = default_node_formatter,
) -> list[str]:
    """The text of each output, the nodes between ``inputs`` and ``outputs`` in call form (PyTensor's ``as_string``).

    ``inputs`` (and leaves) are printed by ``leaf_formatter``, so a node given as an input is cut
    there; a node used in several places is spelled ``*k -> ...`` where first met and ``*k``
    afterwards (numbered across the outputs). ``node_formatter(node, argstrings)`` spells a node
    (the term: ``node.op``, ``node.attr``) from its operands' texts.
    """
    outs = list(outputs)
    form = _CallForm(outs, frozenset(inputs), leaf_formatter)
    if node_formatter is default_node_formatter:
        return [form.text(o) for o in outs]
    return form.texts_with(outs, node_formatter)


def format_fgraph(fgraph: FunctionGraph) -> str:
    """``FunctionGraph(out1, out2, ...)`` as the seed prints it (a summary for big graphs)."""
    n = fgraph.node_count
    outputs = fgraph.outputs
    if n > MAX_REPR_NODES:
        return f"FunctionGraph(<{n} nodes, {len(outputs)} outputs>)"
    return f"FunctionGraph({format_terms(outputs)})"
