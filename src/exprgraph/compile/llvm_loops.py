"""LLVM IR of a whole program: bounded parts, loops over classes of repeated structure, entry points.

:func:`emit_llvm` cuts the steps into parts of at most :data:`~.llvm_emit.PART` steps (functions
computing their steps at one point, see :class:`~.llvm_emit._Layout`). Given a
:class:`~exprgraph.compile.structure.Structure`, each class is one function looping over its
members: slots read from rows of the work array ``%ws`` through an int32 index table, constants
from a double table, each member's value written to its row; the tables are run-time data
(``%it``, ``%dt``), so the IR grows with the number of classes, not of outputs. Inputs the loops
read are copied into rows first, and the loops' outputs copied out last, by loops over tables.
``@eg_run(n, in, step, out, ws, it, dt)`` and ``@eg_packed(npts, x, o, ws, it, dt)`` call the
pieces in order at each point; ``ws`` is 8 bytes per row, per thread.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..core import Term
from ..core.dtypes import FLOAT64, INT64
from . import llvm_emit
from .llvm_emit import _Body, _function, _Layout, _step
from .llvm_helpers import _DECLARE, _HELPERS, _needs
from .lower import Program, chain_folds
from .structure import LoopClass, Structure

__all__ = ["emit_llvm", "LLVMSource", "KNOWN_INLINE"]

#: packed outputs known without computing (inputs, constants) stored one by one up to this many
#: positions (beyond: two loops over tables)
KNOWN_INLINE = 64


def _cut(steps: list[Term]) -> list[list[Term]]:
    """Steps cut into parts of at most ``llvm_emit.PART``."""
    part = llvm_emit.PART
    return [steps[k : k + part] for k in range(0, len(steps), part)]


def _rows(program: Program, pieces: list[Any], class_reads: Any) -> dict[Term, int]:
    """A ``%ws`` row for each value read by a later piece, and for whatever the loops read or write."""
    part_of = {node: p for p, piece in enumerate(pieces) if isinstance(piece, list) for node in piece}
    row: dict[Term, int] = {}
    for t in class_reads:
        if t not in row:
            row[t] = len(row)
    for p, piece in enumerate(pieces):
        if isinstance(piece, list):
            for node in piece:
                for a in program.args_of(node):
                    if part_of.get(a, p) != p and a not in row:
                        row[a] = len(row)
    return row


@dataclass
class LLVMSource:
    """The IR of a program and what its caller passes: rows of work space, and the loops' tables."""

    ir: str
    #: run-time outputs in ``eg_run``'s order; input positions ``eg_run`` reads
    loop_outputs: list[Term]
    input_index: list[int]
    #: 8-byte rows of ``%ws`` (a work array per thread)
    rows: int
    #: int32 and double tables of the loops (empty without loops)
    ints: list[int] = field(default_factory=list)
    doubles: list[float] = field(default_factory=list)


def emit_llvm(program: Program, structure: Structure | None = None) -> LLVMSource:
    """The IR of a pointwise ``program``, with loops over the classes of ``structure`` when given.

    The steps are cut into parts of at most :data:`PART` steps, each a ``noinline`` function that
    computes its steps at point ``%i``; the loop over the points calls the parts in order. One
    loop over every step (as this backend first did) made LLVM's loop access analysis (run by
    the loop vectorizer and loop load elimination) compare every load with every store of the
    loop body: quadratic in the program's size (8.5 s for 1,900 steps, 4x per doubling). A loop
    whose body is calls is not analysed, and each part is small, so the build grows linearly.
    A program of one part is inlined into its loop, as before. A class of ``structure`` is a
    function looping over its members (:mod:`.llvm_loops`).
    """
    if structure is None:
        program = chain_folds(program, llvm_emit.PART)
        pieces: list[Any] = _cut(program.steps) or [[]]
    else:
        program = structure.program
        pieces = [p for seg in structure.segments for p in ([seg] if isinstance(seg, LoopClass) else _cut(seg))]
    loops = [p for p in pieces if isinstance(p, LoopClass)]
    in_loops = [t for c in loops for t in (*c.members, *(a for reads in c.reads for a in reads))]
    row = _rows(program, pieces, in_loops)
    texts, calls, tables = _pieces(program, pieces, row)
    text = "\n".join([*texts, *(_entry(kind, lines) for kind, lines in calls.items())])
    helpers, declared = _needs(text)
    module = [*(_HELPERS[h] for h in helpers), *(_DECLARE[d] for d in declared), text]
    loop_outputs = program.symbolic_outputs()
    return LLVMSource(
        "\n".join(module), loop_outputs, list(program.used_inputs), max(1, len(row)), tables[0], tables[1]
    )


def _entry(kind: str, calls: list[str]) -> str:
    """``eg_run`` or ``eg_packed``: the loop over the points, calling the pieces in order."""
    params = "i64 %n, ptr %in, ptr %step, ptr %out" if kind == "run" else "i64 %n, ptr %x, ptr %o"
    body = _Body()
    body.lines.extend(calls)
    return _function(f"eg_{kind}", params + ", ptr %ws, ptr %it, ptr %dt", "%n", _Body("s"), body)


def _pieces(program: Program, pieces: list[Any], row: dict[Term, int]) -> tuple[list[str], dict, tuple[list, list]]:
    """The functions of every piece, the calls of each entry point, and the loops' tables."""
    ints: list[int] = []
    doubles: list[float] = []
    loops = any(isinstance(p, LoopClass) for p in pieces)
    tail = not isinstance(pieces[-1], list)
    n_pieces = len(pieces) + (3 if loops else 0) + (1 if tail else 0)
    texts: list[str] = []
    calls: dict[str, list[str]] = {"run": [], "packed": []}
    for kind in ("run", "packed"):
        layout = _Layout(program, row, kind, n_pieces)
        args = layout.params  # "type name" pairs: the call passes them on
        call = [f"  call void @eg_{kind}_{{}}({args}, ptr %it)"]
        extra = [t for t in layout.out_at if t.op.name == "symbol" or t in program.fixed]
        stores = sum(len(layout.out_at[t]) for t in extra)
        if kind == "packed" and stores > KNOWN_INLINE:  # many: by loops over tables, not one store each
            layout.n_pieces += 2
            texts.extend(_known(layout, extra, ints, doubles))
            calls[kind].extend(call[0].format(way).replace("ptr %it)", "ptr %it, ptr %dt)") for way in ("xs", "ks"))
            extra = []
        if loops:
            texts.append(_copy(layout, "in", ints))
            calls[kind].append(call[0].format("in"))
        for p, piece in enumerate(pieces):
            if isinstance(piece, LoopClass):
                if kind == "run":
                    texts.append(_class_function(p, piece, row, ints, doubles))
                calls[kind].append(f"  call void @eg_class{p}(ptr %ws, ptr %it, ptr %dt, ptr %errp)")
                continue
            last = p == len(pieces) - 1
            texts.append(layout.part(f"eg_{kind}_p{p}", piece, extra if last else []))
            calls[kind].append(f"  call void @eg_{kind}_p{p}({args})")
        if tail:
            texts.append(layout.part(f"eg_{kind}_tail", [], extra))
            calls[kind].append(f"  call void @eg_{kind}_tail({args})")
        if loops:
            texts.append(_copy(layout, "out", ints))
            calls[kind].append(call[0].format("out"))
    return texts, calls, (ints, doubles)


def _known(layout: _Layout, extra: list[Term], ints: list[int], doubles: list[float]) -> list[str]:
    """Packed outputs known without computing: inputs read back (``xs``), constants (``ks``)."""
    program = layout.program
    texts = []
    for way in ("xs", "ks"):
        if way == "xs":
            pairs = [(j, layout.column[t]) for t in extra if t.op.name == "symbol" for j in layout.out_at[t]]
        else:
            pairs = []
            for t in extra:
                if t in program.fixed:
                    pairs.extend((j, len(doubles)) for j in layout.out_at[t])  # one double per constant
                    doubles.append(float(program.values[t]))
        where = _table(ints, [j for j, _ in pairs])
        source = _table(ints, [a for _, a in pairs])
        body = _Body()
        j = _entry_of(body, body.emit(f"add i64 %k, {where}"))
        a = _entry_of(body, body.emit(f"add i64 %k, {source}"))
        if way == "xs":
            at = body.emit(f"add i64 {body.emit(f'mul i64 %i, {layout.n_in}')}, {a}")
            value = body.emit(f"load double, ptr {body.emit(f'getelementptr double, ptr %x, i64 {at}')}")
        else:
            value = body.emit(f"load double, ptr {body.emit(f'getelementptr double, ptr %dt, i64 {a}')}")
        at = body.emit(f"add i64 {body.emit(f'mul i64 %i, {layout.n_out}')}, {j}")
        body.lines.append(f"  store double {value}, ptr {body.emit(f'getelementptr double, ptr %o, i64 {at}')}")
        texts.append(_loop(f"eg_packed_{way}", f"{layout.params}, ptr %it, ptr %dt", len(pairs), body))
    return texts


def _table(ints: list[int], items: list[int]) -> int:
    """Append ``items`` to the int32 tables; their offset."""
    offset = len(ints)
    ints.extend(items)
    return offset


def _loop(name: str, params: str, count: int, body: _Body, var: str = "%k") -> str:
    """``define internal void @name(params)``: ``body`` for ``var`` in [0, count)."""
    lines = [f"define internal void @{name}({params}) noinline {{", "entry:", "  br label %loop", "loop:"]
    lines += [f"  {var} = phi i64 [0, %entry], [{var}next, %body]", f"  %more = icmp slt i64 {var}, {count}"]
    lines += ["  br i1 %more, label %body, label %exit", "body:", *body.lines]
    lines += [f"  {var}next = add i64 {var}, 1", "  br label %loop", "exit:", "  ret void", "}"]
    return "\n".join(lines)


def _entry_of(body: _Body, at: str) -> str:
    """An int32 table entry at index ``at``, as an i64."""
    ptr = body.emit(f"getelementptr i32, ptr %it, i64 {at}")
    return body.emit(f"sext i32 {body.emit(f'load i32, ptr {ptr}')} to i64")


def _copy(layout: _Layout, way: str, ints: list[int]) -> str:
    """Copy the inputs the loops read into their rows (``in``), or the loops' outputs out (``out``)."""
    row = layout.row
    # rows hold doubles for float64 values only (a bool row holds a byte): only those are copied
    if way == "in":
        pairs = [(layout.column[s], row[s]) for s in layout.column if s in row and s.dtype == FLOAT64]
    else:
        pairs = [(j, row[t]) for t, js in layout.out_at.items() if t in row and t.dtype == FLOAT64 for j in js]
    where = _table(ints, [a for a, _ in pairs])
    rows = _table(ints, [r for _, r in pairs])
    body = _Body()
    a = _entry_of(body, body.emit(f"add i64 %k, {where}"))
    r = _entry_of(body, body.emit(f"add i64 %k, {rows}"))
    cell = body.emit(f"getelementptr i64, ptr %ws, i64 {r}")
    if way == "in":
        if layout.kind == "packed":
            at = body.emit(f"add i64 {body.emit(f'mul i64 %i, {layout.n_in}')}, {a}")
            value = body.emit(f"load double, ptr {body.emit(f'getelementptr double, ptr %x, i64 {at}')}")
        else:
            base = body.emit(f"load ptr, ptr {body.emit(f'getelementptr ptr, ptr %in, i64 {a}')}")
            stride = body.emit(f"load i64, ptr {body.emit(f'getelementptr i64, ptr %step, i64 {a}')}")
            ptr = body.emit(f"getelementptr double, ptr {base}, i64 {body.emit(f'mul i64 %i, {stride}')}")
            value = body.emit(f"load double, ptr {ptr}")
        body.lines.append(f"  store double {value}, ptr {cell}")
    else:
        value = body.emit(f"load double, ptr {cell}")
        if layout.kind == "packed":
            at = body.emit(f"add i64 {body.emit(f'mul i64 %i, {layout.n_out}')}, {a}")
            ptr = body.emit(f"getelementptr double, ptr %o, i64 {at}")
        else:
            base = body.emit(f"load ptr, ptr {body.emit(f'getelementptr ptr, ptr %out, i64 {a}')}")
            ptr = body.emit(f"getelementptr double, ptr {base}, i64 %i")
        body.lines.append(f"  store double {value}, ptr {ptr}")
    return _loop(f"eg_{layout.kind}_{way}", f"{layout.params}, ptr %it", len(pairs), body)


def _class_function(p: int, cls: LoopClass, row: dict[Term, int], ints: list[int], doubles: list[float]) -> str:
    """One class: a loop over its members, the body's instructions written once."""
    k, s, c = len(cls.members), len(cls.slots), len(cls.consts)
    index = _table(ints, [row[t] for reads in cls.reads for t in reads])
    out = _table(ints, [row[t] for t in cls.members])
    consts = len(doubles)
    doubles.extend(float(v) for values in cls.constants for v in values)
    body = _Body()
    names: dict[Term, str] = {}
    first = body.emit(f"add i64 {body.emit(f'mul i64 %m, {s}')}, {index}")
    for j, t in enumerate(cls.slots):
        r = _entry_of(body, body.emit(f"add i64 {first}, {j}"))
        names[t] = body.emit(f"load double, ptr {body.emit(f'getelementptr i64, ptr %ws, i64 {r}')}")
    start = body.emit(f"add i64 {body.emit(f'mul i64 %m, {c}')}, {consts}")
    for j, t in enumerate(cls.consts):
        ptr = body.emit(f"getelementptr double, ptr %dt, i64 {body.emit(f'add i64 {start}, {j}')}")
        value = body.emit(f"load double, ptr {ptr}")
        names[t] = body.emit(f"fptosi double {value} to i64") if t.dtype == INT64 else value
    steps = [t for t in _order(cls.body) if t.args]
    for node in steps:
        names[node] = _step(body, node, [names[a] for a in node.args])
    r = _entry_of(body, body.emit(f"add i64 %m, {out}"))
    cell = body.emit(f"getelementptr i64, ptr %ws, i64 {r}")
    body.lines.append(f"  store double {names[cls.body]}, ptr {cell}")
    assert cls.body.dtype == FLOAT64
    return _loop(f"eg_class{p}", "ptr %ws, ptr %it, ptr %dt, ptr %errp", k, body, "%m")


def _order(root: Term) -> list[Term]:
    """The nodes of a class body, operands first (iterative)."""
    order: list[Term] = []
    seen: set[Term] = set()
    stack: list[tuple[Term, bool]] = [(root, False)]
    while stack:
        node, ready = stack.pop()
        if ready:
            order.append(node)
            continue
        if node in seen:
            continue
        seen.add(node)
        stack.append((node, True))
        stack.extend((a, False) for a in reversed(node.args) if a not in seen)
    return order
