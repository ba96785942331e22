"""Compile generated C into a shared library (cached by content hash) and call it on numpy arrays.

The compiler is ``$CC`` or the first of gcc, cc, clang on the PATH; flags are ``-std=c11 -O3
-march=native -mprefer-vector-width=512 -fopenmp-simd -fwrapv -ffp-contract=fast`` (the vector
flags are dropped when the compiler refuses them; ``-fopenmp`` is added for ``parallel=True``).
Libraries are cached by the SHA-256 of source, compiler and flags by :mod:`exprgraph.compile.cbuild`
(the one build cache of the project, under ``$EXPRGRAPH_CACHE``), written atomically, so
concurrent builds are safe.
"""

from __future__ import annotations

import ctypes
import shlex
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..compile import cbuild
from ..errors import BuildTimeoutError, CacheSecurityError, CompileError, CompilerNotFoundError, KernelError
from .codegen import codegen_c
from .ir import Kernel

__all__ = ["build", "CompiledKernel", "cache_dir", "find_compiler", "numpy_dtype", "DEFAULT_FLAGS", "count_iterations"]

#: optimisation flags; -fwrapv makes int overflow wrap like numpy's int32; -ffp-contract=fast lets a
#: product and a sum fuse into one FMA (ISO C modes forbid it by default), 10-15% on the benchmark
#: kernels, within the course tolerance. GCC tunes some CPUs with AVX-512 (Zen 3/4 as "znver3") for
#: 256-bit vectors; preferring 512 bits is 1.2-1.5x faster on the benchmark kernels there and a
#: no-op elsewhere. Flags the compiler refuses are dropped.
DEFAULT_FLAGS: tuple[str, ...] = (
    "-O3",
    "-march=native",
    "-mprefer-vector-width=512",
    "-fopenmp-simd",
    "-fwrapv",
    "-ffp-contract=fast",
)
#: flags dropped, in this order, until a probe compiles
_OPTIONAL_FLAGS: tuple[str, ...] = ("-mprefer-vector-width=512", "-march=native")
_BASE_FLAGS: tuple[str, ...] = ("-std=c11", "-fPIC", "-shared")

_native_ok: dict[str, tuple[str, ...]] = {}


def numpy_dtype(kernel: Kernel) -> np.dtype:
    """The numpy dtype of a kernel's arrays (float32 for ``float``, int32 for ``int``)."""
    return np.dtype(np.float32 if kernel.data_type == "float" else np.int32)


def cache_dir() -> Path:
    """Where compiled kernels are kept: the project's build cache (``$EXPRGRAPH_CACHE``)."""
    return cbuild.cache_dir()


def find_compiler() -> str:
    """The C compiler to use: ``$CC``, else cc, gcc or clang from the PATH."""
    return " ".join(cbuild.find_compiler())


def _command(compiler: str) -> list[str]:
    cmd = shlex.split(compiler)
    if not cmd or shutil.which(cmd[0]) is None:
        raise CompilerNotFoundError(f"no C compiler {compiler!r} on the PATH: install gcc or clang, or set $CC")
    return cmd


def _flags_for(compiler: str, flags: Sequence[str] | None) -> tuple[str, ...]:
    if flags is not None:
        return tuple(flags)
    chosen = _native_ok.get(compiler)
    if chosen is None:
        probe = "int eg_probe(int x) { return x + 1; }\n"
        chosen = DEFAULT_FLAGS
        for drop in (None, *_OPTIONAL_FLAGS):
            if drop is not None:
                chosen = tuple(f for f in chosen if f != drop)
            try:
                cbuild.library_path(_command(compiler), (*_BASE_FLAGS, *chosen), probe)
                break
            except (CompilerNotFoundError, CacheSecurityError, BuildTimeoutError):
                raise  # no compiler, an unsafe cache, a hung build: weaker flags would not help, and must not hide it
            except CompileError:
                continue
        _native_ok[compiler] = chosen
    return chosen


def compile_source(source: str, *, compiler: str | None = None, flags: Sequence[str] | None = None) -> Path:
    """Compile C source into a cached shared library and return its path."""
    cc = compiler or find_compiler()
    fl = _flags_for(cc, flags)
    return cbuild.library_path(_command(cc), (*_BASE_FLAGS, *fl), source)


def _load(path: Path, openmp: bool = False) -> cbuild.Library:
    return cbuild.load_library(path, closable=not openmp)


class CompiledKernel:
    """A kernel compiled to native code; call it with numpy arrays.

    ``fn(B=..., C=...)`` (or positionally in ``params`` order) copies the arrays, runs the kernel
    and returns ``{output name: array}``; outputs not given start as zeros. ``fn.run_inplace(*arrays)``
    runs on the caller's arrays directly (exact dtype, shape and C order; outputs updated in place).
    """

    def __init__(self, kernel: Kernel, source: str, path: Path, function: Any) -> None:
        self.kernel = kernel
        self.source = source
        self.path = path
        self._fn = function
        self._library: Any = None  # the loaded library, kept open while the kernel is alive
        self.dtype = numpy_dtype(kernel)
        self.params = kernel.params
        self._written = set(kernel.written)

    def _shape(self, name: str) -> tuple[int, ...]:
        return self.kernel.tensors[name].shape

    def run_inplace(self, *arrays: np.ndarray) -> None:
        """Run on arrays in ``params`` order without copying (outputs are written in place)."""
        if len(arrays) != len(self.params):
            raise TypeError(f"{self.kernel.name} takes {len(self.params)} arrays ({', '.join(self.params)})")
        ptrs = []
        for name, arr in zip(self.params, arrays, strict=True):
            if not isinstance(arr, np.ndarray):
                raise TypeError(f"{name} must be a numpy array")
            if arr.dtype != self.dtype or arr.shape != self._shape(name) or not arr.flags.c_contiguous:
                raise ValueError(
                    f"{name} must be a C-contiguous {self.dtype} array of shape {self._shape(name)}, "
                    f"got {arr.dtype} {arr.shape}"
                )
            if name in self._written and not arr.flags.writeable:
                raise ValueError(f"{name} is written by the kernel but the array is read-only")
            ptrs.append(arr.ctypes.data)
        for k in range(len(arrays)):
            for m in range(k):
                if np.shares_memory(arrays[k], arrays[m]):
                    raise ValueError(f"{self.params[k]} and {self.params[m]} overlap in memory")
        self._fn(*ptrs)

    def __call__(self, *args: Any, **kwargs: Any) -> dict[str, np.ndarray]:
        """Run on copies of the given arrays; return the outputs by name."""
        values = _bind(self.kernel, args, kwargs)
        arrays = [_prepare(self.kernel, name, values.get(name), self.dtype) for name in self.params]
        self.run_inplace(*arrays)
        return {n: a for n, a in zip(self.params, arrays, strict=True) if n in self._written}

    def __repr__(self) -> str:
        return f"<CompiledKernel {self.kernel.name}({', '.join(self.params)}) at {self.path.name}>"


def _bind(kernel: Kernel, args: Sequence[Any], kwargs: Mapping[str, Any]) -> dict[str, Any]:
    params = kernel.params
    if len(args) > len(params):
        raise TypeError(f"{kernel.name} takes at most {len(params)} arrays")
    values = dict(zip(params, args, strict=False))
    for k, v in kwargs.items():
        if k not in params:
            raise TypeError(f"{kernel.name} has no parameter {k!r} (parameters: {', '.join(params)})")
        if k in values:
            raise TypeError(f"{k} is given twice")
        values[k] = v
    return values


def _prepare(kernel: Kernel, name: str, value: Any, dtype: np.dtype) -> np.ndarray:
    shape = kernel.tensors[name].shape
    written = name in kernel.written
    if value is None:
        if not written:
            raise TypeError(f"{kernel.name} needs the input {name}")
        return np.zeros(shape, dtype)
    arr = np.array(value, dtype=dtype, order="C", copy=True)
    if arr.shape != shape:
        if arr.size == 1 and shape == (1,):
            arr = arr.reshape(shape)
        else:
            raise ValueError(f"{name} must have shape {shape}, got {arr.shape}")
    return arr


def build(
    kernel: Kernel,
    *,
    compiler: str | None = None,
    flags: Sequence[str] | None = None,
    parallel: bool = False,
    unroll: bool = True,
) -> CompiledKernel:
    """Generate C for ``kernel``, compile it (cached) and return a callable over numpy arrays.

    ``unroll`` (default on) unrolls and jams loops for speed (see :func:`codegen_c`);
    ``parallel=True`` runs each loop nest's outer loop on all cores (OpenMP, ``-fopenmp``).
    """
    if not isinstance(kernel, Kernel):
        raise KernelError(f"build() takes a Kernel, not {type(kernel).__name__}")
    source = codegen_c(kernel, parallel=parallel, unroll=unroll)
    cc = compiler or find_compiler()
    fl = list(_flags_for(cc, flags))
    if parallel and "-fopenmp" not in fl:
        fl.append("-fopenmp")
    path = compile_source(source, compiler=cc, flags=fl)
    library = _load(path, openmp="-fopenmp" in fl)
    fn = library.function(kernel.name, None, [ctypes.c_void_p] * len(kernel.params))
    compiled = CompiledKernel(kernel, source, path, fn)
    compiled._library = library  # the handle stays open while the kernel is alive
    return compiled


def count_iterations(kernel: Kernel, *, compiler: str | None = None) -> list[int]:
    """Innermost-loop iterations of each statement of ``kernel`` as generated (tests inside included)."""
    source = codegen_c(kernel, name="eg_count_iterations", count=True)
    path = compile_source(source, compiler=compiler)
    library = _load(path)
    fn = library.function("eg_count_iterations", None, [ctypes.c_void_p])
    out = np.zeros(len(kernel.statements), np.int64)
    fn(out.ctypes.data)
    return [int(v) for v in out]
