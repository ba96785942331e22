"""The text form of a FunctionGraph: ``FunctionGraph(truediv(mul(*1 -> add(y, z), x), *1))``; short texts for messages.

Nodes print in call form with their op names; a node used in more than one place is tagged
``*k -> ...`` where it first appears and printed as ``*k`` afterwards, so the text stays the size
of the DAG. The format is a table of pieces for the printers' one emitter
(:func:`exprgraph.core.printing.emit`, iterative: any depth); graphs bigger than
:data:`MAX_REPR_NODES` print a summary. :func:`short` and :func:`reason_name` are the texts of a
term and of a rewrite's reason in messages. This module imports only core.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..core import Term
from ..core.printing import emit, format_const
from ..core.walk import postorder

if TYPE_CHECKING:
    from .fgraph import FunctionGraph

__all__ = ["format_fgraph", "format_terms", "MAX_REPR_NODES", "short", "reason_name"]

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


def _uses(outputs: list[Term]) -> dict[Term, int]:
    """How many positions (operand slots and outputs) use each compound node."""
    uses: dict[Term, int] = {}
    for o in outputs:
        uses[o] = uses.get(o, 0) + 1
    for t in postorder(outputs):
        for a in t.args:
            if a.args:
                uses[a] = uses.get(a, 0) + 1
    return uses


def format_terms(outputs: list[Term]) -> str:
    """Outputs in call form, comma separated, with ``*k`` tags on shared nodes.

    The graph format's table for the one emitter (:func:`exprgraph.core.printing.emit`): the
    emitter asks for a node's pieces in printing order, so the first time a shared node is met it
    is tagged and spelled out, and every later time cited.
    """
    uses = _uses(outputs)
    tags: dict[Term, int] = {}

    def parts(t: Term) -> list:
        if not t.args:
            return [_leaf(t)]
        k = tags.get(t)
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
        if uses.get(t, 0) > 1:
            k = tags[t] = len(tags) + 1
            out.append(f"*{k} -> ")
        return out

    return emit(outputs, parts)


def format_fgraph(fgraph: FunctionGraph) -> str:
    """``FunctionGraph(out1, out2, ...)`` as the seed prints it (a summary for big graphs)."""
    n = fgraph.node_count
    outputs = fgraph.outputs
    if n > MAX_REPR_NODES:
        return f"FunctionGraph(<{n} nodes, {len(outputs)} outputs>)"
    return f"FunctionGraph({format_terms(outputs)})"
