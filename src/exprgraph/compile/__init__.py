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

Each backend registers itself (:mod:`.backends`): a new one is one module, imported below. In the
numerics stack of docs/architecture.md: imports eval, core, console, progress and errors only.
"""

from __future__ import annotations

from typing import Any

from ..core import Term, TermPack
from ..errors import CompileError, CompilerNotFoundError
from . import c_backend as _c_backend  # noqa: F401 - registers the backend "c"
from . import llvm_backend as _llvm_backend  # noqa: F401 - registers the backend "llvm"
from . import numpy_backend as _numpy_backend  # noqa: F401 - registers the backend "numpy"
from . import settings
from .backends import backend_names, get_backend, register_backend
from .function import CompiledFunction, check_signature, check_symbols
from .lower import Program, lower, unfoldable
from .structure import THRESHOLD

__all__ = [
    "compile",
    "CompiledFunction",
    "CompileError",
    "CompilerNotFoundError",
    "BACKENDS",
    "lower",
    "Program",
    "register_backend",
    "backend_names",
]

#: the backends ``compile`` knows when the package is imported (:func:`backend_names` for the current list)
BACKENDS = backend_names()


def compile(  # noqa: A001
    outputs: Term | list[Term] | tuple[Term, ...],
    inputs: Any,
    backend: str = "numpy",
    *,
    packed: bool = False,
    build_timeout: float | None = None,
    loops: bool | int = True,
) -> CompiledFunction:
    """A callable computing ``outputs`` (a term, or a list of terms) from the values of ``inputs`` (symbols).

    ``packed=True``: the function takes one float64 array holding a row of input values (or a
    matrix of rows) and returns the outputs' values as one float64 array, optionally into
    ``out=``. ``build_timeout`` bounds the C compiler's time (seconds, a finite positive number;
    default 600, or ``$EXPRGRAPH_BUILD_TIMEOUT``); anything else raises
    :class:`~exprgraph.errors.SettingError`, whatever the backend. ``loops``: outputs of one shape
    (up to the inputs and constants they read) become loops over index tables when there are at
    least :data:`~exprgraph.compile.structure.THRESHOLD` of them (an int: that many; ``False``:
    straight-line code only); ``.info["classes"]`` lists the loops (every backend).

    >>> from exprgraph import symbols, sin
    >>> x, y = symbols("x y")
    >>> f = compile([x * y + sin(x * y), x - y], [x, y])
    >>> [float(v) for v in f(2.0, 3.0)]
    [5.720584501801074, -1.0]
    >>> g = compile([x * y, x - y], [x, y], packed=True)
    >>> g([[2.0, 3.0], [1.0, 1.0]]).tolist()
    [[6.0, -1.0], [1.0, 0.0]]
    """
    chosen = get_backend(backend)
    if build_timeout is not None:
        build_timeout = settings.build_timeout(build_timeout)  # a SettingError unless finite and positive
    signature = check_signature(outputs, inputs, walk=False)
    outs, _, ins = signature
    program = lower(outs, ins)
    check_symbols(program.symbols, ins)  # the lowering's one walk found the symbols the outputs read
    threshold = _threshold(loops)
    # an output without symbols whose folding failed ((-3)**-3 in int64): numpy raises its error at the call
    builder = get_backend("numpy") if unfoldable(program) else chosen
    if builder.loops:
        built = builder.build(program, build_timeout, loops=threshold)
    else:
        built = builder.build(program, build_timeout)
    options: dict[str, Any] = {}
    if chosen.uses_build_timeout and build_timeout is not None:
        options["build_timeout"] = build_timeout
    if loops is not True:
        options["loops"] = loops
    return CompiledFunction(built, signature, backend, packed=packed, options=options, rebuild=_rebuild)


def _threshold(loops: Any) -> int:
    """The fewest outputs of one shape that make a loop, from ``compile``'s ``loops`` (0: no loops)."""
    if loops is True:
        return THRESHOLD
    if loops is False or loops is None:
        return 0
    if isinstance(loops, int) and loops >= 2:
        return loops
    raise ValueError(f"loops must be True, False or an int >= 2 (the fewest outputs of one shape), not {loops!r}")


#: the options a pickled compiled function may carry, and the types each may have
_REBUILD_OPTIONS: dict[str, tuple[type, ...]] = {"packed": (bool,), "build_timeout": (int, float), "loops": (bool, int)}


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
        raise TypeError(f"a pickled compiled function names the backend {backend!r}, not one of {backend_names()}")
    if isinstance(outputs, TermPack):  # outputs then inputs, flattened together; ``inputs`` is (count, single)
        n_in, single = inputs
        if not isinstance(n_in, int) or not 0 <= n_in <= len(outputs) or not isinstance(single, bool):
            raise TypeError(f"a pickled compiled function's term pack has a bad layout: {inputs!r}")
        terms = outputs.terms
        outs, inputs = list(terms[: len(terms) - n_in]), list(terms[len(terms) - n_in :])
        outputs = outs[0] if single and len(outs) == 1 else outs
    return compile(outputs, inputs, backend, **options)
