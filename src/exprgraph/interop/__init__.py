"""exprgraph.interop: converters to and from SymPy, PyTensor, JAX and ONNX, ONNX shape inference, dask.

Each converter is a small module that imports its package only when called, so importing
exprgraph never needs them; a missing package raises
:class:`~exprgraph.errors.OptionalDependencyError` naming the extra to install
(``pip install 'exprgraph[sympy]'``, ``[pytensor]``, ``[jax]``, ``[onnx]``, ``[dask]``, or ``[all]``).

| function | module | extra |
|---|---|---|
| ``to_sympy``, ``from_sympy`` | ``interop.sympy`` | sympy |
| ``to_pytensor``, ``from_pytensor`` | ``interop.pytensor``, ``interop.pytensor_read`` | pytensor |
| ``to_jax``, ``from_jax`` | ``interop.jax``, ``interop.jax_read`` | jax |
| ``to_onnx`` | ``interop.onnx`` | onnx |
| ``infer_onnx_shapes``, ``annotate_onnx_shapes`` | ``interop.onnx_shapes`` | onnx |
| ``dask_evaluate`` | ``interop.dask`` | dask |
| ``TorchDims``, ``from_shape_env``, ``read_torch_expr`` | ``interop.torch``, ``interop.torch_read`` | (none) |
| ``ufunc_ops`` | here | (numpy) |

Each converter module registers itself (:mod:`.registry`: ``converters()``, ``get_converter(tool,
direction)``); importing this package imports them, and each imports its tool only when called.
Shape inference and dask load on first use. See docs/architecture.md for where interop sits.
"""

from __future__ import annotations

import importlib
from typing import Any

from ..core import Symbol, Term
from .jax import to_jax
from .jax_read import from_jax
from .onnx import to_onnx
from .pytensor import to_pytensor
from .pytensor_read import from_pytensor
from .registry import Converter, converters, get_converter, register_converter
from .sympy import to_sympy
from .sympy_read import from_sympy

__all__ = [
    "to_sympy",
    "from_sympy",
    "to_pytensor",
    "from_pytensor",
    "to_jax",
    "from_jax",
    "to_onnx",
    "infer_onnx_shapes",
    "annotate_onnx_shapes",
    "dask_evaluate",
    "TorchDims",
    "from_shape_env",
    "read_torch_expr",
    "ufunc_ops",
    "Converter",
    "converters",
    "get_converter",
    "register_converter",
]

# public name -> (module, name in it); the heavier modules load on first use
_LAZY = {
    "infer_onnx_shapes": ("onnx_shapes", "infer_shapes"),
    "annotate_onnx_shapes": ("onnx_shapes", "annotate_shapes"),
    "dask_evaluate": ("dask", "evaluate"),
    "TorchDims": ("torch", "TorchDims"),
    "from_shape_env": ("torch", "from_shape_env"),
    "read_torch_expr": ("torch_read", "read_torch_expr"),
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
