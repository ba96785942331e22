"""Vector programs for the scalar backends (C, LLVM) that their vector loops do not read: scalarised.

The C and LLVM backends build a vector program of constant shapes as loops over its vector nodes
(:mod:`.vloop`); what those loops do not read (an einsum of three operands, a contraction of
integers...) comes here. A program with vector or matrix terms of constant shape is read entry by entry
(:func:`exprgraph.core.scalarise.scalarise`): each vector input becomes one scalar input per entry
(C order) and each vector output one scalar output per entry. The scalar program goes through the
backend's usual path, so the loops over repeated structure (:mod:`.structure`) find the entries
that compute the same shape (``sin(x[i+1]*x[i])`` for every ``i``) and run them as one loop.

:class:`VectorCall` puts the shapes back: ``run(*args)`` takes each input in its own shape (with
leading batch axes, as :func:`exprgraph.evaluate` does) and gives each output in its own shape; the
packed call takes the flattened entries of every input in order (``x`` of shape ``(3,)`` then ``y``:
4 columns for ``[x, y]``) and gives the flattened entries of every output.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..core import Term
from ..core.dtypes import FLOAT64
from ..core.scalarise import entry_symbols, scalarise
from ..errors import ScalariseError
from ..eval import evaluate
from ..eval.bind import NUMPY_DTYPES
from .function import bind_inputs, common_shape
from .lower import Program, lower

__all__ = ["VectorCall", "scalar_program"]


@dataclass(frozen=True)
class VectorCall:
    """A vector program's scalar form, and the reshaping of values around its calls."""

    #: the program as compiled (its inputs and outputs in their own shapes)
    vector: Program
    #: the scalar program the backend builds
    scalar: Program

    def wrap(self, run: Callable[..., Any], packed: Callable[..., np.ndarray]) -> Callable[..., tuple[Any, ...]]:
        """The scalar program's calls as one function of the vector inputs giving the vector outputs.

        Float64 values of exactly the inputs' shapes go through ``packed`` (one native call, no
        Python work per entry); other values (int or bool dtypes, scalars broadcast over many
        points) through ``run``, one array per entry.
        """
        inputs, outputs = self.vector.inputs, self.vector.outputs
        floats = all(t.dtype == FLOAT64 for t in (*inputs, *outputs))

        def vector_run(*args: Any) -> tuple[Any, ...]:
            values = [np.asarray(v) for v in bind_inputs(inputs, args)]
            if floats and all(v.ndim == s.ndim for v, s in zip(values, inputs, strict=True)):
                row = np.concatenate([v.reshape(-1) for v in values]) if values else np.empty(0)
                return _split(outputs, packed(row))
            if common_shape(v.shape[: v.ndim - s.ndim] for v, s in zip(values, inputs, strict=True)) is None:
                return tuple(evaluate(list(outputs), dict(zip(inputs, values, strict=True))))  # output by output
            flat: list[Any] = []
            batch: tuple[int, ...] = ()
            for sym, value in zip(inputs, values, strict=True):
                lead = value.shape[: value.ndim - sym.ndim]
                batch = np.broadcast_shapes(batch, lead)
                if sym.ndim:
                    rows = value.reshape((*lead, -1))
                    flat.extend(rows[..., k] for k in range(rows.shape[-1]))
                else:
                    flat.append(value)
            return _reshaped(outputs, run(*flat), batch)

        return vector_run


def scalar_program(program: Program) -> VectorCall:
    """The scalar form of ``program`` (a :class:`ScalariseError`, a ``CompileError``, names an op it cannot read)."""
    taken = {s.name for t in program.outputs for s in t.free_symbols}
    symbols = entry_symbols(program.inputs, taken)
    known = {t: v for t, v in program.values.items() if t.shape}
    entries = scalarise(program.outputs, symbols, known)
    outputs = [e for arr in entries for e in arr.reshape(-1)]
    inputs = [e for s in program.inputs for e in symbols[s].reshape(-1)]
    if len(set(inputs)) != len(inputs):  # pragma: no cover - entry_symbols gives distinct names
        raise ScalariseError("two input entries have one name", op="symbol")
    return VectorCall(program, lower(outputs, inputs))


def _split(outputs: tuple[Term, ...], row: np.ndarray) -> tuple[Any, ...]:
    """The packed call's row of entries cut into the outputs, each in its own shape."""
    out: list[Any] = []
    pos = 0
    for t in outputs:
        size = math.prod(int(d) for d in t.shape)
        out.append(row[pos] if not t.shape else row[pos : pos + size].reshape(tuple(int(d) for d in t.shape)))
        pos += size
    return tuple(out)


def _reshaped(outputs: tuple[Term, ...], values: Any, batch: tuple[int, ...]) -> tuple[Any, ...]:
    """The scalar outputs' ``values`` gathered into the vector outputs' shapes (after ``batch`` axes)."""
    out: list[Any] = []
    pos = 0
    for t in outputs:
        if not t.shape:
            out.append(values[pos])
            pos += 1
            continue
        shape = tuple(int(d) for d in t.shape)
        size = math.prod(shape)
        parts = values[pos : pos + size]
        pos += size
        if not size:
            out.append(np.zeros((*batch, *shape), dtype=NUMPY_DTYPES.get(t.dtype, np.float64)))
            continue
        stacked = np.stack(np.broadcast_arrays(*(np.asarray(p) for p in parts)), axis=-1)
        out.append(stacked.reshape((*stacked.shape[:-1], *shape)))
    return tuple(out)
