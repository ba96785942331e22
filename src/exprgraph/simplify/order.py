"""A deterministic total order on terms, for sorting the operands of canonical sums and products.

Symbols sort by name; other terms by op name and then by a structural digest (BLAKE2 over the
op, the attribute and the operands' digests). The digest depends only on the structure, so the
order is the same in every process (unlike Python's salted ``hash``). Digests are cached per
term, weakly, and computed iteratively (deep terms are fine).
"""

from __future__ import annotations

import hashlib
import weakref
from typing import Any

import numpy as np

from ..core import Term
from ..core.walk import postorder_until

__all__ = ["digest", "sort_key", "in_sort_order", "sorted_terms"]

_digests: weakref.WeakKeyDictionary[Term, bytes] = weakref.WeakKeyDictionary()


def clear_digests() -> None:
    """Forget the digests worked out so far."""
    _digests.clear()


def _attr_text(t: Term) -> str:
    attr = t.attr
    if attr is None:
        return ""
    if t.op.name == "const":
        v = attr
        if v.__class__ is float:
            return "f" + v.hex()
        if v.__class__ in (int, bool):
            return f"{type(v).__name__}{v}"
        if v.__class__ is np.float32:
            return "f32" + float(v).hex()
        return "a" + hashlib.blake2b(repr(v).encode() + v.array.tobytes(), digest_size=8).hexdigest()
    if t.op.name == "symbol":
        name, dtype, shape = attr
        return f"{name}:{dtype}:" + ",".join(str(d) for d in shape)
    return repr(attr)


def digest(t: Term) -> bytes:
    """A structural digest of ``t`` (equal for equal terms in any process)."""
    found = _digests.get(t)
    if found is not None:
        return found
    made: dict[Term, bytes] = {}  # this walk's digests: its operands are read here, not through weak references
    for node in postorder_until((t,), _digests.__contains__):
        parts = [node.op.name.encode(), b"\0", _attr_text(node).encode()]
        for a in node.args:
            known = made.get(a)
            parts.append(known if known is not None else _digests[a])
        made[node] = hashlib.blake2b(b"".join(parts), digest_size=12).digest()  # the bytes hashed in one piece
    for node, d in made.items():
        _digests[node] = d
    return made[t]


def sort_key(t: Term) -> tuple[Any, ...]:
    """Constants first, then symbols by name, then other terms by op name and structure."""
    return (*_head(t), digest(t))


def _head(t: Term) -> tuple[int, str]:
    """The first two fields of :func:`sort_key` (no digest): the kind, and the name of a symbol or an op."""
    name = t.op.name
    if name == "const":
        return (0, "")
    if name == "symbol":
        return (1, t.attr[0])
    return (2, name)


def in_sort_order(a: Term, b: Term) -> bool:
    """Whether ``sort_key(a) <= sort_key(b)``, the digests worked out only where the kind and name tie."""
    ha, hb = _head(a), _head(b)
    if ha != hb:
        return ha < hb
    return digest(a) <= digest(b)


def sorted_terms(items: list[Term]) -> list[Term]:
    """``sorted(items, key=sort_key)``, the digests worked out only for terms whose kind and name tie.

    Every two terms compare as their sort keys do (by the head where the heads differ, else by the
    digest), so the stable sort makes the same order; a term of a head of its own needs no digest.
    """
    if len(items) < 2:
        return list(items)
    heads = [_head(t) for t in items]
    count: dict[tuple[int, str], int] = {}
    for h in heads:
        count[h] = count.get(h, 0) + 1
    if len(count) == len(heads):  # no tie: the heads alone order them
        keys: list[Any] = heads
    else:
        keys = [(h, digest(t)) if count[h] > 1 else (h, b"") for h, t in zip(heads, items, strict=True)]
    order = sorted(range(len(items)), key=keys.__getitem__)
    return [items[i] for i in order]
