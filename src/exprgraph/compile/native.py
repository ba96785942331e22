"""Calling native code (the C and LLVM backends' functions) on numpy values: binding, broadcasting, packing.

A native program exposes two entry points with the same contract whatever built it:

- ``run(n, in, step, out)``: ``n`` points; ``in[k]`` the address of input ``k`` read with stride
  ``step[k]`` (1, or 0 for a broadcast scalar); ``out[j]`` the address of run-time output ``j``;
- ``packed(npts, x, o)``: ``npts`` rows of all inputs packed as doubles in ``x``, rows of all
  outputs written as doubles to ``o``.

Both return nonzero when an integer power had a negative exponent. :class:`NativeRunner` does the
Python side once for both backends.
"""

from __future__ import annotations

import ctypes
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ..core import Term
from ..errors import EvaluationError
from ..eval import evaluate
from ..eval.bind import NUMPY_DTYPES
from ..eval.limits import check_elements, limit_in_force
from .function import bind_inputs, common_shape, packed_arrays
from .lower import Program

__all__ = ["NativeRunner", "NEGATIVE_POWER", "narrow"]

NEGATIVE_POWER = (
    "integer ** negative integer is undefined in int64: make the base or the exponent a float (e.g. x**-1.0)"
)


class NativeRunner:
    """The Python side of a native program's two entry points (see the module's description)."""

    def __init__(
        self,
        program: Program,
        loop_outputs: list[Term],
        input_index: list[int],
        run: Callable[[int, Any, Any, Any], int],
        packed: Callable[[int, int, int], int],
    ) -> None:
        self.program = program
        program.walked = None  # the walk's arrays for the vm's encoding (see lower.Program): not kept with a runner
        self.loop_outputs = loop_outputs
        self.input_index = input_index
        self._native_run = run
        self._native_packed = packed
        n_in = len(input_index)
        self._in_t = ctypes.c_void_p * max(n_in, 1)
        self._step_t = ctypes.c_int64 * max(n_in, 1)
        self._out_t = ctypes.c_void_p * max(len(loop_outputs), 1)
        self._out_dtypes: list[Any] | None = None  # found on the first array call, as the tables below
        # which inputs each output reads, and the constant outputs: found on the first array call
        # (a packed call never needs them; finding them costs 0.7 s at 10^5 outputs)
        self._tables: tuple[list[list[int]], dict[Term, Any]] | None = None

    def _output_tables(self) -> tuple[list[list[int]], dict[Term, Any]]:
        """Per loop output the slots of the inputs it reads, and the values of the constant outputs."""
        if self._tables is None:
            program = self.program
            positions = {s: k for k, s in enumerate(program.inputs)}
            slot = {position: k for k, position in enumerate(self.input_index)}  # a dict: list.index was quadratic
            free_index = [[slot[positions[s]] for s in t.free_symbols] for t in self.loop_outputs]
            constants = {t: program.values[t] for t in program.fixed}
            self._tables = (free_index, constants)
        return self._tables

    # -- arrays, broadcast like numpy ------------------------------------------------------------

    def run(self, *args: Any) -> tuple[Any, ...]:
        """The outputs' values for these input values (a tuple, in the program's output order)."""
        with np.errstate(all="ignore"):  # casts and the fallback evaluation follow IEEE silently
            return self._call(args)

    def _call(self, args: tuple) -> tuple[Any, ...]:
        program = self.program
        inputs = program.inputs
        values = bind_inputs(inputs, args)
        arrays = [np.asarray(values[i]) for i in self.input_index]
        shapes = [a.shape for a in arrays]
        shape = common_shape(shapes)
        if shape is None or not math.prod(shape):  # evaluate broadcasts each output's own inputs; no points
            return tuple(evaluate(list(program.outputs), dict(zip(inputs, values, strict=True))))
        check_elements(shape, limit_in_force(), "the compiled function")  # before allocating the outputs
        size = math.prod(shape)
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
        if self._out_dtypes is None:
            self._out_dtypes = [NUMPY_DTYPES[t.dtype] for t in self.loop_outputs]
        results = [np.empty(shape, dtype=d) for d in self._out_dtypes]
        outs = self._out_t()
        for j, r in enumerate(results):
            outs[j] = r.ctypes.data
        if self._native_run(size, ptrs, steps, outs):
            raise EvaluationError(NEGATIVE_POWER)
        free_index, constants = self._output_tables()
        by_term = {}
        for t, r, idx in zip(self.loop_outputs, results, free_index, strict=True):
            own = np.broadcast_shapes(*(shapes[k] for k in idx))
            by_term[t] = narrow(r, own)
        return tuple(by_term[t] if t in by_term else constants[t] for t in program.outputs)

    # -- packed ------------------------------------------------------------------------------------

    def packed(self, x: Any, out: np.ndarray | None = None) -> np.ndarray:
        """All outputs as float64 for points packed in ``x`` (shape ``(n_in,)`` or ``(points, n_in)``)."""
        n_in, n_out = len(self.program.inputs), len(self.program.outputs)
        x, out = packed_arrays(x, out, n_in, n_out, native=True)
        points = 1 if x.ndim == 1 else x.shape[0]
        if points and self._native_packed(points, x.ctypes.data, out.ctypes.data):
            raise EvaluationError(NEGATIVE_POWER)
        return out


def narrow(full: np.ndarray, shape: tuple[int, ...]) -> Any:
    """The entries of ``full`` (computed over the broadcast shape) for an output of ``shape``."""
    if full.shape == shape:
        return full[()] if not full.ndim else full
    lead = full.ndim - len(shape)
    index = (0,) * lead + tuple(
        slice(None) if s == f else slice(0, 1) for s, f in zip(shape, full.shape[lead:], strict=True)
    )
    part = full[index]
    return part[()] if not part.ndim else part.copy()
