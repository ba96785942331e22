"""Building C: find the system compiler, compile a shared library once, keep it in the cache, load it.

A library is keyed by the SHA-256 of its sources, the compiler's identity, the flags, the
platform and the CPU, and kept in the build cache (:mod:`exprgraph.compile.cache`, which checks
owner, mode and content before anything is loaded). The compiler runs in its own process group:
on a timeout, an interrupt or an error the whole group (the driver and ``cc1`` alike) is killed,
and the private build directory with every partial file is removed. Several translation units
are compiled in parallel and linked into one library.

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
import signal
import subprocess
import sys
import tempfile
import threading
import time
import weakref
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..errors import BuildTimeoutError, CompileError, CompilerNotFoundError
from ..progress import Progress
from . import cache
from .cache import cache_dir

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

#: seconds a build may take before the compiler is stopped (``$EXPRGRAPH_BUILD_TIMEOUT`` overrides)
DEFAULT_TIMEOUT = 600.0

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
    """The build time limit: ``timeout`` if given, else ``$EXPRGRAPH_BUILD_TIMEOUT``, else 600 s."""
    if timeout is not None:
        return float(timeout)
    text = os.environ.get("EXPRGRAPH_BUILD_TIMEOUT", "").strip()
    if not text:
        return DEFAULT_TIMEOUT
    try:
        return float(text)
    except ValueError:
        raise ValueError(f"$EXPRGRAPH_BUILD_TIMEOUT must be a number of seconds, not {text!r}") from None


# -- running the compiler ------------------------------------------------------------------------------


def _kill_group(proc: subprocess.Popen) -> None:
    """Kill ``proc`` and everything it started (its own process group), then reap it."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(Exception):
        proc.kill()
    with contextlib.suppress(Exception):
        proc.wait(timeout=10)


def _wait(proc: subprocess.Popen, timeout: float) -> int:
    """The exit code of ``proc`` once it ends (a seam: tests interrupt here)."""
    return proc.wait(timeout=timeout)


#: seconds between two looks at a running compiler (for progress reports and the time limit)
_TICK = 0.25


def _start_compiler(argv: list[str], err_path: Path) -> subprocess.Popen:
    """Start one compiler in its own process group, its output going to ``err_path``."""
    with open(err_path, "w") as err:
        try:
            return subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=err,
                stderr=err,
                start_new_session=True,  # its own group: cc1 and as die with the driver
            )
        except FileNotFoundError:
            raise CompilerNotFoundError(f"the C compiler {argv[0]!r} could not be run") from None
        except OSError as exc:
            raise CompilerNotFoundError(f"cannot run the C compiler {argv[0]!r}: {exc}") from None


def run_compilers(
    jobs: Sequence[list[str]], timeout: float, workdir: Path, report: Progress | None = None, note: str = ""
) -> list[tuple[int, str]]:
    """Run each command of ``jobs`` in its own process group, at most one per CPU at a time.

    Returns ``(exit code, stderr)`` per job. On the time limit (shared by all jobs), an interrupt
    or any other error every group still running is killed before the error propagates. While a
    compiler runs, ``report`` hears ``note`` and how many of several jobs have finished (a line on
    stderr after a second).
    """
    deadline = time.monotonic() + timeout
    width = max(1, min(len(jobs), os.cpu_count() or 1))
    running: list[tuple[int, subprocess.Popen, Path]] = []
    results: list[tuple[int, str] | None] = [None] * len(jobs)
    queue = list(enumerate(jobs))
    try:
        while queue or running:
            while queue and len(running) < width:
                k, argv = queue.pop(0)
                err_path = workdir / f"stderr{k}.txt"
                running.append((k, _start_compiler(argv, err_path), err_path))
            k, proc, err_path = running[0]
            while True:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise subprocess.TimeoutExpired(proc.args, timeout)
                try:
                    code = _wait(proc, min(remaining, _TICK) if report is not None else remaining)
                    break
                except subprocess.TimeoutExpired:
                    if report is None or deadline - time.monotonic() <= 0:
                        raise
                    report.update(sum(r is not None for r in results) if len(jobs) > 1 else None, note)
            running.pop(0)
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)  # the driver is done; nothing of its group stays
            results[k] = (code, err_path.read_text(errors="replace"))
    except subprocess.TimeoutExpired:
        for _, proc, _ in running:
            _kill_group(proc)
        raise BuildTimeoutError(
            f"the C compiler ran longer than the build time limit of {timeout:g} s and was stopped; raise it "
            "with build_timeout=... or $EXPRGRAPH_BUILD_TIMEOUT, or compile smaller functions"
        ) from None
    except BaseException:
        for _, proc, _ in running:  # KeyboardInterrupt and anything else: leave no compiler behind
            _kill_group(proc)
        raise
    return [r for r in results if r is not None]


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
    cmd = find_compiler()
    key = tuple(cmd)
    if key in _chosen:
        return _build(cmd, (opt, *flags, *_chosen[key]), source, timeout)
    last: CompileError | None = None
    for extra in OPTIONAL_FLAGS:
        try:
            out = _build(cmd, (opt, *flags, *extra), source, timeout)
        except (CompilerNotFoundError, BuildTimeoutError):
            raise
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
            _compile(cmd, flags, sources, directory, so_path, build_timeout(timeout))
            cache.enforce_cap(directory, keep=so_path)
    return so_path


def _compile(
    cmd: list[str], flags: tuple[str, ...], sources: list[str], directory: Path, so_path: Path, timeout: float
) -> None:
    """Compile ``sources`` into ``so_path`` inside a private build directory that is always removed."""
    cflags = [f for f in flags if not f.startswith("-l")]
    libs = [f for f in flags if f.startswith("-l")]
    work = Path(tempfile.mkdtemp(prefix=".build-", dir=directory))
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
                _check(run_compilers([argv], timeout, work, report, "compiling")[0])
            else:
                objects = [c.with_suffix(".o") for c in c_files]
                jobs = [[*cmd, *cflags, "-c", "-o", str(o), str(c)] for c, o in zip(c_files, objects, strict=True)]
                for result in run_compilers(jobs, timeout, work, report, "compiling units in parallel"):
                    _check(result)
                link = [*cmd, *[f for f in cflags if f.startswith("-march")], "-shared", "-o", str(out)]
                _check(run_compilers([[*link, *map(str, objects), *libs, "-lm"]], timeout, work, report, "linking")[0])
        cache.publish(out, so_path)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _check(result: tuple[int, str]) -> None:
    code, err = result
    if code != 0:
        lines = err.strip().splitlines()
        shown = "\n".join(lines[:40]) + (f"\n... ({len(lines) - 40} more lines)" if len(lines) > 40 else "")
        raise CompileError(f"the C compiler failed (exit {code}):\n{shown}")
