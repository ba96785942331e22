"""A lowered program encoded for the vm: registers, instructions and tables, in one linear pass.

:func:`encode` walks the program's segments once (straight-line steps, and the loop classes of
:mod:`.structure` when there are any) and gives an :class:`Encoded`: flat int32 and float64
arrays that :mod:`._cvm` runs. Registers are allocated by last use (a value's register is
reused once its last reader has run), constants get registers filled once, and a class becomes
one ``LOOP`` instruction: its body is encoded once (after the main program), its index, output
and constant tables go to the int and double tables. A program without classes is encoded over
numbered values, the common step inline, and :func:`~.vm_alloc.allocate` (in the extension) then
gives the registers by last use in one pass: about 3.5x quicker to encode (AC-OPF case1354pegase).
That straight-line encoding runs in the extension too (``_cvm.encode_flat``, in ``_cvm_encode.c``,
word for word the same) when every step has a common form; :func:`_encode_flat_py` is its twin.

Each node becomes the instructions of the C backend's semantics (:func:`~.crender.operand_dtypes`):
operands converted the way numpy promotes them, a long fold as a chain of binary steps in the
dtype numpy's fold uses at each step. What the machine cannot run is refused here, before any
call, with :class:`~exprgraph.errors.VMUnsupportedError` naming the op.
"""

from __future__ import annotations

from collections.abc import Sequence
from operator import attrgetter
from typing import Any

import numpy as np

from ..core import Symbol, Term
from ..core.dtypes import DTYPES, FLOAT64, is_float
from ..errors import VMUnsupportedError
from .lower import Program, lower
from .structure import LoopClass, Structure
from .vm_alloc import UNUSED, Registers, Values, finish_flat, finish_native, native_module
from .vm_ops import (
    BINARY,
    CLASS_FIELDS,
    DTYPE_KIND,
    DTYPE_STORE,
    KD,
    KI,
    KIND_SHIFT,
    ON_DOUBLES,
    OPCODE,
    RELATIONAL,
    UNARY,
    WORDS,
    Encoded,
    check_supported,
    flat_tables,
)

__all__ = ["Encoded", "encode", "check_supported"]

#: a scalar symbol of each dtype, to ask an op's dtype rule about one step of a fold
_SCALAR = {d: Symbol("s", d) for d in DTYPES}
_KIND, _STORE = DTYPE_KIND, DTYPE_STORE
#: a class whose body has at most this many instructions is encoded member by member (straight-line):
#: its loop would cost more in per-member set-up than its body (measured in bench/bench_vm.py)
EXPAND = 2
_MOV = (OPCODE["MOV_D"], OPCODE["MOV_I"])

#: the extension's straight-line encoding (``_cvm.encode_flat``), or None: :func:`_encode_flat_py` runs alone
_native = native_module("encode_flat")
_DTYPE = attrgetter("dtype")

#: a value in a register: (kind, register, dtype)
Operand = tuple[int, int, str]


class _Encoder:
    """The state of one encoding: registers, code, tables, constants."""

    def __init__(self, program: Program, regs: Registers | None = None) -> None:
        self.program = program
        self.regs = Registers() if regs is None else regs
        self.pad = self.regs.pad
        self.main: list[int] = []
        self.bodies: list[int] = []
        self.ints: list[int] = []
        self.doubles: list[float] = []
        self.at: dict[Term, Operand] = {}
        #: constants per register file: (register, value)
        self.consts: tuple[list[tuple[int, Any]], list[tuple[int, Any]]] = ([], [])
        self.descriptors: list[int] = []
        self.temps: list[tuple[int, int]] = []
        #: the compile-time values of the class body being encoded
        self.body_values: dict[Term, Any] = {}
        #: the registers of the class constants of expanded classes, by dtype and value
        self.known: dict[tuple[str, Any], Operand] = {}

    # -- operands -----------------------------------------------------------------------------------

    def operand(self, t: Term, local: dict[Term, Operand] | None = None) -> Operand:
        """Where ``t`` is: a local (body) register, a computed or input register, or a constant's register."""
        if local is not None and t in local:
            return local[t]
        found = self.at.get(t)
        if found is None:
            value = self.program.values[t] if t in self.program.values else self.body_values[t]
            kind = _KIND[t.dtype]
            reg = self.regs.fresh(kind)
            if kind == KD:
                self.consts[KD].append((reg, float(value)))
            else:
                self.consts[KI].append((reg, int(value)))
            found = self.at[t] = (kind, reg, t.dtype)
        return found

    def temp(self, kind: int) -> int:
        reg = self.regs.take(kind)
        self.temps.append((kind, reg))
        return reg

    def release_temps(self) -> None:
        for kind, reg in self.temps:
            self.regs.give(kind, reg)
        self.temps.clear()

    def to_kind(self, x: Operand, kind: int, out: list[int]) -> int:
        """``x``'s register in file ``kind``, converting into a temporary when it is in the other file."""
        if x[0] == kind:
            return x[1]
        reg = self.temp(kind)
        out.extend((OPCODE["I2D" if kind == KD else "D2I"], reg, x[1], self.pad, self.pad))
        return reg

    def truth(self, x: Operand, out: list[int]) -> int:
        """An int register that is nonzero where ``x`` is (C's truth of a double: nan is true)."""
        if x[0] == KI:
            return x[1]
        reg = self.temp(KI)
        out.extend((OPCODE["TRUTH_D"], reg, x[1], self.pad, self.pad))
        return reg

    # -- one node -----------------------------------------------------------------------------------

    def node(self, node: Term, args: Sequence[Term], dst: Operand, out: list[int], local: dict | None) -> None:
        """The instructions computing ``node`` from ``args`` into ``dst``."""
        ops = [self.operand(a, local) for a in args]
        name = node.op.name
        if dst[2] == FLOAT64 and len(ops) <= 2 and all(x[2] == FLOAT64 for x in ops):
            code = ON_DOUBLES.get((name, len(ops)))
            if code is not None:  # most steps: float64 operands and result, one instruction
                out.extend((code, dst[1], ops[0][1], ops[-1][1], self.pad))
                return
        if len(ops) > 2 and node.op.associative and name != "where":
            # a fold, left to right, each step in the dtype numpy's fold gives it (as crender folds)
            acc = ops[0]
            for k, b in enumerate(ops[1:], start=2):
                step = node.op.infer((_SCALAR[acc[2]], _SCALAR[b[2]]), None)[0]
                target = dst if k == len(ops) else (_KIND[step], self.temp(_KIND[step]), step)
                self.apply(name, [acc, b], target, out)
                acc = target
            return
        self.apply(name, ops, dst, out)

    def apply(self, name: str, ops: list[Operand], dst: Operand, out: list[int]) -> None:
        """One instruction (and its conversions) of op ``name`` on ``ops`` into ``dst``."""
        result = dst[2]
        if name in RELATIONAL:
            kind = KD if any(x[0] == KD for x in ops) else KI
            regs = [self.to_kind(x, kind, out) for x in ops]
            self.emit(RELATIONAL[name][kind], regs, KI, dst, out)
        elif name == "where":
            kind = _KIND[result]
            regs = [self.truth(ops[0], out), *(self.to_kind(x, kind, out) for x in ops[1:])]
            self.emit("WHERE_D" if kind == KD else "WHERE_I", regs, kind, dst, out)
        elif name in ("logical_and", "logical_or"):
            self.emit(BINARY[name][KI] or "", [self.truth(x, out) for x in ops], KI, dst, out)
        elif name == "logical_not":
            self.emit(UNARY[name][ops[0][0]] or "", [ops[0][1]], KI, dst, out)
        elif name == "pow" and is_float(result):
            base = self.to_kind(ops[0], KD, out)
            if is_float(ops[1][2]):
                self.emit("POW_DD", [base, ops[1][1]], KD, dst, out)
            else:  # a float to an integer power: the exponent stays an integer (odd keeps the sign)
                self.emit("POW_DI", [base, self.to_kind(ops[1], KI, out)], KD, dst, out)
        else:
            kind = KD if is_float(result) else KI
            if kind == KI and any(x[0] == KD for x in ops):
                raise VMUnsupportedError(f"op {name!r} gives {result} from float operands; use backend='c'", op=name)
            table = BINARY if len(ops) == 2 else UNARY
            code = "POW_I" if name == "pow" else table[name][kind]
            if code is None:
                raise VMUnsupportedError(f"op {name!r} has no vm instruction on {result} values", op=name)
            self.emit(code, [self.to_kind(x, kind, out) for x in ops], kind, dst, out)

    def emit(self, code: str, regs: list[int], kind: int, dst: Operand, out: list[int]) -> None:
        """``code`` on ``regs``; the result (file ``kind``) into ``dst``, converted if ``dst`` is in the other file."""
        target = dst[1] if dst[0] == kind else self.temp(kind)
        out.extend((OPCODE[code], target, *regs, *(self.pad,) * (3 - len(regs))))
        if dst[0] != kind:
            out.extend((OPCODE["I2D" if dst[0] == KD else "D2I"], dst[1], target, self.pad, self.pad))

    # -- a class ------------------------------------------------------------------------------------

    def constant(self, value: Any, dtype: str) -> Operand:
        """A register holding ``value`` (of ``dtype``), one per distinct value."""
        key = (dtype, float(value).hex() if dtype == FLOAT64 else int(value))
        found = self.known.get(key)
        if found is None:
            kind = _KIND[dtype]
            reg = self.regs.fresh(kind)
            self.consts[kind].append((reg, float(value) if kind == KD else int(value)))
            found = self.known[key] = (kind, reg, dtype)
        return found

    def expand(self, cls: LoopClass, body: Program) -> None:
        """The class's members as straight-line instructions: the body once per member."""
        if self.expand_one(cls, body):
            return
        self.body_values = body.values
        for member, reads, values in zip(cls.members, cls.reads, cls.constants, strict=True):
            dst = self.at[member] = (KD, self.regs.take(KD), FLOAT64)
            local: dict[Term, Operand] = {s: self.at[t] for s, t in zip(cls.slots, reads, strict=True)}
            for k, value in zip(cls.consts, values, strict=True):
                local[k] = self.constant(value, k.dtype)
            for step in body.steps:
                kind = _KIND[step.dtype]
                target = dst if step is cls.body else (kind, self.temp(kind), step.dtype)
                local[step] = target
                self.node(step, step.args, target, self.main, local)
            self.release_temps()
        self.body_values = {}

    def expand_one(self, cls: LoopClass, body: Program) -> bool:
        """:meth:`expand` of the most common class, one float64 op on slots only, without the general path."""
        step = body.steps[0] if len(body.steps) == 1 else None
        if step is None or step.dtype != FLOAT64 or cls.consts:
            return False
        code = ON_DOUBLES.get((step.op.name, len(step.args)))
        slot = {s: j for j, s in enumerate(cls.slots)}
        if code is None or any(a not in slot for a in step.args):
            return False
        first, last = slot[step.args[0]], slot[step.args[-1]]
        at, take, main = self.at, self.regs.take, self.main
        for member, reads in zip(cls.members, cls.reads, strict=True):
            dst = take(KD)
            at[member] = (KD, dst, FLOAT64)
            main.extend((code, dst, at[reads[first]][1], at[reads[last]][1], 0))
        return True

    def loop(self, cls: LoopClass) -> None:
        """The class's members computed by one LOOP: its body encoded once, its tables appended."""
        body = lower([cls.body], [*cls.slots, *cls.consts])
        if len(body.steps) <= EXPAND:
            self.expand(cls, body)
            return
        for member in cls.members:
            self.at[member] = (KD, self.regs.take(KD), FLOAT64)
        self.body_values = body.values
        local: dict[Term, Operand] = {}
        taken: list[tuple[int, int]] = []
        for t in (*cls.slots, *cls.consts, *body.steps):
            kind = _KIND[t.dtype]
            local[t] = (kind, self.regs.take(kind), t.dtype)
            taken.append(local[t][:2])
        start = len(self.bodies) // WORDS
        for step in body.steps:
            self.node(step, step.args, local[step], self.bodies, local)
            self.release_temps()
        self.body_values = {}
        offset = len(self.ints)
        self.descriptors.append(offset)
        self.ints.extend([0] * CLASS_FIELDS)
        fields = [len(cls.members), len(cls.slots), len(cls.consts), start, len(self.bodies) // WORDS - start]
        fields.append(local[cls.body][1])
        fields.append(len(self.ints))
        self.ints.extend(local[s][1] for s in cls.slots)
        fields.append(len(self.ints))
        self.ints.extend(local[k][0] << KIND_SHIFT | local[k][1] for k in cls.consts)
        fields.append(len(self.ints))
        at = self.at
        self.ints.extend(at[t][1] for reads in cls.reads for t in reads)
        fields.append(len(self.ints))
        self.ints.extend(at[m][1] for m in cls.members)
        fields.append(len(self.doubles))
        self.doubles.extend(float(v) for values in cls.constants for v in values)
        self.ints[offset : offset + CLASS_FIELDS] = fields
        self.main.extend((OPCODE["LOOP"], 0, offset, 0, 0))
        for kind, reg in taken:
            self.regs.give(kind, reg)


def _items(program: Program, structure: Structure | None) -> list[Term | LoopClass]:
    """The program's steps and classes in execution order."""
    if structure is None:
        return list(program.steps)
    return [x for seg in structure.segments for x in ([seg] if isinstance(seg, LoopClass) else seg)]


def _reads(item: Term | LoopClass, program: Program) -> set[Term]:
    if isinstance(item, LoopClass):
        return {t for reads in item.reads for t in reads}
    return set(program.args_of(item))


def encode(program: Program, structure: Structure | None = None) -> Encoded:
    """Encode ``program`` (with its classes when ``structure`` is given) for the machine, in linear time.

    Each output is stored as soon as it is computed (a STORE, or for a class's members and the
    outputs known before the run one STORES_D over a table), so its register is reused after its
    last reader like any other: the registers follow the program's width, not its number of outputs.
    """
    if structure is None:
        return _encode_flat(program)
    program.walked = None  # (the walk's arrays serve the straight-line encoding only)
    check_supported(program)
    enc = _Encoder(program)
    items = _items(program, structure)
    reads = [_reads(item, program) for item in items]
    last: dict[Term, int] = {}
    for k, read in enumerate(reads):
        for t in read:
            last[t] = k
    inputs = [program.inputs[i] for i in program.used_inputs]
    for s in inputs:
        kind = _KIND[s.dtype]
        enc.at[s] = (kind, enc.regs.take(kind), s.dtype)
    stores = _Stores(program)
    known = [t for t in program.outputs if t in enc.at or t in program.values]
    for t in known:  # inputs and constants: stored before anything runs
        enc.operand(t)
    stores.emit_many(known, enc)
    for t in known:
        stores.emit(t, enc.at[t], enc.main)
    values = program.values
    for k, item in enumerate(items):
        if isinstance(item, LoopClass):
            enc.loop(item)
            made = item.members
            stores.emit_many(made, enc)
        else:
            kind = _KIND[item.dtype]
            enc.at[item] = dst = (kind, enc.regs.take(kind), item.dtype)
            enc.node(item, program.args_of(item), dst, enc.main, None)
            enc.release_temps()
            made = [item]
        columns, at, give = stores.columns, enc.at, enc.regs.give
        for t in made:
            if t in columns:
                stores.emit(t, at[t], enc.main)
            if last.get(t, -1) < k:  # an output nobody reads: its register is free once stored
                give(*at[t][:2])
        for t in reads[k]:
            if last[t] == k and t not in values:
                enc.regs.give(*enc.at[t][:2])
    return _finish(enc, inputs, stores.run_outputs)


def _encode_flat(program: Program) -> Encoded:
    """The straight-line encoding: the extension's when it takes the program, else :func:`_encode_flat_py`.

    A program the extension's walk lowered is encoded from the walk's arrays (``encode_walked``, once:
    the arrays are let go), else from its terms (``encode_flat``); both give the same words.
    """
    inputs = list(map(program.inputs.__getitem__, program.used_inputs))
    walked, program.walked = program.walked, None
    if _native is not None and program.pointwise and not program.operands:
        if DTYPE_KIND.keys() >= set(map(_DTYPE, program.inputs)):
            steps = program.steps if type(program.steps) is list else list(program.steps)
            args = (tuple(inputs), program.outputs, program.values, flat_tables())
            found = None if walked is None else _native.encode_walked(walked[0], steps, walked[1], *args)
            if found is None:
                found = _native.encode_flat(steps, *args)
            if found is not None:
                return finish_native(program, found)
    check_supported(program)
    return _encode_flat_py(program)


def _encode_flat_py(program: Program) -> Encoded:
    """Straight-line code over numbered values, then :func:`~.vm_alloc.allocate` picks the registers.

    The common step (a float64 op of one instruction on float64 operands) is encoded inline; every
    other step takes the general path of :meth:`_Encoder.node`.
    """
    values = Values()
    enc = _Encoder(program, values)
    at, main = enc.at, enc.main
    inputs = [program.inputs[i] for i in program.used_inputs]
    for s in inputs:
        kind = _KIND[s.dtype]
        at[s] = (kind, values.take(kind), s.dtype)
    stores = _Stores(program)
    for t in program.outputs:
        if t in at or t in program.values:  # inputs and constants: stored before anything runs
            stores.emit(t, enc.operand(t), main)
    columns, operands, operand = stores.columns, program.operands, enc.operand
    kinds, pinned = values.kinds, values.pinned
    for node in program.steps:
        args = (operands.get(node) or node.args) if operands else node.args
        code = ON_DOUBLES.get((node.op.name, len(args))) if node.dtype == FLOAT64 else None
        if code is not None:
            a = at.get(args[0]) or operand(args[0])
            b = at.get(args[-1]) or operand(args[-1])
            if a[2] == FLOAT64 and b[2] == FLOAT64:  # one instruction, inline
                vid = len(kinds)
                kinds.append(KD)
                pinned.append(0)
                dst = at[node] = (KD, vid, FLOAT64)
                main.extend((code, vid, a[1], b[1], UNUSED))
                if node in columns:
                    stores.emit(node, dst, main)
                continue
        kind = _KIND[node.dtype]
        dst = at[node] = (kind, values.take(kind), node.dtype)
        enc.node(node, args, dst, main, None)
        if node in columns:
            stores.emit(node, dst, main)
    return finish_flat(program, enc.main, values, enc.consts, [at[s][1] for s in inputs], stores.run_outputs)


class _Stores:
    """The STORE instructions of each output: its run index (first position only) and packed columns."""

    def __init__(self, program: Program) -> None:
        self.columns: dict[Term, list[int]] = {}
        for j, t in enumerate(program.outputs):
            self.columns.setdefault(t, []).append(j)
        #: the outputs the run entry point writes (distinct, with symbols), in order
        values = program.values  # an output without symbols is a compile-time value
        self.run_outputs = list(dict.fromkeys(t for t in program.outputs if t not in values))
        self.run_index = {t: j for j, t in enumerate(self.run_outputs)}

    def emit_many(self, terms: Sequence[Term], enc: _Encoder) -> None:
        """One STORES_D instruction for the outputs among ``terms`` held in double registers.

        At one point a STORE per output would cost one dispatch each (78k for an OPF Hessian's blocks);
        the STORES_D table is one tight loop. Terms stored here are not stored again by :meth:`emit`.
        """
        table: list[int] = []
        extend, pending, at, run_index = table.extend, self.columns, enc.at, self.run_index
        for t in terms:
            columns = pending.get(t)
            if columns is None:
                continue
            where = at[t]
            if where[0] != KD:
                continue
            del pending[t]
            if len(columns) == 1:  # most outputs: one column
                extend((run_index.get(t, -1), where[1], columns[0]))
                continue
            run = run_index.get(t, -1)
            for j in columns:
                extend((run, where[1], j))
                run = -1
        if table:
            enc.main.extend((OPCODE["STORES_D"], len(table) // 3, len(enc.ints), 0, 0))
            enc.ints.extend(table)

    def emit(self, t: Term, where: Operand, out: list[int]) -> None:
        """Stores of ``t`` (from ``where``), when it is an output (once: later calls do nothing)."""
        columns = self.columns.pop(t, None)
        if columns is None:
            return
        code = OPCODE["STORE_D" if where[0] == KD else "STORE_I"]
        run = self.run_index.get(t, -1)
        for j in columns:
            out.extend((code, run, where[1], j, _STORE[t.dtype]))
            run = -1


def _finish(enc: _Encoder, inputs: list[Term], run_outputs: list[Term]) -> Encoded:
    """The arrays of a finished encoding: bodies after the main code, the input map."""
    program = enc.program
    main_len = len(enc.main) // WORDS
    for offset in enc.descriptors:
        enc.ints[offset + 3] += main_len  # the body's first instruction, counted from the start of the code
    i32 = np.int32
    cd, ci = enc.consts
    return Encoded(
        code=np.array(enc.main + enc.bodies, dtype=i32),
        main_len=main_len,
        ints=np.array(enc.ints, dtype=i32),
        doubles=np.array(enc.doubles, dtype=np.float64),
        nd=enc.regs.count[KD],
        ni=enc.regs.count[KI],
        const_d_reg=np.array([r for r, _ in cd], dtype=i32),
        const_d_val=np.array([v for _, v in cd], dtype=np.float64),
        const_i_reg=np.array([r for r, _ in ci], dtype=i32),
        const_i_val=np.array([v for _, v in ci], dtype=np.int64),
        in_store=np.array([_STORE[s.dtype] for s in inputs], dtype=i32),
        in_reg=np.array([enc.at[s][1] for s in inputs], dtype=i32),
        in_col=np.array(program.used_inputs, dtype=i32),
        n_cols=len(program.inputs),
        n_out=len(run_outputs),
        n_pk=len(program.outputs),
        loop_outputs=run_outputs,
        loops=len(enc.descriptors),
    )
