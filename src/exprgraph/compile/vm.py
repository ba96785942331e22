"""The vm backend: a lowered program run by a register machine in the extension, with no C compiler.

``compile(outputs, inputs, backend="vm")`` encodes the program once (:mod:`.vm_encode`: linear in
its size, milliseconds where a C build takes seconds) and runs it in :mod:`._cvm`, a register
machine over blocks of points: each instruction is one tight loop over up to ``block`` lanes, so
dispatch is paid once per instruction per block. Classes of repeated structure
(:mod:`.structure`) run as loops over their index and constant tables, as in the C backend; at
one point (a solver's callback) the members of a class are the lanes instead, up to a block of
them per pass of the body, and a class's outputs are stored by one table-driven instruction. A
packed call at one point runs the main program transcoded once into dense scalar code
(``_cvm_one.c``: fused stores, constants inline, one ``sincos`` for the sin and cos of one value,
pairs under one dispatch; the same bits as the lanes, see :data:`ONE_POINT`). The
calls and results are those of every backend (``f(*args)``, ``packed=True``), with the C
backend's semantics (:mod:`.crender`: floor division, int64 wrapping, integer power errors).

Without the extension (a build without a C compiler, or ``EXPRGRAPH_PURE_PYTHON``), the backend
checks and encodes the same way and then runs its twin, the numpy backend.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from ..core.termbase import PURE_ENV
from ..errors import EvaluationError
from .backends import Backend, get_backend, register_backend
from .function import Built
from .lower import Program
from .native import NEGATIVE_POWER, NativeRunner
from .structure import Structure, find_structure
from .vm_encode import Encoded, encode

try:
    from . import _cvm as _native  # type: ignore[attr-defined]
except ImportError:  # not built: the numpy backend runs instead
    _native = None
if os.environ.get(PURE_ENV):
    _native = None

__all__ = ["VMRunner", "build_vm", "block_for", "nlp_callbacks", "BLOCK", "MIN_BLOCK", "REGISTER_BYTES", "ONE_POINT"]

#: most lanes per register (points evaluated per instruction)
BLOCK = 128
#: fewest lanes per register when there are many registers (fewer lanes cost more dispatch than cache)
MIN_BLOCK = 16
#: the register files' budget in bytes: fewer lanes (down to MIN_BLOCK) for programs with many registers
REGISTER_BYTES = 1 << 20
#: packed calls at one point take float64 arrays as buffers and run the main program transcoded to dense scalar
#: code (``_cvm_one.c``); False (or the environment's ``EXPRGRAPH_VM_ONE_POINT=0``), when a machine is made: the
#: general packed road and the lane interpreter run them (the twin: the same bits)
ONE_POINT = os.environ.get("EXPRGRAPH_VM_ONE_POINT", "1") != "0"


def block_for(encoded: Encoded) -> int:
    """Lanes per register: a power of two from :data:`MIN_BLOCK` to :data:`BLOCK` within :data:`REGISTER_BYTES`."""
    registers = max(1, encoded.nd + encoded.ni)
    block = BLOCK
    while block > MIN_BLOCK and registers * block * 8 > REGISTER_BYTES:
        block //= 2
    return block


class VMRunner(NativeRunner):
    """An encoded program loaded in the machine: ``run(*args)`` and ``packed(x, out=None)`` (see :mod:`.native`)."""

    def __init__(
        self, program: Program, encoded: Encoded, block: int | None = None, info: dict[str, Any] | None = None
    ) -> None:
        if _native is None:
            raise ImportError("the vm extension (exprgraph.compile._cvm) is not built")
        self.encoded = encoded
        #: the classes found (see :meth:`~exprgraph.compile.structure.Structure.report`), or None
        self.info = info
        self._one = ONE_POINT
        #: the machine: instructions, tables and registers (one set, used under the GIL)
        self.machine = _native.Machine(**encoded.machine_args(block or block_for(encoded)), one_point=ONE_POINT)
        super().__init__(
            program, encoded.loop_outputs, list(program.used_inputs), self.machine.run, self.machine.packed
        )
        self._n_packed = len(program.outputs)

    def packed(self, x: Any, out: np.ndarray | None = None) -> np.ndarray:
        """All outputs as float64 (see :meth:`NativeRunner.packed`); one point of float64 arrays without ctypes."""
        if not self._one:  # the twin: the general road, as every native library
            return super().packed(x, out)
        o = np.empty(self._n_packed) if out is None else out
        flag = self.machine.one(x, o)  # 2: not a float64 row and a writeable output: the general road
        if flag == 2:
            return super().packed(x, out)
        if flag:
            raise EvaluationError(NEGATIVE_POWER)
        return o

    def describe(self) -> str:
        """A one-paragraph account of the encoded program (the function's ``.source``)."""
        e = self.encoded
        return (
            f"vm program: {e.instructions} instructions ({e.main_len} in the main program), {e.loops} loops, "
            f"{e.nd} double and {e.ni} int64 registers of {self.machine.block} lanes, "
            f"{len(e.ints)} table ints, {len(e.doubles)} table doubles\n"
        )


def build_vm(
    program: Program, *, loops: int = 0, block: int | None = None, structure: Structure | None = None
) -> VMRunner:
    """Encode ``program`` (classes of at least ``loops`` members as loops; 0: none) and load it in the machine.

    ``structure``: the classes already found for ``program`` (the "auto" backend finds them once for the
    vm and the C build); else they are found here when ``loops`` asks for them.
    """
    if structure is None and loops and program.pointwise:
        structure = find_structure(program, loops)
    if structure is not None and not structure.classes:
        structure = None
    encoded = encode(program, structure)
    return VMRunner(program, encoded, block, structure.report() if structure is not None else None)


def nlp_callbacks(machines: tuple[Any, ...], **arrays: Any) -> Any | None:
    """A nonlinear program's five callbacks in C over these machines (``_cvm.NLPCallbacks``: IPOPT calls them with
    no Python on the way), or None when the extension is not built or a machine does not run at one point."""
    if _native is None or not ONE_POINT or not all(m is None or isinstance(m, _native.Machine) for m in machines):
        return None
    return _native.NLPCallbacks(tuple(None if m is None else m for m in machines), **arrays)


def _build(program: Program, build_timeout: float | None, loops: int = 0) -> Built:
    """The vm backend's function: encoded and run by the machine (the numpy backend when it is not built)."""
    if _native is None:
        encode(program)  # the same refusals, at compile time
        return get_backend("numpy").build(program, build_timeout, loops=loops)
    runner = build_vm(program, loops=loops)
    return Built(runner.run, runner.describe(), runner.packed, runner.machine, runner.info)


register_backend(Backend("vm", _build, loops=True))
