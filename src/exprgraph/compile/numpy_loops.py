"""The numpy backend on a program with repeated structure: each class evaluated once, on gathered rows.

The float64 values that classes read or write live in the rows of one matrix ``V`` (a row per
value, a column per point). A class of ``K`` members gathers its slots as ``V[index[:, s]]``
(``K`` rows each), evaluates its body once on these ``(K, points)`` arrays and its constant
columns (the body compiled by the numpy backend, so every op means what it means there), and
scatters the result to ``V[out]``. The rest runs as straight-line numpy functions, one per rest
segment, whose inputs are the program's inputs and the roots computed before it (the segment's
terms with those roots replaced by symbols). Python's work per call grows with the number of
classes and segments, not of outputs.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..core import Symbol, Term, const, postorder, substitute
from ..core.dtypes import FLOAT64
from ..eval import evaluate
from ..eval.bind import NUMPY_DTYPES
from ..eval.limits import check_elements, limit_in_force
from .function import bind_inputs, common_shape, packed_arrays, packed_by_columns
from .lower import Program, lower
from .native import narrow
from .structure import LoopClass, Structure

__all__ = ["NumpyLoops"]


@dataclass
class _ClassStep:
    run: Callable[..., tuple]
    index: np.ndarray  # (K, S) rows of V
    consts: list[np.ndarray]  # per constant, a (K, 1) column
    out: np.ndarray  # (K,) rows of V


@dataclass
class _RestStep:
    run: Callable[..., tuple]
    reads: list[Term]  # the function's inputs: program inputs and roots computed before
    writes: list[Term]  # its outputs


class NumpyLoops:
    """``run(*args)``: the outputs of a grouped program, classes evaluated on gathered rows."""

    def __init__(self, structure: Structure, build: Callable[[Program], tuple[Any, str]]) -> None:
        program = self.program = structure.program
        self.row: dict[Term, int] = {}
        steps: list[_ClassStep | _RestStep] = []
        sources = []
        needed = self._needed(structure)
        for seg in structure.segments:
            if isinstance(seg, LoopClass):
                steps.append(self._class_step(seg, build))
                sources.append(f"# loop over {len(seg.members)} members: {seg.body}")
            else:
                step, text = self._rest_step(seg, needed, build)
                steps.append(step)
                sources.append(text)
        for t in program.inputs:
            if t.dtype == FLOAT64:
                self._take(t)
        self.steps = steps
        self.source = "\n\n".join(sources)
        self._plan_outputs()

    def _plan_outputs(self) -> None:
        """Where each output is read from, and the packed call's tables (or its slow path)."""
        program = self.program
        positions = {s: k for k, s in enumerate(program.inputs)}
        self._free = {t: [positions[s] for s in t.free_symbols] for t in program.outputs}
        self._in_rows = np.array([self.row.get(t, 0) for t in program.inputs], dtype=np.intp)
        cols, rows, other = [], [], []
        for j, t in enumerate(program.outputs):
            if t in self.row:
                cols.append(j)
                rows.append(self.row[t])
            elif t.free_symbols:
                other.append((j, t))
        self._out_cols = np.array(cols, dtype=np.intp)
        self._out_rows = np.array(rows, dtype=np.intp)
        self._out_other = other
        known = [(j, t) for j, t in enumerate(program.outputs) if not t.free_symbols]
        self._const_cols = np.array([j for j, _ in known], dtype=np.intp)
        self._const_values = np.array([float(program.values[t]) for _, t in known], dtype=np.float64)
        self._slow_packed: Callable[..., np.ndarray] | None = None
        if any(t.dtype != FLOAT64 for t in program.inputs):
            slow = packed_by_columns(self.run, len(program.inputs), len(program.outputs))
            self._slow_packed = lambda x, out: slow(x, out)

    def _take(self, t: Term) -> int:
        found = self.row.get(t)
        if found is None:
            found = self.row[t] = len(self.row)
        return found

    def _needed(self, structure: Structure) -> set[Term]:
        """Rest values read outside their own segment (by classes or later segments) or outputs."""
        program = structure.program
        needed = set(program.outputs)
        where: dict[Term, int] = {}
        for k, seg in enumerate(structure.segments):
            if isinstance(seg, LoopClass):
                needed.update(t for reads in seg.reads for t in reads)
                continue
            for node in seg:
                where[node] = k
            for node in seg:
                needed.update(a for a in program.args_of(node) if where.get(a, k) != k)
        return needed

    def _class_step(self, cls: LoopClass, build: Callable[[Program], tuple[Any, str]]) -> _ClassStep:
        # a power's exponent is the same for every member (part of the class's key): a literal in the body, as in
        # the straight-line code (numpy's power of an array of 2s is not always the rounded square that x**2 is)
        first = cls.constants[0] if cls.constants else ()
        exponents = {n.args[1] for n in postorder(cls.body) if n.op.name == "pow" and n.args[1] in cls.consts}
        literal = {c: const(first[j], c.dtype) for j, c in enumerate(cls.consts) if c in exponents}
        kept = [j for j, c in enumerate(cls.consts) if c not in literal]
        body = substitute(cls.body, literal) if literal else cls.body
        run, _ = build(lower([body], [*cls.slots, *(cls.consts[j] for j in kept)]))
        index = np.array([[self._take(t) for t in reads] for reads in cls.reads], dtype=np.intp)
        index = index.reshape(len(cls.members), len(cls.slots))
        consts = [
            np.array([values[j] for values in cls.constants], dtype=NUMPY_DTYPES[cls.consts[j].dtype]).reshape(-1, 1)
            for j in kept
        ]
        out = np.array([self._take(t) for t in cls.members], dtype=np.intp)
        return _ClassStep(run, index, consts, out)

    def _rest_step(
        self, seg: list[Term], needed: set[Term], build: Callable[[Program], tuple[Any, str]]
    ) -> tuple[_RestStep, str]:
        program = self.program
        mine = set(seg)
        new: dict[Term, Term] = {}
        stand: dict[Term, Term] = {}  # a root computed before, and the symbol standing for it
        used: dict[Term, None] = {}  # the program's inputs the segment reads (not all of them)
        for node in seg:
            args = []
            for a in program.args_of(node):
                if a in mine:
                    args.append(new[a])
                elif a in program.values:
                    args.append(a)
                elif a.op.name == "symbol":
                    used[a] = None
                    args.append(a)
                else:
                    args.append(stand.setdefault(a, Symbol(f"eg_root{len(stand)}", a.dtype)))
            new[node] = Term(node.op, tuple(args), node.attr)
        writes = [t for t in seg if t in needed]
        reads = [*used, *stand]
        run, source = build(lower([new[t] for t in writes], [*used, *stand.values()]))
        for t in writes:
            if t.dtype == FLOAT64:
                self._take(t)
        return _RestStep(run, reads, writes), source

    def run(self, *args: Any) -> tuple[Any, ...]:
        """The outputs' values for these input values (a tuple, in the program's output order)."""
        with np.errstate(all="ignore"):
            return self._call(args)

    def _call(self, args: tuple) -> tuple[Any, ...]:
        program = self.program
        values = bind_inputs(program.inputs, args)
        shape = common_shape(np.shape(values[i]) for i in program.used_inputs)
        if shape is None or not math.prod(shape):  # evaluate broadcasts each output's own inputs; no points
            return tuple(evaluate(list(program.outputs), dict(zip(program.inputs, values, strict=True))))
        check_elements(shape, limit_in_force(), "the compiled function")
        size = math.prod(shape)
        matrix = np.empty((len(self.row), size))
        known: dict[Term, Any] = dict(zip(program.inputs, values, strict=True))
        for t, v in known.items():
            r = self.row.get(t)
            if r is not None:
                matrix[r] = np.broadcast_to(v, shape).reshape(size)
        self._evaluate(matrix, known, shape)
        shapes = [np.shape(v) for v in values]
        return tuple(self._output(t, known, matrix, shape, shapes) for t in program.outputs)

    def _evaluate(self, matrix: np.ndarray, known: dict[Term, Any], shape: tuple) -> None:
        """Run the classes and rest segments in order, filling ``matrix`` rows and ``known``."""
        size = matrix.shape[1]
        for step in self.steps:
            if isinstance(step, _ClassStep):
                gathered = [matrix[step.index[:, s]] for s in range(step.index.shape[1])]
                matrix[step.out] = step.run(*gathered, *step.consts)[0]
                continue
            ins = [self._value(t, known, matrix, shape) for t in step.reads]
            for t, v in zip(step.writes, step.run(*ins), strict=True):
                known[t] = v
                r = self.row.get(t)
                if r is not None:
                    matrix[r] = np.broadcast_to(v, shape).reshape(size)

    def packed(self, x: Any, out: np.ndarray | None = None) -> np.ndarray:
        """All outputs as float64 for points packed in ``x`` (rows of inputs), gathered by rows."""
        program = self.program
        n_in, n_out = len(program.inputs), len(program.outputs)
        x, out = packed_arrays(x, out, n_in, n_out)
        if self._slow_packed is not None:
            return self._slow_packed(x, out)
        rows = x.reshape(-1, n_in)
        points = rows.shape[0]
        if not points:
            return out
        with np.errstate(all="ignore"):
            matrix = np.empty((len(self.row), points))
            matrix[self._in_rows] = rows.T
            known = {t: rows[:, k] for k, t in enumerate(program.inputs)}
            self._evaluate(matrix, known, (points,))
            flat = out.reshape(points, n_out)
            flat[:, self._out_cols] = matrix[self._out_rows].T
            flat[:, self._const_cols] = self._const_values
            for j, t in self._out_other:
                flat[:, j] = self._value(t, known, matrix, (points,))
        return out

    def _value(self, t: Term, known: dict[Term, Any], matrix: np.ndarray, shape: tuple) -> Any:
        if t in known:
            return known[t]
        return matrix[self.row[t]].reshape(shape)

    def _output(self, t: Term, known: dict[Term, Any], matrix: np.ndarray, shape: tuple, shapes: list) -> Any:
        """An output's value, in its own shape (the broadcast shape of the inputs it reads) and dtype."""
        if not t.free_symbols:
            return self.program.values[t]
        full = np.asarray(self._value(t, known, matrix, shape))
        full = np.broadcast_to(full, shape).astype(NUMPY_DTYPES[t.dtype], copy=True)
        own = np.broadcast_shapes(*(shapes[k] for k in self._free[t]))
        return narrow(full, own)
