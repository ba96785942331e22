"""Building C: find the system compiler, compile a shared library once, keep it in the cache, load it.

A library is keyed by the SHA-256 of its sources, the compiler's identity, the flags, the
platform and the CPU, and kept in the build cache (:mod:`exprgraph.compile.cache`, which checks
owner, mode and content before anything is loaded). The compiler runs in its own process group:
on a timeout, an interrupt or an error the whole group (the driver and ``cc1`` alike) is killed,
and the private build directory with every partial file is removed. Several translation units
are compiled in parallel and linked into one library.

Builds die with the process that asked for them: each compiler runs under a watchdog that kills
its group when this process ends, even by SIGKILL, and SIGTERM unwinds a build before it ends the
process (see :mod:`.runner`). A build directory left by a process that died anyway is swept by the
next build (:func:`.builddir.sweep_stale`).

Each library is loaded once per process: :func:`build_library` returns a :class:`Library`, the
same object for the same key while anyone holds it. When the last holder lets it go the handle is
closed (``dlclose``), so a process that compiles many short-lived functions does not run out of
memory maps.
"""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import os
import platform
import shlex
import shutil
import subprocess
import sys
import threading
import weakref
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..errors import BuildTimeoutError, CacheSecurityError, CompileError, CompilerNotFoundError
from ..progress import Progress
from . import builddir, cache, settings
from .cache import cache_dir
from .runner import check_result, run_compilers, sigterm_unwinds
from .settings import DEFAULT_TIMEOUT

__all__ = [
    "cache_dir",
    "find_compiler",
    "build_library",
    "library_path",
    "load_library",
    "Library",
    "loaded_libraries",
    "BASE_FLAGS",
    "DEFAULT_TIMEOUT",
]

#: flags for every build: position independent, IEEE semantics kept (no -ffast-math, no fused
#: multiply-add contraction), signed overflow wraps like numpy's int64 (-fwrapv), math functions
#: need not set errno; the optimisation level is chosen per build (-O3 by default)
BASE_FLAGS = ("-std=c11", "-fPIC", "-fwrapv", "-fno-math-errno", "-ffp-contract=off", "-fopenmp-simd")

_lock = threading.Lock()
_loaded: weakref.WeakValueDictionary[str, Library] = weakref.WeakValueDictionary()
_compiler_ids: dict[tuple[str, ...], str] = {}


def find_compiler() -> list[str]:
    """The C compiler command: ``$CC`` if set, else the first of cc, gcc, clang on the PATH."""
    env = os.environ.get("CC")
    if env:
        cmd = shlex.split(env)
        if not cmd or shutil.which(cmd[0]) is None:
            raise CompilerNotFoundError(f"$CC is {env!r}, but no such compiler was found on the PATH")
        return cmd
    for name in ("cc", "gcc", "clang"):
        path = shutil.which(name)
        if path is not None:
            return [path]
    raise CompilerNotFoundError(
        "no C compiler found (looked for $CC, cc, gcc, clang): install one, or use backend='numpy'"
    )


def build_timeout(timeout: float | None = None) -> float:
    """The build time limit: ``timeout`` if given, else ``$EXPRGRAPH_BUILD_TIMEOUT``, else 600 s.

    Only a finite positive number is accepted (see :mod:`.settings`); anything else raises
    :class:`~exprgraph.errors.SettingError`.
    """
    return settings.build_timeout(timeout)


# -- the compiler's identity --------------------------------------------------------------------------


def _compiler_id(cmd: list[str]) -> str:
    key = tuple(cmd)
    if key not in _compiler_ids:
        try:
            out = subprocess.run(
                [*cmd, "--version"], capture_output=True, text=True, timeout=60, check=False, start_new_session=True
            )
        except OSError as exc:
            raise CompilerNotFoundError(f"cannot run the C compiler {cmd[0]!r}: {exc}") from None
        except subprocess.TimeoutExpired:
            raise CompilerNotFoundError(f"the C compiler {cmd[0]!r} did not answer --version within 60 s") from None
        text = (out.stdout or out.stderr).strip()
        _compiler_ids[key] = text.splitlines()[0] if text else ""
    return _compiler_ids[key]


def _cpu_id() -> str:
    """What the CPU can run (a library built with -march=native must not be loaded on another CPU)."""
    try:
        with open("/proc/cpuinfo") as fh:
            text = fh.read()
    except OSError:
        return platform.processor() or platform.machine()
    keep = [line for line in text.splitlines() if line.startswith(("model name", "flags", "Features", "CPU part"))]
    return hashlib.sha256("\n".join(sorted(set(keep))).encode()).hexdigest()[:16]


# -- loaded libraries ------------------------------------------------------------------------------------


class Library:
    """A loaded shared library; its handle is closed when the last object holding it is gone."""

    __slots__ = ("key", "path", "cdll", "__weakref__")

    def __init__(self, key: str, path: Path, cdll: ctypes.CDLL, *, closable: bool = True) -> None:
        self.key = key
        self.path = path
        self.cdll = cdll
        if closable:  # a library using OpenMP keeps libgomp's threads alive: never unloaded
            weakref.finalize(self, _close, cdll._handle)

    def function(self, name: str, restype: Any, argtypes: Sequence[Any]) -> Any:
        """The C function ``name`` with its ctypes signature (hold the Library while you call it)."""
        fn = getattr(self.cdll, name)
        fn.restype = restype
        fn.argtypes = list(argtypes)
        return fn

    def __repr__(self) -> str:
        return f"<Library {self.path.name}>"


def _close(handle: int) -> None:
    dlclose = getattr(ctypes, "_dlclose", None) or getattr(__import__("_ctypes"), "dlclose", None)
    if dlclose is not None:
        with contextlib.suppress(OSError):
            dlclose(handle)


def loaded_libraries() -> int:
    """How many libraries this process holds loaded now."""
    return len(_loaded)


def load_library(so_path: Path, key: str | None = None, *, closable: bool = True) -> Library:
    """The loaded library at ``so_path`` after the cache's checks (one handle per library per process).

    ``closable=False`` keeps it loaded for the life of the process (needed for OpenMP code).
    """
    so_path = Path(so_path)
    key = key or so_path.stem
    with _lock:
        lib = _loaded.get(key)
        if lib is not None:
            return lib
        if not cache.check_library(so_path):
            raise CompileError(f"the library {so_path} does not match its recorded sha256; it was not loaded")
        try:
            cdll = ctypes.CDLL(str(so_path))
        except OSError as exc:
            raise CompileError(f"cannot load the compiled library {so_path}: {exc}") from None
        lib = Library(key, so_path, cdll, closable=closable)
        _loaded[key] = lib
        cache.touch(so_path)
        return lib


# -- building ---------------------------------------------------------------------------------------------


def _splits_wide_vectors() -> bool:
    """Whether the CPU runs a 512-bit vector instruction as two 256-bit halves (AMD's AVX-512).

    There a point costs as much in a block of 8 lanes as two blocks of 4, so the generated code
    uses blocks of 4 (``EG_NARROW``): a single point (a Newton step, one call) takes half the time,
    large batches about a quarter more (measured on an AMD EPYC: Hessian at one point 135 -> 70 us,
    f + gradient at 10^6 points 92 -> 108 ms). Elsewhere 512-bit vectors are kept.
    """
    try:
        with open("/proc/cpuinfo") as fh:
            text = fh.read(1 << 16)
    except OSError:
        return False
    return "AuthenticAMD" in text and " avx512f" in text


#: the vector width flags: 512-bit vectors where the CPU has whole ones (GCC tunes some AVX-512 CPUs
#: for 256-bit vectors unless told), else 256-bit ones and blocks of 4 lanes (see _splits_wide_vectors)
_WIDTH = ("-mprefer-vector-width=256", "-DEG_NARROW") if _splits_wide_vectors() else ("-mprefer-vector-width=512",)

#: optional flag sets tried in order, the first the compiler accepts is used (and remembered);
#: libraries (-l...) go after the sources
OPTIONAL_FLAGS: tuple[tuple[str, ...], ...] = (
    ("-march=native", *_WIDTH, "-DEG_MVEC", "-lmvec"),
    ("-march=native", "-DEG_MVEC", "-lmvec"),
    ("-march=native",),
    (),
)
_chosen: dict[tuple[str, ...], tuple[str, ...]] = {}


def build_library(
    source: str | Sequence[str],
    flags: tuple[str, ...] = (),
    *,
    opt: str = "-O3",
    timeout: float | None = None,
) -> tuple[Library, Path]:
    """The loaded shared library built from ``source`` (one C text, or several translation units).

    The best optional flags the compiler accepts are added: ``-march=native`` and, with glibc's
    vector math library, ``-DEG_MVEC -lmvec`` (the C helpers then declare its vector variants).
    ``opt`` is the optimisation flag; ``timeout`` the build time limit in seconds.
    """
    build_timeout(timeout)  # a bad setting is reported even when the library is in the cache
    cmd = find_compiler()
    key = tuple(cmd)
    if key in _chosen:
        return _build(cmd, (opt, *flags, *_chosen[key]), source, timeout)
    last: CompileError | None = None
    for extra in OPTIONAL_FLAGS:
        try:
            out = _build(cmd, (opt, *flags, *extra), source, timeout)
        except (CompilerNotFoundError, BuildTimeoutError, CacheSecurityError):
            raise  # only a compiler refusing the flags is a reason to try weaker ones
        except CompileError as exc:
            last = exc
            continue
        _chosen[key] = extra
        return out
    assert last is not None
    raise last


def _build(
    cmd: list[str], flags: tuple[str, ...], source: str | Sequence[str], timeout: float | None
) -> tuple[Library, Path]:
    sources = [source] if isinstance(source, str) else list(source)
    so_path = library_path(cmd, (*BASE_FLAGS, *flags), sources, timeout=timeout)
    return load_library(so_path), so_path


def library_path(
    cmd: list[str], flags: tuple[str, ...], source: str | Sequence[str], *, timeout: float | None = None
) -> Path:
    """The cached shared library of ``source`` built by ``cmd`` with exactly ``flags`` (compiled if missing)."""
    limit = build_timeout(timeout)
    sources = [source] if isinstance(source, str) else list(source)
    ident = "\0".join([_compiler_id(cmd), " ".join(cmd), " ".join(flags), platform.platform(), sys.platform, _cpu_id()])
    h = hashlib.sha256(ident.encode())
    for text in sources:
        h.update(b"\0\0")
        h.update(text.encode())
    digest = h.hexdigest()[:40]
    directory = cache.open_cache()
    so_path = directory / f"eg_{digest}.so"
    with _lock:
        if digest in _loaded:
            return so_path
    with cache.key_lock(directory, digest):
        if not cache.check_library(so_path):
            _compile(cmd, flags, sources, directory, so_path, limit)
            cache.enforce_cap(directory, keep=so_path)
    return so_path


def _compile(
    cmd: list[str], flags: tuple[str, ...], sources: list[str], directory: Path, so_path: Path, timeout: float
) -> None:
    """Compile ``sources`` into ``so_path`` inside a private build directory that is always removed."""
    builddir.sweep_stale(directory, max(timeout, DEFAULT_TIMEOUT))  # what builds killed earlier left
    with sigterm_unwinds():
        _compile_in(cmd, flags, sources, builddir.make_build_dir(directory), so_path, timeout)


def _compile_in(
    cmd: list[str], flags: tuple[str, ...], sources: list[str], work: Path, so_path: Path, timeout: float
) -> None:
    """Compile ``sources`` into ``so_path`` inside the build directory ``work``, removed in the end."""
    cflags = [f for f in flags if not f.startswith("-l")]
    libs = [f for f in flags if f.startswith("-l")]
    units = f"{len(sources)} unit{'s' if len(sources) > 1 else ''}"
    report = Progress(f"building C ({units}, {sum(len(t) for t in sources) // 1024} KiB)", total=len(sources))
    try:
        c_files = []
        for k, text in enumerate(sources):
            c_path = work / f"unit{k}.c"
            c_path.write_text(text)
            c_files.append(c_path)
        out = work / "lib.so"
        with report:
            if len(c_files) == 1:
                argv = [*cmd, *cflags, "-shared", "-o", str(out), str(c_files[0]), *libs, "-lm"]
                check_result(run_compilers([argv], timeout, work, report, "compiling")[0])
            else:
                objects = [c.with_suffix(".o") for c in c_files]
                jobs = [[*cmd, *cflags, "-c", "-o", str(o), str(c)] for c, o in zip(c_files, objects, strict=True)]
                for result in run_compilers(jobs, timeout, work, report, "compiling units in parallel"):
                    check_result(result)
                link = [*cmd, *[f for f in cflags if f.startswith("-march")], "-shared", "-o", str(out)]
                linked = run_compilers([[*link, *map(str, objects), *libs, "-lm"]], timeout, work, report, "linking")
                check_result(linked[0])
        cache.publish(out, so_path)
    finally:
        shutil.rmtree(work, ignore_errors=True)
