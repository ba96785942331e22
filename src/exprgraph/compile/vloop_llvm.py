"""The loops of a vector program (:mod:`.vloop`) as LLVM IR, for the LLVM backend.

The same loop nests as :mod:`.vloop_c`, written in IR: every op through the op table's LLVM
templates (:func:`~.llvm_emit._step`, with numpy's casts), loop counters and reduction accumulators
as stack slots (LLVM's passes promote them to registers), arrays in their dtype's memory type
(bools as bytes). The nests are cut into parts of at most :data:`~.vloop_c.PART_LOOPS` nests, one
``noinline`` function each, so that the optimiser's time grows with the number of parts, linearly.
Entry points ``@eg_vrun`` and (every input and output float64) ``@eg_vpacked`` follow the contract
of :mod:`.vloop_run`; helpers set ``%errp`` on a negative integer power.
"""

from __future__ import annotations

from typing import Any

from ..core.dtypes import BOOL, FLOAT64
from .llvm_emit import LLVM_TYPES, _Body, _step, ir_literal
from .llvm_helpers import _DECLARE, _HELPERS, _needs
from .vloop_c import PART_LOOPS
from .vloop_ir import Acc, Fold, Index, Let, Lookup, LoopPlan, Nest, Operand, Read, Shift, Store, View

__all__ = ["emit_vector_ir"]

#: memory types of each dtype (bools as bytes)
_MEMORY = {**LLVM_TYPES, BOOL: "i8"}
_PART_PARAMS = "ptr noalias %in, ptr noalias %out, ptr noalias %w, ptr noalias %k, ptr %errp"


def emit_vector_ir(plan: LoopPlan) -> tuple[str, bool]:
    """The IR module of ``plan``'s loops, and whether it has ``@eg_vpacked``."""
    functions = []
    n_parts = 0
    for q, start in enumerate(range(0, len(plan.loops), PART_LOOPS)):
        writer = _Writer(plan)
        names: set[str] = set()
        for used in plan.names[start : start + PART_LOOPS]:
            names |= used
        for name in sorted(names):
            writer.declare(name)
        for nest in plan.loops[start : start + PART_LOOPS]:
            writer.nest(nest)
        functions.append(writer.function(f"eg_vpart{q}"))
        n_parts += 1
    program = plan.program
    packed = all(t.dtype == FLOAT64 for t in (*program.inputs, *program.outputs))
    functions.append(_entry(plan, n_parts, False))
    if packed:
        functions.append(_entry(plan, n_parts, True))
    text = "\n\n".join(functions)
    helpers, declared = _needs(text)
    return "\n".join([*(_HELPERS[h] for h in helpers), *(_DECLARE[d] for d in declared), text]), packed


class _Writer:
    """The instructions of one part: array pointers first, then each nest's loops."""

    def __init__(self, plan: LoopPlan) -> None:
        self.plan = plan
        self.body = _Body("v")
        self.slots: list[str] = []
        self.labels = 0
        self.arrays: dict[str, str] = {}
        self.vars: dict[str, str] = {}
        #: a plan local's name -> its value (an SSA name) or, for an accumulator, its stack slot
        self.values: dict[str, str] = {}
        self.accs: dict[str, tuple[str, str]] = {}

    def declare(self, name: str) -> None:
        """The pointer to array ``name`` (an input, an output, a work buffer or a table)."""
        kind, _, place = self.plan.arrays[name]
        emit = self.body.emit
        if kind in ("in", "out"):
            table = "%in" if kind == "in" else "%out"
            self.arrays[name] = emit(f"load ptr, ptr {emit(f'getelementptr ptr, ptr {table}, i64 {place}')}")
        else:
            self.arrays[name] = emit(f"getelementptr i8, ptr {'%w' if kind == 'work' else '%k'}, i64 {place}")

    def function(self, name: str) -> str:
        """The part as an IR function."""
        lines = [f"define internal void @{name}({_PART_PARAMS}) noinline {{", "entry:", *self.slots, *self.body.lines]
        return "\n".join([*lines, "  ret void", "}"])

    # -- values ---------------------------------------------------------------------------------

    def index(self, ix: Index) -> str:
        """The i64 value of an index expression."""
        if isinstance(ix, str):
            return self.vars[ix]
        if isinstance(ix, Shift):
            return str(ix.by) if not ix.var else self.body.emit(f"add i64 {self.vars[ix.var]}, {ix.by}")
        assert isinstance(ix, Lookup)
        return self.read(ix.table, ix.index)

    def pointer(self, view: View, index: tuple[Index, ...]) -> str:
        """The address of ``view``'s entry at ``index``."""
        emit = self.body.emit
        flat = str(view.offset)
        for ix, stride in zip(index, view.strides, strict=True):
            if stride:
                at = self.index(ix)
                term = at if stride == 1 else emit(f"mul i64 {at}, {stride}")
                flat = term if flat == "0" else emit(f"add i64 {flat}, {term}")
        return emit(f"getelementptr {_MEMORY[view.dtype]}, ptr {self.arrays[view.base]}, i64 {flat}")

    def read(self, view: View, index: tuple[Index, ...]) -> str:
        """The value of ``view``'s entry at ``index`` (a constant, or a load)."""
        if view.value is not None:
            return ir_literal(view.value, view.dtype)
        raw = self.body.emit(f"load {_MEMORY[view.dtype]}, ptr {self.pointer(view, index)}")
        return self.body.emit(f"icmp ne i8 {raw}, 0") if view.dtype == BOOL else raw

    def operand(self, value: Operand) -> str:
        """The value of an operand: an entry read, an accumulator's current value, or a local."""
        if isinstance(value, Read):
            return self.read(value.view, value.index)
        acc = self.accs.get(value)
        if acc is not None:
            return self.body.emit(f"load {LLVM_TYPES[acc[1]]}, ptr {acc[0]}")
        return self.values[value]

    # -- statements -----------------------------------------------------------------------------

    def statement(self, stmt: Any) -> None:
        """The instructions of one statement."""
        body = self.body
        if isinstance(stmt, Nest):
            self.nest(stmt)
        elif isinstance(stmt, Let):
            self.accs.pop(stmt.name, None)
            self.values[stmt.name] = _step(body, stmt.node, [self.operand(a) for a in stmt.args])
        elif isinstance(stmt, Acc):
            slot = f"%acc{len(self.slots)}"
            self.slots.append(f"  {slot} = alloca {LLVM_TYPES[stmt.dtype]}")
            self.accs[stmt.name] = (slot, stmt.dtype)
            body.lines.append(f"  store {LLVM_TYPES[stmt.dtype]} {ir_literal(stmt.start, stmt.dtype)}, ptr {slot}")
        elif isinstance(stmt, Fold):
            slot, dtype = self.accs[stmt.acc]
            acc = self.operand(stmt.acc)
            item = body.cast(self.operand(stmt.item), stmt.item_dtype, dtype)
            body.lines.append(f"  store {LLVM_TYPES[dtype]} {_step(body, stmt.step, [acc, item])}, ptr {slot}")
        else:
            assert isinstance(stmt, Store)
            value = body.cast(self.operand(stmt.value), stmt.dtype, stmt.view.dtype)
            if stmt.view.dtype == BOOL:
                value = body.emit(f"zext i1 {value} to i8")
            body.lines.append(f"  store {_MEMORY[stmt.view.dtype]} {value}, ptr {self.pointer(stmt.view, stmt.index)}")

    def nest(self, nest: Nest) -> None:
        """Loops over the nest's shape (counters in stack slots), its statements inside."""
        open_loops = []
        for d, n in enumerate(nest.shape):
            self.labels += 1
            k = self.labels
            counter = f"%n{k}"
            self.slots.append(f"  {counter} = alloca i64")
            lines = self.body.lines
            lines += [f"  store i64 0, ptr {counter}", f"  br label %head{k}", f"head{k}:"]
            at = self.body.emit(f"load i64, ptr {counter}")
            more = self.body.emit(f"icmp slt i64 {at}, {n}")
            lines += [f"  br i1 {more}, label %loop{k}, label %done{k}", f"loop{k}:"]
            self.vars[f"{nest.tag}{d}"] = at
            open_loops.append((k, counter, at))
        for stmt in nest.body:
            self.statement(stmt)
        for k, counter, at in reversed(open_loops):
            following = self.body.emit(f"add i64 {at}, 1")
            self.body.lines += [f"  store i64 {following}, ptr {counter}", f"  br label %head{k}", f"done{k}:"]


def _entry(plan: LoopPlan, n_parts: int, packed: bool) -> str:
    """``@eg_vrun`` or ``@eg_vpacked``: the parts called once per point on moved pointers."""
    program = plan.program
    n_in, n_out = len(program.inputs), len(program.outputs)
    body = _Body("e")
    if packed:
        params = "i64 %npts, ptr %x, ptr %o, ptr %work, ptr %k"
        _packed_pointers(body, [_size(t.shape) for t in program.inputs], "%x", "%pin")
        _packed_pointers(body, [_size(t.shape) for t in program.outputs], "%o", "%pout")
    else:
        params = "i64 %npts, ptr %in, ptr %istep, ptr %out, ptr %ostep, ptr %work, ptr %k"
        _strided_pointers(body, n_in, "%in", "%istep", "%pin")
        _strided_pointers(body, n_out, "%out", "%ostep", "%pout")
    calls = [f"  call void @eg_vpart{q}(ptr %pin, ptr %pout, ptr %work, ptr %k, ptr %errp)" for q in range(n_parts)]
    name = "eg_vpacked" if packed else "eg_vrun"
    lines = [
        f"define i32 @{name}({params}) {{",
        "entry:",
        "  %errp = alloca i32",
        "  store i32 0, ptr %errp",
        f"  %pin = alloca [{max(n_in, 1)} x ptr]",
        f"  %pout = alloca [{max(n_out, 1)} x ptr]",
        "  br label %head",
        "head:",
        "  %p = phi i64 [0, %entry], [%next, %loop]",
        "  %more = icmp slt i64 %p, %npts",
        "  br i1 %more, label %loop, label %done",
        "loop:",
        *body.lines,
        *calls,
        "  %next = add i64 %p, 1",
        "  br label %head",
        "done:",
        "  %err = load i32, ptr %errp",
        "  ret i32 %err",
        "}",
    ]
    return "\n".join(lines)


def _packed_pointers(body: _Body, sizes: list[int], base: str, table: str) -> None:
    """Point ``table[j]`` at array ``j``'s entries in row ``%p`` of packed doubles at ``base``."""
    row = body.emit(f"mul i64 %p, {sum(sizes)}")
    at = 0
    for j, size in enumerate(sizes):
        ptr = body.emit(f"getelementptr double, ptr {base}, i64 {body.emit(f'add i64 {row}, {at}')}")
        body.lines.append(f"  store ptr {ptr}, ptr {body.emit(f'getelementptr ptr, ptr {table}, i64 {j}')}")
        at += size


def _strided_pointers(body: _Body, count: int, base: str, steps: str, table: str) -> None:
    """Point ``table[j]`` at ``base[j] + %p * steps[j]`` bytes (point ``%p`` of array ``j``)."""
    for j in range(count):
        start = body.emit(f"load ptr, ptr {body.emit(f'getelementptr ptr, ptr {base}, i64 {j}')}")
        step = body.emit(f"load i64, ptr {body.emit(f'getelementptr i64, ptr {steps}, i64 {j}')}")
        ptr = body.emit(f"getelementptr i8, ptr {start}, i64 {body.emit(f'mul i64 %p, {step}')}")
        body.lines.append(f"  store ptr {ptr}, ptr {body.emit(f'getelementptr ptr, ptr {table}, i64 {j}')}")


def _size(shape: tuple[Any, ...]) -> int:
    n = 1
    for d in shape:
        n *= int(d)
    return n
