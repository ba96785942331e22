"""Register allocation for the vm: straight-line code over numbered values onto the machine's registers.

The straight-line encoder (:func:`exprgraph.compile.vm_encode.encode` without classes) names every
value by its own number ("virtual registers": a value is written once) and leaves the choice of
registers to one pass over the finished code, :func:`allocate`: each value's last reader is found,
a value gets a register of its file (doubles or int64) when it is written, and gives it back after
its last reader has run, so the registers follow the program's width, not its length. Constants
keep registers of their own (filled once, when the machine is made). A register freed last is
taken first, and a value never shares a register with an operand of the instruction that writes it.

The pass is linear; it runs in the extension (``_cvm.allocate``, in ``_cvm.c``) and here, its
Python twin, when the extension is not built. Both give the same code, register for register.
"""

from __future__ import annotations

import os
from operator import attrgetter
from typing import Any

import numpy as np

from ..core import Term
from ..core.termbase import PURE_ENV
from ..errors import CompileError
from .lower import Program
from .vm_ops import DTYPE_STORE, OPCODE, OPCODES, WORDS, Encoded

_DTYPE = attrgetter("dtype")

try:
    from . import _cvm  # type: ignore[attr-defined]
except ImportError:  # not built: the Python twins run
    _cvm = None

__all__ = [
    "Allocation",
    "allocate",
    "allocate_py",
    "UNUSED",
    "Registers",
    "Values",
    "native_module",
    "finish_native",
    "finish_flat",
]


def native_module(entry: str) -> Any:
    """The vm's extension when it has ``entry`` and is not switched off (``EXPRGRAPH_PURE_PYTHON``), else None."""
    if _cvm is None or os.environ.get(PURE_ENV) or not hasattr(_cvm, entry):
        return None
    return _cvm


_native = native_module("allocate")

#: an operand word that names no value
UNUSED = -1
_STORES = (OPCODE["STORE_D"], OPCODE["STORE_I"])
_LOOP = OPCODE["LOOP"]

#: (code with machine registers, the register of each value, double registers, int64 registers)
Allocation = tuple[np.ndarray, np.ndarray, int, int]


class Registers:
    """Registers given out as code is encoded (code with classes): a freed register is reused first."""

    #: the word written for an operand an instruction does not have
    pad = 0

    def __init__(self) -> None:
        self.count = [0, 0]
        self.free: list[list[int]] = [[], []]

    def take(self, kind: int) -> int:
        """A register of file ``kind``: the last one given back, else a new one."""
        pool = self.free[kind]
        if pool:
            return pool.pop()
        return self.fresh(kind)

    def fresh(self, kind: int) -> int:
        """A register never used before (constants: filled once, they must share with nothing)."""
        self.count[kind] += 1
        return self.count[kind] - 1

    def give(self, kind: int, reg: int) -> None:
        """Register ``reg`` of file ``kind`` is free again."""
        self.free[kind].append(reg)


class Values(Registers):
    """Virtual registers for straight-line code: each value a number of its own (:func:`allocate` picks registers)."""

    pad = UNUSED

    def __init__(self) -> None:
        super().__init__()
        #: the register file of each value, and whether it is a constant (a register of its own)
        self.kinds: list[int] = []
        self.pinned: list[int] = []

    def take(self, kind: int) -> int:
        """A new value of file ``kind``."""
        self.kinds.append(kind)
        self.pinned.append(0)
        return len(self.kinds) - 1

    def fresh(self, kind: int) -> int:
        """A new constant of file ``kind`` (a register of its own)."""
        self.kinds.append(kind)
        self.pinned.append(1)
        return len(self.kinds) - 1

    def give(self, kind: int, reg: int) -> None:
        """Nothing: :func:`allocate` frees each value after its last reader."""


def allocate(code: np.ndarray, kinds: np.ndarray, pinned: np.ndarray, inputs: np.ndarray) -> Allocation:
    """Registers for the values of straight-line ``code`` (int32, :data:`~.vm_ops.WORDS` words an instruction).

    ``kinds[v]``: the file of value ``v`` (0 doubles, 1 int64); ``pinned[v]``: 1 for a constant (a
    register of its own, never reused); ``inputs``: the values loaded before the code runs. In
    ``code``, word 1 is the value written and words 2-4 the values read (:data:`UNUSED`: none),
    except in a STORE, which reads word 2 only. Returns the code with registers in place of values,
    the register of each value, and the registers used in each file.
    """
    code = np.ascontiguousarray(code, dtype=np.int32).reshape(-1)
    kinds = np.ascontiguousarray(kinds, dtype=np.int32)
    pinned = np.ascontiguousarray(pinned, dtype=np.int32)
    inputs = np.ascontiguousarray(inputs, dtype=np.int32)
    if len(code) % WORDS or len(kinds) != len(pinned):
        raise CompileError("vm allocation: the code is not whole instructions, or the value tables differ in length")
    if _native is None:
        return allocate_py(code, kinds, pinned, inputs)
    try:
        out, phys, nd, ni = _native.allocate(code, kinds, pinned, inputs)
    except ValueError as e:  # code the encoder should never make
        raise CompileError(str(e)) from e
    return (np.frombuffer(out, dtype=np.int32), np.frombuffer(phys, dtype=np.int32), int(nd), int(ni))


def _reads(ins: list[int]) -> list[int]:
    """The values an instruction reads."""
    if ins[0] in _STORES:
        return [ins[2]]
    return [v for v in ins[2:] if v != UNUSED]


def _last_reads(words: list[list[int]], n_values: int, inputs: list[int]) -> list[int]:
    """The last instruction reading each value (-1: none); refuses a word naming no value, or a LOOP."""
    if any(not 0 <= v < n_values for v in inputs):
        raise CompileError("vm allocation: an input names no value")
    last = [-1] * n_values
    for i, ins in enumerate(words):
        if ins[0] == _LOOP or not 0 <= ins[0] < len(OPCODES):
            raise CompileError(f"vm allocation: instruction {i} is not straight-line code")
        for v in [*_reads(ins), *([] if ins[0] in _STORES else [ins[1]])]:
            if not 0 <= v < n_values:
                raise CompileError(f"vm allocation: instruction {i} names value {v} of {n_values}")
        for v in _reads(ins):
            last[v] = i
    return last


def allocate_py(code: np.ndarray, kinds: np.ndarray, pinned: np.ndarray, inputs: np.ndarray) -> Allocation:
    """:func:`allocate` in Python (the extension's twin)."""
    words = code.reshape(-1, WORDS).tolist()
    last = _last_reads(words, len(kinds), inputs.tolist())
    file_of = [int(k != 0) for k in kinds.tolist()]
    count = [0, 0]
    free: list[list[int]] = [[], []]
    phys = [-1] * len(kinds)
    held = [False] * len(kinds)  # a value holds its register now (so a register is given back once)
    for v, kind in enumerate(file_of):  # constants first: registers of their own
        if pinned[v]:
            phys[v], count[kind] = count[kind], count[kind] + 1

    def take(v: int) -> None:
        kind = file_of[v]
        if free[kind]:
            phys[v] = free[kind].pop()
        else:
            phys[v], count[kind] = count[kind], count[kind] + 1
        held[v] = True

    def give(v: int) -> None:
        if held[v]:  # not a constant, not given back already
            free[file_of[v]].append(phys[v])
            held[v] = False

    for v in inputs.tolist():
        if phys[v] < 0:
            take(v)
    for v in inputs.tolist():
        if last[v] < 0:  # an input nobody reads
            give(v)
    for i, ins in enumerate(words):
        store = ins[0] in _STORES
        if not store and phys[ins[1]] < 0:
            take(ins[1])
        read = _reads(ins)
        for j in range(2, 3 if store else WORDS):
            ins[j] = phys[ins[j]] if ins[j] != UNUSED else 0
        for v in dict.fromkeys(read):
            if last[v] == i:
                give(v)
        if not store:
            dst, ins[1] = ins[1], phys[ins[1]]
            if last[dst] < 0:  # written and never read: free at once
                give(dst)
    return np.array(words, dtype=np.int32).reshape(-1), np.array(phys, dtype=np.int32), count[0], count[1]


def finish_flat(
    program: Program,
    code: list[int],
    values: Values,
    consts: tuple[list[tuple[int, Any]], list[tuple[int, Any]]],
    in_values: list[int],
    run_outputs: list[Term],
) -> Encoded:
    """The :class:`~.vm_ops.Encoded` of a straight-line encoding in Python, its values given registers."""
    i32 = np.int32
    allocation = allocate(
        np.array(code, dtype=i32),
        np.array(values.kinds, dtype=i32),
        np.array(values.pinned, dtype=i32),
        np.array(in_values, dtype=i32),
    )
    cd, ci = consts
    numbers = (np.array([v for _, v in cd], dtype=np.float64), np.array([v for _, v in ci], dtype=np.int64))
    return _encoded(program, allocation, ([r for r, _ in cd], [r for r, _ in ci]), numbers, in_values, run_outputs)


def finish_native(program: Program, found: tuple) -> Encoded:
    """The :class:`~.vm_ops.Encoded` of ``_cvm.encode_flat``'s result ``found``, its values given registers."""
    words, kinds, pinned, in_vid, cd_vid, cd_val, ci_vid, ci_val, run_outputs = found
    i32 = np.int32
    allocation = allocate(*(np.frombuffer(b, dtype=i32) for b in (words, kinds, pinned, in_vid)))
    regs = (np.frombuffer(cd_vid, dtype=i32), np.frombuffer(ci_vid, dtype=i32))
    numbers = (np.frombuffer(cd_val, dtype=np.float64), np.frombuffer(ci_val, dtype=np.int64))
    return _encoded(program, allocation, regs, numbers, np.frombuffer(in_vid, dtype=i32), run_outputs)


def _encoded(
    program: Program,
    allocation: Allocation,
    const_values: tuple[Any, Any],
    numbers: tuple[np.ndarray, np.ndarray],
    in_values: Any,
    run_outputs: list[Term],
) -> Encoded:
    """The arrays of a straight-line encoding: constants (values, numbers) and inputs (values) in registers."""
    code, phys, nd, ni = allocation
    i32 = np.int32
    inputs = list(map(program.inputs.__getitem__, program.used_inputs))
    return Encoded(
        code=code,
        main_len=len(code) // WORDS,
        ints=np.zeros(0, dtype=i32),
        doubles=np.zeros(0, dtype=np.float64),
        nd=nd,
        ni=ni,
        const_d_reg=phys[np.asarray(const_values[0], dtype=np.intp)].astype(i32),
        const_d_val=numbers[0],
        const_i_reg=phys[np.asarray(const_values[1], dtype=np.intp)].astype(i32),
        const_i_val=numbers[1],
        in_store=np.array(list(map(DTYPE_STORE.__getitem__, map(_DTYPE, inputs))), dtype=i32),
        in_reg=phys[np.asarray(in_values, dtype=np.intp)].astype(i32),
        in_col=np.fromiter(program.used_inputs, dtype=i32, count=len(program.used_inputs)),
        n_cols=len(program.inputs),
        n_out=len(run_outputs),
        n_pk=len(program.outputs),
        loop_outputs=run_outputs,
    )
