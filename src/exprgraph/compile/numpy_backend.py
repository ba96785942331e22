"""The numpy backend: a term DAG as the source of one Python function of numpy calls.

Each distinct node becomes one line (``v3 = np.multiply(v1, a0)``), so common subexpressions are
computed once; an intermediate is deleted after its last use. Subterms without symbols are
folded to constants at compile time. Semantics are those of :func:`exprgraph.evaluate` (the
same ufuncs, bool casts and checks).

For elementwise terms (every node a scalar-shaped term, the "many points" case) a second
version of the function writes results into dead intermediates (``out=``) instead of
allocating: a ufunc may overwrite an operand we computed when no one reads it later and it has
the result's dtype. That version runs when every input the outputs use is an array of one and
the same shape (of at least one dimension): then every intermediate that depends on an input
is a fresh array of exactly that shape. Large arrays are then evaluated in blocks of
:data:`CHUNK` elements, so the intermediates stay in the CPU cache.

Only our generated text is ever compiled: names are generated (``a0`` inputs, ``c0`` constants,
``v0`` intermediates); constants and functions are passed in the namespace, never as text.
"""

from __future__ import annotations

import builtins
import itertools
from collections import Counter
from typing import Any

import numpy as np

from ..core import Symbol, Term
from ..core.dtypes import BOOL, DTYPES, INT64, is_float
from ..core.stdops import bool_casts
from ..errors import CompileError, EvaluationError
from ..eval.bind import NUMPY_DTYPES
from .backends import Backend, register_backend
from .function import Built, bind_inputs, broadcast_shape, packed_by_columns
from .lower import Program
from .numpy_loops import NumpyLoops
from .structure import find_structure

__all__ = ["build_numpy"]

_counter = itertools.count()
#: a scalar symbol of each dtype, to ask an op's dtype rule about one step of a fold
_SCALAR = {d: Symbol("s", d) for d in DTYPES}
#: ops whose bool operands are cast before numpy sees them (see :func:`~exprgraph.core.stdops.bool_casts`)


def _finish(value: Any, dtype: np.dtype) -> Any:
    """A numpy scalar or array of ``dtype`` (0-d arrays become scalars), as evaluate returns."""
    if not isinstance(value, (np.ndarray, np.generic)):
        value = np.asarray(value, dtype=dtype)
    elif value.dtype != dtype:
        value = value.astype(dtype)
    if value.__class__ is np.ndarray and not value.ndim:
        value = value[()]
    return value


def _check_int_pow(exponent: Any) -> None:
    if np.any(np.asarray(exponent) < 0):
        raise EvaluationError(
            "integer ** negative integer is undefined in int64: make the base or the exponent a float (e.g. x**-1.0)"
        )


def _elementwise(op: Any, n: int) -> bool:
    """Whether ``op`` with ``n`` operands is one ufunc call (or a fold of a binary ufunc)."""
    u = op.ufunc
    if u.__class__ is not np.ufunc or u.nout != 1 or u.signature is not None:
        return False
    return u.nin == n or (u.nin == 2 and n > 2)


class _Writer:
    """Generates the body of one version of the function (with or without in-place writes)."""

    def __init__(self, gen: _Gen, inplace: bool) -> None:
        self.gen = gen
        self.inplace = inplace
        self.lines: list[str] = []
        self.owned: set[Term] = set()  # nodes whose value is a buffer we made and may overwrite
        self.reads = dict(gen.reads)

    def name(self, t: Term) -> str:
        return self.gen.names[t]

    def operand(self, t: Term, node: Term, position: int) -> str:
        """The text of operand ``t`` (at ``position``) of ``node``, cast the way evaluate casts bools."""
        text = self.name(t)
        if t.dtype == BOOL and (node.op.counts_bools or node.op.float_result):
            cast = bool_casts(node)[position]
            if cast is not None:
                return f"{text}.astype(np.{cast})"
        return text

    def can_overwrite(self, a: Term, dtype: str, slots: int) -> bool:
        """Whether a result of ``dtype`` may go into ``a``'s buffer.

        ``a`` must be a buffer we made (so it has the common shape of the inputs), of that dtype,
        and read by nobody else (``slots`` counts this node's own reads of it).
        """
        return self.inplace and a in self.owned and a.dtype == dtype and self.reads[a] == slots

    def emit(self, node: Term) -> None:
        gen = self.gen
        args = node.args
        op = node.op
        target = self.name(node)
        if op.name == "pow" and gen.power_needs_impl(node):
            # numpy's power is C's pow for an array of exponents; the op table's impl is exact
            fn = gen.bind(op.impl, op.name)
            dtype = gen.constant(NUMPY_DTYPES[node.dtype])
            self.lines.append(
                f"{target} = _finish({fn}({self.operand(args[0], node, 0)}, {self.operand(args[1], node, 1)}), {dtype})"
            )
        elif _elementwise(op, len(args)) and not (op.name == "pow" and gen.int_pow_needs_check(node)):
            self.elementwise(node, target)
        elif op.name == "pow":
            base, exponent = args
            self.lines.append(f"_check_int_pow({self.name(exponent)})")
            self.lines.append(f"{target} = np.power({self.operand(base, node, 0)}, {self.operand(exponent, node, 1)})")
        else:
            fn = gen.bind(op.impl if op.impl is not None else op.ufunc, op.name)
            if fn is None:
                raise CompileError(f"op {op.name!r} has no numpy implementation (neither impl nor ufunc)")
            operands = ", ".join(self.operand(a, node, k) for k, a in enumerate(args))
            if op.attr_name is not None:
                operands += f", attr={gen.constant(node.attr)}"
            dtype = gen.constant(NUMPY_DTYPES[node.dtype])
            self.lines.append(f"{target} = _finish({fn}({operands}), {dtype})")
        self.release(node)

    def elementwise(self, node: Term, target: str) -> None:
        gen = self.gen
        op, args = node.op, node.args
        fn = gen.ufunc_name(op)
        if op.name == "pow" and gen.is_square(node):
            fn, args = "np.square", args[:1]
        n = len(args)
        counts = Counter(args)
        if n <= 2:
            out = next((a for a in args if self.can_overwrite(a, node.dtype, counts[a])), None)
            text = ", ".join(self.operand(a, node, k) for k, a in enumerate(args))
            if out is not None:
                text += f", out={self.name(out)}"
            self.lines.append(f"{target} = {fn}({text})")
            if self.inplace and node.free_symbols:
                self.owned.add(node)
            return
        # a fold of a binary ufunc over three or more operands, left to right; the dtype of each
        # partial result comes from the dtype rule on the partial so far and the next operand
        first = args[:2]
        step_dtype = op.infer(first, node.attr)[0]
        partial_free = bool(first[0].free_symbols or first[1].free_symbols)
        later = counts.copy()
        later.subtract(first)
        out = next((a for a in first if not later[a] and self.can_overwrite(a, step_dtype, counts[a])), None)
        text = f"{self.operand(first[0], node, 0)}, {self.operand(first[1], node, 1)}"
        if out is not None:
            text += f", out={self.name(out)}"
        self.lines.append(f"{target} = {fn}({text})")
        for k in range(2, n):
            a = args[k]
            new_dtype = op.infer((_SCALAR[step_dtype], _SCALAR[a.dtype]), node.attr)[0]
            new_free = partial_free or bool(a.free_symbols)
            if self.inplace and new_dtype == step_dtype and partial_free:
                self.lines.append(f"{target} = {fn}({target}, {self.operand(a, node, k)}, out={target})")
            else:
                self.lines.append(f"{target} = {fn}({target}, {self.operand(a, node, k)})")
            step_dtype, partial_free = new_dtype, new_free
        if self.inplace and node.free_symbols:
            self.owned.add(node)

    def release(self, node: Term) -> None:
        """Count the reads of ``node``'s operands; delete intermediates nobody reads any more."""
        dead = []
        for a, k in Counter(node.args).items():
            self.reads[a] -= k
            if not self.reads[a] and a in self.gen.computed:
                dead.append(self.name(a))
                self.owned.discard(a)
        if dead:
            self.lines.append(f"del {', '.join(dead)}")


class _Gen:
    """Shared state of one compilation: names, the namespace, folded constants."""

    def __init__(self, program: Program) -> None:
        self.outputs = program.outputs
        self.inputs = program.inputs
        self.reads = program.reads
        self.namespace: dict[str, Any] = {
            "np": np,
            "_finish": _finish,
            "_check_int_pow": _check_int_pow,
        }
        self._bound: dict[int, str] = {}
        self.names: dict[Term, str] = {s: f"a{i}" for i, s in enumerate(program.inputs)}
        self._consts = itertools.count()
        for node, value in program.values.items():
            if node not in self.names:
                self.names[node] = self.constant(value)
        self.order: list[Term] = []
        self.computed: set[Term] = set()
        for n, node in enumerate(program.steps):
            self.names[node] = f"v{n}"
            self.order.append(node)
            self.computed.add(node)
        # every node is scalar-shaped: results broadcast like the inputs they depend on
        self.pointwise = program.pointwise
        self.used_inputs = program.used_inputs

    def constant(self, value: Any) -> str:
        name = f"c{next(self._consts)}"
        self.namespace[name] = value
        return name

    def bind(self, fn: Any, label: str) -> str | None:
        if fn is None:
            return None
        key = id(fn)
        if key not in self._bound:
            name = f"f{len(self._bound)}"
            self.namespace[name] = fn
            self._bound[key] = name
        return self._bound[key]

    def ufunc_name(self, op: Any) -> str:
        u = op.ufunc
        label = u.__name__
        if getattr(np, label, None) is u:
            return f"np.{label}"
        name = self.bind(u, op.name)
        assert name is not None  # (bind gives None for None only)
        return name

    def is_square(self, node: Term) -> bool:
        base, exponent = node.args
        return (
            exponent.op.name == "const"
            and exponent.attr.__class__ in (int, float, np.float32)
            and exponent.attr == 2
            and base.dtype == node.dtype
        )

    def power_needs_impl(self, node: Term) -> bool:
        """Whether a float power must go through the op table's impl rather than ``np.power``.

        ``np.power`` agrees with it for a scalar exponent known now, unless that exponent is an
        integer beyond 2**53 (an odd one keeps the base's sign only in the impl).
        """
        exponent = node.args[1]
        if not is_float(node.dtype) or node.op.impl is None:
            return False
        if exponent in self.computed or exponent.op.name == "symbol":
            return True
        value = np.asarray(self.namespace[self.names[exponent]])
        return bool(value.ndim or (value.dtype.kind in "iu" and abs(int(value)) > 2**53))

    def int_pow_needs_check(self, node: Term) -> bool:
        base, exponent = node.args
        if is_float(base.dtype) or is_float(exponent.dtype):
            return False
        if exponent not in self.computed and exponent.op.name != "symbol":
            # known at compile time: only a negative exponent fails (at run time, where it belongs)
            return bool(np.any(np.asarray(self.namespace[self.names[exponent]]) < 0))
        return exponent.dtype in (INT64, BOOL)

    def function(self, inplace: bool) -> str:
        w = _Writer(self, inplace)
        for node in self.order:
            w.emit(node)
        body = w.lines or ["pass"]
        results = ", ".join(self.names[t] for t in self.outputs)
        params = ", ".join(f"a{i}" for i in range(len(self.inputs)))
        kind = "inplace" if inplace else "generic"
        head = f"def {kind}({params}):"
        results += "," if len(self.outputs) == 1 else ""
        return "\n".join([head, *("    " + line for line in body), f"    return ({results})", ""])


def build_numpy(program: Program) -> tuple[Any, str]:
    """``(run, source)``: ``run(*args)`` returns the tuple of output values."""
    inputs = program.inputs
    gen = _Gen(program)
    source = gen.function(inplace=False)
    if gen.pointwise:
        source += "\n\n" + gen.function(inplace=True)
    namespace = gen.namespace
    code = builtins.compile(source, f"<exprgraph-numpy-{next(_counter)}>", "exec")
    exec(code, namespace)  # our generated source only: generated names, values in the namespace
    generic = namespace["generic"]
    inplace = namespace.get("inplace")
    used = gen.used_inputs
    ndarray = np.ndarray
    errstate = np.errstate

    def run(*args: Any) -> Any:
        with errstate(all="ignore"):  # IEEE results (inf, nan) without warnings, as evaluate gives
            values = bind_inputs(inputs, args)
            if inplace is not None and used:
                first = values[used[0]]
                if first.__class__ is ndarray and first.ndim:
                    shape = first.shape
                    if all(values[i].__class__ is ndarray and values[i].shape == shape for i in used):
                        if first.size >= 2 * CHUNK:
                            return _chunked(inplace, values, used, shape)
                        return inplace(*values)
            try:
                return generic(*values)
            except ValueError:
                broadcast_shape(np.shape(values[i]) for i in used)  # inputs of shapes that do not broadcast: named
                raise

    return run, source


#: elements per block of the blocked evaluation: 64 KiB per float64 array, so the few arrays alive
#: at a time stay in the CPU cache (and below malloc's mmap threshold, so blocks are recycled)
CHUNK = 8192


def _chunked(fn: Any, values: list, used: tuple[int, ...], shape: tuple) -> tuple:
    """``fn`` over blocks of the (same-shaped) used inputs, assembled into full-size outputs.

    An elementwise computation of arrays of one shape is the same computation on each block of
    their flattened elements; running it block by block keeps the intermediates in cache.
    """
    flat = list(values)
    for i in used:
        flat[i] = values[i].reshape(-1)
    n = flat[used[0]].size
    results: list[Any] = []
    for start in range(0, n, CHUNK):
        stop = min(start + CHUNK, n)
        args = list(flat)
        for i in used:
            args[i] = flat[i][start:stop]
        part = fn(*args)
        if not results:
            # constants (no input in them) come back as scalars: kept as they are
            results = [np.empty(n, dtype=r.dtype) if np.ndim(r) else r for r in part]
        for k, r in enumerate(part):
            if np.ndim(r):
                results[k][start:stop] = r
    return tuple(r.reshape(shape) if np.ndim(r) else r for r in results)


def _build(program: Program, build_timeout: float | None, loops: int = 0) -> Built:
    """The numpy backend's function: Python source of numpy calls (``build_timeout`` has nothing to bound).

    ``loops``: the fewest outputs of one shape evaluated together on gathered rows (0: never; see
    :mod:`.numpy_loops`).
    """
    if loops and program.pointwise:
        structure = find_structure(program, loops)
        if structure.classes:
            grouped = NumpyLoops(structure, build_numpy)
            return Built(grouped.run, grouped.source, grouped.packed, None, structure.report())
    run, source = build_numpy(program)
    return Built(run, source, packed_by_columns(run, len(program.inputs), len(program.outputs)))


register_backend(Backend("numpy", _build, loops=True))
