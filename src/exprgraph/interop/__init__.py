"""exprgraph.interop: converters to and from SymPy, PyTensor, JAX and ONNX, ONNX shape inference, dask.

Each converter is a small module that imports its package only when called, so importing
exprgraph never needs them; a missing package raises
:class:`~exprgraph.errors.OptionalDependencyError` naming the extra to install
(``pip install 'exprgraph[sympy]'``, ``[pytensor]``, ``[jax]``, ``[onnx]``, ``[dask]``, or ``[all]``).

| function | module | extra |
|---|---|---|
| ``to_sympy``, ``from_sympy`` | ``interop.sympy`` | sympy |
| ``to_pytensor``, ``from_pytensor`` | ``interop.pytensor``, ``interop.pytensor_read`` | pytensor |
| ``to_jax`` | ``interop.jax`` | jax |
| ``to_onnx`` | ``interop.onnx`` | onnx |
| ``infer_onnx_shapes``, ``annotate_onnx_shapes`` | ``interop.onnx_shapes`` | onnx |
| ``dask_evaluate`` | ``interop.dask`` | dask |
| ``ufunc_ops`` | here | (numpy) |

Layer 12 of docs/architecture.md: imports dims, graph, eval, core and errors (each converter
imports its own package lazily); never a higher layer.
"""

from __future__ import annotations

import importlib
from typing import Any

from ..core import Symbol, Term

__all__ = [
    "to_sympy",
    "from_sympy",
    "to_pytensor",
    "from_pytensor",
    "to_jax",
    "to_onnx",
    "infer_onnx_shapes",
    "annotate_onnx_shapes",
    "dask_evaluate",
    "ufunc_ops",
]

# public name -> (module, name in it); modules load on first use
_LAZY = {
    "to_sympy": ("sympy", "to_sympy"),
    "from_sympy": ("sympy", "from_sympy"),
    "to_pytensor": ("pytensor", "to_pytensor"),
    "from_pytensor": ("pytensor_read", "from_pytensor"),
    "to_jax": ("jax", "to_jax"),
    "to_onnx": ("onnx", "to_onnx"),
    "infer_onnx_shapes": ("onnx_shapes", "infer_shapes"),
    "annotate_onnx_shapes": ("onnx_shapes", "annotate_shapes"),
    "dask_evaluate": ("dask", "evaluate"),
}


def __getattr__(name: str) -> Any:
    entry = _LAZY.get(name)
    if entry is None:
        raise AttributeError(f"module 'exprgraph.interop' has no attribute {name!r}")
    module = importlib.import_module(f"{__name__}.{entry[0]}")
    value = getattr(module, entry[1])
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


def ufunc_ops() -> dict[str, str]:
    """numpy ufunc name -> what it builds on terms (an op name, or the expression it spells)."""
    out: dict[str, str] = {}
    for ufunc, build in Term.ufunc_builders().items():
        name = getattr(build, "name", None)
        if name is None:  # a ufunc spelled with other ops: show what it builds for x (and y)
            args = [Symbol("x", "bool"), Symbol("y", "bool")][: ufunc.nin]
            try:
                name = str(build(*args))
            except TypeError:
                args = [Symbol("x"), Symbol("y")][: ufunc.nin]
                name = str(build(*args))
        out[ufunc.__name__] = name
    return dict(sorted(out.items()))
