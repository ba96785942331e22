"""Build directories in the cache: made per build, named after their owner, swept when their owner died.

A build compiles in a private directory ``.build-<host>-<pid>-<random>`` of the cache, removed when
the build ends. A process killed outright (SIGKILL, a power cut) cannot remove its own; the next
build sweeps it (:func:`sweep_stale`): a directory whose process (on this host) no longer runs, or
one that has not changed for longer than the build time limit, is removed, as are half-written
temporary files (``.tmp-*``) that old.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import socket
import stat
import tempfile
import time
from pathlib import Path

__all__ = ["make_build_dir", "sweep_stale"]


def _host() -> str:
    """A short tag of this machine (a cache shared over the network holds builds of several hosts)."""
    return hashlib.sha256(socket.gethostname().encode()).hexdigest()[:8]


def make_build_dir(directory: Path) -> Path:
    """A new private (0700) build directory in the cache, named after this host and process."""
    return Path(tempfile.mkdtemp(prefix=f".build-{_host()}-{os.getpid()}-", dir=directory))


def _pid_alive(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie, killed and not yet reaped, does not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            state = fh.read().rsplit(b")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True  # no /proc (macOS): it exists, so count it alive
    return state not in (b"Z", b"X")


def _owner(name: str) -> int | None:
    """The pid that made the build directory ``name`` on this host (None: another host, or not ours to judge)."""
    parts = name[len(".build-") :].split("-")
    if len(parts) < 3 or parts[0] != _host() or not parts[1].isdigit():
        return None
    pid = int(parts[1])
    return pid if 0 < pid < 1 << 31 else None


def sweep_stale(directory: Path, max_age: float) -> int:
    """Remove what builds that died left in the cache; returns how many entries were removed.

    A build directory is stale when the process that made it (on this host) no longer runs, or when
    it was last changed more than ``max_age`` seconds ago and belongs to another process; a
    temporary file (``.tmp-*``, a half-written record) when it is older than ``max_age``.
    """
    now = time.time()
    with os.scandir(directory) as it:
        entries = [e for e in it if e.name.startswith((".build-", ".tmp-"))]
    removed = 0
    for entry in entries:
        try:
            st = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        old = now - st.st_mtime > max_age
        if entry.name.startswith(".build-") and stat.S_ISDIR(st.st_mode):
            pid = _owner(entry.name)
            if pid == os.getpid() or not (old or (pid is not None and not _pid_alive(pid))):
                continue
            shutil.rmtree(entry.path, ignore_errors=True)
        elif entry.name.startswith(".tmp-") and old:
            with contextlib.suppress(OSError):
                os.unlink(entry.path)
        else:
            continue
        removed += 1
    return removed
