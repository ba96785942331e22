"""E-nodes: the flat tuples an e-graph stores, and their conversion to and from terms.

An e-node is a tuple ``(head, child_class, child_class, ...)``. The *head* says what the node
computes, and is chosen so that comparing and hashing it is cheap:

- a leaf (symbol, constant, any operand-less term) is its own head: ``(term,)``;
- an op without an attribute is headed by the :class:`~exprgraph.core.Op` itself: ``(add, 3, 7)``;
- an op with an attribute (``sum(x, axis=0)``) is headed by an interned pair ``(op, attr)``.

Heads are compared by identity inside the e-graph, so an e-node tuple hashes as fast as a tuple
of small integers. :class:`ENode` is the readable view handed to cost functions and analyses.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from ..core import Op, Term, get_op, register_op

__all__ = [
    "ENode",
    "head_of",
    "head_for",
    "op_of",
    "attr_of",
    "term_of",
    "term_from_keys",
    "is_leaf_head",
    "placeholder",
    "CONST",
    "SYMBOL",
    "ECLASS",
]

CONST = get_op("const")
SYMBOL = get_op("symbol")


def _eclass_infer(args: tuple, attr: Any) -> tuple[str, tuple]:
    return attr[1], ()


def _eclass_op() -> Op:
    try:
        return get_op("eclass")
    except KeyError:
        return register_op(
            Op(
                "eclass",
                0,
                _eclass_infer,
                notation="leaf",
                doc="A placeholder leaf standing for an e-class (what conditions and appliers see of a class "
                "that holds no constant and no symbol); attr (class id, dtype).",
            )
        )


#: the op of placeholder leaves (neither symbols nor constants, so predicates treat them as unknown)
ECLASS = _eclass_op()


def placeholder(c: int, dtype: str) -> Term:
    """The placeholder leaf standing for class ``c``."""
    return Term(ECLASS, (), (c, dtype))


#: interned ``(op, attr)`` heads, so equal heads are the same object
_ATTR_HEADS: dict[tuple, tuple] = {}


class ENode(NamedTuple):
    """A readable e-node: its op, its attribute (the leaf term's for leaves) and its child classes."""

    op: Op
    attr: Any
    children: tuple[int, ...]

    @property
    def is_leaf(self) -> bool:
        """True for operand-less nodes (symbols and constants)."""
        return not self.children


def head_for(op: Op, attr: Any = None) -> Any:
    """The head of non-leaf nodes of ``op`` with ``attr`` (the op itself when there is no attr)."""
    if attr is None:
        return op
    key = (op, attr if op.attr_key is None else op.attr_key(attr))
    found = _ATTR_HEADS.get(key)
    if found is None:
        found = _ATTR_HEADS[key] = key
    return found


def head_of(term: Term) -> Any:
    """The head of the e-node standing for ``term``'s root."""
    if not term.args:
        return term
    return term.op if term.attr is None else head_for(term.op, term.attr)


def is_leaf_head(head: Any) -> bool:
    """Whether ``head`` heads a leaf (its own term)."""
    return head.__class__ is Term


def op_of(head: Any) -> Op:
    """The op of a head."""
    cls = head.__class__
    if cls is Op:
        return head
    if cls is Term:
        return head.op
    return head[0]


def attr_of(head: Any) -> Any:
    """The attribute of a head (a leaf's own attribute: a constant's value, a symbol's name triple)."""
    cls = head.__class__
    if cls is Op:
        return None
    if cls is Term:
        return head.attr
    return head[1]


def term_of(head: Any, args: tuple) -> Term:
    """The term with this head over the given operand terms."""
    cls = head.__class__
    if cls is Op:
        return Term(head, args)
    if cls is Term:
        return head
    return Term(head[0], args, head[1])


def term_from_keys(nodes: Any, root: int, built: dict[int, Term]) -> Term:
    """The term of id ``root``, where ``nodes[id]`` is an e-node key ``(head, *operand ids)``.

    Built iteratively, operands first, and memoised in ``built`` (id -> term). Chosen nodes that
    lead back to an id being built form a cycle: :class:`ValueError`.
    """
    found = built.get(root)
    if found is not None:
        return found
    on_path: set[int] = set()
    stack = [root]
    while stack:
        c = stack[-1]
        if c in built:
            stack.pop()
            continue
        key = nodes[c]
        missing = [d for d in key[1:] if d not in built]
        if missing:
            if c in on_path:
                raise ValueError("the chosen nodes form a cycle; the cost function must grow from operands to users")
            on_path.add(c)
            stack.extend(missing)
            continue
        stack.pop()
        on_path.discard(c)
        built[c] = term_of(key[0], tuple([built[d] for d in key[1:]]))
    return built[root]
