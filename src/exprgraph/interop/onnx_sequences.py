"""Sequence and optional values in ONNX shape inference: the shapes of their elements.

A sequence is a :class:`Seq`: each element's shape when the elements are known one by one, else one
shape every element has (dims that differ between elements are fresh), and its length. An optional
is a Seq of length 0 or 1 (its element a tensor or, through ``inner``, a sequence). A rule gives
:class:`Slot` s: an output's shape, value or sequence. Imports: errors, onnx_dims.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import ShapeError
from .onnx_dims import Dim, Shape, Value, _axis, _int_attr

if TYPE_CHECKING:
    from .onnx_shapes import Inference

__all__ = ["Seq", "Slot", "merge_shapes", "SEQUENCE_RULES"]


@dataclass(frozen=True)
class Seq:
    """A sequence (or optional): its elements' shapes when known one by one, a shape all have, its length."""

    elems: tuple[Shape, ...] | None
    elem: Shape
    length: Dim
    optional: bool = False
    inner: Seq | None = None  # an optional's element when it is a sequence


@dataclass(frozen=True)
class Slot:
    """What a node output holds: a tensor's shape (and value), or a sequence."""

    shape: Shape = None
    value: Value | None = None
    seq: Seq | None = None


def same_dim(inf: Inference, a: Dim, b: Dim) -> bool:
    """True when ``a == b`` for every value of the dims."""
    if a is None or b is None:
        return False
    if a.__class__ is int and b.__class__ is int:
        return a == b
    return a is b or inf.env.equal(a, b) is True


def merge_shapes(inf: Inference, node: Any, shapes: list[Shape], what: str) -> Shape:
    """A shape every one of ``shapes`` has: dims equal in all kept, the others fresh; None when ranks differ."""
    if not shapes or any(s is None for s in shapes) or len({len(s) for s in shapes if s is not None}) > 1:
        return None
    first: tuple[Dim, ...] = shapes[0]  # type: ignore[assignment]
    out: list[Dim] = []
    for axis, d in enumerate(first):
        keep = all(same_dim(inf, d, s[axis]) for s in shapes[1:] if s is not None)
        out.append(d if keep else inf.fresh_dim(node, f"{what}{axis}"))
    return tuple(out)


def _seq_of(inf: Inference, node: Any, elems: list[Shape]) -> Seq:
    return Seq(tuple(elems), merge_shapes(inf, node, elems, "elem") if elems else None, len(elems))


def _input_seq(inf: Inference, node: Any, i: int = 0) -> Seq | None:
    if i >= len(node.input) or not node.input[i]:
        return None
    return inf.sequences.get(node.input[i])


def _position(inf: Inference, node: Any, i: int, n: int | None, insert: bool = False) -> int | None:
    """The position input ``i`` names in a sequence of ``n`` elements (negatives from the end); None when not known."""
    pos = inf.ints(node, i) if i < len(node.input) and node.input[i] else [n if insert else -1]
    if pos is None or len(pos) != 1 or n is None or pos[0] is None:
        return None
    p = pos[0]
    if not -n <= p <= n - (0 if insert else 1):
        raise ShapeError(f"position {p} out of range for a sequence of {n} elements")
    return p + n if p < 0 else p


def _construct(inf: Inference, node: Any) -> list[Slot]:
    # SequenceConstruct(x1, ..., xn): n elements, their shapes
    return [Slot(seq=_seq_of(inf, node, [inf.shape(node, i) for i in range(len(node.input))]))]


def _empty(inf: Inference, node: Any) -> list[Slot]:
    # SequenceEmpty: no elements
    return [Slot(seq=Seq((), None, 0))]


def _insert(inf: Inference, node: Any) -> list[Slot]:
    # SequenceInsert(s, x, pos): x put at pos (the end by default)
    s, x = _input_seq(inf, node), inf.shape(node, 1)
    if s is None:
        return [Slot(seq=Seq(None, x, None))]
    if s.elems is not None:
        p = _position(inf, node, 2, len(s.elems), insert=True)
        if p is not None:
            return [Slot(seq=_seq_of(inf, node, [*s.elems[:p], x, *s.elems[p:]]))]
    elem = x if s.length == 0 else merge_shapes(inf, node, [s.elem, x], "elem")
    return [Slot(seq=Seq(None, elem, inf.d.add(s.length, 1)))]


def _erase(inf: Inference, node: Any) -> list[Slot]:
    # SequenceErase(s, pos): the element at pos (the last by default) removed
    s = _input_seq(inf, node)
    if s is None:
        return [Slot(seq=Seq(None, None, None))]
    if s.elems is not None:
        p = _position(inf, node, 1, len(s.elems))
        if p is not None:
            return [Slot(seq=_seq_of(inf, node, [*s.elems[:p], *s.elems[p + 1 :]]))]
    return [Slot(seq=Seq(None, s.elem, inf.d.sub(s.length, 1)))]


def _at(inf: Inference, node: Any) -> list[Slot]:
    # SequenceAt(s, pos): the element's shape (a shape all elements have when pos is not known)
    s = _input_seq(inf, node)
    if s is None:
        return [Slot()]
    if s.elems is not None:
        p = _position(inf, node, 1, len(s.elems))
        if p is not None:
            return [Slot(s.elems[p])]
    return [Slot(s.elem)]


def _length(inf: Inference, node: Any) -> list[Slot]:
    # SequenceLength(s): a 0-d int64 holding the number of elements
    s = _input_seq(inf, node)
    return [Slot((), None if s is None or s.length is None else Value((s.length,), True))]


def _split_to_sequence(inf: Inference, node: Any) -> list[Slot]:
    # SplitToSequence(x, split, axis, keepdims): pieces along axis (of size 1, dropped, without split)
    x = inf.shape(node, 0)
    if x is None:
        return [Slot(seq=Seq(None, None, None))]
    axis = _axis(_int_attr(node, "axis", 0), len(x))
    has_split = len(node.input) > 1 and bool(node.input[1])
    split = inf.value(node, 1) if has_split else None
    if not has_split:
        keep = _int_attr(node, "keepdims", 1)
        elem = (*x[:axis], *((1,) if keep else ()), *x[axis + 1 :])
        return [Slot(seq=Seq(None, elem, x[axis]))]
    if split is not None and split.scalar and split.entries[0].__class__ is int:
        k: int = split.entries[0]
        size = x[axis]
        if size.__class__ is int and k > 0:
            sizes = [k] * (size // k) + ([size % k] if size % k else [])
            return [Slot(seq=_seq_of(inf, node, [(*x[:axis], n, *x[axis + 1 :]) for n in sizes]))]
        return [Slot(seq=Seq(None, (*x[:axis], None, *x[axis + 1 :]), inf.d.ceildiv(size, k) if k > 0 else None))]
    if split is not None and not split.scalar and len(split.entries) <= 64:
        return [Slot(seq=_seq_of(inf, node, [(*x[:axis], n, *x[axis + 1 :]) for n in split.entries]))]
    return [Slot(seq=Seq(None, (*x[:axis], None, *x[axis + 1 :]), None))]


def _concat_from_sequence(inf: Inference, node: Any) -> list[Slot]:
    # ConcatFromSequence(s, axis, new_axis): the elements joined along axis (stacked along a new one)
    s = _input_seq(inf, node)
    new = _int_attr(node, "new_axis", 0)
    elems = list(s.elems) if s is not None and s.elems is not None else None
    base = s.elem if s is not None else None
    if base is None and not elems:
        return [Slot()]
    rank = len(base if base is not None else elems[0])  # type: ignore[index, arg-type]
    axis = _axis(_int_attr(node, "axis"), rank + (1 if new else 0))
    if elems is not None and all(e is not None for e in elems):
        merged: list[Dim] = list(base) if base is not None else [None] * rank
        if new:
            return [Slot((*merged[:axis], len(elems), *merged[axis:]))]
        total = inf.d.total(e[axis] for e in elems)  # type: ignore[index]
        return [Slot((*merged[:axis], total, *merged[axis + 1 :]))]
    if base is None:
        return [Slot()]
    if new:
        return [Slot((*base[:axis], s.length if s else None, *base[axis:]))]
    return [Slot((*base[:axis], inf.d.mul(base[axis], s.length if s else None), *base[axis + 1 :]))]


def _optional(inf: Inference, node: Any) -> list[Slot]:
    # Optional(x): one element, x; Optional() (a type only): none
    if not node.input or not node.input[0]:
        return [Slot(seq=Seq((), None, 0, optional=True))]
    inner = _input_seq(inf, node)
    x = inf.shape(node, 0)
    return [Slot(seq=Seq((x,), x, 1, optional=True, inner=inner))]


def _has_element(inf: Inference, node: Any) -> list[Slot]:
    # OptionalHasElement(o): 1 when it holds an element (a plain tensor always does)
    o = _input_seq(inf, node)
    if o is None:
        known = None if not node.input or not node.input[0] else 1 if node.input[0] in inf.shapes else None
        return [Slot((), None if known is None else Value((known,), True, "bool"))]
    return [Slot((), None if o.length is None else Value((int(o.length != 0),), True, "bool"))]


def _get_element(inf: Inference, node: Any) -> list[Slot]:
    # OptionalGetElement(o): its element (a tensor passes through)
    o = _input_seq(inf, node)
    if o is None:
        return [Slot(inf.shape(node, 0), inf.tensor(node, 0))]
    if not o.optional:
        return [Slot(seq=o)]
    return [Slot(seq=o.inner)] if o.inner is not None else [Slot(o.elem)]


SEQUENCE_RULES: dict[str, Callable[[Inference, Any], list[Slot]]] = {
    "SequenceConstruct": _construct,
    "SequenceEmpty": _empty,
    "SequenceInsert": _insert,
    "SequenceErase": _erase,
    "SequenceAt": _at,
    "SequenceLength": _length,
    "SplitToSequence": _split_to_sequence,
    "ConcatFromSequence": _concat_from_sequence,
    "Optional": _optional,
    "OptionalHasElement": _has_element,
    "OptionalGetElement": _get_element,
}
