"""The loop language of vector programs (:mod:`.vloop`): views, index expressions, statements, plans.

A :class:`LoopPlan` is a list of :class:`Nest` loop nests; a nest's body holds :class:`Let` (a local
computed by one op), :class:`Acc` (an accumulator set to a start value), :class:`Fold` (one step of
a reduction into an accumulator), :class:`Store` (an entry written to memory) and inner nests.
Memory is read through :class:`View` (an array seen through an offset and a stride per axis) at
index expressions (loop variables, :class:`Shift`, :class:`Lookup`). Each backend renders these
with its one rendering of each op (:mod:`.vloop_c`, :mod:`.vloop_llvm`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ..core import Term
from ..core.dtypes import BOOL, FLOAT32, FLOAT64, INT64
from .lower import Program

__all__ = [
    "View",
    "Shift",
    "Lookup",
    "Index",
    "Read",
    "Operand",
    "Let",
    "Acc",
    "Fold",
    "Store",
    "Nest",
    "LoopPlan",
    "dense",
    "ITEMSIZE",
]

#: bytes of an entry of each dtype in memory (bools as bytes)
ITEMSIZE = {FLOAT64: 8, FLOAT32: 4, INT64: 8, BOOL: 1}
_ALIGN = 64


@dataclass(frozen=True)
class View:
    """Entries of an array seen through an offset and a stride per axis (or one constant everywhere)."""

    base: str
    dtype: str
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    offset: int = 0
    #: a constant: every entry is this value (``base`` unused)
    value: Any = None

    @property
    def ndim(self) -> int:
        """The number of axes."""
        return len(self.shape)

    def broadcast(self, shape: tuple[int, ...]) -> View:
        """This view broadcast to ``shape`` as numpy does (new and length-1 axes read with stride 0)."""
        lead = len(shape) - len(self.shape)
        kept = zip(self.shape, shape[lead:], self.strides, strict=True)
        strides = (0,) * lead + tuple(0 if n == 1 and m != 1 else s for n, m, s in kept)
        return replace(self, shape=shape, strides=strides)

    def contiguous(self) -> bool:
        """Whether the entries sit in row-major order one after another (length-1 axes aside)."""
        want = 1
        for n, s in zip(reversed(self.shape), reversed(self.strides), strict=True):
            if n != 1 and s != want:
                return False
            want *= n
        return True


@dataclass(frozen=True)
class Shift:
    """Index ``var + by`` (a part's place in a ``concat``); ``by`` alone when ``var`` is empty."""

    var: str
    by: int


@dataclass(frozen=True)
class Lookup:
    """Index read from an int64 table at ``index`` (``take`` and ``scatter_add`` at irregular positions)."""

    table: View
    index: tuple[Index, ...]


#: a loop variable's name, or one of the index expressions above
Index = str | Shift | Lookup


@dataclass(frozen=True)
class Read:
    """The entry of ``view`` at ``index``."""

    view: View
    index: tuple[Index, ...]


#: a local's name, or an entry read from memory
Operand = str | Read


@dataclass(frozen=True)
class Let:
    """``name = node's op on args`` (the operands have the dtypes of ``node.args``)."""

    name: str
    node: Term
    args: tuple[Operand, ...]


@dataclass(frozen=True)
class Acc:
    """A variable ``name`` of ``dtype`` set to ``start`` (a reduction's accumulator)."""

    name: str
    dtype: str
    start: Any


@dataclass(frozen=True)
class Fold:
    """``acc = step(acc, item)``: ``step`` is a binary term over symbols of the accumulator's dtype."""

    acc: str
    step: Term
    item: Operand
    item_dtype: str


@dataclass(frozen=True)
class Store:
    """``view[index] = value`` (``value`` of ``dtype``, converted to the view's)."""

    view: View
    index: tuple[Index, ...]
    value: Operand
    dtype: str


@dataclass(frozen=True)
class Nest:
    """Loops over ``shape`` (variables ``{tag}0, {tag}1, ...``) around ``body``.

    ``simd``: ``"map"`` when iterations are independent, ``"sum"`` when they only add to the
    accumulators, ``""`` otherwise (a backend may vectorise the innermost loop of the first two).
    """

    shape: tuple[int, ...]
    tag: str
    body: tuple[Any, ...]
    simd: str = ""


@dataclass
class LoopPlan:
    """A vector program as loop nests over named arrays (see the module's description)."""

    program: Program
    #: top-level loop nests, in the order they run
    loops: list[Nest] = field(default_factory=list)
    #: arrays each nest names (its function declares them)
    names: list[set[str]] = field(default_factory=list)
    #: name -> (kind, dtype, place): kind "in" / "out" (place: position), "work" / "table" (place: byte offset)
    arrays: dict[str, tuple[str, str, int]] = field(default_factory=dict)
    #: bytes of work space per point, and the constant tables as bytes
    work_bytes: int = 0
    constants: bytearray = field(default_factory=bytearray)
    #: bytes of each work buffer (a multiple of 64)
    sizes: dict[str, int] = field(default_factory=dict)
    #: views of every node read so far
    views: dict[Term, View] = field(default_factory=dict)
    #: nodes waiting to be computed inside their reader's loop: node -> the fused group, operands first
    pending: dict[Term, list[Term]] = field(default_factory=dict)

    def buffer(self, node: Term) -> View:
        """A fresh work buffer of ``node``'s shape and dtype (placed by :meth:`place_buffers`)."""
        name = f"b{len(self.arrays)}"
        self.arrays[name] = ("work", node.dtype, -1)
        size = math.prod(node.shape) * ITEMSIZE[node.dtype]
        self.sizes[name] = -(-max(size, 8) // _ALIGN) * _ALIGN
        return dense(name, node.dtype, tuple(node.shape))

    def place_buffers(self) -> None:
        """Give each work buffer its offset: a buffer's bytes are reused once no later nest names it.

        A buffer lives from the first nest naming it to the last; one whose life has ended (strictly
        before the nest at hand) gives its bytes to the next buffer of the same size.
        """
        last: dict[str, int] = {}
        for k, names in enumerate(self.names):
            for name in names:
                last[name] = k
        free: dict[int, list[int]] = {}
        ending: dict[int, list[str]] = {}
        placed: set[str] = set()
        for k, names in enumerate(self.names):
            for name in sorted(n for n in names if n in self.sizes and n not in placed):
                size = self.sizes[name]
                spare = free.get(size)
                offset = spare.pop() if spare else self.work_bytes
                if offset == self.work_bytes:
                    self.work_bytes += size
                kind, dtype, _ = self.arrays[name]
                self.arrays[name] = (kind, dtype, offset)
                placed.add(name)
                ending.setdefault(last[name], []).append(name)
            for name in ending.pop(k, ()):
                free.setdefault(self.sizes[name], []).append(self.arrays[name][2])

    def table(self, values: np.ndarray, dtype: str) -> View:
        """A constant array as a run-time table (in its dtype's memory layout) and its view."""
        name = f"k{len(self.arrays)}"
        while len(self.constants) % _ALIGN:
            self.constants.append(0)
        self.arrays[name] = ("table", dtype, len(self.constants))
        numpy_type = {FLOAT64: np.float64, FLOAT32: np.float32, INT64: np.int64, BOOL: np.uint8}[dtype]
        self.constants.extend(np.ascontiguousarray(values, dtype=numpy_type).tobytes())
        return dense(name, dtype, tuple(values.shape))

    def emit(self, nest: Nest, views: Sequence[View]) -> None:
        """Add one loop nest reading or writing ``views``."""
        self.loops.append(nest)
        self.names.append({v.base for v in views if v.value is None})


def dense(base: str, dtype: str, shape: tuple[int, ...]) -> View:
    """A row-major array's view."""
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= n
    return View(base, dtype, shape, tuple(reversed(strides)))
