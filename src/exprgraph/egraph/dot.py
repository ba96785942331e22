"""Pictures of e-graphs: Graphviz source with one cluster per e-class.

Each class is a dotted box (a ``cluster``) holding its e-nodes; an edge goes from an e-node to the
class of each operand (drawn to the box's border with ``lhead``). Render the text with Graphviz,
``dot -Tsvg egraph.dot -o egraph.svg``, or paste it into any online Graphviz viewer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core import Term
from ..core.printing import format_const
from .enode import op_of

if TYPE_CHECKING:
    from .egraph import EGraph

__all__ = ["to_dot", "node_label"]


def node_label(head: object) -> str:
    """The text shown for an e-node: a leaf's value or name, an op's symbol (or name and attribute)."""
    if head.__class__ is Term:
        if head.op.name == "symbol":
            return head.attr[0]
        if head.op.name == "const":
            return format_const(head.attr)
        return str(head.attr)
    op = op_of(head)
    text = op.symbol if op.notation in ("infix", "prefix") else op.name
    if head.__class__ is tuple:
        text += f" {op.attr_name or 'attr'}={head[1]!r}"
    return text


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def to_dot(egraph: EGraph, *, name: str = "egraph", max_nodes: int = 2_000) -> str:
    """Graphviz source of ``egraph`` (after a rebuild): classes as clusters, operands as edges to classes."""
    egraph.rebuild()
    classes: dict[int, list[tuple]] = {}
    for c, key in egraph.iter_nodes():
        classes.setdefault(c, []).append(key)
    total = sum(len(v) for v in classes.values())
    if total > max_nodes:
        raise ValueError(f"the e-graph has {total} e-nodes; pass max_nodes={total} to draw it anyway")
    order = sorted(classes)
    for keys in classes.values():
        keys.sort(key=lambda k: (len(k) > 1, node_label(k[0]), k[1:]))
    lines = [f"digraph {_quote(name)} {{", "  compound=true", "  clusterrank=local", "  node [shape=box style=rounded]"]
    anchor: dict[int, str] = {}
    for c in order:
        lines.append(f"  subgraph cluster_{c} {{")
        lines.append(f'    style=dotted label="class {c}"')
        for i, key in enumerate(classes[c]):
            nid = f"n{c}_{i}"
            anchor.setdefault(c, nid)
            lines.append(f"    {nid} [label={_quote(node_label(key[0]))}]")
        lines.append("  }")
    for c in order:
        for i, key in enumerate(classes[c]):
            kids = key[1:]
            for j, d in enumerate(kids):
                label = f" label={j}" if len(kids) > 1 and not op_of(key[0]).commutative else ""
                attrs = f"lhead=cluster_{d}{label}" if d != c else f"lhead=cluster_{d}{label} constraint=false"
                lines.append(f"  n{c}_{i} -> {anchor[d]} [{attrs}]")
    lines.append("}")
    return "\n".join(lines)
