"""exprgraph.compile: terms compiled to fast callables, as numpy source or as a fused C loop.

``compile(outputs, inputs, backend="numpy")`` returns a :class:`CompiledFunction` taking the
values of ``inputs`` positionally. The ``"numpy"`` backend generates Python source of numpy
calls (each shared node once, buffers reused in place, large arrays in cache-sized blocks); the
``"c"`` backend generates one C loop over the elements computing every output, builds it with
the system C compiler into a shared library cached on disk by content hash, and loads it with
ctypes. Both agree with :func:`exprgraph.evaluate`; the generated code is in ``.source``.
"""

from __future__ import annotations

from typing import Any

from ..core import Term
from ..errors import CompileError, CompilerNotFoundError
from .function import CompiledFunction, check_signature
from .numpy_backend import build_numpy

__all__ = ["compile", "CompiledFunction", "CompileError", "CompilerNotFoundError", "BACKENDS"]

#: the backends ``compile`` knows
BACKENDS = ("numpy", "c")


def compile(outputs: Term | list[Term] | tuple[Term, ...], inputs: Any, backend: str = "numpy") -> CompiledFunction:  # noqa: A001
    """A callable computing ``outputs`` (a term, or a list of terms) from the values of ``inputs`` (symbols).

    >>> from exprgraph import symbols, sin
    >>> x, y = symbols("x y")
    >>> f = compile([x * y + sin(x * y), x - y], [x, y])
    >>> [float(v) for v in f(2.0, 3.0)]
    [5.720584501801074, -1.0]
    """
    outs, single, ins = check_signature(outputs, inputs)
    if backend == "numpy":
        run, source = build_numpy(outs, ins)
    elif backend == "c":
        from .c_backend import build_c

        run, source = build_c(outs, ins)
    else:
        raise ValueError(f"backend must be one of {BACKENDS}, not {backend!r}")
    return CompiledFunction(run, outputs=outs, inputs=ins, single=single, source=source, backend=backend)
