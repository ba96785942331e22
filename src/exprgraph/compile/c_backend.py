"""The C backend: a pointwise program as C (see :mod:`.c_emit`), built, loaded and called with ctypes.

``build_c(program)`` returns a :class:`CRunner` with two calls:

- ``run(*args)``: values bound like :func:`exprgraph.evaluate` (cast to each input's dtype,
  broadcast like numpy); inputs with one element are read with stride 0, others are made
  contiguous arrays of the broadcast shape; outputs come back as arrays of their own broadcast
  shape and dtype;
- ``packed(x, out=None)``: one float64 array of shape ``(n_inputs,)`` or ``(points, n_inputs)`` in,
  ``(n_outputs,)`` or ``(points, n_outputs)`` out (into ``out`` when given), with no Python work
  per argument.

The optimisation level follows the program's size: ``-O3`` up to :data:`O3_LIMIT` statements,
then ``-O1`` with loop vectorisation. The parts are straight-line lane loops, which ``-O1`` with
vectorisation compiles as well as ``-O2`` or ``-O3`` beyond a few thousand statements, in about
two thirds of the time (measured: f + gradient at n = 1000, 14k statements, 4.3 -> 2.9 s to build
and 85 -> 58 ms at 10^4 points; the Hessian's 30k statements 5.0 -> 3.6 s, the same speed);
small programs gain a few percent at ``-O3`` (the 203-op expression's gradient: 6%).
"""

from __future__ import annotations

import ctypes
import threading
from typing import Any

import numpy as np

from . import crender
from .backends import Backend, register_backend
from .c_emit import FOLD_WIDTH, PART_SIZE, CSource, emit_c
from .c_loops import emit_loops
from .cbuild import Library, build_library
from .function import Built
from .lower import Program, chain_folds
from .native import NativeRunner
from .structure import Structure, find_structure
from .vectors import scalar_program
from .vloop import plan_loops
from .vloop_c import build_vector_loops

__all__ = ["build_c", "loop_structure", "CRunner", "c_source", "c_literal", "O3_LIMIT"]

#: statements up to which -O3 is used (beyond: -O1 -ftree-loop-vectorize)
O3_LIMIT = 2_000


def c_literal(value: Any, dtype: str) -> str:
    """An exact C literal for a scalar constant of ``dtype`` (host C types)."""
    return crender.literal(value, dtype, crender.HOST)


def c_source(program: Program) -> CSource:
    """The C translation units the backend compiles for ``program`` (without compiling them).

    A program with vector terms is compiled in its scalar form (see :mod:`.vectors`).
    """
    if not program.pointwise:
        program = scalar_program(program).scalar
    return emit_c(program)


def _opt_flags(statements: int) -> tuple[str, tuple[str, ...]]:
    if statements <= O3_LIMIT:
        return "-O3", ()
    return "-O1", ("-ftree-loop-vectorize",)


class CRunner(NativeRunner):
    """The loaded library of one program: ``run(*args)`` and ``packed(x, out=None)`` (see :mod:`.native`)."""

    def __init__(
        self,
        program: Program,
        source: CSource,
        library: Library,
        tables: tuple[np.ndarray, np.ndarray] | None = None,
        info: dict[str, Any] | None = None,
    ) -> None:
        self.source = source
        self.tables = tables
        #: the classes found (see :meth:`~exprgraph.compile.structure.Structure.report`), or None
        self.info = info
        #: kept alive with the runner: its handle closes when no runner holds it
        self.library = library
        i64, ptr = ctypes.c_int64, ctypes.c_void_p
        run = library.function("eg_run", ctypes.c_int, [i64, ptr, ptr, ptr, ptr])
        packed = library.function("eg_packed", ctypes.c_int, [i64, ptr, ptr, ptr])
        self._packed_address = ctypes.cast(packed, ptr).value
        self.block = int(library.function("eg_block", ctypes.c_int, [])())
        self.work_bytes = int(library.function("eg_work_bytes", ctypes.c_int64, [])())
        self._local = threading.local()
        super().__init__(
            program,
            source.loop_outputs,
            source.input_index,
            lambda n, ins, steps, outs: run(n, ins, steps, outs, self.work()),
            lambda n, x, o: packed(n, x, o, self.work()),
        )

    def packed_entry(self) -> tuple[int, int]:
        """The library's packed entry (``int eg_packed(int64_t points, const double *x, double *o, void *work)``)
        and this thread's work area, as addresses (for C callers; keep this runner alive while they call)."""
        assert self._packed_address is not None
        return self._packed_address, self.work()

    def work(self) -> int:
        """The address of this thread's workspace (each thread has its own)."""
        buf = getattr(self._local, "buf", None)
        if buf is None:
            buf = self._local.buf = np.empty(max(self.work_bytes, 8) // 8 + 8, dtype=np.float64)
            if self.tables is not None:
                # the library reads its tables through the first two pointers of the work area: each
                # runner passes its own, so two programs sharing one cached library never mix tables
                head = buf.view(np.uint64)
                head[0] = self.tables[0].ctypes.data
                head[1] = self.tables[1].ctypes.data
        return buf.ctypes.data


def loop_structure(program: Program, loops: int) -> Structure:
    """The classes of a pointwise ``program`` as the C backend groups them (long folds cut into chains first)."""
    return find_structure(chain_folds(program, 1 + PART_SIZE * (FOLD_WIDTH - 1)), loops)


def build_c(
    program: Program, *, timeout: float | None = None, loops: int = 0, structure: Structure | None = None
) -> CRunner:
    """Emit, build (or find in the cache) and load the C code of a pointwise ``program``.

    ``loops``: the fewest outputs of one shape that become a loop (0: straight-line code only);
    ``structure``: those classes when already found (:func:`loop_structure` with the same ``loops``).
    """
    tables = None
    info = None
    if loops and program.pointwise:
        if structure is None:
            structure = loop_structure(program, loops)
        info = structure.report()
        if structure.classes:
            grouped = emit_loops(structure)
            source, tables = grouped.source, (grouped.ints, grouped.doubles)
    if tables is None:
        source = c_source(program)
    opt, extra = _opt_flags(source.statements)
    library, _ = build_library(source.units, extra, opt=opt, timeout=timeout)
    return CRunner(program, source, library, tables, info)


def _build(program: Program, build_timeout: float | None, loops: int = 0) -> Built:
    """The C backend's function: built by the system C compiler (within ``build_timeout``), loaded with ctypes.

    A vector program of constant shapes is built as loops over its vector nodes (:mod:`.vloop`);
    one with an op those loops do not read is scalarised (:mod:`.vectors`).
    """
    plan = None if program.pointwise else plan_loops(program)
    if plan is not None:
        direct, source = build_vector_loops(plan, timeout=build_timeout)
        info = {"grouped": False, "classes": [], "vector_loops": source.statements}
        return Built(direct.run, source.text, direct.packed, direct.owner, info)
    vector = None if program.pointwise else scalar_program(program)
    runner = build_c(program if vector is None else vector.scalar, timeout=build_timeout, loops=loops)
    run = runner.run if vector is None else vector.wrap(runner.run, runner.packed)
    return Built(run, runner.source.text, runner.packed, runner.library, runner.info)


register_backend(Backend("c", _build, uses_build_timeout=True, loops=True))
