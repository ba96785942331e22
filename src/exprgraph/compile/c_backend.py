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
``-O2`` up to :data:`O2_LIMIT`, then ``-O1`` with loop vectorisation (compile time grows with the
level; the parts stay vectorised at every level).
"""

from __future__ import annotations

import ctypes
import math
import threading
from typing import Any

import numpy as np

from ..errors import CompileError, EvaluationError
from ..eval import evaluate
from ..eval.bind import NUMPY_DTYPES
from . import crender
from .c_emit import CSource, emit_c
from .cbuild import Library, build_library
from .function import bind_inputs
from .lower import Program

__all__ = ["build_c", "CRunner", "c_source", "c_literal", "O3_LIMIT", "O2_LIMIT"]

#: statements up to which -O3 is used
O3_LIMIT = 2_000
#: statements up to which -O2 is used (beyond: -O1 -ftree-loop-vectorize)
O2_LIMIT = 200_000

_NEGATIVE_POWER = (
    "integer ** negative integer is undefined in int64: make the base or the exponent a float (e.g. x**-1.0)"
)


def c_literal(value: Any, dtype: str) -> str:
    """An exact C literal for a scalar constant of ``dtype`` (host C types)."""
    return crender.literal(value, dtype, crender.HOST)


def _check_pointwise(program: Program) -> None:
    if program.pointwise:
        return
    for t in (*program.steps, *program.inputs, *program.outputs):
        if t.shape:
            what = f"symbol {t.name!r}" if t.op.name == "symbol" else f"a {t.op.name} term"
            raise CompileError(
                f"the C backend compiles elementwise terms of scalar shape; {what} has shape "
                f"({', '.join(str(d) for d in t.shape)}) (use backend='numpy' for tensors)"
            )
    raise CompileError("the C backend compiles elementwise terms of scalar shape")  # pragma: no cover


def c_source(program: Program) -> CSource:
    """The C translation units the backend compiles for ``program`` (without compiling them)."""
    _check_pointwise(program)
    return emit_c(program)


def _opt_flags(statements: int) -> tuple[str, tuple[str, ...]]:
    if statements <= O3_LIMIT:
        return "-O3", ()
    if statements <= O2_LIMIT:
        return "-O2", ()
    return "-O1", ("-ftree-loop-vectorize",)


class CRunner:
    """The loaded library of one program and the two ways to call it."""

    def __init__(self, program: Program, source: CSource, library: Library) -> None:
        self.program = program
        self.source = source
        #: kept alive with the runner: its handle closes when no runner holds it
        self.library = library
        i64, ptr = ctypes.c_int64, ctypes.c_void_p
        self._run = library.function("eg_run", ctypes.c_int, [i64, ptr, ptr, ptr, ptr])
        self._packed = library.function("eg_packed", ctypes.c_int, [i64, ptr, ptr, ptr])
        self.block = int(library.function("eg_block", ctypes.c_int, [])())
        self.work_bytes = int(library.function("eg_work_bytes", ctypes.c_int64, [])())
        self._local = threading.local()
        n_in = len(source.input_index)
        self._in_t = ctypes.c_void_p * max(n_in, 1)
        self._step_t = ctypes.c_int64 * max(n_in, 1)
        self._out_t = ctypes.c_void_p * max(len(source.loop_outputs), 1)
        self._out_dtypes = [NUMPY_DTYPES[t.dtype] for t in source.loop_outputs]
        positions = {s: k for k, s in enumerate(program.inputs)}
        self._free_index = [
            [source.input_index.index(positions[s]) for s in t.free_symbols] for t in source.loop_outputs
        ]
        self._constants = {t: program.values[t] for t in program.outputs if not t.free_symbols}

    def work(self) -> int:
        """The address of this thread's workspace (each thread has its own)."""
        buf = getattr(self._local, "buf", None)
        if buf is None:
            buf = self._local.buf = np.empty(max(self.work_bytes, 8) // 8 + 8, dtype=np.float64)
        return buf.ctypes.data

    # -- arrays, broadcast like numpy ------------------------------------------------------------

    def run(self, *args: Any) -> tuple[Any, ...]:
        """The outputs' values for these input values (a tuple, in the program's output order)."""
        with np.errstate(all="ignore"):  # casts and the fallback evaluation follow IEEE silently
            return self._call(args)

    def _call(self, args: tuple) -> tuple[Any, ...]:
        program, source = self.program, self.source
        inputs = program.inputs
        values = bind_inputs(inputs, args)
        arrays = [np.asarray(values[i]) for i in source.input_index]
        shapes = [a.shape for a in arrays]
        try:
            shape = np.broadcast_shapes(*shapes)
        except ValueError as exc:
            raise EvaluationError(f"the input values do not broadcast together: {exc}") from None
        size = math.prod(shape)
        if size == 0:
            return tuple(evaluate(list(program.outputs), dict(zip(inputs, values, strict=True))))
        keep = []
        ptrs = self._in_t()
        steps = self._step_t()
        for k, a in enumerate(arrays):
            if a.size == 1:
                a = np.ascontiguousarray(a.reshape(1))
                steps[k] = 0
            else:
                if a.shape != shape or not a.flags.c_contiguous:
                    a = np.ascontiguousarray(np.broadcast_to(a, shape))
                steps[k] = 1
            keep.append(a)
            ptrs[k] = a.ctypes.data
        results = [np.empty(shape, dtype=d) for d in self._out_dtypes]
        outs = self._out_t()
        for j, r in enumerate(results):
            outs[j] = r.ctypes.data
        if self._run(size, ptrs, steps, outs, self.work()):
            raise EvaluationError(_NEGATIVE_POWER)
        by_term = {}
        for t, r, idx in zip(source.loop_outputs, results, self._free_index, strict=True):
            own = np.broadcast_shapes(*(shapes[k] for k in idx))
            by_term[t] = _narrow(r, own)
        return tuple(by_term[t] if t in by_term else self._constants[t] for t in program.outputs)

    # -- packed ------------------------------------------------------------------------------------

    def packed(self, x: Any, out: np.ndarray | None = None) -> np.ndarray:
        """All outputs as float64 for points packed in ``x`` (shape ``(n_in,)`` or ``(points, n_in)``)."""
        n_in, n_out = len(self.program.inputs), len(self.program.outputs)
        if x.__class__ is not np.ndarray or x.dtype != np.float64 or not x.flags.c_contiguous:
            x = np.ascontiguousarray(x, dtype=np.float64)
        one = x.ndim == 1
        if x.shape[-1:] != (n_in,) or x.ndim > 2:
            raise ValueError(f"packed input must have shape ({n_in},) or (points, {n_in}), got {x.shape}")
        points = 1 if one else x.shape[0]
        want = (n_out,) if one else (points, n_out)
        if out is None:
            out = np.empty(want)
        elif out.shape != want or out.dtype != np.float64 or not out.flags.c_contiguous or not out.flags.writeable:
            raise ValueError(f"out must be a writeable C-contiguous float64 array of shape {want}")
        if points and self._packed(points, x.ctypes.data, out.ctypes.data, self.work()):
            raise EvaluationError(_NEGATIVE_POWER)
        return out


def _narrow(full: np.ndarray, shape: tuple[int, ...]) -> Any:
    """The entries of ``full`` (computed over the broadcast shape) for an output of ``shape``."""
    if full.shape == shape:
        return full[()] if not full.ndim else full
    lead = full.ndim - len(shape)
    index = (0,) * lead + tuple(
        slice(None) if s == f else slice(0, 1) for s, f in zip(shape, full.shape[lead:], strict=True)
    )
    part = full[index]
    return part[()] if not part.ndim else part.copy()


def build_c(program: Program, *, timeout: float | None = None) -> CRunner:
    """Emit, build (or find in the cache) and load the C code of a pointwise ``program``."""
    source = c_source(program)
    opt, extra = _opt_flags(source.statements)
    library, _ = build_library(source.units, extra, opt=opt, timeout=timeout)
    return CRunner(program, source, library)
