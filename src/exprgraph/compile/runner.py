"""Running the C compiler: in its own process group, under a watchdog, killed as a whole when it must stop.

Each compiler command runs under :mod:`.watchdog`, as the leader of a new session, so the driver
and everything it starts (``cc1``, ``as``, ``ld``) share one process group:

- on the build time limit, an interrupt or any error the whole group is killed (SIGKILL) and
  reaped before the error propagates;
- when this process ends, however it ends (SIGKILL included), the watchdog sees end of file on a
  pipe only this process writes to and kills its group;
- SIGTERM with its default action is turned, for the build's duration and in the main thread, into
  an exception that unwinds the build (killing the compilers, removing the build directory), and
  is then delivered again with its default action, so the process still ends as SIGTERM ends it
  (:func:`sigterm_unwinds`). A SIGTERM handler of the caller's, or an ignored SIGTERM, is left as
  it is.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

from ..errors import BuildTimeoutError, CompileError, CompilerNotFoundError
from ..progress import Progress
from . import watchdog

__all__ = ["run_compilers", "check_result", "sigterm_unwinds"]


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


_watch_lock = threading.Lock()
#: the read and write ends of this process's watchdog pipe (made at the first build); the write end
#: is never written to: the watchdogs see end of file when this process ends
_watch_fds: list[int] = []


def _watch_fd() -> int:
    """The read end of this process's watchdog pipe (see :mod:`.watchdog`)."""
    with _watch_lock:
        if not _watch_fds:
            _watch_fds.extend(os.pipe())  # not inheritable: only the watchdogs get the read end
        return _watch_fds[0]


def _forget_watch_pipe() -> None:
    """In a forked child: drop the parent's pipe, so that the parent's builds still die with the parent."""
    global _watch_lock
    _watch_lock = threading.Lock()
    for fd in _watch_fds:
        with contextlib.suppress(OSError):
            os.close(fd)
    _watch_fds.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_watch_pipe)


def _watched(argv: list[str]) -> tuple[list[str], tuple[int, ...]]:
    """``argv`` run under the watchdog, and the descriptor to pass it (``argv`` itself when no
    Python interpreter can be found to run the watchdog)."""
    script = getattr(watchdog, "__file__", None)
    if not sys.executable or not script or not os.path.isfile(script):
        return argv, ()  # pragma: no cover - an embedded interpreter: the compiler is unwatched
    fd = _watch_fd()
    return [sys.executable, "-I", "-S", script, str(fd), *argv], (fd,)


def _start_compiler(argv: list[str], err_path: Path) -> subprocess.Popen:
    """Start one compiler under its watchdog in a new process group, its output going to ``err_path``."""
    command, fds = _watched(argv)
    with open(err_path, "w") as err:
        try:
            return subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=err,
                stderr=err,
                start_new_session=True,  # its own group: cc1 and as die with the driver
                pass_fds=fds,
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


class _Terminated(BaseException):
    """SIGTERM arrived during a build (raised by the build's own handler; the signal is sent again after cleanup)."""


@contextlib.contextmanager
def sigterm_unwinds() -> Iterator[None]:
    """While the block runs, SIGTERM with its default action unwinds it (killing the compilers,
    removing the build directory) and then ends the process as SIGTERM would have.

    Only in the main thread (the only one Python delivers signals to) and only when SIGTERM has its
    default action: a handler of the caller's, or an ignored SIGTERM, is left as it is.
    """
    if threading.current_thread() is not threading.main_thread() or signal.getsignal(signal.SIGTERM) != signal.SIG_DFL:
        yield
        return
    fired: list[int] = []

    def unwind(signum: int, frame: object) -> None:
        if not fired:  # a second SIGTERM must not interrupt the cleanup of the first
            fired.append(signum)
            raise _Terminated

    signal.signal(signal.SIGTERM, unwind)
    try:
        try:
            yield
        finally:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
    finally:
        # whatever happened to the exception (it may have been replaced, or caught inside the block),
        # a SIGTERM that arrived now takes its default action: the process ends here
        if fired:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGTERM)


def check_result(result: tuple[int, str]) -> None:
    """Raise unless a compiler run (``(exit code, output)``) succeeded: CompilerNotFoundError when
    the compiler could not be started, CompileError with the first 40 lines of its output when it failed."""
    code, err = result
    if code == watchdog.CANNOT_RUN_STATUS and err.startswith(watchdog.CANNOT_RUN):
        raise CompilerNotFoundError(f"the C compiler could not be run: {err[len(watchdog.CANNOT_RUN) :].strip()}")
    if code != 0:
        lines = err.strip().splitlines()
        shown = "\n".join(lines[:40]) + (f"\n... ({len(lines) - 40} more lines)" if len(lines) > 40 else "")
        raise CompileError(f"the C compiler failed (exit {code}):\n{shown}")
