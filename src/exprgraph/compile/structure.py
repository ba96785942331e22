"""Repeated structure in a lowered program: classes of outputs with one shape, evaluated as loops.

:func:`find_structure` cuts a pointwise :class:`~exprgraph.compile.lower.Program` into *regions*
and groups regions of the same shape into *classes*:

- **Roots.** Every output is a root, and so is every step read from more than one region (a
  value shared by two outputs, a Jacobian entry's common factor) and every operand of a node
  with more than :data:`FOLD_WIDTH` operands (the terms of a long sum). A step that is not a
  root belongs to the region of the one root all its readers belong to (found in one pass in
  reverse dependency order), so regions never overlap and their sizes add up to the number of
  steps. Values shared inside one output stay inside its region; values shared between regions
  are computed once, by their own region, and read by the others like inputs.
- **Key.** A region's key is its canonical form: its nodes in depth-first post-order from the
  root, each as ``(op, attr, dtype, operand references)``, where an operand is a node of the
  region (by position), a *slot* (an input or another root, numbered by first use) or a
  *constant* (numbered by first use). Two regions have the same key when they compute the same
  function of their slots and constants; building every key costs one walk of each region, so
  the whole analysis is linear in the program.
- **Levels.** A root's level is one more than the highest level of the roots it reads (0 when
  it reads inputs and constants only). A class is a key at one level; the classes of a level
  only read roots of lower levels, so running the levels in order is a valid schedule.
- **Classes.** A key with at least ``threshold`` regions at one level becomes a class: a *body*
  (the region with slots and constants replaced by symbols ``s0, s1...`` and ``k0, k1...``), an
  index table (per member, the slot values it reads), a constant table (per member, its
  constants) and the roots it writes. Everything else (the *rest*) stays straight-line, level by
  level, between the loops.

Regions are grouped only when their root and slots are float64 and their constants are float64
(or int64 small enough to be exact as doubles), every node has at most :data:`FOLD_WIDTH`
operands (a region of one associative node: :data:`WIDE_BODY`) and a C rendering; other regions
go to the rest, which every backend compiles as it always did.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..core import Symbol, Term
from ..core.dtypes import FLOAT64, INT64
from ..errors import ExprgraphError
from .lower import Program

__all__ = ["LoopClass", "Structure", "find_structure", "THRESHOLD", "FOLD_WIDTH", "WIDE_BODY"]

#: fewest regions of one shape that make a loop (fewer stay straight-line)
THRESHOLD = 16
#: most operands of a node inside a class body; the operands of a longer node are roots
FOLD_WIDTH = 8
#: most operands of a class body that is one associative node (``s0 + s1 + ... + s63``: a block of a long
#: sum, whose operands are roots); other bodies keep to FOLD_WIDTH operands per node
WIDE_BODY = 64
#: an int64 constant within this magnitude is exact as a double (the constant tables are doubles)
_EXACT = 2**53

#: the shared "more than one region reads this" marker of the ownership pass
_SHARED = object()


@dataclass
class LoopClass:
    """Regions of one shape at one level: a body over slots and constants, and its tables."""

    #: the body: the region's root with slots and constants replaced by symbols
    body: Term
    #: the slot symbols (values read: inputs or roots), in slot order
    slots: tuple[Term, ...]
    #: the constant symbols, in constant order
    consts: tuple[Term, ...]
    #: the level of the class (see the module's description)
    level: int
    #: the roots the class computes, one per member
    members: list[Term] = field(default_factory=list)
    #: per member, the terms its slots read (inputs or roots)
    reads: list[tuple[Term, ...]] = field(default_factory=list)
    #: per member, its constants' values
    constants: list[tuple[Any, ...]] = field(default_factory=list)
    #: nodes of the body (statements per member)
    size: int = 0


@dataclass
class Structure:
    """A program cut into loops over classes and straight-line rest, in an executable order."""

    program: Program
    #: the classes, in execution order
    classes: list[LoopClass]
    #: the execution order: a class, or a list of rest steps (in dependency order)
    segments: list[LoopClass | list[Term]]
    #: every root (outputs, shared values, operands of long folds)
    roots: set[Term]
    #: the threshold used
    threshold: int

    @property
    def rest(self) -> list[Term]:
        """The steps outside the classes, in execution order."""
        return [t for seg in self.segments if isinstance(seg, list) for t in seg]

    @property
    def grouped(self) -> int:
        """How many roots the classes compute."""
        return sum(len(c.members) for c in self.classes)

    def report(self) -> dict[str, Any]:
        """What was found, for a compiled function's ``info``: the classes and the size of the rest."""
        return {
            "grouped": bool(self.classes),
            "threshold": self.threshold,
            "roots": len(self.roots),
            "rest_steps": len(self.rest),
            "classes": [
                {
                    "members": len(c.members),
                    "statements": c.size,
                    "slots": len(c.slots),
                    "constants": len(c.consts),
                    "level": c.level,
                    "body": str(c.body) if c.size <= 40 else f"<{c.size} nodes>",
                }
                for c in self.classes
            ],
        }


def find_structure(program: Program, threshold: int = THRESHOLD) -> Structure:
    """The roots, regions, keys, levels and classes of a pointwise ``program`` (linear in its size)."""
    threshold = max(2, int(threshold))
    owner = _owners(program)
    roots = {t for t, o in owner.items() if o is t}
    level: dict[Term, int] = {}
    by_key: dict[tuple, LoopClass] = {}
    region_of: dict[Term, LoopClass] = {}
    values = program.values
    for node in program.steps:
        if owner[node] is not node:
            continue
        key, leaves, consts, lvl, ok = _region_key(node, owner, program, level)
        level[node] = lvl
        if not ok:
            continue
        found = by_key.get((lvl, key))
        if found is None:
            try:
                found = by_key[(lvl, key)] = _new_class(node, owner, program, lvl)
            except (TypeError, ValueError, ArithmeticError, ExprgraphError):
                continue  # an op that refuses symbols for its operands (one wanting a constant): no loop
        found.members.append(node)
        found.reads.append(leaves)
        found.constants.append(tuple(values[c] for c in consts))
        region_of[node] = found
    classes = [c for c in by_key.values() if len(c.members) >= threshold]
    chosen = {id(c) for c in classes}
    grouped = {r for r, c in region_of.items() if id(c) in chosen}
    segments = _segments(program, owner, level, classes, grouped)
    return Structure(program, [s for s in segments if isinstance(s, LoopClass)], segments, roots, threshold)


def _owners(program: Program) -> dict[Term, Term]:
    """Each step's root: itself when it is a root, else the one root whose region all its readers are in."""
    steps = set(program.steps)
    outputs = set(program.outputs)
    args_of = program.args_of
    seen: dict[Term, Any] = {}  # step -> the owner of its readers so far, or _SHARED
    owner: dict[Term, Term] = {}
    for node in reversed(program.steps):
        mark = seen.get(node)
        mine = node if (node in outputs or mark is None or mark is _SHARED) else mark
        owner[node] = mine
        args = args_of(node)
        wide = len(args) > FOLD_WIDTH
        for a in args:
            if a not in steps:
                continue
            if wide:
                seen[a] = _SHARED  # the terms of a long fold: regions of their own
                continue
            have = seen.get(a)
            if have is None:
                seen[a] = mine
            elif have is not mine:
                seen[a] = _SHARED
    return owner


def _walk(root: Term, owner: dict[Term, Term], args_of: Callable[[Term], tuple[Term, ...]]) -> list[Term]:
    """The region of ``root`` in depth-first post-order, operands left to right (iterative)."""
    owner_of = owner.get
    args = args_of(root)
    if not any(owner_of(a) is root for a in args):
        return [root]  # most roots: a region of one node
    order: list[Term] = []
    done: set[Term] = set()
    path = [root]
    pending = [iter(args_of(root))]
    while pending:
        for a in pending[-1]:
            if a is not root and a not in done and owner_of(a) is root:
                path.append(a)
                pending.append(iter(args_of(a)))
                break
        else:
            pending.pop()
            node = path.pop()
            done.add(node)
            order.append(node)
    return order


def _region_key(
    root: Term, owner: dict[Term, Term], program: Program, level: dict[Term, int]
) -> tuple[tuple, tuple[Term, ...], tuple[Term, ...], int, bool]:
    """``(key, slot terms, constant terms, level, groupable)`` of the region of ``root``."""
    args_of = program.args_of if program.operands else _own_args
    values = program.values
    args = args_of(root)
    if not any(owner.get(a) is root for a in args):
        return _single_key(root, args, values, level)
    index: dict[Term, int] = {}
    slots: dict[Term, int] = {}
    consts: dict[Term, int] = {}
    entries: list[tuple] = []
    ok = root.dtype == FLOAT64
    lvl = 0
    for node in _walk(root, owner, args_of):
        args = args_of(node)
        ok = ok and len(args) <= FOLD_WIDTH and node.op.c_render is not None
        refs = []
        for a in args:
            k = index.get(a)
            if k is not None:
                refs.append(k)
            elif a in values:
                refs.append(-2 - 2 * consts.setdefault(a, len(consts)))
            else:
                refs.append(-1 - 2 * slots.setdefault(a, len(slots)))
        index[node] = len(entries)
        entries.append((node.op.name, node.attr, node.dtype, tuple(refs), *_exponent(node, args, values)))
    for a in slots:
        ok = ok and a.dtype == FLOAT64
        if a in level:
            lvl = max(lvl, level[a] + 1)
    for a in consts:
        ok = ok and _exact_constant(a, values[a])
    tail = (tuple(t.dtype for t in consts),)
    return (tuple(entries), tail), tuple(slots), tuple(consts), lvl, ok


def _single_key(
    root: Term, args: tuple[Term, ...], values: dict[Term, Any], level: dict[Term, int]
) -> tuple[tuple, tuple[Term, ...], tuple[Term, ...], int, bool]:
    """:func:`_region_key` of a region of one node (most regions): the same key, without the walk."""
    slots: list[Term] = []
    consts: list[Term] = []
    refs = []
    width = WIDE_BODY if root.op.associative else FOLD_WIDTH  # a block of a long sum: one node, many slots
    ok = root.dtype == FLOAT64 and len(args) <= width and root.op.c_render is not None
    lvl = 0
    for a in args:
        if a in values:
            if a not in consts:
                consts.append(a)
                ok = ok and _exact_constant(a, values[a])
            refs.append(-2 - 2 * consts.index(a))
        else:
            if a not in slots:
                slots.append(a)
                ok = ok and a.dtype == FLOAT64
                if a in level:
                    lvl = max(lvl, level[a] + 1)
            refs.append(-1 - 2 * slots.index(a))
    entries = ((root.op.name, root.attr, root.dtype, tuple(refs), *_exponent(root, args, values)),)
    return (entries, (tuple(t.dtype for t in consts),)), tuple(slots), tuple(consts), lvl, ok


def _exponent(node: Term, args: tuple[Term, ...], values: dict[Term, Any]) -> tuple:
    """A power's constant exponent by value, for the key: the members of a class then share it, so a backend
    may read it as the literal it is (``x**2`` a square, as evaluate computes it, not numpy's power of an
    array of 2s, which is not always the rounded square)."""
    if node.op.name != "pow" or args[1] not in values:
        return ()
    v: Any = values[args[1]]
    if getattr(v, "shape", ()):
        return ()  # an array exponent: such a region is not grouped
    return (args[1].dtype, float(v).hex() if args[1].dtype != INT64 else int(v))


def _own_args(node: Term) -> tuple[Term, ...]:
    """A node's operands (when no fold of the program was chained)."""
    return node.args


def _exact_constant(term: Term, value: Any) -> bool:
    """Whether a constant can sit in a double table: float64, or an int64 exact as a double."""
    if getattr(value, "shape", ()):
        return False
    if term.dtype == FLOAT64:
        return True
    return term.dtype == INT64 and -_EXACT <= int(value) <= _EXACT


def _new_class(root: Term, owner: dict[Term, Term], program: Program, level: int) -> LoopClass:
    """A class whose body is the region of ``root`` over slot and constant symbols."""
    args_of = program.args_of if program.operands else _own_args
    values = program.values
    new: dict[Term, Term] = {}
    slots: dict[Term, Term] = {}
    consts: dict[Term, Term] = {}
    order = _walk(root, owner, args_of)
    for node in order:
        args = []
        for a in args_of(node):
            if a in new:
                args.append(new[a])
            elif a in values:
                args.append(consts.setdefault(a, Symbol(f"k{len(consts)}", a.dtype)))
            else:
                args.append(slots.setdefault(a, Symbol(f"s{len(slots)}", a.dtype)))
        new[node] = Term(node.op, tuple(args), node.attr)
    return LoopClass(new[root], tuple(slots.values()), tuple(consts.values()), level, size=len(order))


def _segments(
    program: Program, owner: dict[Term, Term], level: dict[Term, int], classes: list[LoopClass], grouped: set[Term]
) -> list[LoopClass | list[Term]]:
    """Level by level: the level's classes, then its rest steps (dependency order kept within a level)."""
    rest_by_level: dict[int, list[Term]] = {}
    for node in program.steps:
        root = owner[node]
        if root not in grouped:
            rest_by_level.setdefault(level[root], []).append(node)
    classes_by_level: dict[int, list[LoopClass]] = {}
    for c in classes:
        classes_by_level.setdefault(c.level, []).append(c)
    segments: list[LoopClass | list[Term]] = []
    for lvl in sorted(set(rest_by_level) | set(classes_by_level)):
        segments.extend(classes_by_level.get(lvl, ()))
        rest = rest_by_level.get(lvl)
        if rest:
            if segments and isinstance(segments[-1], list):
                segments[-1].extend(rest)
            else:
                segments.append(rest)
    return segments
