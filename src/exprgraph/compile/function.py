"""The compiled callable every backend returns, and the binding of its positional inputs."""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..core import Term, TermPack, postorder
from ..errors import CompileError, EvaluationError
from ..eval import evaluate
from ..eval.bind import bind_symbols

__all__ = [
    "CompiledFunction",
    "Built",
    "check_signature",
    "check_symbols",
    "bind_inputs",
    "broadcast_shape",
    "common_shape",
    "packed_rows",
]


def check_signature(outputs: Any, inputs: Any, *, walk: bool = True) -> tuple[tuple[Term, ...], bool, tuple[Term, ...]]:
    """Validate ``outputs`` and ``inputs``: ``(outputs, single output?, inputs)``.

    ``outputs`` is a term, a list of terms, or a sparse matrix of terms (anything with ``rows``,
    ``cols`` and a list of ``values``, such as :class:`exprgraph.diff.SparseMatrix`), whose
    values are then the outputs, in its coordinate order. ``walk=False`` leaves out the check that
    the outputs read no other symbol (a walk of the whole DAG): the caller then makes it with
    :func:`check_symbols` on the symbols its own walk found (``compile`` takes the lowering's).
    """
    if hasattr(outputs, "rows") and hasattr(outputs, "cols") and isinstance(getattr(outputs, "values", None), list):
        outputs = list(outputs.values)
    single = outputs.__class__ is Term
    outs = (outputs,) if single else tuple(outputs)
    if set(map(type, outs)) - {Term}:  # the classes in one pass at C speed; then name the first stranger
        bad = next(t for t in outs if t.__class__ is not Term)
        raise TypeError(f"compile() takes terms as outputs, got a {type(bad).__name__}")
    if inputs.__class__ is Term:
        inputs = (inputs,)
    ins = tuple(inputs)
    last = _LAST_INPUTS[0] if _LAST_INPUTS else ()
    if len(last) != len(ins) or not all(map(operator.is_, last, ins)):  # a solver's callbacks share inputs
        _check_inputs(ins)
        _LAST_INPUTS[:] = [ins]
    if walk:  # one walk over the DAG (the free-symbol sets of every node would cost 4x as much at 10^5 outputs)
        check_symbols({t for t in postorder(outs) if t.is_symbol}, ins)
    return outs, single, ins


#: the last inputs that passed :func:`_check_inputs` (compared by identity, element by element)
_LAST_INPUTS: list[tuple[Term, ...]] = []


def _check_inputs(ins: tuple[Term, ...]) -> None:
    """A TypeError or CompileError unless ``ins`` are distinct symbols of distinct names."""
    for s in ins:
        if s.__class__ is not Term or s.op.name != "symbol":
            raise TypeError(f"the inputs of compile() must be symbols, got {s!r}")
    if len(set(ins)) != len(ins):
        raise CompileError("an input symbol is listed twice")
    names = [s.attr[0] for s in ins]  # a symbol's attr is (name, ...): checked symbols above
    if len(set(names)) != len(names):
        raise CompileError("two inputs have the same name; inputs are bound by position and must be distinct")


def check_symbols(needed: Iterable[Term], inputs: tuple[Term, ...]) -> None:
    """A CompileError unless every symbol in ``needed`` (those the outputs read) is among ``inputs``."""
    missing = sorted(s.name for s in set(needed) - set(inputs))
    if missing:
        raise CompileError(f"the outputs depend on {', '.join(missing)}, which are not among the inputs")


def bind_inputs(inputs: tuple[Term, ...], args: Sequence[Any]) -> list[Any]:
    """The numpy values of positional ``args`` for ``inputs``, cast and shape-checked like ``evaluate``."""
    if len(args) != len(inputs):
        raise TypeError(f"the compiled function takes {len(inputs)} inputs, got {len(args)}")
    values, _ = bind_symbols(inputs, dict(zip(inputs, args, strict=True)), evaluate)
    return [values[s] for s in inputs]


def broadcast_shape(shapes: Iterable[tuple[int, ...]]) -> tuple[int, ...]:
    """The shape input values of these shapes broadcast to, or an EvaluationError naming the mismatch."""
    try:
        return np.broadcast_shapes(*shapes)
    except ValueError as exc:
        raise EvaluationError(f"the input values do not broadcast together: {exc}") from None


def common_shape(shapes: Iterable[tuple[int, ...]]) -> tuple[int, ...] | None:
    """The shape input values of these shapes broadcast to, or None where they do not all broadcast together
    (each output's own inputs still may: a compiled call then evaluates output by output, as ``evaluate`` does)."""
    try:
        return np.broadcast_shapes(*shapes)
    except ValueError:
        return None


def packed_rows(x: Any) -> np.ndarray:
    """``x`` as a C-contiguous float64 array (a packed call's rows), or an EvaluationError saying what it is."""
    if x.__class__ is np.ndarray and x.dtype == np.float64 and x.flags.c_contiguous:
        return x
    try:
        return np.ascontiguousarray(x, dtype=np.float64)
    except (TypeError, ValueError) as exc:  # a string, an object, a ragged list: not rows of numbers
        raise EvaluationError(f"packed input must be rows of numbers, got a {type(x).__name__}: {exc}") from None


def packed_arrays(x: Any, out: Any, n_in: int, n_out: int, *, native: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """A packed call's input as float64 rows of ``n_in`` values, and its output array (checked, or made).

    ``native``: compiled code writes ``out`` through its address, so it must also be C-contiguous.
    """
    x = packed_rows(x)
    if x.shape[-1:] != (n_in,) or x.ndim > 2:
        raise EvaluationError(f"packed input must have shape ({n_in},) or (points, {n_in}), got {x.shape}")
    want = (*x.shape[:-1], n_out)
    if out is None:
        return x, np.empty(want)
    if not isinstance(out, np.ndarray) or out.shape != want or out.dtype != np.float64:
        raise EvaluationError(f"out must be a float64 array of shape {want}, got {_described(out)}")
    if not out.flags.writeable or (native and not out.flags.c_contiguous):
        kind = "writeable C-contiguous" if native else "writeable"
        raise EvaluationError(f"out must be a {kind} float64 array of shape {want}")
    return x, out


def _described(value: Any) -> str:
    """``value`` named for a message: an array by its dtype and shape, anything else by its type."""
    if isinstance(value, np.ndarray):
        return f"a {value.dtype} array of shape {value.shape}"
    return f"a {type(value).__name__}"


def packed_by_columns(run: Callable[..., Any], n_in: int, n_out: int) -> Callable[..., np.ndarray]:
    """A packed call (rows of inputs in, rows of outputs out) over a call taking one array per input."""

    def packed(x: Any, out: np.ndarray | None = None) -> np.ndarray:
        x, out = packed_arrays(x, out, n_in, n_out)
        for j, value in enumerate(run(*(x[..., k] for k in range(n_in)))):
            out[..., j] = value
        return out

    return packed


@dataclass(frozen=True)
class Built:
    """What a backend made of a program: the function of the inputs, its source, its packed form, its library."""

    run: Callable[..., Any]
    source: str
    #: ``packed(x, out)`` on rows of inputs
    packed: Callable[..., np.ndarray]
    #: what owns the native code (the C library, the LLVM engine); None for numpy
    library: Any = None
    #: what the build found (the classes of repeated structure), or None
    info: dict[str, Any] | None = None


class CompiledFunction:
    """A callable computing the outputs: ``f(*inputs)``, or ``f(x, out=None)`` when packed.

    ``.source`` holds the generated code. A compiled function pickles as its terms and options;
    unpickling compiles again with :func:`exprgraph.compile.compile` (the C backend then finds its
    library in the build cache). Nothing callable and no path is taken from the pickle: the
    rebuild accepts terms, a backend name and the options ``packed`` and ``build_timeout`` only.
    Unpickling still runs whatever the pickle names, as any pickle does: load only pickles you
    trust (see SECURITY.md).
    """

    def __init__(
        self,
        built: Built,
        signature: tuple[tuple[Term, ...], bool, tuple[Term, ...]],
        backend: str,
        *,
        packed: bool = False,
        options: dict[str, Any] | None = None,
        rebuild: Callable[[Any, list[Term], str, dict[str, Any]], CompiledFunction] | None = None,
    ) -> None:
        #: the terms computed, in order; whether one term (not a list) was compiled; the input
        #: symbols, in the order of the positional arguments (or of the packed columns)
        self.outputs, self._single, self.inputs = signature
        #: "numpy", "c" or "llvm", and the generated Python source, C source or LLVM IR
        self.backend, self.source = backend, built.source
        #: whether the function takes packed rows (see :func:`exprgraph.compile.compile`)
        self.packed = bool(packed)
        self._run = built.run
        self._packed = built.packed if packed else None
        self._options = dict(options or {})
        #: what unpickling calls with (outputs, inputs, backend, options): a fixed function of the
        #: package that made this one, pickled by name; it is never data read from the pickle
        self._rebuild = rebuild
        #: what owns the native code (the C library, the LLVM engine), kept alive with the function
        self.library = built.library
        #: what the build found: ``info["classes"]`` lists the loops over repeated structure (members,
        #: statements, slots, constants per class; see :mod:`exprgraph.compile.structure`)
        self.info: dict[str, Any] = dict(built.info or {"grouped": False, "classes": []})

    def __call__(self, *args: Any, out: np.ndarray | None = None) -> Any:
        """The outputs' values: one value, or a list for a list of outputs; packed: one float64 array."""
        if self._packed is not None:
            if len(args) != 1:
                raise TypeError(
                    f"a packed function takes one array of shape ({len(self.inputs)},) or (points, {len(self.inputs)})"
                )
            return self._packed(args[0], out)
        if out is not None:
            raise TypeError("out= is for packed functions (compile(..., packed=True))")
        values = self._run(*args)
        return values[0] if self._single else list(values)

    def __reduce__(self) -> tuple:
        if self._rebuild is None:
            raise TypeError("this compiled function was not made by exprgraph.compile.compile and cannot be pickled")
        options = {"packed": self.packed, **self._options}
        # outputs and inputs in one flat node list: shared subterms once (a gradient's outputs share most)
        terms = TermPack((*self.outputs, *self.inputs))
        return (self._rebuild, (terms, (len(self.inputs), self._single), self.backend, options))

    def __repr__(self) -> str:
        names = ", ".join(s.name for s in self.inputs)
        kind = " packed" if self.packed else ""
        return f"<CompiledFunction {self.backend}{kind} ({names}) -> {len(self.outputs)} output(s)>"
