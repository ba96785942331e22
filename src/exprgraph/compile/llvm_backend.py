"""The LLVM backend: a pointwise program compiled in process by llvmlite (no C compiler, no files).

It builds in milliseconds where the C backend pays for a compiler process, so it suits small
and medium functions built often; the C backend wins on run time for large programs over many
points (blocks, vector math) and on build time for very large ones (parallel translation units).
Both agree with :func:`exprgraph.evaluate`. llvmlite is an optional dependency
(``pip install exprgraph[llvm]``).
"""

from __future__ import annotations

import ctypes
import threading
from typing import Any

import numpy as np

from ..errors import CompileError
from . import llvm_emit
from .backends import Backend, register_backend
from .function import Built
from .llvm_loops import LLVMSource, emit_llvm
from .lower import Program, chain_folds
from .native import NativeRunner
from .structure import find_structure
from .vectors import scalar_program
from .vloop import plan_loops
from .vloop_ir import LoopPlan
from .vloop_llvm import emit_vector_ir
from .vloop_run import VectorLoopRunner

__all__ = ["build_llvm", "build_vector_llvm", "LLVMRunner", "llvm_available"]

_lock = threading.Lock()
_state: dict[str, Any] = {}


def _binding() -> Any:
    """llvmlite's binding layer, initialised once (a clear error names the extra when it is missing)."""
    with _lock:
        llvm = _state.get("llvm")
        if llvm is None:
            try:
                import llvmlite.binding
            except ImportError:
                raise CompileError(
                    "backend='llvm' needs llvmlite: pip install exprgraph[llvm] (or use backend='c')"
                ) from None
            llvm = llvmlite.binding
            llvm.initialize_native_target()
            llvm.initialize_native_asmprinter()
            _state["target"] = llvm.Target.from_default_triple()
            _state["cpu"] = (llvm.get_host_cpu_name(), llvm.get_host_cpu_features().flatten())
            _state["llvm"] = llvm
        return llvm


def llvm_available() -> bool:
    """Whether llvmlite can be imported."""
    try:
        _binding()
    except CompileError:
        return False
    return True


class LLVMRunner(NativeRunner):
    """A program compiled by LLVM in this process: ``run(*args)`` and ``packed(x, out=None)``."""

    def __init__(self, program: Program, source: LLVMSource, engine: Any, info: dict[str, Any] | None = None) -> None:
        #: the LLVM IR text
        self.ir = source.ir
        #: the classes found (see :meth:`~exprgraph.compile.structure.Structure.report`), or None
        self.info = info
        self._engine = engine  # owns the machine code: kept alive with the runner
        self._rows = source.rows
        self._local = threading.local()
        # the loops' tables, kept alive with the runner (each runner passes its own)
        self._ints = np.array(source.ints or [0], dtype=np.int32)
        self._doubles = np.array(source.doubles or [0.0], dtype=np.float64)
        it, dt = self._ints.ctypes.data, self._doubles.ctypes.data
        i64, ptr = ctypes.c_int64, ctypes.c_void_p
        run = ctypes.CFUNCTYPE(ctypes.c_int32, i64, ptr, ptr, ptr, ptr, ptr, ptr)(engine.get_function_address("eg_run"))
        address = engine.get_function_address("eg_packed")
        packed = ctypes.CFUNCTYPE(ctypes.c_int32, i64, ptr, ptr, ptr, ptr, ptr)(address)
        super().__init__(
            program,
            source.loop_outputs,
            source.input_index,
            lambda n, ins, steps, outs: run(
                n, ctypes.cast(ins, ptr), ctypes.cast(steps, ptr), ctypes.cast(outs, ptr), self.work(), it, dt
            ),
            lambda n, x, o: packed(n, x, o, self.work(), it, dt),
        )

    def work(self) -> int:
        """The address of this thread's work rows (8 bytes each; each thread has its own)."""
        buf = getattr(self._local, "buf", None)
        if buf is None:
            buf = self._local.buf = np.empty(self._rows, dtype=np.float64)
        return buf.ctypes.data


def build_llvm(program: Program, loops: int = 0) -> LLVMRunner:
    """Emit the IR of a pointwise ``program``, optimise and compile it in process, and wrap it.

    ``loops``: the fewest outputs of one shape that become a loop (0: straight-line parts only).
    """
    if not program.pointwise:
        raise CompileError("the LLVM backend compiles elementwise terms of scalar shape (use backend='numpy')")
    structure = find_structure(chain_folds(program, llvm_emit.PART), loops) if loops else None
    source = emit_llvm(program, structure if structure is not None and structure.classes else None)
    engine = _compile_ir(source.ir)
    return LLVMRunner(program, source, engine, structure.report() if structure is not None else None)


def _compile_ir(ir: str) -> Any:
    """An execution engine holding the machine code of the IR module ``ir`` (verified, optimised)."""
    llvm = _binding()
    try:
        module = llvm.parse_assembly(ir)
        module.verify()
    except RuntimeError as exc:  # pragma: no cover - a bug in the emitter, not in the user's terms
        raise CompileError(f"the LLVM backend produced invalid IR: {exc}") from None
    cpu, features = _state["cpu"]
    # a machine per engine: the engine takes ownership of the one it is given
    machine = _state["target"].create_target_machine(cpu=cpu, features=features, opt=2, jit=True)
    with _lock:
        options = llvm.create_pipeline_tuning_options(speed_level=2)
        builder = llvm.create_pass_builder(machine, options)
        builder.getModulePassManager().run(module, builder)
        engine = llvm.create_mcjit_compiler(module, machine)
        engine.finalize_object()
    return engine


def build_vector_llvm(plan: LoopPlan) -> tuple[VectorLoopRunner, str]:
    """The loops of a vector program (:mod:`.vloop`) compiled in process; the runner and the IR."""
    ir, has_packed = emit_vector_ir(plan)
    engine = _compile_ir(ir)
    i32, i64, ptr = ctypes.c_int32, ctypes.c_int64, ctypes.c_void_p
    run = ctypes.CFUNCTYPE(i32, i64, ptr, ptr, ptr, ptr, ptr, ptr)(engine.get_function_address("eg_vrun"))
    packed = None
    if has_packed:
        packed = ctypes.CFUNCTYPE(i32, i64, ptr, ptr, ptr, ptr)(engine.get_function_address("eg_vpacked"))
    constants = bytes(plan.constants)
    return VectorLoopRunner(plan.program, run, packed, plan.work_bytes, constants, engine), ir


def _build(program: Program, build_timeout: float | None, loops: int = 0) -> Built:
    """The LLVM backend's function: compiled in process by llvmlite (``build_timeout`` bounds no compiler process).

    A vector program of constant shapes is compiled as loops over its vector nodes (:mod:`.vloop`);
    one with an op those loops do not read is scalarised (:mod:`.vectors`).
    """
    plan = None if program.pointwise else plan_loops(program)
    if plan is not None:
        direct, ir = build_vector_llvm(plan)
        info = {"grouped": False, "classes": [], "vector_loops": len(plan.loops)}
        return Built(direct.run, ir, direct.packed, direct.owner, info)
    vector = None if program.pointwise else scalar_program(program)
    runner = build_llvm(program if vector is None else vector.scalar, loops)
    run = runner.run if vector is None else vector.wrap(runner.run, runner.packed)
    return Built(run, runner.ir, runner.packed, runner, runner.info)


register_backend(Backend("llvm", _build, loops=True))
