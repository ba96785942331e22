"""The compiled callable both backends return, and the binding of its positional inputs."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..core import Term
from ..errors import CompileError
from ..eval import evaluate
from ..eval.bind import bind_symbols

__all__ = ["CompiledFunction", "check_signature", "bind_inputs"]


def check_signature(outputs: Any, inputs: Any) -> tuple[tuple[Term, ...], bool, tuple[Term, ...]]:
    """Validate ``outputs`` and ``inputs``: ``(outputs, single output?, inputs)``."""
    single = outputs.__class__ is Term
    outs = (outputs,) if single else tuple(outputs)
    for t in outs:
        if t.__class__ is not Term:
            raise TypeError(f"compile() takes terms as outputs, got a {type(t).__name__}")
    if inputs.__class__ is Term:
        inputs = (inputs,)
    ins = tuple(inputs)
    for s in ins:
        if s.__class__ is not Term or s.op.name != "symbol":
            raise TypeError(f"the inputs of compile() must be symbols, got {s!r}")
    if len(set(ins)) != len(ins):
        raise CompileError("an input symbol is listed twice")
    names = [s.name for s in ins]
    if len(set(names)) != len(names):
        raise CompileError("two inputs have the same name; inputs are bound by position and must be distinct")
    needed: set[Term] = set()
    for t in outs:
        needed |= t.free_symbols
    missing = sorted(s.name for s in needed - set(ins))
    if missing:
        raise CompileError(f"the outputs depend on {', '.join(missing)}, which are not among the inputs")
    return outs, single, ins


def bind_inputs(inputs: tuple[Term, ...], args: Sequence[Any]) -> list[Any]:
    """The numpy values of positional ``args`` for ``inputs``, cast and shape-checked like ``evaluate``."""
    if len(args) != len(inputs):
        raise TypeError(f"the compiled function takes {len(inputs)} inputs, got {len(args)}")
    values, _ = bind_symbols(inputs, dict(zip(inputs, args, strict=True)), evaluate)
    return [values[s] for s in inputs]


class CompiledFunction:
    """A callable ``f(*inputs)`` computing the outputs; ``.source`` holds the generated code."""

    def __init__(
        self,
        run: Callable[..., Any],
        *,
        outputs: tuple[Term, ...],
        inputs: tuple[Term, ...],
        single: bool,
        source: str,
        backend: str,
    ) -> None:
        self._run = run
        #: the terms computed, in order
        self.outputs = outputs
        #: the input symbols, in the order of the positional arguments
        self.inputs = inputs
        #: the generated Python or C source
        self.source = source
        #: "numpy" or "c"
        self.backend = backend
        self._single = single

    def __call__(self, *args: Any) -> Any:
        """The outputs' values for these input values (one value, or a list for a list of outputs)."""
        values = self._run(*args)
        return values[0] if self._single else list(values)

    def __repr__(self) -> str:
        names = ", ".join(s.name for s in self.inputs)
        return f"<CompiledFunction {self.backend} ({names}) -> {len(self.outputs)} output(s)>"
