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

__all__ = ["digest", "sort_key", "in_sort_order"]

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
    for node in postorder_until((t,), _digests.__contains__):
        h = hashlib.blake2b(digest_size=12)
        h.update(node.op.name.encode())
        h.update(b"\0")
        h.update(_attr_text(node).encode())
        for a in node.args:
            h.update(_digests[a])
        _digests[node] = h.digest()
    return _digests[t]


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
