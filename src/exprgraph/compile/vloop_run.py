"""Calling the loops of a vector program (:mod:`.vloop`) on numpy values, whichever backend built them.

Both backends' vector loops export the same two entry points:

- ``run(npts, in, istep, out, ostep, work, k)``: input ``j`` of point ``p`` at byte
  ``in[j] + p * istep[j]`` (a step of 0 broadcasts it), output ``j`` at ``out[j] + p * ostep[j]``,
  each in its dtype's memory layout (bools as bytes), entries row-major; ``k`` the constant tables;
- ``packed(npts, x, o, work, k)`` (only when every input and output is float64): rows of the
  flattened inputs in ``x``, rows of the flattened outputs written to ``o``.

Both return nonzero when an integer power had a negative exponent. :class:`VectorLoopRunner`
binds numpy values to them: ``run(*args)`` takes each input in its shape (with leading batch axes,
broadcast like numpy) and gives each output in its shape; ``packed(x, out)`` takes the flattened
entries of every input in order and gives those of every output, as
:class:`~exprgraph.compile.vectors.VectorCall` does for the scalarised form.
"""

from __future__ import annotations

import ctypes
import math
import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from ..errors import EvaluationError
from ..eval import evaluate
from ..eval.bind import NUMPY_DTYPES
from ..eval.limits import check_elements, limit_in_force
from .function import bind_inputs, common_shape, packed_arrays
from .lower import Program
from .native import NEGATIVE_POWER, narrow

__all__ = ["VectorLoopRunner", "aligned"]


def aligned(nbytes: int) -> np.ndarray:
    """A zeroed byte array of ``nbytes`` (at least 8) starting at a 64-byte boundary."""
    nbytes = max(nbytes, 8)
    raw = np.zeros(nbytes + 64, dtype=np.uint8)
    skip = -raw.ctypes.data % 64
    return raw[skip : skip + nbytes]


class VectorLoopRunner:
    """A vector program's loaded loops: ``run(*args)`` and ``packed(x, out=None)`` (see the module's description)."""

    def __init__(
        self,
        program: Program,
        run: Callable[..., int],
        packed: Callable[..., int] | None,
        work_bytes: int,
        constants: bytes,
        owner: Any,
    ) -> None:
        self.program = program
        #: what owns the machine code (the C library, the LLVM engine): kept alive with the runner
        self.owner = owner
        self._native_run = run
        self._native_packed = packed
        self._work_bytes = work_bytes
        self._constants = aligned(len(constants))
        self._constants[: len(constants)] = np.frombuffer(constants, dtype=np.uint8)
        self._local = threading.local()
        self._shapes = [tuple(int(d) for d in t.shape) for t in program.inputs]
        self._out_shapes = [tuple(int(d) for d in t.shape) for t in program.outputs]
        positions = {s: k for k, s in enumerate(program.inputs)}
        #: for each output, the positions of the inputs it reads (its batch axes are theirs only)
        self._deps = [[positions[s] for s in t.free_symbols] for t in program.outputs]
        self._width_in = sum(math.prod(s) for s in self._shapes)
        self._width_out = sum(math.prod(s) for s in self._out_shapes)

    def work(self) -> int:
        """The address of this thread's work area (each thread has its own)."""
        buf = getattr(self._local, "buf", None)
        if buf is None:
            buf = self._local.buf = aligned(self._work_bytes)
        return int(buf.ctypes.data)

    def run(self, *args: Any) -> tuple[Any, ...]:
        """The outputs for these inputs, each in its shape after the inputs' broadcast batch axes."""
        with np.errstate(all="ignore"):  # casts follow IEEE silently, as the scalar backends' calls do
            values = [np.asarray(v) for v in bind_inputs(self.program.inputs, args)]
        return self._call(values)

    def _call(self, values: list[np.ndarray]) -> tuple[Any, ...]:
        """The outputs for inputs of their dtypes (each with leading batch axes, broadcast like numpy)."""
        leads = [v.shape[: v.ndim - len(s)] for v, s in zip(values, self._shapes, strict=True)]
        batch = common_shape(leads)
        if batch is None:  # evaluate broadcasts each output's own inputs
            return tuple(evaluate(list(self.program.outputs), dict(zip(self.program.inputs, values, strict=True))))
        check_elements(batch, limit_in_force(), "the compiled function")
        keep, steps = [], []
        for v, lead, shape in zip(values, leads, self._shapes, strict=True):
            if math.prod(lead) == 1:
                a = np.ascontiguousarray(v.reshape(shape))
                steps.append(0)
            else:
                a = np.ascontiguousarray(np.broadcast_to(v, (*batch, *shape)))
                steps.append(a.itemsize * math.prod(shape))
            keep.append(a)
        results = [
            np.empty((*batch, *shape), dtype=NUMPY_DTYPES[t.dtype])
            for t, shape in zip(self.program.outputs, self._out_shapes, strict=True)
        ]
        ins = (ctypes.c_void_p * max(len(keep), 1))(*(a.ctypes.data for a in keep))
        outs = (ctypes.c_void_p * max(len(results), 1))(*(r.ctypes.data for r in results))
        istep = (ctypes.c_int64 * max(len(steps), 1))(*steps)
        sizes = [r.itemsize * math.prod(s) for r, s in zip(results, self._out_shapes, strict=True)]
        ostep = (ctypes.c_int64 * max(len(results), 1))(*sizes)
        points = math.prod(batch)
        if points and self._native_run(points, ins, istep, outs, ostep, self.work(), self._constants.ctypes.data):
            raise EvaluationError(NEGATIVE_POWER)
        out = []
        for r, deps, shape in zip(results, self._deps, self._out_shapes, strict=True):
            own = np.broadcast_shapes(*(leads[k] for k in deps))
            if own != batch:
                r = narrow(r, (*own, *shape))  # as numpy: an output gets the batch axes of its own inputs
            out.append(r[()] if not np.ndim(r) else r)
        return tuple(out)

    def packed(self, x: Any, out: np.ndarray | None = None) -> np.ndarray:
        """All outputs' entries as float64 rows for rows of all inputs' entries (``(n,)`` or ``(points, n)``)."""
        n_in, n_out = self._width_in, self._width_out
        x, out = packed_arrays(x, out, n_in, n_out, native=True)
        points = 1 if x.ndim == 1 else x.shape[0]
        if self._native_packed is not None:
            work, tables = self.work(), self._constants.ctypes.data
            if points and self._native_packed(points, x.ctypes.data, out.ctypes.data, work, tables):
                raise EvaluationError(NEGATIVE_POWER)
            return out
        # other dtypes: each input's columns cast to its dtype (a batch axis of points), the outputs widened
        rows = x.reshape(points, n_in)
        values, at = [], 0
        with np.errstate(invalid="ignore"):  # a nan cast to an int, as numpy casts it
            for t, shape in zip(self.program.inputs, self._shapes, strict=True):
                size = math.prod(shape)
                values.append(rows[:, at : at + size].reshape((points, *shape)).astype(NUMPY_DTYPES[t.dtype]))
                at += size
            flat = [
                np.broadcast_to(v, (points, *s)).astype(np.float64).reshape(points, -1)
                for v, s in zip(self._call(values), self._out_shapes, strict=True)
            ]
        out.reshape(points, n_out)[...] = np.concatenate(flat, axis=1) if flat else 0.0
        return out
