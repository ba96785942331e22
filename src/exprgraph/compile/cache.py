"""The build cache: a directory only its owner can write, libraries checked before they are loaded.

Compiled libraries run in the user's process, so the cache is a trust boundary. The rules:

- The directory is ``$EXPRGRAPH_CACHE``, else ``$XDG_CACHE_HOME/exprgraph``, else
  ``~/.cache/exprgraph``; it is created with mode 0700. It must be a real directory (not a
  symlink), owned by the current user and writable by no one else, and every directory above it
  must be owned by the user or root and, when others may write it, have the sticky bit (so no one
  can rename ours away). The way to it is walked one component at a time, as the kernel walks it:
  a symbolic link on the way must be owned by the user or root (whoever owns a link decides where
  it points), and the directories it leads through obey the same rules. A user-chosen
  ``$EXPRGRAPH_CACHE`` that fails these checks is refused with
  :class:`~exprgraph.errors.CacheSecurityError` (before anything is created through it); the
  default location falls back to a fresh private directory made by ``tempfile.mkdtemp`` for this
  process (removed at exit), with a warning.
- A library ``eg_<key>.so`` is written next to a record ``eg_<key>.sha256`` of its content. Before
  it is loaded, both must be regular files (not symlinks, FIFOs or devices: they are opened without
  following links and without blocking, and checked on the open descriptor) owned by the user and
  writable by no one else, and the library's sha256 must equal the record. A library that fails is
  never loaded: a content mismatch is rebuilt, a foreign owner or mode raises.
- Writes are atomic (a temporary name in the cache, then a rename); builds of one key are
  serialised by a per-key thread lock and a file lock, so concurrent processes build it once.
- The cache is capped (default 1 GiB, ``$EXPRGRAPH_CACHE_SIZE``, e.g. ``200M``, read by
  :mod:`.settings`); after a build the least recently used libraries beyond the cap are removed (a
  load counts as a use).
- Each build works in a private directory ``.build-<host>-<pid>-<random>``, removed when the build
  ends; one left behind by a process that was killed is swept by the next build
  (:mod:`.builddir`).

The checks read the owner through :func:`current_uid` and file metadata through :func:`_lstat`,
the seams the tests use to fake another user.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import hashlib
import os
import shutil
import stat
import tempfile
import threading
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ..errors import CacheSecurityError
from . import settings
from .settings import DEFAULT_CAP

__all__ = [
    "cache_dir",
    "open_cache",
    "check_directory",
    "check_library",
    "publish",
    "key_lock",
    "enforce_cap",
    "cache_info",
    "clear_cache",
    "CacheInfo",
    "DEFAULT_CAP",
    "size_cap",
]

_lock = threading.Lock()
_key_locks: dict[str, threading.Lock] = {}
_opened: dict[str, Path] = {}  # configured path -> the verified (or fallback) directory


def current_uid() -> int:
    """The user the cache must belong to (a seam: tests fake another owner through it)."""
    return os.getuid()


def _lstat(path: Path) -> os.stat_result:
    """File metadata without following a final symlink (a seam for tests)."""
    return os.lstat(path)


def cache_dir() -> Path:
    """The configured cache directory: ``$EXPRGRAPH_CACHE``, ``$XDG_CACHE_HOME/exprgraph`` or ``~/.cache/exprgraph``."""
    env = os.environ.get("EXPRGRAPH_CACHE")
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg else Path.home() / ".cache"
    return base / "exprgraph"


def size_cap() -> int:
    """The cache's cap in bytes: ``$EXPRGRAPH_CACHE_SIZE`` (``500M``, ``2G``, a byte count) or 1 GiB."""
    return settings.size_cap()


# -- checks -------------------------------------------------------------------------------------------


#: symbolic links followed on the way to the cache before giving up (the kernel's own limit)
_MAX_LINKS = 40


def _problem_with_container(directory: Path) -> str | None:
    """Why others could swap an entry of ``directory`` (None when they cannot): it must be owned by
    the user or root, and sticky when others may write to it."""
    try:
        st = os.stat(directory)
    except OSError as exc:
        return f"cannot read the directory above it, {directory} ({exc.strerror})"
    if st.st_uid not in (0, current_uid()):
        return f"the directory above it, {directory}, is owned by uid {st.st_uid}"
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH) and not st.st_mode & stat.S_ISVTX:
        return f"others may rename entries of the directory above it, {directory} (mode {stat.S_IMODE(st.st_mode):o})"
    return None


def _problem_on_the_way(path: Path) -> str | None:
    """Why the way to the directory ``path`` is unsafe (None when it is safe, or ends before ``path``).

    The path is walked component by component as the kernel resolves it: each directory looked in
    must pass :func:`_problem_with_container`, and each symbolic link met must be owned by the user
    or root (its owner can point it elsewhere at any time), its target then walked the same way.
    """
    full = path if path.is_absolute() else Path(os.getcwd(), path)
    pending = list(reversed(full.parts[1:]))  # components still to resolve, the next one last
    current = Path(full.anchor)
    links = 0
    while pending:
        name = pending.pop()
        if name in ("", "."):
            continue
        if name == "..":
            current = current.parent
            continue
        problem = _problem_with_container(current)
        if problem is not None:
            return problem
        candidate = current / name
        try:
            st = _lstat(candidate)
        except FileNotFoundError:
            return None  # the rest does not exist yet: it will be made by us, private
        except OSError as exc:
            return f"cannot read {candidate} on the way to it ({exc.strerror})"
        if stat.S_ISLNK(st.st_mode):
            if st.st_uid not in (0, current_uid()):
                return f"the way to it goes through the symbolic link {candidate}, owned by uid {st.st_uid}"
            links += 1
            if links > _MAX_LINKS:
                return f"more than {_MAX_LINKS} symbolic links on the way to it"
            target = Path(os.readlink(candidate))
            if target.is_absolute():
                current = Path(target.anchor)
            pending.extend(reversed(target.parts[1:] if target.is_absolute() else target.parts))
        elif stat.S_ISDIR(st.st_mode):
            current = candidate
        else:
            return None  # not a directory: nothing can be reached or created through it
    return _problem_with_container(current)


def _problem_with_dir(path: Path) -> str | None:
    """Why ``path`` is not a safe cache directory (None when it is)."""
    try:
        st = _lstat(path)
    except OSError as exc:
        return f"cannot read it ({exc.strerror})"
    if stat.S_ISLNK(st.st_mode):
        return "it is a symbolic link"
    if not stat.S_ISDIR(st.st_mode):
        return "it is not a directory"
    if st.st_uid != current_uid():
        return f"it is owned by uid {st.st_uid}, not by you (uid {current_uid()})"
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"others may write to it (mode {stat.S_IMODE(st.st_mode):o}; it must be 0700)"
    # every directory on the way must keep others from renaming ours away, every link from re-pointing
    return _problem_on_the_way(path.parent)


def check_directory(path: Path) -> None:
    """Raise :class:`CacheSecurityError` unless ``path`` is a directory only the current user can write."""
    problem = _problem_with_dir(path)
    if problem is not None:
        raise _refusal(path, problem)


def _refusal(path: Path, problem: str) -> CacheSecurityError:
    return CacheSecurityError(
        f"refusing the build cache {path}: {problem}. Use a directory of your own with mode 0700 "
        "(set $EXPRGRAPH_CACHE), or remove it and let exprgraph create it"
    )


def _make_dir(path: Path) -> None:
    # parents as mkdir -p makes them; the cache itself private from the start
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass


def _fallback(configured: Path, why: str) -> Path:
    directory = Path(tempfile.mkdtemp(prefix="exprgraph-"))  # 0700, new, ours
    atexit.register(shutil.rmtree, directory, True)
    warnings.warn(
        f"the build cache {configured} cannot be used ({why}); compiled libraries go to the private "
        f"directory {directory} for this process. Set $EXPRGRAPH_CACHE to a directory of your own",
        RuntimeWarning,
        stacklevel=3,
    )
    return directory


def open_cache() -> Path:
    """The verified cache directory, created 0700 if missing (see the module's rules)."""
    configured = cache_dir()
    key = str(configured)
    with _lock:
        known = _opened.get(key)
        if known is not None and known.is_dir() and (known != configured or _problem_with_dir(known) is None):
            return known
        explicit = bool(os.environ.get("EXPRGRAPH_CACHE"))
        before = _problem_on_the_way(configured.parent)  # nothing is created through another's link
        if before is not None:
            if explicit:
                raise _refusal(configured, before)
            directory = _fallback(configured, before)
        else:
            directory = _create(configured, explicit)
        _opened[key] = directory
        return directory


def _create(configured: Path, explicit: bool) -> Path:
    """``configured`` made (if missing) and checked, or the fallback for a default location."""
    try:
        _make_dir(configured)
    except OSError as exc:
        if explicit:
            raise CacheSecurityError(f"cannot create the build cache {configured}: {exc.strerror}") from None
        return _fallback(configured, f"it cannot be created: {exc.strerror}")
    problem = _problem_with_dir(configured)
    if problem is None:
        return configured
    if explicit:
        raise _refusal(configured, problem)
    return _fallback(configured, problem)


def _digest_file(fd: int) -> str:
    h = hashlib.sha256()
    while True:
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            return h.hexdigest()
        h.update(chunk)


#: how cache files are opened: never through a final symlink, never waiting (a FIFO or a device
#: would block the open or the read), never inherited by a child process
_OPEN_FLAGS = os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)


def _open_owned(path: Path) -> int:
    """An fd on ``path`` if it is a regular file, not a symlink, owned by us and written by no one else.

    The file type is checked on the open descriptor before anything is read from it.
    """
    fd = os.open(path, os.O_RDONLY | _OPEN_FLAGS)
    try:
        st = os.fstat(fd)
        lst = _lstat(path)
        if not stat.S_ISREG(st.st_mode) or (lst.st_ino, lst.st_dev) != (st.st_ino, st.st_dev):
            raise CacheSecurityError(f"refusing {path}: it is not a regular file")
        if lst.st_uid != current_uid():
            raise CacheSecurityError(f"refusing {path}: it is owned by uid {lst.st_uid}, not by you")
        if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
            raise CacheSecurityError(f"refusing {path}: others may write to it (mode {stat.S_IMODE(st.st_mode):o})")
    except BaseException:
        os.close(fd)
        raise
    return fd


def record_path(library: Path) -> Path:
    """Where the sha256 record of ``library`` is kept."""
    return library.with_suffix(".sha256")


def check_library(library: Path) -> bool:
    """Whether ``library`` may be loaded: True when its content matches its record, False when it is
    missing, its record is missing or the content differs (rebuild it). Raises
    :class:`CacheSecurityError` for a symlink or a file owned or writable by someone else."""
    try:
        fd = _open_owned(library)
    except FileNotFoundError:
        return False
    except OSError as exc:  # O_NOFOLLOW on a symlink: ELOOP
        raise CacheSecurityError(f"refusing {library}: {exc.strerror} (a symbolic link?)") from None
    try:
        actual = _digest_file(fd)
    finally:
        os.close(fd)
    try:
        rfd = _open_owned(record_path(library))
    except FileNotFoundError:
        return False
    except OSError as exc:
        raise CacheSecurityError(f"refusing {record_path(library)}: {exc.strerror}") from None
    try:
        recorded = os.read(rfd, 256).decode("ascii", "replace").strip()
    finally:
        os.close(rfd)
    return recorded == actual


def _atomic_write(directory: Path, name: str, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=directory)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.chmod(tmp, 0o600)
        os.replace(tmp, directory / name)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def publish(built: Path, library: Path) -> None:
    """Move the freshly built ``built`` into place as ``library``, its record written first."""
    fd = os.open(built, os.O_RDONLY | _OPEN_FLAGS)
    try:
        digest = _digest_file(fd)
    finally:
        os.close(fd)
    os.chmod(built, 0o700)
    _atomic_write(library.parent, record_path(library).name, (digest + "\n").encode())
    os.replace(built, library)


@contextlib.contextmanager
def key_lock(directory: Path, key: str) -> Iterator[None]:
    """Hold the build lock of ``key``: one thread of this process and one process at a time."""
    with _lock:
        tlock = _key_locks.setdefault(key, threading.Lock())
    with tlock:
        path = directory / f"eg_{key}.lock"
        fd = os.open(path, os.O_RDWR | os.O_CREAT | _OPEN_FLAGS, 0o600)
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise CacheSecurityError(f"refusing the lock {path}: it is not a regular file")
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # closing releases the flock


def touch(library: Path) -> None:
    """Mark ``library`` as used now (the cap removes the least recently used first)."""
    with contextlib.suppress(OSError):
        os.utime(library)


# -- the cap ------------------------------------------------------------------------------------------


def _libraries(directory: Path) -> list[tuple[float, int, Path]]:
    found = []
    with os.scandir(directory) as it:
        for entry in it:
            if entry.name.startswith("eg_") and entry.name.endswith(".so") and entry.is_file(follow_symlinks=False):
                st = entry.stat(follow_symlinks=False)
                found.append((st.st_mtime, st.st_size, Path(entry.path)))
    return found


def _remove(library: Path) -> None:
    for p in (library, record_path(library), library.with_suffix(".lock")):
        with contextlib.suppress(OSError):
            os.unlink(p)


def enforce_cap(directory: Path, cap: int | None = None, keep: Path | None = None) -> int:
    """Remove least recently used libraries until the cache holds at most ``cap`` bytes; returns how many."""
    cap = settings.size_cap(cap)
    libs = _libraries(directory)
    total = sum(size for _, size, _ in libs)
    removed = 0
    for _, size, path in sorted(libs):
        if total <= cap:
            break
        if keep is not None and path == keep:
            continue
        _remove(path)
        total -= size
        removed += 1
    return removed


@dataclass(frozen=True)
class CacheInfo:
    """What ``exprgraph cache info`` reports."""

    directory: Path
    libraries: int
    bytes: int
    cap: int
    problem: str | None

    def __str__(self) -> str:
        mib = self.bytes / (1 << 20)
        lines = [
            f"directory: {self.directory}",
            f"libraries: {self.libraries} ({mib:.1f} MiB of a {self.cap / (1 << 20):.0f} MiB cap)",
            f"checks:    {'ok (yours, mode 0700, no symlink)' if self.problem is None else 'REFUSED: ' + self.problem}",
        ]
        return "\n".join(lines)


def cache_info() -> CacheInfo:
    """The configured cache's directory, library count, size, cap and whether it passes the checks."""
    directory = cache_dir()
    if not directory.exists():
        return CacheInfo(directory, 0, 0, size_cap(), None)
    problem = _problem_with_dir(directory)
    libs = _libraries(directory) if problem is None else []
    return CacheInfo(directory, len(libs), sum(size for _, size, _ in libs), size_cap(), problem)


def clear_cache() -> int:
    """Remove every library, record, lock and leftover build file from the cache; returns the libraries removed."""
    directory = cache_dir()
    if not directory.exists():
        return 0
    check_directory(directory)
    count = 0
    with os.scandir(directory) as it:
        entries = list(it)
    for entry in entries:
        name = entry.name
        if entry.is_dir(follow_symlinks=False) and name.startswith(".build-"):
            shutil.rmtree(entry.path, ignore_errors=True)
        elif name.startswith(("eg_", ".tmp-")) and not entry.is_dir(follow_symlinks=False):
            count += name.endswith(".so")
            with contextlib.suppress(OSError):
                os.unlink(entry.path)
    return count
