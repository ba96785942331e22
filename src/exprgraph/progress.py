"""Progress on long work: lines on stderr once a task has run for a second, nothing before.

Long work (a big C build, equality saturation, kernel checks) runs inside a :class:`Progress`
context and calls :meth:`Progress.update` as it goes. Updates are cheap (one clock read) and
silent until ``delay`` seconds (1 s) have passed since the start; then a line goes to stderr at
most every ``interval`` seconds (1 s on a terminal, 15 s when stderr is a log file), and one
closing line when the task ends, so work that finishes
within the delay prints nothing at all::

    exprgraph: building C (3 units): 1/3 done, 2.0 s
    exprgraph: building C (3 units): done in 3.1 s

``EXPRGRAPH_PROGRESS=0`` (or ``off``, ``no``, ``false``) silences every report; ``enabled=`` on one
task overrides the environment. Blocking waits (a compiler process) poll so that they can report.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from types import TracebackType
from typing import TextIO

__all__ = ["Progress", "progress_enabled", "DELAY", "INTERVAL", "LOG_INTERVAL", "ENV", "CLOCK"]

#: seconds of silence before the first report
DELAY = 1.0
#: least seconds between two reports
INTERVAL = 1.0
#: least seconds between two reports to a stderr that is not a terminal (a log file, CI)
LOG_INTERVAL = 15.0
#: the environment variable that turns reports off (``0``, ``off``, ``no``, ``false``)
ENV = "EXPRGRAPH_PROGRESS"
#: the clock tasks read unless given one (a module attribute, so tests can run tasks on a fake clock)
CLOCK: Callable[[], float] = time.monotonic
_OFF = frozenset({"0", "off", "no", "false"})


def progress_enabled() -> bool:
    """Whether progress reports are on (``$EXPRGRAPH_PROGRESS`` does not turn them off)."""
    return os.environ.get(ENV, "").strip().lower() not in _OFF


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # a replaced or closed stderr
        return False


class Progress:
    """A long task's reports: ``with Progress("saturating") as p: ... p.update(done, note=...)``."""

    __slots__ = ("task", "total", "delay", "interval", "stream", "clock", "enabled", "start", "_next", "shown")

    def __init__(
        self,
        task: str,
        *,
        total: int | None = None,
        delay: float | None = None,
        interval: float | None = None,
        stream: TextIO | None = None,
        clock: Callable[[], float] | None = None,
        enabled: bool | None = None,
    ) -> None:
        self.task = task
        #: how many steps the task has, when known (reports say ``done/total``)
        self.total = total
        #: seconds of silence first (default :data:`DELAY`), then at most one report per ``interval``
        self.delay = DELAY if delay is None else delay
        if interval is None:
            interval = INTERVAL if stream is not None or _is_terminal(sys.stderr) else LOG_INTERVAL
        self.interval = interval
        #: where reports go (stderr, looked up when writing, unless given)
        self.stream = stream
        self.clock = CLOCK if clock is None else clock
        self.enabled = progress_enabled() if enabled is None else enabled
        self.start = self.clock()
        self._next = self.start + self.delay  # no report before this time
        #: how many lines were written
        self.shown = 0

    def __enter__(self) -> Progress:
        self.start = self.clock()
        self._next = self.start + self.delay
        return self

    def update(self, done: int | None = None, note: str = "") -> None:
        """Report ``done`` (steps finished) and ``note`` if a report is due; otherwise nothing."""
        if not self.enabled:
            return
        now = self.clock()
        if now < self._next:
            return
        self._next = now + self.interval
        parts = []
        if done is not None:
            parts.append(f"{done}/{self.total} done" if self.total is not None else f"{done} done")
        if note:
            parts.append(note)
        parts.append(f"{now - self.start:.1f} s")
        self._write(", ".join(parts))

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        """The closing line, when anything was reported (or the task outlasted the delay)."""
        if not self.enabled:
            return
        elapsed = self.clock() - self.start
        if self.shown or elapsed >= self.delay:
            ended = "done" if kind is None else "stopped"
            self._write(f"{ended} in {elapsed:.1f} s")

    def _write(self, text: str) -> None:
        stream = self.stream if self.stream is not None else sys.stderr
        try:
            stream.write(f"exprgraph: {self.task}: {text}\n")
            stream.flush()
        except (OSError, ValueError):  # a closed or broken stderr must not break the work
            self.enabled = False
            return
        self.shown += 1
