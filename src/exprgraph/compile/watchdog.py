"""The build watchdog: runs one compiler command and kills it, with everything it started, when the
Python process that asked for the build ends, however it ends (SIGKILL included).

:mod:`exprgraph.compile.cbuild` starts ``python -I -S watchdog.py FD COMMAND...`` as the leader of
a new session, so the watchdog, the compiler driver and every process the driver starts (``cc1``,
``as``, ``ld``) share one process group. ``FD`` is the read end of a pipe whose only write end the
building process holds; the kernel closes that end when the process ends, and the read end then
reports end of file. The watchdog waits for whichever comes first:

- the compiler exits: the watchdog exits with its status (128 + N when signal N ended it);
- end of file on ``FD``: the builder is gone, and the watchdog kills its whole process group
  (itself included) with SIGKILL.

This file imports only the standard library: it runs without site-packages (``-S``) and ignores
the environment's Python settings (``-I``).
"""

from __future__ import annotations

import os
import select
import signal
import sys

__all__ = ["main", "CANNOT_RUN", "CANNOT_RUN_STATUS"]

#: how the watchdog's message begins, and its exit status, when the compiler cannot be started
CANNOT_RUN = "exprgraph watchdog: cannot run"
CANNOT_RUN_STATUS = 127

#: seconds between two looks at the compiler even without a wake-up (a safety net only)
_POLL = 5.0


def main(argv: list[str]) -> int:
    """Run ``argv[1:]`` watched by the pipe end numbered ``argv[0]``; returns the compiler's exit status."""
    watch = int(argv[0])
    command = argv[1:]
    os.set_inheritable(watch, False)  # the compiler does not need it
    wake_r, wake_w = os.pipe()  # SIGCHLD writes a byte here, so select wakes when the compiler ends
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda signum, frame: None)
    try:
        # signals Python ignores (SIGPIPE, SIGXFSZ) are restored to their defaults for the compiler
        pid = os.posix_spawnp(command[0], command, os.environ, setsigdef=(signal.SIGPIPE, signal.SIGXFSZ))
    except OSError as exc:
        print(f"{CANNOT_RUN} {command[0]!r}: {exc.strerror}", file=sys.stderr)
        return CANNOT_RUN_STATUS
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            code = os.waitstatus_to_exitcode(status)
            return code if code >= 0 else 128 - code
        ready, _, _ = select.select([watch, wake_r], [], [], _POLL)
        if watch in ready and not os.read(watch, 1):
            os.killpg(0, signal.SIGKILL)  # the builder is gone: so is everything it started
        if wake_r in ready:
            os.read(wake_r, 512)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
