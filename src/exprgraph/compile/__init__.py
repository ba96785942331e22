"""exprgraph.compile: terms compiled to fast callables, as numpy source or as C.

``compile(outputs, inputs, backend="numpy")`` returns a :class:`CompiledFunction` taking the
values of ``inputs`` positionally (note the order: outputs first, unlike
``pytensor.function(inputs, outputs)`` and ``sympy.lambdify(args, expr)``; both may be given by
keyword). Every backend consumes one lowering (:func:`lower`: schedule, folded constants, read
counts, buffer plan): the ``"numpy"`` backend writes Python source of numpy calls; the ``"c"``
backend writes C in bounded-size parts over blocks of points (:mod:`.c_emit`, rendered by the one
C renderer :mod:`.crender`), builds it with the system C compiler into a shared library kept in
the build cache (:mod:`.cache`) and loads it with ctypes; the ``"llvm"`` backend writes LLVM IR
from the op table's ``llvm`` templates and compiles it in process with llvmlite, in milliseconds.
``packed=True`` returns a function of one float64 array of shape ``(n_inputs,)`` or
``(points, n_inputs)`` giving ``(n_outputs,)`` or ``(points, n_outputs)``, with no per-argument
Python work. Every backend agrees with
:func:`exprgraph.evaluate`; the generated code is in ``.source``.

Layer 9 of docs/architecture.md: imports eval, core, console, progress and errors; nothing above
it.
"""

from __future__ import annotations

from typing import Any

from ..core import Term
from ..errors import CompileError, CompilerNotFoundError
from . import settings
from .function import Built, CompiledFunction, check_signature, packed_by_columns
from .lower import Program, lower
from .numpy_backend import build_numpy

__all__ = ["compile", "CompiledFunction", "CompileError", "CompilerNotFoundError", "BACKENDS", "lower", "Program"]

#: the backends ``compile`` knows
BACKENDS = ("numpy", "c", "llvm")


def compile(  # noqa: A001
    outputs: Term | list[Term] | tuple[Term, ...],
    inputs: Any,
    backend: str = "numpy",
    *,
    packed: bool = False,
    build_timeout: float | None = None,
) -> CompiledFunction:
    """A callable computing ``outputs`` (a term, or a list of terms) from the values of ``inputs`` (symbols).

    ``packed=True``: the function takes one float64 array holding a row of input values (or a
    matrix of rows) and returns the outputs' values as one float64 array, optionally into
    ``out=``. ``build_timeout`` bounds the C compiler's time (seconds, a finite positive number;
    default 600, or ``$EXPRGRAPH_BUILD_TIMEOUT``); anything else raises
    :class:`~exprgraph.errors.SettingError`, whatever the backend.

    >>> from exprgraph import symbols, sin
    >>> x, y = symbols("x y")
    >>> f = compile([x * y + sin(x * y), x - y], [x, y])
    >>> [float(v) for v in f(2.0, 3.0)]
    [5.720584501801074, -1.0]
    >>> g = compile([x * y, x - y], [x, y], packed=True)
    >>> g([[2.0, 3.0], [1.0, 1.0]]).tolist()
    [[6.0, -1.0], [1.0, 0.0]]
    """
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}, not {backend!r}")
    if build_timeout is not None:
        build_timeout = settings.build_timeout(build_timeout)  # a SettingError unless finite and positive
    signature = check_signature(outputs, inputs)
    outs, _, ins = signature
    program = lower(outs, ins)
    options: dict[str, Any] = {}
    if backend == "numpy":
        run, source = build_numpy(program)
        built = Built(run, source, packed_by_columns(run, len(ins), len(outs)))
    elif backend == "c":
        from .c_backend import build_c

        runner = build_c(program, timeout=build_timeout)
        built = Built(runner.run, runner.source.text, runner.packed, runner.library)
        if build_timeout is not None:
            options["build_timeout"] = build_timeout
    elif backend == "llvm":
        from .llvm_backend import build_llvm

        llvm_runner = build_llvm(program)
        built = Built(llvm_runner.run, llvm_runner.ir, llvm_runner.packed, llvm_runner)
    else:  # pragma: no cover - checked above
        raise ValueError(f"backend must be one of {BACKENDS}, not {backend!r}")
    return CompiledFunction(built, signature, backend, packed=packed, options=options, rebuild=_rebuild)


#: the options a pickled compiled function may carry, and the types each may have
_REBUILD_OPTIONS: dict[str, tuple[type, ...]] = {"packed": (bool,), "build_timeout": (int, float)}


def _rebuild(outputs: Any, inputs: Any, backend: Any, options: Any) -> CompiledFunction:
    """A compiled function unpickled: :func:`compile` of its terms, with nothing but checked options.

    The pickle provides data only (terms, a backend name, ``packed`` and ``build_timeout``): no
    callable, path or command of it reaches the compiler.
    """
    if not isinstance(options, dict):
        raise TypeError(f"a pickled compiled function's options must be a dict, not {type(options).__name__}")
    for key, value in options.items():
        allowed = _REBUILD_OPTIONS.get(key) if isinstance(key, str) else None
        if allowed is None or not isinstance(value, allowed):
            raise TypeError(f"a pickled compiled function cannot carry the option {key!r}={value!r}")
    if not isinstance(backend, str):
        raise TypeError(f"a pickled compiled function names the backend {backend!r}, not one of {BACKENDS}")
    return compile(outputs, inputs, backend, **options)
