"""Building C: find the system compiler, compile a shared library once, cache it on disk, load it.

A library is keyed by the SHA-256 of its source, the compiler's identity, the flags and the
platform, and kept under ``$EXPRGRAPH_CACHE`` (default ``~/.cache/exprgraph``, or under
``$XDG_CACHE_HOME``) as ``eg_<hash>.so`` next to its ``.c`` source. A second process asking for
the same code loads the library without compiling. Writes go through a temporary file and an
atomic rename, so concurrent builds of the same code are safe.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import platform
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

from ..errors import CompileError, CompilerNotFoundError

__all__ = ["cache_dir", "find_compiler", "build_library", "library_path", "load_library", "BASE_FLAGS"]

#: flags for every build: optimised, position independent, IEEE semantics kept (no -ffast-math, no
#: fused multiply-add contraction), signed overflow wraps like numpy's int64 (-fwrapv), math
#: functions need not set errno
BASE_FLAGS = ("-O3", "-std=c11", "-fPIC", "-shared", "-fwrapv", "-fno-math-errno", "-ffp-contract=off")

_lock = threading.Lock()
_loaded: dict[str, ctypes.CDLL] = {}
_compiler_ids: dict[tuple[str, ...], str] = {}


def cache_dir() -> Path:
    """The library cache: ``$EXPRGRAPH_CACHE``, else ``$XDG_CACHE_HOME/exprgraph``, else ``~/.cache/exprgraph``."""
    env = os.environ.get("EXPRGRAPH_CACHE")
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg else Path.home() / ".cache"
    return base / "exprgraph"


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


def _compiler_id(cmd: list[str]) -> str:
    key = tuple(cmd)
    if key not in _compiler_ids:
        try:
            out = subprocess.run([*cmd, "--version"], capture_output=True, text=True, timeout=60, check=False)
        except OSError as exc:
            raise CompilerNotFoundError(f"cannot run the C compiler {cmd[0]!r}: {exc}") from None
        _compiler_ids[key] = (out.stdout or out.stderr).strip().splitlines()[0] if (out.stdout or out.stderr) else ""
    return _compiler_ids[key]


def _writable_dir() -> Path:
    d = cache_dir()
    try:
        d.mkdir(parents=True, exist_ok=True)
        if os.access(d, os.W_OK):
            return d
    except OSError:
        pass
    # a read-only home: fall back to a per-user temporary directory
    d = Path(tempfile.gettempdir()) / f"exprgraph-{os.getuid() if hasattr(os, 'getuid') else 'user'}"
    d.mkdir(parents=True, exist_ok=True)
    return d


def _cpu_id() -> str:
    """What the CPU can run (a library built with -march=native must not be loaded on another CPU)."""
    try:
        with open("/proc/cpuinfo") as fh:
            text = fh.read()
    except OSError:
        return platform.processor() or platform.machine()
    keep = [line for line in text.splitlines() if line.startswith(("model name", "flags", "Features", "CPU part"))]
    return hashlib.sha256("\n".join(sorted(set(keep))).encode()).hexdigest()[:16]


#: optional flag sets tried in order, the first the compiler accepts is used (and remembered)
OPTIONAL_FLAGS: tuple[tuple[str, ...], ...] = (
    ("-march=native", "-DEG_MVEC", "-lmvec"),  # libraries (-l...) go after the source file
    ("-march=native",),
    (),
)
_chosen: dict[tuple[str, ...], tuple[str, ...]] = {}


def build_library(source: str, flags: tuple[str, ...] = ()) -> tuple[ctypes.CDLL, Path]:
    """The loaded shared library built from ``source`` (from the cache when it was built before).

    The best optional flags the compiler accepts are added: ``-march=native`` and, with glibc's
    vector math library, ``-DEG_MVEC -lmvec`` (the C helpers then declare its vector variants).
    """
    cmd = find_compiler()
    key = tuple(cmd)
    if key in _chosen:
        return _build(cmd, (*flags, *_chosen[key]), source)
    last: CompileError | None = None
    for extra in OPTIONAL_FLAGS:
        try:
            out = _build(cmd, (*flags, *extra), source)
        except CompilerNotFoundError:
            raise
        except CompileError as exc:
            last = exc
            continue
        _chosen[key] = extra
        return out
    assert last is not None
    raise last


def _build(cmd: list[str], flags: tuple[str, ...], source: str) -> tuple[ctypes.CDLL, Path]:
    so_path = library_path(cmd, (*BASE_FLAGS, *flags), source)
    return load_library(so_path), so_path


def library_path(cmd: list[str], flags: tuple[str, ...], source: str) -> Path:
    """The cached shared library of ``source`` built by ``cmd`` with exactly ``flags`` (compiled if missing)."""
    ident = "\0".join([_compiler_id(cmd), " ".join(cmd), " ".join(flags), platform.platform(), sys.platform, _cpu_id()])
    digest = hashlib.sha256((ident + "\0" + source).encode()).hexdigest()[:40]
    with _lock:
        directory = _writable_dir()
        so_path = directory / f"eg_{digest}.so"
        if not so_path.exists():
            _compile(cmd, flags, source, directory, digest, so_path)
        return so_path


def load_library(so_path: Path) -> ctypes.CDLL:
    """The loaded library at ``so_path`` (each file loaded once per process)."""
    key = str(so_path)
    with _lock:
        lib = _loaded.get(key)
        if lib is None:
            try:
                lib = ctypes.CDLL(key)
            except OSError as exc:
                raise CompileError(f"cannot load the compiled library {so_path}: {exc}") from None
            _loaded[key] = lib
        return lib


def _compile(cmd: list[str], flags: tuple[str, ...], source: str, directory: Path, digest: str, so_path: Path) -> None:
    cflags = [f for f in flags if not f.startswith("-l")]
    libs = [f for f in flags if f.startswith("-l")]
    c_path = directory / f"eg_{digest}.c"
    fd, tmp_c = tempfile.mkstemp(suffix=".c", dir=directory)
    with os.fdopen(fd, "w") as fh:
        fh.write(source)
    os.replace(tmp_c, c_path)
    fd, tmp_so = tempfile.mkstemp(suffix=".so", dir=directory)
    os.close(fd)
    try:
        try:
            proc = subprocess.run(
                [*cmd, *cflags, "-o", tmp_so, str(c_path), *libs, "-lm"],
                capture_output=True,
                text=True,
                timeout=600,
                check=False,
            )
        except FileNotFoundError:
            raise CompilerNotFoundError(f"the C compiler {cmd[0]!r} could not be run") from None
        except subprocess.TimeoutExpired:
            raise CompileError(f"the C compiler took more than 600 s on {c_path}") from None
        if proc.returncode != 0:
            raise CompileError(f"the C compiler failed on {c_path} (exit {proc.returncode}):\n{proc.stderr.strip()}")
        os.replace(tmp_so, so_path)
    finally:
        if os.path.exists(tmp_so):
            os.unlink(tmp_so)
